//! Runs side by side on one latency metric, each against the first (the
//! baseline): per CPU and overall, with the ratio to the baseline, the
//! comparability warnings of [`super::fairness`], and the regression gate
//! (`--fail-if-worse PCT`). A higher latency is worse. Each row says
//! whether its difference is beyond the noise of the runs' windows
//! ([`super::noise`]), by how much and what the noise is; the gate fires
//! only on a difference beyond it. A metric the windows do not keep has no
//! noise model: its differences are "judged raw" (on the figures alone),
//! and a gate on it is refused unless the caller accepts that
//! ([`check_gate_metric`]). Runs of different quantities (a wake-up
//! latency, oslat's busy-loop gaps, osnoise's noise) are refused, never
//! set side by side. Pure: no I/O, no printing; the terminal text keeps
//! control characters of a file or a board out (`text::for_terminal`).

use super::fairness;
use super::noise::{self, Judgement, RunWindows, Unknown, Verdict};
use super::plot::data::thread_name;
use super::{NamedRun, known};
use crate::record::{LatencyStats, METRICS, Quantity, RunRecord, Stated, ThreadRecord};
use crate::text::rank::{self, Rows};
use crate::text::{for_terminal, for_terminal_lines};
use crate::units::{AT_LEAST, us_cell_f, us_cell_stated};
use serde_json::{Value, json};
use std::fmt::Write;
use thiserror::Error;

/// The metric compared when none is asked for: the highest quantile whose
/// noise the windows can tell (p99.9 and p99.99 are not kept per window).
pub const DEFAULT_METRIC: &str = "p99";

#[derive(Debug, Error, PartialEq)]
pub enum CompareError {
    #[error("unknown metric '{0}': use one of min, avg, p50, p90, p99, p99.9, p99.99, max")]
    Metric(String),
    #[error("run {run} has no {metric} (it holds no samples, or its source did not record it)")]
    Missing { run: String, metric: String },
    #[error("compare needs at least two runs (a baseline and one to set against it), got {0}")]
    TooFew(usize),
    #[error(
        "run {run} measures {run_quantity}, the baseline {baseline} measures {baseline_quantity}: \
         different quantities are not compared; compare runs of one quantity"
    )]
    Quantity {
        baseline: String,
        baseline_quantity: &'static str,
        run: String,
        run_quantity: &'static str,
    },
    #[error(
        "--fail-if-worse on {0} would judge raw figures: {0} has no noise model (the windows \
         keep max, min, avg and p99), so chance alone could fail the gate. Gate on --metric p99 \
         (the default), max, avg or min, or add --raw to gate on the figures alone"
    )]
    RawGate(String),
    #[error(
        "--fail-if-worse cannot judge {run} against {baseline}: {why}. The gate needs figures, \
         not bounds: gate on a metric below the overflows (--metric p99 or max, or a lower \
         quantile), or record the runs with a histogram long enough for their tail (cyclictest \
         -h)"
    )]
    BoundGate {
        baseline: String,
        run: String,
        why: String,
    },
    #[error(
        "--fail-if-worse cannot judge {run} against {baseline}: the noise of the {metric} is \
         unknown ({why}). The gate fails only on a difference beyond the noise of the runs' \
         windows, which needs at least {min} non-empty windows in each run: measure at least \
         {min} windows (e.g. -D 10s with the default windows of 1 s, or a shorter --window), or \
         add --raw to gate on the figures alone",
        min = noise::MIN_WINDOWS
    )]
    NoiseUnknownGate {
        baseline: String,
        run: String,
        metric: String,
        why: String,
    },
}

/// How the report's marks were made, in one sentence for its caption.
pub const NOISE_SENTENCE: &str = "On min, avg, p99 and max, each difference from the first run \
    is marked within the noise or beyond it (worse or better, by how much, and the noise): the \
    windows of the two runs (1 s each by default, all threads together) are shuffled between \
    them 2000 times, and the noise is the difference that chance alone reaches in 5 % of the \
    shuffles; p99 is judged through the windows' mean p99, and its mark gives that figure's \
    difference and noise (named so), not the difference of the p99 in the table; a run with \
    fewer than 10 windows has its noise unknown. p50, p90, p99.9 and p99.99 are not kept per \
    window: their figures are shown raw, \
    not judged, and no figure is ranked best.";

/// The short name of the `i`-th run in tables: A (the baseline), B, C…
pub fn tag(i: usize) -> String {
    match u8::try_from(i) {
        Ok(k) if k < 26 => char::from(b'A' + k).to_string(),
        _ => format!("R{}", i + 1),
    }
}

/// A gate on `metric` is refused when the metric has no noise model,
/// unless `raw` (the caller accepts a gate on the figures alone).
pub fn check_gate_metric(metric: &str, raw: bool) -> Result<(), CompareError> {
    if raw || noise::has_model(metric) {
        Ok(())
    } else {
        Err(CompareError::RawGate(metric.to_string()))
    }
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    /// The CPU a per-CPU row is about (`None`: a thread row, or `all`).
    pub cpu: Option<u32>,
    /// Each side's figure, or only a lower bound: a quantile among an
    /// import's overflows ([`LatencyStats::metric`]).
    pub a_ns: Option<Stated<f64>>,
    pub b_ns: Option<Stated<f64>>,
    /// Whether the difference is beyond the noise (`None`: a side has no
    /// figure).
    pub noise: Option<Judgement>,
}

/// What a row's difference is, once judged.
#[derive(Clone, Debug, PartialEq)]
pub enum Judged {
    Within,
    Worse,
    Better,
    /// The metric has no noise model: the figures alone.
    Raw,
    /// The noise could not be judged, and why.
    Unknown(String),
    /// A side has no figure.
    Missing,
    /// A side is only a lower bound: what the bound tells, not the noise.
    Bound(Bounded),
}

impl Judged {
    pub fn key(&self) -> &'static str {
        match self {
            Judged::Within => "within",
            Judged::Worse => "worse",
            Judged::Better => "better",
            Judged::Raw => "raw",
            Judged::Unknown(_) => "unknown",
            Judged::Missing => "missing",
            Judged::Bound(_) => "bound",
        }
    }
}

/// What two figures say of B against A when a side is only a lower
/// bound: a bound in B above A's figure is worse by at least the gap, a
/// bound in A above B's figure better by at least the gap; otherwise
/// (two bounds, or a bound below the other side's figure) the order is
/// unknown. Two bounds are never subtracted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounded {
    /// B ≥ b > a: worse by at least `by_ns`, B/A at least `ratio`.
    Worse {
        by_ns: f64,
        ratio: Option<f64>,
    },
    /// A ≥ a > b: better by at least `by_ns`, B/A at most `ratio`.
    Better {
        by_ns: f64,
        ratio: Option<f64>,
    },
    Unknown,
}

impl Row {
    /// B/A, when both are figures and A is not zero.
    pub fn ratio(&self) -> Option<f64> {
        match (self.a_ns?, self.b_ns?) {
            (Stated::Exact(a), Stated::Exact(b)) if a > 0.0 => Some(b / a),
            _ => None,
        }
    }

    /// How much worse B is than A, in percent (negative: better).
    pub fn change_pct(&self) -> Option<f64> {
        self.ratio().map(|r| (r - 1.0) * 100.0)
    }

    /// B - A, ns, when both are figures.
    pub fn difference_ns(&self) -> Option<f64> {
        Some(self.b_ns?.exact()? - self.a_ns?.exact()?)
    }

    /// What the sides say when one of them is only a lower bound
    /// (`None`: a side has no figure, or both are figures).
    pub fn bounded(&self) -> Option<Bounded> {
        let (a, b) = (self.a_ns?, self.b_ns?);
        let ratio = |a: f64, b: f64| (a > 0.0).then(|| b / a);
        Some(match (a, b) {
            (Stated::Exact(_), Stated::Exact(_)) => return None,
            (Stated::Exact(a), Stated::AtLeast(b)) if b > a => Bounded::Worse {
                by_ns: b - a,
                ratio: ratio(a, b),
            },
            (Stated::AtLeast(a), Stated::Exact(b)) if a > b => Bounded::Better {
                by_ns: a - b,
                ratio: ratio(a, b),
            },
            _ => Bounded::Unknown,
        })
    }

