//! One explanation's latency as a horizontal stacked bar, inline SVG for
//! the HTML report: a segment per part (its width is its share of the
//! latency, its colour its kind, see `why::PartKind`), then what is left
//! unexplained, and a legend of the kinds present. Text from the trace
//! (thread names) is escaped here; same explanation, same bytes.

use super::why::PartKind;
use crate::explain::Explanation;
use crate::text::escape;
use crate::text::num;
use std::fmt::Write as _;

const WIDTH_PX: f64 = 960.0;
const LEFT_PX: f64 = 10.0;
const BAR_PX: f64 = 940.0;
const BAR_TOP_PX: f64 = 8.0;
const BAR_HEIGHT_PX: f64 = 34.0;
const HEIGHT_PX: f64 = 96.0;
/// Rough width of a character at the labels' size (13 px sans-serif).
const CHAR_PX: f64 = 7.2;

/// `text` cut to `chars` characters, with an ellipsis when cut.
fn fit(text: &str, chars: usize) -> Option<String> {
    if chars < 4 {
        return None;
    }
    let n = text.chars().count();
    Some(if n <= chars {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(chars - 1).collect();
        s.push('…');
        s
    })
}

/// A segment of the bar: its kind, label, duration and share (%).
type Segment = (PartKind, String, u64, f64);

/// The bar of `x` as an `<svg>` element with the given id: the frame,
/// a segment per part then the unexplained rest, the two ends, the
/// legend.
pub fn bar(x: &Explanation, id: &str) -> String {
    let segments = segments(x);
    let title = format!(
        "Where the {} of {} went",
        num::latency(x.spike.latency_ns),
        super::why::who(x)
    );
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg id=\"{id}\" class=\"why-bar\" role=\"img\" aria-label=\"{t}\" viewBox=\"0 0 {WIDTH_PX} {HEIGHT_PX}\" preserveAspectRatio=\"xMidYMid meet\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"13\"><title>{t}</title>",
        t = escape::markup(&title)
    );
    let _ = write!(
        o,
        "<rect x=\"{LEFT_PX}\" y=\"{BAR_TOP_PX}\" width=\"{BAR_PX}\" height=\"{BAR_HEIGHT_PX}\" fill=\"#f3f4f6\" stroke=\"#d9dbe0\"/>"
    );
    let latency = x.spike.latency_ns.max(1) as f64;
    let mut at = LEFT_PX;
    for seg in &segments {
        let w = (seg.2 as f64 / latency * BAR_PX).clamp(0.0, LEFT_PX + BAR_PX - at);
        if w > 0.0 {
            write_segment(&mut o, seg, at, w);
            at += w;
        }
    }
    // The ends: the deadline and the wake-up.
    let axis_y = BAR_TOP_PX + BAR_HEIGHT_PX + 16.0;
    let _ = write!(
        o,
        "<text x=\"{LEFT_PX}\" y=\"{axis_y}\" fill=\"#5b5f66\">deadline</text><text x=\"{:.1}\" y=\"{axis_y}\" fill=\"#5b5f66\" text-anchor=\"end\">woke {} late</text>",
        LEFT_PX + BAR_PX,
        escape::markup(&num::latency(x.spike.latency_ns))
    );
    write_legend(&mut o, &segments, axis_y + 22.0);
    o.push_str("</svg>");
    o
}

/// The parts of `x`, then what is left unexplained.
fn segments(x: &Explanation) -> Vec<Segment> {
    let mut segments: Vec<Segment> = x
        .parts
        .iter()
        .map(|p| {
            (
                PartKind::of(&p.culprit),
                p.label.clone(),
                p.duration_ns,
                p.share_pct,
            )
        })
        .collect();
    segments.push((
        PartKind::Unexplained,
        "unexplained".into(),
        x.unexplained_ns,
        x.unexplained_pct,
    ));
    segments
}

/// One segment `w` pixels wide at `at`: its rectangle with a tooltip,
/// and its label when it fits.
fn write_segment(o: &mut String, (kind, label, duration_ns, share_pct): &Segment, at: f64, w: f64) {
    let tip = format!("{label}: {}, {share_pct:.1} %", num::latency(*duration_ns));
    let _ = write!(
        o,
        "<rect class=\"part {}\" x=\"{at:.1}\" y=\"{BAR_TOP_PX}\" width=\"{w:.1}\" height=\"{BAR_HEIGHT_PX}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\"><title>{}</title></rect>",
        kind.key(),
        kind.color(),
        escape::markup(&tip)
    );
    let text = format!("{label} {share_pct:.0} %");
    if let Some(t) = fit(&text, ((w - 10.0) / CHAR_PX) as usize) {
        let ink = match kind {
            PartKind::Softirq | PartKind::Unexplained | PartKind::IdleSwitch => "#1d1d1f",
            _ => "#ffffff",
        };
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{ink}\">{}</text>",
            at + 5.0,
            BAR_TOP_PX + BAR_HEIGHT_PX / 2.0 + 4.5,
            escape::markup(&t)
        );
    }
}

/// The legend at `legend_y`: the kinds present, in a fixed order.
fn write_legend(o: &mut String, segments: &[Segment], legend_y: f64) {
    let mut lx = LEFT_PX;
    for kind in PartKind::ALL {
        if !segments.iter().any(|s| s.0 == kind && s.2 > 0) {
            continue;
        }
        let _ = write!(
            o,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{legend_y:.1}\" fill=\"#1d1d1f\">{}</text>",
            legend_y - 10.5,
            kind.color(),
            lx + 17.0,
            escape::markup(kind.name())
        );
        lx += 17.0 + kind.name().chars().count() as f64 * CHAR_PX + 18.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_follow_the_shares_and_text_is_escaped() {
        let mut x = super::super::why::synthetic(0, 1, 20_000_000, false);
        if let crate::explain::Culprit::Thread { comm, .. } = &mut x.parts[0].culprit {
            *comm = "<evil>".into();
        }
        x.parts[0].label = "<evil>:4242 (RT 90)".into();
        let svg = bar(&x, "why-1");
        assert!(svg.starts_with("<svg id=\"why-1\" class=\"why-bar\""));
        assert!(svg.ends_with("</svg>"));
        assert!(!svg.contains("<evil>"));
        assert!(svg.contains("&lt;evil&gt;:4242"));
        // The hog's segment is nearly the whole bar.
        let hog = svg.find("class=\"part thread\"").unwrap();
        let w: f64 = svg[hog..].split("width=\"").nth(1).unwrap()[..6]
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap();
        assert!(w > 0.9 * BAR_PX, "{w}");
        assert!(svg.contains("threads that ran instead"));
        assert!(svg.contains("interrupts"));
        assert_eq!(bar(&x, "why-1"), svg, "the same bytes every time");
    }

    #[test]
    fn labels_that_do_not_fit_are_cut_or_left_out() {
        assert_eq!(fit("perl:1", 10).as_deref(), Some("perl:1"));
        assert_eq!(fit("perl:11979 (RT 95)", 8).as_deref(), Some("perl:11…"));
        assert_eq!(fit("perl", 3), None);
    }
}
