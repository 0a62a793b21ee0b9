//! Saving a run while it is measured. [`RunSaver::begin`] records the run
//! as `running` before the threads start (so a store that cannot be
//! written is found before any measuring); as an [`Observer`] it then
//! writes a checkpoint (histograms, window series, outliers, statistics)
//! every interval, each in one transaction; [`RunSaver::finish`] replaces
//! the last checkpoint with the final record in one transaction.
//!
//! Runs on the control thread only, never on a measuring one: a checkpoint
//! copies the shared statistics (the measuring threads are not disturbed)
//! and writes only the window points that are new. A checkpoint that
//! fails (disk full, store locked) is reported once and retried at the
//! next interval; measuring goes on. With a PostgreSQL store, a
//! checkpoint that cannot reach the server goes to the local spool
//! (`spool`) instead; each later checkpoint tries the server again, and
//! once one reaches it the spooled copy is removed. A run that ends while
//! the server is away stays whole in the spool, and the error says where
//! and how to send it (`rtscope push`). A server that does not answer
//! (hung, stopped) holds a checkpoint at most [`CHECKPOINT_ANSWER`] and
//! the final write at most [`FINAL_RECONNECT`] + [`FINAL_ANSWER`]: the
//! connection is then given up, the record spooled, and it is opened
//! again in the background, never on the path that ends the run.

use super::runs::{self, WindowCursor};
use super::{Result, Store, StoreError};
use crate::engine::build::{self, RecordContext};
use crate::engine::shared::SharedStats;
use crate::engine::{Control, Observer, Plan, RunView, Snapshot, ThreadSnapshot};
use crate::record::{EndReason, RunRecord, RunStatus, WindowSeries};
use crate::sysinfo::owner::Owner;
use std::time::{Duration, Instant};

/// Shortest allowed interval between checkpoints.
pub const MIN_INTERVAL_NS: u64 = 1_000_000_000;
/// How long a checkpoint waits for another writer before skipping.
const CHECKPOINT_BUSY: Duration = Duration::from_secs(1);
/// How long the final write waits for another writer.
const FINAL_BUSY: Duration = Duration::from_secs(30);
/// How long a statement of a checkpoint waits for a PostgreSQL server's
/// answer: a server that takes longer is given up, and the checkpoint
/// goes to the local spool.
pub const CHECKPOINT_ANSWER: Duration = Duration::from_secs(5);
/// The same for the final write.
pub const FINAL_ANSWER: Duration = Duration::from_secs(10);
/// How long the final write waits for a given-up PostgreSQL connection
/// to open again (checkpoints never wait: they open it in the
/// background).
pub const FINAL_RECONNECT: Duration = Duration::from_secs(5);

/// Cost of the checkpoints written so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CheckpointStats {
    pub written: u64,
    pub failed: u64,
    pub total: Duration,
    pub longest: Duration,
}

/// A run being saved in the store.
pub struct RunSaver {
    store: Store,
    id: i64,
    ctx: RecordContext,
    cursor: WindowCursor,
    interval: Duration,
    last: Instant,
    failing: bool,
    notices: Vec<String>,
    stats: CheckpointStats,
    /// The load record so far, kept up to date by the load's session.
    load: Option<std::sync::Arc<std::sync::Mutex<Option<crate::record::LoadRecord>>>>,
    /// Where checkpoints go while the PostgreSQL store is unreachable.
    spool: Option<Spooled>,
    /// `RTSCOPE_CHECKPOINT_LOG`: a file that gets one line per checkpoint
    /// (its time in ns, or `failed`), for bench/pg-writers.py.
    log: Option<std::fs::File>,
}

/// The file named by `RTSCOPE_CHECKPOINT_LOG`, opened for appending.
fn checkpoint_log() -> Option<std::fs::File> {
    let p = std::env::var_os("RTSCOPE_CHECKPOINT_LOG").filter(|v| !v.is_empty())?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .ok()
}

