#!/usr/bin/env python3
"""rtscope next to cyclictest, in the same run, on the same machine.

Runs PAIRS pairs of (rtscope measure, cyclictest) with the same interval,
priority, threads and duration, alternating which goes first, and prints
both side by side with per-pair ratios (rtscope / cyclictest) of min, p1
and p50 (the floor a minimum is drawn from, and where most wake-ups land),
avg, p99 and CPU time per sample, then the median ratio over all pairs.

Fairness:
- both lock memory, hold /dev/cpu_dma_latency at 0, pin one thread per CPU,
  use clock_nanosleep(TIMER_ABSTIME) and the same interval for every thread
  (cyclictest -d 0);
- rtscope runs with --no-omission-correction so both count one sample per
  wake-up, as cyclictest does;
- cyclictest runs with -N (nanoseconds): its latencies, minimum and
  histogram (1 ns classes up to 5 ms, -h 5000000) are then as exact as
  rtscope's, where whole truncated microseconds (its default) would put
  +-0.5 us of doubt on minima of a few microseconds;
- CPU time is user+system time of the whole process (wait4 rusage),
  divided by the wake-ups it measured.

Usage: sudo python3 bench/vs-cyclictest.py [--pairs 5] [--duration 20]
       [--interval 1000] [--priority 95] [--cpus 1] [--rtscope target/release/rtscope]
       [--rtscope-arg=--main-affinity=0 ...]
Needs root, cyclictest (Debian rt-tests) and a release build of rtscope.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run_timed(argv):
    """Run argv, return (returncode, cpu seconds of the child)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {err.strip()}")
    return proc.returncode, usage.ru_utime + usage.ru_stime


