#!/bin/bash
# The run's session KILLed inside each kind of transaction jobrun runs
# (the queue's one helper, queue_trx): a schedule's, a fan-in's count
# after a job's outcome, and a capped type's claim.  A second connection
# holds the row the transaction needs, the run's statement waits for it,
# and its session is KILLed there.  The run makes the connection again
# and runs the whole transaction again on it: the slot is enqueued, the
# fan-in fires, the capped job runs, in this run, once, exit 0.  Then a
# COMMIT lost on the way (test/sql-proxy.py), before the server and after
# it: a schedule's and a --jobs group of outcomes, each kept once.
. "${0%/*}/lib.sh"

plan 43

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

# schedule_config: an every-minute schedule of a noop type
schedule_config() {
	write_config <<EOF
[type.tick]
handler = noop
[schedule.tick]
type = tick
cron = * * * * *
EOF
}
schedule_config
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
insert_job c1 capped
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

# --- a COMMIT lost on the way -------------------------------------------------

# sql-proxy.py stands between the run and the server and loses one COMMIT:
# before it reaches the server (which rolls the transaction back), or after
# the server has answered it (kept, but the run never hears so).  Either
# way the run makes a new connection and goes on: a schedule's transaction,
# where twice is once, is run again whole; a --jobs group asks the server,
# by its rows' tokens, what was kept, and runs again only what was not.
# proxy_start WHEN [ARMED-BY]: the proxy, losing the first COMMIT WHEN
proxy_start() {
	rm -f "$T/proxy.sock" "$T/proxy.log"
	python3 "$TOP/test/sql-proxy.py" --listen "$T/proxy.sock" \
	    --server "$JOBRUN_TEST_SOCKET" --log "$T/proxy.log" --when "$1" \
	    ${2:+--armed-by "$2"} &
	proxy=$!
	defer_kill "$proxy"
	wait_for 30 test -S "$T/proxy.sock" || bail_out "the proxy never listened"
}
proxy_stop() {
	kill "$proxy"
	wait "$proxy" 2>/dev/null || :
}
lost_commit() {
	file_has "$T/proxy.log" "^lost COMMIT \\($1\\)$"
}
four_started() {
	[ "$(grep -c '^started$' "$T/trace" 2>/dev/null)" = 4 ]
}

for when in before after; do
	sql "DELETE FROM polling_jobs; DELETE FROM jobrun_schedules"
	# The schedule's row made a minute before, without the proxy.
	schedule_config
	JOBRUN_TEST_NOW=$((now - 60)) jobrun >/dev/null 2>&1
	JOBRUN_TEST_SOCKET=$T/proxy.sock schedule_config
	proxy_start "$when"
	JOBRUN_TEST_NOW=$now jobrun -v >"$T/out.lost" 2>"$T/err.lost"
	is "$?" 0 "a schedule's COMMIT lost $when the server: exit 0"
	ok "the proxy lost it ($when)" lost_commit "$when"
	is "$(sql "SELECT GROUP_CONCAT(business_key, ' ', status, ' ', attempts) FROM polling_jobs")" \
	    "tick@2026-12-01T10:00 success 1" \
	    "COMMIT lost $when: the slot enqueued once, run once"
	proxy_stop

	sql "DELETE FROM polling_jobs"
	rm -f "$T/trace" "$T/go" "$T/armed"
	JOBRUN_TEST_SOCKET=$T/proxy.sock write_config <<EOF
[type.part]
handler = exec
command = $HANDLERS/trap-term $T/trace $T/go
EOF
	proxy_start "$when" "$T/armed"
	for k in 1 2 3 4; do
		jobrun enqueue --type=part --key="p$k" >/dev/null
	done
	jobrun_bg -v --jobs=4 >"$T/out.group" 2>"$T/err.group"
	wait_for 60 four_started || bail_out "the four handlers never started"
	# Every claim is committed: the next COMMIT holds outcomes.
	touch "$T/armed" "$T/go"
	wait "$bg"
	is "$?" 0 "--jobs=4, a COMMIT of outcomes lost $when the server: exit 0"
	ok "the proxy lost it ($when, --jobs=4)" lost_commit "$when"
	is "$(sql "SELECT GROUP_CONCAT(status, ' ', attempts ORDER BY id SEPARATOR ', ') FROM polling_jobs")" \
	    "success 1, success 1, success 1, success 1" \
	    "COMMIT lost $when: each job's success written, at its first attempt"
	is "$(grep -c '^done$' "$T/trace")" 4 "COMMIT lost $when: each handler ran once"
	unlike "$(cat "$T/err.group")" 'outcome not recorded|lock taken' \
	    "COMMIT lost $when: no outcome taken for another runner's"
	proxy_stop
	# A keyed type's outcome rides in the transaction of the slot's next
	# claim: lost with a job claimed in it (two jobs: the claim is the
	# witness), and with none (one job: the outcome is).
	for n in 2 1; do
		sql "DELETE FROM polling_jobs"
		rm -f "$T/trace" "$T/go" "$T/armed"
		JOBRUN_TEST_SOCKET=$T/proxy.sock write_config <<EOF
[type.keyed]
handler = exec
command = $HANDLERS/trap-term $T/trace $T/go
concurrency_key = \$.c
EOF
		proxy_start "$when" "$T/armed"
		for k in $(seq "$n"); do
			jobrun enqueue --type=keyed --key="k$k" \
			    --payload="{\"c\": \"$k\"}" >/dev/null
		done
		jobrun_bg -v >"$T/out.keyed" 2>"$T/err.keyed"
		wait_for 60 file_has "$T/trace" '^started$' ||
		    bail_out "the first handler never started"
		# k1's claim is committed: the next COMMIT holds its outcome.
		touch "$T/armed" "$T/go"
		wait "$bg"
		is "$?" 0 "a keyed outcome's COMMIT lost $when, $n job(s): exit 0"
		ok "the proxy lost it ($when, keyed, $n job(s))" lost_commit "$when"
		is "$(sql "SELECT GROUP_CONCAT(status, ' ', attempts ORDER BY id SEPARATOR ', ') FROM polling_jobs")" \
		    "$(seq -s, "$n" | sed 's/[0-9][0-9]*/success 1/g; s/,/, /g')" \
		    "keyed, COMMIT lost $when, $n job(s): each success, at its first attempt"
		is "$(grep -c '^done$' "$T/trace")" "$n" \
		    "keyed, COMMIT lost $when, $n job(s): each handler ran once"
		proxy_stop
	done
done
