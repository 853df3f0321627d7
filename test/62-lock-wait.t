#!/bin/bash
# Lock waits and deadlocks provoked from a second connection.
# 1. The second connection holds the job's row lock while the runner wants
#    to mark it, longer than innodb_lock_wait_timeout: the mark meets error
#    1205, is run again after a short random pause, and succeeds once the
#    other transaction commits.
# 2. A real deadlock: the runner's recovery has locked stranded job P1 and
#    waits for P2, which the second connection holds; the second connection
#    then asks for P1.  InnoDB rolls back the lighter transaction - the
#    runner's, since the other one has changed more rows - with error 1213;
#    the runner runs the statement again and recovers both jobs.
# 3. Two SIGTERMs while the mark waits for such a lock (no handler runs):
#    the statement is let finish, and the run ends with status 143.
# No step waits for a fixed time: the handler runs until the test lets it
# go, the second connection is fed statement by statement through a FIFO,
# and each step waits for the state the next one needs (the handler
# started, the row lock held, the runner waiting for a lock).
# This file uses a server of its own, since it changes global settings and
# reads the server's lock-wait counters.
. "${0%/*}/lib.sh"

plan 77
use_own_server
setup_db
write_config <<EOF2
[type.held]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
timeout = 120
EOF2
sql "SET GLOBAL innodb_lock_wait_timeout = 1"

status_var() {
	sql "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2
}
# lock_waits_reach N: the server has started N row lock waits in all
lock_waits_reach() {
	[ "$(status_var Innodb_row_lock_waits)" -ge "$1" ]
}
# deadlocks: the deadlocks InnoDB has seen: MariaDB's status variable
# Innodb_deadlocks; MySQL has none, and counts them in the InnoDB metric
# lock_deadlocks (enabled by default; checked, so that a disabled metric
# cannot pass as no deadlock)
deadlocks() {
	if on_mysql; then
		sql "SELECT IF(STATUS = 'enabled', COUNT, 'disabled')
		    FROM information_schema.INNODB_METRICS
		    WHERE NAME = 'lock_deadlocks'"
		return
	fi
	status_var Innodb_deadlocks
}
# rows_are EXPECTED NAME: the jobs, each "key status attempts", are these
rows_are() {
	is "$(sql "SELECT GROUP_CONCAT(business_key, ' ', status, ' ',
	    attempts ORDER BY business_key SEPARATOR ', ') FROM polling_jobs")" \
	    "$1" "$2"
}
# someone_waits: a statement is waiting for a row lock right now
someone_waits() {
	[ "$(status_var Innodb_row_lock_current_waits)" -ge 1 ]
}

