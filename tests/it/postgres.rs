//! The shared PostgreSQL store for real: Debian's PostgreSQL 15 started by
//! the tests in a temporary directory on a free loopback port (run as the
//! unprivileged `postgres` user, no system service touched), one cluster
//! shared by the module, a database per test. Two boards (`--host`) in
//! one store, `runs --host`, `report` and `compare` from it, `push`
//! idempotence, the server stopped in the middle of a run with nothing
//! lost, bad URLs, a server that never answers (a bare listener, a
//! cluster frozen with SIGSTOP: commands and runs still end, and signals
//! work), the migrations (empty database, newer one, foreign one), and
//! serve's escaping test on this store. The shared cluster is stopped
//! and removed by a watchdog process that the kernel signals when the
//! test binary exits.

use crate::util::*;
use rtscope::record::RunRecord;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The server's programs: Debian's newest /usr/lib/postgresql/N/bin.
fn bin() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
            .collect();
        versions.sort();
        versions
            .pop()
            .map(|(_, p)| p)
            .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
    })
    .clone()
}

/// A PostgreSQL cluster in a temporary directory.
struct Cluster {
    dir: PathBuf,
    port: u16,
}

/// Close the descriptors a test may have inherited (the flock(1) of
/// /tmp/rtscope-measure.lock is one): a server started from here must
/// not hold the measuring lock after the tests end.
const CLOSE_FDS: &str = "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-;";

fn as_postgres(prog: &str) -> Command {
    let mut c = Command::new("sh");
    c.args([
        "-c",
        &format!(
            "{CLOSE_FDS} exec setpriv --reuid=postgres --regid=postgres --clear-groups -- \"$@\""
        ),
        "sh",
    ])
    .arg(bin().join(prog));
    c
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Root and PostgreSQL's programs, or the suite's skip rule (a failed
/// test, or one SKIP line under RTSCOPE_ALLOW_SKIP).
fn have_postgres() -> bool {
    require_root()
        && require(
            Need::Tool,
            bin().join("initdb").exists(),
            &format!(
                "PostgreSQL ({}): scripts/install-deps.sh installs it",
                bin().display()
            ),
        )
}

impl Cluster {
    /// A new cluster, started; `None` (the test is skipped, with the
    /// reason) where PostgreSQL or root is missing.
    fn start(name: &str) -> Option<Cluster> {
        if !have_postgres() {
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "rtscope-pg-{name}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let chown = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(chown.success());
        let init = as_postgres("initdb")
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .unwrap();
        assert_code(&init, 0);
        let c = Cluster {
            dir,
            port: free_port(),
        };
        c.pg_ctl_start();
        Some(c)
    }

    fn pg_ctl_start(&self) {
        let o = as_postgres("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-w", "-o"])
            .arg(format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
                self.port,
                self.dir.display()
            ))
            .arg("start")
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert_code(&o, 0);
    }

    fn pg_ctl_stop(&self) {
        let o = as_postgres("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-w", "-m", "fast", "stop"])
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert_code(&o, 0);
    }

    /// The URL of database `db`.
    fn url(&self, db: &str) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/{db}", self.port)
    }

    fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(
            &format!(
                "host=127.0.0.1 port={} user=postgres dbname={db}",
                self.port
            ),
            postgres::NoTls,
        )
        .unwrap()
    }

    /// A new empty database; its URL.
    fn database(&self, name: &str) -> String {
        self.client("postgres")
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        self.url(name)
    }

    /// A process that stops the cluster and removes its directory when
    /// the test binary exits (parent-death signal): started from a thread
    /// that never ends, since the signal follows the creating thread.
    fn watch(&self) {
        let script = format!(
            "{CLOSE_FDS} trap 'setpriv --reuid=postgres --regid=postgres --clear-groups -- {b}/pg_ctl -D {d}/data -m immediate stop >/dev/null 2>&1; rm -rf {d}; exit 0' TERM; \
             while :; do sleep 0.2; done",
            d = self.dir.display(),
            b = bin().display()
        );
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let child = Command::new("setpriv")
                .args(["--pdeathsig", "TERM", "--", "sh", "-c", &script])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let _ = tx.send(child.is_ok());
            loop {
                std::thread::park();
            }
        });
        assert!(rx.recv().unwrap(), "the watchdog did not start");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = as_postgres("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-w", "-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The cluster shared by this module's tests (never dropped: the
/// watchdog stops it when the test binary exits).
fn shared() -> Option<&'static Cluster> {
    static SHARED: OnceLock<Cluster> = OnceLock::new();
    // Asked by every test that wants the cluster: each says SKIP once.
    if !have_postgres() {
        return None;
    }
    Some(SHARED.get_or_init(|| {
        let c = Cluster::start("shared").expect("PostgreSQL is here");
        c.watch();
        c
    }))
}

