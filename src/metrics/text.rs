//! The Prometheus text exposition (format 0.0.4) of one moment of a run:
//! per-thread latency histograms with classic buckets 20 a decade from
//! 1 us to 100 ms and 1-2-5 on to 10 s, wake-up and missed-period counters, the run's
//! and the last window's maximum as gauges. Pure: no clock, no I/O.
//!
//! A bucket `le` counts the samples whose histogram bucket starts at or
//! below `le`: rtscope's histogram buckets are at most 1/512 of their
//! value wide, so a bucket count is off by at most that near its bound.

use crate::histogram::Histogram;
use std::fmt::Write as _;

/// Mantissas of the fine bucket bounds within one decade, in hundredths:
/// the R20 preferred numbers (ISO 3), which hold 1, 2 and 5 and are at
/// most 14.3 % apart (1.4 to 1.6).
const R20: [u64; 20] = [
    100, 112, 125, 140, 160, 180, 200, 224, 250, 280, 315, 355, 400, 450, 500, 560, 630, 710, 800,
    900,
];
/// Decades with fine bounds: 1 us to 100 ms.
const FINE_DECADES: usize = 5;
/// Bounds above the fine ones, 1-2-5 up to 10 s, in ns.
const COARSE_NS: [u64; 7] = [
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
];
/// Largest ratio of two neighbouring bounds from 1 us to 100 ms.
pub const FINE_RATIO: f64 = 1.6 / 1.4;

const fn bounds() -> [u64; FINE_DECADES * 20 + COARSE_NS.len()] {
    let mut out = [0u64; FINE_DECADES * 20 + COARSE_NS.len()];
    let (mut d, mut unit_ns) = (0, 10u64); // 1 us = 100 x 10 ns
    while d < FINE_DECADES {
        let mut k = 0;
        while k < R20.len() {
            out[d * 20 + k] = R20[k] * unit_ns;
            k += 1;
        }
        unit_ns *= 10;
        d += 1;
    }
    let mut k = 0;
    while k < COARSE_NS.len() {
        out[FINE_DECADES * 20 + k] = COARSE_NS[k];
        k += 1;
    }
    out
}

/// Upper bounds of the classic buckets, in ns: 20 a decade (R20) from
/// 1 us to 100 ms, then 1-2-5 to 10 s. Between 1 us and 100 ms
/// `histogram_quantile` lands in the bucket holding the true quantile, so
/// it is within [`FINE_RATIO`] - 1 (14.3 %) of it, plus the 1/512 of
/// rtscope's own buckets.
pub const BOUNDS_NS: [u64; FINE_DECADES * 20 + COARSE_NS.len()] = bounds();

/// Every metric name the endpoint serves (a histogram's series add
/// `_bucket`, `_sum` and `_count`).
pub const METRIC_NAMES: [&str; 7] = [LATENCY, WAKEUPS, MISSED, MAX, WINDOW_MAX, INTERVAL, INFO];

pub const LATENCY: &str = "rtscope_latency_seconds";
pub const WAKEUPS: &str = "rtscope_wakeups_total";
pub const MISSED: &str = "rtscope_missed_periods_total";
pub const MAX: &str = "rtscope_max_latency_seconds";
pub const WINDOW_MAX: &str = "rtscope_window_max_latency_seconds";
pub const INTERVAL: &str = "rtscope_interval_seconds";
pub const INFO: &str = "rtscope_run_info";

/// One measuring thread at one moment.
#[derive(Clone, Debug)]
pub struct ThreadMoment {
    /// CPU the thread is pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    pub thread: usize,
    pub interval_ns: u64,
    pub hist: Histogram,
    pub sum_ns: u128,
    pub wakeups: u64,
    pub missed: u64,
    pub max_ns: Option<u64>,
    /// Largest latency of the last finished window.
    pub window_max_ns: Option<u64>,
}

/// A run at one moment.
#[derive(Clone, Debug, Default)]
pub struct Moment {
    /// Labels on every series: host, label, kernel, preempt, tag_*.
    pub common: Vec<(String, String)>,
    /// Only on `rtscope_run_info`: run uuid, command, window length.
    pub info: Vec<(String, String)>,
    pub threads: Vec<ThreadMoment>,
}

