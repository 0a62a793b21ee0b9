//! The HTML routes: `/` (the runs list, as `rtscope runs` lists them,
//! with filters, sort, paging and a checkbox per run to compare them),
//! `/runs/{id}` (the run's report, as `rtscope report ID` writes it, with
//! a bar of links above), `/compare?runs=…` (several runs, as `rtscope
//! report A B C` compares them), `/boards` (one row per host),
//! `/boards/{host}` (a board's history and newest runs), `/studies` and
//! `/studies/{name}` (a study's report, as `rtscope study report` writes
//! it, each run linked to its page), and the 404 page for everything
//! else. Pages are laid out by the one renderer
//! ([`crate::report::page`], template `assets/templates/serve.html`),
//! which escapes every text; the reports are the report renderer's own.
//! No script, no asset from elsewhere.

use super::data::{self, Board, BoardHistory, ListPage, Listed, StudyListed};
use super::query::{self, ListQuery, Sort};
use super::reply::Failure;
use super::server::{App, blocking};
use crate::report::page::{self, Page};
use crate::report::runs_text::{origin_word, quantity_word};
use crate::report::verdict::Outcome;
use crate::store::{Origin, RunState};
use crate::units::{fmt_run_length, fmt_unix_utc, shorten, us_cell};
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Serialize;
use std::sync::Arc;

/// Characters of a host, label or kernel shown in a cell (the whole
/// text is the cell's tooltip).
const CELL_CHARS: usize = 48;

/// What the template lays out: one of the pages, with the page furniture.
#[derive(Serialize, Debug, Default)]
pub struct View {
    /// `list`, `boards` or `error`.
    kind: &'static str,
    title: String,
    tool: String,
    /// The store, as messages name it.
    store: String,
    list: Option<ListView>,
    boards: Vec<BoardRow>,
    studies: Vec<StudyRow>,
    board: Option<BoardView>,
    monitors: Vec<MonitorCells>,
    monitor: Option<MonitorView>,
    /// The error page's status line and text.
    status: String,
    message: String,
}

#[derive(Serialize, Debug, Default)]
struct ListView {
    /// The form's values, as given.
    host: String,
    label: String,
    /// One text field per tag given, and one empty more.
    tags: Vec<String>,
    state: String,
    origin: String,
    kernel: String,
    since: String,
    until: String,
    sort: &'static str,
    per_page: usize,
    /// The choices of the state and origin filters: the words the
    /// list's columns show.
    states: Vec<&'static str>,
    origins: Vec<&'static str>,
    total: usize,
    page: usize,
    pages: usize,
    /// Row numbers shown (1-based, inclusive).
    first: usize,
    last: usize,
    prev: Option<String>,
    next: Option<String>,
    /// Links that sort the same list by date or by worst case.
    by_date: String,
    by_worst: String,
    /// Said instead of the table when no run is listed.
    empty: Option<String>,
    rows: Vec<RunCells>,
}

/// One run of a table, as text cells.
#[derive(Serialize, Debug, Default)]
struct RunCells {
    id: i64,
    href: String,
    state: &'static str,
    origin: String,
    start: String,
    host: String,
    host_full: String,
    label: String,
    label_full: String,
    kernel: String,
    kernel_full: String,
    preemption: String,
    duration: String,
    threads: u32,
    measures: String,
    p9999: String,
    max: String,
    verdict: String,
    /// `met`, `missed`, `possibly`, `unknown` or `none`.
    verdict_class: &'static str,
}

#[derive(Serialize, Debug)]
struct BoardRow {
    host: String,
    host_full: String,
    href: String,
    runs: usize,
    last: RunCells,
    monitors: Vec<Link>,
}

/// A link: its text and address.
#[derive(Serialize, Debug)]
struct Link {
    text: String,
    href: String,
}

/// Links to `host`'s page of each monitor of `names`.
fn monitor_links(names: &[String], host: &str) -> Vec<Link> {
    names
        .iter()
        .map(|n| Link {
            text: shorten(n, CELL_CHARS),
            href: query::href(
                &format!("/monitors/{}", query::encode(n)),
                &[("host".into(), host.to_string())],
            ),
        })
        .collect()
}

/// A monitor on a host, as the monitors page lists it.
#[derive(Serialize, Debug)]
struct MonitorCells {
    name: String,
    name_full: String,
    href: String,
    host: String,
    host_full: String,
    windows: u64,
    first: String,
    last: String,
    largest: String,
}

