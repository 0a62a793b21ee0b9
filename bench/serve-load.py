#!/usr/bin/env python3
"""`rtscope serve` under load: a store of 10 000 runs, 200 clients.

Makes a store of RUNS runs (one short `rtscope measure --json` record,
written again RUNS times with its own uuid, a label, one of 20 hosts and
a start spread over 100 days, then `rtscope import`ed in batches), in
SQLite and, with --pg, copied (`rtscope push`) into a PostgreSQL 15
cluster of the bench's own (a temporary directory, as the `postgres`
user, on a free loopback port; stopped and removed at the end). For each
store: `rtscope serve` on a free loopback port and CLIENTS threads, each
with a kept-alive HTTP/1.1 connection, asking for DURATION seconds, in
turn, the runs list (`/`, a host's runs, a page sorted by worst case)
and a run page (`/runs/ID`, a random id). Prints, per kind of page, the
requests made, the errors (any status but 200, or a broken connection)
and p50/p99/max of the time to the whole answer. With --soak SECONDS it
goes on that long on the SQLite store and prints the server's resident
memory (VmRSS) every 30 s: first, last and largest.

The figures are held to the ones bench/README.md documents for this
load (DOCUMENTED below, a release build on the project's 2-CPU machine),
less a margin for a noisy machine (--margin, 30 % by default): per store,
at least 77 pages a second (110 documented), p99 of either kind at most
4.9 s (3.8 s), the server's memory at most 182 MB (140 MB), and no
error. Each figure is printed beside its bound; the exit status is 1 when
one falls below (or any request failed), 0 when all hold. With another
load than the documented one (--runs, --clients, --duration) there is
nothing to compare: the gate says "not evaluated" and only errors count.

Usage: python3 bench/serve-load.py [--runs 10000] [--clients 200]
           [--duration 30] [--pg] [--soak 600] [--margin 0.3]
Needs target/x86_64-unknown-linux-gnu/release/rtscope (or RTSCOPE=path);
--pg needs root and postgresql (scripts/install-deps.sh). Not a test (not
in `make test`): bench/README.md keeps its figures.
"""

import argparse
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

BIN = os.path.abspath(os.environ.get(
    "RTSCOPE", "target/x86_64-unknown-linux-gnu/release/rtscope"))
PG = "/usr/lib/postgresql/15/bin"
AS_PG = ["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups", "--"]
DAY_NS = 86_400 * 10**9
HOSTS = [f"board-{i:02d}" for i in range(20)]

# What bench/README.md ("serve-load.py") documents for the default load
# (10 000 runs, 200 clients, 30 s), per store: pages a second (list and
# run pages together; 110-135 documented), p99 of the time to a whole
# answer of either kind (1.7-3.8 s), the server's RSS after it
# (100-140 MB). Change them with the README.
LOAD = {"runs": 10_000, "clients": 200, "duration": 30}
DOCUMENTED = {"pages_per_s": 110, "p99_ms": 3800, "rss_mb": 140}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(vals, p):
    if not vals:
        return float("nan")
    return vals[min(len(vals) - 1, int(round(p / 100 * (len(vals) - 1))))]


def run(cmd):
    """Run an rtscope command; on failure stop with its message."""
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])} ...: exit {p.returncode}: {p.stderr.strip()}")