# --- a lock wait timeout, then the lock is free ------------------------------
insert_job held held
jobrun_bg -v --json >"$T/out" 2>"$T/err"
ok "the handler started" wait_for 30 test -e "$T/started"
other_start
other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'held' FOR UPDATE;"
ok "the second connection holds the job's row" wait_for 30 file_has "$T/other.out" '^locked'
waits=$(status_var Innodb_row_lock_waits)
touch "$T/go"
# The mark waits 1 s, meets 1205, and waits again: two lock waits.
ok "the mark waited, timed out and waited again" wait_for 60 lock_waits_reach $((waits + 2))
# The waiting transaction is the runner's: its isolation level shows
# (between two waits there is none for a few ms: ask until one is seen).
waiting_isolation() {
	iso=$(sql "SELECT trx_isolation_level FROM information_schema.INNODB_TRX
	    WHERE trx_state = 'LOCK WAIT'")
	[ -n "$iso" ]
}
wait_for 30 waiting_isolation
is "$iso" "READ COMMITTED" "the runner's session runs at READ COMMITTED"
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 0 "the mark waited out the other transaction: exit 0"
is "$(jget succeeded <"$T/out")" 1 "the success was recorded"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'held'")" \
    "success	1" "the job is success after one attempt"
like "$(cat "$T/err")" "statement\(s\) run again after a deadlock or lock wait timeout" \
    "-v says the statement was run again"

# Held for longer than every retry: the error is reported and the job waits
# in processing for recovery rather than being guessed at; exit 75
# (EX_TEMPFAIL): nothing changed, the next run may get through.
rm -f "$T/started" "$T/go"
insert_job stuck held
jobrun_bg --json >"$T/out" 2>"$T/err"
wait_for 30 test -e "$T/started"
other_start
other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'stuck' FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked'
touch "$T/go"
wait "$bg"
is "$?" 75 "a lock held past every retry: exit 75 (try again later)"
other_send "COMMIT;"
other_end
like "$(cat "$T/err")" "Lock wait timeout exceeded" "stderr says why"
is "$(sql "SELECT CONCAT_WS(' ', status, attempts, locked_by IS NOT NULL,
    finished_at IS NULL) FROM polling_jobs WHERE business_key = 'stuck'")" \
    "processing 1 1 1" "the job stays processing under the run's lock, for recovery"

# --- a real deadlock ---------------------------------------------------------
sql "SET GLOBAL innodb_lock_wait_timeout = 50"
write_config <<EOF2
[type.other]
handler = noop
EOF2
sql "DELETE FROM polling_jobs;
     CREATE TABLE ballast (n INT) ENGINE=InnoDB;
     INSERT INTO ballast SELECT seq FROM seq_1_to_200;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, locked_by, locked_until, created_at, updated_at)
     VALUES ('p1', 'gone', 'processing', 1, NOW(), 'dead-1',
        NOW() - INTERVAL 20 SECOND, NOW(), NOW()),
            ('p2', 'gone', 'processing', 1, NOW(), 'dead-2',
        NOW() - INTERVAL 10 SECOND, NOW(), NOW())"
p1=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'p1'")
p2=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'p2'")
before=$(deadlocks)
[[ $before =~ ^[0-9]+$ ]] || bail_out "no deadlock counter: '$before'"
# The second connection: heavy (200 rows changed), holds P2 ...
other_start
other_send "BEGIN; UPDATE ballast SET n = n + 1;
    SELECT 'holds p2', id FROM polling_jobs WHERE id = $p2 FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^holds p2'
# ... the runner's recovery locks P1 and waits for P2 ...
jobrun_bg -v --json >"$T/out" 2>"$T/err"
ok "the runner's recovery waits for the row the other connection holds" \
    wait_for 60 someone_waits
# ... and the other connection asks for P1: a deadlock.
other_send "SELECT 'holds p1', id FROM polling_jobs WHERE id = $p1 FOR UPDATE;"
wait_for 60 file_has "$T/other.out" '^holds p1'
other_send "COMMIT;"
other_end
wait "$bg"
rc=$?
out=$(cat "$T/out") err=$(cat "$T/err")
is "$rc/$(jget recovered <<<"$out")" 0/2 \
    "the runner's recovery was chosen as the deadlock victim, ran again, and recovered both jobs"
is "$(( $(deadlocks) - before ))" 1 "the server saw one deadlock"
like "$err" "1 statement\(s\) run again after a deadlock" "-v says the statement was run again"
is "$other_rc" 0 "the other transaction went through"
is "$(sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM polling_jobs")" pending,pending \
    "both stranded jobs are pending again"

# --- a second signal while no handler runs ------------------------------------
# The mark waits for a row the other connection holds; two SIGTERMs come
# meanwhile.  The statement is let finish (the job is success, not put back
# or left processing), and the run ends with the second signal's status.
write_config <<EOF2
[type.held]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
timeout = 120
EOF2
rm -f "$T/started" "$T/go"
insert_job signalled held
jobrun_bg --json >"$T/out" 2>"$T/err"
wait_for 30 test -e "$T/started"
other_start
other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'signalled' FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked'
touch "$T/go"
ok "the mark waits for the row" wait_for 60 someone_waits
kill -TERM "$bg_pid"
wait_for 30 sig_seen "$bg_pid" 15
kill -TERM "$bg_pid"
ok "two SIGTERMs delivered while the mark waits" wait_for 30 sig_seen "$bg_pid" 15
other_send "COMMIT;"
other_end
wait "$bg"
is "$?" 143 "a second signal with no handler running: the run ends with 143"
is "$(sql "SELECT CONCAT_WS(' ', status, attempts, locked_by IS NULL)
    FROM polling_jobs WHERE business_key = 'signalled'")" "success 1 1" \
    "the mark it was making finished: the job is success"
