#!/bin/bash
# Retention's archive (issue 27 item 3): with [run] archive_table, the
# finished rows past keep_success and keep_failed are moved into that
# table (sql/012_archive.sql) instead of deleted: each batch inserted and
# deleted in one transaction, every column copied as it was, a row moved
# exactly once however many runners keep the table at once.  When the
# insert fails (no such table, a trigger's error) nothing is deleted and
# the run warns, naming the migration when the table is missing.
. "${0%/*}/lib.sh"

plan 32
setup_db
for m in 002_checkpoint 009_deadline 012_archive; do
	sql "$(grep -v '^--' "$TOP/sql/$m.sql")" ||
	    bail_out "cannot load sql/$m.sql"
done
write_config <<EOF2
[run]
keep_success = 7d
keep_failed = 30d
archive_table = polling_jobs_archive

[type.a]
handler = noop

[type.short]
handler = noop
keep_success = 1h
EOF2

# done_jobs N TYPE STATUS AGE-SQL: N jobs of TYPE in STATUS that finished
# (and were due) AGE-SQL ago, with a payload, a checkpoint, a deadline,
# a last error and a snooze count to copy
n_key=0
done_jobs() {
	n_key=$((n_key + 1))
	sql "INSERT INTO polling_jobs (business_key, type, payload, status,
	        attempts, max_attempts, next_run_at, locked_by, last_error,
	        created_at, updated_at, finished_at, checkpoint, snoozes,
	        deadline)
	     SELECT CONCAT('$2-$3-$n_key-', seq), '$2',
	            JSON_OBJECT('n', seq, 's', 'x\"y'), '$3', 2, 3,
	            NOW() - $4, IF(seq % 2 = 0, 'old-runner', NULL),
	            IF(seq % 3 = 0, CONCAT('error ', seq), NULL),
	            NOW() - $4 - INTERVAL 1 DAY, NOW() - $4, NOW() - $4,
	            IF(seq % 2 = 1, JSON_OBJECT('page', seq), NULL), seq % 5,
	            IF(seq % 4 = 0, NOW() - $4 + INTERVAL 1 HOUR, NULL)
	       FROM seq_1_to_$1"
}
COLS="id, business_key, type, payload, status, attempts, max_attempts,
      next_run_at, locked_by, locked_until, last_error, created_at,
      updated_at, finished_at, checkpoint, snoozes, deadline"
# rows TABLE [WHERE]: every column of its rows, in id order, as one digest
rows() {
	sql "SELECT $COLS FROM $1 ${2:-} ORDER BY id" | md5sum
}
count() {
	sql "SELECT COUNT(*) FROM $1 ${2:-}"
}

done_jobs 1500 a success "INTERVAL 10 DAY"
done_jobs 30 a failed "INTERVAL 40 DAY"
done_jobs 10 a failed "INTERVAL 20 DAY"
done_jobs 10 short success "INTERVAL 2 HOUR"
done_jobs 5 short success "INTERVAL 30 MINUTE"
insert_job old-pending a
sql "UPDATE polling_jobs SET next_run_at = NOW() + INTERVAL 1 DAY,
     created_at = NOW() - INTERVAL 90 DAY WHERE business_key = 'old-pending'"
PAST="WHERE (type = 'a' AND status = 'success')
    OR (status = 'failed' AND finished_at < NOW() - INTERVAL 30 DAY)
    OR (type = 'short' AND finished_at < NOW() - INTERVAL 1 HOUR)"
want=$(rows polling_jobs "$PAST")
want_n=$(count polling_jobs "$PAST")
[ "$want_n" = 1540 ] || bail_out "fixture: $want_n rows past their keep, not 1540"

run jobrun --json
is "$rc/$(jget deleted <<<"$out")" "0/1040" \
    "the first run moves one batch per rule: 1000 success, 10 of short's, 30 failed"
is "$(count polling_jobs_archive)" 1040 "the archive holds those 1040 rows"
is "$(sql "SELECT COUNT(*) FROM polling_jobs_archive AS x
    JOIN polling_jobs AS j USING (id)")" 0 "none of them is left in the job table"
run jobrun --json -v
is "$(jget deleted <<<"$out")" 500 "the next run moves the rest"
like "$err" "retention: moved 500 success and 0 failed job\\(s\\) past keep_success and keep_failed to polling_jobs_archive" \
    "and says where it moved them"
is "$(rows polling_jobs_archive)" "$want" \
    "the archive holds exactly the rows past their keep, every column as it was"
is "$(count polling_jobs)" 16 \
    "the job table keeps the recent rows and the pending job (5 short, 10 failed, 1)"
run jobrun --json
is "$(jget deleted <<<"$out")/$(count polling_jobs_archive)" "0/1540" \
    "then nothing is left to move"

