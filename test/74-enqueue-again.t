#!/bin/bash
# enqueue --again: a finished job (success or failed) with the key goes
# back to pending, attempts 0, with the new payload and time, in one
# statement; a pending job is left as it is and said so; a running one is
# reported (exit 75) and not touched.  Eight calls at once on a finished
# key make it run once more, not eight times.
. "${0%/*}/lib.sh"

plan 35

setup_db
write_config <<EOF
[type.count]
handler = exec
command = $HANDLERS/append-id $T/ids
[type.fail]
handler = exec
command = $HANDLERS/exit-with 65 nope
EOF
row() {
	sql "SELECT CONCAT_WS(' ', status, attempts, IFNULL(payload, 'NULL'),
	    IFNULL(last_error, 'NULL'), IFNULL(finished_at, 'NULL'))
	    FROM polling_jobs WHERE business_key = '$1'"
}
runs() {
	[ -f "$T/ids" ] && wc -l <"$T/ids" || echo 0
}

# --- no job yet: created as enqueue would ----------------------------------------

run jobrun enqueue --type=count --key=k1 --payload='{"n":1}' --again
is "$rc" 0 "--again without a job exits 0"
is "$out" "job 1 created" "and creates it"
is "$(row k1)" "pending 0 $(json_as_stored '{"n":1}') NULL NULL" "a new pending job"

# --- pending: left as it is ---------------------------------------------------

run jobrun enqueue --type=count --key=k1 --payload='{"n":2}' --again
is "$rc" 0 "--again on a pending job exits 0"
is "$out" "job 1 is pending already, left as it is" "and says so"
is "$(row k1)" "pending 0 $(json_as_stored '{"n":1}') NULL NULL" "its payload is unchanged"

# --- success: re-armed ---------------------------------------------------------

run jobrun -q
is "$(runs)" 1 "the job ran"
# (the payload read on its own: MySQL's form of it has a blank inside,
# which cut would split)
is "$(row k1 | cut -d' ' -f1-2) $(sql "SELECT payload FROM polling_jobs
    WHERE business_key = 'k1'")" "success 1 $(json_as_stored '{"n":1}')" "it succeeded"
t0=$(db_now)
run jobrun enqueue --type=count --key=k1 --payload='{"n":3}' --delay=100 \
    --again
t1=$(db_now)
is "$rc" 0 "--again on a finished job exits 0"
is "$out" "job 1 enqueued again (pending, attempts 0)" "and says so"
is "$(row k1)" "pending 0 $(json_as_stored '{"n":3}') NULL NULL" \
    "pending, attempts 0, the new payload, no finish time"
is "$(sql "SELECT TIMESTAMPDIFF(SECOND, updated_at, next_run_at)
    FROM polling_jobs WHERE business_key = 'k1'")" 100 \
    "due --delay seconds after the re-arm"
is_within "$(sql "SELECT updated_at FROM polling_jobs WHERE business_key = 'k1'")" \
    "$t0" "$t1" "updated_at is the re-arm's time"
is "$(sql "SELECT COUNT(*) FROM polling_jobs")" 1 "still one row for the key"

# --- failed: re-armed, last_error cleared ----------------------------------------

jobrun enqueue --type=fail --key=f1 >/dev/null
run jobrun -q
is "$(row f1 | cut -d' ' -f1-2)" "failed 1" "a job that failed for good"
fid=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'f1'")
run jobrun enqueue --type=fail --key=f1 --payload='[1]' --max-attempts=7 \
    --again --json
is "$rc" 0 "--again on a failed job exits 0"
is "$out" "{\"id\":$fid,\"outcome\":\"rearmed\",\"status\":\"pending\"}" \
    "--json says rearmed"
is "$(row f1)" 'pending 0 [1] NULL NULL' "pending again, last_error cleared"
is "$(sql "SELECT max_attempts FROM polling_jobs WHERE business_key = 'f1'")" \
    7 "--max-attempts applies to the re-armed job"

# --- processing: reported, not touched --------------------------------------------

sql "UPDATE polling_jobs SET status = 'processing', attempts = 1,
    locked_by = 'someone', locked_until = NOW() + INTERVAL 1 HOUR
    WHERE business_key = 'f1'"
before=$(sql "SELECT CONCAT_WS(' ', status, attempts, payload, locked_by,
    locked_until, updated_at) FROM polling_jobs WHERE business_key = 'f1'")
run jobrun enqueue --type=fail --key=f1 --payload='{"x":1}' --again
is "$rc" 75 "--again on a running job exits 75"
is "$out" "job $fid is running (status processing), not touched" "and says so"
is "$(sql "SELECT CONCAT_WS(' ', status, attempts, payload, locked_by,
    locked_until, updated_at) FROM polling_jobs WHERE business_key = 'f1'")" \
    "$before" "the running job's row is unchanged"
run jobrun enqueue --type=fail --key=f1 --again --json
is "$out" "{\"id\":$fid,\"outcome\":\"left\",\"status\":\"processing\"}" \
    "--json says left, with the status"

# another program's status: reported, not touched, exit 1
sql "UPDATE polling_jobs SET status = 'archived' WHERE business_key = 'f1'"
run jobrun enqueue --type=fail --key=f1 --again
is "$rc" 1 "--again on a job of another status exits 1"
is "$out" "job $fid has status archived, not touched" "and names the status"

# --- the checkpoint of an earlier run does not survive a re-arm -------------------

mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/002_checkpoint.sql" || bail_out "cannot apply 002_checkpoint.sql"
sql "UPDATE polling_jobs SET status = 'success', checkpoint = '{\"at\":5}',
    snoozes = 3 WHERE business_key = 'k1'"
run jobrun enqueue --type=count --key=k1 --again
is "$rc" 0 "--again with the checkpoint columns exits 0"
is "$(sql "SELECT CONCAT_WS(' ', status, IFNULL(checkpoint, 'NULL'), snoozes)
    FROM polling_jobs WHERE business_key = 'k1'")" "pending NULL 0" \
    "the re-armed job starts without the old checkpoint"

# --- eight callers at once -----------------------------------------------------

sql "DELETE FROM polling_jobs"
rm -f "$T/ids"
jobrun enqueue --type=count --key=race >/dev/null
run jobrun -q
is "$(runs)" 1 "the race's job ran once"
pids=()
for i in 1 2 3 4 5 6 7 8; do
	jobrun_bg enqueue --type=count --key=race --payload="{\"caller\":$i}" \
	    --again >"$T/again.$i" 2>&1
	pids+=("$bg")
done
st=0
for p in "${pids[@]}"; do
	wait "$p" || st=$?
done
is "$st" 0 "eight --again calls at once all exit 0"
is "$(cat "$T"/again.* | grep -c 'enqueued again')" 1 \
    "exactly one of them re-armed the job"
is "$(cat "$T"/again.* | grep -c 'is pending already, left as it is')" 7 \
    "the seven others found it pending"
run jobrun -q
run jobrun -q
is "$(runs)" 2 "it ran once more, not eight times"
is "$(row race | cut -d' ' -f1-2)" "success 1" "and finished after one attempt"

# --- usage ----------------------------------------------------------------------------

run jobrun enqueue --type=count --key-prefix=p --range=1-2 --chunk=1 --again
is "$rc" 64 "--again with a fan-out is a usage error"
is "$err" "jobrun: --again is for one job (--key), not a fan-out
Try 'jobrun --help'." "and says why"
