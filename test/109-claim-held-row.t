#!/bin/bash
# A claim waits for a row another transaction holds one second at most
# (jobrun(7), "The claim"), then asks by a plain read, which waits for no
# lock, whether a job is due at all.  With nothing due, InnoDB's UPDATE
# reads the first row past the due range to see that the range ended:
# held by an operator's forgotten SELECT ... FOR UPDATE, that row kept
# every run that found nothing waiting innodb_lock_wait_timeout (50 s),
# ten times over, far past its --max-seconds.  A due job's row held: the
# claims go past it, in priority order too (its level's jobs behind it,
# then the levels below), and come back to it a second later.  MySQL has
# no lock wait for one statement, and its claim waits the session's,
# once: there, on a server of the file's own, that is 2 s.
. "${0%/*}/lib.sh"

plan 18
wait_ms=1000
if on_mysql; then
	use_own_server
	wait_ms=2000
fi
setup_db
write_config <<EOF2
[type.ok]
handler = noop
EOF2


if on_mysql; then
	sql "SET GLOBAL innodb_lock_wait_timeout = 2"
else
	[ "$(sql "SELECT @@GLOBAL.innodb_lock_wait_timeout")" = 50 ] ||
	    bail_out "fixture: the server's lock wait is not 50 s"
fi
base=$(baseline_ms --json)
insert_old_success old ok

# --- nothing due, the row past the due range held ---
other_start
other_send "BEGIN; SELECT 'held' FROM polling_jobs WHERE business_key = 'old' FOR UPDATE;"
wait_for 10 file_has "$T/other.out" '^held$' ||
    bail_out "the other session did not lock the old row"
timed_run --json --max-seconds=30
is "$rc/$(jget claimed <<<"$out")/$err" "0/0/" \
    "a run with nothing due beside a held finished row exits 0, silently"
took_between_ms "$ms" $((wait_ms - 100)) $((wait_ms + base + 3000)) \
    "after one wait for the row (${wait_ms} ms), not ten of innodb_lock_wait_timeout"

# the same with a job to do: it is done, and the run ends as soon
insert_job p1 ok
timed_run --json --max-seconds=30
is "$rc/$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" "0/1/1" \
    "a due job beside the held row is claimed and done"
took_between_ms "$ms" $((wait_ms - 100)) $((wait_ms + base + 3000)) \
    "and the run's last claim waits as long too"
other_send "ROLLBACK;"

# --- a due job's own row held: the jobs behind it done, no attempt
# spent on it, the budget kept ---
insert_job p2 ok
sql "UPDATE polling_jobs SET next_run_at = NOW() - INTERVAL 1 MINUTE
     WHERE business_key = 'p2'"
for k in b1 b2 b3; do insert_job "$k" ok; done
other_send "BEGIN; SELECT 'held p2' FROM polling_jobs WHERE business_key = 'p2' FOR UPDATE;"
wait_for 10 file_has "$T/other.out" '^held p2$' ||
    bail_out "the other session did not lock p2"
timed_run --json --max-seconds=3
is "$rc" 75 "a run whose due job stays held past its --max-seconds exits 75"
like "$err" 'claim a job in `polling_jobs`: a due job.s row is held by another transaction' \
    "and says a due job's row is held"
took_between_ms "$ms" 2900 $((3000 + wait_ms + base + 3000)) \
    "at its --max-seconds, with at most one wait more"
job_is p2 "status = 'pending' AND attempts = 0" &&
    pass "the held job is pending, no attempt spent" ||
    fail "the held job is pending, no attempt spent"
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY business_key)
    FROM polling_jobs WHERE business_key LIKE 'b_' AND status = 'success'")" \
    b1,b2,b3 "the jobs due after it are done meanwhile"

# --jobs: the slots' claims, each their own statement or one
# transaction, keep what they took before the held row; none is left
# processing, counted by no one
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('g', seq), 'ok', NOW(), NOW(), NOW() FROM seq_1_to_40"
timed_run --json --jobs=4 --max=100 --max-seconds=3
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" 40/40 \
    "--jobs=4: the 40 jobs behind the held one done"
is "$(sql "SELECT CONCAT(status, ' ', COUNT(*)) FROM polling_jobs
    WHERE business_key LIKE 'g%' OR business_key = 'p2' GROUP BY status
    ORDER BY status")" "pending 1
success 40" "only the held job is left, pending; none processing"
other_send "ROLLBACK;"
timed_run --json
is "$rc/$(jget succeeded <<<"$out")" "0/1" "once free, the next run does it"

# --- a job inserted in a transaction not yet committed ---
other_send "BEGIN; INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at) VALUES ('p3', 'ok', NOW(), NOW(), NOW()); SELECT 'inserted';"
wait_for 10 file_has "$T/other.out" '^inserted$' ||
    bail_out "the other session did not insert p3"
timed_run --json --max-seconds=30
is "$rc/$(jget claimed <<<"$out")" "0/0" \
    "a job not yet committed is not due: the run ends, claiming nothing"
other_send "COMMIT;"
other_end
timed_run --json
is "$rc/$(jget succeeded <<<"$out")" "0/1" "committed, the next run does it"
job_is p3 "status = 'success'" && pass "p3 is done" || fail "p3 is done"

# --- claims in priority order (sql/013_priority.sql): the held job at
# the head of the top level; the jobs behind it at its level, and the
# levels below, done meanwhile ---
sql "$(grep -v '^--' "$TOP/sql/013_priority.sql")" ||
    bail_out "cannot load sql/013_priority.sql"
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     VALUES ('h', 'ok', 5, NOW() - INTERVAL 1 MINUTE, NOW(), NOW()),
       ('a1', 'ok', 5, NOW(), NOW(), NOW()),
       ('a2', 'ok', 5, NOW(), NOW(), NOW()),
       ('z1', 'ok', 0, NOW(), NOW(), NOW()),
       ('z2', 'ok', 0, NOW(), NOW(), NOW())" ||
    bail_out "cannot add the prioritised jobs"
other_start
other_send "BEGIN; SELECT 'held h' FROM polling_jobs WHERE business_key = 'h' FOR UPDATE;"
wait_for 10 file_has "$T/other.out" '^held h$' ||
    bail_out "the other session did not lock h"
timed_run --json --max-seconds=3
is "$rc" 75 "in priority order: a run whose top job stays held exits 75 at its --max-seconds"
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY id) FROM polling_jobs
    WHERE status = 'success'")" a1,a2,z1,z2 \
    "the jobs behind it at its level, and the level below, done meanwhile"
job_is h "status = 'pending' AND attempts = 0" &&
    pass "the held job is pending, no attempt spent" ||
    fail "the held job is pending, no attempt spent"
other_send "ROLLBACK;"
other_end
