#!/bin/bash
# A handler that outlives its timeout is killed with its whole process group,
# SIGTERM ignored or not; the job is retried with "timed out" in last_error.
# A handler that exits leaving a process behind does not leave it running.
. "${0%/*}/lib.sh"

plan 14
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
for f in hang/handler.pid hang/child.pid left/child.pid; do
	defer "kill -9 \$(cat $T/$f)"
done

jobrun enqueue --type=hang --key=hang:1 >/dev/null
start=$SECONDS
run jobrun --json
took=$((SECONDS - start))
is "$rc" 1 "the run exits 1"
is "$(jget retried <<<"$out")" 1 "the job is counted as retried"
between "$took" 2 8 "SIGTERM ignored: killed about 2 s after the timeout"
is "$(field 1 status)/$(field 1 attempts)" pending/1 "the job is pending, attempts 1"
like "$(field 1 last_error)" '^timed out after 1 s' "last_error says timed out after 1 s"
like "$(field 1 last_error)" 'ignoring SIGTERM' "and has the handler's output"
ok "the handler has pids on file" test -s "$T/hang/handler.pid" -a -s "$T/hang/child.pid"
ok "the handler process is gone" proc_gone "$(cat "$T/hang/handler.pid")"
ok "its child process is gone" proc_gone "$(cat "$T/hang/child.pid")"

jobrun enqueue --type=left --key=left:1 >/dev/null
start=$SECONDS
run jobrun --type=left
took=$((SECONDS - start))
is "$rc" 0 "a handler that leaves a child behind succeeds"
is "$(field 2 status)" success "the job is success"
ok "the run did not wait for the left-over child" test "$took" -lt 10
sleep 0.2
ok "the child's pid is on file" test -s "$T/left/child.pid"
ok "the left-over child was killed" proc_gone "$(cat "$T/left/child.pid")"
