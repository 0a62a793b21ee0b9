//! Parsing and printing of times and CPU lists, with explicit units.
//!
//! Durations of runs take a bare number as seconds (cyclictest's `-D`);
//! intervals and latency thresholds take a bare number as microseconds
//! (cyclictest's `-i`, `-b`). Every printed time carries its unit.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("'{0}' is not a duration: use a number with a unit, e.g. 250us, 2ms, 10s, 15m, 1h30m")]
    Duration(String),
    #[error("'{0}' is not a CPU list: use e.g. 0, 2-3 or 0,2,4-7")]
    CpuList(String),
    #[error(
        "'{0}' is not a size: use a whole number of bytes with K, M, G or T (powers of 1024), e.g. 512M, 4G"
    )]
    Size(String),
}

const NS: u64 = 1;
const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn unit_ns(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => NS,
        "us" | "µs" | "usec" => US,
        "ms" | "msec" => MS,
        "s" | "sec" => S,
        "m" | "min" => 60 * S,
        "h" => 3600 * S,
        "d" => 86_400 * S,
        _ => return None,
    })
}

/// Parse `"1h30m"`, `"250us"`, `"1.5ms"` or a bare number (in `bare_unit_ns`)
/// into nanoseconds.
pub fn parse_time_ns(text: &str, bare_unit_ns: u64) -> Result<u64, ParseError> {
    let err = || ParseError::Duration(text.to_string());
    let t = text.trim();
    if t.is_empty() {
        return Err(err());
    }
    let mut total: u128 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(err());
        }
        let num: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let mult = if unit.is_empty() {
            if !rest.is_empty() || total != 0 {
                return Err(err());
            }
            bare_unit_ns
        } else {
            unit_ns(unit).ok_or_else(err)?
        };
        let v = num * mult as f64;
        if !v.is_finite() || v > u64::MAX as f64 {
            return Err(err());
        }
        total += v.round() as u128;
    }
    u64::try_from(total).map_err(|_| err())
}

/// A run duration: bare numbers are seconds (as cyclictest's `-D`).
pub fn parse_duration_ns(text: &str) -> Result<u64, ParseError> {
    parse_time_ns(text, S)
}

/// An interval or latency threshold: bare numbers are microseconds (as
/// cyclictest's `-i` and `-b`).
pub fn parse_micros_ns(text: &str) -> Result<u64, ParseError> {
    parse_time_ns(text, US)
}

/// Parse a CPU list such as `0,2-3,8-15:2` (the kernel's cpulist format,
/// with an optional stride) into sorted, de-duplicated CPU numbers.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, ParseError> {
    let err = || ParseError::CpuList(text.to_string());
    let mut cpus = Vec::new();
    let t = text.trim();
    if t.is_empty() {
        return Err(err());
    }
    for part in t.split(',') {
        let part = part.trim();
        let (range, stride) = match part.split_once(':') {
            Some((r, s)) => (r, s.parse::<usize>().map_err(|_| err())?),
            None => (part, 1),
        };
        if stride == 0 {
            return Err(err());
        }
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (
                a.parse::<usize>().map_err(|_| err())?,
                b.parse::<usize>().map_err(|_| err())?,
            ),
            None => {
                let v = range.parse::<usize>().map_err(|_| err())?;
                (v, v)
            }
        };
        if lo > hi || hi > 65_535 {
            return Err(err());
        }
        cpus.extend((lo..=hi).step_by(stride));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// A parsed CPU list, as a clap value (in a request to a board: the
/// CPUs, a list of numbers).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct CpuList(pub Vec<usize>);

impl std::str::FromStr for CpuList {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_cpu_list(s).map(CpuList)
    }
}

