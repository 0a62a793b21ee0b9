#!/usr/bin/env python3
"""`rtscope serve` against slow and hostile clients, on loopback.

Makes an SQLite store of RUNS runs (the cyclictest fixture of
tests/fixtures/import imported once, exported, and written again RUNS
times with its own uuid, a label of LABEL_BYTES, so that a board's
history is a heavy answer, and one of 2 hosts), starts
`rtscope serve` on a free loopback port, then:

- heavy: the time to the whole answer of the heaviest pages (the list at
  500 a page, a board's whole history as JSON), best and worst of 5;
- slowloris: SLOW connections that each send one byte of a request head
  and no more, and 4 clients asking at once for the page of a run of
  HEAVY_THREADS threads (the heaviest page there is), then a fresh
  client's GET /api/runs, 5 times: its worst time to the whole answer;
- slow readers: READERS clients that ask for a board's history and
  never read it; the server's resident memory (VmRSS) before, at its
  largest over WAIT seconds, and its open connections once they are
  closed (its write timeout).

Prints the figures and exits 1 when a fresh client took longer than
--fresh-limit (1 s, bench/README.md) or a slow reader's connection was
not closed; 2 when it could not run. Bounded: every socket has a
timeout, the server is stopped at the end.

Usage: python3 bench/serve-hostile.py [--runs 2000] [--label-bytes 0]
           [--slow 1000] [--heavy-threads 3000] [--readers 20] [--wait 15]
           [--fresh-limit 1.0]
Needs RTSCOPE=path (default target/x86_64-unknown-linux-gnu/release/rtscope,
else target/debug/rtscope). Not a test: prints figures.
"""

import argparse
import json
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "tests/fixtures/import/cyclictest-2.x-ns.json")
HOSTS = ["board-0", "board-1"]


def binary():
    if "RTSCOPE" in os.environ:
        return os.path.abspath(os.environ["RTSCOPE"])
    for p in ["target/x86_64-unknown-linux-gnu/release/rtscope", "target/debug/rtscope"]:
        p = os.path.join(ROOT, p)
        if os.path.exists(p):
            return p
    sys.exit("no rtscope binary: set RTSCOPE=path")


BIN = binary()


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        print(f"{' '.join(cmd[:5])} ...: exit {p.returncode}: {p.stderr.decode().strip()}")
        sys.exit(2)
    return p.stdout


def make_store(work, runs, label_bytes):
    scratch = os.path.join(work, "scratch.db")
    run([BIN, "--db", scratch, "import", FIXTURE])
    rec = json.loads(run([BIN, "--db", scratch, "runs", "export", "1", "--json"]))
    db = os.path.join(work, "runs.db")
    rng = random.Random(1)
    files = []
    for i in range(runs):
        rec["run_uuid"] = uuid.UUID(int=rng.getrandbits(128)).hex
        rec["label"] = f"hostile {i} " + "x" * label_bytes
        rec["fingerprint"]["hostname"] = HOSTS[i % len(HOSTS)]
        p = os.path.join(work, f"r{i}.json")
        with open(p, "w") as f:
            json.dump(rec, f)
        files.append(p)
    for k in range(0, len(files), 500):
        run([BIN, "--db", db, "import"] + files[k:k + 500])
    for p in files:
        os.remove(p)
    return db


def add_heavy_run(work, db, threads):
    """A run of `threads` threads (the fixture's first, on CPU after CPU),
    its summary the threads': the id of its page."""
    scratch = os.path.join(work, "scratch.db")
    rec = json.loads(run([BIN, "--db", scratch, "runs", "export", "1", "--json"]))
    one = rec["threads"][0]
    rec["threads"] = []
    for i in range(threads):
        t = json.loads(json.dumps(one))
        t["index"], t["cpu"], t["tid"] = i, i, None
        rec["threads"].append(t)
    for k in ["samples", "wakeups", "missed_periods"]:
        rec["overall"][k] = one["stats"][k] * threads
    rec["run_uuid"] = str(uuid.UUID(int=random.Random(2).getrandbits(128)))
    rec["label"] = f"{threads} threads"
    p = os.path.join(work, "heavy.json")
    with open(p, "w") as f:
        json.dump(rec, f)
    out = run([BIN, "--db", db, "import", p]).decode()
    os.remove(p)
    # "imported FILE as run N (...)"
    return int(out.split(" as run ", 1)[1].split()[0])


