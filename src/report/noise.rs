//! Is a difference between two runs larger than the noise? Judged from
//! the runs' own window series (pure functions; no I/O, no printing).
//!
//! The unit of resampling is the window (1 s by default): the wake-ups
//! within a window are dependent (a stall delays several), windows far
//! apart much less so. Each run is a set of windows; for a metric that the
//! windows carry (max, min, avg, and p99 through a proxy) two things are
//! computed with a fixed seed, so the same runs always give the same words:
//!
//! - each run's 95 % range: a bootstrap over its windows (resampled with
//!   replacement, [`RESAMPLES`] times), the 2.5th and 97.5th percentiles of
//!   the resampled statistic, scaled onto the run's own figure;
//! - the verdict: a two-sided permutation test of the log ratio B/A. Under
//!   "A and B are the same system", the windows of both runs are
//!   exchangeable; shuffling them between A and B [`RESAMPLES`] times gives
//!   the differences chance alone makes, and the difference is beyond the
//!   noise when at most [`ALPHA`] of them are as large as the observed one.
//!   The shuffles also give the noise as a figure: the difference that
//!   chance alone reaches in 1 - [`ALPHA`] of them ([`Judgement::noise_ns`]);
//!   a difference is beyond the noise exactly when it is larger.
//!
//! Limits: windows of one run are taken as exchangeable (a run that drifts
//! or has phases of load breaks that); the bootstrap cannot see above the
//! largest window, so a run's range for the max never exceeds its max; p99
//! is judged through the count-weighted mean of the windows' p99 (an upper
//! bound once windows are compacted): the verdict, the difference and the
//! noise beside it are then the proxy's ([`Judgement::judged_ns`]), named
//! as such by whoever prints them, never set beside the run's own p99 as
//! if they were its; p50, p90, p99.9 and p99.99 are
//! not kept per window, so they have no noise model ([`has_model`]):
//! `compare` calls their differences judged raw. Fewer than [`MIN_WINDOWS`]
//! non-empty windows in a run: unknown, never "beyond".

use crate::record::{ThreadRecord, WindowPoint, WindowSeries};
use crate::rng::Rng;
use thiserror::Error;

/// Fewer non-empty windows than this in a run: the noise is unknown.
pub const MIN_WINDOWS: usize = 10;
/// Resamples of the bootstrap and permutations of the test.
pub const RESAMPLES: usize = 2000;
/// Level of the test (two-sided).
pub const ALPHA: f64 = 0.05;
/// The fixed seed: the same runs always get the same verdict.
pub const SEED: u64 = 0x7274_7363_6f70_6530;

/// How often the verdict finds a real shift: in the model of the unit
/// tests (windows of 200 wake-ups, a 5 µs body and a heavy-ish tail), B's
/// every latency 10 % or 25 % above A's is called "beyond the noise (B
/// worse)" in at least these percentages of [`POWER_PAIRS`] seeded pairs;
/// 0 says no more often than chance (a false alarm, [`ALPHA`]), and is
/// held as at most 3 × [`ALPHA`]. What docs/report.md ([`power_table`])
/// and `compare --help` say, held by
/// `noise::tests::power_at_10_and_25_percent_shifts_reaches_the_documented_rates`.
#[derive(Clone, Copy, Debug)]
pub struct Power {
    pub metric: &'static str,
    /// Non-empty windows in each run.
    pub windows: usize,
    /// Percent of the pairs found beyond the noise at a +10 % shift, at
    /// least.
    pub at_10_pct: u32,
    /// The same at +25 %.
    pub at_25_pct: u32,
}

const fn power(metric: &'static str, windows: usize, at_10_pct: u32, at_25_pct: u32) -> Power {
    Power {
        metric,
        windows,
        at_10_pct,
        at_25_pct,
    }
}

/// The floors of [`Power`], per metric and window count: the rates the
/// test measured rounded down to a multiple of 5 %, then 5 points lower.
pub const POWER: [Power; 6] = [
    power("p99", 10, 25, 90),
    power("p99", 30, 70, 95),
    power("p99", 100, 90, 95),
    power("max", 10, 0, 15),
    power("max", 30, 0, 25),
    power("max", 100, 0, 25),
];
/// The seeded pairs behind each figure of [`POWER`].
pub const POWER_PAIRS: u64 = 100;

/// [`POWER`] as the Markdown table of docs/report.md.
pub fn power_table() -> String {
    let cell = |pct: u32| {
        if pct == 0 {
            "chance (≈ 5 %)".to_string()
        } else {
            format!("≥ {pct} %")
        }
    };
    let mut t = String::from(
        "| metric | windows in each run | B 10 % worse | B 25 % worse |\n|---|---|---|---|\n",
    );
    for p in POWER {
        t += &format!(
            "| {} | {} | {} | {} |\n",
            p.metric,
            p.windows,
            cell(p.at_10_pct),
            cell(p.at_25_pct)
        );
    }
    t
}

