#!/bin/bash
# Signals: the first SIGTERM or SIGINT stops claiming and lets the running
# handler finish (its result is recorded); a second one stops the handler
# and puts its job back, due now, without spending the attempt, and jobrun
# exits 128+signal.  SIGHUP does not disturb a run.  No signal leaves a job
# in 'processing' behind a runner that has exited.
. "${0%/*}/lib.sh"

plan 23
setup_db
write_config <<EOF2
[run]
lock_seconds = 60

[type.work]
handler = exec
command = $HANDLERS/trap-term 3 $T/trace
timeout = 30
EOF2

enqueue_two() {
	sql "DELETE FROM polling_jobs"
	jobrun enqueue --type=work --key=a >/dev/null
	jobrun enqueue --type=work --key=b >/dev/null
	: >"$T/trace"
}

# job_a COLUMN: a column of job "a" (ids change as rounds re-create jobs)
job_a() {
	sql "SELECT $1 FROM polling_jobs WHERE business_key = 'a'"
}

# wait_started: until the handler has written "started" (bounded)
wait_started() {
	local i
	for i in $(seq 50); do
		grep -q started "$T/trace" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# One SIGTERM: the handler finishes, the job is success, the other job is
# not claimed, and the run exits normally.
enqueue_two
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
defer "kill -9 $pid"
ok "the handler started" wait_started
kill -TERM "$pid"
wait "$pid"
rc=$?
is "$rc" 0 "one SIGTERM: exit 0 once the handler finished"
is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")" 1/1 \
    "the running job was finished and recorded, no other claimed"
is "$(sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM polling_jobs")" \
    success,pending "job a success, job b still pending"
is "$(tr '\n' ' ' <"$T/trace")" "started done " "the handler was not signalled"
like "$(cat "$T/err")" "stopped on signal 15" "stderr says why it stopped"

# SIGTERM then SIGINT: the handler is stopped, its job goes back, exit 130.
enqueue_two
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
defer "kill -9 $pid"
ok "the handler started again" wait_started
kill -TERM "$pid"
sleep 0.3
kill -INT "$pid"
wait "$pid"
rc=$?
is "$rc" 130 "a second signal (SIGINT): exit 130"
is "$(jget ok <"$T/out")" false "--json says not ok"
is "$(tr '\n' ' ' <"$T/trace")" "started term " "the handler got SIGTERM"
is "$(job_a status)" pending "the interrupted job is pending again"
is "$(job_a attempts)" 0 "and the attempt was not spent"
is "$(job_a 'next_run_at <= NOW()')" 1 "it is due now"
is "$(job_a 'locked_by IS NULL AND locked_until IS NULL')" 1 "its lock is cleared"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "nothing left in processing"
like "$(cat "$T/err")" "put back" "stderr says the job was put back"

# Two SIGTERMs: exit 143.
enqueue_two
"$JOBRUN" --config="$CONF" >/dev/null 2>&1 &
pid=$!
defer "kill -9 $pid"
wait_started
kill -TERM "$pid"
sleep 0.3
kill -TERM "$pid"
wait "$pid"
is "$?" 143 "two SIGTERMs: exit 143"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "nothing left in processing"

# SIGHUP during a run changes nothing.
enqueue_two
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
defer "kill -9 $pid"
wait_started
kill -HUP "$pid"
wait "$pid"
is "$?" 0 "SIGHUP: the run goes on and exits 0"
is "$(jget succeeded <"$T/out")" 2 "both jobs ran"
is "$(cat "$T/err")" "" "nothing on stderr"

# SIGKILL is the one signal that strands a job; recovery gives it back.
enqueue_two
"$JOBRUN" --config="$CONF" >/dev/null 2>&1 &
pid=$!
wait_started
kill -KILL "$pid"
wait "$pid" 2>/dev/null
is "$(job_a status)" processing "after SIGKILL the job is still processing"
# The lock's end is the Unix time after "@" in locked_by (and, for other
# workers, locked_until): move both into the past.
sql "UPDATE polling_jobs SET locked_until = NOW() - INTERVAL 1 SECOND,
     locked_by = CONCAT(SUBSTRING_INDEX(locked_by, '@', 1), '@',
     UNIX_TIMESTAMP() - 1) WHERE business_key = 'a'"
run jobrun --json --max=1
is "$(jget recovered <<<"$out")" 1 "once its lock expires the next run recovers it"
