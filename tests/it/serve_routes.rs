//! Every route of `rtscope serve`, read from its one table
//! (`rtscope::serve::server::ROUTES`), so that a route added there is
//! tried here without a word more: each name in its path replaced by
//! hostile ones (`..`, `%2e%2e`, encoded slashes, NUL, a name of 100 000
//! characters, names of nothing stored), answered with the right 4xx and
//! never a file or a stored record's content; and with `--auth` (bearer,
//! then basic), each answers 401 without credentials or with wrong ones,
//! and its page with the right ones. A route whose names this file does
//! not know how to fill fails, saying what to add.

use crate::serve::{Server, run, window};
use crate::util::TempDir;
use rtscope::serve::server::ROUTES;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A text in each stored run's label: no refused request may show it.
const MARK: &str = "stored-mark";

/// A store of two runs (ids 1 and 2, hosts `board-a` and `board-b`), a
/// monitor `lab` with one window on `board-a`, and a study `sweep`.
pub(crate) fn fill(store: &Path) {
    let mut s = rtscope::store::Store::open(store).unwrap();
    s.insert(&run(1, &format!("{MARK} one"), "board-a", 0, 100_000))
        .unwrap();
    s.insert(&run(2, &format!("{MARK} two"), "board-b", 1, 200_000))
        .unwrap();
    s.insert_windows(&[window("lab", "board-a", 0, 60, 40_000)])
        .unwrap();
    let text = "name = \"sweep\"\nduration = \"1s\"\nrepetitions = 1\n\
                [matrix]\ninterval = [\"1ms\", \"2ms\"]\n[fixed]\nthreads = 1\n";
    let spec = rtscope::study::spec::parse(text, "sweep.toml").unwrap();
    let kernel = rtscope::sysinfo::kernel_match::Kernel::plain("6.1.0", "PREEMPT_RT");
    rtscope::study::run::create_or_find(&mut s, &spec, text, None, &kernel).unwrap();
}

fn store(dir: &TempDir) -> PathBuf {
    let db = dir.join("runs.db");
    fill(&db);
    db
}

/// What names something stored, for the name `param` of `route`.
fn stored(route: &str, param: &str) -> &'static str {
    match (param, route) {
        ("id", _) => "1",
        ("host", _) => "board-a",
        ("name", r) if r.contains("/studies/") => "sweep",
        ("name", r) if r.contains("/monitors/") => "lab",
        _ => panic!(
            "route {route}: this test does not know what stored thing its {{{param}}} names: \
             say so in serve_routes.rs's stored()"
        ),
    }
}

/// The query a route needs to answer its page.
fn query_of(route: &str) -> &'static str {
    match route {
        "/compare" => "?runs=1,2",
        _ => "",
    }
}

