#!/bin/bash
# The account README.md tells you to make, granted exactly the lines of its
# block (read from README.md here, so this file holds the README to them):
# (a) on a database with the schema and every migration, it runs jobs with
# a cap, a schedule and a fan-in, and status and check exit 0 with nothing
# to say; (b) granted only the job table, with no optional table, run,
# status, list, enqueue and report work, and check only notes the features
# that are off, each with the GRANT that would turn it on (MariaDB answers
# "denied" for a table the account has no privilege on whether it exists
# or not, so the advice says both steps); (c) the same with every
# optional table there but not granted; (d) a configuration or a command
# that needs one (a cap, a schedule, pause, enqueue --then) exits 77 with
# the GRANT, check names it as the fix, and doing what it says makes the
# run work.  A table granted in part, the job table's too, is a problem
# whose fix is the GRANT.  Own server: it makes database users.
. "${0%/*}/lib.sh"

plan 55
use_own_server
setup_db

root() {	# root DB: statements on stdin, as an administrator
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B "$1"
}
load() {	# load DB FILE...: sql/FILE into DB
	local db=$1 f
	shift
	for f; do
		root "$db" <"$TOP/sql/$f" || bail_out "cannot apply sql/$f to $db"
	done
}
migrations=(001_type_pick.sql 002_checkpoint.sql 003_flow.sql
    004_schedules.sql 005_finished.sql 006_fan_in.sql 007_flow_type.sql
    008_start_latency.sql 010_attempts.sql 011_audit.sql 013_priority.sql
    014_retention_pace.sql)