def make_store(work, runs):
    """An SQLite store of `runs` runs; its path."""
    db = os.path.join(work, "runs.db")
    rec_path = os.path.join(work, "one.json")
    run([BIN, "--db", os.path.join(work, "scratch.db"), "measure", "-q",
         "--policy", "other", "-t", "2", "-D", "1s", "--json", rec_path])
    rec = json.load(open(rec_path))
    start = rec["started_at_unix_ns"]
    files = []
    rng = random.Random(1)
    for i in range(runs):
        rec["run_uuid"] = uuid.UUID(int=rng.getrandbits(128)).hex
        rec["label"] = f"load {i} {rng.choice(['vanilla', 'rt', 'isolated'])}"
        rec["fingerprint"]["hostname"] = HOSTS[i % len(HOSTS)]
        rec["started_at_unix_ns"] = start - rng.randrange(100 * DAY_NS)
        p = os.path.join(work, f"r{i}.json")
        with open(p, "w") as f:
            json.dump(rec, f)
        files.append(p)
    t = time.monotonic()
    for k in range(0, len(files), 500):
        run([BIN, "--db", db, "import"] + files[k:k + 500])
    print(f"  store: {runs} runs imported in {time.monotonic() - t:.0f} s "
          f"({os.path.getsize(db) / 1e6:.0f} MB of SQLite)", flush=True)
    for p in files:
        os.remove(p)
    return db


