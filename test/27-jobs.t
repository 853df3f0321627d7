#!/bin/bash
# --jobs=N: up to N handlers at once in one run, over one connection.  Every
# job is still claimed alone, fenced, its lock renewed, its timeout kept; the
# budget counts claims; the first signal stops claiming and lets every
# running handler finish, the second stops them all and puts their jobs
# back; a lost lock or a timeout in one slot touches only that handler;
# checkpoints of eight jobs at once survive a SIGKILL; http keeps at most N
# connections; four such runners run 4,000 jobs exactly once.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 85
setup_db

# --- the option and the setting ---------------------------------------------

for bad in 0 257 -1 x 8x ''; do
	run jobrun --jobs="$bad"
	is "$rc/$out" 64/ "--jobs='$bad': usage error (64), nothing on stdout"
done
like "$err" '^jobrun: --jobs' "the message names the option"
run jobrun enqueue --type=t --jobs=2
is "$rc" 64 "--jobs belongs to run only: enqueue --jobs is a usage error"
write_config <<EOF2
[run]
jobs = 0
EOF2
run jobrun
is "$rc" 78 "[run] jobs = 0: configuration error (78)"
like "$err" 'jobs' "the message names the key"

# --- eight at once, the budget, the first signal ----------------------------

# work_config LOCK-SECONDS [KEY]: type work (slot-work, let go by $T/go;
# keyed by KEY if given) and type slow (the same, never let go, timeout 2 s)
work_config() {
	write_config <<EOF2
[run]
lock_seconds = $1
batch_size = 1000

[type.work]
handler = exec
command = $HANDLERS/slot-work $T/trace $T/go
timeout = 60
${2:+concurrency_key = $2}

[type.slow]
handler = exec
command = $HANDLERS/slot-work $T/trace $T/never
timeout = 2
EOF2
}
work_config 60

# enqueue N: N jobs w1..wN, the trace and the go file cleared
enqueue() {
	sql "DELETE FROM polling_jobs"
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('w', seq), 'work', NOW(), NOW(), NOW()
	       FROM seq_1_to_$1"
	rm -f "$T/trace" "$T/go"
}
# trace_count WORD: lines "KEY WORD" in the trace
trace_count() {
	grep -c " $1\$" "$T/trace" 2>/dev/null
}
started_n() {
	[ "$(trace_count started)" = "$1" ]
}
traced_n() {	# traced_n WHAT N: N handlers traced WHAT
	[ "$(trace_count "$1")" = "$2" ]
}
count() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE $1"
}
signal() {
	kill -"$1" "$bg_pid"
	wait_for 30 sig_seen "$bg_pid" "$(kill -l "$1")"
}

# --max=5 --jobs=8: five handlers start, no more are claimed.
enqueue 20
jobrun_bg --max=5 --jobs=8 --json >"$T/out" 2>"$T/err"
ok "--max=5 --jobs=8: five handlers run at once" wait_for 30 started_n 5
is "$(count "status = 'processing'")" 5 "five jobs in processing, each under its own lock"
is "$(sql "SELECT COUNT(DISTINCT locked_by) FROM polling_jobs WHERE status = 'processing'")" 5 \
    "with five different claim tokens"
touch "$T/go"
wait "$bg"
is "$?" 0 "the run exits 0"
is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")" 5/5 "claimed 5, succeeded 5: the budget counts claims"
is "$(count "status = 'pending'")" 15 "the other 15 are still pending"

# SIGTERM with eight handlers running: all eight finish and are recorded,
# nothing more is claimed.
enqueue 16
jobrun_bg --jobs=8 --json >"$T/out" 2>"$T/err"
ok "--jobs=8: eight handlers run at once" wait_for 30 started_n 8
ok "SIGTERM delivered while the eight run" signal TERM
touch "$T/go"
wait "$bg"
is "$?" 0 "one signal: exit 0 once the eight finished"
is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")" 8/8 \
    "claimed 8, succeeded 8: the running jobs finished, no other claimed"
