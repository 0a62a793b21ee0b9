#!/bin/sh
# How much of a run a SIGKILL loses with checkpoints every second: start
# `rtscope measure --checkpoint 1`, kill it with SIGKILL after 4.5 s, and
# print the time between the end of what the store kept and the kill.
# Expect about one checkpoint interval (1 s) plus the 50 ms tick and the
# time a checkpoint takes. Usage: sudo bench/checkpoint-loss.sh [RTSCOPE]
set -eu
bin=${1:-target/release/rtscope}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" --db "$dir/runs.db" measure -q --checkpoint 1 >/dev/null 2>&1 &
pid=$!
sleep 4.5
kill -KILL "$pid"
killed_ns=$(date +%s%N)
wait "$pid" 2>/dev/null || true
"$bin" --db "$dir/runs.db" runs export last --json "$dir/r.json"
python3 - "$dir/r.json" "$killed_ns" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lost = int(sys.argv[2]) - (r["started_at_unix_ns"] + r["duration_ns"])
print(f"kept {r['duration_ns'] / 1e9:.3f} s; lost {lost / 1e6:.1f} ms before the kill")
PY
