#!/bin/bash
# The run's session KILLed inside each kind of transaction jobrun runs
# (the queue's one helper, queue_trx): a schedule's, a fan-in's count
# after a job's outcome, and a capped type's claim.  A second connection
# holds the row the transaction needs, the run's statement waits for it,
# and its session is KILLed there.  The run makes the connection again
# and runs the whole transaction again on it: the slot is enqueued, the
# fan-in fires, the capped job runs, in this run, once, exit 0.
. "${0%/*}/lib.sh"

plan 11

setup_db
for f in 003_flow 004_schedules 006_fan_in; do
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
	    <"$TOP/sql/$f.sql" || bail_out "cannot load sql/$f.sql"
done
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
# waiting_on PATTERN: the session of this test's database that has been
# running a statement like PATTERN for a second or more: waiting for the
# row the second connection holds.  (Read from the process list: a
# locking read of a row by its primary key waits while the statement is
# optimised, and information_schema.innodb_trx need not show it.)
waiting_on() {
	sql "SELECT id FROM information_schema.processlist
	     WHERE db = DATABASE() AND info LIKE '$1' AND time >= 1 LIMIT 1"
}
waits_on() {
	[ -n "$(waiting_on "$1")" ]
}
# kill_waiting PATTERN: KILL that session
kill_waiting() {
	sql "KILL $(waiting_on "$1")"
}

# --- a schedule's transaction -------------------------------------------------

write_config <<EOF
[type.tick]
handler = noop
[schedule.tick]
type = tick
cron = * * * * *
EOF
now=$(date -u -d '2026-12-01 10:00:30' +%s)
JOBRUN_TEST_NOW=$((now - 60)) jobrun >/dev/null 2>&1
is "$(sql "SELECT COUNT(*) FROM jobrun_schedules")" 1 "the schedule's row is made"
other_start
other_send "BEGIN; SELECT 'locked', name FROM jobrun_schedules FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked' || bail_out "no lock taken"
JOBRUN_TEST_NOW=$now jobrun_bg -v >"$T/out.sched" 2>"$T/err.sched"
wait_for 30 waits_on 'INSERT INTO jobrun_schedules%' ||
    bail_out "the run never waited for the row"
kill_waiting 'INSERT INTO jobrun_schedules%'
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 0 "the session killed inside a schedule's transaction: exit 0"
is "$(sql "SELECT GROUP_CONCAT(business_key, ' ', status) FROM polling_jobs")" \
    "tick@2026-12-01T10:00 success" "the slot was enqueued once and ran"
like "$(cat "$T/err.sched")" 'made again 1 time\(s\)' "-v says the connection was made again"

# --- a fan-in's count after a job's outcome -----------------------------------

write_config <<EOF
[type.part]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
EOF
run jobrun enqueue --type=part --key-prefix=fan --range=1-1 --chunk=1 --then=after
is "$rc" 0 "a fan-out of one part, then 'after'"
jobrun_bg -v >"$T/out.fanin" 2>"$T/err.fanin"
# The run's start (the sweep) is done once the part's handler runs.
wait_for 30 test -e "$T/started" || bail_out "the part never started"
other_start
other_send "BEGIN; SELECT 'locked', id FROM jobrun_fan_ins FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked' || bail_out "no lock taken"
touch "$T/go"
wait_for 30 waits_on 'SELECT total, succeeded, failed%' ||
    bail_out "the count never waited for the fan-in"
kill_waiting 'SELECT total, succeeded, failed%'
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 0 "the session killed inside a fan-in's count: exit 0"
is "$(sql "SELECT fired_at IS NOT NULL, succeeded, failed FROM jobrun_fan_ins")" \
    "1	1	0" "the fan-in fired in this run, the part counted once"
is "$(count "type = 'after' AND status = 'pending'")" 1 "its callback is enqueued"
unlike "$(cat "$T/err.fanin")" 'the next run counts it' "nothing was left for the next run"

# --- a capped type's claim ----------------------------------------------------

write_config <<EOF
[type.capped]
handler = noop
concurrency = 1
EOF
jobrun enqueue --type=capped --key=c1 >/dev/null
other_start
other_send "BEGIN; INSERT INTO polling_jobs_flow (type, paused, tokens, refilled_at, claims, updated_at) VALUES ('capped', 0, 0, 0, 0, NOW()) ON DUPLICATE KEY UPDATE type = type; SELECT 'locked';"
wait_for 30 file_has "$T/other.out" '^locked' || bail_out "no lock taken"
jobrun_bg -v --type=capped >"$T/out.cap" 2>"$T/err.cap"
wait_for 30 waits_on 'SELECT paused, tokens%' ||
    bail_out "the claim never waited for the control row"
kill_waiting 'SELECT paused, tokens%'
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 0 "the session killed inside a capped claim's transaction: exit 0"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'c1'")" \
    "success	1" "the capped job ran once, at its first attempt"
