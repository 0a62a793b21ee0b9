//! The long-term view of a monitor in the HTML report: the maximum of
//! every window over days, one line per host and CPU (the OSADL plot),
//! from the monitor's windows in the store. A gap of more than two
//! windows (a restart, a reboot) breaks the line. The time axis is dated
//! (UTC, from the windows' start and end times). Beyond
//! [`MAX_THREAD_CURVES`] lines (a many-CPU board, a lab of boards), the
//! worst that many are drawn (by their largest window) and the others as
//! one grey range per window. Pure: rows in, figure out.

use super::plot::data::{MAX_THREAD_CURVES, area_segments};
use super::plot::{Area, Axis, DateLabel, Figure, SUMMARY_COLOR, Scale, Series, Stroke, Unit};
use crate::store::windows::WindowRow;
use std::collections::BTreeMap;

/// The caption under the figure.
pub const CAPTION: &str = "Long-term view of the monitor: the largest wake-up latency of \
    every window, per host and CPU, since its first window in the store (the OSADL plot); \
    a break in a line is a time without measuring (a restart). With more than 8 lines, the \
    8 with the largest windows are drawn and the others as one grey range.";

fn decade(v: f64, up: bool) -> f64 {
    let e = v.max(1e-3).log10();
    10f64.powf(if up { e.ceil() } else { e.floor() })
}

/// The figure, or `None` when no window holds a maximum.
pub fn long_term(rows: &[WindowRow], title: &str) -> Option<Figure> {
    let t0 = rows.iter().map(|w| w.start_unix_ns).min()?;
    let t1 = rows.iter().map(|w| w.end_unix_ns).max()?;
    let mut lines: BTreeMap<(String, Option<u32>, u32), Vec<&WindowRow>> = BTreeMap::new();
    for w in rows.iter().filter(|w| w.max_ns.is_some()) {
        lines
            .entry((w.host.clone(), w.cpu, w.thread))
            .or_default()
            .push(w);
    }
    if lines.is_empty() {
        return None;
    }
    let hosts: std::collections::BTreeSet<&String> = lines.keys().map(|k| &k.0).collect();
    let name = |host: &String, cpu: &Option<u32>, thread: &u32| {
        let who = match cpu {
            Some(c) => format!("CPU {c}"),
            None => format!("thread {thread}"),
        };
        if hosts.len() > 1 {
            format!("{host} {who}")
        } else {
            who
        }
    };
    let y_of = |w: &WindowRow| w.max_ns.unwrap_or(0) as f64 / 1000.0;
    let mut keys: Vec<&(String, Option<u32>, u32)> = lines.keys().collect();
    let mut others: Vec<&Vec<&WindowRow>> = Vec::new();
    if keys.len() > MAX_THREAD_CURVES {
        // The lines with the largest window first (ties: the first key).
        let worst = |k: &(String, Option<u32>, u32)| {
            lines[k].iter().filter_map(|w| w.max_ns).max().unwrap_or(0)
        };
        keys.sort_by(|a, b| worst(b).cmp(&worst(a)).then(a.cmp(b)));
        others = keys[MAX_THREAD_CURVES..]
            .iter()
            .map(|k| &lines[*k])
            .collect();
        keys.truncate(MAX_THREAD_CURVES);
    }
    let mut series = Vec::new();
    let (mut lo, mut hi) = (f64::MAX, 0f64);
    for (i, key) in keys.iter().enumerate() {
        let (host, cpu, thread) = key;
        let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut last_end: Option<u64> = None;
        for w in &lines[*key] {
            let len = w.end_unix_ns.saturating_sub(w.start_unix_ns).max(1);
            let gap = last_end.is_none_or(|e| w.start_unix_ns > e + 2 * len);
            if gap {
                segments.push(Vec::new());
            }
            let y = y_of(w);
            lo = lo.min(y);
            hi = hi.max(y);
            let x = w.end_unix_ns as f64 / 1e9;
            segments.last_mut().expect("pushed above").push((x, y));
            last_end = Some(w.end_unix_ns);
        }
        series.push(Series {
            name: name(host, cpu, thread),
            color: i,
            stroke: Stroke::Solid,
            segments,
            markers: Vec::new(),
        });
    }
    let mut areas = Vec::new();
    if !others.is_empty() {
        // One range per window slot (windows ending in the same window
        // length), broken where no other line has a window.
        let len = others
            .iter()
            .flat_map(|ws| ws.iter())
            .map(|w| w.end_unix_ns.saturating_sub(w.start_unix_ns))
            .min()
            .unwrap_or(1)
            .max(1);
        let mut slots: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for w in others.iter().flat_map(|ws| ws.iter()) {
            let y = y_of(w);
            lo = lo.min(y);
            hi = hi.max(y);
            let r = slots.entry(w.end_unix_ns / len).or_insert((y, y));
            *r = (r.0.min(y), r.1.max(y));
        }
        let where_ = if hosts.len() > 1 { "lines" } else { "CPUs" };
        areas.push(Area {
            name: format!("the other {} {where_}", others.len()),
            color: SUMMARY_COLOR,
            segments: area_segments(
                slots
                    .into_iter()
                    .map(|(k, (a, b))| (k, (k * len) as f64 / 1e9, a, b)),
            ),
        });
    }
    Some(Figure {
        title: title.to_string(),
        x: dated_axis(t0, t1),
        y: latency_axis("largest wake-up latency per window (log scale)", lo, hi),
        series,
        bands: Vec::new(),
        areas,
    })
}