def quantile_from_hist(hist, q):
    """hist: sorted list of (value, count); value of rank ceil(q*n)."""
    total = sum(c for _, c in hist)
    if total == 0:
        return float("nan")
    rank = max(1, int(-(-q * total // 1)))
    seen = 0
    for v, c in hist:
        seen += c
        if seen >= rank:
            return v
    return hist[-1][0]


HIST_NS = 5_000_000


def cpu_count(cpus):
    n = 0
    for part in cpus.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def rtscope_run(binary, a, tmp):
    out = os.path.join(tmp, "rtscope.json")
    argv = [binary, "measure", "-q", "-p", str(a.priority), "-i", f"{a.interval}us",
            "-D", f"{a.duration}s", "--no-omission-correction", "--json", out]
    argv += a.rtscope_arg
    if a.cpus:
        argv += ["-a", a.cpus]
    _, cpu = run_timed(argv)
    rec = json.load(open(out))
    buckets = []
    wakeups = 0
    for t in rec["threads"]:
        wakeups += t["stats"]["wakeups"]
        b = t["histogram"]["sub_bucket_bits"]
        for lower, count in t["histogram"]["buckets"]:
            # The bucket's midpoint, as rtscope reports quantiles.
            width = 1 if lower < (2 << b) else 1 << (lower.bit_length() - 1 - b)
            buckets.append((lower + width // 2, count))
    buckets.sort()
    o = rec["overall"]
    return {
        "min_us": o["min_ns"] / 1000,
        "p1_us": quantile_from_hist(buckets, 0.01) / 1000,
        "p50_us": quantile_from_hist(buckets, 0.50) / 1000,
        "avg_us": o["avg_ns"] / 1000,
        "p99_us": quantile_from_hist(buckets, 0.99) / 1000,
        "max_us": o["max_ns"] / 1000,
        "samples": wakeups,
        "cpu_ns_per_sample": cpu * 1e9 / max(wakeups, 1),
    }


def cyclictest_run(a, tmp):
    out = os.path.join(tmp, "cyclictest.json")
    argv = ["cyclictest", "-m", "-q", "-N", "-d", "0", "-p", str(a.priority),
            "-i", str(a.interval), "-D", f"{a.duration}", "-h", str(HIST_NS),
            "--latency=0", f"--json={out}"]
    argv += ["-a", a.cpus, "-t", str(cpu_count(a.cpus))] if a.cpus else ["-t", "-a"]
    _, cpu = run_timed(argv)
    rec = json.load(open(out))
    hist = {}
    cycles = 0
    mins, maxs, sums = [], [], 0.0
    for t in rec["thread"].values():
        cycles += t["cycles"]
        mins.append(t["min"])
        maxs.append(t["max"])
        sums += t["avg"] * t["cycles"]
        for k, c in t["histogram"].items():
            hist[int(k)] = hist.get(int(k), 0) + c
    h = sorted(hist.items())
    # Wake-ups beyond the histogram's 5 ms count above every class.
    over = cycles - sum(c for _, c in h)
    if over > 0:
        h.append((max(maxs), over))
    return {
        "min_us": min(mins) / 1000,
        "p1_us": quantile_from_hist(h, 0.01) / 1000,
        "p50_us": quantile_from_hist(h, 0.50) / 1000,
        "avg_us": sums / max(cycles, 1) / 1000,
        "p99_us": quantile_from_hist(h, 0.99) / 1000,
        "max_us": max(maxs) / 1000,
        "samples": cycles,
        "cpu_ns_per_sample": cpu * 1e9 / max(cycles, 1),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--duration", type=int, default=20, help="seconds per run")
    p.add_argument("--interval", type=int, default=1000, help="microseconds")
    p.add_argument("--priority", type=int, default=95)
    p.add_argument("--cpus", help="measure on these CPUs only (e.g. 1), one thread each")
    p.add_argument("--rtscope", default="target/release/rtscope")
    p.add_argument("--rtscope-arg", action="append", default=[],
                   help="one more argument for rtscope measure (repeat it), e.g. --rtscope-arg=--main-affinity=0")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (both tools use SCHED_FIFO and mlockall)")
    if not shutil.which("cyclictest"):
        sys.exit("cyclictest is missing: apt-get install rt-tests")
    if not os.path.exists(a.rtscope):
        sys.exit(f"{a.rtscope} is missing: cargo build --release")

    keys = ["min_us", "p1_us", "p50_us", "avg_us", "p99_us", "cpu_ns_per_sample"]
    ratios = {k: [] for k in keys}
    print(f"{a.pairs} pairs, {a.duration} s each, interval {a.interval} us, "
          f"priority {a.priority}, one thread per CPU on " + (f"CPUs {a.cpus}" if a.cpus else f"all {os.cpu_count()} CPUs"))
    print(f"{'pair':>4} {'tool':<10} {'samples':>8} {'min us':>8} {'p1 us':>8} {'p50 us':>8} {'avg us':>8} "
          f"{'p99 us':>8} {'max us':>9} {'cpu ns/sample':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            order = ["rtscope", "cyclictest"] if i % 2 == 0 else ["cyclictest", "rtscope"]
            res = {}
            for tool in order:
                res[tool] = rtscope_run(a.rtscope, a, tmp) if tool == "rtscope" else cyclictest_run(a, tmp)
            for tool in ["rtscope", "cyclictest"]:
                r = res[tool]
                print(f"{i + 1:>4} {tool:<10} {r['samples']:>8} {r['min_us']:>8.1f} {r['p1_us']:>8.1f} {r['p50_us']:>8.1f} {r['avg_us']:>8.1f} "
                      f"{r['p99_us']:>8.1f} {r['max_us']:>9.1f} {r['cpu_ns_per_sample']:>14.0f}")
            line = []
            for k in keys:
                ratio = res["rtscope"][k] / res["cyclictest"][k]
                ratios[k].append(ratio)
                line.append(f"{k.replace('_us', '').replace('_ns_per_sample', '/sample')} {ratio:.2f}")
            print(f"{'':>4} {'ratio':<10} " + "  ".join(line))
    print()
    print("median ratio rtscope/cyclictest over all pairs (min..max):")
    for k in keys:
        v = ratios[k]
        print(f"  {k:<18} {statistics.median(v):.2f}  ({min(v):.2f}..{max(v):.2f})")


if __name__ == "__main__":
    main()
