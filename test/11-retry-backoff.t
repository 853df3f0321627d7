#!/bin/bash
# A failing job goes back to 'pending' with next_run_at pushed out by
# min(cap, base * 2^attempts) seconds of the database's clock: 120 s after the
# first failure with the defaults, 240 s after the second.  backoff_jitter
# = 0 throughout: the seed's formula exactly (test 86 has the jitter).
. "${0%/*}/lib.sh"

plan 26
setup_db
write_config <<EOF2
[run]
backoff_jitter = 0

[type.flaky]
handler = exec
command = $HANDLERS/exit-with 1 "temporary trouble"
timeout = 10
EOF2

# delay ID: the delay the mark set, exactly: next_run_at - updated_at, both
# written by the same statement from the same NOW() (no load can blur it)
delay() {
	sql "SELECT TIMESTAMPDIFF(SECOND, updated_at, next_run_at) FROM polling_jobs WHERE id = $1"
}

insert_job f:1 flaky

run jobrun --json
is "$rc" 1 "a run with a retried job exits 1"
is "$(jget ok <<<"$out")" false "ok is false"
is "$(jget retried <<<"$out")" 1 "retried 1"
is "$(jget succeeded <<<"$out")/$(jget failed <<<"$out")" 0/0 "none succeeded or failed"
is "$(field 1 status)" pending "the job is pending again"
is "$(field 1 attempts)" 1 "attempts 1"
is "$(delay 1)" 120 "next_run_at is the mark's NOW() + 120 s"
like "$(field 1 last_error)" '^exit status 1: .*temporary trouble' \
    "last_error has the exit status and the output"
is "$(field 1 'locked_by IS NULL AND locked_until IS NULL')" 1 "the lock is cleared"
is "$(field 1 'finished_at IS NULL')" 1 "finished_at stays NULL"

run jobrun --json
is "$rc" 0 "the job is not due yet: the next run exits 0"
is "$(jget claimed <<<"$out")" 0 "and claims nothing"
is "$(field 1 attempts)" 1 "attempts still 1"

sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE id = 1"
run jobrun -q
is "$rc" 1 "second failure exits 1"
is "$err" "" "-q keeps stderr quiet"
is "$(field 1 attempts)" 2 "attempts 2"
is "$(delay 1)" 240 "next_run_at is NOW() + 240 s"

sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE id = 1"
run jobrun
is "$(field 1 attempts)" 3 "attempts 3"
is "$(delay 1)" 480 "next_run_at is NOW() + 480 s"
is "$(field 1 status)" pending "still pending (max_attempts 5)"

# base and cap from the config
write_config <<EOF2
[run]
backoff_jitter = 0
backoff_base = 10
backoff_cap = 25

[type.flaky]
handler = exec
command = $HANDLERS/exit-with 1 "temporary trouble"
timeout = 10
EOF2
insert_job f:2 flaky
run jobrun
is "$(field 2 attempts)" 1 "job 2: attempts 1"
is "$(delay 2)" 20 "backoff_base=10: next_run_at is NOW() + 20 s"
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE id = 2"
run jobrun
is "$(field 2 attempts)" 2 "job 2: attempts 2"
is "$(delay 2)" 25 "backoff_cap=25 caps the delay (not 40 s)"

# the exponent stops at 6: base * 64
sql "UPDATE polling_jobs SET next_run_at = NOW(), attempts = 9 WHERE id = 2"
write_config <<EOF2
[run]
backoff_jitter = 0
backoff_base = 1
backoff_cap = 3600

[type.flaky]
handler = exec
command = $HANDLERS/exit-with 1 "temporary trouble"
timeout = 10
EOF2
sql "UPDATE polling_jobs SET max_attempts = 20 WHERE id = 2"
run jobrun
is "$(field 2 attempts)" 10 "job 2: attempts 10"
is "$(delay 2)" 64 "the exponent is capped at 6 (1 * 2^6 = 64 s)"
