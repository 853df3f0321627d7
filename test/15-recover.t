#!/bin/bash
# Recovery: a 'processing' row whose lock expired (its runner died) goes back
# to 'pending', or to 'failed' when it has used all its attempts (a job that
# kills its runner every time must not loop forever); at most recover_limit
# rows per run; live locks are left alone.
. "${0%/*}/lib.sh"

plan 26
setup_db
write_config <<EOF2
[type.live]
handler = noop
EOF2

# stranded ATTEMPTS MAX_ATTEMPTS LOCKED_BY LOCK_OFFSET_SECONDS [TYPE]:
# a processing row as a runner leaves it behind
n=0
stranded() {
	n=$((n + 1))
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	    max_attempts, next_run_at, locked_by, locked_until, created_at, updated_at)
	    VALUES ('s:$n', '${5:-stranded}', 'processing', $1, $2,
	    NOW() - INTERVAL 1 HOUR, '$3', NOW() + INTERVAL $4 SECOND,
	    NOW() - INTERVAL 1 HOUR, NOW() - INTERVAL 1 HOUR)"
}

# jobs of type 'stranded' have no [type.stranded]: nothing claims them after
# recovery, so their recovered state can be seen
stranded 1 5 dead-runner-1 -10		# 1: expired -> pending
stranded 5 5 dead-runner-2 -10		# 2: expired, attempts used up -> failed
stranded 1 5 live-runner 300		# 3: lock still valid -> untouched
stranded 1 5 dead-runner-4 -10 live	# 4: expired, configured -> pending, then run

run jobrun --json
is "$(jget recovered <<<"$out")" 3 "three expired locks recovered"
is "$(jget claimed <<<"$out")" 1 "the recovered job of a configured type is claimed"

is "$(field 1 status)" pending "expired lock: back to pending"
is "$(field 1 attempts)" 1 "attempts unchanged"
is "$(field 1 last_error)" "lock expired: runner dead-runner-1 did not finish attempt 1 of 5" \
    "last_error names the runner that stopped"
is "$(field 1 'locked_by IS NULL AND locked_until IS NULL')" 1 "the lock is cleared"

is "$(field 2 status)" failed "poison job (attempts = max_attempts): failed"
is "$(field 2 attempts)" 5 "attempts stay 5"
is "$(field 2 last_error)" "lock expired: runner dead-runner-2 did not finish attempt 5 of 5; no attempts left" \
    "last_error names the runner that stopped"
is "$(field 2 'locked_by IS NULL AND locked_until IS NULL')" 1 "its lock is cleared"
is "$(field 2 'finished_at IS NOT NULL')" 1 "finished_at is set"

is "$(field 3 status)/$(field 3 locked_by)" processing/live-runner \
    "a lock that has not expired is left alone"

is "$(field 4 status)/$(field 4 attempts)" success/2 \
    "recovered job of a configured type: run in the same cycle (attempt 2)"

run jobrun --json
is "$(jget recovered <<<"$out")" 0 "a second run recovers nothing"
is "$(field 3 status)" processing "the live lock is still held"

# recover_limit
sql "DELETE FROM polling_jobs"
for i in 1 2 3 4 5; do
	stranded 1 5 "dead-$i" -10
done
expired="SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'"

write_config <<EOF2
[run]
recover_limit = 0

[type.live]
handler = noop
EOF2
run jobrun --json
is "$(jget recovered <<<"$out")" 0 "recover_limit = 0: nothing recovered"
is "$(sql "$expired")" 5 "all 5 still processing"

write_config <<EOF2
[run]
recover_limit = 2

[type.live]
handler = noop
EOF2
run jobrun --json
is "$(jget recovered <<<"$out")" 2 "recover_limit = 2: run 1 recovers 2"
is "$(sql "$expired")" 3 "3 still processing"
run jobrun --json
is "$(jget recovered <<<"$out")" 2 "run 2 recovers 2"
run jobrun --json
is "$(jget recovered <<<"$out")" 1 "run 3 recovers the last one"
is "$(sql "$expired")" 0 "none left processing"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'pending' AND attempts = 1")" 5 \
    "all 5 pending, attempts unchanged"
run jobrun --json
is "$(jget recovered <<<"$out")" 0 "run 4 recovers nothing"
is "$rc" 0 "and exits 0"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'pending'")" 5 \
    "unconfigured types stay pending"
