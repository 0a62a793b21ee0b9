//! What a load achieved, as measured rather than as intended: CPU
//! utilisation per CPU (user, system, iowait, irq, softirq, and steal:
//! time a hypervisor gave to someone else), context
//! switches, interrupts and forks per second (/proc/stat), disk bytes and
//! operations per second (/proc/diskstats, whole disks only) and network
//! bytes per second (/proc/net/dev, loopback included), sampled about
//! once a second.
//!
//! Summaries (time-weighted averages and maxima) are exact; the per-second
//! series is bounded (neighbouring points are merged when it grows past
//! [`SERIES_CAPACITY`]), so a run of days stays small. Runs on the control
//! thread, never on a measuring one.

use crate::text::rank::MANY_THREADS;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Points kept in the series before neighbours are merged.
pub const SERIES_CAPACITY: usize = 1800;
/// Time between samples.
pub const SAMPLE_EVERY_NS: u64 = 1_000_000_000;

/// Raw counters at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Per CPU: user, nice, system, idle, iowait, irq, softirq, steal
    /// (USER_HZ ticks).
    pub cpus: Vec<(usize, [u64; 8])>,
    pub ctxt: u64,
    pub intr: u64,
    pub forks: u64,
    pub disk_read_bytes: u64,
    pub disk_write_bytes: u64,
    pub disk_ios: u64,
    pub net_bytes: u64,
}

impl Counters {
    /// Read everything now.
    pub fn read() -> Option<Counters> {
        let mut c = Counters::default();
        parse_stat(&std::fs::read_to_string("/proc/stat").ok()?, &mut c)?;
        let disks = whole_disks();
        if let Ok(t) = std::fs::read_to_string("/proc/diskstats") {
            parse_diskstats(&t, &disks, &mut c);
        }
        if let Ok(t) = std::fs::read_to_string("/proc/net/dev") {
            parse_netdev(&t, &mut c);
        }
        Some(c)
    }
}

/// Block devices that are disks (they have a device), not partitions,
/// loops, RAM disks or device-mapper volumes (which would count twice).
fn whole_disks() -> BTreeSet<String> {
    std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("device").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub fn parse_stat(text: &str, c: &mut Counters) -> Option<()> {
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let key = f.next()?;
        if let Some(n) = key.strip_prefix("cpu") {
            if n.is_empty() {
                continue;
            }
            let cpu: usize = n.parse().ok()?;
            let mut v = [0u64; 8];
            for slot in v.iter_mut() {
                *slot = f.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            }
            c.cpus.push((cpu, v));
        } else {
            let first = || f.clone().next().and_then(|x| x.parse::<u64>().ok());
            match key {
                "ctxt" => c.ctxt = first()?,
                "intr" => c.intr = first()?,
                "processes" => c.forks = first()?,
                _ => {}
            }
        }
    }
    Some(())
}

pub fn parse_diskstats(text: &str, disks: &BTreeSet<String>, c: &mut Counters) {
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 || !disks.contains(f[2]) {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        c.disk_ios += n(3) + n(7);
        c.disk_read_bytes += n(5) * 512;
        c.disk_write_bytes += n(9) * 512;
    }
}

pub fn parse_netdev(text: &str, c: &mut Counters) {
    for line in text.lines().skip(2) {
        let Some((_, rest)) = line.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        if f.len() >= 9 {
            c.net_bytes += f[0] + f[8];
        }
    }
}

/// Rates over one interval.
#[derive(Clone, Debug, Default, PartialEq)]
struct Point {
    end_offset_ns: u64,
    dt_ns: u64,
    /// Per CPU: busy, user, system, iowait, irq, softirq, steal (%).
    cpu: Vec<[f64; 7]>,
    rates: [f64; 7],
}

const RATE_NAMES: [&str; 7] = [
    "context_switches_per_s",
    "interrupts_per_s",
    "forks_per_s",
    "disk_read_bytes_per_s",
    "disk_write_bytes_per_s",
    "disk_ios_per_s",
    "net_bytes_per_s",
];
const CPU_NAMES: [&str; 7] = [
    "busy", "user", "system", "iowait", "irq", "softirq", "steal",
];

