//! The store as `rtscope serve` reads it, and what the pages and the API
//! take from it. The store is opened read-only
//! ([`Store::open_existing_read_only_or_stop`]), on the calling (blocking)
//! thread: an SQLite file afresh for every request (cheap, and always
//! current), a PostgreSQL connection kept among a few idle ones and used
//! by one request at a time. A store that does not exist yet is an empty
//! one. Nothing here writes, and a run is only ever found by
//! [`Store::resolve`] on a reference [`super::query::run_ref`] accepted.

use super::query::{ListQuery, Sort};
use super::reply::Failure;
use crate::kinds::SourceKind;
use crate::record::{Quantity, RunRecord};
use crate::report::verdict::{self, Check, Outcome};
use crate::report::{NamedRun, html, name_runs, stored};
use crate::store::runs::{host_name, is_of_host};
use crate::store::{HostCache, RowHead, RunFilter, RunRow, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};

thread_local! {
    /// On a blocking thread at work for a request: the flag set once the
    /// request is given up ([`working_for`]).
    static GIVEN_UP: std::cell::RefCell<Option<Arc<AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// Whether the request this blocking thread works for was given up (its
/// client gone, its deadline past): work made of steps checks it between
/// them and stops, rather than hold the thread for an answer nobody reads.
pub fn given_up() -> bool {
    GIVEN_UP.with(|g| g.borrow().as_ref().is_some_and(|f| f.load(Relaxed)))
}

/// The failure of work given up.
pub fn gave_up() -> Failure {
    Failure::Timeout("the request was given up (its client left or its deadline passed)".into())
}

/// Run `f` on this thread for a request whose giving up sets `flag`
/// ([`given_up`] reads it meanwhile).
pub fn working_for<T>(flag: Arc<AtomicBool>, f: impl FnOnce() -> T) -> T {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            GIVEN_UP.with(|g| g.borrow_mut().take());
        }
    }
    GIVEN_UP.with(|g| *g.borrow_mut() = Some(flag));
    let _clear = Clear;
    f()
}

/// Sets its flag when dropped before [`OnGiveUp::done`]: held by a
/// request's future, it tells the work the request started that the
/// request is gone (the future is dropped at the deadline or when the
/// client leaves).
pub struct OnGiveUp {
    flag: Arc<AtomicBool>,
    armed: bool,
}

impl OnGiveUp {
    pub fn new(flag: Arc<AtomicBool>) -> OnGiveUp {
        OnGiveUp { flag, armed: true }
    }

    /// The work ended with its request still waiting: nothing was given up.
    pub fn done(mut self) {
        self.armed = false;
    }
}

impl Drop for OnGiveUp {
    fn drop(&mut self) {
        if self.armed {
            self.flag.store(true, Relaxed);
        }
    }
}

/// Idle PostgreSQL connections kept at most.
const IDLE_CONNECTIONS: usize = 4;

/// Where the store is, and the idle connections to it.
pub struct Stores {
    path: PathBuf,
    idle: Mutex<Vec<Store>>,
}

