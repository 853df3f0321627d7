#!/bin/bash
# The claim's cursor, and its bound.  A run's claims after the first start
# their scan just past the last job the run claimed, in (next_run_at, id)
# order (in priority order, a cursor per level: the last part); a job that becomes due behind that point (inserted with an
# earlier next_run_at, recovered with its old one) is not seen by those
# claims, but a claim that starts a second or more after the last claim
# from the head of the queue scans from the head again (man/jobrun.7, The
# run: Claim).  Here one runner works through a backlog of due jobs with
# an exec handler that appends each job's id to a file (so the file is
# the order of the claims); while it runs, jobs are put behind its cursor
# one at a time, and each must be claimed within the second (plus the job
# in hand and this test's polling); then a SIGTERM stops it, and every
# job it claimed must have run exactly once, the backlog's in
# (next_run_at, id) order, and the rest must be untouched.  Both claims: idx_pick over
# two types, then --type on idx_type_pick, where a job whose type differs
# from the runner's only by case stays untouched behind the cursor too.
. "${0%/*}/lib.sh"

# (the plan is at the end: cursor_shown may put more jobs behind, each
# with its own assertion)
setup_db
write_config <<EOF
[run]
batch_size = 100000
max_seconds = 600

[type.work]
handler = exec
command = $HANDLERS/append-id $T/ids

[type.other]
handler = noop
EOF

# The backlog must outlast the jobs put behind the cursor (nearly a
# second each, some 3 s in all on a quiet machine, where 2000 jobs were
# gone before the fourth).  The run is stopped by a SIGTERM once they
# are claimed, so it need not drain the backlog: a backlog sized to drain
# within the run's time (from a measured rate) was cut short when the
# machine slowed fourfold after the measure (issue 31, ASan beside
# stress-ng and other work).  How fast this exec handler goes depends on
# the build (a quiet machine: some 300 jobs a second, 130 under ASan, 30
# under valgrind), so the backlog is 8000 and the SIGTERM ends the run.
backlog=8000
bound_ms=1000		# src/queue_sql.h QUEUE_CURSOR_MS, as man/jobrun.7 documents it

# fill FIRST-KEY: $backlog due jobs of type work, all due a minute ago (so
# they are claimed in id order), keys FIRST-KEY:1..
fill() {
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('$1:', seq), 'work', NOW() - INTERVAL 1 MINUTE,
	        NOW(), NOW()
	     FROM seq_1_to_$backlog"
}

lines() {
	if [ -e "$T/ids" ]; then wc -l <"$T/ids"; else echo 0; fi
}
# count_ok KEY...: how many of the jobs KEY... succeeded
count_ok() {
	local k list=
	for k; do list+="${list:+,}'$k'"; done
	sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
	     AND business_key IN ($list)"
}
# in_order PREFIX NAME: the backlog PREFIX:... ran as far as the run got in
# (next_run_at, id) order, and the jobs after them are still due, untouched
in_order() {
	local all ran_ids k
	all=$(sql "SELECT id FROM polling_jobs WHERE business_key LIKE '$1:%'
	    ORDER BY next_run_at, id")
	ran_ids=$(grep -Fxf <(printf '%s\n' "$all") "$T/ids")
	k=$(grep -c . <<<"$ran_ids")
	is "$(tr '\n' ' ' <<<"$ran_ids")/$(sql "SELECT COUNT(*) FROM polling_jobs
	    WHERE business_key LIKE '$1:%' AND status = 'pending'
	    AND attempts = 0")" \
	    "$(head -n "$k" <<<"$all" | tr '\n' ' ')/$((backlog - k))" "$2"
}
has_lines() {
	[ "$(lines)" -ge "$1" ]
}
more_or_ended() {
	has_lines "$1" || proc_gone "$bg_pid"
}
claimed() {
	job_is "$1" "status <> 'pending'"
}
# freed_ms KEY: when job KEY was recovered, by the server's clock (claim_at)
freed_ms() {
	sql "SELECT freed_ms FROM claim_at WHERE id = $(id_of "$1")"
}
# claimed_ms KEY: when job KEY was last claimed, by the server's clock (the
# moment the claim changed its row, in ms: trigger claim_at)
claimed_ms() {
	sql "SELECT at_ms FROM claim_at WHERE id = $(id_of "$1")"
}
id_of() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '$1'"
}

