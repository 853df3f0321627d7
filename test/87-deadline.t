#!/bin/bash
# Deadlines (issue 26 item 3): a job not started by its deadline is not
# run.  When a run claims it later it ends failed, "deadline passed",
# without its handler, and no retry starts after it either.  The deadline
# is the job's own (enqueue --deadline=DURATION|DATETIME, the column of
# sql/009_deadline.sql, which an application may also write) or its
# type's ([type.NAME] deadline, counted from created_at), both judged by
# the server's clock.  The run counts them (--json's deadline_passed, the
# summary line, the metrics file).
. "${0%/*}/lib.sh"

plan 53
setup_db
for m in 003_flow 005_finished; do
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
	    <"$TOP/sql/$m.sql" || bail_out "cannot load sql/$m.sql"
done
cat >"$T/held" <<EOF2
#!/bin/sh
echo "\$JOB_ID" >>"$T/ran-held"
: >"$T/started"
while [ ! -e "$T/go" ]; do sleep 0.05; done
EOF2
chmod +x "$T/held"
write_config <<EOF2
[type.mark]
handler = exec
command = $HANDLERS/append-id $T/ran
timeout = 10

[type.aged]
handler = exec
command = $HANDLERS/append-id $T/ran-aged
timeout = 10
deadline = 60s

[type.flaky]
handler = exec
command = $HANDLERS/exit-with 75
timeout = 10

[type.held]
handler = exec
command = $T/held
timeout = 60
concurrency = 1
EOF2

# lines FILE: how many lines FILE has (0 when it does not exist)
lines() {
	if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}
# key_id KEY: the id of the job with business key KEY
key_id() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '$1'"
}

# --- before sql/009: a type's deadline works, a job's own is refused ---
run jobrun enqueue --type=mark --key=early --deadline=1h
is "$rc" 78 "enqueue --deadline without sql/009 is a configuration error"
like "$err" "no deadline column: apply sql/009_deadline.sql" \
    "and says which migration to apply"
is "$(sql "SELECT COUNT(*) FROM polling_jobs")" 0 "and enqueues nothing"
# made KEY TYPE SECONDS: a due job of TYPE created SECONDS ago
made() {
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     VALUES ('$1', '$2', NOW(), NOW() - INTERVAL $3 SECOND, NOW())"
}
made old-before aged 90
run jobrun --type=aged --json
is "$(field "$(key_id old-before)" "CONCAT(status, '/', last_error)")" \
    "failed/deadline passed" \
    "without sql/009, a type's deadline still fails a job past it"

# --- bad values: usage errors, nothing written ---
for bad in soon 30 1.5h "2026-12-03" "12:00" ""; do
	run jobrun enqueue --type=mark --key=bad --deadline="$bad"
	is "$rc" 64 "--deadline=\"$bad\" is a usage error"
done
run jobrun enqueue --type=mark --key=bad --delay=120 --deadline=1m
is "$rc" 64 "a deadline before the job is due is refused"
like "$err" "before the job is due" "and the message says why"

mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/009_deadline.sql" || bail_out "cannot load sql/009_deadline.sql"
run jobrun enqueue --type=mark --key=bad --deadline="2026-02-30 00:00:00"
is "$rc" 65 "a datetime the server does not read is refused (65)"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key = 'bad'")" 0 \
    "and nothing was written"
# The zero date (and a zero month or day) casts to itself, but is no time:
# stored, the job ran as if it had no deadline.
for zero in "0000-00-00 00:00" "2027-00-10 00:00:00" "2027-01-00 00:00:00"; do
	run jobrun enqueue --type=mark --key=bad --deadline="$zero"
	is "$rc/$err/$(sql "SELECT COUNT(*) FROM polling_jobs
	    WHERE business_key = 'bad'")" \
	    "65/jobrun: --deadline: the server does not read \"$zero\" as a date and time/0" \
	    "--deadline=\"$zero\" is refused (65), nothing written"
