//! The HTML report: one self-contained file (CSS and SVG inline, no
//! script, no network) that reads on a laptop screen and prints on A4.
//! Per run: verdict, summary table per CPU, histogram, exceedance and
//! timeline, largest wake-ups and why they were late (`measure
//! --explain`), set-up, load, fingerprint. With several
//! runs, first a comparison: fairness warnings for every pair, a side by
//! side table and overlaid curves.
//!
//! This file turns runs into a view (plain strings and tables) and hands
//! it to the minijinja template in assets/templates; the template only
//! lays it out. Nothing here reads the clock or the system: the same runs
//! give the same report.

use super::page::{self, Page, PageError, Pair, pair};
use super::plot::{self, Figure, PlotError, Size, data};
use super::verdict::{self, Verdict};
use super::why::{self, PartKind};
use super::{NamedRun, fairness, known, why_svg};
use crate::explain::{Completeness, Explanation};
use crate::histogram::HistogramError;
use crate::record::{METRICS, Quantity, RunRecord, ThreadRecord, Unknowable};
use crate::text::{num, rank};
use crate::units::{fmt_unix_utc, us_cell_stated, us1};
use serde::Serialize;
use thiserror::Error;

#[derive(Serialize, Debug)]
struct Table {
    caption: String,
    head: Vec<String>,
    rows: Vec<TableRow>,
    /// Columns holding numbers (right-aligned).
    numeric_from: usize,
}

#[derive(Serialize, Debug)]
struct TableRow {
    cells: Vec<Cell>,
    class: String,
}

#[derive(Serialize, Debug)]
struct Cell {
    text: String,
}

impl TableRow {
    fn plain(cells: Vec<String>) -> TableRow {
        TableRow {
            cells: cells.into_iter().map(|text| Cell { text }).collect(),
            class: String::new(),
        }
    }
}

#[derive(Serialize, Debug)]
struct FigureView {
    id: String,
    svg: String,
    caption: String,
}

#[derive(Serialize, Debug)]
struct VerdictView {
    class: String,
    /// Set when the evidence is not enough for a verdict.
    provisional: bool,
    tolerance: String,
    /// Deadline first ([`verdict::status_line`]): the heading and contents.
    title: String,
    headline: String,
    evidence: Vec<String>,
    limits: Vec<String>,
    advice: Vec<String>,
}

impl From<Verdict> for VerdictView {
    fn from(v: Verdict) -> Self {
        VerdictView {
            class: v.class.key().into(),
            provisional: v.standing.is_provisional(),
            tolerance: v.tolerance,
            title: v.title,
            headline: v.headline,
            evidence: v.evidence,
            limits: v.limits,
            advice: v.advice,
        }
    }
}

#[derive(Serialize, Debug)]
struct RunView {
    anchor: String,
    name: String,
    facts: Vec<Pair>,
    verdict: VerdictView,
    summary: Table,
    /// With many threads, every thread's row (at most [`PAGE_THREADS`]),
    /// folded.
    every: Option<Table>,
    /// The folded table's title.
    every_title: String,
    /// With many threads, the heat strip of every thread.
    heat: Option<FigureView>,
    figures: Vec<FigureView>,
    missing: Vec<String>,
    warnings: Vec<String>,
    outliers: Option<Table>,
    tail: TailSection,
    why: Option<WhyView>,
    setup: Vec<Pair>,
    load: Vec<Pair>,
    fingerprint: Vec<Pair>,
}

/// Why the largest wake-ups were late: the counts, and each kept
/// explanation with its bar, parts and timeline.
#[derive(Serialize, Debug)]
struct WhyView {
    counts: Vec<Pair>,
    /// Set when no wake-up reached the threshold.
    nothing: Option<String>,
    items: Vec<WhyItem>,
    /// Set when more explanations were kept than the report shows.
    more: Option<String>,
}

#[derive(Serialize, Debug)]
struct WhyItem {
    id: String,
    heading: String,
    cause: String,
    partial: bool,
    partial_reasons: Vec<String>,
    /// The IRQ and thread latency, as rtla timerlat splits them.
    split: Vec<String>,
    bar: String,
    parts: Table,
    timeline: Table,
    notes: Vec<String>,
}

#[derive(Serialize, Debug)]
struct ComparisonView {
    warnings: Vec<String>,
    table: Table,
    figures: Vec<FigureView>,
    missing: Vec<String>,
}

#[derive(Serialize, Debug)]
struct ReportView {
    title: String,
    subtitle: String,
    tool: String,
    runs: Vec<RunView>,
    comparison: Option<ComparisonView>,
}

fn figure(fig: &Figure, id: &str, caption: String) -> Result<FigureView, ReportError> {
    Ok(FigureView {
        id: id.into(),
        svg: plot::svg::render_inline(fig, Size::REPORT, id)?,
        caption,
    })
}

const HIST_CAPTION: &str = "Latency histogram on log scales, as cyclictest's 1 µs classes \
    (the plot of Christophe Blaess's articles and of OSADL): the body of the distribution on the left, every rare late \
    wake-up on the right; a dot is a class not adjacent to another.";
const EXCEEDANCE_CAPTION: &str = "Exceedance: the share of periods later than x. It shows the \
    tail honestly, down to one sample in N (the lowest step); the dot marks the maximum.";

/// The cells of a thread's (or all threads') statistics: count, the
/// metrics, missed periods.
fn stat_cells(run: &RunRecord, s: &crate::record::LatencyStats) -> Vec<String> {
    let mut out = vec![num::count(s.samples)];
    out.extend(METRICS.iter().map(|m| us_cell_stated(s.metric(m))));
    out.push(known(run, Unknowable::MissedPeriods, || {
        num::count(s.missed_periods)
    }));
    out
}

fn summary_head() -> Vec<String> {
    ["thread", "CPU", "policy", "interval", "count"]
        .into_iter()
        .chain(METRICS)
        .chain(["missed"])
        .map(str::to_string)
        .collect()
}

fn thread_row(run: &RunRecord, t: &ThreadRecord) -> TableRow {
    let mut r = vec![
        t.index.to_string(),
        t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
        format!(
            "{} {}",
            t.policy,
            known(run, Unknowable::Priority, || t.priority.to_string())
        ),
        if t.interval_ns > 0 || run.knows(Unknowable::Interval) {
            num::period(t.interval_ns)
        } else {
            "unknown".into()
        },
    ];
    r.extend(stat_cells(run, &t.stats));
    TableRow::plain(r)
}

fn all_row(run: &RunRecord) -> TableRow {
    let mut r = vec!["all".into(), String::new(), String::new(), String::new()];
    r.extend(stat_cells(run, &run.overall));
    let mut row = TableRow::plain(r);
    row.class = "total".into();
    row
}

const SUMMARY_CAPTION: &str = "Wake-up latency per thread, in microseconds (µs). count: periods \
    recorded; missed: periods that began before the thread woke for an earlier one (no wake-up \
    of their own).";

/// Every thread in thread order, and all of them together.
fn summary_table(run: &RunRecord) -> Table {
    let mut rows: Vec<TableRow> = run.threads.iter().map(|t| thread_row(run, t)).collect();
    if run.threads.len() > 1 {
        rows.push(all_row(run));
    }
    Table {
        caption: SUMMARY_CAPTION.into(),
        head: summary_head(),
        rows,
        numeric_from: 4,
    }
}

/// `lo–hi` in µs, or one value when they agree.
fn us_range(r: Option<(u64, u64)>) -> String {
    match r {
        Some((lo, hi)) if lo == hi => us1(hi),
        Some((lo, hi)) => format!("{}–{}", us1(lo), us1(hi)),
        None => "-".into(),
    }
}

