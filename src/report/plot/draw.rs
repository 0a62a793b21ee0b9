//! Drawing a [`Figure`] with plotters, on any backend (SVG text or an RGB
//! bitmap): axes with units on every tick, decades on log axes, load
//! phases as thin strips above the chart (one lane per part, never over
//! the curves), isolated observations as dots, and a legend below the
//! chart so it never hides data.
//!
//! Log axes are drawn on log10 of the values with a linear coordinate, so
//! both scales share one chart type and tick labels say what they mean.

use super::{
    Axis, DateLabel, Figure, PlotError, Scale, Stroke, TimeUnit, Unit, band_color, font, rgb,
};
use crate::text::num;
use crate::units::{civil_from_days, trim_float};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use std::ops::Range;

fn band_rgb(i: usize) -> RGBColor {
    let (r, g, b) = band_color(i);
    RGBColor(r, g, b)
}

/// Height of one load lane and the space under it, in pixels.
const LANE: i32 = 8;
const LANE_GAP: i32 = 2;
/// Height of the title line above the lanes.
const CAPTION: i32 = 28;

fn series_rgb(i: usize) -> RGBColor {
    let (r, g, b) = rgb(i);
    RGBColor(r, g, b)
}

/// Position of `v` on the drawn axis (log10 for log axes).
fn to_axis(axis: &Axis, v: f64) -> Option<f64> {
    match axis.scale {
        Scale::Linear => v.is_finite().then_some(v),
        Scale::Log => (v > 0.0 && v.is_finite()).then(|| v.log10()),
    }
}

/// Round to 3 significant digits (undo log10 round-off).
fn sig3(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let mag = 10f64.powf(v.abs().log10().floor() - 2.0);
    (v / mag).round() * mag
}

/// The label of a tick at value `v` (in the axis' unit), unit included.
pub fn tick_label(unit: Unit, v: f64) -> String {
    match unit {
        Unit::LatencyUs => {
            let v = sig3(v);
            if v < 1.0 {
                format!("{} ns", trim_float(v * 1e3, ""))
            } else if v < 1e3 {
                format!("{} µs", trim_float(v, ""))
            } else if v < 1e6 {
                format!("{} ms", trim_float(v / 1e3, ""))
            } else {
                format!("{} s", trim_float(v / 1e6, ""))
            }
        }
        Unit::Count => num::short_count(sig3(v)),
        Unit::Probability => {
            let v = sig3(v);
            if v >= 0.001 {
                trim_float(v, "")
            } else {
                let e = v.log10().floor() as i32;
                let m = (v / 10f64.powi(e)).round();
                if m <= 1.0 {
                    num::power_of_ten(e)
                } else {
                    format!("{m}·{}", num::power_of_ten(e))
                }
            }
        }
        Unit::Time(u) => format!("{} {}", trim_float(sig3(v), ""), u.symbol()),
        Unit::Utc(style) => {
            let secs = v.round() as i64;
            let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
            let t = secs.rem_euclid(86_400);
            let (h, mi) = (t / 3600, (t / 60) % 60);
            match style {
                DateLabel::Time => format!("{h:02}:{mi:02}"),
                DateLabel::DateTime => format!("{mo:02}-{d:02} {h:02}:{mi:02}"),
                DateLabel::Date => format!("{y:04}-{mo:02}-{d:02}"),
            }
        }
    }
}

/// The labels along an axis, first to last (for tests and checks).
pub fn axis_labels(axis: &Axis) -> Vec<String> {
    key_points(axis)
        .0
        .iter()
        .map(|p| label_at(axis, *p))
        .collect()
}

/// Key points of an axis on the drawn scale: (labelled, grid only).
fn key_points(axis: &Axis) -> (Vec<f64>, Vec<f64>) {
    match axis.scale {
        Scale::Log => {
            let lo = axis.min.log10();
            let hi = axis.max.log10();
            let few_decades = hi - lo <= 2.01;
            let mut bold = Vec::new();
            let mut light = Vec::new();
            let mut k = lo.floor() as i32;
            while (k as f64) <= hi + 1e-9 {
                for m in 1..10 {
                    let p = (m as f64).log10() + k as f64;
                    if p < lo - 1e-9 || p > hi + 1e-9 {
                        continue;
                    }
                    if m == 1 || (few_decades && (m == 2 || m == 5)) {
                        bold.push(p);
                    }
                    light.push(p);
                }
                k += 1;
            }
            (bold, light)
        }
        Scale::Linear => {
            let span = axis.max - axis.min;
            let step = nice_step(axis.unit, span);
            let mut bold = Vec::new();
            let mut light = Vec::new();
            let mut i = (axis.min / step).ceil() as i64;
            while (i as f64) * step <= axis.max + step * 1e-9 {
                bold.push(i as f64 * step);
                i += 1;
            }
            let half = step / 2.0;
            let mut j = (axis.min / half).ceil() as i64;
            while (j as f64) * half <= axis.max + half * 1e-9 {
                light.push(j as f64 * half);
                j += 1;
            }
            (bold, light)
        }
    }
}

