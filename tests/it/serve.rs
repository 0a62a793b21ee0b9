//! `rtscope serve` for real: a store of a few runs (hostile labels, tags
//! and host names among them), the server started on a free loopback
//! port (read from its first line), and plain HTTP/1.1 over std::net.
//! The list and its filters, paging and sort; a run's page is the report
//! `rtscope report` writes, and a comparison of three too; the API's
//! JSON matches the store; every value escaped; paths, bad filters and
//! missing credentials refused; a non-loopback address without --auth
//! and a port in use are exit 2; SIGTERM and Ctrl-C stop it (exit 0).
//! Every server is killed when its test ends (a guard).

use crate::util::{TempDir, assert_code, dechunk, rtscope, stderr, stdout, wait_output};
use rtscope::record::{RunRecord, synthetic};
use rtscope::store::windows::WindowRow;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

const HOSTILE_LABEL: &str = "<script>alert(1)</script>";
const QUOTED_TAG: (&str, &str) = ("note", "say \"hi\" <b>");
const DAY_NS: u64 = 86_400 * 1_000_000_000;
/// 2026-01-01 00:00 UTC.
const JAN_1: u64 = 20_454 * DAY_NS;

fn long_host() -> String {
    format!("<x>{}", "h".repeat(10_000))
}

/// A run of `threads` × `n` samples around `base_ns`, the largest
/// `max_ns`, on `host`, started `day` days after 2026-01-01.
pub(crate) fn run(seed: u64, label: &str, host: &str, day: u64, max_ns: u64) -> RunRecord {
    let vals: Vec<Vec<u64>> = (0..2)
        .map(|t| {
            let mut v: Vec<u64> = (0..2000)
                .map(|i| 5_000 + (i * 7919 + seed * 31 + t) % 20_000)
                .collect();
            v[1000] = max_ns - t;
            v
        })
        .collect();
    let mut r = synthetic(&vals);
    r.run_uuid = format!("{:032x}", 0xabc0_0000 + seed);
    r.label = Some(label.to_string());
    r.fingerprint.hostname = host.to_string();
    r.fingerprint.kernel_release = if seed.is_multiple_of(2) {
        "6.1.0-rt-amd64".into()
    } else {
        "6.12.0-amd64".into()
    };
    r.started_at_unix_ns = JAN_1 + day * DAY_NS;
    r.ended_at_unix_ns = Some(r.started_at_unix_ns + r.duration_ns);
    r.source.command_line = vec![
        "rtscope".into(),
        "measure".into(),
        format!("--label={label}"),
    ];
    r.validate().unwrap();
    r
}

/// A store of five runs (in `dir`): ids 1..=5, in this order.
fn store(dir: &TempDir) -> PathBuf {
    let db = dir.join("runs.db");
    fill(&db);
    db
}

/// Five runs into the store at `location` (an SQLite file or a
/// PostgreSQL URL), ids 1..=5 in this order: a hostile label (2), a
/// quoted tag (2), a host of 10 000 characters with markup (3).
pub(crate) fn fill(location: &Path) {
    let mut s = rtscope::store::Store::open(location).unwrap();
    let mut runs = vec![
        run(1, "baseline", "board-a", 0, 120_000),
        run(2, HOSTILE_LABEL, "board-b", 1, 80_000),
        run(3, "isolated", &long_host(), 2, 300_000),
        run(4, "rt tuned", "board-a", 3, 45_000),
        run(5, "rpi 4", "board-b", 4, 900_000),
    ];
    runs[0].tags.insert("kernel".into(), "vanilla".into());
    runs[3].tags.insert("kernel".into(), "rt".into());
    runs[1]
        .tags
        .insert(QUOTED_TAG.0.into(), QUOTED_TAG.1.into());
    for r in &runs {
        s.insert(r).unwrap();
    }
}

/// A running `rtscope serve`, killed and reaped when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) port: u16,
}