    /// The B/A and change cells: figures, a bound ("≥1.05", "≥+5.3%";
    /// "≤0.95", "≤-5.0%"), or "unknown" when the bounds leave the order
    /// open.
    fn ratio_cells(&self) -> (String, String) {
        let pct = |r: f64| (r - 1.0) * 100.0;
        match self.bounded() {
            None => (
                self.ratio()
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_else(|| "-".into()),
                self.change_pct()
                    .map(|c| format!("{c:+.1}%"))
                    .unwrap_or_else(|| "-".into()),
            ),
            Some(Bounded::Worse { ratio, .. }) => match ratio {
                Some(r) => (
                    format!("{AT_LEAST}{r:.2}"),
                    format!("{AT_LEAST}{:+.1}%", pct(r)),
                ),
                None => ("-".into(), "worse".into()),
            },
            Some(Bounded::Better { ratio, .. }) => match ratio {
                Some(r) => (format!("≤{r:.2}"), format!("≤{:+.1}%", pct(r))),
                None => ("-".into(), "better".into()),
            },
            Some(Bounded::Unknown) => ("unknown".into(), "unknown".into()),
        }
    }

    /// The words of a row whose side is a lower bound: "B worse by at
    /// least +2.0 us (B's p99.9 is a lower bound, ≥40.0 us, among its
    /// overflows; A's 38.0 us)", or why no order can be said.
    fn bound_words(&self, metric: &str, (a_tag, b_tag): Tags, unit: &str) -> Option<String> {
        let bounded = self.bounded()?;
        let side = |tag: &str, v: Stated<f64>| match v {
            Stated::AtLeast(ns) => format!(
                "{tag}'s {metric} is a lower bound, {AT_LEAST}{} {unit}, among its overflows",
                us_cell_f(Some(ns))
            ),
            Stated::Exact(ns) => format!("{tag}'s is {} {unit}", us_cell_f(Some(ns))),
        };
        let (a, b) = (self.a_ns?, self.b_ns?);
        let sides = if a.is_bound() && !b.is_bound() {
            format!("{}; {}", side(a_tag, a), side(b_tag, b))
        } else {
            format!("{}; {}", side(b_tag, b), side(a_tag, a))
        };
        Some(match bounded {
            Bounded::Worse { by_ns, .. } => format!(
                "{b_tag} worse by at least +{} {unit} ({sides}; not judged against the noise)",
                us_cell_f(Some(by_ns))
            ),
            Bounded::Better { by_ns, .. } => format!(
                "{b_tag} better by at least -{} {unit} ({sides}; not judged against the noise)",
                us_cell_f(Some(by_ns))
            ),
            Bounded::Unknown if a.is_bound() && b.is_bound() => format!(
                "unknown: both are lower bounds ({AT_LEAST}{} {unit} and {AT_LEAST}{} {unit}, among \
                 overflows), which say nothing of their difference",
                us_cell_f(Some(a.value())),
                us_cell_f(Some(b.value()))
            ),
            Bounded::Unknown => format!("unknown: which is larger is not known ({sides})"),
        })
    }

    /// The figures the noise verdict judged (A, B), ns: the windows'
    /// statistic ([`Judgement::judged_ns`]), for p99 a proxy that is not
    /// the run's p99 in the table.
    pub fn judged_ns(&self) -> Option<(f64, f64)> {
        self.noise.as_ref()?.judged_ns
    }

    /// B - A of the judged figures, ns: the difference the verdict is
    /// about, so its sign always agrees with "worse" or "better".
    pub fn judged_difference_ns(&self) -> Option<f64> {
        self.judged_ns().map(|(a, b)| b - a)
    }

    /// The noise on the side of the judged difference, ns (same quantity
    /// as [`Row::judged_difference_ns`]): that difference is beyond the
    /// noise exactly when it is larger.
    pub fn noise_ns(&self) -> Option<f64> {
        let (a, b) = self.judged_ns()?;
        self.noise.as_ref()?.noise_ns(a, b)
    }

    /// What the verdict judged, in words, when it is not the row's own
    /// figure: "windows' mean p99 " for p99 (the proxy), else "".
    fn judged_name(metric: &str) -> &'static str {
        if metric == "p99" {
            "windows' mean p99 "
        } else {
            ""
        }
    }

    pub fn judged(&self) -> Judged {
        if let Some(b) = self.bounded() {
            return Judged::Bound(b);
        }
        match self.noise.as_ref().map(|j| &j.verdict) {
            None => Judged::Missing,
            Some(Verdict::Within { .. }) => Judged::Within,
            Some(Verdict::Beyond { b_worse: true, .. }) => Judged::Worse,
            Some(Verdict::Beyond { .. }) => Judged::Better,
            Some(Verdict::Unknown(Unknown::Metric(_))) => Judged::Raw,
            Some(Verdict::Unknown(why)) => Judged::Unknown(why.to_string()),
        }
    }

    /// The judged difference and its noise: "+3.2 us" and "±5.0 us"
    /// (`unit`: "us" or "µs"), with what was judged in front
    /// ([`Row::judged_name`]) when it is not the row's own figure.
    fn amounts(&self, metric: &str, unit: &str) -> (String, Option<String>) {
        let by = self
            .judged_difference_ns()
            .map(|d| {
                format!(
                    "{}{} {unit}",
                    if d < 0.0 { "-" } else { "+" },
                    us_cell_f(Some(d.abs()))
                )
            })
            .or_else(|| {
                self.difference_ns().map(|d| {
                    format!(
                        "{}{} {unit}",
                        if d < 0.0 { "-" } else { "+" },
                        us_cell_f(Some(d.abs()))
                    )
                })
            })
            .unwrap_or_else(|| "-".into());
        let by = match self.judged_ns() {
            Some(_) => format!("{}{by}", Row::judged_name(metric)),
            None => by,
        };
        let noise = self
            .noise_ns()
            .map(|n| format!("±{} {unit}", us_cell_f(Some(n))));
        (by, noise)
    }

    /// The terminal's words for the difference of run `b` against the
    /// baseline on `metric`: "within the noise (+3.2 us, noise ±5.0 us, p
    /// = 0.42)", "beyond the noise (B worse by +20.1 us, noise ±5.0 us, p <
    /// 0.001)"; on p99 the difference and the noise are the windows' mean
    /// p99's, the figure judged, and say so ("B worse by windows' mean p99
    /// +20.1 us").
    pub fn words(&self, metric: &str, b: &str) -> String {
        if let Some(w) = self.bound_words(metric, ("A", b), "us") {
            return w;
        }
        let Some(j) = &self.noise else {
            return "no figure on one side".into();
        };
        let (by, noise) = self.amounts(metric, "us");
        let noise = noise.map(|n| format!(", noise {n}")).unwrap_or_default();
        match &j.verdict {
            Verdict::Within { p } => {
                format!("within the noise ({by}{noise}, {})", noise::p_text(*p))
            }
            Verdict::Beyond { b_worse, p } => format!(
                "beyond the noise ({b} {} by {by}{noise}, {})",
                if *b_worse { "worse" } else { "better" },
                noise::p_text(*p)
            ),
            Verdict::Unknown(Unknown::Metric(m)) => format!("judged raw ({m} has no noise model)"),
            v => v.words_for(b),
        }
    }

    /// The report's mark on `metric`: "within noise (+3.2 µs, noise ±5.0
    /// µs)", "worse beyond noise (by +20.1 µs, noise ±5.0 µs)"; the
    /// figures judged, named when they are not the row's own (p99).
    pub fn mark(&self, metric: &str) -> String {
        if let Some(w) = self.bound_words(metric, ("the first", "this run"), "µs") {
            return w;
        }
        let (by, noise) = self.amounts(metric, "µs");
        let noise = noise.map(|n| format!(", noise {n}")).unwrap_or_default();
        match self.judged() {
            Judged::Within => format!("within noise ({by}{noise})"),
            Judged::Worse => format!("worse beyond noise (by {by}{noise})"),
            Judged::Better => format!("better beyond noise (by {by}{noise})"),
            Judged::Raw => format!("judged raw ({by}; no noise model)"),
            Judged::Unknown(why) => format!("{by}, noise unknown ({why})"),
            Judged::Missing | Judged::Bound(_) => "no figure on one side".into(),
        }
    }
}

/// One run set against the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub metric: String,
    pub a_name: String,
    pub b_name: String,
    /// Short names in tables: A for the baseline, B, C… for the others.
    pub a_tag: String,
    pub b_tag: String,
    /// Per CPU (or per thread when threads are not pinned to distinct
    /// CPUs), then `all`.
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
}

