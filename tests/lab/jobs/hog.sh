# A SCHED_FIFO hog on CPU 1 (FIFO 90: a busy loop, then 80 ms asleep, as
# tests/it's Hog) beside one measuring thread at FIFO 50 there: --explain
# must name it as what ran instead. Its comm is its file's name.
cp /bin/dash /tmp/rtscope-hog
taskset -c 1 chrt -f 90 /tmp/rtscope-hog -c \
    'while :; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 0.08; done' &
hog=$!
echo "$hog" >"$O/hog.pid"
step hog-run $B measure -a 1 -t 1 -p 50 -D 4s -q --explain 1ms --json "$O/hog-run.json"
step hog-explain $B explain last --json
kill "$hog"
wait "$hog" 2>/dev/null
