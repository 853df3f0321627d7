#!/bin/bash
# Fencing: every write after the claim is WHERE id=? AND locked_by=?, so a
# runner whose lock was taken over cannot overwrite the newer claim.  Its
# write changes nothing; the run counts the job lost, says so, exits 1.
. "${0%/*}/lib.sh"

plan 16
setup_db
write_config <<EOF2
[run]
lock_seconds = 30

[type.stolen]
handler = exec
command = $HANDLERS/steal-lock 0
timeout = 10

[type.stolen_fail]
handler = exec
command = $HANDLERS/steal-lock 1
timeout = 10
EOF2

jobrun enqueue --type=stolen --key=s:1 >/dev/null
run jobrun --json
is "$rc" 1 "a lost job makes the run exit 1"
is "$(jget lost <<<"$out")" 1 "counted as lost"
is "$(jget succeeded <<<"$out")" 0 "not counted as succeeded"
is "$(jget ok <<<"$out")" false "ok is false"
like "$err" '^ts=\S+ level=warn job=1 type=stolen attempt=1 max_attempts=5 outcome=lost ms=[0-9]+ msg="lock taken by another runner; outcome not recorded: success"$' \
    "the lost lock is logged on stderr: one warning, outcome=lost, with what was not recorded"
is "$(field 1 status)" processing "the row keeps the newer claimer's status"
is "$(field 1 locked_by)" other-runner "and its locked_by"
is "$(field 1 attempts)" 1 "attempts as the claim left them"
is "$(field 1 'finished_at IS NULL AND last_error IS NULL')" 1 \
    "no finished_at, no last_error written"
left_between "$(field 1 'TIMESTAMPDIFF(SECOND, NOW(), locked_until)')" 298 300 \
    "the newer lock's expiry is untouched"

jobrun enqueue --type=stolen_fail --key=s:2 >/dev/null
run jobrun --type=stolen_fail --json
is "$rc" 1 "a lost failing job: exit 1"
is "$(jget lost <<<"$out")" 1 "counted as lost, not retried"
is "$(jget retried <<<"$out")" 0 "retried 0"
is "$(field 2 status)/$(field 2 locked_by)" processing/other-runner \
    "the retry write did not touch the row"
is "$(field 2 'last_error IS NULL')" 1 "no last_error written"
ago_between "$(field 2 'TIMESTAMPDIFF(SECOND, next_run_at, NOW())')" 0 2 \
    "next_run_at not pushed out"
