#!/bin/bash
# A job whose handler exits 0 ends 'success' with its lock cleared; the run
# exits 0 and --json reports it.
. "${0%/*}/lib.sh"

plan 33
setup_db
write_config <<EOF2
[type.email]
handler = exec
command = $HANDLERS/exit-with 0 sent
timeout = 10
EOF2

run jobrun enqueue --type=email --key=welcome:1 --payload='{"to":"a@example.com"}'
is "$rc" 0 "enqueue exits 0"

t0=$(db_now)
run jobrun --json
t1=$(db_now)
is "$rc" 0 "the run exits 0"
is "$err" "" "nothing on stderr"
is "$(printf '%s\n' "$out" | wc -l)" 1 "one line on stdout"
is "$(jkeys <<<"$out")" "by_priority,claimed,deadline_passed,deleted,elapsed_ms,failed,lost,ok,recovered,retried,snoozed,succeeded" \
    "the summary has the documented keys"
is "$(jget ok <<<"$out")" true "ok is true"
is "$(jget claimed <<<"$out")" 1 "claimed 1"
is "$(jget succeeded <<<"$out")" 1 "succeeded 1"
is "$(jget retried <<<"$out")/$(jget failed <<<"$out")/$(jget lost <<<"$out")" \
    0/0/0 "none retried, failed or lost"
like "$(jget elapsed_ms <<<"$out")" '^[0-9]+$' "elapsed_ms is a number"

is "$(field 1 status)" success "the job is success"
is "$(field 1 attempts)" 1 "after one attempt"
is "$(field 1 'locked_by IS NULL AND locked_until IS NULL')" 1 "the lock is cleared"
is "$(field 1 'last_error IS NULL')" 1 "last_error is NULL"
is_within "$(field 1 finished_at)" "$t0" "$t1" "finished_at is the time of the run"

run jobrun --json
is "$rc" 0 "a run with nothing due exits 0"
is "$(jget claimed <<<"$out")" 0 "and claims nothing"
is "$(field 1 attempts)" 1 "the finished job is not run again"

run jobrun
is "$out$err" "" "a quiet run prints nothing without --json"
run jobrun_raw run --config="$CONF" --json
is "$rc/$(jget claimed <<<"$out")" 0/0 "the run subcommand can be named"

jobrun enqueue --type=email --key=welcome:2 >/dev/null
jobrun enqueue --type=email --key=welcome:3 >/dev/null
run jobrun -v
is "$rc" 0 "-v run exits 0"
is "$(printf '%s\n' "$err" | grep -Ec '\<job[ =]2\>')" 1 "-v prints a line for job 2 on stderr"
is "$(printf '%s\n' "$err" | grep -Ec '\<job[ =]3\>')" 1 "and one for job 3"
is "$out" "" "and nothing on stdout"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 3 \
    "all three jobs succeeded"

# -q where there is something to say: a job that is retried warns without
# -q; with -q stderr stays empty and --json still reports it.
cat >>"$CONF" <<EOF2

[type.bounce]
handler = exec
command = $HANDLERS/exit-with 3 "mailbox full"
timeout = 10
EOF2
jobrun enqueue --type=bounce --key=bounce:1 >/dev/null
run jobrun --json
like "$err" 'outcome=retry' "(without -q the retry is a warning)"
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key = 'bounce:1'"
run jobrun -q --json
is "$rc/$(jget retried <<<"$out")" 1/1 "-q: the retry happened, exit 1, --json says so"
is "$err" "" "-q prints nothing on stderr"

# -q is the level for cron's mail: a job that failed for good is one line
# (the retry above was none); -qq leaves only fatal errors.
jobrun enqueue --type=bounce --key=bounce:2 --max-attempts=1 >/dev/null
run jobrun -q --type=bounce
is "$rc" 1 "-q: a job that fails for good exits 1"
is "$(grep -c . <<<"$err")" 1 "-q: one line on stderr for it"
like "$err" '^ts=\S+ level=warn job=[0-9]+ type=bounce attempt=1 max_attempts=1 outcome=failed ms=[0-9]+ msg="no attempts left: exit status 3: mailbox full"$' \
    "-q: the line says which job failed and why"
jobrun enqueue --type=bounce --key=bounce:3 --max-attempts=1 >/dev/null
run jobrun -qq --type=bounce
is "$rc/$(sql "SELECT status FROM polling_jobs WHERE business_key = 'bounce:3'")" \
    1/failed "-qq: the job failed for good too"
is "$err" "" "-qq prints nothing on stderr"
