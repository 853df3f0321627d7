#!/bin/bash
# A record of operators' changes (issue 26 item 4, sql/011_audit.sql):
# retry, cancel (of a running job too), purge, pause, resume, enqueue
# --again and the fan-outs each leave exactly one row in jobrun_audit,
# in the change's own transaction: who (OS user, host, CURRENT_USER()),
# the command line with the jobs' data and the database password
# redacted, the table, the rows changed (a change in batches: the sum of
# its batches) and when, by the server's clock.  "jobrun audit
# [--since]" lists them newest first, the report shows the last 20.
# Without the table every command works as before; with it there but
# INSERT not granted, a change is refused (77) and nothing is changed.
# Own server: it makes database users.
. "${0%/*}/lib.sh"

plan 73
use_own_server
setup_db
write_config <<EOF2
[type.work]
handler = noop
EOF2

root() {	# root: statements on stdin, as an administrator, in $DB
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B "$DB"
}
# failed N TYPE [ERROR]: N failed jobs of TYPE, keys TYPE-f-SEQ
failed() {
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	        last_error, next_run_at, created_at, updated_at, finished_at)
	     SELECT CONCAT('$2-f-', seq), '$2', 'failed', 1,
	            '${3:-boom}', NOW(), NOW(), NOW(), NOW()
	       FROM seq_1_to_$1"
}
audits() {	# audits: the number of rows of jobrun_audit
	sql "SELECT COUNT(*) FROM jobrun_audit"
}
# last COLUMNS: the newest audit row's columns, tab-separated
last() {
	sql "SELECT $1 FROM jobrun_audit ORDER BY id DESC LIMIT 1"
}
# last_command: the newest row's command line, as stored (-r: the client
# escapes no backslash)
last_command() {
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B -r "$DB" \
	    -e "SELECT command FROM jobrun_audit ORDER BY id DESC LIMIT 1"
}
# tail_of COMMAND: the recorded command line without argv[0] (a path
# that differs under valgrind)
tail_of() {
	printf '%s' "${1#* }"
}
now6() {
	sql "SELECT NOW(6)"
}

# --- without the table: as before ---------------------------------------------

failed 3 work
run jobrun retry --failed
is "$rc/$out" "0/retry: 3 job(s)" "no table: retry --failed works as before"
run jobrun check --json
is "$(jpy '[c["level"] + " " + c["message"] + " / " + str(c.get("fix")) for c in d["checks"] if "operators" in c["message"]][0]' <<<"$out")" \
    "ok operators' changes are not recorded: no table jobrun_audit / apply sql/011_audit.sql" \
    "no table: check says nothing is recorded and names the migration"
run jobrun audit
is "$rc/$out/$err" "78//jobrun: audit: no table jobrun_audit (or no privilege on it): apply sql/011_audit.sql and grant SELECT, INSERT, UPDATE on it" \
    "no table: audit exits 78 and names the migration"

root <"$TOP/sql/011_audit.sql" || bail_out "cannot apply sql/011_audit.sql"
root <"$TOP/sql/003_flow.sql" || bail_out "cannot apply sql/003_flow.sql"
sql "DELETE FROM polling_jobs"
me=$(id -un)
host=$(hostname)
run jobrun check
like "$out" "ok +operators' changes are recorded \\(table jobrun_audit\\)" \
    "check says changes are recorded"

# --- retry --failed, in batches ------------------------------------------------

failed 2500 bulk
failed 2 bulk-c "cancelled by operator"
sql "UPDATE polling_jobs SET type = 'bulk' WHERE type = 'bulk-c'"
t0=$(now6)
run jobrun retry --failed --type=bulk
t1=$(now6)
is "$rc/$out" "0/retry: 2500 job(s); 2 cancelled by an operator left failed (--include-cancelled retries them too)" \
    "retry --failed puts 2500 jobs back (three batches)"
is "$(audits)" 1 "one row for the command, not one per batch"
IFS=$'\t' read -r a_os a_host a_db a_table a_changed a_at <<<"$(last "os_user, host, db_user, job_table, changed, at")"
is "$a_changed" 2500 "rows changed: 2500, the sum of the batches"
is "$a_table" polling_jobs "the table is the job table"
is "$a_os" "$me" "the OS user is id -un's"
is "$a_host" "$host" "the host is hostname's"
is "$a_db" "$(sql "SELECT CURRENT_USER()")" "the database user is CURRENT_USER()"
is_within "$a_at" "$t0" "$t1" "the time is the server's, read around the run"
is "$(tail_of "$(last_command)")" "retry --config=$CONF --failed --type=bulk" \
    "the command line as typed"

