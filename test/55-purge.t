#!/bin/bash
# purge: deletes success or failed rows that finished before the cutoff
# (--older-than: 3600s, 90m, 12h, 30d, 2w), of one type or all, in
# statements of at most 1000 rows; --dry-run only counts.  Rows finished
# after the cutoff, and rows of other statuses or types, stay.  An empty
# table is not an error.
. "${0%/*}/lib.sh"

plan 47
# Its own server: Com_delete is global, and another test file's
# statements would count in it.
use_own_server
setup_db
write_config <<EOF2
[type.a]
handler = noop
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
com() {
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B -e \
	    "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2
}
# dry N DESC ARG...: purge --dry-run with ARGs counts N and deletes nothing
dry() {
	local n=$1 desc=$2 before
	shift 2
	before=$(count)
	run jobrun purge --dry-run --json "$@"
	is "$rc/$(jget count <<<"$out")/$(jget dry_run <<<"$out")/$(count)" \
	    "0/$n/true/$before" "$desc"
}

# --- an empty table ------------------------------------------------------------

run jobrun purge --status=success --older-than=30d --json
is "$rc/$out" '0/{"count":0,"dry_run":false}' "purge on an empty table: count 0, exit 0"
run jobrun purge --status=failed --older-than=0s
is "$rc/$out" "0/purge: 0 job(s)" "as text: purge: 0 job(s)"
run jobrun purge --status=success --older-than=1h --dry-run
is "$rc/$out" "0/purge: 0 job(s) would be deleted (dry run)" "--dry-run on an empty table"

# --- rows of every kind ----------------------------------------------------------

# add N KEY TYPE STATUS NEXT-RUN-AGO FINISHED-AGO (intervals, or NULL)
add() {
	local fin=NULL
	[ "$6" != NULL ] && fin="NOW() - INTERVAL $6"
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	        next_run_at, created_at, updated_at, finished_at)
	     SELECT CONCAT('$2:', seq), '$3', '$4', 1, NOW() - INTERVAL $5,
	        NOW() - INTERVAL 60 DAY, NOW(), $fin
	     FROM seq_1_to_$1"
}
add 2500 old a success '41 DAY' '40 DAY'
add 300 newer a success '40 DAY' '1 DAY'	# due long ago, finished lately
add 50 recent a success '3 HOUR' '2 HOUR'
add 200 failed a failed '41 DAY' '40 DAY'
add 100 pending a pending '40 DAY' NULL
add 20 processing a processing '40 DAY' NULL
add 400 other b success '41 DAY' '40 DAY'
total=$(count)
is "$total" 3570 "3570 rows"

# --- --dry-run and the durations -----------------------------------------------

dry 2500 "--dry-run --type=a --older-than=30d counts the 2500 old ones, deletes nothing" \
    --status=success --older-than=30d --type=a
dry 2900 "--older-than=2w: the old ones of both types" --status=success --older-than=2w
dry 3200 "--older-than=12h: and those finished a day ago" --status=success --older-than=12h
dry 3200 "--older-than=3h: not those finished 2 hours ago" --status=success --older-than=3h
dry 3250 "--older-than=90m: those too" --status=success --older-than=90m
dry 3250 "--older-than=3600s: the same" --status=success --older-than=3600s
dry 0 "--older-than=6w: none (40 days is younger)" --status=success --older-than=6w
dry 200 "--status=failed --older-than=30d: the 200 failed" --status=failed --older-than=30d
dry 0 "--status=failed --type=b: none" --status=failed --older-than=0s --type=b
run jobrun purge --status=success --older-than=30d --type=a --dry-run
is "$out" "purge: 2500 job(s) would be deleted (dry run)" "--dry-run as text"

# --- purge -------------------------------------------------------------------

