#!/bin/bash
# Lock waits and deadlocks provoked from a second connection.
# 1. The second connection holds the job's row lock while the runner wants
#    to mark it, longer than innodb_lock_wait_timeout: the mark meets error
#    1205, is run again after a short random pause, and succeeds once the
#    other transaction commits.
# 2. A real deadlock: the runner's recovery has locked stranded job P1 and
#    waits for P2, which the second connection holds; the second connection
#    then asks for P1.  InnoDB rolls back the lighter transaction - the
#    runner's, since the other one has changed more rows - with error 1213;
#    the runner runs the statement again and recovers both jobs.
# This file uses a server of its own, since it changes global settings.
. "${0%/*}/lib.sh"

plan 10
use_own_server
own=$OWN_SERVER
setup_db
write_config <<EOF2
[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 1
timeout = 10
EOF2
sql "SET GLOBAL innodb_lock_wait_timeout = 1"

jobrun enqueue --type=slow --key=held >/dev/null
"$JOBRUN" --config="$CONF" -v --json >"$T/out" 2>"$T/err" &
pid=$!
defer "kill -9 $pid"
sleep 0.3
# Hold the row for 2.5 s from the middle of the handler's second.
sql "BEGIN; SELECT id FROM polling_jobs WHERE business_key = 'held' FOR UPDATE;
     DO SLEEP(2.5); COMMIT" >/dev/null &
holder=$!
wait "$pid"
rc=$?
wait "$holder"
is "$rc" 0 "the mark waited out the other transaction: exit 0"
is "$(jget succeeded <"$T/out")" 1 "the success was recorded"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'held'")" \
    "success	1" "the job is success after one attempt"
like "$(cat "$T/err")" "statement\(s\) run again after a deadlock or lock wait timeout" \
    "-v says the statement was run again"

# Held for longer than every retry: the error is reported and
# the job waits in processing for recovery rather than being guessed at;
# exit 75 (EX_TEMPFAIL): nothing changed, the next run may get through.
jobrun enqueue --type=slow --key=stuck >/dev/null
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.3
sql "BEGIN; SELECT id FROM polling_jobs WHERE business_key = 'stuck' FOR UPDATE;
     DO SLEEP(12); COMMIT" >/dev/null &
holder=$!
defer "kill $holder"
wait "$pid"
is "$?" 75 "a lock held past every retry: exit 75 (try again later)"
like "$(cat "$T/err")" "Lock wait timeout exceeded" "stderr says why"

# --- a real deadlock ---------------------------------------------------------
sql "SET GLOBAL innodb_lock_wait_timeout = 50"
write_config <<EOF2
[type.other]
handler = noop
EOF2
sql "DELETE FROM polling_jobs;
     CREATE TABLE ballast (n INT) ENGINE=InnoDB;
     INSERT INTO ballast SELECT seq FROM seq_1_to_200;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, locked_by, locked_until, created_at, updated_at)
     VALUES ('p1', 'gone', 'processing', 1, NOW(), 'dead-1',
        NOW() - INTERVAL 20 SECOND, NOW(), NOW()),
            ('p2', 'gone', 'processing', 1, NOW(), 'dead-2',
        NOW() - INTERVAL 10 SECOND, NOW(), NOW())"
p1=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'p1'")
p2=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'p2'")
deadlocks() {
	sql "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'" | cut -f2
}
before=$(deadlocks)
# The second connection: heavy (200 rows changed), holds P2, later wants P1.
sql "BEGIN; UPDATE ballast SET n = n + 1;
     SELECT id FROM polling_jobs WHERE id = $p2 FOR UPDATE;
     DO SLEEP(2);
     SELECT id FROM polling_jobs WHERE id = $p1 FOR UPDATE;
     DO SLEEP(1); COMMIT" >"$T/other.out" 2>&1 &
other=$!
sleep 1
run jobrun -v --json
wait "$other"
other_rc=$?
is "$rc/$(jget recovered <<<"$out")" 0/2 \
    "the runner's recovery was chosen as the deadlock victim, ran again, and recovered both jobs"
is "$(( $(deadlocks) - before ))" 1 "the server saw one deadlock"
like "$err" "statement\(s\) run again after a deadlock" "-v says the statement was run again"
is "$other_rc" 0 "the other transaction went through"
