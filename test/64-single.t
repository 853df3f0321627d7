#!/bin/bash
# --single (and [run] single = yes): one runner per table (and per --type)
# at a time, through the server's GET_LOCK('jobrun:DATABASE.TABLE[:TYPE]').
# A second runner finds the lock taken and exits 0 quietly (-v says so),
# --json saying it skipped; a runner of another --type scope is not held
# up.  The lock dies with its runner, even a SIGKILLed one; when the
# runner's connection is lost it takes the lock again, and if another
# runner took it meanwhile it finishes its job, claims no more and warns.
# The first runner's handler runs until the test lets it go; the second
# starts once the lock is seen taken.
. "${0%/*}/lib.sh"

plan 22
setup_db
write_config <<EOF2
[type.slow]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
timeout = 120

[type.quick]
handler = noop
EOF2
name_slow="jobrun:$DB.polling_jobs:slow"
name_all="jobrun:$DB.polling_jobs"
# held NAME: a session holds the named lock
held() {
	[ "$(sql "SELECT IS_USED_LOCK('$1') IS NOT NULL")" = 1 ]
}
# holder NAME: the connection id holding it
holder() {
	sql "SELECT IS_USED_LOCK('$1')"
}
# first_runner ARG...: a runner in the background, its handler started
first_runner() {
	rm -f "$T/started" "$T/go"
	jobrun_bg "$@" >"$T/first" 2>"$T/first.err"
	first=$bg
	wait_for 60 test -e "$T/started" || bail_out "the first runner's handler did not start"
}

insert_job s1 slow
insert_job q1 quick
first_runner --single --type=slow --json
ok "the first runner holds $name_slow" held "$name_slow"
run jobrun --single --type=slow --json
is "$rc" 0 "a second --single runner of the same scope exits 0"
is "$out" '{"ok":true,"skipped":true}' "and --json says it skipped"
is "$err" "" "quietly"
run jobrun --single --type=slow -v
like "$err" "^ts=\\S+ level=info msg=\"another runner holds $name_slow; nothing to do\"\$" \
    "-v says which lock another runner holds"
run jobrun --single --type=quick --json
is "$(jget claimed <<<"$out")" 1 "a runner of another --type scope runs"
touch "$T/go"
wait "$first"
is "$?" 0 "the first runner finishes"
is "$(jget succeeded <"$T/first")" 1 "and ran its job"
ok "the lock is free once it has gone" not held "$name_slow"

run jobrun --single --type=slow --json
is "$(jkeys <<<"$out")" "by_priority,claimed,deadline_passed,deleted,elapsed_ms,failed,lost,ok,recovered,retried,snoozed,succeeded" \
    "once the first runner is gone the lock is free again: a normal run"

# A SIGKILLed runner does not leave the lock behind: the server releases
# it with the connection.
insert_job s2 slow
first_runner --single --type=slow
kill -9 "$bg_pid"
wait "$first" 2>/dev/null
ok "a SIGKILLed runner's lock is released by the server" wait_for 30 not held "$name_slow"
sql "UPDATE polling_jobs SET status = 'failed', locked_by = NULL, locked_until = NULL
     WHERE business_key = 's2'"

# The connection is lost (KILL) while the handler runs: the run takes the
# lock again on its new connection.
insert_job s3 slow
first_runner --single --type=slow --json
old=$(holder "$name_slow")
sql "KILL $old"
touch "$T/go"
wait "$first"
is "$?/$(jget succeeded <"$T/first")" 0/1 "the session killed mid-job: the run reconnects and records the job"
is "$(cat "$T/first.err")" "" "without a warning: it took the lock again"

# ... and when another runner took the lock meanwhile, the run finishes
# the job in hand, claims no further one, and warns.
insert_job s4 slow
insert_job s5 slow
first_runner --single --type=slow --json
old=$(holder "$name_slow")
rm -f "$T/other.in"
mkfifo "$T/other.in"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B -n "$DB" \
    <"$T/other.in" >"$T/other.out" 2>&1 &
other=$!
defer_kill "$other"
exec 7>"$T/other.in"
sql "KILL $old"
wait_for 30 not held "$name_slow"
printf "SELECT 'took', GET_LOCK('%s', 0);\n" "$name_slow" >&7
ok "another session took the lock" wait_for 30 file_has "$T/other.out" '^took	1$'
touch "$T/go"
wait "$first"
rc=$?
exec 7>&-
wait "$other"
is "$(jget claimed <"$T/first")/$(jget succeeded <"$T/first")" 1/1 "the job in hand was finished and recorded, no other claimed"
is "$(sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM polling_jobs WHERE business_key IN ('s4', 's5')")" \
    success,pending "s4 success, s5 left pending"
like "$(cat "$T/first.err")" "stopped: the connection was lost and another runner took the --single lock $name_slow" \
    "it warns that another runner took the lock"
is "$rc" 0 "and exits 0: nothing went wrong with the job"

# [run] single = yes does the same without the option, with the lock of the
# whole table.
write_config <<EOF2
[run]
single = yes

[type.slow]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
timeout = 120
EOF2
first_runner
ok "[run] single = yes: the first runner holds $name_all" held "$name_all"
run jobrun --json
is "$out" '{"ok":true,"skipped":true}' "[run] single = yes: the second runner skips"
touch "$T/go"
wait "$first"
write_config <<EOF2
[run]
single = maybe
EOF2
run jobrun
is "$rc" 78 "single takes yes or no"
like "$err" "\[run\] single: yes or no" "and says so"