is "$(trace_count done)/$(trace_count term)" 8/0 "all eight ran to the end, none was signalled"
is "$(count "status = 'success'")/$(count "status = 'pending' AND attempts = 0")" 8/8 \
    "eight success, eight never touched"
is "$(cat "$T/err")" 'ts='"$(sed -n 's/^ts=\([^ ]*\) .*/\1/p' "$T/err")"' level=warn msg="stopped on signal 15"' \
    "stderr says why it stopped, once, and nothing else"

# SIGTERM then SIGINT: every handler is stopped, every job put back, the
# attempts not spent; exit 130.
enqueue 16
jobrun_bg --jobs=8 --json >"$T/out" 2>"$T/err"
ok "eight handlers run again" wait_for 30 started_n 8
signal TERM
signal INT
wait "$bg"
is "$?" 130 "a second signal: exit 130"
ok "every handler got SIGTERM" wait_for 10 traced_n term 8
is "$(trace_count done)" 0 "and none ran to the end"
is "$(count "status = 'pending' AND attempts = 0 AND locked_by IS NULL AND next_run_at <= NOW()")" 16 \
    "all sixteen are pending, due, unlocked, no attempt spent"
is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")/$(jget lost <"$T/out")" 8/0/0 \
    "--json: claimed 8, none counted as an outcome"
is "$(grep -c 'outcome=put-back' "$T/err")" 8 "eight put-back lines on stderr"

# The second signal just as the eight are let go: a handler that exited
# by itself before it was stopped has finished, and its outcome is
# written (success, attempt spent); only one still running is stopped
# (it traces "term") and put back.  Its pipe ends before the kernel makes
# it a zombie, so a slot that looked for the second signal in between put
# back a job whose handler had exited 0 and never seen a signal.  Three
# rounds: which handlers finish first is up to the machine.
# expected_rows: each of w1..w8 as its trace says it must be
expected_rows() {
	local k
	for k in w1 w2 w3 w4 w5 w6 w7 w8; do
		if grep -qx "$k term" "$T/trace"; then
			echo "$k pending 0"
		elif grep -qx "$k done" "$T/trace"; then
			echo "$k success 1"
		else
			echo "$k not run"
		fi
	done
}
for round in 1 2 3; do
	enqueue 8
	jobrun_bg --jobs=8 --json >"$T/out" 2>"$T/err"
	wait_for 30 started_n 8 || bail_out "the eight handlers did not start"
	signal TERM
	touch "$T/go"
	signal INT
	wait "$bg"
	is "$(sql "SELECT CONCAT_WS(' ', business_key, status, attempts)
	    FROM polling_jobs ORDER BY id")" "$(expected_rows)" \
	    "round $round: a handler that exited by itself is success, only a stopped one put back"
done

# --- one slot's trouble stays in its slot -----------------------------------

# The lock of one of eight running jobs is taken by another runner: its
# extension finds out, that handler alone is stopped, the other seven
# finish and succeed.
work_config 3
enqueue 8
jobrun_bg --jobs=8 --json >"$T/out" 2>"$T/err"
wait_for 30 started_n 8
sql "UPDATE polling_jobs SET locked_by = 'other-runner',
    locked_until = NOW() + INTERVAL 300 SECOND WHERE business_key = 'w3'"
ok "the handler of the stolen job is stopped" wait_for 30 file_has "$T/trace" '^w3 term$'
is "$(trace_count term)" 1 "only that one"
touch "$T/go"
wait "$bg"
is "$?" 1 "a lost job: exit 1"
is "$(jget succeeded <"$T/out")/$(jget lost <"$T/out")" 7/1 "seven succeeded, one lost"
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY id) FROM polling_jobs WHERE status = 'success'")" \
    w1,w2,w4,w5,w6,w7,w8 "the seven others are success"
is "$(sql "SELECT status, locked_by FROM polling_jobs WHERE business_key = 'w3'")" \
    "processing	other-runner" "the stolen job is left to the runner that holds it"
like "$(cat "$T/err")" 'job=[0-9]+ type=work attempt=1 max_attempts=5 outcome=lost ' \
    "stderr says one job was lost"

