//! Queries on stored runs: insert a whole record, write a checkpoint of a
//! running one, list, find by reference, load back (equal to what was
//! written), remove. Every write is one transaction: a run is either
//! stored as it was at a checkpoint, or not changed at all.

use super::codec;
use super::db::{DbError, Param, Row, Tx, Value};
use super::{Result, Store, StoreError, now_unix_ns};
use crate::args;
use crate::kinds::{ClosedSet as _, Named, SourceKind};
use crate::record::{RunRecord, RunStatus, WindowPoint};
use crate::sysinfo::owner::{Liveness, Owner};

/// How a stored run stands (in serde: its name, as [`RunState::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Its process is measuring it now (checkpoints are being written).
    Running,
    Complete,
    /// Its process died before writing the end: it holds the last
    /// checkpoint.
    Interrupted,
}

impl RunState {
    pub fn name(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Complete => "complete",
            RunState::Interrupted => "interrupted",
        }
    }

    /// The state named `s` (`running`, `complete`, `interrupted`).
    pub fn parse(s: &str) -> Option<RunState> {
        Some(match s {
            "running" => RunState::Running,
            "complete" => RunState::Complete,
            "interrupted" => RunState::Interrupted,
            _ => return None,
        })
    }

    /// Every state, in the order the filters list them.
    pub const ALL: [RunState; 3] = [RunState::Running, RunState::Complete, RunState::Interrupted];

    /// [`RunState::parse`] for a filter given by a person (`--state`,
    /// `state=`): an unknown name is refused with the names to use, and
    /// an origin's name (`imported`) with the filter that takes it.
    pub fn parse_named(s: &str) -> Result<RunState, String> {
        RunState::parse(s).ok_or_else(|| {
            let names = or_list(RunState::ALL.map(RunState::name));
            match Origin::parse(s) {
                Some(_) => format!(
                    "'{s}' is an origin, not a state: filter on the origin ({s}); \
                     the states are {names}"
                ),
                None => format!("unknown state '{s}': use {names}"),
            }
        })
    }

    pub fn of_status(s: RunStatus) -> RunState {
        match s {
            RunStatus::Running => RunState::Running,
            RunStatus::Complete => RunState::Complete,
            RunStatus::Interrupted => RunState::Interrupted,
        }
    }

    pub fn status(self) -> RunStatus {
        match self {
            RunState::Running => RunStatus::Running,
            RunState::Complete => RunStatus::Complete,
            RunState::Interrupted => RunStatus::Interrupted,
        }
    }
}

/// Where a stored run came from, beside its [`RunState`] (an imported run
/// is complete): its `source_kind`, by the same name (`runs`' origin
/// column, `--origin`, `origin=`, `/api/runs`' `source_kind`; in serde,
/// that name too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Measured by `rtscope measure` (or `monitor`, a study).
    Measured,
    /// Read by `rtscope import` from another tool's output or a record.
    Imported,
    /// An `rtscope characterize` of the system's calls.
    Characterization,
}

impl Origin {
    /// Every origin, in the order the filters list them.
    pub const ALL: [Origin; 3] = [Origin::Measured, Origin::Imported, Origin::Characterization];

    pub fn name(self) -> &'static str {
        match self {
            Origin::Measured => SourceKind::Measured.name(),
            Origin::Imported => SourceKind::Imported.name(),
            Origin::Characterization => super::characterizations::SOURCE_KIND,
        }
    }

    pub fn parse(s: &str) -> Option<Origin> {
        Origin::ALL.into_iter().find(|o| o.name() == s)
    }

    /// [`Origin::parse`] for a filter given by a person (`--origin`,
    /// `origin=`): an unknown name is refused with the names to use, and
    /// a state's name with the filter that takes it.
    pub fn parse_named(s: &str) -> Result<Origin, String> {
        Origin::parse(s).ok_or_else(|| {
            let names = or_list(Origin::ALL.map(Origin::name));
            match RunState::parse(s) {
                Some(_) => format!(
                    "'{s}' is a state, not an origin: filter on the state ({s}); \
                     the origins are {names}"
                ),
                None => format!("unknown origin '{s}': use {names}"),
            }
        })
    }

    /// The origin of a run whose `source_kind` is `kind` (`None`: a kind
    /// this rtscope does not know, shown as it is stored).
    pub fn of(kind: &Named<SourceKind>) -> Option<Origin> {
        Origin::parse(kind.as_str())
    }
}