/// The row of the threads a ranked table leaves out: how many, on which
/// CPUs (a compact list), their periods, and the range of their p99 and
/// max.
fn others_row(run: &RunRecord, others: &[usize]) -> TableRow {
    let threads: Vec<&ThreadRecord> = others.iter().map(|i| &run.threads[*i]).collect();
    let cpus: Vec<usize> = threads
        .iter()
        .filter_map(|t| t.cpu.map(|c| c as usize))
        .collect();
    let mut r = vec![
        format!("the other {}", threads.len()),
        crate::units::format_cpu_list(&cpus),
        String::new(),
        String::new(),
        num::count(threads.iter().map(|t| t.stats.samples).sum()),
    ];
    r.extend(METRICS.iter().map(|m| {
        match *m {
            "p99" => rank::us_stated_range(
                rank::stated_range(threads.iter().map(|t| t.stats.quantile("p99"))),
                "–",
            )
            .unwrap_or_else(|| "-".into()),
            "max" => us_range(rank::range(threads.iter().map(|t| t.stats.max_ns))),
            _ => String::new(),
        }
    }));
    r.push(String::new());
    let mut row = TableRow::plain(r);
    row.class = "others".into();
    row
}

/// Threads a page draws one by one (the heat strip's rows, the folded
/// table's rows, the per-CPU lines): above, the worst this many (by max,
/// then p99), and a line on the others. A page's size and the time it
/// takes are then bounded whatever the run's thread count; the run's
/// JSON, its CSV and `rtscope runs show RUN --all` have every thread.
pub const PAGE_THREADS: usize = 256;

/// Where every thread of a run is, for the lines on those a page leaves
/// out.
const EVERY_THREAD_IS: &str = "every thread is in the run's JSON record, its CSV \
    (rtscope runs export RUN --csv) and rtscope runs show RUN --all";

/// The line on the threads a page does not draw one by one, if any.
pub fn left_out_line(n: usize) -> Option<String> {
    (n > PAGE_THREADS).then(|| {
        format!(
            "This run has {} threads: the page draws the {PAGE_THREADS} worst (by max, then \
             p99) one by one and leaves out the other {}, which count in every \
             all-threads figure and row; {EVERY_THREAD_IS}.",
            num::count(n as u64),
            num::count((n - PAGE_THREADS) as u64)
        )
    })
}

/// The per-CPU view of a run: the table (above [`rank::MANY_THREADS`]
/// threads, the [`rank::WORST_ROWS`] worst, a row for the others and the
/// all row, with the full table to fold), and above
/// [`data::MAX_THREAD_CURVES`] threads, where the figures stop drawing
/// each thread, the heat strip that shows every one; above
/// [`PAGE_THREADS`], the strip and the folded table hold the worst
/// [`PAGE_THREADS`] and say how many they leave out.
struct PerCpu {
    table: Table,
    every: Option<Table>,
    every_title: String,
    heat: Option<FigureView>,
}

fn heat_view(run: &RunRecord, anchor: &str, ranked: &[usize], shown: &[usize]) -> FigureView {
    let n = run.threads.len();
    let mut ranks = vec![0; n];
    for (r, i) in ranked.iter().enumerate() {
        ranks[*i] = r;
    }
    let grouped = super::heat_svg::grouped(run);
    let rows = if shown.len() < n {
        format!(
            "one row for each of the {} worst threads (by max, then p99; the other {} are left \
             out: {EVERY_THREAD_IS})",
            shown.len(),
            n - shown.len()
        )
    } else {
        "one row per thread".to_string()
    };
    let id = format!("{anchor}-heat");
    FigureView {
        svg: super::heat_svg::strip(run, shown, &id, &ranks, rank::WORST_ROWS),
        id,
        caption: format!(
            "Every thread at a glance: {rows}{}, its {} on one logarithmic colour scale \
             (darker is later; hover a cell for its value). The {} worst threads, by max then \
             p99, are numbered on the right.",
            if grouped {
                ", grouped by NUMA node and package and ordered by core as the system \
                 fingerprint places its CPUs"
            } else {
                " in CPU order"
            },
            super::heat_svg::COLUMNS.join(", "),
            rank::WORST_ROWS.min(n)
        ),
    }
}

fn per_cpu(run: &RunRecord, anchor: &str) -> PerCpu {
    let n = run.threads.len();
    let ranked = super::summary::ranked(run);
    let shown = &ranked[..n.min(PAGE_THREADS)];
    let heat = (n > data::MAX_THREAD_CURVES).then(|| heat_view(run, anchor, &ranked, shown));
    if !rank::Rows::Fit.summarises(n) {
        return PerCpu {
            table: summary_table(run),
            every: None,
            every_title: String::new(),
            heat,
        };
    }
    let (worst, others) = ranked.split_at(rank::WORST_ROWS.min(n));
    let mut rows: Vec<TableRow> = worst
        .iter()
        .map(|i| thread_row(run, &run.threads[*i]))
        .collect();
    rows.push(others_row(run, others));
    rows.push(all_row(run));
    let mut in_order = shown.to_vec();
    in_order.sort_unstable();
    let mut every_rows: Vec<TableRow> = in_order
        .iter()
        .map(|i| thread_row(run, &run.threads[*i]))
        .collect();
    every_rows.push(all_row(run));
    let (every_title, every_caption, folded) = if shown.len() < n {
        (
            format!("The {} worst threads of {n}, in thread order", shown.len()),
            format!(
                "The {} worst threads of {n} (by max, then p99), in thread order; the other {} \
                 are left out: {EVERY_THREAD_IS}.",
                shown.len(),
                n - shown.len()
            ),
            format!("the {} worst are in the table folded below", shown.len()),
        )
    } else {
        (
            format!("Every thread ({n}), in thread order"),
            "Every thread, in thread order.".to_string(),
            "every thread is in the table folded below".to_string(),
        )
    };
    PerCpu {
        table: Table {
            caption: format!(
                "The {} worst of {n} threads, ranked by max then p99, then the others in one \
                 row (their CPUs, and the range of their p99 and max) and all threads \
                 together; {folded}. {SUMMARY_CAPTION}",
                worst.len()
            ),
            head: summary_head(),
            rows,
            numeric_from: 4,
        },
        every: Some(Table {
            caption: format!("{every_caption} {SUMMARY_CAPTION}"),
            head: summary_head(),
            rows: every_rows,
            numeric_from: 4,
        }),
        every_title,
        heat,
    }
}

/// The probabilistic worst case (`rtscope tail`'s text, as a section).
#[derive(Serialize, Debug)]
struct TailSection {
    answer: String,
    gates: Option<Table>,
    fit: Vec<String>,
    inputs: Vec<String>,
}

fn tail_section(run: &RunRecord) -> TailSection {
    let v = match super::tail::analyze_run(run, &super::tail::Ask::default()) {
        Ok((est, inputs)) => super::tail::view(&est, &inputs),
        Err(e) => {
            return TailSection {
                answer: format!("Not analysed: {e}."),
                gates: None,
                fit: vec![],
                inputs: vec![],
            };
        }
    };
    let rows = v
        .gates
        .into_iter()
        .map(|g| TableRow::plain(vec![g.name, g.status, g.figure, g.limit, g.detail]))
        .collect();
    TailSection {
        answer: v.answer,
        gates: Some(Table {
            caption: "The gates, in the order judged: the first that fails refuses the estimate."
                .into(),
            head: ["gate", "status", "figure", "limit", "what was seen"]
                .map(String::from)
                .to_vec(),
            rows,
            numeric_from: 5,
        }),
        fit: v.fit,
        inputs: v.inputs,
    }
}