fn interval(a: &Counters, b: &Counters, end_offset_ns: u64, dt_ns: u64) -> Point {
    let secs = dt_ns as f64 / 1e9;
    let mut cpu = Vec::new();
    for (i, (_, vb)) in b.cpus.iter().enumerate() {
        let va = a.cpus.get(i).map(|x| x.1).unwrap_or(*vb);
        let d: Vec<f64> = (0..8).map(|k| vb[k].saturating_sub(va[k]) as f64).collect();
        let total: f64 = d.iter().sum();
        let pct = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
        // Busy: running anything here; steal (a hypervisor running
        // someone else) is kept apart.
        let busy = total - d[3] - d[4] - d[7];
        cpu.push([
            pct(busy),
            pct(d[0] + d[1]),
            pct(d[2]),
            pct(d[4]),
            pct(d[5]),
            pct(d[6]),
            pct(d[7]),
        ]);
    }
    let r = |x: u64, y: u64| {
        if secs > 0.0 {
            y.saturating_sub(x) as f64 / secs
        } else {
            0.0
        }
    };
    Point {
        end_offset_ns,
        dt_ns,
        cpu,
        rates: [
            r(a.ctxt, b.ctxt),
            r(a.intr, b.intr),
            r(a.forks, b.forks),
            r(a.disk_read_bytes, b.disk_read_bytes),
            r(a.disk_write_bytes, b.disk_write_bytes),
            r(a.disk_ios, b.disk_ios),
            r(a.net_bytes, b.net_bytes),
        ],
    }
}

fn merge(a: &Point, b: &Point) -> Point {
    let (wa, wb) = (a.dt_ns as f64, b.dt_ns as f64);
    let w = (wa + wb).max(1.0);
    let mix = |x: f64, y: f64| (x * wa + y * wb) / w;
    Point {
        end_offset_ns: b.end_offset_ns,
        dt_ns: a.dt_ns + b.dt_ns,
        cpu: a
            .cpu
            .iter()
            .zip(b.cpu.iter())
            .map(|(x, y)| std::array::from_fn(|k| mix(x[k], y[k])))
            .collect(),
        rates: std::array::from_fn(|k| mix(a.rates[k], b.rates[k])),
    }
}

/// Samples /proc and keeps the summary and the bounded series.
#[derive(Debug, Default)]
pub struct Sampler {
    origin_ns: Option<u64>,
    last: Option<(u64, Counters)>,
    cpu_ids: Vec<usize>,
    points: Vec<Point>,
    total_ns: u64,
    intervals: u64,
    /// Time-weighted sums (value × dt) and maxima.
    cpu_sum: Vec<[f64; 7]>,
    cpu_max: Vec<f64>,
    rate_sum: [f64; 7],
    rate_max: [f64; 7],
}

impl Sampler {
    pub fn new() -> Sampler {
        Sampler::default()
    }

    /// Count from `origin_ns` (CLOCK_MONOTONIC) on; anything before is
    /// dropped. The first sample at or after it is the baseline.
    pub fn set_origin(&mut self, origin_ns: u64) {
        *self = Sampler {
            origin_ns: Some(origin_ns),
            ..Sampler::default()
        };
    }

    /// Take a sample if one is due at `now_ns`.
    pub fn maybe_sample(&mut self, now_ns: u64) {
        let Some(origin) = self.origin_ns else {
            return;
        };
        if now_ns < origin {
            return;
        }
        if self
            .last
            .as_ref()
            .is_some_and(|(t, _)| now_ns < t + SAMPLE_EVERY_NS)
        {
            return;
        }
        if let Some(c) = Counters::read() {
            self.push(now_ns, c);
        }
    }

    /// Take a final sample now (at the end of the run).
    pub fn finish(&mut self, now_ns: u64) {
        if self.origin_ns.is_some_and(|o| now_ns >= o)
            && self
                .last
                .as_ref()
                .is_some_and(|(t, _)| now_ns > t + 100_000_000)
            && let Some(c) = Counters::read()
        {
            self.push(now_ns, c);
        }
    }

