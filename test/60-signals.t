#!/bin/bash
# Signals: the first SIGTERM, SIGINT or SIGQUIT stops claiming and lets the
# running handler finish (its result is recorded); a second one stops the
# handler (exec: SIGTERM to its process group; http: the transfer is
# aborted) and puts its job back, due now, without spending the attempt
# and with last_error kept, and jobrun exits 128+signal.  SIGHUP, SIGUSR1,
# SIGUSR2 and SIGALRM change nothing.  No signal leaves a job in
# 'processing' behind a runner that has exited; after SIGKILL the handler
# is told (PR_SET_PDEATHSIG) and recovery gives the job back.
# Handlers run until the test lets them go, and a second signal is sent
# only once the first has been delivered (two at once may merge into one).
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 63
setup_db
start_http_server
write_config <<EOF2
[run]
lock_seconds = 60

[type.work]
handler = exec
command = $HANDLERS/trap-term $T/trace $T/go
timeout = 60

[type.web]
handler = http
url = $HTTP_URL/slow?seconds=60
timeout = 90

[type.held]
handler = http
url = $HTTP_URL/held?file=$T/held
timeout = 90
EOF2

# enqueue_two: jobs a and b, a with an earlier attempt and its last_error
enqueue_two() {
	sql "DELETE FROM polling_jobs"
	insert_job a work
	insert_job b work
	sql "UPDATE polling_jobs SET attempts = 1, last_error = 'earlier error'
	     WHERE business_key = 'a'"
	rm -f "$T/trace" "$T/go"
}

# job_a COLUMN: a column of job "a" (ids change as rounds re-create jobs)
job_a() {
	sql "SELECT $1 FROM polling_jobs WHERE business_key = 'a'"
}
processing() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'"
}
started() {
	file_has "$T/trace" '^started$'
}
# signal SIG: send SIG to the runner and wait until it has been delivered
signal() {
	kill -"$1" "$bg_pid"
	wait_for 30 sig_seen "$bg_pid" "$(kill -l "$1")"
}

# --- one signal: the handler finishes ---------------------------------------

# SIGTERM: the handler finishes, the job is success, the other job is not
# claimed, and the run exits normally.  SIGINT and SIGQUIT the same.
for sig in TERM INT QUIT; do
	n=$(kill -l "$sig")
	enqueue_two
	jobrun_bg --json >"$T/out" 2>"$T/err"
	ok "SIG$sig: the handler started" wait_for 30 started
	ok "SIG$sig first: delivered while the handler runs" signal "$sig"
	touch "$T/go"
	wait "$bg"
	is "$?" 0 "one SIG$sig: exit 0 once the handler finished"
	is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")" 1/1 \
	    "SIG$sig: the running job was finished and recorded, no other claimed"
	is "$(sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM polling_jobs")" \
	    success,pending "SIG$sig: job a success, job b still pending"
	is "$(tr '\n' ' ' <"$T/trace")" "started done " "SIG$sig: the handler was not signalled"
	like "$(cat "$T/err")" "^ts=\\S+ level=warn msg=\"stopped on signal $n\"\$" \
	    "SIG$sig: stderr says why it stopped, and nothing else"
done

# --- a second signal: the handler is stopped --------------------------------

# SIGTERM then SIGINT: the handler is stopped, its job goes back, exit 130.
enqueue_two
jobrun_bg --json >"$T/out" 2>"$T/err"
ok "the handler started again" wait_for 30 started
signal TERM
signal INT
wait "$bg"
is "$?" 130 "a second signal (SIGINT): exit 130"
is "$(jget ok <"$T/out")" false "--json says not ok"
ok "the handler got SIGTERM" wait_for 10 file_has "$T/trace" '^term$'
is "$(tr '\n' ' ' <"$T/trace")" "started term " "and was stopped by it"
is "$(job_a status)" pending "the interrupted job is pending again"
is "$(job_a attempts)" 1 "and the attempt was not spent (1, as before the run)"
is "$(job_a last_error)" "earlier error" "its last_error is left as it was"
is "$(job_a 'next_run_at <= NOW()')" 1 "it is due now"
is "$(job_a 'locked_by IS NULL AND locked_until IS NULL')" 1 "its lock is cleared"
is "$(processing)" 0 "nothing left in processing"
like "$(cat "$T/err")" '(^|
)ts=\S+ level=warn job=[0-9]+ type=work attempt=2 max_attempts=5 outcome=put-back msg="handler stopped on signal 2; job put back, due now"(
|$)' "stderr says the job was put back, outcome=put-back"

# Two SIGTERMs: exit 143; SIGTERM then SIGQUIT: exit 131.
for second in TERM QUIT; do
	enqueue_two
	jobrun_bg >/dev/null 2>&1
	wait_for 30 started
	signal TERM
	signal "$second"
	wait "$bg"
	is "$?" $((128 + $(kill -l "$second"))) "SIGTERM, then SIG$second: exit $((128 + $(kill -l "$second")))"
	is "$(processing)/$(job_a status)/$(job_a attempts)" 0/pending/1 \
	    "SIG$second second: nothing left in processing, the job put back"
