//! `rtscope serve` against hostile hosts and clients: a `Host` header
//! that is not the server's (a DNS rebinding) is refused, and so is an
//! HTTP/1.1 request without one; a thousand clients that send their
//! request heads a byte at a time do not keep a fresh client waiting;
//! too many tags, monitor names `.` and `..`, and a credentials file
//! that is not a regular file are refused with a clear message.

use crate::serve::{Server, run, window};
use crate::util::{TempDir, assert_code, rtscope, stderr, wait_output};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A store of two runs.
fn store(dir: &TempDir) -> PathBuf {
    let db = dir.join("runs.db");
    let mut s = rtscope::store::Store::open(&db).unwrap();
    s.insert(&run(1, "one", "board-a", 0, 100_000)).unwrap();
    s.insert(&run(2, "two", "board-b", 1, 200_000)).unwrap();
    db
}

/// `head` sent as it is (then the connection's end of writing), and the
/// answer's status and body.
fn raw(port: u16, head: &str) -> (u16, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    c.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = c.read_to_end(&mut answer);
    let s = String::from_utf8_lossy(&answer).into_owned();
    let (h, body) = s.split_once("\r\n\r\n").unwrap_or((&s, ""));
    let status = h
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}

fn get_with_host(port: u16, host: &str) -> (u16, String) {
    raw(
        port,
        &format!("GET /api/runs HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
}

#[test]
fn a_host_not_of_this_server_is_refused() {
    let dir = TempDir::new("serve-host");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "0", "--allow-host", "lab.example"]);
    let p = srv.port;
    for host in [
        format!("127.0.0.1:{p}"),
        format!("localhost:{p}"),
        format!("[::1]:{p}"),
        format!("LAB.example:{p}"),
        "127.0.0.1".to_string(),
    ] {
        assert_eq!(get_with_host(p, &host).0, 200, "{host}");
    }
    // A rebinding page asks with its own name.
    for host in [format!("evil.example:{p}"), "x".into(), "10.0.0.1".into()] {
        let (status, body) = get_with_host(p, &host);
        assert_eq!(status, 421, "{host}: {body}");
        assert!(
            body.contains("is not a name of this rtscope serve"),
            "{body}"
        );
        assert!(body.contains("--allow-host NAME"), "{body}");
    }
    let (status, body) = raw(p, "GET /api/runs HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("must carry a Host header"), "{body}");
    // HTTP/1.0 had no Host.
    assert_eq!(raw(p, "GET /api/runs HTTP/1.0\r\n\r\n").0, 200);
}

/// Raise this process's soft limit of open files to its hard limit.
fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    let _ = setrlimit(
        Resource::Nofile,
        rustix::process::Rlimit {
            current: now.maximum,
            maximum: now.maximum,
        },
    );
}

#[test]
fn a_fresh_client_is_answered_beside_a_thousand_slow_ones() {
    raise_fd_limit();
    let dir = TempDir::new("serve-slowloris");
    let db = store(&dir);
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    // A thousand clients that send one byte of their request head, each
    // taken at once (they waited in the kernel's queue for a place).
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], srv.port));
    let mut slow = Vec::new();
    for i in 0..1000 {
        let Ok(mut c) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
            panic!("connection {i} was not taken within 1 s");
        };
        c.write_all(b"G").unwrap();
        slow.push(c);
    }
    let t = Instant::now();
    let (status, body) = get_with_host(srv.port, "127.0.0.1");
    let took = t.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"total\": 2"), "{body}");
    // It was half a minute, or never, when the 257th waited for a place.
    assert!(took < Duration::from_secs(5), "answered in {took:?}");
    drop(slow);
}

#[test]
fn too_many_tags_and_the_monitor_names_dot_and_dot_dot_are_400() {
    let dir = TempDir::new("serve-odd");
    let db = store(&dir);
    let s = rtscope::store::Store::open(&db).unwrap();
    s.insert_windows(&[
        window("..", "pi", 0, 60, 40_000),
        window(".", "pi", 0, 60, 40_000),
    ])
    .unwrap();
    drop(s);
    let srv = Server::start(&dir, &db, &["--listen", "0"]);
    let tags: Vec<String> = (0..1000).map(|i| format!("tag=k{i}")).collect();
    let r = srv.get(&format!("/api/runs?{}", tags.join("&")));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("more than 32 tag filters"), "{}", r.body);
    let tags: Vec<String> = (0..32).map(|i| format!("tag=k{i}")).collect();
    assert_eq!(srv.get(&format!("/?{}", tags.join("&"))).status, 200);
    for target in [
        "/monitors/..",
        "/monitors/.",
        "/monitors/%2E%2E",
        "/monitors/../plot.svg",
        "/monitors/%2e/events",
        "/api/monitors/../windows",
    ] {
        let r = srv.get(target);
        assert_eq!(r.status, 400, "{target}: {}", r.body);
        assert!(
            r.body.contains("is a step of a path, not a name"),
            "{target}: {}",
            r.body
        );
    }
}

#[test]
fn a_credentials_file_that_is_no_regular_file_is_refused_at_once() {
    let dir = TempDir::new("serve-auth-zero");
    let db = store(&dir);
    for (file, why) in [
        ("/dev/zero", "not a regular file but a device"),
        ("/", "not a regular file but a directory"),
    ] {
        let child = rtscope(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["serve", "--listen", "0", "--auth", file])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // /dev/zero was read until memory ran out.
        let o = wait_output(child, Duration::from_secs(20));
        assert_code(&o, 2);
        let e = stderr(&o);
        assert!(e.contains(&format!("--auth {file}: {why}")), "{e}");
    }
}
