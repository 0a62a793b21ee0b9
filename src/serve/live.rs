//! The monitors of the store (`rtscope monitor`'s windows), live:
//! `/monitors` (every monitor, one row per host), `/monitors/{name}`
//! (its dated long-term plot and newest windows, `?host=` for one host),
//! `/monitors/{name}/plot.svg` (the plot alone), `/monitors/{name}/events`
//! (server-sent events: the windows that land, polled from the store),
//! `/assets/live.js` (the page's only script, which follows the events),
//! and the JSON: `/api/monitors`, `/api/monitors/{name}/windows`.
//!
//! The monitor page is the one page that runs a script, the server's own
//! (its Content-Security-Policy allows `'self'` and nothing else); without
//! it the page is the plot and table of when it was loaded. An event
//! stream polls the store every [`POLL`] on a blocking thread and ends
//! with its client; at most [`MAX_STREAMS`] are open at once (more: 503).

use super::api::{answer, json};
use super::pages;
use super::query::{self, BadQuery};
use super::reply::Failure;
use super::server::{App, blocking};
use crate::report::plot::{Size, svg};
use crate::store::windows::{MonitorRow, WindowRow};
use crate::units::{fmt_unix_utc, shorten, us_cell};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// How often an event stream looks for new windows.
pub const POLL: Duration = Duration::from_secs(1);
/// Event streams open at once.
pub const MAX_STREAMS: usize = 16;
/// Windows the page's table shows (the newest).
pub const TABLE_ROWS: usize = 20;
/// A comment sent on a quiet stream, so that proxies keep it open.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// The page's script, served by the server itself.
pub const SCRIPT: &str = include_str!("../../assets/templates/serve-live.js");

/// The policy of the monitor page: the server's own script and requests
/// back to it (events, the plot); nothing else.
pub const LIVE_CSP: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// `?host=NAME&after=UNIX_NS`, both optional, nothing else.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MonitorQuery {
    pub host: Option<String>,
    pub after_unix_ns: u64,
}

/// Parse a monitor address's query strictly.
pub fn monitor_query(raw: Option<&str>) -> Result<MonitorQuery, BadQuery> {
    let mut q = MonitorQuery::default();
    for (k, v) in query::pairs(raw)? {
        match k.as_str() {
            "host" if q.host.is_none() => q.host = Some(v).filter(|h| !h.is_empty()),
            // The script's cache-buster for the plot: ignored.
            "v" => {}
            "after" => {
                q.after_unix_ns = v.parse().map_err(|_| {
                    BadQuery(format!(
                        "after='{}' is not a time: give nanoseconds since 1970 (a window's end_unix_ns)",
                        shorten(&v, 40)
                    ))
                })?
            }
            _ => {
                return Err(BadQuery(format!(
                    "unknown or repeated parameter '{}': a monitor takes host=NAME and after=UNIX_NS",
                    shorten(&k, 40)
                )));
            }
        }
    }
    Ok(q)
}

/// One window as the table and the events show it (texts).
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct WindowCells {
    /// Its end (UTC).
    pub end: String,
    pub host: String,
    /// `CPU 3`, or `thread 0` when it ran on no given CPU.
    pub who: String,
    pub samples: String,
    pub missed: String,
    pub p99: String,
    pub max: String,
}

pub fn window_cells(w: &WindowRow) -> WindowCells {
    WindowCells {
        end: fmt_unix_utc(w.end_unix_ns)
            .trim_end_matches(" UTC")
            .to_string(),
        host: w.host.clone(),
        who: match w.cpu {
            Some(c) => format!("CPU {c}"),
            None => format!("thread {}", w.thread),
        },
        samples: w.samples.to_string(),
        missed: w.missed.to_string(),
        p99: us_cell(w.p99_ns),
        max: us_cell(w.max_ns),
    }
}

/// What an event carries: the windows that landed (oldest first), the
/// newest end (the next `after`) and a status line for the page.
#[derive(Serialize, Debug)]
pub struct WindowsEvent {
    pub windows: Vec<WindowCells>,
    pub last_end_unix_ns: u64,
    pub status: String,
}

/// The status line of a page or event: when the newest window ended.
pub fn status_line(last_end_unix_ns: u64) -> String {
    if last_end_unix_ns == 0 {
        "no window yet".into()
    } else {
        format!("newest window ended {}", fmt_unix_utc(last_end_unix_ns))
    }
}

/// The monitors of the store named `name` (one row a host; `host`: that
/// one only). Not found: 404.
fn rows_of(app: &App, name: &str, host: Option<&str>) -> Result<Vec<MonitorRow>, Failure> {
    let all = app.stores.with(|s| Ok(s.monitors()?))?.unwrap_or_default();
    let mine: Vec<MonitorRow> = all
        .into_iter()
        .filter(|m| m.monitor == name && host.is_none_or(|h| m.host == h))
        .collect();
    if mine.is_empty() {
        return Err(Failure::NotFound(format!(
            "no monitor '{}'{} in the store: /monitors lists them",
            shorten(name, 80),
            host.map(|h| format!(" on host '{}'", shorten(h, 80)))
                .unwrap_or_default()
        )));
    }
    Ok(mine)
}

