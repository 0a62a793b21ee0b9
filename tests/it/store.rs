//! The run store for real: a measured run comes back from the store equal
//! to its --json record; a SIGKILLed `measure` leaves an interrupted run
//! holding all but at most the last checkpoint interval; a store written
//! at schema 1 opens and migrates; and every bad store or reference
//! (unknown ids, damaged, foreign, newer, locked, full, unwritable output)
//! gets one line, exit 2, and leaves the store as it was (a new store a
//! full disk refused is not left behind, empty).

use crate::util::*;
use rtscope::record::{RunRecord, RunStatus};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

fn read_record(p: &Path) -> RunRecord {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Exit 2 with one line on stderr containing `needle`.
#[track_caller]
fn refused(o: &Output, needle: &str) {
    assert_code(o, 2);
    let err = stderr(o);
    assert_eq!(err.trim().lines().count(), 1, "one line expected:\n{err}");
    assert!(err.contains(needle), "'{needle}' not in:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_measured_run_comes_back_from_the_store_identical() {
    let _g = shared_system();
    let dir = TempDir::new("store-rt");
    let json = dir.join("run.json");
    let o = rtscope(dir.path())
        .args(["measure", "-D", "2", "-i", "2ms", "-q", "--json"])
        .arg(&json)
        .args([
            "--label",
            "round trip",
            "--tag",
            "load=none",
            "--tag",
            "iso=no",
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    // Saved by default, in the XDG data directory.
    let default_db = dir.join("data/rtscope/rtscope.db");
    assert!(
        stdout(&o).contains(&format!("saved as run 1 in {}", default_db.display())),
        "{}",
        stdout(&o)
    );
    let written = read_record(&json);
    let stored = export(&dir, &default_db, "last");
    assert_eq!(stored, written, "record -> store -> record");
    assert_eq!(stored.status, RunStatus::Complete);
    assert_eq!(stored.label.as_deref(), Some("round trip"));
    assert_eq!(stored.tags.len(), 2);
    assert!(!stored.threads[0].windows.is_empty());
    // The same through `import` into another store, and by uuid prefix.
    let other = dir.join("other.db");
    let o = rt(&dir, &other, &["import", json.to_str().unwrap()]);
    assert_code(&o, 0);
    assert_eq!(export(&dir, &other, &written.run_uuid[..10]), written);
    // The list shows it with its facts.
    let o = rt(&dir, &default_db, &["runs"]);
    assert_code(&o, 0);
    let line = stdout(&o).lines().nth(1).unwrap().to_string();
    for part in [
        "1",
        "complete",
        "round trip",
        "2s",
        &written.fingerprint.kernel_release,
    ] {
        assert!(line.contains(part), "'{part}' not in '{line}'");
    }

    // --no-save: no store is created or opened.
    let dir2 = TempDir::new("store-nosave");
    let o = rtscope(dir2.path())
        .args(["measure", "-D", "1", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!dir2.join("data").exists(), "--no-save touched the store");
    assert!(!stdout(&o).contains("saved as run"));
    let o = rtscope(dir2.path())
        .args(["measure", "-D", "1", "--no-save", "--checkpoint", "5"])
        .output()
        .unwrap();
    refused(&o, "--checkpoint");
}

#[test]
fn sigkill_loses_at_most_the_last_checkpoint_interval() {
    let _g = shared_system();
    let dir = TempDir::new("store-kill");
    let db = dir.join("runs.db");
    let mut child = rtscope(dir.path())
        .arg("--db")
        .arg(&db)
        .args([
            "measure",
            "-D",
            "60",
            "-i",
            "1ms",
            "-t",
            "1",
            "-q",
            "--checkpoint",
            "1",
            "--label",
            "killed",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The run is in the store before it measures.
    let t = Instant::now();
    while !db.exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "no store appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(4500));
    let o = rt(&dir, &db, &["runs"]);
    assert!(stdout(&o).contains("running"), "{}", stdout(&o));
    child.kill().unwrap(); // SIGKILL
    let killed_at = unix_now_ns();
    child.wait().unwrap();

    let o = rt(&dir, &db, &["runs"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("interrupted"), "{}", stdout(&o));
    let rec = export(&dir, &db, "last");
    assert_eq!(rec.status, RunStatus::Interrupted);
    assert_eq!(rec.label.as_deref(), Some("killed"));
    rec.validate().unwrap();
    // How much a kill loses (about one interval) is measured by
    // bench/checkpoint-loss.sh, not asserted here.
    assert!(rec.started_at_unix_ns + rec.duration_ns <= killed_at);
    assert!(
        rec.duration_ns >= 2_000_000_000,
        "covered only {} ns",
        rec.duration_ns
    );
    let t = &rec.threads[0];
    assert!(t.stats.samples > 0 && !t.windows.is_empty());
    assert!(t.stats.max_ns.is_some());
    // A later open marked it in the store itself.
    let status: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT status FROM runs WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "interrupted");
}

#[test]
fn a_store_of_the_first_schema_opens_migrated_with_its_runs_intact() {
    let dir = TempDir::new("store-v1");
    let db = dir.join("v1.db");
    let dump = std::fs::read_to_string(fixture("store/v1-store.sql")).unwrap();
    // The dump is of the first schema, as frozen.
    let ddl = std::fs::read_to_string(fixture("store/schema-v1.sql")).unwrap();
    for stmt in ddl
        .split(';')
        .map(str::trim)
        .filter(|s| s.starts_with("CREATE TABLE"))
    {
        let stmt: String = stmt
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(dump.contains(stmt.trim()), "not in the dump:\n{stmt}");
    }
    // As the sqlite3 shell loads a dump: rows before their parent tables.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("PRAGMA foreign_keys = OFF;").unwrap();
    c.execute_batch(&dump).unwrap();
    drop(c);

    let o = rt(&dir, &db, &["runs"]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
    let version: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, rtscope::store::schema::CURRENT_VERSION);
    for id in ["1", "2"] {
        let want = read_record(&fixture(&format!("store/v1-run{id}.json")));
        assert_eq!(export(&dir, &db, id), want, "run {id}");
    }
    // The migrated store takes new runs, with new ids.
    let o = rt(
        &dir,
        &db,
        &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
    );
    assert_code(&o, 0);
    assert!(stdout(&o).contains("as run 3"), "{}", stdout(&o));
}

#[test]
fn unknown_runs_and_unwritable_outputs() {
    let dir = TempDir::new("store-bad-ref");
    let db = dir.join("runs.db");
    refused(&rt(&dir, &db, &["runs", "show", "1"]), "does not exist yet");
    refused(
        &rt(&dir, &db, &["runs", "export", "last", "--json"]),
        "does not exist yet",
    );
    assert!(!db.exists(), "a read created the store");
    let o = rt(&dir, &db, &["runs"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("no runs stored"));
    assert!(!db.exists());

    let o = rt(
        &dir,
        &db,
        &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
    );
    assert_code(&o, 0);
    refused(&rt(&dir, &db, &["runs", "show", "42"]), "no run '42'");
    refused(
        &rt(&dir, &db, &["runs", "export", "abcdef12", "--csv"]),
        "no run 'abcdef12'",
    );
    refused(&rt(&dir, &db, &["runs", "rm", "1", "42"]), "no run '42'");
    refused(
        &rt(&dir, &db, &["runs", "export", "1"]),
        "choose what to write",
    );
    refused(
        &rt(
            &dir,
            &db,
            &["runs", "export", "1", "--json", "/nonexistent-dir/x.json"],
        ),
        "does not exist",
    );
    refused(
        &rt(
            &dir,
            &db,
            &["runs", "export", "1", "--csv", dir.path().to_str().unwrap()],
        ),
        "is a directory",
    );
    refused(
        &rt(
            &dir,
            &db,
            &["runs", "export", "1", "--csv", "--table", "pie"],
        ),
        "unknown table 'pie'",
    );
    // Nothing above changed the store.
    let o = rt(&dir, &db, &["runs"]);
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
    let o = rt(
        &dir,
        &db,
        &["runs", "export", "1", "--csv", "--table", "windows"],
    );
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 1 + 5);
    let o = rt(&dir, &db, &["runs", "rm", "1"]);
    assert_code(&o, 0);
    refused(&rt(&dir, &db, &["runs", "show", "1"]), "no run '1'");
}

#[test]
fn damaged_foreign_and_newer_stores_are_refused_untouched() {
    let dir = TempDir::new("store-bad-file");
    let check = |db: &Path, needle: &str| {
        let before = std::fs::read(db).unwrap();
        refused(&rt(&dir, db, &["runs"]), needle);
        refused(&rt(&dir, db, &["runs", "show", "1"]), needle);
        refused(
            &rt(
                &dir,
                db,
                &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
            ),
            needle,
        );
        // measure refuses before measuring (long duration: it must not run).
        let o = rt(&dir, db, &["measure", "-D", "1h", "-q"]);
        refused(&o, needle);
        assert!(stderr(&o).contains("--no-save"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(db).unwrap(),
            before,
            "{} changed",
            db.display()
        );
    };
    let junk = dir.join("junk.db");
    std::fs::write(&junk, b"not a database, just text\n".repeat(400)).unwrap();
    check(&junk, "is not an rtscope run store");

    let foreign = dir.join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    check(&foreign, "of another program");

    // An empty file: no store of rtscope's (it makes them whole), for
    // readers and writers alike (a reader listed it as empty, an import
    // made a store in it).
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    check(&empty, "is empty, not an rtscope run store");

    let newer = dir.join("newer.db");
    assert_code(
        &rt(
            &dir,
            &newer,
            &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
        ),
        0,
    );
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    check(&newer, "schema version 99, newer than this rtscope");

    // Damaged pages: the header is fine, the tables are not.
    let damaged = dir.join("damaged.db");
    assert_code(
        &rt(
            &dir,
            &damaged,
            &[
                "import",
                fixture("import/cyclictest-old-hist.txt").to_str().unwrap(),
            ],
        ),
        0,
    );
    let mut bytes = std::fs::read(&damaged).unwrap();
    assert!(bytes.len() > 8192);
    let page = 4096;
    for b in &mut bytes[page..] {
        *b = 0x5a;
    }
    std::fs::write(&damaged, &bytes).unwrap();
    let before = std::fs::read(&damaged).unwrap();
    refused(&rt(&dir, &damaged, &["runs"]), "damaged");
    assert_eq!(std::fs::read(&damaged).unwrap(), before);
}

#[test]
fn a_locked_store_is_waited_for_then_refused() {
    let dir = TempDir::new("store-lock");
    let db = dir.join("runs.db");
    assert_code(
        &rt(
            &dir,
            &db,
            &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
        ),
        0,
    );
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder
        .execute_batch("BEGIN IMMEDIATE; DELETE FROM run_tags;")
        .unwrap();
    // Readers are not blocked by a writer (WAL)...
    let o = rt(&dir, &db, &["runs"]);
    assert_code(&o, 0);
    // ...writers wait, then give up with a clear message.
    let t = Instant::now();
    let o = rt(
        &dir,
        &db,
        &[
            "import",
            fixture("import/xenomai-latency.txt").to_str().unwrap(),
        ],
    );
    refused(&o, "is locked by another process");
    assert!(t.elapsed() >= Duration::from_secs(4), "did not wait");
    refused(&rt(&dir, &db, &["runs", "rm", "1"]), "is locked");
    holder.execute_batch("ROLLBACK;").unwrap();
    let o = rt(&dir, &db, &["runs"]);
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
}

/// A small tmpfs, unmounted on drop.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: PathBuf, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(&at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then_some(SmallDisk(at))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_refused_and_the_store_keeps_what_it_had() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("store-full");
    let disk = SmallDisk::mount(dir.join("disk"), "512k");
    if !require(
        Need::Tmpfs,
        disk.is_some(),
        "mount -t tmpfs (refused here: a container without CAP_SYS_ADMIN?) to fill a disk",
    ) {
        return;
    }
    let disk = disk.unwrap();
    let db = disk.0.join("runs.db");
    assert_code(
        &rt(
            &dir,
            &db,
            &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
        ),
        0,
    );
    // Fill the disk.
    let filler = disk.0.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
    let o = rt(
        &dir,
        &db,
        &[
            "import",
            fixture("import/cyclictest-2.7-hist.txt").to_str().unwrap(),
        ],
    );
    refused(&o, "no space left");
    // A measurement is refused before it starts.
    let o = rt(&dir, &db, &["measure", "-D", "1h", "-q"]);
    assert_code(&o, 2);
    std::fs::remove_file(&filler).unwrap();
    let o = rt(&dir, &db, &["runs"]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
    let ok: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    drop(disk);
}

#[test]
fn a_full_disk_leaves_no_new_store_behind() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("store-full-new");
    let disk = SmallDisk::mount(dir.join("disk"), "256k");
    if !require(
        Need::Tmpfs,
        disk.is_some(),
        "mount -t tmpfs (refused here: a container without CAP_SYS_ADMIN?) to fill a disk",
    ) {
        return;
    }
    let disk = disk.unwrap();
    // A file of someone else's, there before: never removed.
    let theirs = disk.0.join("theirs.db");
    std::fs::write(&theirs, b"").unwrap();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(disk.0.join("filler")).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
    let evl = fixture("import/evl-latmus.txt");
    for db in [disk.0.join("new.db"), disk.0.join("sub/dir/new.db")] {
        let o = rt(&dir, &db, &["import", evl.to_str().unwrap()]);
        refused(&o, "no space left");
        assert!(stderr(&o).contains("nothing was changed"), "{}", stderr(&o));
    }
    let o = rt(&dir, &theirs, &["import", evl.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(theirs.exists(), "a file that was there before was removed");
    let mut left: Vec<String> = std::fs::read_dir(&disk.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["filler", "theirs.db"], "left behind");
    drop(disk);
}

#[test]
fn measure_refuses_an_unusable_store_before_measuring() {
    let dir = TempDir::new("store-unusable");
    let t = Instant::now();
    let o = rtscope(dir.path())
        .args([
            "--db",
            "/proc/rtscope-test/runs.db",
            "measure",
            "-D",
            "1h",
            "-q",
        ])
        .output()
        .unwrap();
    refused(&o, "--no-save");
    let o = rtscope(dir.path())
        .args(["measure", "-D", "1h", "-q", "--checkpoint", "100ms"])
        .output()
        .unwrap();
    refused(&o, "below the 1s minimum");
    assert!(!dir.join("data").exists());
    // RTSCOPE_DB chooses the store too.
    let o = rtscope(dir.path())
        .env("RTSCOPE_DB", "/proc/rtscope-test/env.db")
        .args(["measure", "-D", "1h", "-q"])
        .output()
        .unwrap();
    refused(&o, "/proc/rtscope-test/env.db");
    assert!(t.elapsed() < Duration::from_secs(30), "it measured");
}

#[test]
fn another_users_store_is_read_but_not_written() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("store-ro");
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let db = dir.join("root.db");
    assert_code(
        &rt(
            &dir,
            &db,
            &["import", fixture("import/evl-latmus.txt").to_str().unwrap()],
        ),
        0,
    );
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(bin())
            .arg("--db")
            .arg(&db)
            .args(args)
            .env("HOME", "/nonexistent")
            .output()
            .unwrap()
    };
    let o = as_nobody(&["runs"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("imported"), "{}", stdout(&o));
    let o = as_nobody(&["runs", "export", "1", "--csv"]);
    assert_code(&o, 0);
    refused(&as_nobody(&["runs", "rm", "1"]), "is read-only");
    refused(
        &as_nobody(&[
            "import",
            fixture("import/xenomai-latency.txt").to_str().unwrap(),
        ]),
        "is read-only",
    );
    let o = rt(&dir, &db, &["runs"]);
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
}

/// Root run from a unit or cron (no HOME, no XDG_DATA_HOME) measures
/// into the system store and `runs` / `report` find that run there; with
/// a home, the system store, now that it exists, is still root's default
/// (where `sudo rtscope runs` meets the monitor service). The system
/// store is moved to a temporary directory (RTSCOPE_SYSTEM_STORE_DIR):
/// the real /var/lib/rtscope is never touched.
#[test]
fn root_without_a_home_uses_the_system_store() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("system-store");
    let system = dir.join("var-lib-rtscope");
    let label = format!("no home {}", std::process::id());
    // The test's environment, without HOME and XDG_DATA_HOME (`env -u`).
    let homeless = || {
        let mut c = rtscope(dir.path());
        c.env_remove("HOME")
            .env_remove("XDG_DATA_HOME")
            .env("RTSCOPE_SYSTEM_STORE_DIR", &system);
        c
    };
    {
        let _g = shared_system();
        let o = homeless()
            .args(["measure", "-t", "1", "-D", "1s", "-q", "--label", &label])
            .output()
            .unwrap();
        assert_code(&o, 0);
    }
    assert!(system.join("rtscope.db").exists());
    let o = homeless().arg("runs").output().unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains(&label), "{}", stdout(&o));
    let html = dir.join("r.html");
    let o = homeless()
        .args(["report", "last", "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&label), "the report is not of that run");
    // A bare environment, as a unit or cron gives (not even PATH).
    let bare = || {
        let mut c = std::process::Command::new(bin());
        c.env_clear()
            .env("RTSCOPE_SYSTEM_STORE_DIR", &system)
            .env("RTSCOPE_RUN_DIR", dir.join("run"));
        c
    };
    let o = bare().args(["runs", "--label", &label]).output().unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains(&label), "{}", stdout(&o));
    let o = bare().env("HOME", dir.path()).arg("runs").output().unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains(&label), "{}", stdout(&o));
    assert!(!dir.join(".local/share/rtscope/rtscope.db").exists());
}

/// `runs` filters (label glob, tag, state, dates) and `runs relabel`.
#[test]
fn runs_are_filtered_and_relabelled() {
    let dir = TempDir::new("runs-filter");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    for (file, label, tag) in [
        ("cyclictest-2.7-hist.txt", "vanilla, idle", "load=none"),
        ("cyclictest-2.4-histofall.txt", "rt, hell", "load=hell"),
    ] {
        let o = rtscope(dir.path())
            .arg("import")
            .arg(fixtures.join(file))
            .args(["--label", label, "--tag", tag])
            .output()
            .unwrap();
        assert_code(&o, 0);
    }
    let rows = |args: &[&str]| -> Vec<String> {
        let o = rtscope(dir.path()).arg("runs").args(args).output().unwrap();
        assert_code(&o, 0);
        stdout(&o)
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(rows(&[]).len(), 2);
    let v = rows(&["--label", "vanilla*"]);
    assert!(v.len() == 1 && v[0].contains("vanilla, idle"), "{v:?}");
    let h = rows(&["--tag", "load=hell"]);
    assert!(h.len() == 1 && h[0].contains("rt, hell"), "{h:?}");
    assert_eq!(rows(&["--tag", "load"]).len(), 2);
    assert_eq!(rows(&["--state", "interrupted"]).len(), 0);
    // Imports say no kernel: only a glob that takes an empty one keeps them.
    assert_eq!(rows(&["--kernel", "*"]).len(), 2);
    assert_eq!(rows(&["--kernel", "6.1*"]).len(), 0);
    let o = rtscope(dir.path())
        .args(["runs", "--label", "nothing*"])
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("no stored run matches"),
        "{}",
        stdout(&o)
    );
    let o = rtscope(dir.path())
        .args(["runs", "--since", "soon"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("cannot read the date 'soon'"),
        "{}",
        stderr(&o)
    );
    let o = rtscope(dir.path())
        .args(["runs", "relabel", "1", "vanilla, hell"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(rows(&["--label", "*hell"]).len(), 2);
}

/// Text from a file or a board never reaches the terminal raw: a label,
/// host, kernel and tag holding an OSC (set the title) and a CSI (clear
/// the screen) are printed by `runs`, `runs show` and `compare` with the
/// escape bytes shown as `\x1b`, and the rest of the text kept. The runs
/// are put straight into the store, as an older store or a board holds
/// them (whatever an import would refuse today).
#[test]
fn terminal_escapes_in_stored_text_are_shown_not_sent() {
    let dir = TempDir::new("store-escapes");
    let db = dir.join("runs.db");
    let evil = "lab\u{1b}]0;pwned\u{7}one\u{1b}[2J\u{9b}31m\u{202e}end";
    {
        let mut s = rtscope::store::Store::open(&db).unwrap();
        for uuid in ["a".repeat(32), "b".repeat(32)] {
            let mut rec = rtscope::record::synthetic(&[vec![1_000, 2_000, 3_000]]);
            rec.run_uuid = uuid;
            rec.label = Some(evil.into());
            rec.fingerprint.hostname = format!("host-{evil}");
            rec.fingerprint.kernel_release = format!("6.1-{evil}");
            rec.tags.insert("note".into(), evil.into());
            s.insert(&rec).unwrap();
        }
    }
    for args in [
        &["runs"][..],
        &["runs", "--host", &format!("host-{evil}")][..],
        &["runs", "show", "1"][..],
        &["compare", "1", "2"][..],
    ] {
        let o = rt(&dir, &db, args);
        assert_code(&o, 0);
        let out = stdout(&o);
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!out.contains(bad), "{args:?}: {bad:?} sent raw:\n{out:?}");
        }
        assert!(out.contains("lab\\x1b]0;pwned\\x07one"), "{args:?}:\n{out}");
    }
    let show = stdout(&rt(&dir, &db, &["runs", "show", "1"]));
    assert!(show.contains("kernel 6.1-lab\\x1b]0;pwned"), "{show}");
    assert!(show.contains("note=lab\\x1b]0;pwned"), "{show}");
}

/// A store this user may not read is refused, never listed as empty: one
/// in a directory only root may enter, one only root may read, one whose
/// path goes through a file; and a newer rtscope's store read by a user
/// who may not write it says it is newer (it said "needs upgrading").
#[test]
fn an_unreadable_store_is_refused_not_empty() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("store-unreadable");
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    mode(dir.path(), 0o755);
    let evl = fixture("import/evl-latmus.txt");
    let import = |db: &Path| assert_code(&rt(&dir, db, &["import", evl.to_str().unwrap()]), 0);
    let as_nobody = |db: &Path, args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(bin())
            .arg("--db")
            .arg(db)
            .args(args)
            .env("HOME", "/nonexistent")
            .output()
            .unwrap()
    };
    let private = dir.join("private/runs.db");
    import(&private);
    mode(private.parent().unwrap(), 0o700);
    let closed = dir.join("closed/runs.db");
    import(&closed);
    mode(&closed, 0o600);
    for db in [&private, &closed] {
        for args in [&["runs"][..], &["runs", "show", "1"][..]] {
            let o = as_nobody(db, args);
            refused(&o, &format!("cannot read the run store {}", db.display()));
            assert!(stderr(&o).contains("permission denied"), "{}", stderr(&o));
        }
    }
    let file = dir.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let o = rt(&dir, file.join("runs.db"), &["runs"]);
    refused(&o, "cannot read the run store");
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));

    let newer = dir.join("newer/runs.db");
    import(&newer);
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    refused(
        &as_nobody(&newer, &["runs"]),
        "schema version 99, newer than this rtscope",
    );
}

/// `--db -` and `--db :memory:` name no store: refused with what to give
/// instead (`-` made a file named `-`, `:memory:` was an SQLite database
/// gone at exit, listed as empty); `./-` is a file of that name.
#[test]
fn a_stream_or_memory_is_no_store() {
    let dir = TempDir::new("store-nowhere");
    let evl = fixture("import/evl-latmus.txt");
    for db in ["-", ":memory:"] {
        for args in [
            &["runs"][..],
            &["import", evl.to_str().unwrap()][..],
            &["serve", "--listen", "127.0.0.1:0"][..],
        ] {
            let child = rtscope(dir.path())
                .current_dir(dir.path())
                .args(["--db", db])
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let o = wait_output(child, Duration::from_secs(30));
            assert_code(&o, 2);
            let err = stderr(&o);
            assert!(err.contains(&format!("'{db}' is")), "{args:?}: {err}");
            assert!(err.contains("give a file name"), "{err}");
        }
        assert!(!dir.join(db).exists(), "{db} made a file");
    }
    let o = rtscope(dir.path())
        .current_dir(dir.path())
        .args(["--db", "./-", "import", evl.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(dir.join("-").exists());
}