/// `a, b or c`.
fn or_list<const N: usize>(names: [&str; N]) -> String {
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The listed facts of a stored run (what `rtscope runs` shows, and
/// `serve`'s JSON of a run, `serve::api::RunJson`). A fact the run's
/// source did not record reads as a placeholder in its field (0, "");
/// the methods ([`RunRow::duration`], [`RunRow::p9999`], …) give it as
/// unknown, and every view reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub uuid: String,
    pub state: RunState,
    pub source_kind: Named<SourceKind>,
    pub source_format: Option<String>,
    pub label: Option<String>,
    pub started_at_unix_ns: u64,
    pub duration_ns: u64,
    pub kernel_release: String,
    pub preemption_model: String,
    pub threads: u32,
    pub samples: u64,
    pub p9999_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub fingerprint_hash: String,
    pub saved_at_unix_ns: u64,
    /// The host the run was measured on (its fingerprint's hostname, or
    /// what `measure --host` or `import --host` recorded); empty when
    /// unknown, listed and selected as [`UNKNOWN_HOST`] ([`host_name`]).
    pub host: String,
    /// What the record says of the facts above that the columns cannot:
    /// which are unknown, and the overflows behind `p9999_ns`.
    pub head: RowHead,
}

/// The facts of a row that only its record's head holds (read from its
/// text, or kept by a [`HostCache`]): the host, whether the duration and
/// the sample count were recorded, and the overall overflows.
#[derive(Clone, Debug, PartialEq)]
pub struct RowHead {
    pub host: String,
    pub duration_known: bool,
    pub count_known: bool,
    pub overflow: Option<crate::record::Overflow>,
}

impl Default for RowHead {
    /// A head that says nothing unknown (a row read without its record).
    fn default() -> RowHead {
        RowHead {
            host: String::new(),
            duration_known: true,
            count_known: true,
            overflow: None,
        }
    }
}

impl RunRow {
    /// The run's duration, `None` when its source did not record it.
    pub fn duration(&self) -> Option<u64> {
        self.head.duration_known.then_some(self.duration_ns)
    }

    /// Its samples, `None` when its source did not count them.
    pub fn samples(&self) -> Option<u64> {
        self.head.count_known.then_some(self.samples)
    }

    /// Its start, `None` when unknown (0).
    pub fn started(&self) -> Option<u64> {
        (self.started_at_unix_ns > 0).then_some(self.started_at_unix_ns)
    }

    /// Its host, `None` when unknown.
    pub fn host(&self) -> Option<&str> {
        Some(self.host.as_str()).filter(|h| !h.is_empty())
    }

    /// Its kernel release, `None` when unknown.
    pub fn kernel(&self) -> Option<&str> {
        Some(self.kernel_release.as_str()).filter(|k| !k.is_empty())
    }

    /// Its preemption model, `None` when unknown (an import's "unknown").
    pub fn preemption(&self) -> Option<&str> {
        Some(self.preemption_model.as_str()).filter(|p| !p.is_empty() && *p != "unknown")
    }

    /// Its overall p99.99, a lower bound when it lies among the overflows
    /// (the record's one rule, [`crate::record::LatencyStats::stated`]).
    pub fn p9999(&self) -> Option<crate::record::Stated<u64>> {
        let stats = crate::record::LatencyStats {
            samples: self.samples,
            max_ns: self.max_ns,
            overflow: self.head.overflow,
            ..Default::default()
        };
        stats.stated(0.9999, self.p9999_ns)
    }

    /// The facts of `head` in this row.
    fn set_head(&mut self, head: RowHead) {
        self.host = head.host.clone();
        self.head = head;
    }
}

const ROW_COLUMNS: &str = "id, uuid, status, source_kind, source_format, label, started_at_unix_ns, \
     duration_ns, kernel_release, preemption_model, threads, samples, p9999_ns, max_ns, \
     fingerprint_hash, saved_at_unix_ns, owner_host, owner_boot_id, owner_pid, owner_start_ticks, \
     record_json";

/// [`ROW_COLUMNS`] with an empty record in the record's place: a row
/// read without its record (tens of kB).
fn light_columns() -> String {
    ROW_COLUMNS.replace("record_json", "CAST('{}' AS TEXT)")
}

/// Every run's row without its record, oldest id first: in SQLite, read
/// from the covering index [`super::schema::SQLITE_READ_INDEXES`] alone.
fn light_list_sql() -> String {
    format!("SELECT {} FROM runs ORDER BY id", light_columns())
}

/// The owner recorded in columns `first..first + 4` of a row (host, boot
/// id, pid, start ticks), if any.
pub(super) fn read_owner(r: &Row, first: usize) -> Result<Option<Owner>, DbError> {
    let host: Option<String> = r.get(first)?;
    let boot_id: Option<String> = r.get(first + 1)?;
    let pid: Option<u32> = r.get(first + 2)?;
    let start_ticks: Option<u64> = r.get(first + 3)?;
    Ok(match (host, boot_id, pid, start_ticks) {
        (Some(host), Some(boot_id), Some(pid), Some(start_ticks)) => Some(Owner {
            host,
            boot_id,
            pid,
            start_ticks,
        }),
        _ => None,
    })
}

/// The state of a run stored as `status`: a running run whose writer is
/// gone (or unknown: written before owners were recorded) is interrupted.
fn state_of(status: &str, owner: Option<&Owner>) -> RunState {
    match RunState::parse(status) {
        Some(RunState::Running) => match owner.map(Owner::liveness) {
            Some(Liveness::Alive) | Some(Liveness::Unknown) => RunState::Running,
            Some(Liveness::Gone) | None => RunState::Interrupted,
        },
        Some(s) => s,
        None => RunState::Interrupted,
    }
}

/// The name a run whose host is unknown (its record holds no host name:
/// an import of a file that does not say it, without `import --host`)
/// is listed and selected by: `runs --host unknown`, `/boards/unknown`.
/// A host really named so is one board with them.
pub const UNKNOWN_HOST: &str = "unknown";

/// The name a run whose record holds the host `recorded` (empty when
/// unknown) is listed and selected by: [`UNKNOWN_HOST`] for an unknown
/// one. The one rule of every host list and lookup.
pub fn host_name(recorded: &str) -> &str {
    if recorded.is_empty() {
        UNKNOWN_HOST
    } else {
        recorded
    }
}

/// Whether a run whose record holds the host `recorded` is one of the
/// host `name` (as `--host`, a `host=` filter or `/boards/NAME` give it).
pub fn is_of_host(recorded: &str, name: &str) -> bool {
    host_name(recorded) == name
}

/// The [`RowHead`] of a stored head (`fingerprint.hostname`, `source`,
/// `duration_ns`, `overall.overflow`), read without decoding the rest of
/// the record; an empty head (`{}`) says nothing unknown.
fn head_of(head_json: &str) -> RowHead {
    use crate::record::{Overflow, RunSource, Unknowable};
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        fingerprint: Fp,
        #[serde(default)]
        source: Option<RunSource>,
        #[serde(default)]
        duration_ns: u64,
        #[serde(default)]
        overall: Overall,
    }
    #[derive(serde::Deserialize, Default)]
    struct Fp {
        #[serde(default)]
        hostname: String,
    }
    #[derive(serde::Deserialize, Default)]
    struct Overall {
        #[serde(default)]
        overflow: Option<Overflow>,
    }
    let Ok(h) = serde_json::from_str::<Head>(head_json) else {
        return RowHead::default();
    };
    // RunRecord::knows's rule, placeholders included: an old import's
    // duration of 0 is unknown.
    let known = |what| match &h.source {
        Some(s) => s.recorded(what),
        None => Some(true),
    };
    RowHead {
        duration_known: known(Unknowable::Duration).unwrap_or(h.duration_ns > 0),
        count_known: known(Unknowable::Count).unwrap_or(true),
        overflow: h.overall.overflow.filter(|o| o.count > 0),
        host: h.fingerprint.hostname,
    }
}

fn read_row(r: &Row) -> Result<RunRow, DbError> {
    let status: String = r.get(2)?;
    let owner = read_owner(r, 16)?;
    let mut row = RunRow {
        id: r.get(0)?,
        uuid: r.get(1)?,
        state: state_of(&status, owner.as_ref()),
        source_kind: r.get::<String>(3)?.into(),
        source_format: r.get(4)?,
        label: r.get(5)?,
        started_at_unix_ns: r.get(6)?,
        duration_ns: r.get(7)?,
        kernel_release: r.get(8)?,
        preemption_model: r.get(9)?,
        threads: r.get(10)?,
        samples: r.get(11)?,
        p9999_ns: r.get(12)?,
        max_ns: r.get(13)?,
        fingerprint_hash: r.get(14)?,
        saved_at_unix_ns: r.get(15)?,
        host: String::new(),
        head: RowHead::default(),
    };
    row.set_head(head_of(&r.get::<String>(20)?));
    Ok(row)
}

/// How a list of runs is ordered; the newest id first among equals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOrder {
    /// Newest start first.
    Date,
    /// Largest worst case first; runs without one last.
    Worst,
}

impl RunOrder {
    pub fn name(self) -> &'static str {
        match self {
            RunOrder::Date => "date",
            RunOrder::Worst => "worst",
        }
    }

    /// `rows` in this order.
    pub fn sort(self, rows: &mut [RunRow]) {
        match self {
            RunOrder::Date => rows.sort_by(|a, b| {
                b.started_at_unix_ns
                    .cmp(&a.started_at_unix_ns)
                    .then(b.id.cmp(&a.id))
            }),
            RunOrder::Worst => rows.sort_by(|a, b| b.max_ns.cmp(&a.max_ns).then(b.id.cmp(&a.id))),
        }
    }

    /// The same order in SQL (both dialects).
    fn sql(self) -> &'static str {
        match self {
            RunOrder::Date => "started_at_unix_ns DESC, id DESC",
            RunOrder::Worst => "max_ns DESC NULLS LAST, id DESC",
        }
    }
}

/// The heads of runs (host, unknowns, overflows: [`RowHead`]) a caller
/// keeps between listings ([`Store::list_filtered_with`]), by run uuid
/// and last save.
pub trait HostCache {
    fn get(&self, uuid: &str, saved_at_unix_ns: u64) -> Option<RowHead>;
    fn put(&self, uuid: &str, saved_at_unix_ns: u64, head: &RowHead);
}

