//! Numbers for people: latencies with an adapted unit (`438 µs`,
//! `3.43 ms`), set-up times, counts with thousands separators, durations,
//! probabilities, enums by their serde name (dates come from
//! [`crate::units::fmt_unix_utc`]).

/// A latency with the unit that suits it: `850 ns`, `12.3 µs`, `438 µs`,
/// `3.43 ms`, `1.20 s`.
pub fn latency(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 100_000 {
        format!("{:.1} µs", v / 1e3)
    } else if ns < 1_000_000 {
        format!("{:.0} µs", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.2} s", v / 1e9)
    }
}

/// A run's maximum (or another exact latency of a run), written the one
/// way every view writes it: microseconds with 0.1 µs, as the tables show
/// it (`12817.4 µs`), so prose and tables never disagree by a rounding.
pub fn max_latency(ns: u64) -> String {
    format!("{} µs", crate::units::us1(ns))
}

/// A quantile as [`max_latency`] writes it, `≥ 40.0 µs` when it is only
/// a lower bound ([`crate::stated::Stated`]).
pub fn stated_latency(v: crate::stated::Stated<u64>) -> String {
    match v {
        crate::stated::Stated::Exact(ns) => max_latency(ns),
        crate::stated::Stated::AtLeast(ns) => {
            format!("{} {}", crate::units::AT_LEAST, max_latency(ns))
        }
    }
}

/// `n` of `of` per million, the one way rates are written: three
/// significant digits at most (`400`, `12.5`, `0.833`), thousands
/// separated (`250 000`); `0` of none.
pub fn per_million(n: u64, of: u64) -> String {
    if n == 0 || of == 0 {
        return "0".into();
    }
    let v = n as f64 * 1e6 / of as f64;
    if v >= 100.0 {
        count(v.round() as u64)
    } else {
        significant(v)
    }
}

