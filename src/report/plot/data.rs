//! Figures built from run records: the latency histogram (log-log, in
//! cyclictest's 1 µs classes), the exceedance curve P(latency > x), and
//! max and p99 per window over time with the load phases as lanes above. Per
//! thread for one run, one curve per run for several, or one per merged
//! histogram (a study's cells, or the cells that share a value).
//!
//! Every figure has a bounded number of points whatever the length of the
//! run (classes widen, steps and windows are merged, keeping maxima), so
//! a report of a day-long run on 64 CPUs stays small.

use super::{Area, Axis, Band, Figure, SUMMARY_COLOR, Scale, Series, Stroke, TimeUnit, Unit};
use crate::histogram::{Histogram, HistogramError, bucket_index, bucket_value};
use crate::record::{RunRecord, ThreadRecord, WindowPoint, WindowSeries};
use std::collections::BTreeMap;

/// At most this many histogram classes per figure (classes widen).
const MAX_CLASSES: usize = 6000;
/// Exceedance steps per decade of latency, at most.
const STEPS_PER_DECADE: f64 = 200.0;
/// Points per timeline series, at most (windows are merged).
const MAX_WINDOWS: usize = 1200;
/// Above this many threads, figures of one run stop drawing a curve per
/// thread (unreadable, and heavy): they draw the worst this many (by
/// max, then p99) and the others as one shaded range, "the other N
/// threads" (histograms and exceedance also all threads together).
pub const MAX_THREAD_CURVES: usize = 8;

/// How a thread is named in legends: `CPU 3`, or `thread 2` when not
/// pinned, or `CPU 1 #4` when several threads share a CPU.
pub fn thread_name(run: &RunRecord, t: &ThreadRecord) -> String {
    match t.cpu {
        Some(cpu) => {
            let shared = run.threads.iter().filter(|o| o.cpu == Some(cpu)).count() > 1;
            if shared {
                format!("CPU {cpu} #{}", t.index)
            } else {
                format!("CPU {cpu}")
            }
        }
        None => format!("thread {}", t.index),
    }
}

fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

fn decade_ceil(v: f64) -> f64 {
    let c = 10f64.powf(v.log10().ceil());
    if c <= v * (1.0 + 1e-12) && c == decade_floor(v) {
        c * 10.0
    } else {
        c
    }
}

/// A log axis over `[lo, hi]` widened to whole decades (at least one).
pub(crate) fn log_axis(title: &str, unit: Unit, lo: f64, hi: f64) -> Axis {
    let mut min = decade_floor(lo);
    if !min.is_finite() || min <= 0.0 {
        min = 1.0;
    }
    let mut max = decade_ceil(hi);
    if !max.is_finite() || max <= min {
        max = min * 10.0;
    }
    Axis {
        title: title.into(),
        scale: Scale::Log,
        unit,
        min,
        max,
    }
}

fn latency_axis(lo_us: f64, hi_us: f64) -> Axis {
    log_axis("wake-up latency (log scale)", Unit::LatencyUs, lo_us, hi_us)
}

// ---------------------------------------------------------------- histogram

/// One non-empty class: its count and the span of the histogram buckets
/// that fell in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Class {
    count: u64,
    lo_ns: u64,
    hi_ns: u64,
}

/// Counts per class of `width_ns`: class k holds the bucket midpoints
/// ([`bucket_value`], as the histfile export takes them) in
/// `[k·w, (k+1)·w)` (cyclictest truncates to whole µs the same way; above
/// 512 µs a histogram bucket is wider than 1 µs and its count goes to the
/// class of its midpoint, within 0.1 %).
fn classes(h: &Histogram, width_ns: u64) -> BTreeMap<u64, Class> {
    classes_of(h.iter_buckets(), h.sub_bits(), width_ns)
}

/// [`classes`] of non-empty buckets `(lower, upper, count)` of precision
/// `b`, ascending.
fn classes_of(
    buckets: impl IntoIterator<Item = (u64, u64, u64)>,
    b: u32,
    width_ns: u64,
) -> BTreeMap<u64, Class> {
    let mut out: BTreeMap<u64, Class> = BTreeMap::new();
    for (lo, hi, c) in buckets {
        let mid = bucket_value(bucket_index(lo, b), b);
        let e = out.entry(mid / width_ns).or_insert(Class {
            count: 0,
            lo_ns: lo,
            hi_ns: hi,
        });
        e.count += c;
        e.hi_ns = hi;
    }
    out
}

/// Narrowest class width (1 µs × 2^k) that keeps all curves under the
/// point budget.
fn class_width_ns(hists: &[&Histogram]) -> u64 {
    let mut w = 1000u64;
    loop {
        let n: usize = hists.iter().map(|h| classes(h, w).len()).sum();
        if n <= MAX_CLASSES || w >= 1 << 40 {
            return w;
        }
        w *= 2;
    }
}

/// The classes as a curve: two classes are joined when nothing lies
/// between them, i.e. they are neighbours, or no histogram bucket between
/// them is empty (above 512 µs buckets are wider than a class). A class
/// with nothing on either side is an isolated dot.
fn class_series(name: String, color: usize, stroke: Stroke, h: &Histogram, w: u64) -> Series {
    let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut prev: Option<(u64, Class)> = None;
    let w_us = w as f64 / 1e3;
    for (k, c) in classes(h, w) {
        let p = ((k as f64 + 0.5) * w_us, c.count as f64);
        match (prev, segments.last_mut()) {
            (Some((pk, pc)), Some(seg)) if pk + 1 == k || pc.hi_ns + 1 == c.lo_ns => seg.push(p),
            _ => segments.push(vec![p]),
        }
        prev = Some((k, c));
    }
    Series {
        name,
        color,
        stroke,
        segments,
        markers: vec![],
    }
}

