#!/bin/bash
# Database faults, for real: the server is killed (SIGKILL, no clean
# shutdown) while a handler runs.  Restarted before the handler ends, the
# runner reconnects once and records the result; still down, the runner
# exits 69 with a clear message and leaves the job in processing for
# recovery - never marked wrongly, never crashed.  A connection the server
# closed for idleness (wait_timeout) is made again transparently.
# This file uses a server of its own, since it kills it.
. "${0%/*}/lib.sh"

plan 14
use_own_server
own=$OWN_SERVER
setup_db
write_config <<EOF2
[run]
lock_seconds = 60

[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 6
timeout = 30

[type.quick]
handler = noop
EOF2

kill_server() {
	kill -9 "$(cat "$own/mysqld.pid")"
	sleep 0.5
}

# wait_processing KEY: until the runner has claimed the job (bounded), so
# the server dies while the handler runs however slow the runner starts
wait_processing() {
	local i
	for i in $(seq 200); do
		[ "$(sql "SELECT status FROM polling_jobs WHERE business_key = '$1'")" = processing ] &&
		    return 0
		sleep 0.1
	done
	return 1
}

# 1. killed and back before the handler ends: the mark reconnects.
jobrun enqueue --type=slow --key=s1 >/dev/null
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
defer "kill -9 $pid"
wait_processing s1
kill_server
"$TOP/contrib/throwaway-mariadb" start "$own" >/dev/null ||
    bail_out "cannot restart the server"
wait "$pid"
is "$?" 0 "server killed and restarted during the handler: exit 0"
is "$(jget succeeded <"$T/out")" 1 "the success was recorded after reconnecting"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 's1'")" \
    "success	1" "the job is success after one attempt"

# 2. killed and still down when the handler ends: exit 69, job left for
# recovery.
jobrun enqueue --type=slow --key=s2 >/dev/null
"$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
defer "kill -9 $pid"
wait_processing s2
kill_server
wait "$pid"
is "$?" 69 "server gone at mark time: exit 69"
like "$(cat "$T/err")" "mark job success in .*(Can't connect|Lost connection|gone away)" \
    "stderr says which write failed and why"
is "$(jget ok <"$T/out")" false "--json still says how the run went"
"$TOP/contrib/throwaway-mariadb" start "$own" >/dev/null ||
    bail_out "cannot restart the server"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 's2'")" processing \
    "the job was not marked wrongly: it waits for recovery"
# The lock's end is the Unix time after "@" in locked_by (and, for other
# workers, locked_until): move both into the past.
sql "UPDATE polling_jobs SET locked_until = NOW() - INTERVAL 1 SECOND,
     locked_by = CONCAT(SUBSTRING_INDEX(locked_by, '@', 1), '@',
     UNIX_TIMESTAMP() - 1) WHERE business_key = 's2'"
run jobrun --type=quick --json
is "$(jget recovered <<<"$out")" 1 "recovery gives it back once the lock expires"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 's2'")" pending \
    "and it is pending again"

# 3. the server is down from the start: exit 69 at connect.
kill_server
run jobrun --json
is "$rc" 69 "no server: exit 69"
like "$err" "connect to .*mysqld.sock" "stderr names where it tried to connect"
"$TOP/contrib/throwaway-mariadb" start "$own" >/dev/null ||
    bail_out "cannot restart the server"

# 4. wait_timeout: the server drops the idle connection while a handler
# runs; the next statement reconnects transparently.
sql "SET GLOBAL wait_timeout = 2"
jobrun enqueue --type=slow --key=s3 >/dev/null
jobrun enqueue --type=quick --key=q1 >/dev/null
run jobrun --json
sql "SET GLOBAL wait_timeout = 28800"
is "$rc" 0 "a connection closed by wait_timeout during a 6 s handler: exit 0"
is "$(jget succeeded <<<"$out")" 3 "all three due jobs (s2 recovered above) recorded"
is "$err" "" "nothing on stderr"
