//! One characterization from [`Settings`] to [`Outcome`] ([`run`]), as
//! `measure::Session` is for a measurement: the checks made before the
//! system is touched, the CPU locks, the isolation (the tune session that
//! `measure --isolate` holds), the benchmarks ([`run_benches`], with the
//! engine's real-time hygiene), saving each benchmark in the store as it
//! ends (interrupted when cut short or on an error), and the `--json`
//! file. What it sets up is put back on every path (guards that undo on
//! drop). It never parses flags or prints results: the caller's
//! [`Progress`] hears what happens, the [`Outcome`] says what came of it.

use super::{
    Bench, CharError, Characterization, Options, Progress, privilege_refusal, run_benches, validate,
};
use crate::store::{RunState, Store};
use crate::sysinfo::{SysRoot, cpu};
use crate::{cpulock, output, tune};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What a characterization is asked for: `rtscope characterize`'s
/// options, as data.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The benchmarks to run, by name (all when empty).
    pub only: Vec<String>,
    pub per_bench_ns: u64,
    /// Interval of the clock_nanosleep rows.
    pub interval_ns: u64,
    /// SCHED_FIFO priority of the measuring threads.
    pub priority: i32,
    /// The CPUs to use; `None`: every CPU this process may use (with
    /// `isolate`, the isolated ones).
    pub cpus: Option<Vec<usize>>,
    /// Isolate these CPUs for the characterization (as `rtscope tune
    /// isolate`) and run on them; put back at the end.
    pub isolate: Option<Vec<usize>>,
    /// Explain OS-noise gaps at least this long from kernel trace events.
    pub explain_above_ns: Option<u64>,
    /// Also write the characterization as JSON here (`-`: standard output).
    pub json: Option<PathBuf>,
    pub label: Option<String>,
    /// The host recorded (`--host`; none: this machine's name).
    pub host: Option<String>,
    pub command_line: Vec<String>,
    /// Save the characterization in the run store, as it goes.
    pub save: bool,
    /// The store chosen on the command line (`--db`); `None`:
    /// `RTSCOPE_DB`, else the default ([`crate::store::locate`]).
    pub store: Option<PathBuf>,
    /// Run even when another rtscope measures the same CPUs.
    pub force: bool,
}

impl Settings {
    /// The JSON goes to standard output (`--json -`).
    pub fn json_on_stdout(&self) -> bool {
        self.json.as_deref().is_some_and(|p| p.as_os_str() == "-")
    }

    /// The benchmarks' options, on `cpus`.
    fn options(&self, cpus: Vec<usize>) -> Options {
        Options {
            only: self.only.clone(),
            per_bench_ns: self.per_bench_ns,
            interval_ns: self.interval_ns,
            priority: self.priority,
            cpus,
            label: self.label.clone(),
            host: self.host.clone(),
            command_line: self.command_line.clone(),
            isolated_cpus: self.isolate.clone(),
            explain_above_ns: self.explain_above_ns,
        }
    }
}

/// What came of a characterization.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// What was measured: every benchmark that ended.
    pub characterization: Characterization,
    /// Where it was saved, when it was.
    pub saved: Option<Saved>,
}

impl Outcome {
    /// Cut short (Ctrl-C, SIGTERM): only the benchmarks that ended are in it.
    pub fn interrupted(&self) -> bool {
        !self.characterization.complete
    }
}

/// A characterization's place in the run store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub id: i64,
    pub store: PathBuf,
}