fn hist_figure(title: String, curves: Vec<(String, usize, Stroke, Histogram)>) -> Figure {
    hist_figure_with(title, curves, None).0
}

/// The figure of `curves`, its classes also keeping `shaded` (the
/// merged histogram of a shaded range) under the point budget; with the
/// class width, in ns.
fn hist_figure_with(
    title: String,
    curves: Vec<(String, usize, Stroke, Histogram)>,
    shaded: Option<&Histogram>,
) -> (Figure, u64) {
    let mut hists: Vec<&Histogram> = curves.iter().map(|c| &c.3).collect();
    hists.extend(shaded);
    let w = class_width_ns(&hists);
    let series: Vec<Series> = curves
        .iter()
        .map(|(n, c, s, h)| class_series(n.clone(), *c, *s, h, w))
        .collect();
    let xs = series.iter().flat_map(|s| s.points().map(|p| p.0));
    let (lo, hi) = min_max(xs).unwrap_or((1.0, 10.0));
    let ymax = series
        .iter()
        .flat_map(|s| s.points().map(|p| p.1))
        .fold(1.0, f64::max);
    let class = if w == 1000 {
        "1 µs".to_string()
    } else {
        format!("{} µs", w / 1000)
    };
    (
        Figure {
            title,
            x: latency_axis(lo, hi),
            y: Axis {
                title: format!("samples per {class} class (log scale)"),
                scale: Scale::Log,
                unit: Unit::Count,
                min: 0.5,
                max: decade_ceil(ymax),
            },
            series,
            bands: vec![],
            areas: vec![],
        },
        w,
    )
}

fn min_max(it: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    it.filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((a, b)) => Some((a.min(v), b.max(v))),
        })
}

/// The threads a figure of one run draws, with their legend names, and
/// the others it shades as one range: all of them up to
/// [`MAX_THREAD_CURVES`], else the worst that many (by max, then p99,
/// then p99.9).
fn drawn_threads(run: &RunRecord) -> (Vec<(usize, String)>, Vec<usize>) {
    let name = |i: usize| thread_name(run, &run.threads[i]);
    if run.threads.len() <= MAX_THREAD_CURVES {
        return (
            (0..run.threads.len()).map(|i| (i, name(i))).collect(),
            vec![],
        );
    }
    let keys: Vec<_> = run
        .threads
        .iter()
        .map(|t| (t.stats.max_ns, t.stats.p99_ns, t.stats.p999_ns))
        .collect();
    let ranked = crate::text::rank::worst_first(&keys);
    let (worst, others) = ranked.split_at(MAX_THREAD_CURVES);
    (
        worst.iter().map(|i| (*i, name(*i))).collect(),
        others.to_vec(),
    )
}

/// The legend name of the shaded range of `n` threads.
fn others_name(n: usize) -> String {
    format!("the other {n} threads")
}

/// Runs of `(x, lower, upper)` from per-key ranges, broken where keys
/// are not consecutive.
pub(crate) fn area_segments(
    points: impl Iterator<Item = (u64, f64, f64, f64)>,
) -> Vec<Vec<(f64, f64, f64)>> {
    let mut segs: Vec<Vec<(f64, f64, f64)>> = Vec::new();
    let mut prev: Option<u64> = None;
    for (k, x, lo, hi) in points {
        match (prev, segs.last_mut()) {
            (Some(p), Some(seg)) if p + 1 == k => seg.push((x, lo, hi)),
            _ => segs.push(vec![(x, lo, hi)]),
        }
        prev = Some(k);
    }
    segs
}

/// Latency histogram of one run, one curve per thread (beyond
/// [`MAX_THREAD_CURVES`]: all threads together, and the threads with the
/// highest and the lowest maximum).
pub fn hist_run(run: &RunRecord, title: &str) -> Result<Figure, HistogramError> {
    let mut curves = Vec::new();
    let (drawn, others) = drawn_threads(run);
    if !others.is_empty() {
        curves.push((
            format!("all {} CPUs", run.threads.len()),
            SUMMARY_COLOR,
            Stroke::Bold,
            run.overall_histogram()?,
        ));
    }
    for (k, (i, name)) in drawn.into_iter().enumerate() {
        let h = run.threads[i].histogram.to_histogram()?;
        curves.push((name, k, Stroke::Solid, h));
    }
    // The others one at a time, never all their dense tables at once
    // (28 672 buckets each: 3 000 threads held 700 MB).
    let mut merged = Histogram::new(crate::histogram::LATENCY_SUB_BITS);
    for i in &others {
        run.threads[*i].histogram.merge_into(&mut merged)?;
    }
    let (mut fig, w) = hist_figure_with(
        title.into(),
        curves,
        (!others.is_empty()).then_some(&merged),
    );
    if !others.is_empty() {
        // Per class: the lowest and highest count, and how many threads
        // have it (a thread without it counts 0 there).
        let mut range: BTreeMap<u64, (u64, u64, usize)> = BTreeMap::new();
        for i in &others {
            let h = &run.threads[*i].histogram;
            for (k, c) in classes_of(h.nonzero_buckets()?, h.sub_bucket_bits, w) {
                let e = range.entry(k).or_insert((u64::MAX, 0, 0));
                *e = (e.0.min(c.count), e.1.max(c.count), e.2 + 1);
            }
        }
        let w_us = w as f64 / 1e3;
        let floor = fig.y.min;
        let points = range.into_iter().map(|(k, (lo, hi, seen))| {
            let lo = if seen < others.len() { 0 } else { lo };
            let x = (k as f64 + 0.5) * w_us;
            (k, x, (lo as f64).max(floor), hi as f64)
        });
        fig.areas.push(Area {
            name: others_name(others.len()),
            color: SUMMARY_COLOR,
            segments: area_segments(points),
        });
    }
    Ok(fig)
}

