#!/usr/bin/env python3
"""What rtscope costs as threads grow, 2 to 1024 (issue "scale").

For each thread count N, one `rtscope measure -t N` run (threads spread
over every CPU this machine has, FIFO 95), in a store of its own:

- peak memory: the run's maximum resident set (wait4's ru_maxrss; every
  page is locked by mlockall, so this is what the run holds);
- start-up: from exec to the first measured deadline (the record's
  `started_at_unix_ns`), less the engine's fixed 20 ms start delay: the
  time it takes to set up and start N threads, every one of which then
  wakes at that deadline;
- the main thread's CPU in all (start-up's fingerprint, the collector,
  the end's record and store), and the collector's alone while the run
  measures (the main thread's CPU from 1 s after the first deadline to
  1 s before the end: it drains the window and late-wake-up queues every
  50 ms, folds the series and the exceedance tables), per second and per
  window of one thread; the measuring threads' CPU. From
  /proc/PID/task/*/schedstat. Samples never pass through the collector:
  each thread counts its own into its histogram;
- what was lost: the warnings of dropped windows or late wake-ups
  (none expected), and the samples against the periods asked for;
- the record (JSON) and the store's size;
- `rtscope report` and `rtscope tail` of the record, wall time.

Interval: 1 ms up to RATE/1000 threads, then longer so that all threads
together ask for RATE wake-ups a second (this machine has 2 CPUs; above
that rate the threads themselves, not rtscope, cannot keep up).

`--full N,...` adds, for those N, a run in 10 ms windows (the minimum)
long enough to fill each thread's window series to its cap: the memory
of a day-long run (the series are what grows with a run's length; they
stop at their cap), with the window queues at their largest (3000
windows a thread at 10 ms, 64 at the default 1 s).

Usage: sudo python3 bench/scale-cost.py [--threads 2,16,64,128,256,512,1024]
       [--duration 10] [--rate 64000] [--full 128,1024]
       [--rtscope target/x86_64-unknown-linux-gnu/release/rtscope]
"""

import argparse
import glob
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import time

START_DELAY_NS = 20_000_000


def series_capacity(n):
    # src/engine/run.rs series_capacity
    points = max(1024, min(8192, (1 << 19) // n))
    return 1 << (points.bit_length() - 1)


def cpu_ns(pid):
    """Per task: (comm, ns on CPU)."""
    out = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(f"{task}/comm") as f:
                comm = f.read().strip()
            with open(f"{task}/schedstat") as f:
                ns = int(f.read().split()[0])
        except OSError:
            continue
        out[int(os.path.basename(task))] = (comm, ns)
    return out


def run(a, n, interval_us, duration_s, window=None):
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "rtscope.db")
        rec = os.path.join(tmp, "run.json")
        argv = [a.rtscope, "--db", db, "measure", "-t", str(n), "-i", f"{interval_us}us",
                "-D", f"{duration_s}s", "-q", "--json", rec]
        if window:
            argv += ["--window", window]
        t_exec = time.time_ns()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        last = {}
        main_at = []  # (seconds since exec, the main thread's ns on CPU)
        stop = threading.Event()

        def poll():
            while not stop.is_set():
                now = cpu_ns(p.pid)
                for tid, v in now.items():
                    last[tid] = v
                if p.pid in now:
                    main_at.append(((time.time_ns() - t_exec) / 1e9, now[p.pid][1]))
                time.sleep(0.2)

        poller = threading.Thread(target=poll)
        poller.start()
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        poller.join()
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(argv)}: exit {p.returncode}\n{err[-2000:]}")
        r = json.load(open(rec))
        collector = last.get(p.pid, ("", 0))[1]
        # The collector alone, measuring: the main thread's CPU between 1 s
        # after the first deadline and 1 s before the end (start-up's
        # fingerprint and the end's record and store are left out).
        t0 = (r["started_at_unix_ns"] - t_exec) / 1e9
        steady = [(t, ns) for t, ns in main_at if t0 + 1 <= t <= t0 + duration_s - 1]
        if len(steady) >= 2:
            (ta, na), (tb, nb) = steady[0], steady[-1]
            steady_ns_per_s = (nb - na) / (tb - ta)
        else:
            steady_ns_per_s = float("nan")
        window_s = 0.01 if window == "10ms" else 1.0
        measuring = sum(ns for comm, ns in last.values() if comm.startswith("rtscope-m"))
        samples = r["overall"]["samples"]
        c = sqlite3.connect(db)
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
        row = {
            "threads": n,
            "interval_us": interval_us,
            "window": window or "1s",
            "rss_mb": usage.ru_maxrss / 1024,
            "startup_ms": (r["started_at_unix_ns"] - t_exec - START_DELAY_NS) / 1e6,
            "main_cpu_ms": collector / 1e6,
            "collector_ms_per_s": steady_ns_per_s / 1e6,
            "collector_us_per_window": steady_ns_per_s / 1e3 / (n / window_s),
            "measuring_cpu_pct": measuring / 1e7 / duration_s,
            "samples": samples,
            "asked": n * duration_s * 1_000_000 // interval_us,
            "lost": [w for w in err.splitlines() if "dropped" in w or "lost" in w],
            "series_points": max(len(t["windows"]["count"]) if isinstance(t.get("windows"), dict)
                                 and "count" in t["windows"] else 0 for t in r["threads"]),
            "record_kb": os.path.getsize(rec) / 1024,
            "store_kb": os.path.getsize(db) / 1024,
        }
        for what, cmd in [("report_s", [a.rtscope, "report", rec, "-o", os.path.join(tmp, "r.html")]),
                          ("tail_s", [a.rtscope, "tail", rec])]:
            t = time.monotonic()
            q = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            row[what] = time.monotonic() - t if q.returncode == 0 else f"exit {q.returncode}"
        return row


