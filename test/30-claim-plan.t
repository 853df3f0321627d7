#!/bin/bash
# The claim stays cheap as finished rows pile up: with 1,000,000 'success'
# rows in the table, the claim is planned on idx_pick (as `jobrun check`
# reports the statement the runner prepares) and a job costs a handful of
# row reads (claim, read back, mark), not a scan of the finished rows: the
# server's Handler_read_* counters around real jobrun runs, on a server of
# the file's own.  Set JOBRUN_TEST_FINISHED to use another table size.
. "${0%/*}/lib.sh"

finished=${JOBRUN_TEST_FINISHED:-1000000}
plan 11
# Its own server: the Handler_read_* counters are global, and another test
# file's statements would count in them.
use_own_server
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

# The claim as jobrun itself plans it: check EXPLAINs the very statement
# the runner prepares (src/queue.c), so a change there shows here.
run jobrun check --json
claim=$(jpy '[c["message"] for c in d["checks"] if c["message"].startswith("claim of all types")]' <<<"$out")
like "$claim" '^\["claim of all types uses idx_pick, ~[0-9]+ row\(s\) to read"\]$' \
    "check --json: the claim of all types is planned on idx_pick"
rows=$(sed -n 's/.*~\([0-9]*\) row.*/\1/p' <<<"$claim")
diag "check's plan at $finished finished rows: ~$rows row(s) to read"
between "$rows" 1 100 "and reads the 100 due rows at most, not the $finished finished ones"

reads() {
	sql "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}

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
between $((after - before)) 0 50 "an empty run reads at most 50 rows: $((after - before))"

# --jobs=16: the claims past the cursor go in one bulk execution and the
# jobs they took are read back by token from idx_pick's 'processing'
# range past the cursor: still a handful of rows per job beside the
# finished ones, and fewer statements than jobs (a claim statement per
# job, the rest aside, would be one per job).
questions() {
	sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2
}
jobs=480
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('many:', seq), 'work', NOW(), NOW(), NOW()
     FROM seq_1_to_$jobs"
before=$(reads) q0=$(questions)
run jobrun --jobs=16 --max=1000 --json
after=$(reads) q1=$(questions)
is "$rc/$(jget succeeded <<<"$out")" "0/$jobs" "--jobs=16 ran the $jobs jobs"
per_job=$(( (after - before) / jobs ))
diag "--jobs=16: $per_job rows read and $(( (q1 - q0) * 100 / jobs ))/100 statements per job"
between "$per_job" 1 10 "--jobs=16: a job reads at most 10 rows, not the finished ones"
ok "--jobs=16: fewer statements than jobs ($((q1 - q0)) for $jobs)" \
    test $((q1 - q0)) -lt "$jobs"
