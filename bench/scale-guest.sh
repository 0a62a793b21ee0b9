#!/bin/sh
# What many threads cost where this machine cannot run them: 256 to 1024
# measuring threads in the lab's amd64 guest booted with 20 vCPUs (this
# machine refuses more than 64 threads a CPU: 128 here). See bench/README.md
# "scale-guest.sh".
#
# For each N: `rtscope measure -t N` (FIFO 95, threads spread over the 20
# vCPUs, 10 ms; the guest's vCPUs are emulated on the host's two), 10 ms
# windows, long enough to fill every thread's window series to its cap (a
# day-long run's memory: the series are what grows with a run's length),
# its peak resident set (wait4's ru_maxrss, every page locked) and its
# start-up (exec to the first measured deadline, less the engine's 20 ms
# start delay). Memory is the program's, whatever runs it; the start-up
# is the emulator's (TCG), an upper bound of nothing: said as such.
#
# Usage: sudo bench/scale-guest.sh [IMAGE [BINARY [N...]]]
#   IMAGE: the amd64 lab image (default: scripts/lab/prepare's), BINARY:
#   the static rtscope (default: make static's), N: 256 512 1024.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
image=${1:-$(RTSCOPE_LAB=1 "$here/scripts/lab/prepare")}
bin=${2:-$here/target/x86_64-unknown-linux-gnu/release/rtscope}
[ $# -gt 2 ] && shift 2 && counts="$*" || counts="256 512 1024"
[ -x "$bin" ] || { echo "scale-guest: no static rtscope at $bin: make static" >&2; exit 2; }
job=$(mktemp -d /tmp/rtscope-scale-guest.XXXXXX)
trap 'rm -rf "$job"' EXIT
cp "$bin" "$job/rtscope"
# wait4(2) from perl (perl-base is in every Debian system; syscall 61 is
# x86_64's wait4): the child's peak resident set, in KB.
cat >"$job/maxrss.pl" <<'PERL'
my $pid = fork // die "fork: $!";
if ($pid == 0) {
    open(STDOUT, ">", "/dev/null");    # the run's summary: not ours to print
    exec @ARGV or die "exec $ARGV[0]: $!";
}
my ($status, $ru) = (pack("i", 0), "\0" x 144);
syscall(61, $pid, $status, 0, $ru) == $pid or die "wait4: $!";
printf "%d %d\n", unpack("i", $status) >> 8, unpack("q", substr($ru, 32, 8));
PERL
cat >"$job/job.sh" <<JOB
#!/bin/sh
set -u
cd /job
for n in $counts; do
    # A thread's series holds 2^19/N points (src/engine/run.rs
    # series_capacity, at least 1024): 10 ms windows fill it in that many
    # hundredths of a second; 5 s more for the queues.
    points=\$(( 524288 / n )); [ \$points -lt 1024 ] && points=1024
    secs=\$(( points / 100 + 5 ))
    start=\$(date +%s%N)
    set -- \$(perl maxrss.pl ./rtscope --db /var/tmp/\$n.db measure -q -t \$n -p 95 -i 10ms --window 10ms -D \${secs}s --json out/\$n.json 2>out/\$n.err) - -
    first=\$(grep -o '"started_at_unix_ns": *[0-9]*' out/\$n.json 2>/dev/null | grep -o '[0-9]*\$')
    echo "\$n \$secs \$1 \$2 \$(( (\${first:-\$start} - start) / 1000000 - 20 )) \$(stat -c %s out/\$n.json 2>/dev/null || echo 0)" >>out/results
    rm -f /var/tmp/\$n.db*
done
JOB
chmod 755 "$job/job.sh"
"$here/scripts/lab/run" --image "$image" --kernel vanilla --smp 20 --mem 4096 --timeout 3600 --job "$job" >&2
echo "# amd64 guest, 20 vCPUs under TCG ($(cat "$image/release-vanilla")), rtscope $("$bin" --version | cut -d' ' -f2)"
printf '%6s %6s %5s %9s %14s %10s\n' N run_s exit RSS_MB start_ms_TCG record_KB
while read -r n secs code rss start size; do
    printf '%6s %6s %5s %9s %14s %10d\n' "$n" "$secs" "$code" "$(awk "BEGIN { printf \"%.1f\", $rss / 1024 }")" "$start" $((size / 1024))
done <"$job/out/results"
for n in $counts; do
    [ -s "$job/out/$n.err" ] && { echo "--- N=$n stderr:"; tail -5 "$job/out/$n.err"; }
done
exit 0