class Server:
    def __init__(self, db):
        self.proc = subprocess.Popen([BIN, "--db", db, "serve", "--listen", "127.0.0.1:0"],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     text=True)
        line = self.proc.stderr.readline()
        self.port = int(line.strip().rstrip("/").rsplit(":", 1)[1])
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def rss_mb(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def client(port, ids, until, out, seed):
    rng = random.Random(seed)
    conn = None
    while time.monotonic() < until:
        kind = "list" if rng.random() < 0.5 else "run"
        if kind == "list":
            path = rng.choice(["/", f"/?host={rng.choice(HOSTS)}", "/?sort=worst&page=3"])
        else:
            path = f"/runs/{rng.choice(ids)}"
        t = time.monotonic()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", path)
            r = conn.getresponse()
            r.read()
            ok = r.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
            conn = None
        out.append((kind, time.monotonic() - t, ok))


def load(srv, ids, clients, duration):
    until = time.monotonic() + duration
    outs = [[] for _ in range(clients)]
    threads = [threading.Thread(target=client, args=(srv.port, ids, until, outs[k], k))
               for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [x for o in outs for x in o]


def report(name, results, duration):
    """Print the figures of one load; return them: errors, pages a
    second, the larger p99 of the two kinds (ms)."""
    p99 = 0.0
    for kind in ("list", "run"):
        times = sorted(t * 1000 for k, t, ok in results if k == kind)
        errors = sum(1 for k, _, ok in results if k == kind and not ok)
        print(f"  {name:10} {kind:4}: {len(times):6} requests ({len(times) / duration:5.0f}/s), "
              f"{errors} errors, p50 {pct(times, 50):7.1f} ms, p99 {pct(times, 99):7.1f} ms, "
              f"max {times[-1] if times else float('nan'):7.1f} ms", flush=True)
        p99 = max(p99, pct(times, 99) if times else float("inf"))
    errors = sum(1 for _, _, ok in results if not ok)
    return errors, len(results) / duration, p99


class Gate:
    """The figures held to DOCUMENTED, less `margin`; each check printed."""

    def __init__(self, margin, evaluated):
        self.margin = margin
        self.evaluated = evaluated
        self.failed = []

    def check(self, what, value, documented, higher_is_better, unit):
        if not self.evaluated:
            return
        if higher_is_better:
            bound = documented * (1 - self.margin)
            ok = value >= bound
            rel = "at least"
        else:
            bound = documented * (1 + self.margin)
            ok = value <= bound
            rel = "at most"
        print(f"  gate: {what} {value:.0f} {unit}, {rel} {bound:.0f} {unit} "
              f"({documented} documented, {self.margin:.0%} margin): "
              f"{'ok' if ok else 'BELOW'}", flush=True)
        if not ok:
            self.failed.append(f"{what} {value:.0f} {unit} (bound {bound:.0f} {unit})")

    def store(self, name, errors, pages_per_s, p99_ms, rss_mb):
        if errors:
            self.failed.append(f"{name}: {errors} requests failed")
        self.check(f"{name} pages/s", pages_per_s, DOCUMENTED["pages_per_s"], True, "pages/s")
        self.check(f"{name} p99", p99_ms, DOCUMENTED["p99_ms"], False, "ms")
        self.check(f"{name} RSS", rss_mb, DOCUMENTED["rss_mb"], False, "MB")


def pg_cluster(tmp):
    shutil.chown(tmp, "postgres", "postgres")
    port = free_port()
    data = os.path.join(tmp, "data")
    subprocess.run(AS_PG + [f"{PG}/initdb", "-D", data, "-U", "postgres", "--auth=trust",
                            "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(AS_PG + [f"{PG}/pg_ctl", "-D", data, "-l", os.path.join(tmp, "log"), "-w",
                            "-o", f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1",
                            "start"], check=True, stdout=subprocess.DEVNULL)
    return data, f"postgresql://postgres@127.0.0.1:{port}/postgres"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--duration", type=int, default=30, help="seconds")
    ap.add_argument("--pg", action="store_true", help="the same on PostgreSQL")
    ap.add_argument("--soak", type=int, default=0, help="seconds of load, memory sampled")
    ap.add_argument("--margin", type=float, default=0.3,
                    help="how far below the documented figures a run may fall (0.3: 30 %%)")
    a = ap.parse_args()
    documented_load = (a.runs, a.clients, a.duration) == tuple(LOAD.values())
    gate = Gate(a.margin, documented_load)
    tmp = tempfile.mkdtemp(prefix="rtscope-serveload-")
    os.chmod(tmp, 0o755)
    work = os.path.join(tmp, "w")
    os.makedirs(work)
    data = None
    try:
        db = make_store(work, a.runs)
        ids = list(range(1, a.runs + 1))
        stores = [("SQLite", db)]
        if a.pg:
            pgdir = os.path.join(tmp, "pg")
            os.makedirs(pgdir)
            data, url = pg_cluster(pgdir)
            t = time.monotonic()
            for k in range(0, a.runs, 1000):
                run([BIN, "--db", db, "push", "--to", url]
                    + [str(i) for i in ids[k:k + 1000]])
            print(f"  store: pushed to PostgreSQL in {time.monotonic() - t:.0f} s", flush=True)
            stores.append(("PostgreSQL", url))
        print(f"{a.clients} clients x {a.duration} s, half list pages, half run pages; "
              f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        for name, where in stores:
            srv = Server(where)
            try:
                errors, per_s, p99 = report(name, load(srv, ids, a.clients, a.duration),
                                            a.duration)
                rss = srv.rss_mb()
                print(f"  {name:10} server RSS after: {rss:.0f} MB", flush=True)
                gate.store(name, errors, per_s, p99, rss)
            finally:
                srv.stop()
        if a.soak:
            srv = Server(db)
            try:
                rss = [srv.rss_mb()]
                results = []
                for _ in range(max(1, a.soak // 30)):
                    results += load(srv, ids, a.clients, 30)
                    rss.append(srv.rss_mb())
                    print(f"  soak: {len(rss) * 30 - 30:4d} s, RSS {rss[-1]:.0f} MB", flush=True)
                errors, _, _ = report("soak", results, a.soak)
                print(f"  soak RSS: start {rss[0]:.0f} MB, after the first 30 s {rss[1]:.0f} MB, "
                      f"end {rss[-1]:.0f} MB, largest {max(rss):.0f} MB")
                if errors:
                    gate.failed.append(f"soak: {errors} requests failed")
                gate.check("soak largest RSS", max(rss), DOCUMENTED["rss_mb"], False, "MB")
            finally:
                srv.stop()
        if not documented_load:
            print(f"gate: not evaluated (the documented figures are for --runs {LOAD['runs']} "
                  f"--clients {LOAD['clients']} --duration {LOAD['duration']}): "
                  f"only failed requests count")
        if gate.failed:
            print("gate: FAILED: " + "; ".join(gate.failed) + " (bench/README.md: serve-load.py)")
            return 1
        if documented_load:
            print("gate: every figure within its documented bound")
        return 0
    finally:
        if data:
            subprocess.run(AS_PG + [f"{PG}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"],
                           stdout=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
