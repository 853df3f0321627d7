#!/bin/bash
# Types match byte for byte.  The type column compares under a case- and
# accent-insensitive collation with trailing blanks ignored, so a runner
# for order_sync must not claim ORDER_SYNC, 'order_sync ' or ordér_sync:
# those stay pending and untouched, status and the metrics count them as
# types of their own (unhandled), and list --type shows only the exact
# type.  The claim still goes through idx_type_pick and reads a handful of
# rows, not the 5000 due jobs of another type in front of it (measured
# with Handler_read_* on a server of this file's own).
. "${0%/*}/lib.sh"

plan 18

use_own_server
setup_db
sql "$(grep -v '^--' "$TOP/sql/001_type_pick.sql")"
write_config <<EOF
[type.order_sync]
handler = exec
command = $HANDLERS/append-id $T/ran
EOF
: >"$T/ran"

# 5000 due jobs of a type nobody runs, oldest of all; then the three odd
# spellings; then the real ones.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('bulk:', seq), 'bulk', NOW() - INTERVAL 1 DAY, NOW(), NOW()
     FROM seq_1_to_5000;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at) VALUES
     ('odd:upper', 'ORDER_SYNC', NOW() - INTERVAL 2 HOUR, NOW(), NOW()),
     ('odd:blank', 'order_sync ', NOW() - INTERVAL 2 HOUR, NOW(), NOW()),
     ('odd:accent', 'ordér_sync', NOW() - INTERVAL 2 HOUR, NOW(), NOW()),
     ('real:1', 'order_sync', NOW() - INTERVAL 1 HOUR, NOW(), NOW()),
     ('real:2', 'order_sync', NOW() - INTERVAL 1 HOUR, NOW(), NOW());
     ANALYZE TABLE polling_jobs PERSISTENT FOR ALL" >/dev/null
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'order_sync'")" 5 \
    "the server's collation takes all five as order_sync"

reads() {
	sql "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}
odd_state() {
	sql "SELECT CONCAT(status, '/', attempts, '/', IFNULL(locked_by, '-'),
	    '/', IFNULL(last_error, '-')) FROM polling_jobs
	    WHERE business_key LIKE 'odd:%' ORDER BY business_key" | tr '\n' ' '
}

run jobrun --json
is "$rc" 0 "the run exits 0"
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" 2/2 \
    "it claims and runs the two order_sync jobs only"
is "$(sort -n "$T/ran" | tr '\n' ' ')" \
    "$(sql "SELECT id FROM polling_jobs WHERE business_key LIKE 'real:%' ORDER BY id" | tr '\n' ' ')" \
    "the handler ran for exactly those"
is "$(odd_state)" "pending/0/-/- pending/0/-/- pending/0/-/- " \
    "ORDER_SYNC, 'order_sync ' and ordér_sync stay pending and untouched"

# One more job, claimed alone: the rows its run reads, less those of a run
# that finds nothing due.
run jobrun --json
empty_before=$(reads)
run jobrun --json
empty=$(( $(reads) - empty_before ))
is "$(jget claimed <<<"$out")" 0 "with only the odd spellings left, nothing is claimed"
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
     updated_at) VALUES ('real:3', 'order_sync', NOW(), NOW(), NOW())"
before=$(reads)
run jobrun --json
one=$(( $(reads) - before - empty ))
is "$(jget succeeded <<<"$out")" 1 "the new job runs"
diag "rows read for one job (claim, read, mark) past 3 odd spellings and" \
     "5000 due jobs of another type: $one"
# A handful: the claim past the cursor and the one from the head (the run's
# second claim, which finds nothing), each a few rows; a few more index
# entries InnoDB's purge has not yet removed (7 to 11 here, 20 at most).
between "$one" 1 20 "the claim reads a handful of rows through the index, not 5000"
run jobrun check --json
like "$out" '"claim (of all types|--type=order_sync) uses idx_type_pick' \
    "check: the claim is planned on idx_type_pick"

# status and the metrics see four types where the collation sees one.
run jobrun status --json
row() {
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = [t for t in d["types"] if t["type"] == sys.argv[2]]
print(json.dumps(r[0][sys.argv[3]]) if r else "MISSING")' "$out" "$1" "$2"
}
is "$(row order_sync pending)/$(row order_sync handler)" '0/"exec"' \
    "status: order_sync has nothing pending, handler exec"
is "$(row ORDER_SYNC pending)/$(row ORDER_SYNC handler)" 1/null \
    "status: ORDER_SYNC is a type of its own, without a handler"
is "$(row 'order_sync ' pending)/$(row 'ordér_sync' pending)" 1/1 \
    "status: 'order_sync ' and ordér_sync too"
is "$(jpy "','.join(sorted(d['unhandled']))" <<<"$out")" \
    "ORDER_SYNC,bulk,order_sync ,ordér_sync" "all of them listed as unhandled"

run jobrun --metrics-file="$T/metrics.prom"
is "$(grep -F 'jobrun_queue_pending{type="ORDER_SYNC"}' "$T/metrics.prom")" \
    'jobrun_queue_pending{type="ORDER_SYNC"} 1' \
    "metrics: ORDER_SYNC pending 1, apart from order_sync"
is "$(grep -F 'jobrun_queue_pending{type="order_sync"}' "$T/metrics.prom")" \
    'jobrun_queue_pending{type="order_sync"} 0' "metrics: order_sync pending 0"

run jobrun list --type=order_sync --json
is "$(jpy "','.join(sorted(j['business_key'] for j in d['jobs']))" <<<"$out")" \
    "real:1,real:2,real:3" "list --type=order_sync lists only order_sync"
run jobrun show --key=ODD:UPPER
is "$rc" 1 "show --key matches the key byte for byte too"
run jobrun --type=ORDER_SYNC
is "$rc" 78 "--type=ORDER_SYNC is not the configured order_sync: exit 78"