/// Rows of `rtscope runs` (lines after the header).
fn listed(o: &Output) -> Vec<String> {
    assert_code(o, 0);
    stdout(o)
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

fn fixture(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

const MEASURE: &[&str] = &["measure", "-q", "--policy", "other", "-i", "2ms"];

#[test]
fn two_boards_write_to_one_store_and_are_read_by_host() {
    let Some(pg) = shared() else { return };
    let url = pg.database("two_boards");
    let dir = TempDir::new("pg-boards");
    {
        let _g = shared_system();
        for host in ["board-a", "board-b"] {
            let mut args = MEASURE.to_vec();
            args.extend(["-D", "1", "--host", host, "--label", host]);
            let o = rt(&dir, &url, &args);
            assert_code(&o, 0);
            let text = format!("{}{}", stdout(&o), stderr(&o));
            assert!(text.contains("saved as run"), "{text}");
        }
    }
    assert_eq!(listed(&rt(&dir, &url, &["runs"])).len(), 2);
    let a = listed(&rt(&dir, &url, &["runs", "--host", "board-a"]));
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(a[0].contains("board-a"), "{a:?}");
    let none = rt(&dir, &url, &["runs", "--host", "no-such-board"]);
    assert!(listed(&none).is_empty());
    assert!(stdout(&none).contains("no runs of host 'no-such-board'"));
    // Filters and relabelling work on PostgreSQL too.
    let b = listed(&rt(
        &dir,
        &url,
        &["runs", "--label", "*-b", "--state", "complete"],
    ));
    assert_eq!(b.len(), 1, "{b:?}");
    assert!(b[0].contains("board-b"), "{b:?}");
    let o = rt(&dir, &url, &["runs", "relabel", "1", "board A, idle"]);
    assert_code(&o, 0);
    let a = listed(&rt(
        &dir,
        &url,
        &["runs", "--label", "board A*", "--since", "1d"],
    ));
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        export(&dir, &url, "1").label.as_deref(),
        Some("board A, idle")
    );
    let o = rt(&dir, &url, &["runs", "relabel", "1", "board-a"]);
    assert_code(&o, 0);
    let rec = export(&dir, &url, "1");
    assert_eq!(rec.fingerprint.hostname, "board-a");
    assert_eq!(export(&dir, &url, "2").fingerprint.hostname, "board-b");
    // report and compare read from PostgreSQL.
    let html = dir.join("r.html");
    let o = rt(
        &dir,
        &url,
        &["report", "1", "2", "-o", html.to_str().unwrap()],
    );
    assert_code(&o, 0);
    assert!(std::fs::read_to_string(&html).unwrap().contains("board-b"));
    let o = rt(&dir, &url, &["compare", "1", "2"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("B/A"), "{}", stdout(&o));
    // Nothing was written to the local file.
    assert!(!dir.join("data/rtscope/rtscope.db").exists());
}

#[test]
fn serve_shows_the_shared_store_read_only() {
    use crate::serve::{Server, run, window};
    let Some(pg) = shared() else { return };
    let url = pg.database("serve");
    let dir = TempDir::new("pg-serve");
    {
        let mut s = rtscope::store::Store::open(Path::new(&url)).unwrap();
        s.insert(&run(1, "board A", "board-a", 0, 120_000)).unwrap();
        s.insert(&run(2, "board B", "board-b", 1, 90_000)).unwrap();
        s.insert_windows(&[window("lab", "board-a", 0, 60, 40_000)])
            .unwrap();
    }
    let srv = Server::start(&dir, Path::new(&url), &["--listen", "0"]);
    // More requests than idle connections kept: each gets one.
    for _ in 0..6 {
        let api = srv.get("/api/runs?sort=worst").json();
        assert_eq!(api["total"], 2);
        assert_eq!(api["runs"][0]["host"], "board-a");
    }
    let page = srv.get("/?host=board-b");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("board B"));
    let report = srv.get("/compare?runs=1,2");
    assert_eq!(report.status, 200, "{}", report.body);
    assert!(report.body.contains("<nav id=\"serve-nav\""));
    let rec = srv.get("/api/runs/2").json();
    assert_eq!(rec["label"], "board B");
    assert_eq!(srv.get("/api/boards").json().as_array().unwrap().len(), 2);
    assert_eq!(srv.get("/runs/3").status, 404);
    // A board's page, the studies (none) and a monitor, from PostgreSQL.
    assert!(
        srv.get("/boards/board-a")
            .body
            .contains("<svg id=\"history\"")
    );
    assert_eq!(srv.get("/api/boards/board-b").json()["runs"][0]["id"], 2);
    assert_eq!(srv.get("/api/studies").json(), serde_json::json!([]));
    let monitors = srv.get("/api/monitors").json();
    assert_eq!(
        (
            monitors[0]["monitor"].as_str(),
            monitors[0]["windows"].as_u64()
        ),
        (Some("lab"), Some(1))
    );
    assert_eq!(srv.get("/monitors/lab").status, 200);
    assert_eq!(srv.get("/monitors/lab/plot.svg").status, 200);
    let w = srv
        .get("/api/monitors/lab/windows?host=board-a&after=0")
        .json();
    assert_eq!(w[0]["max_ns"], 40_000);
    drop(srv);
    // An empty database is an empty list, and left empty (no schema).
    let empty = pg.database("serve_empty");
    let srv = Server::start(&dir, Path::new(&empty), &["--listen", "0"]);
    assert_eq!(srv.get("/api/runs").json()["total"], 0);
    assert_eq!(srv.get("/").status, 200);
    drop(srv);
    let tables: i64 = pg
        .client("serve_empty")
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "serve made a store");
}