/// Characterize the platform as `settings` ask. `progress` hears of each
/// benchmark and of warnings; `stop` set (Ctrl-C) ends it after the
/// current benchmark, with what ended saved and returned. On an error
/// what ended is saved, marked interrupted.
pub fn run(
    settings: &Settings,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> Result<Outcome, CharError> {
    let opts = check(settings)?;
    // Held until the end: another rtscope on these CPUs refuses this one.
    let (_cpu_locks, warnings) =
        cpulock::lock_cpus(&cpulock::lock_dir(), &opts.cpus, settings.force)?;
    for w in &warnings {
        progress.warning(w);
    }
    let isolation = match &settings.isolate {
        Some(iso) => tune::session::isolate(Some(iso), Some(&opts.cpus), false, stop)
            .map_err(CharError::Isolation)?,
        None => None,
    };
    // Under isolation this process now sits on the isolated CPUs.
    let allowed = allowed_cpus()?;
    let mut saver = Saver::open(settings.save, settings.store.as_deref(), progress);
    let result = run_benches(&opts, &allowed, stop, &mut saver);
    drop(isolation);
    let (characterization, saved) = saver.finish(result)?;
    if let Some(p) = &settings.json {
        write_json(p, &characterization)?;
    }
    Ok(Outcome {
        characterization,
        saved,
    })
}

fn allowed_cpus() -> Result<Vec<usize>, CharError> {
    cpu::allowed_cpus().map_err(CharError::Affinity)
}

/// Refuse what cannot work before anything is touched; the benchmarks'
/// options on the CPUs to use. The CPUs are checked as they are now; with
/// `isolate`, again by [`run_benches`] once the process sits on the
/// isolated CPUs.
fn check(settings: &Settings) -> Result<Options, CharError> {
    if settings.explain_above_ns.is_some() && settings.isolate.is_some() {
        return Err(CharError::Invalid(
            "--explain cannot be combined with --isolate yet: isolate with `rtscope tune isolate CPUS` first, then characterize --cpus CPUS --explain".into(),
        ));
    }
    let allowed = allowed_cpus()?;
    let cpus = settings
        .cpus
        .clone()
        .or_else(|| settings.isolate.clone())
        .unwrap_or_else(|| allowed.clone());
    let opts = settings.options(cpus);
    match &settings.isolate {
        Some(iso) => {
            let online = cpu::online_cpus(&SysRoot::host()).unwrap_or_else(|| allowed.clone());
            validate(&opts, &online)?;
            if let Some(c) = opts.cpus.iter().find(|c| !iso.contains(c)) {
                return Err(CharError::Invalid(format!(
                    "--cpus includes CPU {c}, which --isolate does not isolate: leave --cpus out, or give CPUs of --isolate"
                )));
            }
        }
        None => {
            validate(&opts, &allowed)?;
        }
    }
    if let Some(why) = privilege_refusal(opts.priority) {
        return Err(CharError::Privilege(why));
    }
    if let Some(p) = &settings.json {
        output::check_writable(p, "--json").map_err(|e| CharError::Output(e.into()))?;
    }
    Ok(opts)
}

/// Write `c` as pretty JSON to `path` (`-`: standard output), atomically.
fn write_json(path: &Path, c: &Characterization) -> Result<(), CharError> {
    let mut text = serde_json::to_string_pretty(c).map_err(CharError::Serialize)?;
    text.push('\n');
    output::write_atomic(path, text.as_bytes()).map_err(|e| CharError::Output(e.into()))
}

/// Saves each benchmark in the store as it ends, and passes every event
/// on to the caller's progress. A store that cannot be written is a
/// warning (once): the characterization goes on.
struct Saver<'a> {
    store: Option<Store>,
    id: Option<i64>,
    /// The characterization as the last benchmark that ended left it.
    last: Option<Characterization>,
    warned: bool,
    progress: &'a mut dyn Progress,
}

impl<'a> Saver<'a> {
    /// Open the store when `save`; a warning when it cannot be opened.
    fn open(save: bool, chosen: Option<&Path>, progress: &'a mut dyn Progress) -> Saver<'a> {
        let store = if save {
            crate::store::locate(chosen)
                .and_then(|p| Store::open(&p))
                .map_err(|e| {
                    progress.warning(&format!("the characterization will not be saved: {e}"))
                })
                .ok()
        } else {
            None
        };
        Saver {
            store,
            id: None,
            last: None,
            warned: false,
            progress,
        }
    }

    fn save(&mut self, c: &Characterization, state: RunState) {
        if let (Some(s), Some(id)) = (self.store.as_mut(), self.id)
            && let Err(e) = s.save_characterization(id, c, state)
            && !self.warned
        {
            self.warned = true;
            self.progress
                .warning(&format!("saving the characterization failed: {e}"));
        }
    }

    /// Save how it ended (complete or interrupted; on an error, what
    /// ended before it, interrupted) and say where it is.
    fn finish(
        mut self,
        result: Result<Characterization, CharError>,
    ) -> Result<(Characterization, Option<Saved>), CharError> {
        let c = match result {
            Ok(c) => c,
            Err(e) => {
                if let Some(last) = self.last.take() {
                    self.save(&last, RunState::Interrupted);
                }
                return Err(e);
            }
        };
        let state = if c.complete {
            RunState::Complete
        } else {
            RunState::Interrupted
        };
        self.save(&c, state);
        let saved = match (&self.store, self.id) {
            (Some(s), Some(id)) => Some(Saved {
                id,
                store: s.path().to_path_buf(),
            }),
            _ => None,
        };
        Ok((c, saved))
    }
}

impl Progress for Saver<'_> {
    fn warning(&mut self, message: &str) {
        self.progress.warning(message);
    }

    fn started(&mut self, c: &Characterization) {
        if let Some(s) = self.store.as_mut() {
            match s.begin_characterization(c) {
                Ok(id) => self.id = Some(id),
                Err(e) => self
                    .progress
                    .warning(&format!("the characterization will not be saved: {e}")),
            }
        }
        self.last = Some(c.clone());
        self.progress.started(c);
    }

