//! Running a study: store it (or find it again), take it (one runner at a
//! time), then measure, in the study's order, every run the running kernel owes, one
//! [`Session`] each. Before a run starts its attempt is in the store;
//! when it ends the attempt says how. A signal ends the current run early
//! (kept as interrupted, redone by `resume`) and stops the study. An
//! isolation a killed runner held is put back by the command layer before
//! the study's cells are checked (`tune::session::revert_left`).

use super::StudyError;
use super::check::cell_request;
use super::matrix;
use super::spec::Spec;
use super::state::{SlotState, Study};
use crate::engine::Fanout;
use crate::engine::Observer;
use crate::measure::{Session, SessionError, Status};
use crate::metrics::MetricsObserver;
use crate::store::Store;
use crate::store::studies::{AttemptState, NewStudy, SlotRow, StudyRow};
use crate::sysinfo::kernel_match::Kernel;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What the runner shows while it goes.
pub trait Display {
    /// A run starts: the `n`th of the `of` this kernel owes, with the
    /// expected time left for all of them (this one included).
    fn starting(&mut self, slot: &SlotRow, n: usize, of: usize, eta_ns: u64);
    /// The observer of the run being measured (a progress bar).
    fn observer(&mut self) -> &mut dyn Observer;
    /// A run ended.
    fn ended(&mut self, slot: &SlotRow, end: &RunEnd);
    /// Something worth saying between runs.
    fn note(&mut self, message: &str);
    /// Where each run's Prometheus metrics go (`--metrics`), if served.
    fn metrics(&self) -> Option<crate::metrics::Feed> {
        None
    }
}

/// How one run of a study ended.
#[derive(Clone, Debug)]
pub enum RunEnd {
    Done {
        run_id: Option<i64>,
        max_ns: Option<u64>,
        p99_ns: Option<u64>,
    },
    /// Cut short by a signal: redone by `study resume`.
    Interrupted,
    /// Could not run or stopped on an error.
    Failed(String),
}

/// What a call to [`run`] did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Runs finished by this call.
    pub finished: usize,
    /// Runs that failed, with why.
    pub failed: Vec<(String, String)>,
    /// A signal stopped the study.
    pub stopped: bool,
    /// Mean time a run took beyond its measuring time (set-up, load,
    /// isolation, store), in ns.
    pub overhead_ns: Option<u64>,
}

/// A random seed for a study's order, from the clock and the pid.
fn fresh_seed() -> u64 {
    let t = crate::sys::clock::unix_now_ns();
    (t ^ (u64::from(std::process::id()) << 32)) & (i64::MAX as u64)
}

/// Store `spec` (read from `text`) as a new study, or find the study of
/// that name stored from the same text.
pub fn create_or_find(
    store: &mut Store,
    spec: &Spec,
    text: &str,
    path: Option<&str>,
    kernel: &Kernel,
) -> Result<StudyRow, StudyError> {
    if let Some(row) = store.study(&spec.name)? {
        if row.file_text == text {
            return Ok(row);
        }
        let s = Study::of_row(store, row, kernel)?;
        return Err(StudyError::NameTaken {
            name: spec.name.clone(),
            store: store.path().display().to_string(),
            done: s.done(),
            total: s.slots.len(),
        });
    }
    let seed = spec.seed.unwrap_or_else(fresh_seed);
    let cells = matrix::cells(spec);
    let slots: Vec<SlotRow> = matrix::schedule(cells.len(), spec.repetitions, spec.order, seed)
        .into_iter()
        .map(|s| SlotRow {
            position: s.position,
            cell: s.cell,
            repetition: s.repetition,
            label: cells[s.cell].label(),
            kernel: cells[s.cell].kernel(&spec.fixed),
        })
        .collect();
    let uuid = crate::record::new_run_uuid();
    store.create_study(&NewStudy {
        uuid: &uuid,
        name: &spec.name,
        file_text: text,
        file_path: path,
        seed,
        slots: &slots,
    })?;
    Ok(store.study(&spec.name)?.expect("the study was just stored"))
}

/// Releases the study when the runner ends, on every path.
struct Claim<'a> {
    store: &'a Store,
    id: i64,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let _ = self.store.release_study(self.id);
    }
}

