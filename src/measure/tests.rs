//! Tests of [`Session`] and [`Request`]: refusals give the right
//! [`SessionError`] before anything is touched (no load started, no store
//! created), and one short real session gives a complete [`Outcome`].
//!
//! The real session measures inside the test process, beside the engine's
//! hot-loop test: it stays short (300 ms) and on another CPU than that
//! test's CPU 0 when there is one.

use super::*;
use crate::engine::run::Quiet;
use crate::engine::{MeasureConfig, Policy};
use crate::load::LoadRequest;
use crate::record::RunRecord;
use crate::sys::sched;
use crate::sysinfo::cpu;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A directory of its own under the system's temporary directory,
/// removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("rtscope-measure-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn root() -> bool {
    sched::euid() == 0
}

/// A policy this process may use.
fn policy() -> Policy {
    if root() { Policy::Fifo } else { Policy::Other }
}

/// One short thread that leaves memory locking and the PM QoS alone (the
/// test process is shared).
fn config(cpus: Option<Vec<usize>>) -> MeasureConfig {
    MeasureConfig {
        cpus,
        threads: Some(1),
        duration_ns: Some(300_000_000),
        window_ns: 100_000_000,
        policy: policy(),
        lock_memory: false,
        dma_latency_us: None,
        ..Default::default()
    }
}

/// A request that would start a load and save to the store at `db` if
/// nothing refused it.
fn request(dir: &TempDir) -> Request {
    Request {
        config: config(None),
        load: LoadRequest {
            spec: Some("cpu".into()),
            ..Default::default()
        },
        checkpoint_ns: Some(5_000_000_000),
        outputs: Outputs {
            json: Some(dir.path().join("run.json")),
            histogram: None,
        },
        ..Default::default()
    }
}

/// Processes of ours running the load supervisor.
fn load_children() -> usize {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...: the comm may hold spaces.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1));
            ppid == Some(me.as_str())
                && std::fs::read(e.path().join("cmdline"))
                    .unwrap_or_default()
                    .split(|&b| b == 0)
                    .any(|a| a == crate::load::supervisor::SUBCOMMAND.as_bytes())
        })
        .count()
}

/// `prepare` refuses `request` with the error `expected` accepts, and
/// leaves nothing behind: no load process, no store, no result file.
fn refused(mut request: Request, dir: &TempDir, expected: impl Fn(&SessionError) -> bool) {
    // The request's store, in a directory nothing creates unless the
    // store is opened.
    let db = std::env::temp_dir()
        .join(format!("rtscope-measure-store-{}", std::process::id()))
        .join("rtscope.db");
    request.store = Some(db.clone());
    let json = request.outputs.json.clone();
    let stop = AtomicBool::new(false);
    match Session::prepare(request, &stop) {
        Ok(_) => panic!("the request was not refused"),
        Err(e) => assert!(expected(&e), "unexpected refusal: {e:#}"),
    }
    assert_eq!(load_children(), 0, "a load was started");
    assert_eq!(crate::store::locate(Some(&db)).unwrap(), db);
    assert!(!db.exists(), "the store was created");
    if let Some(j) = json.filter(|j| j.starts_with(dir.path())) {
        assert!(!j.exists(), "{} was written", j.display());
    }
}

fn usage_containing(text: impl Into<String>) -> impl Fn(&SessionError) -> bool {
    let text = text.into();
    move |e| matches!(e, SessionError::Usage(m) if m.contains(&text))
}

#[test]
fn load_cpus_inside_the_isolation_are_refused() {
    let dir = TempDir::new("overlap");
    let mut r = request(&dir);
    let allowed = cpu::allowed_cpus().unwrap();
    let cpu = *allowed.last().unwrap();
    r.isolate = Some(vec![cpu]);
    r.load.cpus = Some(vec![cpu]);
    assert!(matches!(r.check_cpus(), Err(SessionError::Usage(_))));
    refused(
        r,
        &dir,
        usage_containing(format!("--load-cpus includes CPU {cpu}")),
    );
}

#[test]
fn histogram_rows_zero_is_refused() {
    let dir = TempDir::new("rows");
    let mut r = request(&dir);
    r.outputs.histogram = Some(HistOutput {
        rows: 0,
        all_column: false,
        path: dir.path().join("hist.txt"),
    });
    refused(r, &dir, usage_containing("rows must be between 1 and"));
    assert!(!dir.path().join("hist.txt").exists());
}

#[test]
fn checkpoint_below_a_second_is_refused() {
    let dir = TempDir::new("checkpoint");
    let mut r = request(&dir);
    r.checkpoint_ns = Some(500_000_000);
    refused(
        r,
        &dir,
        usage_containing("--checkpoint 500ms is below the 1s minimum"),
    );
}

#[test]
fn an_unwritable_json_path_is_refused() {
    let dir = TempDir::new("json");
    let mut r = request(&dir);
    let missing = dir.path().join("no-such-dir").join("run.json");
    r.outputs.json = Some(missing.clone());
    refused(r, &dir, |e| {
        matches!(e, SessionError::Output(_)) && format!("{e:#}").contains("does not exist")
    });
    assert!(!missing.parent().unwrap().exists());
}

/// A real session: prepare, run with a quiet observer, and the outcome
/// holds the record, the written JSON and the summary.
#[test]
fn a_short_session_measures_and_writes_its_record() {
    let dir = TempDir::new("real");
    let allowed = cpu::allowed_cpus().unwrap();
    // Beside the hot-loop test (CPU 0) rather than on top of it.
    let cpu = *allowed.iter().find(|&&c| c != 0).unwrap_or(&allowed[0]);
    let json = dir.path().join("run.json");
    let request = Request {
        config: config(Some(vec![cpu])),
        checkpoint_ns: None,
        outputs: Outputs {
            json: Some(json.clone()),
            histogram: None,
        },
        label: Some("session test".into()),
        ..Default::default()
    };
    let stop = AtomicBool::new(false);
    let session = Session::prepare(request, &stop).unwrap();
    let outcome = session.run(&mut Quiet, &stop).unwrap();
    assert_eq!(outcome.status(), Status::Ok);
    assert!(outcome.saved.is_none());
    assert!(outcome.failures.is_empty());
    assert!(outcome.record.overall.samples > 0);
    assert_eq!(outcome.record.threads.len(), 1);
    assert_eq!(outcome.record.threads[0].cpu, Some(cpu as u32));
    let text = std::fs::read_to_string(&json).unwrap();
    let back: RunRecord = serde_json::from_str(&text).unwrap();
    back.validate().unwrap();
    assert_eq!(back.run_uuid, outcome.record.run_uuid);
    assert_eq!(back.overall.samples, outcome.record.overall.samples);
    assert_eq!(back.label.as_deref(), Some("session test"));
    let summary = outcome.summary_text(crate::text::rank::Rows::Fit);
    assert!(
        summary.starts_with("Latency in microseconds (us)"),
        "{summary}"
    );
    assert!(summary.contains("count"), "{summary}");
    assert!(summary.contains("missed"), "{summary}");
}

#[test]
fn an_explain_error_reads_its_cause_once() {
    let e = SessionError::from(crate::trace::TraceError::NoCpus);
    assert!(matches!(e, SessionError::Explain(_)));
    assert_eq!(
        crate::text::chain(&e),
        "--explain: no CPU to trace was given"
    );
}
