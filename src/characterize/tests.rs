//! Tests of the registry, the validation, the verdict and the renderings
//! (text, side by side, HTML) on a small synthetic characterization.

use super::*;

/// A small characterization for the rendering tests: a mutex row, an
/// OS-noise row and both inversion rows.
pub(crate) fn sample(label: &str, scale: u64) -> Characterization {
    let row = |bench: &str, variant: &str, base: u64| BenchResult {
        bench: bench.into(),
        variant: variant.into(),
        cpu: 1,
        what: "test".into(),
        subtracted_ns: 30,
        stats: Stats {
            count: 10,
            min_ns: base,
            avg_ns: base * 2,
            p50_ns: base * 2,
            p99_ns: base * 3,
            p9999_ns: base * 4,
            max_ns: base * 5,
        },
        histogram: SparseHistogram::default(),
        noise: None,
        inversion: None,
    };
    let mut noise = row("os-noise", "CPU 1", 30 * scale);
    noise.noise = Some(NoiseDetail {
        duration_ns: 1_000_000_000,
        loops: 10,
        threshold_ns: 1_000,
        gaps_above_threshold: 2,
        noise_ns: 70_000,
        cpu_left_to_loop_percent: 99.993,
        explained_above_ns: None,
        explanations: vec![],
        largest_gaps: vec![
            Gap {
                gap_ns: 50_000,
                at_ns: 2_000_000,
            },
            Gap {
                gap_ns: 20_000,
                at_ns: 5_000,
            },
        ],
    });
    let inv = |p: &str, base: u64| {
        let mut r = row("priority-inversion", p, base);
        r.inversion = Some(InversionDetail {
            protocol: p.into(),
            hog_busy_ns: 10_000_000,
            critical_section_ns: 2_000_000,
            trials: 10,
            after_hog: Some(if p == "plain" { 10 } else { 0 }),
            before_hog: Some(if p == "pi" { 10 } else { 0 }),
        });
        r
    };
    let results = vec![
        row("mutex", "lock, plain", 10 * scale),
        noise,
        inv("plain", 10_500_000),
        inv("pi", 300_000),
    ];
    Characterization {
        schema: SCHEMA.into(),
        uuid: "00".into(),
        label: Some(label.into()),
        command_line: vec![],
        started_at_unix_ns: 1_700_000_000_000_000_000,
        duration_ns: 1,
        per_bench_ns: 1_000_000_000,
        interval_ns: 1_000_000,
        priority: 99,
        cpus: vec![1],
        isolated_cpus: None,
        clock_read_ns: 30,
        benches: vec![],
        pi_verdict: pi_verdict(&results),
        results,
        checks: vec![Check {
            bench: "mutex".into(),
            fact: "trylock of a held plain mutex fails".into(),
            held: true,
        }],
        complete: true,
        fingerprint: Default::default(),
    }
}

#[test]
fn the_text_has_each_table_the_noise_figures_the_verdict_and_checks() {
    let t = text::render(&sample("base", 1));
    for needle in [
        "base on ?",
        "Clock read cost: 30 ns",
        "Mutexes\nbenchmark",
        "mutex (lock, plain)",
        "OS noise",
        "CPU 1: 99.993% of the CPU left to the loop; 2 gaps above 1us (70us in all) in 1s; largest: 50us at 2ms, 20us at 5us",
        "PI works on this system",
        "Self-checks: all 1 held.",
    ] {
        assert!(t.contains(needle), "no '{needle}' in:\n{t}");
    }
    // Groups in registry order: mutexes before noise before inversion.
    let (m, n, i) = (
        t.find("Mutexes").unwrap(),
        t.find("OS noise").unwrap(),
        t.find("Priority inversion").unwrap(),
    );
    assert!(m < n && n < i);
    assert!(!t.contains("Timers"), "no empty tables");
}