/// Measure every run of `row` that the running kernel owes, in order,
/// until all are done or `stop` is set. `location` is where `store` is
/// (`--db`; `None`: the default store): each run is saved there.
pub fn run(
    store: &mut Store,
    location: Option<&Path>,
    row: StudyRow,
    display: &mut dyn Display,
    stop: &AtomicBool,
) -> Result<Summary, StudyError> {
    if let Err(o) = store.claim_study(row.id)? {
        return Err(StudyError::Busy {
            name: row.name.clone(),
            pid: o.pid,
            host: o.host,
        });
    }
    let kernel = Kernel::running();
    let store: &Store = store;
    let _claim = Claim { store, id: row.id };
    let study = Study::load(store, Some(&row.name), &kernel)?;
    let todo: Vec<SlotRow> = study
        .slots
        .iter()
        .filter(|s| matches!(s.state, SlotState::ToDo))
        .map(|s| s.slot.clone())
        .collect();
    let duration_ns = study.spec.duration_ns;
    let mut summary = Summary::default();
    let mut overheads: Vec<u64> = Vec::new();
    for (i, slot) in todo.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            summary.stopped = true;
            break;
        }
        let overhead = overheads
            .iter()
            .sum::<u64>()
            .checked_div(overheads.len() as u64)
            .unwrap_or(2_000_000_000);
        let eta = (todo.len() - i) as u64 * (duration_ns + overhead);
        display.starting(slot, i + 1, todo.len(), eta);
        let t0 = Instant::now();
        let end = run_one(store, location, &study, slot, &kernel, display, stop)?;
        let took = t0.elapsed().as_nanos() as u64;
        display.ended(slot, &end);
        match end {
            RunEnd::Done { .. } => {
                summary.finished += 1;
                overheads.push(took.saturating_sub(duration_ns));
            }
            RunEnd::Interrupted => {
                summary.stopped = true;
                break;
            }
            RunEnd::Failed(why) => summary.failed.push((slot.label.clone(), why)),
        }
    }
    if stop.load(Ordering::SeqCst) {
        summary.stopped = true;
    }
    summary.overhead_ns = overheads
        .iter()
        .sum::<u64>()
        .checked_div(overheads.len() as u64);
    Ok(summary)
}

/// Measure one run of the study.
fn run_one(
    store: &Store,
    location: Option<&Path>,
    study: &Study,
    slot: &SlotRow,
    kernel: &Kernel,
    display: &mut dyn Display,
    stop: &AtomicBool,
) -> Result<RunEnd, StudyError> {
    let spec = &study.spec;
    let cell = &study.cells[slot.cell];
    let tags = vec![
        ("study".to_string(), spec.name.clone()),
        ("study-cell".to_string(), (slot.cell + 1).to_string()),
        ("study-repetition".to_string(), slot.repetition.to_string()),
    ];
    let label = format!("{} #{}", cell.label(), slot.repetition);
    let failed = |why: String| -> Result<RunEnd, StudyError> {
        let a = store.begin_attempt(study.row.id, slot.position, None, kernel)?;
        store.end_attempt(a, AttemptState::Failed, Some(&why))?;
        Ok(RunEnd::Failed(why))
    };
    let request = match cell_request(spec, cell, label, &tags, location) {
        Ok(r) => r,
        Err(e) => return failed(crate::text::chain(&e)),
    };
    let session = match Session::prepare(request, stop) {
        Ok(s) => s,
        Err(SessionError::Interrupted | SessionError::StoreInterrupted(_)) => {
            return Ok(RunEnd::Interrupted);
        }
        Err(e) => return failed(crate::text::chain(&e)),
    };
    let uuid = session.context().run_uuid.clone();
    let attempt = store.begin_attempt(study.row.id, slot.position, Some(&uuid), kernel)?;
    let outcome = match display.metrics() {
        Some(feed) => {
            let mut m = MetricsObserver::new(feed, session.plan(), session.context());
            session.run(&mut Fanout::new(vec![display.observer(), &mut m]), stop)
        }
        None => session.run(display.observer(), stop),
    };
    let (state, detail, end) = match outcome {
        Err(e) => {
            let why = crate::text::chain(&e);
            (AttemptState::Failed, Some(why.clone()), RunEnd::Failed(why))
        }
        Ok(_) if stop.load(Ordering::SeqCst) => (
            AttemptState::Interrupted,
            Some("stopped by a signal before the cell's end".to_string()),
            RunEnd::Interrupted,
        ),
        Ok(o) => match o.status() {
            Status::Ok | Status::LimitExceeded => (
                AttemptState::Done,
                None,
                RunEnd::Done {
                    run_id: o.saved.as_ref().map(|s| s.id),
                    max_ns: o.record.overall.max_ns,
                    p99_ns: o.record.overall.p99_ns,
                },
            ),
            Status::NotWritten(f) => {
                let why = format!("the run could not be saved: {}", f.join("; "));
                (AttemptState::Failed, Some(why.clone()), RunEnd::Failed(why))
            }
            Status::ThreadFailed => {
                let why = format!("a measuring thread failed: {}", o.thread_errors.join("; "));
                (AttemptState::Failed, Some(why.clone()), RunEnd::Failed(why))
            }
        },
    };
    store.end_attempt(attempt, state, detail.as_deref())?;
    Ok(end)
}
