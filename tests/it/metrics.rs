//! `--metrics`: a real Prometheus (Debian's package) scrapes a real
//! `rtscope measure` on loopback and its HTTP API gives back what the
//! run recorded; the token is asked for (401); a port in use and a
//! malformed address are exit 2 before anything is measured.

use crate::util::{self, TempDir, assert_code, dechunk, rtscope, stderr};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port free right now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.1 GET on loopback: (status, body).
fn http_get(port: u16, target: &str, auth: Option<&str>) -> Option<(u16, String)> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    write!(
        c,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).ok()?;
    let s = String::from_utf8_lossy(&raw).into_owned();
    let code = s.split(' ').nth(1)?.parse().ok()?;
    let (head, body) = s.split_once("\r\n\r\n")?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((code, body))
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus on loopback with its own config and storage; killed and
/// reaped when dropped (also when the test panics).
pub(crate) struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    fn start(dir: &Path, target_port: u16) -> Option<Prometheus> {
        Prometheus::scraping(dir, &[target_port])
    }

    /// A Prometheus scraping every second each of `target_ports` on
    /// loopback (job `rtscope`).
    pub(crate) fn scraping(dir: &Path, target_ports: &[u16]) -> Option<Prometheus> {
        let cfg = dir.join("prometheus.yml");
        let targets = target_ports
            .iter()
            .map(|p| format!("'127.0.0.1:{p}'"))
            .collect::<Vec<_>>()
            .join(", ");
        std::fs::write(
            &cfg,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: rtscope\n    static_configs:\n      - targets: [{targets}]\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .ok()?;
        let p = Prometheus { child, port };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            if let Some((200, _)) = http_get(port, "/-/ready", None) {
                return Some(p);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus did not get ready in 30 s");
    }

    /// One instant query: the values of its vector result.
    pub(crate) fn query(&self, q: &str) -> Vec<f64> {
        let (code, body) = http_get(
            self.port,
            &format!("/api/v1/query?query={}", urlencode(q)),
            None,
        )
        .expect("prometheus answers");
        assert_eq!(code, 200, "{q}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["value"][1].as_str().unwrap().parse::<f64>().unwrap())
            .collect()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn have_prometheus() -> bool {
    Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The classic bucket bounds the endpoint serves, in seconds.
fn bounds_s() -> Vec<f64> {
    rtscope::metrics::text::BOUNDS_NS
        .iter()
        .map(|&ns| ns as f64 / 1e9)
        .collect()
}

#[test]
fn prometheus_scrapes_measure_and_agrees_with_the_record() {
    if !util::require(
        util::Need::Tool,
        have_prometheus(),
        "prometheus (scripts/install-deps.sh installs it)",
    ) {
        return;
    }
    let _g = util::shared_system();
    let dir = TempDir::new("metrics-prom");
    let port = free_port();
    let prom = Prometheus::start(dir.path(), port).expect("prometheus starts");
    // 3000 periods of 1 ms per thread, then the final values stay up 4 s
    // (4 scrapes at 1 s): the last scrape holds the exact final counts.
    let json = dir.join("run.json");
    let out = rtscope(dir.path())
        .args([
            "measure",
            "-q",
            "-l",
            "3000",
            "--no-save",
            "--label",
            "prom test",
        ])
        .args([
            "--metrics",
            &format!("127.0.0.1:{port}"),
            "--metrics-linger",
            "4",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let rec = util::read_json(&json);

    let scrapes = prom.query("count_over_time(up{job=\"rtscope\"}[10m])");
    assert!(
        scrapes.first().copied().unwrap_or(0.0) >= 2.0,
        "scrapes: {scrapes:?}"
    );
    let up = prom.query("sum_over_time(up{job=\"rtscope\"}[10m])");
    assert!(
        up.first().copied().unwrap_or(0.0) >= 2.0,
        "successful scrapes: {up:?}"
    );

    // The wake-up counter, per thread, at the last scrape.
    let threads = rec["threads"].as_array().unwrap();
    for t in threads {
        let cpu = t["cpu"].as_u64().unwrap();
        let q = format!(
            "last_over_time(rtscope_wakeups_total{{job=\"rtscope\",cpu=\"{cpu}\",label=\"prom test\"}}[10m])"
        );
        let got = prom.query(&q);
        let want = t["stats"]["wakeups"].as_u64().unwrap() as f64;
        assert_eq!(got, vec![want], "{q}");
        assert!(want > 0.0);
    }

    // The median from the histogram lies in the classic bucket that holds
    // the record's p50 (histogram_quantile interpolates inside it).
    let q = "histogram_quantile(0.5, sum by (le) (last_over_time(rtscope_latency_seconds_bucket{job=\"rtscope\"}[10m])))";
    let median_s = prom.query(q)[0];
    let p50_s = rec["overall"]["p50_ns"].as_u64().unwrap() as f64 / 1e9;
    let bounds = bounds_s();
    let i = bounds
        .iter()
        .position(|&b| p50_s <= b * (1.0 + 1.0 / 512.0))
        .unwrap();
    let lo = if i == 0 { 0.0 } else { bounds[i - 1] };
    let hi = bounds[i];
    assert!(
        median_s >= lo * (1.0 - 1e-9) && median_s <= hi * (1.0 + 1e-9),
        "prometheus median {median_s} s outside [{lo}, {hi}] s holding the record's p50 {p50_s} s"
    );

    // The p99 from Prometheus is within the stated error of the record's
    // (neighbouring bounds at most FINE_RATIO apart below 100 ms, plus
    // rtscope's own buckets, 1/512 wide, on either side).
    let q = "histogram_quantile(0.99, sum by (le) (last_over_time(rtscope_latency_seconds_bucket{job=\"rtscope\"}[10m])))";
    let prom_p99_s = prom.query(q)[0];
    let p99_s = rec["overall"]["p99_ns"].as_u64().unwrap() as f64 / 1e9;
    let stated = rtscope::metrics::text::FINE_RATIO - 1.0 + 2.0 / 512.0;
    if p99_s < 0.1 {
        let err = (prom_p99_s - p99_s).abs() / p99_s;
        assert!(
            err <= stated,
            "prometheus p99 {prom_p99_s} s is {:.1} % from the record's {p99_s} s (stated: {:.1} %)",
            err * 100.0,
            stated * 100.0
        );
    }
    drop(prom);
}

#[test]
fn the_token_is_asked_for() {
    let _g = util::shared_system();
    let dir = TempDir::new("metrics-auth");
    let token = dir.join("token");
    std::fs::write(&token, "bearer s3cret-token\n").unwrap();
    let port = free_port();
    let mut child = rtscope(dir.path())
        .args(["measure", "-q", "-D", "3", "--no-save"])
        .args(["--metrics", &format!("127.0.0.1:{port}"), "--metrics-auth"])
        .arg(&token)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut without = None;
    while t0.elapsed() < Duration::from_secs(10) && without.is_none() {
        without = http_get(port, "/metrics", None);
        std::thread::sleep(Duration::from_millis(50));
    }
    let wrong = http_get(port, "/metrics", Some("Bearer nope"));
    let with = http_get(port, "/metrics", Some("Bearer s3cret-token"));
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(without.map(|r| r.0), Some(401));
    assert_eq!(wrong.map(|r| r.0), Some(401));
    let (code, body) = with.unwrap();
    assert_eq!(code, 200);
    assert!(
        body.contains("# TYPE rtscope_wakeups_total counter"),
        "{body}"
    );
}

/// Whether the server has neither answered nor closed `c` yet.
fn still_waiting(c: &TcpStream) -> bool {
    c.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    let r = (&*c).read(&mut b);
    c.set_nonblocking(false).unwrap();
    matches!(r, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

#[test]
fn slow_clients_without_the_token_do_not_stop_an_authenticated_scrape() {
    let _g = util::shared_system();
    let dir = TempDir::new("metrics-slow");
    let token = dir.join("token");
    std::fs::write(&token, "bearer s3cret-token\n").unwrap();
    let port = free_port();
    let mut child = rtscope(dir.path())
        .args(["measure", "-q", "-D", "10", "--no-save"])
        .args(["--metrics", &format!("127.0.0.1:{port}"), "--metrics-auth"])
        .arg(&token)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let served = |r: Option<(u16, String)>| {
        r.is_some_and(|(_, b)| b.contains("# TYPE rtscope_wakeups_total counter"))
    };
    while !served(http_get(port, "/metrics", Some("Bearer s3cret-token"))) {
        assert!(t0.elapsed() < Duration::from_secs(10), "no endpoint");
        std::thread::sleep(Duration::from_millis(50));
    }
    // 12 connections that send nothing, 12 that send a byte a second.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut held = Vec::new();
    let mut senders = Vec::new();
    for i in 0..24 {
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        if i % 2 == 1 {
            let (mut w, stop) = (c.try_clone().unwrap(), stop.clone());
            senders.push(std::thread::spawn(move || {
                for b in b"GET /metrics HTTP/1.1\r\n".iter().cycle() {
                    if stop.load(std::sync::atomic::Ordering::SeqCst) || w.write_all(&[*b]).is_err()
                    {
                        return;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            }));
        }
        held.push(c);
    }
    let with = http_get(port, "/metrics", Some("Bearer s3cret-token"));
    // Answered while all 24 were still held open: a server taking one
    // connection at a time would have had to end them all first.
    let waiting = held.iter().filter(|c| still_waiting(c)).count();
    // Then each is cut by the server (408 at the head deadline).
    let cut = held
        .into_iter()
        .filter(|mut c| {
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut s = String::new();
            c.read_to_string(&mut s).is_ok() && s.starts_with("HTTP/1.1 408 ")
        })
        .count();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for t in senders {
        t.join().unwrap();
    }
    assert!(child.wait().unwrap().success());
    let (code, body) = with.expect("the authenticated scrape is answered");
    assert_eq!(code, 200);
    assert!(
        body.contains("# TYPE rtscope_wakeups_total counter"),
        "{body}"
    );
    assert_eq!(waiting, 24);
    assert_eq!(cut, 24);
}

/// `Cpus_allowed_list` of thread `tid` of `pid`, as CPU numbers.
fn cpus_allowed(status: &str) -> Vec<usize> {
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    rtscope::units::parse_cpu_list(&list).unwrap()
}

/// The thread of `pid` called `name`, if any: its /proc status.
fn thread_status(pid: u32, name: &str) -> Option<String> {
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            return std::fs::read_to_string(e.path().join("status")).ok();
        }
    }
    None
}

#[test]
fn the_server_thread_keeps_off_the_measured_cpu() {
    let mine = cpus_allowed(&std::fs::read_to_string("/proc/self/status").unwrap());
    if !util::require(
        util::Need::Cpus,
        mine.len() >= 2,
        "two CPUs (one is left unmeasured)",
    ) {
        return;
    }
    let measured = *mine.last().unwrap();
    let _g = util::shared_system();
    let dir = TempDir::new("metrics-place");
    let port = free_port();
    let mut child = rtscope(dir.path())
        .args(["measure", "-q", "-D", "3", "--no-save", "--policy", "other"])
        .args(["-a", &measured.to_string()])
        .args(["--metrics", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let want: Vec<usize> = mine.iter().copied().filter(|&c| c != measured).collect();
    let t0 = Instant::now();
    let mut seen = None;
    while t0.elapsed() < Duration::from_secs(10) {
        // Once the run has started (a wake-up is counted), the server's
        // thread has been placed.
        let started = http_get(port, "/metrics", None).is_some_and(|(_, b)| {
            b.lines()
                .any(|l| l.starts_with("rtscope_wakeups_total{") && !l.ends_with(" 0"))
        });
        if started {
            seen = thread_status(child.id(), "rtscope-metrics").map(|s| cpus_allowed(&s));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(seen, Some(want));
}

#[test]
fn an_open_address_is_warned_about() {
    let _g = util::shared_system();
    let dir = TempDir::new("metrics-open");
    let port = free_port();
    let out = rtscope(dir.path())
        .args(["measure", "-q", "-D", "1", "--no-save"])
        .args(["--metrics", &format!("0.0.0.0:{port}")])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(stderr(&out).contains("open to anyone"), "{}", stderr(&out));
}

#[test]
fn a_port_in_use_or_a_bad_address_is_refused_before_measuring() {
    let dir = TempDir::new("metrics-bad");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = rtscope(dir.path())
        .args([
            "measure",
            "-D",
            "30",
            "--metrics",
            &format!("127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    assert_code(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("another program uses that port"), "{err}");
    assert!(util::stdout(&out).is_empty(), "nothing measured");
    for bad in ["nonsense", "127.0.0.1", "127.0.0.1:99999", "[::1]"] {
        let out = rtscope(dir.path())
            .args(["measure", "-D", "30", "--metrics", bad])
            .output()
            .unwrap();
        assert_code(&out, 2);
        assert!(
            stderr(&out).contains("is not ADDR:PORT"),
            "{bad}: {}",
            stderr(&out)
        );
    }
    let out = rtscope(dir.path())
        .args([
            "measure",
            "-D",
            "30",
            "--metrics",
            "127.0.0.1:0",
            "--metrics-auth",
        ])
        .arg(dir.join("missing-token"))
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(stderr(&out).contains("--metrics-auth"), "{}", stderr(&out));
    // A scheme with no token after it is not the token "bearer".
    let empty = dir.join("empty-token");
    for text in ["bearer \n", "Bearer\n"] {
        std::fs::write(&empty, text).unwrap();
        let out = rtscope(dir.path())
            .args(["measure", "-D", "30", "--metrics", "127.0.0.1:0"])
            .arg("--metrics-auth")
            .arg(&empty)
            .output()
            .unwrap();
        assert_code(&out, 2);
        let err = stderr(&out);
        assert!(err.contains("has nothing after it"), "{text:?}: {err}");
        assert!(util::stdout(&out).is_empty(), "nothing measured");
    }
}

/// Every `rtscope_*` name in `expr`, without the histogram suffixes.
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("rtscope_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

#[test]
fn every_metric_the_grafana_dashboard_queries_is_served() {
    let _g = util::shared_system();
    let dash: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/rtscope.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut wanted = Vec::new();
    let mut exprs = vec![
        dash["templating"]["list"][0]["query"]
            .as_str()
            .unwrap()
            .to_string(),
    ];
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    for e in &exprs {
        wanted.extend(metric_names(e));
    }
    assert!(wanted.len() >= 6, "{wanted:?}");

    let dir = TempDir::new("metrics-grafana");
    let port = free_port();
    let mut child = rtscope(dir.path())
        .args(["measure", "-q", "-D", "3", "--no-save", "--window", "500ms"])
        .args(["--metrics", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a window has finished (its gauge is then served).
    let t0 = Instant::now();
    let mut body = String::new();
    while t0.elapsed() < Duration::from_secs(10) {
        if let Some((200, b)) = http_get(port, "/metrics", None) {
            body = b;
            if body.contains("rtscope_window_max_latency_seconds{") {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(child.wait().unwrap().success());
    let served: Vec<&str> = body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    for name in wanted {
        assert!(
            served.contains(&name.as_str()),
            "the dashboard queries {name}, which /metrics does not serve:\n{body}"
        );
    }
}