/// Result of the regression gate.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    pub passed: bool,
    pub message: String,
}

fn metric_of(s: &LatencyStats, metric: &str) -> Option<Stated<f64>> {
    if s.samples == 0 {
        return None;
    }
    s.metric(metric)
}

/// Threads are matched by CPU when each run has its threads on distinct
/// CPUs, else by thread number.
fn by_cpu(r: &RunRecord) -> bool {
    let mut cpus: Vec<u32> = Vec::new();
    for t in &r.threads {
        match t.cpu {
            Some(c) if !cpus.contains(&c) => cpus.push(c),
            _ => return false,
        }
    }
    true
}

/// The tags of the two sides.
type Tags<'t> = (&'t str, &'t str);

/// The noise judgement of one row: the figures and the threads' windows
/// of each side; none when a side is only a bound (the row's words say
/// what the bound tells, [`Row::bounded`]).
fn judge<'t>(
    metric: &str,
    (na, nb): Tags<'t>,
    (a_ns, ta): (&Option<Stated<f64>>, impl Iterator<Item = &'t ThreadRecord>),
    (b_ns, tb): (&Option<Stated<f64>>, impl Iterator<Item = &'t ThreadRecord>),
) -> Option<Judgement> {
    let (a_ns, b_ns) = ((*a_ns)?.exact()?, (*b_ns)?.exact()?);
    let (a, b) = (RunWindows::of(na, ta), RunWindows::of(nb, tb));
    Some(noise::judge(metric, &a, &b, (a_ns, b_ns)))
}

/// The row of one thread (or CPU) of each side.
fn row(
    label: String,
    cpu: Option<u32>,
    metric: &str,
    tags: Tags,
    ta: Option<&ThreadRecord>,
    tb: Option<&ThreadRecord>,
) -> Row {
    let a_ns = ta.and_then(|t| metric_of(&t.stats, metric));
    let b_ns = tb.and_then(|t| metric_of(&t.stats, metric));
    let noise = judge(
        metric,
        tags,
        (&a_ns, ta.into_iter()),
        (&b_ns, tb.into_iter()),
    );
    Row {
        label,
        cpu,
        a_ns,
        b_ns,
        noise,
    }
}

/// The overall row: all threads of each side.
fn overall_row(ra: &RunRecord, rb: &RunRecord, metric: &str, tags: Tags) -> Row {
    let (a_ns, b_ns) = (
        metric_of(&ra.overall, metric),
        metric_of(&rb.overall, metric),
    );
    Row {
        label: "all".into(),
        cpu: None,
        noise: judge(
            metric,
            tags,
            (&a_ns, ra.threads.iter()),
            (&b_ns, rb.threads.iter()),
        ),
        a_ns,
        b_ns,
    }
}

/// Compare `b` against `a` on `metric` (tags A and B).
pub fn compare(a: &NamedRun, b: &NamedRun, metric: &str) -> Result<Comparison, CompareError> {
    compare_tagged(a, b, metric, ("A", "B"))
}

fn compare_tagged<'a>(
    a: &'a NamedRun,
    b: &'a NamedRun,
    metric: &str,
    tags: Tags,
) -> Result<Comparison, CompareError> {
    if !METRICS.contains(&metric) {
        return Err(CompareError::Metric(metric.to_string()));
    }
    let (ra, rb) = (&a.record, &b.record);
    let mut rows = Vec::new();
    if by_cpu(ra) && by_cpu(rb) {
        let mut cpus: Vec<u32> = ra
            .threads
            .iter()
            .chain(rb.threads.iter())
            .filter_map(|t| t.cpu)
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        for cpu in cpus {
            let find = |r: &'a RunRecord| r.threads.iter().find(|t| t.cpu == Some(cpu));
            rows.push(row(
                format!("CPU {cpu}"),
                Some(cpu),
                metric,
                tags,
                find(ra),
                find(rb),
            ));
        }
    } else {
        let n = ra.threads.len().max(rb.threads.len());
        for i in 0..n {
            let label = ra
                .threads
                .get(i)
                .or(rb.threads.get(i))
                .map(|t| {
                    let owner = if ra.threads.get(i).is_some() { ra } else { rb };
                    format!("T{i} {}", thread_name(owner, t))
                })
                .unwrap_or_else(|| format!("T{i}"));
            rows.push(row(
                label,
                None,
                metric,
                tags,
                ra.threads.get(i),
                rb.threads.get(i),
            ));
        }
    }
    let all = overall_row(ra, rb, metric, tags);
    for (side, name) in [(all.a_ns, &a.name), (all.b_ns, &b.name)] {
        if side.is_none() {
            return Err(CompareError::Missing {
                run: name.clone(),
                metric: metric.into(),
            });
        }
    }
    rows.push(all);
    let warnings = fairness::warning(tags.0, ra, tags.1, rb)
        .into_iter()
        .chain(super::split::compare_warning(ra, rb))
        .collect();
    Ok(Comparison {
        metric: metric.into(),
        a_name: a.name.clone(),
        b_name: b.name.clone(),
        a_tag: tags.0.into(),
        b_tag: tags.1.into(),
        rows,
        warnings,
    })
}

/// Refused when a run measures another quantity than the baseline: the
/// rule of `rtscope compare` and of serve's `/compare`.
pub fn same_quantity(runs: &[NamedRun]) -> Result<(), CompareError> {
    let q0 = Quantity::of(&runs[0].record);
    for r in &runs[1..] {
        let q = Quantity::of(&r.record);
        if q != q0 {
            return Err(CompareError::Quantity {
                baseline: runs[0].name.clone(),
                baseline_quantity: q0.describe(),
                run: r.name.clone(),
                run_quantity: q.describe(),
            });
        }
    }
    Ok(())
}

/// Every run after the first set against the first, on `metric`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparisons {
    pub metric: String,
    /// One per run after the baseline, in the order given.
    pub pairs: Vec<Comparison>,
}

