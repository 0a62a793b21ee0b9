#!/usr/bin/env python3
"""Reference vectors for rtscope's tail statistics (src/tail/).

Draws samples with fixed seeds from known distributions, bins them the way
rtscope's histogram does (src/histogram.rs: log-linear, 9 sub-bucket bits;
or 1 us classes as cyclictest's histograms), fits the generalized Pareto
distribution with scipy (on the exact exceedances, and on the binned data
with the same interval-censored likelihood as src/tail/gpd.rs), and writes
tests/fixtures/tail/<case>.json: the data, the truth and scipy's figures.

    python3 scripts/tail-reference.py             # the cases
    python3 scripts/tail-reference.py --ad-table  # Anderson-Darling table
    python3 scripts/tail-reference.py --gev       # scipy's GEV fit of each case's windows

--ad-table draws the percentage points of the Anderson-Darling statistic
A^2 for the GPD with both parameters estimated by maximum likelihood
(Choulakian & Stephens 2001's setting, by Monte Carlo: shape -0.5..0.8 by
0.1, 500 exceedances, 4000 samples a shape) and writes
tests/fixtures/tail/ad-table.json; src/tail/ad_table.rs holds the same
numbers (a unit test compares them).

Needs numpy and scipy (pip install scipy numpy).
"""
import json
import math
import os
import sys

import numpy as np
from scipy import optimize, stats

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "tail")
SUB_BITS = 9
PROBABILITY = 0.01
PERIOD_NS = 1_000_000
AD_LEVELS = [0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.975, 0.99, 0.995]


# ---------- rtscope's histogram (src/histogram.rs) ----------

def bucket_lower(v, b=SUB_BITS):
    """Lower bound of the log-linear bucket holding each value (array)."""
    v = np.asarray(v, dtype=np.uint64)
    s = 1 << b
    out = v.copy()
    big = v >= s
    e = np.floor(np.log2(np.maximum(v[big], 1).astype(np.float64))).astype(np.int64)
    # guard float rounding of log2 at powers of two
    e = np.where((np.uint64(1) << e.astype(np.uint64)) > v[big], e - 1, e)
    e = np.where((np.uint64(1) << (e + 1).astype(np.uint64)) <= v[big], e + 1, e)
    shift = (e - b).astype(np.uint64)
    out[big] = (v[big] >> shift) << shift
    return out


def bucket_width(lower, b=SUB_BITS):
    lower = np.asarray(lower, dtype=np.uint64)
    s = 1 << (b + 1)
    w = np.ones_like(lower)
    big = lower >= s
    e = np.floor(np.log2(lower[big].astype(np.float64))).astype(np.uint64)
    w[big] = np.uint64(1) << (e - np.uint64(b))
    return w


def bin_loglinear(x_ns):
    lo = bucket_lower(np.round(x_ns).astype(np.uint64))
    u, c = np.unique(lo, return_counts=True)
    hi = u + bucket_width(u)
    return [[int(a), int(h), int(k)] for a, h, k in zip(u, hi, c)]


def bin_us(x_ns):
    lo = (np.floor(x_ns / 1000.0) * 1000).astype(np.uint64)
    u, c = np.unique(lo, return_counts=True)
    return [[int(a), int(a) + 1000, int(k)] for a, k in zip(u, c)]


# ---------- GPD pieces ----------

def gpd_sf(y, sigma, xi):
    y = np.maximum(y, 0.0)
    if abs(xi) < 1e-9:
        return np.exp(-y / sigma)
    t = 1.0 + xi * y / sigma
    return np.where(t > 0, np.power(np.maximum(t, 1e-300), -1.0 / xi), 0.0)


def censored_nll(params, lo, hi, cnt, u):
    log_sigma, xi = params
    if not (-0.5 <= xi <= 1.0):
        return 1e300
    sigma = math.exp(log_sigma)
    p = gpd_sf(lo - u, sigma, xi) - gpd_sf(hi - u, sigma, xi)
    if np.any(p <= 0):
        return 1e300
    return float(-np.sum(cnt * np.log(p)))