/// Latency histograms of several runs (all threads of each), overlaid.
pub fn hist_runs(runs: &[(&str, &RunRecord)], title: &str) -> Result<Figure, HistogramError> {
    let mut curves = Vec::new();
    for (i, (name, run)) in runs.iter().enumerate() {
        curves.push((name.to_string(), i, Stroke::Solid, run.overall_histogram()?));
    }
    Ok(hist_figure(title.into(), curves))
}

// --------------------------------------------------------------- exceedance

/// P(latency > x) as steps, from the exact minimum (P = 1) to the exact
/// maximum, where it drops to `floor` (nothing is above the maximum).
fn exceedance_series(
    name: String,
    color: usize,
    stroke: Stroke,
    h: &Histogram,
    min_ns: Option<u64>,
    max_ns: Option<u64>,
    floor: f64,
) -> Series {
    let n = h.total();
    let buckets: Vec<(u64, u64, u64)> = h.iter_buckets().collect();
    if n == 0 || buckets.is_empty() {
        return Series {
            name,
            color,
            stroke,
            segments: vec![],
            markers: vec![],
        };
    }
    let (min, max) = curve_ends(&buckets, min_ns, max_ns);
    let mut pts = vec![(min, 1.0)];
    let mut y = 1.0;
    let mut left = n;
    let mut i = 0;
    while i < buckets.len() {
        // Merge the buckets that fall in one grid cell of the log axis.
        let cell = ((buckets[i].1.max(1) as f64).log10() * STEPS_PER_DECADE).floor();
        while i + 1 < buckets.len()
            && ((buckets[i + 1].1.max(1) as f64).log10() * STEPS_PER_DECADE).floor() == cell
            && left - buckets[i].2 > buckets[i + 1].2
        {
            left -= buckets[i].2;
            i += 1;
        }
        left -= buckets[i].2;
        if left == 0 {
            break;
        }
        let x = (buckets[i].1 as f64 / 1e3).clamp(min, max);
        let ny = left as f64 / n as f64;
        pts.push((x, y));
        pts.push((x, ny));
        y = ny;
        i += 1;
    }
    pts.push((max, y));
    pts.push((max, floor));
    Series {
        name,
        color,
        stroke,
        segments: vec![pts],
        markers: vec![(max, y)],
    }
}

/// Where an exceedance curve starts and ends, in µs: the exact min and
/// max where the record has them, else its histogram's ends. Extremes that
/// contradict each other (a stated min above every bucket and no max: a
/// damaged import) give the histogram's own range, so that the curve is
/// drawn from what it counts and never from a range that ends before it
/// starts.
fn curve_ends(buckets: &[(u64, u64, u64)], min_ns: Option<u64>, max_ns: Option<u64>) -> (f64, f64) {
    let (lo, hi) = (buckets[0].0, buckets[buckets.len() - 1].1);
    let (min, max) = match (min_ns.unwrap_or(lo), max_ns.unwrap_or(hi)) {
        (min, max) if min <= max => (min, max),
        _ => (lo, hi.max(lo)),
    };
    (min.max(1) as f64 / 1e3, max.max(1) as f64 / 1e3)
}

struct ExceedanceCurve {
    name: String,
    color: usize,
    stroke: Stroke,
    hist: Histogram,
    min_ns: Option<u64>,
    max_ns: Option<u64>,
}

impl ExceedanceCurve {
    /// The curve of all of `run`'s threads together.
    fn overall(
        run: &RunRecord,
        name: String,
        color: usize,
        stroke: Stroke,
    ) -> Result<Self, HistogramError> {
        Ok(ExceedanceCurve {
            name,
            color,
            stroke,
            hist: run.overall_histogram()?,
            min_ns: run.overall.min_ns,
            max_ns: run.overall.max_ns,
        })
    }
}

fn exceedance_figure(title: String, curves: Vec<ExceedanceCurve>) -> Figure {
    let nmax = curves
        .iter()
        .map(|c| c.hist.total())
        .max()
        .unwrap_or(1)
        .max(1);
    let floor = decade_floor(1.0 / nmax as f64);
    let series: Vec<Series> = curves
        .into_iter()
        .map(|c| {
            exceedance_series(
                c.name, c.color, c.stroke, &c.hist, c.min_ns, c.max_ns, floor,
            )
        })
        .collect();
    let (lo, hi) =
        min_max(series.iter().flat_map(|s| s.points().map(|p| p.0))).unwrap_or((1.0, 10.0));
    Figure {
        title,
        x: latency_axis(lo, hi),
        y: Axis {
            title: "P(latency > x) (log scale)".into(),
            scale: Scale::Log,
            unit: Unit::Probability,
            min: floor,
            max: 1.3,
        },
        series,
        bands: vec![],
        areas: vec![],
    }
}

/// Exceedance per thread of one run (beyond [`MAX_THREAD_CURVES`], the
/// threads with the highest and lowest maximum), with all threads
/// together in bold when there are several.
pub fn exceedance_run(run: &RunRecord, title: &str) -> Result<Figure, HistogramError> {
    let mut curves = Vec::new();
    let (drawn, others) = drawn_threads(run);
    for (k, (i, name)) in drawn.into_iter().enumerate() {
        let t = &run.threads[i];
        curves.push(ExceedanceCurve {
            name,
            color: k,
            stroke: Stroke::Solid,
            hist: t.histogram.to_histogram()?,
            min_ns: t.stats.min_ns,
            max_ns: t.stats.max_ns,
        });
    }
    if run.threads.len() > 1 {
        curves.push(ExceedanceCurve::overall(
            run,
            "all CPUs".into(),
            SUMMARY_COLOR,
            Stroke::Bold,
        )?);
    }
    let mut fig = exceedance_figure(title.into(), curves);
    if !others.is_empty() {
        fig.areas.push(exceedance_area(run, &others, &fig));
    }
    Ok(fig)
}