deletes=$(( $(com Com_delete) + $(com Com_delete_multi) ))
run jobrun purge --status=success --older-than=30d --type=a --json
deletes=$(( $(com Com_delete) + $(com Com_delete_multi) - deletes ))
is "$rc" 0 "purge exits 0"
is "$(jkeys <<<"$out")" count,dry_run "--json has count and dry_run"
is "$(jget count <<<"$out")/$(jget dry_run <<<"$out")" 2500/false "it deleted 2500"
is "$(count "business_key LIKE 'old:%'")" 0 "exactly the old success rows of type a are gone"
is "$(count "business_key LIKE 'newer:%'")" 300 "the ones finished a day ago stay (though due 40 days ago)"
is "$(count "business_key LIKE 'recent:%'")" 50 "the ones finished 2 hours ago stay"
is "$(count "status = 'failed'")/$(count "status = 'pending'")/$(count "status = 'processing'")" \
    200/100/20 "failed, pending and processing rows stay"
is "$(count "type = 'b'")" 400 "type b's old rows stay"
is "$(count)" $((total - 2500)) "nothing else was deleted"
is "$deletes" 3 "in 3 statements of at most 1000 rows (1000, 1000, 500: the last finds fewer)"

run jobrun purge --status=success --older-than=30d
is "$rc/$out" "0/purge: 400 job(s)" "without --type: type b's 400 old rows"
is "$(count "type = 'b'")" 0 "they are gone"
run jobrun purge --status=success --older-than=30d --json
is "$rc/$(jget count <<<"$out")" 0/0 "run again: nothing left to purge, exit 0"

run jobrun purge --status=failed --older-than=30d --json
is "$(jget count <<<"$out")/$(count "status = 'failed'")" 200/0 "--status=failed deletes the 200 failed rows"
run jobrun purge --status=success --older-than=12h --json
is "$(jget count <<<"$out")/$(count "business_key LIKE 'newer:%'")" 300/0 \
    "--older-than=12h: the rows finished a day ago"
run jobrun purge --status=success --older-than=0s --json
is "$(jget count <<<"$out")/$(count "status = 'success'")" 50/0 "--older-than=0s: every success row"
is "$(count "status IN ('pending', 'processing')")/$(count)" 120/120 \
    "only the 120 pending and processing rows are left"

# --- a database error ------------------------------------------------------------

# Without idx_pick no purge statement can be prepared: a dry run has no
# count to print; a purge says it deleted none.  Both exit 78.
sql "ALTER TABLE polling_jobs DROP INDEX idx_pick"
run jobrun purge --status=success --older-than=0s --dry-run
is "$rc/$out" "78/" "--dry-run after a database error: exit 78, no count"
like "$err" "idx_pick" "the error names the missing index"
run jobrun purge --status=success --older-than=0s --json
is "$rc/$out" '78/{"count":0,"dry_run":false}' \
    "a purge stopped by a database error says it deleted 0, exit 78"
sql "ALTER TABLE polling_jobs ADD KEY idx_pick (status, next_run_at, id)"

# --- usage ---------------------------------------------------------------

run jobrun purge --status=pending --older-than=1d
is "$rc" 64 "--status=pending exits 64"
like "$err" 'purge needs --status=success or --status=failed' "the message says which"
run jobrun purge --older-than=1d
is "$rc" 64 "no --status exits 64"
run jobrun purge --status=success
is "$rc" 64 "no --older-than exits 64"
like "$err" 'purge needs --older-than' "the message says so"
for bad in 5y 1.5h -1 d 3651d; do
	run jobrun purge --status=success --older-than="$bad"
	is "$rc" 64 "--older-than=$bad exits 64"
done
is "$err" "jobrun: --older-than: not a duration such as 90s, 90m, 12h, 30d or 2w: \"3651d\"
Try 'jobrun --help'." "the message shows the forms"
run jobrun purge --status=success --older-than=3650d --dry-run
is "$rc" 0 "--older-than=3650d (ten years) is accepted"
is "$(count)" 120 "no row deleted by a usage error or a dry run"