/// Three significant digits, trailing zeros trimmed (`0.833`, `12.5`).
fn significant(v: f64) -> String {
    let decimals = if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else {
        (2 - v.log10().floor() as i32).max(0) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A period or other set-up time, trimmed: `1 ms`, `500 µs`, `1.5 ms`,
/// `250 ns`, `0 s`.
pub fn period(ns: u64) -> String {
    let v = ns as f64;
    if ns == 0 {
        "0 s".into()
    } else if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{} µs", trim(v / 1e3))
    } else if ns < 1_000_000_000 {
        format!("{} ms", trim(v / 1e6))
    } else {
        format!("{} s", trim(v / 1e9))
    }
}

/// An integer with thin thousands separators: `1 234 567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, singular for one: `1 repetition`, `3 cells`
/// (the count as [`count`] writes it).
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// A count in short form for axis ticks: `1`, `10`, `1k`, `10k`, `1M`.
pub fn short_count(v: f64) -> String {
    let units = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, suffix) in units {
        if v >= scale {
            return format!("{}{suffix}", trim(v / scale));
        }
    }
    trim(v)
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A duration for prose: `20 s`, `15 min`, `2.5 h`, `3.1 days`.
pub fn duration(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 120.0 {
        format!("{} s", trim(s))
    } else if s < 2.0 * 3600.0 {
        format!("{} min", trim(s / 60.0))
    } else if s < 2.0 * 86_400.0 {
        format!("{} h", trim(s / 3600.0))
    } else {
        format!("{} days", trim(s / 86_400.0))
    }
}

/// A run's length for prose: [`duration`], with its hours beside it where
/// the length is counted in days ("3 days (72 hours)"): never "1 s (0.000
/// hours)".
pub fn duration_with_hours(ns: u64) -> String {
    let d = duration(ns);
    if ns >= 2 * 86_400 * 1_000_000_000 {
        format!("{d} ({} hours)", hours(ns))
    } else {
        d
    }
}

/// Hours, for "rests on N hours": two significant decimals.
pub fn hours(ns: u64) -> String {
    let h = ns as f64 / 3.6e12;
    if h >= 10.0 {
        format!("{h:.0}")
    } else if h >= 0.1 {
        format!("{h:.1}")
    } else {
        format!("{h:.3}")
    }
}

/// `10⁻³`-style power of ten (for probability ticks).
pub fn power_of_ten(exp: i32) -> String {
    if exp == 0 {
        return "1".into();
    }
    let sup = |c: char| match c {
        '-' => '⁻',
        '0' => '⁰',
        '1' => '¹',
        '2' => '²',
        '3' => '³',
        '4' => '⁴',
        '5' => '⁵',
        '6' => '⁶',
        '7' => '⁷',
        '8' => '⁸',
        _ => '⁹',
    };
    format!("10{}", exp.to_string().chars().map(sup).collect::<String>())
}

/// A probability for prose: `0.25`, `0.001`, `7.5·10⁻⁵`.
pub fn probability(p: f64) -> String {
    if p >= 0.001 {
        // Three significant digits: 0.003 is never "0".
        return significant(p.min(1.0));
    }
    let e = p.log10().floor() as i32;
    let m = p / 10f64.powi(e);
    let m = format!("{m:.1}");
    let m = m.trim_end_matches(".0");
    if m == "1" {
        power_of_ten(e)
    } else {
        format!("{m}·{}", power_of_ten(e))
    }
}

/// An enum's serde name (`complete`, `break_threshold`); empty for a
/// value that does not serialize to a string.
pub fn serde_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_has_its_hours_only_when_counted_in_days() {
        assert_eq!(duration_with_hours(1_000_000_000), "1 s");
        assert_eq!(
            duration_with_hours(5_400_000_000_000),
            duration(5_400_000_000_000)
        );
        let three_days = 3 * 86_400 * 1_000_000_000;
        assert_eq!(
            duration_with_hours(three_days),
            format!("{} (72 hours)", duration(three_days))
        );
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(counted(1, "repetition", "repetitions"), "1 repetition");
        assert_eq!(counted(0, "cell", "cells"), "0 cells");
        assert_eq!(counted(1200, "run", "runs"), "1\u{202f}200 runs");
    }

    #[test]
    fn latencies_pick_a_readable_unit() {
        assert_eq!(latency(850), "850 ns");
        assert_eq!(latency(12_345), "12.3 µs");
        assert_eq!(latency(438_016), "438 µs");
        assert_eq!(latency(3_432_529), "3.43 ms");
        assert_eq!(latency(1_200_000_000), "1.20 s");
        assert_eq!(period(1_000_000), "1 ms");
        assert_eq!(period(500_000), "500 µs");
        assert_eq!(period(1_500_000), "1.5 ms");
        assert_eq!(period(0), "0 s");
    }

    #[test]
    fn counts_and_durations() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_234_567), "1\u{202f}234\u{202f}567");
        assert_eq!(short_count(1.0), "1");
        assert_eq!(short_count(10_000.0), "10k");
        assert_eq!(short_count(2_500_000.0), "2.5M");
        assert_eq!(duration(20_000_000_000), "20 s");
        assert_eq!(duration(900_000_000_000), "15 min");
        assert_eq!(duration(9_000_000_000_000), "2.5 h");
        assert_eq!(duration(3 * 86_400_000_000_000), "3 days");
        assert_eq!(hours(36_000_000_000_000), "10");
        assert_eq!(hours(20_000_000_000), "0.006");
        assert_eq!(power_of_ten(-3), "10⁻³");
        assert_eq!(probability(0.25), "0.25");
        assert_eq!(probability(3.0 / 40_000.0), "7.5·10⁻⁵");
        assert_eq!(probability(1e-6), "10⁻⁶");
        assert_eq!(probability(3.0), "1");
        // 3/N for N = 1 000 is 0.003, never 0.
        assert_eq!(probability(3.0 / 1000.0), "0.003");
        assert_eq!(probability(3.0 / 2000.0), "0.0015");
        assert_eq!(max_latency(12_817_400), "12817.4 µs");
        assert_eq!(per_million(136, 199_927), "680");
        assert_eq!(per_million(1, 4), "250\u{202f}000");
        assert_eq!(per_million(3, 3_600_000), "0.833");
        assert_eq!(per_million(1, 80_000), "12.5");
        assert_eq!(per_million(0, 10), "0");
        assert_eq!(power_of_ten(0), "1");
        assert_eq!(power_of_ten(12), "10¹²");
    }
}
