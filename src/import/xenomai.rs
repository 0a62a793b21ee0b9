//! Xenomai's (and EVL's) `latency` output: `== Sampling period: 100 us`,
//! then one `RTD|` line per second (min, avg, max of that second in µs
//! with ns decimals, overruns and mode switches so far, best and worst so
//! far), and at the end `RTS|` (min, avg, max, overruns, mode switches,
//! duration `HH:MM:SS/HH:MM:SS`). With `-h`, `HSD|` lines hold histograms
//! in 1 µs buckets (the tool's default `-B 1000`); the `avg` one counts
//! every sample and becomes the record's histogram.
//!
//! Every `RTD|` line becomes one point of a 1 s window series (count =
//! samples per second, p99 unknown: the window's max stands in for it).
//! Latencies below 0 (the timer fired early: Xenomai's "gravity"
//! anticipates it) are recorded as 0, with a warning.

use super::build::{self, RunIn, ThreadIn};
use super::{ImportError, Importer, Source, excerpt, numbered_lines};
use crate::histogram::Histogram;
use crate::record::{RunRecord, WindowPoint, WindowSeries};

pub static IMPORTER: Importer = Importer {
    name: "xenomai-latency",
    description: "Xenomai/EVL `latency` output (RTD/RTS lines, HSD histograms with -h)",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    for l in text.lines().take(100_000) {
        let l = l.trim_start();
        if l.starts_with("RTD|") || l.starts_with("RTS|") {
            return 95;
        }
    }
    0
}

/// The `|`-separated fields after a 3-letter tag, trimmed.
fn fields(l: &str) -> Vec<&str> {
    l.split('|').skip(1).map(str::trim).collect()
}

fn float(no: usize, l: &str, s: &str, what: &str) -> Result<f64, ImportError> {
    s.parse::<f64>().map_err(|_| {
        ImportError::at(
            no,
            format!(
                "expected {what} (a number of us), found '{s}' in '{}'",
                excerpt(l)
            ),
        )
    })
}

fn int(no: usize, l: &str, s: &str, what: &str) -> Result<u64, ImportError> {
    s.parse::<u64>().map_err(|_| {
        ImportError::at(
            no,
            format!("expected {what} (a count), found '{s}' in '{}'", excerpt(l)),
        )
    })
}

/// `HH:MM:SS` in seconds.
fn hms(s: &str) -> Option<u64> {
    let p: Vec<u64> = s
        .split(':')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    if p.len() != 3 {
        return None;
    }
    p[0].checked_mul(3600)?
        .checked_add(p[1].checked_mul(60)?)?
        .checked_add(p[2])
}

struct Rtd {
    min: f64,
    avg: f64,
    max: f64,
    overruns: u64,
}

/// `RTS|`: the whole run's min, avg, max (us), overruns, mode switches
/// and duration (s).
struct Rts {
    min: f64,
    avg: f64,
    max: f64,
    overruns: u64,
    switches: u64,
    duration_s: u64,
}

/// What the lines say, read in one pass.
#[derive(Default)]
struct Lines {
    period_us: Option<u64>,
    mode: Option<String>,
    priority: Option<i32>,
    cpu: Option<u32>,
    rtd: Vec<Rtd>,
    rts: Option<Rts>,
    hist: Option<Histogram>,
    /// The sample count of `HSS| avg` (with -h): exact, where the
    /// `RTD|` lines only give whole seconds.
    hss_samples: Option<(usize, u64)>,
    /// Mode switches so far, as the last `RTD|` says.
    switches: u64,
    /// The lowest latency seen (below 0: the timer fired early).
    lowest: f64,
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let mut ls = Lines::default();
    for (no, line) in numbered_lines(src.text) {
        ls.line(no, line.trim())?;
    }
    let period_us = ls.period_us.filter(|&p| p > 0).ok_or_else(|| {
        ImportError::whole(
            "expected '== Sampling period: N us' (the start of latency's output), found none",
        )
    })?;
    if ls.rtd.is_empty() && ls.rts.is_none() {
        return Err(ImportError::whole(
            "expected RTD| or RTS| result lines, found none",
        ));
    }
    let mut run = ls.run(period_us);
    let t = ls.thread(&mut run, period_us);
    run.duration_ns = Some(
        ls.rts
            .as_ref()
            .map_or(ls.rtd.len() as u64, |r| r.duration_s)
            * 1_000_000_000,
    );
    run.threads.push(t);
    ls.warn(&mut run);
    run.fingerprint.preemption_evidence =
        vec!["measured with Xenomai latency (a co-kernel)".into()];
    build::finish(src, run)
}