# put_behind KIND KEY: make job KEY due behind the runner's cursor, then
# wait for its claim; appends "KEY wait_ms passed" to $T/behind (wait_ms
# from due to claimed by the server's clock: claim_at), where
# passed is how many jobs the runner ran after KEY was due and before it
# (at most 2 without a cursor: the job in hand, and a claim already
# running when KEY became due).  The job put behind before it was
# claimed from the head, which starts the cursor's second again; three
# jobs later the cursor is in the backlog again (two claims past the
# tenth's), and KEY goes in behind it at once, so that it waits most of
# the second: the more of it, the more jobs pass it however slow the
# machine (issue 31: beside stress-ng under valgrind, some 11 jobs a
# second, five jobs' wait left too little of it to pass five).
put_behind() {
	local kind=$1 key=$2 before t0 t1 pos
	wait_for 60 more_or_ended $(( $(lines) + 3 )) ||
	    bail_out "the runner does not get on"
	if proc_gone "$bg_pid"; then
		# (the last one waited till the backlog was done)
		echo "$key run-ended-first -" >>"$T/behind"
		return
	fi
	# before: the jobs done when KEY became due (read in the same
	# session, at once: the job in hand may finish a moment later).
	case $kind in
	insert)
		# Due an hour ago: in front of every job of the backlog.
		# t0 is read before the INSERT: the run's claim can take
		# the row while the INSERT commits, before a read after it.
		read -r before t0 < <(sql "SET @t0 = ROUND(UNIX_TIMESTAMP(NOW(6)) * 1000);
		     INSERT INTO polling_jobs (business_key,
		        type, next_run_at, created_at, updated_at$level_col)
		     VALUES ('$key', 'work', NOW() - INTERVAL 1 HOUR, NOW(), NOW()$level_val);
		     SELECT COUNT(*), @t0
		     FROM polling_jobs WHERE status = 'success'")
		;;
	recover)
		# A dead runner's job, due before the backlog: its lock ends
		# now, and another run (of another type, so that it claims
		# nothing) recovers it.
		expire_lock "$key"
		jobrun --type=other -q || bail_out "the recovering run failed"
		t0=$(freed_ms "$key")
		before=$(sql "SELECT COUNT(*) FROM polling_jobs
		    WHERE status = 'success'")
		job_is "$key" "status = 'pending' OR attempts = 2" ||
		    bail_out "$key was not recovered"
		;;
	esac
	wait_for 60 claimed "$key" || bail_out "$key was never claimed"
	t1=$(claimed_ms "$key")
	wait_for 10 file_has "$T/ids" "^$(id_of "$key")\$" ||
	    bail_out "$key's handler did not run"
	pos=$(grep -n "^$(id_of "$key")\$" "$T/ids" | cut -d: -f1)
	echo "$key $((t1 - t0)) $((pos - 1 - before + done0))" >>"$T/behind"
}

# (the last part's: jobs put behind at a level)
level_col= level_val=

# most_passed: the most jobs claimed past one put behind, so far
most_passed() {
	awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$T/behind"
}

# cursor_shown PREFIX: while no job put behind has seen 3 claims pass it
# (what shows the cursor: without it, at most 2), up to 6 more, PREFIX:1..,
# their keys in more.  How many pass depends on how much of the cursor's
# second is left once this test, between the claims, has seen three jobs
# run and inserted: valgrind beside stress-ng, in priority order, 2, 0, 1
# and 2 (a fresh clone's make check at 6401355); with the cursor unused
# every one of them shows 2 or fewer.
more=()
cursor_shown() {
	local i
	more=()
	for i in 1 2 3 4 5 6; do
		[ "$(most_passed)" -lt 3 ] || return 0
		put_behind insert "$1:$i"
		more+=("$1:$i")
	done
}