    fn push(&mut self, now_ns: u64, c: Counters) {
        let origin = self.origin_ns.unwrap_or(now_ns);
        if let Some((t, prev)) = self.last.take() {
            let dt = now_ns.saturating_sub(t);
            if dt > 0 {
                let p = interval(&prev, &c, now_ns - origin, dt);
                self.account(&p);
                self.points.push(p);
                if self.points.len() > SERIES_CAPACITY {
                    self.points = self
                        .points
                        .chunks(2)
                        .map(|ch| {
                            if ch.len() == 2 {
                                merge(&ch[0], &ch[1])
                            } else {
                                ch[0].clone()
                            }
                        })
                        .collect();
                }
            }
        } else {
            self.cpu_ids = c.cpus.iter().map(|(i, _)| *i).collect();
        }
        self.last = Some((now_ns, c));
    }

    fn account(&mut self, p: &Point) {
        let w = p.dt_ns as f64;
        self.total_ns += p.dt_ns;
        self.intervals += 1;
        if self.cpu_sum.len() < p.cpu.len() {
            self.cpu_sum.resize(p.cpu.len(), [0.0; 7]);
            self.cpu_max.resize(p.cpu.len(), 0.0);
        }
        for (i, v) in p.cpu.iter().enumerate() {
            for (sum, x) in self.cpu_sum[i].iter_mut().zip(v) {
                *sum += x * w;
            }
            self.cpu_max[i] = self.cpu_max[i].max(v[0]);
        }
        for k in 0..7 {
            self.rate_sum[k] += p.rates[k] * w;
            self.rate_max[k] = self.rate_max[k].max(p.rates[k]);
        }
    }

    /// The summary and series, or `None` before two samples.
    pub fn summary(&self) -> Option<Value> {
        if self.intervals == 0 {
            return None;
        }
        let w = self.total_ns as f64;
        let all_busy = if self.cpu_sum.is_empty() {
            0.0
        } else {
            self.cpu_sum.iter().map(|s| s[0]).sum::<f64>() / w / self.cpu_sum.len() as f64
        };
        let mut top = serde_json::Map::new();
        top.insert(
            "source".into(),
            json!("/proc/stat, /proc/diskstats (whole disks), /proc/net/dev (all interfaces, loopback included)"),
        );
        top.insert("duration_ns".into(), json!(self.total_ns));
        top.insert("samples".into(), json!(self.intervals));
        top.insert("cpu_busy_pct_avg".into(), json!(r1(all_busy)));
        top.insert("cpus".into(), Value::Array(self.per_cpu()));
        for (k, name) in RATE_NAMES.iter().enumerate() {
            top.insert(
                (*name).into(),
                json!({"avg": r0(self.rate_sum[k] / w), "max": r0(self.rate_max[k])}),
            );
        }
        top.insert("series".into(), Value::Object(self.series()));
        Some(Value::Object(top))
    }

    /// Per CPU: the average of each time share and the busiest interval.
    fn per_cpu(&self) -> Vec<Value> {
        let w = self.total_ns as f64;
        self.cpu_sum
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut o = serde_json::Map::new();
                o.insert(
                    "cpu".into(),
                    json!(self.cpu_ids.get(i).copied().unwrap_or(i)),
                );
                for (k, name) in CPU_NAMES.iter().enumerate() {
                    o.insert(format!("{name}_pct_avg"), json!(r1(s[k] / w)));
                }
                o.insert("busy_pct_max".into(), json!(r1(self.cpu_max[i])));
                Value::Object(o)
            })
            .collect()
    }

    /// The series over time: interval ends, busy and steal per CPU, and
    /// each rate.
    fn series(&self) -> serde_json::Map<String, Value> {
        let mut series = serde_json::Map::new();
        series.insert(
            "end_offset_ns".into(),
            json!(
                self.points
                    .iter()
                    .map(|p| p.end_offset_ns)
                    .collect::<Vec<_>>()
            ),
        );
        series.insert("cpu_busy_pct".into(), json!(self.cpu_series(0)));
        series.insert("cpu_steal_pct".into(), json!(self.cpu_series(6)));
        for (k, name) in RATE_NAMES.iter().enumerate() {
            series.insert(
                (*name).into(),
                json!(
                    self.points
                        .iter()
                        .map(|p| r0(p.rates[k]))
                        .collect::<Vec<_>>()
                ),
            );
        }
        series
    }

    /// Time share `k` (0 busy, 6 steal) per CPU, interval by interval.
    fn cpu_series(&self, k: usize) -> Vec<Vec<f64>> {
        (0..self.cpu_sum.len())
            .map(|i| {
                self.points
                    .iter()
                    .map(|p| r1(p.cpu.get(i).map(|v| v[k]).unwrap_or(0.0)))
                    .collect()
            })
            .collect()
    }
}

