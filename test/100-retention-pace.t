#!/bin/bash
# Retention in turns (issue 27 item 3, sql/014_retention_pace.sql): with
# the table, a run deletes its batch only when no run on the job table
# took retention's turn within [run] keep_every, by the server's clock, so
# runs started back to back, or many at once, delete one batch per rule
# and keep_every, not one per run.  The turn moves keep_every on from the
# moment it is taken; a turn further off than two keep_every (the server's
# clock went back, keep_every was shortened) is taken at once.  Without
# the table, without its grant, or with keep_every = 0, every run deletes
# its batch, as before.  check says which.
. "${0%/*}/lib.sh"

plan 27
use_own_server
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/014_retention_pace.sql" || bail_out "cannot apply sql/014"

conf() {	# conf KEEP_EVERY
	write_config <<EOF2
[run]
keep_success = 7d
keep_every = $1

[type.a]
handler = noop
EOF2
}
n_key=0
old_jobs() {	# old_jobs N: N success jobs finished 10 days ago
	n_key=$((n_key + 1))
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	        next_run_at, created_at, updated_at, finished_at)
	     SELECT CONCAT('old-$n_key-', seq), 'a', 'success', 1,
	            NOW() - INTERVAL 10 DAY, NOW() - INTERVAL 10 DAY,
	            NOW() - INTERVAL 10 DAY, NOW() - INTERVAL 10 DAY
	       FROM seq_1_to_$1"
}
left() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'"
}
# The server's Unix time, as retention's turns read it, and the turn's
NOW_EPOCH="(UNIX_TIMESTAMP() + MICROSECOND(NOW(6)) / 1000000)"
next_at() {
	sql "SELECT next_at FROM jobrun_retention WHERE job_table = 'polling_jobs'"
}
# ms_left: milliseconds from now to the next turn (negative: due)
ms_left() {
	sql "SELECT ROUND((next_at - $NOW_EPOCH) * 1000) FROM jobrun_retention
	     WHERE job_table = 'polling_jobs'"
}

# --- one turn in keep_every, runs back to back ---------------------------------

conf 60
old_jobs 5000
run jobrun --json
is "$rc/$(jget deleted <<<"$out")" "0/1000" "the first run takes the turn and deletes its batch"
left_between "$(( $(ms_left) / 1000 ))" 50 60 \
    "and moves the next turn keep_every (60 s) on, by the server's clock"
run jobrun --json -vv
is "$(jget deleted <<<"$out")/$(left)" "0/4000" \
    "a run started right after it deletes nothing: the turn is taken"
like "$err" "retention: another run took the turn within keep_every \\(60s\\)" \
    "and says why with -vv"

# Eight runs at once: one batch between them, however they interleave.
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH - 1"
pids=()
for i in 1 2 3 4 5 6 7 8; do
	jobrun --json >"$T/many.$i" 2>"$T/many.$i.err" &
	pids+=($!)
done
wait "${pids[@]}"
total=0
for i in 1 2 3 4 5 6 7 8; do
	total=$((total + $(jget deleted <"$T/many.$i")))
done
is "$total/$(left)" "1000/3000" "eight runs started at once delete one batch between them"

# A run whose statement waited for the row while another run took the
# turn: its "now" is its statement's start, before the other's, so the
# turn it finds is more than keep_every off.  It must not take it too (it
# did, when only one keep_every was allowed for a clock gone back: two
# turns in one, seen under stress-ng).  The other run here is a session
# holding the row's lock until the run's statement waits for it, then
# moving the turn to 62 s after its own now.
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH - 1"
# turn_started: the run's statement that takes the turn has started (its
# "now" is fixed) and waits for the row, which the other session holds
turn_started() {
	[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE 'INSERT INTO%jobrun_retention%'")" -gt 0 ]
}
other_start
other_send "BEGIN; SELECT 'held' FROM jobrun_retention WHERE job_table = 'polling_jobs' FOR UPDATE;"
wait_for 10 file_has "$T/other.out" '^held$'
jobrun --json >"$T/late.out" 2>"$T/late.err" &
late=$!
wait_for 20 turn_started
other_send "UPDATE jobrun_retention SET next_at = $NOW_EPOCH + 62 WHERE job_table = 'polling_jobs'; COMMIT;"
wait "$late"
other_end
is "$(jget deleted <"$T/late.out")/$(left)" "0/3000" \
    "a run that waited for the row while another took the turn does not take it too"
is "$(cat "$T/late.err")" "" "and had nothing to warn of (its statement got the row, not a lock wait timeout)"

# A turn further off than twice keep_every: the clock went back, or
# keep_every was shortened since.  Taken at once, not waited for; one
# inside twice keep_every is waited for.
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH + 115"
run jobrun --json
is "$(jget deleted <<<"$out")" 0 "a turn 115 s off (inside twice keep_every, 120 s) is waited for"
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH + 130 + ${JOBRUN_TEST_SLACK:-0}"
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "a turn 130 s off (past twice keep_every) is taken at once"
left_between "$(( $(ms_left) / 1000 ))" 50 60 "and moved keep_every on from now"