/// A step giving 4–10 ticks over `span`; time axes prefer 15/30 minutes,
/// 6/12 hours.
fn nice_step(unit: Unit, span: f64) -> f64 {
    let span = if span > 0.0 { span } else { 1.0 };
    const MIN: f64 = 60.0;
    const HOUR: f64 = 3600.0;
    const DAY: f64 = 86_400.0;
    let candidates: &[f64] = match unit {
        Unit::Time(TimeUnit::Minutes) => &[1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0],
        Unit::Time(TimeUnit::Hours) => &[1.0, 2.0, 3.0, 6.0, 12.0, 24.0],
        // Wall-clock steps divide a day (or are whole days), so ticks
        // fall on round times in UTC.
        Unit::Utc(DateLabel::Time) => &[
            MIN,
            5.0 * MIN,
            10.0 * MIN,
            15.0 * MIN,
            30.0 * MIN,
            HOUR,
            2.0 * HOUR,
            3.0 * HOUR,
        ],
        Unit::Utc(DateLabel::DateTime) => &[3.0 * HOUR, 6.0 * HOUR, 12.0 * HOUR, DAY],
        Unit::Utc(DateLabel::Date) => &[
            DAY,
            2.0 * DAY,
            7.0 * DAY,
            14.0 * DAY,
            28.0 * DAY,
            56.0 * DAY,
            91.0 * DAY,
            182.0 * DAY,
            364.0 * DAY,
        ],
        _ => &[],
    };
    let most = if matches!(unit, Unit::Utc(_)) {
        7.0
    } else {
        10.0
    };
    for c in candidates {
        if span / c <= most {
            return *c;
        }
    }
    if let Some(last) = candidates.last().filter(|_| matches!(unit, Unit::Utc(_))) {
        return last * (span / last / most).ceil();
    }
    let raw = span / 8.0;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

fn axis_range(axis: &Axis) -> (f64, f64) {
    match axis.scale {
        Scale::Linear => (axis.min, axis.max),
        Scale::Log => (axis.min.log10(), axis.max.log10()),
    }
}

/// A linear coordinate on the drawn scale whose ticks are exactly the
/// key points chosen here (decades on log axes, nice steps on linear).
struct Keyed {
    lo: f64,
    hi: f64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Ranged for Keyed {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let pixels = (limit.1 - limit.0) as f64;
        if span <= 0.0 || pixels == 0.0 {
            return limit.1;
        }
        limit.0 + (pixels * (v - self.lo) / span + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

fn keyed(axis: &Axis) -> Keyed {
    let (lo, hi) = axis_range(axis);
    let (bold, light) = key_points(axis);
    Keyed {
        lo,
        hi,
        bold,
        light,
    }
}

/// Label of a drawn-scale position.
fn label_at(axis: &Axis, p: f64) -> String {
    let v = match axis.scale {
        Scale::Linear => p,
        Scale::Log => 10f64.powf(p),
    };
    tick_label(axis.unit, v)
}

struct LegendEntry {
    text: String,
    color: RGBColor,
    kind: LegendKind,
}

#[derive(Clone, Copy, PartialEq)]
enum LegendKind {
    Line(Stroke),
    Band,
    Area,
}

fn legend_entries(fig: &Figure) -> Vec<LegendEntry> {
    let mut out: Vec<LegendEntry> = Vec::new();
    for a in &fig.areas {
        out.push(LegendEntry {
            text: a.name.clone(),
            color: series_rgb(a.color),
            kind: LegendKind::Area,
        });
    }
    for s in &fig.series {
        out.push(LegendEntry {
            text: s.name.clone(),
            color: series_rgb(s.color),
            kind: LegendKind::Line(s.stroke),
        });
    }
    for b in &fig.bands {
        if !out
            .iter()
            .any(|e| e.kind == LegendKind::Band && e.text == b.name)
        {
            out.push(LegendEntry {
                text: b.name.clone(),
                color: band_rgb(b.color),
                kind: LegendKind::Band,
            });
        }
    }
    out
}

const LEGEND_ROW: i32 = 20;
const SWATCH: i32 = 26;

/// Lay the legend out in rows; returns (x, y) of each entry and height.
fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    style: &TextStyle,
) -> (Vec<(i32, i32)>, i32) {
    let width = area.dim_in_pixel().0 as i32;
    let left = 70;
    let mut x = left;
    let mut y = 6;
    let mut pos = Vec::new();
    for e in entries {
        let w = area
            .estimate_text_size(&e.text, style)
            .map(|(w, _)| w as i32)
            .unwrap_or(8 * e.text.len() as i32);
        let need = SWATCH + 6 + w + 22;
        if x > left && x + need > width - 10 {
            x = left;
            y += LEGEND_ROW;
        }
        pos.push((x, y));
        x += need;
    }
    let height = if entries.is_empty() {
        0
    } else {
        y + LEGEND_ROW + 4
    };
    (pos, height)
}

type DrawResult = Result<(), PlotError>;

/// The load lanes, top first: (colour index, part name).
fn lanes(fig: &Figure) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for b in &fig.bands {
        if !out.iter().any(|(c, _)| *c == b.color) {
            let name = b.name.strip_prefix("load: ").unwrap_or(&b.name);
            out.push((b.color, name.to_string()));
        }
    }
    out.sort_by_key(|(c, _)| *c);
    out
}

/// The bands as strips in their lanes, right above the plot (whose
/// pixel columns are `px`, top row `top`), each lane named on its left.
fn draw_lanes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    lanes: &[(usize, String)],
    px: (i32, i32),
    top: i32,
) -> DrawResult {
    let (xlo, xhi) = axis_range(&fig.x);
    let span = xhi - xlo;
    let to_px = |v: f64| -> i32 {
        let f = if span > 0.0 { (v - xlo) / span } else { 0.0 };
        px.0 + ((px.1 - px.0) as f64 * f.clamp(0.0, 1.0)).round() as i32
    };
    let first = top - 4 - lanes.len() as i32 * (LANE + LANE_GAP);
    let label = TextStyle::from((font::FAMILY, 10).into_font())
        .color(&RGBColor(60, 60, 60))
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Right,
            plotters::style::text_anchor::VPos::Center,
        ));
    for (k, (color, name)) in lanes.iter().enumerate() {
        let y = first + k as i32 * (LANE + LANE_GAP);
        area.draw(&Rectangle::new(
            [(px.0, y), (px.1, y + LANE)],
            RGBColor(242, 242, 242).filled(),
        ))
        .map_err(err)?;
        area.draw(&Text::new(
            name.clone(),
            (px.0 - 4, y + LANE / 2),
            label.clone(),
        ))
        .map_err(err)?;
        for b in fig.bands.iter().filter(|b| b.color == *color) {
            let (Some(x0), Some(x1)) = (to_axis(&fig.x, b.x0), to_axis(&fig.x, b.x1)) else {
                continue;
            };
            let (x0, x1) = (to_px(x0), to_px(x1).max(to_px(x0) + 1));
            area.draw(&Rectangle::new(
                [(x0, y), (x1, y + LANE)],
                band_rgb(*color).filled(),
            ))
            .map_err(err)?;
        }
    }
    Ok(())
}

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}

