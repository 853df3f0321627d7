#!/bin/bash
# [schedule.NAME]: every due slot becomes one job, keyed NAME@WALL-CLOCK,
# whatever number of runners start together; a runner that cannot have
# a schedule's row (another holds it) skips it with a warning and still
# claims; a runner that was down gets the slots catch_up covers and no
# others; a purge of finished slots does not bring them back; a slot a DST change skips runs once, at the change,
# and one it repeats runs once, the first time (Europe/Berlin's real rule,
# from the system's tzdata, loaded as mariadb-tzinfo-to-sql loads any zone).
#
# "Now" for the schedules is JOBRUN_TEST_NOW (Unix seconds; jobrun(1): for
# tests only), so slots in March and October are reached at once; the jobs
# themselves are due by the server's own clock.
. "${0%/*}/lib.sh"

plan 60

use_own_server
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/004_schedules.sql" || bail_out "cannot load sql/004"
[ -r /usr/share/zoneinfo/Europe/Berlin ] || bail_out "tzdata is needed"
mariadb-tzinfo-to-sql /usr/share/zoneinfo/Europe/Berlin Europe/Berlin \
    2>/dev/null | mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot mysql ||
    bail_out "cannot load Europe/Berlin"

# epoch 'YYYY-MM-DD HH:MM:SS': Unix seconds of a UTC time
epoch() {
	date -u -d "$1" +%s
}
# at EPOCH ARG...: jobrun ARG... with the schedules' now at EPOCH
at() {
	local now=$1
	shift
	JOBRUN_TEST_NOW=$now jobrun "$@"
}
# keys NAME: the business keys of schedule NAME's jobs, in id order
keys() {
	sql "SELECT IFNULL(GROUP_CONCAT(business_key ORDER BY id), '')
	    FROM polling_jobs WHERE business_key LIKE '$1@%'"
}
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}

# --- 4 runners at a slot boundary -------------------------------------------

write_config <<EOF
[type.tick]
handler = noop
[schedule.tick]
type = tick
cron = * * * * *
payload = {"report": "minutely", "n": 1.50}
EOF
b=$(epoch '2026-12-01 10:00:00')
run at $((b - 30)) -v
is "$rc" 0 "a run before the first slot exits 0"
is "$(count)" 0 "a schedule first seen enqueues no slot of the past"
is "$(sql "SELECT CONCAT_WS(' ', job_table, name, last_slot_utc,
    IFNULL(last_slot, 'NULL')) FROM jobrun_schedules")" \
    "polling_jobs tick $((b - 31)) NULL" \
    "its row starts where it was first seen"

# four runners at each of three boundaries, started together; under
# valgrind two (valgrind_runners), which race for the schedule's row the
# same way, at a second a run of CPU less each
runners=$(valgrind_runners 4)
for i in 0 1 2; do
	pids=()
	for r in $(seq "$runners"); do
		JOBRUN_TEST_NOW=$((b + 60 * i + 1)) jobrun_bg -q \
		    >"$T/out.$i.$r" 2>"$T/err.$i.$r"
		pids+=("$bg")
	done
	st=0
	for p in "${pids[@]}"; do
		wait "$p" || st=$?
	done
	is "$st" 0 "$runners runners at slot $i all exit 0"
done
is "$(keys tick)" "tick@2026-12-01T10:00,tick@2026-12-01T10:01,tick@2026-12-01T10:02" \
    "one job per slot, keyed NAME@slot in wall-clock time"
is "$(count "status = 'success' AND attempts = 1")" 3 \
    "each slot's job ran once"
is "$(sql "SELECT payload FROM polling_jobs WHERE business_key =
    'tick@2026-12-01T10:01'")" \
    '{"report": "minutely", "n": 1.50, "slot": "2026-12-01T10:01"}' \
    "the payload is the configured one, as written, with the slot added"
