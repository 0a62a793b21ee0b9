//! A strict, minimal HTTP/1.x server for `/metrics` on std::net.
//!
//! Why not a crate: the endpoint answers one request (`GET /metrics`)
//! with one text; a general server would bring thread pools, chunked
//! bodies and keep-alive we do not want on a real-time host. One thread
//! of its own (never a measuring one, never the control one) accepts;
//! each connection is served on a short-lived thread of its own, at most
//! [`MAX_CONNECTIONS`] at once (more are answered 503 without reading),
//! so a client that sends slowly or not at all holds only its own
//! connection. A client has [`HEAD_DEADLINE`] in all to send at most
//! 8 KiB of request head (408 after it), and the answer has
//! [`WRITE_DEADLINE`] in all to be written; it is sent with
//! `Connection: close`, and anything else is refused (400, 401, 404,
//! 405). All these threads keep to the CPUs nobody measures on. The server
//! never waits for the measurement: it clones the last text the control
//! thread published.

use super::MetricsError;
use super::auth::Auth;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest request head read.
const MAX_HEAD: usize = 8 * 1024;
/// Connections served at once; the next ones are answered 503 at once.
pub const MAX_CONNECTIONS: usize = 64;
/// Time a client has, from its connection being accepted, to send the
/// whole request head (not per read: a byte a second does not extend it).
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// Time the whole answer has to be written (a client that does not read
/// is dropped after it).
pub const WRITE_DEADLINE: Duration = Duration::from_secs(5);
/// Stack of a connection's thread (it parses a head and writes a text).
const CONNECTION_STACK: usize = 256 * 1024;
/// Name of the connection threads (the accepting one is `rtscope-metrics`).
pub const CONNECTION_THREAD: &str = "rtscope-scrape";

/// Where the control thread leaves the latest exposition text, and where
/// it tells the server's thread which CPUs to keep to.
#[derive(Clone, Default)]
pub struct Feed {
    text: Arc<Mutex<Arc<String>>>,
    place: Arc<Placement>,
}

/// The server thread's id (0 until it runs) and the CPUs it should run
/// on (`None`: any). Whichever of the two sides comes second applies it.
#[derive(Default)]
struct Placement {
    tid: AtomicI32,
    cpus: Mutex<Option<Vec<usize>>>,
}

impl Placement {
    /// Move the calling thread (a connection's) onto the CPUs, if known.
    fn keep_current(&self) {
        let cpus = self.cpus.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(cpus) = cpus {
            let _ = crate::sys::sched::set_affinity(crate::sys::sched::gettid(), &cpus);
        }
    }

    fn apply(&self) {
        let tid = self.tid.load(Ordering::SeqCst);
        let cpus = self.cpus.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let (true, Some(cpus)) = (tid > 0, cpus) {
            // A CPU outside this process's cpuset (under --isolate) is
            // refused: the thread then stays where it is.
            let _ = crate::sys::sched::set_affinity(tid, &cpus);
        }
    }
}

impl Feed {
    /// Publish `text` (the server serves it from now on).
    pub fn publish(&self, text: String) {
        let mut g = self.text.lock().unwrap_or_else(|e| e.into_inner());
        *g = Arc::new(text);
    }