/// Compare `runs[1..]` each against `runs[0]`: at least two runs, all of
/// one quantity.
pub fn compare_all(runs: &[NamedRun], metric: &str) -> Result<Comparisons, CompareError> {
    if runs.len() < 2 {
        return Err(CompareError::TooFew(runs.len()));
    }
    if !METRICS.contains(&metric) {
        return Err(CompareError::Metric(metric.to_string()));
    }
    same_quantity(runs)?;
    let a_tag = tag(0);
    let pairs = runs[1..]
        .iter()
        .enumerate()
        .map(|(i, b)| compare_tagged(&runs[0], b, metric, (&a_tag, &tag(i + 1))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Comparisons {
        metric: metric.into(),
        pairs,
    })
}

/// The report's mark of each run's overall `metric` against the first
/// run's (the first gets none): `None` where the metric has no noise
/// model or a side has no figure.
pub fn overall_marks(runs: &[NamedRun], metric: &str) -> Vec<Option<String>> {
    let mut out = vec![None];
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let q0 = Quantity::of(&first.record);
    for r in &runs[1..] {
        if Quantity::of(&r.record) != q0 {
            out.push(Some(format!(
                "another quantity than {}: not compared",
                first.name
            )));
            continue;
        }
        let row = overall_row(&first.record, &r.record, metric, ("first", "this"));
        // A lower bound is marked whatever the metric: what it tells.
        let marked = row.bounded().is_some() || (noise::has_model(metric) && row.noise.is_some());
        out.push(marked.then(|| row.mark(metric)));
    }
    out
}

impl Comparison {
    pub fn overall(&self) -> &Row {
        self.rows.last().expect("a comparison has its overall row")
    }

    /// Fails when B's overall metric is more than `pct` % above A's and
    /// the difference is beyond the noise; when the noise is unknown, or
    /// the metric has none (judged raw), on the figure alone, which a
    /// caller allows only on request ([`check_gate_metric`],
    /// [`Comparisons::check_gate_noise`]). The message says which, and
    /// the difference the noise verdict judged beside the figures.
    pub fn gate(&self, pct: f64) -> Gate {
        let all = self.overall();
        if all.bounded().is_some() {
            return self.bound_gate(pct);
        }
        let value = |v: Option<Stated<f64>>| v.map_or(0.0, Stated::value);
        let (a, b) = (value(all.a_ns), value(all.b_ns));
        let limit = a * (1.0 + pct / 100.0);
        let change = all
            .change_pct()
            .map(|c| format!("{c:+.1}%"))
            .unwrap_or_else(|| "from 0".into());
        let raw = !noise::has_model(&self.metric);
        let (passed, outcome) = if b <= limit {
            let note = if raw {
                format!(" (judged raw: {} has no noise model)", self.metric)
            } else {
                String::new()
            };
            (true, format!("passed{note}"))
        } else {
            let (by, noise) = all.amounts(&self.metric, "us");
            let judged = match noise {
                Some(n) => format!("{by}, noise {n}"),
                None => by,
            };
            gate_outcome(&self.b_tag, &judged, all.noise.as_ref().map(|j| &j.verdict))
        };
        let message = format!(
            "regression gate: {}'s overall {} is {:.1}us, {}'s {:.1}us ({change}; allowed up to +{pct}%, {:.1}us): {outcome}",
            self.b_tag,
            self.metric,
            b / 1e3,
            self.a_tag,
            a / 1e3,
            limit / 1e3,
        );
        Gate { passed, message }
    }

    /// The gate when a side's overall figure is only a lower bound: it
    /// fails when B's bound is above what A allows, and passes when B's
    /// figure is within what A's bound allows (A is at least that); any
    /// other case cannot be decided ([`Comparison::bound_gate_unknown`],
    /// refused before gating: it reads "FAILED" here).
    fn bound_gate(&self, pct: f64) -> Gate {
        let all = self.overall();
        let (b_tag, a_tag, m) = (&self.b_tag, &self.a_tag, &self.metric);
        let text = |v: Option<Stated<f64>>| match v {
            Some(Stated::AtLeast(ns)) => format!("{AT_LEAST}{:.1}us", ns / 1e3),
            Some(Stated::Exact(ns)) => format!("{:.1}us", ns / 1e3),
            None => "-".into(),
        };
        let head = format!(
            "regression gate: {b_tag}'s overall {m} is {}, {a_tag}'s {} (allowed up to +{pct}%)",
            text(all.b_ns),
            text(all.a_ns)
        );
        let (passed, outcome) = match self.bound_gate_unknown(pct) {
            Some(why) => (false, format!("FAILED (not decided: {why})")),
            None if all.b_ns.is_some_and(Stated::is_bound) => (
                false,
                format!(
                    "FAILED ({b_tag}'s lower bound alone is beyond what {a_tag}'s figure allows)"
                ),
            ),
            None => (
                true,
                format!(
                    "passed ({b_tag}'s figure is within what {a_tag}'s lower bound already allows)"
                ),
            ),
        };
        Gate {
            passed,
            message: format!("{head}: {outcome}"),
        }
    }

    /// Why the gate at `pct` cannot be decided on this pair's overall
    /// figures, when a side is only a lower bound (`None`: it can, or no
    /// side is a bound).
    pub fn bound_gate_unknown(&self, pct: f64) -> Option<String> {
        let all = self.overall();
        all.bounded()?;
        let (a, b) = (all.a_ns?, all.b_ns?);
        let allowed = |a: f64| a * (1.0 + pct / 100.0);
        let (b_tag, a_tag, m) = (&self.b_tag, &self.a_tag, &self.metric);
        match (a, b) {
            (Stated::Exact(a), Stated::AtLeast(b)) if b > allowed(a) => None,
            (Stated::AtLeast(a), Stated::Exact(b)) if b <= allowed(a) => None,
            (Stated::AtLeast(_), Stated::AtLeast(_)) => Some(format!(
                "both overall {m} figures are lower bounds among the runs' overflows"
            )),
            (Stated::AtLeast(_), _) => Some(format!(
                "{a_tag}'s overall {m} is a lower bound among its overflows, and {b_tag}'s is \
                 above what that bound allows"
            )),
            _ => Some(format!(
                "{b_tag}'s overall {m} is a lower bound among its overflows, within what \
                 {a_tag}'s figure allows: its true value may be above or below"
            )),
        }
    }

    /// The rows a table shows: every row, or above
    /// [`MANY_THREADS`](rank::MANY_THREADS) per-CPU (or per-thread) rows
    /// and unless `--all`, the [`WORST_ROWS`](rank::WORST_ROWS) that got
    /// worse the most (the largest B - A first; a row one run did not
    /// measure last), then `all`. The second list is the rows left out.
    pub fn shown(&self, rows: Rows) -> (Vec<&Row>, Vec<&Row>) {
        let (per, all) = self.rows.split_at(self.rows.len() - 1);
        if !rows.summarises(per.len()) {
            return (self.rows.iter().collect(), Vec::new());
        }
        let keys: Vec<Option<i64>> = per
            .iter()
            .map(|r| r.difference_ns().map(|d| d.round() as i64))
            .collect();
        let ranked = rank::worst_first(&keys);
        let (worst, others) = ranked.split_at(rank::WORST_ROWS.min(ranked.len()));
        let mut shown: Vec<&Row> = worst.iter().map(|&i| &per[i]).collect();
        shown.push(&all[0]);
        (shown, others.iter().map(|&i| &per[i]).collect())
    }

    /// What the rows are of: CPUs, or threads where they are not pinned
    /// to distinct CPUs.
    fn unit(&self) -> &'static str {
        if self.rows.first().is_some_and(|r| r.cpu.is_some()) {
            "CPUs"
        } else {
            "threads"
        }
    }

    /// The line on the rows a summarised table leaves out: how many, which
    /// CPUs, the range of their change, how many the noise judged worse or
    /// better; and the rows only one run measured.
    fn others_lines(&self, others: &[&Row]) -> String {
        let mut out = String::new();
        let cpus =
            |rows: &[&Row]| rank::on_cpus(rows.iter().filter_map(|r| r.cpu).map(|c| c as usize));
        let (both, one): (Vec<&Row>, Vec<&Row>) = others
            .iter()
            .partition(|r| r.a_ns.is_some() && r.b_ns.is_some());
        if !both.is_empty() {
            let change = both.iter().filter_map(|r| r.change_pct());
            let (lo, hi) = change.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(c), hi.max(c))
            });
            let span = if !lo.is_finite() {
                "change -".to_string()
            } else if (hi - lo).abs() < 0.05 {
                format!("change {lo:+.1}%")
            } else {
                format!("change {lo:+.1}% to {hi:+.1}%")
            };
            let count = |j: Judged| both.iter().filter(|r| r.judged() == j).count();
            let (worse, better, within) = (
                count(Judged::Worse),
                count(Judged::Better),
                count(Judged::Within),
            );
            // Only where the noise was judged (a metric with a model and
            // runs with windows): "0 worse" must not stand for "not known".
            let judged = if worse + better + within > 0 {
                format!(", {worse} worse and {better} better beyond the noise, {within} within it")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "the other {} {}{}: {span}{judged}",
                both.len(),
                self.unit(),
                cpus(&both)
            );
        }
        if !one.is_empty() {
            let (a, b) = (&self.a_tag, &self.b_tag);
            let only_a = one.iter().filter(|r| r.b_ns.is_none()).count();
            let _ = writeln!(
                out,
                "{} {} only one run measured{}: {only_a} only {a}, {} only {b}",
                one.len(),
                self.unit(),
                cpus(&one),
                one.len() - only_a
            );
        }
        out
    }

    /// The table of this pair (latencies in µs, printed `us`), its noise
    /// and its warnings, with the rows `rows` asks for.
    fn render_table(&self, rows_shown: Rows) -> String {
        let (shown, others) = self.shown(rows_shown);
        let (a, b) = (&self.a_tag, &self.b_tag);
        let mut table: Vec<[String; 5]> = vec![[
            String::new(),
            a.clone(),
            b.clone(),
            format!("{b}/{a}"),
            "change".into(),
        ]];
        for r in &shown {
            let (ratio, change) = r.ratio_cells();
            table.push([
                r.label.clone(),
                us_cell_stated(r.a_ns),
                us_cell_stated(r.b_ns),
                ratio,
                change,
            ]);
        }
        let rows: Vec<Vec<String>> = table.iter().map(|r| r.to_vec()).collect();
        let mut out = String::new();
        let text = crate::text::table::render(&rows);
        if others.is_empty() {
            out.push_str(&text);
        } else {
            let _ = writeln!(
                out,
                "{} {} (more than {}): the {} that got worse the most, ranked by {b} - {a}; --all \
                 prints every one",
                self.rows.len() - 1,
                self.unit(),
                rank::MANY_THREADS,
                shown.len() - 1
            );
            // The others between the ranked rows and the all row.
            let (ranked, all) = text
                .trim_end_matches('\n')
                .rsplit_once('\n')
                .expect("a header, ranked rows and the all row");
            let _ = writeln!(out, "{ranked}");
            out.push_str(&self.others_lines(&others));
            let _ = writeln!(out, "{all}");
        }
        out.push_str(&self.render_noise(&shown));
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {}", for_terminal(w));
        }
        out
    }

    /// Each row's noise: the runs' ranges and the verdict; one line when
    /// every row is unknown (or judged raw) for the same reason.
    fn render_noise(&self, shown: &[&Row]) -> String {
        let (a, b) = (&self.a_tag, &self.b_tag);
        let judged: Vec<&Judgement> = self.rows.iter().filter_map(|r| r.noise.as_ref()).collect();
        if let Some(first) = judged.first() {
            let same = judged
                .iter()
                .all(|j| j.verdict == first.verdict && j.a.is_none() && j.b.is_none());
            match &first.verdict {
                Verdict::Unknown(Unknown::Metric(m)) if same => {
                    return format!(
                        "judged raw: {m} has no noise model (the windows keep max, min, avg and \
                         p99), so whether {b} - {a} is beyond the noise is not known; the \
                         figures alone are compared\n"
                    );
                }
                v @ Verdict::Unknown(_) if same => return format!("{}\n", v.words_for(b)),
                _ => {}
            }
        }
        let range = |i: Option<noise::Interval>| {
            i.map(|i| format!("{}..{}", us_cell_f(Some(i.lo_ns)), us_cell_f(Some(i.hi_ns))))
                .unwrap_or_else(|| "-".into())
        };
        let mut table: Vec<Vec<String>> = vec![vec![
            String::new(),
            format!("{a} range"),
            format!("{b} range"),
            "difference".into(),
        ]];
        for r in shown {
            let (ra, rb) = match &r.noise {
                Some(j) => (range(j.a), range(j.b)),
                None => ("-".into(), "-".into()),
            };
            table.push(vec![r.label.clone(), ra, rb, r.words(&self.metric, b)]);
        }
        let proxy = if self.metric == "p99" {
            " The windows do not keep a p99 that merges: the verdict judges the windows' mean \
             p99 (count-weighted), and the difference and the noise beside it are that \
             figure's, not the p99 in the table above."
        } else {
            ""
        };
        format!(
            "noise of the {} from each run's windows (us): the 95 % range of each run's figure \
             (a bootstrap over its windows) and whether {b} - {a} is beyond the noise (a \
             permutation test of the windows at the 5 % level; the noise is the difference that \
             shuffling the windows between the runs reaches in 5 % of the shuffles).{proxy}\n{}",
            self.metric,
            crate::text::table::render(&table)
        )
    }

    /// The terminal output of two runs (A and B).
    pub fn render(&self, a: &NamedRun, b: &NamedRun) -> String {
        Comparisons {
            metric: self.metric.clone(),
            pairs: vec![self.clone()],
        }
        .render(&[a.clone(), b.clone()], Rows::Fit)
    }
}

