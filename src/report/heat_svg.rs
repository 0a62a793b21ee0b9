//! The per-CPU heat strip of the HTML report, inline SVG: one row per
//! thread (in CPU order, or grouped by NUMA node and core where the
//! run's fingerprint places its CPUs), one column per quantile (p50, p90,
//! p99, p99.9, max), each cell coloured on one log scale for the whole
//! run, with a `<title>` holding its value, and a legend. One slow CPU
//! among 128 is one dark row. Pure: the same run gives the same bytes.

use crate::record::{RunRecord, ThreadRecord};
use crate::text::escape;
use crate::text::num;
use std::fmt::Write as _;

/// The columns, as `LatencyStats::metric_ns` names them.
pub const COLUMNS: [&str; 5] = ["p50", "p90", "p99", "p99.9", "max"];

const LABEL_PX: f64 = 150.0;
const CELL_W_PX: f64 = 64.0;
const RANK_PX: f64 = 110.0;
const HEAD_PX: f64 = 20.0;
const GROUP_PX: f64 = 16.0;
const LEGEND_PX: f64 = 44.0;
const WIDTH_PX: f64 = LABEL_PX + CELL_W_PX * COLUMNS.len() as f64 + RANK_PX;
/// Rows stay readable up to this many; above, they are thinner.
const TALL_ROWS: usize = 32;

/// A sequential ramp, light (low latency) to dark red (high): YlOrRd.
const RAMP: [(f64, f64, f64); 5] = [
    (255.0, 255.0, 204.0),
    (254.0, 217.0, 118.0),
    (253.0, 141.0, 60.0),
    (227.0, 26.0, 28.0),
    (128.0, 0.0, 38.0),
];
const UNKNOWN_FILL: &str = "#e6e6e6";

