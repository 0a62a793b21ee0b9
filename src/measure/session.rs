//! [`Session`]: one measurement, prepare → run → finish.
//!
//! `prepare` refuses what cannot work before the system is touched, then
//! starts the load (first, so that the isolation moves it to the
//! housekeeping CPUs like every other task), applies the isolation,
//! builds the plan on the CPUs this process now has, and records the run
//! in the store (a store that cannot be written is found before a long
//! run, not after). `run` measures, with the caller's observer beside the
//! checkpoints and the load, then stops the load and undoes the
//! isolation; `finish` builds the run record, saves it in the store
//! (first: a result file that cannot be written never costs the stored
//! run), then writes the files, always all of them, whatever fails.
//!
//! Whatever was set up is put back on every path: the fields are guards
//! (the load stops, the isolation reverts on drop) and a session dropped
//! before it measured removes its row from the store.

use super::error::SessionError;
use super::explain::Explainer;
use super::outcome::{Outcome, Saved};
use super::request::Request;
use crate::engine::build::{self, RecordContext};
use crate::engine::{self, Fanout, Observer, Plan, preflight};
use crate::load::{LoadSession, Verbosity};
use crate::record::{self, RunRecord, RunStatus};
use crate::store::Store;
use crate::store::checkpoint::RunSaver;
use crate::sysinfo::{SysRoot, cpu, fingerprint};
use crate::tune::session::{self as isolation, Isolation};
use std::sync::atomic::{AtomicBool, Ordering};

fn allowed_cpus() -> Result<Vec<usize>, SessionError> {
    cpu::allowed_cpus().map_err(SessionError::Affinity)
}

/// The CPUs a run may be placed on, judged before it joins a `tune
/// isolate` in force: those allowed now and the isolated ones it will
/// join (which this process may not be allowed yet).
fn allowed_once_joined(request: &Request) -> Result<Vec<usize>, SessionError> {
    let mut allowed = allowed_cpus()?;
    if request.isolate.is_none() {
        allowed.extend(isolation::joinable_cpus());
        allowed.sort_unstable();
        allowed.dedup();
    }
    Ok(allowed)
}

/// One measurement, set up and ready to run.
pub struct Session {
    // Fields drop in this order on an error: the store row goes first,
    // then the isolation is undone, then the load stops.
    saver: Option<RunSaver>,
    explainer: Option<Explainer>,
    isolation: Option<Isolation>,
    load: Option<LoadSession>,
    request: Request,
    plan: Plan,
    ctx: RecordContext,
    /// The measured CPUs' locks: released last, once all is put back.
    _cpu_locks: crate::cpulock::Held,
}

impl Session {
    /// Check `request`, then set everything up: load, isolation, plan,
    /// the run's row in the store. `stop` (set by a signal) ends the
    /// set-up early with [`SessionError::Interrupted`], and the wait for
    /// a PostgreSQL store's server with [`SessionError::StoreInterrupted`].
    pub fn prepare(mut request: Request, stop: &AtomicBool) -> Result<Session, SessionError> {
        request.config.late_above_ns = request.explain_above_ns;
        let (_, load_plan) = Session::refusal(&request)?;
        // Before anything is started: another rtscope on these CPUs
        // refuses this one (or, with --force, is named in a warning).
        let (locks, warnings) = crate::cpulock::lock_cpus(
            &crate::cpulock::lock_dir(),
            &measured_cpus(&request, &allowed_cpus()?),
            request.force_shared_cpus,
        )?;
        for w in &warnings {
            eprintln!("rtscope: warning: {w}");
        }
        let store = match request.checkpoint_ns {
            Some(_) => Some(
                crate::store::locate(request.store.as_deref())
                    .and_then(|p| Store::open_or_stop(&p, stop))
                    .map_err(|e| match e {
                        e if e.is_interrupted() => SessionError::StoreInterrupted(e),
                        e => SessionError::StoreOpen(e),
                    })?,
            ),
            None => None,
        };
        let load = match load_plan {
            Some(mut p) => {
                if !request.config.policy.is_realtime() {
                    // Keep the load below a SCHED_OTHER measurement too.
                    p.nice = 19;
                }
                Some(LoadSession::start(p, Verbosity::Problems)?)
            }
            None => None,
        };
        let mut session = Session::set_up(request, store, load, stop, locks)?;
        session.ctx.warnings.extend(warnings);
        Ok(session)
    }