impl Comparisons {
    /// A gate that cannot judge the noise of a pair's overall figure (a
    /// run with too few windows, or none) is refused unless `raw`: it
    /// would gate on the raw figures without saying so up front. A metric
    /// without a noise model is [`check_gate_metric`]'s to refuse.
    pub fn check_gate_noise(&self, raw: bool) -> Result<(), CompareError> {
        if raw {
            return Ok(());
        }
        for c in &self.pairs {
            if let Judged::Unknown(why) = c.overall().judged() {
                return Err(CompareError::NoiseUnknownGate {
                    baseline: c.a_tag.clone(),
                    run: c.b_tag.clone(),
                    metric: c.metric.clone(),
                    why,
                });
            }
        }
        Ok(())
    }

    /// A gate that a lower bound leaves undecided (a run's overall metric
    /// among its overflows, [`Comparison::bound_gate_unknown`]) is refused,
    /// `--raw` or not: a bound is not a figure.
    pub fn check_gate_bounds(&self, pct: f64) -> Result<(), CompareError> {
        for c in &self.pairs {
            if let Some(why) = c.bound_gate_unknown(pct) {
                return Err(CompareError::BoundGate {
                    baseline: c.a_tag.clone(),
                    run: c.b_tag.clone(),
                    why,
                });
            }
        }
        Ok(())
    }

    /// One gate per run against the baseline; the whole gate fails when
    /// any of them does.
    pub fn gates(&self, pct: f64) -> Vec<Gate> {
        self.pairs.iter().map(|c| c.gate(pct)).collect()
    }

    /// The terminal output: each run, then each run against the
    /// baseline (latencies in µs, printed `us`), with the per-CPU rows
    /// `rows` asks for ([`Comparison::shown`]).
    ///
    /// A run's name, label, kernel, warnings and the like come from a file
    /// or a board: they reach the terminal through `text::for_terminal`,
    /// each on its line, never as raw control characters.
    pub fn render(&self, runs: &[NamedRun], rows: Rows) -> String {
        for_terminal_lines(&self.render_raw(runs, rows)).into_owned()
    }

    fn render_raw(&self, runs: &[NamedRun], rows: Rows) -> String {
        let mut out = String::new();
        for (i, r) in runs.iter().enumerate() {
            let rec = &r.record;
            let _ = writeln!(
                out,
                "{}: {} ({}): kernel {} ({}), {} samples over {}, {} thread{}",
                tag(i),
                for_terminal(&r.name),
                for_terminal(&r.reference),
                if rec.fingerprint.kernel_release.is_empty() {
                    "unknown".into()
                } else {
                    for_terminal(&rec.fingerprint.kernel_release)
                },
                for_terminal(&rec.fingerprint.preemption_model.to_string()),
                rec.overall.samples,
                known(rec, crate::record::Unknowable::Duration, || {
                    crate::units::fmt_run_length(rec.duration_ns)
                }),
                rec.threads.len(),
                if rec.threads.len() == 1 { "" } else { "s" },
            );
            let _ = writeln!(out, "   verdict: {}", super::verdict::status_line(rec));
        }
        if self.pairs.len() == 1 {
            let _ = writeln!(
                out,
                "{} latency in microseconds (us); B/A above 1 means B is worse",
                self.metric
            );
            out.push_str(&self.pairs[0].render_table(rows));
            return out;
        }
        let _ = writeln!(
            out,
            "{} latency in microseconds (us); each run against A, the baseline: a ratio above 1 \
             means that run is worse",
            self.metric
        );
        for c in &self.pairs {
            let _ = writeln!(out, "\n{} against {}:", c.b_tag, c.a_tag);
            out.push_str(&c.render_table(rows));
        }
        out
    }

