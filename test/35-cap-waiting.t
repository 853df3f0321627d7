#!/bin/bash
# Waiting at a full cap costs the server little (issue 23 item 6): while
# one job holds a type's only place (concurrency = 1), two runners of
# --jobs=8 (16 slots, 15 of them waiting for the place) run a few
# statements a second between them, not a claim's transaction per slot
# every few milliseconds.  Counted by the server (its Questions, on a
# server of our own), over a window of its own clock.  A runner looks
# once every 320 to 640 ms once the looks have backed off (one read, a
# keyed type's too) and recovers at most once a second: about 3 to 4
# statements a second, so the bound is 6 (a look of three statements, as
# a keyed wait had before its look was one, reads 37 to 50).  Once the place is
# freed the waiting jobs all run, each once.  And in a run of a plain and
# a capped type, a capped type whose claim found nothing due sits out at
# most a second: its job that becomes due meanwhile is claimed within
# that second (by the server's clock) while the plain jobs go on.
. "${0%/*}/lib.sh"

plan 12
use_own_server
setup_db
sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"
write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 100

[type.held]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
concurrency = 1
EOF2
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('h', seq), 'held', NOW(), NOW(), NOW() FROM seq_1_to_12"

# questions: the server's Questions (SHOW GLOBAL STATUS, on both servers:
# MySQL has no information_schema.GLOBAL_STATUS)
questions() {
	sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2
}
# window SECONDS: the statements the server ran in SECONDS of its clock,
# less this script's own: its three, and the client's one at connecting
# (the first window, with nothing running, checks the count)
window() {
	local q0 q1
	q0=$(questions)
	sql "DO SLEEP($1)"
	q1=$(questions)
	echo $((q1 - q0 - 4))
}
# holds_back a|b: that runner's claims were held back (its -v line): it
# has connected, recovered and claimed, and its slots wait; the window
# counts the waiting, not a start-up's statements
holds_back() {
	grep -q 'flow control holds the claims back' "$T/$1.err"
}

is "$(window 1)" 0 "with nothing running the window counts none of its own statements"

jobrun_bg --jobs=8 -v >"$T/a.out" 2>"$T/a.err"
a=$bg
wait_for 30 test -e "$T/started" || bail_out "no handler started"
wait_for 30 holds_back a || bail_out "runner A's other slots never waited"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 1 \
    "runner A holds the type's one place, its seven other slots wait"
jobrun_bg --jobs=8 -v >"$T/b.out" 2>"$T/b.err"
b=$bg
wait_for 30 holds_back b || bail_out "runner B never waited"
n=$(window 3)
diag "statements in 3 s while 15 slots of two runners wait for a full type: $n"
between "$n" 1 36 \
    "two runners of --jobs=8 waiting at a full cap: at most 6 statements a runner a second ($n in 3 s)"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 1 \
    "and the cap held: still one job in processing"

: >"$T/go"
wait "$a"
is "$?" 0 "runner A exits 0 once the jobs are done"
wait "$b"
is "$?" 0 "runner B exits 0"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success' AND attempts = 1")" 12 \
    "all twelve jobs succeeded, each at its first attempt"

# --- waiting for a busy key costs as little ---------------------------------
# The same with a key instead of a cap: twelve jobs of one key, two
# runners of --jobs=8.  A run whose only limits are keys groups its slots
# (group.c): its slots held by the busy key wait together, one try a wait
# for the run, and are taken along by the next group's claim.

rm -f "$T/started"
write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 100

[type.keyed]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
concurrency_key = \$.c
EOF2
rm -f "$T/go"
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('k', seq), 'keyed', '{\"c\": \"one\"}', NOW(), NOW(),
        NOW() FROM seq_1_to_12"
jobrun_bg --jobs=8 -v >"$T/a.out" 2>"$T/a.err"
a=$bg
wait_for 30 test -e "$T/started" || bail_out "no keyed handler started"
wait_for 30 holds_back a || bail_out "runner A's other slots never waited"
jobrun_bg --jobs=8 -v >"$T/b.out" 2>"$T/b.err"
b=$bg
wait_for 30 holds_back b || bail_out "runner B never waited"
n=$(window 3)
diag "statements in 3 s while 15 slots of two runners wait for a busy key: $n"
between "$n" 1 36 \
    "two runners of --jobs=8 waiting for a busy key: at most 6 statements a runner a second ($n in 3 s)"
: >"$T/go"
wait "$a"
ra=$?
wait "$b"
is "$ra/$?/$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success' AND attempts = 1")" \
    0/0/12 "once the key is free the twelve jobs run, each once; both runners exit 0"

# --- a capped type that found nothing due sits out at most a second -----

write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 100

[type.work]
handler = exec
command = /bin/sleep 0.05

[type.lim]
handler = noop
concurrency = 2
EOF2
sql "DELETE FROM polling_jobs"
sql "CREATE TABLE claim_times (id BIGINT UNSIGNED, at DATETIME(6))"
sql "CREATE TRIGGER claim_times AFTER UPDATE ON polling_jobs
     FOR EACH ROW INSERT INTO claim_times (id, at)
       SELECT NEW.id, NOW(6) FROM DUAL
        WHERE NEW.status = 'processing' AND OLD.status <> 'processing'" ||
    bail_out "cannot record claim times"
# 80 jobs of 50 ms keep the run busy 4 s at least; lim's first job is
# claimed at once, its second is due 2 s later.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('w', seq), 'work', NOW(), NOW(), NOW() FROM seq_1_to_80;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     VALUES ('l0', 'lim', NOW(), NOW(), NOW()),
            ('l1', 'lim', NOW() + INTERVAL 2 SECOND, NOW(), NOW())"
run jobrun
is "$rc/$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 0/82 \
    "a run of a plain and a capped type does all 82 jobs"
late=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, j.next_run_at, c.at) / 1e6
              FROM polling_jobs j JOIN claim_times c ON c.id = j.id
             WHERE j.business_key = 'l1'")
diag "the capped type's job due 2 s in was claimed $late s after it was due"
ok "and that job was claimed within 1 s (+ a handler of 50 ms, + slack) of its due time ($late s)" \
    python3 -c 'import sys; sys.exit(not 0 <= float(sys.argv[1]) <= 1.25 + float(sys.argv[2]))' \
    "${late:-x}" "${JOBRUN_TEST_SLACK:-0}"
last=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, j.next_run_at, MAX(c.at)) / 1e6
              FROM polling_jobs j, claim_times c WHERE j.business_key = 'l1'")
ok "while plain jobs were still being claimed after it (the last $last s after its due time)" \
    python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))' \
    "${last:-0}" "${late:-x}"
