# What rtscope says of this kernel: doctor, a short run stored where a
# unit with no HOME stores it (root: /var/lib/rtscope), found again by
# `runs`, reported with its verdict.
step doctor $B doctor --json
step measure $B measure -D 3s --json "$O/run.json"
step runs $B runs
step report $B report last -o "$O/report.html"
ls /var/lib/rtscope >"$O/store-dir" 2>&1