is "$(sql "SELECT CONCAT_WS(' ', last_slot_utc, last_slot)
    FROM jobrun_schedules")" "$((b + 120)) 2026-12-01 10:02:00" \
    "the row holds the latest slot, in real and in wall-clock time"
cat "$T"/err.* >"$T/errs"
is "$(cat "$T/errs")" "" "no runner complained"

# the same runners again, within the same minute: nothing new
run at $((b + 150))
is "$(count)" 3 "a later run in the same minute enqueues nothing"

# --- a runner stalled with the schedule's row: the others skip it ------------------

# A client holds the row as a runner stalled inside its transaction
# would; a run waits 5 s for it, warns, and still claims its jobs.
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B --unbuffered "$DB" -e "
    START TRANSACTION;
    SELECT name FROM jobrun_schedules WHERE name = 'tick' FOR UPDATE;
    SELECT CONCAT('held by ', CONNECTION_ID()); DO SLEEP(60); COMMIT" \
    >"$T/holder" 2>&1 &
holder=$!
defer_kill "$holder"
wait_for 20 file_has "$T/holder" '^held by [0-9]+$' ||
    bail_out "the row was not held"
insert_job other tick
run at $((b + 181))
# the holder's session ends, and its transaction with it
sql "KILL $(sed -n 's/^held by //p' "$T/holder")"
wait "$holder" 2>/dev/null
is "$rc" 0 "a run that cannot have the schedule's row exits 0"
like "$err" "schedule tick: skipped in this run: .*Lock wait timeout" \
    "and warns that it skipped the schedule"
is "$(count "business_key = 'other' AND status = 'success'")" 1 \
    "it still claimed and ran the due job"
is "$(count "business_key LIKE 'tick@%'")" 3 "and enqueued no slot"
run at $((b + 181))
is "$(keys tick)" "tick@2026-12-01T10:00,tick@2026-12-01T10:01,tick@2026-12-01T10:02,tick@2026-12-01T10:03" \
    "the next run enqueues the slot"

# --- a runner down for 3 slots, catch_up covering 2 ----------------------------

write_config <<EOF
[type.tick]
handler = noop
[schedule.five]
type = tick
cron = */5 * * * *
catch_up = 7m
EOF
sql "DELETE FROM polling_jobs"
s0=$(epoch '2026-12-01 11:00:00')
run at $((s0 - 60))
is "$(keys five)" "five@2026-12-01T10:55" \
    "a schedule first seen with catch_up enqueues the slots catch_up covers"
run at $((s0 + 5))
is "$(keys five)" "five@2026-12-01T10:55,five@2026-12-01T11:00" \
    "the slot of 11:00 runs"
# down for 11:05, 11:10 and 11:15; back at 11:15:30: catch_up (7 min)
# reaches back to 11:08:30
run at $((s0 + 15 * 60 + 30)) -v
is "$rc" 0 "the run after the gap exits 0"
is "$(keys five)" "five@2026-12-01T10:55,five@2026-12-01T11:00,five@2026-12-01T11:10,five@2026-12-01T11:15" \
    "exactly the two missed slots catch_up covers are enqueued"
like "$err" "schedule five: slot 2026-12-01T11:10 enqueued as job [0-9]+" \
    "-v names each slot enqueued"

# default catch_up: only the most recent missed slot
write_config <<EOF
[type.tick]
handler = noop
[schedule.five]
type = tick
cron = */5 * * * *
EOF
run at $((s0 + 31 * 60))
is "$(keys five)" "five@2026-12-01T10:55,five@2026-12-01T11:00,five@2026-12-01T11:10,five@2026-12-01T11:15,five@2026-12-01T11:30" \
    "without catch_up, only the latest of three missed slots runs"

# --- a 3-hour outage, four runners back at once ------------------------------

