#!/bin/bash
# Four runners at once over 2000 jobs: every job runs exactly once.
. "${0%/*}/lib.sh"

plan 10
setup_db
write_config <<EOF2
[run]
batch_size = 2000
max_seconds = 120
lock_seconds = 120

[type.bulk]
handler = exec
command = $HANDLERS/append-id $T/ids
timeout = 30
EOF2

sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
     SELECT CONCAT('bulk:', seq), 'bulk', JSON_OBJECT('n', seq), NOW(), NOW(), NOW()
       FROM seq_1_to_2000"
is "$(sql 'SELECT COUNT(*) FROM polling_jobs')" 2000 "2000 jobs inserted"

: >"$T/ids"
pids=()
for r in 1 2 3 4; do
	jobrun --json >"$T/out.$r" 2>"$T/err.$r" &
	pids+=($!)
done
rcs=
for p in "${pids[@]}"; do
	wait "$p"
	rcs="$rcs$?"
done
is "$rcs" 0000 "all four runners exit 0"
total=0 worked=0
for r in 1 2 3 4; do
	c=$(jget claimed <"$T/out.$r")
	c=${c//[!0-9]/0}
	total=$((total + c))
	[ "$c" -gt 0 ] && worked=$((worked + 1))
done
diag "jobs claimed by each runner: $(cat "$T"/out.* | sed 's/.*"claimed":\([0-9]*\).*/\1/' | tr '\n' ' ')"
is "$total" 2000 "the runners claimed 2000 jobs between them"
ok "more than one runner claimed jobs ($worked of 4)" test "$worked" -ge 2
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 2000 \
    "all 2000 jobs are success"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE attempts <> 1")" 0 \
    "every job has attempts 1"
is "$(wc -l <"$T/ids")" 2000 "the handlers ran 2000 times"
is "$(sort -u "$T/ids" | wc -l)" 2000 "with 2000 different job ids"
sql 'SELECT id FROM polling_jobs ORDER BY id' >"$T/table-ids"
ok "the ids run are the ids in the table" cmp -s "$T/table-ids" <(sort -n "$T/ids")
is "$(cat "$T"/err.*)" "" "no runner complained"
