//! Setting the server up and running it: credentials and the address
//! checked first (a non-loopback address needs `--auth`), the store
//! opened once, then a small runtime (2 worker threads, at most 4
//! blocking ones for the store and the rendering), the routes, and the
//! layers every request passes: credentials, a deadline
//! ([`REQUEST_DEADLINE`]), and headers that keep a page from running
//! anything, after the `Host` is checked ([`host`]). Connections are
//! HTTP/1, served by [`conn::accept`] (never waiting for a place: the one
//! idle the longest is closed beyond [`conn::MAX_CONNECTIONS`]; writes
//! and request heads bounded in time, answers in memory).
//! Ctrl-C or SIGTERM stop it: requests under way get [`DRAIN`] to
//! finish, then it returns.

use super::data::Stores;
use super::reply::Failure;
use super::{ServeError, ServeOptions, api, auth, conn, host, live, pages};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// The longest a request may take; then it is answered 503 (a store that
/// does not answer cannot hold a client forever).
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(30);
/// How long requests under way may go on after Ctrl-C or SIGTERM.
pub const DRAIN: Duration = Duration::from_secs(3);
/// Threads that run the store's calls and the rendering.
const BLOCKING_THREADS: usize = 4;

/// What every handler shares.
pub struct App {
    pub stores: Stores,
    /// Event streams that may open ([`super::live::MAX_STREAMS`]).
    pub streams: Arc<tokio::sync::Semaphore>,
    /// Blocking calls that may run at once (one a blocking thread).
    pub work: Arc<tokio::sync::Semaphore>,
}

impl App {
    pub fn new(stores: Stores) -> App {
        App {
            stores,
            streams: Arc::new(tokio::sync::Semaphore::new(super::live::MAX_STREAMS)),
            work: Arc::new(tokio::sync::Semaphore::new(BLOCKING_THREADS)),
        }
    }
}

/// Run `f` on a blocking thread (store calls and rendering block); a
/// panic there is a 500, never the server's end. It waits for a free
/// thread here, at most 10 s (then 503: every thread stayed busy), and a
/// request given up (its client gone, its deadline past) stops waiting:
/// under overload no work is queued for a client that has left, which
/// would make every later request later still. Work already started is
/// told ([`super::data::given_up`]): it is skipped if it has not begun,
/// and work made of steps stops between them.
pub async fn blocking<T: Send + 'static>(
    app: Arc<App>,
    f: impl FnOnce(&App) -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    const WAIT_FOR_THREAD: Duration = Duration::from_secs(10);
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = super::data::OnGiveUp::new(Arc::clone(&flag));
    let permit =
        match tokio::time::timeout(WAIT_FOR_THREAD, Arc::clone(&app.work).acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(Failure::Internal("the server is stopping".into())),
            Err(_) => {
                return Err(Failure::Timeout(format!(
                    "every one of the {BLOCKING_THREADS} threads that read the store and make \
                     pages stayed busy for {}; try again",
                    crate::units::fmt_duration(WAIT_FOR_THREAD.as_nanos() as u64)
                )));
            }
        };
    let r = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        if flag.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(super::data::gave_up());
        }
        super::data::working_for(flag, || f(&app))
    })
    .await;
    watch.done();
    match r {
        Ok(r) => r,
        Err(e) if e.is_panic() => Err(Failure::Internal(
            "internal error (a bug): please report it with the address asked for".into(),
        )),
        Err(_) => Err(Failure::Internal("the request was cancelled".into())),
    }
}

/// One route of the server: its path (axum's syntax, `{id}` one
/// segment of the path) and its handler. [`ROUTES`] is the one list: the
/// router is built from it, and the tests that try hostile names and
/// missing credentials on every route read it.
pub struct Route {
    pub path: &'static str,
    handler: fn() -> MethodRouter<Arc<App>>,
}

