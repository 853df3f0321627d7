#!/bin/bash
# Cancelling a running job (issue 26 item 2), from any host: "jobrun
# cancel ID" on a processing job marks its lock's holder ("cancel " and
# the runner's token) and returns at once.  The runner sees it at its
# next lock extension (every lock_seconds/3) or at the job's outcome,
# whichever comes first, stops the handler (SIGTERM, then SIGKILL after
# the grace), and writes failed, "cancelled by operator", with the
# checkpoint kept.  A job whose runner died is cancelled by recovery
# instead of run again.  Exactly one outcome: a job that succeeded
# before the request is left alone; one whose success came after it is
# cancelled, and the run says what it did not record.
. "${0%/*}/lib.sh"

plan 37
setup_db
for f in 002_checkpoint.sql 011_audit.sql; do
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
	    <"$TOP/sql/$f" || bail_out "cannot load sql/$f"
done
cat >"$T/work" <<EOF2
#!/bin/sh
echo "\$JOB_ID" >>"$T/ran"
trap 'echo "\$JOB_ID" >>"$T/termed"; exit 143' TERM
: >"$T/started-\$JOB_ID"
while [ ! -e "$T/go" ]; do sleep 0.05; done
EOF2
chmod +x "$T/work"
write_config <<EOF2
[run]
lock_seconds = 3
max_seconds = 60

[type.work]
handler = exec
command = $T/work
timeout = 60

[type.stubborn]
handler = exec
command = $HANDLERS/ignore-term $T
timeout = 60
EOF2

# lines FILE: how many lines FILE has (0 when it does not exist)
lines() {
	if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}
# job KEY [TYPE]: a due job; prints its id
job() {
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     VALUES ('$1', '${2:-work}', NOW(), NOW(), NOW());
	     SELECT LAST_INSERT_ID()"
}

# --- one runner, the cancel from another process ---
j1=$(job one)
jobrun_bg --type=work -v --json >"$T/run1.out" 2>"$T/run1.err"
ok "the handler runs" wait_for 20 test -e "$T/started-$j1"
sql "UPDATE polling_jobs SET checkpoint = '{\"page\": 7}' WHERE id = $j1"
t0=$(db_now)
run jobrun cancel "$j1"
# The count says what was done: no pending job cancelled, one running job
# asked to stop; it once read "cancel: 0 job(s)" beside an audit row of 1.
is "$rc/$out" "0/cancel: 0 pending job(s) cancelled, 1 running job(s) asked to stop
cancel: job $j1 is running: stop requested; its runner stops it at its next lock extension" \
    "cancel returns at once: stop requested, and counted"
is "$(sql "SELECT changed FROM jobrun_audit ORDER BY id DESC LIMIT 1")" 1 \
    "the audit row counts the same one job"
ok "the runner writes the cancel" wait_for 20 job_is one "status = 'failed'"
wait "$bg"
is "$(field "$j1" "CONCAT_WS(' / ', status, last_error, locked_by IS NULL)")" \
    "failed / cancelled by operator / 1" "the job is failed, cancelled by operator, unlocked"
left=$(sql "SELECT TIMESTAMPDIFF(SECOND, '$t0', finished_at) FROM polling_jobs WHERE id = $j1")
# lock_seconds/3 is 1 s; then the handler's stop, and DATETIME's whole
# seconds on both sides.
ok "within lock_seconds/3 and the handler's stop, by the server's clock ($left s)" \
    test "$left" -le $((3 + ${JOBRUN_TEST_SLACK:-0}))
is "$(cat "$T/termed")" "$j1" "the handler was sent SIGTERM"
is "$(field "$j1" checkpoint)" '{"page": 7}' "the checkpoint is kept"
is "$(jget failed <<<"$(cat "$T/run1.out")")/$(jget lost <<<"$(cat "$T/run1.out")")" "1/0" \
    "the run counts it failed, not lost"
like "$(cat "$T/run1.err")" "cancelled by an operator while it ran" "and its log line says so"
run jobrun --type=work --json
is "$(jget claimed <<<"$out")/$(lines "$T/ran")" "0/1" "it never runs again unless retried"
run jobrun retry "$j1"
: >"$T/go"
run jobrun --type=work --json
is "$(jget succeeded <<<"$out")/$(lines "$T/ran")" "1/2" "retried, it runs again"
rm -f "$T/go"

# --- --wait: the command returns once the job has stopped ---
j2=$(job two)
jobrun_bg --type=work >/dev/null 2>&1
ok "the handler runs" wait_for 20 test -e "$T/started-$j2"
run jobrun cancel --wait "$j2"
is "$rc" 0 "cancel --wait exits 0"
like "$out" "job $j2 is running: stop requested; stopped" "once it has stopped"
is "$(field "$j2" status)" failed "and by then the job is failed"
wait "$bg"

