//! Setting the server up and running it: credentials and the address
//! checked first (a non-loopback address needs `--auth`), the store
//! opened once, then a small runtime (2 worker threads, at most 4
//! blocking ones for the store and the rendering), the routes, and the
//! layers every request passes: credentials, a deadline
//! ([`REQUEST_DEADLINE`]), and headers that keep a page from running
//! anything. Ctrl-C or SIGTERM stop it: requests under way get
//! [`DRAIN`] to finish, then it returns.

use super::data::Stores;
use super::reply::Failure;
use super::{ServeError, ServeOptions, api, auth, pages};
use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
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
}

/// Run `f` on a blocking thread (store calls and rendering block); a
/// panic there is a 500, never the server's end.
pub async fn blocking<T: Send + 'static>(
    app: Arc<App>,
    f: impl FnOnce(&App) -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    match tokio::task::spawn_blocking(move || f(&app)).await {
        Ok(r) => r,
        Err(e) if e.is_panic() => Err(Failure::Internal(
            "internal error (a bug): please report it with the address asked for".into(),
        )),
        Err(_) => Err(Failure::Internal("the request was cancelled".into())),
    }
}

/// The routes, with the layers every request passes (credentials first).
pub fn router(app: Arc<App>, credentials: Option<crate::metrics::Auth>) -> Router {
    let routes = Router::new()
        .route("/", get(pages::list))
        .route("/runs/{id}", get(pages::run))
        .route("/compare", get(pages::compare))
        .route("/boards", get(pages::boards))
        .route("/api/runs", get(api::runs))
        .route("/api/runs/{id}", get(api::run))
        .route("/api/boards", get(api::boards))
        .fallback(pages::not_found)
        .with_state(app)
        .layer(middleware::from_fn(deadline))
        .layer(middleware::from_fn(safe_headers));
    match credentials {
        Some(a) => routes.layer(middleware::from_fn_with_state(Arc::new(a), auth::require)),
        None => routes,
    }
}

/// Answer 503 when the request outlives [`REQUEST_DEADLINE`].
async fn deadline(req: Request, next: Next) -> Response {
    match tokio::time::timeout(REQUEST_DEADLINE, next.run(req)).await {
        Ok(r) => r,
        Err(_) => (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!(
                "the request took longer than {} s (is the store slow or unreachable?); try again\n",
                REQUEST_DEADLINE.as_secs()
            ),
        )
            .into_response(),
    }
}

/// Pages run no script, load nothing from elsewhere and are not framed:
/// even a value that escaped escaping could not act.
async fn safe_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
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

/// Serve until Ctrl-C or SIGTERM. Prints `rtscope serve: listening on
/// http://ADDR:PORT/` on standard error once it listens.
pub fn run(opts: &ServeOptions) -> Result<(), ServeError> {
    let credentials = opts.auth_file.as_deref().map(auth::from_file).transpose()?;
    if credentials.is_none() && !opts.listen.ip().is_loopback() {
        return Err(ServeError::OpenWithoutAuth(opts.listen));
    }
    let stores = Stores::new(&opts.store);
    stores.check()?;
    let listener =
        std::net::TcpListener::bind(opts.listen).map_err(|e| bind_error(opts.listen, e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| bind_error(opts.listen, e))?;
    let local = listener.local_addr().unwrap_or(opts.listen);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_name("rtscope-serve")
        .enable_io()
        .enable_time()
        .build()
        .map_err(ServeError::Runtime)?;
    let app = Arc::new(App { stores });
    let result = rt.block_on(async move {
        let listener =
            tokio::net::TcpListener::from_std(listener).map_err(|e| bind_error(opts.listen, e))?;
        let mut int = signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut term = signal(tokio::signal::unix::SignalKind::terminate())?;
        let stop = Arc::new(tokio::sync::Notify::new());
        let server = {
            let stop = Arc::clone(&stop);
            axum::serve(listener, router(app, credentials))
                .with_graceful_shutdown(async move { stop.notified().await })
        };
        eprintln!("rtscope serve: listening on http://{local}/");
        let server = tokio::spawn(async move { server.await });
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        stop.notify_one();
        // Requests under way may finish; idle connections are closed.
        let _ = tokio::time::timeout(DRAIN, server).await;
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
