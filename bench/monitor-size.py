#!/usr/bin/env python3
"""How big the store of a long `rtscope monitor` gets.

1. A real run: `rtscope monitor --window W` on every CPU at 1 ms for
   DURATION seconds (then SIGTERM), in a store of its own: the store's
   size, the windows saved, the bytes of a window's histogram and summary.
2. A compressed-time simulation: the windows of DAYS days at the real
   run's window length on 2 threads, written into a copy of that store
   (same schema, the real run kept) with the real run's largest histogram
   blob: per window, a monitor_windows row and a monitor_window_histograms
   row per thread and a point of the
   run's own window series (table windows, which retention leaves alone:
   one monitor run lasting the whole time is the worst case), then the
   same retention statements as src/store/windows.rs. It prints the store
   size day by day, and its prediction for the real run's length beside
   the size measured.

Usage: sudo flock /tmp/rtscope-measure.lock python3 bench/monitor-size.py
       [--duration 1800] [--window 300] [--days 7] [--keep-histograms-days 7]
       [--keep-windows-days 30] [--rtscope target/release/rtscope] [--keep-store FILE]
       [--monitor-args '--policy other']
"""

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time

DAY_NS = 86400 * 10**9


def size(db):
    c = sqlite3.connect(db)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    n = c.execute("PRAGMA page_count").fetchone()[0] * c.execute("PRAGMA page_size").fetchone()[0]
    free = c.execute("PRAGMA freelist_count").fetchone()[0] * c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    return n, free


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=1800)
    ap.add_argument("--window", type=int, default=300)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--keep-histograms-days", type=int, default=7)
    ap.add_argument("--keep-windows-days", type=int, default=30)
    ap.add_argument("--rtscope", default="target/release/rtscope")
    ap.add_argument("--keep-store", help="copy the real run's store there before simulating")
    ap.add_argument("--monitor-args", default="", help="more arguments for rtscope monitor (e.g. '--policy other')")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "rtscope.db")
        argv = [a.rtscope, "--db", db, "monitor", "--window", f"{a.window}s", "--checkpoint", "60s"] + a.monitor_args.split()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(a.duration)
        p.send_signal(signal.SIGTERM)
        p.wait()
        c = sqlite3.connect(db)
        rows = c.execute(
            "SELECT count(*), avg(samples), "
            "(SELECT avg(length(histogram)) FROM monitor_window_histograms), "
            "(SELECT max(length(histogram)) FROM monitor_window_histograms) FROM monitor_windows"
        ).fetchone()
        blob = c.execute(
            "SELECT histogram FROM monitor_window_histograms ORDER BY length(histogram) DESC LIMIT 1"
        ).fetchone()[0]
        c.close()
        total, free = size(db)
        if a.keep_store:
            shutil.copy(db, a.keep_store)
        print(f"real run: {a.duration} s, windows of {a.window} s, 1 ms, all CPUs")
        print(f"  store {total} B ({free} B free pages); {rows[0]} windows saved, "
              f"{rows[1]:.0f} samples each on average")
        print(f"  window histogram blob: {rows[2]:.0f} B on average, {rows[3]} B at most")

        sim = os.path.join(tmp, "sim.db")
        shutil.copy(db, sim)
        c = sqlite3.connect(sim)
        c.execute("PRAGMA synchronous = OFF")
        c.execute("DELETE FROM monitor_windows")
        c.execute("DELETE FROM monitor_window_histograms")
        c.execute("DELETE FROM windows")
        c.commit()
        c.execute("VACUUM")
        run_id = c.execute("SELECT id FROM runs ORDER BY id LIMIT 1").fetchone()[0]
        keep_h = a.keep_histograms_days * DAY_NS
        keep_w = a.keep_windows_days * DAY_NS
        window_ns = a.window * 10**9
        t0 = 1_700_000_000 * 10**9
        per_day = DAY_NS // window_ns
        real_windows = a.duration // a.window
        print(f"simulation: 2 threads, windows of {a.window} s, histograms kept "
              f"{a.keep_histograms_days} d, windows kept {a.keep_windows_days} d; blob {len(blob)} B")
        print("  day  windows  with_histogram  store_bytes")
        k_all = 0
        for day in range(1, a.days + 1):
            for k in range(per_day):
                start = t0 + k_all * window_ns
                end = start + window_ns
                for thread in (0, 1):
                    c.execute(
                        "INSERT OR IGNORE INTO monitor_windows (monitor, host, run_uuid, thread, cpu, "
                        "start_unix_ns, end_unix_ns, samples, wakeups, missed, min_ns, avg_ns, p99_ns, "
                        "max_ns) VALUES "
                        "('sim', 'board', 'r', ?, ?, ?, ?, 300000, 300000, 0, 5000, 20000, 60000, 2500000)",
                        (thread, thread, start, end),
                    )
                    c.execute(
                        "INSERT OR IGNORE INTO monitor_window_histograms (monitor, host, thread, "
                        "start_unix_ns, end_unix_ns, sub_bucket_bits, histogram) VALUES "
                        "('sim', 'board', ?, ?, ?, 5, ?)",
                        (thread, start, end, blob),
                    )
                    c.execute(
                        "INSERT OR IGNORE INTO windows (run_id, thread, seq, count, min_ns, avg_ns, "
                        "max_ns, p99_ns, missed) VALUES (?, ?, ?, 300000, 5000, 20000, 2500000, 60000, 0)",
                        (run_id, thread, k_all),
                    )
                c.execute(
                    "DELETE FROM monitor_window_histograms "
                    "WHERE monitor = 'sim' AND host = 'board' AND end_unix_ns < ?",
                    (end - keep_h,),
                )
                c.execute(
                    "DELETE FROM monitor_window_histograms "
                    "WHERE monitor = 'sim' AND host = 'board' AND end_unix_ns < ?",
                    (end - keep_w,),
                )
                c.execute(
                    "DELETE FROM monitor_windows WHERE monitor = 'sim' AND host = 'board' AND end_unix_ns < ?",
                    (end - keep_w,),
                )
                c.commit()
                k_all += 1
                if k_all == real_windows:
                    print(f"  predicted after {a.duration} s ({real_windows} windows): "
                          f"{size(sim)[0]} B; measured {total} B")
            n, h = c.execute(
                "SELECT (SELECT count(*) FROM monitor_windows WHERE monitor = 'sim'), "
                "(SELECT count(*) FROM monitor_window_histograms WHERE monitor = 'sim')"
            ).fetchone()
            if day <= 3 or day % max(1, a.days // 10) == 0 or day == a.days:
                print(f"  {day:3}  {n:7}  {h:14}  {size(sim)[0]:11}")
        c.close()


if __name__ == "__main__":
    main()