# The same theft, found only by the mark: the lock is long (no extension
# while the handlers run), so all eight finish and report success.  A
# second connection holds w1's row, so the first mark waits and the
# others queue up behind it; they are then written together, the
# successes in one fenced write, which finds w3 no longer ours and is
# rolled back and run again job by job: seven success, w3 lost and left
# alone.  (Should w3's mark go first, it is written alone: the same
# outcome, without the group.)  Then the connection killed inside a
# group's transaction: the group's success write waits for w1's row and
# the run's session is KILLed there; the run makes the connection again
# and writes the whole group again on it: eight success, exit 0.
#
# Both twice: in a plain run, and in a run whose type is keyed (each job
# its own key, and a ninth job, x, due behind w2's key), where the
# group's marks ride in the transaction of the claim that waits for x
# (group.c's keyed path): the split and the lost connection roll that
# transaction back, the marks are then written each alone, and x runs
# once w2's mark has freed its key.  (A run with nothing left to claim
# writes the marks in a transaction of their own, as the plain run.)
# our_lock_wait: an UPDATE of this test's database has run for a second
# or more: waiting for the row the other connection holds.  Read from the
# process list alone, as test 77 does: information_schema.innodb_trx did
# not list the waiting transaction (every wait gave up after its 30 s),
# and joined to the process list it crashed the server once in CI
# (MariaDB 10.11.19).
our_lock_wait() {
	[ "$(sql "SELECT COUNT(*) FROM information_schema.processlist
	    WHERE db = DATABASE() AND info LIKE 'UPDATE%' AND time >= 1")" -ge 1 ]
}
handlers_gone() {
	[ -z "$(pgrep -P "$bg_pid")" ]
}
# keyed_jobs: the keyed run's jobs, w1..w8 each its own key and x on w2's
keyed_jobs() {
	sql "UPDATE polling_jobs SET payload = JSON_OBJECT('k', business_key);
	     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
	        created_at, updated_at)
	     VALUES ('x', 'work', '{\"k\": \"w2\"}', NOW(), NOW(), NOW())"
}
sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"
for key in '' '$.k'; do
run=${key:+keyed }run x=${key:+1} x=${x:-0}
work_config 60 "$key"
enqueue 8
[ -z "$key" ] || keyed_jobs
jobrun_bg --jobs=8 --json -vv >"$T/out" 2>"$T/err"
wait_for 30 started_n 8
sql "UPDATE polling_jobs SET locked_by = 'other-runner',
    locked_until = NOW() + INTERVAL 300 SECOND WHERE business_key = 'w3'"
other_start
other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'w1' FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked'
touch "$T/go"
# A precondition of the group, not what is tested: under valgrind the
# first mark may not reach w1's row before the wait gives up, and the
# marks are then written alone, with the same outcome.
wait_for 30 our_lock_wait
ok "$run: all eight handlers ended" wait_for 30 handlers_gone
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 1 "$run: the theft found by the mark: exit 1"
is "$(trace_count done)/$(trace_count term)" $((8 + x))/0 "$run: all $((8 + x)) handlers ran to the end"
is "$(jget succeeded <"$T/out")/$(jget lost <"$T/out")" $((7 + x))/1 "$run: $((7 + x)) succeeded, one lost"
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY id) FROM polling_jobs WHERE status = 'success'")" \
    w1,w2,w4,w5,w6,w7,w8${key:+,x} "$run: the others are success"
is "$(sql "SELECT status, locked_by FROM polling_jobs WHERE business_key = 'w3'")" \
    "processing	other-runner" "$run: the stolen job is still the other runner's"
diag "$run: $(grep -c 'was no longer ours: each is written alone' "$T/err") group(s) split"

