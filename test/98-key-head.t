#!/bin/bash
# A busy key at the head of the queue ([type.NAME] concurrency_key): its
# due jobs are passed over, not claimed, and they do not cost every claim
# their rows.  The choice reads on past the job it chose last and starts
# from the head at least once a second (src/flow_key.c, KEY_HEAD_MS), so
# a run that claims the jobs of other keys behind a long backlog of one
# busy key reads that backlog about once a second, not once a claim.  The
# rows are the server's Handler_read_* counters, on a server of the
# file's own (they are global).
. "${0%/*}/lib.sh"

plan 7

use_own_server
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/003_flow.sql" || bail_out "cannot load sql/003_flow.sql"
write_config <<EOF2
[run]
max_seconds = 120

[type.work]
handler = noop
concurrency_key = \$.customer
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
reads() {
	sql "SHOW GLOBAL STATUS LIKE 'Handler_read%'" |
	    awk '{ s += $2 } END { print s }'
}

# Customer hot: 3,000 jobs due an hour ago, and one in processing under
# another runner's live lock (its key is busy for the whole file); behind
# them, one job each of 60 other customers.
backlog=3000 others=60
sql "INSERT INTO polling_jobs (business_key, type, payload, status, attempts,
        next_run_at, locked_by, locked_until, created_at, updated_at)
     VALUES ('hot:running', 'work', '{\"customer\": \"hot\"}', 'processing',
        1, NOW() - INTERVAL 2 HOUR, 'elsewhere:1:000000000000:1@4102444800',
        NOW() + INTERVAL 1 DAY, NOW(), NOW());
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('hot:', seq), 'work', '{\"customer\": \"hot\"}',
        NOW() - INTERVAL 1 HOUR, NOW(), NOW() FROM seq_1_to_$backlog;
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('c', seq), 'work', JSON_OBJECT('customer', CONCAT('c', seq)),
        NOW(), NOW(), NOW() FROM seq_1_to_$others"

r0=$(reads)
show_cost=$(( $(reads) - r0 ))
before=$(reads)
run jobrun --max=$others --json
after=$(reads)
is "$rc/$(jget succeeded <<<"$out")" "0/$others" \
    "the $others jobs of other customers run, behind $backlog of a busy one"
is "$(count "business_key LIKE 'c%' AND status = 'success' AND attempts = 1")" \
    $others "each once"
is "$(count "business_key LIKE 'hot:%' AND status = 'pending' AND attempts = 0")" \
    $backlog "the busy customer's jobs are left pending, no attempt spent"
per_claim=$(( (after - before - show_cost) / others ))
diag "rows read per claim: $per_claim ($((after - before)) Handler_read_* for $others claims)"
ok "a claim reads far fewer rows than the busy backlog ($per_claim < $((backlog / 2)))" \
    test "$per_claim" -lt $((backlog / 2))

# The key is freed (the other runner's job ends): the backlog is claimable
# at once, from the head, one job at a time in (next_run_at, id) order.
sql "UPDATE polling_jobs SET status = 'success', locked_by = NULL,
        locked_until = NULL, finished_at = NOW()
     WHERE business_key = 'hot:running'"
run jobrun --max=5 --json
is "$rc/$(jget succeeded <<<"$out")" "0/5" "the freed customer's jobs run"
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY finished_at, id SEPARATOR ' ')
     FROM polling_jobs WHERE business_key LIKE 'hot:_%' AND status = 'success'
        AND business_key <> 'hot:running'")" "hot:1 hot:2 hot:3 hot:4 hot:5" \
    "in their order"
is "$(count "business_key LIKE 'hot:%' AND status = 'pending'")" \
    $((backlog - 5)) "and no more than the run's budget"