run jobrun retry --failed --dry-run
is "$rc/$(audits)" 0/1 "a dry run changes nothing and leaves no row"

# --- retry and cancel by id, cancel of a running job ----------------------------

sql "DELETE FROM polling_jobs; DELETE FROM jobrun_audit"
failed 2 work
ids=$(sql "SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR ' ') FROM polling_jobs")
# shellcheck disable=SC2086
run jobrun retry $ids 999999
is "$rc/$(audits)/$(last changed)" "1/1/2" \
    "retry of 2 jobs and a missing one: one row, 2 changed"
pending=${ids%% *}
running=$(sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        locked_by, locked_until, next_run_at, created_at, updated_at)
     VALUES ('running', 'work', 'processing', 1, 'tok-1',
             NOW() + INTERVAL 300 SECOND, NOW(), NOW(), NOW());
     SELECT LAST_INSERT_ID()")
run jobrun cancel "$running"
is "$rc/$(audits)/$(last changed)" "0/2/1" \
    "cancel of a running job: a row of its own, 1 changed"
is "$(tail_of "$(last_command)")" "cancel --config=$CONF $running" \
    "its command names the job: who asked is recorded"
is "$(field "$running" "CONCAT_WS(' / ', status, locked_by, IFNULL(last_error, 'NULL'))")" \
    "processing / cancel tok-1 / NULL" \
    "the running job is asked to stop, last_error untouched"
run jobrun cancel "$pending" "$running"
is "$rc/$(audits)/$(last changed)" "0/3/2" \
    "cancel of a pending and an already-asked running job: one row, 2"

# --- purge ------------------------------------------------------------------------

sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('old-', seq), 'work', 'success', 1, NOW() - INTERVAL 3 DAY,
            NOW() - INTERVAL 3 DAY, NOW() - INTERVAL 3 DAY,
            NOW() - INTERVAL 3 DAY
       FROM seq_1_to_1234"
run jobrun purge --status=success --older-than=2d
is "$rc/$out" "0/purge: 1234 job(s)" "purge deletes 1234 jobs (two batches)"
is "$(audits)/$(last changed)" "4/1234" "purge: one row, 1234 changed"
run jobrun purge --status=success --older-than=2d --dry-run
is "$(audits)" 4 "purge --dry-run leaves no row"

# --- pause and resume -------------------------------------------------------------

run jobrun pause work
is "$rc/$(audits)" "0/5" "pause leaves a row"
is "$(last "CONCAT_WS(' ', job_table, changed)")" "polling_jobs_flow 1" \
    "its table is the control table, 1 row changed"
run jobrun resume work
is "$rc/$(audits)/$(tail_of "$(last_command)")" "0/6/resume --config=$CONF work" \
    "resume leaves a row"

# --- enqueue --again and fan-outs --------------------------------------------------

sql "DELETE FROM jobrun_audit"
run jobrun enqueue --type=work --key=plain
is "$rc/$(audits)" "0/0" "a plain enqueue is not an operator's change: no row"
run jobrun enqueue --type=work --key=plain --again
is "$rc/$(audits)/$(last changed)" "0/1/0" \
    "enqueue --again of a pending job: a row, 0 changed"
sql "UPDATE polling_jobs SET status = 'success', finished_at = NOW() WHERE business_key = 'plain'"
run jobrun enqueue --type=work --key=plain --again
is "$rc/$(audits)/$(last changed)" "0/2/1" \
    "enqueue --again of a finished job: a row, 1 changed"
run jobrun enqueue --type=work --key-prefix=fan --range=1-1200 --chunk=1
is "$rc/$(audits)/$(last changed)" "0/3/1200" \
    "a fan-out of 1200 chunks (three batches): one row, 1200 changed"
run jobrun enqueue --type=work --key-prefix=fan --range=1-1200 --chunk=1
is "$rc/$(audits)/$(last changed)" "0/4/0" \
    "the same fan-out again: a row, 0 changed"