    fn bench_started(&mut self, bench: &Bench) {
        self.progress.bench_started(bench);
    }

    fn bench_done(&mut self, c: &Characterization, bench: &Bench) {
        self.save(c, RunState::Running);
        self.last = Some(c.clone());
        self.progress.bench_done(c, bench);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_util::TempStore;

    fn settings() -> Settings {
        Settings {
            only: vec![],
            per_bench_ns: 1_000_000_000,
            interval_ns: 1_000_000,
            priority: 99,
            cpus: Some(vec![0]),
            isolate: None,
            explain_above_ns: None,
            json: None,
            label: None,
            host: None,
            command_line: vec![],
            save: true,
            store: None,
            force: false,
        }
    }

    /// Hears the events the saver passes on.
    #[derive(Default)]
    struct Heard {
        warnings: Vec<String>,
        started: usize,
        benches_done: usize,
    }

    impl Progress for Heard {
        fn warning(&mut self, message: &str) {
            self.warnings.push(message.to_string());
        }
        fn started(&mut self, _c: &Characterization) {
            self.started += 1;
        }
        fn bench_done(&mut self, _c: &Characterization, _b: &Bench) {
            self.benches_done += 1;
        }
    }

    fn saver<'a>(t: &TempStore, heard: &'a mut Heard) -> Saver<'a> {
        Saver {
            store: Some(Store::open(&t.db()).unwrap()),
            id: None,
            last: None,
            warned: false,
            progress: heard,
        }
    }

    #[test]
    fn options_that_cannot_work_together_are_refused_before_anything_is_touched() {
        let mut s = settings();
        s.isolate = Some(vec![1]);
        s.explain_above_ns = Some(100_000);
        let e = check(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("--explain cannot be combined with --isolate"),
            "{e}"
        );
        s.explain_above_ns = None;
        let e = check(&s).unwrap_err().to_string();
        assert!(
            e.contains("--cpus includes CPU 0, which --isolate does not isolate"),
            "{e}"
        );
        s.cpus = Some(vec![]);
        assert_eq!(check(&s).unwrap_err().to_string(), "--cpus is empty");
    }

    #[test]
    fn json_on_stdout_only_for_a_dash() {
        let mut s = settings();
        assert!(!s.json_on_stdout());
        s.json = Some("-".into());
        assert!(s.json_on_stdout());
        s.json = Some("out.json".into());
        assert!(!s.json_on_stdout());
    }

    #[test]
    fn on_an_error_the_benchmarks_that_ended_are_saved_interrupted() {
        let t = TempStore::new("char-session");
        let mut heard = Heard::default();
        let mut saver = saver(&t, &mut heard);
        let mut c = super::super::tests::sample("x", 1);
        c.complete = false;
        let first = c.results.remove(0);
        let begun = Characterization {
            results: vec![],
            ..c.clone()
        };
        saver.started(&begun);
        let ended = Characterization {
            results: vec![first],
            ..c.clone()
        };
        saver.bench_done(&ended, super::super::BENCHES[0]);
        let id = saver.id.unwrap();
        let e = saver.finish(Err(CharError::Aborted)).unwrap_err();
        assert!(matches!(e, CharError::Aborted));
        let store = Store::open(&t.db()).unwrap();
        assert_eq!(store.row(id).unwrap().unwrap().state, RunState::Interrupted);
        assert_eq!(store.load_characterization(id).unwrap(), ended);
        assert_eq!((heard.started, heard.benches_done), (1, 1));
        assert!(heard.warnings.is_empty(), "{:?}", heard.warnings);
    }

    #[test]
    fn a_characterization_that_ends_is_saved_complete_or_interrupted_and_says_where() {
        for complete in [true, false] {
            let t = TempStore::new("char-session");
            let mut heard = Heard::default();
            let mut saver = saver(&t, &mut heard);
            let mut c = super::super::tests::sample("x", 1);
            c.complete = complete;
            saver.started(&c);
            let (back, saved) = saver.finish(Ok(c.clone())).unwrap();
            assert_eq!(back, c);
            let saved = saved.unwrap();
            assert_eq!(saved.store, t.db());
            let store = Store::open(&t.db()).unwrap();
            let state = store.row(saved.id).unwrap().unwrap().state;
            let want = if complete {
                RunState::Complete
            } else {
                RunState::Interrupted
            };
            assert_eq!(state, want);
            let outcome = Outcome {
                characterization: back,
                saved: Some(saved),
            };
            assert_eq!(outcome.interrupted(), !complete);
        }
    }
}