fn windows_of(
    app: &App,
    name: &str,
    host: Option<&str>,
    after: u64,
) -> Result<Vec<WindowRow>, Failure> {
    Ok(app
        .stores
        .with(|s| Ok(s.monitor_windows_after(name, host, after, false)?))?
        .unwrap_or_default())
}

fn plot_title(name: &str) -> String {
    format!("monitor {name}: largest latency per window")
}

/// `/monitors/{name}…` with `host` kept.
fn address(name: &str, tail: &str, host: Option<&str>) -> String {
    let pairs: Vec<(String, String)> = host
        .map(|h| vec![("host".to_string(), h.to_string())])
        .unwrap_or_default();
    query::href(&format!("/monitors/{}{tail}", query::encode(name)), &pairs)
}

/// [`pages::answer`] with [`LIVE_CSP`] on the page (an error page keeps
/// the policy that forbids scripts).
fn live_page(r: Result<String, Failure>) -> Response {
    let ok = r.is_ok();
    let mut resp = pages::answer(r);
    if ok {
        resp.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(LIVE_CSP),
        );
    }
    resp
}

/// `GET /monitors`
pub async fn monitors(State(app): State<Arc<App>>) -> Response {
    let r = blocking(app, |app| {
        let rows = app.stores.with(|s| Ok(s.monitors()?))?.unwrap_or_default();
        pages::monitors_page(&app.stores.shown(), &rows)
    })
    .await;
    pages::answer(r)
}

/// `GET /monitors/{name}`: the plot and the newest windows; the script
/// follows the events from there.
pub async fn monitor(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let q = match monitor_query(raw.as_deref()) {
        Ok(q) => q,
        Err(e) => return Failure::from(e).page(),
    };
    let r = blocking(app, move |app| {
        let host = q.host.as_deref();
        let rows = rows_of(app, &name, host)?;
        let windows = windows_of(app, &name, host, 0)?;
        let last_end = rows.iter().map(|m| m.last_end_unix_ns).max().unwrap_or(0);
        let has_plot = windows.iter().any(|w| w.max_ns.is_some());
        let plot_base = address(&name, "/plot.svg", host);
        let newest: Vec<WindowCells> = windows
            .iter()
            .rev()
            .take(TABLE_ROWS)
            .map(window_cells)
            .collect();
        pages::monitor_page(
            &app.stores.shown(),
            &pages::MonitorPage {
                name: &name,
                host,
                rows: &rows,
                newest,
                plot: has_plot.then(|| plot_base.clone()),
                plot_title: plot_title(&name),
                events: {
                    let mut pairs = Vec::new();
                    if let Some(h) = host {
                        pairs.push(("host".to_string(), h.to_string()));
                    }
                    pairs.push(("after".to_string(), last_end.to_string()));
                    query::href(
                        &format!("/monitors/{}/events", query::encode(&name)),
                        &pairs,
                    )
                },
                plot_base,
                status: status_line(last_end),
            },
        )
    })
    .await;
    live_page(r)
}

/// `GET /monitors/{name}/plot.svg`: the long-term plot, as the monitor's
/// report draws it.
pub async fn plot(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let q = match monitor_query(raw.as_deref()) {
        Ok(q) => q,
        Err(e) => return Failure::from(e).page(),
    };
    let r = blocking(app, move |app| {
        let host = q.host.as_deref();
        rows_of(app, &name, host)?;
        let windows = windows_of(app, &name, host, 0)?;
        let fig = crate::report::monitor::long_term(&windows, &plot_title(&name))
            .ok_or_else(|| Failure::NotFound("no window holds a latency yet".into()))?;
        svg::render(&fig, Size::REPORT)
            .map_err(|e| Failure::Internal(format!("drawing the plot: {e}")))
    })
    .await;
    match r {
        Ok(body) => ([(header::CONTENT_TYPE, "image/svg+xml")], body).into_response(),
        Err(f) => f.page(),
    }
}