# --- a handler that ignores SIGTERM is killed after the grace ---
j3=$(job three stubborn)
jobrun_bg --type=stubborn -v >/dev/null 2>"$T/run3.err"
# handler.pid: ignore-term writes it after child.pid
ok "the stubborn handler runs" wait_for 20 test -s "$T/handler.pid"
hpid=$(cat "$T/handler.pid")
run jobrun cancel --wait "$j3"
is "$rc/$(field "$j3" "CONCAT_WS(' / ', status, last_error)")" \
    "0/failed / cancelled by operator" "a handler that ignores SIGTERM is still stopped"
ok "its process is gone (SIGKILL after the grace)" wait_for 10 proc_gone "$hpid"
wait "$bg"

# --- --jobs=8: only the jobs asked stop ---
: >"$T/ran"
ids=()
for k in 1 2 3 4 5 6 7 8; do ids+=("$(job many$k)"); done
jobrun_bg --type=work --jobs=8 --json >"$T/run4.out" 2>/dev/null
for id in "${ids[@]}"; do wait_for 20 test -e "$T/started-$id" || break; done
ok "eight handlers run at once" test -e "$T/started-${ids[7]}"
run jobrun cancel "${ids[1]}" "${ids[4]}" "${ids[6]}" --json
is "$rc" 0 "three of them asked to stop"
is "$(jpy 'd["count"], d["stop_requested"]' <<<"$out")" \
    "[0, [${ids[1]}, ${ids[4]}, ${ids[6]}]]" \
    "--json: none cancelled while pending, the three asked to stop"
is "$(sql "SELECT changed FROM jobrun_audit ORDER BY id DESC LIMIT 1")" 3 \
    "and the audit row counts the three"
# three_cancelled: the three asked are failed by now
three_cancelled() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs
	    WHERE business_key LIKE 'many%' AND status = 'failed'")" = 3 ]
}
ok "they are cancelled while the others run" wait_for 20 three_cancelled
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'many%'
    AND status = 'processing'")" 5 "the other five still run"
: >"$T/go"
wait "$bg"
is "$(jget succeeded <<<"$(cat "$T/run4.out")")/$(jget failed <<<"$(cat "$T/run4.out")")" "5/3" \
    "the run: 5 succeeded, 3 cancelled"
is "$(sort -n "$T/ran" | uniq | wc -l | tr -d ' ')/$(lines "$T/ran")" "8/8" "each ran once"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM polling_jobs
    WHERE last_error = 'cancelled by operator' AND business_key LIKE 'many%'")" \
    "${ids[1]},${ids[4]},${ids[6]}" "exactly the three asked"
rm -f "$T/go"

# --- the runner died: recovery cancels the job instead of running it ---
: >"$T/ran"
j5=$(job five)
jobrun_bg --type=work >/dev/null 2>&1
ok "the handler runs" wait_for 20 test -e "$T/started-$j5"
kill_runner
run jobrun cancel "$j5"
like "$out" "stop requested" "the dead runner's job is asked to stop"
# lib.sh's expire_lock keeps what precedes "@": the cancel mark stays.
expire_lock five
run jobrun --type=work --json
is "$(jget recovered <<<"$out")/$(jget claimed <<<"$out")" "1/0" \
    "recovery takes it back, and nothing is claimed"
is "$(field "$j5" "CONCAT_WS(' / ', status, last_error)")" \
    "failed / cancelled by operator" "it is cancelled, not run again"
is "$(lines "$T/ran")" 1 "its handler ran only the once"

# --- a race with the job's own success: exactly one outcome ---
j6=$(job six)
: >"$T/go"
run jobrun --type=work
run jobrun cancel "$j6"
is "$rc/$(field "$j6" status)" "1/success" "a job that succeeded first is left alone (exit 1)"
rm -f "$T/go"
# A lock of 60 s: no extension (every 20 s) comes between the request and
# the handler's end, so the outcome that meets the request is its success.
write_config <<EOF2
[run]
lock_seconds = 60

[type.work]
handler = exec
command = $T/work
timeout = 60
EOF2
j7=$(job seven)
jobrun_bg --type=work -v --json >"$T/run7.out" 2>"$T/run7.err"
ok "the handler runs" wait_for 20 test -e "$T/started-$j7"
sql "UPDATE polling_jobs SET locked_by = CONCAT('cancel ', locked_by) WHERE id = $j7"
: >"$T/go"
wait "$bg"
is "$(field "$j7" "CONCAT_WS(' / ', status, last_error)")" \
    "failed / cancelled by operator" \
    "a success that comes after the request: the cancel is the one outcome"
like "$(cat "$T/run7.err")" "outcome not recorded: success" \
    "and the run says the success was not recorded"
