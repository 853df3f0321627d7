#!/bin/bash
# A job that keeps failing ends 'failed' once attempts reaches max_attempts,
# keeps its last_error, and is never claimed again.
. "${0%/*}/lib.sh"

plan 19
setup_db
# backoff_base 0: a retried job is due again at once
write_config <<EOF2
[run]
backoff_base = 0
backoff_cap = 0

[type.broken]
handler = exec
command = $HANDLERS/exit-with 1 "still broken"
timeout = 10
EOF2

run jobrun enqueue --type=broken --key=b:1 --max-attempts=3
is "$(field 1 max_attempts)" 3 "enqueued with max_attempts 3"

run jobrun --max=1
is "$rc" 1 "run 1 exits 1"
is "$(field 1 status)/$(field 1 attempts)" pending/1 "after run 1: pending, attempts 1"
run jobrun --max=1
is "$(field 1 status)/$(field 1 attempts)" pending/2 "after run 2: pending, attempts 2"

t0=$(db_now)
run jobrun --max=1 --json
t1=$(db_now)
is "$rc" 1 "run 3 exits 1"
is "$(jget failed <<<"$out")" 1 "run 3 reports failed 1"
is "$(jget retried <<<"$out")" 0 "and retried 0"
is "$(field 1 status)" failed "after run 3: failed"
is "$(field 1 attempts)" 3 "attempts 3"
like "$(field 1 last_error)" '^exit status 1: .*still broken' "last_error is kept"
is_within "$(field 1 finished_at)" "$t0" "$t1" "finished_at is set, to the time of run 3"
is "$(field 1 'locked_by IS NULL AND locked_until IS NULL')" 1 "the lock is cleared"

run jobrun --json
is "$rc" 0 "a later run exits 0"
is "$(jget claimed <<<"$out")" 0 "and does not claim the failed job"
is "$(field 1 attempts)" 3 "attempts stay 3"

# a job an application inserted with max_attempts = 1
insert_job app:1 broken NULL max_attempts 1
run jobrun --json
is "$rc" 1 "max_attempts 1: the run exits 1"
is "$(field 2 status)" failed "max_attempts 1: failed after the first failure"
is "$(field 2 attempts)" 1 "attempts 1"
is "$(jget claimed <<<"$out")" 1 "claimed once, not again in the same run"