impl Lines {
    /// One line, trimmed: settings, results or histogram.
    fn line(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        if let Some(v) = l.strip_prefix("== Sampling period:") {
            let v = v.trim().trim_end_matches("us").trim();
            self.period_us = Some(int(no, l, v, "the sampling period")?);
        } else if let Some(v) = l.strip_prefix("== Test mode:") {
            self.mode = Some(v.trim().to_string());
        } else if let Some(rest) = l.strip_prefix("RTT|") {
            self.rtt(rest);
        } else if l.starts_with("RTD|") {
            self.rtd(no, l)?;
        } else if l.starts_with("RTS|") {
            self.rts(no, l)?;
        } else if l.starts_with("HSD|") {
            self.hsd(no, l)?;
        } else if l.starts_with("HSS|") {
            self.hss(no, l)?;
        }
        Ok(())
    }

    /// RTT|  00:00:01  (periodic user-mode task, 100 us period, priority 99[, CPU1])
    fn rtt(&mut self, rest: &str) {
        let Some(inner) = rest
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .map(|(i, _)| i)
        else {
            return;
        };
        for part in inner.split(',').map(str::trim) {
            if let Some(p) = part.strip_prefix("priority ") {
                self.priority = p.trim().parse().ok();
            } else if let Some(c) = part.strip_prefix("CPU") {
                self.cpu = c.trim_end_matches("-noisol").parse().ok();
            } else if let Some(p) = part.strip_suffix(" us period") {
                self.period_us = self.period_us.or_else(|| p.trim().parse().ok());
            } else if self.mode.is_none() {
                self.mode = Some(part.to_string());
            }
        }
    }

    /// One second's results.
    fn rtd(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        let f = fields(l);
        if f.len() != 7 {
            return Err(ImportError::at(
                no,
                format!(
                    "expected 7 fields after RTD| (lat min, avg, max, overruns, mode switches, best, worst), found {}",
                    f.len()
                ),
            ));
        }
        let d = Rtd {
            min: float(no, l, f[0], "lat min")?,
            avg: float(no, l, f[1], "lat avg")?,
            max: float(no, l, f[2], "lat max")?,
            overruns: int(no, l, f[3], "the overrun count")?,
        };
        self.switches = int(no, l, f[4], "the mode-switch count")?;
        float(no, l, f[5], "lat best")?;
        float(no, l, f[6], "lat worst")?;
        if d.min > d.max || d.avg > d.max || d.min > d.avg {
            return Err(ImportError::at(
                no,
                format!("expected min <= avg <= max, found '{}'", excerpt(l)),
            ));
        }
        self.lowest = self.lowest.min(d.min);
        self.rtd.push(d);
        Ok(())
    }

    /// The whole run's summary.
    fn rts(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        let f = fields(l);
        if f.len() != 6 {
            return Err(ImportError::at(
                no,
                format!(
                    "expected 6 fields after RTS| (lat min, avg, max, overruns, mode switches, duration), found {}",
                    f.len()
                ),
            ));
        }
        let Some(duration_s) = f[5].split('/').next().and_then(hms) else {
            return Err(ImportError::at(
                no,
                format!("expected a duration HH:MM:SS/HH:MM:SS, found '{}'", f[5]),
            ));
        };
        let min = float(no, l, f[0], "lat min")?;
        self.lowest = self.lowest.min(min);
        self.rts = Some(Rts {
            min,
            avg: float(no, l, f[1], "lat avg")?,
            max: float(no, l, f[2], "lat max")?,
            overruns: int(no, l, f[3], "the overrun count")?,
            switches: int(no, l, f[4], "the mode-switch count")?,
            duration_s,
        });
        Ok(())
    }

    /// HSD|    avg|   3 -  4 |     1234
    fn hsd(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        let f = fields(l);
        if f.len() != 3 {
            return Err(ImportError::at(
                no,
                format!(
                    "expected 'HSD| kind| from - to | count', found '{}'",
                    excerpt(l)
                ),
            ));
        }
        if f[0] != "avg" {
            return Ok(()); // per-second min and max histograms: not samples.
        }
        let from = f[1].split('-').next().map(str::trim).unwrap_or("");
        let bucket = int(no, l, from, "a histogram bucket")?;
        let count = int(no, l, f[2], "a histogram count")?;
        build::count_into(
            self.hist.get_or_insert_with(Histogram::latency),
            build::bucket_ns(bucket, 1000),
            count,
        )
        .map_err(|e| ImportError::at(no, e.message))?;
        Ok(())
    }

    /// HSS|    avg|    120000|      4.000|      0.600 (samples, average,
    /// standard deviation of the `avg` histogram).
    fn hss(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        let f = fields(l);
        if f.len() != 4 {
            return Err(ImportError::at(
                no,
                format!(
                    "expected 'HSS| kind| samples| average| stddev', found '{}'",
                    excerpt(l)
                ),
            ));
        }
        if f[0] == "avg" {
            self.hss_samples = Some((no, int(no, l, f[1], "the sample count")?));
        }
        Ok(())
    }