/// The range of P(latency > x) across `others`, on a grid of
/// [`STEPS_PER_DECADE`] points a decade over the figure's x axis; a
/// share of 0 is drawn at the figure's floor. Each thread is read once
/// from its record's sparse buckets, in one sweep along the grid: the
/// cost is the threads' buckets plus the grid, and no thread's dense
/// table is made (a table of 28 672 buckets a thread, summed at every
/// grid point, made a run of 3 000 threads take minutes).
fn exceedance_area(run: &RunRecord, others: &[usize], fig: &Figure) -> Area {
    let (lo_us, hi_us) = (fig.x.min, fig.x.max);
    let steps = ((hi_us / lo_us).log10() * STEPS_PER_DECADE).ceil().max(1.0) as u64;
    let grid: Vec<u64> = (0..=steps)
        .map(|k| (lo_us * 10f64.powf(k as f64 / STEPS_PER_DECADE) * 1e3) as u64)
        .collect();
    let mut range = vec![(f64::MAX, 0.0f64); grid.len()];
    for i in others {
        let buckets = &run.threads[*i].histogram.buckets;
        let total: u128 = buckets.iter().map(|b| u128::from(b[1])).sum();
        if total == 0 {
            continue;
        }
        // Counted so far: the buckets whose lower bound is at or below
        // the grid point (count_above's rule, on the sparse list).
        let (mut j, mut below) = (0, 0u128);
        for (k, ns) in grid.iter().enumerate() {
            while j < buckets.len() && buckets[j][0] <= *ns {
                below += u128::from(buckets[j][1]);
                j += 1;
            }
            let p = total.saturating_sub(below) as f64 / total as f64;
            let r = &mut range[k];
            *r = (r.0.min(p), r.1.max(p));
        }
    }
    let floor = fig.y.min;
    let points = range.into_iter().enumerate().filter_map(|(k, (lo, hi))| {
        let x = lo_us * 10f64.powf(k as f64 / STEPS_PER_DECADE);
        (hi > 0.0).then(|| (k as u64, x, lo.max(floor), hi))
    });
    Area {
        name: others_name(others.len()),
        color: SUMMARY_COLOR,
        segments: area_segments(points),
    }
}

/// Exceedance of several runs (all threads of each), overlaid.
pub fn exceedance_runs(runs: &[(&str, &RunRecord)], title: &str) -> Result<Figure, HistogramError> {
    let curves = runs
        .iter()
        .enumerate()
        .map(|(i, (name, run))| ExceedanceCurve::overall(run, name.to_string(), i, Stroke::Solid))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(exceedance_figure(title.into(), curves))
}

// ------------------------------------------------------- merged histograms

/// A histogram already merged from several runs (a study's cell, or all
/// the cells that share a value), named for the legend, with its exact
/// extremes (the histogram's buckets only bound them).
#[derive(Clone, Debug)]
pub struct NamedHistogram {
    pub name: String,
    /// Palette index, so that a value keeps its colour across figures.
    pub color: usize,
    pub hist: Histogram,
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// Latency histograms of merged histograms, overlaid (one curve each).
pub fn hist_merged(curves: &[NamedHistogram], title: &str) -> Figure {
    let curves = curves
        .iter()
        .map(|c| (c.name.clone(), c.color, Stroke::Solid, c.hist.clone()))
        .collect();
    hist_figure(title.into(), curves)
}

/// Exceedance of merged histograms, overlaid (one curve each).
pub fn exceedance_merged(curves: &[NamedHistogram], title: &str) -> Figure {
    let curves = curves
        .iter()
        .map(|c| ExceedanceCurve {
            name: c.name.clone(),
            color: c.color,
            stroke: Stroke::Solid,
            hist: c.hist.clone(),
            min_ns: c.min_ns,
            max_ns: c.max_ns,
        })
        .collect();
    exceedance_figure(title.into(), curves)
}

// ----------------------------------------------------------------- timeline

/// The windows of `w` merged `group` at a time (maxima kept), with the
/// time of each merged window's middle, in ns from the start: `None`
/// where the merged window holds no samples.
fn merged_windows(w: &WindowSeries, group: usize) -> Vec<(f64, Option<WindowPoint>)> {
    let group = group.max(1);
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let end = (i + group).min(w.len());
        let mut p = WindowPoint::default();
        for j in i..end {
            p.merge(&w.point(j));
        }
        let mid = (i + end) as f64 / 2.0 * w.window_ns as f64;
        out.push((mid, (p.count > 0).then_some(p)));
        i = end;
    }
    out
}

fn merge_group(len: usize) -> usize {
    len.div_ceil(MAX_WINDOWS).max(1)
}

/// Polyline segments of `pts` (breaking at empty windows).
fn segments_of(pts: &[(f64, Option<u64>)], unit: TimeUnit) -> Vec<Vec<(f64, f64)>> {
    let mut segs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut open = false;
    for (t, v) in pts {
        match v {
            Some(v) if *v > 0 => {
                let p = (t / unit.ns(), *v as f64 / 1e3);
                if open {
                    segs.last_mut().expect("open segment").push(p);
                } else {
                    segs.push(vec![p]);
                    open = true;
                }
            }
            _ => open = false,
        }
    }
    segs
}

fn series_of(
    name: String,
    color: usize,
    stroke: Stroke,
    pts: &[(f64, Option<WindowPoint>)],
    pick: impl Fn(&WindowPoint) -> u64,
    unit: TimeUnit,
) -> Series {
    let v: Vec<(f64, Option<u64>)> = pts
        .iter()
        .map(|(t, p)| (*t, p.as_ref().map(&pick)))
        .collect();
    Series {
        name,
        color,
        stroke,
        segments: segments_of(&v, unit),
        markers: vec![],
    }
}