# catch_up = 1h: of the 18 slots of every 10 minutes the outage missed,
# the six in the last hour are enqueued, once, whichever of the four
# runners started together gets each.
write_config <<EOF
[type.tick]
handler = noop
[schedule.outage]
type = tick
cron = */10 * * * *
catch_up = 1h
EOF
o0=$(epoch '2026-12-01 12:00:00')
run at $((o0 + 30))
is "$(keys outage)" "outage@2026-12-01T11:10,outage@2026-12-01T11:20,outage@2026-12-01T11:30,outage@2026-12-01T11:40,outage@2026-12-01T11:50,outage@2026-12-01T12:00" \
    "first seen at 12:00:30 with catch_up 1h: the six slots of the hour before"
sql "DELETE FROM polling_jobs WHERE business_key LIKE 'outage@%'"
pids=()
for r in $(seq "$runners"); do
	JOBRUN_TEST_NOW=$((o0 + 3 * 3600 + 30)) jobrun_bg >/dev/null \
	    2>>"$T/outage.err"
	pids+=("$bg")
done
failed=0
for p in "${pids[@]}"; do
	wait "$p" || failed=$((failed + 1))
done
is "$failed/$(keys outage)" "0/outage@2026-12-01T14:10,outage@2026-12-01T14:20,outage@2026-12-01T14:30,outage@2026-12-01T14:40,outage@2026-12-01T14:50,outage@2026-12-01T15:00" \
    "after 3 hours down, $runners runners at 15:00:30 enqueue exactly the six slots of the last hour, each once"
sql "DELETE FROM polling_jobs WHERE business_key LIKE 'outage@%';
     DELETE FROM jobrun_schedules WHERE name = 'outage'"

# --- purge between runs ------------------------------------------------------

is "$(count "status = 'success'")" 5 "every slot's job ran"
sql "UPDATE polling_jobs SET finished_at = finished_at - INTERVAL 2 DAY,
    next_run_at = next_run_at - INTERVAL 2 DAY"
run jobrun purge --status=success --older-than=1d
is "$rc" 0 "purge exits 0"
is "$(count)" 0 "purge deleted the finished slots' jobs"
write_config <<EOF
[type.tick]
handler = noop
[schedule.five]
type = tick
cron = */5 * * * *
catch_up = 1h
EOF
run at $((s0 + 31 * 60)) -v
is "$rc" 0 "the run after the purge exits 0"
is "$(count)" 0 "no purged slot is enqueued again, even with catch_up 1h"
run at $((s0 + 35 * 60 + 1))
is "$(keys five)" "five@2026-12-01T11:35" "the next slot still runs"

# --- DST in Europe/Berlin ---------------------------------------------------------

# berlin_config: a daily 02:30 and a half-hourly schedule in Europe/Berlin
berlin_config() {
	write_config <<EOF
[type.tick]
handler = noop
[schedule.night]
type = tick
cron = 30 2 * * *
time_zone = Europe/Berlin
[schedule.half]
type = tick
cron = 0,30 * * * *
time_zone = Europe/Berlin
EOF
}
berlin_config
sql "DELETE FROM polling_jobs"
# 2026-03-29: clocks jump from 02:00 CET to 03:00 CEST at 01:00 UTC; 02:30
# never happens
spring=$(epoch '2026-03-29 01:00:00')
run at $((spring - 7000))
is "$(count)" 0 "first sight of the Berlin schedules enqueues nothing"
run at $((spring - 30))
is "$(keys night)" "" "nothing at 01:59:30 CET"
run at $((spring + 10))
is "$(keys night)" "night@2026-03-29T02:30" \
    "the skipped 02:30 runs at the jump (03:00:10 CEST), once"
is "$(keys half)" "half@2026-03-29T01:30,half@2026-03-29T03:00" \
    "a half-hourly schedule: 01:30 CET, then 03:00 CEST, the skipped 02:00 and 02:30 not caught up"
run at $((spring + 1800 + 10))
run at $((spring + 86400 - 7200 + 10))
is "$(keys night)" "night@2026-03-29T02:30" \
    "no second run of 02:30 later that day"
run at $((spring + 86400 + 30 * 60 + 10))
is "$(keys night)" "night@2026-03-29T02:30,night@2026-03-30T02:30" \
    "the next day's 02:30 (00:30 UTC) runs"