#[test]
fn compare_puts_rows_side_by_side_with_ratios_and_differences() {
    let a = sample("base", 1);
    let mut b = sample("isolated", 2);
    b.isolated_cpus = Some(vec![1]);
    b.results.remove(1);
    let t = compare::render(&[&a, &b], &["1".into(), "2".into()]);
    assert!(
        t.contains("A = 1 (base)") && t.contains("B = 2 (isolated)"),
        "{t}"
    );
    assert!(
        t.contains("note: isolation differs: none / CPUs 1 isolated"),
        "{t}"
    );
    let line = t
        .lines()
        .find(|l| l.starts_with("mutex (lock, plain)"))
        .unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        &cells[cells.len() - 8..],
        ["10", "20", "50", "20", "40", "100", "2.00", "2.00"]
    );
    // The ratio columns are headed as in the run comparison: B/A.
    let head = t.lines().find(|l| l.starts_with("benchmark (ns)")).unwrap();
    assert!(
        head.contains("B/A avg") && head.contains("B/A max"),
        "{head}"
    );
    assert!(!t.contains("last/first"), "{t}");
    // With three, the last is compared with the first: C/A.
    let c = sample("third", 3);
    let t3 = compare::render(&[&a, &b, &c], &["1".into(), "2".into(), "3".into()]);
    assert!(t3.contains("C/A avg") && t3.contains("C/A max"), "{t3}");
    let noise = t.lines().find(|l| l.starts_with("os-noise")).unwrap();
    assert_eq!(
        noise.split_whitespace().filter(|c| *c == "-").count(),
        5,
        "{noise}"
    );
    let html = html::render(&[&a, &b], &["1".into(), "2".into()], None).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("Side by side"));
    assert_eq!(html.matches("<section>").count(), 3);
    assert!(!html.contains("<script"));
}

#[test]
fn registry_names_are_unique_and_described() {
    let mut names: Vec<&str> = BENCHES.iter().map(|b| b.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), BENCHES.len());
    for b in BENCHES {
        assert!(!b.help.is_empty() && !b.measures.is_empty(), "{}", b.name);
        assert!(b.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
    }
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let e = select(&["mutex".into(), "nope".into()]).err().unwrap();
    let m = e.to_string();
    assert!(
        m.contains("'nope'") && m.contains("os-noise") && m.contains("mutex"),
        "{m}"
    );
    let s = select(&["os-noise".into(), "mutex".into()]).unwrap();
    // Registry order, not command-line order.
    assert_eq!(s[0].name, "mutex");
    assert_eq!(select(&[]).unwrap().len(), BENCHES.len());
}

fn row(protocol: &str, min_ns: u64, max_ns: u64) -> BenchResult {
    BenchResult {
        bench: "priority-inversion".into(),
        variant: protocol.into(),
        cpu: 0,
        what: String::new(),
        subtracted_ns: 0,
        stats: Stats {
            count: 3,
            min_ns,
            max_ns,
            ..Default::default()
        },
        histogram: SparseHistogram::default(),
        noise: None,
        inversion: Some(InversionDetail {
            protocol: protocol.into(),
            hog_busy_ns: 10_000_000,
            critical_section_ns: 1_000_000,
            trials: 3,
            after_hog: None,
            before_hog: None,
        }),
    }
}

/// A row that kept the order of events: `after` and `before` of 3 trials.
fn ordered(protocol: &str, min_ns: u64, max_ns: u64, after: u64, before: u64) -> BenchResult {
    let mut r = row(protocol, min_ns, max_ns);
    let d = r.inversion.as_mut().unwrap();
    d.after_hog = Some(after);
    d.before_hog = Some(before);
    r
}

#[test]
fn verdict_needs_inversion_shown_and_solved() {
    let ok = pi_verdict(&[
        row("plain", 10_500_000, 11_000_000),
        row("pi", 500_000, 900_000),
    ]);
    let ok = ok.unwrap();
    assert!(ok.pi_works);
    assert!(
        ok.text.starts_with("PI works on this system"),
        "{}",
        ok.text
    );
    let bad = pi_verdict(&[
        row("plain", 10_500_000, 11_000_000),
        row("pi", 10_400_000, 10_900_000),
    ]);
    assert!(!bad.unwrap().pi_works);
    assert!(pi_verdict(&[row("plain", 1, 2)]).is_none());
}