# --- an archive that refuses the rows: nothing is deleted ---
done_jobs 20 a success "INTERVAL 8 DAY"
before=$(rows polling_jobs)
sql "CREATE TRIGGER refuse BEFORE INSERT ON polling_jobs_archive FOR EACH ROW
     SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'archive refused'"
run jobrun --json
is "$rc/$(jget deleted <<<"$out")" "0/0" \
    "a run whose archive insert fails exits 0 and removes nothing"
is "${err#ts=* }" 'level=warn msg="retention: archive jobs in `polling_jobs_archive`: execute: archive refused; finished jobs are kept until it works"' \
    "and warns why: the server's error for the insert, in the archive"
is "$(rows polling_jobs)" "$before" "every row stays in the job table as it was"
is "$(count polling_jobs_archive)" 1540 "and the archive has none of them"
sql "DROP TRIGGER refuse"

# --- no archive table: a warning naming the migration, nothing deleted ---
sed -i 's/^archive_table = .*/archive_table = no_archive/' "$CONF"
run jobrun --json
is "$rc/$(jget deleted <<<"$out")/$(count polling_jobs)" "0/0/36" \
    "with the archive table missing, nothing is deleted"
is "${err#ts=* }" "level=warn msg=\"retention: archive jobs in \`no_archive\`: prepare: Table '$DB.no_archive' doesn't exist (sql/012_archive.sql makes the table); finished jobs are kept until it works\"" \
    "and the warning names the missing table and its migration"

# --- two runners at once: no row moved twice, none lost ---
sed -i 's/^archive_table = .*/archive_table = polling_jobs_archive/' "$CONF"
done_jobs 2980 a success "INTERVAL 9 DAY"
live=$(count polling_jobs)
jobrun_bg --json >"$T/out1" 2>"$T/err1"
bg1=$bg
jobrun_bg --json >"$T/out2" 2>"$T/err2"
wait "$bg"
rc2=$?
wait "$bg1"
rc1=$?
is "$rc1/$rc2" "0/0" "two runners keeping the table at once both exit 0"
is "$(cat "$T/err1" "$T/err2")" "" "neither warns"
d1=$(jget deleted <"$T/out1")
d2=$(jget deleted <"$T/out2")
is "$((d1 + d2))" 2000 "together they move two batches (1000 each)"
is "$(($(count polling_jobs_archive) - 1540))/$((live - $(count polling_jobs)))" \
    "$((d1 + d2))/$((d1 + d2))" \
    "the archive gained exactly the rows the job table lost"
is "$(sql "SELECT COUNT(DISTINCT id) FROM polling_jobs_archive")" \
    "$(count polling_jobs_archive)" "no job is in the archive twice"

# --- status: each rule, its keep and the rows past it (counted to 1000) ---
done_jobs 1 a success "INTERVAL 9 DAY"
done_jobs 5 a failed "INTERVAL 40 DAY"
run jobrun status
is "$(sed -n '/^Retention/,$p' <<<"$out")" "Retention: finished jobs past their keep are moved to polling_jobs_archive, 1000 a run per rule:
RULE                             STATUS       KEEP     PAST
[type.short]                     success        1h        0
[run]                            success        7d    1000+
[run]                            failed        30d        5" \
    "status lists each rule, its keep and the rows past it, 1000+ past the cap"
run jobrun status --json
is "$(jpy 'json.dumps(d["retention"], sort_keys=True)' <<<"$out")" \
    '{"archive_table": "polling_jobs_archive", "past_cap": 1000, "rules": [{"keep_seconds": 3600, "past": 0, "past_capped": false, "status": "success", "type": "short"}, {"keep_seconds": 604800, "past": 1000, "past_capped": true, "status": "success", "type": null}, {"keep_seconds": 2592000, "past": 5, "past_capped": false, "status": "failed", "type": null}]}' \
    "status --json gives the same, the capped count flagged"
