//! The HTML report of one or more characterizations: one self-contained
//! page (the report's stylesheet inline, no script, no network). With
//! several, first the side-by-side table (seed 001's configurations as
//! columns), then per characterization its head, its tables (numbers with
//! thousands separators), the OS-noise figures with their likely causes
//! and two plots (the gap histogram, the largest gaps over time), the PI
//! verdict and the self-checks. Pure: records in, HTML out.
//!
//! This file builds the page's view; the template
//! assets/templates/characterization.html lays it out (`report::page`).

use super::{Characterization, Group, compare, text};
use crate::histogram::Histogram;
use crate::report::page::{self, Page, PageError, Pair, pair};
use crate::report::plot::data::{NamedHistogram, hist_merged, log_axis};
use crate::report::plot::{Axis, Figure, Scale, Series, Size, Stroke, TimeUnit, Unit, svg};
use crate::text::escape;
use serde::Serialize;

/// The OS-noise figures: the histogram of all gaps, and the largest gaps
/// over time, one colour per CPU. `None` without OS-noise rows.
pub fn noise_figures(c: &Characterization) -> Option<(Figure, Figure)> {
    let rows: Vec<_> = c.results.iter().filter(|r| r.noise.is_some()).collect();
    if rows.is_empty() {
        return None;
    }
    let mut curves = Vec::new();
    let mut series = Vec::new();
    let (mut lo, mut hi, mut tmax) = (f64::MAX, 0f64, 0f64);
    for (i, r) in rows.iter().enumerate() {
        let pairs: Vec<(u64, u64)> = r.histogram.buckets.iter().map(|b| (b[0], b[1])).collect();
        if let Ok(hist) = Histogram::from_sparse(r.histogram.sub_bucket_bits, &pairs) {
            curves.push(NamedHistogram {
                name: format!("CPU {}", r.cpu),
                color: i,
                hist,
                min_ns: Some(r.stats.min_ns),
                max_ns: Some(r.stats.max_ns),
            });
        }
        let n = r.noise.as_ref().expect("filtered");
        let pts: Vec<(f64, f64)> = n
            .largest_gaps
            .iter()
            .map(|g| (g.at_ns as f64 / 1e9, g.gap_ns.max(1) as f64 / 1e3))
            .collect();
        for p in &pts {
            lo = lo.min(p.1);
            hi = hi.max(p.1);
        }
        tmax = tmax.max(n.duration_ns as f64 / 1e9);
        series.push(Series {
            name: format!("CPU {}", r.cpu),
            color: i,
            stroke: Stroke::Solid,
            segments: Vec::new(),
            markers: pts,
        });
    }
    let mut hist = hist_merged(&curves, "OS noise: gaps between two clock reads");
    hist.x.title = "gap between two clock reads (log scale)".into();
    hist.y.title = hist.y.title.replace("samples", "gaps");
    let over_time = Figure {
        title: "OS noise: the largest gaps over time".into(),
        x: Axis {
            title: "time since the start of the loop (s)".into(),
            scale: Scale::Linear,
            unit: Unit::Time(TimeUnit::Seconds),
            min: 0.0,
            max: if tmax > 0.0 { tmax } else { 1.0 },
        },
        // No gap at all: one decade from 1 µs.
        y: if hi > 0.0 {
            log_axis("gap (log scale)", Unit::LatencyUs, lo, hi)
        } else {
            log_axis("gap (log scale)", Unit::LatencyUs, 1.0, 1.0)
        },
        series,
        bands: Vec::new(),
        areas: Vec::new(),
    };
    Some((hist, over_time))
}

/// The page: the side-by-side table with several characterizations,
/// then one section each.
#[derive(Serialize, Debug)]
struct PageView {
    title: String,
    side_by_side: Option<SideBySide>,
    sections: Vec<Section>,
}

#[derive(Serialize, Debug)]
struct SideBySide {
    /// Which letter stands for which characterization.
    labels: String,
    notes: Vec<String>,
    /// Header row first; columns after the first are numbers.
    rows: Vec<Vec<String>>,
}