/// The colour of `t` in [0, 1] on the ramp, as `#rrggbb`.
fn ramp(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (RAMP.len() - 1) as f64;
    let i = (pos.floor() as usize).min(RAMP.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

/// The colour scale: log10 of latency from the lowest to the highest
/// value shown.
#[derive(Clone, Copy, Debug)]
struct Scale {
    lo: f64,
    hi: f64,
}

impl Scale {
    fn of(values: impl Iterator<Item = u64>) -> Scale {
        let (lo, hi) = values
            .filter(|v| *v > 0)
            .fold((u64::MAX, 0), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if hi == 0 {
            return Scale { lo: 0.0, hi: 1.0 };
        }
        let (lo, hi) = ((lo as f64).log10(), (hi as f64).log10());
        Scale {
            lo,
            hi: if hi > lo { hi } else { lo + 1.0 },
        }
    }

    fn position(self, ns: u64) -> f64 {
        ((ns.max(1) as f64).log10() - self.lo) / (self.hi - self.lo)
    }

    fn value_at(self, t: f64) -> u64 {
        10f64.powf(self.lo + t * (self.hi - self.lo)).round() as u64
    }
}

/// One row: the thread, its label and the group it starts, if any.
struct Row<'a> {
    /// The thread's position in `run.threads`.
    pos: usize,
    thread: &'a ThreadRecord,
    label: String,
    group: Option<String>,
}

/// Where the fingerprint places `cpu`: (NUMA node, package, core).
type Place = (Option<u32>, Option<u32>, Option<u32>);

/// Where the fingerprint places each thread of `run`, in thread order;
/// `None` when it places none of them (the strip is then in CPU order).
/// The fingerprint's CPUs are looked up in a map (a search of the list
/// for every thread was quadratic on a run of thousands of CPUs).
fn places(run: &RunRecord) -> Option<Vec<Place>> {
    let by_cpu: std::collections::HashMap<u32, Place> = run
        .fingerprint
        .cpus
        .iter()
        .rev()
        .map(|f| (f.cpu, (f.numa_node, f.package_id, f.core_id)))
        .collect();
    let places: Vec<Place> = run
        .threads
        .iter()
        .map(|t| {
            t.cpu
                .and_then(|c| by_cpu.get(&c).copied())
                .unwrap_or((None, None, None))
        })
        .collect();
    places
        .iter()
        .any(|p| *p != (None, None, None))
        .then_some(places)
}

/// Whether the strip of `run` is grouped by NUMA node and package (the
/// fingerprint places some measured CPU) rather than in CPU order.
pub fn grouped(run: &RunRecord) -> bool {
    places(run).is_some()
}

/// The threads `shown` (positions in `run.threads`) in the strip's
/// order, labelled: grouped by NUMA node (or package) and ordered by core
/// where the fingerprint says, else in CPU order; unpinned threads last.
fn rows<'a>(run: &'a RunRecord, shown: &[usize]) -> Vec<Row<'a>> {
    let places = places(run);
    let topology = places.is_some();
    let placed = |i: usize| places.as_ref().map_or((None, None, None), |p| p[i]);
    let mut order: Vec<usize> = shown
        .iter()
        .copied()
        .filter(|i| *i < run.threads.len())
        .collect();
    order.sort_by_key(|&i| {
        let t = &run.threads[i];
        let (node, pkg, core) = placed(i);
        (
            t.cpu.is_none(),
            node.unwrap_or(u32::MAX),
            pkg.unwrap_or(u32::MAX),
            core.unwrap_or(u32::MAX),
            t.cpu,
            t.index,
        )
    });
    let mut out = Vec::new();
    let mut last: Option<(Option<u32>, Option<u32>)> = None;
    for pos in order {
        let t = &run.threads[pos];
        let (node, pkg, core) = placed(pos);
        let key = (node, pkg);
        let group = (topology && last != Some(key)).then(|| {
            let cpus: Vec<usize> = (0..run.threads.len())
                .filter(|&o| (placed(o).0, placed(o).1) == key)
                .filter_map(|o| run.threads[o].cpu.map(|c| c as usize))
                .collect();
            let mut name = match (node, pkg) {
                (Some(n), Some(p)) => format!("NUMA node {n}, package {p}"),
                (Some(n), None) => format!("NUMA node {n}"),
                (None, Some(p)) => format!("package {p}"),
                (None, None) => "not placed".into(),
            };
            if !cpus.is_empty() {
                name.push_str(&format!(" (CPUs {})", crate::units::format_cpu_list(&cpus)));
            }
            name
        });
        last = Some(key);
        let mut label = super::plot::data::thread_name(run, t);
        if let Some(c) = core {
            label.push_str(&format!(" (core {c})"));
        }
        out.push(Row {
            pos,
            thread: t,
            label,
            group,
        });
    }
    out
}

