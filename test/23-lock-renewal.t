#!/bin/bash
# A handler that runs longer than lock_seconds keeps its lock: the runner
# renews locked_until while it runs, so another runner does not recover
# (and re-run) the job, and the first runner's result is recorded.
. "${0%/*}/lib.sh"

plan 7
setup_db
write_config <<EOF2
[run]
lock_seconds = 3

[type.long]
handler = exec
command = $HANDLERS/sleep-then-ok 5
timeout = 30
EOF2

jobrun enqueue --type=long --key=long:1 >/dev/null
jobrun --json >"$T/a.out" 2>"$T/a.err" &
a=$!
defer "kill $a"
sleep 4
left=$(field 1 'TIMESTAMPDIFF(SECOND, NOW(), locked_until)')
run jobrun --json
is "$(jget recovered <<<"$out")" 0 "4 s into a 5 s job with lock_seconds = 3: not recovered"
is "$(jget claimed <<<"$out")" 0 "and not claimed by the second runner"
between "$left" 0 3 "locked_until was renewed (still ahead of NOW())"
wait "$a"
is "$?" 0 "the first runner exits 0"
is "$(jget succeeded <"$T/a.out")/$(jget lost <"$T/a.out")" 1/0 "it records the success, nothing lost"
is "$(field 1 status)/$(field 1 attempts)" success/1 "the job ran once and is success"
is "$(cat "$T/a.err")" "" "no complaint from the first runner"