/// Turn a tag key into a label name (`[a-zA-Z_][a-zA-Z0-9_]*`, prefixed
/// `tag_` so it never collides with the fixed labels).
pub fn tag_label(key: &str) -> String {
    let mut s = String::from("tag_");
    s.extend(
        key.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    s
}

fn escape(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

fn labels(pairs: &[(String, String)]) -> String {
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    body.join(",")
}

/// Seconds from ns, printed exactly enough (ns resolution).
fn secs(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// The exposition text of `m`.
pub fn render(m: &Moment) -> String {
    let mut p = Page {
        o: String::with_capacity(4096 + m.threads.len() * 4096),
        m,
        per_thread: m
            .threads
            .iter()
            .map(|t| {
                let mut l = m.common.clone();
                l.push((
                    "cpu".into(),
                    t.cpu.map_or("none".to_string(), |c| c.to_string()),
                ));
                l.push(("thread".into(), t.thread.to_string()));
                labels(&l)
            })
            .collect(),
    };
    p.info();
    p.latency();
    p.counter(
        WAKEUPS,
        "Times each measuring thread woke up (measured periods, warm-up excluded).",
        |t| t.wakeups,
    );
    p.counter(
        MISSED,
        "Periods whose deadline passed before the thread woke up.",
        |t| t.missed,
    );
    p.gauge(MAX, "Largest wake-up latency of the run so far.", |t| {
        t.max_ns
    });
    p.gauge(
        WINDOW_MAX,
        "Largest wake-up latency of the last finished window (--window; monitor: its window, default 5 min).",
        |t| t.window_max_ns,
    );
    p.gauge(INTERVAL, "Period of the measuring thread.", |t| {
        Some(t.interval_ns)
    });
    p.o
}

/// The text being written, and each thread's labels.
struct Page<'a> {
    o: String,
    m: &'a Moment,
    per_thread: Vec<String>,
}

impl Page<'_> {
    /// The run's info metric.
    fn info(&mut self) {
        let o = &mut self.o;
        let _ = writeln!(
            o,
            "# HELP {INFO} The run being measured (value 1); its uuid, command and window length."
        );
        let _ = writeln!(o, "# TYPE {INFO} gauge");
        let mut info = self.m.common.clone();
        info.extend(self.m.info.iter().cloned());
        let _ = writeln!(o, "{INFO}{{{}}} 1", labels(&info));
    }

    /// Each thread's latency histogram, cumulated at `BOUNDS_NS`.
    fn latency(&mut self) {
        let o = &mut self.o;
        let _ = writeln!(
            o,
            "# HELP {LATENCY} Wake-up latency of each measuring thread (time it ran minus time it was meant to wake), every period of the run including corrected missed ones."
        );
        let _ = writeln!(o, "# TYPE {LATENCY} histogram");
        for (t, l) in self.m.threads.iter().zip(&self.per_thread) {
            let mut cum = 0u64;
            let mut it = t.hist.iter_nonzero().peekable();
            for b in BOUNDS_NS {
                while let Some(&(lower, c)) = it.peek() {
                    if lower > b {
                        break;
                    }
                    cum += c;
                    it.next();
                }
                let _ = writeln!(o, "{LATENCY}_bucket{{{l},le=\"{}\"}} {cum}", secs(b));
            }
            let total = t.hist.total();
            let _ = writeln!(o, "{LATENCY}_bucket{{{l},le=\"+Inf\"}} {total}");
            let _ = writeln!(o, "{LATENCY}_sum{{{l}}} {}", t.sum_ns as f64 / 1e9);
            let _ = writeln!(o, "{LATENCY}_count{{{l}}} {total}");
        }
    }

    /// A counter per thread.
    fn counter(&mut self, name: &str, help: &str, v: impl Fn(&ThreadMoment) -> u64) {
        let o = &mut self.o;
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} counter");
        for (t, l) in self.m.threads.iter().zip(&self.per_thread) {
            let _ = writeln!(o, "{name}{{{l}}} {}", v(t));
        }
    }

    /// A gauge in seconds per thread, for the threads that have a value.
    fn gauge(&mut self, name: &str, help: &str, v: impl Fn(&ThreadMoment) -> Option<u64>) {
        let o = &mut self.o;
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} gauge");
        for (t, l) in self.m.threads.iter().zip(&self.per_thread) {
            if let Some(ns) = v(t) {
                let _ = writeln!(o, "{name}{{{l}}} {}", secs(ns));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moment() -> Moment {
        let mut hist = Histogram::latency();
        for v in [500, 1_000, 1_500, 30_000, 30_000, 3_000_000] {
            hist.record(v);
        }
        Moment {
            common: vec![
                ("host".into(), "board\"1".into()),
                ("label".into(), "a\\b".into()),
                (tag_label("load-kind"), "hell".into()),
            ],
            info: vec![("run_uuid".into(), "u".into())],
            threads: vec![ThreadMoment {
                cpu: Some(1),
                thread: 0,
                interval_ns: 1_000_000,
                sum_ns: 3_063_000,
                hist,
                wakeups: 5,
                missed: 2,
                max_ns: Some(3_000_000),
                window_max_ns: None,
            }],
        }
    }

    #[test]
    fn buckets_are_cumulative_and_end_with_the_count() {
        let t = render(&moment());
        let l = r#"host="board\"1",label="a\\b",tag_load_kind="hell",cpu="1",thread="0""#;
        for (le, n) in [
            ("0.000001", 2),
            ("0.000002", 3),
            ("0.00005", 5),
            ("0.002", 5),
            ("0.005", 6),
            ("+Inf", 6),
        ] {
            let line = format!("rtscope_latency_seconds_bucket{{{l},le=\"{le}\"}} {n}");
            assert!(t.contains(&line), "missing {line} in\n{t}");
        }
        assert!(t.contains(&format!("rtscope_latency_seconds_count{{{l}}} 6")));
        assert!(t.contains(&format!("rtscope_wakeups_total{{{l}}} 5")));
        assert!(t.contains(&format!("rtscope_missed_periods_total{{{l}}} 2")));
        assert!(t.contains(&format!("rtscope_max_latency_seconds{{{l}}} 0.003")));
        assert!(!t.contains("rtscope_window_max_latency_seconds{"));
        assert!(t.contains("rtscope_run_info{"));
        for name in METRIC_NAMES {
            assert!(t.contains(&format!("# TYPE {name} ")), "{name}");
        }
        // Every sample line: name{labels} value.
        for line in t.lines().filter(|l| !l.starts_with('#')) {
            let (_, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn bucket_bounds_are_fine_where_latencies_are() {
        assert!(BOUNDS_NS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(BOUNDS_NS[0], 1_000);
        assert_eq!(*BOUNDS_NS.last().unwrap(), 10_000_000_000);
        // The 1-2-5 bounds served before are all still there.
        for d in 0..7 {
            for m in [1, 2, 5] {
                let b = m * 1_000 * 10u64.pow(d);
                assert!(BOUNDS_NS.contains(&b), "{b} ns");
            }
        }
        let fine: Vec<u64> = BOUNDS_NS
            .iter()
            .copied()
            .filter(|&b| b <= 100_000_000)
            .collect();
        assert_eq!(fine.len(), 101);
        for w in fine.windows(2) {
            assert!(w[1] as f64 / w[0] as f64 <= FINE_RATIO + 1e-12, "{w:?}");
        }
        assert!(BOUNDS_NS.contains(&11_200) && BOUNDS_NS.contains(&63_000));
    }

    /// Prometheus' histogram_quantile over the served buckets (linear
    /// inside the bucket, the first one starting at 0).
    fn histogram_quantile(q: f64, text: &str) -> f64 {
        let buckets: Vec<(f64, f64)> = text
            .lines()
            .filter(|l| l.starts_with("rtscope_latency_seconds_bucket{"))
            .map(|l| {
                let le = l.split("le=\"").nth(1).unwrap().split('"').next().unwrap();
                let n = l.rsplit(' ').next().unwrap().parse::<f64>().unwrap();
                (le.parse::<f64>().unwrap_or(f64::INFINITY), n)
            })
            .collect();
        let total = buckets.last().unwrap().1;
        let rank = q * total;
        let i = buckets.iter().position(|&(_, n)| n >= rank).unwrap();
        let (lo, below) = if i == 0 { (0.0, 0.0) } else { buckets[i - 1] };
        let (hi, n) = buckets[i];
        lo + (hi - lo) * (rank - below) / (n - below)
    }

    #[test]
    fn histogram_quantile_is_within_the_stated_error_of_rtscopes_own() {
        // Long-tailed: a bulk near 20 us, tails to a few ms.
        let mut hist = Histogram::latency();
        let mut x = 12345u64;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let v = 15_000.0 + 5_000.0 * u + 50_000.0 * (u.powi(40)) + 3e6 * u.powi(4000);
            hist.record(v as u64);
        }
        let mut m = moment();
        m.threads[0].hist = hist.clone();
        let t = render(&m);
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
            let own_s = hist.quantile(q).unwrap() as f64 / 1e9;
            let prom_s = histogram_quantile(q, &t);
            let err = (prom_s - own_s).abs() / own_s;
            assert!(
                err <= FINE_RATIO - 1.0 + 1.0 / 256.0,
                "q {q}: prometheus {prom_s} s, rtscope {own_s} s ({:.1} %)",
                err * 100.0
            );
        }
    }

    #[test]
    fn tag_keys_become_valid_label_names() {
        assert_eq!(tag_label("a.b-c"), "tag_a_b_c");
    }
}
