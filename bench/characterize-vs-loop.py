#!/usr/bin/env python3
"""Does `rtscope characterize` report what the calls cost? Compares its
clock-gettime and uncontended mutex figures (avg, the clock's read cost
subtracted) with a minimal C loop that times N calls in one block
(bench/characterize-loop.c), as ratios rtscope / loop. Alternates the two
in pairs, the order flipped every pair, each under
/tmp/rtscope-measure.lock. Run as root after `make build`:

    sudo python3 bench/characterize-vs-loop.py --pairs 5 --duration 2s --cpu 1
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LOCK = "/tmp/rtscope-measure.lock"


def build_loop(out_dir):
    exe = os.path.join(out_dir, "characterize-loop")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "characterize-loop.c"), "-lpthread"], check=True)
    return exe


def run_loop(exe, cpu, n):
    o = subprocess.run(["flock", LOCK, exe, str(cpu), str(n)], check=True, capture_output=True, text=True)
    return json.loads(o.stdout)


def run_rtscope(binary, cpu, duration, tmp):
    js = os.path.join(tmp, "c.json")
    subprocess.run(["flock", LOCK, binary, "characterize", "--only", "clock-gettime,mutex", "--cpus", str(cpu),
                    "-D", duration, "--no-save", "--json", js], check=True, capture_output=True)
    c = json.load(open(js))
    avg = {(r["bench"], r["variant"]): r["stats"]["avg_ns"] for r in c["results"]}
    return {
        "clock_gettime_ns": avg[("clock-gettime", "")],
        "plain_lock_unlock_ns": avg[("mutex", "lock, plain")] + avg[("mutex", "unlock, plain")],
        "plain_trylock_unlock_ns": avg[("mutex", "trylock, plain")] + avg[("mutex", "unlock, plain")],
        "pi_lock_unlock_ns": avg[("mutex", "lock, pi")] + avg[("mutex", "unlock, pi")],
        "pi_trylock_unlock_ns": avg[("mutex", "trylock, pi")] + avg[("mutex", "unlock, pi")],
        "clock_read_ns": c["clock_read_ns"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--duration", default="2s", help="rtscope -D per benchmark")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--calls", type=int, default=20_000_000, help="calls per figure in the C loop")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/rtscope"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (SCHED_FIFO, mlockall)")
    keys = ["clock_gettime_ns", "plain_lock_unlock_ns", "plain_trylock_unlock_ns", "pi_lock_unlock_ns",
            "pi_trylock_unlock_ns"]
    ratios = {k: [] for k in keys}
    raw = {k: [] for k in keys}
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_loop(tmp)
        for i in range(a.pairs):
            order = ["loop", "rtscope"] if i % 2 == 0 else ["rtscope", "loop"]
            got = {}
            for who in order:
                got[who] = run_loop(exe, a.cpu, a.calls) if who == "loop" else run_rtscope(a.binary, a.cpu, a.duration, tmp)
            r, l = got["rtscope"], got["loop"]
            print(f"pair {i + 1}: clock read (subtracted) {r['clock_read_ns']} ns")
            for k in keys:
                ratio = r[k] / l[k] if l[k] > 0 else float("nan")
                ratios[k].append(ratio)
                # Each timed call had one clock read subtracted (the pairs
                # two calls, the clock row none).
                calls = 0 if k == "clock_gettime_ns" else 2
                raw[k].append((r[k] + calls * r["clock_read_ns"]) / l[k] if l[k] > 0 else float("nan"))
                print(f"  {k:26} rtscope {r[k]:8.1f}  loop {l[k]:8.1f}  ratio {ratio:5.2f}")
    print("median ratio rtscope/loop (min..max), and without the clock read subtracted:")
    for k in keys:
        v, w = ratios[k], raw[k]
        print(f"  {k:26} {statistics.median(v):5.2f}  ({min(v):.2f}..{max(v):.2f})   unsubtracted {statistics.median(w):5.2f}")


if __name__ == "__main__":
    main()
