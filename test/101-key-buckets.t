#!/bin/bash
# A keyed type with no cap or rate of its own is claimed under its keys'
# bucket locks (jobrun.conf(5), concurrency_key): claims of keys in
# different buckets are made at once, and keys the server calls equal
# share one bucket however their bytes differ.  Checked as a user would:
# many runners drain jobs whose keys are spelled in several ways that the
# column's collation (utf8mb4_general_ci: case, accents, trailing blanks)
# or the JSON key's (trailing blanks) calls one key, and the most jobs of
# one key in processing at once, by the server's clock and grouped by the
# server's comparison, is never above key_concurrency.  The variants are
# first checked against the server itself.  Also: the control row is not
# written by such claims, and a pause still stops them, also one written
# while they are in flight.
. "${0%/*}/lib.sh"

plan 14

setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/003_flow.sql" || bail_out "cannot load sql/003_flow.sql"
# The key column as an application would add it, and a trigger that
# stamps when a row turns processing and when it leaves it (the server's
# clock), from which the overlap of a key's jobs is measured.
sql "ALTER TABLE polling_jobs
       ADD customer VARCHAR(64) COLLATE utf8mb4_general_ci NULL,
       ADD claimed6 DATETIME(6) NULL, ADD done6 DATETIME(6) NULL;
     CREATE TRIGGER polling_jobs_times BEFORE UPDATE ON polling_jobs
     FOR EACH ROW SET
       NEW.claimed6 = IF(NEW.status = 'processing'
         AND OLD.status <> 'processing', NOW(6), NEW.claimed6),
       NEW.done6 = IF(OLD.status = 'processing'
         AND NEW.status <> 'processing', NOW(6), NEW.done6)" ||
    bail_out "cannot add the column and the trigger"

JSON_KEY="LEFT(JSON_UNQUOTE(JSON_EXTRACT(payload, '\$.c')), 255)"
# overlap TYPE KEY-EXPR: the most jobs of TYPE of one key (as the server
# groups KEY-EXPR) between their claim and their outcome at any moment
overlap() {
	sql "SELECT IFNULL(MAX(s), 0) FROM (SELECT SUM(d) OVER
	       (PARTITION BY k ORDER BY t, d ROWS UNBOUNDED PRECEDING) s
	     FROM (SELECT $2 k, claimed6 t, 1 d FROM polling_jobs
	       WHERE type = '$1'
	       UNION ALL SELECT $2 k, done6 t, -1 d FROM polling_jobs
	       WHERE type = '$1') e) x"
}

# keyed_config SECONDS: types col (the column key, its jobs lasting
# SECONDS) and js (the JSON key, 0.02 s)
keyed_config() {
	write_config <<EOF2
[run]
batch_size = 100000
max_seconds = 120

[type.col]
handler = exec
command = /bin/sleep $1
concurrency_key = customer

[type.js]
handler = exec
command = /bin/sleep 0.02
concurrency_key = \$.c
EOF2
}
# start_runners N NAME ARGS...: N runs of jobrun ARGS at once, in the
# background (stderr to $T/NAME1.err ...), their pids in pids
start_runners() {
	local n=$1 name=$2 i
	shift 2
	pids=()
	for i in $(seq "$n"); do
		jobrun_bg "$@" 2>"$T/$name$i.err"
		pids+=("$bg")
	done
}
# runners_exit: wait for the runs in pids; their exit statuses in rcs
runners_exit() {
	local p
	rcs=
	for p in "${pids[@]}"; do
		wait "$p"
		rcs+="${rcs:+ }$?"
	done
}

# Each key (e0, e1, ...) spelled five ways: as is, upper case, with an
# accent (é0), one and two trailing blanks.  The server must call each
# key's five one (checked).
keys=12 per=30
under_valgrind && per=10
sql "INSERT INTO polling_jobs (business_key, type, customer, payload,
        next_run_at, created_at, updated_at)
     WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s
        WHERE n < $((keys * per))),
     v AS (SELECT n, n % $keys AS num, CONCAT('e', n % $keys) AS base,
        n DIV $keys % 5 AS way FROM s)
     SELECT CONCAT('col', n), 'col',
        ELT(way + 1, base, UPPER(base), CONCAT(_utf8mb4 X'C3A9', num),
            CONCAT(base, ' '), CONCAT(base, '  ')),
        NULL, NOW(), NOW(), NOW() FROM v
     UNION ALL
     SELECT CONCAT('js', n), 'js', NULL,
        JSON_OBJECT('c', ELT(way % 3 + 1, base, CONCAT(base, ' '),
            CONCAT(base, '  '))), NOW(), NOW(), NOW() FROM v" ||
    bail_out "cannot add the jobs"
