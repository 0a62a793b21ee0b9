//! serve's connections, so that no client can stall the others: the
//! accept loop never waits for a place (beyond [`Limits::connections`],
//! the connection idle the longest is closed to make room for the new
//! one, whether it is kept alive or still sending its request head; one
//! whose request is being answered is never closed; when every one is, the
//! new one is answered 503 at once), each connection's writes time out
//! when its client takes no byte for [`Limits::write_stall`]
//! ([`Stalling`]), and the memory answers hold waiting for slow clients
//! is bounded: one answer above [`Limits::body_cap`] is refused, and
//! answers that would hold more than [`Limits::body_budget`] together
//! are refused until others are sent ([`Budget`]). Also the file
//! descriptor limit raised to its hard limit ([`raise_fd_limit`]).

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// Connections served at once; beyond, the one idle the longest is
/// closed for the new one (a browser's kept-alive connection, or a client
/// that has not sent a whole request head yet).
pub const MAX_CONNECTIONS: usize = 256;
/// Time a connection has to send a whole request head (the first, or the
/// next one on a kept-alive connection) before it is closed.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// Time a client may take no byte of an answer before its connection is
/// closed (a client that asks and never reads holds nothing longer).
pub const WRITE_STALL: Duration = Duration::from_secs(10);
/// The largest answer: a larger one is refused (503), not held.
pub const BODY_CAP: u64 = 32 << 20;
/// The bytes of answers not yet handed to the kernel, all connections
/// together; an answer beyond is refused (503) until others are sent.
pub const BODY_BUDGET: u64 = 256 << 20;
/// File descriptors kept for the store, the runtime and the listener
/// when the connections' number is fitted under the limit.
const FD_RESERVE: u64 = 64;
/// An answer is handed to the connection in pieces of this size, so that
/// what is not yet sent stays counted in the [`Budget`].
const CHUNK: usize = 64 << 10;

/// The bounds of [`accept`].
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub connections: usize,
    pub head: Duration,
    pub write_stall: Duration,
    pub body_cap: u64,
    pub body_budget: u64,
}

impl Limits {
    /// The server's: the constants above, at most as many connections as
    /// `fds` file descriptors leave room for.
    pub fn standard(fds: u64) -> Limits {
        let room = fds.saturating_sub(FD_RESERVE).max(8);
        Limits {
            connections: MAX_CONNECTIONS.min(room as usize),
            head: HEAD_DEADLINE,
            write_stall: WRITE_STALL,
            body_cap: BODY_CAP,
            body_budget: BODY_BUDGET,
        }
    }
}

/// Raise the soft limit of open files to the hard one (where allowed) and
/// give the soft limit then in force.
pub fn raise_fd_limit() -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    if now.current != now.maximum {
        let raised = rustix::process::Rlimit {
            current: now.maximum,
            maximum: now.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return now.maximum.unwrap_or(u64::MAX);
        }
    }
    now.current.unwrap_or(u64::MAX)
}

/// `requests` of a connection closed to make room: no request starts.
const SHED: usize = usize::MAX;

/// One connection, as the accept loop sees it.
pub struct Conn {
    /// Requests being answered (0 or 1 on HTTP/1), or [`SHED`].
    requests: AtomicUsize,
    /// When it became idle (accepted, or its last answer handed over), in
    /// ms since the registry's start.
    idle_since_ms: AtomicU64,
    kill: Notify,
}

/// The connections open, and the bytes their answers hold.
pub struct Registry {
    live: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    start: Instant,
    pub budget: Arc<Budget>,
}

impl Registry {
    /// No connection yet; answers may hold `budget` bytes together.
    pub fn new(budget: u64) -> Registry {
        Registry {
            live: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            start: Instant::now(),
            budget: Arc::new(Budget::new(budget)),
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connections open.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn add(&self) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            requests: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(self.now_ms()),
            kill: Notify::new(),
        });
        self.map().insert(id, Arc::clone(&conn));
        (id, conn)
    }

    /// Close the connection idle the longest; false when every one is
    /// answering a request.
    fn shed_one(&self) -> bool {
        let mut map = self.map();
        let mut idle: Vec<(u64, u64)> = map
            .iter()
            .filter(|(_, c)| c.requests.load(Ordering::SeqCst) == 0)
            .map(|(id, c)| (c.idle_since_ms.load(Ordering::SeqCst), *id))
            .collect();
        idle.sort_unstable();
        for (_, id) in idle {
            let Some(c) = map.get(&id) else { continue };
            if c.requests
                .compare_exchange(0, SHED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                c.kill.notify_one();
                map.remove(&id);
                return true;
            }
        }
        false
    }
}

