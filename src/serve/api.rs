//! The JSON API under `/api/`: `/api/runs` (the list with the same
//! filters, sort and paging as the page, rows as the store lists them),
//! `/api/runs/{id}` (the run record, the JSON of `rtscope runs export
//! --json`, schema: `rtscope schema`), `/api/boards` (one object per
//! host), `/api/boards/{host}` (all its runs, newest first: its history),
//! `/api/studies` and `/api/studies/{name}` (as `rtscope study status
//! --json`). Errors are `{"error": TEXT}` with the status a page would
//! get.

use super::data::{self, Board};
use super::query;
use super::reply::Failure;
use super::server::{App, blocking};
use crate::record::Stated;
use crate::store::RunRow;
use axum::extract::{Path, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::sync::Arc;

/// A stored run's listed facts: the store's row (`RunRow`, its state and
/// source kind by name) and its start as RFC 3339 (UTC, to the second),
/// for dashboards. What the run's source did not record is `null`, never
/// a 0 or "" a panel would plot or group by; a p99.99 among the run's
/// overflows is `null` with its lower bound in `p9999_at_least_ns`.
#[derive(Serialize, Debug)]
pub struct RunJson {
    pub id: i64,
    pub uuid: String,
    pub state: crate::store::RunState,
    pub source_kind: crate::kinds::Named<crate::kinds::SourceKind>,
    pub source_format: Option<String>,
    pub label: Option<String>,
    pub started_at_unix_ns: Option<u64>,
    pub duration_ns: Option<u64>,
    pub kernel_release: Option<String>,
    pub preemption_model: Option<String>,
    pub threads: u32,
    pub samples: Option<u64>,
    pub p9999_ns: Option<u64>,
    pub p9999_at_least_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub fingerprint_hash: String,
    pub saved_at_unix_ns: u64,
    pub host: Option<String>,
    pub started_at: Option<String>,
}

impl From<&RunRow> for RunJson {
    fn from(r: &RunRow) -> RunJson {
        let p9999 = r.p9999();
        RunJson {
            id: r.id,
            uuid: r.uuid.clone(),
            state: r.state,
            source_kind: r.source_kind.clone(),
            source_format: r.source_format.clone(),
            label: r.label.clone(),
            started_at_unix_ns: r.started(),
            duration_ns: r.duration(),
            kernel_release: r.kernel().map(str::to_string),
            preemption_model: r.preemption().map(str::to_string),
            threads: r.threads,
            samples: r.samples(),
            p9999_ns: p9999.and_then(Stated::exact),
            p9999_at_least_ns: p9999.filter(|v| v.is_bound()).map(Stated::value),
            max_ns: r.max_ns,
            fingerprint_hash: r.fingerprint_hash.clone(),
            saved_at_unix_ns: r.saved_at_unix_ns,
            host: r.host().map(str::to_string),
            started_at: r.started().map(crate::units::fmt_rfc3339),
        }
    }
}

/// `/api/runs`: one page of the list.
#[derive(Serialize, Debug)]
pub struct RunsJson {
    /// Runs the filters keep, on all pages.
    pub total: usize,
    pub page: usize,
    pub per_page: usize,
    pub sort: query::Sort,
    pub runs: Vec<RunJson>,
}

/// `/api/boards`: a host and its newest latency run (`null`: unknown).
#[derive(Serialize, Debug)]
pub struct BoardJson {
    pub host: Option<String>,
    /// Its latency runs in the store.
    pub runs: usize,
    pub kernel_release: Option<String>,
    pub last_run: RunJson,
    /// The last run's verdict line, as its report's title says it.
    pub verdict: Option<String>,
    pub max_ns: Option<u64>,
}

pub(super) fn json(v: &impl Serialize) -> Result<String, Failure> {
    let mut s = serde_json::to_string_pretty(v)
        .map_err(|e| Failure::Internal(format!("serializing the answer: {e}")))?;
    s.push('\n');
    Ok(s)
}

pub(super) fn answer(r: Result<String, Failure>) -> Response {
    match r {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(f) => f.json(),
    }
}

/// `GET /api/runs`
pub async fn runs(State(app): State<Arc<App>>, RawQuery(raw): RawQuery) -> Response {
    let q = match query::pairs(raw.as_deref())
        .and_then(|p| query::list_query(&p, crate::sys::clock::unix_now_ns()))
    {
        Ok(q) => q,
        Err(e) => return Failure::from(e).json(),
    };
    answer(
        blocking(app, move |app| {
            let page = app.stores.with(|s| data::list(s, &q, false))?;
            json(&RunsJson {
                total: page.as_ref().map_or(0, |p| p.total),
                page: q.page,
                per_page: q.per_page,
                sort: q.sort,
                runs: page
                    .iter()
                    .flat_map(|p| p.runs.iter().map(|l| RunJson::from(&l.row)))
                    .collect(),
            })
        })
        .await,
    )
}

/// `GET /api/runs/{id}`
pub async fn run(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    let Some(reference) = query::run_ref(&id).map(str::to_string) else {
        return Failure::NotFound(format!(
            "no run '{}': a run is named by its id, last, or the start of its uuid",
            crate::units::shorten(&id, 80)
        ))
        .json();
    };
    answer(
        blocking(app, move |app| {
            let rec = app
                .stores
                .with(|s| data::record(s, &reference))?
                .ok_or_else(|| {
                    Failure::NotFound(format!("no run '{reference}': the store holds no runs yet"))
                })?;
            json(&record_json(&rec)?)
        })
        .await,
    )
}

/// The record as `rtscope runs export --json` writes it, but for its
/// quantiles among the overflows (an import's samples beyond its
/// histogram, [`crate::record::LatencyStats::quantile`]): each is `null`,
/// its lower bound beside it (`p999_at_least_ns`), in the overall stats,
/// each thread's and each context's.
fn record_json(rec: &crate::record::RunRecord) -> Result<serde_json::Value, Failure> {
    use crate::record::{LatencyStats, QUANTILES};
    let mut v = serde_json::to_value(rec)
        .map_err(|e| Failure::Internal(format!("serializing the run record: {e}")))?;
    let mark = |v: &mut serde_json::Value, s: &LatencyStats| {
        for (name, key, _) in QUANTILES {
            if let Some(Stated::AtLeast(ns)) = s.quantile(name) {
                v[format!("{key}_ns")] = serde_json::Value::Null;
                v[format!("{key}_at_least_ns")] = ns.into();
            }
        }
    };
    mark(&mut v["overall"], &rec.overall);
    for (i, t) in rec.threads.iter().enumerate() {
        mark(&mut v["threads"][i]["stats"], &t.stats);
        for (k, c) in t.contexts.iter().enumerate() {
            mark(&mut v["threads"][i]["contexts"][k]["stats"], &c.stats);
        }
    }
    Ok(v)
}

fn board_json(b: &Board) -> BoardJson {
    BoardJson {
        host: Some(b.host.clone()).filter(|h| !h.is_empty()),
        runs: b.runs,
        kernel_release: b.last.row.kernel().map(str::to_string),
        last_run: RunJson::from(&b.last.row),
        verdict: b.last.verdict.as_ref().map(|(t, _)| t.clone()),
        max_ns: b.last.row.max_ns,
    }
}

/// `GET /api/boards`
pub async fn boards(State(app): State<Arc<App>>) -> Response {
    answer(
        blocking(app, |app| {
            let boards = app.stores.with(data::boards)?.unwrap_or_default();
            json(&boards.iter().map(board_json).collect::<Vec<_>>())
        })
        .await,
    )
}

/// `/api/boards/{host}`: a board's runs, newest first.
#[derive(Serialize, Debug)]
pub struct BoardRunsJson {
    pub host: String,
    pub runs: Vec<RunJson>,
}

/// `GET /api/boards/{host}`
pub async fn board(State(app): State<Arc<App>>, Path(host): Path<String>) -> Response {
    answer(
        blocking(app, move |app| {
            let b = app
                .stores
                .with(|s| data::board(s, &host, false))?
                .flatten()
                .ok_or_else(|| {
                    Failure::NotFound(format!(
                        "no run of a host '{}' in the store",
                        crate::units::shorten(&host, 80)
                    ))
                })?;
            json(&BoardRunsJson {
                host: b.host,
                runs: b.runs.iter().map(|l| RunJson::from(&l.row)).collect(),
            })
        })
        .await,
    )
}

/// `GET /api/studies`
pub async fn studies(State(app): State<Arc<App>>) -> Response {
    answer(
        blocking(app, |app| {
            let studies = app.stores.with(data::studies)?.unwrap_or_default();
            json(&studies)
        })
        .await,
    )
}

/// `GET /api/studies/{name}`: as `rtscope study status NAME --json`.
pub async fn study(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    answer(
        blocking(app, move |app| {
            let v = app
                .stores
                .with(|s| data::study_status(s, &name))?
                .ok_or_else(|| {
                    Failure::NotFound(format!(
                        "no study '{}': the store holds no runs yet",
                        crate::units::shorten(&name, 80)
                    ))
                })?;
            json(&v)
        })
        .await,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose start is unknown (an import of a file without a date)
    /// has `started_at: null`, never 1970; a known one its RFC 3339 time.
    #[test]
    fn an_unknown_start_is_null() {
        let t = crate::store::test_util::TempStore::new("api-start");
        let mut s = crate::store::Store::open(&t.db()).unwrap();
        let mut a = crate::record::synthetic(&[vec![20_000]]);
        a.started_at_unix_ns = 0;
        a.ended_at_unix_ns = None;
        s.insert(&a).unwrap();
        let row = s.list().unwrap().remove(0);
        let v = serde_json::to_value(RunJson::from(&row)).unwrap();
        assert_eq!(v["started_at"], serde_json::Value::Null);
        assert_eq!(v["started_at_unix_ns"], serde_json::Value::Null);
        let mut known = row.clone();
        known.started_at_unix_ns = 1_700_000_000_000_000_000;
        let v = serde_json::to_value(RunJson::from(&known)).unwrap();
        assert_eq!(v["started_at"], "2023-11-14T22:13:20Z");
    }
}