    /// The comparison as JSON: the metric, whether it has a noise model,
    /// the runs, each run's rows against the baseline, and the gate.
    pub fn to_json(&self, runs: &[NamedRun], gate: Option<(f64, &[Gate])>) -> Value {
        let range = |i: Option<noise::Interval>| i.map(|i| json!([i.lo_ns, i.hi_ns]));
        // What the verdict, judged_*_ns and noise_ns are about: the
        // run's own figure (baseline_ns, run_ns), or for p99 a proxy.
        let judged_on = noise::has_model(&self.metric).then(|| match self.metric.as_str() {
            "p99" => "windows_mean_p99".to_string(),
            m => m.to_string(),
        });
        let row = |r: &Row| {
            let (p, why) = match r.noise.as_ref().map(|j| &j.verdict) {
                Some(Verdict::Within { p } | Verdict::Beyond { p, .. }) => (Some(*p), None),
                Some(Verdict::Unknown(why)) => (None, Some(why.to_string())),
                None => (None, None),
            };
            let exact = |v: Option<Stated<f64>>| v.and_then(Stated::exact);
            let at_least = |v: Option<Stated<f64>>| v.filter(|v| v.is_bound()).map(Stated::value);
            let bound = match r.bounded() {
                Some(Bounded::Worse { by_ns, ratio }) => {
                    json!({"order": "worse", "by_at_least_ns": by_ns, "ratio_at_least": ratio})
                }
                Some(Bounded::Better { by_ns, ratio }) => {
                    json!({"order": "better", "by_at_least_ns": by_ns, "ratio_at_most": ratio})
                }
                Some(Bounded::Unknown) => json!({"order": "unknown"}),
                None => Value::Null,
            };
            json!({
                "label": r.label,
                "baseline_ns": exact(r.a_ns),
                "run_ns": exact(r.b_ns),
                "baseline_at_least_ns": at_least(r.a_ns),
                "run_at_least_ns": at_least(r.b_ns),
                "bound": bound,
                "ratio": r.ratio(),
                "change_pct": r.change_pct(),
                "difference_ns": r.difference_ns(),
                "judged_on": r.judged_ns().and(judged_on.clone()),
                "judged_baseline_ns": r.judged_ns().map(|j| j.0),
                "judged_run_ns": r.judged_ns().map(|j| j.1),
                "judged_difference_ns": r.judged_difference_ns(),
                "noise_ns": r.noise_ns(),
                "judged": r.judged().key(),
                "p": p,
                "why_not_judged": why,
                "baseline_range_ns": r.noise.as_ref().and_then(|j| range(j.a)),
                "run_range_ns": r.noise.as_ref().and_then(|j| range(j.b)),
            })
        };
        let run = |i: usize, r: &NamedRun| json!({"tag": tag(i), "name": r.name, "reference": r.reference});
        let against: Vec<Value> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut v = json!({
                    "run": run(i + 1, &runs[i + 1]),
                    "rows": c.rows.iter().map(row).collect::<Vec<_>>(),
                    "warnings": c.warnings,
                });
                if let Some((_, gates)) = gate {
                    v["gate"] = json!({"passed": gates[i].passed, "message": gates[i].message});
                }
                v
            })
            .collect();
        let mut out = json!({
            "metric": self.metric,
            "noise_model": noise::has_model(&self.metric),
            "baseline": run(0, &runs[0]),
            "against_baseline": against,
        });
        if let Some((pct, gates)) = gate {
            out["gate"] = json!({
                "allowed_pct": pct,
                "passed": gates.iter().all(|g| g.passed),
            });
        }
        out
    }
}