impl Server {
    /// Start `rtscope --db DB serve ARGS`, wait for its line, read the port.
    pub(crate) fn start(dir: &TempDir, db: &Path, args: &[&str]) -> Server {
        let mut child = rtscope(dir.path())
            .arg("--db")
            .arg(db)
            .arg("serve")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(err).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            // Keep reading: a full pipe never blocks the server.
            for _ in lines {}
        });
        let mut server = Server { child, port: 0 };
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("rtscope serve printed no line within 20 s");
        let port = line
            .strip_prefix("rtscope serve: listening on http://")
            .and_then(|r| r.strip_suffix('/'))
            .and_then(|a| a.rsplit_once(':'))
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or_else(|| panic!("not the listening line: {line}"));
        server.port = port;
        server
    }

    /// The address of `target` on this server, for a browser.
    pub(crate) fn url(&self, target: &str) -> String {
        format!("http://127.0.0.1:{}{target}", self.port)
    }

    pub(crate) fn get(&self, target: &str) -> Reply {
        http(self.port, target, None)
    }

    fn get_as(&self, target: &str, auth: &str) -> Reply {
        http(self.port, target, Some(auth))
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    head: String,
    pub(crate) body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// A plain HTTP/1.1 GET on loopback, the target sent as it is.
fn http(port: u16, target: &str, auth: Option<&str>) -> Reply {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    write!(
        c,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).unwrap();
    let s = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = s.split_once("\r\n\r\n").unwrap_or((&s, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Reply {
        status,
        head: head.to_string(),
        body,
    }
}

/// The ids of the list page's rows, in order (from their checkboxes).
fn listed_ids(html: &str) -> Vec<i64> {
    html.split(r#"<input type="checkbox" class="pick" name="runs" value=""#)
        .skip(1)
        .map(|s| s.split('"').next().unwrap().parse().unwrap())
        .collect()
}

/// The ids of `/api/runs`'s answer, in order.
fn api_ids(v: &serde_json::Value) -> Vec<i64> {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

/// A page without the bar of links serve puts above a report.
fn without_nav(html: &str) -> String {
    let start = html
        .find("<nav id=\"serve-nav\"")
        .expect("the serve-nav bar");
    let end = start + html[start..].find("</nav>\n").unwrap() + "</nav>\n".len();
    // The bar goes on a line of its own after <body>.
    format!("{}{}", html[..start].trim_end_matches('\n'), &html[end..])
}

#[test]
fn the_list_shows_the_runs_filtered_sorted_and_paged() {
    let dir = TempDir::new("serve-list");
    let db = store(&dir);
    let rows = rtscope::store::Store::open_existing(&db)
        .unwrap()
        .unwrap()
        .list()
        .unwrap();
    let before = std::fs::read(&db).unwrap();
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);

    let all = srv.get("/");
    assert_eq!(all.status, 200, "{}", all.body);
    assert!(all.header("content-type").unwrap().starts_with("text/html"));
    // Newest first, each with its link and its verdict.
    assert_eq!(listed_ids(&all.body), [5, 4, 3, 2, 1]);
    for id in 1..=5 {
        assert!(
            all.body.contains(&format!("href=\"&#x2f;runs&#x2f;{id}\"")),
            "{id}"
        );
    }
    assert!(all.body.contains("id=\"compare\""));
    assert!(all.body.contains("deadline met") || all.body.contains("deadline missed"));
    assert!(all.body.contains("900.0"), "the worst case in µs");

    for (query, want) in [
        ("host=board-a", vec![4, 1]),
        ("label=r*", vec![5, 4]),
        ("tag=kernel", vec![4, 1]),
        ("tag=kernel%3Drt", vec![4]),
        ("kernel=6.1.0-rt*", vec![4, 2]),
        ("since=2026-01-03&until=2026-01-04", vec![4, 3]),
        ("state=complete&host=board-b", vec![5, 2]),
        ("sort=worst", vec![5, 3, 1, 2, 4]),
        ("per_page=2", vec![5, 4]),
        ("per_page=2&page=3", vec![1]),
        ("sort=worst&per_page=2&page=2", vec![1, 2]),
    ] {
        let page = srv.get(&format!("/?{query}"));
        assert_eq!(page.status, 200, "{query}: {}", page.body);
        assert_eq!(listed_ids(&page.body), want, "{query}");
        let api = srv.get(&format!("/api/runs?{query}"));
        assert_eq!(api.status, 200, "{query}: {}", api.body);
        assert_eq!(api_ids(&api.json()), want, "/api/runs?{query}");
    }
    let paged = srv.get("/?per_page=2&page=2").body.replace("&#x2f;", "/");
    assert!(paged.contains("page 2 of 3"), "{paged}");
    assert!(paged.contains("href=\"/?per_page=2&amp;page=1\""));
    assert!(paged.contains("href=\"/?per_page=2&amp;page=3\""));
    let none = srv.get("/?host=nowhere");
    assert_eq!(none.status, 200);
    assert!(none.body.contains("No stored run matches"));

    // The API's rows are the store's.
    let api = srv.get("/api/runs").json();
    assert_eq!(api["total"], 5);
    assert_eq!(api["per_page"], 50);
    for r in &rows {
        let got = api["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == r.id)
            .unwrap();
        assert_eq!(got["uuid"], r.uuid.as_str());
        assert_eq!(got["host"], r.host.as_str());
        assert_eq!(got["label"], r.label.as_deref().unwrap());
        assert_eq!(got["max_ns"], r.max_ns.unwrap());
        assert_eq!(got["started_at_unix_ns"], r.started_at_unix_ns);
        assert_eq!(got["state"], "complete");
    }

    // A bad filter: 400 with the CLI's words, on the page and in the API.
    for (query, words) in [
        (
            "state=gone",
            "unknown state 'gone': use running, complete or interrupted",
        ),
        ("since=soon", "cannot read the date 'soon'"),
        ("tag=%3Dv", "the key before = is empty"),
        (
            "per_page=501",
            "per_page must be a whole number from 1 to 500",
        ),
        ("sort=size", "unknown sort 'size'"),
        ("file=/etc/passwd", "unknown parameter 'file'"),
    ] {
        let api = srv.get(&format!("/api/runs?{query}"));
        assert_eq!(api.status, 400, "{query}");
        let e = api.json()["error"].as_str().unwrap().to_string();
        assert!(e.contains(words), "{query}: {e}");
        let page = srv.get(&format!("/?{query}"));
        assert_eq!(page.status, 400, "{query}");
        assert!(page.body.contains("400 Bad Request"), "{query}");
    }
    let cli = rtscope(dir.path())
        .args(["--db", db.to_str().unwrap(), "runs", "--state", "gone"])
        .output()
        .unwrap();
    assert_code(&cli, 2);
    assert!(stderr(&cli).contains("unknown state 'gone': use running, complete or interrupted"));

    let boards = srv.get("/boards");
    assert_eq!(boards.status, 200);
    for (host, last) in [("board-a", 4), ("board-b", 5)] {
        assert!(boards.body.contains(&format!(">{host}</a>")), "{host}");
        assert!(
            boards
                .body
                .contains(&format!("&#x2f;runs&#x2f;{last}\">{last}</a>"))
        );
    }
    let api = srv.get("/api/boards").json();
    let a = api
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["host"] == "board-a")
        .unwrap();
    assert_eq!(a["runs"], 2);
    assert_eq!(a["last_run"]["id"], 4);
    assert_eq!(a["max_ns"], 45_000);
    assert_eq!(a["kernel_release"], "6.1.0-rt-amd64");
    drop(srv);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the store was written"
    );
}

/// An imported run is `complete`, of origin `imported`, in every view
/// (`runs`, `runs show`, `/`, `/api/runs`), and each filter takes the
/// words shown: `--state complete --origin imported`, `?state=complete&
/// origin=imported`; `imported` given as a state is refused naming the
/// origin filter, on the command line (exit 2) and in the page (400).
#[test]
fn an_imported_run_is_complete_and_imported_everywhere_and_filtered_so() {
    let dir = TempDir::new("serve-origin");
    let db = store(&dir);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/evl-latmus.txt");
    let rt = |args: &[&str]| {
        rtscope(dir.path())
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    assert_code(&rt(&["import", fixture.to_str().unwrap()]), 0);
    // The list: measured runs 1 to 5, the import 6; its state complete.
    let o = rt(&["runs"]);
    assert_code(&o, 0);
    let list = stdout(&o);
    let line = |id: &str| -> Vec<String> {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no run {id} in\n{list}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert_eq!(line("id")[1..3], ["state", "origin"], "{list}");
    assert_eq!(line("6")[1..3], ["complete", "imported"], "{list}");
    assert_eq!(line("1")[1..3], ["complete", "measured"], "{list}");
    let ids = |o: &std::process::Output| -> Vec<String> {
        assert_code(o, 0);
        stdout(o)
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .collect()
    };
    assert_eq!(
        ids(&rt(&[
            "runs", "--state", "complete", "--origin", "imported"
        ])),
        ["6"]
    );
    assert_eq!(ids(&rt(&["runs", "--origin", "measured"])).len(), 5);
    let o = rt(&["runs", "--state", "imported"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o)
            .contains("'imported' is an origin, not a state: filter on the origin (imported)"),
        "{}",
        stderr(&o)
    );
    let o = rt(&["runs", "show", "6"]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("state:       complete"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("source:      imported from"),
        "{}",
        stdout(&o)
    );

    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let api = srv.get("/api/runs?state=complete&origin=imported").json();
    assert_eq!(api_ids(&api), [6], "{api}");
    assert_eq!(api["runs"][0]["state"], "complete");
    assert_eq!(api["runs"][0]["source_kind"], "imported");
    let page = srv.get("/?state=complete&origin=imported");
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(listed_ids(&page.body), [6]);
    assert!(
        page.body
            .contains(r#"<td>complete<br><span class="origin">imported</span></td>"#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<option selected>imported</option>"),
        "{}",
        page.body
    );
    assert_eq!(
        listed_ids(&srv.get("/?origin=measured").body),
        [5, 4, 3, 2, 1]
    );
    let page = srv.get("/?state=imported");
    assert_eq!(page.status, 400);
    assert!(
        page.body.contains("is an origin, not a state"),
        "{}",
        page.body
    );
}

/// `/compare` refuses runs of different quantities where `rtscope
/// compare` does, with its words (400); the 404 page lists /monitors and
/// a report's bar links it.
#[test]
fn compare_refuses_what_rtscope_compare_refuses_and_monitors_are_linked() {
    let dir = TempDir::new("serve-compare-kinds");
    let db = store(&dir);
    let mut oslat = run(6, "oslat", "board-a", 5, 50_000);
    oslat.quantity = Some(rtscope::record::Quantity::BusyLoopGap);
    rtscope::store::Store::open(&db)
        .unwrap()
        .insert(&oslat)
        .unwrap();
    let cli = rtscope(dir.path())
        .args(["--db", db.to_str().unwrap(), "compare", "4", "6"])
        .output()
        .unwrap();
    assert_code(&cli, 2);
    let words = "different quantities are not compared";
    assert!(stderr(&cli).contains(words), "{}", stderr(&cli));
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let page = srv.get("/compare?runs=4,6");
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("400 Bad Request"), "{}", page.body);
    assert!(page.body.contains(words), "{}", page.body);
    assert!(
        page.body.contains("measures busy-loop gap"),
        "{}",
        page.body
    );
    assert_eq!(srv.get("/compare?runs=4,1").status, 200);
    let missing = srv.get("/nothing-here");
    assert_eq!(missing.status, 404);
    assert!(
        missing
            .body
            .contains("&#x2f;monitors and &#x2f;monitors&#x2f;NAME"),
        "{}",
        missing.body
    );
    let page = srv.get("/runs/4");
    assert!(
        page.body.contains(r#"<a href="/monitors">monitors</a>"#),
        "{}",
        page.body
    );
}

#[test]
fn a_run_page_is_its_report_and_compare_is_the_reports_comparison() {
    let dir = TempDir::new("serve-report");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    let report = |refs: &[&str]| {
        let o = rtscope(dir.path())
            .arg("--db")
            .arg(&db)
            .arg("report")
            .args(refs)
            .args(["-o", "-"])
            .output()
            .unwrap();
        assert_code(&o, 0);
        stdout(&o)
    };

    let page = srv.get("/runs/4");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<nav id=\"serve-nav\""));
    assert!(page.body.contains("href=\"/api/runs/4\""));
    assert_eq!(without_nav(&page.body), report(&["4"]));
    // The other references the store resolves.
    assert_eq!(without_nav(&srv.get("/runs/last").body), report(&["last"]));
    let uuid = format!("{:032x}", 0xabc0_0004u64);
    assert_eq!(
        without_nav(&srv.get(&format!("/runs/{uuid}")).body),
        report(&[&uuid])
    );

    let three = srv.get("/compare?runs=1,4,5");
    assert_eq!(three.status, 200, "{}", three.body);
    assert_eq!(without_nav(&three.body), report(&["1", "4", "5"]));
    // Ticked boxes (runs repeated) come back as one address.
    let ticked = srv.get("/compare?runs=1&runs=4&runs=5");
    assert_eq!(ticked.status, 303);
    assert_eq!(ticked.header("location").unwrap(), "/compare?runs=1,4,5");

    for (target, status) in [
        ("/runs/99", 404),
        ("/compare?runs=1,99", 404),
        ("/compare?runs=", 400),
        ("/compare", 400),
        ("/api/runs/99", 404),
        ("/nothing-here", 404),
        ("/api/nothing", 404),
    ] {
        let r = srv.get(target);
        assert_eq!(r.status, status, "{target}: {}", r.body);
    }
    assert!(srv.get("/api/nothing").json()["error"].is_string());

    // The API's record is `runs export --json`'s.
    let api = srv.get("/api/runs/2");
    assert_eq!(api.status, 200);
    assert_eq!(api.header("content-type").unwrap(), "application/json");
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["runs", "export", "2", "--json"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let exported: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(api.json(), exported);
    let rec: RunRecord = serde_json::from_str(&api.body).unwrap();
    assert_eq!(rec.label.as_deref(), Some(HOSTILE_LABEL));
}

/// Issue 54: in the API a quantile among an import's overflows is no
/// number (`null`, its lower bound beside it) and what the import did
/// not record (its duration, host, kernel) is `null`, never 0 or "";
/// the list page says `≥` and unknown. A measured run's row keeps its
/// figures and facts.
#[test]
fn the_api_gives_bounds_and_unknowns_as_null() {
    let dir = TempDir::new("serve-bounds");
    let db = dir.join("runs.db");
    let mut s = rtscope::store::Store::open(&db).unwrap();
    s.insert(&run(1, "measured", "board-a", 0, 120_000))
        .unwrap();
    drop(s);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/cyclictest-old-hist.txt");
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&fixture)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let api = srv.get("/api/runs?sort=date").json();
    let row = |id: i64| {
        api["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no run {id}: {api}"))
            .clone()
    };
    let imported = row(2);
    for key in [
        "p9999_ns",
        "duration_ns",
        "host",
        "kernel_release",
        "preemption_model",
    ] {
        assert_eq!(imported[key], serde_json::Value::Null, "{key}: {imported}");
    }
    assert_eq!(imported["p9999_at_least_ns"], 40_000, "{imported}");
    assert_eq!(imported["max_ns"], 19_085_000, "{imported}");
    assert_eq!(imported["samples"], 20_000, "{imported}");
    // The file does not say when it ran: its start is unknown.
    assert_eq!(
        imported["started_at"],
        serde_json::Value::Null,
        "{imported}"
    );
    let measured = row(1);
    assert!(measured["p9999_ns"].is_u64(), "{measured}");
    assert_eq!(measured["p9999_at_least_ns"], serde_json::Value::Null);
    assert_eq!(measured["duration_ns"], 60_000_000_000u64, "{measured}");
    assert_eq!(measured["host"], "board-a");
    assert_eq!(measured["kernel_release"], "6.12.0-amd64");
    // The record: each quantile among the overflows is null, its bound
    // beside it; p99 (below them) is a figure.
    let rec = srv.get("/api/runs/2").json();
    for stats in [&rec["overall"], &rec["threads"][0]["stats"]] {
        for key in ["p999", "p9999"] {
            assert_eq!(
                stats[format!("{key}_ns")],
                serde_json::Value::Null,
                "{stats}"
            );
            assert_eq!(stats[format!("{key}_at_least_ns")], 40_000, "{stats}");
        }
        assert!(stats["p99_ns"].is_u64(), "{stats}");
        assert!(stats.get("p99_at_least_ns").is_none(), "{stats}");
    }
    // Read back as a record, it keeps its bounds.
    let back: RunRecord = serde_json::from_value(rec).unwrap();
    assert!(back.overall.quantile("p99.9").unwrap().is_bound());
    // The list page: the bound, and unknown.
    let page = srv.get("/").body;
    assert!(page.contains("≥40.0"), "{page}");
    assert!(!page.contains(">40.5<"), "{page}");
}

/// True when `body` holds `raw` nowhere (HTML-escaped it may be).
fn never_raw(body: &str, raw: &str, what: &str) {
    assert!(!body.contains(raw), "{what}: '{raw}' appears unescaped");
}

#[test]
fn hostile_labels_tags_and_hosts_are_escaped_everywhere() {
    let dir = TempDir::new("serve-escape");
    let db = store(&dir);
    escaped_everywhere(&dir, &db);
}

/// The store [`fill`] made at `db` served: every hostile value escaped on
/// every page, whole in the JSON (tests/it/postgres.rs runs it on
/// PostgreSQL).
pub(crate) fn escaped_everywhere(dir: &TempDir, db: &Path) {
    let srv = Server::start(dir, db, &["--listen", "127.0.0.1:0"]);
    let host = long_host();
    let pages = [
        "/",
        "/?sort=worst",
        "/boards",
        "/runs/2",
        "/runs/3",
        "/compare?runs=2,3",
        "/?label=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "/?tag=note%3Dsay%20%22hi%22%20%3Cb%3E",
        "/boards/board-b",
        "/studies",
    ];
    let long_board = format!("/boards/%3Cx%3E{}", "h".repeat(10_000));
    for target in pages.iter().copied().chain([long_board.as_str()]) {
        let r = srv.get(target);
        assert_eq!(r.status, 200, "{target}: {}", r.body);
        never_raw(&r.body, HOSTILE_LABEL, target);
        never_raw(&r.body, "<script", target);
        never_raw(&r.body, "<x>", target);
        never_raw(&r.body, "\"hi\"", target);
        never_raw(&r.body, "<b>", target);
    }
    let list = srv.get("/").body;
    assert!(list.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    assert!(list.contains("&lt;x&gt;hhh"), "the long host, escaped");
    // The filter given comes back in the form, escaped.
    let filtered = srv.get("/?label=%3Cscript%3Ealert(1)%3C%2Fscript%3E").body;
    assert_eq!(listed_ids(&filtered), [2]);
    assert!(filtered.contains("value=\"&lt;script&gt;alert(1)&lt;&#x2f;script&gt;\""));
    let tagged = srv.get("/?tag=note%3Dsay%20%22hi%22%20%3Cb%3E").body;
    assert_eq!(listed_ids(&tagged), [2]);
    assert!(
        tagged.contains("value=\"note=say &quot;hi&quot; &lt;b&gt;\""),
        "{tagged}"
    );
    // The host of 10 000 characters filters too, and the API gives it whole.
    let q = format!(
        "/api/runs?host={}",
        host.replace('<', "%3C").replace('>', "%3E")
    );
    let api = srv.get(&q).json();
    assert_eq!(api_ids(&api), [3]);
    assert_eq!(api["runs"][0]["host"], host.as_str());
    // The JSON gives every value whole, as JSON (never HTML-escaped).
    let rec = srv.get("/api/runs/2").json();
    assert_eq!(rec["label"], HOSTILE_LABEL);
    assert_eq!(rec["tags"][QUOTED_TAG.0], QUOTED_TAG.1);
    let boards = srv.get("/api/boards").json();
    assert!(
        boards.as_array().unwrap().iter().any(|b| b["host"] == host),
        "{boards}"
    );
    // A NUL names nothing, whatever the store (PostgreSQL's texts hold
    // none: asking it for a study so named was a 500).
    for target in [
        "/boards/board-a%00",
        "/api/boards/%00",
        "/studies/x%00",
        "/api/studies/x%00",
        "/api/runs?host=a%00",
        "/?label=%00",
    ] {
        assert_eq!(srv.get(target).status, 400, "{target}");
    }
    // No page runs a script or loads anything.
    let csp = srv.get("/").header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'"), "{csp}");
}

#[test]
fn a_board_has_its_history_and_newest_runs() {
    let dir = TempDir::new("serve-board");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let boards = srv.get("/boards").body;
    assert!(
        boards.contains("href=\"&#x2f;boards&#x2f;board-a\""),
        "{boards}"
    );
    let a = srv.get("/boards/board-a");
    assert_eq!(a.status, 200, "{}", a.body);
    // Its two runs, newest first, each linked to its page.
    let ids: Vec<&str> = a
        .body
        .split("<tr id=\"run-")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert_eq!(ids, ["4", "1"]);
    assert!(a.body.contains("href=\"&#x2f;runs&#x2f;4\""));
    // The history: an inline figure dated in UTC.
    assert!(a.body.contains("<svg id=\"history\""), "{}", a.body);
    assert!(a.body.contains("board-a: worst case of each run"));
    assert!(a.body.contains("2 runs stored"), "{}", a.body);
    // The API gives all its runs, newest first.
    let api = srv.get("/api/boards/board-a").json();
    assert_eq!(api["host"], "board-a");
    assert_eq!(api_ids(&api), [4, 1]);
    assert_eq!(api["runs"][0]["started_at"], "2026-01-04T00:00:00Z");
    assert_eq!(srv.get("/api/boards/nowhere").status, 404);
    // An unknown board, and a board's name that would be a path, are
    // 404; a step of a path names nothing: 400 (tests/it/serve_routes.rs
    // tries every route).
    for (target, status) in [
        ("/boards/nowhere", 404),
        ("/boards/..%2F..%2Fetc%2Fpasswd", 404),
        ("/boards/%2E%2E", 400),
    ] {
        let r = srv.get(target);
        assert_eq!(r.status, status, "{target}: {}", r.body);
        assert!(!r.body.contains("root:"), "{target}");
    }
}

/// `rtscope study` of two cells (interval 1ms and 2ms, a run of 1 s
/// each) named `name`, described as `description`, into `db`. Measures:
/// the caller holds the machine.
pub(crate) fn study_of_two_runs(dir: &TempDir, db: &Path, name: &str, description: &str) {
    let toml = dir.join("study.toml");
    std::fs::write(
        &toml,
        format!(
            "name = {}\ndescription = {}\nduration = \"1s\"\nrepetitions = 1\n\
             [matrix]\ninterval = [\"1ms\", \"2ms\"]\n[fixed]\nthreads = 1\nload = \"idle\"\n",
            serde_json::to_string(name).unwrap(),
            serde_json::to_string(description).unwrap()
        ),
    )
    .unwrap();
    let o = rtscope(dir.path())
        .env("RTSCOPE_DB", db)
        .env("RTSCOPE_STATE_DIR", dir.join("state"))
        .arg("study")
        .arg(&toml)
        .arg("-q")
        .output()
        .unwrap();
    assert_code(&o, 0);
}

#[test]
fn a_study_and_a_characterization_are_served_as_their_reports() {
    if !crate::util::require_root() {
        return;
    }
    let dir = TempDir::new("serve-study");
    let db = dir.join("s.db");
    {
        let _g = crate::util::exclusive_system();
        study_of_two_runs(&dir, &db, "interval+1", "<i>which interval</i> <b>");
        let o = rtscope(dir.path())
            .env("RTSCOPE_DB", &db)
            .args(["characterize", "-D", "50ms", "--label", "<c> bench"])
            .output()
            .unwrap();
        assert_code(&o, 0);
    }
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    // The characterization is listed, and its page is the one `report` writes.
    let runs = srv.get("/").body;
    assert_eq!(listed_ids(&runs), [3, 2, 1], "{runs}");
    let page = srv.get("/runs/3");
    assert_eq!(page.status, 200);
    let o = rtscope(dir.path())
        .env("RTSCOPE_DB", &db)
        .args(["report", "3", "-o"])
        .arg(dir.join("c.html"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let file = std::fs::read_to_string(dir.join("c.html")).unwrap();
    assert_eq!(without_nav(&page.body), file);
    never_raw(&page.body, "<c>", "the characterization's page");
    let list = srv.get("/studies");
    assert_eq!(list.status, 200);
    assert!(list.body.contains("2 of 2 runs done"), "{}", list.body);
    assert!(list.body.contains("&lt;i&gt;which interval&lt;&#x2f;i&gt;"));
    never_raw(&list.body, "<b>", "/studies");
    let href = "&#x2f;studies&#x2f;interval%2B1";
    assert!(list.body.contains(href), "{}", list.body);
    let page = srv.get("/studies/interval%2B1");
    assert_eq!(page.status, 200, "{}", page.body);
    never_raw(&page.body, "<b>", "the study's page");
    // Each cell's finished run is linked to its own page, which answers.
    let runs: Vec<String> = page
        .body
        .split("<a href=\"&#x2f;runs&#x2f;")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect();
    assert_eq!(runs.len(), 2, "{}", page.body);
    for id in &runs {
        let r = srv.get(&format!("/runs/{id}"));
        assert_eq!(r.status, 200, "run {id}");
        assert!(r.body.contains("interval"), "run {id}");
    }
    // The page is the report `study report` writes, but for the links and the bar.
    let o = rtscope(dir.path())
        .env("RTSCOPE_DB", &db)
        .args(["study", "report", "interval+1", "-o"])
        .arg(dir.join("study.html"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let file = std::fs::read_to_string(dir.join("study.html")).unwrap();
    let served = without_nav(&page.body);
    let unlinked = |html: &str| {
        let mut out = String::new();
        for (i, part) in html.split("<a href=\"&#x2f;runs&#x2f;").enumerate() {
            if i == 0 {
                out.push_str(part);
            } else {
                let rest = &part[part.find("\">").unwrap() + 2..];
                out.push_str(&rest.replacen("</a>", "", 1));
            }
        }
        out
    };
    assert_eq!(unlinked(&served), file);
    assert_eq!(srv.get("/studies/nope").status, 404);
    // The API: the list, and a study as `study status --json` gives it.
    let api = srv.get("/api/studies").json();
    assert_eq!(api[0]["name"], "interval+1");
    assert_eq!(
        (api[0]["done"].as_u64(), api[0]["planned"].as_u64()),
        (Some(2), Some(2))
    );
    let status = rtscope(dir.path())
        .env("RTSCOPE_DB", &db)
        .args(["study", "status", "interval+1", "--json"])
        .output()
        .unwrap();
    assert_code(&status, 0);
    let mut want: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    // The running kernel there is the server's, not the board's: null.
    want["kernel"] = serde_json::Value::Null;
    assert_eq!(srv.get("/api/studies/interval%2B1").json(), want);
    assert_eq!(srv.get("/api/studies/nope").status, 404);
}

#[test]
fn paths_are_never_files() {
    let dir = TempDir::new("serve-paths");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    for target in [
        "/../etc/passwd",
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/runs/..%2F..%2Fetc%2Fpasswd",
        "/runs/../../etc/passwd",
        "/runs/%2e%2e",
        "/runs/..",
        "/runs/%2Fetc%2Fpasswd",
        "/runs/1%00",
        "/runs/1.json",
        "/api/runs/..%2F..%2Fetc%2Fpasswd",
        "/api/runs/%2Fetc%2Fpasswd",
        "/compare?runs=..%2F..%2Fetc%2Fpasswd",
        "/compare?runs=/etc/passwd",
        "/static/..%2f..%2fetc/passwd",
        "/?label=../../etc/passwd",
        &format!("/runs/{}", dir.join("runs.db").display()),
    ] {
        let r = srv.get(target);
        assert!(
            [400, 404].contains(&r.status) || (target.starts_with("/?") && r.status == 200),
            "{target}: {}",
            r.status
        );
        assert!(!r.body.contains("root:x:0:0"), "{target} served a file");
        assert!(
            !r.body.contains("SQLite format"),
            "{target} served the store"
        );
    }
}

fn write(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn credentials_are_asked_for_and_an_open_address_needs_them() {
    let dir = TempDir::new("serve-auth");
    let db = store(&dir);
    let token = write(&dir, "token", "# the lab's\nbearer s3cret-token\n");
    let srv = Server::start(
        &dir,
        &db,
        &["--listen", "127.0.0.1:0", "--auth", token.to_str().unwrap()],
    );
    for target in [
        "/",
        "/runs/1",
        "/api/runs",
        "/api/runs/1",
        "/boards",
        "/nothing",
    ] {
        let none = srv.get(target);
        assert_eq!(none.status, 401, "{target}");
        assert!(
            none.header("www-authenticate")
                .unwrap()
                .starts_with("Bearer")
        );
        assert!(!none.body.contains("baseline"), "{target}: nothing shown");
        assert_eq!(srv.get_as(target, "Bearer wrong").status, 401, "{target}");
        assert_eq!(
            srv.get_as(target, "Bearer s3cret-toke").status,
            401,
            "{target}"
        );
        assert_eq!(srv.get_as(target, "Basic czNjcmV0LXRva2Vu").status, 401);
    }
    let ok = srv.get_as("/", "Bearer s3cret-token");
    assert_eq!(ok.status, 200);
    assert_eq!(listed_ids(&ok.body), [5, 4, 3, 2, 1]);
    assert_eq!(srv.get_as("/api/runs/1", "bearer s3cret-token").status, 200);
    drop(srv);

    // Basic credentials: a browser is asked for them.
    let basic = write(&dir, "basic", "basic lab:pa55word\n");
    let srv = Server::start(
        &dir,
        &db,
        &["--listen", "0", "--auth", basic.to_str().unwrap()],
    );
    let none = srv.get("/");
    assert_eq!(none.status, 401);
    assert!(
        none.header("www-authenticate")
            .unwrap()
            .starts_with("Basic realm=")
    );
    // base64("lab:pa55word")
    assert_eq!(srv.get_as("/", "Basic bGFiOnBhNTV3b3Jk").status, 200);
    assert_eq!(srv.get_as("/", "Basic bGFiOnBhNTV3b3JE").status, 401);
    drop(srv);

    // Any address but loopback needs --auth: exit 2, and why.
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let o = rtscope(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["serve", "--listen", listen])
            .output()
            .unwrap();
        assert_code(&o, 2);
        let e = stderr(&o);
        assert!(e.contains("--listen "), "{e}");
        assert!(e.contains("give --auth FILE"), "{e}");
    }
    // With it, an open address is served.
    let srv = Server::start(
        &dir,
        &db,
        &["--listen", "0.0.0.0:0", "--auth", token.to_str().unwrap()],
    );
    assert_eq!(srv.get_as("/", "Bearer s3cret-token").status, 200);
    drop(srv);
    // A bad credentials file is exit 2, naming it.
    for text in ["", "bearer\n", "basic nocolon\n"] {
        let bad = write(&dir, "bad", text);
        let o = rtscope(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["serve", "--listen", "0", "--auth"])
            .arg(&bad)
            .output()
            .unwrap();
        assert_code(&o, 2);
        assert!(stderr(&o).contains("--auth "), "{text:?}: {}", stderr(&o));
    }
}

#[test]
fn a_port_in_use_and_a_bad_address_are_refused() {
    let dir = TempDir::new("serve-port");
    let db = store(&dir);
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(&db)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("another program uses that port"),
        "{}",
        stderr(&o)
    );
    for bad in ["nonsense", "127.0.0.1", "127.0.0.1:99999"] {
        let o = rtscope(dir.path())
            .args(["serve", "--listen", bad])
            .output()
            .unwrap();
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("is not ADDR:PORT"),
            "{bad}: {}",
            stderr(&o)
        );
    }
    // A file that is not a store stops it before it listens.
    let junk = write(
        &dir,
        "junk.db",
        "not a database, not at all, no. ".repeat(200).as_str(),
    );
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(&junk)
        .args(["serve", "--listen", "0"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is not an rtscope run store"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_store_not_made_yet_is_an_empty_list() {
    let dir = TempDir::new("serve-empty");
    let db = dir.join("none-yet.db");
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    let r = srv.get("/");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("No runs stored in"), "{}", r.body);
    assert_eq!(srv.get("/api/runs").json()["total"], 0);
    assert_eq!(srv.get("/runs/1").status, 404);
    assert_eq!(srv.get("/boards").status, 200);
    drop(srv);
    assert!(!db.exists(), "serve made a store");
}

#[test]
fn sigterm_and_ctrl_c_stop_it_with_exit_0() {
    let dir = TempDir::new("serve-stop");
    let db = store(&dir);
    use rustix::process::{Pid, Signal, kill_process};
    for sig in [Signal::TERM, Signal::INT] {
        let mut srv = Server::start(&dir, &db, &["--listen", "0"]);
        assert_eq!(srv.get("/").status, 200);
        // A client that keeps its connection open does not hold it up.
        let idle = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        kill_process(Pid::from_raw(srv.pid()).unwrap(), sig).unwrap();
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = srv.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "still running 10 s after signal {sig:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(0), "signal {sig:?}");
        drop(idle);
    }
    // wait_output is for a command that ends by itself: --help.
    let help = rtscope(dir.path())
        .args(["serve", "--help"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_output(help, Duration::from_secs(10));
    assert!(stdout(&o).contains("--listen <ADDR:PORT>"));
    assert!(stdout(&o).contains("[default: 127.0.0.1:8788]"));
}

#[test]
fn slow_and_idle_clients_hold_only_their_own_connection() {
    let dir = TempDir::new("serve-slow");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    let idle = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    let mut slow = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    // Others are served meanwhile.
    for _ in 0..3 {
        assert_eq!(srv.get("/api/runs").status, 200);
    }
    // Both are closed once a head has not come whole in 10 s.
    let start = std::time::Instant::now();
    for mut c in [idle, slow] {
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
        let text = String::from_utf8_lossy(&rest);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 408"),
            "{text}"
        );
    }
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(srv.get("/").status, 200);
}

/// A window of monitor `name` on `host`, CPU `cpu`, ending at `end_s`
/// seconds after 2026-01-01 (a minute long), its largest `max_ns`.
pub(crate) fn window(name: &str, host: &str, cpu: u32, end_s: u64, max_ns: u64) -> WindowRow {
    let end = JAN_1 + end_s * 1_000_000_000;
    WindowRow {
        monitor: name.into(),
        host: host.into(),
        run_uuid: "0123456789abcdef0123456789abcdef".into(),
        thread: cpu,
        cpu: Some(cpu),
        start_unix_ns: end - 60_000_000_000,
        end_unix_ns: end,
        samples: 60_000,
        wakeups: 60_000,
        missed: 0,
        min_ns: Some(1_000),
        avg_ns: Some(2_000),
        p99_ns: Some(max_ns / 2),
        max_ns: Some(max_ns),
        histogram: None,
    }
}

/// An event stream opened on `target`: its head read, the rest to come.
struct Events {
    c: TcpStream,
    seen: String,
}

impl Events {
    fn open(port: u16, target: &str) -> (u16, Events) {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(c, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut e = Events {
            c,
            seen: String::new(),
        };
        while !e.seen.contains("\r\n\r\n") {
            e.more();
        }
        let status = e.seen.split(' ').nth(1).unwrap().parse().unwrap();
        (status, e)
    }

    fn more(&mut self) {
        let mut buf = [0u8; 4096];
        let n = self
            .c
            .read(&mut buf)
            .expect("the stream went quiet for 30 s");
        assert!(n > 0, "the stream ended: {}", self.seen);
        self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }

    /// The data of the next `windows` event, as JSON.
    fn next_windows(&mut self) -> serde_json::Value {
        loop {
            if let Some(i) = self.seen.find("event: windows\n") {
                let rest = &self.seen[i..];
                if let Some(d) = rest.find("data: ")
                    && let Some(end) = rest[d..].find('\n')
                {
                    let data = rest[d + 6..d + end].to_string();
                    self.seen = rest[d + end..].to_string();
                    return serde_json::from_str(&data).unwrap();
                }
            }
            self.more();
        }
    }
}

#[test]
fn a_monitor_is_followed_live() {
    let dir = TempDir::new("serve-live");
    let db = dir.join("runs.db");
    let name = "lab \"m\" <1>";
    let enc = "lab%20%22m%22%20%3C1%3E";
    let s = rtscope::store::Store::open(&db).unwrap();
    s.insert_windows(&[
        window(name, "pi", 0, 60, 40_000),
        window(name, "pi", 1, 60, 55_000),
        window(name, "pi", 0, 120, 61_000),
        window("other", "x86", 0, 60, 9_000),
    ])
    .unwrap();
    let mut s = s;
    s.insert(&run(1, "monitored", "pi", 0, 50_000)).unwrap();
    let s = s;
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    // The board's row and page link to its monitor.
    let link = format!("href=\"&#x2f;monitors&#x2f;{enc}?host=pi\"");
    assert!(srv.get("/boards").body.contains(&link));
    assert!(srv.get("/boards/pi").body.contains(&link));
    // The list of monitors, every name escaped.
    let list = srv.get("/monitors");
    assert_eq!(list.status, 200);
    never_raw(&list.body, "<1>", "/monitors");
    assert!(
        list.body.contains("lab &quot;m&quot; &lt;1&gt;"),
        "{}",
        list.body
    );
    assert!(
        list.body
            .contains(&format!("&#x2f;monitors&#x2f;{enc}?host=pi"))
    );
    assert!(
        !list.body.contains("<script"),
        "only the monitor page has a script"
    );
    // The monitor's page: the plot, the newest windows first, the script
    // its policy allows, and where to follow it from.
    let page = srv.get(&format!("/monitors/{enc}?host=pi"));
    assert_eq!(page.status, 200, "{}", page.body);
    never_raw(&page.body, "<1>", "the monitor page");
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline'; script") && !csp.contains("script-src 'unsafe"));
    assert!(
        page.body
            .contains("<script src=\"/assets/live.js\" defer></script>")
    );
    let last_end = JAN_1 + 120_000_000_000;
    assert!(
        page.body.contains(&format!("after={last_end}")),
        "{}",
        page.body
    );
    let rows: Vec<&str> = page
        .body
        .split("<tr><td class=\"num\">2026-01-01 ")
        .skip(1)
        .map(|r| &r[..5])
        .collect();
    assert_eq!(rows, ["00:02", "00:01", "00:01"], "newest first");
    // Every other page keeps forbidding scripts.
    let csp = srv.get("/").header("content-security-policy").unwrap();
    assert!(!csp.contains("script-src"), "{csp}");
    let js = srv.get("/assets/live.js");
    assert_eq!(js.status, 200);
    assert!(
        js.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(js.body.contains("new EventSource(") && js.body.contains("textContent"));
    assert!(!js.body.contains("innerHTML"));
    let plot = srv.get(&format!("/monitors/{enc}/plot.svg?host=pi&v=1"));
    assert_eq!(plot.status, 200, "{}", plot.body);
    assert_eq!(plot.header("content-type").unwrap(), "image/svg+xml");
    assert!(
        plot.body.starts_with("<svg"),
        "{}",
        &plot.body[..80.min(plot.body.len())]
    );
    // A window lands: the stream sends it, with the new end.
    let (status, mut events) = Events::open(
        srv.port,
        &format!("/monitors/{enc}/events?host=pi&after={last_end}"),
    );
    assert_eq!(status, 200, "{}", events.seen);
    assert!(
        events
            .seen
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream")
    );
    s.insert_windows(&[
        window(name, "pi", 1, 180, 987_000),
        window("other", "x86", 0, 180, 1),
    ])
    .unwrap();
    let ev = events.next_windows();
    let end = JAN_1 + 180_000_000_000;
    assert_eq!(ev["last_end_unix_ns"], end);
    assert_eq!(ev["windows"].as_array().unwrap().len(), 1, "{ev}");
    assert_eq!(ev["windows"][0]["max"], "987.0");
    assert_eq!(ev["windows"][0]["who"], "CPU 1");
    assert!(
        events.seen.contains(&format!("id: {end}"))
            || ev["status"].as_str().unwrap().contains("00:03:00")
    );
    // The JSON of the same.
    let api = srv.get("/api/monitors").json();
    assert_eq!(api.as_array().unwrap().len(), 2);
    assert_eq!(api[0]["monitor"], name);
    assert_eq!(
        (api[0]["windows"].as_u64(), api[0]["largest_ns"].as_u64()),
        (Some(4), Some(987_000))
    );
    let after = srv
        .get(&format!("/api/monitors/{enc}/windows?after={last_end}"))
        .json();
    assert_eq!(after.as_array().unwrap().len(), 1);
    assert_eq!(after[0]["end"], "2026-01-01T00:03:00Z");
    // Unknown monitors and hosts, and a bad query, are refused.
    assert_eq!(srv.get("/monitors/nope").status, 404);
    assert_eq!(
        srv.get(&format!("/monitors/{enc}?host=elsewhere")).status,
        404
    );
    assert_eq!(srv.get(&format!("/monitors/{enc}?after=soon")).status, 400);
    assert_eq!(srv.get("/api/monitors/nope/windows").status, 404);
    // Event streams are bounded: 16 at once, the next one 503.
    let mut open = Vec::new();
    for _ in 1..16 {
        let (status, e) = Events::open(srv.port, &format!("/monitors/{enc}/events"));
        assert_eq!(status, 200);
        open.push(e);
    }
    let (status, _) = Events::open(srv.port, &format!("/monitors/{enc}/events"));
    assert_eq!(status, 503);
    // A stream closed frees its place.
    drop(events);
    let ok = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(200));
        Events::open(srv.port, &format!("/monitors/{enc}/events")).0 == 200
    });
    assert!(ok, "a closed stream's place was never given back");
}

/// A run of 3 000 threads asked for four times at once: each page is
/// made within its budget (the worst 256 threads drawn, the others
/// counted), and the list's JSON asked for meanwhile is answered, not
/// 503 (the four renderings held every blocking thread for a minute).
#[test]
fn a_run_of_thousands_of_threads_leaves_the_server_answering() {
    let dir = TempDir::new("serve-heavy");
    let db = dir.join("runs.db");
    let vals: Vec<Vec<u64>> = (0..3_000u64)
        .map(|t| {
            (0..50)
                .map(|i| 5_000 + (i * 7919 + t * 31) % 20_000)
                .collect()
        })
        .collect();
    let mut r = synthetic(&vals);
    r.label = Some("many".into());
    r.validate().unwrap();
    rtscope::store::Store::open(&db)
        .unwrap()
        .insert(&r)
        .unwrap();
    let server = Server::start(&dir, &db, &[]);
    let began = std::time::Instant::now();
    let port = server.port;
    let pages: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(move || http(port, "/runs/1", None)))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let list = server.get("/api/runs");
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(api_ids(&list.json()), [1]);
    let listed = began.elapsed();
    for p in pages {
        let page = p.join().unwrap();
        assert_eq!(
            page.status,
            200,
            "{}",
            &page.body[..page.body.len().min(500)]
        );
        assert!(page.body.contains("the other 2744 are left out"));
        assert!(page.body.len() < 2_000_000, "{} bytes", page.body.len());
    }
    // Generous: the four pages took 28 s each in a release build, and the
    // list waited for them past the 30 s deadline.
    assert!(listed < Duration::from_secs(25), "{listed:?}");
}