# The session's time zone moves no turn: Unix time, by the server's clock.
# A run 13 hours east takes a due turn; one 12 hours west right after it
# finds it taken (a turn read in local time would be 25 hours off to it,
# past twice keep_every, and taken again).
in_zone() {	# in_zone ZONE: the configuration with [database] time_zone
	sed -i '/^time_zone = /d; s/^\(database = .*\)$/\1\ntime_zone = '"$1"'/' "$CONF"
}
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH - 1"
in_zone +13:00
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "a run at time_zone +13:00 takes the due turn"
in_zone -12:00
run jobrun --json
is "$rc/$(jget deleted <<<"$out")" "0/0" "a run at -12:00 right after it finds the turn taken"

# --- the interval itself: keep_every = 5 -------------------------------------

# 20 under valgrind, where a run beside other load took over 5 s (so that
# none started inside the interval to be turned away).
every=5
under_valgrind && every=20
conf "$every"
old_jobs 5000
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH - 1"
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "keep_every = $every: a run takes the due turn"
first=$(next_at)
# Runs back to back until one deletes again; each run that started while
# the turn was not due deletes nothing.
skipped=0 deleted=0 start=$SECONDS
while [ $((SECONDS - start)) -lt $((3 * every + ${JOBRUN_TEST_SLACK:-0})) ]; do
	before=$(ms_left)
	run jobrun --json
	deleted=$(jget deleted <<<"$out")
	[ "$deleted" != 0 ] && break
	[ "$before" -gt 0 ] && skipped=$((skipped + 1))
done
second=$(next_at)
is "$deleted" 1000 "a run after the turn came round deletes its batch"
ok "runs started before it deleted nothing ($skipped of them)" \
    test "$skipped" -gt 0
gap_ms=$(sql "SELECT ROUND(($second - $first) * 1000)")
# The second turn was taken no sooner than the first's next_at (the
# interval itself, to the microsecond, by the server's clock), and by the
# first run whose turn came after it: within two runs' length (two
# seconds here, loaded; JOBRUN_TEST_SLACK more under valgrind).
took_between_ms "$gap_ms" $((every * 1000)) $((every * 1000 + 2000)) \
    "two turns are keep_every apart at least, and the next is not lost ($gap_ms ms)"

# --- keep_every = 0: every run deletes -----------------------------------------

conf 0
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "keep_every = 0: a run deletes its batch"
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "and so does the next, back to back"

# --- check says how retention is paced ---------------------------------------

conf 5
sql "UPDATE jobrun_retention SET next_at = $NOW_EPOCH + 100"
run jobrun check
like "$(grep "retention's pace" <<<"$out")" \
    "^ok +retention's pace: one turn in 5s for all runs on this table \\(table jobrun_retention\\), the next in [0-9]+s$" \
    "check says retention goes in turns, and when the next is"
run jobrun status
like "$out" "Retention: finished jobs past their keep are deleted, 1000 per rule a turn, one turn in 5s for all runs \\(the next in ([5-9][0-9]|100)s\\):" \
    "status says so too"
run jobrun status --json
is "$(jpy '"%d %s" % (d["retention"]["turns"]["keep_every_seconds"], 50 <= d["retention"]["turns"]["next_in_seconds"] <= 100)' <<<"$out")" \
    "5 True" "and status --json gives keep_every and the seconds to the next turn"

# --- an account without the table's grant: every run deletes, no warning ----------

user=r100_${RANDOM}
sql "CREATE USER '$user'@'localhost' IDENTIFIED BY 'pw100';
     GRANT SELECT, INSERT, UPDATE, DELETE ON \`$DB\`.polling_jobs TO '$user'@'localhost'"
defer "sql \"DROP USER '$user'@'localhost'\""
sed -i "s/^user = root\$/user = $user/" "$CONF"
old_jobs 2000
run env JOBRUN_DB_PASSWORD=pw100 "$JOBRUN" --config="$CONF" --json
is "$rc/$(jget deleted <<<"$out")" "0/1000" \
    "an account that cannot see the table deletes its batch (the turn 100 s off is not its to see)"
is "$err" "" "and warns of nothing: the table is optional"
run env JOBRUN_DB_PASSWORD=pw100 "$JOBRUN" check --config="$CONF" --json
is "$(jpy '[c["level"] + ": " + c["fix"] for c in d["checks"] if c["message"].startswith("retention'"'"'s pace")][0]' <<<"$out")" \
    "advice: apply sql/014_retention_pace.sql if \`$DB\`.\`jobrun_retention\` does not exist, then GRANT SELECT, INSERT, UPDATE ON \`$DB\`.\`jobrun_retention\` TO '$user'@'localhost'" \
    "and check advises the GRANT that would pace it"

# --- without the table: as before, every run deletes ------------------------------

sed -i "s/^user = $user\$/user = root/" "$CONF"
sql "DROP TABLE jobrun_retention"
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "without the table a run deletes its batch"
run jobrun --json
is "$(jget deleted <<<"$out")" 1000 "and so does the next, back to back"
run jobrun check --json
is "$(jpy '[c["level"] + ": " + c["message"] + " / " + c["fix"] for c in d["checks"] if "paced" in c["message"]][0]' <<<"$out")" \
    "advice: retention is not paced: each run deletes its batch, so runs started back to back delete as fast as they start (table jobrun_retention absent) / apply sql/014_retention_pace.sql" \
    "check advises the table, and says what is missed without it"