# claim_at: when each job was last claimed (at_ms) and last given back to
# pending from processing (freed_ms: recovered), by the server's clock, so
# that how long a job waited is judged where jobrun decides it, not by
# this test's polling, which a loaded machine slows.  SYSDATE(6), the
# moment the row changes: NOW(6) is its statement's start, and a claim
# that started before a job was inserted can still take it (it waits for
# the INSERT's lock on the row), which read as a claim before the job was
# due (-28 ms, an ASan pass of make check, issue 31).
sql "CREATE TABLE claim_at (id BIGINT UNSIGNED PRIMARY KEY, at_ms BIGINT,
       freed_ms BIGINT);
     CREATE TRIGGER claim_at AFTER UPDATE ON polling_jobs FOR EACH ROW
       INSERT INTO claim_at (id, at_ms, freed_ms)
       SELECT NEW.id, IF(NEW.status = 'processing', m.ms, NULL),
          IF(NEW.status = 'pending', m.ms, NULL)
        FROM (SELECT ROUND(UNIX_TIMESTAMP(SYSDATE(6)) * 1000) AS ms) AS m
        WHERE (NEW.status = 'processing') <> (OLD.status = 'processing')
       ON DUPLICATE KEY UPDATE at_ms = COALESCE(VALUES(at_ms), at_ms),
          freed_ms = COALESCE(VALUES(freed_ms), freed_ms)" ||
    bail_out "cannot create the claim_at trigger"

# --- idx_pick, two types ------------------------------------------------------

done0=0		# jobs done before this run's
fill a
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, locked_by, locked_until, created_at, updated_at)
     VALUES ('dead:1', 'work', 'processing', 1, NOW() - INTERVAL 2 MINUTE,
        'ghost-runner', NOW() + INTERVAL 1 HOUR, NOW(), NOW())"
base=$(baseline_ms --type=other)
: >"$T/behind"
jobrun_bg --json >"$T/out" 2>"$T/err"
wait_for 60 has_lines 100 || bail_out "the runner does not get on"
put_behind insert early:1
put_behind recover dead:1
put_behind insert early:2
put_behind insert early:3
cursor_shown more-pick
kill -TERM "$bg_pid"
wait "$bg"
is "$?" 0 "the run, stopped by a SIGTERM, exits 0"
like "$(cat "$T/err")" '^ts=[^ ]* level=warn msg="stopped on signal 15"$' \
    "and says only that it stopped on the signal"
ran=$(lines)
is "$(jget succeeded <"$T/out"):$(count_ok early:1 dead:1 early:2 early:3 ${more[@]+"${more[@]}"})" \
    "$ran:$((4 + ${#more[@]}))" "every job it claimed succeeded ($ran), the $((4 + ${#more[@]})) put behind its cursor among them"

diag "idx_pick: jobs behind the cursor (key, ms from due to claimed," \
     "jobs claimed past it meanwhile), against $bound_ms ms; an empty" \
     "run takes $base ms here:" "$(cat "$T/behind")"
# Due to claimed, by the server's clock (read in the INSERT's session just
# before it; the claim's change of the row): the cursor's second, the job
# in hand when it runs out (an exec, as long as an empty run), and the
# statements around them.
limit=$((bound_ms + 3 * base + 200))
while read -r key ms passed; do
	took_between_ms "$ms" 0 "$limit" \
	    "$key, due behind the cursor, is claimed within ${bound_ms} ms (took $ms)"
done <"$T/behind"
most=$(most_passed)
between "$most" 3 $backlog \
    "claims went on past a job behind the cursor: the cursor is in use ($most)"

is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
    AND attempts = IF(business_key = 'dead:1', 2, 1)")" "$ran" \
    "every job succeeded on its one attempt (dead:1 on its second)"
is "$(sort "$T/ids" | uniq -d | wc -l)/$(wc -l <"$T/ids")" "0/$ran" \
    "the handler ran each job once"
in_order a "the backlog ran in (next_run_at, id) order, the rest untouched"
# What the stopped run left is not the next run's backlog.
sql "DELETE FROM polling_jobs WHERE business_key LIKE 'a:%' AND status = 'pending'"