is "$(sql "SELECT COUNT(DISTINCT customer), COUNT(DISTINCT CAST(customer AS BINARY))
     FROM polling_jobs WHERE type = 'col'")" "$keys	$((keys * 5))" \
    "the server calls the column's $((keys * 5)) spellings $keys keys (utf8mb4_general_ci)"
is "$(sql "SELECT COUNT(DISTINCT $JSON_KEY), COUNT(DISTINCT CAST($JSON_KEY AS BINARY))
     FROM polling_jobs WHERE type = 'js'")" "$keys	$((keys * 3))" \
    "and the JSON key's $((keys * 3)) spellings $keys keys (trailing blanks)"

keyed_config 0.02
start_runners 6 r --jobs=4 --quiet
runners_exit
is "$rcs/$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
     AND attempts = 1")" "0 0 0 0 0 0/$((keys * per * 2))" \
    "six runners of --jobs=4 exit 0; every job succeeded at its first attempt"
is "$(overlap col customer)" 1 \
    "column key: never two jobs of one key at once, however it is spelled"
is "$(overlap js "$JSON_KEY")" 1 \
    "JSON key: never two jobs of one key at once, however many trailing blanks"
is "$(sql "SELECT COUNT(*), IFNULL(SUM(claims), 0) FROM polling_jobs_flow
     WHERE type IN ('col', 'js')")" "2	0" \
    "the types' control rows exist, their claims not counted (not written per claim)"

# A pause still stops them: the claims read the control row under a shared
# lock, and the pause's write waits for the claims in flight.
sql "UPDATE polling_jobs SET status = 'pending', attempts = 0,
       next_run_at = NOW() WHERE type = 'col' LIMIT 5"
run jobrun pause col
is "$rc" 0 "jobrun pause col"
run jobrun --type=col --jobs=4
is "$rc/$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'col'
     AND status = 'pending'")" "0/5" "a paused keyed type's jobs are not claimed"

# ... and a pause written while claims are in flight: no claim starts a
# job of the type after the pause's write took the control row (the
# claim's UPDATE by the server's clock, NOW(6); the pause's row change,
# SYSDATE(6) in a trigger, after its lock wait): the claims in flight read
# the row under a shared lock and the pause waits for them.  Each round
# drains all of col's jobs again with six runners and pauses once a dozen
# have been claimed; the runs then end (their only due jobs paused).  Under
# valgrind, where a run takes a second or more to start, col's jobs last
# longer, so that the pause still comes mid-drain.
pause_sleep=0.02
under_valgrind && pause_sleep=0.5
keyed_config "$pause_sleep"
sql "ALTER TABLE polling_jobs_flow ADD paused6 DATETIME(6) NULL;
     CREATE TRIGGER polling_jobs_flow_paused BEFORE UPDATE
       ON polling_jobs_flow FOR EACH ROW SET NEW.paused6 =
       IF(NEW.paused <> 0 AND OLD.paused = 0, SYSDATE(6), NEW.paused6)" ||
    bail_out "cannot stamp the pause"
run jobrun resume col
rounds=$(valgrind_rounds 6) late= midway=
col_claims() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'col'
	     AND claimed6 IS NOT NULL")" -ge 12 ]
}
for r in $(seq "$rounds"); do
	sql "UPDATE polling_jobs SET status = 'pending', attempts = 0,
	       next_run_at = NOW(), claimed6 = NULL, done6 = NULL
	     WHERE type = 'col'"
	start_runners 6 p --type=col --jobs=4 --quiet
	wait_for 60 col_claims || diag "round $r: the claims did not begin"
	run jobrun pause col
	at=$(sql "SELECT paused6 FROM polling_jobs_flow WHERE type = 'col'")
	runners_exit
	late+="$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'col'
	     AND claimed6 > '$at'") "
	midway+="$rc/$rcs/$(sql "SELECT COUNT(*) > 0 FROM polling_jobs
	     WHERE type = 'col' AND status = 'pending'"); "
	run jobrun resume col