fn outlier_table(run: &RunRecord) -> Option<Table> {
    let mut all: Vec<(&ThreadRecord, &crate::record::Outlier)> = run
        .threads
        .iter()
        .flat_map(|t| t.outliers.iter().map(move |o| (t, o)))
        .collect();
    if all.is_empty() {
        return None;
    }
    all.sort_by(|x, y| {
        y.1.latency_ns
            .cmp(&x.1.latency_ns)
            .then(x.1.at.cycle.cmp(&y.1.at.cycle))
    });
    let rows = all
        .iter()
        .take(10)
        .map(|(t, o)| {
            TableRow::plain(vec![
                data::thread_name(run, t),
                us1(o.latency_ns),
                o.at.cycle.to_string(),
                crate::units::fmt_duration(o.at.offset_ns),
                fmt_unix_utc(o.at.unix_ns),
            ])
        })
        .collect();
    Some(Table {
        caption: "The largest wake-up latencies (up to 10), in microseconds (µs), with when \
                  they happened: look for them in the timeline, or in a kernel trace taken at \
                  that time."
            .into(),
        head: [
            "where",
            "latency (µs)",
            "cycle",
            "into the run",
            "wall clock",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
        numeric_from: 1,
    })
}

/// Explanations the report shows per run (`explain RUN` prints all).
const MAX_EXPLANATIONS: usize = 12;
/// Parts listed per explanation; the rest are summed in one row.
const MAX_PARTS: usize = 8;

/// A signed offset from the deadline, for timelines.
fn offset(ns: i64) -> String {
    let sign = if ns < 0 { "−" } else { "+" };
    format!("{sign}{}", num::latency(ns.unsigned_abs()))
}

fn why_item(anchor: &str, i: usize, x: &Explanation, split: Vec<String>) -> WhyItem {
    let id = format!("{anchor}-why-{}", i + 1);
    let mut heading = format!("{}: {} late", why::who(x), num::latency(x.spike.latency_ns));
    if let Some(c) = x.spike.cycle {
        heading.push_str(&format!(" at cycle {c}"));
    }
    if let Some(comm) = &x.thread_comm {
        heading.push_str(&format!(" ({comm}:{})", x.spike.tid));
    }
    let mut rows: Vec<TableRow> = x
        .parts
        .iter()
        .take(MAX_PARTS)
        .map(|p| {
            let kind = PartKind::of(&p.culprit);
            let times = if p.occurrences > 1 {
                format!(" ({} times)", p.occurrences)
            } else {
                String::new()
            };
            let mut row = TableRow::plain(vec![
                format!("{}{times}", p.label),
                num::latency(p.duration_ns),
                format!("{:.1} %", p.share_pct),
            ]);
            row.class = format!("kind-{}", kind.key());
            row
        })
        .collect();
    let rest = &x.parts[x.parts.len().min(MAX_PARTS)..];
    if !rest.is_empty() {
        let ns: u64 = rest.iter().map(|p| p.duration_ns).sum();
        let pct: f64 = rest.iter().map(|p| p.share_pct).sum();
        rows.push(TableRow::plain(vec![
            format!("{} more parts", rest.len()),
            num::latency(ns),
            format!("{pct:.1} %"),
        ]));
    }
    let mut unexplained = TableRow::plain(vec![
        "unexplained".into(),
        num::latency(x.unexplained_ns),
        format!("{:.1} %", x.unexplained_pct),
    ]);
    unexplained.class = format!("kind-{}", PartKind::Unexplained.key());
    rows.push(unexplained);
    let parts = Table {
        caption: "Where the time went: each part's duration and share of the latency.".into(),
        head: ["part", "time", "share"].map(String::from).to_vec(),
        rows,
        numeric_from: 1,
    };
    let timeline = Table {
        caption: "From the deadline to the thread running, as the trace tells it.".into(),
        head: ["from the deadline", "what happened"]
            .map(String::from)
            .to_vec(),
        rows: x
            .timeline
            .iter()
            .map(|s| TableRow::plain(vec![offset(s.since_deadline_ns), s.what.clone()]))
            .collect(),
        numeric_from: 2,
    };
    WhyItem {
        bar: why_svg::bar(x, &id),
        id,
        heading,
        cause: why::cause(x),
        partial: x.completeness == Completeness::Partial,
        partial_reasons: x.partial_reasons.clone(),
        split,
        parts,
        timeline,
        notes: x.notes.clone(),
    }
}

fn why_view(anchor: &str, rec: &RunRecord) -> Option<WhyView> {
    let x = rec.explain.as_ref()?;
    let mut counts = vec![
        pair(
            "threshold",
            format!("{} or later", num::period(x.threshold_ns)),
        ),
        pair("wake-ups that reached it", num::count(x.spikes_seen)),
        pair(
            "explained",
            format!(
                "{} (at most one per thread every 50 ms, the largest)",
                num::count(x.spikes_explained)
            ),
        ),
        pair("trace events read", num::count(x.events_read)),
        pair(
            "trace events lost",
            if x.events_lost > 0 {
                format!(
                    "{} (explanations whose interval lost events are marked partial)",
                    num::count(x.events_lost)
                )
            } else {
                "0".into()
            },
        ),
    ];
    if !x.events.is_empty() {
        counts.push(pair("events recorded", x.events.join(", ")));
    }
    if !x.missing_events.is_empty() {
        counts.push(pair(
            "events this kernel lacks",
            x.missing_events.join(", "),
        ));
    }
    if !x.filters.is_empty() {
        counts.push(pair("kernel event filters", x.filters.join("; ")));
    }
    for (k, v) in [
        (why::SPLIT_NAME, why::split_once_line(x)),
        ("rtla timerlat", why::timerlat_line(x)),
    ] {
        if let Some(v) = v {
            counts.push(pair(k, v));
        }
    }
    let items = x
        .explanations
        .iter()
        .take(MAX_EXPLANATIONS)
        .enumerate()
        .map(|(i, e)| why_item(anchor, i, e, why::item_split_lines(x, e)))
        .collect();
    let more = (x.explanations.len() > MAX_EXPLANATIONS).then(|| {
        format!(
            "{} more explanations are in the run record: rtscope explain RUN prints them all.",
            x.explanations.len() - MAX_EXPLANATIONS
        )
    });
    Some(WhyView {
        counts,
        nothing: why::nothing_line(x),
        items,
        more,
    })
}

fn facts(r: &NamedRun) -> Vec<Pair> {
    let rec = &r.record;
    let mut out = vec![
        pair("reference", r.reference.clone()),
        pair("run id", rec.run_uuid.clone()),
        // The machine measured: a board's name for a run made with --on.
        pair(
            "host",
            crate::store::runs::host_name(&rec.fingerprint.hostname),
        ),
        pair(
            "started",
            crate::units::fmt_start_utc(rec.started_at_unix_ns),
        ),
        pair(
            "duration",
            known(rec, Unknowable::Duration, || {
                num::duration_with_hours(crate::units::run_length(rec.duration_ns))
            }),
        ),
        pair(
            "status",
            format!(
                "{} (ended by: {})",
                num::serde_name(&rec.status),
                num::serde_name(&rec.end_reason)
            ),
        ),
    ];
    let mut source = rec.source.kind.to_string();
    if let Some(f) = &rec.source.format {
        source.push_str(&format!(", format {f}"));
    }
    if let Some(f) = &rec.source.file {
        source.push_str(&format!(", file {f}"));
    }
    out.push(pair("source", source));
    out.push(pair(
        "tool",
        format!("{} {}", rec.tool.name, rec.tool.version),
    ));
    if !rec.source.command_line.is_empty() {
        out.push(pair(
            "command",
            crate::redact::command_line(&rec.source.command_line).join(" "),
        ));
    }
    if !rec.tags.is_empty() {
        let tags: Vec<String> = rec.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push(pair("tags", tags.join(", ")));
    }
    if let Some(q) = super::split::quantity_line(rec) {
        out.push(pair("quantity", q));
    }
    let lines = super::split::lines(rec);
    let more = lines.len().saturating_sub(PAGE_THREADS);
    for l in lines.into_iter().take(PAGE_THREADS) {
        out.push(pair("per CPU", l));
    }
    if more > 0 {
        out.push(pair(
            "per CPU",
            format!("{more} more threads are left out here: {EVERY_THREAD_IS}"),
        ));
    }
    out
}

fn setup(rec: &RunRecord) -> Vec<Pair> {
    let o = &rec.options;
    let mut out = vec![
        pair(
            "interval",
            format!(
                "{}{}",
                known(rec, Unknowable::Interval, || num::period(o.interval_ns)),
                if o.distance_ns > 0 {
                    format!(" (+{} per thread)", num::period(o.distance_ns))
                } else {
                    String::new()
                }
            ),
        ),
        pair(
            "policy, priority",
            format!(
                "{} {}",
                o.policy,
                known(rec, Unknowable::Priority, || o.priority.to_string())
            ),
        ),
        pair("timer", format!("{} on the {} clock", o.timer, o.clock)),
        pair("CPUs", cpus_line(&o.cpus)),
        pair("warm-up", num::duration(o.warmup_ns)),
        pair(
            "window",
            if o.window_ns > 0 {
                num::duration(o.window_ns)
            } else {
                "none".into()
            },
        ),
        pair(
            "omission correction",
            if o.omission_correction { "on" } else { "off" },
        ),
        pair(
            "memory locked",
            known(rec, Unknowable::Mlockall, || {
                if o.mlockall { "yes" } else { "no" }.into()
            }),
        ),
        pair(
            "/dev/cpu_dma_latency",
            o.dma_latency_us
                .map(|v| format!("{v} µs"))
                .unwrap_or_else(|| {
                    if rec.source.kind.is(crate::kinds::SourceKind::Imported) {
                        "unknown".into()
                    } else {
                        "not held".into()
                    }
                }),
        ),
    ];
    if let Some(l) = rec.limits.max_latency_ns {
        out.push(pair(
            "latency limit",
            format!(
                "{} ({})",
                num::latency(l),
                if rec.limits.exceeded {
                    "exceeded"
                } else {
                    "met"
                }
            ),
        ));
    }
    out
}

/// The threads' CPUs as a compact list (`0-3,8,10-127`), with how many
/// threads when several share a CPU and how many were not pinned.
fn cpus_line(cpus: &[Option<u32>]) -> String {
    let pinned: Vec<usize> = cpus.iter().flatten().map(|c| *c as usize).collect();
    let free = cpus.len() - pinned.len();
    let list = crate::units::format_cpu_list(&pinned);
    let mut distinct = pinned.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let mut out = Vec::new();
    if !pinned.is_empty() {
        out.push(if distinct.len() < pinned.len() {
            format!("{list} ({} threads)", pinned.len())
        } else {
            list
        });
    }
    if free > 0 {
        out.push(if free == cpus.len() && free == 1 {
            "any".into()
        } else {
            format!("any ({})", num::counted(free as u64, "thread", "threads"))
        });
    }
    out.join(", ")
}

fn load(rec: &RunRecord) -> Vec<Pair> {
    let Some(l) = &rec.load else {
        return vec![];
    };
    let mut out = vec![
        pair("profile", l.profile.clone()),
        pair("seed", l.seed.to_string()),
    ];
    for c in &l.commands {
        out.push(pair(&format!("command ({})", c.part), c.argv.join(" ")));
    }
    out.push(pair("phases", phases_text(l, rec.duration_ns)));
    if let Some(a) = &l.achieved {
        out.push(pair("achieved", crate::load::achieved::describe(a)));
    }
    for f in &l.failures {
        out.push(pair("failure", f.clone()));
    }
    out
}

/// The load's phases in words: how many, of how many parts, and for how
/// long some part was on, within the run (the parts' phases overlap: their
/// lengths added up can pass the run's).
fn phases_text(l: &crate::record::LoadRecord, run_ns: u64) -> String {
    // An import may not know the run's length: then nothing is clipped.
    let limit = if run_ns > 0 { run_ns } else { u64::MAX };
    let mut spans: Vec<(u64, u64)> = l
        .phases
        .iter()
        .map(|p| (p.start_offset_ns.min(limit), p.end_offset_ns.min(limit)))
        .filter(|(a, b)| b > a)
        .collect();
    spans.sort_unstable();
    let mut on_ns = 0;
    let mut open: Option<(u64, u64)> = None;
    for (a, b) in spans {
        match open {
            Some((s, e)) if a <= e => open = Some((s, e.max(b))),
            Some((s, e)) => {
                on_ns += e - s;
                open = Some((a, b));
            }
            None => open = Some((a, b)),
        }
    }
    if let Some((s, e)) = open {
        on_ns += e - s;
    }
    let parts: std::collections::BTreeSet<&str> =
        l.phases.iter().map(|p| p.part.as_str()).collect();
    let of_run = if run_ns > 0 {
        format!(" of the run's {}", num::duration(run_ns))
    } else {
        String::new()
    };
    format!(
        "{} of {} (some load on for {}{of_run}; strips above the timeline)",
        num::counted(l.phases.len() as u64, "phase", "phases"),
        num::counted(parts.len() as u64, "part", "parts"),
        num::duration(on_ns),
    )
}

/// `s`, or "-" when it is empty.
fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.to_string()
    }
}