    /// The run's options: the period, the test mode, priority and CPU.
    fn run(&self, period_us: u64) -> RunIn {
        let mut run = RunIn::new(IMPORTER.name, "xenomai latency", 1000);
        let mode = self.mode.as_deref();
        let user_mode = mode.is_none_or(|m| m.contains("user"));
        run.options.interval_ns = period_us.saturating_mul(1000);
        run.options.policy = if user_mode {
            "fifo".into()
        } else {
            "unknown".into()
        };
        run.options.priority = self.priority.unwrap_or(0);
        run.priority_known = self.priority.is_some();
        // Overruns are its missed periods.
        run.missed_known = true;
        run.options.timer = format!("xenomai: {}", mode.unwrap_or("unknown test mode")).into();
        run.options.window_ns = 1_000_000_000;
        run.options.cpus = vec![self.cpu];
        run
    }

    /// The one thread: the summary (from `RTS|`, else the `RTD|` lines),
    /// the histogram and the per-second windows.
    fn thread(&mut self, run: &mut RunIn, period_us: u64) -> ThreadIn {
        let per_second = 1_000_000 / period_us;
        let rtd = &self.rtd;
        let mut w = WindowSeries {
            window_ns: 1_000_000_000,
            ..Default::default()
        };
        let mut prev_overruns = 0u64;
        for d in rtd {
            w.push(WindowPoint {
                count: per_second,
                min_ns: build::us_to_ns(d.min),
                avg_ns: build::us_to_ns(d.avg),
                max_ns: build::us_to_ns(d.max),
                p99_ns: build::us_to_ns(d.max),
                missed: d.overruns.saturating_sub(prev_overruns),
            });
            prev_overruns = d.overruns;
        }
        let mut t = ThreadIn::new(period_us.saturating_mul(1000));
        t.cpu = self.cpu;
        t.priority = run.options.priority;
        let (min, avg, max, overruns, duration_s) = match &self.rts {
            Some(r) => (r.min, r.avg, r.max, r.overruns, r.duration_s),
            None => {
                run.warnings.push("no RTS| summary (the output was cut short): the result is taken from the RTD| lines".into());
                let min = rtd.iter().map(|d| d.min).fold(f64::INFINITY, f64::min);
                let max = rtd.iter().map(|d| d.max).fold(f64::NEG_INFINITY, f64::max);
                let avg = rtd.iter().map(|d| d.avg).sum::<f64>() / rtd.len() as f64;
                (min, avg, max, prev_overruns, rtd.len() as u64)
            }
        };
        t.min_ns = Some(build::us_to_ns(min));
        t.avg_ns = Some(build::us_to_ns(avg) as f64);
        t.max_ns = Some(build::us_to_ns(max));
        t.missed = overruns;
        if let Some(hist) = self.hist.take() {
            t.samples = hist.total();
            if let Some((no, n)) = self.hss_samples.filter(|(_, n)| *n != t.samples) {
                run.warnings.push(format!(
                    "the histogram holds {} samples, its HSS| line (line {no}) says {n}: the histogram's count is kept",
                    t.samples
                ));
            }
            t.hist = Some(hist);
            run.warnings.push(
                "the histogram is read in 1 us buckets (latency's default -B 1000); its last bucket also holds everything beyond it"
                    .into(),
            );
        } else if let Some((_, n)) = self.hss_samples {
            t.samples = n;
        } else {
            t.samples = if self.rtd.is_empty() {
                duration_s * per_second
            } else {
                self.rtd.len() as u64 * per_second
            };
        }
        t.windows = w;
        t
    }

    /// What the record cannot hold as the source says it.
    fn warn(&self, run: &mut RunIn) {
        if !self.rtd.is_empty() {
            run.warnings.push(
                "per-second p99 is not in the source: each second's max stands in for it".into(),
            );
        }
        if self.lowest < 0.0 {
            run.warnings.push(format!(
                "latencies below 0 (down to {:.3} us: the timer fired early, Xenomai's gravity over-anticipated it) are recorded as 0",
                self.lowest
            ));
        }
        // The summary's count, else the last second's.
        let switches = self.rts.as_ref().map_or(self.switches, |r| r.switches);
        if switches > 0 {
            run.warnings.push(format!(
                "{switches} involuntary mode switches: some peaks may come from leaving the real-time domain"
            ));
        }
    }
}

