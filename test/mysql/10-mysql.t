#!/bin/bash
# jobrun against MySQL (make mysql-check): what failed there at b888798
# (issue 28), as a user meets it.
#  - check read the claim's EXPLAIN by its column names, but MySQL 9 answers
#    EXPLAIN as a tree by default (explain_format = TREE): check exited 70.
#  - A capped or rated type's claim prepared START TRANSACTION, which MySQL
#    does not prepare: every run with flow control exited 70.
#  - Schedules: MySQL types a parameter of CONVERT_TZ as DATETIME(6), so the
#    wall-clock time read back ended in ".000000" and every run, status and
#    schedules exited 78 "time zone of the session unknown"; the hint named
#    MariaDB's tool.
#  - enqueue --at took a day that does not exist ('2031-02-30'): MySQL types
#    CAST(?)'s parameter as DATETIME; the INSERT then refused it, naming the
#    column, not --at.
#  - A checkpoint or a handler's reply that is not JSON failed on MySQL's
#    cast ("Invalid JSON text in argument 1 to function ...").
# And the rest of a first day: enqueue, a retry, list, show, status, report.
. "${0%/*}/../lib.sh"

on_mysql || { echo "1..0 # SKIP MySQL's own: make mysql-check runs it"; exit 0; }

plan 35

# Its own server: this file sets explain_format and changes the zone tables.
use_own_server
setup_db
for m in "$TOP"/sql/0*.sql; do
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$m" ||
	    bail_out "cannot load $m"
done
like "$(sql "SELECT VERSION()")" '^[89]\.' "the server is MySQL 8 or 9"

write_config <<EOF
[type.capped]
handler = exec
command = /bin/true
concurrency = 2

[type.rated]
handler = noop
rate = 100/s

[type.plain]
handler = exec
command = /bin/sh -c 'exit \${FAIL:-0}'

[type.badcp]
handler = exec
command = $HANDLERS/bad-checkpoint json
timeout = 10

[schedule.tick]
type = plain
cron = * * * * *
EOF

# --- check ---------------------------------------------------------------

sql "SET GLOBAL explain_format = TREE"
run jobrun check
is "$rc" 0 "check exits 0 with the schema and every migration"
like "$out" "ok +server [0-9.]+[^ ]* \\(MySQL\\) answers at " \
    "check says the server is MySQL"
like "$out" "ok +claim of all types uses idx_pick, ~[0-9]+ row" \
    "the claim's EXPLAIN is read (explain_format = TREE on the server)"
like "$out" "ok +claim --type=capped uses idx_type_pick" "and a type's"
like "$out" "ok +1 schedule\\(s\\): table jobrun_schedules present, every time zone known" \
    "the session's time zone is known"
like "$out" "ok +MySQL: with --jobs each claim is a statement of its own" \
    "check says what MySQL lacks"

# --- enqueue --at: a day that does not exist ---------------------------------

run jobrun enqueue --type=plain --key=feb30 --at='2031-02-30 10:00:00'
is "$rc" 65 "--at 2031-02-30: exit 65"
like "$err" "^jobrun: --at: .*2031-02-30 10:00:00" "the message names --at and the value"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key = 'feb30'")" 0 \
    "nothing written"

# --- runs: flow control beside plain types, a schedule -----------------------

for i in 1 2 3 4 5 6; do
	jobrun enqueue --type=capped --key="c$i" >/dev/null
	jobrun enqueue --type=rated --key="r$i" >/dev/null
done
jobrun enqueue --type=plain --key=p1 >/dev/null
run jobrun --jobs=4 -v
is "$rc" 0 "a run with a capped, a rated and a plain type exits 0"
is "$(sql "SELECT type, COUNT(*) FROM polling_jobs WHERE status = 'success'
    AND type <> 'plain' GROUP BY type ORDER BY type" | tr '\t\n' ':,')" \
    "capped:6,rated:6," "every capped and rated job ran"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'p1'")" \
    success "the plain type's job too"
# A new schedule starts at its first run; its next minute's slot is due a
# minute on (JOBRUN_TEST_NOW: "now" for the schedules, jobrun(1)).
now=$(sql "SELECT UNIX_TIMESTAMP()")
JOBRUN_TEST_NOW=$((now + 60)) run jobrun -v
slot=$(sql "SELECT DATE_FORMAT(FROM_UNIXTIME($now + 60), 'tick@%Y-%m-%dT%H:%i')")
like "$err" "msg=\"schedule tick: slot ${slot#tick@} enqueued as job [0-9]+\"" \
    "a minute later, the schedule enqueues the slot of the server's minute"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = '$slot'")" \
    success "keyed by its wall-clock minute ($slot), and run"

