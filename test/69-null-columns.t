#!/bin/bash
# A NULL or a missing column never crashes a run or burns attempts.  A
# table whose business_key allows NULL, with a NULL row: the job runs (no
# JOB_BUSINESS_KEY), and check calls the nullable column a problem.  A
# table without a column the run needs (payload) or without idx_pick:
# the run exits 78 before it touches any row - no recovery, no claim.
. "${0%/*}/lib.sh"

plan 17

setup_db
write_config <<EOF
[type.dump]
handler = exec
command = $HANDLERS/dump-job $T
EOF
job() { sql "SELECT $2 FROM polling_jobs WHERE business_key <=> $1"; }

# --- a NULL business_key --------------------------------------------------------

sql "ALTER TABLE polling_jobs MODIFY business_key VARCHAR(128) NULL"
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
     created_at, updated_at) VALUES (NULL, 'dump', '{\"n\":1}', NOW(), NOW(),
     NOW())"
id=$(job NULL id)
run jobrun --json
is "$rc" 0 "a job with a NULL key runs: exit 0"
is "$(job NULL "CONCAT(status, '/', attempts)")" success/1 "and succeeds on its first attempt"
is "$(cat "$T/$id.stdin")" "$(json_as_stored '{"n":1}')" "its handler got the payload"
is "$(grep -c '^JOB_BUSINESS_KEY=' "$T/$id.env")" 0 "JOB_BUSINESS_KEY is not set for a NULL key"
is "$(grep -c '^JOB_IDEMPOTENCY_KEY=' "$T/$id.env")" 0 "nor JOB_IDEMPOTENCY_KEY"
is "$(grep '^JOB_ID=' "$T/$id.env")" "JOB_ID=$id" "the other fields are there"
run jobrun check
is "$rc" 78 "check: a nullable business_key is a problem (exit 78)"
like "$out" "problem +column business_key allows NULL: UNIQUE does not stop two jobs with a NULL key" \
    "it says why"
like "$out" "fix: ALTER TABLE \`polling_jobs\` MODIFY business_key VARCHAR\\(128\\) NOT NULL" \
    "and how to fix it"
sql "DELETE FROM polling_jobs; ALTER TABLE polling_jobs MODIFY business_key VARCHAR(128) NOT NULL"

# --- a column or an index the run needs is missing -------------------------------

untouched() {
	sql "SELECT CONCAT(status, '/', attempts, '/', IFNULL(locked_by, '-'))
	     FROM polling_jobs ORDER BY business_key" | tr '\n' ' '
}
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
     updated_at) VALUES ('due', 'dump', NOW(), NOW(), NOW());
     INSERT INTO polling_jobs (business_key, type, status, attempts,
     next_run_at, locked_by, locked_until, created_at, updated_at) VALUES
     ('stuck', 'dump', 'processing', 1, NOW(), 'gone-worker',
      NOW() - INTERVAL 1 HOUR, NOW(), NOW())"
before=$(untouched)
sql "ALTER TABLE polling_jobs DROP COLUMN payload"
run jobrun --json
is "$rc" 78 "a table without payload: the run exits 78"
like "$err" "Unknown column 'payload'" "naming the column"
is "$(untouched)" "$before" "before any row is touched: nothing recovered, nothing claimed"
run jobrun check
like "$out" "problem +table polling_jobs lacks column payload" "check names it too"
sql "ALTER TABLE polling_jobs ADD COLUMN payload JSON NULL AFTER type"

sql "ALTER TABLE polling_jobs DROP KEY idx_pick"
run jobrun --json
is "$rc" 78 "a table without idx_pick: exit 78"
like "$err" "idx_pick" "naming the index"
is "$(untouched)" "$before" "and no row touched"
sql "ALTER TABLE polling_jobs ADD KEY idx_pick (status, next_run_at, id)"
run jobrun --json
is "$(jget recovered <<<"$out")/$(jget succeeded <<<"$out")" 1/2 \
    "with the table mended, the next run recovers and runs both"