def fit_binned(bins, u, start):
    b = np.array([r for r in bins if r[0] >= u], dtype=np.float64)
    lo, hi, cnt = b[:, 0], b[:, 1], b[:, 2]
    best = None
    for x0 in (start, (start[0], 0.1), (start[0], -0.2)):
        r = optimize.minimize(censored_nll, x0, args=(lo, hi, cnt, u), method="Nelder-Mead",
                              options={"xatol": 1e-9, "fatol": 1e-9, "maxiter": 20000})
        if best is None or r.fun < best.fun:
            best = r
    return {"xi": float(best.x[1]), "sigma_ns": float(math.exp(best.x[0])), "nll": float(best.fun),
            "exceedances": int(cnt.sum())}


def fit_exact(x_ns, u):
    y = x_ns[x_ns >= u] - u
    xi, _, sigma = stats.genpareto.fit(y, floc=0)
    return {"xi": float(xi), "sigma_ns": float(sigma), "exceedances": int(y.size)}


# ---------- the cases ----------

def body_plus_gpd(rng, n, u0, zeta, sigma, xi):
    """A body below u0 (a scaled beta) and an exact GPD tail above u0
    with probability zeta."""
    tail = rng.random(n) < zeta
    x = 2000.0 + (u0 - 2000.0) * rng.beta(2.0, 3.0, n)
    k = int(tail.sum())
    x[tail] = u0 + stats.genpareto.rvs(xi, scale=sigma, size=k, random_state=rng)
    return x


def true_level(u0, zeta, sigma, xi, p=PROBABILITY, hours=1.0):
    n = hours * 3600e9 / PERIOD_NS
    q = -math.expm1(math.log1p(-p) / n)
    r = q / zeta
    if abs(xi) < 1e-9:
        return u0 + sigma * math.log(1 / r)
    return u0 + sigma / xi * (r ** (-xi) - 1)


def windows_of(x, per_window):
    m = x.size // per_window
    return [float(v) for v in x[: m * per_window].reshape(m, per_window).max(axis=1)]


def case(name, x, binner, truth, expect, description, per_window=10_000):
    bins = binner(x)
    half = x.size // 2
    u = truth.get("threshold_ns") or float(np.quantile(x, 0.99))
    u = float(next(r[0] for r in bins if r[0] >= u))
    lo = np.array([r[0] for r in bins if r[0] >= u], dtype=np.float64)
    start = (math.log(max(np.mean(lo) - u, 1.0)), 0.05)
    doc = {
        "name": name,
        "description": description,
        "period_ns": PERIOD_NS,
        "probability": PROBABILITY,
        "truth": truth,
        "bins": bins,
        "halves": [binner(x[:half]), binner(x[half:])],
        "windows": {"length_s": per_window * PERIOD_NS / 1e9, "max_ns": windows_of(x, per_window)},
        "scipy": {"threshold_ns": u, "exact": fit_exact(x, u), "binned": fit_binned(bins, u, start)},
        "expect": expect,
    }
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{name}: {len(bins)} bins, u={u:.0f} scipy {doc['scipy']['binned']} exact {doc['scipy']['exact']}")


def gpd_case(name, seed, xi, binner=bin_loglinear, n=3_000_000):
    rng = np.random.default_rng(seed)
    u0, zeta, sigma = 20_000.0, 0.01, 4_000.0
    x = body_plus_gpd(rng, n, u0, zeta, sigma, xi)
    # a threshold inside the GPD part for the reference fit
    u_ref = u0 + 2_000.0
    zeta_ref = zeta * float(gpd_sf(np.array([u_ref - u0]), sigma, xi)[0])
    sigma_ref = sigma + xi * (u_ref - u0)
    truth = {"threshold_ns": u_ref, "xi": xi, "sigma_ns": sigma_ref, "zeta": zeta_ref,
             "return_level_hour_ns": true_level(u0, zeta, sigma, xi)}
    case(name, x, binner, truth, {"estimate": True},
         f"body (scaled beta, 2-20 us) and a GPD tail above 20 us (zeta 0.01, sigma 4 us, xi {xi}); seed {seed}")