/// B is worse than the allowance: whether the gate fires, and why;
/// `judged` is the difference the noise verdict judged, with its noise
/// ([`Row::amounts`]: on p99 the windows' mean p99's, and named so).
fn gate_outcome(b: &str, judged: &str, v: Option<&Verdict>) -> (bool, String) {
    match v {
        Some(Verdict::Beyond { b_worse: true, p }) => (
            false,
            format!(
                "FAILED (the difference is beyond the noise of the runs' windows: {judged}, {})",
                noise::p_text(*p)
            ),
        ),
        Some(Verdict::Within { p }) => (
            true,
            format!(
                "passed: the gate did not fire because the difference is within the noise of \
                 the runs' windows ({judged}, {})",
                noise::p_text(*p)
            ),
        ),
        Some(Verdict::Beyond { p, .. }) => (
            true,
            format!(
                "passed: the gate did not fire because the runs' windows put {b} below A \
                 ({judged}, {})",
                noise::p_text(*p)
            ),
        ),
        Some(Verdict::Unknown(Unknown::Metric(m))) => (
            false,
            format!("FAILED (judged raw: {m} has no noise model; the figure alone decided)"),
        ),
        Some(Verdict::Unknown(why)) => (
            false,
            format!(
                "FAILED (the noise could not be judged: {why}; gated on the figure alone, as \
                 --raw asks)"
            ),
        ),
        None => (
            false,
            "FAILED (the noise could not be judged; gated on the figure alone)".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    fn named(name: &str, r: RunRecord) -> NamedRun {
        NamedRun {
            name: name.into(),
            reference: format!("{name}.json"),
            record: r,
        }
    }

    #[test]
    fn per_cpu_rows_ratios_and_gate() {
        let a = named("a", synthetic(&[vec![10_000], vec![20_000]]));
        let b = named("b", synthetic(&[vec![15_000], vec![20_000]]));
        let c = compare(&a, &b, "max").unwrap();
        let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["CPU 0", "CPU 1", "all"]);
        assert_eq!(c.rows[0].ratio(), Some(1.5));
        assert_eq!(c.rows[1].change_pct(), Some(0.0));
        assert_eq!(c.overall().ratio(), Some(1.0));
        assert!(c.gate(0.0).passed);
        assert!(c.warnings.is_empty());
        let text = c.render(&a, &b);
        assert!(text.contains("CPU 0  10.0  15.0  1.50  +50.0%"), "{text}");
        // Each run's verdict and whether it is provisional (60 s, no load).
        assert_eq!(
            text.matches(
                "   verdict: deadline met (the period, 1 ms); worst case in the tens-of-µs class \
                 (provisional: 60 s, no load)\n"
            )
            .count(),
            2,
            "{text}"
        );
        // B worse overall by 50 %.
        let b2 = named("b2", synthetic(&[vec![15_000], vec![30_000]]));
        let c2 = compare(&a, &b2, "max").unwrap();
        assert!(!c2.gate(49.0).passed);
        assert!(c2.gate(50.0).passed);
        assert!(c2.gate(49.0).message.contains("FAILED"));
        assert!(c2.gate(49.0).message.contains("+50.0%"));
    }

    #[test]
    fn many_cpus_show_the_eight_that_got_worse_the_most_and_sum_up_the_rest() {
        let a_threads: Vec<Vec<u64>> = (0..32u64).map(|i| vec![10_000 + i * 10]).collect();
        let mut b_threads = a_threads.clone();
        b_threads[5] = vec![15_000];
        b_threads[20] = vec![25_000];
        b_threads[7] = vec![9_000];
        // CPUs 32 and 33: only B measured them.
        b_threads.extend([vec![12_000], vec![12_000]]);
        let a = named("a", synthetic(&a_threads));
        let b = named("b", synthetic(&b_threads));
        let c = compare(&a, &b, "max").unwrap();
        assert_eq!(c.rows.len(), 35);
        let (shown, others) = c.shown(Rows::Fit);
        let labels: Vec<&str> = shown.iter().map(|r| r.label.as_str()).collect();
        // The largest B - A first, then equal ones in CPU order; the all
        // row last. The better CPU 7 and the one-sided CPUs are left out.
        assert_eq!(
            labels,
            [
                "CPU 20", "CPU 5", "CPU 0", "CPU 1", "CPU 2", "CPU 3", "CPU 4", "CPU 6", "all"
            ]
        );
        assert_eq!(others.len(), 26);
        let text = c.render(&a, &b);
        assert!(
            text.contains(
                "34 CPUs (more than 16): the 8 that got worse the most, ranked by B - A; --all \
                 prints every one\n"
            ),
            "{text}"
        );
        let change_7 = (9_000.0 / 10_070.0 - 1.0) * 100.0;
        assert!(
            text.contains(&format!(
                "\nthe other 24 CPUs (CPU 7-19,21-31): change {change_7:+.1}% to +0.0%\n2 CPUs \
                 only one run measured (CPU 32-33): 0 only A, 2 only B\nall "
            )),
            "{text}"
        );
        // The table and the noise table each have the eight rows.
        assert_eq!(
            text.lines().filter(|l| l.starts_with("CPU ")).count(),
            8,
            "{text}"
        );
        let all = Comparisons {
            metric: c.metric.clone(),
            pairs: vec![c.clone()],
        }
        .render(&[a.clone(), b.clone()], Rows::All);
        assert_eq!(
            all.lines().filter(|l| l.starts_with("CPU ")).count(),
            34,
            "{all}"
        );
        assert!(!all.contains("the other"), "{all}");
        // Up to 16 CPUs, every row, as before.
        let few: Vec<Vec<u64>> = a_threads[..16].to_vec();
        let f = named("f", synthetic(&few));
        let cf = compare(&f, &f, "max").unwrap();
        assert_eq!(cf.shown(Rows::Fit).0.len(), 17);
        assert!(cf.shown(Rows::Fit).1.is_empty());
    }

    /// A run whose 250 largest of 1 250 samples are overflows from
    /// 50 µs (values unknown; the largest, 3 ms, the maximum).
    fn overflowed() -> RunRecord {
        let mut vals = vec![5_000; 1000];
        vals.extend(vec![50_000; 249]);
        vals.push(3_000_000);
        let mut run = synthetic(&[vals]);
        let o = crate::record::Overflow {
            count: 250,
            from_ns: 50_000,
        };
        run.threads[0].stats.overflow = Some(o);
        run.overall.overflow = Some(o);
        run
    }

    /// Issue 54: a quantile among the overflows is compared only as the
    /// lower bound it is.
    #[test]
    fn lower_bounds_are_compared_as_bounds() {
        let bound = named("o", overflowed());
        let at = |ns: u64| named("x", synthetic(&[vec![ns; 1000]]));
        // A 30 µs, B ≥ 50 µs: worse by at least 20 µs.
        let c = compare(&at(30_000), &bound, "p99.9").unwrap();
        let all = c.overall();
        assert_eq!(all.b_ns, Some(Stated::AtLeast(50_000.0)));
        assert_eq!(all.difference_ns(), None);
        assert_eq!(all.ratio(), None);
        assert!(matches!(all.bounded(), Some(Bounded::Worse { by_ns, .. }) if by_ns == 20_000.0));
        let text = c.render(&at(30_000), &bound);
        assert!(
            text.contains("all    30.0  ≥50.0  ≥1.67  ≥+66.7%"),
            "{text}"
        );
        assert!(
            text.contains(
                "B worse by at least +20.0 us (B's p99.9 is a lower bound, ≥50.0 us, among its \
                 overflows; A's is 30.0 us; not judged against the noise)"
            ),
            "{text}"
        );
        assert_eq!(c.bound_gate_unknown(10.0), None);
        let g = c.gate(10.0);
        assert!(
            !g.passed && g.message.contains("lower bound alone"),
            "{}",
            g.message
        );
        let v = Comparisons {
            metric: c.metric.clone(),
            pairs: vec![c.clone()],
        }
        .to_json(&[at(30_000), bound.clone()], None);
        let row = &v["against_baseline"][0]["rows"][0];
        assert_eq!(row["run_ns"], Value::Null);
        assert_eq!(row["run_at_least_ns"], 50_000.0);
        assert_eq!(row["difference_ns"], Value::Null);
        assert_eq!(row["bound"]["order"], "worse");
        assert_eq!(row["judged"], "bound");
        // A ≥ 50 µs, B 30 µs: better by at least 20 µs; the gate passes.
        let c = compare(&bound, &at(30_000), "p99.9").unwrap();
        assert!(matches!(
            c.overall().bounded(),
            Some(Bounded::Better { .. })
        ));
        assert!(c.gate(10.0).passed, "{}", c.gate(10.0).message);
        // A ≥ 50 µs, B 60 µs: unknown, and so is a gate at +10 %.
        let c = compare(&bound, &at(60_000), "p99.9").unwrap();
        assert_eq!(c.overall().bounded(), Some(Bounded::Unknown));
        assert!(c.overall().ratio_cells().0 == "unknown");
        assert!(c.bound_gate_unknown(10.0).is_some());
        // Two bounds: never a difference. (p99.99 is the 1 250th of
        // 1 250 samples: the maximum, a figure.)
        let c = compare(&bound, &bound, "p99.99").unwrap();
        assert_eq!(c.overall().bounded(), None);
        // Two bounds: never a difference.
        let c = compare(&bound, &bound, "p99.9").unwrap();
        assert_eq!(c.overall().bounded(), Some(Bounded::Unknown));
        let text = c.render(&bound, &bound);
        assert!(
            text.contains("unknown: both are lower bounds (≥50.0 us and ≥50.0 us"),
            "{text}"
        );
        // Below the overflows, figures as ever.
        let c = compare(&bound, &at(30_000), "p50").unwrap();
        assert_eq!(c.overall().bounded(), None);
        assert!(c.overall().difference_ns().is_some());
    }

    #[test]
    fn unknown_metrics_and_missing_values_are_errors() {
        let a = named("a", synthetic(&[vec![10_000]]));
        let empty = named("e", synthetic(&[vec![]]));
        assert_eq!(
            compare(&a, &a, "p42"),
            Err(CompareError::Metric("p42".into()))
        );
        assert!(matches!(
            compare(&a, &empty, "p99.99"),
            Err(CompareError::Missing { .. })
        ));
    }

    #[test]
    fn different_cpus_and_unfair_pairs() {
        let a = named("a", synthetic(&[vec![10_000]]));
        let mut rb = synthetic(&[vec![5_000], vec![6_000]]);
        rb.fingerprint.preemption_model = "rt".into();
        let b = named("b", rb);
        let c = compare(&a, &b, "p99").unwrap();
        assert_eq!(c.rows.len(), 3);
        assert_eq!(c.rows[1].a_ns, None);
        assert_eq!(c.rows[1].ratio(), None);
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains("preemption_model"),
            "{}",
            c.warnings[0]
        );
        let text = c.render(&a, &b);
        assert!(text.contains("warning: A and B differ"), "{text}");
        assert!(text.contains("CPU 1     -"), "{text}");
    }

    use crate::report::noise::test_series as windows;

    fn with_windows(max_ns: u64, w: crate::record::WindowSeries) -> NamedRun {
        let mut r = synthetic(&[vec![10_000, max_ns]]);
        r.threads[0].windows = w;
        named("w", r)
    }

    #[test]
    fn the_gate_fires_only_beyond_the_noise() {
        // One stall each (5 ms, 10 ms): +100 % but within the noise.
        let a = with_windows(5_000_000, windows(30, 1.0, 5_000_000));
        let b = with_windows(10_000_000, windows(30, 1.0, 10_000_000));
        let c = compare(&a, &b, "max").unwrap();
        let g = c.gate(10.0);
        assert!(g.passed, "{}", g.message);
        assert!(
            g.message.contains("+100.0%")
                && g.message
                    .contains("the gate did not fire because the difference is within the noise"),
            "{}",
            g.message
        );
        let text = c.render(&a, &b);
        assert!(
            text.contains("noise of the max from each run's windows"),
            "{text}"
        );
        // By how much, the noise on that side, and p; the difference
        // within the noise is no larger than it.
        let all = c.overall();
        let (d, n) = (all.difference_ns().unwrap(), all.noise_ns().unwrap());
        assert_eq!(d, 5_000_000.0);
        assert!(d <= n, "{d} {n}");
        assert!(
            text.contains("within the noise (+5000.0 us, noise ±"),
            "{text}"
        );
        assert!(
            all.mark("max")
                .starts_with("within noise (+5000.0 µs, noise ±"),
            "{}",
            all.mark("max")
        );
        // Every window twice as late: beyond the noise, the gate fires.
        let a = with_windows(150_000, windows(30, 1.0, 0));
        let b2 = with_windows(300_000, windows(30, 2.0, 0));
        let c = compare(&a, &b2, "max").unwrap();
        assert!(
            matches!(
                c.overall().noise.as_ref().unwrap().verdict,
                Verdict::Beyond { b_worse: true, .. }
            ),
            "{c:?}"
        );
        let g = c.gate(10.0);
        assert!(
            !g.passed
                && g.message
                    .contains("FAILED (the difference is beyond the noise"),
            "{}",
            g.message
        );
        let all = c.overall();
        assert!(all.difference_ns().unwrap() > all.noise_ns().unwrap());
        assert!(
            all.mark("max")
                .starts_with("worse beyond noise (by +150.0 µs, noise ±"),
            "{}",
            all.mark("max")
        );
        assert!(
            c.render(&a, &b2)
                .contains("beyond the noise (B worse by +150.0 us, noise ±"),
            "{}",
            c.render(&a, &b2)
        );
        // Too few windows: a gate is refused (it would judge the raw
        // figures), saying how many windows it needs, unless --raw; then
        // gated on the figure, and said.
        let b3 = with_windows(10_000_000, windows(5, 1.0, 10_000_000));
        let cs = compare_all(&[a.clone(), b3.clone()], "max").unwrap();
        let e = cs.check_gate_noise(false).unwrap_err();
        assert!(
            matches!(e, CompareError::NoiseUnknownGate { ref run, .. } if run == "B"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(
            e.contains("cannot judge B against A")
                && e.contains("(run B has 5 windows, fewer than 10)")
                && e.contains("needs at least 10 non-empty windows in each run")
                && e.contains("--raw"),
            "{e}"
        );
        assert_eq!(cs.check_gate_noise(true), Ok(()));
        let g = compare(&a, &b3, "max").unwrap().gate(10.0);
        assert!(!g.passed, "{}", g.message);
        assert!(
            g.message.contains(
                "the noise could not be judged: run B has 5 windows, fewer than 10; gated on \
                 the figure alone, as --raw asks"
            ),
            "{}",
            g.message
        );
        // Enough windows on both sides: nothing to refuse.
        let ok = compare_all(&[a.clone(), b2.clone()], "max").unwrap();
        assert_eq!(ok.check_gate_noise(false), Ok(()));
        // A metric the windows do not keep: judged raw, and said, in the
        // table and by the gate, whether it passes or fails.
        let c = compare(&a, &b, "p99.99").unwrap();
        let text = c.render(&a, &b);
        assert!(
            text.contains(
                "\njudged raw: p99.99 has no noise model (the windows keep max, min, avg and p99)"
            ),
            "{text}"
        );
        assert_eq!(c.overall().judged(), Judged::Raw);
        let g = c.gate(0.0);
        assert!(
            !g.passed
                && g.message
                    .contains("FAILED (judged raw: p99.99 has no noise model"),
            "{}",
            g.message
        );
        let g = compare(&b, &a, "p99.99").unwrap().gate(0.0);
        assert!(
            g.passed
                && g.message
                    .ends_with("passed (judged raw: p99.99 has no noise model)"),
            "{}",
            g.message
        );
    }

    #[test]
    fn p99_says_its_verdict_judges_the_windows_proxy_and_never_worse_by_a_drop() {
        // The runs' own p99 (histograms): A 300 us, B 150 us, B better by
        // half. Their windows' p99 (the proxy the noise model judges): B's
        // twice A's, beyond the noise. The verdict's words must give the
        // proxy's difference, named, never "B worse by -150.0 us".
        let a = with_windows(300_000, windows(30, 1.0, 0));
        let b = with_windows(150_000, windows(30, 2.0, 0));
        let c = compare(&a, &b, "p99").unwrap();
        let all = c.overall();
        assert!(all.difference_ns().unwrap() < -100_000.0, "{all:?}");
        assert_eq!(all.judged(), Judged::Worse);
        let d = all.judged_difference_ns().unwrap();
        assert!(d > 0.0, "the judged difference agrees with 'worse': {d}");
        assert!(all.noise_ns().unwrap() < d, "beyond the noise: {all:?}");
        let words = all.words("p99", "B");
        assert!(
            words.starts_with("beyond the noise (B worse by windows' mean p99 +"),
            "{words}"
        );
        assert!(!words.contains("by -"), "{words}");
        assert!(
            all.mark("p99")
                .starts_with("worse beyond noise (by windows' mean p99 +"),
            "{}",
            all.mark("p99")
        );
        let text = c.render(&a, &b);
        assert!(
            text.contains("the verdict judges the windows' mean p99"),
            "{text}"
        );
        // The gate: B's own p99 is below the allowance, so it passes on the
        // figure; the JSON says what was judged beside the runs' figures.
        let cs = compare_all(&[a.clone(), b.clone()], "p99").unwrap();
        let gates = cs.gates(0.0);
        let runs = [a, b];
        let j = cs.to_json(&runs, Some((0.0, &gates)));
        let row = j["against_baseline"][0]["rows"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(row["judged_on"], "windows_mean_p99", "{row}");
        assert!(row["difference_ns"].as_f64().unwrap() < -100_000.0, "{row}");
        assert!(row["judged_difference_ns"].as_f64().unwrap() > 0.0, "{row}");
        assert_eq!(row["judged"], "worse", "{row}");
        // On max the verdict judges the runs' own figures.
        let c = compare(&runs[0], &runs[1], "max").unwrap();
        assert_eq!(
            c.overall().judged_difference_ns(),
            c.overall().difference_ns()
        );
        assert!(!c.overall().words("max", "B").contains("windows'"));
    }

    #[test]
    fn a_gate_on_a_metric_without_a_noise_model_needs_raw() {
        assert_eq!(
            check_gate_metric("p99.99", false),
            Err(CompareError::RawGate("p99.99".into()))
        );
        assert!(
            CompareError::RawGate("p99.9".into())
                .to_string()
                .contains("add --raw")
        );
        assert_eq!(check_gate_metric("p99.99", true), Ok(()));
        for m in ["p99", "max", "avg", "min"] {
            assert_eq!(check_gate_metric(m, false), Ok(()));
        }
        assert!(crate::report::noise::has_model(DEFAULT_METRIC));
    }

    #[test]
    fn every_run_against_the_first() {
        let base = with_windows(150_000, windows(30, 1.0, 0));
        let same = with_windows(150_000, windows(30, 1.0, 0));
        let worse = with_windows(300_000, windows(30, 2.0, 0));
        let better = with_windows(75_000, windows(30, 0.5, 0));
        let runs = vec![base.clone(), same, worse, better];
        let runs =
            crate::report::name_runs(runs.into_iter().map(|r| (r.reference, r.record)).collect());
        let c = compare_all(&runs, "max").unwrap();
        assert_eq!(c.pairs.len(), 3);
        let tags: Vec<(&str, &str)> = c
            .pairs
            .iter()
            .map(|p| (p.a_tag.as_str(), p.b_tag.as_str()))
            .collect();
        assert_eq!(tags, [("A", "B"), ("A", "C"), ("A", "D")]);
        let judged: Vec<Judged> = c.pairs.iter().map(|p| p.overall().judged()).collect();
        assert_eq!(judged, [Judged::Within, Judged::Worse, Judged::Better]);
        // The gate fails as a whole when one run (C) is worse beyond the
        // noise, and says which.
        let gates = c.gates(10.0);
        assert_eq!(
            gates.iter().map(|g| g.passed).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert!(
            gates[1]
                .message
                .starts_with("regression gate: C's overall max"),
            "{}",
            gates[1].message
        );
        let text = c.render(&runs, Rows::Fit);
        for want in [
            "
C: w #3 (w.json)",
            "
B against A:
",
            "
C against A:
",
            "beyond the noise (D better by -75.0 us",
            "  C range  ",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
        let j = c.to_json(&runs, Some((10.0, &gates)));
        assert_eq!(j["metric"], "max");
        assert_eq!(j["noise_model"], true);
        assert_eq!(j["baseline"]["tag"], "A");
        assert_eq!(j["gate"]["passed"], false);
        let runs_j = j["against_baseline"].as_array().unwrap();
        assert_eq!(runs_j.len(), 3);
        assert_eq!(runs_j[1]["run"]["tag"], "C");
        let all = runs_j[1]["rows"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(all["label"], "all");
        assert_eq!(all["judged"], "worse");
        assert_eq!(all["difference_ns"], 150_000.0);
        assert!(all["noise_ns"].as_f64().unwrap() < 150_000.0, "{all}");
        assert_eq!(runs_j[1]["gate"]["passed"], false);
        // The report's marks: none for the baseline, one per other run.
        let marks = overall_marks(&runs, "max");
        assert_eq!(marks[0], None);
        assert!(
            marks[1]
                .as_deref()
                .unwrap()
                .starts_with("within noise (+0.0 µs, noise ±"),
            "{marks:?}"
        );
        assert!(
            marks[2]
                .as_deref()
                .unwrap()
                .starts_with("worse beyond noise (by +150.0 µs"),
            "{marks:?}"
        );
        assert!(
            marks[3]
                .as_deref()
                .unwrap()
                .starts_with("better beyond noise (by -75.0 µs"),
            "{marks:?}"
        );
        assert_eq!(overall_marks(&runs, "p99.99"), vec![None; 4]);
        // One run alone is refused.
        assert_eq!(compare_all(&runs[..1], "max"), Err(CompareError::TooFew(1)));
    }

    #[test]
    fn runs_of_another_quantity_are_refused() {
        let a = named("a", synthetic(&[vec![10_000]]));
        let mut r = synthetic(&[vec![10_000]]);
        r.quantity = Some(Quantity::BusyLoopGap);
        let oslat = named("oslat", r);
        let e = compare_all(&[a.clone(), a.clone(), oslat.clone()], "max").unwrap_err();
        assert!(
            matches!(e, CompareError::Quantity { ref run, .. } if run == "oslat"),
            "{e:?}"
        );
        assert!(e.to_string().contains("busy-loop gap (oslat)"), "{e}");
        // Two runs of oslat compare.
        assert!(compare_all(&[oslat.clone(), oslat.clone()], "max").is_ok());
        let marks = overall_marks(&[a, oslat], "max");
        assert_eq!(
            marks[1].as_deref(),
            Some("another quantity than a: not compared")
        );
    }
}
