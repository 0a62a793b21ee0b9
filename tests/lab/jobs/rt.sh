# On PREEMPT_RT: the timerlat tracer is there, --explain names what ran
# instead (a threaded interrupt or a hog), and PI works.
if mountpoint -q /sys/kernel/tracing; then
    cat /sys/kernel/tracing/available_tracers >"$O/tracers" 2>&1
else
    mount -t tracefs nodev /sys/kernel/tracing
    cat /sys/kernel/tracing/available_tracers >"$O/tracers" 2>&1
    umount /sys/kernel/tracing
fi
step explain-run $B measure -D 4s -p 50 --load rt-interference --explain 1ms --explain-events full --json "$O/explain-run.json"
step explain $B explain last --json
step characterize $B characterize --only priority-inversion -D 2s --json "$O/pi.json"