/// A monitor's page.
#[derive(Serialize, Debug)]
struct MonitorView {
    name: String,
    /// The hosts shown (one, or every host of the monitor).
    hosts: Vec<MonitorCells>,
    one_host: bool,
    windows: Vec<super::live::WindowCells>,
    table_rows: usize,
    plot: Option<String>,
    plot_base: String,
    plot_title: String,
    caption: &'static str,
    events: String,
    status: String,
}

/// What a monitor's page is made of ([`monitor_page`]).
pub struct MonitorPage<'a> {
    pub name: &'a str,
    pub host: Option<&'a str>,
    pub rows: &'a [crate::store::windows::MonitorRow],
    /// The newest windows, newest first.
    pub newest: Vec<super::live::WindowCells>,
    /// The plot's address (`None`: no window holds a latency yet).
    pub plot: Option<String>,
    pub plot_base: String,
    pub plot_title: String,
    pub events: String,
    pub status: String,
}

fn monitor_cells(m: &crate::store::windows::MonitorRow) -> MonitorCells {
    let host = or_unknown(&m.host);
    let when = |ns: u64| fmt_unix_utc(ns).trim_end_matches(" UTC").to_string();
    MonitorCells {
        name: shorten(&m.monitor, CELL_CHARS),
        name_full: m.monitor.clone(),
        href: query::href(
            &format!("/monitors/{}", query::encode(&m.monitor)),
            &[("host".into(), m.host.clone())],
        ),
        host: shorten(&host, CELL_CHARS),
        host_full: host,
        windows: m.windows,
        first: when(m.first_start_unix_ns),
        last: when(m.last_end_unix_ns),
        largest: us_cell(m.largest_ns),
    }
}

/// The monitors page.
pub fn monitors_page(
    store: &str,
    rows: &[crate::store::windows::MonitorRow],
) -> Result<String, Failure> {
    render(&View {
        kind: "monitors",
        title: "rtscope: monitors".into(),
        tool: tool(),
        store: store.to_string(),
        monitors: rows.iter().map(monitor_cells).collect(),
        ..Default::default()
    })
}

/// A monitor's page: its plot, its hosts, its newest windows, and what
/// the live script needs (the events' and the plot's addresses).
pub fn monitor_page(store: &str, m: &MonitorPage) -> Result<String, Failure> {
    let view = MonitorView {
        name: m.name.to_string(),
        hosts: m.rows.iter().map(monitor_cells).collect(),
        one_host: m.host.is_some(),
        windows: m.newest.clone(),
        table_rows: super::live::TABLE_ROWS,
        plot: m.plot.clone(),
        plot_base: m.plot_base.clone(),
        plot_title: m.plot_title.clone(),
        caption: crate::report::monitor::CAPTION,
        events: m.events.clone(),
        status: m.status.clone(),
    };
    render(&View {
        kind: "monitor",
        title: format!("rtscope: monitor {}", shorten(m.name, 80)),
        tool: tool(),
        store: store.to_string(),
        monitor: Some(view),
        ..Default::default()
    })
}

/// A study of the studies page.
#[derive(Serialize, Debug)]
struct StudyRow {
    name: String,
    name_full: String,
    href: String,
    description: String,
    created: String,
    progress: String,
    running: String,
}

/// A board's own page: its history and newest runs.
#[derive(Serialize, Debug)]
struct BoardView {
    host: String,
    /// The history figure, as an inline `<svg>` (made by the plot
    /// renderer, which escapes its texts).
    svg: Option<String>,
    caption: &'static str,
    total: usize,
    shown: usize,
    /// The list filtered on this host.
    all_href: String,
    rows: Vec<RunCells>,
    monitors: Vec<Link>,
}

fn or_unknown(s: &str) -> String {
    if s.is_empty() {
        "unknown".into()
    } else {
        s.to_string()
    }
}