    /// The text last published.
    pub fn current(&self) -> Arc<String> {
        Arc::clone(&self.text.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Keep the server's thread on `cpus` (the CPUs nobody measures on):
    /// answering a scrape is kernel work (accept, read, write) that a
    /// measuring thread cannot preempt on a kernel without full
    /// preemption. Nothing is done when `cpus` is empty.
    pub fn keep_server_on(&self, cpus: &[usize]) {
        if cpus.is_empty() {
            return;
        }
        *self.place.cpus.lock().unwrap_or_else(|e| e.into_inner()) = Some(cpus.to_vec());
        self.place.apply();
    }

    /// Called by the server's thread when it starts.
    fn server_started(&self) {
        self.place
            .tid
            .store(crate::sys::sched::gettid(), Ordering::SeqCst);
        self.place.apply();
    }

    /// The CPUs the server's thread runs on, as the kernel reports them
    /// (`None` before it started).
    pub fn server_cpus(&self) -> Option<Vec<usize>> {
        let tid = self.place.tid.load(Ordering::SeqCst);
        (tid > 0)
            .then(|| crate::sys::sched::affinity_of(tid).ok())
            .flatten()
    }
}

/// The running endpoint; stops (and joins its thread) when dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    feed: Feed,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listen on `addr` (exit 2 material when it fails: port in use,
    /// address not on this host) and serve `/metrics` from now on.
    pub fn start(addr: SocketAddr, auth: Option<Auth>) -> Result<MetricsServer, MetricsError> {
        let listener = TcpListener::bind(addr).map_err(|source| MetricsError::Bind {
            addr,
            hint: match source.kind() {
                io::ErrorKind::AddrInUse => {
                    ": another program uses that port; choose another with --metrics"
                }
                io::ErrorKind::AddrNotAvailable => ": that address is not one of this host's",
                io::ErrorKind::PermissionDenied => ": ports below 1024 need root",
                _ => "",
            },
            source,
        })?;
        let addr = listener.local_addr().unwrap_or(addr);
        let feed = Feed::default();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = {
            let (feed, stop) = (feed.clone(), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("rtscope-metrics".into())
                .spawn(move || serve(listener, feed, auth, stop))
                .map_err(MetricsError::Spawn)?
        };
        Ok(MetricsServer {
            addr,
            feed,
            stop,
            handle: Some(handle),
        })
    }

    /// The address it listens on (the real port when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn feed(&self) -> Feed {
        self.feed.clone()
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept: connect once to ourselves.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => [127, 0, 0, 1].into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn serve(listener: TcpListener, feed: Feed, auth: Option<Auth>, stop: Arc<AtomicBool>) {
    feed.server_started();
    let auth = auth.map(Arc::new);
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let s = match conn {
            Ok(s) => s,
            // Out of file descriptors and the like: do not spin.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            busy(s);
            continue;
        }
        let slot = Slot::take(&active);
        let (feed, auth) = (feed.clone(), auth.clone());
        // A thread that cannot be spawned drops the closure: the
        // connection is closed and the slot given back.
        let _ = std::thread::Builder::new()
            .name(CONNECTION_THREAD.into())
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let _slot = slot;
                feed.place.keep_current();
                let _ = answer(s, &feed, auth.as_deref(), Instant::now());
            });
    }
}