/// One characterization: its head, a table per group, the self-checks
/// and what each benchmark times.
#[derive(Serialize, Debug)]
struct Section {
    heading: String,
    head: Vec<String>,
    groups: Vec<GroupView>,
    checks: Vec<String>,
    benches: Vec<Pair>,
}

#[derive(Serialize, Debug)]
struct GroupView {
    title: String,
    rows: Vec<Vec<String>>,
    noise: Option<NoiseView>,
    pi_verdict: Option<String>,
}

/// The OS-noise group's likely causes, figures and explanations.
#[derive(Serialize, Debug)]
struct NoiseView {
    lines: Vec<String>,
    figures: Vec<FigureView>,
    explanations: Option<String>,
}

/// An inline SVG figure, or why it was not drawn.
#[derive(Serialize, Debug)]
struct FigureView {
    svg: Option<String>,
    error: Option<String>,
}

fn noise_view(c: &Characterization, name: &str) -> NoiseView {
    let mut figures = Vec::new();
    if let Some((hist, over_time)) = noise_figures(c) {
        let size = Size {
            width: 960,
            height: 380,
        };
        for (k, f) in [hist, over_time].iter().enumerate() {
            let id = format!("{}-noise-{k}", escape::markup(name));
            figures.push(match svg::render_inline(f, size, &id) {
                Ok(svg) => FigureView {
                    svg: Some(svg),
                    error: None,
                },
                Err(e) => FigureView {
                    svg: None,
                    error: Some(e.to_string()),
                },
            });
        }
    }
    let x = text::explanations(c);
    NoiseView {
        lines: text::noise_lines(c).lines().map(str::to_string).collect(),
        figures,
        explanations: (!x.is_empty()).then(|| x.trim().to_string()),
    }
}

fn group_view(c: &Characterization, g: Group, name: &str) -> GroupView {
    GroupView {
        title: g.title().into(),
        rows: text::group_rows(c, g, " ns"),
        noise: (g == Group::Noise).then(|| noise_view(c, name)),
        pi_verdict: c
            .pi_verdict
            .as_ref()
            .filter(|_| g == Group::Inversion)
            .map(|v| v.text.clone()),
    }
}

/// Each benchmark of the results once, with what it times.
fn benches(c: &Characterization) -> Vec<Pair> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for r in &c.results {
        if !seen.contains(&r.bench.as_str()) {
            seen.push(&r.bench);
            let help = super::find(&r.bench).map(|b| b.measures).unwrap_or("");
            out.push(pair(&r.bench, help));
        }
    }
    out
}

fn section(c: &Characterization, name: &str) -> Section {
    Section {
        heading: format!("{name}: {}", c.name()),
        head: text::head(c).lines().map(str::to_string).collect(),
        groups: text::groups(c)
            .into_iter()
            .map(|g| group_view(c, g, name))
            .collect(),
        checks: c
            .checks
            .iter()
            .map(|k| {
                let held = if k.held { "held" } else { "FAILED" };
                format!("{held}: {} ({})", k.fact, k.bench)
            })
            .collect(),
        benches: benches(c),
    }
}

fn side_by_side(cs: &[&Characterization], names: &[String]) -> SideBySide {
    let labels: Vec<String> = cs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "{} = {} ({})",
                (b'A' + (i as u8 % 26)) as char,
                names.get(i).map(String::as_str).unwrap_or("?"),
                c.name()
            )
        })
        .collect();
    SideBySide {
        labels: labels.join("; "),
        notes: compare::differences(cs),
        rows: compare::table_rows(cs),
    }
}

/// The page; `names[i]` names `cs[i]` (as given on the command line).
pub fn render(
    cs: &[&Characterization],
    names: &[String],
    title: Option<&str>,
) -> Result<String, PageError> {
    let title = title.map(str::to_string).unwrap_or_else(|| {
        let n: Vec<String> = cs.iter().map(|c| c.name()).collect();
        format!("Platform characterization: {}", n.join(" vs "))
    });
    let view = PageView {
        title,
        side_by_side: (cs.len() > 1).then(|| side_by_side(cs, names)),
        sections: cs
            .iter()
            .enumerate()
            .map(|(i, c)| section(c, names.get(i).map(String::as_str).unwrap_or("?")))
            .collect(),
    };
    page::render(Page::Characterization, &view)
}