/// Every route the server answers (anything else: [`pages::not_found`]).
pub static ROUTES: [Route; 21] = [
    Route {
        path: "/",
        handler: || get(pages::list),
    },
    Route {
        path: "/runs/{id}",
        handler: || get(pages::run),
    },
    Route {
        path: "/compare",
        handler: || get(pages::compare),
    },
    Route {
        path: "/boards",
        handler: || get(pages::boards),
    },
    Route {
        path: "/boards/{host}",
        handler: || get(pages::board),
    },
    Route {
        path: "/studies",
        handler: || get(pages::studies),
    },
    Route {
        path: "/studies/{name}",
        handler: || get(pages::study),
    },
    Route {
        path: "/monitors",
        handler: || get(live::monitors),
    },
    Route {
        path: "/monitors/{name}",
        handler: || get(live::monitor),
    },
    Route {
        path: "/monitors/{name}/plot.svg",
        handler: || get(live::plot),
    },
    Route {
        path: "/monitors/{name}/events",
        handler: || get(live::events),
    },
    Route {
        path: "/assets/live.js",
        handler: || get(live::script),
    },
    // Browsers ask for it on every page: nothing, rather than a 404 in
    // their console.
    Route {
        path: "/favicon.ico",
        handler: || get(|| async { StatusCode::NO_CONTENT }),
    },
    Route {
        path: "/api/runs",
        handler: || get(api::runs),
    },
    Route {
        path: "/api/runs/{id}",
        handler: || get(api::run),
    },
    Route {
        path: "/api/boards",
        handler: || get(api::boards),
    },
    Route {
        path: "/api/boards/{host}",
        handler: || get(api::board),
    },
    Route {
        path: "/api/studies",
        handler: || get(api::studies),
    },
    Route {
        path: "/api/studies/{name}",
        handler: || get(api::study),
    },
    Route {
        path: "/api/monitors",
        handler: || get(live::api_monitors),
    },
    Route {
        path: "/api/monitors/{name}/windows",
        handler: || get(live::api_windows),
    },
];

/// The routes, with the layers every request passes (the `Host` checked
/// first, then credentials, then the path's names).
pub fn router(
    app: Arc<App>,
    credentials: Option<crate::metrics::Auth>,
    hosts: host::Allowed,
) -> Router {
    let routes = ROUTES
        .iter()
        .fold(Router::new(), |r, route| {
            r.route(route.path, (route.handler)())
        })
        .fallback(pages::not_found)
        .with_state(app);
    layered(routes, credentials, REQUEST_DEADLINE).layer(middleware::from_fn_with_state(
        Arc::new(hosts),
        host::require,
    ))
}

/// `routes` behind the layers: credentials, then the headers every
/// answer carries, then the path's names ([`names`]), then `deadline`.
fn layered(
    routes: Router,
    credentials: Option<crate::metrics::Auth>,
    deadline: Duration,
) -> Router {
    let routes = routes
        .layer(middleware::from_fn_with_state(deadline, within))
        .layer(middleware::from_fn(names))
        .layer(middleware::from_fn(safe_headers));
    match credentials {
        Some(a) => routes.layer(middleware::from_fn_with_state(Arc::new(a), auth::require)),
        None => routes,
    }
}

/// Answer 400 to a path with a segment that can name nothing
/// ([`super::query::path_names`]: `.`, `..`, a NUL), before any route:
/// the one rule for runs, boards, studies, monitors, assets and
/// whatever is routed later.
async fn names(req: Request, next: Next) -> Response {
    match super::query::path_names(req.uri().path()) {
        Ok(()) => next.run(req).await,
        Err(e) if req.uri().path().starts_with("/api/") => Failure::from(e).json(),
        Err(e) => Failure::from(e).page(),
    }
}

/// Answer 503 when the request outlives `deadline` ([`REQUEST_DEADLINE`]).
async fn within(State(deadline): State<Duration>, req: Request, next: Next) -> Response {
    match tokio::time::timeout(deadline, next.run(req)).await {
        Ok(r) => r,
        Err(_) => (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!(
                "the request took longer than {} (is the store slow or unreachable?); try again\n",
                crate::units::fmt_duration(deadline.as_nanos() as u64)
            ),
        )
            .into_response(),
    }
}