done

# --- a job's own deadline ---
past=$(sql "SELECT NOW() - INTERVAL 5 SECOND")
t0=$(db_now)
run jobrun enqueue --type=mark --key=late --deadline="$past"
is "$rc" 0 "enqueue --deadline=DATETIME in the past is taken"
run jobrun enqueue --type=mark --key=fine --deadline=1h
t1=$(db_now)
run jobrun enqueue --type=mark --key=plain
is_within "$(sql "SELECT deadline - INTERVAL 1 HOUR FROM polling_jobs
    WHERE business_key = 'fine'")" "$t0" "$t1" \
    "--deadline=1h is an hour from now by the server's clock"
is "$(sql "SELECT deadline IS NULL FROM polling_jobs
    WHERE business_key = 'plain'")" 1 "no --deadline: no deadline"
run jobrun show --key=fine --json
is "$(jget deadline <<<"$out")" \
    "$(sql "SELECT deadline FROM polling_jobs WHERE business_key = 'fine'")" \
    "show --json gives the job's deadline"
run jobrun show --key=plain
like "$out" "deadline +NULL" "and show says NULL for a job without one"
run jobrun --type=mark --json
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")/$(jget failed <<<"$out")/$(jget deadline_passed <<<"$out")" \
    "3/2/1/1" "the run claimed 3: 2 ran, 1 failed past its deadline"
is "$(sort -n "$T/ran" | tr '\n' ' ')" \
    "$(key_id fine) $(key_id plain) " "the late job's handler never ran"
is "$(field "$(key_id late)" "CONCAT(status, '/', last_error)")" \
    "failed/deadline passed" "the late job is failed, \"deadline passed\""
is "$(field "$(key_id late)" "finished_at IS NOT NULL")" 1 \
    "and finished (purge and the report see it)"

# --- a type's deadline, counted from created_at, either side of it ---
made aged-in aged 30
made aged-out aged 90
run jobrun --type=aged -v --metrics-file="$T/prom"
is "$rc" 1 "a job failed past its deadline makes the run exit 1"
like "$err" "1 failed \\(1 past their deadline\\)" "the summary line says so"
is "$(field "$(key_id aged-in)" status)" success \
    "created 30 s ago with a 60 s deadline: it runs"
is "$(field "$(key_id aged-out)" "CONCAT(status, '/', last_error)")" \
    "failed/deadline passed" "created 90 s ago: it does not"
is "$(lines "$T/ran-aged")" 1 "only the one in time ran"
like "$(cat "$T/prom")" 'jobrun_run_deadline_passed\{type="aged"\} 1' \
    "the metrics file counts it by type"

# --- no retry starts after the deadline ---
run jobrun enqueue --type=flaky --key=retry-me --deadline=1h
run jobrun --type=flaky
is "$(field "$(key_id retry-me)" status)" pending "a failure is retried"
sql "UPDATE polling_jobs SET next_run_at = NOW(),
     deadline = NOW() - INTERVAL 1 SECOND WHERE business_key = 'retry-me'"
run jobrun --type=flaky --json
is "$(field "$(key_id retry-me)" "CONCAT(status, '/', attempts, '/', last_error)")" \
    "failed/2/deadline passed" \
    "the retry due after the deadline is not run: failed, deadline passed"
is "$(jget retried <<<"$out")/$(jget deadline_passed <<<"$out")" "0/1" \
    "and counted as past its deadline, not retried"

# --- enqueue --again re-arms with the new deadline, or none ---
run jobrun enqueue --type=mark --key=late --again --deadline=2h
is "$(field "$(key_id late)" "CONCAT(status, '/', deadline > NOW() + INTERVAL 119 MINUTE)")" \
    "pending/1" "--again re-arms a finished job with its new deadline"
