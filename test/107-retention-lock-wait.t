#!/bin/bash
# Retention does not hold a run's claims up behind a row lock.  With an
# old finished row locked by another session (a stalled runner, an
# application's long transaction), retention's DELETE or archive read
# waits at most 5 s (retention's own lock wait, jobrun.conf(5)
# keep_success), and never more than half the run's time budget left; the
# lock wait ends retention for this run with a warning, the run claims
# and finishes its due job, and the session's lock wait is put back for
# the claims.  Without that the run waited innodb_lock_wait_timeout (50 s)
# for each of the statement runner's tries, and claimed nothing.
. "${0%/*}/lib.sh"

plan 13
setup_db
sql "$(grep -v '^--' "$TOP/sql/012_archive.sql")" ||
    bail_out "cannot load sql/012_archive.sql"
write_config <<EOF2
[run]
keep_success = 7d

[type.ok]
handler = noop
EOF2

# an empty run, before the old row is there
base=$(baseline_ms --json)
insert_old_success old ok
[ "$(sql "SELECT @@GLOBAL.innodb_lock_wait_timeout")" = 50 ] ||
    bail_out "fixture: the server's lock wait is not 50 s"
other_start
other_send "BEGIN; SELECT 'held' FROM polling_jobs WHERE business_key = 'old' FOR UPDATE;"
wait_for 10 file_has "$T/other.out" '^held$' ||
    bail_out "the other session did not lock the old row"

# The runs take one job (--max=1): a run's last claim, which finds
# nothing due, meets the held row too, past the due range, for a second
# on MariaDB and innodb_lock_wait_timeout on MySQL (test/109), which is
# the claim's matter, not retention's.
WARN_DELETE='level=warn msg="retention: purge jobs in `polling_jobs`: execute: Lock wait timeout exceeded; try restarting transaction; finished jobs are kept until it works"'
WARN_ARCHIVE='level=warn msg="retention: pick jobs to archive in `polling_jobs`: execute: Lock wait timeout exceeded; try restarting transaction; finished jobs are kept until it works"'

# --- deleting: one wait of 5 s, then the claims ---
insert_job p1 ok
timed_run --json --max=1
is "$rc/$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" "0/1/1" \
    "a run whose retention meets a held row exits 0 and claims and finishes its due job"
job_is p1 "status = 'success'" && pass "the job is done" ||
    fail "the job is done"
took_between_ms "$ms" 4500 $((5000 + base + 3000)) \
    "after one wait of retention's 5 s for the row, not innodb_lock_wait_timeout's 50 s again and again"
is "${err#ts=* }" "$WARN_DELETE" "and warns that retention met the lock"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key = 'old'")" 1 \
    "the locked row stays"

# --- archiving: the same, within a short --max-seconds ---
sed -i 's/^keep_success = 7d$/keep_success = 7d\narchive_table = polling_jobs_archive/' "$CONF"
insert_job p2 ok
timed_run --json --max=1 --max-seconds=5
is "$rc/$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" "0/1/1" \
    "with archive_table and --max-seconds=5, the run claims and finishes its job too"
took_between_ms "$ms" 1500 $((2000 + base + 3000)) \
    "after waiting half its budget left (2 s), well within its 5 s"
is "${err#ts=* }" "$WARN_ARCHIVE" "and warns that retention met the lock"
is "$(sql "SELECT COUNT(*) FROM polling_jobs_archive")" 0 \
    "nothing is archived"

# --- a budget too short to wait: retention skipped, the job done ---
insert_job p3 ok
timed_run --json --max=1 --max-seconds=1 -v
is "$rc/$(jget succeeded <<<"$out")" "0/1" \
    "with --max-seconds=1, the run finishes its job"
like "$err" 'retention: skipped, the run.s time budget is nearly spent' \
    "and says it skipped retention rather than wait past its budget"

# --- the lock gone, the next run archives the row ---
other_send "ROLLBACK;"
other_end
timed_run --json
is "$rc/$(jget deleted <<<"$out")/$err" "0/1/" \
    "once the row is free, the next run moves it, silently"
is "$(sql "SELECT business_key FROM polling_jobs_archive")" old \
    "into the archive"
