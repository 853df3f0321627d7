#!/bin/bash
# enqueue --range ... --then=TYPE: once every chunk has finished, one job
# of TYPE, keyed PREFIX:then, with the counts of chunks that succeeded and
# failed.  2000 chunks (600 under ASan, 200 under valgrind) drained by
# four runners of two handlers each (--jobs=2), one chunk in ten failing
# for good: exactly one callback, with the right counts, enqueued by the
# runner that finished the last chunk.
# Two runners finishing the last two chunks at the same moment: one
# callback.  A runner SIGKILLed between a chunk's mark and the fan-in's
# count (the chunk's row finished, nothing counted): the next run's sweep
# fires it.  Runners SIGKILLed at random while they drain: one callback, the
# right counts.
. "${0%/*}/lib.sh"

plan 58

chunks=2000
chaos=300
case $JOBRUN in
*/asan/*) chunks=600 chaos=150 ;;
esac
if under_valgrind; then
	chunks=200 chaos=60
fi

setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/006_fan_in.sql" || bail_out "cannot load sql/006"
write_config <<EOF
[run]
lock_seconds = 3
batch_size = 100000
max_seconds = 120
backoff_base = 0
backoff_cap = 0

[type.slice]
handler = exec
command = $HANDLERS/fail-tens $T/slices

[type.report]
handler = exec
command = $HANDLERS/append-id $T/reports
EOF
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
# payload KEY: the job's payload
payload() {
	sql "SELECT payload FROM polling_jobs WHERE business_key = '$1'"
}
# as_stored JSON: the text JSON as the payload column keeps it: on MariaDB
# (LONGTEXT) as written; MySQL's JSON type keeps its own form (keys by
# length, then bytes), which the server itself gives for the same document
as_stored() {
	if on_mysql; then
		sql "SELECT CAST('$1' AS JSON)"
		return
	fi
	printf '%s' "$1"
}
# MySQL names the ON clause of an unknown column 'on clause', MariaDB 'ON'
on_clause=ON
if on_mysql; then
	on_clause='on clause'
fi
lines() {
	[ -f "$1" ] && wc -l <"$1" || echo 0
}

run jobrun check
like "$out" "
ok +fan-in is on \\(tables jobrun_fan_ins, jobrun_fan_in_jobs\\), 0 open" \
    "check says fan-in is on"

# --- four runners drain the chunks ----------------------------------------------

run jobrun enqueue --type=slice --key-prefix=big --range=1-$chunks --chunk=1 \
    --then=report
is "$rc" 0 "a fan-out with --then exits 0"
is "$out" "$chunks chunk jobs: $chunks created, 0 existed
then: a job of type report, key big:then, once every chunk has finished" \
    "it says what will follow"
is "$(sql "SELECT CONCAT_WS(' ', then_type, then_key, total, succeeded,
    failed, IFNULL(fired_at, 'open')) FROM jobrun_fan_ins")" \
    "report big:then $chunks 0 0 open" "the fan-in is open, nothing counted"
is "$(count "business_key = 'big:then'")" 0 "no callback before the chunks ran"
sql "RENAME TABLE jobrun_fan_in_jobs TO gone"
run jobrun enqueue --type=slice --key-prefix=nope --range=1-2 --chunk=1 \
    --then=report
sql "RENAME TABLE gone TO jobrun_fan_in_jobs"
is "$rc:$(count "business_key LIKE 'nope:%'")" "78:0" \
    "--then without sql/005's tables exits 78 and enqueues nothing"
like "$err" "^jobrun: enqueue --then needs the fan-in tables: \`$DB\`\\.\`jobrun_fan_ins\` and \`$DB\`\\.\`jobrun_fan_in_jobs\` are not both there; apply sql/006_fan_in\\.sql " \
    "and names the migration"
# A table that lacks a column: the statement that names it cannot be
# prepared, and the message says which statement on which tables.
sql "ALTER TABLE jobrun_fan_in_jobs RENAME COLUMN fan_in_id TO fan_in"
run jobrun -q
sql "ALTER TABLE jobrun_fan_in_jobs RENAME COLUMN fan_in TO fan_in_id"
is "$rc/$err" "78/jobrun: check the fan-in tables in jobrun_fan_in_jobs and jobrun_fan_ins: prepare: Unknown column 'm.fan_in_id' in '$on_clause' (see sql/schema.sql and [database] in $CONF; jobrun check tells more)" \
    "a fan-in table without a column: a run exits 78 naming the statement and its tables"

t0=$(date +%s)
pids=()
for r in 1 2 3 4; do
	jobrun_bg -q --jobs=2 >"$T/out.$r" 2>"$T/err.$r"
	pids+=("$bg")
done
sts=()
for p in "${pids[@]}"; do
	wait "$p"
	sts+=("$?")
done
is "$(printf '%s\n' "${sts[@]}" | grep -cv '^[01]$')" 0 \
    "each of the four runners exits 0 or 1 (a chunk it ran failed): ${sts[*]}"
diag "4 runners of --jobs=2 drained $chunks chunks in $(( $(date +%s) - t0 )) s"
is "$(count "type = 'slice' AND status IN ('pending', 'processing')")" 0 \
    "the four runners drained every chunk"
is "$(count "type = 'slice' AND status = 'failed'")" $((chunks / 10)) \
    "one chunk in ten failed for good"
is "$(count "type = 'report'")" 1 \
    "exactly one callback, enqueued by the runner that finished the last chunk"
is "$(payload big:then)" \
    "$(as_stored "{\"key_prefix\": \"big\", \"total\": $chunks, \"succeeded\": $((chunks - chunks / 10)), \"failed\": $((chunks / 10))}")" \
    "its payload has the counts of chunks that succeeded and failed"
run jobrun -q
run jobrun -q
is "$(lines "$T/reports")" 1 "the callback ran once"
is "$(count "business_key = 'big:then' AND status = 'success'")" 1 \
    "and succeeded"
is "$(sql "SELECT CONCAT_WS(' ', succeeded, failed, fired_at IS NOT NULL)
    FROM jobrun_fan_ins WHERE then_key = 'big:then'")" \
    "$((chunks - chunks / 10)) $((chunks / 10)) 1" "the fan-in is fired, with its counts"
# -q leaves a line per job that failed for good, the chunks meant to
is "$(cat "$T"/err.* | grep -vc ' type=slice .* outcome=failed ')" 0 \
    "no runner complained of anything but the chunks that failed for good"
is "$(cat "$T"/err.* | grep -c ' type=slice .* outcome=failed ')" $((chunks / 10)) \
    "a line for each of those (-q)"

# the same fan-out again: nothing new, no second callback
run jobrun enqueue --type=slice --key-prefix=big --range=1-$chunks --chunk=1 \
    --then=report
is "$out" "$chunks chunk jobs: 0 created, $chunks existed
then: a job of type report, key big:then, enqueued already: every chunk had finished" \
    "the same command again creates nothing"
run jobrun -q
is "$(count "type = 'report'")" 1 "and no second callback"

# --- the last two chunks finished at the same moment ----------------------------------

write_config <<EOF
[run]
lock_seconds = 30
[type.pair]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
[type.report]
handler = exec
command = $HANDLERS/append-id $T/pair-reports
EOF
jobrun enqueue --type=pair --key-prefix=pair --range=1-2 --chunk=1 \
    --then=report >/dev/null
jobrun_bg -q --max=1 >/dev/null 2>&1
b1=$bg
jobrun_bg -q --max=1 >/dev/null 2>&1
b2=$bg
pair_held() {
	[ "$(count "type = 'pair' AND status = 'processing'")" = 2 ]
}
wait_for 30 pair_held
is "$(count "type = 'pair' AND status = 'processing'")" 2 \
    "two runners hold the two chunks"
: >"$T/go"
wait "$b1"
wait "$b2"
is "$(count "business_key = 'pair:then'")" 1 \
    "the two finishing at once enqueued one callback"
is "$(payload pair:then)" \
    "$(as_stored '{"key_prefix": "pair", "total": 2, "succeeded": 2, "failed": 0}')" \
    "with both chunks counted"
run jobrun -q
is "$(lines "$T/pair-reports")" 1 "the pair's callback ran once"

# --- killed between the mark and the count: the sweep -------------------------------

write_config <<EOF
[type.slice]
handler = noop
[type.report]
handler = noop
EOF
jobrun enqueue --type=slice --key-prefix=kill --range=1-3 --chunk=1 \
    --then=report >/dev/null
run jobrun -q --max=2 --metrics-file="$T/m.prom"
is "$(count "business_key LIKE 'kill:_-_' AND status = 'success'")" 2 \
    "two of three chunks ran"
is "$(grep '^jobrun_fan_in' "$T/m.prom")" 'jobrun_fan_in_done{fan_in="kill:then"} 2
jobrun_fan_in_total{fan_in="kill:then"} 3' "metrics: the open fan-in, done and total"
run jobrun status
is "$(sed -n '/^FAN-IN/,$p' <<<"$out")" \
    "FAN-IN                                         DONE      TOTAL
kill:then                                         2          3" \
    "status lists the open fan-in, done of total"
run jobrun status --json
is "$(jpy 'd["fan_ins"]' <<<"$out")" '[{"key": "kill:then", "done": 2, "total": 3}]' \
    "status --json: the same under \"fan_ins\""
# The third chunk's runner is SIGKILLed after its mark committed and
# before it counted the chunk: a client holds the fan-in's row, so the
# runner's count waits behind it (or has not begun) when the kill comes.
# (Its sweep at start waits 5 s for the row, then skips the fan-in.)
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B --unbuffered "$DB" -e "
    START TRANSACTION;
    SELECT id FROM jobrun_fan_ins WHERE then_key = 'kill:then' FOR UPDATE;
    SELECT CONCAT('held by ', CONNECTION_ID()); DO SLEEP(60); COMMIT" \
    >"$T/holder" 2>&1 &
holder=$!
defer_kill "$holder"
wait_for 20 file_has "$T/holder" '^held by [0-9]+$' ||
    bail_out "the fan-in's row was not held"
jobrun_bg -q --max=1
wait_for 30 job_is kill:3-3 "status = 'success'"
kill -9 "$bg_pid"
wait "$bg" 2>/dev/null
sql "KILL $(sed -n 's/^held by //p' "$T/holder")"
wait "$holder" 2>/dev/null
is "$(count "business_key = 'kill:3-3' AND status = 'success'")/$(count "business_key = 'kill:then'")" \
    "1/0" "the killed runner's chunk is marked, and no callback exists"
is "$(sql "SELECT succeeded + failed FROM jobrun_fan_ins
    WHERE then_key = 'kill:then'")" 2 "the fan-in did not count it"
run jobrun -q
is "$rc" 0 "the next run exits 0"
is "$(payload kill:then)" \
    "$(as_stored '{"key_prefix": "kill", "total": 3, "succeeded": 3, "failed": 0}')" \
    "its sweep found the fan-in complete and enqueued the callback once"

# --- a list of keys on stdin ----------------------------------------------------------

write_config <<EOF
[type.slice]
handler = exec
command = $HANDLERS/fail-tens $T/list-slices
[type.report]
handler = noop
EOF
run jobrun enqueue --type=slice --key-prefix=list --keys-from=- \
    --then=report <<<$'a1\nb20-x\r\n\na1\nc3'
is "$rc" 0 "--keys-from=- with --then exits 0"
is "$out" "3 jobs: 3 created, 0 existed
then: a job of type report, key list:then, once every job has finished" \
    "one job per distinct line, blank lines skipped"
run jobrun -q
is "$(payload list:then)" \
    "$(as_stored '{"key_prefix": "list", "total": 3, "succeeded": 2, "failed": 1}')" \
    "after the three: one callback with their counts"
# the jobs of a list that finished before --then was given: fired at once
jobrun enqueue --type=slice --key-prefix=early --keys-from=- <<<$'x1\nx2' \
    >/dev/null
run jobrun -q
run jobrun enqueue --type=slice --key-prefix=early --keys-from=- \
    --then=report <<<$'x1\nx2'
is "$out" "2 jobs: 0 created, 2 existed
then: a job of type report, key early:then, enqueued now: every job has finished" \
    "jobs finished before they became members count at once"
is "$(payload early:then)" \
    "$(as_stored '{"key_prefix": "early", "total": 2, "succeeded": 2, "failed": 0}')" \
    "and the callback has their counts"

# --- chaos: runners SIGKILLed at random ------------------------------------------------

write_config <<EOF
[run]
lock_seconds = 3
recover_limit = 1000
batch_size = 100000
max_seconds = 30
backoff_base = 0
backoff_cap = 0
[type.slice]
handler = exec
command = $HANDLERS/fail-tens $T/chaos-slices 0.02
[type.report]
handler = noop
EOF
jobrun enqueue --type=slice --key-prefix=chaos --range=1-$chaos --chunk=1 \
    --max-attempts=1000 --then=report >/dev/null
runners=()
kills=0
alive() {
	local p live=()
	for p in "${runners[@]}"; do
		proc_gone "${p#*:}" || live+=("$p")
	done
	runners=("${live[@]}")
}
done_yet() {
	[ "$(count "business_key = 'chaos:then' AND status = 'success'")" = 1 ]
}
deadline=$(( $(date +%s) + 90 + 10 * ${JOBRUN_TEST_SLACK:-0} ))
while [ "$(date +%s)" -lt "$deadline" ] && ! done_yet; do
	alive
	while [ "${#runners[@]}" -lt 3 ]; do
		jobrun_bg -q >/dev/null 2>>"$T/chaos-errors"
		runners+=("$bg:$bg_pid")
	done
	# chaos timing, not a wait for a state: kill one at a random moment
	sleep "$(( ${JOBRUN_TEST_SLACK:-0} / 10 )).$(( RANDOM % 3 + 1 ))"
	alive
	if [ "${#runners[@]}" -gt 0 ]; then
		victim=${runners[RANDOM % ${#runners[@]}]}
		kill -9 "${victim#*:}" 2>/dev/null && kills=$((kills + 1))
	fi
done
for p in "${runners[@]}"; do
	kill -9 "${p#*:}" 2>/dev/null
done
wait 2>/dev/null
diag "chaos: $chaos chunks, $kills runners killed, $(lines "$T/chaos-slices") handler runs"
ok "runners were killed along the way" test "$kills" -gt 0
is "$(count "business_key LIKE 'chaos:%' AND type = 'slice'
    AND status IN ('pending', 'processing')")" 0 "the chunks drained"
is "$(count "business_key = 'chaos:then'")" 1 "exactly one callback"
is "$(payload chaos:then)" \
    "$(as_stored "{\"key_prefix\": \"chaos\", \"total\": $chaos, \"succeeded\": $((chaos - chaos / 10)), \"failed\": $((chaos / 10))}")" \
    "with the right counts"

# --- a member retried by an operator after it failed for good -------------------
# A member counts once, with the outcome it first finished with: a chunk
# that failed for good, retried by an operator and then successful, is
# still counted failed, and not counted again (which would make the count
# reach the total and fire the callback while another chunk is pending).
cat >"$T/flaky" <<EOF2
#!/bin/sh
[ -e "$T/fixed" ] && exit 0
echo "not yet fixed"
exit 65
EOF2
chmod 0755 "$T/flaky"
write_config <<EOF
[type.flaky]
handler = exec
command = $T/flaky

[type.report]
handler = exec
command = $HANDLERS/append-id $T/reports
EOF
jobrun enqueue --type=flaky --key-prefix=rt --range=1-2 --chunk=1 \
    --then=report >/dev/null
first=$(sql "SELECT MIN(id) FROM polling_jobs WHERE business_key LIKE 'rt:%' AND type = 'flaky'")
sql "UPDATE polling_jobs SET next_run_at = NOW() + INTERVAL 1 DAY
     WHERE business_key LIKE 'rt:%' AND type = 'flaky' AND id <> $first"
fan_in_counts() {
	sql "SELECT CONCAT(total, ' ', succeeded, ' ', failed, ' ', fired_at IS NOT NULL)
	     FROM jobrun_fan_ins WHERE then_key = 'rt:then'"
}
run jobrun
is "$(sql "SELECT status FROM polling_jobs WHERE id = $first")/$(fan_in_counts)" \
    "failed/2 0 1 0" "the first chunk fails for good: counted failed, 1 of 2"
touch "$T/fixed"
run jobrun retry "$first"
run jobrun
is "$(sql "SELECT status FROM polling_jobs WHERE id = $first")/$(fan_in_counts)" \
    "success/2 0 1 0" "retried and successful: still counted once, failed; the fan-in waits"
is "$(count "business_key = 'rt:then'")" 0 "no callback while the other chunk is pending"
sql "UPDATE polling_jobs SET next_run_at = NOW()
     WHERE business_key LIKE 'rt:%' AND type = 'flaky'"
run jobrun
is "$(fan_in_counts)" "2 1 1 1" "the other chunk's success fires it: 1 succeeded, 1 failed"
is "$(payload rt:then)" \
    "$(as_stored '{"key_prefix": "rt", "total": 2, "succeeded": 1, "failed": 1}')" \
    "the callback says how each chunk first finished"

# --- the callback purged, the prefix in another case --------------------------------
# The callback exists once, even after a purge: a fan-out run again with a
# prefix the job table takes for the same (pp, PP: utf8mb4_general_ci) is
# the fired fan-in, though jobrun_fan_ins compares bytes and no job has the
# key any more; a prefix the table tells apart makes its own.
write_config <<EOF2
[type.slice]
handler = noop
[type.report]
handler = noop
EOF2
fan_ins_pp() {
	sql "SELECT COUNT(*) FROM jobrun_fan_ins WHERE LOWER(then_key) = 'pp:then'"
}
jobrun enqueue --type=slice --key-prefix=pp --range=1-2 --chunk=1 \
    --then=report >/dev/null
run jobrun -q
run jobrun -q
is "$(count "business_key = 'pp:then' AND status = 'success'")" 1 \
    "pp's callback ran"
# a day old, then purged
sql "UPDATE polling_jobs SET next_run_at = next_run_at - INTERVAL 1 DAY,
     finished_at = finished_at - INTERVAL 1 DAY WHERE business_key = 'pp:then'"
run jobrun purge --status=success --older-than=1s -t report
is "$rc:$(count "business_key = 'pp:then'")" "0:0" "and was purged"
run jobrun enqueue --type=slice --key-prefix=PP --range=1-2 --chunk=1 \
    --then=report
is "$rc:$(fan_ins_pp)" "0:1" "--key-prefix=PP after the purge: still pp's one fan-in"
like "$out" "key PP:then, enqueued already: every chunk had finished" \
    "which fired already"
run jobrun -q
is "$(count "type = 'report' AND business_key LIKE 'pp:then'")" 0 \
    "no second callback"
run jobrun enqueue --type=slice --key-prefix=pq --range=1-2 --chunk=1 \
    --then=report
like "$out" "key pq:then, once every chunk has finished" \
    "another prefix, pq: a fan-in of its own"
run jobrun -q
run jobrun -q
is "$(count "business_key = 'pq:then' AND status = 'success'")" 1 \
    "and its callback"

# --- more than FANIN_SWEEP_BATCH members finished outside a runner -----------------
# 1100 of 1200 chunks failed without a runner counting them (as recovery
# or SQL fails them): the run's sweep counts them a window of 1000 at a
# time, and the run's last chunk fires the fan-in.
jobrun enqueue --type=slice --key-prefix=wide --range=1-1200 --chunk=1 \
    --then=report >/dev/null
sql "UPDATE polling_jobs SET status = 'failed', finished_at = NOW()
     WHERE business_key LIKE 'wide:%' AND business_key <> 'wide:then'
     ORDER BY id LIMIT 1100"
wide_counts() {
	sql "SELECT CONCAT(total, ' ', succeeded, ' ', failed, ' ', fired_at IS NOT NULL)
	     FROM jobrun_fan_ins WHERE then_key = 'wide:then'"
}
run jobrun -q --max=1000
is "$rc:$(wide_counts)" "0:1200 100 1100 1" \
    "1100 failed outside a runner, 100 run: all counted, fired"
is "$(payload wide:then)" \
    "$(as_stored '{"key_prefix": "wide", "total": 1200, "succeeded": 100, "failed": 1100}')" \
    "one callback with their counts"

# --- members cancelled ------------------------------------------------------
# cancel settles the fan-ins of the jobs it cancelled, as a runner does
# its jobs': counted at once, and a fan-in whose last members it cancelled
# fires before any run.
jobrun enqueue --type=slice --key-prefix=cx --range=1-3 --chunk=1 \
    --then=report >/dev/null
cx_counts() {
	sql "SELECT CONCAT(total, ' ', succeeded, ' ', failed, ' ', fired_at IS NOT NULL)
	     FROM jobrun_fan_ins WHERE then_key = 'cx:then'"
}
cx_ids=$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM polling_jobs
     WHERE business_key LIKE 'cx:%' AND business_key <> 'cx:then'")
set -- $cx_ids
run jobrun cancel "$1" "$2"
is "$rc:$(cx_counts)" "0:3 0 2 0" "two of three members cancelled: counted failed at once"
run jobrun cancel "$3"
is "$rc:$(cx_counts)" "0:3 0 3 1" "the last cancelled: the fan-in fired, before any run"
is "$(count "business_key = 'cx:then' AND status = 'pending'")" 1 \
    "its callback waits to run"