/// A request under way on a connection: while it lives, the connection
/// is not shed.
struct Busy {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Busy {
    fn begin(conn: &Arc<Conn>, registry: &Arc<Registry>) -> Option<Busy> {
        conn.requests
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n != SHED).then_some(n + 1)
            })
            .ok()?;
        Some(Busy {
            conn: Arc::clone(conn),
            registry: Arc::clone(registry),
        })
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn
            .idle_since_ms
            .store(self.registry.now_ms(), Ordering::SeqCst);
        self.conn.requests.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Bytes of answers not yet handed to the kernel, all connections.
pub struct Budget {
    held: AtomicU64,
    limit: u64,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            held: AtomicU64::new(0),
            limit,
        }
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }

    fn take(self: &Arc<Self>, n: u64) -> Option<Held> {
        self.held
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |h| {
                (h + n <= self.limit).then_some(h + n)
            })
            .ok()?;
        Some(Held {
            budget: Arc::clone(self),
            n,
        })
    }
}

/// Bytes of the [`Budget`] an answer holds, given back when dropped.
struct Held {
    budget: Arc<Budget>,
    n: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.n, Ordering::SeqCst);
    }
}

/// Serve connections from `listener` until `stop` (see the module's
/// doc), with `registry` made for `limits`; on `stop`, those under way
/// finish their request within `drain`.
pub async fn accept(
    listener: tokio::net::TcpListener,
    app: Router,
    stop: Arc<Notify>,
    limits: Limits,
    registry: Arc<Registry>,
    drain: Duration,
) {
    let (closing, closed) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let tcp = tokio::select! {
            a = listener.accept() => match a {
                Ok((tcp, _)) => tcp,
                // Out of file descriptors and the like: make room, do not spin.
                Err(_) => {
                    registry.shed_one();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.notified() => break,
        };
        if registry.len() >= limits.connections && !registry.shed_one() {
            refuse(&tcp, limits.connections);
            continue;
        }
        let (id, conn) = registry.add();
        let service = Tracked {
            inner: hyper_util::service::TowerToHyperService::new(app.clone()),
            conn,
            registry: Arc::clone(&registry),
            budget: Arc::clone(&registry.budget),
            cap: limits.body_cap,
        };
        let gone = Gone(Arc::clone(&registry), id);
        connections.spawn(serve_one(tcp, service, limits, closed.clone(), gone));
        // Reap the ended ones as we go.
        while connections.try_join_next().is_some() {}
    }
    let _ = closing.send(true);
    let all_done = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(drain, all_done).await;
}

/// Takes a connection out of the registry when its task ends.
struct Gone(Arc<Registry>, u64);

impl Drop for Gone {
    fn drop(&mut self) {
        self.0.map().remove(&self.1);
    }
}

/// One connection: HTTP/1 until it ends, is shed, or the server stops.
async fn serve_one(
    tcp: tokio::net::TcpStream,
    service: Tracked,
    limits: Limits,
    mut closed: tokio::sync::watch::Receiver<bool>,
    _gone: Gone,
) {
    let conn = Arc::clone(&service.conn);
    let io = hyper_util::rt::TokioIo::new(Stalling::new(tcp, limits.write_stall));
    let c = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.head)
        .serve_connection(io, service);
    let mut c = std::pin::pin!(c);
    tokio::select! {
        _ = c.as_mut() => {}
        // Shed for a new one: closed at once.
        _ = conn.kill.notified() => {}
        _ = closed.changed() => {
            c.as_mut().graceful_shutdown();
            let _ = c.await;
        }
    }
}

