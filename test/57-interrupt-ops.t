#!/bin/bash
# Operator commands that work in batches stop when asked: a SIGTERM or
# SIGINT stops enqueue --range, purge and retry --failed between two
# batches (one statement each, never cut), the output says what was done
# so far and that it was interrupted, and the exit status is 128+signal.
# A signal that comes while a batch waits for a row lock lets that batch
# finish whole; a second one does not leave the command hanging.  The
# counts printed are checked against the rows really in the table.
. "${0%/*}/lib.sh"

plan 35
setup_db
write_config <<EOF2
[type.w]
handler = noop
EOF2

count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}

# wait_until CMD...: until CMD succeeds, polling, for at most 120 s
wait_until() {
	local i
	for i in $(seq 2400); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

at_least() {	# N [WHERE]: at least N rows
	[ "$(count "${2:-}")" -ge "$1" ]
}

exactly() {	# N [WHERE]: exactly N rows
	[ "$(count "${2:-}")" -eq "$1" ]
}

# start ARG...: jobrun ARG... in the background, output in $T/out and
# $T/err; $bg is the background job, $jpid the jobrun process itself (under
# the subshell and timeout of lib.sh's jobrun), the one an operator's kill
# would name
start() {
	jobrun "$@" >"$T/out" 2>"$T/err" &
	bg=$!
	defer_kill -9 "$bg"
	jpid=
	wait_until find_jobrun || bail_out "jobrun did not start"
	defer_kill -9 "$jpid"
}

find_jobrun() {
	local p=$bg c comm
	while c=$(pgrep -P "$p" | head -n 1) && [ -n "$c" ]; do
		p=$c
	done
	comm=$(cat "/proc/$p/comm" 2>/dev/null) || return 1
	[ "$p" != "$bg" ] && [ "$comm" != timeout ] || return 1
	jpid=$p
}

# delivered: no signal is pending for jobrun any more (the kernel merges a
# second signal with a first one still pending)
delivered() {
	! grep -Eq '^(SigPnd|ShdPnd):.*[1-9a-f]' "/proc/$jpid/status" 2>/dev/null
}

finish() {	# wait for jobrun; sets rc, out, err
	wait "$bg"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}

# hold SQL: another session runs SQL in an open transaction (holding its
# row locks) until release; it takes a named lock last, so the test can
# see when the rows are held
LOCK=$DB.held
hold() {
	rm -f "$T/hold.in"
	mkfifo "$T/hold.in"
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B "$DB" \
	    <"$T/hold.in" >/dev/null 2>"$T/hold.err" &
	holder=$!
	defer_kill -9 "$holder"
	exec 7>"$T/hold.in"
	printf '%s\n' "BEGIN;" "$1" "SELECT GET_LOCK('$LOCK', 0);" >&7
	wait_until held || bail_out "the holder did not take its locks"
}

held() {
	[ "$(sql "SELECT IS_USED_LOCK('$LOCK') IS NOT NULL")" = 1 ]
}

release() {
	printf '%s\n' "ROLLBACK;" >&7
	exec 7>&-
	wait "$holder"
}

# blocked: a statement of jobrun's in this database waits for a row lock
blocked() {
	[ "$(sql "SELECT COUNT(*) FROM information_schema.INNODB_TRX t
	    JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
	    WHERE t.trx_state = 'LOCK WAIT' AND p.DB = '$DB'")" -ge 1 ]
}

# chunks PREFIX N: the chunk jobs of PREFIX are exactly chunks 1..N, each
# with its own payload (no gap, no partial batch, nothing beyond)
chunks() {
	sql "SELECT COUNT(*) = $2
	        AND MIN(CAST(JSON_VALUE(payload, '\$.from') AS UNSIGNED)) = 1
	        AND MAX(CAST(JSON_VALUE(payload, '\$.from') AS UNSIGNED)) = $2
	        AND SUM(business_key = CONCAT('$1:', JSON_VALUE(payload, '\$.from'),
	            '-', JSON_VALUE(payload, '\$.to'))) = $2
	     FROM polling_jobs WHERE business_key LIKE '$1:%'"
}

# --- enqueue --range: SIGTERM once the first batch is in ----------------------

start enqueue --type=w --key-prefix=big --range=1-1000000 --chunk=1
ok "the first batch of 500 is in the table" wait_until at_least 500
kill -TERM "$jpid"
finish
n=$(count)
is "$rc" 143 "enqueue --range stopped by SIGTERM exits 143"
is "$out" "$n chunk jobs: $n created, 0 existed (interrupted)" \
    "it prints the chunks it created, as many as the table holds, and says it was interrupted"
is "$((n % 500))" 0 "whole batches of 500 only ($n rows)"
ok "it stopped long before the end" [ "$n" -lt 1000000 ]
is "$(chunks big "$n")" 1 "the rows are chunks 1..$n, each key matching its payload"
like "$err" "stopped on signal 15 after $n of 1000000 chunks; the same command adds the rest" \
    "stderr says where it stopped and how to go on"
is "$(count "status <> 'pending'")" 0 "every chunk job is pending"

# --- enqueue --range: two SIGINTs while a batch waits for a lock ----------------

sql "DELETE FROM polling_jobs"
# An uncommitted row with the key of chunk 1501: the fourth batch's insert
# waits for it.
hold "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
    updated_at) VALUES ('blk:1501-1501', 'w', NOW(), NOW(), NOW());"