/// A time axis from `t0` to `t1` (ns since 1970), labelled in UTC as the
/// span asks (times of day, dates and times, dates); a minute at least.
fn dated_axis(t0: u64, t1: u64) -> Axis {
    let label = DateLabel::for_span_s(t1.saturating_sub(t0) as f64 / 1e9);
    let (x0, x1) = (t0 as f64 / 1e9, t1 as f64 / 1e9);
    let title = match label {
        DateLabel::Time => format!(
            "time (UTC), from {}",
            crate::units::fmt_unix_utc(t0).trim_end_matches(" UTC")
        ),
        DateLabel::DateTime => "date and time (UTC, month-day hour:minute)".to_string(),
        DateLabel::Date => "date (UTC)".to_string(),
    };
    Axis {
        title,
        scale: Scale::Linear,
        unit: Unit::Utc(label),
        min: x0,
        max: if x1 > x0 { x1 } else { x0 + 60.0 },
    }
}

/// A latency axis (µs, log scale) over whole decades from `lo` to `hi`
/// (µs), one decade at least.
fn latency_axis(title: &str, lo: f64, hi: f64) -> Axis {
    Axis {
        title: title.into(),
        scale: Scale::Log,
        unit: Unit::LatencyUs,
        min: decade(lo, false),
        max: decade(hi, true).max(decade(lo, false) * 10.0),
    }
}

/// The caption under a board's history.
pub const HISTORY_CAPTION: &str = "A board's history: the worst case (maximum) and p99.99 of \
    each of its stored runs, at the run's start (UTC), one dot a run; the lines join the runs \
    in time, whatever was measured between them.";

