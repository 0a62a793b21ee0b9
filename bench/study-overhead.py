#!/usr/bin/env python3
"""What a study costs between its runs: set-up, load start and stop,
isolation apply and revert, store writes.

For each configuration below, one study of CELLS cells (a dimension of
priorities, all alike in cost) x 1 repetition of DURATION seconds is run
in a fresh store; the time a run costs beyond its measuring time is
(wall time of `rtscope study` - CELLS x DURATION) / CELLS. The goal is
under 2 s per run on the project's 2-CPU VM, so that a study of 100
one-minute cells takes under 105 minutes.

Usage: sudo python3 bench/study-overhead.py [--cells 5] [--duration 5]
Needs root and a release build (target/release/rtscope).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("RTSCOPE", "target/release/rtscope")

CONFIGS = [
    ("no load, no isolation", ""),
    ("load hell", 'load = "hell"\n'),
    ("load hell, --isolate 1", 'load = "hell"\nisolate = "1"\n'),
]


def study(name, fixed, cells, duration, tmp):
    prios = ", ".join(str(90 - i) for i in range(cells))
    text = (f'name = "{name}"\nduration = "{duration}s"\norder = "interleaved"\n'
            f"[matrix]\npriority = [{prios}]\n[fixed]\nthreads = 1\n{fixed}")
    path = os.path.join(tmp, f"{name}.toml")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, RTSCOPE_DB=os.path.join(tmp, f"{name}.db"))
    t0 = time.monotonic()
    p = subprocess.run([BIN, "study", path, "-q"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"study {name} failed ({p.returncode}): {p.stderr.decode().strip()}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rtscope-study-overhead-")
    print(f"{a.cells} runs of {a.duration}s per configuration")
    print(f"{'configuration':<26} {'wall s':>8} {'per run s':>10}")
    for i, (what, fixed) in enumerate(CONFIGS):
        wall = study(f"overhead-{i}", fixed, a.cells, a.duration, tmp)
        per = (wall - a.cells * a.duration) / a.cells
        print(f"{what:<26} {wall:>8.1f} {per:>10.2f}")


if __name__ == "__main__":
    main()
