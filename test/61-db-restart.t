#!/bin/bash
# Database faults, for real: the server is killed (SIGKILL, no clean
# shutdown) while a handler runs.  Restarted before the handler ends, the
# runner reconnects once and records the result; still down, the runner
# exits 69 with a clear message (also in --json's error) and leaves the job
# in processing for recovery - never marked wrongly, never crashed.  A
# session killed with KILL, or closed by the server for idleness
# (wait_timeout), is made again transparently, and -v says so.
# The handler runs until the test lets it go, so each fault lands while it
# runs however slow the machine is.
# This file uses a server of its own, since it kills it.
. "${0%/*}/lib.sh"

plan 34
use_own_server
own=$OWN_SERVER
setup_db
write_config <<EOF2
[run]
lock_seconds = 60

[type.slow]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
timeout = 120

[type.quick]
handler = noop

[type.work]
handler = exec
command = $HANDLERS/slot-work $T/trace $T/work-go
timeout = 120
EOF2

kill_server() {
	local pid
	pid=$(cat "$own/mysqld.pid")
	kill -9 "$pid"
	wait_for 30 proc_gone "$pid" || bail_out "the server did not die"
}
start_server() {
	"$THROWAWAY" start "$own" >/dev/null ||
	    bail_out "cannot restart the server"
}
# slow_run KEY ARG...: enqueue KEY, start a run in the background, wait
# until its handler runs
slow_run() {
	local key=$1
	shift
	rm -f "$T/started" "$T/go"
	jobrun enqueue --type=slow --key="$key" >/dev/null
	jobrun_bg "$@" >"$T/out" 2>"$T/err"
	wait_for 60 test -e "$T/started" || bail_out "the handler did not start"
}
status_var() {
	sql "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2
}

# 1. killed and back before the handler ends: the mark reconnects.
slow_run s1 -v --json
kill_server
start_server
touch "$T/go"
wait "$bg"
is "$?" 0 "server killed and restarted during the handler: exit 0"
is "$(jget succeeded <"$T/out")" 1 "the success was recorded after reconnecting"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 's1'")" \
    "success	1" "the job is success after one attempt"
like "$(cat "$T/err")" 'msg="connection to the database lost and made again 1 time\(s\)"' \
    "-v says the connection was made again, once"

# 2. killed and still down when the handler ends: exit 69, job left for
# recovery.
slow_run s2 --json
kill_server
touch "$T/go"
wait "$bg"
is "$?" 69 "server gone at mark time: exit 69"
like "$(cat "$T/err")" "mark job success in .*(Can't connect|Lost connection|gone away)" \
    "stderr says which write failed and why"
is "$(jget ok <"$T/out")" false "--json still says how the run went: ok false"
like "$(jget error <"$T/out")" "^mark job success in .*(Can't connect|Lost connection|gone away)" \
    "and its error holds the message"
start_server
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 's2'")" processing \
    "the job was not marked wrongly: it waits for recovery"
expire_lock s2
run jobrun --type=quick --json
is "$(jget recovered <<<"$out")" 1 "recovery gives it back once the lock expires"
is "$rc" 0 "a run that recovered a job exits 0 all the same"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 's2'")" pending \
    "and it is pending again"
sql "DELETE FROM polling_jobs WHERE business_key = 's2'"

# 3. the server is down from the start: exit 69 at connect, for every
# command.
kill_server
run jobrun --json
is "$rc" 69 "no server: exit 69"
like "$err" "connect to .*mysqld.sock" "stderr names where it tried to connect"
is "$out" "" "no JSON after the fatal error"
for cmd in "enqueue --type=quick --key=x" status list "show 1" "retry 1" \
    "cancel 1" "purge --status=success --older-than=1d" check; do
	# shellcheck disable=SC2086 # the command's words
	run jobrun $cmd
	is "$rc" 69 "no server: ${cmd%% *} exits 69"
done
start_server

# 4. the session is killed (KILL) while the handler runs: the mark
# reconnects.
slow_run s3 -v --json
conn=$(sql "SELECT id FROM information_schema.PROCESSLIST
    WHERE db = '$DB' AND id <> CONNECTION_ID() AND user = 'root'" | head -n 1)
sql "KILL $conn"
touch "$T/go"
wait "$bg"
is "$?/$(jget succeeded <"$T/out")" 0/1 "the session KILLed during the handler: exit 0, the success recorded"
like "$(cat "$T/err")" 'made again 1 time\(s\)' "-v says the connection was made again"

# 5. wait_timeout: the server drops the idle connection while a handler
# runs; the next statement reconnects transparently.
sql "SET GLOBAL wait_timeout = 2"
aborted=$(status_var Aborted_clients)
slow_run s4 -v --json
dropped() {
	[ "$(status_var Aborted_clients)" -gt "$aborted" ]
}
ok "the server dropped the idle connection (wait_timeout = 2)" wait_for 60 dropped
touch "$T/go"
wait "$bg"
rc=$?
sql "SET GLOBAL wait_timeout = 28800"
is "$rc/$(jget succeeded <"$T/out")" 0/1 "a connection closed by wait_timeout during the handler: exit 0, recorded"
is "$(grep -v 'level=info' "$T/err")" "" "nothing but -v's lines on stderr"

# 6. --jobs=8: the session is killed while a group's COMMIT waits (the
# test holds every commit with BACKUP STAGE BLOCK_COMMIT), so the COMMIT's
# answer is lost and the server rolls the transaction back.  The run asks
# a new connection what the server kept (the marked rows, by their
# tokens) and writes what is missing: every job success at its first
# attempt, no handler run twice.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('w', seq), 'work', NOW(), NOW(), NOW() FROM seq_1_to_8"
rm -f "$T/trace" "$T/work-go"
traced_n() {	# traced_n WHAT N: N handlers traced WHAT
	[ "$(grep -c " $1\$" "$T/trace" 2>/dev/null)" = "$2" ]
}
# commit_waits: a COMMIT of the run waits; its session in $conn
commit_waits() {
	conn=$(sql "SELECT id FROM information_schema.PROCESSLIST
	    WHERE db = '$DB' AND info = 'COMMIT'
	      AND state = 'Waiting for backup lock'")
	[ -n "$conn" ]
}
jobrun_bg --type=work --jobs=8 -v --json >"$T/out" 2>"$T/err"
wait_for 60 traced_n started 8 || bail_out "the eight handlers did not start"
other_start
other_send "BACKUP STAGE START; BACKUP STAGE BLOCK_COMMIT; SELECT 'blocked';"
wait_for 30 file_has "$T/other.out" '^blocked' ||
    bail_out "BACKUP STAGE BLOCK_COMMIT was not taken"
touch "$T/work-go"
ok "--jobs=8: a group's COMMIT waits for the backup lock" wait_for 30 commit_waits
sql "KILL $conn"
other_send "BACKUP STAGE END;"
other_end
wait "$bg"
is "$?" 0 "the session killed at a group's COMMIT: exit 0"
is "$(sql "SELECT COUNT(*) FROM polling_jobs
    WHERE business_key LIKE 'w%' AND status = 'success' AND attempts = 1")" 8 \
    "all eight success, each at its first attempt"
is "$(jget succeeded <"$T/out")" 8 "--json counts eight successes"
is "$(grep -c ' done$' "$T/trace")" 8 "each handler ran once"
like "$(cat "$T/err")" 'made again 1 time\(s\)' "-v says the connection was made again"
