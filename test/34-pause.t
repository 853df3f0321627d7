#!/bin/bash
# jobrun pause TYPE / jobrun resume TYPE: in the middle of a drain by
# three runners, no job starts after `jobrun pause` returns but those
# whose claim was already under way (at most one a slot, and at once);
# the runs end, the rest of the jobs untouched; other types go on; after
# resume the next run drains the rest.  Without sql/003_flow.sql pause is
# a configuration error that names the migration.
. "${0%/*}/lib.sh"

plan 32
setup_db

# Under valgrind `jobrun pause` itself takes a second or two: handlers of
# 300 ms keep the drain going past it.
jobs=60 secs=0.1
case $JOBRUN in */asan/*) jobs=40 ;; esac
under_valgrind && jobs=40 secs=0.3

write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 100

[type.work]
handler = exec
command = $HANDLERS/flow-record $T/rec $secs

[type.other]
handler = noop
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE $1"
}
records() {	# records WHAT [ARG]: test/flow-records.py over $T/rec
	python3 "$TOP/test/flow-records.py" "$1" "$T/rec" "${@:2}"
}
at_most() {	# at_most X Y: X <= Y (decimals)
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) <= float(sys.argv[2]))' "$1" "$2"
}

# --- the commands ---------------------------------------------------------------

run jobrun pause work
is "$rc" 78 "pause without the control table: configuration error (78)"
is "$err" "jobrun: pause work needs the control table: no table \`$DB\`.\`polling_jobs_flow\`; apply sql/003_flow.sql (see sql/schema.sql and [database] in $CONF; jobrun check tells more)" \
    "the message names the table and the migration"
run jobrun pause
is "$rc/$out" 64/ "pause without a type: usage error (64)"
is "$err" "jobrun: pause needs one type name
Try 'jobrun --help'." "the message says what is missing"
run jobrun resume a b
is "$rc" 64 "resume of two types: usage error (64)"

sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"

# A type of 40 accented characters (80 bytes): types are 64 characters,
# up to 256 bytes; a control table made when sql/003 had VARBINARY(64)
# refuses it, and check and the message name sql/007.  No section, job
# or control row names it: --force, or pause would refuse it as a typo
# (test/83-typos.t).
long=$(printf 'é%.0s' $(seq 40))
run jobrun pause --force "$long"
is "$rc/$out" "0/$long: paused" "pause of a 40-character accented type"
is "$(sql "SELECT paused FROM polling_jobs_flow WHERE type = '$long'")" 1 \
    "its flag is in the control table"
sql "DELETE FROM polling_jobs_flow; ALTER TABLE polling_jobs_flow MODIFY type VARBINARY(64) NOT NULL"
run jobrun pause --force "$long"
is "$rc" 65 "with the old VARBINARY(64) column: refused (65)"
like "$err" "^jobrun: set a type's pause flag in .polling_jobs_flow.: .*Data too long for column 'type' at row 1 \\(a type name over 64 bytes: apply sql/007_flow_type.sql\\)\$" \
    "the message names the table and the migration that widens it"
run jobrun check
like "$out" "control table polling_jobs_flow: column type is varbinary\(64\), which cannot hold every type name of 64 characters \(up to 256 bytes\)" \
    "check says the column is too narrow"
sql "$(cat "$TOP/sql/007_flow_type.sql")" || bail_out "cannot apply sql/007_flow_type.sql"
run jobrun pause --force "$long"
is "$rc" 0 "after sql/007, the same pause works"
sql "DELETE FROM polling_jobs_flow"

run jobrun pause --json work
is "$rc/$out" '0/{"type":"work","paused":true}' "pause --json says what it did"
is "$(sql "SELECT paused FROM polling_jobs_flow WHERE type = 'work'")" 1 \
    "the flag is in the control table"
run jobrun resume work
is "$rc/$out" "0/work: resumed" "resume says what it did"
is "$(sql "SELECT paused FROM polling_jobs_flow WHERE type = 'work'")" 0 \
    "the flag is cleared"

# --- pause in the middle of a drain ---------------------------------------------------

sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('w', seq), 'work', NOW(), NOW(), NOW() FROM seq_1_to_$jobs"
pids=()
for opt in --jobs=2 --jobs=1 --jobs=1; do
	jobrun_bg "$opt" >/dev/null 2>>"$T/err"
	pids+=("$bg")
done
five_done() {
	[ "$(count "status = 'success'")" -ge 5 ]
}
wait_for 60 five_done ||
    bail_out "the drain did not get going"
# The slots' handlers wait while pause runs (jobrun under valgrind, on a
# busy machine, can take longer than the whole drain): each slot holds at
# most the job it has, and jobs are left whatever the speeds.
: >"$T/rec.hold"
run jobrun pause work
paused_at=$(date +%s.%N)
rm -f "$T/rec.hold"
is "$rc" 0 "jobrun pause in the middle of the drain"
failed=0
for p in "${pids[@]}"; do
	wait "$p" || failed=$((failed + 1))
done
is "$failed" 0 "the three runs ended well, without a deadline (nothing else was due)"
late=$(records after "$paused_at")
diag "$late start(s) after pause returned, the last $(records last-after "$paused_at") s after"
ok "at most one start a slot (4) after pause returned: claims already under way ($late)" \
    test "$late" -le 4
ok "and those at once (within 1 s): $(records last-after "$paused_at") s" \
    at_most "$(records last-after "$paused_at")" $((1 + ${JOBRUN_TEST_SLACK:-0}))
started=$(records starts)
left=$((jobs - started))
ok "jobs were left when pause returned ($left of $jobs)" test "$left" -gt 0
is "$(count "status = 'pending' AND attempts = 0")" "$left" \
    "the $left jobs not started are pending, no attempt spent"
is "$(count "status = 'success' AND attempts = 1")" "$started" \
    "the $started started all finished"

sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at) VALUES ('o1', 'other', NOW(), NOW(), NOW())"
run jobrun
is "$rc/$(count "type = 'work' AND status = 'pending'")" "0/$left" \
    "a run while work is paused starts none of its jobs"
is "$(count "type = 'other' AND status = 'success'")" 1 "other types still run"
run jobrun --type=work
is "$rc/$(records starts)" "0/$started" "nor does a run of --type=work"

# --- what status, check and the metrics file say ------------------------------------

run jobrun status
like "$out" "
Flow control \\(polling_jobs_flow; limits from ${CONF//./\\.}\\):
TYPE +HELD BACK +IN USE +CAP +RATE +BURST +STARTS
work +paused +0 +- +- +- +-$" "status: a section on flow control shows work paused"
run jobrun status --json --type=work
is "$(jpy 'd["flow"]' <<<"$out")" \
    '[{"type": "work", "paused": true, "in_use": 0, "concurrency": null, "rate": null, "key": null, "full": false, "throttled": false}]' \
    "status --json: flow has work, paused"
run jobrun check
like "$out" "
ok +control table polling_jobs_flow: primary key \\(type\\), 1 paused type\\(s\\)
" "check: the control table, its key, and the paused type"
run jobrun --metrics-file="$T/metrics"
is "$(grep '^jobrun_flow_paused' "$T/metrics")" 'jobrun_flow_paused{type="work"} 1' \
    "the metrics file says work is paused"

# --- resume ---------------------------------------------------------------------------

run jobrun resume work
is "$rc" 0 "jobrun resume"
run jobrun
is "$rc/$(count "status = 'success' AND attempts = 1")" "0/$((jobs + 1))" \
    "the next run drains the rest, each job at its first attempt"
is "$(records starts)" "$jobs" "every job started exactly once"
