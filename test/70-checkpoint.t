#!/bin/bash
# Resumable jobs (sql/002_checkpoint.sql): a handler saves progress by
# writing JSON lines to fd 3; each is stored in the job's row at once,
# fenced by its lock.  The runner is SIGKILLed in the middle of a long job;
# the next run recovers the job and the handler resumes from the last
# checkpoint, so it reprocesses at most one checkpoint interval.  A stale
# runner's checkpoint is fenced off; a checkpoint that is not JSON or is
# too big is refused and leaves the row as it was.
. "${0%/*}/lib.sh"

total=2000 every=100
plan 19
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
write_config <<EOF2
[run]
lock_seconds = 3

[type.big]
handler = exec
command = $HANDLERS/resumable $total $every $T/items
timeout = 120

[type.bad]
handler = exec
command = $HANDLERS/bad-checkpoint json
timeout = 10

[type.huge]
handler = exec
command = $HANDLERS/bad-checkpoint big
timeout = 10

[type.stale]
handler = exec
command = $HANDLERS/steal-then-checkpoint
timeout = 10
EOF2
job() { sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"; }

jobrun enqueue --type=big --key=big >/dev/null
"$JOBRUN" --config="$CONF" --type=big >/dev/null 2>&1 &
pid=$!
defer "kill -9 $pid"
for i in $(seq 200); do
	[ "$(cat "$T/items" 2>/dev/null | wc -l)" -ge 550 ] && break
	sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 0.5	# the handler is told (SIGTERM) that its runner died
done_before=$(wc -l <"$T/items")
saved=$(job big checkpoint)
is "$(job big status)" processing "SIGKILLed mid-way: the job is still processing"
like "$saved" '^\{"last": ?[0-9]+\}$' "and its row holds the last checkpoint ($saved)"
last=${saved##*:}; last=${last%\}}
between "$(( done_before - last ))" 0 "$every" \
    "the handler stopped within one interval of its checkpoint"

sleep 4.5	# lock_seconds (3) and the DATETIME second: the lock has expired
run jobrun --type=big --json
is "$rc" 0 "the next run exits 0"
is "$(jget recovered <<<"$out")/$(jget succeeded <<<"$out")" 1/1 \
    "it recovered the job and finished it"
is "$(job big status)/$(job big attempts)" success/2 "the job is success after 2 attempts"
is "$(tail -1 "$T/items.attempts")" "attempt 2 resumes after $last" \
    "attempt 2 started from the checkpoint, not from the beginning"
is "$(sort -un "$T/items" | wc -l)" "$total" "every item was processed"
again=$(( $(wc -l <"$T/items") - total ))
diag "reprocessed after the kill: $again item(s) (checkpoint every $every," \
     "killed after $done_before, checkpoint $last)"
between "$again" 0 "$every" "at most one interval was processed twice"
is "$(job big checkpoint)" '{"last":2000}' "the final checkpoint is kept with the result"

# Refused checkpoints: the row keeps the last good one.
jobrun enqueue --type=bad --key=bad >/dev/null
run jobrun --type=bad --json
is "$(job bad checkpoint)" '{"good":1}' "a checkpoint that is not JSON is refused; the good one stays"
like "$err" "checkpoint refused: not valid JSON" "stderr says why"
like "$(job bad last_error)" "^exit status 3 \\(checkpoint refused: not valid JSON" \
    "and so does last_error"
jobrun enqueue --type=huge --key=huge >/dev/null
run jobrun --type=huge --json
is "$(job huge checkpoint)" '{"good":1}' "a 70000-byte checkpoint is refused"
like "$err" "checkpoint refused: over 65536 bytes" "stderr gives the limit"

# A stale runner's checkpoint is fenced off.
jobrun enqueue --type=stale --key=stale >/dev/null
start=$(date +%s)
run jobrun --type=stale --json
is "$(jget lost <<<"$out")" 1 "a checkpoint after the lock was lost: the job counts as lost"
is "$(job stale checkpoint)" '{"theirs":1}' "the other runner's checkpoint is not overwritten"
between "$(( $(date +%s) - start ))" 0 4 "the handler was stopped, not waited for"

# Without the migration: no fd 3, no JOBRUN_CHECKPOINT_FD.
sql "ALTER TABLE polling_jobs DROP COLUMN checkpoint, DROP COLUMN snoozes"
write_config <<EOF2
[type.env]
handler = exec
command = $HANDLERS/dump-job $T
timeout = 10
EOF2
jobrun enqueue --type=env --key=env >/dev/null
run jobrun --json
is "$(jget succeeded <<<"$out")/$(grep -c JOBRUN_CHECKPOINT "$T"/*.env)" 1/0 \
    "without sql/002_checkpoint.sql jobs run as before, without a checkpoint fd"