/// Why the noise could not be judged.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum Unknown {
    #[error("the windows keep max, min, avg and p99, not {0}")]
    Metric(String),
    #[error("run {0} has no windows")]
    NoWindows(String),
    #[error("run {run} has {windows} windows, fewer than {MIN_WINDOWS}")]
    TooFew { run: String, windows: usize },
    #[error("the windows of run {run} are {window_ns} ns long, not a divisor of {common_ns} ns")]
    Lengths {
        run: String,
        window_ns: u64,
        common_ns: u64,
    },
    #[error("run {0} has a figure of 0 in its windows")]
    Zero(String),
}

/// The statistic of a run that the windows can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    Max,
    Min,
    Avg,
    /// Count-weighted mean of the windows' p99: a proxy that moves with
    /// the run's p99.
    P99,
}

impl Stat {
    pub fn of(metric: &str) -> Result<Stat, Unknown> {
        match metric {
            "max" => Ok(Stat::Max),
            "min" => Ok(Stat::Min),
            "avg" => Ok(Stat::Avg),
            "p99" => Ok(Stat::P99),
            m => Err(Unknown::Metric(m.to_string())),
        }
    }
}

/// One window of a run, all its threads together.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Block {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Sum over threads of count × avg.
    pub avg_sum: f64,
    /// Sum over threads of count × p99.
    pub p99_sum: f64,
}

impl Block {
    fn add(&mut self, p: &WindowPoint) {
        if p.count == 0 {
            return;
        }
        self.min_ns = if self.count == 0 {
            p.min_ns
        } else {
            self.min_ns.min(p.min_ns)
        };
        self.count += p.count;
        self.max_ns = self.max_ns.max(p.max_ns);
        self.avg_sum += p.count as f64 * p.avg_ns as f64;
        self.p99_sum += p.count as f64 * p.p99_ns as f64;
    }
}

/// The statistic over a set of blocks (`None`: no samples).
fn stat_of<'a>(stat: Stat, blocks: impl Iterator<Item = &'a Block>) -> Option<f64> {
    let (mut n, mut lo, mut hi, mut avg, mut p99) = (0u64, u64::MAX, 0u64, 0.0, 0.0);
    for b in blocks {
        n += b.count;
        lo = lo.min(b.min_ns);
        hi = hi.max(b.max_ns);
        avg += b.avg_sum;
        p99 += b.p99_sum;
    }
    if n == 0 {
        return None;
    }
    Some(match stat {
        Stat::Max => hi as f64,
        Stat::Min => lo as f64,
        Stat::Avg => avg / n as f64,
        Stat::P99 => p99 / n as f64,
    })
}

/// A run's windows merged to `window_ns` (a multiple of theirs), as
/// compaction would merge them.
fn coarsen(w: &WindowSeries, window_ns: u64) -> Vec<WindowPoint> {
    let n = w.len();
    let k = (window_ns / w.window_ns.max(1)).max(1) as usize;
    let mut out: Vec<WindowPoint> = Vec::with_capacity(n.div_ceil(k));
    for i in 0..n {
        if i % k == 0 {
            out.push(WindowPoint::default());
        }
        if let Some(last) = out.last_mut() {
            last.merge(&w.point(i));
        }
    }
    out
}

/// One run as the comparison sees it: its name and its threads' windows.
pub struct RunWindows<'a> {
    pub name: &'a str,
    pub series: Vec<&'a WindowSeries>,
}

impl<'a> RunWindows<'a> {
    /// The windows of `threads`, under `name`.
    pub fn of(name: &'a str, threads: impl Iterator<Item = &'a ThreadRecord>) -> RunWindows<'a> {
        RunWindows {
            name,
            series: threads.map(|t| &t.windows).collect(),
        }
    }

    fn has_windows(&self) -> bool {
        self.series.iter().any(|s| !s.is_empty() && s.window_ns > 0)
    }
}

/// The common window length of the runs: the longest, when every other
/// divides it.
fn common_window(runs: &[&RunWindows]) -> Result<u64, Unknown> {
    let mut common = 0;
    for r in runs {
        if !r.has_windows() {
            return Err(Unknown::NoWindows(r.name.to_string()));
        }
        for s in r.series.iter().filter(|s| !s.is_empty()) {
            common = common.max(s.window_ns);
        }
    }
    for r in runs {
        for s in r.series.iter().filter(|s| !s.is_empty()) {
            if s.window_ns == 0 || common % s.window_ns != 0 {
                return Err(Unknown::Lengths {
                    run: r.name.to_string(),
                    window_ns: s.window_ns,
                    common_ns: common,
                });
            }
        }
    }
    Ok(common)
}

