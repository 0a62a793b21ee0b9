#!/usr/bin/env python3
"""Why cyclictest's minimum is lower on a VM: a companion on the measured CPU.

cyclictest pins its main thread to the measured CPUs (-a) and wakes it 100
times a second (check: /proc/PID/task/*/status, Cpus_allowed_list and
voluntary_ctxt_switches). rtscope's main thread wakes 20 times a second,
anywhere. On a virtual machine a timer that fires while the vCPU is
running is delivered faster than one that must first wake a halted vCPU,
so anything else that runs now and then on the measured CPU makes a few
wake-ups exceptionally fast, and lowers the minimum (not the p1).

This alternates PAIRS pairs of `rtscope measure -a CPU` alone and with a
companion on CPU (a Python loop sleeping 10 ms, as cyclictest's main
thread does), the order flipped every pair, and prints min, p1 and avg per
run and the median ratio companion/alone.

Usage: sudo flock /tmp/rtscope-measure.lock python3 bench/min-companion.py
       [--pairs 6] [--duration 10] [--cpu 1] [--rtscope target/release/rtscope]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(a, tmp, companion):
    out = os.path.join(tmp, "run.json")
    comp = None
    if companion:
        comp = subprocess.Popen(["taskset", "-c", str(a.cpu), sys.executable, "-c",
                                 "import time\nwhile True: time.sleep(0.01)"])
        time.sleep(0.5)
    try:
        subprocess.run([a.rtscope, "--db", os.path.join(tmp, "s.db"), "measure", "-q", "-p", "95",
                        "-a", str(a.cpu), "-D", f"{a.duration}s", "--no-omission-correction",
                        "--json", out], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        if comp:
            comp.kill()
            comp.wait()
    r = json.load(open(out))
    t = r["threads"][0]
    h = sorted(t["histogram"]["buckets"])
    n = sum(c for _, c in h)
    seen, p1 = 0, None
    for v, c in h:
        seen += c
        if seen >= 0.01 * n:
            p1 = v
            break
    o = r["overall"]
    return {"min_us": o["min_ns"] / 1000, "p1_us": p1 / 1000, "avg_us": o["avg_ns"] / 1000}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=6)
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--cpu", type=int, default=1)
    p.add_argument("--rtscope", default="target/release/rtscope")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (SCHED_FIFO, mlockall)")
    keys = ["min_us", "p1_us", "avg_us"]
    ratios = {k: [] for k in keys}
    print(f"{'pair':>4} {'run':<10} {'min us':>7} {'p1 us':>7} {'avg us':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            order = [False, True] if i % 2 == 0 else [True, False]
            res = {c: run(a, tmp, c) for c in order}
            for c in (False, True):
                r = res[c]
                print(f"{i + 1:>4} {'companion' if c else 'alone':<10} {r['min_us']:>7.1f} "
                      f"{r['p1_us']:>7.1f} {r['avg_us']:>7.1f}")
            for k in keys:
                ratios[k].append(res[True][k] / res[False][k])
    print("median ratio companion/alone (min..max):")
    for k in keys:
        v = ratios[k]
        print(f"  {k:<7} {statistics.median(v):.2f}  ({min(v):.2f}..{max(v):.2f})")


if __name__ == "__main__":
    main()