/// The chart of a figure: both axes keyed (see [`Keyed`]).
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Keyed, Keyed>>;

/// Draw `fig` filling `root`: the title (above the load lanes if any),
/// the mesh, the lanes, the series, the legend below.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure) -> DrawResult {
    font::ensure()?;
    root.fill(&WHITE).map_err(err)?;
    let legend_style = TextStyle::from((font::FAMILY, 13).into_font()).color(&BLACK);
    let entries = legend_entries(fig);
    let (positions, legend_h) = legend_layout(root, &entries, &legend_style);
    let height = root.dim_in_pixel().1 as i32;
    let (chart_area, legend_area) = root.split_vertically(height - legend_h);
    let lanes = lanes(fig);
    let lanes_h = lanes.len() as i32 * (LANE + LANE_GAP);
    let mut builder = ChartBuilder::on(&chart_area);
    builder
        .margin_left(8)
        .margin_right(24)
        .margin_bottom(4)
        .x_label_area_size(46)
        .y_label_area_size(78);
    if lanes.is_empty() {
        builder
            .caption(&fig.title, (font::FAMILY, 17).into_font())
            .margin_top(6);
    } else {
        // Title, then the lanes, then the chart: plotters puts a caption
        // right above the plot, so the title is drawn here.
        builder.margin_top(CAPTION + lanes_h + 4);
        draw_title(&chart_area, fig)?;
    }
    let mut chart = builder
        .build_cartesian_2d(keyed(&fig.x), keyed(&fig.y))
        .map_err(err)?;
    draw_mesh(&mut chart, fig)?;
    if !lanes.is_empty() {
        let (px, py) = chart.plotting_area().get_pixel_range();
        draw_lanes(&chart_area, fig, &lanes, (px.start, px.end), py.start)?;
    }
    for a in &fig.areas {
        draw_area(&mut chart, fig, a)?;
    }
    // Summaries first and wide, so the curves they summarise stay
    // visible on top of them.
    let mut order: Vec<&super::Series> = fig.series.iter().collect();
    order.sort_by_key(|s| s.stroke != Stroke::Bold);
    let many = fig.series.len() > 4;
    for s in order {
        draw_series(&mut chart, fig, s, many)?;
    }
    for (e, at) in entries.iter().zip(positions) {
        draw_legend_entry(&legend_area, e, at, &legend_style)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// The figure's title, centred at the top of `area`.
fn draw_title<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, fig: &Figure) -> DrawResult {
    let width = area.dim_in_pixel().0 as i32;
    area.draw(&Text::new(
        fig.title.clone(),
        (width / 2, 6),
        TextStyle::from((font::FAMILY, 17).into_font()).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ),
        ),
    ))
    .map_err(err)
}