# The README's block, and its lines for database $1 instead of app.
readme=$(awk '/^<!-- test\/84-grants.t runs the block below/ { on = 1; next }
    on && /^```sql$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' "$TOP/README.md")
[ "$(grep -c '^GRANT ' <<<"$readme")" = 9 ] ||
    bail_out "README.md: no block of 9 GRANTs after the test's marker"
for_db() {
	sed "s/ ON app\\./ ON \`$1\`./" <<<"$readme"
}
job_grant() {	# job_grant DB: the README's line for the job table
	for_db "$1" | grep -m 1 '^GRANT '
}
later_grants() {	# later_grants DB: its lines for the migrations' tables
	for_db "$1" | grep '^GRANT ' | tail -n +2
}
[ "$(for_db x | grep -c ' app\.')" = 0 ] ||
    bail_out "README.md: a line names app other than as ON app.TABLE"
password=$(sed -n "s/^CREATE USER .* IDENTIFIED BY '\\([^']*\\)';\$/\\1/p" <<<"$readme")
[ -n "$password" ] || bail_out "README.md: no CREATE USER ... IDENTIFIED BY"
export JOBRUN_DB_PASSWORD=$password

# conf DB <<EOF: $CONF is a configuration for DB as the account jobrun
conf() {
	CONF=$T/$1.conf
	{
		printf '[database]\nsocket = %s\nuser = jobrun\ndatabase = %s\n\n' \
		    "$JOBRUN_TEST_SOCKET" "$1"
		cat
	} >"$CONF"
}
plain() {
	conf "$1" <<EOF
[type.work]
handler = noop

[type.report]
handler = noop
EOF
}
capped() {
	conf "$1" <<EOF
[type.work]
handler = noop
concurrency = 2

[type.report]
handler = noop
EOF
}
scheduled() {
	plain "$1"
	printf '\n[schedule.tick]\ntype = work\ncron = * * * * *\n' >>"$CONF"
}
count() {	# count DB [WHERE]: jobs
	root "$1" <<<"SELECT COUNT(*) FROM polling_jobs${2:+ WHERE $2}"
}
fixes() {	# fixes LEVEL < check --json: the fixes of that level, one a line
	jpy "'\\n'.join(sorted(c['fix'] for c in d['checks'] if c['level'] == '$1'))"
}
grant() {	# grant DB TABLE PRIVILEGES: the GRANT jobrun's messages name
	printf "GRANT %s ON \`%s\`.\`%s\` TO 'jobrun'@'localhost'" "$3" "$1" "$2"
}
flow_grant() { grant "$1" polling_jobs_flow 'SELECT, INSERT, UPDATE'; }
sched_grant() { grant "$1" jobrun_schedules 'SELECT, INSERT, UPDATE'; }
fanin_grants() {
	printf '%s; %s' "$(grant "$1" jobrun_fan_ins 'SELECT, INSERT, UPDATE')" \
	    "$(grant "$1" jobrun_fan_in_jobs 'SELECT, INSERT, UPDATE')"
}
latency_grant() {
	grant "$1" jobrun_start_latency 'SELECT, INSERT, UPDATE, DELETE'
}
history_grant() { grant "$1" polling_jobs_attempts 'SELECT, INSERT'; }
audit_grant() { grant "$1" jobrun_audit 'SELECT, INSERT, UPDATE'; }
# unseen DB: check's advice when the account sees none of the optional
# tables (sorted)
unseen() {
	printf '%s\n' \
	    "apply sql/003_flow.sql if \`$1\`.\`polling_jobs_flow\` does not exist, then $(flow_grant "$1")" \
	    "apply sql/006_fan_in.sql if \`$1\`.\`jobrun_fan_ins\` and \`$1\`.\`jobrun_fan_in_jobs\` do not exist, then $(fanin_grants "$1")" \
	    "apply sql/008_start_latency.sql if \`$1\`.\`jobrun_start_latency\` does not exist, then $(latency_grant "$1")" \
	    "apply sql/010_attempts.sql if \`$1\`.\`polling_jobs_attempts\` does not exist, then $(history_grant "$1")" \
	    "apply sql/011_audit.sql if \`$1\`.\`jobrun_audit\` does not exist, then $(audit_grant "$1")" |
	    sort
}

A=$DB
B=${DB}_b
C=${DB}_c
for db in "$B" "$C"; do
	root "" <<<"DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`" ||
	    bail_out "cannot create $db"
	load "$db" schema.sql
done
load "$A" "${migrations[@]}"
load "$C" "${migrations[@]}"
defer "root '' <<<\"DROP DATABASE IF EXISTS \\\`$B\\\`; DROP DATABASE IF EXISTS \\\`$C\\\`\""

# --- (a) the README's lines, every table there -------------------------------

for_db "$A" | root "$A" || bail_out "the README's block failed on $A"
capped "$A"
printf '\n[schedule.tick]\ntype = work\ncron = * * * * *\n' >>"$CONF"
# Both runs at one "now" for the schedules (JOBRUN_TEST_NOW): a minute that
# began between them would add its slot's job to the count.
# Half a minute into the server's minute: a schedule first seen exactly
# at a slot (:00) runs it, and added a job to the counts below (1 run in
# 60).
JOBRUN_TEST_NOW=$(root "$A" <<<"SELECT UNIX_TIMESTAMP() DIV 60 * 60 + 30")
export JOBRUN_TEST_NOW
run jobrun enqueue --type=work --key=a1
is "$rc/$out" "0/job 1 created" "(a) enqueue as the README's account"
run jobrun enqueue --type=work --key-prefix=fan --range=1-2 --chunk=1 \
    --then=report
is "$rc" 0 "(a) enqueue --then (the fan-in tables) exits 0"
run jobrun
is "$rc" 0 "(a) a run with a cap, a schedule and a fan-in exits 0"
run jobrun
is "$rc/$(count "$A" "status = 'success'")/$(count "$A")" 0/4/4 \
    "(a) a second run runs the fan-in's callback: 4 jobs, all success"
is "$(root "$A" <<<"SELECT claims FROM polling_jobs_flow WHERE type = 'work'")" 3 \
    "(a) the capped type's claims went through the control table"
is "$(root "$A" <<<"SELECT COUNT(*) FROM jobrun_schedules WHERE name = 'tick'")" 1 \
    "(a) the schedule has its row"
is "$(root "$A" <<<"SELECT SUM(jobs) FROM jobrun_start_latency")" 4 \
    "(a) the start latencies are kept"
unset JOBRUN_TEST_NOW
run jobrun pause work
is "$rc/$out" "0/work: paused" "(a) pause exits 0"
run jobrun resume work
is "$rc/$out" "0/work: resumed" "(a) resume exits 0"
run jobrun status
is "$rc" 0 "(a) status exits 0"
run jobrun check
is "$rc" 0 "(a) check exits 0"
is "$(grep -E '^(advice|problem)' <<<"$out")" "" "(a) with nothing to advise"

# --- (b) only the job table granted, no optional table ------------------------

job_grant "$B" | root "$B" || bail_out "the README's job table line failed on $B"
plain "$B"
run jobrun enqueue --type=work --key=b1
is "$rc/$out" "0/job 1 created" "(b) enqueue exits 0"
run jobrun
is "$rc/$(count "$B" "status = 'success'")" 0/1 "(b) a run exits 0 and runs the job"
run jobrun status
is "$rc/$err" 0/ "(b) status exits 0, and says nothing on stderr"
like "$out" "^TYPE .*
work +0 " "(b) and shows the backlog"
run jobrun list
like "$rc/$out" "^0/ID .*
1 +work +success " "(b) list exits 0 and lists the job"
run jobrun report --json
is "$rc/$(jpy 'type(d).__name__' <<<"$out")" 0/dict "(b) report --json exits 0 with an object"
run jobrun check --json
is "$rc/$(jget ok <<<"$out")" 0/true "(b) check exits 0: ok"
is "$(fixes problem <<<"$out")" "" "(b) check finds no problem"
is "$(fixes advice <<<"$out" | grep -v '^sql/')" "$(unseen "$B")" \
    "(b) its advice for each optional table: the migration if absent, then the GRANT"
run jobrun pause work
is "$rc" 77 "(b) pause, which needs the control table, exits 77"
is "$err" "jobrun: pause work needs the control table: 'jobrun'@'localhost' cannot see \`$B\`.\`polling_jobs_flow\`: absent, or not granted (the server does not say which); apply sql/003_flow.sql if \`$B\`.\`polling_jobs_flow\` does not exist, then $(flow_grant "$B") (the account lacks a privilege: jobrun check names the GRANT)" \
    "(b) naming the migration and the GRANT"
capped "$B"
run jobrun enqueue --type=work --key=b2
run jobrun
is "$rc/$(count "$B" "status = 'pending'")" 77/1 \
    "(b) a cap without its table: exit 77, the job left pending"
# Doing what it says: the migration, then the GRANT.
load "$B" 003_flow.sql
flow_grant "$B" | root "$B" || bail_out "the GRANT of the advice failed"
run jobrun
is "$rc/$(count "$B" "status = 'success'")" 0/2 "(b) after the migration and the GRANT the capped run works"

# The job table granted in part: check's problem, and its fix.
root "$B" <<<"REVOKE DELETE ON \`$B\`.polling_jobs FROM 'jobrun'@'localhost'"
run jobrun check --json
is "$rc" 78 "(b) DELETE not granted on the job table: check exits 78"
is "$(fixes problem <<<"$out")" "$(grant "$B" polling_jobs 'SELECT, INSERT, UPDATE, DELETE')" \
    "(b) its fix is the job table's GRANT"
run jobrun purge --status=success --older-than=0s
is "$rc" 77 "(b) purge exits 77"
like "$err" "DELETE command denied .* \\(the account lacks a privilege: jobrun check names the GRANT\\)\$" \
    "(b) and points at check"
# None at all on it (the control table's grant lets the account in):
# information_schema lists no column, and check does not call it absent.
root "$B" <<<"REVOKE ALL PRIVILEGES ON \`$B\`.polling_jobs FROM 'jobrun'@'localhost'"
run jobrun check --json
is "$rc/$(jpy '[c["message"] for c in d["checks"] if c["level"] == "problem"]' <<<"$out")" \
    "78/[\"table polling_jobs: 'jobrun'@'localhost' cannot see \`$B\`.\`polling_jobs\`: absent, or not granted (the server does not say which)\"]" \
    "(b) no privilege on the job table: check's problem says absent or not granted"
is "$(fixes problem <<<"$out")" "apply sql/schema.sql if \`$B\`.\`polling_jobs\` does not exist, then $(grant "$B" polling_jobs 'SELECT, INSERT, UPDATE, DELETE')" \
    "(b) its fix: the schema if absent, then the GRANT"
job_grant "$B" | root "$B" || bail_out "cannot grant the job table again"

# --- (c) every optional table there, only the job table granted ----------------

job_grant "$C" | root "$C" || bail_out "the README's job table line failed on $C"
plain "$C"
run jobrun enqueue --type=work --key=c1
is "$rc" 0 "(c) enqueue exits 0"
run jobrun
is "$rc/$(count "$C" "status = 'success'")" 0/1 "(c) a run exits 0 and runs the job"
run jobrun status
is "$rc/$err" 0/ "(c) status exits 0, nothing on stderr"
run jobrun list
is "$rc" 0 "(c) list exits 0"
run jobrun report --json
is "$rc" 0 "(c) report --json exits 0"
run jobrun check --json
is "$rc/$(jget ok <<<"$out")" 0/true "(c) check exits 0: ok"
is "$(fixes advice <<<"$out")" "$(unseen "$C")" \
    "(c) its advice names the GRANT for each optional table"

# --- (d) the configuration or a command needs one ------------------------------

capped "$C"
run jobrun enqueue --type=work --key=c2
run jobrun
is "$rc/$(count "$C" "status = 'pending'")" 77/1 "(d) a cap: the run exits 77 and claims nothing"
like "$err" "^jobrun: $CONF: \\[type\\.work\\] concurrency needs the control table: 'jobrun'@'localhost' cannot see \`$C\`\\.\`polling_jobs_flow\`: absent, or not granted \\(the server does not say which\\); apply sql/003_flow\\.sql if \`$C\`\\.\`polling_jobs_flow\` does not exist, then GRANT SELECT, INSERT, UPDATE ON \`$C\`\\.\`polling_jobs_flow\` TO 'jobrun'@'localhost' " \
    "(d) naming the key, the table and the GRANT"
run jobrun check --json
is "$rc" 78 "(d) check exits 78"
is "$(fixes problem <<<"$out")" "apply sql/003_flow.sql if \`$C\`.\`polling_jobs_flow\` does not exist, then $(flow_grant "$C")" \
    "(d) its problem's fix is the GRANT"
scheduled "$C"
run jobrun
is "$rc" 77 "(d) a schedule: the run exits 77"
is "$err" "jobrun: enqueue schedules: 'jobrun'@'localhost' cannot see \`$C\`.\`jobrun_schedules\`: absent, or not granted (the server does not say which); apply sql/004_schedules.sql if \`$C\`.\`jobrun_schedules\` does not exist, then $(sched_grant "$C") (the account lacks a privilege: jobrun check names the GRANT)" \
    "(d) naming the table and the GRANT"
run jobrun check --json
is "$(fixes problem <<<"$out")" "apply sql/004_schedules.sql if \`$C\`.\`jobrun_schedules\` does not exist, then $(sched_grant "$C")" \
    "(d) check's fix for the schedule is the GRANT"
plain "$C"
run jobrun enqueue --type=work --key-prefix=cf --range=1-2 --chunk=1 --then=report
is "$rc/$(count "$C" "business_key LIKE 'cf:%'")" 77/0 \
    "(d) enqueue --then exits 77 and enqueues nothing"
like "$err" "^jobrun: enqueue --then needs the fan-in tables: .*; apply sql/006_fan_in\\.sql if .*, then GRANT SELECT, INSERT, UPDATE ON \`$C\`\\.\`jobrun_fan_ins\` TO 'jobrun'@'localhost'; GRANT SELECT, INSERT, UPDATE ON \`$C\`\\.\`jobrun_fan_in_jobs\` TO 'jobrun'@'localhost' " \
    "(d) naming both tables' GRANTs"

# Granted in part: present, and a privilege missing.
root "$C" <<<"GRANT SELECT ON \`$C\`.polling_jobs_flow TO 'jobrun'@'localhost'"
run jobrun check --json
is "$rc" 78 "(d) the control table granted SELECT only: check exits 78"
is "$(jpy '[c["message"] for c in d["checks"] if c["level"] == "problem"]' <<<"$out")" \
    "[\"flow control (concurrency, rate, pause): 'jobrun'@'localhost' lacks a privilege jobrun uses on \`$C\`.\`polling_jobs_flow\`\"]" \
    "(d) a problem: the table is there, a privilege is missing"
is "$(fixes problem <<<"$out")" "$(flow_grant "$C")" "(d) its fix: the GRANT alone"
capped "$C"
run jobrun
is "$rc" 77 "(d) a capped run exits 77"
like "$err" "^jobrun: $CONF: \\[type\\.work\\] concurrency needs the control table: 'jobrun'@'localhost' lacks a privilege jobrun uses on \`$C\`\\.\`polling_jobs_flow\`; GRANT SELECT, INSERT, UPDATE ON \`$C\`\\.\`polling_jobs_flow\` TO 'jobrun'@'localhost' " \
    "(d) before it claims, naming the GRANT"

# Doing what the README says: every later line.
later_grants "$C" | root "$C" || bail_out "the README's later lines failed on $C"
scheduled "$C"
sed -i 's/^handler = noop$/&\nconcurrency = 2/' "$CONF"
JOBRUN_TEST_NOW=$(root "$C" <<<"SELECT UNIX_TIMESTAMP() DIV 60 * 60 + 30") \
    run jobrun
is "$rc/$(count "$C" "status = 'success'")" 0/2 "(d) with the README's lines the capped, scheduled run works"
run jobrun enqueue --type=work --key-prefix=cf --range=1-2 --chunk=1 --then=report
is "$rc" 0 "(d) and enqueue --then"
run jobrun check
is "$rc/$(grep -cE '^(advice|problem)' <<<"$out")" 0/0 "(d) check exits 0 with nothing to say"