fn cells(l: &Listed) -> RunCells {
    let r = &l.row;
    let figure = |v| crate::report::runs_text::figure_cell(v, l.quantity);
    let host = or_unknown(&r.host);
    let label = r.label.clone().unwrap_or_else(|| "-".into());
    let kernel = or_unknown(&r.kernel_release);
    let (verdict, verdict_class) = match &l.verdict {
        None => ("-".to_string(), "none"),
        Some((text, o)) => (
            text.clone(),
            match o {
                Outcome::Met => "met",
                Outcome::Missed => "missed",
                Outcome::PossiblyMissed => "possibly",
                Outcome::Unknown => "unknown",
            },
        ),
    };
    RunCells {
        id: r.id,
        href: format!("/runs/{}", r.id),
        state: r.state.name(),
        origin: origin_word(r).to_string(),
        start: if r.started_at_unix_ns > 0 {
            fmt_unix_utc(r.started_at_unix_ns)
                .trim_end_matches(" UTC")
                .to_string()
        } else {
            "unknown".into()
        },
        host: shorten(&host, CELL_CHARS),
        host_full: host,
        label: shorten(&label, CELL_CHARS),
        label_full: label,
        kernel: shorten(&kernel, CELL_CHARS),
        kernel_full: kernel,
        preemption: or_unknown(&r.preemption_model),
        duration: r
            .duration()
            .map_or_else(|| "unknown".into(), fmt_run_length),
        threads: r.threads,
        measures: l.quantity.map_or("-", quantity_word).to_string(),
        p9999: figure(r.p9999()),
        max: figure(r.max_ns.map(crate::record::Stated::Exact)),
        verdict,
        verdict_class,
    }
}

fn tool() -> String {
    format!("rtscope {}", env!("CARGO_PKG_VERSION"))
}

fn render(view: &View) -> Result<String, Failure> {
    Ok(page::render(Page::Serve, view)?)
}