/// A board's history: each run's maximum and p99.99 at its start, dated
/// (`rows`: one host's runs, any order). `None` when no run has a
/// maximum.
pub fn history(rows: &[crate::store::RunRow], title: &str) -> Option<Figure> {
    let mut rows: Vec<&crate::store::RunRow> = rows
        .iter()
        .filter(|r| r.max_ns.is_some() && r.started_at_unix_ns > 0)
        .collect();
    rows.sort_by_key(|r| (r.started_at_unix_ns, r.id));
    let t0 = rows.first()?.started_at_unix_ns;
    let t1 = rows
        .iter()
        .map(|r| r.started_at_unix_ns.saturating_add(r.duration_ns))
        .max()
        .unwrap_or(t0);
    let point =
        |r: &crate::store::RunRow, v: u64| (r.started_at_unix_ns as f64 / 1e9, v as f64 / 1000.0);
    let max: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some(point(r, r.max_ns?)))
        .collect();
    // A p99.99 among a run's overflows is only a lower bound: no dot.
    let p9999: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some(point(r, r.p9999()?.exact()?)))
        .collect();
    let ys = max.iter().chain(p9999.iter()).map(|p| p.1);
    let lo = ys.clone().fold(f64::MAX, f64::min);
    let hi = ys.fold(0f64, f64::max);
    let mut series = vec![Series {
        name: "maximum".into(),
        color: 0,
        stroke: Stroke::Solid,
        segments: vec![max.clone()],
        markers: max,
    }];
    if !p9999.is_empty() {
        series.push(Series {
            name: "p99.99".into(),
            color: 0,
            stroke: Stroke::Dashed,
            segments: vec![p9999.clone()],
            markers: p9999,
        });
    }
    Some(Figure {
        title: title.to_string(),
        x: dated_axis(t0, t1),
        y: latency_axis("wake-up latency of the run (log scale)", lo, hi),
        series,
        bands: Vec::new(),
        areas: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(host: &str, cpu: u32, start_s: u64, max_us: u64) -> WindowRow {
        WindowRow {
            monitor: "m".into(),
            host: host.into(),
            run_uuid: "r".into(),
            thread: cpu,
            cpu: Some(cpu),
            start_unix_ns: start_s * 1_000_000_000,
            end_unix_ns: (start_s + 300) * 1_000_000_000,
            samples: 1,
            wakeups: 1,
            missed: 0,
            min_ns: Some(1),
            avg_ns: Some(1),
            p99_ns: Some(1),
            max_ns: Some(max_us * 1000),
            histogram: None,
        }
    }

    #[test]
    fn beyond_eight_lines_the_worst_eight_and_a_range_for_the_others() {
        // 20 CPUs, 3 windows each; CPU 7 has the largest window, then CPU 19.
        let mut rows = Vec::new();
        for cpu in 0..20u32 {
            for k in 0..3u64 {
                let max_us = match cpu {
                    7 => 900,
                    19 => 800,
                    c => 10 + u64::from(c) + k,
                };
                rows.push(w("a", cpu, k * 300, max_us));
            }
        }
        let f = long_term(&rows, "t").unwrap();
        assert_eq!(f.series.len(), 8);
        assert_eq!(f.series[0].name, "CPU 7");
        assert_eq!(f.series[1].name, "CPU 19");
        // Then by their largest window: CPU 18 (30 us) down to CPU 13.
        assert_eq!(f.series[2].name, "CPU 18");
        assert_eq!(f.series[7].name, "CPU 13");
        assert_eq!(f.areas.len(), 1);
        let a = &f.areas[0];
        assert_eq!(a.name, "the other 12 CPUs");
        assert_eq!(a.color, SUMMARY_COLOR);
        // One run of three window slots: the others' range in each.
        assert_eq!(a.segments.len(), 1);
        assert_eq!(
            a.segments[0],
            vec![
                (300.0, 10.0, 22.0),
                (600.0, 11.0, 23.0),
                (900.0, 12.0, 24.0)
            ]
        );
        assert_eq!((f.y.min, f.y.max), (10.0, 1000.0));
        // Two boards: the range names lines, not CPUs.
        let mut two = rows.clone();
        two.push(w("b", 0, 0, 5));
        assert_eq!(
            long_term(&two, "t").unwrap().areas[0].name,
            "the other 13 lines"
        );
    }

    #[test]
    fn one_line_per_host_and_cpu_broken_at_restarts() {
        let rows = vec![
            w("a", 0, 0, 20),
            w("a", 0, 300, 30),
            // Restart: an hour without windows.
            w("a", 0, 4200, 40),
            w("b", 0, 0, 500),
        ];
        let f = long_term(&rows, "t").unwrap();
        assert_eq!(f.series.len(), 2);
        assert_eq!(f.series[0].name, "a CPU 0");
        assert_eq!(f.series[0].segments.len(), 2);
        assert_eq!(f.series[1].segments, vec![vec![(300.0, 500.0)]]);
        assert_eq!((f.y.min, f.y.max), (10.0, 1000.0));
        assert!(long_term(&[], "t").is_none());
    }

    #[test]
    fn the_time_axis_is_dated_in_utc() {
        use crate::report::plot::draw::axis_labels;
        // 2026-11-20 00:00 UTC, then a window every hour for ten days.
        let day0 = 1_795_132_800;
        let rows: Vec<WindowRow> = (0..240).map(|h| w("a", 0, day0 + h * 3600, 20)).collect();
        let f = long_term(&rows, "t").unwrap();
        assert!(f.x.title.contains("UTC"), "{}", f.x.title);
        let labels = axis_labels(&f.x);
        assert!(labels.len() >= 4, "{labels:?}");
        assert!(labels[0].starts_with("2026-11-2"), "{labels:?}");
        assert!(
            labels
                .iter()
                .all(|l| l.len() == 10 && (l.starts_with("2026-11-") || l.starts_with("2026-12-"))),
            "{labels:?}"
        );
        // Two days: dates with hours.
        let f = long_term(&rows[..48], "t").unwrap();
        let labels = axis_labels(&f.x);
        assert!(labels.contains(&"11-21 00:00".to_string()), "{labels:?}");
        assert!(labels.len() >= 4 && labels.len() <= 9, "{labels:?}");
        // Three hours: times of day, the date in the title.
        let f = long_term(&rows[..3], "t").unwrap();
        assert!(f.x.title.contains("2026-11-20 00:00:00"), "{}", f.x.title);
        let labels = axis_labels(&f.x);
        assert!(labels.contains(&"01:00".to_string()), "{labels:?}");
    }

    #[test]
    fn a_board_history_has_a_dot_per_run_dated() {
        let run = |id: i64, day: u64, max: Option<u64>| crate::store::RunRow {
            id,
            started_at_unix_ns: (20_000 + day) * 86_400_000_000_000,
            duration_ns: 3_600_000_000_000,
            max_ns: max,
            p9999_ns: max.map(|m| m / 2),
            uuid: format!("{id:032x}"),
            state: crate::store::RunState::Complete,
            source_kind: crate::kinds::Named::from("measured".to_string()),
            source_format: None,
            label: None,
            kernel_release: "6.1.0".into(),
            preemption_model: "rt".into(),
            threads: 1,
            samples: 1000,
            fingerprint_hash: String::new(),
            saved_at_unix_ns: 0,
            host: "pi".into(),
            head: Default::default(),
        };
        let rows = vec![
            run(2, 3, Some(80_000)),
            run(1, 0, Some(40_000)),
            run(3, 5, None),
        ];
        let f = history(&rows, "pi").unwrap();
        assert_eq!(f.series.len(), 2);
        // Oldest first; the run without a maximum is left out.
        let xs: Vec<f64> = f.series[0].markers.iter().map(|p| p.0).collect();
        assert_eq!(xs, vec![20_000.0 * 86_400.0, 20_003.0 * 86_400.0]);
        assert_eq!(f.series[0].markers[1].1, 80.0);
        assert_eq!(f.series[1].markers[0].1, 20.0);
        assert!(matches!(
            f.x.unit,
            Unit::Utc(DateLabel::DateTime | DateLabel::Date)
        ));
        assert!(history(&[run(4, 0, None)], "pi").is_none());
    }
}