/// The escaping test of tests/it/serve.rs, its body and store alike, on
/// a PostgreSQL store: hostile labels, tags and hosts escaped on every
/// page, whole in the JSON.
#[test]
fn serve_escapes_hostile_values_from_postgres() {
    let Some(pg) = shared() else { return };
    let url = pg.database("serve_escape");
    let dir = TempDir::new("pg-serve-escape");
    crate::serve::fill(Path::new(&url));
    crate::serve::escaped_everywhere(&dir, Path::new(&url));
}

/// A page of the runs list kept, ordered and counted in PostgreSQL's SQL
/// is the page of every row read and sorted by rtscope (the checks of
/// the SQLite unit test, on this backend: NULLS LAST, ties, tags).
#[test]
fn a_page_in_sql_is_the_page_of_every_row() {
    let Some(pg) = shared() else { return };
    let url = pg.database("pages");
    rtscope::store::runs::pages_agree(&mut rtscope::store::Store::open(Path::new(&url)).unwrap());
}

#[test]
fn push_copies_once_by_uuid() {
    let Some(pg) = shared() else { return };
    let url = pg.database("push_once");
    let dir = TempDir::new("pg-push");
    let local = dir.join("local.db");
    let local = local.to_str().unwrap();
    let o = rt(&dir, local, &["import", &fixture("import/evl-latmus.txt")]);
    assert_code(&o, 0);
    let o = rt(&dir, local, &["push", "last", "--to", &url]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("copied 1 run(s)"), "{}", stdout(&o));
    let o = rt(&dir, local, &["push", "1", "last", "--to", &url]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("nothing copied") && stdout(&o).contains("already there as run 1"),
        "{}",
        stdout(&o)
    );
    assert_eq!(listed(&rt(&dir, &url, &["runs"])).len(), 1);
    assert_eq!(export(&dir, &url, "1"), export(&dir, local, "1"));
    // An unknown run is refused before anything is copied.
    let o = rt(&dir, local, &["push", "99", "--to", &url]);
    assert_code(&o, 2);
}