is "$(jget succeeded <"$T/out")/$(jget ok <"$T/out")" 1/false "--json counts the success, ok false"

# --- a signal while a keyed claim takes jobs for the run's waiting slots -------
# Job a1 runs (its handler waits) and holds key a, so the run's three other
# slots wait to claim: a2, due, has the busy key.  The other connection
# takes the type's control row; jobs of keys b, c and d become due, and
# the claim of the waiting slots' group waits for the row.  Once it has
# the row, it takes a job for each slot of the group (group.c: the three,
# when they came back from their wait together, as they do but on a
# loaded machine).  A SIGTERM comes while it waits: the slots start
# nothing more than the first job, and the jobs taken for the others are
# given back at once, pending again with their attempt not spent, not
# left in processing for recovery.
sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"
write_config <<EOF2
[type.keyed]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
concurrency_key = \$.c
EOF2
rm -f "$T/started" "$T/go"
sql "DELETE FROM polling_jobs;
     CREATE TABLE claims (id BIGINT UNSIGNED);
     CREATE TRIGGER claims AFTER UPDATE ON polling_jobs FOR EACH ROW
       INSERT INTO claims SELECT NEW.id FROM DUAL
        WHERE NEW.status = 'processing' AND OLD.status <> 'processing';
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     VALUES ('a1', 'keyed', '{\"c\": \"a\"}', NOW(), NOW(), NOW()),
            ('a2', 'keyed', '{\"c\": \"a\"}', NOW(), NOW(), NOW())" ||
    bail_out "cannot set up the keyed jobs"
jobrun_bg --jobs=4 -vv --json >"$T/out" 2>"$T/err"
ok "a1's handler started" wait_for 30 test -e "$T/started"
other_start
other_send "BEGIN; SELECT 'locked', type FROM polling_jobs_flow WHERE type = 'keyed' FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked'
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('k', seq), 'keyed', JSON_OBJECT('c', CHAR(97 + seq)),
        NOW(), NOW(), NOW() FROM seq_1_to_3"
ok "a waiting slot's claim waits for the control row" wait_for 60 someone_waits
kill -TERM "$bg_pid"
ok "a SIGTERM delivered while the claim waits" wait_for 30 sig_seen "$bg_pid" 15
other_send "COMMIT;"
other_end
touch "$T/go"
wait "$bg"
rc=$?
claims=$(sql "SELECT COUNT(*) FROM claims")
diag "jobs claimed: $claims (a1, and one for each slot of the group)"
ok "a1, and one claim's jobs: for the first slot and the others of its group; exit 0" \
    test "$rc" = 0 -a "$claims" -ge 2 -a "$claims" -le 4
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job is left in processing"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'pending'
        AND attempts = 0 AND locked_by IS NULL
        AND id IN (SELECT id FROM claims)")" $((claims - 2)) \
    "the jobs claimed for the group's other slots are pending again, their attempt not spent"
is "$(jget claimed <"$T/out")/$(jget succeeded <"$T/out")" 2/2 \
    "--json counts the two jobs started, a1 and the first slot's, both success"
if [ "$claims" -gt 2 ]; then
	like "$(cat "$T/err")" "$((claims - 2)) job\\(s\\) claimed for slots that did not start them given back" \
	    "-vv says how many were given back"
else
	unlike "$(cat "$T/err")" "claimed for slots that did not start them" \
	    "-vv says none were given back (a group of one)"
fi
sql "DROP TRIGGER claims; DROP TABLE claims"

