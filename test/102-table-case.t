#!/bin/bash
# One job table spelled in two cases, on a server that folds table names
# (lower_case_table_names = 1, as on Windows, or 2, as on macOS and some
# hosted MySQL): `table = polling_jobs` and `table = Polling_Jobs` (and the
# database in capitals) name one table there, and jobrun takes them for one
# wherever it keeps the table's name: a fan-in enqueued by one fires when
# the other runs its jobs; --single keeps the other's runs out; a schedule's
# slot enqueued by one is not enqueued again by the other once its job was
# purged; retention's turn taken by one is the other's too; status by one
# counts the other's start latency; a fan-in or a schedule's slot that an
# earlier jobrun kept under the name as configured still counts.  Each case fails with the names
# compared as configured (seen with the table's name bound as written).
# On a server of its own, made and started with lower_case_table_names = 1.
. "${0%/*}/lib.sh"

plan 17
lctn=--lower-case-table-names=1
MARIADB_EXTRA_ARGS=$lctn MYSQL_INIT_ARGS=$lctn MYSQL_EXTRA_ARGS=$lctn \
    use_own_server
setup_db
for m in 004_schedules 006_fan_in 008_start_latency 014_retention_pace; do
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
	    <"$TOP/sql/$m.sql" || bail_out "cannot apply sql/$m.sql"
done
[ "$(sql "SELECT @@lower_case_table_names")" = 1 ] ||
    bail_out "the server did not take lower_case_table_names = 1"
is "$(sql "SELECT COUNT(*) FROM Polling_Jobs")/$(sql "SHOW TABLES LIKE 'polling_jobs'")" \
    0/polling_jobs "the server: Polling_Jobs is polling_jobs (lower_case_table_names = 1)"

body='[run]
keep_success = 7d
keep_every = 60

[type.t]
handler = noop

[type.sum]
handler = noop

[type.slow]
handler = exec
command = '"$HANDLERS/wait-for-file $T/started $T/go"'

[type.tick]
handler = noop'
# configs BODY: $LOWER and $UPPER, the configurations of the two spellings
configs() {
	CONF=$T/lower.conf
	write_config <<<"$1"
	LOWER=$CONF
	CONF=$T/upper.conf
	write_config <<<"$1"
	sed -i "s/^database = .*/database = ${DB^^}/
	    /^database = /a table = Polling_Jobs" "$CONF"
	UPPER=$CONF
}
configs "$body"
with() {	# with lower|upper CMD...: CMD under that configuration
	local which=$1
	shift
	if [ "$which" = lower ]; then CONF=$LOWER; else CONF=$UPPER; fi
	"$@"
}
count() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE $1"
}

# --- a fan-in: enqueued under one spelling, counted and fired by the other --

with upper run jobrun enqueue --type=t --key-prefix=g --keys-from=- \
    --then=sum <<<$'a\nb\nc'
is "$rc" 0 "Polling_Jobs: three jobs and a fan-in enqueued"
with lower run jobrun --json
is "$rc/$(jget succeeded <<<"$out")" 0/4 \
    "polling_jobs: a run does the three jobs and the callback it enqueues"
is "$(sql "SELECT CONCAT_WS(' ', job_table, succeeded, fired_at IS NOT NULL)
    FROM jobrun_fan_ins")/$(count "business_key = 'g:then' AND status = 'success'")" \
    "polling_jobs 3 1/1" "the fan-in counted its jobs and fired: its callback ran"
# A fan-in an earlier jobrun made for `table = Polling_Jobs`, under the
# name as configured, its two jobs due: a run of that configuration, now
# keeping the name folded, still counts them and fires it.
insert_job old:a t
insert_job old:b t
sql "INSERT INTO jobrun_fan_ins (job_table, then_type, then_key, then_payload,
        total, created_at)
     VALUES ('Polling_Jobs', 'sum', 'old:then', '{\"key_prefix\":\"old\"}',
        2, NOW());
     INSERT INTO jobrun_fan_in_jobs (job_id, fan_in_id)
     SELECT j.id, f.id FROM polling_jobs j, jobrun_fan_ins f
      WHERE j.business_key LIKE 'old:%' AND f.then_key = 'old:then'"