printf 'a\nb\nc\n' >"$T/keys"
run jobrun enqueue --type=work --key-prefix=list --keys-from="$T/keys"
is "$rc/$(audits)/$(last changed)" "0/5/3" "a fan-out of --keys-from: 3 changed"

# --- secrets --------------------------------------------------------------------------

run jobrun enqueue --type=work --key=sec1 --again --payload='{"token":"s3cret-tok"}'
is "$rc/$(tail_of "$(last_command)")" \
    "0/enqueue --config=$CONF --type=work --key=sec1 --again --payload=[redacted]" \
    "--payload=VALUE is redacted"
run jobrun enqueue --type=work --key=sec2 --again --payload '{"token":"s3cret-tok"}'
is "$rc/$(tail_of "$(last_command)")" \
    "0/enqueue --config=$CONF --type=work --key=sec2 --again --payload [redacted]" \
    "--payload VALUE (two words) is redacted"
run jobrun enqueue --type=work --key-prefix=tpl --range=1-2 --chunk=1 \
    --payload-template='{"api_key":"s3cret-tok"}'
is "$rc/$(tail_of "$(last_command)")" \
    "0/enqueue --config=$CONF --type=work --key-prefix=tpl --range=1-2 --chunk=1 --payload-template=[redacted]" \
    "--payload-template is redacted"
is "$(sql "SELECT COUNT(*) FROM jobrun_audit WHERE command LIKE '%s3cret%'")" 0 \
    "no row holds the secret"