run jobrun --type=mark
run jobrun enqueue --type=mark --key=late --again
is "$(field "$(key_id late)" "CONCAT(status, '/', deadline IS NULL)")" \
    "pending/1" "--again without --deadline clears the old one"

# --- fan-outs ---
: >"$T/ran"
run jobrun enqueue --type=mark --key-prefix=fan --range=1-4 --chunk=1 \
    --deadline="$past"
is "$rc" 0 "a fan-out takes --deadline"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'fan%'
    AND deadline = '$past'")" 4 "every chunk has the deadline"
run jobrun --type=mark --json
is "$(jget deadline_passed <<<"$out")/$(lines "$T/ran")" "4/1" \
    "none of them runs (the one that ran is the re-armed job)"

# --- a group of claims (--jobs=8): each job judged on its own ---
: >"$T/ran"
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at, deadline)
     SELECT CONCAT('g', seq), 'mark', NOW(), NOW(), NOW(),
            IF(seq % 2 = 0, NOW() - INTERVAL 1 SECOND, NULL)
       FROM seq_1_to_40"
run jobrun --type=mark --jobs=8 --max=100 --json
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")/$(jget deadline_passed <<<"$out")" \
    "40/20/20" "--jobs=8: 20 run, 20 failed past their deadline"
is "$(sort -n "$T/ran" | tr '\n' ' ')" \
    "$(sql "SELECT id FROM polling_jobs WHERE business_key LIKE 'g%'
        AND deadline IS NULL ORDER BY id" | tr '\n' ' ')" \
    "exactly the jobs without a deadline ran, each once"

# --- a deadline that passes while the job waits behind a full cap ---
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at, deadline)
     VALUES ('holder', 'held', NOW() - INTERVAL 1 SECOND, NOW(), NOW(), NULL),
            ('waiter', 'held', NOW(), NOW(), NOW(), NOW() + INTERVAL 2 SECOND)"
jobrun_bg --type=held --jobs=2 --max-seconds=30 >"$T/cap.out" 2>"$T/cap.err"
ok "the holder runs and fills the cap" wait_for 20 test -e "$T/started"
ok "the waiter's deadline passes while it waits for the place" \
    wait_for 20 job_is waiter "deadline < NOW() AND status = 'pending'"
: >"$T/go"
wait "$bg"
job_is waiter "status = 'pending'" && run jobrun --type=held
is "$(field "$(key_id waiter)" "CONCAT(status, '/', last_error)")" \
    "failed/deadline passed" "once the place is free it is failed, not run"
is "$(cat "$T/ran-held")" "$(key_id holder)" "only the holder ran"
is "$(field "$(key_id holder)" status)" success "and the holder succeeded"

# --- an application's own INSERT with a deadline, the seed's columns ---
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at, deadline)
     VALUES ('app-late', 'mark', NOW(), NOW(), NOW(), '2000-01-01 00:00:00')"
run jobrun --type=mark
is "$(field "$(key_id app-late)" "CONCAT(status, '/', last_error)")" \
    "failed/deadline passed" "a deadline the application wrote counts too"
run jobrun check
is "$rc" 0 "check exits 0 on the table with sql/009 applied"
like "$out" "has the 15 columns jobrun uses" \
    "and counts the deadline among the columns jobrun uses"

# --- the report counts them among the failed of the last 24 hours ---
late=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'failed'
    AND last_error = 'deadline passed'")
failed=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'failed'")
run jobrun report --json
is "$(jpy '[d["total"]["failed_24h"], d["total"]["deadline_passed_24h"]]' <<<"$out")" \
    "[$failed, $late]" \
    "report --json: the failed of the last 24 hours, and of them past their deadline"
is "$(jpy '[t["deadline_passed_24h"] for t in d["types"] if t["type"] == "aged"]' <<<"$out")" \
    "[2]" "and by type"
run jobrun report --html="$T/report.html"
like "$(cat "$T/report.html")" "<small>$late past deadline</small>" \
    "the page says how many were past their deadline"
