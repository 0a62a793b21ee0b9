//! Turning a plan and a snapshot into the run record (the data contract):
//! exact extremes and their position, quantiles from the histogram,
//! options in units.

use super::plan::Plan;
use super::run::{Snapshot, ThreadSnapshot};
use super::shared::StatsSnapshot;
use crate::kinds::SourceKind;
use crate::record::{
    EndReason, ExceedanceRecord, Fingerprint, HistogramRecord, LatencyStats, Limits,
    MeasureOptions, Outlier, RunRecord, RunSource, RunStatus, SCHEMA_NAME, SCHEMA_VERSION,
    ThreadRecord, ToolInfo, WarmupStats,
};
use crate::units::format_cpu_list;
use std::collections::BTreeMap;

/// What the record needs beyond the plan and the snapshot.
#[derive(Clone, Debug, Default)]
pub struct RecordContext {
    pub run_uuid: String,
    pub command_line: Vec<String>,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub max_latency_ns: Option<u64>,
    /// The user's deadline for a wake-up (`--deadline`); `None`: the period.
    pub deadline_ns: Option<u64>,
    pub fingerprint: Fingerprint,
    pub warnings: Vec<String>,
}

/// Statistics of one thread.
pub fn thread_stats(snap: &Snapshot, index: usize) -> LatencyStats {
    let t: &ThreadSnapshot = &snap.threads[index];
    let s = &t.stats;
    let mut out = LatencyStats {
        samples: s.samples,
        wakeups: s.wakeups,
        min_ns: s.min_ns,
        avg_ns: if s.samples > 0 {
            Some(s.sum_ns as f64 / s.samples as f64)
        } else {
            None
        },
        max_ns: s.max_ns,
        missed_periods: s.missed,
        early_wakeups: s.early,
        max_early_ns: s.max_early_ns,
        min_at: s.min_ns.map(|_| snap.sample_at(index, s.min_cycle)),
        max_at: s.max_ns.map(|_| snap.sample_at(index, s.max_cycle)),
        ..Default::default()
    };
    out.fill_quantiles(&s.hist);
    out
}

/// The options of `plan`, in units.
pub fn options(plan: &Plan) -> MeasureOptions {
    let c = &plan.config;
    MeasureOptions {
        interval_ns: c.interval_ns,
        distance_ns: c.distance_ns,
        policy: c.policy.into(),
        priority: plan.threads.first().map(|t| t.priority).unwrap_or(0),
        priospread: c.priospread,
        timer: c.timer.into(),
        clock: c.clock.into(),
        duration_ns: c.duration_ns,
        loops: c.loops,
        warmup_ns: c.warmup_ns,
        window_ns: c.window_ns,
        omission_correction: c.omission_correction,
        mlockall: c.lock_memory,
        dma_latency_us: c.dma_latency_us,
        cpus: plan
            .threads
            .iter()
            .map(|t| t.cpu.map(|c| c as u32))
            .collect(),
        main_affinity: c.main_affinity.as_deref().map(format_cpu_list),
        deadline: plan.deadline,
    }
}

/// The record of a run still going (a checkpoint, a SIGUSR1 summary).
pub fn running(view: &super::run::RunView, ctx: &RecordContext) -> RunRecord {
    record(
        view.plan,
        &view.snapshot(),
        RunStatus::Running,
        EndReason::Unknown,
        None,
        ctx,
    )
}

/// The warm-up statistics of one thread (None when there was no warm-up).
fn warmup_stats(plan: &Plan, s: &StatsSnapshot) -> Option<WarmupStats> {
    (plan.config.warmup_ns > 0).then(|| WarmupStats {
        samples: s.warm_samples,
        missed_periods: s.warm_missed,
        min_ns: s.warm_min_ns,
        max_ns: s.warm_max_ns,
        avg_ns: if s.warm_samples > 0 {
            Some(s.warm_sum_ns as f64 / s.warm_samples as f64)
        } else {
            None
        },
    })
}

/// The record of thread `i`.
fn thread_record(plan: &Plan, snap: &Snapshot, i: usize) -> ThreadRecord {
    let t = &snap.threads[i];
    let s = &t.stats;
    ThreadRecord {
        index: i as u32,
        cpu: t.plan.cpu.map(|c| c as u32),
        tid: if t.tid > 0 { Some(t.tid as u32) } else { None },
        policy: plan.config.policy.into(),
        priority: t.plan.priority,
        interval_ns: t.plan.interval_ns,
        stats: thread_stats(snap, i),
        warmup: warmup_stats(plan, s),
        histogram: HistogramRecord::from_histogram(&s.hist, 1),
        windows: t.windows.clone(),
        outliers: s
            .outliers
            .iter()
            .map(|&(latency_ns, cycle)| Outlier {
                latency_ns,
                at: snap.sample_at(i, cycle),
            })
            .collect(),
        context: None,
        contexts: Vec::new(),
        noise: None,
        exceedances: Some(ExceedanceRecord {
            threshold_ns: t.exceedances.threshold_ns,
            cycles: t.exceedances.items.iter().map(|&(c, _)| c).collect(),
            latencies_ns: t.exceedances.items.iter().map(|&(_, l)| l).collect(),
        }),
    }
}

/// Build the run record.
pub fn record(
    plan: &Plan,
    snap: &Snapshot,
    status: RunStatus,
    end_reason: EndReason,
    ended_unix_ns: Option<u64>,
    ctx: &RecordContext,
) -> RunRecord {
    let threads: Vec<ThreadRecord> = (0..snap.threads.len())
        .map(|i| thread_record(plan, snap, i))
        .collect();
    let parts: Vec<_> = threads
        .iter()
        .zip(snap.threads.iter())
        .map(|(r, t)| (&r.stats, &t.stats.hist))
        .collect();
    let (overall, _) = LatencyStats::combine(&parts);
    let exceeded = match (ctx.max_latency_ns, overall.max_ns) {
        (Some(limit), Some(max)) => max > limit,
        _ => false,
    };
    let duration_ns = match plan.config.duration_ns {
        Some(d) => snap.elapsed_ns.min(d),
        None => snap.elapsed_ns,
    };
    RunRecord {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        run_uuid: ctx.run_uuid.clone(),
        tool: ToolInfo::this(),
        status,
        source: RunSource {
            kind: SourceKind::Measured.into(),
            format: None,
            file: None,
            command_line: ctx.command_line.clone(),
            unknown: Vec::new(),
        },
        label: ctx.label.clone(),
        tags: ctx.tags.clone(),
        started_at_unix_ns: snap.t0_unix_ns,
        ended_at_unix_ns: ended_unix_ns,
        duration_ns,
        end_reason,
        options: options(plan),
        threads,
        overall,
        limits: Limits {
            max_latency_ns: ctx.max_latency_ns,
            exceeded,
            break_ns: plan.config.break_ns,
            break_event: None,
            deadline_ns: ctx.deadline_ns,
        },
        fingerprint: ctx.fingerprint.clone(),
        load: None,
        warnings: ctx.warnings.clone(),
        explain: None,
        quantity: None,
    }
}