/// The run's copy in the local spool.
struct Spooled {
    store: Store,
    id: i64,
    cursor: WindowCursor,
}

/// Write `rec` over run `id` of `store` in one transaction; `cursor`
/// advances only when it commits.
fn write_to(store: &Store, id: i64, rec: &mut RunRecord, cursor: &mut WindowCursor) -> Result<()> {
    let path = store.path().to_path_buf();
    let mut next = cursor.clone();
    let mut tx = store.tx("writing a checkpoint")?;
    runs::write_parts(&mut tx, id, rec, &mut next).map_err(|e| e.into_store(&path))?;
    tx.commit()
        .map_err(|e| StoreError::from_db(&path, "writing a checkpoint", e))?;
    *cursor = next;
    Ok(())
}

/// The state of a run before its first period: empty statistics.
fn empty_snapshot(plan: &Plan) -> Snapshot {
    let now = crate::sys::clock::unix_now_ns();
    Snapshot {
        threads: plan
            .threads
            .iter()
            .map(|p| ThreadSnapshot {
                plan: p.clone(),
                tid: 0,
                stats: SharedStats::new().snapshot(),
                windows: WindowSeries {
                    window_ns: plan.config.window_ns,
                    ..Default::default()
                },
                exceedances: Default::default(),
            })
            .collect(),
        t0_unix_ns: now,
        elapsed_ns: 0,
        taken_unix_ns: now,
    }
}

impl RunSaver {
    /// Record the run as running in `store` (one transaction), owned by
    /// this process; checkpoints every `interval_ns`.
    pub fn begin(
        store: Store,
        plan: &Plan,
        ctx: &RecordContext,
        interval_ns: u64,
    ) -> Result<RunSaver> {
        if interval_ns < MIN_INTERVAL_NS {
            return Err(StoreError::CheckpointTooShort { interval_ns });
        }
        let rec = build::record(
            plan,
            &empty_snapshot(plan),
            RunStatus::Running,
            EndReason::Unknown,
            None,
            ctx,
        );
        RunSaver::begin_with(store, &rec, ctx, interval_ns)
    }

    /// Record `rec` (a run's state before measuring) as running in
    /// `store`, owned by this process.
    pub fn begin_with(
        store: Store,
        rec: &RunRecord,
        ctx: &RecordContext,
        interval_ns: u64,
    ) -> Result<RunSaver> {
        let owner = Owner::this_process();
        let path = store.path().to_path_buf();
        let mut cursor = WindowCursor::default();
        let mut tx = store.tx("recording the run")?;
        let id = runs::insert_row(&mut tx, rec, Some(&owner))
            .map_err(|e| StoreError::from_db(&path, "recording the run", e))?;
        runs::write_parts(&mut tx, id, &mut rec.clone(), &mut cursor)
            .map_err(|e| e.into_store(&path))?;
        tx.commit()
            .map_err(|e| StoreError::from_db(&path, "recording the run", e))?;
        store.set_busy_timeout(CHECKPOINT_BUSY)?;
        store.set_answer_timeout(CHECKPOINT_ANSWER);
        Ok(RunSaver {
            store,
            id,
            ctx: ctx.clone(),
            cursor,
            interval: Duration::from_nanos(interval_ns),
            last: Instant::now(),
            failing: false,
            notices: Vec::new(),
            stats: CheckpointStats::default(),
            load: None,
            spool: None,
            log: checkpoint_log(),
        })
    }

    /// Include the load record that `shared` holds in every checkpoint.
    pub fn attach_load(
        &mut self,
        shared: std::sync::Arc<std::sync::Mutex<Option<crate::record::LoadRecord>>>,
    ) {
        self.load = Some(shared);
    }

    /// Id of the run in the store.
    pub fn id(&self) -> i64 {
        self.id
    }

    pub fn store_path(&self) -> &std::path::Path {
        self.store.path()
    }

    pub fn stats(&self) -> CheckpointStats {
        self.stats
    }