    /// Refuse `request` if it cannot work (the checks `prepare` makes
    /// before it touches anything), without touching anything.
    /// Unlike `prepare`, a real-time policy this process may not use is
    /// refused here even without a load (a study checks every cell before
    /// its first run; `measure` finds it when its threads start).
    pub fn check(request: &Request) -> Result<(), SessionError> {
        let (plan, _) = Session::refusal(request)?;
        match preflight::realtime_refusal(&plan) {
            Some(why) => Err(SessionError::Privilege(why)),
            None => Ok(()),
        }
    }

    /// The checks made before anything is touched: the plan they judged
    /// (on the CPUs the run may use once it joins an isolation) and the
    /// load's plan.
    fn refusal(request: &Request) -> Result<(Plan, Option<crate::load::LoadPlan>), SessionError> {
        let check = Plan::build(request.config.clone(), &allowed_once_joined(request)?)?;
        request.check_cpus()?;
        // The load runs beside the measurement: under --isolate, on the
        // other CPUs; beside a `tune isolate` in force, on the CPUs this
        // process has (the housekeeping ones).
        let load_plan = request.load.plan(
            &request.load_cpus(&allowed_cpus()?),
            crate::sys::process::getpid(),
        )?;
        if load_plan.is_some()
            && let Some(why) = preflight::realtime_refusal(&check)
        {
            return Err(SessionError::Privilege(why));
        }
        request.check_outputs()?;
        Ok((check, load_plan))
    }

    /// The isolation, the plan on the CPUs it gives, and the run's row.
    fn set_up(
        request: Request,
        store: Option<Store>,
        load: Option<LoadSession>,
        stop: &AtomicBool,
        cpu_locks: crate::cpulock::Held,
    ) -> Result<Session, SessionError> {
        let interrupted = || stop.load(Ordering::SeqCst);
        if interrupted() {
            return Err(SessionError::Interrupted);
        }
        let config = &request.config;
        let isolation = isolation::isolate(
            request.isolate.as_deref(),
            config.cpus.as_deref(),
            config.main_affinity.is_some(),
            stop,
        )?;
        if interrupted() {
            return Err(SessionError::Interrupted);
        }
        // Under isolation this process now sits on the isolated CPUs: the
        // measuring threads are placed there.
        let plan = Plan::build(request.config.clone(), &allowed_cpus()?)?;
        let ctx = RecordContext {
            run_uuid: record::new_run_uuid(),
            command_line: request.command_line.clone(),
            label: request.label.clone(),
            tags: request.tags.clone(),
            max_latency_ns: request.max_latency_ns,
            deadline_ns: request.deadline_ns,
            // Taken after isolation, so it records the tuning in force.
            fingerprint: {
                let mut f = fingerprint::take(&SysRoot::host());
                if let Some(h) = &request.host {
                    f.hostname = h.clone();
                }
                f
            },
            ..Default::default()
        };
        let explainer = match request.explain_above_ns {
            Some(above) => Some(Explainer::start(
                &plan,
                above,
                request.explain_events,
                isolation.as_ref().and_then(|i| i.housekeeping()),
            )?),
            None => None,
        };
        let mut session = Session {
            saver: None,
            explainer,
            isolation,
            load,
            request,
            plan,
            ctx,
            _cpu_locks: cpu_locks,
        };
        if let (Some(store), Some(every)) = (store, session.request.checkpoint_ns) {
            let mut saver = RunSaver::begin(store, &session.plan, &session.ctx, every)?;
            if let Some(l) = &session.load {
                saver.attach_load(l.shared_record());
            }
            session.saver = Some(saver);
        }
        Ok(session)
    }

    /// What will be measured.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The run's identity and context (its uuid, label, fingerprint).
    pub fn context(&self) -> &RecordContext {
        &self.ctx
    }