def bounded_case():
    rng = np.random.default_rng(7)
    n = 3_000_000
    # a bounded tail that is not a GPD: a beta above 20 us with endpoint 60 us
    x = 2000.0 + 18000.0 * rng.beta(2.0, 3.0, n)
    tail = rng.random(n) < 0.01
    x[tail] = 20_000.0 + 40_000.0 * rng.beta(1.0, 3.0, int(tail.sum()))
    truth = {"threshold_ns": None, "endpoint_ns": 60_000.0,
             "return_level_hour_ns": 60_000.0 - 40_000.0 * (1 - (1 - (1 - (1 - PROBABILITY) ** (1 / 3.6e6)) / 0.01)) ** (1 / 3)}
    truth["return_level_hour_ns"] = bounded_level()
    case("bounded", x, bin_loglinear, truth, {"estimate": True},
         "body and a beta(1,3) tail above 20 us with endpoint 60 us (GPD xi=-1/3 exactly); seed 7")


def bounded_level():
    # P(X > x) = 0.01 (1 - (x-20000)/40000)^3 ; level for q per wake-up
    q = -math.expm1(math.log1p(-PROBABILITY) / 3.6e6)
    return 20_000.0 + 40_000.0 * (1 - (q / 0.01) ** (1 / 3))


def mixture_case():
    rng = np.random.default_rng(11)
    n = 3_000_000
    x = body_plus_gpd(rng, n, 20_000.0, 0.01, 3_000.0, -0.2)
    second = rng.random(n) < 1.5e-4
    x[second] = rng.normal(90_000.0, 4_000.0, int(second.sum()))
    case("mixture", x, bin_loglinear, {"threshold_ns": None}, {"refused": True},
         "two causes: a GPD tail above 20 us (xi -0.2) and a rare second cause near 90 us (1.5e-4); seed 11")


def drift_case():
    rng = np.random.default_rng(13)
    n = 3_000_000
    x = body_plus_gpd(rng, n, 20_000.0, 0.01, 3_000.0, 0.0)
    x *= np.linspace(1.0, 1.6, n)
    case("drift", x, bin_loglinear, {"threshold_ns": None}, {"refused": True},
         "a GPD tail (xi 0) whose scale grows by 60 % over the run; seed 13")


def cases():
    os.makedirs(OUT, exist_ok=True)
    gpd_case("gpd-neg", 1, -0.3)
    gpd_case("gpd-zero", 2, 0.0)
    gpd_case("gpd-pos", 3, 0.2)
    gpd_case("gpd-zero-us", 4, 0.0, binner=bin_us)
    bounded_case()
    mixture_case()
    drift_case()


# ---------- the Anderson-Darling table ----------

def grimshaw_fit(y):
    """ML fit of a GPD (location 0) through the profile in theta = xi/sigma."""
    n, m, mx = y.size, y.mean(), y.max()

    def nll(t):
        th = t / m
        xi = np.mean(np.log1p(th * y))
        if abs(th) < 1e-12:
            return n * math.log(m) + n
        s = xi / th
        if s <= 0 or xi < -0.9:
            return 1e300
        return n * math.log(s) + n * (1 + xi)

    lo = -m / mx * (1 - 1e-9)
    grid = np.concatenate([np.linspace(lo, 0, 80, endpoint=False)[1:], np.geomspace(1e-4, 50, 120)])
    vals = [nll(t) for t in grid]
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    r = optimize.minimize_scalar(nll, bounds=(a, b), method="bounded", options={"xatol": 1e-10})
    th = r.x / m
    xi = float(np.mean(np.log1p(th * y)))
    sigma = xi / th if abs(th) > 1e-12 else m
    return sigma, xi


