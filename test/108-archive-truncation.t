#!/bin/bash
# Retention's archive keeps a job whole or not at all, whatever the
# server's sql_mode.  On a non-strict server (sql_mode '') an insert cuts
# a value too long for its column and only warns; the move then deleted
# the job it had not kept whole (an archive with last_error VARCHAR(3)
# got 'boo' for 'boom').  Now an insert that made the server warn fails:
# the batch is rolled back, nothing is deleted, the run says why, and
# "jobrun check" reports an archive whose insert of no row warns (a NOT
# NULL column the move leaves empty).  Its own server: SET GLOBAL.
. "${0%/*}/lib.sh"

plan 8
use_own_server
setup_db
sql "$(grep -v '^--' "$TOP/sql/012_archive.sql")" ||
    bail_out "cannot load sql/012_archive.sql"
sql "ALTER TABLE polling_jobs_archive MODIFY last_error VARCHAR(3) NULL" ||
    bail_out "cannot narrow the archive's last_error"
sql "SET GLOBAL sql_mode = ''" || bail_out "cannot clear the global sql_mode"
[ -z "$(sql "SELECT @@GLOBAL.sql_mode")" ] ||
    bail_out "fixture: the server's sql_mode is not ''"
write_config <<EOF2
[run]
keep_failed = 7d
archive_table = polling_jobs_archive

[type.a]
handler = noop
EOF2
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, last_error, created_at, updated_at, finished_at)
     VALUES ('boom', 'a', 'failed', 5, NOW() - INTERVAL 10 DAY, 'boom',
             NOW() - INTERVAL 10 DAY, NOW() - INTERVAL 10 DAY,
             NOW() - INTERVAL 10 DAY)"

run jobrun --json
is "$rc/$(jget deleted <<<"$out")" "0/0" \
    "a run whose archive insert would cut a value exits 0 and moves nothing"
is "${err#ts=* }" 'level=warn msg="retention: archive jobs in `polling_jobs_archive`: the server warned 1 time(s) (a value cut to fit its column, a NOT NULL column left empty, under a non-strict sql_mode?), so the rows would not be kept as they are; finished jobs are kept until it works"' \
    "and warns that the server warned"
is "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'boom'")" boom \
    "the job stays in the job table, whole"
is "$(sql "SELECT COUNT(*) FROM polling_jobs_archive")" 0 \
    "and nothing of it is in the archive"

# An archive with a NOT NULL column the move leaves empty: a strict
# server refuses its insert, a non-strict one warns.
sql "CREATE TABLE one_more LIKE polling_jobs_archive;
     ALTER TABLE one_more MODIFY last_error TEXT NULL,
         ADD COLUMN shelf INT NOT NULL" ||
    bail_out "cannot make the archive with a column more"
sed -i 's/^archive_table = .*/archive_table = one_more/' "$CONF"
if on_mysql; then
	skip 1 "MySQL: an insert of no row leaves a NOT NULL column unnoticed"
else
	run jobrun check --json
	is "$rc/$(jpy '[c["level"] + ": " + c["message"] for c in d["checks"] if "archive_table one_more:" in c["message"]][0]' <<<"$out")" \
	    "78/problem: retention moves nothing to archive_table one_more: archive jobs in \`one_more\`: the server warned 1 time(s) (a value cut to fit its column, a NOT NULL column left empty, under a non-strict sql_mode?), so the rows would not be kept as they are" \
	    "check reports an archive whose insert warns, on a non-strict server"
fi

# With last_error wide enough the same job moves.
sed -i 's/^archive_table = .*/archive_table = polling_jobs_archive/' "$CONF"
sql "ALTER TABLE polling_jobs_archive MODIFY last_error TEXT NULL"
run jobrun --json
is "$rc/$(jget deleted <<<"$out")/$err" "0/1/" \
    "once the archive can hold it, the job moves, silently"
is "$(sql "SELECT last_error FROM polling_jobs_archive")" boom \
    "whole"
is "$(sql "SELECT COUNT(*) FROM polling_jobs")" 0 \
    "and leaves the job table"