/// Which stored runs to list; every condition given must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFilter {
    /// A glob (`*`, `?`) the whole label matches (no label: matches as
    /// an empty one).
    pub label: Option<String>,
    /// Tags the run has: a key with that value, or (`None`) any value.
    pub tags: Vec<(String, Option<String>)>,
    pub state: Option<RunState>,
    pub origin: Option<Origin>,
    pub host: Option<String>,
    /// A glob (`*`, `?`) the whole kernel release matches.
    pub kernel: Option<String>,
    /// Started at or after.
    pub since_unix_ns: Option<u64>,
    /// Started before.
    pub until_unix_ns: Option<u64>,
}

/// A tag filter that names no key (`--tag`, `tag=`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadTag {
    #[error("--tag {0}: the key before = is empty")]
    EmptyKey(String),
    #[error("--tag needs KEY or KEY=VALUE")]
    Empty,
}

impl RunFilter {
    /// Tag filters as given (`KEY=VALUE`: that value; `KEY`: any value).
    pub fn parse_tags(given: &[String]) -> Result<Vec<(String, Option<String>)>, BadTag> {
        let mut tags = Vec::new();
        for t in given {
            match t.split_once('=') {
                Some(("", _)) => return Err(BadTag::EmptyKey(t.clone())),
                Some((k, v)) => tags.push((k.to_string(), Some(v.to_string()))),
                None if t.is_empty() => return Err(BadTag::Empty),
                None => tags.push((t.clone(), None)),
            }
        }
        Ok(tags)
    }

    /// The conditions as an SQL `WHERE` and its parameters, when every
    /// one is a column's (start times, tags); `None` when one needs what
    /// only the row read says (a glob, the state, the host).
    fn as_sql(&self) -> Option<(String, Vec<Value>)> {
        if self.label.is_some()
            || self.state.is_some()
            || self.host.is_some()
            || self.kernel.is_some()
        {
            return None;
        }
        let mut cond = vec!["1 = 1".to_string()];
        let mut params: Vec<Value> = Vec::new();
        let mut param = |v: Value| {
            params.push(v);
            format!("?{}", params.len())
        };
        if let Some(o) = self.origin {
            cond.push(format!("source_kind = {}", param(o.name().value())));
        }
        if let Some(t) = self.since_unix_ns {
            cond.push(format!("started_at_unix_ns >= {}", param(t.value())));
        }
        if let Some(t) = self.until_unix_ns {
            cond.push(format!("started_at_unix_ns < {}", param(t.value())));
        }
        for (key, value) in &self.tags {
            let mut tag = format!(
                "EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id AND t.key = {}",
                param(key.value())
            );
            if let Some(v) = value {
                tag += &format!(" AND t.value = {}", param(v.value()));
            }
            cond.push(tag + ")");
        }
        Some((cond.join(" AND "), params))
    }

    /// Whether `r` passes every condition but the tags (which the store
    /// checks).
    pub fn keeps(&self, r: &RunRow) -> bool {
        self.label
            .as_deref()
            .is_none_or(|g| glob_match(g, r.label.as_deref().unwrap_or("")))
            && self.state.is_none_or(|s| s == r.state)
            && self
                .origin
                .is_none_or(|o| Origin::of(&r.source_kind) == Some(o))
            && self.host.as_deref().is_none_or(|h| is_of_host(&r.host, h))
            && self
                .kernel
                .as_deref()
                .is_none_or(|g| glob_match(g, &r.kernel_release))
            && self.since_unix_ns.is_none_or(|t| r.started_at_unix_ns >= t)
            && self.until_unix_ns.is_none_or(|t| r.started_at_unix_ns < t)
    }
}

