//! Result files on a real system: a character device, a FIFO and a
//! symbolic link given as an output stay what they are (written through,
//! never replaced); a missing parent directory is refused by every
//! output; a password in `--db` is never recorded; a store location that
//! is another kind of URL, empty, padded with white space or a libpq
//! `key=value` string is refused (nothing made in its name, no password
//! shown); a record that a full disk kept from its file is kept in a
//! temporary directory; a FIFO that no process reads never holds a
//! finished run (stored first, the wait bounded and ended by a signal).

use crate::util::*;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A character device node with the numbers of /dev/null (1:3), made in
/// `dir` (the real /dev is never touched).
fn null_node(dir: &TempDir) -> PathBuf {
    let p = dir.join("null-node");
    let ok = Command::new("mknod")
        .args([s(&p), "c", "1", "3"])
        .status()
        .unwrap();
    assert!(ok.success(), "mknod {}", p.display());
    p
}

fn is_char_device(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_char_device()
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_symlink()
}

/// A FIFO in `dir` and a thread that reads it to the end.
fn fifo_with_reader(dir: &TempDir) -> (PathBuf, std::thread::JoinHandle<Vec<u8>>) {
    let p = dir.join("fifo");
    assert!(Command::new("mkfifo").arg(&p).status().unwrap().success());
    let q = p.clone();
    let reader = std::thread::spawn(move || std::fs::read(q).unwrap());
    (p, reader)
}