# An account with a password, granted everything jobrun uses.
pw='Pw-audit-7719'
root <<EOF2 || bail_out "cannot create the account auditor"
CREATE USER 'auditor'@'localhost' IDENTIFIED BY '$pw';
GRANT SELECT, INSERT, UPDATE, DELETE ON \`$DB\`.polling_jobs TO 'auditor'@'localhost';
GRANT SELECT, INSERT, UPDATE ON \`$DB\`.polling_jobs_flow TO 'auditor'@'localhost';
GRANT SELECT, INSERT, UPDATE ON \`$DB\`.jobrun_audit TO 'auditor'@'localhost';
EOF2
defer "mariadb --no-defaults -S '$JOBRUN_TEST_SOCKET' -uroot -e \"DROP USER IF EXISTS 'auditor'@'localhost', 'reader'@'localhost'\""
ROOT_CONF=$CONF
CONF=$T/auditor.conf
sed "s/^user = root\$/user = auditor\\npassword = $pw/" "$ROOT_CONF" >"$CONF"
chmod 600 "$CONF"
run jobrun enqueue --type=work --key="oops-$pw" --again
is "$rc/$(tail_of "$(last_command)")" \
    "0/enqueue --config=$CONF --type=work --key=oops-[redacted] --again" \
    "the database password typed on the command line is redacted"
is "$(last db_user)" "auditor@localhost" "the database user is the account's"

# --- odd data -------------------------------------------------------------------------

CONF=$ROOT_CONF
run jobrun enqueue --type="café o'x" --key="k é 'q\"" --again
is "$rc/$(tail_of "$(last_command)")" \
    "0/enqueue --config=$CONF '--type=café o'\\''x' '--key=k é '\\''q\"' --again" \
    "an accent, a blank and quotes: the words quoted as a shell reads them"
run jobrun audit --json --limit=1
is "$(jpy 'd["changes"][0]["command"].split(" ", 1)[1]' <<<"$out")" \
    "enqueue --config=$CONF '--type=café o'\\''x' '--key=k é '\\''q\"' --again" \
    "audit --json gives the command as recorded"
is "$(jpy 'sorted(d["changes"][0])' <<<"$out")" \
    '["at", "changed", "command", "db_user", "host", "id", "os_user", "table"]' \
    "audit --json: a row's keys"

# --- audit --since, and its listing ----------------------------------------------------

sql "DELETE FROM jobrun_audit"
sql "INSERT INTO jobrun_audit (at, os_user, host, db_user, command, job_table, changed)
     VALUES (NOW(6) - INTERVAL 3700 SECOND, 'u', 'h', 'd', 'jobrun old', 'polling_jobs', 1),
            (NOW(6) - INTERVAL 3500 SECOND, 'u', 'h', 'd', 'jobrun mid', 'polling_jobs', 2),
            (NOW(6) - INTERVAL 10 SECOND, 'u', 'h', 'd', 'jobrun new', 'polling_jobs', 3)"
run jobrun audit --since=1h --json
is "$rc/$(jpy '" ".join(c["command"] for c in d["changes"])' <<<"$out")" \
    "0/jobrun new jobrun mid" "--since=1h: the rows of the last hour, newest first"
run jobrun audit --since=1m --json
is "$(jpy '" ".join(c["command"] for c in d["changes"])' <<<"$out")" \
    "jobrun new" "--since=1m: the row of 10 s ago only"
run jobrun audit --since=5s
is "$rc/$out" "0/no changes" "--since=5s: none"
run jobrun audit --since=0s
is "$rc" 64 "--since=0s is a usage error"
# Its advice agrees with that rule (it once said "write 0s").
run jobrun audit --since=0
is "$rc/$err" "64/jobrun: --since: a DURATION of 1s or more: \"0\"
Try 'jobrun --help'." "--since=0: the usage error names the rule, not 0s"
run jobrun audit --since=soon
is "$rc" 64 "--since=soon is a usage error"
run jobrun audit
id3=$(sql "SELECT id FROM jobrun_audit WHERE changed = 3")
at3=$(sql "SELECT at FROM jobrun_audit WHERE changed = 3")
is "$(head -n 1 <<<"$out")" "$id3  $at3  u@h (d)  polling_jobs: 3 rows  jobrun new" \
    "audit: a line per change, newest first"
is "$(wc -l <<<"$out")" 3 "audit: every row (fewer than --limit's 20)"

# --- the report: the last 20 --------------------------------------------------------------

sql "DELETE FROM jobrun_audit"
for i in $(seq 1 25); do
	jobrun enqueue --type=work --key="r$i" --again >/dev/null 2>&1 ||
	    bail_out "enqueue --again r$i failed"
done
is "$(audits)" 25 "25 changes, 25 rows"
newest=$(sql "SELECT GROUP_CONCAT(id ORDER BY id DESC) FROM (SELECT id FROM jobrun_audit ORDER BY id DESC LIMIT 20) AS n")
run jobrun report --json --html="$T/report.html"
is "$rc/$(jpy '",".join(str(c["id"]) for c in d["operator_changes"])' <<<"$out")" \
    "0/$newest" "report --json: the 20 newest, newest first"
is "$(jpy 'd["operator_changes"][0]["command"]' <<<"$out")" \
    "jobrun enqueue --type=work --key=r25 --again" \
    "report --json: the newest is the last enqueue, shown without its --config"
is "$(jpy 'sorted(d["operator_changes"][0])' <<<"$out")" \
    '["at", "changed", "command", "id", "os_user"]' \
    "report --json: when, who, rows and command; no database user, host or table"
is "$(grep -c '<tr><td>[0-9-]* [0-9:.]*</td>' "$T/report.html")" 20 \
    "report --html: 20 rows of changes"
ok "report --html: the section is there" grep -q "<h2 id=\"changes\">Operators&#39; changes</h2>" "$T/report.html"
ok "report --html: the newest is listed" grep -q -- "--key=r25 --again</td></tr>" "$T/report.html"
not grep -q -- "--key=r5 --again</td></tr>" "$T/report.html"
is "$?" 0 "report --html: the 5th (one of the oldest five) is not"

# Every spelling getopt_long takes as --config is left out of the report:
# an abbreviation, with "=" or its value the next word, and -c in a bundle.
for spelling in "--conf=$CONF" "--conf $CONF" "-qc $CONF" "-qc$CONF"; do
	case $spelling in -q*) shown="jobrun -q" ;; *) shown=jobrun ;; esac
	# shellcheck disable=SC2086 # the spelling's words
	jobrun_raw $spelling pause --force work >/dev/null 2>&1 ||
	    bail_out "jobrun $spelling pause failed"
	run jobrun report --json --html="$T/report.html"
	is "$(jpy 'd["operator_changes"][0]["command"]' <<<"$out")" \
	    "$shown pause --force work" "report --json: $spelling left out"
done
jobrun resume --force work >/dev/null 2>&1 || bail_out "resume work failed"

# --- a row that cannot be written: the change is not made --------------------------------

sql "DELETE FROM polling_jobs; DELETE FROM jobrun_audit"
failed 2500 work
sql "CREATE TRIGGER audit_no_add BEFORE UPDATE ON jobrun_audit FOR EACH ROW
     SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no more counts'"
run jobrun retry --failed
is "$rc/$(head -n 1 <<<"$err")" "70/jobrun: count an operator's change in jobrun_audit: execute: no more counts" \
    "the second batch's count cannot be written: the command fails and says why"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'pending'")/$(audits)/$(last changed)" \
    "1000/1/1000" "the first batch and its row committed, the second rolled back: the row says 1000, as the table"
sql "DROP TRIGGER audit_no_add;
     CREATE TRIGGER audit_no_row BEFORE INSERT ON jobrun_audit FOR EACH ROW
     SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no more rows'"
run jobrun retry --failed
is "$rc/$(head -n 1 <<<"$err")" "70/jobrun: record an operator's change in jobrun_audit: execute: no more rows" \
    "the row cannot be inserted: the command fails and says why"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'pending'")/$(audits)" "1000/1" \
    "and its first batch is rolled back with it: still 1000 pending, one row"
sql "DROP TRIGGER audit_no_row"

# --- the table there, INSERT not granted: refused, nothing changed --------------------------

sql "DELETE FROM polling_jobs; DELETE FROM jobrun_audit"
failed 4 work
root <<EOF2 || bail_out "cannot create the account reader"
CREATE USER 'reader'@'localhost' IDENTIFIED BY '$pw';
GRANT SELECT, INSERT, UPDATE, DELETE ON \`$DB\`.polling_jobs TO 'reader'@'localhost';
GRANT SELECT, INSERT, UPDATE ON \`$DB\`.polling_jobs_flow TO 'reader'@'localhost';
GRANT SELECT ON \`$DB\`.jobrun_audit TO 'reader'@'localhost';
EOF2
CONF=$T/reader.conf
sed "s/^user = root\$/user = reader\\npassword = $pw/" "$ROOT_CONF" >"$CONF"
chmod 600 "$CONF"
refusal="jobrun: record the change in jobrun_audit: 'reader'@'localhost' lacks a privilege jobrun uses on \`$DB\`.\`jobrun_audit\`; nothing changed (GRANT SELECT, INSERT, UPDATE ON \`$DB\`.\`jobrun_audit\` TO 'reader'@'localhost') (the account lacks a privilege: jobrun check names the GRANT)"
run jobrun retry --failed
is "$rc/$(head -n 1 <<<"$err")" "77/$refusal" \
    "retry --failed without the INSERT grant: 77, the table and the GRANT named"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'failed'")/$(audits)" "4/0" \
    "nothing changed: 4 jobs still failed, no row"
id1=$(sql "SELECT MIN(id) FROM polling_jobs")
run jobrun cancel "$id1"
is "$rc/$(head -n 1 <<<"$err")" "77/$refusal" "cancel: refused the same way"
run jobrun purge --status=failed --older-than=1s
is "$rc" 77 "purge: refused"
run jobrun pause work
is "$rc/$(sql "SELECT COUNT(*) FROM polling_jobs_flow WHERE paused = 1")" "77/0" \
    "pause: refused, the type not paused"
run jobrun enqueue --type=work --key=work-f-1 --again
is "$rc/$(field "$id1" status)" "77/failed" "enqueue --again: refused, the job left failed"
run jobrun enqueue --type=work --key-prefix=no --range=1-3 --chunk=1
is "$rc/$(sql "SELECT COUNT(*) FROM polling_jobs")/$(audits)" "77/4/0" \
    "a fan-out: refused, no job added, no row"
run jobrun status
is "$rc" 0 "status, which changes nothing, still works"
run jobrun check --json
is "$(jpy '[c["level"] + " / " + str(c.get("fix")) for c in d["checks"] if "operators" in c["message"]][0]' <<<"$out")" \
    "problem / GRANT SELECT, INSERT, UPDATE ON \`$DB\`.\`jobrun_audit\` TO 'reader'@'localhost'" \
    "check: a problem, the GRANT its fix"
