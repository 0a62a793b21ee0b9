//! The study's HTML report: one self-contained page (CSS and SVG inline,
//! no script, no network) that compares a study's cells. The study and
//! where it stands (runs done, waiting for another kernel, to do, cut
//! short and redone); the matrix as a table with the best value of each
//! column marked; the spread between repetitions, so that a reader sees
//! whether a difference is larger than the noise; histograms and
//! exceedance curves overlaid per dimension (seed 000's compare plots);
//! the verdict per cell, with the run ids behind it.
//!
//! This file turns a study and its cells' results into a view (plain
//! strings and tables) and hands it to the minijinja template in
//! assets/templates; the template only lays it out. Reads neither the
//! clock, the system nor the store: the same study and results give the
//! same bytes.

use super::results::CellResult;
use super::state::{SlotState, SlotStatus, Study};
use crate::histogram::Histogram;
use crate::record::RunRecord;
use crate::report::page::{self, Page, Pair, pair};
use crate::report::plot::data::{self, NamedHistogram};
use crate::report::plot::{self, Figure, Size};
use crate::report::verdict::{self, Class};
use crate::text::num;
use crate::units::{fmt_unix_utc, us_cell};
use serde::Serialize;

/// Above this many cells with results, the overlay of every cell is left
/// out (unreadable); the per-dimension figures group them.
pub const MAX_CELL_CURVES: usize = 12;

#[derive(Serialize, Debug)]
struct Head {
    text: String,
    num: bool,
}

#[derive(Serialize, Debug, Default)]
struct TableCell {
    text: String,
    num: bool,
    /// The lowest value of its column.
    best: bool,
    /// Extra CSS class (the verdict's colour).
    class: String,
    /// An anchor in the page this cell links to.
    href: String,
}

fn text(t: impl Into<String>) -> TableCell {
    TableCell {
        text: t.into(),
        ..Default::default()
    }
}

fn numeric(t: impl Into<String>) -> TableCell {
    TableCell {
        text: t.into(),
        num: true,
        ..Default::default()
    }
}

#[derive(Serialize, Debug)]
struct Row {
    id: String,
    cells: Vec<TableCell>,
    /// Said across the remaining columns (a cell without results).
    note: Option<String>,
}

#[derive(Serialize, Debug)]
struct Table {
    caption: String,
    head: Vec<Head>,
    rows: Vec<Row>,
}

#[derive(Serialize, Debug)]
struct FigureView {
    id: String,
    svg: String,
    caption: String,
}

/// Why a study's page could not be made (a bug, never the data).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A figure could not be drawn.
    #[error(transparent)]
    Figure(#[from] crate::report::plot::PlotError),
    /// The page's template failed.
    #[error(transparent)]
    Page(#[from] crate::report::page::PageError),
}

fn figure(fig: &Figure, id: &str, caption: String) -> Result<FigureView, ReportError> {
    Ok(FigureView {
        id: id.into(),
        svg: plot::svg::render_inline(fig, Size::REPORT, id)?,
        caption,
    })
}

/// The overlap of the per-run maxima for one dimension's values.
#[derive(Serialize, Debug)]
struct Separation {
    key: String,
    lines: Vec<Line>,
}

#[derive(Serialize, Debug)]
struct Line {
    text: String,
    /// The ranges do not overlap.
    separable: bool,
}

#[derive(Serialize, Debug)]
struct SpreadView {
    table: Option<Table>,
    separations: Vec<Separation>,
    missing: Vec<String>,
}

#[derive(Serialize, Debug)]
struct CellVerdict {
    anchor: String,
    heading: String,
    /// CSS class of the verdict box (the class's key).
    class: String,
    /// The box's title, deadline first ([`verdict::status_line`]), as
    /// the run report's: a class never comes before the deadline.
    title: String,
    provisional: bool,
    headline: String,
    /// Which run the verdict rests on.
    worst: Option<String>,
    /// The worst run's probabilistic worst case, in one line.
    tail: Option<String>,
    /// Every finished run: repetition and run id.
    runs: Vec<RunLine>,
    /// Runs not finished: waiting, to do, failed.
    pending: Vec<String>,
    /// Runs cut short (and redone or not).
    interrupted: Vec<String>,
}

/// One finished run of a cell, and where its own report is when the
/// page is served (`rtscope serve`); a file has no link.
#[derive(Serialize, Debug)]
struct RunLine {
    text: String,
    href: Option<String>,
}

#[derive(Serialize, Debug)]
struct StudyView {
    title: String,
    subtitle: String,
    tool: String,
    facts: Vec<Pair>,
    notices: Vec<String>,
    matrix: Table,
    spread: SpreadView,
    figures: Vec<FigureView>,
    figures_missing: Vec<String>,
    verdicts: Vec<CellVerdict>,
}

// ------------------------------------------------------------ a cell's runs

/// The anchor of a cell's verdict (cells are numbered from 1).
fn anchor(c: &CellResult) -> String {
    format!("cell-{}", c.cell.index + 1)
}

fn slots_of<'a>(study: &'a Study, c: &CellResult) -> impl Iterator<Item = &'a SlotStatus> {
    let index = c.cell.index;
    study.slots.iter().filter(move |s| s.slot.cell == index)
}

/// What a run not yet finished is doing, in a few words.
fn pending_word(s: &SlotStatus) -> Option<String> {
    Some(match &s.state {
        SlotState::Done { .. } => return None,
        SlotState::Waiting { boot, .. } => format!("waiting for {boot}"),
        SlotState::CannotBoot { boot, why } => {
            format!("not measured: {boot} could not be booted: {why}")
        }
        SlotState::Running => "being measured now".into(),
        SlotState::ToDo => match s.failure() {
            Some(why) => format!("failed: {why}"),
            None if s.interrupted() > 0 => "interrupted, not yet redone".into(),
            None => "to do".into(),
        },
    })
}

/// The runs of a cell not finished, grouped: `waiting for kernel rt (2
/// runs)`, `to do`, in the order of the study.
fn pending(study: &Study, c: &CellResult) -> Vec<String> {
    let mut groups: Vec<(String, usize)> = Vec::new();
    for w in slots_of(study, c).filter_map(pending_word) {
        match groups.iter_mut().find(|(x, _)| *x == w) {
            Some(g) => g.1 += 1,
            None => groups.push((w, 1)),
        }
    }
    groups
        .into_iter()
        .map(|(w, n)| if n > 1 { format!("{w} ({n} runs)") } else { w })
        .collect()
}

