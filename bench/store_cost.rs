//! What the run store costs: the time of one checkpoint and the bytes of
//! one run, for the sizes a run reaches after 24 h at 10 kHz (histograms
//! with thousands of non-empty buckets, window series at their 8192-point
//! bound, 32 outliers per thread), with 2 and 64 threads; and the real
//! checkpoints of a short measurement on this machine.
//!
//! Run: `cargo bench --bench store_cost` (as root for the real run at
//! SCHED_FIFO; otherwise it uses SCHED_OTHER). Not a test: prints figures.

use rtscope::engine::build::RecordContext;
use rtscope::engine::{MeasureConfig, Plan, Policy, run};
use rtscope::histogram::Histogram;
use rtscope::record::{
    HistogramRecord, LatencyStats, Outlier, RunRecord, RunStatus, SampleAt, synthetic,
};
use rtscope::store::Store;
use rtscope::store::checkpoint::RunSaver;
use std::time::{Duration, Instant};

/// Points kept per thread by the engine before compaction.
const WINDOWS: usize = 8192;

/// A run of `threads` threads as it stands after a day at 10 kHz: every
/// thread has 864 M samples spread over `buckets` non-empty buckets.
fn day_long(threads: usize, buckets: u64) -> RunRecord {
    let mut rec = synthetic(&vec![vec![1000u64]; threads]);
    rec.status = RunStatus::Running;
    for (i, t) in rec.threads.iter_mut().enumerate() {
        let mut h = Histogram::latency();
        // Dense from 1 us up, then a sparse tail: `buckets` in all.
        let dense = buckets * 4 / 5;
        for b in 0..dense {
            h.record_n(1_000 + b * 12, 200_000 + (b * 7919 + i as u64) % 100_000);
        }
        for b in 0..(buckets - dense) {
            h.record_n(60_000 + b * b * 37, 1 + b % 5);
        }
        t.histogram = HistogramRecord::from_histogram(&h, 1);
        let mut s = LatencyStats {
            samples: h.total(),
            wakeups: h.total(),
            min_ns: Some(1_000),
            max_ns: h.iter_nonzero().last().map(|(l, _)| l),
            avg_ns: Some(7_345.5),
            ..Default::default()
        };
        s.fill_quantiles(&h);
        t.stats = s;
        let w = &mut t.windows;
        w.window_ns = 16_000_000_000;
        w.compacted = true;
        for k in 0..WINDOWS as u64 {
            w.count.push(160_000);
            w.min_ns.push(1_000 + k % 300);
            w.avg_ns.push(7_000 + k % 900);
            w.max_ns.push(40_000 + (k * 7919) % 900_000);
            w.p99_ns.push(20_000 + k % 5_000);
            w.missed.push(k % 97 / 96);
        }
        t.outliers = (0..32)
            .map(|k| Outlier {
                latency_ns: 2_000_000 - k * 10_000,
                at: SampleAt {
                    cycle: k * 1_000_003,
                    offset_ns: k * 100_000_300,
                    unix_ns: 1_700_000_000_000_000_000 + k,
                },
            })
            .collect();
    }
    let parts: Vec<(LatencyStats, Histogram)> = rec
        .threads
        .iter()
        .map(|t| (t.stats.clone(), t.histogram.to_histogram().unwrap()))
        .collect();
    let refs: Vec<_> = parts.iter().map(|(s, h)| (s, h)).collect();
    rec.overall = LatencyStats::combine(&refs).0;
    rec.duration_ns = 86_400_000_000_000;
    rec
}

/// The next checkpoint's record: 10 s later, every histogram changed, the
/// last window grown (after compaction windows are 16 s long).
fn advance(rec: &mut RunRecord, step: u64) {
    for t in &mut rec.threads {
        let mut h = t.histogram.to_histogram().unwrap();
        h.record_n(3_000 + step, 100_000);
        t.histogram = HistogramRecord::from_histogram(&h, 1);
        t.stats.samples = h.total();
        t.stats.wakeups = h.total();
        let last = t.windows.count.len() - 1;
        t.windows.count[last] += 100_000;
    }
    rec.duration_ns += 10_000_000_000;
}

fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn synthetic_case(threads: usize, buckets: u64) {
    let dir = std::env::temp_dir().join(format!("rtscope-bench-{threads}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("bench.db");
    let mut rec = day_long(threads, buckets);
    let head_bytes = serde_json::to_string(&rec).unwrap().len();
    let store = Store::open(&db).unwrap();
    let t = Instant::now();
    let mut saver =
        RunSaver::begin_with(store, &rec, &RecordContext::default(), 10_000_000_000).unwrap();
    let first = t.elapsed();
    let mut times = Vec::new();
    for step in 0..10 {
        advance(&mut rec, step);
        let t = Instant::now();
        saver.write(&mut rec).unwrap();
        times.push(t.elapsed());
    }
    rec.status = RunStatus::Complete;
    let t = Instant::now();
    let id = saver.finish(&rec).unwrap();
    let fin = t.elapsed();
    // The run as it rests: file size after the WAL is folded in.
    let s = Store::open(&db).unwrap();
    assert_eq!(s.load(id).unwrap(), rec, "round trip");
    drop(s);
    let size = dir_size(&dir);
    times.sort();
    println!(
        "{threads:>3} threads, {buckets} buckets/thread, {WINDOWS} windows/thread: first write {:.1} ms, checkpoint median {:.1} ms, max {:.1} ms, final {:.1} ms; store {:.1} MiB ({:.0} KiB/thread); record as JSON {:.1} MiB",
        ms(first),
        ms(times[times.len() / 2]),
        ms(*times.last().unwrap()),
        ms(fin),
        size as f64 / 1048576.0,
        size as f64 / 1024.0 / threads as f64,
        head_bytes as f64 / 1048576.0,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A real measurement with the engine: `threads` threads over this
/// machine's CPUs at `interval_ns`, windows of `window_ns`, a checkpoint
/// every second, for `secs` seconds.
fn real_run(threads: Option<usize>, interval_ns: u64, window_ns: u64, secs: u64) {
    let dir = std::env::temp_dir().join(format!("rtscope-bench-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = rustix::process::geteuid().is_root();
    let cpus: Vec<usize> = (0..std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1))
        .collect();
    let many = threads.is_some_and(|n| n > cpus.len());
    let config = MeasureConfig {
        threads,
        interval_ns,
        window_ns,
        duration_ns: Some(secs * 1_000_000_000),
        policy: if root && !many {
            Policy::Fifo
        } else {
            Policy::Other
        },
        lock_memory: root,
        dma_latency_us: None,
        ..Default::default()
    };
    let plan = Plan::build(config, &cpus).unwrap();
    let ctx = RecordContext {
        run_uuid: rtscope::record::new_run_uuid(),
        ..Default::default()
    };
    let db = dir.join("real.db");
    let mut saver = RunSaver::begin(Store::open(&db).unwrap(), &plan, &ctx, 1_000_000_000).unwrap();
    let out = run(&plan, &mut saver).unwrap();
    let st = saver.stats();
    let windows = out.snapshot.threads[0].windows.len();
    let hwm_kib: u64 = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    println!(
        "real run, {} threads on {} CPUs every {} us, {windows} windows/thread at the end, {} s: {} checkpoints, mean {:.1} ms, longest {:.1} ms (snapshot + record + write); store {:.1} MiB; peak RSS of the process so far {:.0} MiB",
        plan.threads.len(),
        cpus.len(),
        interval_ns / 1000,
        secs,
        st.written,
        ms(st.total) / st.written.max(1) as f64,
        ms(st.longest),
        dir_size(&dir) as f64 / 1048576.0,
        hwm_kib as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // The real runs first: the peak RSS they print is theirs alone.
    real_run(None, 100_000, 1_000_000_000, 8);
    real_run(Some(64), 10_000_000, 10_000_000, 60);
    synthetic_case(2, 4000);
    synthetic_case(64, 4000);
    synthetic_case(64, 9000);
}