/// One of the [`MAX_CONNECTIONS`] places, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(active: &Arc<AtomicUsize>) -> Slot {
        active.fetch_add(1, Ordering::SeqCst);
        Slot(Arc::clone(active))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Every place is taken: say so without reading or waiting (one
/// non-blocking write into an empty send buffer), and close.
fn busy(s: TcpStream) {
    let _ = s.set_nonblocking(true);
    let _ = (&s).write(
        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
}

/// What a request asks, once its head is parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// GET or HEAD of /metrics; the Authorization header if any.
    Metrics {
        head_only: bool,
        authorization: Option<String>,
    },
    Status(u16, &'static str),
}

/// Parse a request head (request line and headers, without the blank
/// line). Strict: one request line `METHOD TARGET HTTP/1.x`, headers
/// `Name: value`.
pub fn parse_head(head: &str) -> Parsed {
    let mut lines = head.split("\r\n");
    let request = lines.next().unwrap_or("");
    let parts: Vec<&str> = request.split(' ').collect();
    let [method, target, version] = parts.as_slice() else {
        return Parsed::Status(400, "Bad Request");
    };
    if !matches!(*version, "HTTP/1.1" | "HTTP/1.0") {
        return Parsed::Status(400, "Bad Request");
    }
    let mut authorization = None;
    for h in lines {
        let Some((name, value)) = h.split_once(':') else {
            return Parsed::Status(400, "Bad Request");
        };
        if name.is_empty() || name.contains(' ') {
            return Parsed::Status(400, "Bad Request");
        }
        if name.eq_ignore_ascii_case("authorization") {
            authorization = Some(value.trim().to_string());
        }
    }
    let path = target.split('?').next().unwrap_or("");
    if path != "/metrics" {
        return Parsed::Status(404, "Not Found");
    }
    match *method {
        "GET" => Parsed::Metrics {
            head_only: false,
            authorization,
        },
        "HEAD" => Parsed::Metrics {
            head_only: true,
            authorization,
        },
        _ => Parsed::Status(405, "Method Not Allowed"),
    }
}

/// What reading a request head gave.
enum Head {
    Complete(String),
    /// Too long, not UTF-8, or the client closed before the blank line.
    Malformed,
    /// The deadline passed first.
    TooSlow,
}

/// Read the request head until `deadline` (the whole head, not each read).
fn read_head(s: &mut TcpStream, deadline: Instant) -> io::Result<Head> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(
                String::from_utf8(buf[..end].to_vec()).map_or(Head::Malformed, Head::Complete)
            );
        }
        if buf.len() >= MAX_HEAD {
            return Ok(Head::Malformed);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Head::TooSlow);
        }
        s.set_read_timeout(Some(left))?;
        let n = match s.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Head::TooSlow);
            }
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(Head::Malformed);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Serve the connection `s`, accepted at `accepted`.
fn answer(mut s: TcpStream, feed: &Feed, auth: Option<&Auth>, accepted: Instant) -> io::Result<()> {
    let parsed = match read_head(&mut s, accepted + HEAD_DEADLINE)? {
        Head::Complete(h) => parse_head(&h),
        Head::Malformed => Parsed::Status(400, "Bad Request"),
        Head::TooSlow => Parsed::Status(408, "Request Timeout"),
    };
    let deadline = Instant::now() + WRITE_DEADLINE;
    match parsed {
        Parsed::Metrics {
            head_only,
            authorization,
        } => {
            if let Some(a) = auth
                && !a.allows(authorization.as_deref())
            {
                return reply(
                    &mut s,
                    deadline,
                    (401, "Unauthorized"),
                    "WWW-Authenticate: Bearer realm=\"rtscope\"\r\n",
                    b"unauthorized\n",
                    false,
                );
            }
            let text = feed.current();
            reply(
                &mut s,
                deadline,
                (200, "OK"),
                "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n",
                text.as_bytes(),
                head_only,
            )
        }
        Parsed::Status(code, why) => reply(
            &mut s,
            deadline,
            (code, why),
            "",
            format!("{why}\n").as_bytes(),
            false,
        ),
    }
}

fn reply(
    s: &mut TcpStream,
    deadline: Instant,
    (code, why): (u16, &str),
    extra: &str,
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} {why}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    write_by(s, head.as_bytes(), deadline)?;
    if !head_only {
        write_by(s, body, deadline)?;
    }
    linger(s);
    Ok(())
}

/// How long a closing connection's unread input is drained.
const LINGER: Duration = Duration::from_secs(1);