/// The policy of every page but the monitor's ([`live::LIVE_CSP`]): no
/// script, nothing loaded from elsewhere, no framing.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Pages run no script (but the monitor page its one, the server's own),
/// load nothing from elsewhere and are not framed: even a value that
/// escaped escaping could not act.
async fn safe_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    let live = h
        .get(header::CONTENT_SECURITY_POLICY)
        .is_some_and(|v| v.as_bytes() == live::LIVE_CSP.as_bytes());
    if !live {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn bind_error(addr: std::net::SocketAddr, source: io::Error) -> ServeError {
    ServeError::Bind {
        addr,
        hint: match source.kind() {
            io::ErrorKind::AddrInUse => {
                ": another program uses that port; choose another with --listen"
            }
            io::ErrorKind::AddrNotAvailable => ": that address is not one of this host's",
            io::ErrorKind::PermissionDenied => ": ports below 1024 need root",
            _ => "",
        },
        source,
    }
}

/// Connections the kernel completes before they are accepted: a burst
/// of a thousand clients is taken whole (with the 128 of
/// `std::net::TcpListener`, one of a burst found the queue full and tried
/// again a second later, whatever room the server had made).
const BACKLOG: u32 = 1024;

/// A socket bound to `addr` (with `SO_REUSEADDR`, as std's listeners).
fn bound(addr: std::net::SocketAddr) -> Result<tokio::net::TcpSocket, ServeError> {
    let e = |source| bind_error(addr, source);
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(e)?;
    socket.set_reuseaddr(true).map_err(e)?;
    socket.bind(addr).map_err(e)?;
    Ok(socket)
}

/// Serve until Ctrl-C or SIGTERM. Prints `rtscope serve: listening on
/// http://ADDR:PORT/` on standard error once it listens.
pub fn run(opts: &ServeOptions) -> Result<(), ServeError> {
    let credentials = opts.auth_file.as_deref().map(auth::from_file).transpose()?;
    if credentials.is_none() && !opts.listen.ip().is_loopback() {
        return Err(ServeError::OpenWithoutAuth(opts.listen));
    }
    let limits = conn::Limits::standard(conn::raise_fd_limit());
    let stores = Stores::new(&opts.store);
    stores.check()?;
    let socket = bound(opts.listen)?;
    let local = socket.local_addr().unwrap_or(opts.listen);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_name("rtscope-serve")
        .enable_io()
        .enable_time()
        .build()
        .map_err(ServeError::Runtime)?;
    let app = Arc::new(App::new(stores));
    let result = rt.block_on(async move {
        let listener = socket
            .listen(BACKLOG)
            .map_err(|e| bind_error(opts.listen, e))?;
        let mut int = signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut term = signal(tokio::signal::unix::SignalKind::terminate())?;
        let stop = Arc::new(tokio::sync::Notify::new());
        let server = tokio::spawn(conn::accept(
            listener,
            router(
                app,
                credentials,
                host::Allowed::new(local, &opts.allow_hosts),
            ),
            Arc::clone(&stop),
            limits,
            Arc::new(conn::Registry::new(limits.body_budget)),
            DRAIN,
        ));
        eprintln!("rtscope serve: listening on http://{local}/");
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        stop.notify_one();
        let _ = server.await;
        Ok::<(), ServeError>(())
    });
    // Store calls still running on blocking threads are not waited for.
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

fn signal(
    kind: tokio::signal::unix::SignalKind,
) -> Result<tokio::signal::unix::Signal, ServeError> {
    tokio::signal::unix::signal(kind).map_err(ServeError::Runtime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A GET on `port`: the status line and the body.
    fn fetch(port: u16, path: &str) -> (String, String) {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            c,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        let (head, body) = s.split_once("\r\n\r\n").unwrap();
        (head.lines().next().unwrap().to_string(), body.to_string())
    }

    #[test]
    fn a_slow_request_gets_503_and_a_panic_500_and_the_server_goes_on() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let app = Arc::new(App::new(Stores::new(std::path::Path::new(
            "/nonexistent/rtscope.db",
        ))));
        let routes = Router::new()
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    "late"
                }),
            )
            .route(
                "/panic",
                get(
                    |axum::extract::State(app): axum::extract::State<Arc<App>>| async move {
                        match blocking(app, |_| -> Result<String, Failure> { panic!("a bug") })
                            .await
                        {
                            Ok(s) => s.into_response(),
                            Err(f) => f.page(),
                        }
                    },
                ),
            )
            .route("/ok", get(|| async { "fine" }))
            .with_state(app);
        let app = layered(routes, None, Duration::from_millis(1500));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        rt.spawn(async move {
            let l = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(l, app).await.unwrap();
        });
        let t = std::time::Instant::now();
        let (status, body) = fetch(port, "/slow");
        assert!(status.contains("503"), "{status}");
        assert!(body.contains("longer than 1.5s"), "{body}");
        // Cut by the 1.5 s limit, not waited out (the handler takes 60 s):
        // a fact, with room for a loaded machine.
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
        let (status, body) = fetch(port, "/panic");
        assert!(status.contains("500"), "{status}");
        assert!(body.contains("internal error (a bug)"), "{body}");
        let (status, body) = fetch(port, "/ok");
        assert!(status.contains("200"), "{status}");
        assert_eq!(body, "fine");
        rt.shutdown_timeout(Duration::from_millis(100));
    }
}