done
is "$midway" "$(printf '0/0 0 0 0 0 0/1; %.0s' $(seq "$rounds"))" \
    "each pause, written mid-drain, and the runs exit 0, col's jobs left pending"
is "$late" "$(printf '0 %.0s' $(seq "$rounds"))" \
    "no job of col claimed after its pause took the control row (the claims in flight hold it)"

# A busy key holds back no other key, whichever bucket theirs fall in:
# key A's job in processing under another runner's live lock and five
# more of A's due at the head; behind them one job of another key, a run
# of --max=1 each, so no run has passed a job of the other keys before
# (its cursor): eight keys, of which some fall in other buckets than A's.
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, payload, status, attempts,
        next_run_at, locked_by, locked_until, created_at, updated_at)
     VALUES ('a0', 'js', '{\"c\": \"A\"}', 'processing', 1,
        NOW() - INTERVAL 1 HOUR, 'another-runner', NOW() + INTERVAL 1 HOUR,
        NOW(), NOW());
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s
        WHERE n < 5)
     SELECT CONCAT('a', n), 'js', JSON_OBJECT('c', 'A'),
        NOW() - INTERVAL 100 - n SECOND, NOW(), NOW() FROM s" ||
    bail_out "cannot add the head-of-line jobs"
claimed=
for n in 1 2 3 4 5 6 7 8; do
	sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
	        created_at, updated_at)
	     VALUES ('o$n', 'js', JSON_OBJECT('c', 'other$n'),
	        NOW() - INTERVAL 10 SECOND, NOW(), NOW())"
	run jobrun --type=js --max=1 --max-seconds=10 --json
	claimed+="$rc/$(jget claimed <<<"$out")/$(sql "SELECT status FROM polling_jobs
	    WHERE business_key = 'o$n'") "
done
is "$claimed" "$(printf '0/1/success %.0s' 1 2 3 4 5 6 7 8)" \
    "with key A busy and its jobs at the head, each run claims the one job of another key"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'a_'
     AND status = 'pending' AND attempts = 0")" 5 \
    "A's waiting jobs are pending, no attempt spent"

# Keys at the edges of what is compared: a NUL byte inside (nul<NUL>0 to
# nul<NUL>3, four keys, each as is and with one and two trailing blanks),
# and keys longer than the 255 characters compared, whose jobs differ only
# after them (255 of é, or 254 of e and a letter A to C, then the job's
# number): eight keys, checked against the server, drained by six runners
# of --jobs=4 (each key's next jobs sought by many at once): never two
# jobs of one key at once.
write_config <<EOF2
[run]
batch_size = 100000
max_seconds = 120

[type.odd]
handler = exec
command = /bin/sleep 0.02
concurrency_key = \$.c
EOF2
odd=$((8 * 24))
under_valgrind && odd=$((8 * 6))
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
        created_at, updated_at)
     WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s
        WHERE n < $odd)
     SELECT CONCAT('odd', n), 'odd', JSON_OBJECT('c', IF(n % 8 < 4,
        CONCAT('nul', CONVERT(CHAR(0) USING utf8mb4), n % 8,
            REPEAT(' ', n DIV 8 % 3)),
        CONCAT(ELT(n % 8 - 3, REPEAT(_utf8mb4 X'C3A9', 255),
            CONCAT(REPEAT('e', 254), 'A'), CONCAT(REPEAT('e', 254), 'B'),
            CONCAT(REPEAT('e', 254), 'C')), n))), NOW(), NOW(), NOW()
     FROM s" ||
    bail_out "cannot add the odd keys' jobs"
is "$(sql "SELECT COUNT(DISTINCT $JSON_KEY),
     COUNT(DISTINCT CAST(JSON_UNQUOTE(JSON_EXTRACT(payload, '\$.c')) AS BINARY)),
     SUM(LOCATE(CHAR(0), CAST($JSON_KEY AS BINARY)) > 0)
     FROM polling_jobs WHERE type = 'odd'")" "8	$((12 + odd / 2))	$((odd / 2))" \
    "the server calls the odd spellings 8 keys, half of them holding a NUL"
start_runners 6 o --jobs=4 --quiet
runners_exit
is "$rcs/$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'odd'
     AND status = 'success'")/$(overlap odd "$JSON_KEY")" "0 0 0 0 0 0/$odd/1" \
    "odd keys: six runners exit 0, all jobs succeed, never two of one key at once"