    /// Measure to the end (duration, loops, break, or `observer` asking
    /// to stop), then stop the load and undo the isolation, and write
    /// every result. `observer` (the caller's display) sees the run beside
    /// the checkpoints and the load; its `ended` is called once measuring
    /// is over, before anything else is printed. `stop` (set by a signal)
    /// ends a wait for the reader of a FIFO given as an output.
    pub fn run(
        mut self,
        observer: &mut dyn Observer,
        stop: &AtomicBool,
    ) -> Result<Outcome, SessionError> {
        let outcome = {
            let mut live = isolation::observe(self.isolation.as_ref(), observer);
            let mut parts: Vec<&mut dyn Observer> = vec![&mut live];
            if let Some(s) = self.saver.as_mut() {
                parts.push(s);
            }
            if let Some(l) = self.load.as_mut() {
                parts.push(l);
            }
            if let Some(x) = self.explainer.as_mut() {
                parts.push(x);
            }
            engine::run(&self.plan, &mut Fanout::new(parts))
        };
        observer.ended();
        if let Some(l) = self.load.as_mut() {
            l.stop();
        }
        // On an error nothing was measured: dropping the session removes
        // the run's row and puts the system back.
        let outcome = outcome?;
        if let Some(mut i) = self.isolation.take() {
            i.revert();
        }
        Ok(self.finish(outcome, stop))
    }

    /// Build the record, save the run, write the files: all of them,
    /// whatever fails (failures are in the outcome). The store comes
    /// first: it holds the run whatever becomes of the files.
    fn finish(mut self, outcome: engine::Outcome, stop: &AtomicBool) -> Outcome {
        let mut rec = self.record(&outcome);
        if let Some(x) = self.explainer.take() {
            let (explained, undo) = x.finish();
            rec.explain = Some(explained);
            if let Some(e) = undo {
                rec.warnings.push(format!("--explain: {e}"));
            }
        }
        let mut failures = Vec::new();
        let mut record_kept = false;
        let mut asked = self.request.outputs.json.is_some();
        let mut saved = None;
        if let Some(s) = self.saver.take() {
            asked = true;
            let store = s.store_path().to_path_buf();
            match s.finish(&rec) {
                Ok(id) => {
                    record_kept = true;
                    saved = Some(Saved { id, store });
                }
                Err(e @ crate::store::StoreError::Spooled { .. }) => {
                    record_kept = true;
                    failures.push(e.to_string());
                }
                Err(e) => failures.push(format!(
                    "the run could not be saved in the store: {e} (its last checkpoint is there, marked interrupted)"
                )),
            }
        }
        let (written, in_file) = self.request.outputs.write(&rec, stop);
        failures.extend(written);
        record_kept |= in_file;
        if asked && !record_kept {
            failures.push(super::outputs::write_fallback(&rec));
        }
        Outcome {
            load_line: self.load.as_ref().map(|l| l.describe()),
            stdout_taken: self.request.outputs.uses_stdout(),
            record: rec,
            saved,
            failures,
            thread_errors: outcome.thread_errors,
        }
    }

    /// The run record of a finished measurement.
    fn record(&self, outcome: &engine::Outcome) -> RunRecord {
        let mut ctx = self.ctx.clone();
        ctx.warnings.extend(outcome.warnings.iter().cloned());
        ctx.warnings.extend(outcome.thread_errors.iter().cloned());
        if let Some(l) = &self.load {
            ctx.warnings.extend(l.run_warnings());
        }
        let mut rec = build::record(
            &self.plan,
            &outcome.snapshot,
            RunStatus::Complete,
            outcome.end_reason,
            Some(outcome.ended_unix_ns),
            &ctx,
        );
        rec.limits.break_event = outcome.break_event;
        rec.load = self.load.as_ref().map(|l| l.record(Some(rec.duration_ns)));
        rec
    }
}

/// The CPUs a request will measure on, as far as can be said before the
/// isolation: `-a`, else the CPUs `--isolate` isolates, else those of a
/// `tune isolate` in force the run joins, else every allowed CPU.
fn measured_cpus(request: &Request, allowed: &[usize]) -> Vec<usize> {
    if let Some(cpus) = request.config.cpus.as_ref().filter(|c| !c.is_empty()) {
        return cpus.clone();
    }
    if let Some(iso) = &request.isolate {
        return iso.clone();
    }
    let joined = isolation::joinable_cpus();
    if !joined.is_empty() {
        return joined;
    }
    allowed.to_vec()
}

impl Drop for Session {
    fn drop(&mut self) {
        // Set up but never measured: the run leaves no trace in the store.
        if let Some(s) = self.saver.take() {
            s.abandon();
        }
    }
}