/// Rounded to a tenth (percentages).
fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Rounded to a whole number (rates).
fn r0(x: f64) -> f64 {
    x.round()
}

/// One line for people: what the load achieved.
pub fn describe(achieved: &Value) -> String {
    let f = |k: &str| achieved[k]["avg"].as_f64().unwrap_or(0.0);
    let cpus: Vec<(u64, f64)> = achieved["cpus"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["cpu"].as_u64().unwrap_or(0),
                        c["busy_pct_avg"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    format!(
        "CPU busy {:.0}% ({}){}, {:.0} context switches/s, {:.0} interrupts/s, {:.0} forks/s, disk {:.1} MB/s ({:.0} IO/s), network {:.1} MB/s",
        achieved["cpu_busy_pct_avg"].as_f64().unwrap_or(0.0),
        per_cpu(&cpus),
        steal_note(achieved),
        f("context_switches_per_s"),
        f("interrupts_per_s"),
        f("forks_per_s"),
        (f("disk_read_bytes_per_s") + f("disk_write_bytes_per_s")) / 1e6,
        f("disk_ios_per_s"),
        f("net_bytes_per_s") / 1e6,
    )
}

/// Each CPU's busy share, or above [`MANY_THREADS`] CPUs their count and
/// range and the [`LEAST_BUSY`] least busy (where a load fell short).
fn per_cpu(cpus: &[(u64, f64)]) -> String {
    let one = |&(cpu, pct): &(u64, f64)| format!("cpu{cpu} {pct:.0}%");
    if cpus.len() <= MANY_THREADS {
        return cpus.iter().map(one).collect::<Vec<_>>().join(", ");
    }
    let mut by_busy = cpus.to_vec();
    // Stable: equal shares keep CPU order.
    by_busy.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (lo, hi) = (by_busy[0].1, by_busy[by_busy.len() - 1].1);
    let least: Vec<String> = by_busy.iter().take(LEAST_BUSY).map(one).collect();
    format!(
        "{} CPUs, {lo:.0}% to {hi:.0}%; least busy: {}",
        cpus.len(),
        least.join(", ")
    )
}

/// The least busy CPUs [`describe`] names when there are many.
const LEAST_BUSY: usize = 3;

fn steal_note(achieved: &Value) -> String {
    let steal: f64 = achieved["cpus"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["steal_pct_avg"].as_f64())
                .sum::<f64>()
                / a.len().max(1) as f64
        })
        .unwrap_or(0.0);
    if steal >= 1.0 {
        format!(" with {steal:.0}% stolen by the hypervisor")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = "cpu  10 0 10 80 0 0 0 0 0 0\n\
        cpu0 10 0 10 80 0 0 0 0 0 0\n\
        cpu1 0 0 0 100 0 0 0 0 0 0\n\
        intr 1000 5 6\nctxt 5000\nbtime 1\nprocesses 300\n";
    const STAT_B: &str = "cpu  0 0 0 0 0 0 0 0 0 0\n\
        cpu0 60 0 30 100 10 0 0 0 0 0\n\
        cpu1 0 0 0 180 0 0 0 20 0 0\n\
        intr 3000 5 6\nctxt 9000\nbtime 1\nprocesses 310\n";

    fn counters(stat: &str, disk_sectors: u64) -> Counters {
        let mut c = Counters::default();
        parse_stat(stat, &mut c).unwrap();
        let disks: BTreeSet<String> = ["vda".to_string()].into();
        parse_diskstats(
            &format!(
                " 253 0 vda 10 0 {disk_sectors} 0 20 0 {disk_sectors} 0 0 0 0\n 253 1 vda1 99 0 999 0 99 0 999 0 0 0 0\n"
            ),
            &disks,
            &mut c,
        );
        parse_netdev(
            "Inter-|   Receive\n face |bytes\n    lo: 1000 1 0 0 0 0 0 0 1000 1 0 0 0 0 0 0\n",
            &mut c,
        );
        c
    }

    #[test]
    fn parsers_read_the_counters_and_skip_partitions() {
        let c = counters(STAT_A, 100);
        assert_eq!(c.cpus.len(), 2);
        assert_eq!(c.cpus[0], (0, [10, 0, 10, 80, 0, 0, 0, 0]));
        assert_eq!((c.ctxt, c.intr, c.forks), (5000, 1000, 300));
        assert_eq!(c.disk_read_bytes, 100 * 512);
        assert_eq!(c.disk_ios, 30);
        assert_eq!(c.net_bytes, 2000);
    }

    #[test]
    fn rates_and_utilisation_over_an_interval() {
        let mut s = Sampler::new();
        s.set_origin(1_000);
        s.push(1_000, counters(STAT_A, 100));
        s.push(2_000_001_000, counters(STAT_B, 300));
        let v = s.summary().unwrap();
        // cpu0: +50 user, +20 system, +20 idle, +10 iowait out of 100.
        assert_eq!(v["cpus"][0]["busy_pct_avg"], 70.0);
        assert_eq!(v["cpus"][0]["user_pct_avg"], 50.0);
        assert_eq!(v["cpus"][0]["iowait_pct_avg"], 10.0);
        assert_eq!(v["cpus"][1]["busy_pct_avg"], 0.0);
        assert_eq!(v["cpus"][1]["steal_pct_avg"], 20.0);
        assert!(describe(&v).contains("10% stolen"), "{}", describe(&v));
        assert_eq!(v["cpu_busy_pct_avg"], 35.0);
        assert_eq!(v["context_switches_per_s"]["avg"], 2000.0);
        assert_eq!(v["interrupts_per_s"]["avg"], 1000.0);
        assert_eq!(v["forks_per_s"]["avg"], 5.0);
        assert_eq!(v["disk_read_bytes_per_s"]["avg"], 51200.0);
        assert_eq!(v["series"]["end_offset_ns"][0], 2_000_000_000u64);
        assert_eq!(v["series"]["cpu_steal_pct"][1][0], 20.0);
        assert!(
            describe(&v).contains("2000 context switches/s"),
            "{}",
            describe(&v)
        );
    }

    #[test]
    fn many_cpus_are_summed_up_by_their_range_and_the_least_busy() {
        let few: Vec<(u64, f64)> = (0..16).map(|c| (c, 90.0)).collect();
        assert!(per_cpu(&few).starts_with("cpu0 90%, cpu1 90%"));
        assert_eq!(per_cpu(&few).matches("cpu").count(), 16);
        let mut many: Vec<(u64, f64)> = (0..128).map(|c| (c, 95.0)).collect();
        many[7].1 = 12.0;
        many[100].1 = 40.0;
        many[3].1 = 100.0;
        assert_eq!(
            per_cpu(&many),
            "128 CPUs, 12% to 100%; least busy: cpu7 12%, cpu100 40%, cpu0 95%"
        );
        let v = json!({"cpu_busy_pct_avg": 95.0, "cpus": many
            .iter()
            .map(|(c, p)| json!({"cpu": c, "busy_pct_avg": p}))
            .collect::<Vec<_>>()});
        assert!(
            describe(&v).starts_with("CPU busy 95% (128 CPUs, 12% to 100%; least busy: cpu7 12%"),
            "{}",
            describe(&v)
        );
    }

    #[test]
    fn the_series_stays_bounded_and_the_summary_exact() {
        let mut s = Sampler::new();
        s.set_origin(0);
        let mut c = counters(STAT_A, 0);
        for i in 0..(SERIES_CAPACITY as u64 * 3) {
            c.ctxt += if i % 2 == 0 { 100 } else { 300 };
            s.push(i * 1_000_000_000, c.clone());
        }
        assert!(s.points.len() <= SERIES_CAPACITY);
        let v = s.summary().unwrap();
        assert_eq!(v["context_switches_per_s"]["max"], 300.0);
        assert_eq!(v["context_switches_per_s"]["avg"], 200.0);
        assert_eq!(v["samples"], SERIES_CAPACITY as u64 * 3 - 1);
    }

    #[test]
    fn nothing_before_the_origin() {
        let mut s = Sampler::new();
        s.set_origin(5_000_000_000);
        s.maybe_sample(1_000);
        assert!(s.last.is_none());
        assert!(s.summary().is_none());
    }
}