#[test]
fn the_server_stopped_mid_run_loses_nothing() {
    // Its own cluster: stopping the shared one would disturb the others.
    let Some(pg) = Cluster::start("down") else {
        return;
    };
    let url = pg.database("down");
    let dir = TempDir::new("pg-down");
    let json1 = dir.join("1.json");
    let json2 = dir.join("2.json");
    let spawn = |json: &Path, duration: &str| {
        let mut args = MEASURE.to_vec();
        args.extend([
            "-D",
            duration,
            "--checkpoint",
            "1",
            "--json",
            json.to_str().unwrap(),
        ]);
        rtscope(dir.path())
            .arg("--db")
            .arg(&url)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let _g = shared_system();
    // 1. Down for a while in the middle: the run goes to the spool, then
    //    back to the server, and ends there whole. The run goes on until a
    //    checkpoint has reached the server again (it says so), then Ctrl-C
    //    ends it: how long the server takes to stop and start on a busy
    //    machine (the lab's guests beside this test) cannot end the run
    //    while the server is still down.
    let mut child = spawn(&json1, "120");
    std::thread::sleep(Duration::from_millis(2500));
    pg.pg_ctl_stop();
    std::thread::sleep(Duration::from_millis(2000));
    pg.pg_ctl_start();
    let pipe = child.stderr.take().unwrap();
    let (back_tx, back) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            if line.contains("reachable again") {
                let _ = back_tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let reached = back.recv_timeout(Duration::from_secs(60)).is_ok();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = reader.join().unwrap();
    assert!(
        reached,
        "no checkpoint reached the server again within 60 s of its start:\n{err}"
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("local spool"), "{err}");
    assert!(err.contains("reachable again"), "{err}");
    let stored = export(&dir, &url, "1");
    let written: RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json1).unwrap()).unwrap();
    assert_eq!(stored.run_uuid, written.run_uuid);
    assert_eq!(stored.overall.samples, written.overall.samples);
    assert_eq!(stored, written);
    // 2. Down at the end: the whole run is in the spool, the message says
    //    how to send it, and the push completes the copy on the server.
    let child = spawn(&json2, "6");
    std::thread::sleep(Duration::from_millis(2500));
    pg.pg_ctl_stop();
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("push") && err.contains("spool.db"), "{err}");
    let spool = dir.join("data/rtscope/spool.db");
    let spool = spool.to_str().unwrap();
    let written: RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json2).unwrap()).unwrap();
    assert_eq!(export(&dir, spool, "last"), written);
    pg.pg_ctl_start();
    let o = rt(&dir, spool, &["push", "last", "--to", &url]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("completed run 2"), "{}", stdout(&o));
    assert_eq!(export(&dir, &url, "2"), written);
    assert_eq!(listed(&rt(&dir, &url, &["runs"])).len(), 2);
}