def ad_stat(z):
    z = np.clip(np.sort(z), 1e-12, 1 - 1e-12)
    n = z.size
    i = np.arange(1, n + 1)
    return float(-n - np.mean((2 * i - 1) * (np.log(z) + np.log1p(-z[::-1]))))


def ad_table():
    rng = np.random.default_rng(2001)
    n, reps = 500, 4000
    rows = []
    for xi in np.round(np.arange(-0.5, 0.81, 0.1), 1):
        a2 = []
        for _ in range(reps):
            y = stats.genpareto.rvs(xi, size=n, random_state=rng)
            s, x = grimshaw_fit(y)
            a2.append(ad_stat(1 - gpd_sf(y, s, x)))
        q = [float(v) for v in np.quantile(a2, AD_LEVELS)]
        rows.append({"xi": float(xi), "quantiles": q})
        print(f"xi {xi:+.1f}: " + " ".join(f"{v:.4f}" for v in q), flush=True)
    doc = {"levels": AD_LEVELS, "n": n, "reps": reps, "seed": 2001, "rows": rows}
    with open(os.path.join(OUT, "ad-table.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


# ---------- the GEV reference (block maxima) ----------

def gev_nll(params, x):
    """GEV negative log-likelihood (Coles 2001, 3.3.2), shape xi as there
    (scipy's c is -xi); infinite outside the support."""
    mu, ln_sigma, xi = params
    sigma = math.exp(ln_sigma)
    z = (x - mu) / sigma
    if abs(xi) < 1e-9:
        return x.size * ln_sigma + np.sum(z) + np.sum(np.exp(-z))
    t = 1.0 + xi * z
    if np.any(t <= 0.0):
        return np.inf
    return x.size * ln_sigma + (1.0 + 1.0 / xi) * np.sum(np.log(t)) + np.sum(t ** (-1.0 / xi))


def gev_fit(maxima_ns):
    """Maximum likelihood, in microseconds for a well-scaled problem: from
    the Gumbel's moments, Nelder-Mead with tight tolerances, restarted at
    its own answer until it stays; checked against scipy's genextreme on
    the answer (its log-density must give the same likelihood)."""
    x = np.asarray(maxima_ns, dtype=np.float64) / 1e3
    scale = math.sqrt(6.0) * float(np.std(x)) / math.pi
    start = [float(np.mean(x)) - 0.5772 * scale, math.log(scale), 0.05]
    best = None
    for _ in range(6):
        r = optimize.minimize(gev_nll, start, args=(x,), method="Nelder-Mead",
                              options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 40000, "maxfev": 80000})
        if best is not None and abs(best.fun - r.fun) < 1e-9:
            best = r
            break
        best, start = r, list(r.x)
    mu, ln_sigma, xi = best.x
    check = -np.sum(stats.genextreme.logpdf(x, -xi, loc=mu, scale=math.exp(ln_sigma)))
    assert abs(check - best.fun) < 1e-6 * max(1.0, abs(best.fun)), (check, best.fun)
    # Back to ns: the location and scale scale, the likelihood shifts by
    # n ln(1000) (a density in 1/ns).
    return {"location_ns": float(mu) * 1e3, "scale_ns": math.exp(ln_sigma) * 1e3, "xi": float(xi),
            "nll": float(best.fun) + x.size * math.log(1e3), "windows": int(x.size)}


def gev_reference():
    """Add scipy's GEV fit of each case's window maxima to its file
    (scipy.gev), leaving the data as it is."""
    for name in sorted(os.listdir(OUT)):
        path = os.path.join(OUT, name)
        if not name.endswith(".json") or name == "ad-table.json":
            continue
        with open(path) as f:
            doc = json.load(f)
        w = doc.get("windows")
        if not w or len(w["max_ns"]) < 20:
            continue
        doc["scipy"]["gev"] = gev_fit(w["max_ns"])
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print(f"{name}: GEV {doc['scipy']['gev']}")


if __name__ == "__main__":
    if "--ad-table" in sys.argv:
        ad_table()
    elif "--gev" in sys.argv:
        gev_reference()
    else:
        cases()