impl Stores {
    pub fn new(path: &Path) -> Stores {
        Stores {
            path: path.to_path_buf(),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The store as messages and pages name it (a URL without its
    /// password).
    pub fn shown(&self) -> String {
        crate::redact::url(&self.path.to_string_lossy())
    }

    /// Open the store once, so that a store that cannot be read stops the
    /// server before it listens (a missing one is fine: it is empty).
    pub fn check(&self) -> Result<(), crate::store::StoreError> {
        if let Some(s) = self.open()? {
            self.put_back(s);
        }
        Ok(())
    }

    fn open(&self) -> Result<Option<Store>, crate::store::StoreError> {
        Store::open_existing_read_only_or_stop(&self.path, &AtomicBool::new(false))
    }

    fn put_back(&self, s: Store) {
        if s.is_postgres() && !s.connection_lost() {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < IDLE_CONNECTIONS {
                idle.push(s);
            }
        }
    }

    /// Run `f` on the store (`None`: there is no store yet). Blocks: call
    /// it on a blocking thread.
    pub fn with<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, Failure>,
    ) -> Result<Option<T>, Failure> {
        let taken = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let store = match taken {
            Some(s) => s,
            None => match self.open()? {
                Some(s) => s,
                None => return Ok(None),
            },
        };
        let out = f(&store);
        self.put_back(store);
        out.map(Some)
    }
}

/// A run of the list, with what its page row shows.
#[derive(Clone, Debug)]
pub struct Listed {
    pub row: RunRow,
    /// What its figures measure (`None`: a characterization).
    pub quantity: Option<Quantity>,
    /// Its verdict line ([`verdict::status_line`]) and the deadline's
    /// outcome; `None` for a characterization.
    pub verdict: Option<(String, Outcome)>,
}

/// One page of the list.
#[derive(Clone, Debug)]
pub struct ListPage {
    /// Runs the filters keep, on all pages.
    pub total: usize,
    pub runs: Vec<Listed>,
}

/// The rows `q` keeps, ordered, and the page asked for (`verdicts`: read
/// each of the page's records for its verdict, as the HTML list shows).
pub fn list(s: &Store, q: &ListQuery, verdicts: bool) -> Result<ListPage, Failure> {
    let skip = q.page.saturating_sub(1).saturating_mul(q.per_page);
    let (total, rows) = s.page_filtered_with(&q.filter, q.sort, skip, q.per_page, &Hosts)?;
    let runs = rows
        .into_iter()
        .map(|row| listed(s, row, verdicts))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ListPage { total, runs })
}

fn is_characterization(row: &RunRow) -> bool {
    row.source_kind.as_str() == crate::store::characterizations::SOURCE_KIND
}

/// A map kept between requests (by the whole server process), emptied
/// when it holds `bound` entries.
struct Kept<K, V> {
    map: Mutex<Option<std::collections::HashMap<K, V>>>,
    bound: usize,
}

impl<K: Eq + std::hash::Hash, V: Clone> Kept<K, V> {
    const fn new(bound: usize) -> Self {
        Kept {
            map: Mutex::new(None),
            bound,
        }
    }

    fn get(&self, key: &K) -> Option<V> {
        let m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        m.as_ref()?.get(key).cloned()
    }

    fn put(&self, key: K, value: V) {
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let m = m.get_or_insert_with(Default::default);
        if m.len() >= self.bound {
            m.clear();
        }
        m.insert(key, value);
    }
}

/// Runs [`JUDGED`] keeps (a few hundred bytes each); [`HOSTS`] ten times
/// as many.
const JUDGED_KEPT: usize = 20_000;

/// The heads of the store's runs (host, unknowns, overflows), by uuid and
/// last save: they are in a run's record (tens of kB of text), which a
/// list would otherwise read for every run on every request.
static HOSTS: Kept<(String, u64), RowHead> = Kept::new(JUDGED_KEPT * 10);

/// [`HOSTS`] as the store asks for it.
struct Hosts;

impl HostCache for Hosts {
    fn get(&self, uuid: &str, saved_at_unix_ns: u64) -> Option<RowHead> {
        HOSTS.get(&(uuid.to_string(), saved_at_unix_ns))
    }

