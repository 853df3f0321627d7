#!/bin/bash
# --single (and [run] single = yes): one runner per table (and per --type)
# at a time, through the server's GET_LOCK.  A second runner finds the lock
# taken and exits 0 quietly, --json saying it skipped; a runner of another
# --type scope is not held up.
. "${0%/*}/lib.sh"

plan 10
setup_db
write_config <<EOF2
[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 3
timeout = 10

[type.quick]
handler = noop
EOF2

jobrun enqueue --type=slow --key=s1 >/dev/null
jobrun enqueue --type=quick --key=q1 >/dev/null
"$JOBRUN" --config="$CONF" --single --type=slow --json >"$T/first" 2>&1 &
first=$!
defer "kill -9 $first"
sleep 1
run jobrun --single --type=slow --json
is "$rc" 0 "a second --single runner of the same scope exits 0"
is "$out" '{"ok":true,"skipped":true}' "and --json says it skipped"
is "$err" "" "quietly"
run jobrun --single --type=quick --json
is "$(jget claimed <<<"$out")" 1 "a runner of another --type scope runs"
wait "$first"
is "$?" 0 "the first runner finishes"
is "$(jget succeeded <"$T/first")" 1 "and ran its job"

run jobrun --single --type=slow --json
is "$(jkeys <<<"$out")" "claimed,elapsed_ms,failed,lost,ok,recovered,retried,snoozed,succeeded" \
    "once the first runner is gone the lock is free again: a normal run"

# [run] single = yes does the same without the option.
write_config <<EOF2
[run]
single = yes

[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 3
timeout = 10
EOF2
jobrun enqueue --type=slow --key=s2 >/dev/null
"$JOBRUN" --config="$CONF" >/dev/null 2>&1 &
first=$!
defer "kill -9 $first"
sleep 1
run jobrun --json
is "$out" '{"ok":true,"skipped":true}' "[run] single = yes: the second runner skips"
wait "$first"
write_config <<EOF2
[run]
single = maybe
EOF2
run jobrun
is "$rc" 78 "single takes yes or no"
like "$err" "\[run\] single: yes or no" "and says so"