    /// Write `rec` over the run's last state, in one transaction (what a
    /// checkpoint does after taking the record); `rec` is the same on
    /// return. The cursor advances only when the transaction commits. A
    /// PostgreSQL store that cannot be reached gets it at a later call;
    /// meanwhile it goes to the local spool. A connection that was lost
    /// is opened again in the background: this call does not wait for it.
    pub fn write(&mut self, rec: &mut RunRecord) -> Result<()> {
        self.write_waiting(rec, Duration::ZERO)
    }

    /// [`RunSaver::write`], waiting at most `reconnect` for a lost
    /// connection to open again.
    fn write_waiting(&mut self, rec: &mut RunRecord, reconnect: Duration) -> Result<()> {
        let primary = self
            .store
            .reconnect(reconnect)
            .and_then(|()| write_to(&self.store, self.id, rec, &mut self.cursor));
        match primary {
            Ok(()) => {
                if let Some(sp) = self.spool.take() {
                    let mut st = sp.store;
                    let _ = st.remove(&[sp.id]);
                    self.notices.push(format!(
                        "the PostgreSQL store {} is reachable again: checkpoints are written there again (the spooled copy was removed)",
                        self.store.path().display()
                    ));
                }
                Ok(())
            }
            Err(e)
                if self.store.is_postgres()
                    && (e.is_unreachable()
                        || self.store.connection_lost()
                        || self.spool.is_some()) =>
            {
                self.write_spool(rec, &e).map_err(|_| e)
            }
            Err(e) => Err(e),
        }
    }

    /// Write `rec` into the local spool (creating the run there first).
    fn write_spool(&mut self, rec: &mut RunRecord, why: &StoreError) -> Result<()> {
        if self.spool.is_none() {
            let store = super::spool::open()?;
            let id = match store.find_uuid(&rec.run_uuid)? {
                Some(id) => id,
                None => {
                    let path = store.path().to_path_buf();
                    let mut tx = store.tx("spooling the run")?;
                    let id = runs::insert_row(&mut tx, rec, Some(&Owner::this_process()))
                        .map_err(|e| StoreError::from_db(&path, "spooling the run", e))?;
                    tx.commit()
                        .map_err(|e| StoreError::from_db(&path, "spooling the run", e))?;
                    id
                }
            };
            self.notices.push(format!(
                "{why}; measuring goes on, and checkpoints are kept in the local spool {} (run {id}) until the server is back",
                store.path().display()
            ));
            self.spool = Some(Spooled {
                store,
                id,
                cursor: WindowCursor::default(),
            });
        }
        let sp = self.spool.as_mut().expect("spool opened above");
        write_to(&sp.store, sp.id, rec, &mut sp.cursor)
    }

    /// Write a checkpoint of the run as it is now.
    pub fn checkpoint(&mut self, view: &RunView) -> Result<Duration> {
        let t = Instant::now();
        let mut rec = build::running(view, &self.ctx);
        if let Some(shared) = &self.load {
            rec.load = shared.lock().ok().and_then(|l| l.clone());
        }
        self.write(&mut rec)?;
        Ok(t.elapsed())
    }

    /// The run ended: store its final record, replacing the last
    /// checkpoint (one transaction). Returns the run's id.
    pub fn finish(mut self, rec: &RunRecord) -> Result<i64> {
        rec.validate()?;
        self.store.set_busy_timeout(FINAL_BUSY)?;
        self.store.set_answer_timeout(FINAL_ANSWER);
        self.write_waiting(&mut rec.clone(), FINAL_RECONNECT)?;
        match &self.spool {
            Some(sp) => Err(StoreError::Spooled {
                url: self.store.path().display().to_string(),
                spool: sp.store.path().to_path_buf(),
                id: sp.id,
            }),
            None => Ok(self.id),
        }
    }

    /// The run never started (set-up failed): remove its row.
    pub fn abandon(mut self) {
        let _ = self.store.set_busy_timeout(FINAL_BUSY);
        self.store.set_answer_timeout(FINAL_ANSWER);
        let _ = self.store.remove(&[self.id]);
    }
}

