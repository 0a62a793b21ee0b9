# The start of every lab job (tests/lab/guest.rs puts the parts after it).
# It runs in the guest as a systemd unit: no HOME, as from cron or an init
# script. `step NAME CMD...` keeps NAME.out, NAME.err and NAME.exit in out/.
set -u
B=/job/rtscope
O=/job/out
step() {
    name=$1
    shift
    "$@" >"$O/$name.out" 2>"$O/$name.err"
    echo $? >"$O/$name.exit"
}
uname -r >"$O/uname"
cat /proc/cmdline >"$O/cmdline"
env | sort >"$O/env"
cat /sys/kernel/realtime >"$O/realtime" 2>/dev/null || echo absent >"$O/realtime"
# snapshot NAME: what tune isolate changes (cgroups, IRQ affinities, the
# workqueue mask, THP, timer migration), in out/NAME, to compare before,
# during and after.
snapshot() {
    {
        stat -fc %T /sys/fs/cgroup
        find /sys/fs/cgroup -maxdepth 1 -type d | sort
        cat /sys/fs/cgroup/cgroup.subtree_control
        for f in /sys/fs/cgroup/*.slice/cpuset.cpus /sys/fs/cgroup/*.slice/cpuset.cpus.partition; do
            [ -e "$f" ] && echo "$f $(cat "$f")"
        done
        for i in /proc/irq/[0-9]*; do echo "$i $(cat "$i/smp_affinity_list" 2>/dev/null)"; done
        cat /sys/devices/virtual/workqueue/cpumask 2>/dev/null
        cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
        cat /proc/sys/kernel/timer_migration 2>/dev/null
    } >"$O/$1"
}
