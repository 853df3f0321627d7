#!/bin/bash
# The claim stays cheap as finished rows pile up: with 1,000,000 'success'
# rows in the table, the claim is planned on idx_pick and a job costs a
# handful of row reads (claim, read back, mark), not a scan of the finished
# rows.  Measured with the server's Handler_read_* counters around real
# jobrun runs.  Set JOBRUN_TEST_FINISHED to use another table size.
. "${0%/*}/lib.sh"

finished=${JOBRUN_TEST_FINISHED:-1000000}
plan 9
setup_db
write_config <<EOF2
[type.work]
handler = noop
EOF2

sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('done:', seq), 'work', 'success', 1,
        NOW() - INTERVAL 1 DAY, NOW(), NOW(), NOW()
     FROM seq_1_to_$finished;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('due:', seq), 'work', NOW() - INTERVAL seq SECOND, NOW(),
        NOW()
     FROM seq_1_to_100;
     ANALYZE TABLE polling_jobs PERSISTENT FOR ALL" >/dev/null
is "$(sql "SELECT COUNT(*) FROM polling_jobs")" $((finished + 100)) \
    "$finished finished rows and 100 due ones"

# The statement jobrun prepares (src/queue.c), as EXPLAIN sees it.
plan_row=$(sql "EXPLAIN UPDATE polling_jobs FORCE INDEX (idx_pick)
    SET status = 'processing', locked_by = 'x',
        locked_until = NOW() + INTERVAL 300 SECOND, attempts = attempts + 1,
        updated_at = NOW(), id = LAST_INSERT_ID(id)
    WHERE status = 'pending' AND next_run_at <= NOW() AND type IN ('work')
    ORDER BY next_run_at, id LIMIT 1")
is "$(cut -f6 <<<"$plan_row")" idx_pick "EXPLAIN: the claim uses idx_pick"
unlike "$plan_row" filesort "EXPLAIN: no filesort"

reads() {
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B -e \
	    "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}

# Rows one claim statement reads, in a session of its own (rolled back).
claim_reads() {
	sql "FLUSH STATUS; BEGIN; $1; SHOW SESSION STATUS LIKE 'Handler_read%';
	     ROLLBACK" | awk '{ s += $2 } END { print s }'
}
ours=$(claim_reads "UPDATE polling_jobs FORCE INDEX (idx_pick)
    SET status = 'processing', attempts = attempts + 1
    WHERE status = 'pending' AND next_run_at <= NOW() AND type IN ('work')
    ORDER BY next_run_at, id LIMIT 1")
seeds=$(claim_reads "UPDATE polling_jobs SET status = 'processing'
    WHERE status = 'pending' AND next_run_at <= NOW() ORDER BY id LIMIT 1")
diag "rows read by one claim at $finished finished rows: jobrun's $ours," \
     "seed 000's ORDER BY id claim $seeds"
between "$ours" 1 3 "one claim reads at most 3 rows"

jobs=50
before=$(reads)
run jobrun --max=$jobs --json
after=$(reads)
is "$rc" 0 "the run exits 0"
is "$(jget succeeded <<<"$out")" $jobs "it ran $jobs jobs"
per_job=$(( (after - before) / jobs ))
diag "rows read per job (claim + read + mark) at $finished finished rows: $per_job" \
     "($((after - before)) Handler_read_* for $jobs jobs)"
between "$per_job" 1 10 "a job reads at most 10 rows, not the finished ones"

before=$(reads)
run jobrun --max=1000 --json
after=$(reads)
is "$(jget succeeded <<<"$out")" 50 "the other 50 jobs ran"
before=$(reads)
run jobrun --json
after=$(reads)
between $((after - before)) 0 50 "an empty run reads almost nothing: $((after - before)) rows"