/// Whether all of `text` matches `pattern`: `*` any run of characters,
/// `?` one character, everything else itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut i, mut j) = (0, 0);
    // Where the last `*` was, and where in the text it started matching.
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || (p[i] != '*' && p[i] == t[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// What has been written of each thread's window series: lets a
/// checkpoint write only the points that are new (the last stored point
/// may still have grown, so it is written again).
#[derive(Clone, Debug, Default)]
pub struct WindowCursor {
    threads: Vec<(u64, usize)>,
}

impl Store {
    /// Every stored run, oldest id first.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let what = "listing runs";
        self.db()
            .query(&format!("SELECT {ROW_COLUMNS} FROM runs ORDER BY id"), &[])
            .and_then(|rows| rows.iter().map(read_row).collect())
            .map_err(|e| self.err(what, e))
    }

    /// The stored runs measured on `host` (see [`RunRow::host`]), oldest
    /// id first.
    pub fn list_host(&self, host: &str) -> Result<Vec<RunRow>> {
        Ok(self
            .list()?
            .into_iter()
            .filter(|r| is_of_host(&r.host, host))
            .collect())
    }

    /// [`Store::list_filtered`] for a caller that keeps the runs' hosts
    /// between calls (the web view): a run's host is in its record, whose
    /// text is read only for the runs `hosts` does not know yet (by uuid
    /// and last save), then given to it. The rows are the same.
    pub fn list_filtered_with(
        &self,
        filter: &RunFilter,
        hosts: &dyn HostCache,
    ) -> Result<Vec<RunRow>> {
        let mut rows: Vec<RunRow> = self
            .db()
            .query(&light_list_sql(), &[])
            .and_then(|rows| rows.iter().map(read_row).collect())
            .map_err(|e| self.err("listing runs", e))?;
        self.give_hosts(&mut rows, hosts)?;
        self.keep(rows, filter)
    }

    /// One page of the runs `filter` keeps, in `order`: `take` of them
    /// after the first `skip`, and how many it keeps on all pages. When
    /// every condition of `filter` is a column's (none, start times,
    /// tags; the list's first page), SQL keeps, orders, counts and pages
    /// them and reads the page's rows alone; otherwise every row is read
    /// ([`Store::list_filtered_with`]) and kept here. The same rows either
    /// way.
    pub fn page_filtered_with(
        &self,
        filter: &RunFilter,
        order: RunOrder,
        skip: usize,
        take: usize,
        hosts: &dyn HostCache,
    ) -> Result<(usize, Vec<RunRow>)> {
        let Some((cond, mut params)) = filter.as_sql() else {
            let mut rows = self.list_filtered_with(filter, hosts)?;
            order.sort(&mut rows);
            let total = rows.len();
            return Ok((total, rows.into_iter().skip(skip).take(take).collect()));
        };
        let what = "listing runs";
        let total: i64 = self
            .db()
            .query_one(&format!("SELECT COUNT(*) FROM runs WHERE {cond}"), &params)
            .and_then(|r| r.get(0))
            .map_err(|e| self.err(what, e))?;
        let n = params.len();
        params.push(take.value());
        params.push(skip.value());
        let ids: Vec<i64> = self
            .db()
            .query(
                &format!(
                    "SELECT id FROM runs WHERE {cond} ORDER BY {} LIMIT ?{} OFFSET ?{}",
                    order.sql(),
                    n + 1,
                    n + 2
                ),
                &params,
            )
            .and_then(|rows| rows.iter().map(|r| r.get(0)).collect())
            .map_err(|e| self.err(what, e))?;
        let mut rows = Vec::with_capacity(ids.len());
        if !ids.is_empty() {
            let light = light_columns();
            let marks: Vec<String> = (1..=ids.len()).map(|i| format!("?{i}")).collect();
            let mut by_id: std::collections::HashMap<i64, RunRow> = self
                .db()
                .query(
                    &format!(
                        "SELECT {light} FROM runs WHERE id IN ({})",
                        marks.join(", ")
                    ),
                    &ids.iter().map(|i| i.value()).collect::<Vec<_>>(),
                )
                .and_then(|rows| rows.iter().map(read_row).collect::<Result<Vec<_>, _>>())
                .map_err(|e| self.err(what, e))?
                .into_iter()
                .map(|r| (r.id, r))
                .collect();
            // A run removed between the two reads is left out.
            rows.extend(ids.iter().filter_map(|i| by_id.remove(i)));
        }
        self.give_hosts(&mut rows, hosts)?;
        Ok((usize::try_from(total).unwrap_or(0), rows))
    }

    /// Each row's head ([`RowHead`]: its host, unknowns and overflows):
    /// from `hosts`, else from its record (then given to `hosts`).
    fn give_hosts(&self, rows: &mut [RunRow], hosts: &dyn HostCache) -> Result<()> {
        let what = "listing runs";
        for r in rows {
            let head = match hosts.get(&r.uuid, r.saved_at_unix_ns) {
                Some(h) => h,
                None => {
                    let json: String = self
                        .db()
                        .query_one("SELECT record_json FROM runs WHERE id = ?1", &args![r.id])
                        .and_then(|row| row.get(0))
                        .map_err(|e| self.err(what, e))?;
                    let h = head_of(&json);
                    hosts.put(&r.uuid, r.saved_at_unix_ns, &h);
                    h
                }
            };
            r.set_head(head);
        }
        Ok(())
    }

    /// The stored runs `filter` keeps, oldest id first.
    pub fn list_filtered(&self, filter: &RunFilter) -> Result<Vec<RunRow>> {
        let rows = self.list()?;
        self.keep(rows, filter)
    }

    fn keep(&self, rows: Vec<RunRow>, filter: &RunFilter) -> Result<Vec<RunRow>> {
        let mut tagged: Option<Vec<i64>> = None;
        for (key, value) in &filter.tags {
            let rows = match value {
                Some(v) => self.db().query(
                    "SELECT run_id FROM run_tags WHERE key = ?1 AND value = ?2",
                    &args![key, v],
                ),
                None => self
                    .db()
                    .query("SELECT run_id FROM run_tags WHERE key = ?1", &args![key]),
            }
            .map_err(|e| self.err("listing runs", e))?;
            let ids: Vec<i64> = rows
                .iter()
                .map(|r| r.get(0))
                .collect::<Result<_, _>>()
                .map_err(|e| self.err("listing runs", e))?;
            tagged = Some(match tagged {
                None => ids,
                Some(before) => before.into_iter().filter(|i| ids.contains(i)).collect(),
            });
        }
        Ok(rows
            .into_iter()
            .filter(|r| tagged.as_ref().is_none_or(|t| t.contains(&r.id)))
            .filter(|r| filter.keeps(r))
            .collect())
    }

    /// Give run `id` the label `label` (`None`: no label), in its row and
    /// its record. Refused while the run is measured (its next checkpoint
    /// would write the old label back).
    pub fn relabel(&mut self, id: i64, label: Option<&str>) -> Result<()> {
        let path = self.path().to_path_buf();
        let row = self.row(id)?.ok_or_else(|| StoreError::NoRun {
            reference: id.to_string(),
            path: path.clone(),
        })?;
        if row.state == RunState::Running {
            return Err(StoreError::RelabelRunning { id });
        }
        let err = |e| StoreError::from_db(&path, "relabelling a run", e);
        let mut tx = self.tx("relabelling a run")?;
        let head: String = tx
            .query_one("SELECT record_json FROM runs WHERE id = ?1", &args![id])
            .and_then(|r| r.get(0))
            .map_err(err)?;
        let mut v: serde_json::Value =
            serde_json::from_str(&head).map_err(|e| StoreError::BadRun {
                id,
                path: path.clone(),
                detail: format!("its record: {e}"),
            })?;
        if let Some(o) = v.as_object_mut() {
            match label {
                Some(l) => o.insert("label".into(), l.into()),
                None => o.remove("label"),
            };
        }
        tx.execute(
            "UPDATE runs SET label = ?2, record_json = ?3 WHERE id = ?1",
            &args![id, label.map(str::to_string), v.to_string()],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// The listed facts of run `id`.
    pub fn row(&self, id: i64) -> Result<Option<RunRow>> {
        self.db()
            .query_opt(
                &format!("SELECT {ROW_COLUMNS} FROM runs WHERE id = ?1"),
                &args![id],
            )
            .and_then(|r| r.as_ref().map(read_row).transpose())
            .map_err(|e| self.err("reading a run", e))
    }

    /// The id of the run `reference` names: a number (`rtscope runs`),
    /// `last` / `latest` (the newest), or the start of its uuid (at least
    /// 6 hex digits).
    pub fn resolve(&self, reference: &str) -> Result<i64> {
        let r = reference.trim();
        let none = || StoreError::NoRun {
            reference: reference.to_string(),
            path: self.path().to_path_buf(),
        };
        if r == "last" || r == "latest" {
            let newest: Option<i64> = self
                .db()
                .query_one("SELECT max(id) FROM runs", &[])
                .and_then(|row| row.get(0))
                .map_err(|e| self.err("finding the newest run", e))?;
            return newest.ok_or_else(none);
        }
        if !r.is_empty() && r.len() <= 18 && r.bytes().all(|b| b.is_ascii_digit()) {
            let id: i64 = r.parse().map_err(|_| none())?;
            let found: Option<i64> = self
                .db()
                .query_opt("SELECT id FROM runs WHERE id = ?1", &args![id])
                .and_then(|row| row.map(|r| r.get(0)).transpose())
                .map_err(|e| self.err("finding a run", e))?;
            if let Some(id) = found {
                return Ok(id);
            }
        }
        let mut found = None;
        if (6..=32).contains(&r.len()) && r.bytes().all(|b| b.is_ascii_hexdigit()) {
            let pattern = format!("{}%", r.to_ascii_lowercase());
            let ids = self
                .db()
                .query(
                    "SELECT id FROM runs WHERE uuid LIKE ?1 ORDER BY id LIMIT 2",
                    &args![pattern],
                )
                .and_then(|rows| {
                    rows.iter()
                        .map(|r| r.get::<i64>(0))
                        .collect::<Result<Vec<_>, _>>()
                })
                .map_err(|e| self.err("finding a run", e))?;
            if ids.len() > 1 {
                return Err(StoreError::Ambiguous {
                    reference: reference.to_string(),
                });
            }
            found = ids.first().copied();
        }
        found.ok_or_else(none)
    }

    /// The id of the run with this uuid, if stored.
    pub fn find_uuid(&self, uuid: &str) -> Result<Option<i64>> {
        self.db()
            .query_opt("SELECT id FROM runs WHERE uuid = ?1", &args![uuid])
            .and_then(|r| r.map(|r| r.get(0)).transpose())
            .map_err(|e| self.err("finding a run", e))
    }

    /// Load run `id` back into a record, equal to the one written (its
    /// status is the store's view: a running run whose process is gone is
    /// interrupted).
    pub fn load(&self, id: i64) -> Result<RunRecord> {
        let bad = |detail: String| StoreError::BadRun {
            id,
            path: self.path().to_path_buf(),
            detail,
        };
        let row = self.row(id)?.ok_or_else(|| StoreError::NoRun {
            reference: id.to_string(),
            path: self.path().to_path_buf(),
        })?;
        let json: String = self
            .db()
            .query_one("SELECT record_json FROM runs WHERE id = ?1", &args![id])
            .and_then(|r| r.get(0))
            .map_err(|e| self.err("reading a run", e))?;
        let mut rec: RunRecord =
            serde_json::from_str(&json).map_err(|e| bad(format!("its record: {e}")))?;
        rec.status = row.state.status();
        let threads = self
            .db()
            .query(
                "SELECT thread, histogram, outliers_json FROM thread_data \
                 WHERE run_id = ?1 ORDER BY thread",
                &args![id],
            )
            .map_err(|e| self.err("reading a run", e))?;
        for r in &threads {
            let t: usize = r.get(0).map_err(|e| self.err("reading a run", e))?;
            let blob: Vec<u8> = r.get(1).map_err(|e| self.err("reading a run", e))?;
            let outliers: String = r.get(2).map_err(|e| self.err("reading a run", e))?;
            let tr = rec
                .threads
                .get_mut(t)
                .ok_or_else(|| bad(format!("data of thread {t}, which it does not have")))?;
            tr.histogram.buckets = codec::decode_histogram(&blob, tr.histogram.sub_bucket_bits)
                .map_err(|e| bad(format!("thread {t}: {e}")))?;
            tr.outliers =
                codec::decode_outliers(&outliers).map_err(|e| bad(format!("thread {t}: {e}")))?;
        }
        let windows = self
            .db()
            .query(
                "SELECT thread, seq, count, min_ns, avg_ns, max_ns, p99_ns, missed FROM windows \
                 WHERE run_id = ?1 ORDER BY thread, seq",
                &args![id],
            )
            .map_err(|e| self.err("reading a run", e))?;
        for r in &windows {
            let g =
                |i: usize| -> Result<u64> { r.get(i).map_err(|e| self.err("reading a run", e)) };
            let t = g(0)? as usize;
            let seq = g(1)? as usize;
            let tr = rec
                .threads
                .get_mut(t)
                .ok_or_else(|| bad(format!("windows of thread {t}, which it does not have")))?;
            if seq != tr.windows.count.len() {
                return Err(bad(format!("thread {t}: window {seq} is out of sequence")));
            }
            tr.windows.push(WindowPoint {
                count: g(2)?,
                min_ns: g(3)?,
                avg_ns: g(4)?,
                max_ns: g(5)?,
                p99_ns: g(6)?,
                missed: g(7)?,
            });
        }
        // Checked like every record read back: a damaged row is refused
        // here, not found by the statistics.
        rec.validate()
            .map_err(|e| bad(format!("its record: {e}")))?;
        Ok(rec)
    }

    /// Store a whole record as a new run (one transaction); returns its id.
    pub fn insert(&mut self, rec: &RunRecord) -> Result<i64> {
        Ok(self.insert_all(std::slice::from_ref(rec))?[0])
    }

    /// [`Store::insert_all`] of records whose uuids this store did not
    /// hold when last asked, while another writer may store the same
    /// (eight imports of one file, two hosts pushing one run): the one
    /// rule of a writer that loses that race. When the insert fails and
    /// one of the uuids is there now, the other writer stored it
    /// meanwhile, which is no error: `Ok(None)`, and the caller asks
    /// again what is stored. Any other failure is returned as it is.
    pub fn insert_all_unless_raced(&mut self, recs: &[RunRecord]) -> Result<Option<Vec<i64>>> {
        match self.insert_all(recs) {
            Ok(ids) => Ok(Some(ids)),
            Err(e) => {
                for r in recs {
                    if self.find_uuid(&r.run_uuid)?.is_some() {
                        return Ok(None);
                    }
                }
                Err(e)
            }
        }
    }

    /// Store records as new runs, all in one transaction (all of them, or
    /// none); returns their ids.
    pub fn insert_all(&mut self, recs: &[RunRecord]) -> Result<Vec<i64>> {
        for r in recs {
            r.validate()?;
        }
        let path = self.path().to_path_buf();
        let mut tx = self.tx("starting to save runs")?;
        let mut ids = Vec::with_capacity(recs.len());
        for rec in recs {
            let id = insert_row(&mut tx, rec, None)
                .map_err(|e| StoreError::from_db(&path, "saving a run", e))?;
            let mut cursor = WindowCursor::default();
            write_parts(&mut tx, id, &mut rec.clone(), &mut cursor)
                .map_err(|e| e.into_store(&path))?;
            ids.push(id);
        }
        tx.commit()
            .map_err(|e| StoreError::from_db(&path, "saving runs", e))?;
        Ok(ids)
    }

    /// Remove runs (one transaction: all of them, or none when one is
    /// unknown).
    pub fn remove(&mut self, ids: &[i64]) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::from_db(&path, "removing runs", e);
        let mut tx = self.tx("removing runs")?;
        for id in ids {
            let n = tx
                .execute("DELETE FROM runs WHERE id = ?1", &args![id])
                .map_err(err)?;
            if n == 0 {
                return Err(StoreError::NoRun {
                    reference: id.to_string(),
                    path: path.clone(),
                });
            }
        }
        tx.commit().map_err(err)
    }
}

fn status_name(s: RunStatus) -> &'static str {
    RunState::of_status(s).name()
}

/// Insert the row of a new run (its listed facts and head are written by
/// [`write_parts`]); `owner` is the process that will write its
/// checkpoints.
pub(crate) fn insert_row(
    tx: &mut Tx,
    rec: &RunRecord,
    owner: Option<&Owner>,
) -> Result<i64, DbError> {
    tx.query_one(
        "INSERT INTO runs (uuid, status, source_kind, started_at_unix_ns, duration_ns, \
         kernel_release, preemption_model, threads, samples, fingerprint_hash, record_json, \
         saved_at_unix_ns, owner_host, owner_boot_id, owner_pid, owner_start_ticks) \
         VALUES (?1, ?2, '', 0, 0, '', '', 0, 0, '', '{}', 0, ?3, ?4, ?5, ?6) RETURNING id",
        &args![
            rec.run_uuid,
            status_name(rec.status),
            owner.map(|o| o.host.clone()),
            owner.map(|o| o.boot_id.clone()),
            owner.map(|o| o.pid),
            owner.map(|o| o.start_ticks),
        ],
    )?
    .get(0)
}

/// Mark running runs whose writer is gone as interrupted (they keep all
/// they had at their last checkpoint). Returns how many were marked.
pub(crate) fn mark_interrupted(store: &Store) -> Result<usize> {
    let gone: Vec<i64> = store
        .db()
        .query(
            &format!("SELECT {ROW_COLUMNS} FROM runs WHERE status = 'running'"),
            &[],
        )
        .map_err(|e| store.err("finding running runs", e))?
        .iter()
        .filter_map(|r| read_row(r).ok())
        .filter(|r| r.state == RunState::Interrupted)
        .map(|r| r.id)
        .collect();
    for id in &gone {
        store
            .db()
            .execute(
                "UPDATE runs SET status = 'interrupted' WHERE id = ?1 AND status = 'running'",
                &args![id],
            )
            .map_err(|e| store.err("marking an interrupted run", e))?;
    }
    Ok(gone.len())
}

/// A failure while writing parts of a run.
pub(crate) enum WriteError {
    /// The database refused a statement.
    Db(DbError),
    /// A part of the record cannot be laid out in the store's format
    /// ([`StoreError::Encode`]).
    Encode { what: String, detail: String },
}

impl From<DbError> for WriteError {
    fn from(e: DbError) -> Self {
        WriteError::Db(e)
    }
}

impl WriteError {
    pub(crate) fn into_store(self, path: &std::path::Path) -> StoreError {
        match self {
            WriteError::Db(e) => StoreError::from_db(path, "saving a run", e),
            WriteError::Encode { what, detail } => StoreError::Encode { what, detail },
        }
    }
}

/// Write everything of `rec` into run `id`: listed facts, head, tags,
/// per-thread data, and the window points `cursor` says are new. The
/// cursor is advanced only when the caller commits (it is given back
/// updated; on error it is left as it was).
pub(crate) fn write_parts(
    tx: &mut Tx,
    id: i64,
    rec: &mut RunRecord,
    cursor: &mut WindowCursor,
) -> Result<(), WriteError> {
    let head = codec::head_json(rec).map_err(|e| WriteError::Encode {
        what: "the run".into(),
        detail: e.to_string(),
    })?;
    let rec = &*rec;
    write_head(tx, id, rec, head)?;
    write_tags(tx, id, rec)?;
    write_thread_data(tx, id, rec)?;
    cursor.threads = write_windows(tx, id, rec, cursor)?;
    Ok(())
}

/// The run's row: the facts runs are listed and chosen by, and its head.
fn write_head(tx: &mut Tx, id: i64, rec: &RunRecord, head: String) -> Result<(), WriteError> {
    tx.execute(
        "UPDATE runs SET status = ?2, source_kind = ?3, source_format = ?4, label = ?5, \
         started_at_unix_ns = ?6, duration_ns = ?7, kernel_release = ?8, preemption_model = ?9, \
         threads = ?10, samples = ?11, p9999_ns = ?12, max_ns = ?13, fingerprint_hash = ?14, \
         record_json = ?15, saved_at_unix_ns = ?16 WHERE id = ?1",
        &args![
            id,
            status_name(rec.status),
            rec.source.kind.as_str(),
            rec.source.format,
            rec.label,
            rec.started_at_unix_ns,
            rec.duration_ns,
            rec.fingerprint.kernel_release,
            rec.fingerprint.preemption_model.as_str(),
            rec.threads.len() as u32,
            rec.overall.samples,
            rec.overall.p9999_ns,
            rec.overall.max_ns,
            rec.fingerprint.comparable_hash(),
            head,
            now_unix_ns(),
        ],
    )?;
    Ok(())
}

/// The run's tags, replacing those it had.
fn write_tags(tx: &mut Tx, id: i64, rec: &RunRecord) -> Result<(), WriteError> {
    tx.execute("DELETE FROM run_tags WHERE run_id = ?1", &args![id])?;
    for (k, v) in &rec.tags {
        tx.execute(
            "INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)",
            &args![id, k, v],
        )?;
    }
    Ok(())
}

/// Each thread's histogram and outliers; the rows of threads the run no
/// longer has (and their windows) go.
fn write_thread_data(tx: &mut Tx, id: i64, rec: &RunRecord) -> Result<(), WriteError> {
    for (i, t) in rec.threads.iter().enumerate() {
        let blob = codec::encode_histogram(&t.histogram).map_err(|e| WriteError::Encode {
            what: format!("thread {i} of the run"),
            detail: e.to_string(),
        })?;
        tx.execute(
            "INSERT INTO thread_data (run_id, thread, histogram, outliers_json) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_id, thread) DO UPDATE SET \
             histogram = excluded.histogram, outliers_json = excluded.outliers_json",
            &args![id, i as u32, blob, codec::encode_outliers(&t.outliers)],
        )?;
    }
    tx.execute(
        "DELETE FROM thread_data WHERE run_id = ?1 AND thread >= ?2",
        &args![id, rec.threads.len() as u32],
    )?;
    tx.execute(
        "DELETE FROM windows WHERE run_id = ?1 AND thread >= ?2",
        &args![id, rec.threads.len() as u32],
    )?;
    Ok(())
}

/// The window points `cursor` says are new (the last stored one again,
/// as it may have grown; all of a thread whose series changed shape).
/// Gives back the cursor's next value.
fn write_windows(
    tx: &mut Tx,
    id: i64,
    rec: &RunRecord,
    cursor: &WindowCursor,
) -> Result<Vec<(u64, usize)>, WriteError> {
    let mut next = Vec::with_capacity(rec.threads.len());
    for (i, t) in rec.threads.iter().enumerate() {
        let w = &t.windows;
        let len = w.len();
        let start = match cursor.threads.get(i) {
            Some(&(window_ns, stored)) if window_ns == w.window_ns && stored <= len => {
                stored.saturating_sub(1)
            }
            _ => {
                tx.execute(
                    "DELETE FROM windows WHERE run_id = ?1 AND thread = ?2",
                    &args![id, i as u32],
                )?;
                0
            }
        };
        for seq in start..len {
            let p = w.point(seq);
            tx.execute(
                "INSERT INTO windows (run_id, thread, seq, count, min_ns, avg_ns, max_ns, \
                 p99_ns, missed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
                 ON CONFLICT (run_id, thread, seq) DO UPDATE SET count = excluded.count, \
                 min_ns = excluded.min_ns, avg_ns = excluded.avg_ns, max_ns = excluded.max_ns, \
                 p99_ns = excluded.p99_ns, missed = excluded.missed",
                &args![
                    id, i as u32, seq as u64, p.count, p.min_ns, p.avg_ns, p.max_ns, p.p99_ns,
                    p.missed
                ],
            )?;
        }
        next.push((w.window_ns, len));
    }
    Ok(next)
}

/// For the tests of both backends: stores 23 runs in `s` (an empty
/// store), then checks that a page kept, ordered and counted in SQL
/// ([`Store::page_filtered_with`]) is the page of every row read, kept
/// and sorted here: both orders, ties, runs without a worst case, start
/// times, tags, pages past the end, and a host (kept here). Panics on a
/// difference.
#[doc(hidden)]
pub fn pages_agree(s: &mut Store) {
    struct NoHosts;
    impl HostCache for NoHosts {
        fn get(&self, _: &str, _: u64) -> Option<RowHead> {
            None
        }
        fn put(&self, _: &str, _: u64, _: &RowHead) {}
    }
    for i in 0..23u64 {
        let samples = if i % 5 == 4 {
            vec![]
        } else {
            vec![1000 + (i * 37) % 11]
        };
        let mut r = crate::record::synthetic(&[samples]);
        r.run_uuid = crate::record::new_run_uuid();
        // Ties of start and of worst case, in both orders.
        r.started_at_unix_ns = 1_000 + (i % 7) * 10;
        r.fingerprint.hostname = format!("board{}", i % 3);
        if i % 2 == 0 {
            r.tags.insert("load".into(), "hell".into());
        }
        if i % 3 == 0 {
            r.tags.insert("kernel".into(), format!("k{}", i % 2));
        }
        s.insert(&r).unwrap();
    }
    let tag = |k: &str, v: Option<&str>| (k.to_string(), v.map(str::to_string));
    let filters = [
        RunFilter::default(),
        RunFilter {
            since_unix_ns: Some(1_020),
            until_unix_ns: Some(1_050),
            ..Default::default()
        },
        RunFilter {
            tags: vec![tag("load", None)],
            ..Default::default()
        },
        RunFilter {
            tags: vec![tag("load", Some("hell")), tag("kernel", Some("k0"))],
            since_unix_ns: Some(1_010),
            ..Default::default()
        },
    ];
    let mut worst_none = 0;
    for f in &filters {
        assert!(f.as_sql().is_some());
        for order in [RunOrder::Date, RunOrder::Worst] {
            let mut every = s.list_filtered_with(f, &NoHosts).unwrap();
            order.sort(&mut every);
            worst_none += every.iter().filter(|r| r.max_ns.is_none()).count();
            for (skip, take) in [(0, 50), (0, 5), (5, 5), (20, 5), (100, 5)] {
                let (total, page) = s
                    .page_filtered_with(f, order, skip, take, &NoHosts)
                    .unwrap();
                assert_eq!(total, every.len(), "{f:?}");
                let want: Vec<_> = every.iter().skip(skip).take(take).cloned().collect();
                assert_eq!(page, want, "{f:?} {order:?} {skip} {take}");
            }
        }
    }
    assert!(worst_none > 0, "no run without a worst case was ordered");
    // A condition only the row says is kept here, the same way.
    let by_host = RunFilter {
        host: Some("board1".into()),
        ..Default::default()
    };
    assert!(by_host.as_sql().is_none());
    let (total, page) = s
        .page_filtered_with(&by_host, RunOrder::Worst, 2, 3, &NoHosts)
        .unwrap();
    assert_eq!(total, 8);
    assert!(page.len() == 3 && page.iter().all(|r| r.host == "board1"));
}

#[cfg(test)]
mod tests {
    use super::super::test_util::TempStore;
    use super::*;
    use crate::record::synthetic;

    fn with_windows(mut rec: RunRecord) -> RunRecord {
        for (i, t) in rec.threads.iter_mut().enumerate() {
            for k in 0..(5 + i as u64) {
                t.windows.push(WindowPoint {
                    count: 1000 + k,
                    min_ns: 1000,
                    avg_ns: 2000 + k,
                    max_ns: 9000 + k * 10,
                    p99_ns: 8000,
                    missed: k % 2,
                });
            }
        }
        rec
    }

    #[test]
    fn globs_match_whole_labels() {
        assert!(glob_match("*", ""));
        assert!(glob_match("vanilla*", "vanilla, idle"));
        assert!(glob_match("*idle", "vanilla, idle"));
        assert!(glob_match("v?nilla*e", "vanilla, idle"));
        assert!(glob_match("*a*i*", "vanilla, idle"));
        assert!(!glob_match("vanilla", "vanilla, idle"));
        assert!(!glob_match("*rt*", "vanilla, idle"));
        assert!(glob_match("µ*", "µs"));
    }

    /// A run's list reads the index of its columns, never the table,
    /// whose rows walk their record's overflow pages (a column added to
    /// the row and not to the index fails here).
    #[test]
    fn the_light_list_reads_its_covering_index_alone() {
        let t = TempStore::new("light");
        let mut s = Store::open(&t.db()).unwrap();
        s.insert(&synthetic(&[vec![1000]])).unwrap();
        let plan: Vec<String> = s
            .db()
            .query(&format!("EXPLAIN QUERY PLAN {}", light_list_sql()), &[])
            .unwrap()
            .iter()
            .map(|r| r.get(3).unwrap())
            .collect();
        assert_eq!(
            plan,
            vec!["SCAN runs USING COVERING INDEX runs_listed".to_string()]
        );
    }

    #[test]
    fn a_page_in_sql_is_the_page_of_every_row() {
        let t = TempStore::new("page");
        pages_agree(&mut Store::open(&t.db()).unwrap());
    }

    #[test]
    fn runs_are_filtered_and_relabelled() {
        let t = TempStore::new("filter");
        let mut s = Store::open(&t.db()).unwrap();
        let mut a = synthetic(&[vec![1000]]);
        a.label = Some("vanilla, idle".into());
        a.tags.insert("load".into(), "none".into());
        a.started_at_unix_ns = 1_000;
        a.fingerprint.hostname = "board1".into();
        let mut b = synthetic(&[vec![1000]]);
        b.run_uuid = crate::record::new_run_uuid();
        b.label = Some("rt, hell".into());
        b.tags.insert("load".into(), "hell".into());
        b.tags.insert("kernel".into(), "rt".into());
        b.started_at_unix_ns = 2_000;
        b.fingerprint.hostname = "board2".into();
        let ia = s.insert(&a).unwrap();
        let ib = s.insert(&b).unwrap();
        fn ids(s: &Store, f: RunFilter) -> Vec<i64> {
            s.list_filtered(&f).unwrap().iter().map(|r| r.id).collect()
        }
        assert_eq!(ids(&s, RunFilter::default()), vec![ia, ib]);
        // With the hosts kept by the caller: the same rows; the records
        // are read once, then the hosts come from what was kept.
        struct Kept(std::cell::RefCell<Vec<(String, u64, RowHead)>>);
        impl HostCache for Kept {
            fn get(&self, uuid: &str, saved: u64) -> Option<RowHead> {
                let kept = self.0.borrow();
                let k = kept.iter().find(|(u, s, _)| u == uuid && *s == saved)?;
                Some(RowHead {
                    host: format!("kept {}", k.2.host),
                    ..k.2.clone()
                })
            }
            fn put(&self, uuid: &str, saved: u64, head: &RowHead) {
                self.0.borrow_mut().push((uuid.into(), saved, head.clone()));
            }
        }
        let kept = Kept(Default::default());
        let by_host = RunFilter {
            host: Some("board2".into()),
            ..Default::default()
        };
        assert_eq!(
            s.list_filtered_with(&by_host, &kept).unwrap(),
            s.list_filtered(&by_host).unwrap()
        );
        assert_eq!(kept.0.borrow().len(), 2);
        let again = s.list_filtered_with(&RunFilter::default(), &kept).unwrap();
        let hosts: Vec<&str> = again.iter().map(|r| r.host.as_str()).collect();
        assert_eq!(hosts, ["kept board1", "kept board2"]);
        let label = |g: &str| RunFilter {
            label: Some(g.into()),
            ..Default::default()
        };
        assert_eq!(ids(&s, label("rt*")), vec![ib]);
        let tag = |k: &str, v: Option<&str>| RunFilter {
            tags: vec![(k.into(), v.map(Into::into))],
            ..Default::default()
        };
        assert_eq!(ids(&s, tag("load", Some("none"))), vec![ia]);
        assert_eq!(ids(&s, tag("kernel", None)), vec![ib]);
        assert_eq!(ids(&s, tag("load", None)), vec![ia, ib]);
        let mut both = tag("load", None);
        both.tags.push(("kernel".into(), Some("rt".into())));
        assert_eq!(ids(&s, both), vec![ib]);
        let host = RunFilter {
            host: Some("board1".into()),
            ..Default::default()
        };
        assert_eq!(ids(&s, host), vec![ia]);
        let when = RunFilter {
            since_unix_ns: Some(1_500),
            until_unix_ns: Some(2_001),
            ..Default::default()
        };
        assert_eq!(ids(&s, when), vec![ib]);
        let state = RunFilter {
            state: Some(RunState::Interrupted),
            ..Default::default()
        };
        assert!(ids(&s, state).is_empty());

        s.relabel(ia, Some("vanilla, hell")).unwrap();
        assert_eq!(
            s.row(ia).unwrap().unwrap().label.as_deref(),
            Some("vanilla, hell")
        );
        assert_eq!(s.load(ia).unwrap().label.as_deref(), Some("vanilla, hell"));
        assert_eq!(ids(&s, label("*hell")), vec![ia, ib]);
        s.relabel(ia, None).unwrap();
        assert_eq!(s.load(ia).unwrap().label, None);
        assert!(matches!(s.relabel(99, None), Err(StoreError::NoRun { .. })));
    }

    #[test]
    fn insert_load_is_identical_and_listed() {
        let t = TempStore::new("rt");
        let mut s = Store::open(&t.db()).unwrap();
        let mut rec = with_windows(synthetic(&[vec![1000, 2000, 3_000_000], vec![12_345, 999]]));
        rec.label = Some("vanilla, idle".into());
        rec.tags.insert("load".into(), "none".into());
        rec.overall.avg_ns = Some(1_234.567_890_123);
        let id = s.insert(&rec).unwrap();
        assert_eq!(s.load(id).unwrap(), rec);
        let rows = s.list().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, id);
        assert_eq!(rows[0].threads, 2);
        assert_eq!(rows[0].max_ns, Some(3_000_000));
        assert_eq!(rows[0].label.as_deref(), Some("vanilla, idle"));
        assert_eq!(rows[0].fingerprint_hash, rec.fingerprint.comparable_hash());
        assert_eq!(s.resolve("last").unwrap(), id);
        assert_eq!(s.resolve(&id.to_string()).unwrap(), id);
        assert_eq!(s.resolve(&rec.run_uuid[..8]).unwrap(), id);
        assert!(matches!(s.resolve("999"), Err(StoreError::NoRun { .. })));
        assert!(matches!(s.resolve("bogus"), Err(StoreError::NoRun { .. })));
        // A second insert of the same uuid is refused, nothing changes.
        assert!(s.insert(&rec).is_err());
        assert_eq!(s.list().unwrap().len(), 1);
    }

    #[test]
    fn a_uuid_prefix_of_several_runs_is_ambiguous() {
        let t = TempStore::new("ambiguous");
        let mut s = Store::open(&t.db()).unwrap();
        let mut a = synthetic(&[vec![1000]]);
        a.run_uuid = format!("abcdef01{}", &a.run_uuid[8..]);
        let mut b = a.clone();
        b.run_uuid = format!("abcdef02{}", &a.run_uuid[8..]);
        s.insert(&a).unwrap();
        s.insert(&b).unwrap();
        let e = s.resolve("abcdef").unwrap_err();
        assert!(
            matches!(&e, StoreError::Ambiguous { reference } if reference == "abcdef"),
            "{e:?}"
        );
        assert!(e.to_string().contains("matches several runs"), "{e}");
    }

    #[test]
    fn a_running_run_is_not_relabelled() {
        let t = TempStore::new("relabel-running");
        let mut s = Store::open(&t.db()).unwrap();
        let mut rec = synthetic(&[vec![1000]]);
        rec.status = RunStatus::Running;
        let mut tx = s.tx("t").unwrap();
        let id = insert_row(&mut tx, &rec, Some(&Owner::this_process())).unwrap();
        tx.commit().unwrap();
        let e = s.relabel(id, Some("x")).unwrap_err();
        assert!(
            matches!(e, StoreError::RelabelRunning { id: i } if i == id),
            "{e:?}"
        );
    }

    #[test]
    fn a_histogram_the_blob_cannot_hold_is_an_encode_error() {
        let t = TempStore::new("encode");
        let s = Store::open(&t.db()).unwrap();
        let mut rec = synthetic(&[vec![1000], vec![2000]]);
        rec.threads[1].histogram.encoding = "hdr".into();
        let path = s.path().to_path_buf();
        let mut tx = s.tx("t").unwrap();
        let id = insert_row(&mut tx, &rec, None).unwrap();
        let e = write_parts(&mut tx, id, &mut rec, &mut WindowCursor::default())
            .err()
            .unwrap()
            .into_store(&path);
        assert!(
            matches!(&e, StoreError::Encode { what, .. } if what == "thread 1 of the run"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "cannot store thread 1 of the run: histogram encoding 'hdr' cannot be stored"
        );
    }

    #[test]
    fn remove_is_all_or_nothing_and_ids_are_never_reused() {
        let t = TempStore::new("rm");
        let mut s = Store::open(&t.db()).unwrap();
        let mut a = synthetic(&[vec![1000]]);
        let id1 = s.insert(&a).unwrap();
        a.run_uuid = crate::record::new_run_uuid();
        let id2 = s.insert(&a).unwrap();
        assert!(s.remove(&[id1, 999]).is_err());
        assert_eq!(s.list().unwrap().len(), 2);
        s.remove(&[id2]).unwrap();
        let n: i64 = s
            .db()
            .query_one(
                "SELECT count(*) FROM windows WHERE run_id = ?1",
                &args![id2],
            )
            .and_then(|r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
        a.run_uuid = crate::record::new_run_uuid();
        let id3 = s.insert(&a).unwrap();
        assert!(id3 > id2, "ids are never reused");
    }

    #[test]
    fn incremental_windows_match_a_full_write() {
        let t = TempStore::new("win");
        let mut s = Store::open(&t.db()).unwrap();
        let mut rec = synthetic(&[vec![1000, 2000]]);
        rec.status = RunStatus::Running;
        let path = s.path().to_path_buf();
        let mut tx = s.tx("t").unwrap();
        let id = insert_row(&mut tx, &rec, Some(&Owner::this_process())).unwrap();
        tx.commit().unwrap();
        let mut cursor = WindowCursor::default();
        let step = |s: &mut Store, rec: &RunRecord, cursor: &mut WindowCursor| {
            let mut tx = s.tx("t").unwrap();
            write_parts(&mut tx, id, &mut rec.clone(), cursor)
                .map_err(|e| e.into_store(&path))
                .unwrap();
            tx.commit().unwrap();
            assert_eq!(&s.load(id).unwrap(), rec);
        };
        // Points arrive, the last one grows, then the series is compacted.
        for k in 0..3u64 {
            rec.threads[0].windows.push(WindowPoint {
                count: 10,
                min_ns: 1,
                avg_ns: 2,
                max_ns: 3 + k,
                p99_ns: 3,
                missed: 0,
            });
        }
        step(&mut s, &rec, &mut cursor);
        rec.threads[0].windows.count[2] = 25;
        rec.threads[0].windows.max_ns[2] = 77;
        rec.threads[0].windows.push(WindowPoint {
            count: 5,
            min_ns: 1,
            avg_ns: 2,
            max_ns: 99,
            p99_ns: 3,
            missed: 1,
        });
        step(&mut s, &rec, &mut cursor);
        let w = &mut rec.threads[0].windows;
        w.window_ns *= 2;
        w.compacted = true;
        for col in [
            &mut w.count,
            &mut w.min_ns,
            &mut w.avg_ns,
            &mut w.max_ns,
            &mut w.p99_ns,
            &mut w.missed,
        ] {
            col.truncate(2);
        }
        step(&mut s, &rec, &mut cursor);
        rec.status = RunStatus::Complete;
        step(&mut s, &rec, &mut cursor);
    }
}
