#!/bin/bash
# Retention (issue 27 item 3): [run] keep_success and keep_failed, and a
# type's own, keep the table small without a purge of its own.  Each run,
# before its first claim, deletes at most 1000 success and 1000 failed
# jobs finished longer ago than that (per rule), oldest first; a type with
# its own keep_* keeps its rows that long (0: for ever), every other type,
# configured or not, as [run] says.  Pending and processing jobs are never
# touched.  A run that cannot delete warns and goes on.  A type's own rule
# walks idx_type_pick (sql/001_type_pick.sql) when the table has it, so
# other types' old rows are not read (Handler_read_*, on a server of this
# file's own), and idx_pick when not.
. "${0%/*}/lib.sh"

plan 22
use_own_server
setup_db
write_config <<EOF2
[run]
keep_success = 7d
keep_failed = 30d

[type.a]
handler = noop

[type.keepme]
handler = noop
keep_success = 0

[type.short]
handler = noop
keep_success = 1h
EOF2

# done N TYPE STATUS AGE-SQL: N jobs of TYPE in STATUS that finished (and
# were due) AGE-SQL ago, keys TYPE-STATUS-AGE...
n_key=0
done_jobs() {
	n_key=$((n_key + 1))
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	        next_run_at, created_at, updated_at, finished_at)
	     SELECT CONCAT('$2-$3-$n_key-', seq), '$2', '$3', 1,
	            NOW() - $4, NOW() - $4, NOW() - $4, NOW() - $4
	       FROM seq_1_to_$1"
}
# left TYPE STATUS: how many rows of TYPE in STATUS remain
left() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE type = '$1' AND status = '$2'"
}

done_jobs 1500 a success "INTERVAL 10 DAY"
done_jobs 10 other success "INTERVAL 10 DAY"
# NOW() - INTERVAL 7 DAY - INTERVAL 60 SECOND: a minute past keep_success
done_jobs 1 a success "INTERVAL 7 DAY - INTERVAL 60 SECOND"
# NOW() - INTERVAL 7 DAY + INTERVAL 60 SECOND: a minute inside it
done_jobs 1 a success "INTERVAL 7 DAY + INTERVAL 60 SECOND"
done_jobs 30 a failed "INTERVAL 40 DAY"
done_jobs 10 a failed "INTERVAL 20 DAY"
done_jobs 50 keepme success "INTERVAL 100 DAY"
done_jobs 10 short success "INTERVAL 2 HOUR"
done_jobs 5 short success "INTERVAL 30 MINUTE"
sql "INSERT INTO polling_jobs (business_key, type, status, next_run_at,
        created_at, updated_at)
     VALUES ('old-pending', 'other', 'pending', NOW() - INTERVAL 90 DAY,
             NOW(), NOW())"

run jobrun --json
is "$rc" 0 "a run with nothing due exits 0"
is "$(jget deleted <<<"$out")" 1040 \
    "the first run deletes one batch per rule: 1000 success, 10 of short's, 30 failed"
is "$(left short success)" 5 "short (keep_success = 1h): its two-hour-old jobs go, the recent stay"
is "$(left a failed)" 10 "failed jobs 40 days old go, 20 days old stay (keep_failed = 30d)"
is "$(left keepme success)" 50 "keepme (keep_success = 0) keeps its jobs for ever"
run jobrun --json --metrics-file="$T/prom"
is "$(jget deleted <<<"$out")" 511 "the next run deletes the rest"
like "$(cat "$T/prom")" "jobrun_run_deleted 511" "the metrics file says how many"
is "$(left other success)" 0 "a type with no section here goes by [run]'s rule"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'a' AND status = 'success'")" 1 \
    "of type a, only the job inside the 7 days is left"
is "$(sql "SELECT finished_at > NOW() - INTERVAL 7 DAY FROM polling_jobs
    WHERE type = 'a' AND status = 'success'")" 1 \
    "the job finished 7 days less a minute ago stays; 7 days and a minute ago went"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'old-pending'")" \
    pending "a pending job, however old, is never deleted"
run jobrun --json -v
is "$(jget deleted <<<"$out")" 0 "then nothing is left to delete"
unlike "$err" "retention" "and the run says nothing of it"

# --- without keep_*: nothing is deleted (the default keeps for ever) ---
write_config <<EOF2
[type.a]
handler = noop
EOF2
done_jobs 5 a success "INTERVAL 1000 DAY"
run jobrun --json
is "$(jget deleted <<<"$out")/$(left a success)" "0/6" \
    "by default finished jobs are kept for ever"

# --- an account that may not delete: a warning, and the jobs still run ---
user=r89_${RANDOM}
sql "CREATE USER '$user'@'localhost' IDENTIFIED BY 'pw89';
     GRANT SELECT, INSERT, UPDATE ON \`$DB\`.polling_jobs TO '$user'@'localhost'"
defer "sql \"DROP USER '$user'@'localhost'\""
cat >"$CONF" <<EOF2
[database]
socket = $JOBRUN_TEST_SOCKET
user = $user
database = $DB

[run]
keep_success = 7d

[type.a]
handler = noop
EOF2
insert_job due-now a
run env JOBRUN_DB_PASSWORD=pw89 "$JOBRUN" --config="$CONF" --json
is "$rc" 0 "a run whose retention is denied still exits 0"
is "$(jget succeeded <<<"$out")/$(jget deleted <<<"$out")" "1/0" \
    "it runs the due job and deletes nothing"
like "$err" "retention: .*DELETE.*denied|retention: .*denied" \
    "and warns why the table is not kept small"
is "$(left a success)" 7 "the old jobs are all still there"

# --- a type's rule reads its own rows, not the other types' ---
write_config <<EOF2
[type.short]
handler = noop
keep_success = 1h
EOF2
reads() {
	sql "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}
done_jobs 5000 bulk success "INTERVAL 2 DAY"
done_jobs 10 short success "INTERVAL 2 HOUR"
before=$(reads)
run jobrun --json
after=$(reads)
is "$(jget deleted <<<"$out")/$(left short success)/$(left bulk success)" \
    "10/5/5000" "without idx_type_pick, a type's rule deletes through idx_pick"
without=$((after - before))
ok "and reads the other type's old rows on the way ($without reads)" \
    test "$without" -ge 5000
sql "$(grep -v '^--' "$TOP/sql/001_type_pick.sql")"
done_jobs 10 short success "INTERVAL 2 HOUR"
before=$(reads)
run jobrun --json
after=$(reads)
is "$(jget deleted <<<"$out")/$(left short success)/$(left bulk success)" \
    "10/5/5000" "with idx_type_pick, the same rule deletes the same rows"
# Both runs read as much besides (MySQL's data dictionary counts some
# hundreds); the one through idx_type_pick skips the 5000 rows.
ok "reading the 5000 rows of another type fewer ($((after - before)) reads, $without before)" \
    test $((without - (after - before))) -ge 4900