# --- a keyed job's outcome, in the claim that waits for the control row -------
# A slot's outcome rides in the transaction of its next claim (one commit
# for both), and a keyed type's claim locks the control row.  When the row
# is held, the outcome must not wait with the claim for as long as the
# claim waits.
# held_r2_due [LOCKS]: the other connection takes the control row (after
# the locks of the statements LOCKS, if given), and r2 becomes due
held_r2_due() {
	other_start
	other_send "BEGIN; ${1:-}
	    SELECT 'locked', type FROM polling_jobs_flow WHERE type = 'keyed' FOR UPDATE;"
	wait_for 30 file_has "$T/other.out" '^locked.keyed' ||
	    bail_out "no lock on the control row"
	sql "INSERT INTO polling_jobs (business_key, type, payload,
	        next_run_at, created_at, updated_at)
	     VALUES ('r2', 'keyed', '{\"c\": \"b\"}', NOW(), NOW(), NOW())"
}
# r1_ends_held WHAT [LOCKS]: r1 runs (its handler waits), the other
# connection takes the control row (held_r2_due), r2 becomes due, and r1
# ends: its outcome's write and the claim of r2 begin while the row is
# held (the config written before; WHAT names the case)
r1_ends_held() {
	rm -f "$T/started" "$T/go"
	sql "DELETE FROM polling_jobs;
	     INSERT INTO polling_jobs (business_key, type, payload,
	        next_run_at, created_at, updated_at)
	     VALUES ('r1', 'keyed', '{\"c\": \"a\"}', NOW(), NOW(), NOW())" ||
	    bail_out "cannot set up r1"
	jobrun_bg -v --json >"$T/out" 2>"$T/err"
	ok "r1's handler started ($1)" wait_for 30 test -e "$T/started"
	held_r2_due "${2:-}"
	lock_waits=$(status_var Innodb_row_lock_waits)
	lock_ms=$(status_var Innodb_row_lock_time)
	touch "$T/go"
}
# r2_ran WHAT: the row freed, the claim takes r2 and the run ends
r2_ran() {
	ok "the claim still waits for the row ($1)" wait_for 30 someone_waits
	other_send "COMMIT;"
	other_end
	wait "$bg"
	is "$?" 0 "the claim then took r2 and ran it ($1): exit 0"
	rows_are "r1 success 1, r2 success 1" \
	    "each job success, at its first attempt ($1)"
	is "$(jget succeeded <"$T/out")" 2 "--json counts both successes once ($1)"
}

# The claim's transaction rolled back after one lock wait (1 s here), the
# outcome is written alone at once, and only the claim waits and runs
# again.
sql "SET GLOBAL innodb_lock_wait_timeout = 1"
r1_ends_held "riding"
ok "r1's success is written while the control row is still held" \
    wait_for 60 job_is r1 "status = 'success'"
# Riding every run of the claim's transaction again, it would be written
# only once the claim gave up, after 11 lock waits.
waited=$(( $(status_var Innodb_row_lock_waits) - lock_waits ))
ok "... after one lock wait, not the claim's every one ($waited seen)" \
    test "$waited" -le 4
r2_ran "riding"

# A lock shorter than the claim's wait plus 5 s (lock_seconds = 3, the
# least; innodb_lock_wait_timeout = 10): once the handler has ended its
# lock is no longer extended, and could expire while the claim waits, and
# recovery give the job back as its outcome is written.  So the outcome
# does not ride: it is written alone before the claim, while the claim's
# first lock wait (10 s) has yet to end.
sql "SET GLOBAL innodb_lock_wait_timeout = 10"
write_config <<EOF2
[run]
lock_seconds = 3
[type.keyed]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
concurrency_key = \$.c
EOF2
r1_ends_held "lock_seconds = 3"
ok "r1's success is written while the control row is held (lock_seconds = 3)" \
    wait_for 60 job_is r1 "status = 'success'"
waited_ms=$(( $(status_var Innodb_row_lock_time) - lock_ms ))
ok "... before any lock wait of 10 s ended ($waited_ms ms of waits ended)" \
    test "$waited_ms" -lt 10000
r2_ran "lock_seconds = 3"

# The session's lock wait is read again on a connection made again.  The
# run (--wait, until its third job) starts while innodb_lock_wait_timeout
# is 1 (lock_seconds = 10: an outcome may ride, 10 > 1 + 5): q0 runs, and
# its outcome rides in the next claim, made before r1 is inserted (so
# that no claim takes both); then the global becomes 10 and the run's connection is killed while r1
# runs.  The connection made again waits up to 10 s for a row, so r1's
# outcome no longer rides (10 < 10 + 5): it is written alone while the
# claim's first lock wait has yet to end.  Read once a run, the wait
# would still be 1: r1's outcome would ride and wait those 10 s.
sql "SET GLOBAL innodb_lock_wait_timeout = 1"
write_config <<EOF2
[run]
lock_seconds = 10
[type.keyed]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
concurrency_key = \$.c
[type.quick]
handler = noop
concurrency_key = \$.c
EOF2
rm -f "$T/started" "$T/go"
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     VALUES ('q0', 'quick', '{\"c\": \"z\"}', NOW(), NOW(), NOW())" ||
    bail_out "cannot set up q0"
