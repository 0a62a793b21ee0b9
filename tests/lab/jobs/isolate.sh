# tune isolate and its revert on systemd's own cgroup v2 layout: what the
# system looked like before, during and after (the prelude's snapshot).
snapshot state.before
step isolate $B tune isolate 1
snapshot state.during
step isolated-doctor $B doctor --json
step isolated-measure $B measure -D 2s -a 1 --json "$O/isolated-run.json"
step revert $B tune --revert
snapshot state.after
