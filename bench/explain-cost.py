#!/usr/bin/env python3
"""What `measure --explain` costs the measurement, and what it loses.

cost: PAIRS rounds of (rtscope measure, rtscope measure --explain) with the
same options, alternating which goes first, at each interval given; per
round the ratios with/without of avg and p99 (all threads), and at the end
the median ratio per interval. Every run uses --no-omission-correction so
a sample is a wake-up. With --control, each round also has a second run
without --explain, in a shuffled order: its ratio to the first (the same
measurement twice) shows how far this machine's noise alone moves the
ratio.

drops: one run of DURATION under a load (default hell) with --explain,
printing what the trace reader read and what the kernel dropped, and how
many explanations are marked partial.

Usage: sudo python3 bench/explain-cost.py cost [--pairs 4] [--duration 20]
           [--intervals 1000,100] [--cpus 1] [--events lean|full]
           [--control] [--extra "OPTIONS"] [--explain-extra "OPTIONS"]
       sudo python3 bench/explain-cost.py drops [--duration 600] [--load hell]
           [--cpus 1] [--events lean|full]

--events is passed to --explain-events (default lean, as measure's).
Needs root and a release build (target/release/rtscope).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

BIN = os.environ.get("RTSCOPE", "target/release/rtscope")


def measure(args, out):
    argv = [BIN, "measure", "-q", "--no-save", "--json", out] + args
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.decode().strip()}")
    with open(out) as f:
        return json.load(f)


def figures(rec):
    o = rec["overall"]
    return {"avg_us": o["avg_ns"] / 1e3, "p99_us": o["p99_ns"] / 1e3,
            "max_us": o["max_ns"] / 1e3}


def cost(a):
    tmp = tempfile.mkdtemp(prefix="rtscope-explain-cost-")
    where = f"CPUs {a.cpus}" if a.cpus else "every CPU"
    print(f"{a.pairs} pairs of {a.duration}s, FIFO 95, one thread per CPU on {where}, "
          f"with and without --explain --explain-events {a.events} (threshold 100us)")
    for interval in a.intervals.split(","):
        ratios = {"avg_us": [], "p99_us": []}
        base = ["-i", interval, "-D", str(a.duration), "--no-omission-correction"]
        if a.cpus:
            base += ["-a", a.cpus]
        base += a.extra.split()
        print(f"\ninterval {interval}us")
        control = {"avg_us": [], "p99_us": []}
        print(f"{'pair':>4} {'run':>9} {'avg_us':>8} {'p99_us':>8} {'max_us':>9} {'explained':>9}")
        shuffle = random.Random(interval)
        for k in range(a.pairs):
            order = ["plain", "explain"] if k % 2 == 0 else ["explain", "plain"]
            if a.control:
                order.append("plain2")
                shuffle.shuffle(order)
            got = {}
            for run in order:
                out = os.path.join(tmp, f"{interval}-{k}-{run}.json")
                extra = (["--explain", "--explain-events", a.events] + a.explain_extra.split()
                         if run == "explain" else [])
                rec = measure(base + extra, out)
                got[run] = figures(rec)
                f = got[run]
                n = rec["explain"]["spikes_explained"] if run == "explain" else ""
                print(f"{k:>4} {run:>9} {f['avg_us']:8.2f} "
                      f"{f['p99_us']:8.2f} {f['max_us']:9.1f} {n:>9}")
            fo = got["plain"]
            for run, into in (("explain", ratios), ("plain2", control)):
                if run not in got:
                    continue
                for m in into:
                    into[m].append(got[run][m] / fo[m])
                label = "ratio" if run == "explain" else "control"
                print(f"{k:>4} {label:>9} {got[run]['avg_us'] / fo['avg_us']:8.2f} "
                      f"{got[run]['p99_us'] / fo['p99_us']:8.2f}")
        print(f"median ratio with/without --explain at {interval}us (min..max):")
        for m, v in ratios.items():
            print(f"  {m:<8} {statistics.median(v):.2f}  ({min(v):.2f}..{max(v):.2f})")
        if a.control:
            print(f"control: median ratio of two runs without --explain at {interval}us (min..max):")
            for m, v in control.items():
                print(f"  {m:<8} {statistics.median(v):.2f}  ({min(v):.2f}..{max(v):.2f})")


def drops(a):
    tmp = tempfile.mkdtemp(prefix="rtscope-explain-drops-")
    out = os.path.join(tmp, "run.json")
    args = ["-D", str(a.duration), "--load", a.load, "--explain", "--explain-events", a.events]
    if a.cpus:
        args += ["-a", a.cpus]
    rec = measure(args, out)
    e = rec["explain"]
    xs = e["explanations"]
    partial = sum(1 for x in xs if x["completeness"] != "complete")
    f = figures(rec)
    where = f"-a {a.cpus}" if a.cpus else "every CPU"
    print(f"{a.duration}s on {where} under --load {a.load} with --explain: max {f['max_us']:.1f}us, "
          f"p99 {f['p99_us']:.1f}us")
    print(f"events read {e['events_read']}, lost {e['events_lost']} "
          f"({100.0 * e['events_lost'] / max(1, e['events_read'] + e['events_lost']):.3f} %)")
    print(f"wake-ups >= {e['threshold_ns'] / 1e3:.0f}us: {e['spikes_seen']}, explained "
          f"{e['spikes_explained']}, kept {len(xs)}, of which partial {partial}")
    for x in xs[:5]:
        print(f"  {x['spike']['latency_ns'] / 1e3:9.1f}us  {x['cause']}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cost")
    c.add_argument("--pairs", type=int, default=4)
    c.add_argument("--duration", type=int, default=20)
    c.add_argument("--intervals", default="1000,100")
    c.add_argument("--cpus", default="1",
                   help="measured CPUs (-a); the trace reader runs on the others")
    c.add_argument("--control", action="store_true",
                   help="a second run without --explain each round: the noise of the ratio")
    c.add_argument("--extra", default="", help="more measure options, both runs")
    c.add_argument("--explain-extra", default="", help="more measure options, --explain run")
    d = sub.add_parser("drops")
    d.add_argument("--duration", type=int, default=600)
    d.add_argument("--load", default="hell")
    d.add_argument("--cpus", default="", help="measured CPUs (-a); default every CPU")
    for x in (c, d):
        x.add_argument("--events", default="lean", choices=["lean", "full"],
                       help="--explain-events")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (sudo)")
    cost(a) if a.what == "cost" else drops(a)


if __name__ == "__main__":
    main()