/// `route` with each `{param}` replaced: the one named `hostile` by
/// `value`, the others by what names something stored.
fn fill_route(route: &str, hostile: Option<&str>, value: &str) -> String {
    route
        .split('/')
        .map(
            |seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(p) if Some(p) == hostile => value.to_string(),
                Some(p) => stored(route, p).to_string(),
                None => seg.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

fn params(route: &str) -> Vec<&str> {
    route
        .split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// A GET of `target` as it is; the whole answer, but an event stream's
/// head alone (it does not end).
fn ask(port: u16, target: &str, auth: Option<&str>) -> Answer {
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
    let mut buf = [0u8; 65536];
    loop {
        let n = c.read(&mut buf).unwrap_or_else(|e| panic!("{target}: {e}"));
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        let s = String::from_utf8_lossy(&raw);
        if let Some((head, _)) = s.split_once("\r\n\r\n")
            && head.to_ascii_lowercase().contains("text/event-stream")
        {
            break;
        }
    }
    let s = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = s.split_once("\r\n\r\n").unwrap_or((&s, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{target}: no status line in {head:?}"));
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// A hostile name and the status it must get: 400 for what can name
/// nothing (a step of a path, a NUL), 404 for a name of nothing stored.
fn hostile_names(route: &str, param: &str) -> Vec<(String, u16)> {
    let missing = if param == "id" { "999" } else { "nowhere" };
    vec![
        ("..".into(), 400),
        (".".into(), 400),
        ("%2e%2e".into(), 400),
        ("%2E".into(), 400),
        ("..%2F..%2Fetc%2Fpasswd".into(), 404),
        ("%2Fetc%2Fpasswd".into(), 404),
        ("..%5C..%5Cetc%5Cpasswd".into(), 404),
        ("%00".into(), 400),
        (format!("{}%00", stored(route, param)), 400),
        // Longer than an address may be: hyper's 414, before any route.
        ("x".repeat(100_000), 414),
        ("x".repeat(20_000), 404),
        (missing.into(), 404),
    ]
}

/// The message of a failed request (a page's, or the API's).
fn message(a: &Answer) -> String {
    let text = a
        .body
        .split("<p class=\"message\">")
        .nth(1)
        .and_then(|m| m.split("</p>").next())
        .unwrap_or(&a.body);
    text.chars().take(160).collect()
}

/// What no refused request may show.
fn shows_nothing(target: &str, a: &Answer) {
    let short = &target[..target.len().min(120)];
    // A name given may be said back; nothing stored that was not asked for.
    for never in ["root:x:0:0", "SQLite format", MARK, "board-a", "board-b"] {
        assert!(
            target.contains(never) || !a.body.contains(never),
            "{short}: {} shows '{never}'",
            a.status
        );
    }
    for never in ["root:x:0:0", "SQLite format", MARK] {
        assert!(
            !a.body.contains(never),
            "{short}: {} shows '{never}'",
            a.status
        );
    }
    let json = a.header("content-type").unwrap_or("").contains("json");
    if target.starts_with("/api/") && a.status != 414 {
        assert!(json, "{short}: a failure under /api/ is JSON: {}", a.head);
        let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
        assert!(v["error"].is_string(), "{short}: {}", a.body);
    }
}

#[test]
fn every_route_refuses_hostile_names_with_the_right_4xx() {
    let dir = TempDir::new("serve-routes-names");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    let mut tried = 0;
    let mut wrong = Vec::new();
    for route in ROUTES.iter().map(|r| r.path) {
        let ps = params(route);
        // The page itself answers: the names stored are names of it.
        let target = format!("{}{}", fill_route(route, None, ""), query_of(route));
        let a = ask(srv.port, &target, None);
        assert!(
            (200..300).contains(&a.status),
            "{target}: {} {}",
            a.status,
            a.body
        );
        for p in &ps {
            for (value, want) in hostile_names(route, p) {
                let target = fill_route(route, Some(p), &value);
                let a = ask(srv.port, &target, None);
                let short = &target[..target.len().min(120)];
                if a.status != want {
                    wrong.push(format!(
                        "{short}: {} (not {want}): {}",
                        a.status,
                        message(&a)
                    ));
                }
                shows_nothing(&target, &a);
                tried += 1;
            }
        }
        // Below a route without names: path steps, NUL, files.
        if ps.is_empty() {
            let base = route.trim_end_matches('/');
            for (tail, want) in [
                ("/..", 400),
                ("/%2e%2e/%2e%2e/etc/passwd", 400),
                ("/..%2F..%2Fetc%2Fpasswd", 404),
                ("%00", 400),
                ("/runs.db", 404),
            ] {
                let target = format!("{base}{tail}");
                let a = ask(srv.port, &target, None);
                if a.status != want {
                    wrong.push(format!(
                        "{target}: {} (not {want}): {}",
                        a.status,
                        message(&a)
                    ));
                }
                shows_nothing(&target, &a);
                tried += 1;
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {tried}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(tried > 100, "{tried} hostile requests");
    // The server answers on.
    assert_eq!(ask(srv.port, "/api/runs", None).status, 200);
}

fn credentials(dir: &TempDir, name: &str, line: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, line).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn every_route_asks_for_credentials() {
    let dir = TempDir::new("serve-routes-auth");
    let db = store(&dir);
    let bearer = credentials(&dir, "token", "bearer s3cret\n");
    let basic = credentials(&dir, "basic", "basic lab:pa55\n");
    // base64 of lab:pa55 and of lab:pa56
    for (file, right, wrongs, challenge) in [
        (
            &bearer,
            "Bearer s3cret",
            ["Bearer s3cre", "Basic bGFiOnBhNTU=", "Bearer s3cret2"],
            "Bearer realm=",
        ),
        (
            &basic,
            "Basic bGFiOnBhNTU=",
            ["Basic bGFiOnBhNTY=", "Bearer pa55", "Basic bGFiOg=="],
            "Basic realm=",
        ),
    ] {
        let srv = Server::start(&dir, &db, &["--listen", "0", "--auth", file]);
        let mut targets: Vec<String> = ROUTES
            .iter()
            .map(|r| format!("{}{}", fill_route(r.path, None, ""), query_of(r.path)))
            .collect();
        // Nothing routed, and a hostile name, are not told apart either.
        targets.extend(["/nothing".into(), "/boards/..".into(), "/api/x".into()]);
        for target in &targets {
            let none = ask(srv.port, target, None);
            assert_eq!(none.status, 401, "{target}: {}", none.body);
            let asked = none.header("www-authenticate").unwrap_or("");
            assert!(asked.starts_with(challenge), "{target}: {asked}");
            assert!(!none.body.contains(MARK), "{target}");
            for wrong in wrongs {
                let a = ask(srv.port, target, Some(wrong));
                assert_eq!(a.status, 401, "{target} with {wrong}");
                assert!(!a.body.contains(MARK), "{target}");
            }
        }
        for target in &targets[..ROUTES.len()] {
            let a = ask(srv.port, target, Some(right));
            assert!(
                (200..300).contains(&a.status),
                "{target} with {right}: {} {}",
                a.status,
                a.body
            );
        }
    }
}

/// The tables of docs/serve.md's "The answers' keys and types": each
/// `<!-- shape: NAME -->` and its rows' keys with their types.
fn documented_shapes() -> Vec<(String, Vec<(String, String)>)> {
    let doc = include_str!("../../docs/serve.md");
    let mut shapes: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut in_table = false;
    for line in doc.lines() {
        if let Some(name) = line
            .strip_prefix("<!-- shape: ")
            .and_then(|l| l.strip_suffix(" -->"))
        {
            shapes.push((name.to_string(), Vec::new()));
            in_table = true;
        } else if in_table && line.starts_with("| `") {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let key = cells[1].trim_matches('`').to_string();
            shapes
                .last_mut()
                .unwrap()
                .1
                .push((key, cells[2].to_string()));
        } else if !line.starts_with('|') {
            in_table = false;
        }
    }
    shapes
}

/// Hold `v` to the documented type `ty` (`integer`, `string`, `X or
/// null`, `array of X`, or a shape's name); every mismatch into `wrong`.
fn holds(
    v: &serde_json::Value,
    ty: &str,
    shapes: &[(String, Vec<(String, String)>)],
    at: &str,
    wrong: &mut Vec<String>,
) {
    let fits = ty.split(" or ").any(|t| match t {
        "null" => v.is_null(),
        "integer" => v.is_i64() || v.is_u64(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        t if t.starts_with("array of ") => {
            let Some(items) = v.as_array() else {
                return false;
            };
            for (i, item) in items.iter().enumerate() {
                holds(item, &t[9..], shapes, &format!("{at}[{i}]"), wrong);
            }
            true
        }
        name => {
            let Some((_, keys)) = shapes.iter().find(|(n, _)| n == name) else {
                panic!("{at}: the type '{name}' is no JSON type nor a shape of docs/serve.md");
            };
            let Some(obj) = v.as_object() else {
                return false;
            };
            let documented: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
            for k in obj.keys() {
                if !documented.contains(&k.as_str()) {
                    wrong.push(format!("{at}.{k}: answered, not documented in '{name}'"));
                }
            }
            for (k, t) in keys {
                match obj.get(k) {
                    Some(x) => holds(x, t, shapes, &format!("{at}.{k}"), wrong),
                    None => wrong.push(format!("{at}.{k}: documented in '{name}', not answered")),
                }
            }
            true
        }
    });
    if !fits {
        wrong.push(format!("{at}: {v} is not {ty}"));
    }
}

#[test]
fn the_api_has_the_documented_shape() {
    let shapes = documented_shapes();
    let names: Vec<&str> = shapes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["runs", "ROW", "board", "board runs"],
        "docs/serve.md"
    );
    assert!(shapes[1].1.len() >= 18, "the ROW table: {:?}", shapes[1].1);
    let dir = TempDir::new("serve-routes-shape");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    let get = |target: &str| {
        let a = ask(srv.port, target, None);
        assert_eq!(a.status, 200, "{target}: {}", a.body);
        serde_json::from_str::<serde_json::Value>(&a.body).unwrap()
    };
    let mut wrong = Vec::new();
    let runs = get("/api/runs");
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(2));
    holds(&runs, "runs", &shapes, "/api/runs", &mut wrong);
    let boards = get("/api/boards");
    assert_eq!(boards.as_array().map(Vec::len), Some(2));
    holds(
        &boards,
        "array of board",
        &shapes,
        "/api/boards",
        &mut wrong,
    );
    let board = get("/api/boards/board-a");
    holds(
        &board,
        "board runs",
        &shapes,
        "/api/boards/board-a",
        &mut wrong,
    );
    // A run's record: the keys and types of run-record.schema.json.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../docs/run-record.schema.json")).unwrap();
    let props = schema["properties"].as_object().unwrap();
    let rec = get("/api/runs/1");
    let rec = rec.as_object().unwrap();
    for k in rec.keys() {
        if !props.contains_key(k) {
            wrong.push(format!("/api/runs/1.{k}: not in run-record.schema.json"));
        }
    }
    for k in schema["required"].as_array().unwrap() {
        if !rec.contains_key(k.as_str().unwrap()) {
            wrong.push(format!(
                "/api/runs/1.{k}: required by the schema, not answered"
            ));
        }
    }
    for (k, p) in props {
        let Some(v) = rec.get(k) else { continue };
        let types: Vec<&str> = match &p["type"] {
            serde_json::Value::String(t) => vec![t.as_str()],
            serde_json::Value::Array(ts) => ts.iter().filter_map(|t| t.as_str()).collect(),
            _ => continue,
        };
        let fits = types.iter().any(|t| match *t {
            "array" => v.is_array(),
            "object" => v.is_object(),
            "number" => v.is_number(),
            "integer" => v.is_i64() || v.is_u64(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            t => panic!("run-record.schema.json: the type '{t}' of {k}"),
        });
        if !fits {
            wrong.push(format!(
                "/api/runs/1.{k}: {v} is not {}",
                types.join(" or ")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the API and docs/serve.md differ:\n{}",
        wrong.join("\n")
    );
}
