#!/bin/bash
# Lock waits: another connection holds the job's row lock while the runner
# wants to mark it, longer than innodb_lock_wait_timeout.  The mark meets
# error 1205, is run again after a short random pause, and succeeds once
# the other transaction commits.  (Deadlocks, error 1213, take the same
# path; 20-concurrency meets real ones between runners.)  This file uses a
# server of its own, since it lowers innodb_lock_wait_timeout globally.
. "${0%/*}/lib.sh"

plan 6
own=$(mktemp -d /tmp/jobrun-srv-62.XXXXXX)
defer "$TOP/contrib/throwaway-mariadb stop $own; rm -rf $own"
JOBRUN_TEST_SOCKET=$("$TOP/contrib/throwaway-mariadb" start "$own") ||
    bail_out "cannot start a server of our own"
export JOBRUN_TEST_SOCKET
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

# Held for longer than every retry: the error is reported, exit 70, and
# the job waits in processing for recovery rather than being guessed at.
jobrun enqueue --type=slow --key=stuck >/dev/null
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.3
sql "BEGIN; SELECT id FROM polling_jobs WHERE business_key = 'stuck' FOR UPDATE;
     DO SLEEP(12); COMMIT" >/dev/null &
holder=$!
defer "kill $holder"
wait "$pid"
is "$?" 70 "a lock held past every retry: exit 70"
like "$(cat "$T/err")" "Lock wait timeout exceeded" "stderr says why"