/// Window points of several threads combined (maxima over threads),
/// aligned by window number.
fn combine_threads(parts: &[Vec<(f64, Option<WindowPoint>)>]) -> Vec<(f64, Option<WindowPoint>)> {
    let len = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let mut t = 0.0;
            let mut acc: Option<WindowPoint> = None;
            for p in parts {
                if let Some((pt, v)) = p.get(i) {
                    t = *pt;
                    if let Some(v) = v {
                        acc.get_or_insert_default().merge(v);
                    }
                }
            }
            (t, acc)
        })
        .collect()
}

fn timeline_figure(
    title: String,
    unit: TimeUnit,
    duration_ns: u64,
    series: Vec<Series>,
    bands: Vec<Band>,
) -> Figure {
    let (lo, hi) =
        min_max(series.iter().flat_map(|s| s.points().map(|p| p.1))).unwrap_or((1.0, 10.0));
    let xmax = series
        .iter()
        .flat_map(|s| s.points().map(|p| p.0))
        .fold(duration_ns as f64 / unit.ns(), f64::max);
    Figure {
        title,
        x: Axis {
            title: format!("time since the start of the run ({})", unit.symbol()),
            scale: Scale::Linear,
            unit: Unit::Time(unit),
            min: 0.0,
            max: if xmax > 0.0 { xmax } else { 1.0 },
        },
        y: latency_axis(lo, hi),
        series,
        bands,
        areas: vec![],
    }
}

/// Load phases as bands, one colour per load part.
fn load_bands(run: &RunRecord, unit: TimeUnit) -> Vec<Band> {
    let Some(load) = &run.load else {
        return vec![];
    };
    let mut parts: Vec<&str> = Vec::new();
    let mut bands = Vec::new();
    for ph in &load.phases {
        if ph.end_offset_ns <= ph.start_offset_ns {
            continue;
        }
        let color = match parts.iter().position(|p| *p == ph.part) {
            Some(i) => i,
            None => {
                parts.push(&ph.part);
                parts.len() - 1
            }
        };
        bands.push(Band {
            name: format!("load: {}", ph.part),
            color,
            x0: ph.start_offset_ns as f64 / unit.ns(),
            x1: ph.end_offset_ns as f64 / unit.ns(),
        });
    }
    bands
}

/// Max and p99 per window of one run, per thread (or over all threads
/// beyond eight), with the load phases in lanes above the chart. `None` when the run has no
/// window series (imported runs, mostly).
pub fn timeline_run(run: &RunRecord, title: &str) -> Option<Figure> {
    let with_windows: Vec<&ThreadRecord> = run
        .threads
        .iter()
        .filter(|t| !t.windows.is_empty())
        .collect();
    if with_windows.is_empty() {
        return None;
    }
    let unit = TimeUnit::for_duration(run.duration_ns);
    let group = merge_group(
        with_windows
            .iter()
            .map(|t| t.windows.len())
            .max()
            .unwrap_or(0),
    );
    let per_thread: Vec<Vec<(f64, Option<WindowPoint>)>> = with_windows
        .iter()
        .map(|t| merged_windows(&t.windows, group))
        .collect();
    let mut series = Vec::new();
    if with_windows.len() <= MAX_THREAD_CURVES {
        for (i, (t, pts)) in with_windows.iter().zip(&per_thread).enumerate() {
            let name = thread_name(run, t);
            series.push(series_of(
                format!("{name} max"),
                i,
                Stroke::Solid,
                pts,
                |p| p.max_ns,
                unit,
            ));
            series.push(series_of(
                format!("{name} p99"),
                i,
                Stroke::Dashed,
                pts,
                |p| p.p99_ns,
                unit,
            ));
        }
    }
    let mut areas = Vec::new();
    if with_windows.len() > MAX_THREAD_CURVES {
        // The worst threads' max per window, and the others' range.
        let (drawn, _) = drawn_threads(run);
        let pos = |i: usize| {
            with_windows
                .iter()
                .position(|t| std::ptr::eq(*t, &run.threads[i]))
        };
        let mut shown = Vec::new();
        for (k, (i, name)) in drawn.into_iter().enumerate() {
            if let Some(p) = pos(i) {
                shown.push(p);
                series.push(series_of(
                    format!("{name} max"),
                    k,
                    Stroke::Solid,
                    &per_thread[p],
                    |p| p.max_ns,
                    unit,
                ));
            }
        }
        let rest: Vec<&Vec<(f64, Option<WindowPoint>)>> = (0..per_thread.len())
            .filter(|p| !shown.contains(p))
            .map(|p| &per_thread[p])
            .collect();
        let len = rest.iter().map(|r| r.len()).max().unwrap_or(0);
        let points = (0..len).filter_map(|w| {
            let maxima = rest
                .iter()
                .filter_map(|r| r.get(w).and_then(|(_, p)| p.as_ref().map(|p| p.max_ns)));
            let t = rest.iter().find_map(|r| r.get(w).map(|(t, _)| *t))?;
            let (lo, hi) = maxima
                .filter(|v| *v > 0)
                .fold((u64::MAX, 0), |(a, b), v| (a.min(v), b.max(v)));
            (hi > 0).then(|| (w as u64, t / unit.ns(), lo as f64 / 1e3, hi as f64 / 1e3))
        });
        areas.push(Area {
            name: format!("{} max", others_name(rest.len())),
            color: SUMMARY_COLOR,
            segments: area_segments(points),
        });
    }
    let bands = load_bands(run, unit);
    let mut fig = timeline_figure(title.into(), unit, run.duration_ns, series, bands);
    // The range widens the latency axis when it reaches past the lines.
    let span = areas
        .iter()
        .flat_map(|a| a.segments.iter().flatten())
        .flat_map(|(_, lo, hi)| [*lo, *hi]);
    if let Some((lo, hi)) = min_max(span) {
        let all_lo = lo.min(fig.y.min);
        let all_hi = hi.max(fig.y.max);
        fig.y = latency_axis(all_lo, all_hi);
    }
    fig.areas = areas;
    Some(fig)
}

