#!/usr/bin/env python3
"""The cost of --metrics while Prometheus-style scraping goes on.

Runs PAIRS pairs of `rtscope measure` with the same options, one plain and
one with `--metrics 127.0.0.1:PORT` scraped every second by a scraper in
this script (a GET of /metrics, as Prometheus does), alternating which goes
first, and prints per pair and as the median over pairs the ratios
(with / without) of avg and p99 latency (all threads), and the number of
scrapes answered. Goal: <= 1.05.

With --affinity CPULIST the threads measure on those CPUs only (as on a
board with a housekeeping CPU): rtscope then keeps its metrics server on
the other CPUs, and the scraper is pinned there too (--scraper-cpus,
default: the CPUs not in --affinity), as a Prometheus on another host
would leave only the server's side on the board.

Usage: sudo flock /tmp/rtscope-measure.lock python3 bench/metrics-cost.py
       [--pairs 3] [--duration 20] [--affinity 1] [--scraper-cpus 0]
       [--rtscope target/release/rtscope]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape_loop(port, stop, counts, cpus):
    if cpus:
        os.sched_setaffinity(0, cpus)  # this thread only
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
                c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
                data = b""
                while True:
                    chunk = c.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"HTTP/1.1 200"):
                    counts["ok"] += 1
                    counts["bytes"] = len(data)
        except OSError:
            pass
        stop.wait(1.0)


def measure(rtscope, duration, tmp, metrics, affinity, scraper_cpus):
    out = os.path.join(tmp, "run.json")
    argv = [rtscope, "measure", "-q", "--no-save", "-D", str(duration), "--json", out]
    if affinity:
        argv += ["-a", affinity]
    counts = {"ok": 0, "bytes": 0}
    stop = threading.Event()
    scraper = None
    if metrics:
        port = free_port()
        argv += ["--metrics", f"127.0.0.1:{port}"]
        scraper = threading.Thread(target=scrape_loop, args=(port, stop, counts, scraper_cpus))
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if scraper:
        time.sleep(0.5)
        scraper.start()
    _, err = proc.communicate()
    stop.set()
    if scraper:
        scraper.join()
    if proc.returncode != 0:
        sys.exit(f"rtscope failed: {err.decode()}")
    with open(out) as f:
        rec = json.load(f)
    o = rec["overall"]
    return o["avg_ns"], o["p99_ns"], counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--affinity", default=None)
    ap.add_argument("--scraper-cpus", default=None)
    ap.add_argument("--rtscope", default="target/release/rtscope")
    a = ap.parse_args()
    scraper_cpus = None
    if a.scraper_cpus:
        scraper_cpus = {int(c) for c in a.scraper_cpus.split(",")}
    elif a.affinity:
        measured = {int(c) for c in a.affinity.split(",")}
        scraper_cpus = os.sched_getaffinity(0) - measured
    ratios_avg, ratios_p99 = [], []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_DATA_HOME"] = tmp
        where = f"CPUs {a.affinity}" if a.affinity else "every CPU"
        print(f"{a.pairs} pairs of {a.duration} s runs, 1 thread per CPU at 1 ms, FIFO 95, on {where}; "
              f"scraper on {sorted(scraper_cpus) if scraper_cpus else 'any CPU'}")
        print("pair  order     avg_off  avg_on  p99_off  p99_on  (us)  avg_ratio  p99_ratio  scrapes")
        for i in range(a.pairs):
            order = [False, True] if i % 2 == 0 else [True, False]
            res = {}
            for on in order:
                res[on] = measure(a.rtscope, a.duration, tmp, on, a.affinity, scraper_cpus)
            (ao, po, _), (an, pn, c) = res[False], res[True]
            ra, rp = an / ao, pn / po
            ratios_avg.append(ra)
            ratios_p99.append(rp)
            print(
                f"{i + 1:4}  {'off,on' if not order[0] else 'on,off':8}  {ao / 1e3:7.1f}  {an / 1e3:6.1f}  "
                f"{po / 1e3:7.1f}  {pn / 1e3:6.1f}        {ra:9.3f}  {rp:9.3f}  {c['ok']} ({c['bytes']} B)"
            )
    print(
        f"median ratio with/without --metrics: avg {statistics.median(ratios_avg):.3f}, "
        f"p99 {statistics.median(ratios_p99):.3f} (goal <= 1.05)"
    )


if __name__ == "__main__":
    main()