    fn put(&self, uuid: &str, saved_at_unix_ns: u64, head: &RowHead) {
        HOSTS.put((uuid.to_string(), saved_at_unix_ns), head.clone());
    }
}

/// What a list row shows of a run that only its record says: what its
/// figures measure, and its verdict line and deadline outcome.
type Judged = (Quantity, (String, Outcome));

/// Runs judged, by uuid, last save and state (a run under way is judged
/// again after each checkpoint): the list's rows cost a record's read
/// once, not on every request.
static JUDGED: Kept<(String, u64, &'static str), Judged> = Kept::new(JUDGED_KEPT);

fn judged(s: &Store, row: &RunRow) -> Result<Judged, Failure> {
    let key = (row.uuid.clone(), row.saved_at_unix_ns, row.state.name());
    if let Some(j) = JUDGED.get(&key) {
        return Ok(j);
    }
    let r = s.load(row.id)?;
    let quantity = Quantity::of(&r);
    let outcome = match quantity {
        Quantity::WakeupLatency => Check::of(&r).outcome(),
        _ => Outcome::Unknown,
    };
    let j = (quantity, (verdict::status_line(&r), outcome));
    JUDGED.put(key, j.clone());
    Ok(j)
}

fn listed(s: &Store, row: RunRow, verdicts: bool) -> Result<Listed, Failure> {
    if is_characterization(&row) {
        return Ok(Listed {
            row,
            quantity: None,
            verdict: None,
        });
    }
    let imported = row.source_kind.is(SourceKind::Imported);
    if !(verdicts || imported) {
        return Ok(Listed {
            row,
            quantity: Some(Quantity::WakeupLatency),
            verdict: None,
        });
    }
    let (quantity, verdict) = judged(s, &row)?;
    Ok(Listed {
        row,
        quantity: Some(quantity),
        verdict: verdicts.then_some(verdict),
    })
}

/// One board (a host of the store): its newest latency run.
#[derive(Clone, Debug)]
pub struct Board {
    pub host: String,
    pub runs: usize,
    pub last: Listed,
    /// The monitors that stored windows of it, in name order.
    pub monitors: Vec<String>,
}

/// Every host of the store with its newest latency run (by start), hosts
/// in name order, each by the name that finds it ([`host_name`]: the
/// runs of an unknown host are the board `unknown`); characterizations
/// are left out.
pub fn boards(s: &Store) -> Result<Vec<Board>, Failure> {
    let mut rows: Vec<RunRow> = s
        .list_filtered_with(&RunFilter::default(), &Hosts)?
        .into_iter()
        .filter(|r| !is_characterization(r))
        .collect();
    Sort::Date.sort(&mut rows);
    let mut hosts: std::collections::BTreeMap<String, (usize, RunRow)> = Default::default();
    for r in rows {
        hosts
            .entry(host_name(&r.host).to_string())
            .and_modify(|(n, _)| *n += 1)
            .or_insert((1, r));
    }
    let monitors = s.monitors()?;
    hosts
        .into_iter()
        .map(|(host, (runs, row))| {
            Ok(Board {
                monitors: monitors_of(&monitors, &host),
                host,
                runs,
                last: listed(s, row, true)?,
            })
        })
        .collect()
}

fn monitors_of(all: &[crate::store::windows::MonitorRow], host: &str) -> Vec<String> {
    all.iter()
        .filter(|m| is_of_host(&m.host, host))
        .map(|m| m.monitor.clone())
        .collect()
}

/// The id of the run `reference` names (already a [`super::query::run_ref`]).
fn resolve(s: &Store, reference: &str) -> Result<i64, Failure> {
    Ok(s.resolve(reference)?)
}

/// The run record of `reference` as `rtscope runs export --json` writes
/// it (passwords kept out of its command line).
pub fn record(s: &Store, reference: &str) -> Result<RunRecord, Failure> {
    let id = resolve(s, reference)?;
    if s.is_characterization(id)? {
        return Err(Failure::NotFound(format!(
            "run {id} is a characterization, not a latency run: its page is /runs/{id}"
        )));
    }
    let mut rec = s.load(id)?;
    rec.source.command_line = crate::redact::command_line(&rec.source.command_line);
    Ok(rec)
}

/// The HTML report of the runs `refs` name, as `rtscope report REFS`
/// writes it: one run's report, or several compared; characterizations
/// among themselves. With the ids the references resolved to, and the
/// host of each.
pub fn report(s: &Store, refs: &[String]) -> Result<(Vec<(i64, String)>, String), Failure> {
    let mut ids = Vec::with_capacity(refs.len());
    for r in refs {
        let id = resolve(s, r)?;
        ids.push((r.clone(), id, s.is_characterization(id)?));
    }
    if ids.iter().all(|(_, _, c)| *c) {
        let cs = ids
            .iter()
            .map(|(_, id, _)| s.load_characterization(*id))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<_> = cs.iter().collect();
        let names: Vec<String> = ids.iter().map(|(r, _, _)| r.clone()).collect();
        let page = crate::characterize::html::render(&refs, &names, None)?;
        let shown = ids
            .iter()
            .zip(&cs)
            .map(|((_, id, _), c)| (*id, c.fingerprint.hostname.clone()))
            .collect();
        return Ok((shown, page));
    }
    if ids.iter().any(|(_, _, c)| *c)
        && let Some((r, _, _)) = ids.iter().find(|(_, _, c)| !*c)
    {
        return Err(Failure::BadRequest(
            crate::runref::RunRefError::Mixed(r.clone()).to_string(),
        ));
    }
    // Each record read, then the page: steps between which a request
    // given up stops.
    let loaded = ids
        .iter()
        .map(|(r, id, _)| match given_up() {
            true => Err(gave_up()),
            false => Ok((r.clone(), s.load(*id)?)),
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let runs: Vec<NamedRun> = name_runs(loaded);
    // Runs of different quantities are refused where `rtscope compare`
    // refuses them, with its words.
    crate::report::compare::same_quantity(&runs).map_err(|e| Failure::BadRequest(e.to_string()))?;
    let views = stored::monitor_views(s, &runs);
    if given_up() {
        return Err(gave_up());
    }
    let page = html::render_with(&runs, None, &views)?;
    let shown = runs
        .iter()
        .zip(&ids)
        .map(|(r, (_, id, _))| (*id, r.record.fingerprint.hostname.clone()))
        .collect();
    Ok((shown, page))
}

/// A study of the store, as the studies page lists it (and
/// `/api/studies` gives it).
#[derive(Clone, Debug, serde::Serialize)]
pub struct StudyListed {
    pub name: String,
    pub description: String,
    pub created_at_unix_ns: u64,
    /// Runs measured to their end, and planned.
    pub done: usize,
    pub planned: usize,
    /// The process running it now (`PID on HOST`), if one does.
    pub running: Option<String>,
}

/// The kernel a study's cells are judged against when served: not the
/// server's (the board measuring it is elsewhere), so a cell that needs a
/// given kernel says it waits for it.
fn no_kernel() -> crate::sysinfo::kernel_match::Kernel {
    crate::sysinfo::kernel_match::Kernel {
        release: "unknown".into(),
        preemption_model: crate::kinds::Named::from("unknown".to_string()),
        cmdline: String::new(),
        isolated_cpus: Vec::new(),
        nohz_full_cpus: Vec::new(),
    }
}

fn study_failure(e: crate::study::StudyError) -> Failure {
    Failure::Internal(format!("reading the study: {e:#}"))
}

/// Every study of the store, oldest first.
pub fn studies(s: &Store) -> Result<Vec<StudyListed>, Failure> {
    let kernel = no_kernel();
    s.studies()?
        .into_iter()
        .map(|row| {
            let running = row
                .running
                .as_ref()
                .map(|o| format!("process {} on {}", o.pid, o.host));
            let study =
                crate::study::state::Study::of_row(s, row, &kernel).map_err(study_failure)?;
            Ok(StudyListed {
                name: study.row.name.clone(),
                description: study.spec.description.clone().unwrap_or_default(),
                created_at_unix_ns: study.row.created_at_unix_ns,
                done: study.done(),
                planned: study.slots.len(),
                running,
            })
        })
        .collect()
}

fn load_study(s: &Store, name: &str) -> Result<crate::study::state::Study, Failure> {
    let Some(row) = s.study(name)? else {
        return Err(Failure::NotFound(format!(
            "no study '{}' in the store: /studies lists them",
            crate::units::shorten(name, 80)
        )));
    };
    crate::study::state::Study::of_row(s, row, &no_kernel()).map_err(study_failure)
}

/// The study `name` as `rtscope study status NAME --json` gives it, but
/// `kernel` (the running one there) `null`: the server's is not the
/// board's.
pub fn study_status(s: &Store, name: &str) -> Result<serde_json::Value, Failure> {
    let study = load_study(s, name)?;
    let mut v = crate::study::status::json(s, &study, &no_kernel())?;
    if let Some(k) = v.get_mut("kernel") {
        *k = serde_json::Value::Null;
    }
    Ok(v)
}

/// The report of the study `name`, as `rtscope study report` writes it,
/// each finished run linked to its page.
pub fn study(s: &Store, name: &str) -> Result<String, Failure> {
    let study = load_study(s, name)?;
    let cells = crate::study::results::collect(s, &study).map_err(study_failure)?;
    let href = |id: i64| format!("/runs/{id}");
    Ok(crate::study::report::render_linked(
        &study,
        &cells,
        Some(&href),
    )?)
}

/// Runs a board's page lists (the newest).
pub const BOARD_RUNS: usize = 20;

/// One board: its newest runs and its history.
#[derive(Clone, Debug)]
pub struct BoardHistory {
    pub host: String,
    /// Its latency runs, on all pages.
    pub total: usize,
    /// The newest [`BOARD_RUNS`], newest first, with their verdicts.
    pub runs: Vec<Listed>,
    /// Its runs' worst cases over time (`None`: no run has one).
    pub figure: Option<crate::report::plot::Figure>,
    /// The monitors that stored windows of it.
    pub monitors: Vec<String>,
}

/// The board `host` (`page`: its newest [`BOARD_RUNS`] with their
/// verdicts and its history, as its page shows them; else all its runs,
/// as the API gives them): `None` when no latency run of it is stored.
pub fn board(s: &Store, host: &str, page: bool) -> Result<Option<BoardHistory>, Failure> {
    let mut rows: Vec<RunRow> = s
        .list_filtered_with(&RunFilter::default(), &Hosts)?
        .into_iter()
        .filter(|r| is_of_host(&r.host, host) && !is_characterization(r))
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    Sort::Date.sort(&mut rows);
    let title = format!("{host}: worst case of each run");
    let figure = page
        .then(|| crate::report::monitor::history(&rows, &title))
        .flatten();
    let total = rows.len();
    let runs = rows
        .into_iter()
        .take(if page { BOARD_RUNS } else { usize::MAX })
        .map(|row| listed(s, row, page))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(BoardHistory {
        monitors: monitors_of(&s.monitors()?, host),
        host: host.to_string(),
        total,
        runs,
        figure,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;
    use crate::store::test_util::TempStore;

    /// A request's future dropped before its work ends sets the flag the
    /// work reads on its thread; one that waited to the end does not; the
    /// flag is the thread's only while it works for the request; a
    /// report given up between its steps stops with 503.
    #[test]
    fn work_given_up_is_told_and_stops() {
        let flag = Arc::new(AtomicBool::new(false));
        OnGiveUp::new(Arc::clone(&flag)).done();
        assert!(!flag.load(Relaxed));
        drop(OnGiveUp::new(Arc::clone(&flag)));
        assert!(flag.load(Relaxed));
        assert!(!given_up(), "no request on this thread");
        assert!(working_for(Arc::clone(&flag), given_up));
        assert!(!given_up(), "cleared after");
        let t = TempStore::new("serve-given-up");
        let mut s = Store::open(&t.db()).unwrap();
        s.insert(&synthetic(&[vec![5_000, 6_000]])).unwrap();
        let refs = ["1".to_string()];
        let f = working_for(Arc::clone(&flag), || report(&s, &refs)).unwrap_err();
        assert_eq!(f.status(), axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert!(f.text().contains("given up"), "{}", f.text());
        let fresh = Arc::new(AtomicBool::new(false));
        assert!(working_for(fresh, || report(&s, &refs)).is_ok());
    }

    /// A run's list verdict is read once, and read again when the run
    /// was saved again (a checkpoint of a run under way).
    #[test]
    fn a_judged_run_is_judged_again_once_saved_again() {
        let t = TempStore::new("serve-judged");
        let mut s = Store::open(&t.db()).unwrap();
        let mut a = synthetic(&[vec![20_000, 30_000]]);
        a.run_uuid = "5e1f0000000000000000000000000001".into();
        let mut b = synthetic(&[vec![20_000, 5_000_000]]);
        b.run_uuid = "5e1f0000000000000000000000000002".into();
        let met = s.insert(&a).unwrap();
        let missed = s.insert(&b).unwrap();
        let rows = s.list().unwrap();
        let row = |id: i64| rows.iter().find(|r| r.id == id).unwrap().clone();
        let first = judged(&s, &row(met)).unwrap();
        assert_eq!(first.1.1, Outcome::Met);
        // The same run, saved since: its row now reads the other record
        // (as a checkpoint would have changed it): judged afresh.
        let mut later = row(met);
        later.id = missed;
        assert_eq!(
            judged(&s, &later).unwrap().1.1,
            Outcome::Met,
            "same save: kept"
        );
        later.saved_at_unix_ns += 1;
        assert_eq!(judged(&s, &later).unwrap().1.1, Outcome::Missed);
        let listed = listed(&s, row(missed), true).unwrap();
        assert_eq!(listed.verdict.unwrap().1, Outcome::Missed);
    }

    /// A run whose host is unknown (an import without --host of a file
    /// that names none) is the board `unknown`: /boards lists it by that
    /// name, links to /boards/unknown, which finds it, and so does the
    /// list's host=unknown; a host really named so is the same board.
    #[test]
    fn the_runs_of_an_unknown_host_are_the_board_unknown() {
        let t = TempStore::new("serve-unknown-host");
        let mut s = Store::open(&t.db()).unwrap();
        let mut a = synthetic(&[vec![20_000]]);
        a.run_uuid = "b0a4d000000000000000000000000001".into();
        a.fingerprint.hostname = String::new();
        let mut b = synthetic(&[vec![20_000]]);
        b.run_uuid = "b0a4d000000000000000000000000002".into();
        b.fingerprint.hostname = "pi".into();
        let mut c = synthetic(&[vec![20_000]]);
        c.run_uuid = "b0a4d000000000000000000000000003".into();
        c.fingerprint.hostname = "unknown".into();
        let ia = s.insert(&a).unwrap();
        let ib = s.insert(&b).unwrap();
        let ic = s.insert(&c).unwrap();
        let boards = boards(&s).unwrap();
        let names: Vec<(&str, usize)> = boards.iter().map(|b| (b.host.as_str(), b.runs)).collect();
        assert_eq!(names, [("pi", 1), ("unknown", 2)]);
        assert_eq!(
            super::super::pages::board_href(&boards[1].host),
            "/boards/unknown"
        );
        let ids = |host: &str| -> Vec<i64> {
            let mut ids: Vec<i64> = board(&s, host, false)
                .unwrap()
                .map(|b| b.runs.iter().map(|l| l.row.id).collect())
                .unwrap_or_default();
            ids.sort();
            ids
        };
        assert_eq!(ids("unknown"), [ia, ic]);
        assert_eq!(ids("pi"), [ib]);
        assert!(ids("").is_empty(), "an unknown host is named, not empty");
        let f = RunFilter {
            host: Some("unknown".into()),
            ..Default::default()
        };
        let listed: Vec<i64> = s.list_filtered(&f).unwrap().iter().map(|r| r.id).collect();
        assert_eq!(listed, [ia, ic]);
        assert_eq!(
            s.list_host("unknown")
                .unwrap()
                .iter()
                .map(|r| r.id)
                .collect::<Vec<_>>(),
            [ia, ic]
        );
    }
}