done

# --- signals that change nothing --------------------------------------------

# SIGHUP, SIGUSR1, SIGUSR2 and SIGALRM during a run change nothing.
enqueue_two
jobrun_bg --json >"$T/out" 2>"$T/err"
wait_for 30 started
for sig in HUP USR1 USR2 ALRM; do
	ok "SIG$sig delivered" signal "$sig"
done
ok "the runner is still there" not proc_gone "$bg_pid"
touch "$T/go"
wait "$bg"
is "$?" 0 "SIGHUP, SIGUSR1, SIGUSR2, SIGALRM: the run goes on and exits 0"
is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")" 2/2 "both jobs ran"
is "$(cat "$T/err")" "" "nothing on stderr"

# --- http: the transfer is aborted -----------------------------------------

sql "DELETE FROM polling_jobs"
base=$(baseline_ms --type=web --json)
insert_job w web
jobrun_bg --type=web --json >"$T/out" 2>"$T/err"
slow_asked() {
	[ "$(http_count /slow)" = 1 ]
}
ok "the request reached the server" wait_for 30 slow_asked
# From the signals: the time the request took to reach the server (the
# run's start, its claim, a busy machine's scheduling) is not the abort's.
start=$(date +%s%N)
signal TERM
signal TERM
wait "$bg"
rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 143 "http: two SIGTERMs during a 60 s answer: exit 143"
took_between_ms "$took" 0 $((base + 3000)) "the transfer was aborted, not waited for ($took ms)"
is "$(sql "SELECT CONCAT_WS(' ', status, attempts, next_run_at <= NOW(), locked_by IS NULL)
    FROM polling_jobs WHERE business_key = 'w'")" "pending 0 1 1" \
    "http: the job is put back, due now, attempt not spent, lock cleared"

# --- http: a stop that finds the server answering --------------------------

# The server has begun its answer: it has done the job's work.  The second
# signal gives the answer 2 s to arrive, and what arrives is written.
# held_run KEY: a held job KEY, its answer begun, and two SIGTERMs sent
held_run() {
	sql "DELETE FROM polling_jobs"
	rm -f "$T/held" "$T/held.sent"
	insert_job "$1" held
	jobrun_bg --type=held --json >"$T/out" 2>"$T/err"
	ok "$1: the server has begun its answer" wait_for 30 test -e "$T/held.sent"
	start=$(date +%s%N)
	signal TERM
	signal TERM
}
held_run h1
ok "h1: jobrun says the answer has 2 s" \
    wait_for 30 file_has "$T/err" \
    "job [0-9]+ \\(held\\): stopping: the server is already answering; its answer has 2 s to arrive"
touch "$T/held"
wait "$bg"
is "$?" 143 "h1: the answer arrived within the 2 s: exit 143 all the same"
is "$(sql "SELECT CONCAT_WS(' ', status, attempts, locked_by IS NULL)
    FROM polling_jobs WHERE business_key = 'h1'")" "success 1 1" \
    "h1: the answer is written: success at attempt 1, not put back"
ok "h1: no put-back in the log" not file_has "$T/err" 'put-back'

# The rest of the answer never comes: the transfer is aborted once the 2 s
# are over (a tick comes within a second of the signal, curl's next
# callback within a second of the 2 s), and the job goes back.
held_run h2
wait "$bg"
rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
touch "$T/held"		# lets the server's thread go
is "$rc" 143 "h2: an answer that does not finish: exit 143"
took_between_ms "$took" 2000 $((base + 5000)) \
    "h2: aborted after its 2 s, not before and not much after ($took ms)"
is "$(sql "SELECT CONCAT_WS(' ', status, attempts, locked_by IS NULL)
    FROM polling_jobs WHERE business_key = 'h2'")" "pending 0 1" \
    "h2: the job is put back, attempt not spent"
ok "h2: the put-back is logged" file_has "$T/err" \
    'type=held attempt=1 max_attempts=5 outcome=put-back msg="handler stopped on signal 15; job put back, due now"'

# --- SIGKILL ---------------------------------------------------------------

# SIGKILL is the one signal that strands a job; the handler is told by the
# kernel (SIGTERM), and recovery gives the job back.
enqueue_two
jobrun_bg >/dev/null 2>&1
wait_for 30 started
kill -KILL "$bg_pid"
wait "$bg" 2>/dev/null
is "$?" 137 "SIGKILL: jobrun is gone (137)"
killed_runner_gone
ok "the handler got SIGTERM when its runner died (PR_SET_PDEATHSIG)" \
    wait_for 10 file_has "$T/trace" '^term$'
is "$(job_a status)" processing "after SIGKILL the job is still processing"
expire_lock a
touch "$T/go"
run jobrun --json --max=1
is "$(jget recovered <<<"$out")" 1 "once its lock expires the next run recovers it"