fn runs_word(n: usize) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// `1 run cut short and redone`, `1 run interrupted, not yet redone`.
fn interruptions(study: &Study, c: &CellResult) -> Vec<String> {
    let hit: Vec<&SlotStatus> = slots_of(study, c).filter(|s| s.interrupted() > 0).collect();
    let redone = hit
        .iter()
        .filter(|s| matches!(s.state, SlotState::Done { .. }))
        .count();
    let mut out = Vec::new();
    if redone > 0 {
        out.push(format!("{} cut short and redone", runs_word(redone)));
    }
    if hit.len() > redone {
        out.push(format!(
            "{} interrupted, not yet redone",
            runs_word(hit.len() - redone)
        ));
    }
    out
}

/// The finished run with the highest maximum: `(repetition, id, record)`
/// (the same run as [`CellResult::worst`]).
fn worst(c: &CellResult) -> Option<&(u32, i64, RunRecord)> {
    c.runs
        .iter()
        .max_by_key(|(_, _, r)| r.overall.max_ns.unwrap_or(0))
}

fn has_samples(c: &CellResult) -> bool {
    c.merged.samples > 0 && c.histogram.as_ref().is_some_and(|h| h.total() > 0)
}

/// `12.3 µs – 15.0 µs`, or one value when both ends agree.
fn range(lo: u64, hi: u64) -> String {
    if lo == hi {
        num::latency(lo)
    } else {
        format!("{} – {}", num::latency(lo), num::latency(hi))
    }
}

// ------------------------------------------------------------ the study

/// The study's facts: its matrix and how it runs, then what was
/// measured so far.
fn facts(study: &Study, cells: &[CellResult]) -> Vec<Pair> {
    let runs: Vec<&RunRecord> = cells
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| &r.2))
        .collect();
    let mut out = design_facts(study);
    out.push(pair("created", fmt_unix_utc(study.row.created_at_unix_ns)));
    if let Some(span) = measured_span(&runs) {
        out.push(pair("measured", span));
    }
    out.push(pair("measured on", kernels_used(&runs)));
    out.push(pair("progress", progress(study)));
    if let Some(r) = reboots(study) {
        out.push(pair("reboots", r));
    }
    if let Some(o) = &study.row.running {
        out.push(pair(
            "running now",
            format!(
                "process {} on {}: this report shows the runs finished so far",
                o.pid, o.host
            ),
        ));
    }
    if let Some(p) = &study.row.file_path {
        out.push(pair("study file", p.clone()));
    }
    out
}

/// The newest round of `--reboot`: where it stands, the boots taken,
/// the configurations that could not be booted.
fn reboots(study: &Study) -> Option<String> {
    use crate::store::boots::BootState;
    let r = study.round.as_ref()?;
    let taken = crate::study::reboot::reboots_taken(study);
    let method = crate::study::reboot::Plan::parse(&r.plan)
        .map(|p| format!(" by {}", p.method.name()))
        .unwrap_or_default();
    let mut text = format!(
        "round {} {}: {taken} reboots into configurations{method}",
        r.round,
        r.state.name()
    );
    let missed = study
        .boot_rows
        .iter()
        .filter(|b| b.state == BootState::Missed)
        .count();
    if missed > 0 {
        text.push_str(&format!(
            ", {missed} that did not come up as asked (asked again)"
        ));
    }
    for b in study
        .boot_rows
        .iter()
        .filter(|b| b.state == BootState::Failed)
    {
        text.push_str(&format!(
            "; {} could not be booted: {}",
            b.config,
            b.detail.as_deref().unwrap_or("failed")
        ));
    }
    Some(text)
}

/// The study as its file designs it: name, matrix, fixed settings,
/// duration, repetitions and order.
fn design_facts(study: &Study) -> Vec<Pair> {
    let spec = &study.spec;
    let dims = if spec.matrix.is_empty() {
        "one configuration (no [matrix])".to_string()
    } else {
        let parts: Vec<String> = spec
            .matrix
            .iter()
            .map(|d| {
                let v: Vec<String> = d.values.iter().map(|v| v.to_string()).collect();
                format!("{} ({})", d.key, v.join(", "))
            })
            .collect();
        format!("{} cells: {}", study.cells.len(), parts.join(" × "))
    };
    let mut out = vec![pair("study", study.row.name.clone()), pair("matrix", dims)];
    if !spec.fixed.is_empty() {
        let f: Vec<String> = spec
            .fixed
            .iter()
            .map(|s| format!("{}={}", s.key, s.value))
            .collect();
        out.push(pair("in every cell", f.join(", ")));
    }
    out.push(pair("duration of a run", num::duration(spec.duration_ns)));
    out.push(pair(
        "repetitions",
        format!(
            "{} per cell ({} runs in all)",
            spec.repetitions,
            study.slots.len()
        ),
    ));
    let order = match spec.order {
        super::spec::Order::Random => "random: each repetition a pass over every cell, shuffled",
        super::spec::Order::Interleaved => {
            "interleaved: each repetition a pass over every cell, in matrix order"
        }
        super::spec::Order::Sequential => {
            "sequential: each cell's repetitions one after the other (time and configuration \
             are confounded)"
        }
    };
    out.push(pair("order", format!("{order}; seed {}", study.row.seed)));
    out
}

/// From the first run's start to the last one's end, if any ran.
fn measured_span(runs: &[&RunRecord]) -> Option<String> {
    let first = runs.iter().map(|r| r.started_at_unix_ns).min()?;
    let last = runs
        .iter()
        .map(|r| {
            r.ended_at_unix_ns
                .unwrap_or(r.started_at_unix_ns + r.duration_ns)
        })
        .max()?;
    Some(format!(
        "from {} to {}",
        fmt_unix_utc(first),
        fmt_unix_utc(last)
    ))
}