# stopped_run LABEL KEY...: SIGTERM the run; it exits 0, every job it
# claimed succeeded, the jobs KEY... put behind among them, and each of
# those (as $T/behind lists them) was claimed within the bound
stopped_run() {
	local label=$1 key ms passed
	shift
	kill -TERM "$bg_pid"
	wait "$bg"
	is "$?" 0 "$label: the run, stopped by a SIGTERM, exits 0"
	ran=$(lines)
	is "$(jget succeeded <"$T/out"):$(count_ok "$@")" "$ran:$#" \
	    "$label: every job it claimed succeeded ($ran), the $# put behind among them"
	diag "$label: jobs behind the cursor (key, ms, jobs passed):" \
	     "$(cat "$T/behind")"
	while read -r key ms passed; do
		took_between_ms "$ms" 0 "$limit" \
		    "$label: $key, due behind the cursor (or at a level not read), is claimed within ${bound_ms} ms (took $ms)"
	done <"$T/behind"
}

# --- idx_type_pick, --type ---------------------------------------------------

sql "$(grep -v '^--' "$TOP/sql/001_type_pick.sql")"
: >"$T/ids"
: >"$T/behind"
done0=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")
fill b
jobrun_bg --type=work --json >"$T/out" 2>"$T/err"
wait_for 60 has_lines 100 || bail_out "the --type run does not get on"
# A job that differs from the runner's type only by case, behind the
# cursor: the collation puts it in idx_type_pick's range, the claim must
# still leave it alone.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     VALUES ('odd:upper', 'WORK', NOW() - INTERVAL 1 HOUR, NOW(), NOW())"
put_behind insert early:4
put_behind insert early:5
put_behind insert early:6
cursor_shown more-type
stopped_run "--type" early:4 early:5 early:6 ${more[@]+"${more[@]}"}
most=$(most_passed)
between "$most" 3 $backlog \
    "--type: claims went on past a job behind the cursor: the cursor is in use ($most)"
in_order b "--type: the backlog ran in (next_run_at, id) order, the rest untouched"
is "$(sort "$T/ids" | uniq -d | wc -l)/$(wc -l <"$T/ids")" "0/$ran" \
    "--type: the handler ran each job once"
is "$(sql "SELECT CONCAT(status, '/', attempts) FROM polling_jobs
    WHERE business_key = 'odd:upper'")" "pending/0" \
    "--type: WORK, behind the cursor and in the index's range, stays untouched"

# --- in priority order: a cursor per level ------------------------------------

# sql/013: the backlog c at level 5, and as many jobs of level 0, due a day
# ago, which the plain claim's one in ten takes (the oldest first), so that
# the jobs put behind level 5's cursor (due an hour ago) are the level's
# claims' to find, from its head again within the second; and one at a
# level that had no due job, within the second the levels are read again.
sql "$(grep -v '^--' "$TOP/sql/013_priority.sql")"
sql "DELETE FROM polling_jobs WHERE business_key LIKE 'b:%' AND status = 'pending'"
: >"$T/ids"
: >"$T/behind"
done0=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")
fill c
sql "UPDATE polling_jobs SET priority = 5 WHERE business_key LIKE 'c:%';
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('low:', seq), 'work', NOW() - INTERVAL 1 DAY, NOW(), NOW()
     FROM seq_1_to_$backlog"
level_col=", priority" level_val=", 5"
jobrun_bg --json >"$T/out" 2>"$T/err"
wait_for 60 has_lines 100 || bail_out "the run in priority order does not get on"
put_behind insert early:7
put_behind insert early:8
# A level that had no due job when the levels were read (9, above the
# backlog's) waits for their next read, within the same second.
level_val=", 9"
put_behind insert high:1
level_val=", 5"
put_behind insert early:9
cursor_shown more-prio
stopped_run "in priority order" early:7 early:8 high:1 early:9 ${more[@]+"${more[@]}"}
most=$(most_passed)
between "$most" 3 $backlog \
    "in priority order: claims went on past a job behind its level's cursor: the cursor is in use ($most)"
in_order c "in priority order: level 5's backlog ran in (next_run_at, id) order, the rest untouched"
in_order low "in priority order: level 0's (the tenth claims) too"
lows=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'low:%'
    AND status = 'success'")
between "$lows" $((ran / 10 - 1)) $((ran / 10 + 1)) \
    "in priority order: one claim in ten took level 0's oldest job ($lows of $ran)"
is "$(sort "$T/ids" | uniq -d | wc -l)" 0 "in priority order: the handler ran each job once"
done_testing