/// Answer 503 to a connection beyond the limit while every other one is
/// answering a request, without reading it (the socket's buffer takes
/// these few bytes; a client that does not read loses them).
fn refuse(tcp: &tokio::net::TcpStream, limit: usize) {
    let text = format!(
        "503: all {limit} connections of this rtscope serve are answering requests; try again\n"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = tcp.try_write(answer.as_bytes());
}

/// The router, with each request counted on its connection and each
/// answer's bytes on the [`Budget`].
struct Tracked {
    inner: hyper_util::service::TowerToHyperService<Router>,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
    budget: Arc<Budget>,
    cap: u64,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Tracked {
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Answer {
        let api = req.uri().path().starts_with("/api/");
        let Some(busy) = Busy::begin(&self.conn, &self.registry) else {
            let r = refusal(api, "this connection is closing; ask again".into());
            return Box::pin(std::future::ready(Ok(r)));
        };
        let answer = hyper::service::Service::call(&self.inner, req);
        let (budget, cap) = (Arc::clone(&self.budget), self.cap);
        Box::pin(async move {
            let r = answer.await?;
            Ok(bounded(r, busy, &budget, cap, api))
        })
    }
}

/// `r`, its body holding `busy` and its bytes on `budget` until handed
/// over; or a 503 when it is above `cap` or the budget is spent.
fn bounded(r: Response, busy: Busy, budget: &Arc<Budget>, cap: u64, api: bool) -> Response {
    let size = r.body().size_hint().exact();
    let held = match size {
        Some(n) if n > cap => {
            return refusal(
                api,
                format!(
                    "the answer would be {}, above the {} one answer may be; ask for less (fewer runs a page, a filter)",
                    crate::units::fmt_size(n),
                    crate::units::fmt_size(cap)
                ),
            );
        }
        Some(n) => match budget.take(n) {
            Some(h) => Some(h),
            None => {
                return refusal(
                    api,
                    format!(
                        "the server holds {} of answers for clients that read them slowly (its limit is {}); try again in a moment",
                        crate::units::fmt_size(budget.held()),
                        crate::units::fmt_size(budget.limit)
                    ),
                );
            }
        },
        None => None,
    };
    r.map(|inner| {
        Body::new(Piecewise {
            inner,
            rest: Bytes::new(),
            _busy: busy,
            _held: held,
        })
    })
}

/// A 503 with `why`, as JSON under /api/ and as text elsewhere.
fn refusal(api: bool, why: String) -> Response {
    let (kind, body) = if api {
        let v = serde_json::json!({ "error": why });
        ("application/json", v.to_string())
    } else {
        ("text/plain; charset=utf-8", format!("503: {why}\n"))
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// An answer's body handed over in [`CHUNK`]s: what is not yet handed
/// over stays here, counted ([`Held`]) until the last piece goes.
struct Piecewise {
    inner: Body,
    rest: Bytes,
    _busy: Busy,
    _held: Option<Held>,
}

impl HttpBody for Piecewise {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if this.rest.is_empty() {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => this.rest = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return other,
            }
        }
        let n = this.rest.len().min(CHUNK);
        Poll::Ready(Some(Ok(hyper::body::Frame::data(this.rest.split_to(n)))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = hyper::body::SizeHint::new();
        hint.set_lower(inner.lower() + rest);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + rest);
        }
        hint
    }
}

/// A connection's socket whose writes fail once the client has taken no
/// byte for `limit`: the connection then ends, and with it what its
/// answer held.
pub struct Stalling<T> {
    io: T,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> Stalling<T> {
    pub fn new(io: T, limit: Duration) -> Stalling<T> {
        Stalling {
            io,
            limit,
            stalled: None,
        }
    }

    /// `r`, or an error when it has been pending for longer than the limit.
    fn watch<R>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client took no byte of its answer for {}",
                    crate::units::fmt_duration(limit.as_nanos() as u64)
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Stalling<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Stalling<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        this.watch(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.watch(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_flush(cx);
        this.watch(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch(cx, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    const MB: usize = 1 << 20;

    /// A server of a few routes under `limits`: its runtime (dropped:
    /// stopped), port and registry.
    fn start(limits: Limits) -> (tokio::runtime::Runtime, u16, Arc<Registry>) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let routes = Router::new()
            .route("/ok", get(|| async { "fine" }))
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                    "late"
                }),
            )
            .route("/big", get(|| async { vec![b'x'; 40 * MB] }))
            .route("/huge", get(|| async { vec![b'x'; 51 * MB] }));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let registry = Arc::new(Registry::new(limits.body_budget));
        let r = Arc::clone(&registry);
        rt.spawn(async move {
            let l = tokio::net::TcpListener::from_std(listener).unwrap();
            let stop = Arc::new(Notify::new());
            accept(l, routes, stop, limits, r, Duration::from_millis(100)).await;
        });
        (rt, port, registry)
    }

    fn limits() -> Limits {
        Limits {
            connections: 8,
            head: Duration::from_secs(10),
            write_stall: Duration::from_secs(60),
            body_cap: 50 * MB as u64,
            body_budget: 60 * MB as u64,
        }
    }

    fn ask(port: u16, path: &str) -> TcpStream {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // A server that refuses the connection (503) answers and closes
        // without reading: the request may then meet a closed socket
        // (EPIPE), and the answer is still there to read.
        let _ = write!(
            c,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        );
        c
    }

    /// The status and the body's length and first bytes.
    fn answer(mut c: TcpStream) -> (u16, usize, String) {
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut all = Vec::new();
        let _ = c.read_to_end(&mut all);
        let end = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0);
        let head = String::from_utf8_lossy(&all[..end]);
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = &all[(end + 4).min(all.len())..];
        let start = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        (status, body.len(), start)
    }

    fn until(what: &str, mut done: impl FnMut() -> bool) {
        let t = Instant::now();
        while !done() {
            assert!(t.elapsed() < Duration::from_secs(10), "never: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn beyond_the_limit_the_connection_idle_longest_is_closed_for_a_new_one() {
        let (_rt, port, registry) = start(limits());
        // Twenty clients that send a byte of their head and no more.
        let slow: Vec<TcpStream> = (0..20)
            .map(|_| {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.write_all(b"G").unwrap();
                c
            })
            .collect();
        until("twenty accepted", || {
            registry.next.load(Ordering::SeqCst) >= 20
        });
        assert!(registry.len() <= 8, "{}", registry.len());
        let t = Instant::now();
        assert_eq!(answer(ask(port, "/ok")), (200, 4, "fine".into()));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        // The first ones were closed, without an answer.
        let (status, len, _) = answer(slow.into_iter().next().unwrap());
        assert_eq!((status, len), (0, 0));
    }

    #[test]
    fn a_connection_answering_a_request_is_never_closed_for_another() {
        let (_rt, port, registry) = start(Limits {
            connections: 2,
            ..limits()
        });
        let busy = [ask(port, "/slow"), ask(port, "/slow")];
        until("two busy", || {
            registry
                .map()
                .values()
                .filter(|c| c.requests.load(Ordering::SeqCst) == 1)
                .count()
                == 2
        });
        let (status, _, text) = answer(ask(port, "/ok"));
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("all 2 connections"), "{text}");
        for c in busy {
            assert_eq!(answer(c), (200, 4, "late".into()));
        }
        until("the busy ones closed", || registry.is_empty());
        assert_eq!(answer(ask(port, "/ok")).0, 200);
    }

    #[test]
    fn a_client_that_reads_nothing_is_closed_after_the_write_stall() {
        let (_rt, port, registry) = start(Limits {
            write_stall: Duration::from_millis(300),
            ..limits()
        });
        let c = ask(port, "/big");
        until("the answer held", || registry.budget.held() > 0);
        until("the connection closed", || registry.is_empty());
        assert_eq!(registry.budget.held(), 0);
        let (status, len, _) = answer(c);
        assert_eq!(status, 200);
        assert!(len < 40 * MB, "{len}");
    }

    #[test]
    fn answers_are_bounded_one_by_one_and_together() {
        let (_rt, port, registry) = start(limits());
        let (status, _, text) = answer(ask(port, "/huge"));
        assert_eq!(status, 503, "{text}");
        assert!(
            text.contains("the answer would be 51 MiB, above the 50 MiB"),
            "{text}"
        );
        // One client holds 40 MiB unread: a second 40 MiB would pass 60 MiB.
        let holder = ask(port, "/big");
        until("the answer held", || {
            registry.budget.held() == 40 * MB as u64
        });
        let (status, _, text) = answer(ask(port, "/big"));
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("clients that read them slowly"), "{text}");
        assert_eq!(answer(ask(port, "/ok")).0, 200);
        // Read, it is given back.
        assert_eq!(answer(holder).1, 40 * MB);
        until("given back", || registry.budget.held() == 0);
        assert_eq!(answer(ask(port, "/big")).1, 40 * MB);
    }
}