def show(row):
    lost = "; ".join(row["lost"]) or "none"
    rs = row["report_s"] if isinstance(row["report_s"], str) else f"{row['report_s']:.2f}"
    ts = row["tail_s"] if isinstance(row["tail_s"], str) else f"{row['tail_s']:.2f}"
    print(f"{row['threads']:>5} {row['interval_us']:>6}us {row['window']:>5} {row['rss_mb']:>8.1f} "
          f"{row['startup_ms']:>8.1f} {row['main_cpu_ms']:>8.0f} {row['collector_ms_per_s']:>9.2f} {row['collector_us_per_window']:>9.2f} "
          f"{row['measuring_cpu_pct']:>6.1f} {row['samples']:>9}/{row['asked']:<9} {row['series_points']:>6} "
          f"{row['record_kb']:>8.0f} {row['store_kb']:>8.0f} {rs:>7} {ts:>6}  lost: {lost}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="2,16,64,128,256,512,1024")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rate", type=int, default=64000, help="wake-ups a second, all threads together")
    ap.add_argument("--full", default="128,1024", help="thread counts to run until their series are full")
    ap.add_argument("--rtscope", default="target/x86_64-unknown-linux-gnu/release/rtscope")
    ap.add_argument("--json", help="write the rows there too")
    a = ap.parse_args()
    print(f"{os.cpu_count()} CPUs; {a.rate} wake-ups/s at most; runs of {a.duration} s")
    print("    N interval window   RSS_MB start_ms  main_ms coll_ms/s coll_us/w meas_% samples/asked       "
          "points record_KB store_KB report_s tail_s")
    rows = []
    for n in [int(x) for x in a.threads.split(",") if x]:
        interval_us = max(1000, -(-n * 1_000_000 // a.rate))
        rows.append(run(a, n, interval_us, a.duration))
        show(rows[-1])
    for n in [int(x) for x in a.full.split(",") if x]:
        interval_us = max(1000, -(-n * 1_000_000 // a.rate))
        duration = int(series_capacity(n) * 0.01 * 1.2) + 2
        rows.append(run(a, n, interval_us, duration, window="10ms"))
        show(rows[-1])
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
