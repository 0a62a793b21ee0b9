//! A strict, minimal HTTP/1.x server for `/metrics` on std::net.
//!
//! Why not a crate: the endpoint answers one request (`GET /metrics`)
//! with one text; a general server would bring threads pools, chunked
//! bodies and keep-alive we do not want on a real-time host. This one
//! runs on one thread of its own (never a measuring one, never the
//! control one), serves one connection at a time, reads at most 8 KiB of
//! request head with 2 s timeouts, answers with `Connection: close`, and
//! refuses anything else (400, 401, 404, 405). It never waits for the
//! measurement: it clones the last text the control thread published.

use super::MetricsError;
use super::auth::Auth;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Largest request head read.
const MAX_HEAD: usize = 8 * 1024;
/// Read and write timeout of one connection.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

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
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(s) = conn {
            let _ = answer(s, &feed, auth.as_ref());
        }
    }
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

fn read_head(s: &mut TcpStream) -> io::Result<Option<String>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(String::from_utf8(buf[..end].to_vec()).ok());
        }
        if buf.len() >= MAX_HEAD {
            return Ok(None);
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn answer(mut s: TcpStream, feed: &Feed, auth: Option<&Auth>) -> io::Result<()> {
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    let parsed = match read_head(&mut s)? {
        Some(h) => parse_head(&h),
        None => Parsed::Status(400, "Bad Request"),
    };
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
                    401,
                    "Unauthorized",
                    "WWW-Authenticate: Bearer realm=\"rtscope\"\r\n",
                    b"unauthorized\n",
                    false,
                );
            }
            let text = feed.current();
            reply(
                &mut s,
                200,
                "OK",
                "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n",
                text.as_bytes(),
                head_only,
            )
        }
        Parsed::Status(code, why) => {
            reply(&mut s, code, why, "", format!("{why}\n").as_bytes(), false)
        }
    }
}

fn reply(
    s: &mut TcpStream,
    code: u16,
    why: &str,
    extra: &str,
    body: &[u8],
    head_only: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} {why}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())?;
    if !head_only {
        s.write_all(body)?;
    }
    s.flush()
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
}
