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
plan 32
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

insert_job big big
jobrun_bg --type=big >/dev/null 2>&1
halfway() {
	[ "$(cat "$T/items" 2>/dev/null | wc -l)" -ge 550 ]
}
wait_for 60 halfway || bail_out "the handler did not get to item 550"
kill_runner
# The handler is told (SIGTERM) that its runner died: wait until it is gone.
handler_gone() {
	! pgrep -f "resumable $total $every $T/items" >/dev/null
}
ok "the handler stopped when its runner died" wait_for 30 handler_gone
done_before=$(wc -l <"$T/items")
saved=$(job big checkpoint)
is "$(job big status)" processing "SIGKILLed mid-way: the job is still processing"
if on_mysql; then
	like "$saved" '^\{"last": [0-9]+\}$' \
	    "and its row holds the last checkpoint, in MySQL's form ($saved)"
else
	like "$saved" '^\{"last":[0-9]+\}$' "and its row holds the last checkpoint ($saved)"
fi
last=${saved##*:}; last=${last# }; last=${last%\}}
is "$(( last % every ))/$(( last <= done_before ))" 0/1 \
    "the checkpoint is a multiple of $every, at or before the last item done"
between "$(( done_before - last ))" 0 "$every" \
    "the handler stopped within one interval of its checkpoint"

# Recovery needs the lock expired by the server's clock.
lock_expired() {
	[ "$(job big 'locked_until < NOW()')" = 1 ]
}
ok "the dead runner's lock expires (lock_seconds = 3)" wait_for 30 lock_expired
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
is "$again" "$(( done_before - last ))" \
    "exactly the items after the checkpoint were processed twice (at most one interval)"
is "$(job big checkpoint)" "$(json_as_stored '{"last":2000}')" "the final checkpoint is kept with the result"

# Refused checkpoints: the row keeps the last good one.
insert_job bad bad
run jobrun --type=bad --json
is "$(job bad checkpoint)" "$(json_as_stored '{"good":1}')" "a checkpoint that is not JSON is refused; the good one stays"
like "$err" "checkpoint refused: not valid JSON" "stderr says why"
like "$(job bad last_error)" "^exit status 3 \\(checkpoint refused: not valid JSON" \
    "and so does last_error"
insert_job huge huge
run jobrun --type=huge --json
is "$(job huge checkpoint)" "$(json_as_stored '{"good":1}')" "a 70000-byte checkpoint is refused"
like "$err" "checkpoint refused: over 65536 bytes" "stderr gives the limit"

# A stale runner's checkpoint is fenced off.
base=$(baseline_ms --type=stale --json)
insert_job stale stale
start=$(date +%s%N)
run jobrun --type=stale --json
took=$(( ($(date +%s%N) - start) / 1000000 ))
is "$(jget lost <<<"$out")" 1 "a checkpoint after the lock was lost: the job counts as lost"
is "$(job stale checkpoint)" "$(json_as_stored '{"theirs":1}')" "the other runner's checkpoint is not overwritten"
took_between_ms "$took" 0 $((base + 3000)) "the handler (5 s) was stopped, not waited for ($took ms)"

# Re-encoding, the next attempt, retry and show.  The line has blanks
# inside and a blank and a carriage return at its end.
mkdir "$T/saves"
write_config <<EOF2
[run]
backoff_base = 0
backoff_cap = 0

[type.save]
handler = exec
command = $HANDLERS/save-checkpoint $T/saves '{"step": 1,  "x": [1, 2]} \\r' 3
timeout = 10

[type.fds]
handler = exec
command = $HANDLERS/inherited-fds $T/fds
timeout = 10
EOF2
insert_job save save "'{\"p\": [1, 2]}'" max_attempts 2
sid=$(job save id)
JOBRUN_CHECKPOINT='{"from":"env"}' run jobrun --type=save --max=1 --json
# (on MySQL what is stored is the server's form of it: json_as_stored)
written=$(json_as_stored '{"step": 1,  "x": [1, 2]} ')
is "$(job save checkpoint)" "$written" \
    "a checkpoint is stored as written, blanks and all, less its CR LF"
is "$(grep -c '^JOBRUN_CHECKPOINT=' "$T/saves/$sid.1.env")/$(sed -n 's/^JOBRUN_CHECKPOINT_FD=//p' "$T/saves/$sid.1.env")" \
    0/3 "the first attempt: JOBRUN_CHECKPOINT_FD=3, no JOBRUN_CHECKPOINT (not even jobrun's own)"
run jobrun --type=save --max=1 --json
is "$(sed -n 's/^JOBRUN_CHECKPOINT=//p' "$T/saves/$sid.2.env")" "$written" \
    "the next attempt finds it in JOBRUN_CHECKPOINT"
is "$(cat "$T/saves/$sid.2.stdin")" "$(cat "$T/saves/$sid.1.stdin")" "its stdin is still the payload, unchanged"
is "$(job save status)" failed "after its 2 attempts the job failed"
run jobrun retry "$sid"
is "$(job save checkpoint)/$(job save status)" "$written/pending" "retry keeps the checkpoint"
run jobrun show "$sid"
unlike "$out" 'checkpoint|step' "show does not print the checkpoint"
run jobrun show "$sid" --json
unlike "$(jkeys <<<"$out")" 'checkpoint' "nor does show --json"

# With the migration the handler has fd 3, and no other.
insert_job fds fds
run jobrun --type=fds --json
is "$(cat "$T/fds")" "0 1 2 3" "with the migration: descriptors 0 to 3"

# Without the migration: no fd 3, no JOBRUN_CHECKPOINT_FD.
sql "ALTER TABLE polling_jobs DROP COLUMN checkpoint, DROP COLUMN snoozes"
write_config <<EOF2
[type.env]
handler = exec
command = $HANDLERS/dump-job $T
timeout = 10

[type.fds]
handler = exec
command = $HANDLERS/inherited-fds $T/fds
timeout = 10
EOF2
insert_job env env
JOBRUN_CHECKPOINT='{"from":"env"}' JOBRUN_CHECKPOINT_FD=3 run jobrun --type=env --json
is "$(jget succeeded <<<"$out")/$(grep -c JOBRUN_CHECKPOINT "$T"/*.env)" 1/0 \
    "without sql/002_checkpoint.sql jobs run as before, without JOBRUN_CHECKPOINT*"
insert_job fds2 fds
run jobrun --type=fds --json
is "$(cat "$T/fds")" "0 1 2" "and without descriptor 3"