/// Where a second, third… run starts in `text` (0-based line indices):
/// a `== Sampling period:` header after result lines, or, after an
/// `RTS|` summary, the first line of a new output (`==`, `warming up`,
/// `RTT|`, `RTH|` or `RTD|`; the `HS?|` histogram lines and rules after
/// a summary still belong to its run).
pub fn run_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let (mut results, mut summary) = (false, false);
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        let header = l.starts_with("== Sampling period:");
        let opens = header
            || l.starts_with("==")
            || l.starts_with("warming up")
            || l.starts_with("RTT|")
            || l.starts_with("RTH|")
            || l.starts_with("RTD|");
        if (header && results) || (summary && opens) {
            starts.push(i);
            (results, summary) = (false, false);
        }
        if l.starts_with("RTD|") || l.starts_with("RTS|") {
            results = true;
        }
        summary |= l.starts_with("RTS|");
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    const OUT: &str = "== Sampling period: 100 us\n== Test mode: periodic user-mode task\n== All results in microseconds\nwarming up...\nRTT|  00:00:01  (periodic user-mode task, 100 us period, priority 99)\nRTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst\nRTD|      3.507|      7.674|     27.321|       0|     0|      2.908|     51.579\nRTD|     -0.517|      7.724|     30.472|       2|     0|     -0.517|     51.579\n---|-----------|-----------|-----------|--------|------|-------------------------\nRTS|     -0.517|      7.797|     51.579|       2|     0|    00:00:02/00:00:02\n";

    fn read(text: &str) -> Result<RunRecord, ImportError> {
        let o = ImportOptions::default();
        parse(&Source {
            path: Path::new("x.txt"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options: &o,
        })
    }

    #[test]
    fn rtd_lines_become_windows_and_rts_the_result() {
        assert_eq!(detect(OUT), 95);
        let r = read(OUT).unwrap();
        let t = &r.threads[0];
        assert_eq!(t.interval_ns, 100_000);
        assert_eq!(t.priority, 99);
        assert_eq!(t.stats.max_ns, Some(51_579));
        assert_eq!(t.stats.min_ns, Some(0));
        assert_eq!(t.stats.samples, 20_000);
        assert_eq!(t.stats.missed_periods, 2);
        assert_eq!(t.windows.count, vec![10_000, 10_000]);
        assert_eq!(t.windows.max_ns, vec![27_321, 30_472]);
        assert_eq!(t.windows.missed, vec![0, 2]);
        assert_eq!(r.duration_ns, 2_000_000_000);
        assert!(r.warnings.iter().any(|w| w.contains("below 0")));
        assert_eq!(r.threads[0].histogram.resolution_ns, 1000);
    }

    #[test]
    fn histogram_lines_give_the_samples() {
        let text = format!(
            "{OUT}---|--param|----range-|--samples\nHSD|    min|   2 -  3 |        2\nHSD|    avg|   7 -  8 |    19990\nHSD|    avg|  51 - 52 |       10\nHSH|--param|--samples-|--average--|---stddev--\nHSS|    avg|     20000|      7.000|      0.100\n"
        );
        let r = read(&text).unwrap();
        assert_eq!(r.threads[0].stats.samples, 20_000);
        assert_eq!(
            r.threads[0]
                .histogram
                .to_histogram()
                .unwrap()
                .count_above(50_000),
            10
        );
        assert!(r.threads[0].stats.p99_ns.is_some());
    }

    /// EVL's latmus prints no histogram: its 5 000 samples and their
    /// extremes are judged against its 1 ms period (they were "not
    /// judged: no samples").
    #[test]
    fn a_latmus_output_without_histogram_is_judged_against_its_period() {
        let r = read(include_str!("../../tests/fixtures/import/evl-latmus.txt")).unwrap();
        assert_eq!(r.overall.samples, 5000);
        assert_eq!(r.deadline_ns(), Some(1_000_000));
        assert_eq!(
            crate::report::verdict::deadline_status(&r),
            "met (the period, 1 ms): no period later"
        );
        let v = crate::report::verdict::verdict(&r);
        assert!(
            v.headline.starts_with(
                "Deadline met: none of the 5\u{202f}000 periods woke later than the deadline (the period, 1 ms)"
            ),
            "{}",
            v.headline
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = read(&OUT.replace("|      7.724|", "|      7.7x4|")).unwrap_err();
        assert_eq!(e.line, Some(8));
        assert!(e.message.contains("lat avg"), "{e}");
        let e = read(&OUT.replace("00:00:02/00:00:02", "soon")).unwrap_err();
        assert_eq!(e.line, Some(10));
        let e = read(
            &OUT.replace("== Sampling period: 100 us\n", "")
                .replace(", 100 us period", ""),
        )
        .unwrap_err();
        assert!(e.message.contains("Sampling period"), "{e}");
        let e =
            read(&OUT.replace("|       2|     0|     -0.517|", "|       2|     0|")).unwrap_err();
        assert!(e.message.contains("7 fields"), "{e}");
    }
}