# At the jump's very second, as cron starts runs (03:00:00 CEST): catch_up
# 0 runs the latest slot alone, as 10 s later (at b888798 every skipped
# slot ran: 02:00, 02:30 and 03:00; 60 jobs for "* 2 * * *"); with
# catch_up 1h the skipped slots run too.
sql "DELETE FROM polling_jobs; DELETE FROM jobrun_schedules"
write_config <<EOF
[type.tick]
handler = noop
[schedule.jhalf]
type = tick
cron = 0,30 * * * *
time_zone = Europe/Berlin
[schedule.jmin]
type = tick
cron = * 2 * * *
time_zone = Europe/Berlin
[schedule.jcatch]
type = tick
cron = 0,30 * * * *
time_zone = Europe/Berlin
catch_up = 1h
EOF
run at $((spring - 30))
run at "$spring"
is "$(keys jhalf)" "jhalf@2026-03-29T03:00" \
    "at the jump's second, catch_up 0: 03:00 alone, not the skipped 02:00 and 02:30"
is "$(keys jmin)" "jmin@2026-03-29T02:59" \
    "every minute of 02:xx, catch_up 0: one job at the jump, not 60"
is "$(keys jcatch)" "jcatch@2026-03-29T01:00,jcatch@2026-03-29T01:30,jcatch@2026-03-29T02:00,jcatch@2026-03-29T02:30,jcatch@2026-03-29T03:00" \
    "catch_up 1h: the skipped slots run at the jump too, once each"

# catch_up's edge: a missed slot exactly catch_up old runs, one a second
# older does not.
write_config <<EOF
[type.tick]
handler = noop
[schedule.edge]
type = tick
cron = */5 * * * *
catch_up = 5m
EOF
e0=$(epoch '2026-12-01 11:00:00')
run at $((e0 - 1))
run at $((e0 + 600))
is "$(keys edge)" "edge@2026-12-01T10:55,edge@2026-12-01T11:05,edge@2026-12-01T11:10" \
    "catch_up 5m at 11:10:00: 11:05 (exactly 5 min old) runs, 11:00 does not"
berlin_config

# 2026-10-25: clocks go back from 03:00 CEST to 02:00 CET at 01:00 UTC;
# 02:00..02:59 happen twice
sql "DELETE FROM polling_jobs; DELETE FROM jobrun_schedules"
fall=$(epoch '2026-10-25 01:00:00')
# 01:30:10 CEST (first sight), 02:00:10 and 02:30:10 CEST, 02:00:10 and
# 02:30:10 CET, 03:00:10 and 03:30:10 CET
for t in -5390 -3590 -1790 10 1810 3610 5410; do
	run at $((fall + t))
	[ "$rc" = 0 ] || diag "run at fall$t: $rc $err"
done
is "$(keys night)" "night@2026-10-25T02:30" \
    "the repeated 02:30 runs once, the first time"
is "$(keys half)" "half@2026-10-25T02:00,half@2026-10-25T02:30,half@2026-10-25T03:00,half@2026-10-25T03:30" \
    "a half-hourly schedule runs 02:00 and 02:30 once each across the fold"
is "$(sql "SELECT DATE_FORMAT(FROM_UNIXTIME(0) + INTERVAL last_slot_utc SECOND,
    '%H:%i') FROM jobrun_schedules WHERE name = 'half'")" "02:30" \
    "its row's real time is 03:30 CET, 02:30 UTC"

# --- jobrun schedules -----------------------------------------------------------

run at $((fall + 5410)) schedules
is "$rc" 0 "schedules exits 0"
is "$out" "SCHEDULE             TYPE                 LAST SLOT        DUE SLOT         NEXT SLOT        LAG
night                tick                 2026-10-25T02:30 2026-10-25T02:30 2026-10-26T02:30 0
half                 tick                 2026-10-25T03:30 2026-10-25T03:30 2026-10-25T04:00 0" \
    "schedules lists each schedule's last, due and next slot"