start enqueue --type=w --key-prefix=blk --range=1-1000000 --chunk=1 --json
ok "three batches are in and the fourth waits for the lock" \
    wait_until eval 'exactly 1500 && blocked'
kill -INT "$jpid"
ok "the first SIGINT was taken" wait_until delivered
kill -INT "$jpid"
ok "the second SIGINT was taken" wait_until delivered
ok "jobrun is still waiting for the batch in progress" blocked
release
finish
is "$rc" 130 "after the lock is released, it exits 130 (it did not hang)"
is "$(count)" 2000 "the batch that was waiting was written whole: 2000 rows"
is "$(jpy '[d["chunks"], d["created"], d["existing"], d["complete"], d["interrupted"]]' <<<"$out")" \
    '[1000000, 2000, 0, false, true]' \
    "--json: 2000 created, not complete, interrupted"
is "$(chunks blk 2000)" 1 "the rows are chunks 1..2000"

# Running the same command again adds only what is missing (a small range
# this time, over the same first chunks).
run jobrun enqueue --type=w --key-prefix=blk --range=1-2600 --chunk=1
is "$rc/$out" "0/2600 chunk jobs: 600 created, 2000 existed" \
    "the same fan-out again adds only the missing chunks"

# --- purge: SIGTERM while the third batch waits for a lock ----------------------

sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('old:', seq), 'w', 'success', 1, NOW() - INTERVAL 3 DAY,
        NOW() - INTERVAL 3 DAY, NOW(), NOW() - INTERVAL 2 DAY
     FROM seq_1_to_5500"
# All have the same next_run_at, so the purge goes by id: the 2500th row
# is in the third batch.
third=$(sql "SELECT id FROM polling_jobs ORDER BY id LIMIT 2499, 1")
cut=$(sql "SELECT id FROM polling_jobs ORDER BY id LIMIT 3000, 1")
hold "SELECT id FROM polling_jobs WHERE id = $third FOR UPDATE;"
start purge --status=success --older-than=1d --json
ok "two batches are deleted and the third waits for the lock" \
    wait_until eval 'exactly 3500 && blocked'
kill -TERM "$jpid"
ok "the SIGTERM was taken" wait_until delivered
release
finish
is "$rc" 143 "purge stopped by SIGTERM exits 143"
is "$(count)" 2500 "the third batch was deleted whole, then it stopped: 2500 rows left"
is "$(jpy '[d["count"], d["dry_run"], d["interrupted"]]' <<<"$out")" \
    '[3000, false, true]' "--json: count 3000 (5500 - 2500), interrupted"
is "$(sql "SELECT MIN(id) FROM polling_jobs")" "$cut" \
    "the rows left are the newest 2500: no batch was cut"
like "$err" "purge: stopped on signal 15 between two batches" "stderr says it stopped"

run jobrun purge --status=success --older-than=1d
is "$rc/$out/$(count)" "0/purge: 2500 job(s)/0" "purge again deletes the rest"

# --- purge: SIGINT twice, as text ----------------------------------------------

sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('old2:', seq), 'w', 'failed', 5, NOW() - INTERVAL 3 DAY,
        NOW() - INTERVAL 3 DAY, NOW(), NOW() - INTERVAL 2 DAY
     FROM seq_1_to_2200"
second=$(sql "SELECT id FROM polling_jobs ORDER BY id LIMIT 1500, 1")
hold "SELECT id FROM polling_jobs WHERE id = $second FOR UPDATE;"
start purge --status=failed --older-than=1d
ok "a batch is deleted and the second waits for the lock" \
    wait_until eval 'exactly 1200 && blocked'
kill -INT "$jpid"
wait_until delivered
kill -INT "$jpid"
ok "both SIGINTs were taken" wait_until delivered
release
finish
is "$rc/$out" "130/purge: 2000 job(s) (interrupted)" \
    "two SIGINTs: exit 130 once the batch in progress is done, and the count as text"
is "$(count)" 200 "2000 deleted, 200 left"

# --- retry --failed: SIGTERM while the second batch waits ------------------------

sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at, last_error)
     SELECT CONCAT('f:', seq), 'w', 'failed', 5, NOW() - INTERVAL 1 DAY,
        NOW(), NOW(), NOW(), 'boom'
     FROM seq_1_to_2500"
mid=$(sql "SELECT id FROM polling_jobs ORDER BY id LIMIT 1500, 1")
hold "SELECT id FROM polling_jobs WHERE id = $mid FOR UPDATE;"
start retry --failed
ok "a batch is back and the second waits for the lock" \
    wait_until eval "exactly 1000 \"status = 'pending'\" && blocked"
kill -TERM "$jpid"
ok "the SIGTERM was taken" wait_until delivered
release
finish
is "$rc/$out" "143/retry: 2000 job(s) (interrupted)" \
    "retry --failed stopped by SIGTERM exits 143 and says how many it put back"
is "$(count "status = 'pending' AND attempts = 0")/$(count "status = 'failed'")" \
    2000/500 "2000 put back whole, 500 still failed"
like "$err" "retry: stopped on signal 15 between two batches" "stderr says it stopped"

run jobrun retry --failed --json
is "$rc/$(jpy '[d["count"], d["dry_run"], "interrupted" in d]' <<<"$out")" \
    '0/[500, false, false]' "retry --failed again puts back the other 500, not interrupted"
