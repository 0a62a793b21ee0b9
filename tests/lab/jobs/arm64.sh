# An arm64 guest's own facts: the machine and the clocksource doctor
# judged (its doctor.out is facts.sh's).
uname -m >"$O/machine"
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >"$O/clocksource" 2>&1