/// Close after the answer without losing it: a socket closed with unread
/// input (a slow client's next bytes) is reset, and the reset can discard
/// the answer before the client reads it. So say we are done writing and
/// drain what still comes, for at most [`LINGER`] and 64 KiB.
fn linger(s: &mut TcpStream) {
    if s.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let end = Instant::now() + LINGER;
    let mut chunk = [0u8; 4096];
    let mut drained = 0;
    while drained < 64 * 1024 {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

/// Write all of `data` before `deadline` (a client reading slowly does not
/// extend it), or fail with `TimedOut`.
fn write_by(s: &mut TcpStream, mut data: &[u8], deadline: Instant) -> io::Result<()> {
    while !data.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        s.set_write_timeout(Some(left))?;
        match s.write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_strictly() {
        assert_eq!(
            parse_head("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t"),
            Parsed::Metrics {
                head_only: false,
                authorization: Some("Bearer t".into())
            }
        );
        assert_eq!(
            parse_head("HEAD /metrics?x=1 HTTP/1.0"),
            Parsed::Metrics {
                head_only: true,
                authorization: None
            }
        );
        assert_eq!(
            parse_head("GET / HTTP/1.1"),
            Parsed::Status(404, "Not Found")
        );
        assert_eq!(
            parse_head("POST /metrics HTTP/1.1"),
            Parsed::Status(405, "Method Not Allowed")
        );
        assert_eq!(
            parse_head("GET /metrics"),
            Parsed::Status(400, "Bad Request")
        );
        assert_eq!(
            parse_head("GET /metrics HTTP/2"),
            Parsed::Status(400, "Bad Request")
        );
        assert_eq!(
            parse_head("GET /metrics HTTP/1.1\r\nbad header"),
            Parsed::Status(400, "Bad Request")
        );
    }

    fn get(addr: SocketAddr, extra: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        write!(c, "GET /metrics HTTP/1.1\r\nHost: t\r\n{extra}\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn serves_the_published_text_and_asks_for_the_token() {
        let srv = MetricsServer::start(
            "127.0.0.1:0".parse().unwrap(),
            Some(Auth::parse("tok").unwrap()),
        )
        .unwrap();
        srv.feed().publish("x 1\n".into());
        assert!(get(srv.addr(), "").starts_with("HTTP/1.1 401 "));
        let ok = get(srv.addr(), "Authorization: Bearer tok\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nx 1\n"), "{ok}");
        let taken = MetricsServer::start(srv.addr(), None).err().unwrap();
        assert!(
            taken.to_string().contains("another program uses that port"),
            "{taken}"
        );
    }

    /// Whether the server has neither answered nor closed `c` yet.
    fn still_waiting(c: &TcpStream) -> bool {
        c.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        let r = (&*c).read(&mut b);
        c.set_nonblocking(false).unwrap();
        matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    #[test]
    fn slow_clients_do_not_stop_a_scrape_and_are_cut_at_the_deadline() {
        let srv = MetricsServer::start("127.0.0.1:0".parse().unwrap(), None).unwrap();
        srv.feed().publish("x 1\n".into());
        // 12 idle connections and 12 that send a byte a second.
        let stop = Arc::new(AtomicBool::new(false));
        let mut held = Vec::new();
        let mut senders = Vec::new();
        for i in 0..24 {
            let c = TcpStream::connect(srv.addr()).unwrap();
            if i % 2 == 1 {
                let (mut w, stop) = (c.try_clone().unwrap(), Arc::clone(&stop));
                senders.push(std::thread::spawn(move || {
                    for b in b"GET /metrics HTTP/1.1\r\n".iter().cycle() {
                        if stop.load(Ordering::SeqCst) || w.write_all(&[*b]).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_secs(1));
                    }
                }));
            }
            held.push(c);
        }
        let ok = get(srv.addr(), "");
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        // Answered while every slow connection was still held open: a
        // server serving one connection at a time would have had to end
        // all 24 first.
        for c in &held {
            assert!(still_waiting(c));
        }
        // Each is then answered 408 and closed at the head deadline.
        for mut c in held {
            c.set_read_timeout(Some(HEAD_DEADLINE * 4)).unwrap();
            let mut s = String::new();
            c.read_to_string(&mut s).unwrap();
            assert!(s.starts_with("HTTP/1.1 408 "), "{s}");
        }
        stop.store(true, Ordering::SeqCst);
        for t in senders {
            t.join().unwrap();
        }
    }

    #[test]
    fn connections_beyond_the_cap_are_answered_503_at_once() {
        let srv = MetricsServer::start("127.0.0.1:0".parse().unwrap(), None).unwrap();
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| TcpStream::connect(srv.addr()).unwrap())
            .collect();
        // Accepted in order: the one after them finds every place taken.
        let mut c = TcpStream::connect(srv.addr()).unwrap();
        c.set_read_timeout(Some(HEAD_DEADLINE * 4)).unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        assert!(s.starts_with("HTTP/1.1 503 "), "{s}");
        assert!(held.iter().all(still_waiting));
    }
}