/// The run's non-empty blocks at `window_ns`: window `i` of every thread
/// in block `i`.
pub fn blocks(run: &RunWindows, window_ns: u64) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for s in run.series.iter().filter(|s| !s.is_empty()) {
        for (i, p) in coarsen(s, window_ns).iter().enumerate() {
            if out.len() <= i {
                out.resize(i + 1, Block::default());
            }
            out[i].add(p);
        }
    }
    out.retain(|b| b.count > 0);
    out
}

/// A range of a run's figure, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo_ns: f64,
    pub hi_ns: f64,
}

/// The 95 % bootstrap range of `figure_ns`, from `blocks` resampled with
/// replacement: the percentiles of the resampled statistic, scaled by
/// figure / statistic of the run's own windows.
pub fn interval(stat: Stat, blocks: &[Block], figure_ns: f64, seed: u64) -> Option<Interval> {
    let own = stat_of(stat, blocks.iter()).filter(|v| *v > 0.0)?;
    let mut rng = Rng::new(seed);
    let mut pick = Vec::with_capacity(blocks.len());
    let mut values: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            pick.clear();
            pick.extend((0..blocks.len()).map(|_| &blocks[rng.below(blocks.len())]));
            stat_of(stat, pick.iter().copied())
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    let scale = figure_ns / own;
    Some(Interval {
        lo_ns: at(ALPHA / 2.0) * scale,
        hi_ns: at(1.0 - ALPHA / 2.0) * scale,
    })
}

/// What the permutation test found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Permutation {
    /// Two-sided p-value of the observed log ratio.
    pub p: f64,
    /// ln(T(B) / T(A)).
    pub observed: f64,
    /// The noise: the |log ratio| that chance reaches in at least
    /// [`ALPHA`] of the shuffles (`None` when too few shuffles had a
    /// figure). `p <= ALPHA` exactly when `|observed|` exceeds it.
    pub threshold: Option<f64>,
}

/// The two-sided permutation test of ln(T(B) / T(A)). `None` when a side
/// has no samples or a statistic of 0.
pub fn permutation_p(stat: Stat, a: &[Block], b: &[Block], seed: u64) -> Option<Permutation> {
    let d = |x: &[Block], y: &[Block]| -> Option<f64> {
        let (tx, ty) = (stat_of(stat, x.iter())?, stat_of(stat, y.iter())?);
        (tx > 0.0 && ty > 0.0).then(|| (ty / tx).ln())
    };
    let observed = d(a, b)?;
    let mut pool: Vec<Block> = a.iter().chain(b.iter()).copied().collect();
    let mut rng = Rng::new(seed);
    let mut chance: Vec<f64> = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        for i in 0..a.len() {
            let j = i + rng.below(pool.len() - i);
            pool.swap(i, j);
        }
        let (pa, pb) = pool.split_at(a.len());
        if let Some(x) = d(pa, pb) {
            chance.push(x.abs());
        }
    }
    let as_large = chance
        .iter()
        .filter(|x| **x >= observed.abs() - 1e-12)
        .count();
    // p <= ALPHA  <=>  as_large < k  <=>  |observed| beyond the k-th
    // largest chance difference.
    let k = (ALPHA * (1 + RESAMPLES) as f64).floor() as usize;
    chance.sort_by(|x, y| y.total_cmp(x));
    let threshold = (k >= 1).then(|| chance.get(k - 1).copied()).flatten();
    Some(Permutation {
        p: (1 + as_large) as f64 / (1 + RESAMPLES) as f64,
        observed,
        threshold,
    })
}

/// What the comparison says of the difference.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Within { p: f64 },
    Beyond { b_worse: bool, p: f64 },
    Unknown(Unknown),
}

impl Verdict {
    /// The words printed: "within the noise", "beyond the noise (B
    /// worse)", "noise unknown (why)".
    pub fn words(&self) -> String {
        self.words_for("B")
    }

    /// The words, with the run compared called `b` ("C worse").
    pub fn words_for(&self, b: &str) -> String {
        match self {
            Verdict::Within { p } => format!("within the noise ({})", p_text(*p)),
            Verdict::Beyond { b_worse, p } => format!(
                "beyond the noise ({b} {}, {})",
                if *b_worse { "worse" } else { "better" },
                p_text(*p)
            ),
            Verdict::Unknown(why) => format!("noise unknown ({why})"),
        }
    }
}

/// Whether the windows can tell the noise of `metric` (max, min, avg,
/// p99); any other is judged raw, on the figures alone.
pub fn has_model(metric: &str) -> bool {
    Stat::of(metric).is_ok()
}

