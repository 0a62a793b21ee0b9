# Real files of this kernel for the unit tests (tests/fixtures/arm64-guest/,
# its README says how they were taken): what rtscope's readers read, laid
# out as a root below out/fixtures, and two traces of the FIFO hog on CPU 1
# with cyclictest's marker (trace/trace-cmd-report.txt, the text of
# `trace-cmd report`, and trace/ftrace.txt, tracefs' `trace` file), which
# `explain --trace` reads.
F=$O/fixtures
mkdir -p "$F/trace"
uname -a >"$F/uname-a"
uname -m >"$F/machine"
date -u +%Y-%m-%dT%H:%M:%SZ >"$F/taken"
keep() {
    for f in "$@"; do
        [ -f "$f" ] && [ -r "$f" ] || continue
        mkdir -p "$F${f%/*}"
        cat "$f" >"$F$f" 2>/dev/null || rm -f "$F$f"
    done
}
keep /proc/cpuinfo /proc/interrupts /proc/cmdline /proc/version /proc/softirqs \
    /proc/sys/kernel/osrelease /proc/sys/kernel/version /proc/sys/kernel/hostname \
    /proc/sys/kernel/sched_rt_runtime_us /proc/sys/kernel/sched_rt_period_us \
    /proc/sys/kernel/timer_migration /sys/kernel/realtime \
    /sys/devices/system/clocksource/clocksource0/current_clocksource \
    /sys/devices/system/clocksource/clocksource0/available_clocksource \
    /sys/devices/system/cpu/online /sys/devices/system/cpu/possible \
    /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full \
    /sys/devices/system/cpu/cpuidle/current_driver \
    /sys/devices/system/cpu/cpuidle/current_governor \
    /sys/kernel/mm/transparent_hugepage/enabled \
    /sys/devices/virtual/workqueue/cpumask \
    /proc/device-tree/compatible /proc/device-tree/model \
    "/boot/config-$(uname -r)" \
    $(find /sys/devices/system/cpu/cpu[0-9]*/cpuidle /sys/devices/system/cpu/cpu[0-9]*/cpufreq \
        /sys/devices/system/cpu/cpu[0-9]*/topology -type f 2>/dev/null)
# What this machine does not have, said (a missing file is no fact).
for k in cpuidle cpufreq; do
    ls -d /sys/devices/system/cpu/cpu[0-9]*/$k >/dev/null 2>&1 ||
        echo "/sys/devices/system/cpu/cpuN/$k: absent"
done >"$F/absent"

# The traces: the hog on CPU 1, cyclictest at FIFO 50 there until its
# first wake-up 50 ms late (-b), marked in the trace (--tracemark). Under
# TCG the emulator alone makes wake-ups up to 12 ms late, and the hog's loop
# runs for 100 ms and more.
cp /bin/dash /tmp/rtscope-hog
taskset -c 1 chrt -f 90 /tmp/rtscope-hog -c \
    'while :; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 0.08; done' &
hog=$!
mounted=""
T=/sys/kernel/tracing
mountpoint -q $T || { mount -t tracefs nodev $T && mounted=1; }
events="-e sched:sched_switch -e sched:sched_waking -e sched:sched_wakeup -e irq -e timer:hrtimer_expire_entry -e timer:hrtimer_expire_exit"
(cd /tmp && step trace-cmd trace-cmd record -q -o /tmp/trace.dat -M 2 -b 2048 $events \
    cyclictest -q -m -a 1 -t 1 -p 50 -i 1000 -D 20 -b 50000 --tracemark)
trace-cmd report -i /tmp/trace.dat >"$F/trace/trace-cmd-report.txt" 2>"$O/trace-cmd-report.err"
rm -f /tmp/trace.dat
trace-cmd reset >/dev/null 2>&1
# The same through tracefs' own files, no trace-cmd.
cpumask=$(cat $T/tracing_cpumask)
echo 0 >$T/tracing_on
echo >$T/trace
echo 2 >$T/tracing_cpumask
echo 2048 >$T/buffer_size_kb
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup irq timer/hrtimer_expire_entry timer/hrtimer_expire_exit; do
    echo 1 >$T/events/$e/enable
done
echo 1 >$T/tracing_on
step ftrace-cyclictest cyclictest -q -m -a 1 -t 1 -p 50 -i 1000 -D 20 -b 50000 --tracemark
echo 0 >$T/tracing_on
cat $T/trace >"$F/trace/ftrace.txt"
echo 0 >$T/events/enable
echo >$T/trace
echo "$cpumask" >$T/tracing_cpumask
echo 1 >$T/tracing_on
[ -n "$mounted" ] && umount $T
kill "$hog"
wait "$hog" 2>/dev/null
step explain-trace-cmd $B explain --trace "$F/trace/trace-cmd-report.txt" --json
step explain-ftrace $B explain --trace "$F/trace/ftrace.txt" --json
