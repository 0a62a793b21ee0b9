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

No root needed. Usage:
  python3 bench/tail-cost.py [--rtscope target/release/rtscope]
      [--before OLD_BINARY] [--sizes 2048,8192,16384,86400]
      [--repeat 3] [--timeout 120]
"""

import argparse
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rtscope", default="target/release/rtscope")
    ap.add_argument("--before", help="a second build to time beside it")
    ap.add_argument("--sizes", default="2048,8192,16384,86400")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120)
    a = ap.parse_args()
    builds = [("after", a.rtscope)]
    if a.before:
        builds.insert(0, ("before", a.before))
    for _, b in builds:
        if not os.access(b, os.X_OK):
            sys.exit("%s: not an executable (make build, or --rtscope)" % b)
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
