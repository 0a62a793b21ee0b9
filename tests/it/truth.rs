//! `tail` against known truths, end to end: runs generated with tails
//! whose return levels and extremal index are known (a generalized Pareto
//! tail with ξ > 0; one with ξ < 0 and its endpoint; two causes mixed;
//! clustered exceedances of known θ; too few samples), written as run
//! record files, analysed by the real binary (and one imported into a
//! store first), each answer checked against the truth it must hold.
//!
//! Fixed seeds: every outcome is the same on every machine. How often the
//! 95 % interval holds the truth over many seeds is measured by the
//! ignored test `truth_coverage_over_many_seeds` (bench/README.md).

use crate::util::*;
use rtscope::record::{ExceedanceRecord, RunRecord, WindowSeries, synthetic};
use rtscope::rng::Rng;

/// synthetic()'s period.
const PERIOD_NS: u64 = 1_000_000;
/// Every sample of the body lies below this; the tail lies above it.
const U_NS: f64 = 25_000.0;
/// Wake-ups in an hour at the period.
const HOUR: f64 = 3_600_000.0;

/// One cause of late wake-ups above `U_NS`: with probability `zeta` a
/// wake-up is `U_NS` plus a generalized Pareto excess.
#[derive(Clone, Copy, Debug)]
struct Cause {
    zeta: f64,
    sigma_ns: f64,
    xi: f64,
}

impl Cause {
    fn excess(&self, rng: &mut Rng) -> f64 {
        let u = rng.open_unit();
        if self.xi.abs() < 1e-12 {
            -self.sigma_ns * u.ln()
        } else {
            self.sigma_ns / self.xi * (u.powf(-self.xi) - 1.0)
        }
    }

    /// P(excess > y).
    fn survival(&self, y: f64) -> f64 {
        if y <= 0.0 {
            return 1.0;
        }
        if self.xi.abs() < 1e-12 {
            return (-y / self.sigma_ns).exp();
        }
        let b = 1.0 + self.xi * y / self.sigma_ns;
        if b <= 0.0 {
            0.0
        } else {
            b.powf(-1.0 / self.xi)
        }
    }
}

#[derive(Clone, Debug)]
struct Case {
    samples: usize,
    causes: Vec<Cause>,
    /// Mean size of a cluster of late wake-ups (θ = 1 / this).
    cluster: f64,
}

impl Case {
    fn survival(&self, x: f64) -> f64 {
        self.causes
            .iter()
            .map(|c| c.zeta * c.survival(x - U_NS))
            .sum()
    }

