//! The HTML report of one or more characterizations: one self-contained
//! page (the report's stylesheet inline, no script, no network). With
//! several, first the side-by-side table (seed 001's configurations as
//! columns), then per characterization its head, its tables (numbers with
//! thousands separators), the OS-noise figures with their likely causes
//! and two plots (the gap histogram, the largest gaps over time), the PI
//! verdict and the self-checks. Pure: records in, HTML out.

use super::{Characterization, compare, text};
use crate::histogram::Histogram;
use crate::report::plot::data::{NamedHistogram, hist_merged, log_axis};
use crate::report::plot::{Axis, Figure, Scale, Series, Size, Stroke, TimeUnit, Unit, svg};
use std::fmt::Write;

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
    };
    Some((hist, over_time))
}

const STYLE: &str = include_str!("../../assets/templates/report.css");

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Rows (header first) as an HTML table; columns after the first are
/// numbers.
fn table(rows: &[Vec<String>], caption: &str) -> String {
    let mut s = String::from("<table>");
    if !caption.is_empty() {
        let _ = write!(s, "<caption>{}</caption>", esc(caption));
    }
    for (i, r) in rows.iter().enumerate() {
        s.push_str("<tr>");
        for (j, c) in r.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            let class = if j > 0 { " class=\"num\"" } else { "" };
            let _ = write!(s, "<{tag}{class}>{}</{tag}>", esc(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n");
    s
}

fn one(c: &Characterization, name: &str) -> String {
    let mut s = String::from("<section>");
    let _ = write!(s, "<h2>{}</h2>", esc(&format!("{name}: {}", c.name())));
    for line in text::head(c).lines() {
        let _ = write!(s, "<p class=\"sub\">{}</p>", esc(line));
    }
    for g in text::groups(c) {
        let _ = write!(s, "<h3>{}</h3>", esc(g.title()));
        s.push_str(&table(&text::group_rows(c, g, " ns"), ""));
        if g == super::Group::Noise {
            s.push_str("<ul>");
            for l in text::noise_lines(c).lines() {
                let _ = write!(s, "<li>{}</li>", esc(l));
            }
            s.push_str("</ul>");
            if let Some((hist, over_time)) = noise_figures(c) {
                let size = Size {
                    width: 960,
                    height: 380,
                };
                for (k, f) in [hist, over_time].iter().enumerate() {
                    match svg::render_inline(f, size, &format!("{}-noise-{k}", esc(name))) {
                        Ok(fig) => {
                            let _ = write!(s, "<figure>{fig}</figure>");
                        }
                        Err(e) => {
                            let _ = write!(s, "<p>figure not drawn: {}</p>", esc(&e));
                        }
                    }
                }
            }
            let x = text::explanations(c);
            if !x.is_empty() {
                let _ = write!(s, "<pre>{}</pre>", esc(x.trim()));
            }
        }
        if g == super::Group::Inversion
            && let Some(v) = &c.pi_verdict
        {
            let _ = write!(s, "<p><strong>{}</strong></p>", esc(&v.text));
        }
    }
    if !c.checks.is_empty() {
        s.push_str("<h3>Self-checks</h3><ul>");
        for k in &c.checks {
            let _ = write!(
                s,
                "<li>{}: {} ({})</li>",
                if k.held { "held" } else { "FAILED" },
                esc(&k.fact),
                esc(&k.bench)
            );
        }
        s.push_str("</ul>");
    }
    s.push_str("<h3>What each row times</h3><ul>");
    let mut seen: Vec<&str> = Vec::new();
    for r in &c.results {
        if !seen.contains(&r.bench.as_str()) {
            seen.push(&r.bench);
            let help = super::find(&r.bench).map(|b| b.measures).unwrap_or("");
            let _ = write!(s, "<li><code>{}</code>: {}</li>", esc(&r.bench), esc(help));
        }
    }
    s.push_str("</ul></section>\n");
    s
}

/// The page; `names[i]` names `cs[i]` (as given on the command line).
pub fn render(cs: &[&Characterization], names: &[String], title: Option<&str>) -> String {
    let title = title.map(str::to_string).unwrap_or_else(|| {
        let n: Vec<String> = cs.iter().map(|c| c.name()).collect();
        format!("Platform characterization: {}", n.join(" vs "))
    });
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}\ntd.num, th.num {{ text-align: right; }}</style></head><body><header class=\"page\"><h1>{}</h1><p class=\"sub\">rtscope characterize: values in nanoseconds (ns); the clock's read cost is subtracted from timed calls.</p></header><main>\n",
        esc(&title),
        esc(&title)
    );
    if cs.len() > 1 {
        s.push_str("<section><h2>Side by side</h2>");
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
        let _ = write!(s, "<p class=\"sub\">{}</p>", esc(&labels.join("; ")));
        for d in compare::differences(cs) {
            let _ = write!(s, "<p class=\"sub\">note: {}</p>", esc(&d));
        }
        s.push_str(&table(&compare::table_rows(cs), ""));
        s.push_str("</section>\n");
    }
    for (i, c) in cs.iter().enumerate() {
        s.push_str(&one(c, names.get(i).map(String::as_str).unwrap_or("?")));
    }
    s.push_str("</main></body></html>\n");
    s
}