jobrun_bg --wait --max=3 -v --json >"$T/out" 2>"$T/err"
wait_for 30 job_is q0 "status = 'success'" || bail_out "q0 did not run"
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     VALUES ('r1', 'keyed', '{\"c\": \"a\"}', NOW(), NOW(), NOW())"
ok "q0 ran, and r1's handler started (a connection made again)" \
    wait_for 30 test -e "$T/started"
# run_conn: the run's connection, the one other than ours on this database
run_conn() {
	sql "SELECT id FROM information_schema.processlist
	    WHERE db = DATABASE() AND id <> CONNECTION_ID()"
}
conn=$(run_conn)
sql "SET GLOBAL innodb_lock_wait_timeout = 10; KILL $conn"
new_conn() {
	local c
	c=$(run_conn)
	[ -n "$c" ] && [ "$c" != "$conn" ]
}
ok "the run made its connection again (its lock renewal) while r1 ran" \
    wait_for 30 new_conn
held_r2_due
lock_ms=$(status_var Innodb_row_lock_time)
touch "$T/go"
ok "r1's success is written while the control row is held (a connection made again)" \
    wait_for 60 job_is r1 "status = 'success'"
waited_ms=$(( $(status_var Innodb_row_lock_time) - lock_ms ))
ok "... before any lock wait of 10 s ended ($waited_ms ms of waits ended): the new session's wait was read" \
    test "$waited_ms" -lt 10000
ok "the claim still waits for the row (a connection made again)" wait_for 30 someone_waits
other_send "COMMIT;"
other_end
wait "$bg"
is "$?/$(jget succeeded <"$T/out")" 0/3 "then r2 ran too: exit 0, three successes"
rows_are "q0 success 1, r1 success 1, r2 success 1" \
    "each job success, at its first attempt (a connection made again)"
like "$(cat "$T/err")" 'made again 1 time\(s\)' "-v says the connection was made again"

# --- a group written statement by statement, whose claim then gives up ------
# With --jobs, a finished job's mark and the slot's next claim share a
# transaction.  When the claim meets a lock wait timeout (the next due
# job's row is held by the other connection), the group is run again
# statement by statement (SOLO): the mark commits on its own, then the
# claim waits again, and after its last lock wait the marks are written
# once more without the claim.  A mark already committed must not be
# written twice: it would find its job no longer under its token and say
# its lock was taken by another runner (a false "lost", a false exit 1),
# as a Galera round once did after runs of certification failures.
sql "SET GLOBAL innodb_lock_wait_timeout = 1"
write_config <<EOF2
[type.held]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
EOF2
two_run() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs
	    WHERE status = 'processing'")" = 2 ]
}
# two_end_at_lock A B X: jobs A and B run, one in each slot of a --jobs=2
# run (-v --json, to $T/out and $T/err); job X becomes due, the other
# connection takes its row lock, and A and B end (1 test)
two_end_at_lock() {
	rm -f "$T/started" "$T/go"
	sql "DELETE FROM polling_jobs;
	     INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     VALUES ('$1', 'held', NOW(), NOW(), NOW()),
	            ('$2', 'held', NOW(), NOW(), NOW())" ||
	    bail_out "cannot set up $1 and $2"
	jobrun_bg --jobs=2 -v --json >"$T/out" 2>"$T/err"
	ok "$1 and $2 run, one in each slot (--jobs=2)" wait_for 30 two_run
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     VALUES ('$3', 'held', NOW(), NOW(), NOW())"
	other_start
	other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = '$3' FOR UPDATE;"
	wait_for 30 file_has "$T/other.out" '^locked' ||
	    bail_out "no lock on $3's row"
	touch "$T/go"
}
# release_and_end: the other connection lets X's row go, and the run
# ends; sets ended to its exit status and --json's succeeded and lost,
# STATUS/SUCCEEDED/LOST (not in a subshell: the run is this shell's child)
release_and_end() {
	local rc
	other_send "ROLLBACK;"
	other_end
	wait "$bg"
	rc=$?
	ended="$rc/$(jget succeeded <"$T/out")/$(jget lost <"$T/out")"
}
two_end_at_lock l1 l2 x1
ok "a claim after l1 and l2 gives up on x1's lock, its group run again alone" \
    wait_for 60 file_has "$T/err" 'claiming again in'