/// A p-value as printed: "p = 0.42", "p = 0.012", "p < 0.001".
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else if p < 0.1 {
        format!("p = {p:.3}")
    } else {
        format!("p = {p:.2}")
    }
}

/// Each run's range and the verdict on one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    pub a: Option<Interval>,
    pub b: Option<Interval>,
    pub verdict: Verdict,
    /// The |ln(B / A)| that chance alone reaches in [`ALPHA`] of the
    /// shuffles (`None` when the verdict is unknown).
    pub threshold: Option<f64>,
    /// The figures the verdict judged, ns (A, B). For max, min and avg
    /// the runs' own figures (their windows' statistic is the same
    /// quantity); for p99 the windows' count-weighted mean p99 (the
    /// proxy), which can differ from the run's p99, even in sign of the
    /// difference. `None` when the verdict is unknown.
    pub judged_ns: Option<(f64, f64)>,
}

impl Judgement {
    /// The noise in ns, on the side of the difference: how far from
    /// `a_ns` chance alone takes B in [`ALPHA`] of the shuffles, upwards
    /// when B >= A, else downwards. The difference |B - A| is beyond the
    /// noise exactly when it is larger than this.
    pub fn noise_ns(&self, a_ns: f64, b_ns: f64) -> Option<f64> {
        let q = self.threshold?;
        Some(if b_ns >= a_ns {
            a_ns * q.exp_m1()
        } else {
            -a_ns * (-q).exp_m1()
        })
    }
}

/// Judge the difference of `metric` between runs `a` and `b`, whose
/// figures (from their histograms) are `figures_ns` (A, B).
pub fn judge(metric: &str, a: &RunWindows, b: &RunWindows, figures_ns: (f64, f64)) -> Judgement {
    let unknown = |why| Judgement {
        a: None,
        b: None,
        verdict: Verdict::Unknown(why),
        threshold: None,
        judged_ns: None,
    };
    let stat = match Stat::of(metric) {
        Ok(s) => s,
        Err(why) => return unknown(why),
    };
    let window_ns = match common_window(&[a, b]) {
        Ok(w) => w,
        Err(why) => return unknown(why),
    };
    let (ba, bb) = (blocks(a, window_ns), blocks(b, window_ns));
    let range = |bl: &[Block], fig: f64, seed| {
        (bl.len() >= MIN_WINDOWS)
            .then(|| interval(stat, bl, fig, seed))
            .flatten()
    };
    let mut j = Judgement {
        a: range(&ba, figures_ns.0, SEED),
        b: range(&bb, figures_ns.1, SEED ^ 1),
        verdict: Verdict::Within { p: 1.0 },
        threshold: None,
        judged_ns: None,
    };
    (j.verdict, j.threshold) = verdict(stat, (a.name, &ba), (b.name, &bb));
    if !matches!(j.verdict, Verdict::Unknown(_)) {
        j.judged_ns = match stat {
            Stat::P99 => stat_of(stat, ba.iter()).zip(stat_of(stat, bb.iter())),
            _ => Some(figures_ns),
        };
    }
    j
}

fn verdict(
    stat: Stat,
    (na, a): (&str, &[Block]),
    (nb, b): (&str, &[Block]),
) -> (Verdict, Option<f64>) {
    for (n, bl) in [(na, a), (nb, b)] {
        if bl.len() < MIN_WINDOWS {
            let why = Unknown::TooFew {
                run: n.to_string(),
                windows: bl.len(),
            };
            return (Verdict::Unknown(why), None);
        }
    }
    match permutation_p(stat, a, b, SEED ^ 2) {
        None => (
            Verdict::Unknown(Unknown::Zero(format!("{na} or {nb}"))),
            None,
        ),
        Some(t) if t.p > ALPHA => (Verdict::Within { p: t.p }, t.threshold),
        Some(t) => (
            Verdict::Beyond {
                b_worse: t.observed > 0.0,
                p: t.p,
            },
            t.threshold,
        ),
    }
}

/// `n` windows of 1 s for tests: maxima of 100–150 µs (a fixed
/// sequence) times `scale`, a stall of `stall_ns` in window 3 when not 0.
#[cfg(test)]
pub fn test_series(n: u64, scale: f64, stall_ns: u64) -> WindowSeries {
    let mut w = WindowSeries {
        window_ns: 1_000_000_000,
        ..Default::default()
    };
    for i in 0..n {
        let max = (scale * (100_000 + (i * 7919) % 50_000) as f64) as u64;
        w.push(WindowPoint {
            count: 1000,
            min_ns: 1_000,
            avg_ns: max / 10,
            max_ns: if i == 3 && stall_ns > 0 {
                stall_ns
            } else {
                max
            },
            p99_ns: max / 2,
            missed: 0,
        });
    }
    w
}

#[cfg(test)]
mod tests;
