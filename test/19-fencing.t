#!/bin/bash
# Fencing: every write after the claim is WHERE id=? AND locked_by=?, so a
# runner whose lock was taken over cannot overwrite the newer claim.  Its
# write changes nothing; the run counts the job lost, says so, exits 1.
# An extension that finds the lock lost stops the handler (exec and http).
. "${0%/*}/lib.sh"

plan 27
setup_db
write_config <<EOF2
[run]
lock_seconds = 30

[type.stolen]
handler = exec
command = $HANDLERS/steal-lock 0
timeout = 10

[type.stolen_fail]
handler = exec
command = $HANDLERS/steal-lock 1
timeout = 10
EOF2

insert_job s:1 stolen
run jobrun --json
is "$rc" 1 "a lost job makes the run exit 1"
is "$(jget lost <<<"$out")" 1 "counted as lost"
is "$(jget succeeded <<<"$out")" 0 "not counted as succeeded"
is "$(jget ok <<<"$out")" false "ok is false"
like "$err" '^ts=\S+ level=warn job=1 type=stolen attempt=1 max_attempts=5 outcome=lost ms=[0-9]+ msg="lock taken by another runner; outcome not recorded: success"$' \
    "the lost lock is logged on stderr: one warning, outcome=lost, with what was not recorded"
is "$(field 1 status)" processing "the row keeps the newer claimer's status"
is "$(field 1 locked_by)" other-runner "and its locked_by"
is "$(field 1 attempts)" 1 "attempts as the claim left them"
is "$(field 1 'finished_at IS NULL AND last_error IS NULL')" 1 \
    "no finished_at, no last_error written"
left_between "$(field 1 'TIMESTAMPDIFF(SECOND, NOW(), locked_until)')" 290 300 \
    "the newer lock's expiry is untouched"

insert_job s:2 stolen_fail
t0=$(db_now)
run jobrun --type=stolen_fail --json
is "$rc" 1 "a lost failing job: exit 1"
is "$(jget lost <<<"$out")" 1 "counted as lost, not retried"
is "$(jget retried <<<"$out")" 0 "retried 0"
is "$(field 2 status)/$(field 2 locked_by)" processing/other-runner \
    "the retry write did not touch the row"
is "$(field 2 'last_error IS NULL')" 1 "no last_error written"
is "$(field 2 "next_run_at <= '$t0'")" 1 "next_run_at not pushed out (still the insert's, before the run)"

# -q, the level for cron's mail, still says a job was lost: its outcome
# was not written, which a person must look at.
insert_job s:3 stolen
run jobrun -q --type=stolen
is "$rc" 1 "-q: a lost job still makes the run exit 1"
like "$err" '^ts=\S+ level=warn job=[0-9]+ type=stolen attempt=1 max_attempts=5 outcome=lost ms=[0-9]+ msg="lock taken by another runner; outcome not recorded: success"$' \
    "-q: the lost job is one line on stderr"

# The lock found lost by an extension while the handler runs: the handler
# is stopped (exec: SIGTERM to its group; http: the transfer aborted),
# nothing is written, the job counts as lost, -v says why.
. "${0%/*}/http-lib.sh"
start_http_server
write_config <<EOF2
[run]
lock_seconds = 3

[type.longexec]
handler = exec
command = $HANDLERS/trap-term $T/trace $T/never
timeout = 60

[type.longhttp]
handler = http
url = $HTTP_URL/slow?seconds=60
timeout = 90
EOF2
steal() {
	sql "UPDATE polling_jobs SET locked_by = 'other-runner',
	    locked_until = NOW() + INTERVAL 300 SECOND WHERE business_key = '$1'"
}
for kind in exec http; do
	rm -f "$T/trace"
	base=$(baseline_ms --type="long$kind" --json)
	insert_job "$kind:lost" "long$kind"
	start=$(date +%s%N)
	jobrun_bg --type="long$kind" -v --json >"$T/out" 2>"$T/err"
	if [ $kind = exec ]; then
		wait_for 30 file_has "$T/trace" '^started$'
	else
		asked() { [ "$(http_count /slow)" -ge 1 ]; }
		wait_for 30 asked
	fi
	steal "$kind:lost"
	wait "$bg"
	rc=$?
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	is "$rc/$(jget lost <"$T/out")" 1/1 "$kind: a lock found lost by an extension: exit 1, counted lost"
	# extensions every lock_seconds/3 = 1 s: found lost within 2 s or so
	took_between_ms "$took" 0 $((3000 + base + 2000)) "$kind: the handler (60 s) was stopped within an extension interval or two ($took ms)"
	like "$(cat "$T/err")" "msg=\"job [0-9]+ \\(long$kind\\): lock lost while the handler ran; stopping it\"" \
	    "$kind: -v says the lock was lost and the handler stopped"
	is "$(sql "SELECT CONCAT_WS(' ', status, locked_by, last_error IS NULL) FROM polling_jobs
	    WHERE business_key = '$kind:lost'")" "processing other-runner 1" "$kind: nothing written to the row"
	if [ $kind = exec ]; then
		is "$(tr '\n' ' ' <"$T/trace")" "started term " "exec: the handler got SIGTERM"
	fi
done