fn fingerprint(rec: &RunRecord) -> Vec<Pair> {
    let fp = &rec.fingerprint;
    let mut out: Vec<Pair> = fp
        .flatten()
        .into_iter()
        // The CPUs are told below, one row per set of alike CPUs.
        .filter(|(k, _)| !k.starts_with("cpus."))
        .map(|(k, v)| match k.as_str() {
            _ if v.is_empty() => pair(&k, "-"),
            // A list of sentences: semicolons read better than commas.
            "preemption_evidence" => pair(&k, fp.preemption_evidence.join("; ")),
            _ => pair(&k, v),
        })
        .collect();
    out.extend(cpu_rows(&fp.cpus));
    out.push(pair("comparable hash", fp.comparable_hash()));
    out
}

/// The fingerprint's CPUs in words, CPUs alike in one row: `CPUs 0-3:
/// governor performance, 800-3600 MHz; idle states POLL (0 µs), C1 (2 µs,
/// disabled)`.
fn cpu_rows(cpus: &[crate::record::FingerprintCpu]) -> Vec<Pair> {
    let describe = |c: &crate::record::FingerprintCpu| {
        let mut parts = Vec::new();
        if let Some(g) = &c.governor {
            parts.push(format!("governor {g}"));
        }
        match (c.min_khz, c.max_khz) {
            (Some(a), Some(b)) => parts.push(format!("{}-{} MHz", a / 1000, b / 1000)),
            (Some(a), None) => parts.push(format!("from {} MHz", a / 1000)),
            (None, Some(b)) => parts.push(format!("up to {} MHz", b / 1000)),
            (None, None) => {}
        }
        if !c.idle_states.is_empty() {
            let states: Vec<String> = c
                .idle_states
                .iter()
                .map(|s| {
                    format!(
                        "{} ({} µs{})",
                        s.name,
                        s.exit_latency_us,
                        if s.disabled { ", disabled" } else { "" }
                    )
                })
                .collect();
            parts.push(format!("idle states {}", states.join(", ")));
        }
        if parts.is_empty() {
            "no cpufreq or cpuidle settings recorded".to_string()
        } else {
            parts.join("; ")
        }
    };
    let mut groups: Vec<(Vec<usize>, String)> = Vec::new();
    for c in cpus {
        let d = describe(c);
        match groups.iter_mut().find(|(_, g)| *g == d) {
            Some((ids, _)) => ids.push(c.cpu as usize),
            None => groups.push((vec![c.cpu as usize], d)),
        }
    }
    groups
        .into_iter()
        .map(|(ids, d)| {
            let list = crate::units::format_cpu_list(&ids);
            let key = if ids.len() == 1 {
                format!("CPU {list}")
            } else {
                format!("CPUs {list}")
            };
            pair(&key, d)
        })
        .collect()
}

