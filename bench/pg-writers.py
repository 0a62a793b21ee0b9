#!/usr/bin/env python3
"""Many hosts writing to one PostgreSQL run store at once.

Starts a PostgreSQL 15 cluster of its own in a temporary directory (as
the `postgres` user, on a free loopback port; no system service), then
WRITERS `rtscope measure` processes at once, each with its own --host,
checkpointing every second into the same database for DURATION seconds
(SCHED_OTHER, one thread at 10 ms: the point is the store, not the
latency). Each writer logs every checkpoint's time
(RTSCOPE_CHECKPOINT_LOG). At the end it checks that nothing was lost
(every run complete in the store, its sample count equal to its own
--json record, no failed checkpoint) and prints the checkpoint times
(p50, p99, max) over all writers. The cluster is stopped and removed.

Usage: sudo flock /tmp/rtscope-measure.lock python3 bench/pg-writers.py [--writers 20] [--duration 300]
Needs root, postgresql (scripts/install-deps.sh) and target/release/rtscope.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ.get("RTSCOPE", "target/release/rtscope"))
PG = "/usr/lib/postgresql/15/bin"
AS_PG = ["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups", "--"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, int(round(p / 100 * (len(sorted_vals) - 1))))
    return sorted_vals[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", type=int, default=20)
    ap.add_argument("--duration", type=int, default=300, help="seconds")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rtscope-pgbench-")
    shutil.chown(tmp, "postgres", "postgres")
    port = free_port()
    data = os.path.join(tmp, "data")
    subprocess.run(AS_PG + [f"{PG}/initdb", "-D", data, "-U", "postgres", "--auth=trust",
                            "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(AS_PG + [f"{PG}/pg_ctl", "-D", data, "-l", os.path.join(tmp, "log"), "-w",
                            "-o", f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1",
                            "start"], check=True, stdout=subprocess.DEVNULL)
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        work = os.path.join(tmp, "w")
        os.makedirs(work)
        procs = []
        for k in range(a.writers):
            env = dict(os.environ, XDG_DATA_HOME=os.path.join(work, f"xdg{k}"),
                       RTSCOPE_CHECKPOINT_LOG=os.path.join(work, f"{k}.log"))
            env.pop("RTSCOPE_DB", None)
            procs.append(subprocess.Popen(
                [BIN, "--db", url, "measure", "-q", "--policy", "other", "-t", "1",
                 "-i", "10ms", "-D", str(a.duration), "--checkpoint", "1",
                 "--host", f"writer-{k:02d}", "--json", os.path.join(work, f"{k}.json")],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        errors = 0
        for k, p in enumerate(procs):
            _, err = p.communicate()
            if p.returncode != 0:
                errors += 1
                print(f"writer {k}: exit {p.returncode}: {err.decode().strip()}", file=sys.stderr)
        times, failed = [], 0
        for k in range(a.writers):
            for line in open(os.path.join(work, f"{k}.log")):
                line = line.strip()
                if line == "failed":
                    failed += 1
                elif line:
                    times.append(int(line) / 1e6)
        lost = 0
        for k in range(a.writers):
            rec = json.load(open(os.path.join(work, f"{k}.json")))
            out = subprocess.run([BIN, "--db", url, "runs", "export", rec["run_uuid"][:12],
                                  "--json"], capture_output=True, check=True)
            stored = json.loads(out.stdout)
            if stored["overall"]["samples"] != rec["overall"]["samples"] or \
                    stored["status"] != "complete":
                lost += 1
        times.sort()
        print(f"{a.writers} writers x {a.duration} s, checkpoint every 1 s, one PostgreSQL 15 on loopback")
        print(f"  writers that failed:        {errors}")
        print(f"  runs not complete/equal:    {lost}")
        print(f"  failed checkpoints:         {failed}")
        print(f"  checkpoints written:        {len(times)} "
              f"(expected about {a.writers * (a.duration - 1)})")
        print(f"  checkpoint time p50:        {pct(times, 50):.2f} ms")
        print(f"  checkpoint time p99:        {pct(times, 99):.2f} ms")
        print(f"  checkpoint time max:        {times[-1] if times else float('nan'):.2f} ms")
        return 0 if errors == 0 and lost == 0 and failed == 0 else 1
    finally:
        subprocess.run(AS_PG + [f"{PG}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"],
                       stdout=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
