# Many CPUs (the guest booted with --smp 20, tests/lab/many.rs): one
# measuring thread per CPU, its terminal summary, its report, and tune
# isolating a range of CPUs and reverting. Facts only: under TCG twenty
# vCPUs share the host's two.
nproc >"$O/nproc"
step many-doctor $B doctor --json
step many-measure $B measure -a -D 4s --json "$O/many.json"
step many-report $B report "$O/many.json" -o "$O/many.html"
step many-compare $B compare "$O/many.json" "$O/many.json"
snapshot many-state.before
step many-isolate $B tune isolate 4-19
snapshot many-state.during
step many-isolated-doctor $B doctor --json
step many-isolated-measure $B measure -a 4-19 -D 2s --json "$O/many-isolated.json"
step many-revert $B tune --revert
snapshot many-state.after