/// The grid, the axes and their labels with units.
fn draw_mesh<DB: DrawingBackend>(chart: &mut Chart<'_, DB>, fig: &Figure) -> DrawResult {
    let x_fmt = |p: &f64| label_at(&fig.x, *p);
    let y_fmt = |p: &f64| label_at(&fig.y, *p);
    chart
        .configure_mesh()
        .x_desc(&fig.x.title)
        .y_desc(&fig.y.title)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((font::FAMILY, 13))
        .axis_desc_style((font::FAMILY, 14))
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .axis_style(RGBColor(90, 90, 90))
        .draw()
        .map_err(err)
}

/// `points` on the chart's axes (a log axis drops what is not above 0).
fn on_axes(fig: &Figure, points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter_map(|(x, y)| Some((to_axis(&fig.x, *x)?, to_axis(&fig.y, *y)?)))
        .collect()
}

/// One shaded range: each run of points as a translucent polygon (the
/// upper curve forward, the lower back), with a thin outline.
fn draw_area<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    fig: &Figure,
    a: &super::Area,
) -> DrawResult {
    let color = series_rgb(a.color);
    for seg in &a.segments {
        let upper: Vec<(f64, f64)> = seg.iter().map(|(x, _, hi)| (*x, *hi)).collect();
        let lower: Vec<(f64, f64)> = seg.iter().rev().map(|(x, lo, _)| (*x, *lo)).collect();
        let mut ring = on_axes(fig, &upper);
        ring.extend(on_axes(fig, &lower));
        if ring.len() < 3 {
            continue;
        }
        chart
            .draw_series(std::iter::once(Polygon::new(
                ring.clone(),
                color.mix(0.22).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                ring,
                color.mix(0.45).stroke_width(1),
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// One series: its segments as lines (a lone point as a dot), then its
/// markers; thinner lines when there are `many` series.
fn draw_series<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    fig: &Figure,
    s: &super::Series,
    many: bool,
) -> DrawResult {
    let color = series_rgb(s.color);
    let width = match s.stroke {
        Stroke::Bold => 5,
        Stroke::Dashed => 1,
        Stroke::Solid if many => 1,
        Stroke::Solid => 2,
    };
    let style = if s.stroke == Stroke::Bold {
        color.mix(0.45).stroke_width(width)
    } else {
        color.stroke_width(width)
    };
    for seg in &s.segments {
        let pts = on_axes(fig, seg);
        match pts.len() {
            0 => {}
            1 => {
                chart
                    .draw_series(std::iter::once(Circle::new(pts[0], 2, style.filled())))
                    .map_err(err)?;
            }
            _ => match s.stroke {
                Stroke::Dashed => {
                    chart
                        .draw_series(DashedLineSeries::new(pts, 5, 4, style))
                        .map_err(err)?;
                }
                _ => {
                    chart
                        .draw_series(LineSeries::new(pts, style))
                        .map_err(err)?;
                }
            },
        }
    }
    chart
        .draw_series(
            on_axes(fig, &s.markers)
                .into_iter()
                .map(|p| Circle::new(p, 4, color.filled())),
        )
        .map_err(err)?;
    Ok(())
}

/// One legend entry at `(x, y)`: its swatch (a band, a line, a dashed
/// line), then its text.
fn draw_legend_entry<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    e: &LegendEntry,
    (x, y): (i32, i32),
    style: &TextStyle,
) -> DrawResult {
    let mid = y + LEGEND_ROW / 2 - 2;
    match e.kind {
        LegendKind::Band => {
            area.draw(&Rectangle::new(
                [(x, mid - LANE / 2), (x + SWATCH, mid + LANE / 2)],
                e.color.filled(),
            ))
            .map_err(err)?;
        }
        LegendKind::Area => {
            area.draw(&Rectangle::new(
                [(x, mid - 6), (x + SWATCH, mid + 6)],
                e.color.mix(0.22).filled(),
            ))
            .map_err(err)?;
        }
        LegendKind::Line(Stroke::Dashed) => {
            for k in 0..3 {
                let x0 = x + k * 10;
                area.draw(&PathElement::new(
                    vec![(x0, mid), (x0 + 6, mid)],
                    e.color.stroke_width(2),
                ))
                .map_err(err)?;
            }
        }
        LegendKind::Line(stroke) => {
            let (w, alpha) = match stroke {
                Stroke::Bold => (5, 0.45),
                _ => (2, 1.0),
            };
            area.draw(&PathElement::new(
                vec![(x, mid), (x + SWATCH, mid)],
                e.color.mix(alpha).stroke_width(w),
            ))
            .map_err(err)?;
        }
    }
    area.draw(&Text::new(
        e.text.clone(),
        (x + SWATCH + 6, mid),
        style.pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        )),
    ))
    .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_carry_units() {
        assert_eq!(tick_label(Unit::LatencyUs, 0.1), "100 ns");
        assert_eq!(tick_label(Unit::LatencyUs, 10.0), "10 µs");
        assert_eq!(tick_label(Unit::LatencyUs, 10f64.powf(3.0)), "1 ms");
        assert_eq!(tick_label(Unit::LatencyUs, 2e6), "2 s");
        assert_eq!(tick_label(Unit::Count, 10f64.powf(4.0)), "10k");
        assert_eq!(tick_label(Unit::Probability, 10f64.powf(-6.0)), "10⁻⁶");
        assert_eq!(tick_label(Unit::Probability, 0.5), "0.5");
        assert_eq!(tick_label(Unit::Probability, 5e-5), "5·10⁻⁵");
        assert_eq!(tick_label(Unit::Time(TimeUnit::Minutes), 15.0), "15 min");
    }

    #[test]
    fn key_points_on_log_and_linear_axes() {
        let log = Axis {
            title: String::new(),
            scale: Scale::Log,
            unit: Unit::LatencyUs,
            min: 1.0,
            max: 1e4,
        };
        let (bold, light) = key_points(&log);
        assert_eq!(bold, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(light.len(), 4 * 9 + 1);
        let narrow = Axis {
            min: 1.0,
            max: 100.0,
            ..log.clone()
        };
        assert_eq!(key_points(&narrow).0.len(), 7, "1 2 5 10 20 50 100");
        let lin = Axis {
            title: String::new(),
            scale: Scale::Linear,
            unit: Unit::Time(TimeUnit::Seconds),
            min: 0.0,
            max: 20.0,
        };
        assert_eq!(key_points(&lin).0, vec![0.0, 5.0, 10.0, 15.0, 20.0]);
        let hours = Axis {
            unit: Unit::Time(TimeUnit::Hours),
            max: 48.0,
            ..lin
        };
        assert_eq!(nice_step(hours.unit, 48.0), 6.0);
    }
}