run jobrun check
is "$(grep "retention: \[" <<<"$out")" "ok       retention: [type.short] keep_success 1h, [run] keep_success 7d, [run] keep_failed 30d; past it, jobs are moved to archive_table polling_jobs_archive" \
    "check says what retention is configured"
run jobrun report --json
is "$(jpy 'json.dumps(d["retention"], sort_keys=True)' <<<"$out")" \
    "$(jobrun status --json | jpy 'json.dumps(d["retention"], sort_keys=True)')" \
    "report --json gives status's retention figures"
run jobrun report --html="$T/page.html"
is "$(sed -n '/<h2 id="retention">/,/<\/table>/p' "$T/page.html")" '<h2 id="retention">Retention</h2>
<p class="note">Finished jobs past their keep are moved to archive_table polling_jobs_archive, 1000 a run per rule; past 1000, the count stops.</p>
<table>
<thead><tr><th>Rule</th><th>Status</th><th class="n">Keep</th><th class="n">Past</th></tr></thead>
<tbody>
<tr><td>[type.short]</td><td>success</td><td class="n">1h</td><td class="n">0</td></tr>
<tr><td>[run]</td><td>success</td><td class="n">7d</td><td class="n">1000+</td></tr>
<tr><td>[run]</td><td>failed</td><td class="n">30d</td><td class="n">5</td></tr>
</tbody>
</table>' "and the report's page a table of them"
sed -i 's/^archive_table = .*/archive_table = no_archive/' "$CONF"
run jobrun check --json
is "$rc/$(jpy '[c["level"] + ": " + c["message"] for c in d["checks"] if "archive_table no_archive:" in c["message"]][0]' <<<"$out")" \
    "78/problem: retention moves nothing to archive_table no_archive: archive jobs in \`no_archive\`: prepare: Table '$DB.no_archive' doesn't exist" \
    "and that an archive_table it cannot fill is a problem"

# --- an archive the move cannot fill is a problem too: the server finds
# it when the insert is executed, not when it is prepared ---
sql "$(grep -v '^--' "$TOP/sql/010_attempts.sql")" ||
    bail_out "cannot load sql/010_attempts.sql"
sql "CREATE TABLE no_deadline LIKE polling_jobs_archive;
     ALTER TABLE no_deadline DROP COLUMN deadline;
     CREATE TABLE one_more LIKE polling_jobs_archive;
     ALTER TABLE one_more ADD COLUMN shelf INT NOT NULL" ||
    bail_out "cannot make the archives that lack a column"
# check_says ARCHIVE: check's exit status and its archive_table problem
# (MariaDB 10.11 finds an unknown column at EXECUTE and names the
# statement, MySQL at PREPARE and names the field list)
check_says() {
	sed -i "s/^archive_table = .*/archive_table = $1/" "$CONF"
	run jobrun check --json
	echo "$rc/$(jpy '[c["level"] + ": " + c["message"] for c in d["checks"] if "archive_table '"$1"':" in c["message"]][0]' <<<"$out")"
}
like "$(check_says no_deadline)" \
    "^78/problem: retention moves nothing to archive_table no_deadline: archive jobs in \`no_deadline\`: (prepare|execute): Unknown column 'deadline' in '(INSERT INTO|field list)'\$" \
    "an archive without the job table's deadline column is a problem"
# MySQL 8 says nothing of it for an insert of no row: not found there
if on_mysql; then
	skip 1 "MySQL: an insert of no row leaves a NOT NULL column unnoticed"
else
	is "$(check_says one_more)" \
	    "78/problem: retention moves nothing to archive_table one_more: archive jobs in \`one_more\`: execute: Field 'shelf' doesn't have a default value" \
	    "an archive with a NOT NULL column the move does not fill is a problem"
fi
is "$(check_says polling_jobs)" \
    "78/problem: retention moves nothing to archive_table polling_jobs: it is the job table itself" \
    "the job table itself as the archive is a problem"
like "$(check_says polling_jobs_attempts)" \
    "^78/problem: retention moves nothing to archive_table polling_jobs_attempts: archive jobs in \`polling_jobs_attempts\`: (prepare|execute): Unknown column 'business_key' in '(INSERT INTO|field list)'\$" \
    "the attempts table as the archive is a problem"

# --- sql/013's priority is moved with the job ---
sql "$(grep -v '^--' "$TOP/sql/013_priority.sql")" ||
    bail_out "cannot load sql/013_priority.sql"
sed -i "s/^archive_table = .*/archive_table = polling_jobs_archive/" "$CONF"
done_jobs 1 a success "INTERVAL 8 DAY"
sql "UPDATE polling_jobs SET priority = 7 WHERE business_key = 'a-success-$n_key-1'"
# (the rows the earlier runs left past their keep, older, go first)
run jobrun --json
run jobrun --json
is "$rc/$(sql "SELECT priority FROM polling_jobs_archive
    WHERE business_key = 'a-success-$n_key-1'")" "0/7" \
    "a job of priority 7 is archived with its priority 7"
# an archive of the earlier sql/012, without the column: check says so,
# and a run moves nothing rather than lose the priority
sql "CREATE TABLE no_priority LIKE polling_jobs_archive;
     ALTER TABLE no_priority DROP COLUMN priority" ||
    bail_out "cannot make the archive without priority"
like "$(check_says no_priority)" \
    "^78/problem: retention moves nothing to archive_table no_priority: archive jobs in \`no_priority\`: (prepare|execute): Unknown column 'priority' in '(INSERT INTO|field list)'\$" \
    "an archive without priority, on a job table with it, is a problem"
done_jobs 1 a success "INTERVAL 8 DAY"
run jobrun --json
is "$rc/$(jget deleted <<<"$out")/$(count no_priority)" "0/0/0" \
    "and a run moves nothing into it"
