//! Figures as data: what a plot shows (axes with units and scales,
//! series, load bands, legend), kept apart from how it is drawn.
//! `data` builds figures from run records, `draw` renders them with
//! plotters, `svg` and `png` are the two output formats.
//!
//! A figure never holds a time of generation or anything else that is
//! not in the runs: the same runs always give the same bytes.

pub mod data;
pub mod draw;
pub mod font;
pub mod png;
pub mod svg;

/// Why a figure could not be drawn or encoded.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// plotters refused the embedded font.
    #[error("the embedded font could not be read (a bug)")]
    Font,
    /// plotters failed while drawing (its error, as it describes it).
    #[error("drawing failed: {0}")]
    Draw(String),
    #[error("PNG encoding failed: {0}")]
    Png(::png::EncodingError),
    /// plotters' SVG did not start as the inline figure expects.
    #[error("unexpected SVG header from plotters (a bug)")]
    SvgHeader,
}

/// How values are placed along an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Decades; values ≤ 0 cannot be shown.
    Log,
}

/// What the numbers along an axis mean, which decides the tick labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A latency in microseconds (ticks: `10 µs`, `1 ms`).
    LatencyUs,
    /// A number of samples (ticks: `10`, `1k`, `1M`).
    Count,
    /// A probability (ticks: `1`, `10⁻³`).
    Probability,
    /// Time since the start of the run, in the given unit.
    Time(TimeUnit),
    /// Wall-clock time: values are seconds since the Unix epoch, ticks
    /// are dates and times in UTC.
    Utc(DateLabel),
}

/// How the ticks of a wall-clock axis are labelled, from its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateLabel {
    /// `14:30` (spans up to half a day; the axis title gives the day).
    Time,
    /// `11-25 06:00` (spans up to four days).
    DateTime,
    /// `2026-11-25` (longer spans; ticks at midnight UTC).
    Date,
}

impl DateLabel {
    pub fn for_span_s(span_s: f64) -> DateLabel {
        if span_s <= 12.0 * 3600.0 {
            DateLabel::Time
        } else if span_s <= 4.0 * 86_400.0 {
            DateLabel::DateTime
        } else {
            DateLabel::Date
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Minutes,
    Hours,
    Days,
}

impl TimeUnit {
    /// The unit that keeps a run of `duration_ns` readable.
    pub fn for_duration(duration_ns: u64) -> TimeUnit {
        let s = duration_ns as f64 / 1e9;
        if s <= 300.0 {
            TimeUnit::Seconds
        } else if s <= 5.0 * 3600.0 {
            TimeUnit::Minutes
        } else if s <= 3.0 * 86_400.0 {
            TimeUnit::Hours
        } else {
            TimeUnit::Days
        }
    }

    pub fn ns(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1e9,
            TimeUnit::Minutes => 60e9,
            TimeUnit::Hours => 3600e9,
            TimeUnit::Days => 86_400e9,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "min",
            TimeUnit::Hours => "h",
            TimeUnit::Days => "d",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The axis title, with its unit in words (e.g. "wake-up latency").
    pub title: String,
    pub scale: Scale,
    pub unit: Unit,
    /// Shown range, in the axis' unit; for log axes both ends > 0.
    pub min: f64,
    pub max: f64,
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    /// Thinner and dashed: a secondary quantity of the same colour.
    Dashed,
    /// Thicker: the summary of several other series.
    Bold,
}

/// One named line of a figure. `segments` are drawn as polylines; a
/// segment of one point is drawn as a dot (an isolated observation).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    /// Index into the palette.
    pub color: usize,
    pub stroke: Stroke,
    pub segments: Vec<Vec<(f64, f64)>>,
    /// Points to emphasise (e.g. the maximum), drawn as larger dots.
    pub markers: Vec<(f64, f64)>,
}

impl Series {
    pub fn points(&self) -> impl Iterator<Item = &(f64, f64)> {
        self.segments.iter().flatten().chain(self.markers.iter())
    }
}

/// A span of x when a load part was on, drawn in the part's lane (a thin
/// strip above the chart, one per part) so it never covers the curves.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub name: String,
    /// The part's lane, from the top, and its colour ([`band_color`]).
    pub color: usize,
    pub x0: f64,
    pub x1: f64,
}

/// A shaded region between a lower and an upper curve (the range of
/// many threads drawn as one), under the series.
#[derive(Clone, Debug, PartialEq)]
pub struct Area {
    pub name: String,
    /// Index into the palette ([`SUMMARY_COLOR`] for grey).
    pub color: usize,
    /// Runs of `(x, lower, upper)`, x increasing; a gap between runs is
    /// left empty.
    pub segments: Vec<Vec<(f64, f64, f64)>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Shaded ranges, drawn first and named in the legend.
    pub areas: Vec<Area>,
}

impl Figure {
    /// True when nothing can be drawn.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points().next().is_none())
            && self
                .areas
                .iter()
                .all(|a| a.segments.iter().all(Vec::is_empty))
    }
}