/// The list page of `q`'s runs (`page`: `None` when there is no store).
pub fn list_page(store: &str, q: &ListQuery, page: Option<&ListPage>) -> Result<String, Failure> {
    let given = |k: &str| {
        q.given
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let mut tags: Vec<String> = q
        .given
        .iter()
        .filter(|(k, _)| k == "tag")
        .map(|(_, v)| v.clone())
        .collect();
    tags.push(String::new());
    let total = page.map_or(0, |p| p.total);
    let pages = total.div_ceil(q.per_page).max(1);
    // Links to this list with `key` set to `value` (paging and sorting).
    let with = |key: &str, value: String| {
        let mut pairs: Vec<(String, String)> =
            q.given.iter().filter(|(k, _)| k != key).cloned().collect();
        if key == "sort" {
            pairs.retain(|(k, _)| k != "page");
        }
        pairs.push((key.to_string(), value));
        query::href("/", &pairs)
    };
    let rows: Vec<RunCells> = page
        .map(|p| p.runs.iter().map(cells).collect())
        .unwrap_or_default();
    let first = (q.page - 1).saturating_mul(q.per_page) + 1;
    let empty = match page {
        None => Some(format!(
            "No runs stored in {store} yet: rtscope measure saves every run; rtscope import reads other tools' results."
        )),
        Some(p) if p.total == 0 && q.given.is_empty() => {
            Some(format!("No runs stored in {store} yet."))
        }
        Some(p) if p.total == 0 => Some("No stored run matches these filters.".into()),
        Some(p) if p.runs.is_empty() => {
            Some(format!("Page {} is past the last one ({pages}).", q.page))
        }
        Some(_) => None,
    };
    let list = ListView {
        host: given("host"),
        label: given("label"),
        tags,
        state: given("state"),
        origin: given("origin"),
        kernel: given("kernel"),
        since: given("since"),
        until: given("until"),
        sort: q.sort.name(),
        per_page: q.per_page,
        states: RunState::ALL.map(RunState::name).to_vec(),
        origins: Origin::ALL.map(Origin::name).to_vec(),
        total,
        page: q.page,
        pages,
        first,
        last: first + rows.len().saturating_sub(1),
        prev: (q.page > 1).then(|| with("page", (q.page - 1).min(pages).to_string())),
        next: (q.page < pages).then(|| with("page", (q.page + 1).to_string())),
        by_date: with("sort", Sort::Date.name().into()),
        by_worst: with("sort", Sort::Worst.name().into()),
        empty,
        rows,
    };
    render(&View {
        kind: "list",
        title: "rtscope: stored runs".into(),
        tool: tool(),
        store: store.to_string(),
        list: Some(list),
        ..Default::default()
    })
}

/// The boards page.
pub fn boards_page(store: &str, boards: &[Board]) -> Result<String, Failure> {
    let boards = boards
        .iter()
        .map(|b| {
            let host = or_unknown(&b.host);
            BoardRow {
                host: shorten(&host, CELL_CHARS),
                host_full: host,
                href: board_href(&b.host),
                runs: b.runs,
                last: cells(&b.last),
                monitors: monitor_links(&b.monitors, &b.host),
            }
        })
        .collect();
    render(&View {
        kind: "boards",
        title: "rtscope: boards".into(),
        tool: tool(),
        store: store.to_string(),
        boards,
        ..Default::default()
    })
}

/// The address of `host`'s page.
pub fn board_href(host: &str) -> String {
    format!("/boards/{}", query::encode(host))
}

/// A board's page.
pub fn board_page(store: &str, b: &BoardHistory) -> Result<String, Failure> {
    let host = or_unknown(&b.host);
    let svg = match &b.figure {
        Some(f) => Some(
            crate::report::plot::svg::render_inline(
                f,
                crate::report::plot::Size::REPORT,
                "history",
            )
            .map_err(|e| Failure::Internal(format!("drawing the history: {e}")))?,
        ),
        None => None,
    };
    let board = BoardView {
        host: host.clone(),
        svg,
        caption: crate::report::monitor::HISTORY_CAPTION,
        total: b.total,
        shown: b.runs.len(),
        all_href: query::href("/", &[("host".into(), b.host.clone())]),
        rows: b.runs.iter().map(cells).collect(),
        monitors: monitor_links(&b.monitors, &b.host),
    };
    render(&View {
        kind: "board",
        title: format!("rtscope: {}", shorten(&host, 80)),
        tool: tool(),
        store: store.to_string(),
        board: Some(board),
        ..Default::default()
    })
}

/// The studies page.
pub fn studies_page(store: &str, studies: &[StudyListed]) -> Result<String, Failure> {
    let studies = studies
        .iter()
        .map(|s| StudyRow {
            name: shorten(&s.name, CELL_CHARS),
            name_full: s.name.clone(),
            href: format!("/studies/{}", query::encode(&s.name)),
            description: s.description.clone(),
            created: fmt_unix_utc(s.created_at_unix_ns)
                .trim_end_matches(" UTC")
                .to_string(),
            progress: format!("{} of {} runs done", s.done, s.planned),
            running: s.running.clone().unwrap_or_else(|| "-".into()),
        })
        .collect();
    render(&View {
        kind: "studies",
        title: "rtscope: studies".into(),
        tool: tool(),
        store: store.to_string(),
        studies,
        ..Default::default()
    })
}

/// The page of a failed request.
pub fn error_page(status: StatusCode, message: &str) -> String {
    let view = View {
        kind: "error",
        title: format!("rtscope: {status}"),
        tool: tool(),
        status: status.to_string(),
        message: message.to_string(),
        ..Default::default()
    };
    render(&view).unwrap_or_else(|_| {
        // The template is part of the binary: this is a bug; still answer.
        format!("<!DOCTYPE html><title>{status}</title><p>{status}</p>")
    })
}

/// The site's sections (address, name), in the order its bars link them:
/// the bar of serve's own pages (the template's `serve-nav`) and the bar
/// above a report ([`nav_bar`]).
const SECTIONS: [(&str, &str); 4] = [
    ("/", "runs"),
    ("/boards", "boards"),
    ("/studies", "studies"),
    ("/monitors", "monitors"),
];

/// Every page the server routes, as the 404 page lists them (a test
/// holds it to the router's table).
const PAGES: [&str; 9] = [
    "/ (runs)",
    "/runs/ID",
    "/compare?runs=ID,ID",
    "/boards",
    "/boards/HOST",
    "/studies",
    "/studies/NAME",
    "/monitors",
    "/monitors/NAME",
];

/// The bar of links put above a report: back to the list, the boards,
/// the studies and the monitors ([`SECTIONS`]), and for one run its board's page and its JSON (`runs`:
/// the id and host of each run shown).
pub fn nav_bar(runs: &[(i64, String)]) -> String {
    let mut links: Vec<String> = SECTIONS
        .iter()
        .map(|(href, name)| match *href {
            "/" => r#"<a href="/">&larr; all runs</a>"#.to_string(),
            _ => format!(r#"<a href="{href}">{name}</a>"#),
        })
        .collect();
    if let [(id, host)] = runs {
        if !host.is_empty() {
            links.push(format!(
                r#"<a href="{}">board {}</a>"#,
                crate::text::escape::markup(&board_href(host)),
                crate::text::escape::markup(&shorten(host, CELL_CHARS))
            ));
        }
        links.push(format!(r#"<a href="/api/runs/{id}">run record (JSON)</a>"#));
    }
    format!(
        "<nav id=\"serve-nav\" style=\"max-width:1060px;margin:0 auto;padding:10px 20px 0;font-size:.9rem;display:flex;gap:1.2rem\">{}</nav>\n",
        links.join("")
    )
}

/// `report` with `nav` right after its `<body>` (before everything when
/// it has none).
pub fn with_nav(report: &str, nav: &str) -> String {
    match report.find("<body>") {
        Some(i) => {
            let at = i + "<body>".len();
            format!("{}\n{nav}{}", &report[..at], &report[at..])
        }
        None => format!("{nav}{report}"),
    }
}

fn html(body: String) -> Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        Html(body),
    )
        .into_response()
}

pub(super) fn answer(r: Result<String, Failure>) -> Response {
    match r {
        Ok(body) => html(body),
        Err(f) => f.page(),
    }
}

/// `GET /`
pub async fn list(State(app): State<Arc<App>>, RawQuery(raw): RawQuery) -> Response {
    let q = match query::pairs(raw.as_deref())
        .and_then(|p| query::list_query(&p, crate::sys::clock::unix_now_ns()))
    {
        Ok(q) => q,
        Err(e) => return Failure::from(e).page(),
    };
    answer(
        blocking(app, move |app| {
            let page = app.stores.with(|s| data::list(s, &q, true))?;
            list_page(&app.stores.shown(), &q, page.as_ref())
        })
        .await,
    )
}

/// `GET /boards`
pub async fn boards(State(app): State<Arc<App>>) -> Response {
    answer(
        blocking(app, |app| {
            let boards = app.stores.with(data::boards)?.unwrap_or_default();
            boards_page(&app.stores.shown(), &boards)
        })
        .await,
    )
}

/// `GET /boards/{host}`
pub async fn board(State(app): State<Arc<App>>, Path(host): Path<String>) -> Response {
    answer(
        blocking(app, move |app| {
            let missing = || {
                Failure::NotFound(format!(
                    "no run of a host '{}' in the store: /boards lists them",
                    shorten(&host, 80)
                ))
            };
            let b = app
                .stores
                .with(|s| data::board(s, &host, true))?
                .flatten()
                .ok_or_else(missing)?;
            board_page(&app.stores.shown(), &b)
        })
        .await,
    )
}

/// `GET /studies`
pub async fn studies(State(app): State<Arc<App>>) -> Response {
    answer(
        blocking(app, |app| {
            let studies = app.stores.with(data::studies)?.unwrap_or_default();
            studies_page(&app.stores.shown(), &studies)
        })
        .await,
    )
}

/// `GET /studies/{name}`: the study's report, each run linked to its page.
pub async fn study(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    answer(
        blocking(app, move |app| {
            let page = app.stores.with(|s| data::study(s, &name))?.ok_or_else(|| {
                Failure::NotFound(format!(
                    "no study '{}': the store holds no runs yet",
                    shorten(&name, 80)
                ))
            })?;
            Ok(with_nav(&page, &nav_bar(&[])))
        })
        .await,
    )
}

fn no_store(reference: &str) -> Failure {
    Failure::NotFound(format!("no run '{reference}': the store holds no runs yet"))
}

/// The report of `refs`, with the bar of links.
async fn report(app: Arc<App>, refs: Vec<String>) -> Response {
    answer(
        blocking(app, move |app| {
            let first = refs[0].clone();
            let (ids, page) = app
                .stores
                .with(|s| data::report(s, &refs))?
                .ok_or_else(|| no_store(&first))?;
            Ok(with_nav(&page, &nav_bar(&ids)))
        })
        .await,
    )
}

/// `GET /runs/{id}`
pub async fn run(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    match query::run_ref(&id) {
        Some(r) => report(app, vec![r.to_string()]).await,
        None => not_found_text(&id),
    }
}

fn not_found_text(what: &str) -> Response {
    Failure::NotFound(format!(
        "no run '{}': a run is named by its id (as the list shows it), last, or the start of its uuid",
        shorten(what, 80)
    ))
    .page()
}

/// `GET /compare?runs=ID,ID,…`
pub async fn compare(State(app): State<Arc<App>>, RawQuery(raw): RawQuery) -> Response {
    let refs = match query::pairs(raw.as_deref()).and_then(|p| query::compare_refs(&p)) {
        Ok((refs, false)) => refs,
        // Ticked boxes come as runs=1&runs=2: one address per comparison.
        Ok((refs, true)) => {
            return Redirect::to(&format!("/compare?runs={}", refs.join(","))).into_response();
        }
        Err(e) => return Failure::from(e).page(),
    };
    report(app, refs).await
}

/// Everything else: 404 (a JSON one under /api/).
pub async fn not_found(uri: Uri) -> Response {
    let (last, rest) = PAGES.split_last().expect("pages");
    let f = Failure::NotFound(format!(
        "nothing at {}: the pages are {} and {last}; the API is under /api/ (docs/serve.md)",
        shorten(uri.path(), 200),
        rest.join(", ")
    ));
    if uri.path().starts_with("/api/") {
        f.json()
    } else {
        f.page()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Named;
    use crate::store::RunRow;

    fn row(id: i64, label: &str, host: &str) -> Listed {
        Listed {
            row: RunRow {
                id,
                uuid: format!("{id:032x}"),
                state: RunState::Complete,
                source_kind: Named::from("measured".to_string()),
                source_format: None,
                label: Some(label.into()),
                started_at_unix_ns: 1_700_000_000_000_000_000,
                duration_ns: 10_000_000_000,
                kernel_release: "6.1.0-rt".into(),
                preemption_model: "rt".into(),
                threads: 2,
                samples: 20_000,
                p9999_ns: Some(40_000),
                max_ns: Some(52_300),
                fingerprint_hash: String::new(),
                saved_at_unix_ns: 0,
                host: host.into(),
                head: Default::default(),
            },
            quantity: Some(crate::record::Quantity::WakeupLatency),
            verdict: Some(("deadline met (your \"1 ms\")".into(), Outcome::Met)),
        }
    }

    #[test]
    fn every_value_on_the_list_is_escaped() {
        let q = query::list_query(
            &query::pairs(Some("label=%3Cscript%3Ex&tag=k%3D%22v%22")).unwrap(),
            0,
        )
        .unwrap();
        let page = ListPage {
            total: 1,
            runs: vec![row(7, "<script>alert(1)</script>", "a\"b<i>")],
        };
        let html = list_page("/tmp/<db>", &q, Some(&page)).unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<i>"));
        // minijinja escapes `/` too.
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
        assert!(html.contains("&#x2f;tmp&#x2f;&lt;db&gt;"));
        assert!(!html.contains("k=\"v\""));
        assert!(html.contains(r#"<input type="checkbox" class="pick" name="runs" value="7""#));
        assert!(html.contains(r#"id="compare""#));
        assert!(html.contains(r#"href="&#x2f;runs&#x2f;7""#));
        assert!(!html.contains("<script"), "no script on the page");
    }

    #[test]
    fn the_list_pages_and_sorts_by_links() {
        let q = query::list_query(&query::pairs(Some("host=pi&page=2&per_page=1")).unwrap(), 0)
            .unwrap();
        let page = ListPage {
            total: 3,
            runs: vec![row(2, "b", "pi")],
        };
        let html = list_page("db", &q, Some(&page))
            .unwrap()
            .replace("&#x2f;", "/");
        assert!(
            html.contains("href=\"/?host=pi&amp;per_page=1&amp;page=1\""),
            "{html}"
        );
        assert!(
            html.contains("href=\"/?host=pi&amp;per_page=1&amp;page=3\""),
            "{html}"
        );
        assert!(
            html.contains("href=\"/?host=pi&amp;per_page=1&amp;sort=worst\""),
            "{html}"
        );
    }

    #[test]
    fn the_nav_goes_right_after_the_body() {
        let page = "<html><head></head><body><h1>x</h1></body></html>";
        let out = with_nav(page, &nav_bar(&[(3, "<pi> 4".into())]));
        assert!(out.starts_with("<html><head></head><body>\n<nav id=\"serve-nav\""));
        assert!(out.contains("/api/runs/3"));
        assert!(out.ends_with("<h1>x</h1></body></html>"));
        assert!(
            out.contains(r#"<a href="/boards/%3Cpi%3E%204">board &lt;pi&gt; 4</a>"#),
            "{out}"
        );
        assert!(!nav_bar(&[(1, "a".into()), (2, "a".into())]).contains("/api/"));
        assert!(with_nav("plain", "<nav>").starts_with("<nav>plain"));
    }

    /// Every page of the router is in the 404 page's list, and every
    /// section is in both bars: serve's own pages' and a report's.
    #[test]
    fn the_lists_of_pages_name_every_page_the_server_routes() {
        let routed: Vec<&str> = super::super::server::ROUTES
            .iter()
            .map(|r| r.path)
            .filter(|p| !p.starts_with("/api/") && !p.starts_with("/assets/"))
            .filter(|p| p.matches('/').count() <= 2 && *p != "/favicon.ico")
            .collect();
        assert!(routed.contains(&"/monitors/{name}"), "{routed:?}");
        let listed: Vec<String> = PAGES
            .iter()
            .map(|p| p.split([' ', '?']).next().unwrap().to_string())
            .collect();
        for r in &routed {
            let ok = listed.iter().any(|l| {
                l.split('/').count() == r.split('/').count()
                    && l.split('/')
                        .zip(r.split('/'))
                        .all(|(a, b)| a == b || b.starts_with('{'))
            });
            assert!(ok, "{r} is not in the 404 page's list {PAGES:?}");
        }
        let template = include_str!("../../assets/templates/serve.html");
        let bar = nav_bar(&[]);
        for (href, _) in SECTIONS {
            assert!(
                template.contains(&format!("<a href=\"{href}\"")),
                "{href}: serve's bar"
            );
            assert!(
                bar.contains(&format!("<a href=\"{href}\"")),
                "{href}: {bar}"
            );
        }
    }

    #[test]
    fn the_error_page_escapes_its_message() {
        let html = error_page(StatusCode::NOT_FOUND, "no run '<b>'");
        assert!(html.contains("404 Not Found"));
        assert!(
            html.contains("no run &#x27;&lt;b&gt;&#x27;") || html.contains("&lt;b&gt;"),
            "{html}"
        );
        assert!(!html.contains("<b>"));
    }

    #[test]
    fn a_board_page_escapes_its_host_and_draws_its_history() {
        let runs = vec![row(3, "a", "<b>pi</b>"), row(2, "b", "<b>pi</b>")];
        let mut rows: Vec<crate::store::RunRow> = runs.iter().map(|l| l.row.clone()).collect();
        rows[1].started_at_unix_ns -= 86_400_000_000_000;
        let b = BoardHistory {
            monitors: vec!["<m>".into()],
            host: "<b>pi</b>".into(),
            total: 30,
            figure: crate::report::monitor::history(&rows, "<b>pi</b>: worst case of each run"),
            runs,
        };
        let html = board_page("db", &b).unwrap();
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;b&gt;pi&lt;&#x2f;b&gt;"));
        assert!(html.contains("<svg id=\"history\""), "the history is drawn");
        assert!(
            html.contains(
                "href=\"&#x2f;monitors&#x2f;%3Cm%3E?host=%3Cb%3Epi%3C%2Fb%3E\"\u{3e}&lt;m&gt;</a>"
            ),
            "{html}"
        );
        assert!(html.contains("the newest 2 below"), "{html}");
        assert!(html.contains("host=%3Cb%3Epi%3C%2Fb%3E"), "{html}");
        assert_eq!(board_href("a/../b c"), "/boards/a%2F..%2Fb%20c");
        assert!(!html.contains("<script"));
    }

    #[test]
    fn the_studies_page_links_each_study_by_its_encoded_name() {
        let s = StudyListed {
            name: "<i>x y</i>".into(),
            description: "\"quoted\"".into(),
            created_at_unix_ns: 1_700_000_000_000_000_000,
            done: 1,
            planned: 4,
            running: None,
        };
        let html = studies_page("db", &[s]).unwrap().replace("&#x2f;", "/");
        assert!(!html.contains("<i>"), "{html}");
        assert!(
            html.contains("href=\"/studies/%3Ci%3Ex%20y%3C%2Fi%3E\""),
            "{html}"
        );
        assert!(html.contains("1 of 4 runs done"));
        assert!(html.contains("&quot;quoted&quot;"), "{html}");
        let empty = studies_page("db", &[]).unwrap();
        assert!(empty.contains("No study stored yet"));
    }
}