with upper run jobrun --json
is "$rc/$(jget succeeded <<<"$out")/$(count "business_key = 'old:then' AND status = 'success'")" \
    0/3/1 "a fan-in an earlier jobrun kept under Polling_Jobs: counted, fired, its callback run"
insert_job u1 t
insert_job u2 t
with upper run jobrun --json
is "$rc/$(jget succeeded <<<"$out")" 0/2 "Polling_Jobs: a run does two jobs"

# --- --single: one lock for both spellings --------------------------------

insert_job s1 slow
with lower jobrun_bg --single --json >"$T/first" 2>"$T/first.err"
first=$bg
wait_for 60 test -e "$T/started" || bail_out "the first runner's handler did not start"
insert_job t1 t
with upper run jobrun --single -v
like "$rc/$err" "^0/ts=\\S+ level=info msg=\"another runner holds jobrun:$DB.polling_jobs; nothing to do\"\$" \
    "a --single run of Polling_Jobs finds the lock of polling_jobs's taken and exits 0"
is "$(count "business_key = 't1' AND status = 'pending'")" 1 "and claims nothing"
touch "$T/go"
wait "$first"
is "$?/$(jget succeeded <"$T/first")" 0/2 "the first runner finishes, its job and the other's done"

# --- a schedule's slot: enqueued once, whichever spelling runs ------------

# (a schedule of its own, in these runs only, at times of their own)
configs "$body
[schedule.tick]
type = tick
cron = * * * * *
catch_up = 1m"
b=$(( ($(date +%s) / 3600 + 2) * 3600 ))	# an hour boundary ahead
JOBRUN_TEST_NOW=$((b - 30)) with lower run jobrun -q
JOBRUN_TEST_NOW=$((b + 1)) with lower run jobrun -q
is "$rc/$(count "business_key LIKE 'tick@%'")" 0/2 \
    "polling_jobs: the schedule's slots are enqueued (the minute before, caught up, and the hour's)"
sql "DELETE FROM polling_jobs WHERE business_key LIKE 'tick@%'"
JOBRUN_TEST_NOW=$((b + 30)) with upper run jobrun --json
is "$rc/$(count "business_key LIKE 'tick@%'")" 0/0 \
    "Polling_Jobs, later in the slot, after the jobs were purged: no slot enqueued again"
is "$(sql "SELECT GROUP_CONCAT(job_table) FROM jobrun_schedules")" polling_jobs \
    "one row for the schedule, under the table's name as the server folds it"
# The row an earlier jobrun kept for `table = Polling_Jobs`, under the name
# as configured, one slot further on (its job purged since): not enqueued
# again by that configuration now.
sql "INSERT INTO jobrun_schedules (job_table, name, last_slot_utc, last_slot,
        updated_at) VALUES ('Polling_Jobs', 'tick', $((b + 60)), NULL, NOW())"
JOBRUN_TEST_NOW=$((b + 90)) with upper run jobrun --json
is "$rc/$(count "business_key LIKE 'tick@%'")" 0/0 \
    "a slot an earlier jobrun enqueued under Polling_Jobs is not enqueued again"
configs "$body"

# --- retention's turn, and the start latency ------------------------------

sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('old-', seq), 't', 'success', 1, NOW() - INTERVAL 10 DAY,
            NOW() - INTERVAL 10 DAY, NOW() - INTERVAL 10 DAY,
            NOW() - INTERVAL 10 DAY FROM seq_1_to_1500"
sql "DELETE FROM jobrun_retention"
with lower run jobrun --json
d1=$(jget deleted <<<"$out")
with upper run jobrun --json
is "$d1/$(jget deleted <<<"$out")" 1000/0 \
    "retention: polling_jobs's run takes the turn (1000 deleted), Polling_Jobs's finds it taken"
is "$(sql "SELECT GROUP_CONCAT(job_table) FROM jobrun_retention")" polling_jobs \
    "one turn row, under the folded name"
latency() {	# the jobs claimed in the last hour, as status says
	jobrun status --json | jpy 'd["start_latency"]["jobs"]'
}
is "$(with upper latency)" "$(with lower latency)" \
    "status by either spelling counts the same start latencies"
ok "those of the jobs both claimed (6 or more: $(with lower latency))" \
    test "$(with lower latency)" -ge 6
