#!/bin/bash
# [type.NAME] concurrency = N: at most N jobs of the type in processing at
# once across every runner, overlapping run and --jobs slot, computed from
# the start and end times the handlers record; the drain still runs near
# the cap; the slots of a runner killed with SIGKILL come back once its
# locks expire, and not before; without sql/003_flow.sql the key is a
# configuration error that names the migration.
. "${0%/*}/lib.sh"

plan 28
setup_db

# Sizes: the handler sleeps 200 ms; under ASan and valgrind every start
# costs more, so fewer jobs keep the file well under its time.  How near
# the cap the drain runs is bounded at 60 %; under valgrind six runners
# that poll a full cap keep both cores busy by themselves (a claim costs
# tens of ms of CPU there), and the bound is 25 %.
jobs=60 secs=0.2 near=0.6
case $JOBRUN in */asan/*) jobs=30 ;; esac
under_valgrind && jobs=18 near=0.25

cap_config() {	# cap_config SECONDS [PIDS]: type capped, concurrency 3
	write_config <<EOF2
[run]
lock_seconds = 3
batch_size = 1000
max_seconds = 100

[type.capped]
handler = exec
command = $HANDLERS/flow-record $T/rec $1 ${2:-}
concurrency = 3
EOF2
}
enqueue() {	# enqueue N: N due jobs c1..cN of type capped
	sql "DELETE FROM polling_jobs"
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('c', seq), 'capped', NOW(), NOW(), NOW()
	       FROM seq_1_to_$1"
	rm -f "$T/rec"
}
count() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE $1"
}
calc() {	# calc EXPR: EXPR's value, as Python computes it (3 decimals)
	python3 -c 'import sys; print("%.3f" % eval(sys.argv[1]))' "$1"
}
records() {	# records WHAT [ARG]: test/flow-records.py over $T/rec
	python3 "$TOP/test/flow-records.py" "$1" "$T/rec" "${@:2}"
}
# at_least X Y: X >= Y (decimals)
at_least() {
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) >= float(sys.argv[2]))' "$1" "$2"
}

# --- without the control table ------------------------------------------------

cap_config 0.2
enqueue 3
run jobrun
is "$rc" 78 "concurrency without the control table: configuration error (78)"
like "$err" "\\[type\\.capped\\] concurrency needs the control table: no table \`$DB\`\\.\`polling_jobs_flow\`; apply sql/003_flow\\.sql " \
    "the message names the key, the table and the migration"
is "$(count "status = 'pending' AND attempts = 0")" 3 "no job was touched"
run jobrun check
like "$out" "
problem +$CONF: \\[type\\.capped\\] concurrency needs the control table: no table \`$DB\`\\.\`polling_jobs_flow\`
 +fix: apply sql/003_flow\\.sql
" "check: the missing control table is a problem, the migration its fix"

sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"

for bad in 0 -1 x 1000001 ''; do
	write_config <<EOF2
[type.capped]
handler = noop
concurrency = $bad
EOF2
	run jobrun
	[ "$rc" = 78 ] || break
done
is "$rc/$err" "78/jobrun: $CONF:8: [type.capped] concurrency: not a number of jobs in 1..1000000" \
    "concurrency = '$bad' and the other bad values: configuration error naming file, line and key"

# --- six runners, two with --jobs=4 ---------------------------------------------

cap_config "$secs"
enqueue "$jobs"
pids=()
for opt in --jobs=4 --jobs=4 --jobs=1 --jobs=1 --jobs=1 --jobs=1; do
	jobrun_bg "$opt" >/dev/null 2>>"$T/err"
	pids+=("$bg")
done
failed=0
for p in "${pids[@]}"; do
	wait "$p" || failed=$((failed + 1))
done
is "$failed" 0 "the six runners ended well (exit 0)"
is "$(cat "$T/err")" "" "they printed nothing"
is "$(count "status = 'success' AND attempts = 1")" "$jobs" \
    "all $jobs jobs succeeded, each at its first attempt (no attempt spent by waiting)"
is "$(records starts)" "$jobs" "each handler started once"
is "$(records overlap)" 3 "at no instant did more than 3 handlers run (3 did)"
busy=$(records busy 3)
diag "the cap in use $busy of the time: $(records rate) starts/s (3 / $secs s = $(calc "3 / $secs"))"
ok "the drain ran near the cap: handlers ran 3 at a time for >= $near of it ($busy)" \
    at_least "$busy" "$near"
is "$(sql "SELECT claims FROM polling_jobs_flow WHERE type = 'capped'")" "$jobs" \
    "the control row counted every claim"

# --- a runner killed with its slots in hand ---------------------------------------

# Runner A takes all three slots with handlers that would run 100 s, and
# is killed; runner B, started at once, must wait for A's locks to expire
# (3 s) and be recovered, then drain everything, 3 at a time.
cap_config 100 "$T/pids"
enqueue 9
rm -f "$T/pids"
jobrun_bg --jobs=4 >/dev/null 2>"$T/err"
a=$bg a_pid=$bg_pid
three_held() {
	[ "$(count "status = 'processing'")" = 3 ] &&
	    [ "$(wc -l <"$T/pids" 2>/dev/null)" = 3 ]
}
wait_for 30 three_held ||
    bail_out "runner A's handlers did not start"
is "$(count "status = 'processing'")" 3 "runner A (--jobs=4) holds exactly the 3 slots"
run jobrun status
like "$out" "
capped +full +3 +3 +- +- +-$" "status: capped is full, 3 in use of 3"
run jobrun status --json
is "$(jpy '[(f["type"], f["in_use"], f["concurrency"], f["full"]) for f in d["flow"]]' <<<"$out")" \
    '[["capped", 3, 3, true]]' "status --json: in_use 3, concurrency 3, full"
run jobrun --metrics-file="$T/metrics" --max-seconds=1
is "$(grep -E '^jobrun_flow_(in_use|concurrency|throttled)' "$T/metrics")" \
'jobrun_flow_concurrency{type="capped"} 3
jobrun_flow_in_use{type="capped"} 3
jobrun_flow_throttled{type="capped"} 1' "the metrics file: the cap, its places in use, held back"
kill -9 "$a_pid"
wait "$a" 2>/dev/null
killed_runner_gone
for p in $(cat "$T/pids"); do kill -9 -- "-$p" 2>/dev/null; done
# Each lock's end (Unix s): it has expired once the server's
# UNIX_TIMESTAMP() is past it, that is from end + 1 on.
sql "SELECT business_key, CAST(SUBSTRING_INDEX(locked_by, '@', -1) AS UNSIGNED)
     FROM polling_jobs WHERE status = 'processing'" >"$T/ends"
expiry=$(sort -n -k2 "$T/ends" | head -n 1 | cut -f2)
# lock_ended END: the server's clock is past the lock end END (Unix s)
lock_ended() {
	[ "$(sql "SELECT UNIX_TIMESTAMP() > $1")" = 1 ]
}
mv "$T/rec" "$T/rec.a"
cap_config 0.2
# A run ends once nothing is due: when A's last lock outlives B's drain
# (A renewed its three locks at different moments, and under valgrind
# they end seconds apart), that job is still A's when B is done, and is
# left to the next run, as cron would start it.  Runs follow B, each once
# the earliest lock still held has expired, until none is left (at most
# three, one per lock).
runs=0
t0=$(date +%s.%N)
: >"$T/err"
while [ "$runs" -lt 4 ]; do
	jobrun_bg --jobs=4 -v >/dev/null 2>>"$T/err"
	wait "$bg"
	echo "$?" >>"$T/rcs"
	runs=$((runs + 1))
	[ "$(count "status = 'processing'")" = 0 ] && break
	left=$(sql "SELECT MIN(CAST(SUBSTRING_INDEX(locked_by, '@', -1) AS UNSIGNED))
	    FROM polling_jobs WHERE status = 'processing'")
	diag "run $runs ended with a lock of the dead runner held until $left"
	wait_for 30 lock_ended "$left" || break
done
is "$(sort -u "$T/rcs")" 0 "runner B (and the $((runs - 1)) run(s) after it) ended well"
totals=$(python3 - "$T/err" <<'PY'
import re, sys
keys = ('claimed', 'succeeded', 'recovered')
sums = dict.fromkeys(keys, 0)
for line in open(sys.argv[1]):
    m = re.search(r'(\d+) claimed, (\d+) succeeded, .* (\d+) recovered in', line)
    if m:
        for k, v in zip(keys, m.groups()):
            sums[k] += int(v)
print(' '.join('%d %s' % (sums[k], k) for k in keys))
PY
)
is "$totals" "9 claimed 9 succeeded 3 recovered" \
    "the runs' summaries count 9 jobs claimed and run, the dead runner's 3 recovered"
is "$(count "status = 'success'")" 9 "all 9 jobs ran, the dead runner's 3 included"
is "$(count "status = 'success' AND attempts = 2")" 3 \
    "the dead runner's 3 jobs count its attempt and the new one: 2"
first=$(records first)
diag "runner B started $t0, A's first lock ended at $expiry (Unix s), the first new handler $first"
ok "no handler started before a lock of the dead runner expired (first start $first, first expiry $((expiry + 1)))" \
    at_least "$first" $((expiry + 1))
# Until A's first lock expires B can start nothing (A holds the three
# places), so B is waiting at the cap when it does: B itself recovers it,
# within its once-a-second recovery and one look's back-off (640 ms at
# most), not the next run that cron would start.
ok "and runner B, waiting at the full cap, started it again within 3 s of that expiry ($first)" \
    at_least $((expiry + 1 + 3 + ${JOBRUN_TEST_SLACK:-0})) "$first"
# restarted_early: a job of A's that B started before its own lock expired
restarted_early() {
	python3 - "$T/ends" "$T/rec" <<'PY'
import sys
ends = dict(l.split() for l in open(sys.argv[1]))
for l in open(sys.argv[2]):
    kind, t, key = l.split()
    if kind == 'start' and key in ends and float(t) < int(ends[key]) + 1:
        print(key, t, ends[key])
PY
}
is "$(restarted_early)" "" "each of the dead runner's jobs started again only after its own lock expired"
ok "afterwards at no instant did more than 3 run ($(records overlap))" \
    test "$(records overlap)" -le 3

# --- the connection killed while a slot waits for the cap ------------------------

# concurrency = 1, --jobs=2: one slot runs a handler the test holds, the
# other looks at the full cap, less and less often; the session is
# KILLed under them.  The run makes the connection again, its flow
# statements with it, and both jobs run once.
write_config <<EOF2
[run]
lock_seconds = 30

[type.capped]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
concurrency = 1
EOF2
enqueue 2
rm -f "$T/started" "$T/go"
jobrun_bg --jobs=2 -v --json >"$T/out" 2>"$T/err"
wait_for 30 test -e "$T/started" || bail_out "the handler did not start"
conn=$(sql "SELECT id FROM information_schema.PROCESSLIST
    WHERE db = '$DB' AND id <> CONNECTION_ID() AND user = 'root'" | head -n 1)
sql "KILL $conn"
# The waiting slot's next try, not the handler's mark, meets the dead
# session: the test lets the handler go only once the run has a new one.
reconnected() {
	local now
	now=$(sql "SELECT id FROM information_schema.PROCESSLIST
	    WHERE db = '$DB' AND id <> CONNECTION_ID() AND user = 'root'" |
	    head -n 1)
	[ -n "$now" ] && [ "$now" != "$conn" ]
}
wait_for 30 reconnected || diag "the run did not connect again"
touch "$T/go"
wait "$bg"
is "$?/$(count "status = 'success' AND attempts = 1")" 0/2 \
    "the session KILLed while a slot waited for the cap: exit 0, both jobs once"
like "$(cat "$T/err")" 'made again 1 time\(s\)' "-v says the connection was made again"

# --- the plain claim is untouched ---------------------------------------------------

write_config <<EOF2
[type.plain]
handler = noop
EOF2
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
     updated_at) SELECT CONCAT('p', seq), 'plain', NOW(), NOW(), NOW()
     FROM seq_1_to_5"
run jobrun
is "$rc/$(count "type = 'plain' AND status = 'success'")" 0/5 \
    "a type without limits runs as before beside the control table"
is "$(sql "SELECT COUNT(*) FROM polling_jobs_flow WHERE type = 'plain'")" 0 \
    "and has no control row"