#[test]
fn bad_and_unreachable_urls_exit_2_before_measuring() {
    let dir = TempDir::new("pg-bad");
    let closed = format!("postgresql://postgres@127.0.0.1:{}/x", free_port());
    for (url, needle) in [
        (
            "postgresql://postgres@127.0.0.1:notaport/x",
            "not a usable PostgreSQL URL",
        ),
        ("postgresql://postgres@127.0.0.1:5432", "names no database"),
        (closed.as_str(), "cannot reach the PostgreSQL run store"),
    ] {
        let t = Instant::now();
        let o = rt(
            &dir,
            url,
            &["measure", "-D", "1h", "-q", "--policy", "other"],
        );
        assert_code(&o, 2);
        assert!(stderr(&o).contains(needle), "{url}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
        assert!(t.elapsed() < Duration::from_secs(60), "it measured");
        let o = rt(&dir, url, &["runs"]);
        assert_code(&o, 2);
    }
}

#[test]
fn migrations_create_an_empty_database_and_refuse_newer_or_foreign_ones() {
    let Some(pg) = shared() else { return };
    let url = pg.database("migrate");
    let dir = TempDir::new("pg-migrate");
    // Reading an empty database creates nothing.
    let o = rt(&dir, &url, &["runs"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("no runs stored"));
    let mut c = pg.client("migrate");
    let tables = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    assert_eq!(tables(&mut c), 0);
    let o = rt(&dir, &url, &["import", &fixture("import/evl-latmus.txt")]);
    assert_code(&o, 0);
    let meta = |c: &mut postgres::Client, k: &str| -> i64 {
        c.query_one("SELECT value FROM rtscope_meta WHERE key = $1", &[&k])
            .unwrap()
            .get(0)
    };
    assert_eq!(
        meta(&mut c, "schema_version"),
        rtscope::store::schema::CURRENT_VERSION
    );
    assert_eq!(meta(&mut c, "application_id"), 0x7274_7363);
    // A newer schema is refused, untouched.
    c.execute(
        "UPDATE rtscope_meta SET value = 99 WHERE key = 'schema_version'",
        &[],
    )
    .unwrap();
    let o = rt(&dir, &url, &["runs"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("upgrade rtscope"), "{}", stderr(&o));
    assert_eq!(meta(&mut c, "schema_version"), 99);
    // A database of another program is refused, untouched.
    let other = pg.database("other_program");
    let mut f = pg.client("other_program");
    f.batch_execute("CREATE TABLE t (x int)").unwrap();
    let o = rt(&dir, &other, &["import", &fixture("import/evl-latmus.txt")]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("another program"), "{}", stderr(&o));
    assert_eq!(tables(&mut f), 1);
}

#[test]
fn concurrent_writers_migrate_once_and_never_duplicate_a_run() {
    let Some(pg) = shared() else { return };
    let url = pg.database("concurrent");
    let dir = TempDir::new("pg-conc");
    // Eight imports of one file at once into a fresh database: the
    // schema is made once (advisory lock), and the run (its uuid comes
    // from the file's content) is stored once. Every import succeeds:
    // one stores the run, the others say it is already stored, as a
    // second import of the same file does one after the other (a writer
    // that loses the race is no error).
    let children: Vec<_> = (0..8)
        .map(|_| {
            rtscope(dir.path())
                .arg("--db")
                .arg(&url)
                .args(["import", &fixture("import/evl-latmus.txt")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut imported = 0;
    for ch in children {
        let o = ch.wait_with_output().unwrap();
        let text = format!("{}{}", stdout(&o), stderr(&o));
        assert!(
            !text.contains("panicked") && !text.contains("schema"),
            "{text}"
        );
        assert_code(&o, 0);
        if text.contains("imported") {
            imported += 1;
        } else {
            assert!(text.contains("already stored"), "{text}");
        }
    }
    assert_eq!(imported, 1);
    assert_eq!(listed(&rt(&dir, &url, &["runs"])).len(), 1);
}

#[test]
fn characterizations_and_monitor_windows_are_stored_in_postgres() {
    let Some(pg) = shared() else { return };
    let url = pg.database("char_monitor");
    let dir = TempDir::new("pg-char-monitor");
    let mut c = pg.client("char_monitor");
    let count = |c: &mut postgres::Client, table: &str| -> i64 {
        c.query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .map(|r| r.get(0))
            .unwrap_or(0)
    };
    {
        let _g = shared_system();
        let o = rt(
            &dir,
            &url,
            &[
                "characterize",
                "--only",
                "clock-gettime",
                "-D",
                "50ms",
                "--cpus",
                "0",
            ],
        );
        assert_code(&o, 0);
        let mut child = rtscope(dir.path())
            .arg("--db")
            .arg(&url)
            .args([
                "monitor",
                "--name",
                "pg",
                "--host",
                "board-c",
                "--window",
                "1s",
                "--checkpoint",
                "1s",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while count(&mut c, "monitor_windows") < 2 {
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("no 2 windows in PostgreSQL in 20 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(count(&mut c, "characterizations"), 1);
    assert!(count(&mut c, "characterization_rows") >= 1);
    assert_eq!(count(&mut c, "monitor_runs"), 1);
    let host: String = c
        .query_one("SELECT DISTINCT host FROM monitor_windows", &[])
        .unwrap()
        .get(0);
    assert_eq!(host, "board-c");
    let rows = listed(&rt(&dir, &url, &["runs"]));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].contains(" characterization "), "{rows:?}");
    let o = rt(&dir, &url, &["runs", "show", "1"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("clock"), "{}", stdout(&o));
    let html = dir.join("m.html");
    let o = rt(&dir, &url, &["report", "2", "-o", html.to_str().unwrap()]);
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("monitor pg: largest latency per window"));
    // runs rm takes the characterization's rows with it.
    assert_code(&rt(&dir, &url, &["runs", "rm", "1"]), 0);
    assert_eq!(count(&mut c, "characterization_rows"), 0);
}

/// `rtscope --db URL monitor` of one simulated board: its own CPU, host
/// name and metrics port.
fn monitor_board(
    dir: &TempDir,
    url: &str,
    host: &str,
    cpu: usize,
    port: u16,
) -> std::process::Child {
    rtscope(dir.path())
        .arg("--db")
        .arg(url)
        .args([
            "monitor", "--name", "lab", "--host", host, "--policy", "other",
        ])
        .args([
            "-a",
            &cpu.to_string(),
            "--window",
            "1s",
            "--checkpoint",
            "1s",
        ])
        .args(["--metrics", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The README's lab: two boards (two monitors with their own --host)
/// write their windows to one PostgreSQL and are scraped by one
/// Prometheus; the store, the report and Prometheus all tell the boards
/// apart.
#[test]
fn two_boards_are_monitored_into_one_store_and_one_prometheus() {
    let Some(pg) = shared() else { return };
    if !require(
        Need::Tool,
        crate::metrics::have_prometheus(),
        "prometheus (scripts/install-deps.sh installs it)",
    ) {
        return;
    }
    let url = pg.database("lab");
    let dir = TempDir::new("pg-lab");
    let cpus = rtscope::sysinfo::cpu::allowed_cpus().unwrap();
    let ports = [crate::metrics::free_port(), crate::metrics::free_port()];
    let prom = crate::metrics::Prometheus::scraping(dir.path(), &ports).expect("prometheus starts");
    let mut c = pg.client("lab");
    let hosts_with_windows = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM (SELECT host FROM monitor_windows GROUP BY host HAVING count(*) >= 2) h",
            &[],
        )
        .map(|r| r.get(0))
        .unwrap_or(0)
    };
    let wakeups_by_host = || prom.query("max by (host) (rtscope_wakeups_total{job=\"rtscope\"})");
    {
        let _g = shared_system();
        let boards = [
            monitor_board(&dir, &url, "board-a", cpus[0], ports[0]),
            monitor_board(&dir, &url, "board-b", *cpus.last().unwrap(), ports[1]),
        ];
        let t0 = Instant::now();
        while hosts_with_windows(&mut c) < 2 || wakeups_by_host().len() < 2 {
            if t0.elapsed() > Duration::from_secs(30) {
                for mut b in boards {
                    let _ = b.kill();
                    let _ = b.wait();
                }
                panic!("two boards not seen in PostgreSQL and Prometheus in 30 s");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        for b in boards {
            let _ = Command::new("kill")
                .args(["-TERM", &b.id().to_string()])
                .status();
            let out = b.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let w = wakeups_by_host();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.iter().all(|&n| n > 0.0), "{w:?}");
    for host in ["board-a", "board-b"] {
        let rows = listed(&rt(&dir, &url, &["runs", "--host", host]));
        assert_eq!(rows.len(), 1, "{host}: {rows:?}");
    }
    // One report of board A's run draws the monitor's windows of both.
    let html = dir.join("lab.html");
    let o = rt(&dir, &url, &["report", "1", "-o", html.to_str().unwrap()]);
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("monitor lab: largest latency per window"));
    assert!(page.contains("board-a CPU") && page.contains("board-b CPU"));
}

/// A study kept in PostgreSQL: its runs, its status and its report come
/// from the shared store, and a second runner is refused there too.
#[test]
fn a_study_runs_and_reports_from_postgres() {
    let Some(pg) = shared() else { return };
    let url = pg.database("study");
    let dir = TempDir::new("pg-study");
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "name = \"s\"\nduration = \"1s\"\nrepetitions = 1\n\
         [matrix]\npolicy = [\"other\", \"fifo\"]\n[fixed]\nthreads = 1\n",
    )
    .unwrap();
    {
        let _g = shared_system();
        let o = rt(&dir, &url, &["study", file.to_str().unwrap(), "-q"]);
        assert_code(&o, 0);
        assert!(stderr(&o).contains("2 of 2 runs done"), "{}", stderr(&o));
    }
    let o = rt(&dir, &url, &["study", "status", "s", "--json"]);
    assert_code(&o, 0);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["done"].as_u64(), Some(2), "{s:#}");
    assert_eq!(listed(&rt(&dir, &url, &["runs"])).len(), 2);
    let o = rt(&dir, &url, &["study", "resume", "s"]);
    assert_code(&o, 0);
    assert!(stderr(&o).contains("is complete"), "{}", stderr(&o));
    let html = dir.join("s.html");
    let o = rt(
        &dir,
        &url,
        &["study", "report", "s", "-o", html.to_str().unwrap()],
    );
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("policy"),
        "the report names the varied option"
    );
    assert!(!dir.join("data/rtscope/rtscope.db").exists());
}

/// Wait for `child` at most `bound`: one still running then is killed
/// and the test fails (a hang is the failure, not slowness).
fn wait_within(mut child: std::process::Child, bound: Duration, what: &str) -> Output {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > bound {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("{what} did not end within {bound:?}: {}", stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// `rtscope --db URL ARGS...` started with its output captured.
fn spawn_on(home: &Path, url: &str, args: &[&str]) -> std::process::Child {
    rtscope(home)
        .arg("--db")
        .arg(url)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A listener on 127.0.0.1 that accepts connections and never answers
/// (a hung server); its port.
fn hung_listener() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming() {
            held.push(s);
        }
    });
    port
}

#[test]
fn a_server_that_never_answers_ends_commands_with_status_2() {
    let port = hung_listener();
    let dir = TempDir::new("pg-hung");
    let html = dir.join("r.html");
    let _g = shared_system();
    for url in [
        format!("postgresql://postgres@127.0.0.1:{port}/x"),
        format!("postgresql://postgres@127.0.0.1:{port}/x?connect_timeout=3"),
    ] {
        for args in [
            &["measure", "-D", "1", "-q", "--policy", "other"][..],
            &["runs"],
            &["report", "last", "-o", html.to_str().unwrap()],
        ] {
            let child = spawn_on(dir.path(), &url, args);
            let o = wait_within(
                child,
                Duration::from_secs(60),
                &format!("{args:?} on {url}"),
            );
            assert_code(&o, 2);
            assert!(
                stderr(&o).contains("cannot reach the PostgreSQL run store"),
                "{args:?}: {}",
                stderr(&o)
            );
        }
    }
}

/// A signal while a command that opens the store (`runs`, `report`,
/// `explain`, `tail`, `compare`, `plot`, `push`, `measure`) waits for a
/// server that accepts and never answers ends the wait long before the
/// URL's connect_timeout (60 s): exit 2, saying it was interrupted while
/// connecting (measure: before measuring; nothing was measured). SIGINT
/// for each, SIGTERM for `runs` and `compare`.
#[test]
fn a_signal_ends_the_wait_for_a_server_that_never_answers() {
    let port = hung_listener();
    let dir = TempDir::new("pg-hung-signal");
    let html = dir.join("r.html");
    let json = dir.join("r.json");
    let png = dir.join("r.png");
    let to = dir.join("to.db");
    let _g = shared_system();
    let url = format!("postgresql://postgres@127.0.0.1:{port}/x?connect_timeout=60");
    for (args, sig) in [
        (&["runs"][..], "-INT"),
        (&["runs"][..], "-TERM"),
        (&["runs", "show", "last"][..], "-INT"),
        (
            &["report", "last", "-o", html.to_str().unwrap()][..],
            "-INT",
        ),
        (&["explain", "last"][..], "-INT"),
        (&["tail", "last"][..], "-INT"),
        (&["compare", "1", "2"][..], "-TERM"),
        (
            &[
                "plot",
                "last",
                "--kind",
                "hist",
                "-o",
                png.to_str().unwrap(),
            ][..],
            "-INT",
        ),
        (&["push", "last", "--to", to.to_str().unwrap()][..], "-INT"),
        (
            &[
                "measure",
                "-D",
                "1",
                "-q",
                "--policy",
                "other",
                "--json",
                json.to_str().unwrap(),
            ][..],
            "-INT",
        ),
    ] {
        let child = spawn_on(dir.path(), &url, args);
        let t = Instant::now();
        std::thread::sleep(Duration::from_secs(1));
        kill(sig, &child);
        let o = wait_within(
            child,
            Duration::from_secs(15),
            &format!("{args:?} after {sig}"),
        );
        assert_code(&o, 2);
        assert!(t.elapsed() < Duration::from_secs(15));
        let err = stderr(&o);
        assert!(
            err.contains("interrupted while connecting to the PostgreSQL run store"),
            "{args:?} {sig}: {err}"
        );
        assert!(!err.contains("second signal"), "{args:?} {sig}: {err}");
        if args[0] == "measure" {
            assert!(err.contains("nothing was measured"), "{err}");
            assert!(!json.exists(), "measure wrote a record: {err}");
        }
    }
}

/// Stops (SIGSTOP) every process of a cluster while it lives, and
/// continues them (SIGCONT) when dropped, also when the test fails.
struct Stopped<'a>(&'a Cluster);

impl<'a> Stopped<'a> {
    fn new(pg: &'a Cluster) -> Stopped<'a> {
        signal_cluster(pg, "-STOP");
        Stopped(pg)
    }
}

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        signal_cluster(self.0, "-CONT");
    }
}

/// Send `sig` to the postmaster of `pg` and to each of its children.
fn signal_cluster(pg: &Cluster, sig: &str) {
    let pm = std::fs::read_to_string(pg.dir.join("data/postmaster.pid")).unwrap();
    let pm = pm.lines().next().unwrap().trim().to_string();
    let mut pids = vec![pm.clone()];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if ppid == Some(pm.as_str()) {
            pids.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    let s = Command::new("kill").arg(sig).args(&pids).status().unwrap();
    assert!(s.success(), "kill {sig} {pids:?}");
}

/// `measure` into `url` for `duration`, checkpointing every second.
fn measure_into(dir: &TempDir, url: &str, duration: &str, json: &Path) -> std::process::Child {
    let mut args = MEASURE.to_vec();
    args.extend([
        "-D",
        duration,
        "--checkpoint",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    rtscope(dir.path())
        .arg("--db")
        .arg(url)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn kill(sig: &str, child: &std::process::Child) {
    Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
}

#[test]
fn a_stopped_server_never_holds_a_run_past_its_end_or_its_signals() {
    // Its own cluster: stopping the shared one would disturb the others.
    let Some(pg) = Cluster::start("sigstop") else {
        return;
    };
    let url = pg.database("sigstop");
    let dir = TempDir::new("pg-sigstop");
    let spool = dir.join("data/rtscope/spool.db");
    let spool = spool.to_str().unwrap();
    let bound = Duration::from_secs(60);
    let _g = shared_system();

    // 1. Stopped in the middle of a 6 s run: the run ends anyway, whole
    //    in the local spool, and is pushed once the server continues.
    let json = dir.join("1.json");
    let child = measure_into(&dir, &url, "6", &json);
    std::thread::sleep(Duration::from_millis(2500));
    let stopped = Stopped::new(&pg);
    let o = wait_within(child, bound, "a run whose server is stopped");
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("local spool") && err.contains("push"), "{err}");
    let written: RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(export(&dir, spool, "last"), written);
    drop(stopped);
    let o = rt(&dir, spool, &["push", "last", "--to", &url]);
    assert_code(&o, 0);
    assert_eq!(export(&dir, &url, "1"), written);

    // 2. SIGTERM while a checkpoint waits for the stopped server: the
    //    run ends, with everything measured kept in the spool.
    let json = dir.join("2.json");
    let child = measure_into(&dir, &url, "10m", &json);
    std::thread::sleep(Duration::from_millis(2500));
    let stopped = Stopped::new(&pg);
    std::thread::sleep(Duration::from_millis(1000));
    kill("-TERM", &child);
    let o = wait_within(child, bound, "SIGTERM with the server stopped");
    assert_code(&o, 2);
    let written: RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(written.end_reason, rtscope::record::EndReason::Signal);
    assert_eq!(export(&dir, spool, "last"), written);
    drop(stopped);

    // 3. A second SIGINT exits at once, as promised; the server keeps
    //    the run up to its last checkpoint (interrupted).
    let json = dir.join("3.json");
    let child = measure_into(&dir, &url, "10m", &json);
    std::thread::sleep(Duration::from_millis(2500));
    let stopped = Stopped::new(&pg);
    std::thread::sleep(Duration::from_millis(1000));
    kill("-INT", &child);
    std::thread::sleep(Duration::from_millis(300));
    kill("-INT", &child);
    let o = wait_within(child, bound, "a second SIGINT");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("second signal"), "{}", stderr(&o));
    drop(stopped);
    let runs = rt(&dir, &url, &["runs"]);
    let rows = listed(&runs);
    assert_eq!(rows.len(), 3, "{}", stdout(&runs));
    let third = rows.iter().find(|r| r.trim_start().starts_with("3 "));
    assert!(
        third.is_some_and(|r| r.contains("interrupted")),
        "{}",
        stdout(&runs)
    );
    let kept = export(&dir, &url, "3");
    assert!(kept.overall.samples > 0);
    // The server works on.
    assert_eq!(listed(&rt(&dir, &url, &["runs"])).len(), 3);
}