release_and_end
is "$ended" 0/3/0 \
    "then x1 ran: exit 0, three successes, none lost"
unlike "$(cat "$T/err")" 'lock taken by another runner' \
    "a mark committed on its own is not written again (no false \"lost\")"
like "$(grep -c 'job=[0-9]* type=held attempt=1 .*outcome=success' "$T/err")" '^3$' \
    "-v logs each job's success once"
rows_are "l1 success 1, l2 success 1, x1 success 1" \
    "each job success, at its first attempt (a group run again alone)"

# The same group, its claim (run again alone, after the marks committed)
# stopped by KILL QUERY while it waits: the run ends with 75, and the two
# marks committed before the error are counted and logged, as the table
# holds them.
two_end_at_lock m1 m2 y1
# marks_then_wait: m1 and m2 are success (committed) and a claim waits
marks_then_wait() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" = 2 ] &&
	    someone_waits
}
ok "m1's and m2's marks commit alone, then the claim waits for y1's row" \
    wait_for 60 marks_then_wait
# kill_wait: KILL QUERY the statement waiting for a lock, if one does
kill_wait() {
	local t
	t=$(sql "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX
	    WHERE trx_state = 'LOCK WAIT'")
	[ -n "$t" ] && sql "KILL QUERY $t" 2>/dev/null
}
# stop_claim: kill_wait; true once the run has ended (a kill between two
# lock waits finds none)
stop_claim() {
	kill_wait
	proc_gone "$bg_pid"
}
ok "KILL QUERY stops the waiting claim, and the run ends" wait_for 30 stop_claim
release_and_end
is "$ended" 75/2/0 \
    "exit 75, and --json counts the two successes committed before the error"
like "$(grep -c 'job=[0-9]* type=held attempt=1 .*outcome=success' "$T/err")" '^2$' \
    "-v logs both successes"

# --- a keyed group's marks, the second of which fails -------------------------
# The same for a keyed run, whose group's marks ride in its claim's
# transaction: the other connection holds the control rows and job b1's
# row.  c1 ends first: its claim waits for the control row, its mark is
# written alone, and the claim tries again for some 10 s (a lock wait of
# 1 s a try), during which a1, then b1 end; they are served together
# next, in that order.  Their shared mark waits for b1's row, its
# transaction is rolled back, and each is written alone: a1's commits,
# b1's waits again, is stopped by KILL QUERY, and its error ends the run.  a1's success, committed,
# is counted and logged as the table holds it; and no claim is made after
# b1's error (x1 would wait in processing for recovery).
# keyed_type NAME [SUFFIX]: a keyed type whose handler waits for
# $T/goSUFFIX, once it has made $T/startedSUFFIX
keyed_type() {
	printf '[type.%s]\nhandler = exec\n' "$1"
	printf 'command = %s %s %s\n' "$HANDLERS/wait-for-file" \
	    "$T/started${2:-}" "$T/go${2:-}"
	printf 'concurrency_key = $.c\n'
}
{ keyed_type a -a; keyed_type b -b; keyed_type c -c; } | write_config
rm -f "$T"/started-? "$T"/go-?
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     VALUES ('a1', 'a', '{\"c\": \"a\"}', NOW(), NOW(), NOW()),
            ('b1', 'b', '{\"c\": \"b\"}', NOW(), NOW(), NOW()),
            ('c1', 'c', '{\"c\": \"c\"}', NOW(), NOW(), NOW())" ||
    bail_out "cannot set up a1, b1 and c1"
three_run() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs
	    WHERE status = 'processing'")" = 3 ]
}
jobrun_bg --jobs=3 -v --json >"$T/out" 2>"$T/err"
ok "a1, b1 and c1 run, one in each slot (--jobs=3)" wait_for 30 three_run
other_start
other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'b1' FOR UPDATE;
    SELECT 'locked', type FROM polling_jobs_flow WHERE type IN ('a', 'b', 'c') FOR UPDATE;"
