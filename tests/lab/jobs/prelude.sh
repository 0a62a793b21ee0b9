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