/// Max per window of several runs (over all threads of each), overlaid on
/// a common time axis from each run's start. Runs without windows are
/// left out; `None` if none has any.
pub fn timeline_runs(runs: &[(&str, &RunRecord)], title: &str) -> Option<Figure> {
    let longest = runs.iter().map(|(_, r)| r.duration_ns).max().unwrap_or(0);
    let unit = TimeUnit::for_duration(longest);
    let mut series = Vec::new();
    for (i, (name, run)) in runs.iter().enumerate() {
        let threads: Vec<&ThreadRecord> = run
            .threads
            .iter()
            .filter(|t| !t.windows.is_empty())
            .collect();
        if threads.is_empty() {
            continue;
        }
        let group = merge_group(threads.iter().map(|t| t.windows.len()).max().unwrap_or(0));
        let parts: Vec<_> = threads
            .iter()
            .map(|t| merged_windows(&t.windows, group))
            .collect();
        let all = combine_threads(&parts);
        series.push(series_of(
            format!("{name} max"),
            i,
            Stroke::Solid,
            &all,
            |p| p.max_ns,
            unit,
        ));
    }
    if series.is_empty() {
        return None;
    }
    Some(timeline_figure(title.into(), unit, longest, series, vec![]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{LoadPhase, LoadRecord, synthetic};

    fn with_windows(mut run: RunRecord, maxima: &[u64]) -> RunRecord {
        for t in &mut run.threads {
            let n = maxima.len();
            t.windows = WindowSeries {
                window_ns: 1_000_000_000,
                count: maxima
                    .iter()
                    .map(|m| if *m == 0 { 0 } else { 1000 })
                    .collect(),
                min_ns: vec![1000; n],
                avg_ns: vec![2000; n],
                max_ns: maxima.to_vec(),
                p99_ns: maxima.iter().map(|m| m / 2).collect(),
                missed: vec![0; n],
                compacted: false,
            };
        }
        run
    }

    #[test]
    fn histogram_classes_are_one_microsecond_and_isolated_points_stand_alone() {
        let run = synthetic(&[vec![4_200, 4_900, 5_100, 5_300, 12_300, 7_000_000]]);
        let f = hist_run(&run, "t").unwrap();
        assert_eq!(f.series.len(), 1);
        let s = &f.series[0];
        // Classes 4 and 5 are adjacent (one segment), 12 and 7000 alone.
        assert_eq!(
            s.segments,
            vec![
                vec![(4.5, 2.0), (5.5, 2.0)],
                vec![(12.5, 1.0)],
                vec![(7000.5, 1.0)]
            ]
        );
        let total: f64 = s.points().map(|p| p.1).sum();
        assert_eq!(total, 6.0, "every sample is in a class");
        // Above 512 µs buckets are wider than 1 µs: classes 2 or 4 µs apart
        // whose buckets touch are one curve, not dots.
        let wide = synthetic(&[vec![2_000_000, 2_001_000, 2_003_000, 2_100_000]]);
        let g = hist_run(&wide, "t").unwrap();
        let lens: Vec<usize> = g.series[0].segments.iter().map(|s| s.len()).collect();
        assert_eq!(lens, [3, 1], "{:?}", g.series[0].segments);
        assert_eq!((f.x.min, f.x.max), (1.0, 10_000.0));
        assert_eq!(f.x.scale, Scale::Log);
        assert!(f.y.title.contains("1 µs"));
        assert!(f.x.title.contains("latency"));
    }

    #[test]
    fn classes_take_the_bucket_value_as_the_histfile_does() {
        // 9000 ns falls in the 16 ns bucket [8992, 9008): its value is
        // 9000, so the 9 µs class, as in the exported histfile.
        let mut h = Histogram::new(crate::histogram::LATENCY_SUB_BITS);
        h.record(9_000);
        let c: Vec<u64> = classes(&h, 1000).into_keys().collect();
        assert_eq!(c, vec![9]);
    }

    #[test]
    fn classes_widen_to_stay_bounded() {
        // Three threads spread over 20 ms: more distinct 1 µs classes than
        // the budget, so classes must widen.
        let vals: Vec<u64> = (0..20_000u64).map(|i| 1_000 + i * 1_000).collect();
        let run = synthetic(&[vals.clone(), vals.clone(), vals]);
        let narrow: usize = run
            .threads
            .iter()
            .map(|t| classes(&t.histogram.to_histogram().unwrap(), 1000).len())
            .sum();
        assert!(narrow > MAX_CLASSES, "{narrow}");
        let f = hist_run(&run, "t").unwrap();
        let n: usize = f.series.iter().map(|s| s.points().count()).sum();
        assert!(n <= MAX_CLASSES, "{n}");
        assert!(!f.y.title.contains("per 1 µs class"), "{}", f.y.title);
        let total: f64 = f.series[0].points().map(|p| p.1).sum();
        assert_eq!(total, 20_000.0, "no sample is lost");
    }

    #[test]
    fn exceedance_falls_from_one_to_one_over_n_and_ends_at_the_max() {
        let vals: Vec<u64> = (1..=1000u64).map(|i| i * 1_000).collect();
        let run = synthetic(&[vals]);
        let f = exceedance_run(&run, "t").unwrap();
        let s = &f.series[0];
        let pts = &s.segments[0];
        assert_eq!(pts[0], (1.0, 1.0));
        // Non-increasing in y, non-decreasing in x.
        for w in pts.windows(2) {
            assert!(w[1].1 <= w[0].1 && w[1].0 >= w[0].0, "{w:?}");
        }
        // Just below the max, one sample in 1000 remains.
        assert_eq!(s.markers, vec![(1000.0, 0.001)]);
        assert_eq!(*pts.last().unwrap(), (1000.0, f.y.min));
        assert_eq!(f.y.min, 0.001);
        // Every step lands on the exact share of samples above it.
        let vals: Vec<f64> = (1..=1000u64).map(|i| i as f64).collect();
        let mut drops = 0;
        for w in pts[..pts.len() - 1].windows(2) {
            if w[0].0 == w[1].0 && w[1].1 < w[0].1 {
                let above = vals.iter().filter(|v| **v > w[1].0).count();
                assert_eq!(w[1].1, above as f64 / 1000.0, "{w:?}");
                drops += 1;
            }
        }
        assert!(drops > 200, "{drops}");
    }

    /// Two imports that once panicked here ("min > max"): an rtla osnoise
    /// histogram whose min (37 µs) is above its last bucket, without a max
    /// line; an oslat JSON whose min (6165 µs) is above every bucket of a
    /// histogram starting at 1 µs, without a max.
    #[test]
    fn exceedance_takes_extremes_that_contradict_the_histogram() {
        for (vals, min_ns) in [
            (vec![5_000, 15_000, 25_000, 35_000], 37_000),
            (vec![500, 1_500, 31_500], 6_165_000),
        ] {
            let mut run = synthetic(&[vals.clone(), vals]);
            for t in &mut run.threads {
                t.stats.min_ns = Some(min_ns);
                t.stats.max_ns = None;
            }
            run.overall.min_ns = Some(min_ns);
            run.overall.max_ns = None;
            let f = exceedance_run(&run, "t").unwrap();
            assert_eq!(f.series.len(), 3);
            for s in &f.series {
                let pts = &s.segments[0];
                let (first, last) = (pts[0].0, pts[pts.len() - 1].0);
                assert!(first <= last && first < min_ns as f64 / 1e3, "{pts:?}");
                assert!(
                    pts.iter()
                        .all(|p| p.0.is_finite() && p.0 >= first && p.0 <= last)
                );
            }
            assert!(f.x.min <= f.x.max, "{:?}", f.x);
            let named = NamedHistogram {
                name: "m".into(),
                color: 0,
                hist: run.overall_histogram().unwrap(),
                min_ns: Some(min_ns),
                max_ns: None,
            };
            assert_eq!(exceedance_merged(&[named], "t").series.len(), 1);
            assert!(hist_run(&run, "t").is_ok());
        }
    }

    #[test]
    fn exceedance_of_several_threads_adds_a_summary() {
        let run = synthetic(&[vec![1000, 2000], vec![3000, 400_000]]);
        let f = exceedance_run(&run, "t").unwrap();
        assert_eq!(f.series.len(), 3);
        assert_eq!(f.series[2].name, "all CPUs");
        assert_eq!(f.series[2].stroke, Stroke::Bold);
        assert_eq!(f.series[2].markers, vec![(400.0, 0.25)]);
        assert_eq!(f.y.min, 0.1);
    }

    #[test]
    fn timeline_breaks_at_empty_windows_and_shades_load() {
        let mut run = with_windows(synthetic(&[vec![1000]]), &[10_000, 0, 30_000, 40_000]);
        run.load = Some(LoadRecord {
            profile: "hell".into(),
            phases: vec![
                LoadPhase {
                    part: "cpu".into(),
                    start_offset_ns: 1_000_000_000,
                    end_offset_ns: 2_500_000_000,
                },
                LoadPhase {
                    part: "io".into(),
                    start_offset_ns: 2_000_000_000,
                    end_offset_ns: 3_000_000_000,
                },
                LoadPhase {
                    part: "cpu".into(),
                    start_offset_ns: 3_000_000_000,
                    end_offset_ns: 3_500_000_000,
                },
            ],
            ..Default::default()
        });
        let f = timeline_run(&run, "t").unwrap();
        assert_eq!(f.series.len(), 2);
        assert_eq!(f.series[0].name, "CPU 0 max");
        assert_eq!(
            f.series[0].segments,
            vec![vec![(0.5, 10.0)], vec![(2.5, 30.0), (3.5, 40.0)]]
        );
        assert_eq!(f.series[1].stroke, Stroke::Dashed);
        assert_eq!(f.series[1].segments[1], vec![(2.5, 15.0), (3.5, 20.0)]);
        assert_eq!(f.bands.len(), 3);
        assert_eq!(f.bands[0].color, f.bands[2].color);
        assert_ne!(f.bands[0].color, f.bands[1].color);
        assert_eq!((f.bands[1].x0, f.bands[1].x1), (2.0, 3.0));
        assert!(f.x.title.contains("(s)"));
        // synthetic() has no windows at all.
        assert!(timeline_run(&synthetic(&[vec![1]]), "t").is_none());
    }

    #[test]
    fn every_load_part_has_its_own_colour_and_legend_entry() {
        // The seven parts of the built-in "hell" profile, some in bursts.
        let parts = [
            "cpu",
            "memory",
            "io",
            "fs",
            "net",
            "hackbench",
            "sched",
            "irq",
        ];
        let mut run = with_windows(synthetic(&[vec![1000]]), &[10_000; 40]);
        let mut phases = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            let s = i as u64 * 2_000_000_000;
            for k in 0..2 {
                phases.push(LoadPhase {
                    part: p.to_string(),
                    start_offset_ns: s + k * 20_000_000_000,
                    end_offset_ns: s + k * 20_000_000_000 + 15_000_000_000,
                });
            }
        }
        run.load = Some(LoadRecord {
            profile: "hell".into(),
            phases,
            ..Default::default()
        });
        let f = timeline_run(&run, "t").unwrap();
        assert_eq!(f.bands.len(), 2 * parts.len());
        let colours: std::collections::BTreeSet<usize> = f.bands.iter().map(|b| b.color).collect();
        assert_eq!(colours.len(), parts.len(), "one colour per part");
        let rgbs: std::collections::BTreeSet<_> = colours
            .iter()
            .map(|c| super::super::band_color(*c))
            .collect();
        assert_eq!(rgbs.len(), parts.len(), "distinct colours");
        let svg = super::super::svg::render(&f, super::super::Size::REPORT)
            .unwrap()
            .to_ascii_uppercase();
        for (i, p) in parts.iter().enumerate() {
            assert_eq!(f.bands[2 * i].name, format!("load: {p}"));
            let label = format!("\nLOAD: {}\n", p.to_ascii_uppercase());
            assert_eq!(svg.matches(&label).count(), 1, "legend entry for {p}");
            let (r, g, b) = super::super::band_color(f.bands[2 * i].color);
            let hex = format!("FILL=\"#{r:02X}{g:02X}{b:02X}\"");
            // Two strips and one legend swatch, nothing else of that
            // colour (black, the last, is also the text's).
            let n = svg.matches(&hex).count();
            assert!(
                n == 3 || (n > 3 && (r, g, b) == (0, 0, 0)),
                "{p}: {hex} {n}"
            );
        }
        // Strips are opaque and thin, never a translucent fill over the curves.
        assert!(!svg.contains("FILL-OPACITY=\"0.16\""));
    }

    #[test]
    fn long_timelines_are_merged_keeping_maxima() {
        let mut maxima = vec![5_000u64; 8000];
        maxima[4321] = 9_000_000;
        let run = with_windows(synthetic(&[vec![1000]]), &maxima);
        let f = timeline_run(&run, "t").unwrap();
        let pts: Vec<_> = f.series[0].points().collect();
        assert!(pts.len() <= MAX_WINDOWS, "{}", pts.len());
        let top = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        assert_eq!(top, 9000.0, "the peak survives merging");
    }

    #[test]
    fn many_threads_are_summarised_and_runs_overlay() {
        // Thread i's max is 50 µs − i ns: threads 0..8 are the worst.
        let vals: Vec<Vec<u64>> = (0..12).map(|i| vec![1000 + i, 50_000 - i]).collect();
        let mut run = with_windows(synthetic(&vals), &[1000, 2000]);
        // Thread 10's windows reach 80 µs and 3 µs: the range shows them.
        run.threads[10].windows.max_ns = vec![3000, 80_000];
        let names = |f: &Figure| f.series.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        let worst: Vec<String> = (0..8).map(|i| format!("CPU {i}")).collect();
        let f = timeline_run(&run, "t").unwrap();
        let want: Vec<String> = worst.iter().map(|n| format!("{n} max")).collect();
        assert_eq!(names(&f), want);
        assert_eq!(f.areas.len(), 1);
        assert_eq!(f.areas[0].name, "the other 4 threads max");
        assert_eq!(
            f.areas[0].segments,
            vec![vec![(0.5, 1.0, 3.0), (1.5, 2.0, 80.0)]]
        );
        assert!(f.y.max >= 80.0, "the axis holds the range");
        let h = hist_run(&run, "t").unwrap();
        let mut want = vec!["all 12 CPUs".to_string()];
        want.extend(worst.iter().cloned());
        assert_eq!(names(&h), want);
        assert_eq!(h.areas[0].name, "the other 4 threads");
        // Classes 1 µs (each of the others has one sample there) and 50
        // µs (49.99 µs falls in a bucket whose value is 50.0 µs).
        let seg: Vec<(f64, f64, f64)> = h.areas[0].segments.iter().flatten().copied().collect();
        assert_eq!(seg, vec![(1.5, 1.0, 1.0), (50.5, 1.0, 1.0)]);
        assert!(h.y.title.contains("1 µs"), "classes stay fine");
        let e = exceedance_run(&run, "t").unwrap();
        let mut want = worst.clone();
        want.push("all CPUs".into());
        assert_eq!(names(&e), want);
        let band = &e.areas[0];
        assert_eq!(band.name, "the other 4 threads");
        // Between 1 µs and 49.99 µs each of the others has half its samples above.
        let mid: Vec<_> = band
            .segments
            .iter()
            .flatten()
            .filter(|(x, _, _)| *x > 2.0 && *x < 40.0)
            .collect();
        assert!(!mid.is_empty());
        assert!(
            mid.iter().all(|(_, lo, hi)| *lo == 0.5 && *hi == 0.5),
            "{mid:?}"
        );
        // Drawn: the range is in the SVG and the legend.
        let svg = super::super::svg::render(&h, super::super::Size::REPORT).unwrap();
        assert!(svg.contains("the other 4 threads"));
        let a = synthetic(&[vec![1000, 2000]]);
        let b = with_windows(synthetic(&[vec![5000]]), &[5000]);
        let runs = [("a", &a), ("b", &b)];
        assert_eq!(hist_runs(&runs, "t").unwrap().series.len(), 2);
        assert_eq!(exceedance_runs(&runs, "t").unwrap().series.len(), 2);
        let t = timeline_runs(&runs, "t").unwrap();
        assert_eq!(t.series.len(), 1, "a has no windows");
        assert_eq!(t.series[0].name, "b max");
        assert_eq!(t.series[0].color, 1, "colours follow the run order");
    }
}