/// Format CPUs as a compact kernel-style list (`0-3,6`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            format!("{start}")
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Parse a kernel CPU mask in hex (`3`, `ff,ffffffff`: 32-bit groups,
/// most significant first) into CPU numbers.
pub fn parse_cpu_mask(text: &str) -> Result<Vec<usize>, ParseError> {
    let err = || ParseError::CpuList(text.to_string());
    let t = text.trim();
    if t.is_empty() {
        return Err(err());
    }
    let digits: String = t.chars().filter(|c| *c != ',').collect();
    let mut cpus = Vec::new();
    for (i, c) in digits.chars().rev().enumerate() {
        let v = c.to_digit(16).ok_or_else(err)? as usize;
        for bit in 0..4 {
            if v & (1 << bit) != 0 {
                cpus.push(i * 4 + bit);
            }
        }
    }
    Ok(cpus)
}

/// Format CPUs as a kernel hex mask in 32-bit groups (`3`, `1,00000000`).
pub fn format_cpu_mask(cpus: &[usize]) -> String {
    let top = cpus.iter().copied().max().unwrap_or(0);
    let mut groups = vec![0u32; top / 32 + 1];
    for &c in cpus {
        groups[c / 32] |= 1 << (c % 32);
    }
    let mut out = format!("{:x}", groups[groups.len() - 1]);
    for g in groups.iter().rev().skip(1) {
        out.push_str(&format!(",{g:08x}"));
    }
    out
}

/// Nanoseconds as microseconds with 0.1 µs precision, unit included
/// (`"12.3us"`).
pub fn fmt_us(ns: u64) -> String {
    format!("{:.1}us", ns as f64 / 1000.0)
}

/// Nanoseconds as microseconds with 0.1 µs precision, number only.
pub fn us1(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// A table cell in microseconds with 0.1 µs precision (no unit: the
/// column header carries it); `-` when absent.
pub fn us_cell(ns: Option<u64>) -> String {
    ns.map(us1).unwrap_or_else(|| "-".into())
}

/// The sign in front of a figure that is only a lower bound
/// ([`crate::stated::Stated::AtLeast`]), in every view.
pub const AT_LEAST: &str = "≥";

/// Like [`us_cell_f`] for a figure that may be a lower bound: `≥40.0`
/// ([`AT_LEAST`]) when it is.
pub fn us_cell_stated(v: Option<crate::stated::Stated<f64>>) -> String {
    match v {
        Some(crate::stated::Stated::AtLeast(ns)) => format!("{AT_LEAST}{}", us_cell_f(Some(ns))),
        v => us_cell_f(v.map(|v| v.value())),
    }
}

/// Like [`us_cell`] for a fractional value (averages).
pub fn us_cell_f(ns: Option<f64>) -> String {
    ns.map(|v| format!("{:.1}", v / 1000.0))
        .unwrap_or_else(|| "-".into())
}

/// How long a run lasted, as every view shows it: to the second from
/// 10 s on, to 0.1 s from 1 s, else to the millisecond; so a run asked
/// for 10 s that took 10.093 s reads `10s` in the list, its page, its
/// verdict and a comparison alike.
pub fn run_length(ns: u64) -> u64 {
    let step = if ns >= 10 * S {
        S
    } else if ns >= S {
        S / 10
    } else {
        MS
    };
    // Saturating: an imported run may state any length.
    ns.saturating_add(step / 2) / step * step
}

/// A run's length (see [`run_length`]), as [`fmt_duration`] writes it.
pub fn fmt_run_length(ns: u64) -> String {
    fmt_duration(run_length(ns))
}

/// A duration the way a person reads it: `"250us"`, `"2ms"`, `"1.5s"`,
/// `"1h02m03s"`.
pub fn fmt_duration(ns: u64) -> String {
    if ns < US {
        format!("{ns}ns")
    } else if ns < MS {
        trim_float(ns as f64 / US as f64, "us")
    } else if ns < S {
        trim_float(ns as f64 / MS as f64, "ms")
    } else if ns < 60 * S {
        trim_float(ns as f64 / S as f64, "s")
    } else {
        let secs = ns / S;
        let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
        if h > 0 {
            format!("{h}h{m:02}m{s:02}s")
        } else {
            format!("{m}m{s:02}s")
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01: `(year, month, day)`.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A wall-clock time in UTC, to the second: `"2026-11-20 23:37:09 UTC"`.
pub fn fmt_unix_utc(unix_ns: u64) -> String {
    let secs = (unix_ns / S) as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02} UTC",
        t / 3600,
        (t / 60) % 60,
        t % 60
    )
}

/// A run's start in UTC ([`fmt_unix_utc`]), or `unknown` for 0: what a
/// record holds when its source did not say when it ran (an import's
/// file's modification time is no run's start).
pub fn fmt_start_utc(started_at_unix_ns: u64) -> String {
    if started_at_unix_ns == 0 {
        "unknown".into()
    } else {
        fmt_unix_utc(started_at_unix_ns)
    }
}

/// A wall-clock time in UTC as RFC 3339, to the second:
/// `"2026-11-20T23:37:09Z"` (what dashboards parse as a time).
pub fn fmt_rfc3339(unix_ns: u64) -> String {
    let s = fmt_unix_utc(unix_ns);
    format!("{}Z", s.trim_end_matches(" UTC").replacen(' ', "T", 1))
}

/// `s` in at most `max_chars` characters: when cut, the last is `…`.
pub fn shorten(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// Parse a size in bytes: a bare number, or one with `K`, `M`, `G`, `T`
/// (powers of 1024; `KiB`, `MB`... are read the same).
pub fn parse_size_bytes(text: &str) -> Result<u64, ParseError> {
    let bad = || ParseError::Size(text.to_string());
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().map_err(|_| bad())?;
    let shift = match t[digits..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// A size in bytes as `256 MiB`, `2 GiB`, `1.5 KiB`, `12 bytes`.
pub fn fmt_size(bytes: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if bytes >= 1u64 << shift {
            return trim_float(bytes as f64 / (1u64 << shift) as f64, &format!(" {unit}"));
        }
    }
    format!("{bytes} bytes")
}

/// `v` with three decimals at most, trailing zeros cut, then `unit`:
/// `1.5ms`, `250us`, `0.125` (with an empty unit).
pub(crate) fn trim_float(v: f64, unit: &str) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{unit}")
}

/// A point in time given as a UTC date (`2026-11-20`), a date and time
/// (`2026-11-20 14:30`, `2026-11-20T14:30:05Z`), or a time before `now`
/// (`36h`, `7d`). A day alone is its start, or with `end_of_day` the
/// start of the next one.
pub fn parse_date_ns(s: &str, now_unix_ns: u64, end_of_day: bool) -> Result<u64, String> {
    const S: u64 = 1_000_000_000;
    let bad = || {
        format!(
            "cannot read the date '{s}': give 2026-11-20, \"2026-11-20 14:30\" (UTC) or a time ago such as 36h or 7d"
        )
    };
    let t = s.trim();
    let t = t
        .strip_suffix(" UTC")
        .or_else(|| t.strip_suffix('Z'))
        .unwrap_or(t);
    if t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && !t.contains('-')
        && let Ok(ago) = parse_time_ns(t, S)
    {
        return Ok(now_unix_ns.saturating_sub(ago));
    }
    let (day, time) = match t.split_once([' ', 'T']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let num = |x: &str| x.parse::<u32>().map_err(|_| bad());
    let ymd: Vec<&str> = day.split('-').collect();
    let [y, m, d] = ymd[..] else {
        return Err(bad());
    };
    let (y, m, d) = (num(y)?, num(m)?, num(d)?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let days = days_from_civil(i64::from(y), m, d);
    let mut secs = u64::try_from(days).map_err(|_| bad())? * 86_400;
    match time {
        Some(tm) => {
            let hms: Vec<&str> = tm.split(':').collect();
            let (h, mi, se) = match hms[..] {
                [h, mi] => (num(h)?, num(mi)?, 0),
                [h, mi, se] => (num(h)?, num(mi)?, num(se)?),
                _ => return Err(bad()),
            };
            if h > 23 || mi > 59 || se > 60 {
                return Err(bad());
            }
            secs += u64::from(h * 3600 + mi * 60 + se);
        }
        None if end_of_day => secs += 86_400,
        None => {}
    }
    Ok(secs * S)
}

#[cfg(test)]
mod tests {

    #[test]
    fn dates_are_utc_days_times_or_times_ago() {
        use super::parse_date_ns as parse_date;
        const S: u64 = 1_000_000_000;
        let day = 20_412 * 86_400 * S; // 2025-11-20
        assert_eq!(parse_date("2025-11-20", 0, false), Ok(day));
        assert_eq!(parse_date("2025-11-20", 0, true), Ok(day + 86_400 * S));
        assert_eq!(
            parse_date("2025-11-20 14:30", 0, true),
            Ok(day + 52_200 * S)
        );
        assert_eq!(
            parse_date("2025-11-20T14:30:05Z", 0, false),
            Ok(day + 52_205 * S)
        );
        assert_eq!(
            parse_date("2025-11-20 14:30:05 UTC", 0, false),
            Ok(day + 52_205 * S)
        );
        assert_eq!(parse_date("36h", 100 * 3600 * S, false), Ok(64 * 3600 * S));
        assert_eq!(parse_date("7d", 10 * 86_400 * S, false), Ok(3 * 86_400 * S));
        for bad in [
            "",
            "yesterday",
            "2025-13-01",
            "2025-11-20 25:00",
            "2025-11",
            "1969-01-01",
        ] {
            let e = parse_date(bad, 0, false).unwrap_err();
            assert!(e.contains("cannot read the date"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_run_length_reads_the_same_everywhere() {
        assert_eq!(fmt_run_length(10_093_000_000), "10s");
        assert_eq!(fmt_run_length(9_960_000_000), "10s");
        assert_eq!(fmt_run_length(2_049_000_000), "2s");
        assert_eq!(fmt_run_length(2_051_000_000), "2.1s");
        assert_eq!(fmt_run_length(250_400_000), "250ms");
        assert_eq!(fmt_run_length(3_600_400_000_000), "1h00m00s");
        assert_eq!(
            crate::text::num::duration(run_length(10_093_000_000)),
            "10 s"
        );
        // An imported length near 2^64 (a damaged status line) once
        // overflowed the rounding in every summary.
        assert_eq!(
            run_length(u64::MAX),
            u64::MAX / 1_000_000_000 * 1_000_000_000
        );
    }

    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size_bytes("512"), Ok(512));
        assert_eq!(parse_size_bytes("256M"), Ok(256 << 20));
        assert_eq!(parse_size_bytes("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size_bytes("1 kb"), Ok(1024));
        for bad in ["", "M", "1.5G", "-1", "3X", "99999999999T"] {
            assert!(parse_size_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(fmt_size(256 << 20), "256 MiB");
        assert_eq!(fmt_size(3 << 29), "1.5 GiB");
        assert_eq!(fmt_size(12), "12 bytes");
    }

    #[test]
    fn durations_with_units_and_bare_seconds() {
        assert_eq!(parse_duration_ns("10").unwrap(), 10 * S);
        assert_eq!(parse_duration_ns("10m").unwrap(), 600 * S);
        assert_eq!(parse_duration_ns("1h30m").unwrap(), 5400 * S);
        assert_eq!(parse_duration_ns("2d").unwrap(), 172_800 * S);
        assert_eq!(parse_duration_ns("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("500ms").unwrap(), 500 * MS);
        for bad in [
            "",
            "abc",
            "10x",
            "m",
            "1h30",
            "-5s",
            "1e3",
            "99999999999999999999d",
        ] {
            assert!(parse_duration_ns(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn intervals_default_to_microseconds() {
        assert_eq!(parse_micros_ns("1000").unwrap(), MS);
        assert_eq!(parse_micros_ns("250us").unwrap(), 250 * US);
        assert_eq!(parse_micros_ns("250µs").unwrap(), 250 * US);
        assert_eq!(parse_micros_ns("2ms").unwrap(), 2 * MS);
        assert_eq!(parse_micros_ns("100ns").unwrap(), 100);
        assert_eq!(parse_micros_ns("0").unwrap(), 0);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("3,1-2,1").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_cpu_list("0-7:2").unwrap(), vec![0, 2, 4, 6]);
        for bad in ["", "a", "3-1", "1-", ",", "0-3:0", "99999"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad}");
        }
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn cpu_masks() {
        assert_eq!(parse_cpu_mask("3").unwrap(), vec![0, 1]);
        assert_eq!(parse_cpu_mask("1,00000001").unwrap(), vec![0, 32]);
        assert_eq!(parse_cpu_mask("0000000a\n").unwrap(), vec![1, 3]);
        assert!(parse_cpu_mask("xyz").is_err());
        assert_eq!(format_cpu_mask(&[0, 1]), "3");
        assert_eq!(format_cpu_mask(&[0, 32]), "1,00000001");
        assert_eq!(format_cpu_mask(&[]), "0");
        for cpus in [vec![1], vec![0, 5, 31, 33, 64]] {
            assert_eq!(parse_cpu_mask(&format_cpu_mask(&cpus)).unwrap(), cpus);
        }
    }

    #[test]
    fn printing_carries_units() {
        assert_eq!(fmt_us(12_345), "12.3us");
        assert_eq!(us1(50), "0.1");
        assert_eq!(us_cell(Some(17_511)), "17.5");
        assert_eq!(us_cell(None), "-");
        assert_eq!(us_cell_f(Some(17_511.4)), "17.5");
        assert_eq!(fmt_duration(250_000), "250us");
        assert_eq!(fmt_duration(1_500_000_000), "1.5s");
        assert_eq!(fmt_duration(3723 * S), "1h02m03s");
    }

    #[test]
    fn shorten_counts_characters_and_marks_the_cut() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "ab…");
        assert_eq!(shorten("ééééé", 4), "ééé…");
        assert_eq!(shorten("", 0), "");
    }

    #[test]
    fn calendar_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in [-1000i64, 0, 59, 60, 11_016, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(fmt_unix_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(fmt_unix_utc(1_700_000_000 * S), "2023-11-14 22:13:20 UTC");
        // A leap day.
        assert_eq!(fmt_unix_utc(951_782_400 * S), "2000-02-29 00:00:00 UTC");
        assert_eq!(fmt_rfc3339(1_700_000_000 * S), "2023-11-14T22:13:20Z");
    }
}