/// `GET /monitors/{name}/events`: an event `windows` (a [`WindowsEvent`]
/// as JSON, its id the newest end) each time windows land after `after`
/// (or the `Last-Event-ID` a reconnecting browser sends).
pub async fn events(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let q = match monitor_query(raw.as_deref()) {
        Ok(q) => q,
        Err(e) => return Failure::from(e).json(),
    };
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(q.after_unix_ns);
    let Ok(permit) = Arc::clone(&app.streams).try_acquire_owned() else {
        return Failure::Timeout(format!(
            "{MAX_STREAMS} live views are open already: close one, or reload later"
        ))
        .json();
    };
    let (n, h) = (name.clone(), q.host.clone());
    if let Err(f) = blocking(Arc::clone(&app), move |app| {
        rows_of(app, &n, h.as_deref()).map(|_| ())
    })
    .await
    {
        return f.json();
    }
    let state = (app, name, q.host, after, permit);
    let stream =
        futures_util::stream::unfold(state, |(app, name, host, mut after, permit)| async move {
            loop {
                tokio::time::sleep(POLL).await;
                let (n, h) = (name.clone(), host.clone());
                let got = blocking(Arc::clone(&app), move |app| {
                    windows_of(app, &n, h.as_deref(), after)
                })
                .await;
                let event = match got {
                    Ok(rows) if rows.is_empty() => continue,
                    Ok(rows) => {
                        after = rows.iter().map(|w| w.end_unix_ns).max().unwrap_or(after);
                        let payload = WindowsEvent {
                            windows: rows.iter().map(window_cells).collect(),
                            last_end_unix_ns: after,
                            status: status_line(after),
                        };
                        Event::default()
                            .event("windows")
                            .id(after.to_string())
                            .data(serde_json::to_string(&payload).unwrap_or_default())
                    }
                    Err(f) => Event::default().event("failure").data(f.text()),
                };
                return Some((Ok::<_, Infallible>(event), (app, name, host, after, permit)));
            }
        });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(HEARTBEAT))
        .into_response()
}

/// `GET /assets/live.js`
pub async fn script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        SCRIPT,
    )
        .into_response()
}

/// A window, as `/api/monitors/{name}/windows` gives it.
#[derive(Serialize, Debug)]
pub struct WindowJson {
    pub host: String,
    pub run_uuid: String,
    pub thread: u32,
    pub cpu: Option<u32>,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// The end as RFC 3339 (UTC), for dashboards.
    pub end: String,
    pub samples: u64,
    pub wakeups: u64,
    pub missed: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// `GET /api/monitors`
pub async fn api_monitors(State(app): State<Arc<App>>) -> Response {
    answer(
        blocking(app, |app| {
            let rows = app.stores.with(|s| Ok(s.monitors()?))?.unwrap_or_default();
            json(&rows)
        })
        .await,
    )
}

/// `GET /api/monitors/{name}/windows?host=&after=`: the windows (without
/// their histograms) that ended after `after`, oldest first.
pub async fn api_windows(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let q = match monitor_query(raw.as_deref()) {
        Ok(q) => q,
        Err(e) => return Failure::from(e).json(),
    };
    answer(
        blocking(app, move |app| {
            let host = q.host.as_deref();
            rows_of(app, &name, host)?;
            let rows = windows_of(app, &name, host, q.after_unix_ns)?;
            let out: Vec<WindowJson> = rows
                .into_iter()
                .map(|w| WindowJson {
                    end: crate::units::fmt_rfc3339(w.end_unix_ns),
                    host: w.host,
                    run_uuid: w.run_uuid,
                    thread: w.thread,
                    cpu: w.cpu,
                    start_unix_ns: w.start_unix_ns,
                    end_unix_ns: w.end_unix_ns,
                    samples: w.samples,
                    wakeups: w.wakeups,
                    missed: w.missed,
                    min_ns: w.min_ns,
                    avg_ns: w.avg_ns,
                    p99_ns: w.p99_ns,
                    max_ns: w.max_ns,
                })
                .collect();
            json(&out)
        })
        .await,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_takes_a_host_and_a_time_only() {
        assert_eq!(monitor_query(None).unwrap(), MonitorQuery::default());
        let q = monitor_query(Some("host=pi%204&after=17")).unwrap();
        assert_eq!(q.host.as_deref(), Some("pi 4"));
        assert_eq!(q.after_unix_ns, 17);
        let e = monitor_query(Some("after=soon")).unwrap_err().0;
        assert!(e.contains("after='soon' is not a time"), "{e}");
        assert!(monitor_query(Some("host=a&host=b")).is_err());
        assert!(monitor_query(Some("sort=worst")).is_err());
        assert_eq!(monitor_query(Some("host=")).unwrap().host, None);
    }

    #[test]
    fn addresses_keep_the_host_and_encode_the_name() {
        assert_eq!(
            address("<m>/x", "/plot.svg", Some("a b")),
            "/monitors/%3Cm%3E%2Fx/plot.svg?host=a%20b"
        );
        assert_eq!(address("m", "", None), "/monitors/m");
    }

    #[test]
    fn a_window_s_cells_are_texts() {
        let w = WindowRow {
            monitor: "m".into(),
            host: "<h>".into(),
            run_uuid: "r".into(),
            thread: 2,
            cpu: None,
            start_unix_ns: 1_700_000_000_000_000_000,
            end_unix_ns: 1_700_000_060_000_000_000,
            samples: 60_000,
            wakeups: 60_000,
            missed: 1,
            min_ns: Some(1_000),
            avg_ns: Some(2_000),
            p99_ns: Some(12_345),
            max_ns: None,
            histogram: None,
        };
        let c = window_cells(&w);
        assert_eq!(c.end, "2023-11-14 22:14:20");
        assert_eq!((c.who.as_str(), c.host.as_str()), ("thread 2", "<h>"));
        assert_eq!((c.p99.as_str(), c.missed.as_str()), ("12.3", "1"));
        assert_eq!(status_line(0), "no window yet");
    }
}
