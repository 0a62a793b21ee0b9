#!/usr/bin/env python3
"""What `rtscope tail` and `rtscope report` cost on long window series.

For each size N (windows per thread) the script writes a Xenomai
`latency` output of N seconds (one `RTD|` line per second: its minimum,
average and maximum, the maxima drawn from a Gumbel of location 8 us and
scale 2 us with a fixed seed; an `HSD|` histogram of every sample at
100 us, 10 000 a second), imports it into a store of its own (a 1 s
window per line, as `src/import/xenomai.rs` does), then times
`rtscope tail` and `rtscope report` of that run: the median of REPEAT
wall times (one run when the first took over 5 s). A run that takes
longer than TIMEOUT is stopped and shown as "> TIMEOUT".

With --before BINARY the same records are timed with a second build
too, side by side (e.g. a build of the commit before a change), so both
figures come from one run on one machine.

With --own, rtscope's own day-long record instead: a run record (the
JSON of `rtscope measure --json`) of 24 h at 1 ms with 1 s windows
(86 400 a thread) for 2 threads, each with its histogram and a full
exceedance table (1024 wake-ups above its threshold, with their cycles,
as measure keeps them); `tail FILE` and `report FILE -o x.html` timed on
the file, then on the store after `rtscope import FILE`. The latencies:
a lognormal body (median 12 us, sigma 0.3; the histogram holds its
expected counts), the 1024 largest of a thread drawn from the same
lognormal above the threshold it puts 1024 of 86.4 M wake-ups over,
gathered in clusters (a stall delays 1-4 periods, mean 1.5, the other
thread too one time in four) so that theta is estimated from the run.

No root needed. Usage:
  python3 bench/tail-cost.py [--rtscope target/release/rtscope]
      [--before OLD_BINARY] [--sizes 2048,8192,16384,86400]
      [--repeat 3] [--timeout 120] [--own]
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time


def xenomai_text(seconds, seed=37):
    """A Xenomai latency output of `seconds` RTD lines (100 us period)."""
    r = random.Random(seed)
    hist = {}
    lines = [
        "== Sampling period: 100 us",
        "== Test mode: periodic user-mode task",
        "== All results in microseconds",
        "warming up...",
        "RTT|  00:00:01  (periodic user-mode task, 100 us period, priority 99)",
        "RTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst",
    ]
    best, worst = 1e9, 0.0
    for _ in range(seconds):
        u = r.random()
        mx = max(8.0 - 2.0 * math.log(-math.log(u)), 4.2)
        mn = 1.5 + r.random() * 0.5
        best, worst = min(best, mn), max(worst, mx)
        lines.append(
            "RTD|%11.3f|%11.3f|%11.3f|%8d|%6d|%11.3f|%11.3f"
            % (mn, 4.1, mx, 0, 0, best, worst)
        )
        # the second's 10 000 samples: its min, its max, a body in 1-5 us
        for k, c in ((int(mn), 1), (int(mx), 1), (2, 1500), (3, 4000), (4, 4498)):
            hist[k] = hist.get(k, 0) + c
    lines.append("---|--param|----range-|--samples")
    for b in sorted(hist):
        lines.append("HSD|    avg|%4d - %2d |%9d" % (b, b + 1, hist[b]))
    lines.append("HSH|--param|--samples-|--average--|---stddev--")
    lines.append("HSS|    avg|%10d|      4.000|      0.600" % sum(hist.values()))
    lines.append("---|-----------|-----------|-----------|--------|------|-----")
    h, m, s = seconds // 3600, seconds // 60 % 60, seconds % 60
    lines.append(
        "RTS|%11.3f|%11.3f|%11.3f|%8d|%6d|    %02d:%02d:%02d/%02d:%02d:%02d"
        % (best, 4.1, worst, 0, 0, h, m, s, h, m, s)
    )
    return "\n".join(lines) + "\n"


def timed(cmd, timeout):
    """Wall time of `cmd` in seconds, or None past `timeout`."""
    t0 = time.monotonic()
    try:
        subprocess.run(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    return time.monotonic() - t0


def median_time(cmd, repeat, timeout):
    times = []
    for _ in range(repeat):
        t = timed(cmd, timeout)
        if t is None:
            return None
        times.append(t)
        if t > 5.0:
            break
    return statistics.median(times)


def show(t, timeout):
    return "> %d s" % timeout if t is None else "%.3f s" % t


# ---------------------------------------------------------------- --own

PERIOD_NS = 1_000_000
DAY_S = 86_400
PER_WINDOW = 1_000_000_000 // PERIOD_NS
WAKEUPS = DAY_S * PER_WINDOW
TABLE = 1024
SUB_BITS = 9
MEDIAN_NS, SIGMA = 12_000.0, 0.3


def bucket_lower(i):
    """The histogram's log-linear buckets (src/histogram.rs, 9 sub-bits)."""
    s = 1 << SUB_BITS
    if i < 2 * s:
        return i
    shift = (i >> SUB_BITS) - 1
    return ((i & (s - 1)) + s) << shift