/// The strip of the threads `shown` (positions in `run.threads`) of
/// `run` as an `<svg>` element with the given id, coloured on the scale
/// of every thread; `ranks` are the threads' places, worst first
/// (`ranks[i]` is the rank of `run.threads[i]`, 0 the worst), shown for
/// the first `named` of them.
pub fn strip(run: &RunRecord, shown: &[usize], id: &str, ranks: &[usize], named: usize) -> String {
    let rows = rows(run, shown);
    let n = rows.len();
    let row_h = if n <= TALL_ROWS { 16.0 } else { 9.0 };
    let font = if n <= TALL_ROWS { 11.0 } else { 8.0 };
    let groups = rows.iter().filter(|r| r.group.is_some()).count() as f64;
    let grid_h = n as f64 * row_h + groups * GROUP_PX;
    let height = HEAD_PX + grid_h + LEGEND_PX;
    let scale = Scale::of(
        run.threads
            .iter()
            .flat_map(|t| COLUMNS.iter().filter_map(|m| t.stats.metric_ns(m)))
            .map(|v| v.round() as u64),
    );
    let title = format!(
        "Latency per CPU: {} on one log colour scale, {} rows",
        COLUMNS.join(", "),
        n
    );
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg id=\"{id}\" class=\"heat\" role=\"img\" aria-label=\"{t}\" width=\"{WIDTH_PX}\" height=\"{height}\" viewBox=\"0 0 {WIDTH_PX} {height}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"{font}\"><title>{t}</title>",
        t = escape::markup(&title)
    );
    for (k, m) in COLUMNS.iter().enumerate() {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"14\" text-anchor=\"middle\" font-size=\"11\" font-weight=\"600\">{m}</text>",
            LABEL_PX + (k as f64 + 0.5) * CELL_W_PX
        );
    }
    let mut y = HEAD_PX;
    for row in &rows {
        if let Some(g) = &row.group {
            let _ = write!(
                o,
                "<text x=\"2\" y=\"{:.1}\" font-size=\"11\" font-weight=\"600\" fill=\"#1d1d1f\">{}</text>",
                y + GROUP_PX - 4.0,
                escape::markup(g)
            );
            y += GROUP_PX;
        }
        let t = row.thread;
        let label = escape::markup(&row.label);
        let _ = write!(
            o,
            "<g class=\"row\"><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#5b5f66\">{label}</text>",
            LABEL_PX - 6.0,
            y + row_h - (row_h - font) / 2.0 - 1.0
        );
        for (k, m) in COLUMNS.iter().enumerate() {
            let x = LABEL_PX + k as f64 * CELL_W_PX;
            let (fill, value) = match t.stats.metric(m) {
                // A quantile among an import's overflows: coloured at its
                // bound, titled as one.
                Some(v) => {
                    let ns = v.value().round() as u64;
                    let at_least = if v.is_bound() {
                        format!("{} ", crate::units::AT_LEAST)
                    } else {
                        String::new()
                    };
                    (
                        ramp(scale.position(ns)),
                        format!("{at_least}{}", num::latency(ns)),
                    )
                }
                None => (UNKNOWN_FILL.to_string(), "unknown".into()),
            };
            let _ = write!(
                o,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{CELL_W_PX}\" height=\"{row_h}\" fill=\"{fill}\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>{label}, {m}: {}</title></rect>",
                escape::markup(&value)
            );
        }
        let rank = ranks.get(row.pos).copied();
        if let Some(r) = rank.filter(|r| *r < named) {
            let max = t.stats.max_ns.map(num::latency).unwrap_or_default();
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"600\" fill=\"#8a1c15\">#{} {}</text>",
                LABEL_PX + COLUMNS.len() as f64 * CELL_W_PX + 6.0,
                y + row_h - (row_h - font) / 2.0 - 1.0,
                r + 1,
                escape::markup(&max)
            );
        }
        o.push_str("</g>");
        y += row_h;
    }
    legend(&mut o, scale, y + 10.0);
    o.push_str("</svg>");
    o
}

/// Ten steps of the scale with the lowest, middle and highest value.
fn legend(o: &mut String, scale: Scale, y: f64) {
    const STEPS: usize = 10;
    let w = CELL_W_PX * COLUMNS.len() as f64 / STEPS as f64;
    let _ = write!(
        o,
        "<g class=\"legend\"><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"#5b5f66\">colour scale</text>",
        LABEL_PX - 6.0,
        y + 10.0
    );
    for i in 0..STEPS {
        let t = (i as f64 + 0.5) / STEPS as f64;
        let _ = write!(
            o,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"12\" fill=\"{}\"/>",
            LABEL_PX + i as f64 * w,
            ramp(t)
        );
    }
    for (t, anchor) in [(0.0, "start"), (0.5, "middle"), (1.0, "end")] {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" font-size=\"11\" fill=\"#5b5f66\">{}</text>",
            LABEL_PX + t * CELL_W_PX * COLUMNS.len() as f64,
            y + 26.0,
            escape::markup(&num::latency(scale.value_at(t)))
        );
    }
    let _ = write!(
        o,
        "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" fill=\"{UNKNOWN_FILL}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#5b5f66\">unknown</text></g>",
        LABEL_PX + CELL_W_PX * COLUMNS.len() as f64 + 6.0,
        LABEL_PX + CELL_W_PX * COLUMNS.len() as f64 + 22.0,
        y + 10.0
    );
}
