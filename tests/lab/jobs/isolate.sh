# tune isolate and its revert on systemd's own cgroup v2 layout: what the
# system looked like before, during and after.
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
snapshot state.before
step isolate $B tune isolate 1
snapshot state.during
step isolated-doctor $B doctor --json
step isolated-measure $B measure -D 2s -a 1 --json "$O/isolated-run.json"
step revert $B tune --revert
snapshot state.after