/// Which figure `rtscope plot --kind` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Hist,
    Exceedance,
    Timeline,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "hist" | "histogram" => Kind::Hist,
            "exceedance" => Kind::Exceedance,
            "timeline" => Kind::Timeline,
            _ => return None,
        })
    }
}

/// Series colours (Tableau 10, in an order where neighbours contrast);
/// beyond ten, hues spread around the circle.
pub fn color(i: usize) -> (u8, u8, u8) {
    const PALETTE: [(u8, u8, u8); 10] = [
        (0x4e, 0x79, 0xa7),
        (0xf2, 0x8e, 0x2b),
        (0x59, 0xa1, 0x4f),
        (0xe1, 0x57, 0x59),
        (0xb0, 0x7a, 0xa1),
        (0x76, 0xb7, 0xb2),
        (0x9c, 0x75, 0x5f),
        (0xed, 0xc9, 0x48),
        (0xff, 0x9d, 0xa7),
        (0x79, 0x70, 0x6e),
    ];
    if i < PALETTE.len() {
        return PALETTE[i];
    }
    // Golden-angle hues, medium saturation and lightness.
    let h = ((i - PALETTE.len()) as f64 * 137.508) % 360.0;
    hsl_to_rgb(h, 0.55, 0.45)
}

/// Load-part colours: the Okabe-Ito palette (eight colours told apart
/// with every common colour-vision deficiency; its black last), then
/// hues around the circle. One per part, never shared.
pub fn band_color(i: usize) -> (u8, u8, u8) {
    const OKABE_ITO: [(u8, u8, u8); 8] = [
        (0xe6, 0x9f, 0x00),
        (0x56, 0xb4, 0xe9),
        (0x00, 0x9e, 0x73),
        (0xf0, 0xe4, 0x42),
        (0x00, 0x72, 0xb2),
        (0xd5, 0x5e, 0x00),
        (0xcc, 0x79, 0xa7),
        (0x00, 0x00, 0x00),
    ];
    if i < OKABE_ITO.len() {
        return OKABE_ITO[i];
    }
    let h = ((i - OKABE_ITO.len()) as f64 * 137.508 + 20.0) % 360.0;
    hsl_to_rgb(h, 0.6, 0.4)
}

/// The colour of summary series ("all CPUs").
pub const SUMMARY_COLOR: usize = usize::MAX;

pub fn rgb(i: usize) -> (u8, u8, u8) {
    if i == SUMMARY_COLOR {
        (0x22, 0x22, 0x22)
    } else {
        color(i)
    }
}

fn hsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (to(r), to(g), to(b))
}

/// Output size of a figure in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

impl Size {
    /// The size figures have inside the HTML report.
    pub const REPORT: Size = Size {
        width: 960,
        height: 430,
    };

    /// Parse `WIDTHxHEIGHT` (pixels, each 200–8000).
    pub fn parse(s: &str) -> Option<Size> {
        let (w, h) = s.split_once(['x', 'X'])?;
        let (width, height) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
        let ok = |v: u32| (200..=8000).contains(&v);
        (ok(width) && ok(height)).then_some(Size { width, height })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_kinds_and_colours() {
        assert_eq!(
            Size::parse("1000x500"),
            Some(Size {
                width: 1000,
                height: 500
            })
        );
        assert_eq!(Size::parse("10x500"), None);
        assert_eq!(Size::parse("axb"), None);
        assert_eq!(Kind::parse("hist"), Some(Kind::Hist));
        assert_eq!(Kind::parse("pie"), None);
        // Distinct colours for many series.
        let colours: std::collections::BTreeSet<_> = (0..64).map(color).collect();
        assert_eq!(colours.len(), 64);
        let bands: std::collections::BTreeSet<_> = (0..16).map(band_color).collect();
        assert_eq!(bands.len(), 16);
        assert_eq!(TimeUnit::for_duration(20_000_000_000), TimeUnit::Seconds);
        assert_eq!(TimeUnit::for_duration(3_600_000_000_000), TimeUnit::Minutes);
        assert_eq!(TimeUnit::for_duration(86_400_000_000_000), TimeUnit::Hours);
    }
}