/// What the run lacks, said plainly (imported runs, mostly).
fn missing(rec: &RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    let hist_samples: u64 = rec
        .threads
        .iter()
        .filter_map(|t| t.histogram.to_histogram().ok())
        .map(|h| h.total())
        .sum();
    out.extend(left_out_line(rec.threads.len()));
    if rec.threads.is_empty() {
        out.push("This run has no threads: there is nothing to show.".into());
    } else if hist_samples == 0 {
        out.push(
            "No latency histogram: the histogram and the exceedance curve cannot be drawn.".into(),
        );
    }
    if !rec.threads.is_empty() && rec.threads.iter().all(|t| t.windows.is_empty()) {
        out.push(
            "No per-window series: the timeline of max and p99 cannot be drawn (the source \
             did not record latency over time)."
                .into(),
        );
    }
    if rec.overall.samples > 0 && rec.overall.p99_ns.is_none() {
        out.push("No quantiles (p50 … p99.99): the source gave only min, avg and max.".into());
    }
    if rec.overall.samples > 0 && rec.overall.avg_ns.is_none() {
        out.push("No average: the source did not give one.".into());
    }
    if rec.fingerprint.kernel_release.is_empty() {
        out.push(
            "No system fingerprint: what the system was is unknown, so comparisons with this \
             run cannot be checked for fairness."
                .into(),
        );
    }
    if let Some(t) = rec
        .threads
        .first()
        .filter(|t| t.histogram.resolution_ns >= 1000)
    {
        out.push(format!(
            "Latencies were recorded at {} resolution by the source.",
            num::period(t.histogram.resolution_ns)
        ));
    }
    out
}

fn run_view(i: usize, r: &NamedRun) -> Result<RunView, ReportError> {
    let rec = &r.record;
    let anchor = format!("run-{}", i + 1);
    let mut figures = Vec::new();
    let has_hist = rec.threads.iter().any(|t| !t.histogram.buckets.is_empty());
    if has_hist {
        let many = if rec.threads.len() > PAGE_THREADS {
            format!(
                " With this many threads, all of them together and the 8 worst (by max, then \
                 p99) are drawn, the others as one grey range; the heat strip above has the \
                 {PAGE_THREADS} worst."
            )
        } else if rec.threads.len() > data::MAX_THREAD_CURVES {
            " With this many threads, all of them together and the 8 worst (by max, then \
             p99) are drawn, the others as one grey range; the heat strip above has every one."
                .to_string()
        } else {
            String::new()
        };
        let h = data::hist_run(rec, &format!("{}: latency histogram", r.name))?;
        figures.push(figure(
            &h,
            &format!("{anchor}-hist"),
            format!("{HIST_CAPTION}{many}"),
        )?);
        let e = data::exceedance_run(rec, &format!("{}: exceedance", r.name))?;
        figures.push(figure(
            &e,
            &format!("{anchor}-exceedance"),
            format!("{EXCEEDANCE_CAPTION}{many}"),
        )?);
    }
    if let Some(t) = data::timeline_run(rec, &format!("{}: latency over time", r.name)) {
        let w = rec
            .threads
            .iter()
            .find(|t| !t.windows.is_empty())
            .map(|t| (t.windows.window_ns, t.windows.compacted));
        let mut caption = String::from(
            "Maximum (solid) and 99th percentile (dashed) wake-up latency per window over the \
             run (as OSADL's long-term plots)",
        );
        if let Some((w, compacted)) = w {
            caption.push_str(&format!(", windows of {}", num::duration(w)));
            if compacted {
                caption.push_str(" (merged as the run grew; p99 is then an upper bound)");
            }
        }
        if rec.threads.len() > data::MAX_THREAD_CURVES {
            caption.push_str(
                "; with this many threads, the maximum of the 8 worst (by max, then p99), and \
                 the others' maxima as one grey range",
            );
        }
        if !t.bands.is_empty() {
            caption.push_str("; strips above the chart: when each part of the load was on");
        }
        caption.push('.');
        figures.push(figure(&t, &format!("{anchor}-timeline"), caption)?);
    }
    let why = why_view(&anchor, rec);
    let per_cpu = per_cpu(rec, &anchor);
    Ok(RunView {
        anchor,
        name: r.name.clone(),
        facts: facts(r),
        verdict: verdict::verdict(rec).into(),
        summary: per_cpu.table,
        every: per_cpu.every,
        every_title: per_cpu.every_title,
        heat: per_cpu.heat,
        figures,
        missing: missing(rec),
        warnings: rec.warnings.clone(),
        outliers: outlier_table(rec),
        tail: tail_section(rec),
        why,
        setup: setup(rec),
        load: load(rec),
        fingerprint: fingerprint(rec),
    })
}

/// The name of a run's load: "none" only when rtscope measured it
/// without one; an import does not say ("unknown (not recorded)").
fn load_name(r: &RunRecord) -> String {
    match &r.load {
        Some(l) => l.profile.clone(),
        None if r.source.kind.is(crate::kinds::SourceKind::Imported) => {
            "unknown (not recorded)".into()
        }
        None => "none".into(),
    }
}

/// The side by side table: one column per run, as the tables of Christophe
/// Blaess's articles set them.
fn side_by_side(runs: &[NamedRun]) -> Table {
    let mut head = vec![String::new()];
    head.extend(runs.iter().map(|r| r.name.clone()));
    // Rows of words (kernel, verdict) wrap in their cells; rows of
    // numbers keep each number on one line.
    let text_row = |name: &str, f: &dyn Fn(&RunRecord) -> String| {
        let mut cells = vec![name.to_string()];
        cells.extend(runs.iter().map(|r| f(&r.record)));
        TableRow {
            class: "text".into(),
            ..TableRow::plain(cells)
        }
    };
    let mut rows = vec![
        text_row("host", &|r| or_dash(&r.fingerprint.hostname)),
        text_row("kernel", &|r| {
            if r.fingerprint.kernel_release.is_empty() {
                "-".into()
            } else {
                r.fingerprint.kernel_release.clone()
            }
        }),
        text_row("preemption", &|r| {
            r.fingerprint.preemption_model.to_string()
        }),
        text_row("load", &|r| load_name(r)),
        text_row("CPUs measured", &|r| r.threads.len().to_string()),
        text_row("interval", &|r| {
            known(r, Unknowable::Interval, || {
                num::period(r.options.interval_ns)
            })
        }),
        text_row("duration", &|r| {
            known(r, Unknowable::Duration, || {
                num::duration(crate::units::run_length(r.duration_ns))
            })
        }),
        text_row("samples", &|r| {
            known(r, Unknowable::Count, || num::count(r.overall.samples))
        }),
    ];
    if runs
        .iter()
        .any(|r| Quantity::of(&r.record) != Quantity::WakeupLatency)
    {
        // Runs of other quantities are never read as wake-up latencies.
        rows.insert(
            1,
            text_row("measures", &|r| Quantity::of(r).describe().into()),
        );
    }
    for m in METRICS {
        let label = format!("{m} (µs)");
        let values = runs.iter().map(|r| {
            let r = &r.record;
            (r.overall.samples > 0)
                .then(|| r.overall.metric(m))
                .flatten()
        });
        let marks = super::compare::overall_marks(runs, m);
        let mut cells = vec![label];
        cells.extend(values.zip(marks).map(|(v, mark)| match mark {
            Some(mark) => format!("{}: {mark}", us_cell_stated(v)),
            None => us_cell_stated(v),
        }));
        // Marked rows wrap in their cells, as rows of words do.
        let marked = cells.iter().any(|c| c.contains(": "));
        rows.push(TableRow {
            class: if marked { "text".into() } else { String::new() },
            ..TableRow::plain(cells)
        });
    }
    rows.push(text_row("missed periods", &|r| {
        known(r, Unknowable::MissedPeriods, || {
            num::count(r.overall.missed_periods)
        })
    }));
    rows.push(text_row("verdict", &|r| verdict::status_line(r)));
    Table {
        caption: format!(
            "The runs side by side (all threads of each). Latencies in microseconds (µs); each \
             run is set against the first ({}). {}",
            runs[0].name,
            super::compare::NOISE_SENTENCE
        ),
        head,
        rows,
        numeric_from: 1,
    }
}