def bucket_index(v):
    s = 1 << SUB_BITS
    if v < s:
        return v
    shift = v.bit_length() - 1 - SUB_BITS
    return (shift << SUB_BITS) + (v >> shift)


def cdf(x):
    """The body's lognormal distribution function."""
    if x <= 0:
        return 0.0
    return 0.5 * math.erfc(-math.log(x / MEDIAN_NS) / (SIGMA * math.sqrt(2)))


def sf(x):
    if x <= 0:
        return 1.0
    return 0.5 * math.erfc(math.log(x / MEDIAN_NS) / (SIGMA * math.sqrt(2)))


def quantile_above(p_sf):
    """The x with sf(x) = p_sf, by bisection on ln x."""
    lo, hi = math.log(MEDIAN_NS), math.log(MEDIAN_NS) + 40 * SIGMA
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if sf(math.exp(mid)) > p_sf:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def quantile(p):
    return quantile_above(1.0 - p) if p > 0.5 else quantile_below(p)


def quantile_below(p):
    lo, hi = math.log(MEDIAN_NS) - 40 * SIGMA, math.log(MEDIAN_NS)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if cdf(math.exp(mid)) < p:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def own_thread(index, r, shared):
    """One thread's record: histogram, windows, stats, exceedance table."""
    threshold = int(quantile_above(TABLE / WAKEUPS))
    # The table: clusters of consecutive wake-ups above the threshold, the
    # first of each drawn above it, the others within 1 % below that
    # (one stall delays them all), until 1024; some clusters are the
    # other thread's (`shared`: one stall, both threads late).
    items = {}
    starts = list(shared)
    while len(items) < TABLE:
        if starts:
            c = starts.pop()
        else:
            c = r.randrange(WAKEUPS - 8)
            if r.random() < 0.25:
                shared.append(c)
        v = quantile_above(r.random() * TABLE / WAKEUPS)
        k = 1
        while r.random() < 1 / 3 and k < 4:
            k += 1
        for j in range(k):
            if len(items) >= TABLE:
                break
            items[c + j] = max(int(v * (1 - 0.01 * r.random() * (j > 0))), threshold + 1)
    cycles = sorted(items)
    tail = [items[c] for c in cycles]
    # The histogram: the body's expected counts below the threshold
    # (rounded so that they sum to the rest), the table's values above.
    counts = {}
    body = WAKEUPS - TABLE
    top = bucket_index(threshold)
    total_p = cdf(threshold + 1)
    acc, given = 0.0, 0
    for i in range(bucket_index(2_000), top + 1):
        lo, hi = bucket_lower(i), min(bucket_lower(i + 1), threshold + 1)
        acc += (cdf(hi) - cdf(lo)) / total_p * body
        n = int(round(acc)) - given
        if n > 0:
            counts[lo] = counts.get(lo, 0) + n
            given += n
    counts[bucket_lower(top)] += body - given
    for v in tail:
        lo = bucket_lower(bucket_index(v))
        counts[lo] = counts.get(lo, 0) + 1
    buckets = [[lo, n] for lo, n in sorted(counts.items())]
    # Windows of 1 s: 1000 wake-ups each; a window's maximum is the
    # largest of its table entries, else the largest of 1000 body draws.
    top_of = {}
    for c, v in zip(cycles, tail):
        w = c // PER_WINDOW
        top_of[w] = max(top_of.get(w, 0), v)
    p99 = int(quantile(0.99))
    w = {k: [] for k in ("count", "min_ns", "avg_ns", "max_ns", "p99_ns", "missed")}
    mean = int(MEDIAN_NS * math.exp(SIGMA * SIGMA / 2))
    pt = cdf(threshold)
    for i in range(DAY_S):
        mx = top_of.get(i) or int(quantile(r.random() ** (1 / PER_WINDOW) * pt))
        w["count"].append(PER_WINDOW)
        w["min_ns"].append(int(quantile(1 - r.random() ** (1 / PER_WINDOW))))
        w["avg_ns"].append(mean + r.randrange(-50, 50))
        w["max_ns"].append(mx)
        w["p99_ns"].append(p99 + r.randrange(-300, 300))
        w["missed"].append(0)
    w_series = {"window_ns": PER_WINDOW * PERIOD_NS, "compacted": False, **w}
    cum, qs = 0, {}
    wanted = [("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99), ("p999_ns", 0.999),
              ("p9999_ns", 0.9999)]
    for lo, n in buckets:
        cum += n
        for k, q in wanted:
            if k not in qs and cum >= q * WAKEUPS:
                qs[k] = lo
    mn = min(w["min_ns"])
    mx = max(tail)
    at = lambda c: {"cycle": c, "offset_ns": c * PERIOD_NS,
                    "unix_ns": START_NS + c * PERIOD_NS}
    stats = {
        "samples": WAKEUPS, "wakeups": WAKEUPS, "min_ns": mn, "avg_ns": float(mean),
        **qs, "max_ns": mx, "missed_periods": 0, "early_wakeups": 0,
        "min_at": at(w["min_ns"].index(mn) * PER_WINDOW),
        "max_at": at(cycles[tail.index(mx)]),
    }
    outliers = sorted(zip(tail, cycles), reverse=True)[:32]
    return {
        "index": index, "cpu": index, "policy": "fifo", "priority": 95,
        "interval_ns": PERIOD_NS, "stats": stats,
        "histogram": {"encoding": "log-linear", "sub_bucket_bits": SUB_BITS,
                      "resolution_ns": 1, "buckets": buckets},
        "windows": w_series,
        "outliers": [{"latency_ns": v, "at": at(c)} for v, c in outliers],
        "exceedances": {"threshold_ns": threshold, "cycles": cycles, "latencies_ns": tail},
    }


START_NS = 1_700_000_000_000_000_000
SCHEMA_VERSION = 1  # src/record.rs


def own_record(seed=37):
    """rtscope's own run record of 24 h at 1 ms, 2 threads (see the top)."""
    r = random.Random(seed)
    shared = []
    threads = [own_thread(i, r, shared) for i in range(2)]
    st = [t["stats"] for t in threads]
    big = max(st, key=lambda s: s["max_ns"])
    small = min(st, key=lambda s: s["min_ns"])
    overall = {
        "samples": 2 * WAKEUPS, "wakeups": 2 * WAKEUPS, "min_ns": small["min_ns"],
        "avg_ns": sum(s["avg_ns"] for s in st) / 2,
        **{k: max(s[k] for s in st) for k in ("p50_ns", "p90_ns", "p99_ns", "p999_ns",
                                               "p9999_ns")},
        "max_ns": big["max_ns"], "missed_periods": 0, "early_wakeups": 0,
        "min_at": small["min_at"], "max_at": big["max_at"],
    }
    duration = DAY_S * 1_000_000_000
    return {
        "schema": "rtscope.run", "schema_version": SCHEMA_VERSION,
        "run_uuid": "%032x" % r.getrandbits(128),
        "tool": {"name": "rtscope", "version": "0.1.0"},
        "status": "complete",
        "source": {"kind": "measured", "command_line": ["rtscope", "measure", "-D", "24h",
                                                         "-t", "2"]},
        "started_at_unix_ns": START_NS, "ended_at_unix_ns": START_NS + duration,
        "duration_ns": duration, "end_reason": "duration",
        "options": {"interval_ns": PERIOD_NS, "distance_ns": 0, "policy": "fifo",
                    "priority": 95, "priospread": False, "timer": "abs",
                    "clock": "monotonic", "duration_ns": duration, "warmup_ns": 0,
                    "window_ns": PER_WINDOW * PERIOD_NS, "omission_correction": True,
                    "mlockall": True, "dma_latency_us": 0, "cpus": [0, 1]},
        "threads": threads, "overall": overall, "limits": {"exceeded": False},
        "fingerprint": {"hostname": "bench", "kernel_release": "6.1.0-rt",
                        "kernel_version": "#1 SMP PREEMPT_RT", "machine": "x86_64",
                        "preemption_model": "rt", "cpu_model": "bench CPU",
                        "cpus_online": 2, "cmdline": ""},
    }


def own(a, builds):
    """Time tail and report of rtscope's own day-long record."""
    with tempfile.TemporaryDirectory(prefix="tail-cost-own-") as d:
        t0 = time.monotonic()
        rec = own_record()
        src = os.path.join(d, "day.json")
        with open(src, "w") as f:
            json.dump(rec, f)
        t = rec["threads"]
        print("record: 24 h at 1 ms, %d threads, %d windows of 1 s each, %d exceedances each "
              "(thresholds %s ns), %d MB, written in %.0f s"
              % (len(t), len(t[0]["windows"]["count"]), len(t[0]["exceedances"]["cycles"]),
                 "/".join(str(x["exceedances"]["threshold_ns"]) for x in t),
                 os.path.getsize(src) // 1_000_000, time.monotonic() - t0))
        db = os.path.join(d, "store.db")
        subprocess.run([builds[-1][1], "import", "--db", db, src],
                       stdout=subprocess.DEVNULL, check=True)
        html = os.path.join(d, "x.html")
        print("%-8s %-13s %-13s" % ("from", "tail", "report")
              + ("" if len(builds) == 1 else "  (build)"))
        for name, b in builds:
            for where, run in (("file", [src]), ("store", ["--db", db, "last"])):
                tail = median_time([b, "tail"] + run, a.repeat, a.timeout)
                report = median_time([b, "report"] + run + ["-o", html], a.repeat,
                                     a.timeout)
                print("%-8s %-13s %-13s" % (where, show(tail, a.timeout),
                                            show(report, a.timeout))
                      + ("" if len(builds) == 1 else "  (%s)" % name), flush=True)
        out = subprocess.run([builds[-1][1], "tail", src, "--json"], capture_output=True,
                             check=True).stdout
        x = json.loads(out)["extremal_index"]
        print("theta: %s (%s, from %s)" % (x.get("theta"), x.get("status"), x.get("from")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rtscope", default="target/release/rtscope")
    ap.add_argument("--before", help="a second build to time beside it")
    ap.add_argument("--sizes", default="2048,8192,16384,86400")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--own", action="store_true",
                    help="rtscope's own 24 h record instead of Xenomai imports")
    a = ap.parse_args()
    builds = [("after", a.rtscope)]
    if a.before:
        builds.insert(0, ("before", a.before))
    for _, b in builds:
        if not os.access(b, os.X_OK):
            sys.exit("%s: not an executable (make build, or --rtscope)" % b)
    if a.own:
        return own(a, builds)
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="tail-cost-") as d:
        header = "windows  " + "  ".join(
            "%-13s %-13s" % ("tail " + n, "report " + n) for n, _ in builds
        )
        print(header)
        for n in sizes:
            src = os.path.join(d, "latency-%d.txt" % n)
            with open(src, "w") as f:
                f.write(xenomai_text(n))
            db = os.path.join(d, "store-%d.db" % n)
            subprocess.run(
                [a.rtscope, "import", "--db", db, src],
                stdout=subprocess.DEVNULL,
                check=True,
            )
            row = "%7d  " % n
            for _, b in builds:
                tail = median_time(
                    [b, "tail", "--db", db, "last"], a.repeat, a.timeout
                )
                html = os.path.join(d, "report-%d.html" % n)
                report = median_time(
                    [b, "report", "--db", db, "last", "--output", html],
                    a.repeat,
                    a.timeout,
                )
                row += "%-13s %-13s " % (show(tail, a.timeout), show(report, a.timeout))
            print(row.rstrip(), flush=True)


if __name__ == "__main__":
    main()