#[test]
fn verdict_rests_on_the_order_of_events_where_the_record_has_it() {
    let ok = pi_verdict(&[
        ordered("plain", 10_500_000, 11_000_000, 3, 0),
        ordered("pi", 500_000, 900_000, 0, 3),
    ])
    .unwrap();
    assert!(ok.pi_works, "{}", ok.text);
    // One PI trial where the hog ran first fails the verdict, however
    // short the waits look.
    let bad = pi_verdict(&[
        ordered("plain", 10_500_000, 11_000_000, 3, 0),
        ordered("pi", 500_000, 900_000, 0, 2),
    ])
    .unwrap();
    assert!(!bad.pi_works);
    assert!(bad.text.contains("in 1 of 3 trials"), "{}", bad.text);
    // A plain trial that got the mutex before the hog was done: not shown.
    let unshown = pi_verdict(&[
        ordered("plain", 10_500_000, 11_000_000, 2, 0),
        ordered("pi", 500_000, 900_000, 0, 3),
    ])
    .unwrap();
    assert!(!unshown.pi_works);
    assert!(
        unshown.text.starts_with("inversion not shown"),
        "{}",
        unshown.text
    );
    // No counted trial proves nothing.
    let mut none = ordered("pi", 0, 0, 0, 0);
    none.stats.count = 0;
    none.inversion.as_mut().unwrap().trials = 0;
    let empty = pi_verdict(&[ordered("plain", 10_500_000, 11_000_000, 3, 0), none]).unwrap();
    assert!(!empty.pi_works);
}

#[test]
fn validation_refuses_bad_cpus_durations_and_priorities() {
    let ok = Options {
        only: vec![],
        per_bench_ns: 200_000_000,
        interval_ns: 1_000_000,
        priority: 99,
        cpus: vec![0],
        label: None,
        host: None,
        command_line: vec![],
        isolated_cpus: None,
        explain_above_ns: None,
    };
    assert!(validate(&ok, &[0, 1]).is_ok());
    let e = validate(
        &Options {
            cpus: vec![5],
            ..ok.clone()
        },
        &[0, 1],
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("valid CPUs are 0-1"), "{e}");
    assert!(
        validate(
            &Options {
                per_bench_ns: 10,
                ..ok.clone()
            },
            &[0]
        )
        .is_err()
    );
    assert!(
        validate(
            &Options {
                priority: 2,
                ..ok.clone()
            },
            &[0]
        )
        .is_err()
    );
}

#[test]
fn html_names_throttling_plots_the_gaps_and_prints_no_raw_eight_digit_ns() {
    let mut c = sample("throttled", 1);
    c.fingerprint.sched_rt_period_us = Some(1_000_000);
    c.fingerprint.sched_rt_runtime_us = Some(950_000);
    let r = c.results.iter_mut().find(|r| r.noise.is_some()).unwrap();
    let mut h = crate::histogram::Histogram::new(crate::histogram::LATENCY_SUB_BITS);
    h.record_n(40, 1_000_000);
    h.record_n(52_029_886, 5);
    r.histogram = SparseHistogram {
        sub_bucket_bits: h.sub_bits(),
        buckets: h.iter_nonzero().map(|(l, c)| [l, c]).collect(),
    };
    r.stats.max_ns = 52_029_886;
    r.stats.p9999_ns = 52_029_886;
    let n = r.noise.as_mut().unwrap();
    n.duration_ns = 5_000_000_000;
    n.largest_gaps = (0..5u64)
        .map(|i| Gap {
            gap_ns: 52_029_886 - i * 1000,
            at_ns: 950_000_000 + i * 1_000_000_000,
        })
        .collect();
    let t = text::render(&c);
    assert!(t.contains("CPU 1: likely real-time throttling"), "{t}");
    let page = html::render(&[&c], &["1".into()], None).unwrap();
    assert!(page.contains("likely real-time throttling"), "{page}");
    assert!(page.contains("52.03 ms"), "readable units");
    assert_eq!(
        page.matches("<svg").count(),
        2,
        "gap histogram and gaps over time"
    );
    assert!(page.contains("OS noise: the largest gaps over time"));
    // Outside the figures, no number of eight digits or more.
    let mut outside = String::new();
    let mut rest = page.as_str();
    while let Some(i) = rest.find("<svg") {
        outside.push_str(&rest[..i]);
        rest = &rest[rest[i..]
            .find("</svg>")
            .map(|j| i + j + 6)
            .unwrap_or(rest.len())..];
    }
    outside.push_str(rest);
    let mut run = 0;
    for ch in outside.chars() {
        run = if ch.is_ascii_digit() { run + 1 } else { 0 };
        assert!(run < 8, "a raw number in: {outside}");
    }
    assert!(outside.contains("52\u{202f}029\u{202f}886"), "separators");
}