run at $((fall + 7200 + 70)) schedules --json
is "$(jpy '[(s["name"], s["last_slot"], s["due_slot"], s["next_slot"], s["lag"], s["time_zone"]) for s in d["schedules"]]' <<<"$out")" \
    '[["night", "2026-10-25T02:30", "2026-10-25T02:30", "2026-10-26T02:30", 0, "Europe/Berlin"], ["half", "2026-10-25T03:30", "2026-10-25T04:00", "2026-10-25T04:30", 70, "Europe/Berlin"]]' \
    "--json: a due slot not enqueued yet shows its lag in seconds"

run at $((fall + 7200 + 70)) status
is "$(sed -n '/^SCHEDULE/,$p' <<<"$out")" "SCHEDULE                 LAST SLOT             LAG
night                    2026-10-25T02:30       0s
half                     2026-10-25T03:30      70s" \
    "status lists each schedule's latest slot and lag"
run at $((fall + 7200 + 70)) status --json
is "$(jpy 'd["schedules"]' <<<"$out")" \
    '[{"name": "night", "last_slot": "2026-10-25T02:30", "lag_seconds": 0}, {"name": "half", "last_slot": "2026-10-25T03:30", "lag_seconds": 70}]' \
    "status --json: the same under \"schedules\""
run at $((fall + 7200 + 70)) --metrics-file="$T/m.prom"
is "$(grep '^jobrun_schedule' "$T/m.prom")" \
    "jobrun_schedule_last_slot_timestamp_seconds{schedule=\"night\"} $((fall - 1800))
jobrun_schedule_last_slot_timestamp_seconds{schedule=\"half\"} $((fall + 7200))
jobrun_schedule_lag_seconds{schedule=\"night\"} 0
jobrun_schedule_lag_seconds{schedule=\"half\"} 0" \
    "metrics: each schedule's latest slot (the run enqueued 04:00) and lag"

# --- errors --------------------------------------------------------------------

# a schedule seen for the first time at 12:00:00 has the slot of 12:00 due
n=0
for p in '[1]' '{"a":'; do
	n=$((n + 1))
	write_config <<EOF
[type.tick]
handler = noop
[schedule.bad$n]
type = tick
cron = * * * * *
payload = $p
EOF
	run at $((b + 7200)) -q
	is "$rc:$(count "business_key LIKE 'bad$n@%'")" "78:0" \
	    "payload $p: the run exits 78 and enqueues nothing"
done
like "$err" "enqueue schedule bad2: payload is not a JSON object \\(the server's JSON_TYPE\\): \\{\"a\":" \
    "and says the payload is not an object"

write_config <<EOF
[type.tick]
handler = noop
[schedule.mars]
type = tick
cron = @daily
time_zone = Mars/Olympus
EOF
insert_job other tick
run jobrun
is "$rc" 78 "an unknown time zone exits 78 (EX_CONFIG)"
like "$err" "enqueue schedule mars: time zone Mars/Olympus unknown to the server" \
    "and says which zone"
is "$(count "business_key = 'other' AND status = 'pending'")" 1 \
    "nothing is claimed when schedules cannot be enqueued"
sql "DROP TABLE jobrun_schedules"
write_config <<EOF
[type.tick]
handler = noop
[schedule.tick]
type = tick
cron = @daily
EOF
run jobrun
is "$rc" 78 "a missing jobrun_schedules exits 78"
like "$err" "^jobrun: enqueue schedules: no table \`$DB\`\\.\`jobrun_schedules\`; apply sql/004_schedules\\.sql " \
    "and names the migration"
run jobrun check
is "$rc" 78 "check exits 78 without jobrun_schedules"
like "$out" "
problem +1 schedule\\(s\\) need the table jobrun_schedules: no table \`$DB\`\\.\`jobrun_schedules\`
 +fix: apply sql/004_schedules\\.sql
" "check names the missing table, and the migration as the fix"
