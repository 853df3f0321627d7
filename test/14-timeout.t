#!/bin/bash
# A handler that outlives its timeout is killed with its whole process group,
# SIGTERM ignored or not; the job is retried with "timed out" in last_error.
# A handler that exits leaving a process behind does not leave it running.
. "${0%/*}/lib.sh"

plan 13
setup_db
mkdir "$T/hang" "$T/left"
write_config <<EOF2
[type.hang]
handler = exec
command = $HANDLERS/ignore-term $T/hang
timeout = 1

[type.left]
handler = exec
command = $HANDLERS/leave-child $T/left
timeout = 20
EOF2
# The handlers write their pids to files.  Should one outlive its run
# (jobrun's fault), the test kills it at exit: defer_kill, from the moment
# the file is read, not "kill $(cat FILE)" at exit, which by then may name
# another process.

# now_ms: the wall clock in milliseconds
now_ms() {
	echo $(( $(date +%s%N) / 1000000 ))
}

base=$(baseline_ms --json)
insert_job hang:1 hang
start=$(now_ms)
run jobrun --json
took=$(( $(now_ms) - start ))
is "$rc" 1 "the run exits 1"
is "$(jget retried <<<"$out")" 1 "the job is counted as retried"
# SIGTERM at 1 s, SIGKILL 2 s later: the run ends 3 s after the handler
# began, plus what an empty run takes here ($base ms).
took_between_ms "$took" 3000 $((3000 + base + 1000)) "SIGTERM ignored: killed 2 s after the timeout ($took ms)"
is "$(field 1 status)/$(field 1 attempts)" pending/1 "the job is pending, attempts 1"
is "$(field 1 last_error)" "timed out after 1 s: started, ignoring SIGTERM" \
    "last_error says timed out after 1 s, then the handler's output"
ok "the handler has pids on file" test -s "$T/hang/handler.pid" -a -s "$T/hang/child.pid"
defer_kill -9 $(cat "$T/hang/handler.pid" "$T/hang/child.pid" 2>/dev/null)
ok "the handler process is gone" proc_gone "$(cat "$T/hang/handler.pid")"
ok "its child process is gone" proc_gone "$(cat "$T/hang/child.pid")"

insert_job left:1 left
start=$(now_ms)
run jobrun --type=left
took=$(( $(now_ms) - start ))
is "$rc" 0 "a handler that leaves a child behind succeeds"
is "$(field 2 status)" success "the job is success"
took_between_ms "$took" 0 $((base + 1500)) "the run did not wait for the left-over child (60 s; took $took ms)"
ok "the child's pid is on file" test -s "$T/left/child.pid"
defer_kill -9 "$(cat "$T/left/child.pid" 2>/dev/null)"
ok "the left-over child was killed" wait_for 10 proc_gone "$(cat "$T/left/child.pid")"