def get(port, path, timeout=30.0):
    """GET path: (status, body length, seconds to the whole answer)."""
    t = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = bytearray()
        while True:
            b = c.recv(1 << 20)
            if not b:
                break
            data += b
    took = time.monotonic() - t
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else 0
    return status, len(body), took


def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sockets(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return n


def heavy(port):
    for path in ["/?per_page=500", f"/api/boards/{HOSTS[0]}"]:
        times, size = [], 0
        for _ in range(5):
            status, size, took = get(port, path)
            if status != 200:
                print(f"  {path}: status {status}")
            times.append(took)
        print(f"  heavy {path}: {size / 1e6:.1f} MB, {min(times) * 1000:.0f}-{max(times) * 1000:.0f} ms")


def slowloris(port, n, heavy_id):
    pages, page_status = [], []
    if heavy_id is not None:
        for _ in range(4):
            t = threading.Thread(target=lambda: page_status.append(
                get(port, f"/runs/{heavy_id}", timeout=60)[0]), daemon=True)
            t.start()
            pages.append(t)
    slow, refused = [], 0
    for _ in range(n):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=0.1)
            c.sendall(b"G")
            slow.append(c)
        except OSError:
            refused += 1
    worst, failed = 0.0, 0
    for _ in range(5):
        try:
            status, _, took = get(port, "/api/runs")
        except OSError:
            status, took = 0, 30.0
        failed += status != 200
        worst = max(worst, took)
    for c in slow:
        c.close()
    for t in pages:
        t.join(60)
    print(f"  slowloris: {len(slow)} slow clients ({refused} could not connect within 0.1 s), "
          f"{len(pages)} heavy pages asked at once (statuses {sorted(page_status)}), "
          f"a fresh GET /api/runs: worst {worst * 1000:.0f} ms of 5, {failed} failed")
    return worst, failed


def readers(port, pid, n, wait):
    before, base = rss_mb(pid), sockets(pid)
    held = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.sendall(f"GET /api/boards/{HOSTS[0]} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        held.append(c)
    peak, end = before, time.monotonic() + wait
    while time.monotonic() < end:
        peak = max(peak, rss_mb(pid))
        time.sleep(0.2)
    left = sockets(pid) - base
    for c in held:
        c.close()
    print(f"  slow readers: {n} clients that never read: RSS {before:.0f} -> largest {peak:.0f} MB; "
          f"{max(left, 0)} of their connections still open after {wait:.0f} s")
    return left


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--label-bytes", type=int, default=0)
    ap.add_argument("--slow", type=int, default=1000)
    ap.add_argument("--heavy-threads", type=int, default=3000)
    ap.add_argument("--readers", type=int, default=20)
    ap.add_argument("--wait", type=float, default=15.0)
    ap.add_argument("--fresh-limit", type=float, default=1.0)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory(prefix="rtscope-hostile-") as work:
        db = make_store(work, a.runs, a.label_bytes)
        heavy_id = add_heavy_run(work, db, a.heavy_threads) if a.heavy_threads > 0 else None
        proc = subprocess.Popen([BIN, "--db", db, "serve", "--listen", "127.0.0.1:0"],
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        try:
            line = proc.stderr.readline()
            port = int(line.strip().rstrip("/").rsplit(":", 1)[1])
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            print(f"rtscope serve ({BIN}), {a.runs} runs")
            heavy(port)
            worst, failed = slowloris(port, a.slow, heavy_id)
            left = readers(port, proc.pid, a.readers, a.wait)
        finally:
            proc.terminate()
            proc.wait(10)
    bad = []
    if failed or worst > a.fresh_limit:
        bad.append(f"a fresh client beside {a.slow} slow ones and 4 heavy pages: {worst:.2f} s, {failed} failed "
                   f"(limit {a.fresh_limit} s)")
    if left > 0:
        bad.append(f"{left} connections of clients that never read were not closed")
    for b in bad:
        print("BELOW THE DOCUMENTED FIGURES:", b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