/// `rtscope measure` for one second, saving nothing, with `args`.
fn measure(dir: &TempDir, args: &[&str]) -> std::process::Output {
    rtscope(dir.path())
        .args(["measure", "-q", "--no-save", "-D", "1", "-t", "1"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn outputs_write_through_devices_fifos_and_links() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("out-nodes");
    let node = null_node(&dir);
    let target = dir.join("target.json");
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    let o = measure(&dir, &["--json", s(&link), "--histfile", s(&node)]);
    assert_code(&o, 0);
    assert!(is_char_device(&node), "--histfile replaced the device node");
    assert!(is_symlink(&link), "--json replaced the symbolic link");
    let r = read_json(&target);
    assert!(r["overall"]["samples"].as_u64().unwrap() > 0);

    // A device given as --json too; and a link to a device.
    let to_node = dir.join("to-node");
    std::os::unix::fs::symlink(&node, &to_node).unwrap();
    let o = measure(&dir, &["--json", s(&node), "--histfile", s(&to_node)]);
    assert_code(&o, 0);
    assert!(is_char_device(&node) && is_symlink(&to_node));

    // report -o: a FIFO with a reader gets the page; a link's target too.
    let (fifo, reader) = fifo_with_reader(&dir);
    let o = rtscope(dir.path())
        .args(["report", s(&target), "-o", s(&fifo)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let page = reader.join().unwrap();
    assert!(String::from_utf8_lossy(&page).contains("<html"));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let html = dir.join("page.html");
    let html_link = dir.join("page-link.html");
    std::os::unix::fs::symlink(&html, &html_link).unwrap();
    let o = rtscope(dir.path())
        .args(["report", s(&target), "-o", s(&html_link)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(is_symlink(&html_link));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    let o = rtscope(dir.path())
        .args(["report", s(&target), "-o", s(&node)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(is_char_device(&node));
}

#[test]
fn a_missing_parent_directory_is_refused_by_every_output() {
    let dir = TempDir::new("out-parent");
    let rec = dir.join("rec.json");
    std::fs::write(&rec, "{}").unwrap();
    let missing = dir.join("no/such");
    let out = missing.join("f.out");
    for args in [
        vec!["measure", "--no-save", "-D", "1", "--json", s(&out)],
        vec!["report", "last", "-o", s(&out)],
        vec!["runs", "export", "last", "--json", s(&out)],
        vec!["characterize", "--no-save", "--json", s(&out)],
        vec!["load", "cpu", "-D", "1s", "--json", s(&out)],
    ] {
        let o = rtscope(dir.path()).args(&args).output().unwrap();
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains(&format!("directory {} does not exist", missing.display())),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!dir.join("no").exists(), "{args:?} created the directory");
    }
}

#[test]
fn a_password_in_db_is_never_recorded() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("out-pw");
    let json = dir.join("r.json");
    let url = "postgresql://u:secret@127.0.0.1:1/x";
    let o = measure(&dir, &["--db", url, "--json", s(&json)]);
    assert_code(&o, 0);
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(text.contains("postgresql://u:***@127.0.0.1:1/x"), "{text}");
    assert!(!text.contains("secret"));
    let html = dir.join("r.html");
    let o = rtscope(dir.path())
        .args(["report", s(&json), "-o", s(&html)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!std::fs::read_to_string(&html).unwrap().contains("secret"));
    // A record written before passwords were kept out: shown and exported
    // without it.
    let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
    old["source"]["command_line"] = serde_json::json!(["rtscope", "--db", url, "measure"]);
    std::fs::write(&json, old.to_string()).unwrap();
    let o = rtscope(dir.path())
        .args(["runs", "export", s(&json), "--json", "-"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("secret"), "{}", stdout(&o));
    let o = rtscope(dir.path())
        .args(["report", s(&json), "-o", s(&html)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!std::fs::read_to_string(&html).unwrap().contains("secret"));
}

/// `bad` as the store of `runs` in `RTSCOPE_DB`, and as the destination
/// of `push --to`, run in `cwd`: both refuse it (exit 2). Their outputs.
fn refused_by_env_and_push(dir: &TempDir, cwd: &Path, bad: &str) -> [Output; 2] {
    let by_env = rtscope(dir.path())
        .current_dir(cwd)
        .env("RTSCOPE_DB", bad)
        .args(["runs"])
        .output()
        .unwrap();
    assert_code(&by_env, 2);
    let by_push = rtscope(dir.path())
        .current_dir(cwd)
        .arg("--db")
        .arg(dir.join("s.db"))
        .args(["push", "last", "--to", bad])
        .output()
        .unwrap();
    assert_code(&by_push, 2);
    [by_env, by_push]
}

#[test]
fn store_locations_of_another_kind_are_refused() {
    let dir = TempDir::new("out-db");
    for bad in ["mysql://x/y", "postgresql:/127.0.0.1/rtscope"] {
        let o = rt(&dir, bad, &["runs"]);
        assert_code(&o, 2);
        refused_by_env_and_push(&dir, dir.path(), bad);
    }
    // A path with a colon and no scheme stays a file.
    let o = rtscope(dir.path())
        .current_dir(dir.path())
        .args(["--db", "./a:b.db", "runs"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains("./a:b.db"), "{}", stdout(&o));
}

#[test]
fn store_locations_that_are_no_path_are_refused_without_a_trace() {
    let dir = TempDir::new("out-db-shapes");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    for (bad, shape) in [
        (" postgresql://u:PW-secret@h/db", "white space"),
        ("postgresql://u:PW-secret@h/db ", "white space"),
        ("host=h password=PW-secret dbname=x", "libpq key=value"),
        ("x://", "not in 'x:'"),
        ("", "is empty"),
    ] {
        for args in [&["runs"][..], &["measure", "-D", "1s", "-q"]] {
            let o = rtscope(dir.path())
                .current_dir(&work)
                .arg("--db")
                .arg(bad)
                .args(args)
                .output()
                .unwrap();
            assert_code(&o, 2);
            let err = stderr(&o);
            assert!(err.contains(shape), "{bad:?}: '{shape}' not in {err}");
            assert!(err.contains("postgresql://"), "{bad:?}: no advice in {err}");
            assert!(!err.contains("PW-secret"), "{err}");
        }
        for o in refused_by_env_and_push(&dir, &work, bad) {
            assert!(!stderr(&o).contains("PW-secret"), "{}", stderr(&o));
        }
    }
    // Nothing was made in their name.
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A tmpfs of 64 KiB mounted on a directory, unmounted when dropped (also
/// when an assertion fails).
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(at: PathBuf) -> Option<SmallFs> {
        std::fs::create_dir_all(&at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "rtscope-test", s(&at)])
            .status()
            .unwrap()
            .success();
        ok.then_some(SmallFs(at))
    }

    /// Fill it: write until the file system refuses.
    fn fill(&self) {
        use std::io::Write as _;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_record_a_full_disk_refused_is_kept_elsewhere() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("out-full");
    let Some(full) = SmallFs::mount(dir.join("full")) else {
        panic!("mount -t tmpfs failed: a full disk cannot be tested");
    };
    full.fill();
    let fallback = dir.join("tmp");
    std::fs::create_dir_all(&fallback).unwrap();
    let json = full.0.join("r.json");

    // The --json file and nothing else: the record goes to $TMPDIR.
    let o = rtscope(dir.path())
        .env("TMPDIR", &fallback)
        .args(["measure", "-q", "--no-save", "-D", "1", "-t", "1"])
        .args(["--json", s(&json)])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let kept: Vec<_> = std::fs::read_dir(&fallback)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(s(&kept[0])), "{}", stderr(&o));
    let r = read_json(&kept[0]);
    assert!(r["overall"]["samples"].as_u64().unwrap() > 0);
    assert!(!json.exists());

    // The store takes it: no copy elsewhere, and it says so.
    std::fs::remove_file(&kept[0]).unwrap();
    let o = rtscope(dir.path())
        .env("TMPDIR", &fallback)
        .args(["--db", s(&dir.join("s.db"))])
        .args(["measure", "-q", "-D", "1", "-t", "1", "--json", s(&json)])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert_eq!(std::fs::read_dir(&fallback).unwrap().count(), 0);
    let o = rt(&dir, dir.join("s.db"), &["runs"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("complete"), "{}", stdout(&o));
}

/// `rtscope measure -q -D 1 -t 1 --json FIFO` started with `$TMPDIR` at
/// `tmp`, saving in the store `db` (`None`: `--no-save`), its output
/// collected.
fn measure_into_fifo(
    dir: &TempDir,
    tmp: &Path,
    fifo: &Path,
    db: Option<&Path>,
) -> std::process::Child {
    let mut c = rtscope(dir.path());
    c.env("TMPDIR", tmp);
    match db {
        Some(db) => c.arg("--db").arg(db).arg("measure"),
        None => c.args(["measure", "--no-save"]),
    };
    c.args(["-q", "-D", "1", "-t", "1", "--json", s(fifo)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_fifo_nobody_reads_never_holds_a_finished_run() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("out-fifo");
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let db = dir.join("s.db");

    // Saved in the store: the run is complete there while rtscope still
    // waits for a reader, and one SIGINT ends that wait.
    let child = measure_into_fifo(&dir, &tmp, &fifo, Some(&db));
    let pid = child.id();
    wait_until("the run stored complete", Duration::from_secs(60), || {
        db.exists() && stdout(&rt(&dir, &db, &["runs"])).contains("complete")
    });
    let sent = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = wait_output(child, Duration::from_secs(30));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("could not write {}", s(&fifo))),
        "{err}"
    );
    assert!(
        err.contains("stopped by a signal while waiting for a process to read the FIFO"),
        "{err}"
    );
    assert!(!err.contains("second signal"), "{err}");
    let o = rt(&dir, &db, &["runs"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("complete"), "{}", stdout(&o));
    // The store has it: no copy elsewhere (as for a full disk).
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "{err}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // Saved nowhere else: the wait runs out on its own and the record is
    // kept in $TMPDIR, where the message says.
    let child = measure_into_fifo(&dir, &tmp, &fifo, None);
    let o = wait_output(child, Duration::from_secs(60));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("no process read the FIFO within 10 s"),
        "{err}"
    );
    let kept: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{err}");
    assert!(err.contains(s(&kept[0])), "{err}");
    let r = read_json(&kept[0]);
    assert!(r["overall"]["samples"].as_u64().unwrap() > 0);
}