wait_for 30 file_has "$T/other.out" '^locked.c' ||
    bail_out "no lock on b1's row and the control rows"
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     VALUES ('x1', 'a', '{\"c\": \"x\"}', NOW(), NOW(), NOW())"
touch "$T/go-c"
ok "c1's mark is written alone while its claim waits for the control row" \
    wait_for 60 job_is c1 "status = 'success'"
# ended X: job X's handler has exited
ended() {
	! pgrep -f -- "wait-for-file $T/started-$1 " >/dev/null
}
touch "$T/go-a"
ok "a1 ends while c1's claim tries again" wait_for 30 ended a
# Two more lock waits of c1's claim (1 s each) leave a1's slot ample
# time to hand its mark in, so that a1 comes before b1 in the group.
waits=$(status_var Innodb_row_lock_waits)
wait_for 30 lock_waits_reach $((waits + 2)) ||
    bail_out "c1's claim no longer waits for the control row"
touch "$T/go-b"
ok "b1 ends too" wait_for 30 ended b
unlike "$(cat "$T/err")" 'claiming again in' \
    "... while c1's claim still tries (a1 and b1 are served together)"
a1_success_b1_waits() {
	job_is a1 "status = 'success'" && someone_waits
}
ok "a1's mark commits alone, b1's waits for its row" \
    wait_for 60 a1_success_b1_waits
# stop_wait_and_end WHAT: KILL QUERY the statement waiting for a lock
# (WHAT, its write); once none waits, any lock wait would be a claim's,
# for a control row: wait until the run ends or one waits, then the
# other connection lets go, which would let such a claim take a job (the
# caller's check of the table says which it was); rc is the run's exit
# status (1 test)
stop_wait_and_end() {
	ok "KILL QUERY stops $1" wait_for 30 kill_wait
	wait_for 30 eval '! someone_waits' || bail_out "$1 still waits"
	waits=$(status_var Innodb_row_lock_waits)
	wait_for 60 ended_or_claims ||
	    bail_out "after $1 failed, the run neither ended nor claimed"
	other_send "ROLLBACK;"
	other_end
	wait "$bg"
	rc=$?
}
ended_or_claims() {
	proc_gone "$bg_pid" || lock_waits_reach $((waits + 1))
}
stop_wait_and_end "b1's mark"
is "$rc/$(jget succeeded <"$T/out")" 75/2 \
    "b1's mark ends the run (75), and --json counts c1 and a1, both committed"
rows_are "a1 success 1, b1 processing 1, c1 success 1, x1 pending 0" \
    "the table: a1 and c1 success, b1 left to recovery, x1 not claimed"
like "$(grep -c 'job=[0-9]* type=a attempt=1 .*outcome=success' "$T/err")" '^1$' \
    "-v logs a1's success"

# The same with one slot: r1's outcome rides in the claim of r2, waits
# for r1's row (the other connection holds it, and the control row), is
# rolled back and written alone, and is stopped by KILL QUERY while it
# waits again.  The run ends with that error; the claim is not made.
keyed_type keyed | write_config
r1_ends_held "one slot" \
    "SELECT 'locked', id FROM polling_jobs WHERE business_key = 'r1' FOR UPDATE;"
# Two lock waits: the outcome riding, then written alone.
wait_for 60 lock_waits_reach $((lock_waits + 2)) ||
    bail_out "r1's outcome did not wait twice for its row"
stop_wait_and_end "r1's outcome written alone"
is "$rc/$(jget succeeded <"$T/out")" 75/0 \
    "the error ends the run (75); no success is counted"
rows_are "r1 processing 1, r2 pending 0" \
    "the table: r1 left to recovery, r2 not claimed"
sql "SET GLOBAL innodb_lock_wait_timeout = 50"