work_config 60 "$key"
enqueue 8
[ -z "$key" ] || keyed_jobs
jobrun_bg --jobs=8 --json -v >"$T/out" 2>"$T/err"
wait_for 30 started_n 8
other_start
other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'w1' FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked'
touch "$T/go"
# As above, a precondition: under valgrind the marks may go alone.
waiting=
if wait_for 30 our_lock_wait; then
	waiting=$(sql "SELECT t.trx_mysql_thread_id
	    FROM information_schema.innodb_trx t
	    JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
	    WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()")
	sql "KILL $waiting"
fi
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 0 "$run: the session killed inside a group's transaction: exit 0"
is "$(count "status = 'success' AND attempts = 1")" $((8 + x)) \
    "$run: all $((8 + x)) success, each at its first attempt"
is "$(trace_count done)" $((8 + x)) "$run: each handler ran once"
if [ -n "$waiting" ]; then
	like "$(cat "$T/err")" 'made again 1 time\(s\)' \
	    "$run: -v says the connection was made again"
else
	# Under valgrind and TSan the marks may go alone before the wait
	# is seen (TSan's pass missed it with the strict check).
	pass "$run: the marks did not wait for the row (slow build): no session killed"
fi
done

# One slot's handler overruns its timeout: it alone is killed and retried.
work_config 60
enqueue 7
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     VALUES ('slow', 'slow', NOW(), NOW(), NOW())"
jobrun_bg --jobs=8 --json >"$T/out" 2>"$T/err"
ok "eight handlers run, one of them slow" wait_for 30 started_n 8
ok "the slow one is stopped at its timeout" wait_for 30 job_is slow "status = 'pending' AND attempts = 1"
like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'slow'")" \
    '^timed out after 2 s(: Terminated)?$' "its last_error: timed out after 2 s"
is "$(trace_count term)/$(count "status = 'processing'")" 1/7 \
    "it alone got SIGTERM; the seven others still run"
touch "$T/go"
wait "$bg"
is "$?" 1 "a retried job: exit 1"
is "$(jget succeeded <"$T/out")/$(jget retried <"$T/out")" 7/1 "seven succeeded, one retried"
is "$(trace_count done)" 7 "the seven ran to the end"

# --- checkpoints of eight jobs, a SIGKILL, a resume -------------------------

write_config <<EOF2
[run]
lock_seconds = 60
batch_size = 8

[type.long]
handler = exec
command = $HANDLERS/slot-resume $T/items $T/go
timeout = 120
EOF2
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
sql "DELETE FROM polling_jobs"
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     SELECT CONCAT('r', seq), 'long', NOW(), NOW(), NOW() FROM seq_1_to_8"
rm -f "$T/go" "$T"/items.*
checkpointed() {
	[ "$(count "checkpoint IS NOT NULL AND status = 'processing'")" = 8 ]
}
jobrun_bg --jobs=8 >/dev/null 2>"$T/err"
ok "eight resumable jobs each saved a checkpoint" wait_for 60 checkpointed
kill_runner
sql "SELECT business_key, JSON_VALUE(checkpoint, '$.last') FROM polling_jobs ORDER BY id" >"$T/saved"
for k in r1 r2 r3 r4 r5 r6 r7 r8; do
	expire_lock "$k"
done
touch "$T/go"
run jobrun --jobs=8 --json
is "$rc" 0 "after the SIGKILL, a new run finishes the eight"
is "$(jget recovered <<<"$out")/$(jget succeeded <<<"$out")" 8/8 "recovered 8, succeeded 8"
resumed=0 whole=0
while IFS=$'\t' read -r k last; do
	grep -qx "attempt 2 resumes after $last" "$T/items.$k.attempts" &&
	    resumed=$((resumed + 1))
	[ "$(sort -un "$T/items.$k" | tr '\n' ' ')" = "$(seq 1 60 | tr '\n' ' ')" ] &&
	    whole=$((whole + 1))
done <"$T/saved"
is "$resumed" 8 "each of the eight resumed after the checkpoint it had saved"
is "$whole" 8 "and each processed every item from 1 to 60"

# --- http: N transfers at once, at most N connections -----------------------

start_http_server
write_config <<EOF2
[run]
batch_size = 1000

[type.web]
handler = http
url = $HTTP_URL/slow?seconds=0.3
timeout = 30
EOF2
sql "DELETE FROM polling_jobs"
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
     SELECT CONCAT('h', seq), 'web', '{}', NOW(), NOW(), NOW() FROM seq_1_to_40"
run jobrun --jobs=8 --json
is "$rc" 0 "--jobs=8, 40 http jobs: exit 0"
is "$(jget succeeded <<<"$out")" 40 "succeeded 40"
is "$(http_count '/slow?seconds=0.3')" 40 "the server got 40 requests"
conns=$(http_conns)
diag "connections for 40 http jobs with --jobs=8: $conns"
between "$conns" 2 8 "over more than one connection and never more than eight"

# --- four runners, eight slots each, 4,000 jobs: exactly once ---------------

n=4000
# valgrind runs the eight slots one at a time: 500 jobs there, each one
# run (a claim, a fork, a mark) CPU the valgrind pass is bound by (issue
# 31); the plain and ASan passes drain 4,000.
under_valgrind && n=500
write_config <<EOF2
[run]
batch_size = 100000
max_seconds = 300
lock_seconds = 300

[type.bulk]
handler = exec
command = $HANDLERS/append-id $T/ids
timeout = 60
EOF2
sql "DELETE FROM polling_jobs"
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     SELECT CONCAT('b', seq), 'bulk', NOW(), NOW(), NOW() FROM seq_1_to_$n"
: >"$T/ids"
pids=()
for r in 1 2 3 4; do
	jobrun --jobs=8 --json >"$T/out.$r" 2>"$T/err.$r" &
	pids+=($!)
done
rcs=
for p in "${pids[@]}"; do
	wait "$p"
	rcs="$rcs$?"
done
is "$rcs" 0000 "four runners with --jobs=8: all exit 0"
total=0
for r in 1 2 3 4; do
	c=$(jget claimed <"$T/out.$r")
	total=$((total + ${c//[!0-9]/0}))
done
is "$total" "$n" "they claimed $n jobs between them"
is "$(count "status = 'success' AND attempts = 1")" "$n" "all $n are success at their first attempt"
is "$(wc -l <"$T/ids")" "$n" "the handlers ran $n times"
sql 'SELECT id FROM polling_jobs ORDER BY id' >"$T/table-ids"
ok "once for each job in the table" cmp -s "$T/table-ids" <(sort -n "$T/ids")
is "$(cat "$T"/err.*)" "" "no runner complained"

# An application's trigger that writes another table at each change of a
# job (its claim, its mark) does not stop the slots' claims and marks
# going together: the server counts the rows a trigger changes among a
# bulk's changed rows (MariaDB), so judging the bulk claim by that count
# called each one a conflict, and after three the run wrote every claim
# alone, saying it had run statements again after a deadlock that never
# happened.  (A single statement's count, the shared success mark's, is
# its own rows only: no group is split.)
n=400
under_valgrind && n=100
write_config <<EOF2
[run]
batch_size = 100000
max_seconds = 300

[type.trig]
handler = noop
EOF2
sql "DELETE FROM polling_jobs"
sql "CREATE TABLE claim_log (id BIGINT UNSIGNED, status VARCHAR(20))" &&
sql "CREATE TRIGGER claim_log AFTER UPDATE ON polling_jobs
     FOR EACH ROW INSERT INTO claim_log (id, status)
       VALUES (NEW.id, NEW.status)" ||
    bail_out "cannot make the claim trigger"
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     SELECT CONCAT('t', seq), 'trig', NOW(), NOW(), NOW() FROM seq_1_to_$n"
run jobrun --jobs=8 -vv
is "$rc/$(count "status = 'success' AND attempts = 1")" "0/$n" \
    "a run under a claim trigger: exit 0, all $n success at their first attempt"
is "$(sql "SELECT status, COUNT(*), COUNT(DISTINCT id) FROM claim_log
        GROUP BY status ORDER BY status")" "processing	$n	$n
success	$n	$n" "the trigger saw each job claimed once and marked success once"
unlike "$err" "run again after a deadlock|no longer ours" \
    "no claim taken for a conflict, no group split: a trigger's rows are not counted as the jobs'"
sql "DROP TRIGGER claim_log; DROP TABLE claim_log"