fn comparison(runs: &[NamedRun]) -> Result<ComparisonView, ReportError> {
    let mut warnings = Vec::new();
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let (a, b) = (&runs[i], &runs[j]);
            if let Some(w) = fairness::warning(&a.name, &a.record, &b.name, &b.record) {
                warnings.push(w);
            }
        }
    }
    let pairs: Vec<(&str, &RunRecord)> =
        runs.iter().map(|r| (r.name.as_str(), &r.record)).collect();
    let mut figures = Vec::new();
    let mut missing = Vec::new();
    let with_hist: Vec<(&str, &RunRecord)> = pairs
        .iter()
        .copied()
        .filter(|(_, r)| r.threads.iter().any(|t| !t.histogram.buckets.is_empty()))
        .collect();
    if with_hist.len() < pairs.len() {
        missing.push(
            "Runs without a histogram are left out of the overlaid histogram and exceedance."
                .to_string(),
        );
    }
    if !with_hist.is_empty() {
        let h = data::hist_runs(&with_hist, "Latency histograms compared")?;
        figures.push(figure(
            &h,
            "compare-hist",
            "Latency histograms of the runs (all threads of each) overlaid, log scales, 1 µs \
             classes (as Christophe Blaess's articles compare results)."
                .into(),
        )?);
        let e = data::exceedance_runs(&with_hist, "Exceedance compared")?;
        figures.push(figure(
            &e,
            "compare-exceedance",
            "Share of periods later than x, per run. A curve lower and further left is better; \
             where curves cross, the better run depends on the tolerance."
                .into(),
        )?);
    }
    match data::timeline_runs(&pairs, "Maximum latency over time compared") {
        Some(t) => figures.push(figure(
            &t,
            "compare-timeline",
            "Maximum wake-up latency per window over all threads of each run, from each run's \
             start (load phases are strips above the timeline of each run's own section)."
                .into(),
        )?),
        None => missing.push("No run has a per-window series: no timeline to compare.".into()),
    }
    Ok(ComparisonView {
        warnings,
        table: side_by_side(runs),
        figures,
        missing,
    })
}