/// Kernels as the runs' fingerprints say, in order of first use, with
/// their number of runs.
fn kernels_used(runs: &[&RunRecord]) -> String {
    let mut kernels: Vec<(u64, String, usize)> = Vec::new();
    for r in runs {
        let fp = &r.fingerprint;
        let k = if fp.kernel_release.is_empty() {
            "unknown kernel".to_string()
        } else {
            format!("{} ({})", fp.kernel_release, fp.preemption_model)
        };
        match kernels.iter_mut().find(|e| e.1 == k) {
            Some(e) => {
                e.0 = e.0.min(r.started_at_unix_ns);
                e.2 += 1;
            }
            None => kernels.push((r.started_at_unix_ns, k, 1)),
        }
    }
    kernels.sort();
    if kernels.is_empty() {
        return "no run finished yet".to_string();
    }
    kernels
        .iter()
        .map(|(_, k, n)| format!("{k}: {}", runs_word(*n)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs done, waiting for a kernel, to do.
fn progress(study: &Study) -> String {
    let mut progress = vec![format!(
        "{} of {} runs done",
        study.done(),
        study.slots.len()
    )];
    for (k, n, _) in study.waiting_boots() {
        progress.push(format!("{n} waiting for {k}"));
    }
    if study.cannot_boot() > 0 {
        progress.push(format!("{} whose boot failed", study.cannot_boot()));
    }
    if study.to_do() > 0 {
        progress.push(format!("{} to do", study.to_do()));
    }
    progress.join("; ")
}

fn notices(study: &Study, cells: &[CellResult]) -> Vec<String> {
    cells
        .iter()
        .filter_map(|c| {
            let i = interruptions(study, c);
            (!i.is_empty()).then(|| format!("{}: {}.", c.cell.label(), i.join("; ")))
        })
        .collect()
}

// ------------------------------------------------------------ the matrix

/// The matrix columns compared (lower is better), with how a value is
/// written.
struct Column {
    head: &'static str,
    value: fn(&CellResult) -> Option<u64>,
    show: fn(Option<u64>) -> String,
}

const COLUMNS: [Column; 4] = [
    Column {
        head: "p99 (µs)",
        value: |c| c.merged.p99_ns,
        show: us_cell,
    },
    Column {
        head: "p99.99 (µs)",
        value: |c| c.merged.p9999_ns,
        show: us_cell,
    },
    Column {
        head: "max (µs)",
        value: |c| c.merged.max_ns,
        show: us_cell,
    },
    Column {
        head: "missed periods",
        value: |c| (c.merged.samples > 0).then_some(c.merged.missed_periods),
        show: |v| v.map(num::count).unwrap_or_else(|| "-".into()),
    },
];

/// The lowest value of a column, when it tells cells apart: two values
/// at least, not all equal.
fn best_of(values: &[Option<u64>]) -> Option<u64> {
    let present: Vec<u64> = values.iter().flatten().copied().collect();
    let lo = *present.iter().min()?;
    (present.len() > 1 && present.iter().any(|v| *v != lo)).then_some(lo)
}

/// The matrix: one row per cell, all repetitions merged.
fn matrix_table(study: &Study, cells: &[CellResult]) -> Table {
    let bests: Vec<Option<u64>> = COLUMNS
        .iter()
        .map(|col| {
            let v: Vec<Option<u64>> = cells
                .iter()
                .filter(|c| !c.runs.is_empty())
                .map(|c| (col.value)(c))
                .collect();
            best_of(&v)
        })
        .collect();
    Table {
        caption: "One row per cell, all repetitions merged (all threads of every finished \
                  run). Latencies in microseconds (µs); the lowest of each column is in bold \
                  (when the column tells cells apart). The verdict is that of the cell's worst \
                  run; the cell number links to it."
            .into(),
        head: matrix_head(study),
        rows: cells.iter().map(|c| matrix_row(study, c, &bests)).collect(),
    }
}

/// The matrix's header: the cell, its configuration (a column per
/// dimension), runs, samples, [`COLUMNS`], the verdict.
fn matrix_head(study: &Study) -> Vec<Head> {
    let head = |text: &str, num: bool| Head {
        text: text.into(),
        num,
    };
    let dims = &study.spec.matrix;
    let mut out = vec![head("cell", false)];
    if dims.is_empty() {
        out.push(head("configuration", false));
    }
    out.extend(dims.iter().map(|d| head(&d.key, false)));
    out.push(head("runs done", true));
    out.push(head("samples", true));
    out.extend(COLUMNS.iter().map(|c| head(c.head, true)));
    out.push(head("verdict (worst run)", false));
    out
}

/// A cell's row; `bests` are the lowest value of each of [`COLUMNS`]. A
/// cell without runs says why in a note.
fn matrix_row(study: &Study, c: &CellResult, bests: &[Option<u64>]) -> Row {
    let dims = &study.spec.matrix;
    let mut cells = vec![TableCell {
        text: (c.cell.index + 1).to_string(),
        href: anchor(c),
        ..Default::default()
    }];
    if dims.is_empty() {
        cells.push(text(c.cell.label()));
    }
    cells.extend(dims.iter().map(|d| {
        text(
            c.cell
                .get(&d.key)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "-".into()),
        )
    }));
    let redone = slots_of(study, c)
        .filter(|s| s.interrupted() > 0 && matches!(s.state, SlotState::Done { .. }))
        .count();
    let mut runs = format!("{} of {}", c.runs.len(), c.planned);
    if redone > 0 {
        runs.push_str(&format!(" ({redone} redone)"));
    }
    cells.push(numeric(runs));
    let pending = pending(study, c);
    let id = format!("row-{}", c.cell.index + 1);
    if c.runs.is_empty() {
        let note = if pending.is_empty() {
            "no run".to_string()
        } else {
            pending.join("; ")
        };
        return Row {
            id,
            cells,
            note: Some(note),
        };
    }
    cells.push(numeric(num::count(c.merged.samples)));
    for (col, best) in COLUMNS.iter().zip(bests) {
        let v = (col.value)(c);
        cells.push(TableCell {
            text: (col.show)(v),
            num: true,
            best: v.is_some() && v == *best,
            ..Default::default()
        });
    }
    cells.push(verdict_cell(c, &pending));
    Row {
        id,
        cells,
        note: None,
    }
}

/// The verdict of the cell's worst run, and what is still pending: the
/// deadline first (met or missed), then the class, as every headline.
fn verdict_cell(c: &CellResult, pending: &[String]) -> TableCell {
    let (class, mut words) = match worst(c) {
        Some((_, _, r)) => {
            let v = verdict::verdict(r);
            let mut w = format!("deadline {}; {}", v.deadline.status(), v.tolerance);
            if v.standing.is_provisional() {
                w.push_str(", provisional");
            }
            (v.class.key(), w)
        }
        None => (Class::NoData.key(), Class::NoData.tolerance().to_string()),
    };
    if !pending.is_empty() {
        words.push_str(&format!(" ({})", pending.join("; ")));
    }
    TableCell {
        text: words,
        class: format!("v-{class}"),
        ..Default::default()
    }
}

// ------------------------------------------------------------ the spread

fn spread_table(cells: &[CellResult]) -> Option<Table> {
    let rows: Vec<Row> = cells
        .iter()
        .filter(|c| c.runs.len() >= 2)
        .filter_map(|c| {
            let p99 = c.spread(|r| r.overall.p99_ns);
            let (lo, hi) = c.spread(|r| r.overall.max_ns)?;
            let ratio = if lo > 0 {
                format!("× {:.2}", hi as f64 / lo as f64)
            } else {
                "-".into()
            };
            Some(Row {
                id: format!("spread-{}", c.cell.index + 1),
                cells: vec![
                    TableCell {
                        text: (c.cell.index + 1).to_string(),
                        href: anchor(c),
                        ..Default::default()
                    },
                    text(c.cell.label()),
                    numeric(c.runs.len().to_string()),
                    numeric(p99.map(|(a, b)| range(a, b)).unwrap_or_else(|| "-".into())),
                    numeric(range(lo, hi)),
                    numeric(ratio),
                ],
                note: None,
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let head = [
        ("cell", false),
        ("configuration", false),
        ("runs", true),
        ("p99, lowest – highest run", true),
        ("max, lowest – highest run", true),
        ("highest ÷ lowest max", true),
    ]
    .into_iter()
    .map(|(t, n)| Head {
        text: t.into(),
        num: n,
    })
    .collect();
    Some(Table {
        caption: "How much the repetitions of one cell differ: the lowest and highest p99 and \
                  maximum of its finished runs. A difference between cells smaller than this \
                  is noise."
            .into(),
        head,
        rows,
    })
}

/// For one dimension, each pair of its values: do the per-run maxima of
/// the cells with one value overlap those with the other?
fn separation(study: &Study, cells: &[CellResult], d: usize) -> Separation {
    let dim = &study.spec.matrix[d];
    let name = |v: &super::spec::Value| format!("{}={v}", dim.key);
    let runs: Vec<Vec<&RunRecord>> = dim
        .values
        .iter()
        .map(|v| {
            cells
                .iter()
                .filter(|c| c.cell.get(&dim.key) == Some(v))
                .flat_map(|c| c.runs.iter().map(|r| &r.2))
                .filter(|r| r.overall.max_ns.is_some())
                .collect()
        })
        .collect();
    let mut lines = Vec::new();
    for i in 0..dim.values.len() {
        for j in i + 1..dim.values.len() {
            lines.push(compare_maxima(
                (&name(&dim.values[i]), &runs[i]),
                (&name(&dim.values[j]), &runs[j]),
            ));
        }
    }
    Separation {
        key: dim.key.clone(),
        lines,
    }
}

/// The per-run maxima of two values (`name`, runs): none yet, they
/// overlap, or one is lower than the other; with one run on each side,
/// whether the runs' windows put the difference beyond the noise.
fn compare_maxima((na, ra): (&str, &[&RunRecord]), (nb, rb): (&str, &[&RunRecord])) -> Line {
    let maxima =
        |rs: &[&RunRecord]| -> Vec<u64> { rs.iter().filter_map(|r| r.overall.max_ns).collect() };
    let (a, b) = (maxima(ra), maxima(rb));
    let shown = |m: &[u64]| {
        let (lo, hi) = (m.iter().min().copied(), m.iter().max().copied());
        format!(
            "{}, {}",
            range(lo.unwrap_or(0), hi.unwrap_or(0)),
            runs_word(m.len())
        )
    };
    let (Some(&alo), Some(&ahi), Some(&blo), Some(&bhi)) = (
        a.iter().min(),
        a.iter().max(),
        b.iter().min(),
        b.iter().max(),
    ) else {
        let none: Vec<&str> = [(na, &a), (nb, &b)]
            .iter()
            .filter(|(_, m)| m.is_empty())
            .map(|(n, _)| *n)
            .collect();
        return Line {
            text: format!(
                "{na} and {nb}: no finished run of {} yet.",
                none.join(" nor of ")
            ),
            separable: false,
        };
    };
    if alo <= bhi && blo <= ahi {
        return Line {
            text: format!(
                "{na} ({}) and {nb} ({}): the maxima of their runs overlap, so the \
                 difference is not separable from the noise between runs.",
                shown(&a),
                shown(&b)
            ),
            separable: false,
        };
    }
    let ((lo_n, lo_m), (hi_n, hi_m)) = if ahi < blo {
        ((na, &a), (nb, &b))
    } else {
        ((nb, &b), (na, &a))
    };
    let mut line = Line {
        text: format!(
            "{lo_n} is lower than {hi_n}: every run's maximum of {lo_n} ({}) is below every \
             run's maximum of {hi_n} ({}).",
            shown(lo_m),
            shown(hi_m)
        ),
        separable: true,
    };
    if a.len() < 2 || b.len() < 2 {
        single_run_noise(&mut line, (na, ra), (nb, rb));
    }
    line
}

/// One run on a side: the spread between runs is unknown; with one run on
/// each side, judge the difference from the two runs' windows instead.
fn single_run_noise(
    line: &mut Line,
    (na, ra): (&str, &[&RunRecord]),
    (nb, rb): (&str, &[&RunRecord]),
) {
    use crate::report::noise::{self, RunWindows, Verdict};
    let judged = match (ra, rb) {
        ([a], [b]) => {
            let (wa, wb) = (
                RunWindows::of(na, a.threads.iter()),
                RunWindows::of(nb, b.threads.iter()),
            );
            let fig = |r: &RunRecord| r.overall.max_ns.unwrap_or(0) as f64;
            Some(noise::judge("max", &wa, &wb, (fig(a), fig(b))).verdict)
        }
        _ => None,
    };
    match judged {
        Some(Verdict::Beyond { p, .. }) => line.text.push_str(&format!(
            " One run each: from their windows, the difference is beyond the noise ({}).",
            noise::p_text(p)
        )),
        Some(v @ Verdict::Within { .. }) => {
            line.separable = false;
            line.text.push_str(&format!(
                " One run each, and from their windows the difference is {}: these runs \
                 cannot tell the values apart; more repetitions would.",
                v.words()
            ));
        }
        Some(Verdict::Unknown(why)) => line.text.push_str(&format!(
            " With a single run on each side the noise is unknown ({why}): more repetitions \
             would tell whether this holds."
        )),
        None => line.text.push_str(
            " With a single run on one side the noise is unknown: more repetitions \
             would tell whether this holds.",
        ),
    }
}

fn spread(study: &Study, cells: &[CellResult]) -> SpreadView {
    let table = spread_table(cells);
    let mut missing = Vec::new();
    if table.is_none() {
        missing.push(if study.spec.repetitions < 2 {
            "The study runs each cell once (repetitions = 1): there is no spread between \
             repetitions to show; below, a difference between single runs is judged from the \
             runs' windows. Set repetitions = 2 or more to see the spread between runs."
                .to_string()
        } else {
            "No cell has two finished runs yet: the spread between repetitions shows once one \
             has."
                .to_string()
        });
    }
    let separations = (0..study.spec.matrix.len())
        .filter(|d| study.spec.matrix[*d].values.len() >= 2)
        .map(|d| separation(study, cells, d))
        .collect();
    SpreadView {
        table,
        separations,
        missing,
    }
}

// ------------------------------------------------------------ the figures

/// The merged histogram of `cells` (those with samples), named.
fn merged_curve(name: String, color: usize, cells: &[&CellResult]) -> Option<NamedHistogram> {
    let mut hist: Option<Histogram> = None;
    let (mut min_ns, mut max_ns): (Option<u64>, Option<u64>) = (None, None);
    for c in cells.iter().filter(|c| has_samples(c)) {
        let h = c.histogram.as_ref()?;
        match hist.as_mut() {
            Some(acc) => acc.merge(h),
            None => hist = Some(h.clone()),
        }
        min_ns = match (min_ns, c.merged.min_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        max_ns = max_ns.max(c.merged.max_ns);
    }
    Some(NamedHistogram {
        name,
        color,
        hist: hist?,
        min_ns,
        max_ns,
    })
}

/// The figures: per dimension, then (when it adds something) per cell;
/// and why some are missing.
fn figures(
    study: &Study,
    cells: &[CellResult],
) -> Result<(Vec<FigureView>, Vec<String>), ReportError> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    let mut drawn = 0;
    for (d, dim) in study.spec.matrix.iter().enumerate() {
        if dim.values.len() < 2 {
            continue;
        }
        match dimension_figures(d, dim, cells)? {
            Overlay::Drawn(figs) => {
                drawn += 1;
                out.extend(figs);
            }
            Overlay::Nothing(why) => missing.push(why),
        }
    }
    let with: Vec<&CellResult> = cells.iter().filter(|c| has_samples(c)).collect();
    // With one dimension, its figures already have one curve per cell.
    let same_as_dimension = study.spec.matrix.len() == 1 && drawn > 0;
    if with.len() > MAX_CELL_CURVES {
        missing.push(format!(
            "{} cells have results: too many curves to overlay every cell (at most \
             {MAX_CELL_CURVES}); the figures per dimension group them.",
            with.len()
        ));
    } else if !with.is_empty() && !same_as_dimension {
        out.extend(cell_figures(&with)?);
    }
    Ok((out, missing))
}

/// A dimension's figures, or why there is nothing to overlay.
enum Overlay {
    Drawn([FigureView; 2]),
    Nothing(String),
}

/// The histogram and exceedance of dimension `d`, a curve per value
/// (its cells merged); or why there is nothing to overlay.
fn dimension_figures(
    d: usize,
    dim: &super::spec::Dimension,
    cells: &[CellResult],
) -> Result<Overlay, ReportError> {
    let curves: Vec<NamedHistogram> = dim
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let mine: Vec<&CellResult> = cells
                .iter()
                .filter(|c| c.cell.get(&dim.key) == Some(v))
                .collect();
            merged_curve(format!("{}={v}", dim.key), i, &mine)
        })
        .collect();
    match curves.as_slice() {
        [] => {
            return Ok(Overlay::Nothing(format!(
                "No finished run with samples for any value of {}: nothing to overlay yet.",
                dim.key
            )));
        }
        [one] => {
            return Ok(Overlay::Nothing(format!(
                "Only {} has results so far: nothing to overlay for {} yet.",
                one.name, dim.key
            )));
        }
        _ => {}
    }
    let id = format!("dim-{}", d + 1);
    let h = data::hist_merged(&curves, &format!("Latency histogram per {}", dim.key));
    let e = data::exceedance_merged(&curves, &format!("Exceedance per {}", dim.key));
    Ok(Overlay::Drawn([
        figure(
            &h,
            &format!("{id}-hist"),
            format!(
                "Latency histograms per value of {}: each curve merges every cell with that \
                 value and all their runs (log scales, 1 µs classes, as the seeds' compare \
                 plots).",
                dim.key
            ),
        )?,
        figure(
            &e,
            &format!("{id}-exceedance"),
            format!(
                "Share of periods later than x per value of {} (cells with that value merged); \
                 the dot marks the maximum. A curve lower and further left is better; where \
                 curves cross, the better value depends on the tolerance.",
                dim.key
            ),
        )?,
    ]))
}

/// The histogram and exceedance of every cell `with` results.
fn cell_figures(with: &[&CellResult]) -> Result<[FigureView; 2], ReportError> {
    let curves: Vec<NamedHistogram> = with
        .iter()
        .filter_map(|c| merged_curve(c.cell.label(), c.cell.index, &[c]))
        .collect();
    let h = data::hist_merged(&curves, "Latency histogram per cell");
    let e = data::exceedance_merged(&curves, "Exceedance per cell");
    Ok([
        figure(
            &h,
            "cells-hist",
            "Latency histograms of every cell with results, each with all its runs merged \
             (log scales, 1 µs classes)."
                .into(),
        )?,
        figure(
            &e,
            "cells-exceedance",
            "Share of periods later than x per cell (all its runs merged); the dot marks the \
             maximum."
                .into(),
        )?,
    ])
}

// ------------------------------------------------------------ the verdicts

/// The worst run's tail (`rtscope tail ID`), once per cell: the hourly
/// level with its bound, or the gate that refused.
fn tail_line(id: i64, r: &RunRecord) -> String {
    let what = match crate::report::tail::analyze_run(r, &Default::default()) {
        Ok((est, _)) => crate::report::tail::compact(&est),
        Err(e) => format!("not analysed: {e}"),
    };
    format!("Worst case not yet seen (run {id}, rtscope tail {id}): {what}.")
}

/// The boot a run was measured on, as its fingerprint says, for a study
/// that names boots: `6.1.0-27-rt-amd64 (rt), isolcpus=1 rcu_nocbs=1`
/// (the study's arguments found on its command line).
fn boot_seen(study: &Study, r: &RunRecord) -> Option<String> {
    if !study.boots.any() {
        return None;
    }
    let fp = &r.fingerprint;
    let args: Vec<&str> = crate::sysinfo::cmdline::kernel_words(&fp.cmdline)
        .filter(|w| {
            let name = crate::sysinfo::cmdline::param_name(w);
            study.boots.managed.contains(&name)
        })
        .collect();
    let args = if args.is_empty() && !study.boots.managed.is_empty() {
        format!(", without {}", study.boots.managed.join(", "))
    } else if args.is_empty() {
        String::new()
    } else {
        format!(", {}", args.join(" "))
    };
    Some(format!(
        "measured on {} ({}){args}",
        fp.kernel_release, fp.preemption_model
    ))
}

fn cell_verdict(
    study: &Study,
    c: &CellResult,
    run_href: Option<&dyn Fn(i64) -> String>,
) -> CellVerdict {
    let runs = c
        .runs
        .iter()
        .map(|(rep, id, r)| RunLine {
            href: run_href.map(|f| f(*id)),
            text: format!(
                "repetition {rep}: run {id} (max {}; rtscope report {id}){}",
                r.overall
                    .max_ns
                    .map(num::latency)
                    .unwrap_or_else(|| "-".into()),
                boot_seen(study, r)
                    .map(|b| format!(", {b}"))
                    .unwrap_or_default()
            ),
        })
        .collect();
    let pending = pending(study, c);
    let interrupted = interruptions(study, c);
    let heading = format!("{}. {}", c.cell.index + 1, c.cell.label());
    match worst(c) {
        Some((rep, id, r)) => {
            let v = verdict::verdict(r);
            CellVerdict {
                anchor: anchor(c),
                heading,
                class: v.class.key().into(),
                title: v.title.clone(),
                provisional: v.standing.is_provisional(),
                headline: v.headline,
                worst: Some(if c.runs.len() > 1 {
                    format!(
                        "The verdict rests on the worst of {} runs: run {id} (repetition {rep}).",
                        c.runs.len()
                    )
                } else {
                    format!("The verdict rests on run {id} (repetition {rep}), the only one.")
                }),
                tail: Some(tail_line(*id, r)),
                runs,
                pending,
                interrupted,
            }
        }
        None => CellVerdict {
            anchor: anchor(c),
            heading,
            class: Class::NoData.key().into(),
            title: "no verdict: no run of this cell has finished".into(),
            provisional: false,
            headline: "No verdict: no run of this cell has finished.".into(),
            worst: None,
            tail: None,
            runs,
            pending,
            interrupted,
        },
    }
}

// ------------------------------------------------------------ the page

/// The one-page comparison of a study, as a self-contained HTML file.
pub fn render(study: &Study, cells: &[CellResult]) -> Result<String, ReportError> {
    render_linked(study, cells, None)
}

/// [`render`], each finished run of a cell linked to `run_href(id)` (its
/// own report where the page is served).
pub fn render_linked(
    study: &Study,
    cells: &[CellResult],
    run_href: Option<&dyn Fn(i64) -> String>,
) -> Result<String, ReportError> {
    let (figures, figures_missing) = figures(study, cells)?;
    let view = StudyView {
        title: format!("rtscope study: {}", study.row.name),
        subtitle: study.spec.description.clone().unwrap_or_default(),
        tool: format!("rtscope {}", env!("CARGO_PKG_VERSION")),
        facts: facts(study, cells),
        notices: notices(study, cells),
        matrix: matrix_table(study, cells),
        spread: spread(study, cells),
        figures,
        figures_missing,
        verdicts: cells
            .iter()
            .map(|c| cell_verdict(study, c, run_href))
            .collect(),
    };
    Ok(page::render(Page::Study, &view)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;
    use crate::store::studies::{AttemptRow, AttemptState, SlotRow, StudyRow};
    use crate::study::matrix::{self, Cell};
    use crate::study::spec;

    const FILE: &str = r#"
name = "policy-by-kernel"
description = "Does <fifo> help on both kernels?"
duration = "10m"
repetitions = 2
kernel = ["none", "rt"]
[matrix]
policy = ["other", "fifo"]
[fixed]
load = "hell"
"#;

    fn attempt(position: usize, state: AttemptState, uuid: Option<&str>) -> AttemptRow {
        AttemptRow {
            id: position as i64,
            position,
            run_uuid: uuid.map(str::to_string),
            state,
            detail: (state == AttemptState::Failed).then(|| "no such load 'hel'".to_string()),
            kernel_release: "6.1.0-test".into(),
            preemption_model: "none".into(),
            started_at_unix_ns: 0,
            ended_at_unix_ns: None,
        }
    }

    /// A study of `FILE`; `slot(cell, repetition)` says what became of
    /// each run: its state and its attempts.
    fn study(
        file: &str,
        slot: impl Fn(&Cell, u32, usize) -> (SlotState, Vec<AttemptRow>),
    ) -> Study {
        let spec = spec::parse(file, "s.toml").unwrap();
        let cells = matrix::cells(&spec);
        let mut slots = Vec::new();
        for r in 1..=spec.repetitions {
            for c in &cells {
                let position = slots.len();
                let (state, attempts) = slot(c, r, position);
                slots.push(SlotStatus {
                    slot: SlotRow {
                        position,
                        cell: c.index,
                        repetition: r,
                        label: c.label(),
                        kernel: c.kernel(&spec.fixed),
                    },
                    state,
                    attempts,
                });
            }
        }
        Study {
            row: StudyRow {
                id: 1,
                uuid: "feedc0de".into(),
                name: spec.name.clone(),
                file_text: file.into(),
                file_path: Some("examples/s.toml".into()),
                seed: 42,
                created_at_unix_ns: 1_700_000_000_000_000_000,
                running: None,
            },
            boots: crate::study::boots::Boots::of(&spec, &cells),
            round: None,
            boot_rows: Vec::new(),
            spec,
            cells,
            slots,
        }
    }

    /// The cells' results: `runs(cell, repetition)` gives a finished
    /// run's latencies (one thread), or `None`.
    fn results(s: &Study, runs: impl Fn(&Cell, u32) -> Option<Vec<u64>>) -> Vec<CellResult> {
        s.cells
            .iter()
            .map(|cell| {
                let mine: Vec<&SlotStatus> = s
                    .slots
                    .iter()
                    .filter(|x| x.slot.cell == cell.index)
                    .collect();
                let done: Vec<(u32, i64, RunRecord)> = mine
                    .iter()
                    .filter(|x| matches!(x.state, SlotState::Done { .. }))
                    .filter_map(|x| {
                        let v = runs(cell, x.slot.repetition)?;
                        Some((
                            x.slot.repetition,
                            100 + x.slot.position as i64,
                            synthetic(&[v]),
                        ))
                    })
                    .collect();
                CellResult::of(cell, &mine, done).unwrap()
            })
            .collect()
    }

    fn is(c: &Cell, key: &str, v: &str) -> bool {
        c.get(key).is_some_and(|x| x.to_string() == v)
    }

    /// This kernel ("none") has measured its cells, once cut short and
    /// redone; the "rt" cells wait for their kernel.
    fn half_done() -> (Study, Vec<CellResult>) {
        let s = study(FILE, |c, r, pos| {
            if is(c, "kernel", "rt") {
                return (
                    SlotState::Waiting {
                        boot: "kernel rt".into(),
                        why: "the kernel is 6.18 (none), not rt".into(),
                    },
                    vec![],
                );
            }
            let uuid = format!("uuid-{pos}");
            let mut attempts = vec![attempt(pos, AttemptState::Done, Some(&uuid))];
            if is(c, "policy", "fifo") && r == 2 {
                attempts.insert(0, attempt(pos, AttemptState::Interrupted, Some("cut")));
            }
            (SlotState::Done { run_uuid: uuid }, attempts)
        });
        let cells = results(&s, |c, r| match (is(c, "policy", "fifo"), r) {
            (false, 1) => Some(vec![5_000, 6_000, 80_000]),
            (false, _) => Some(vec![6_000, 7_000, 120_000]),
            (true, 1) => Some(vec![4_000, 5_000, 20_000]),
            (true, _) => Some(vec![4_500, 5_500, 25_000]),
        });
        (s, cells)
    }

    /// The `<tr>` of row `id`.
    fn row<'a>(html: &'a str, id: &str) -> &'a str {
        let at = html
            .find(&format!("<tr id=\"{id}\">"))
            .unwrap_or_else(|| panic!("row {id}"));
        let end = html[at..].find("</tr>").unwrap();
        &html[at..at + end]
    }

    #[test]
    fn the_matrix_has_a_row_per_cell_and_marks_the_best() {
        let (s, cells) = half_done();
        let html = render(&s, &cells).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        let matrix =
            &html[html.find("id=\"matrix\"").unwrap()..html.find("id=\"spread\"").unwrap()];
        assert_eq!(
            matrix.matches("<tr id=\"row-").count(),
            4,
            "one row per cell"
        );
        // Cells: 1 other/none, 2 other/rt, 3 fifo/none, 4 fifo/rt.
        let fifo = row(&html, "row-3");
        assert!(fifo.contains("<td class=\"num best\">25.0</td>"), "{fifo}");
        assert!(fifo.contains("2 of 2 (1 redone)"));
        let other = row(&html, "row-1");
        assert!(other.contains("<td class=\"num\">120.0</td>"), "{other}");
        assert!(!other.contains("best"), "{other}");
        // Missed periods are 0 everywhere: no column winner.
        assert_eq!(matrix.matches("num best").count(), 3, "p99, p99.99, max");
        for waiting in ["row-2", "row-4"] {
            let r = row(&html, waiting);
            assert!(r.contains("waiting for kernel rt (2 runs)"), "{r}");
            assert!(r.contains("0 of 2"));
        }
        // The deadline first, met or missed, then the class.
        let cell = row(&html, "row-1");
        assert!(
            cell.contains("deadline met (") && cell.contains("hundreds-of-µs class, provisional"),
            "{cell}"
        );
        assert!(
            cell.find("deadline met").unwrap() < cell.find("hundreds-of-µs class").unwrap(),
            "{cell}"
        );
    }

    #[test]
    fn the_head_says_where_the_study_stands() {
        let (s, cells) = half_done();
        let html = render(&s, &cells).unwrap();
        assert!(html.contains("<h1>rtscope study: policy-by-kernel</h1>"));
        assert!(
            html.contains("Does &lt;fifo&gt; help on both kernels?"),
            "escaped"
        );
        assert!(!html.contains("<fifo>"));
        assert!(html.contains("4 of 8 runs done; 4 waiting for kernel rt"));
        assert!(html.contains("6.1.0-test (dynamic): 4 runs"));
        assert!(html.contains("10 min"));
        assert!(html.contains("seed 42"));
        assert!(html.contains("policy=fifo kernel=none: 1 run cut short and redone."));
        // Spread and separation.
        assert!(html.contains("20.0 µs – 25.0 µs"), "fifo's maxima");
        assert!(html.contains("policy=fifo is lower than policy=other"));
        assert!(html.contains("no finished run of kernel=rt yet"));
        // Verdicts, with the run ids behind them.
        assert_eq!(html.matches("<article class=\"cell\"").count(), 4);
        assert!(html.contains("the worst of 2 runs: run 106 (repetition 2)"));
        assert!(html.contains("repetition 1: run 102 (max 20.0 µs; rtscope report 102)"));
        // Box titles say the deadline first, as the run report's do (a
        // class before it read as the verdict).
        let titles: Vec<&str> = html
            .split("<h4>")
            .skip(1)
            .filter_map(|t| t.split("</h4>").next())
            .collect();
        assert_eq!(titles.len(), 4, "{titles:?}");
        // Cells 1 and 3 have runs, 2 and 4 wait for their kernel.
        for t in [titles[0], titles[2]] {
            assert!(t.starts_with("Verdict: deadline "), "{t}");
            let (deadline, class) = (t.find("deadline").unwrap(), t.find("class").unwrap());
            assert!(deadline < class, "{t}");
            assert!(t.contains("(provisional: "), "{t}");
        }
        for t in [titles[1], titles[3]] {
            assert_eq!(t, "Verdict: no verdict: no run of this cell has finished");
        }
        assert!(html.contains("No verdict: no run of this cell has finished."));
        assert!(
            html.contains("<p class=\"status\">Not finished: waiting for kernel rt (2 runs).</p>")
        );
        assert!(html.contains("<p class=\"note\">Cut short: 1 run cut short and redone.</p>"));
    }

    #[test]
    fn figures_per_dimension_and_per_cell() {
        let (s, cells) = half_done();
        let html = render(&s, &cells).unwrap();
        // policy: hist + exceedance; kernel has one value with runs only;
        // the two cells with runs overlaid.
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(html.contains("id=\"dim-1-hist\""));
        assert!(html.contains("id=\"dim-1-exceedance\""));
        assert!(!html.contains("id=\"dim-2-hist\""));
        assert!(html.contains("id=\"cells-hist\""));
        assert!(html.contains("Only kernel=none has results so far"));

        // Everything done: both dimensions overlay two curves each.
        let done = study(FILE, |_, _, pos| {
            let uuid = format!("u{pos}");
            (
                SlotState::Done {
                    run_uuid: uuid.clone(),
                },
                vec![attempt(pos, AttemptState::Done, Some(&uuid))],
            )
        });
        let cells = results(&done, |c, r| {
            Some(vec![5_000 + c.index as u64 * 1000, 30_000 * r as u64])
        });
        let html = render(&done, &cells).unwrap();
        assert_eq!(html.matches("<svg").count(), 6);
    }

    #[test]
    fn the_report_is_deterministic_and_self_contained() {
        let (s, cells) = half_done();
        let a = render(&s, &cells).unwrap();
        assert_eq!(a, render(&s, &cells).unwrap());
        for forbidden in ["<script", "<link", "@import", "url(", "https://"] {
            assert!(!a.contains(forbidden), "{forbidden}");
        }
        assert_eq!(
            a.matches("http://").count(),
            a.matches("http://www.w3.org/2000/svg").count()
        );
    }

    #[test]
    fn cells_to_do_failed_or_interrupted_say_so() {
        let file = "name = \"x\"\nduration = 5\nrepetitions = 1\n[matrix]\ntimer = [\"abs\", \"nanosleep\", \"itimer\"]\n";
        let s = study(file, |c, _, pos| match c.index {
            0 => (
                SlotState::Done {
                    run_uuid: "u".into(),
                },
                vec![attempt(pos, AttemptState::Done, Some("u"))],
            ),
            1 => (
                SlotState::ToDo,
                vec![attempt(pos, AttemptState::Failed, None)],
            ),
            _ => (
                SlotState::ToDo,
                vec![attempt(pos, AttemptState::Interrupted, Some("cut"))],
            ),
        });
        let cells = results(&s, |c, _| (c.index == 0).then(|| vec![3_000, 9_000]));
        let html = render(&s, &cells).unwrap();
        assert!(row(&html, "row-2").contains("failed: no such load &#x27;hel&#x27;"));
        assert!(row(&html, "row-3").contains("interrupted, not yet redone"));
        assert!(html.contains("timer=itimer: 1 run interrupted, not yet redone."));
        assert!(html.contains("1 of 3 runs done; 2 to do"));
        assert!(html.contains("repetitions = 1"), "no spread to show");
        assert!(
            !html.contains("num best"),
            "one cell with results: no winner"
        );
        // One cell with results: nothing to overlay per dimension, but
        // its own curves are drawn.
        assert!(html.contains("Only timer=abs has results so far"));
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("id=\"cells-hist\""));
    }

    /// Two values, one run each: the difference of their maxima judged
    /// from the runs' windows.
    #[test]
    fn single_runs_are_judged_from_their_windows() {
        use crate::report::noise::test_series;
        let file = "name = \"x\"\nduration = 5\nrepetitions = 1\n[matrix]\ntimer = [\"abs\", \"nanosleep\"]\n";
        let s = study(file, |_, _, pos| {
            let done = SlotState::Done {
                run_uuid: format!("u{pos}"),
            };
            (done, vec![attempt(pos, AttemptState::Done, Some("u"))])
        });
        let maxima = [5_000_000, 10_000_000];
        let mut cells = results(&s, |c, _| Some(vec![3_000, maxima[c.index]]));
        let sep = |cells: &[CellResult]| compare_maxima_of(&s, cells);
        let line = sep(&cells);
        assert!(line.separable, "{}", line.text);
        assert!(
            line.text
                .contains("the noise is unknown (run timer=abs has no windows)"),
            "{}",
            line.text
        );
        // One stall each (5 ms and 10 ms): within the noise.
        for (c, m) in cells.iter_mut().zip(maxima) {
            c.runs[0].2.threads[0].windows = test_series(30, 1.0, m);
        }
        let line = sep(&cells);
        assert!(!line.separable, "{}", line.text);
        assert!(
            line.text
                .contains("the difference is within the noise (p = ")
                && line.text.contains("cannot tell the values apart"),
            "{}",
            line.text
        );
        // Every window of nanosleep twice as late: beyond.
        cells[1].runs[0].2.threads[0].windows = test_series(30, 2.0, 0);
        cells[0].runs[0].2.threads[0].windows = test_series(30, 1.0, 0);
        cells[0].runs[0].2.overall.max_ns = Some(150_000);
        cells[1].runs[0].2.overall.max_ns = Some(300_000);
        let line = sep(&cells);
        assert!(line.separable, "{}", line.text);
        assert!(
            line.text
                .contains("from their windows, the difference is beyond the noise (p < 0.001)."),
            "{}",
            line.text
        );
    }

    fn compare_maxima_of(s: &Study, cells: &[CellResult]) -> Line {
        let mut sep = separation(s, cells, 0);
        assert_eq!(sep.lines.len(), 1);
        sep.lines.remove(0)
    }
}