    /// The latency exceeded with probability `p` over `m` independent
    /// wake-ups: survival(x) = 1 − (1 − p)^(1/m), by bisection.
    fn level(&self, p: f64, m: f64) -> f64 {
        let q = -((-p).ln_1p() / m).exp_m1();
        let (mut lo, mut hi) = (U_NS, U_NS * 2.0);
        while self.survival(hi) > q && hi < 1e13 {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.survival(mid) > q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// Latencies in cycle order: a body uniform in [5 µs, U), and clusters
    /// of tail values (sizes geometric, mean `cluster`: one stall's value
    /// and the next ones within 1 % of it) started so that each wake-up
    /// is in the tail with probability Σ ζ.
    fn generate(&self, seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let zeta: f64 = self.causes.iter().map(|c| c.zeta).sum();
        let start = zeta / self.cluster;
        let mut left = 0u32;
        let mut cause = self.causes[0];
        let mut stall = 0.0;
        (0..self.samples)
            .map(|_| {
                if left == 0 && rng.unit() < start {
                    let mut pick = rng.unit() * zeta;
                    cause = *self
                        .causes
                        .iter()
                        .find(|c| {
                            pick -= c.zeta;
                            pick < 0.0
                        })
                        .unwrap_or(&self.causes[self.causes.len() - 1]);
                    left = 1;
                    while rng.unit() > 1.0 / self.cluster {
                        left += 1;
                    }
                    stall = (U_NS + cause.excess(&mut rng)).min(1e12);
                    left -= 1;
                    return stall as u64 + 1;
                }
                if left > 0 {
                    // The rest of a cluster: one stall delays several
                    // wake-ups by about as much (within 1 %), so they
                    // exceed a high threshold together, as real ones do.
                    left -= 1;
                    (stall * (1.0 - 0.01 * rng.unit())).max(U_NS) as u64 + 1
                } else {
                    5_000 + (rng.unit() * (U_NS - 5_000.0)) as u64
                }
            })
            .collect()
    }
}

/// A record of `values` (one thread at 1 ms) with its 1 s windows and,
/// like measure's, its exceedance table above `U_NS`.
fn record(values: &[u64]) -> RunRecord {
    let mut rec = synthetic(&[values.to_vec()]);
    let duration_ns = values.len() as u64 * PERIOD_NS;
    rec.duration_ns = duration_ns;
    rec.ended_at_unix_ns = Some(rec.started_at_unix_ns + duration_ns);
    let t = &mut rec.threads[0];
    let mut w = WindowSeries {
        window_ns: 1_000_000_000,
        ..Default::default()
    };
    for chunk in values.chunks(1000) {
        let mut sorted = chunk.to_vec();
        sorted.sort_unstable();
        w.count.push(chunk.len() as u64);
        w.min_ns.push(sorted[0]);
        w.avg_ns
            .push(chunk.iter().sum::<u64>() / chunk.len() as u64);
        w.max_ns.push(*sorted.last().unwrap());
        w.p99_ns.push(sorted[sorted.len() * 99 / 100]);
        w.missed.push(0);
    }
    t.windows = w;
    let (cycles, latencies_ns): (Vec<u64>, Vec<u64>) = values
        .iter()
        .enumerate()
        .filter(|&(_, &v)| v as f64 > U_NS)
        .map(|(c, &v)| (c as u64, v))
        .unzip();
    t.exceedances = Some(ExceedanceRecord {
        threshold_ns: U_NS as u64,
        cycles,
        latencies_ns,
    });
    rec
}

/// θ of `tail --json`'s answer, which must have been estimated from the
/// record's exceedance times.
pub fn theta_from_exceedance_times(v: &serde_json::Value) -> f64 {
    let x = &v["extremal_index"];
    assert_eq!(x["status"], "estimated", "{x}");
    assert!(
        x["from"].as_str().unwrap().starts_with("exceedance_times"),
        "{x}"
    );
    x["theta"].as_f64().unwrap()
}

/// `rtscope tail FILE --json` on the record of `values`.
fn tail(dir: &TempDir, name: &str, values: &[u64]) -> serde_json::Value {
    tail_of(dir, name, &record(values))
}

/// `rtscope tail FILE --json` on `rec`.
fn tail_of(dir: &TempDir, name: &str, rec: &RunRecord) -> serde_json::Value {
    let path = dir.join(&format!("{name}.json"));
    std::fs::write(&path, serde_json::to_vec(rec).unwrap()).unwrap();
    let o = rtscope(dir.path())
        .args(["tail", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The histogram's hour level: (estimate, lower, upper) when given.
fn hour(v: &serde_json::Value) -> Option<(f64, Option<f64>, Option<f64>)> {
    let r = &v["result"];
    if r["status"] != "estimate" {
        return None;
    }
    let l = r["return_levels"]
        .as_array()?
        .iter()
        .find(|l| l["horizon"] == "hour")?;
    Some((
        l["level_ns"].as_f64()?,
        l["lower95_ns"].as_f64(),
        l["upper95_ns"].as_f64(),
    ))
}

fn heavy() -> Case {
    Case {
        samples: 400_000,
        causes: vec![Cause {
            zeta: 0.02,
            sigma_ns: 10_000.0,
            xi: 0.2,
        }],
        cluster: 1.0,
    }
}

fn bounded() -> Case {
    Case {
        samples: 400_000,
        causes: vec![Cause {
            zeta: 0.02,
            sigma_ns: 30_000.0,
            xi: -0.3,
        }],
        cluster: 1.0,
    }
}

/// Jitter and, a hundred times rarer, long stalls: one GPD cannot fit both.
fn two_causes() -> Case {
    Case {
        samples: 400_000,
        causes: vec![
            Cause {
                zeta: 0.02,
                sigma_ns: 5_000.0,
                xi: 0.0,
            },
            Cause {
                zeta: 2e-4,
                sigma_ns: 400_000.0,
                xi: 0.1,
            },
        ],
        cluster: 1.0,
    }
}

/// How the hour level of a case fared over seeds.
#[derive(Debug, Default)]
struct Score {
    estimates: u32,
    /// Intervals holding the truth.
    held: u32,
    refused: u32,
    /// Misses with the truth above the upper bound (the dangerous side:
    /// the interval said the hour's level is lower than it is), and
    /// below the lower one.
    truth_above: u32,
    truth_below: u32,
}

/// How the hour level of `case` fared over `seeds`; with `verbose`, one
/// line per miss (seed, truth, the interval, the fit). With
/// `histogram_only` the records keep neither windows nor exceedance
/// times (as the library's coverage bench: three gates judged, θ = 1).
fn score(
    dir: &TempDir,
    name: &str,
    case: &Case,
    seeds: std::ops::Range<u64>,
    verbose: bool,
    histogram_only: bool,
) -> Score {
    let truth = case.level(0.01, HOUR);
    let mut s = Score::default();
    for seed in seeds {
        let mut rec = record(&case.generate(seed));
        if histogram_only {
            rec.threads[0].windows = WindowSeries::default();
            rec.threads[0].exceedances = None;
        }
        let v = tail_of(dir, &format!("{name}-{seed}"), &rec);
        let _ = std::fs::remove_file(dir.join(&format!("{name}-{seed}.json")));
        match hour(&v) {
            Some((level, lo, hi)) => {
                s.estimates += 1;
                let above = hi.is_none_or(|hi| truth > hi);
                let below = lo.is_none_or(|lo| truth < lo);
                s.truth_above += above as u32;
                s.truth_below += below as u32;
                s.held += !(above || below) as u32;
                if verbose && (above || below) {
                    println!(
                        "  {name} seed {seed}: truth {truth:.0} ns, estimate {level:.0} ns in [{lo:?}, {hi:?}]; threshold {} ns, {} exceedances, sigma {:.0} ns, xi {:.3}, theta {}",
                        v["pot"]["threshold_ns"],
                        v["pot"]["exceedances"],
                        v["pot"]["sigma_ns"].as_f64().unwrap_or(f64::NAN),
                        v["pot"]["xi"].as_f64().unwrap_or(f64::NAN),
                        v["extremal_index"]["theta"],
                    );
                }
            }
            None => s.refused += 1,
        }
    }
    s
}

#[test]
fn truth_heavy_tail_interval_holds_the_true_hour_level() {
    let dir = TempDir::new("truth-heavy");
    let Score {
        estimates: est,
        held,
        refused,
        ..
    } = score(&dir, "heavy", &heavy(), 1..11, false, false);
    // A sound GPD tail with 8 000 exceedances: the gates pass (each
    // refuses a sound tail with a few % chance) and a 95 % interval holds
    // the truth in at least 8 of 10 seeds (P < 1 % at 95 % coverage).
    assert!(est >= 8, "{est} estimates, {refused} refusals");
    assert!(
        held >= est.saturating_sub(2),
        "{held} of {est} intervals held the truth"
    );
}

#[test]
fn truth_bounded_tail_is_never_extrapolated_past_its_endpoint() {
    let dir = TempDir::new("truth-bounded");
    let case = bounded();
    let c = case.causes[0];
    let endpoint = U_NS - c.sigma_ns / c.xi;
    let mut estimates = 0;
    for seed in 1..7 {
        let v = tail(&dir, &format!("bounded-{seed}"), &case.generate(seed));
        let r = &v["result"];
        if r["status"] != "estimate" {
            continue;
        }
        estimates += 1;
        for l in r["return_levels"].as_array().unwrap() {
            let level = l["level_ns"].as_f64().unwrap();
            assert!(
                level <= endpoint * 1.05,
                "seed {seed}: {} level {level} ns beyond the endpoint {endpoint} ns",
                l["horizon"]
            );
        }
        let xi = v["pot"]["xi"].as_f64().unwrap();
        assert!(
            xi < 0.0,
            "seed {seed}: a bounded tail fitted with xi = {xi}"
        );
    }
    assert!(estimates >= 4, "{estimates} estimates of 6");
}

#[test]
fn truth_two_causes_are_refused_or_held() {
    let dir = TempDir::new("truth-two");
    let case = two_causes();
    let Score {
        estimates: est,
        held,
        refused,
        ..
    } = score(&dir, "two", &case, 1..7, false, false);
    // The gates see that one GPD does not fit both causes (10 seeds of 10
    // refused when this was written); an estimate that does get through
    // must still hold the truth (the rarer cause makes the hour level).
    assert_eq!(est + refused, 6);
    assert!(
        refused >= 4,
        "{refused} of 6 refused: one GPD was fitted to two causes"
    );
    assert!(
        held + 1 >= est,
        "{held} of {est} intervals held the truth, {refused} refused"
    );
}

#[test]
fn truth_clustered_exceedances_give_their_theta() {
    let dir = TempDir::new("truth-theta");
    for (cluster, seed) in [(1.0, 3), (2.0, 4), (4.0, 5)] {
        let case = Case { cluster, ..heavy() };
        let v = tail(&dir, &format!("theta-{cluster}"), &case.generate(seed));
        let theta = theta_from_exceedance_times(&v);
        let truth = 1.0 / cluster;
        assert!(
            (theta - truth).abs() < 0.08,
            "clusters of mean {cluster}: theta {theta}, truth {truth}"
        );
    }
}

#[test]
fn truth_too_few_samples_are_refused_with_what_the_run_supports() {
    let dir = TempDir::new("truth-few");
    let case = Case {
        samples: 2_000,
        ..heavy()
    };
    let values = case.generate(9);
    let v = tail(&dir, "few", &values);
    let r = &v["result"];
    assert_eq!(r["status"], "insufficient", "{r}");
    assert_eq!(
        r["observed_max_ns"].as_u64(),
        values.iter().copied().max(),
        "the exact maximum"
    );
    let b = r["bound_3_over_n"].as_f64().unwrap();
    assert!((b - 3.0 / 2000.0).abs() < 1e-12, "{b}");
}

/// A generated record imported into a store, then analysed from there:
/// the same answer as from the file.
#[test]
fn truth_through_the_store_is_the_same() {
    let dir = TempDir::new("truth-store");
    let values = heavy().generate(21);
    let from_file = tail(&dir, "stored", &values);
    let db = dir.join("s.db");
    let o = rt(
        &dir,
        &db,
        &["import", dir.join("stored.json").to_str().unwrap()],
    );
    assert_code(&o, 0);
    let o = rt(&dir, &db, &["tail", "last", "--json"]);
    assert_code(&o, 0);
    let from_store: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(from_store["result"], from_file["result"]);
    assert_eq!(from_store["extremal_index"], from_file["extremal_index"]);
}

/// Coverage over many seeds (slow: about a second a seed). Run with
/// `cargo test --release --test it truth_coverage -- --ignored --nocapture`;
/// RTSCOPE_TRUTH_SEEDS sets the seeds per case (default 100),
/// RTSCOPE_TRUTH_CASES the cases (names separated by commas; default all),
/// RTSCOPE_TRUTH_HISTOGRAM_ONLY=1 drops the windows and exceedance times.
/// Each miss is printed with its side, its fit and θ.
#[test]
#[ignore]
fn truth_coverage_over_many_seeds() {
    let n: u64 = std::env::var("RTSCOPE_TRUTH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let only = std::env::var("RTSCOPE_TRUTH_CASES").ok();
    let histogram_only = std::env::var_os("RTSCOPE_TRUTH_HISTOGRAM_ONLY").is_some();
    let dir = TempDir::new("truth-coverage");
    for (name, case) in [
        ("heavy", heavy()),
        ("bounded", bounded()),
        ("two causes", two_causes()),
    ] {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|c| c == name))
        {
            continue;
        }
        let s = score(&dir, name, &case, 1000..1000 + n, true, histogram_only);
        println!(
            "{name}: {} estimates, {} refusals; the hour level's 95 % interval held the truth in {} of {} ({:.1} %); missed with the truth above the upper bound {}, below the lower {}",
            s.estimates,
            s.refused,
            s.held,
            s.estimates,
            100.0 * s.held as f64 / s.estimates.max(1) as f64,
            s.truth_above,
            s.truth_below,
        );
    }
}

/// The windows' GEV fit, end to end, against scipy's maximum likelihood
/// on the same window maxima (tests/fixtures/tail/*.json, `scipy.gev`,
/// written by `scripts/tail-reference.py --gev`), as the GPD is checked
/// in the library's tests. A fit scipy puts below ξ = −0.5 (where maximum
/// likelihood loses its usual properties) is reported at the bound.
#[test]
fn truth_gev_fit_agrees_with_scipy() {
    let dir = TempDir::new("truth-gev");
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tail");
    let mut checked = 0;
    for name in [
        "gpd-pos",
        "gpd-neg",
        "gpd-zero",
        "gpd-zero-us",
        "bounded",
        "drift",
        "mixture",
    ] {
        let text = std::fs::read_to_string(format!("{fixtures}/{name}.json")).unwrap();
        let f: serde_json::Value = serde_json::from_str(&text).unwrap();
        let maxima: Vec<u64> = f["windows"]["max_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap().round() as u64)
            .collect();
        let window_ns = (f["windows"]["length_s"].as_f64().unwrap() * 1e9) as u64;
        // One wake-up per window, its maximum: the histogram is beside the
        // point here, the window series is what the GEV is fitted to.
        let mut rec = synthetic(&[maxima.clone()]);
        rec.duration_ns = window_ns * maxima.len() as u64;
        rec.threads[0].windows = WindowSeries {
            window_ns,
            count: vec![1; maxima.len()],
            min_ns: maxima.clone(),
            avg_ns: maxima.clone(),
            max_ns: maxima.clone(),
            p99_ns: maxima.clone(),
            missed: vec![0; maxima.len()],
            compacted: false,
        };
        let path = dir.join(&format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec(&rec).unwrap()).unwrap();
        let o = rtscope(dir.path())
            .args(["tail", path.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert_code(&o, 0);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let (ours, theirs) = (&v["gev"], &f["scipy"]["gev"]);
        let xi = theirs["xi"].as_f64().unwrap();
        if xi < -0.5 {
            assert_eq!(ours["at_bound"], true, "{name}: scipy xi {xi}, ours {ours}");
            continue;
        }
        let near = |k: &str, rel: f64| {
            let (a, b) = (ours[k].as_f64().unwrap(), theirs[k].as_f64().unwrap());
            assert!(
                (a - b).abs() <= rel * b.abs(),
                "{name}: {k} {a} against scipy's {b}"
            );
        };
        near("location_ns", 0.005);
        near("scale_ns", 0.02);
        let ours_xi = ours["xi"].as_f64().unwrap();
        assert!(
            (ours_xi - xi).abs() < 0.02,
            "{name}: xi {ours_xi} against scipy's {xi}"
        );
        assert_eq!(ours["at_bound"], false, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 6, "six fits within the bounds");
}