impl Observer for RunSaver {
    fn tick(&mut self, view: &RunView) -> Control {
        if self.last.elapsed() < self.interval {
            return Control::Continue;
        }
        self.last = Instant::now();
        let result = self.checkpoint(view);
        if let Some(f) = self.log.as_mut() {
            use std::io::Write as _;
            let _ = match &result {
                Ok(took) => writeln!(f, "{}", took.as_nanos()),
                Err(_) => writeln!(f, "failed"),
            };
        }
        match result {
            Ok(took) => {
                self.stats.written += 1;
                self.stats.total += took;
                self.stats.longest = self.stats.longest.max(took);
                if self.failing {
                    self.failing = false;
                    self.notices
                        .push("checkpoints are written to the run store again".into());
                }
            }
            Err(e) => {
                self.stats.failed += 1;
                if !self.failing {
                    self.failing = true;
                    self.notices.push(format!(
                        "checkpoint failed ({e}); measuring goes on and the next checkpoint will try again"
                    ));
                }
            }
        }
        Control::Continue
    }

    fn notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::TempStore;
    use super::*;
    use crate::engine::{MeasureConfig, Policy, run};
    use crate::store::RunState;

    #[test]
    fn a_run_is_running_while_measured_then_complete() {
        let t = TempStore::new("ckpt");
        let config = MeasureConfig {
            cpus: Some(vec![0]),
            threads: Some(1),
            interval_ns: 1_000_000,
            duration_ns: Some(2_300_000_000),
            window_ns: 100_000_000,
            policy: Policy::Other,
            lock_memory: false,
            dma_latency_us: None,
            ..Default::default()
        };
        let plan = Plan::build(config, &[0]).unwrap();
        let ctx = RecordContext {
            run_uuid: crate::record::new_run_uuid(),
            label: Some("ckpt".into()),
            ..Default::default()
        };
        let mut saver =
            RunSaver::begin(Store::open(&t.db()).unwrap(), &plan, &ctx, 1_000_000_000).unwrap();
        let id = saver.id();
        {
            let s = Store::open(&t.db()).unwrap();
            assert_eq!(s.row(id).unwrap().unwrap().state, RunState::Running);
        }
        let out = run(&plan, &mut saver).unwrap();
        assert!(saver.stats().written >= 1, "{:?}", saver.stats());
        // The last checkpoint holds what was measured up to it.
        let mid = Store::open(&t.db()).unwrap().load(id).unwrap();
        assert_eq!(mid.status, RunStatus::Running);
        assert!(mid.overall.samples >= 900, "{}", mid.overall.samples);
        mid.validate().unwrap();
        let mut ctx = ctx;
        ctx.warnings = out.warnings.clone();
        let rec = build::record(
            &plan,
            &out.snapshot,
            RunStatus::Complete,
            out.end_reason,
            Some(out.ended_unix_ns),
            &ctx,
        );
        assert_eq!(saver.finish(&rec).unwrap(), id);
        let s = Store::open(&t.db()).unwrap();
        assert_eq!(s.load(id).unwrap(), rec);
        assert_eq!(s.row(id).unwrap().unwrap().state, RunState::Complete);
    }

    #[test]
    fn too_short_an_interval_is_refused() {
        let t = TempStore::new("ckpt-short");
        let plan = Plan::build(
            MeasureConfig {
                cpus: Some(vec![0]),
                threads: Some(1),
                ..Default::default()
            },
            &[0],
        )
        .unwrap();
        let e = RunSaver::begin(
            Store::open(&t.db()).unwrap(),
            &plan,
            &RecordContext::default(),
            100_000_000,
        )
        .err()
        .unwrap();
        assert!(
            matches!(
                e,
                StoreError::CheckpointTooShort {
                    interval_ns: 100_000_000
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("below the 1s minimum"), "{e}");
    }
}
