#!/usr/bin/env python3
"""What recording trace events costs a periodic thread, event set by event set.

One cyclictest run (one FIFO-95 thread on CPU --cpu, every wake-up printed
with -v -N) while this script switches, every second, the events enabled
in a tracefs instance of its own between the sets asked for (shuffled in
each round; a reader drains the instance's trace_pipe from another CPU,
as rtscope's does). Each second is a segment; the first 250 ms and last
50 ms of each are left out (the switch itself, and the clock offset
between this script and cyclictest). Per round, each set's segment is
compared with the round's `none` segment: the median over the rounds of
the ratios of avg, p50 and p99. `none2` is the same as `none`: its ratio
shows the noise of the method. Switching within one run cancels the slow
drifts of a virtual machine that whole-run pairs suffer from.

Sets (events as `measure --explain` records them):
  none, none2   nothing enabled
  full          the full set
  lean          the lean set: no timer path, no wake-ups, the measured
                thread's switches to idle filtered out
  lean-waking   lean plus sched_waking, the measured thread's filtered
                out (the event is still built, then dropped)
  lean-unfiltered  lean plus sched_waking, nothing filtered

Usage: sudo python3 bench/trace-event-cost.py [--duration 300] [--interval 100]
           [--cpu 1] [--sets none,none2,lean-unfiltered,lean-waking,lean]
Needs root, cyclictest (rt-tests) and a CPU besides --cpu.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import time

T = "/sys/kernel/tracing"
I = T + "/instances/rtscope-bench-event-cost"
SWITCH = "sched/sched_switch"
WAKING = "sched/sched_waking"
TIMER_PATH = ["timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit",
              "irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit"]
OTHERS = ["irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_entry",
          "irq/softirq_exit", "irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit",
          "irq_vectors/call_function_entry", "irq_vectors/call_function_exit",
          "irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit",
          "irq_vectors/irq_work_entry", "irq_vectors/irq_work_exit",
          "workqueue/workqueue_execute_start", "workqueue/workqueue_execute_end"]
# (events, filters): a filter's TID is the measured thread's.
SETS = {
    "none": ([], {}),
    "none2": ([], {}),
    "full": ([SWITCH, WAKING] + TIMER_PATH + OTHERS, {}),
    "lean": ([SWITCH] + OTHERS, {SWITCH: "prev_pid != TID || next_pid != 0"}),
    "lean-waking": ([SWITCH, WAKING] + OTHERS,
                    {SWITCH: "prev_pid != TID || next_pid != 0", WAKING: "pid != TID"}),
    "lean-unfiltered": ([SWITCH, WAKING] + OTHERS, {}),
}
SKIP_START_NS = 250_000_000
SKIP_END_NS = 50_000_000


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def exists(event):
    return os.path.isdir(f"{I}/events/{event}")


def apply(name, tid):
    events, filters = SETS[name]
    write(I + "/events/enable", "0")
    for e in (SWITCH, WAKING):
        if exists(e):
            write(f"{I}/events/{e}/filter", "0")
    for e in events:
        if not exists(e):
            continue
        if e in filters:
            write(f"{I}/events/{e}/filter", filters[e].replace("TID", str(tid)))
        write(f"{I}/events/{e}/enable", "1")


def drain(stop, cpus):
    os.sched_setaffinity(0, cpus)
    fd = os.open(I + "/trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
    while not stop.is_set():
        try:
            os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.01)
    os.close(fd)


def measuring_tid(pid):
    """cyclictest's measuring thread: the task of the process that is not its main one."""
    for _ in range(200):
        tasks = [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]
        if tasks:
            return tasks[0]
        time.sleep(0.01)
    sys.exit("cyclictest started no measuring thread")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--duration", type=int, default=300)
    p.add_argument("--interval", type=int, default=100, help="us")
    p.add_argument("--cpu", type=int, default=1)
    p.add_argument("--sets", default="none,none2,lean-unfiltered,lean-waking,lean")
    a = p.parse_args()
    names = a.sets.split(",")
    if names[0] != "none" or any(n not in SETS for n in names):
        sys.exit(f"--sets: `none` first, then any of {', '.join(SETS)}")
    if os.geteuid() != 0:
        sys.exit("run as root (sudo)")
    others = set(os.sched_getaffinity(0)) - {a.cpu}
    if not others:
        sys.exit(f"no CPU besides {a.cpu} for this script and the reader")
    os.sched_setaffinity(0, others)
    mounted = False
    if not os.path.ismount(T):
        subprocess.run(["mount", "-t", "tracefs", "nodev", T], check=True)
        mounted = True
    os.mkdir(I)
    stop = threading.Event()
    reader = None
    segments = []
    out = []
    try:
        write(I + "/trace_clock", "mono")
        write(I + "/buffer_size_kb", 4096)
        write(I + "/tracing_cpumask", format(1 << a.cpu, "x"))
        write(I + "/tracing_on", 1)
        reader = threading.Thread(target=drain, args=(stop, others))
        reader.start()
        # -l: a fixed number of loops, so that cycle k is due at start + k * interval.
        loops = a.duration * 1_000_000 // a.interval
        ct = subprocess.Popen(
            ["cyclictest", "-m", "-q", "-v", "-N", "-t", "1", "-a", str(a.cpu), "-p", "95",
             "-i", str(a.interval), "-l", str(loops)],
            stdout=subprocess.PIPE, text=True)
        t0 = time.monotonic_ns()
        tid = measuring_tid(ct.pid)
        collect = threading.Thread(target=lambda: out.extend(ct.stdout))
        collect.start()
        end = t0 + (a.duration - 2) * 1_000_000_000
        while time.monotonic_ns() < end:
            order = names[:]
            random.shuffle(order)
            for n in order:
                apply(n, tid)
                s = time.monotonic_ns()
                time.sleep(1.0)
                segments.append((n, s - t0, time.monotonic_ns() - t0))
        apply("none", tid)
        ct.wait()
        collect.join()
    finally:
        stop.set()
        if reader:
            reader.join()
        write(I + "/tracing_on", 0)
        write(I + "/events/enable", "0")
        os.rmdir(I)
        if mounted:
            subprocess.run(["umount", T])
    # -v lines: "thread:cycle:latency_ns".
    lat = {}
    for line in out:
        f = line.strip().split(":")
        if len(f) == 3 and f[1].strip().isdigit():
            lat[int(f[1])] = int(f[2])
    step = a.interval * 1000
    rounds = [segments[i:i + len(names)] for i in range(0, len(segments), len(names))]
    ratios = {n: {"avg": [], "p50": [], "p99": []} for n in names}
    for r in rounds:
        if len(r) < len(names):
            continue
        stats = {}
        for n, s, e in r:
            v = sorted(lat[k] for k in range((s + SKIP_START_NS) // step, (e - SKIP_END_NS) // step)
                       if k in lat)
            if len(v) < 100:
                break
            stats[n] = {"avg": sum(v) / len(v), "p50": v[len(v) // 2], "p99": v[len(v) * 99 // 100]}
        else:
            for n in names:
                for m in ("avg", "p50", "p99"):
                    ratios[n][m].append(stats[n][m] / stats["none"][m])
    kept = len(ratios["none"]["avg"])
    print(f"cyclictest -i {a.interval} on CPU {a.cpu}, {kept} rounds of one second per set, "
          f"median ratio to `none` in the same round (min..max of avg):")
    for n in names:
        r = ratios[n]
        if not r["avg"]:
            continue
        print(f"  {n:<16} avg {statistics.median(r['avg']):.3f}  p50 {statistics.median(r['p50']):.3f}  "
              f"p99 {statistics.median(r['p99']):.3f}  ({min(r['avg']):.2f}..{max(r['avg']):.2f})")


if __name__ == "__main__":
    main()