/// Why a report could not be made.
#[derive(Debug, Error)]
pub enum ReportError {
    #[error("no runs to report on")]
    NoRuns,
    /// A figure that could not be drawn.
    #[error(transparent)]
    Figure(#[from] PlotError),
    /// A run's histogram that cannot be read for its figures.
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    #[error(transparent)]
    Page(#[from] PageError),
}

/// The report of `runs` as one HTML page.
pub fn render(runs: &[NamedRun], title: Option<&str>) -> Result<String, ReportError> {
    render_with(runs, title, &[])
}

/// The report, with more figures in some runs' sections: `(run index,
/// figure, caption)` (a monitor's long-term view).
pub fn render_with(
    runs: &[NamedRun],
    title: Option<&str>,
    extra: &[(usize, Figure, String)],
) -> Result<String, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let mut views = runs
        .iter()
        .enumerate()
        .map(|(i, r)| run_view(i, r))
        .collect::<Result<Vec<_>, _>>()?;
    for (k, (i, fig, caption)) in extra.iter().enumerate() {
        if let Some(v) = views.get_mut(*i) {
            let id = format!("{}-long-term-{k}", v.anchor);
            v.figures.push(figure(fig, &id, caption.clone())?);
        }
    }
    let comparison = if runs.len() > 1 {
        Some(comparison(runs)?)
    } else {
        None
    };
    let title = title.map(str::to_string).unwrap_or_else(|| {
        if runs.len() == 1 {
            format!("rtscope report: {}", runs[0].name)
        } else {
            format!("rtscope report: {} runs compared", runs.len())
        }
    });
    let subtitle = runs
        .iter()
        .map(|r| {
            format!(
                "{} ({}, {})",
                r.name,
                crate::units::fmt_start_utc(r.record.started_at_unix_ns),
                known(&r.record, Unknowable::Duration, || {
                    format!(
                        "{}",
                        num::duration(crate::units::run_length(r.record.duration_ns))
                    )
                })
            )
        })
        .collect::<Vec<_>>()
        .join(" · ");
    let view = ReportView {
        title,
        subtitle,
        tool: format!("rtscope {}", env!("CARGO_PKG_VERSION")),
        runs: views,
        comparison,
    };
    Ok(page::render(Page::Report, &view)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;
    use crate::report::name_runs;

    #[test]
    fn one_run_report_is_self_contained() {
        let runs = name_runs(vec![(
            "a.json".into(),
            synthetic(&[vec![5_000, 6_000, 7_000, 900_000], vec![4_000, 8_000]]),
        )]);
        let html = render(&runs, None).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        for forbidden in ["<script", "http://", "https://", "<link", "@import", "url("] {
            let ok =
                !html.contains(forbidden) || (forbidden == "http://" && only_svg_namespace(&html));
            assert!(ok, "the report must not contain {forbidden}");
        }
        assert_eq!(html.matches("<svg").count(), 2, "hist and exceedance");
        assert!(html.contains("No per-window series"));
        assert!(html.contains("hundreds-of-µs class"));
        assert!(html.contains("not a bound guaranteed"));
        assert!(!html.contains("Comparison"));
    }

    /// The load and the system in words: the achieved load as a sentence
    /// (was its raw JSON), phases that overlap counted once and within
    /// the run (3 parts on together for 10 s read "30 s in total"), CPUs
    /// alike in one row (were `cpus.0.idle_states.0.disabled false`).
    #[test]
    fn load_and_cpus_read_as_words() {
        use crate::record::{FingerprintCpu, FingerprintIdleState, LoadPhase, LoadRecord};
        let mut r = synthetic(&[vec![5_000, 6_000]]);
        r.duration_ns = 10_000_000_000;
        let phase = |part: &str, a: u64, b: u64| LoadPhase {
            part: part.into(),
            start_offset_ns: a * 1_000_000_000,
            end_offset_ns: b * 1_000_000_000,
        };
        r.load = Some(LoadRecord {
            profile: "hell".into(),
            phases: vec![
                phase("cpu", 0, 12),
                phase("memory", 0, 10),
                phase("io", 2, 9),
            ],
            achieved: Some(serde_json::json!({
                "cpu_busy_pct_avg": 87.5,
                "cpus": [{"cpu": 0, "busy_pct_avg": 85.0}, {"cpu": 1, "busy_pct_avg": 90.0}],
                "context_switches_per_s": {"avg": 1200.0, "max": 3000.0},
            })),
            ..Default::default()
        });
        let idle = |name: &str, us: u64, disabled: bool| FingerprintIdleState {
            name: name.into(),
            exit_latency_us: us,
            disabled,
        };
        let cpu = |n: u32, disabled: bool| FingerprintCpu {
            cpu: n,
            governor: Some("performance".into()),
            min_khz: Some(800_000),
            max_khz: Some(3_600_000),
            idle_states: vec![idle("POLL", 0, false), idle("C1", 2, disabled)],
            ..Default::default()
        };
        r.fingerprint.cpus = vec![cpu(0, false), cpu(1, false), cpu(2, true)];
        let load = load(&r);
        let get = |k: &str| {
            load.iter()
                .find(|p| p.key == k)
                .map(|p| p.value.clone())
                .unwrap_or_else(|| panic!("no {k}"))
        };
        assert_eq!(
            get("phases"),
            "3 phases of 3 parts (some load on for 10 s of the run's 10 s; strips above the timeline)"
        );
        let achieved = get("achieved");
        assert!(
            achieved.starts_with("CPU busy 88% (cpu0 85%, cpu1 90%)"),
            "{achieved}"
        );
        assert!(!achieved.contains('{'), "{achieved}");
        let fp = fingerprint(&r);
        assert!(
            fp.iter().all(|p| !p.key.starts_with("cpus.")),
            "{:?}",
            fp.iter().map(|p| &p.key).collect::<Vec<_>>()
        );
        let row = |k: &str| fp.iter().find(|p| p.key == k).map(|p| p.value.clone());
        assert_eq!(
            row("CPUs 0-1").as_deref(),
            Some("governor performance; 800-3600 MHz; idle states POLL (0 µs), C1 (2 µs)")
        );
        assert_eq!(
            row("CPU 2").as_deref(),
            Some(
                "governor performance; 800-3600 MHz; idle states POLL (0 µs), C1 (2 µs, disabled)"
            )
        );
    }

    fn explained_run() -> RunRecord {
        let mut r = synthetic(&[vec![5_000, 20_000_000], vec![4_000, 300_000]]);
        let explanations = vec![
            crate::report::why::synthetic(0, 0, 20_000_000, false),
            crate::report::why::synthetic(1, 1, 300_000, true),
        ];
        r.explain = Some(crate::record::ExplainRecord {
            threshold_ns: 100_000,
            events: vec!["sched:sched_switch".into(), "irq:irq_handler_entry".into()],
            missing_events: vec!["irq_vectors:local_timer_entry".into()],
            filters: vec![],
            spikes_seen: 9,
            spikes_explained: 2,
            events_read: 5_000,
            events_lost: 42,
            explanations,
            timerlat_available: None,
        });
        r
    }

    #[test]
    fn explanations_get_a_section_with_bars_timelines_and_a_partial_badge() {
        let runs = name_runs(vec![("a.json".into(), explained_run())]);
        let html = render(&runs, None).unwrap();
        let at = html
            .find("<h3>Why were they late?</h3>")
            .expect("the section");
        assert!(
            html.find("<h3>Largest wake-ups</h3>").unwrap() < at,
            "beside the largest wake-ups"
        );
        let why = &html[at..];
        assert_eq!(why.matches("<svg id=\"run-1-why-").count(), 2);
        assert_eq!(why.matches("class=\"part thread\"").count(), 2);
        assert!(why.contains("thread 0 (CPU 0): 20.00 ms late at cycle 42 (rtscope-t0:100)"));
        assert!(why.contains("blocked by rtscope-hog:4242 (RT 90) for"));
        assert_eq!(
            why.matches("partial: events were lost, this story is incomplete")
                .count(),
            1
        );
        assert!(why.contains("the trace lost 42 events of CPU 1 in this interval"));
        assert!(
            why.contains("<th class=\"num\">from the deadline</th>")
                || why.contains("<th>from the deadline</th>")
        );
        assert!(why.contains("CPU 0 switches to thread 100"), "the timeline");
        assert!(why.contains("<dd>9</dd>") && why.contains("irq_vectors:local_timer_entry"));
        assert!(!why.contains("nothing to explain"));
        // Still self-contained.
        assert!(only_svg_namespace(&html));
        assert!(!html.contains("<script"));

        let mut quiet = synthetic(&[vec![5_000]]);
        quiet.explain = Some(crate::record::ExplainRecord {
            threshold_ns: 100_000,
            ..Default::default()
        });
        let html = render(&name_runs(vec![("b.json".into(), quiet)]), None).unwrap();
        assert!(html.contains("no wake-up reached 100 µs: nothing to explain"));
        assert!(!html.contains("class=\"why-bar\""));
        // Without --explain, no section.
        let html = render(
            &name_runs(vec![("c.json".into(), synthetic(&[vec![5_000]]))]),
            None,
        )
        .unwrap();
        assert!(!html.contains("Why were they late?"));
    }

    #[test]
    fn names_from_the_trace_are_escaped() {
        let mut r = explained_run();
        let x = &mut r.explain.as_mut().unwrap().explanations[0];
        x.cause = "blocked by <img src=x>:1".into();
        x.parts[0].label = "<img src=x>:1".into();
        x.timeline[0].what = "<img src=x> runs".into();
        let html = render(&name_runs(vec![("a.json".into(), r)]), None).unwrap();
        assert!(!html.contains("<img"), "escaped everywhere");
    }

    /// `n` threads on CPUs 0..n, thread i's max 10 µs + i ns, but thread
    /// `n * 3 / 5` reaches 900 µs: the bad CPU to find.
    fn many(n: usize) -> RunRecord {
        let bad = n * 3 / 5;
        let threads: Vec<Vec<u64>> = (0..n)
            .map(|i| {
                let mut v = vec![2_000 + i as u64; 100];
                v.push(10_000 + i as u64);
                if i == bad {
                    v.push(900_000);
                }
                v
            })
            .collect();
        synthetic(&threads)
    }

    /// The page without its folded `<details>` parts.
    fn unfolded(html: &str) -> String {
        let mut out = String::new();
        let mut rest = html;
        while let Some(a) = rest.find("<details") {
            out.push_str(&rest[..a]);
            let b = rest[a..].find("</details>").expect("closed") + a;
            rest = &rest[b + "</details>".len()..];
        }
        out.push_str(rest);
        out
    }

    /// The thread cells (first column) of the per-thread table's rows.
    fn thread_cells(html: &str) -> Vec<String> {
        let at = html.find("<h3>Latency per CPU</h3>").expect("the table");
        let table = &html[at..at + html[at..].find("</table>").unwrap()];
        table
            .split("<tr")
            .skip(2)
            .map(|r| {
                let c = &r[r.find("<td").unwrap()..];
                let c = &c[c.find('>').unwrap() + 1..];
                c[..c.find("</td>").unwrap()].to_string()
            })
            .collect()
    }

    #[test]
    fn few_threads_keep_the_table_in_thread_order_without_a_strip() {
        for n in [2, 16] {
            let html = render(&name_runs(vec![("a.json".into(), many(n))]), None).unwrap();
            let mut want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            want.push("all".into());
            assert_eq!(thread_cells(&html), want, "{n} threads");
            assert!(!html.contains("<details"), "{n} threads: nothing folded");
            assert!(!html.contains("class=\"others\""), "{n} threads");
            let strips = html.matches("<svg id=\"run-1-heat\"").count();
            assert_eq!(strips, usize::from(n > 8), "{n} threads");
        }
        let html = render(&name_runs(vec![("a.json".into(), many(2))]), None).unwrap();
        assert!(html.contains("by 2 threads on CPUs 0-1,"), "the evidence");
        assert!(html.contains("<dt>CPUs</dt><dd>0-1</dd>"));
        // 16 threads: one strip row per thread.
        let html = render(&name_runs(vec![("a.json".into(), many(16))]), None).unwrap();
        assert_eq!(html.matches("<g class=\"row\">").count(), 16);
    }

    #[test]
    fn many_threads_rank_the_worst_fold_the_rest_and_strip_every_one() {
        let html = render(&name_runs(vec![("a.json".into(), many(128))]), None).unwrap();
        let cells = thread_cells(&html);
        // The bad thread first, then the highest max of the others.
        assert_eq!(
            cells,
            [
                "76",
                "127",
                "126",
                "125",
                "124",
                "123",
                "122",
                "121",
                "the other 120",
                "all"
            ]
        );
        let others = &html[html.find("<tr class=\"others\">").unwrap()..];
        let others = &others[..others.find("</tr>").unwrap()];
        assert!(
            others.contains("<td class=\"\">0-75,77-120</td>"),
            "{others}"
        );
        assert!(others.contains(">10.0–10.1</td>"), "max range: {others}");
        // Outside <details>, at most ~20 per-thread rows.
        let top = unfolded(&html);
        let shown = thread_cells(&top);
        assert_eq!(shown.len(), 10, "{shown:?}");
        assert!(shown.len() <= 20);
        // Folded: every thread and the all row, in thread order.
        let every = &html[html.find("<details class=\"every\">").unwrap()..];
        let every = &every[..every.find("</details>").unwrap()];
        assert!(every.contains("<summary>Every thread (128), in thread order</summary>"));
        assert_eq!(
            every.matches("<tr>").count() + every.matches("<tr class").count(),
            130
        );
        // The strip: 128 rows, a title on every cell, the worst named.
        let strip = &html[html.find("<svg id=\"run-1-heat\"").unwrap()..];
        let strip = &strip[..strip.find("</svg>").unwrap()];
        assert_eq!(strip.matches("<g class=\"row\">").count(), 128);
        assert_eq!(
            strip.matches("<rect").count(),
            128 * 5 + 11,
            "cells and legend"
        );
        assert!(strip.contains("<title>CPU 76, max: 900 µs</title>"));
        assert!(strip.contains(">#1 900 µs</text>"));
        assert!(strip.contains(">unknown</text>"), "the legend");
        // The evidence and set-up name the CPUs compactly.
        assert!(html.contains("by 128 threads on CPUs 0-127,"));
        assert!(!html.contains("CPU 0, 1, 2"));
        // Nothing wider than the page: the strip shrinks, no fixed widths.
        assert!(html.contains("svg.heat { display: block; max-width: 100%;"));
        assert!(!html.contains("min-width: 1"), "no fixed wide width");
    }

    #[test]
    fn the_strip_groups_cpus_by_node_and_core_where_the_fingerprint_says() {
        use crate::record::FingerprintCpu;
        let mut r = many(32);
        // Two nodes of 8 cores with 2 threads each: CPU c and c+16 share
        // core c % 8 of node (c % 16) / 8.
        r.fingerprint.cpus = (0..32u32)
            .map(|c| FingerprintCpu {
                cpu: c,
                core_id: Some(c % 8),
                package_id: Some((c % 16) / 8),
                numa_node: Some((c % 16) / 8),
                smt_siblings: Some(format!("{},{}", c % 16, c % 16 + 16)),
                ..Default::default()
            })
            .collect();
        let html = render(&name_runs(vec![("a.json".into(), r)]), None).unwrap();
        let strip = &html[html.find("<svg id=\"run-1-heat\"").unwrap()..];
        let strip = &strip[..strip.find("</svg>").unwrap()];
        let a = strip
            .find("NUMA node 0, package 0 (CPUs 0-7,16-23)")
            .unwrap();
        let b = strip
            .find("NUMA node 1, package 1 (CPUs 8-15,24-31)")
            .unwrap();
        assert!(a < b);
        // Siblings side by side: CPU 0 then CPU 16 on core 0.
        let c0 = strip.find(">CPU 0 (core 0)<").unwrap();
        let c16 = strip.find(">CPU 16 (core 0)<").unwrap();
        let c1 = strip.find(">CPU 1 (core 1)<").unwrap();
        assert!(a < c0 && c0 < c16 && c16 < c1 && c1 < b);
        assert!(html.contains("grouped by NUMA node"));
    }

    /// A run of 3 000 threads: the page draws the worst 256 one by one
    /// and says how many it leaves out, in a bounded size and time (its
    /// page took 28 s in a release build, and 4 MB, before).
    #[test]
    fn a_run_of_thousands_of_threads_makes_a_bounded_page() {
        use crate::record::FingerprintCpu;
        let n = 3_000;
        let mut r = many(n);
        // Placed on two NUMA nodes: the strip groups them (a search of
        // the fingerprint's CPUs for every thread was quadratic).
        r.fingerprint.cpus = (0..n as u32)
            .map(|c| FingerprintCpu {
                cpu: c,
                core_id: Some(c % 1_500),
                package_id: Some(c / 1_500),
                numa_node: Some(c / 1_500),
                ..Default::default()
            })
            .collect();
        let runs = name_runs(vec![("a.json".into(), r)]);
        let began = std::time::Instant::now();
        let html = render(&runs, None).unwrap();
        let took = began.elapsed();
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
        assert!(html.len() < 1_500_000, "{} bytes", html.len());
        let left = format!(
            "This run has {} threads: the page draws the 256 worst (by max, then p99) one by \
             one and leaves out the other {}",
            num::count(3_000),
            num::count(2_744)
        );
        assert!(html.contains(&left), "the page says what it leaves out");
        let strip = &html[html.find("<svg id=\"run-1-heat\"").unwrap()..];
        let strip = &strip[..strip.find("</svg>").unwrap()];
        assert_eq!(strip.matches("<g class=\"row\">").count(), PAGE_THREADS);
        // The bad thread (1 800) is shown, the best (0) is not.
        assert!(strip.contains("<title>CPU 1800 (core 300), max: 900 µs</title>"));
        assert!(strip.contains("NUMA node 1, package 1 (CPUs 1500-2999)"));
        assert!(!strip.contains(">CPU 0<"));
        assert!(html.contains("the other 2744 are left out"));
        let every = &html[html.find("<details class=\"every\">").unwrap()..];
        let every = &every[..every.find("</details>").unwrap()];
        assert!(
            every.contains("<summary>The 256 worst threads of 3000, in thread order</summary>")
        );
        assert_eq!(
            every.matches("<tr>").count() + every.matches("<tr class").count(),
            PAGE_THREADS + 2,
            "head, 256 threads, all"
        );
        assert!(every.contains("rtscope runs show RUN --all"));
        assert_eq!(thread_cells(&unfolded(&html)).len(), 10);
    }

    fn only_svg_namespace(html: &str) -> bool {
        html.matches("http://").count() == html.matches("http://www.w3.org/2000/svg").count()
    }

    #[test]
    fn labels_are_escaped() {
        let mut r = synthetic(&[vec![5_000]]);
        r.label = Some("<b>evil</b> & co".into());
        let runs = name_runs(vec![("a.json".into(), r)]);
        let html = render(&runs, None).unwrap();
        assert!(!html.contains("<b>evil"));
        // In the headings, the page and the figures' titles.
        assert!(html.contains("<h2>&lt;b&gt;evil&lt;&#x2f;b&gt; &amp; co</h2>"));
        assert!(
            html.contains("<title>&lt;b&gt;evil&lt;/b&gt; &amp; co: latency histogram</title>")
        );
    }
}