run jobrun schedules
is "$rc" 0 "schedules exits 0"
like "$out" "(^|
)tick +plain +" "and lists the schedule"
run jobrun status
is "$rc" 0 "status exits 0"
like "$out" "(^|
)capped +0 +0 .* 6 +exec" "with the capped type's six successes"

# --- a named zone: the hint names MySQL's tool, and loaded it works ----------

cat >>"$CONF" <<EOF

[schedule.berlin]
type = plain
cron = * * * * *
time_zone = Europe/Berlin
EOF
sql "DELETE FROM mysql.time_zone_name WHERE Name = 'Europe/Berlin'"
run jobrun schedules
is "$rc" 78 "a zone the server lacks: schedules exits 78"
like "$err" "time zone Europe/Berlin unknown to the server \\(load its time zone tables: mysql_tzinfo_to_sql /usr/share/zoneinfo \\| mysql mysql\\)" \
    "and names MySQL's tool"
run jobrun check
like "$out" "problem +read schedules: time zone Europe/Berlin unknown to the server .*
 +fix: mysql_tzinfo_to_sql /usr/share/zoneinfo \\| mysql mysql" \
    "check's fix too"
chroot "${JOBRUN_MYSQL_ROOT:-/var/tmp/jobrun-mysql-root}" mysql_tzinfo_to_sql \
    /usr/share/zoneinfo/Europe/Berlin Europe/Berlin 2>/dev/null |
    mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot mysql ||
    bail_out "cannot load Europe/Berlin"
run jobrun -q
is "$rc" 0 "loaded with MySQL's tool, the run exits 0"
JOBRUN_TEST_NOW=$((now + 120)) run jobrun -q
berlin=$(sql "SELECT DATE_FORMAT(CONVERT_TZ('1970-01-01 00:00:00' +
    INTERVAL $now + 120 SECOND, '+00:00', 'Europe/Berlin'), 'berlin@%Y-%m-%dT%H:%i')")
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = '$berlin'")" \
    success "its next slot is Berlin's wall-clock minute ($berlin)"

# --- a checkpoint that is not JSON ---------------------------------------------
# MySQL refuses the cast where MariaDB's JSON_VALID answers 0: the same
# words either way, and the good checkpoint stays (kept in MySQL's form).

jobrun enqueue --type=badcp --key=badcp >/dev/null
run jobrun --type=badcp
like "$err" "checkpoint refused: not valid JSON" "a checkpoint that is not JSON: refused, saying so"
is "$(sql "SELECT checkpoint->>'$.good' FROM polling_jobs WHERE business_key = 'badcp'")" 1 \
    "the good one stays"

# --- a failing job, retried with backoff; list, show, report ------------------

jobrun enqueue --type=plain --key=p2 >/dev/null
FAIL=3 run jobrun -q
is "$rc" 1 "a run whose job is retried exits 1"
is "$(sql "SELECT CONCAT(status, ' ', attempts, ' ', next_run_at > NOW() + INTERVAL 30 SECOND)
    FROM polling_jobs WHERE business_key = 'p2'")" "pending 1 1" \
    "the failed job waits for its retry, backed off"
run jobrun list --status=pending
like "$out" "p2 +exit status 3" "list shows its error"
id=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'p2'")
run jobrun show "$id"
like "$out" "
last_error +exit status 3" "show too"
run jobrun report --json
is "$rc" 0 "report --json exits 0"
is "$(jget types <<<"$out" | python3 -c 'import json,sys; print(sorted(t["type"] for t in json.load(sys.stdin)))' 2>/dev/null || echo x)" \
    "['badcp', 'capped', 'plain', 'rated']" "and counts the four types"
sql "UPDATE polling_jobs SET status = 'failed' WHERE business_key = 'p2'"
run jobrun retry --failed --type=plain --dry-run
is "$rc/$out" "0/retry: 1 job(s) would be put back (dry run)" \
    "retry --failed --dry-run counts it"
run jobrun pause capped
is "$rc/$out" "0/capped: paused" "pause works"
jobrun enqueue --type=capped --key=c7 >/dev/null
run jobrun -q
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'c7'")" pending \
    "a paused type's job waits"
