#!/bin/bash
# Runners whose own clocks are an hour off, one ahead and one behind (a
# failure other job runners' users reported: jobs run early, or twice,
# by a host with a wrong clock).  jobrun decides every time by the
# database's clock: the two drain 40 jobs together, each exactly once;
# a job due in 30 minutes is not run; a schedule's slots are the
# server's, not the hour ahead's, also for two waiting runs (--wait),
# which enqueue and run the next slot within a second of its time by the
# server's clock.  The clocks are shifted by an
# LD_PRELOAD shim over clock_gettime, time and gettimeofday (as
# faketime does); -v's timestamps show the shift took.
. "${0%/*}/lib.sh"

plan 11
setup_db
# The handlers inherit LD_PRELOAD: a ThreadSanitizer runtime in sh dies.
if under_valgrind || [[ $JOBRUN = */tsan/* ]]; then
	skip 11 "an LD_PRELOAD shim under valgrind or ThreadSanitizer"
	exit 0
fi
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/004_schedules.sql" || bail_out "cannot load sql/004"
cat >"$T/shim.c" <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

/* The wall clock CLOCK_SHIFT seconds off; the other clocks as they are. */
int
clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *shift = getenv("CLOCK_SHIFT");
	int rc;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc == 0 && shift != NULL &&
	    (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += atol(shift);
	return rc;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (tv != NULL) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}
EOF2
"${CC:-cc}" -shared -fPIC -o "$T/shim.so" "$T/shim.c" -ldl ||
    bail_out "cannot build the clock shim"
case $JOBRUN in
*/asan/*) preload=$("${CC:-cc}" -print-file-name=libasan.so):$T/shim.so ;;
*) preload=$T/shim.so ;;
esac
# skewed NAME SECONDS: $T/NAME runs jobrun with its clock SECONDS off (the
# shim for jobrun alone, not for the test's own pgrep and sleep)
skewed() {
	printf '#!/bin/sh\nLD_PRELOAD=%s CLOCK_SHIFT=%s exec %s "$@"\n' \
	    "$preload" "$2" "$JOBRUN" >"$T/$1"
	chmod +x "$T/$1"
}
skewed ahead 3600
skewed behind -3600

write_config <<EOF2
[run]
batch_size = 1000

[type.work]
handler = exec
command = $HANDLERS/append-id $T/ran

[type.tick]
handler = noop

[schedule.tick]
type = tick
cron = * * * * *
EOF2
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('w', seq), 'work', NOW(), NOW(), NOW() FROM seq_1_to_40;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     VALUES ('later', 'work', NOW() + INTERVAL 30 MINUTE, NOW(), NOW())"

# The server's second before the runners start: a schedule first seen
# starts at the second it is seen, so a slot at that second or later,
# up to the server's time at the end, is due and enqueued (by the
# server's clock); one of an earlier second is not.
second_before=$(sql "SELECT UNIX_TIMESTAMP()")
JOBRUN=$T/ahead jobrun_bg --jobs=2 -v >/dev/null 2>"$T/ahead.err"
ahead=$bg
JOBRUN=$T/behind jobrun_bg --jobs=2 -v >/dev/null 2>"$T/behind.err"
behind=$bg
wait "$ahead"; rc_ahead=$?
wait "$behind"; rc_behind=$?
is "$rc_ahead/$rc_behind" 0/0 "runners an hour ahead and an hour behind both exit 0"

# -v's first timestamp against the server's clock, in hours
skew() {
	local ts
	ts=$(sed -n 's/^ts=\([^ ]*\) .*/\1/p' "$1" | head -n 1)
	python3 -c 'import sys, datetime
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%SZ")
print(round((t.timestamp() - float(sys.argv[2])) / 3600 + 0.0, 0))' \
	    "${ts:-1970-01-01T00:00:00Z}" "$(sql "SELECT UNIX_TIMESTAMP()")"
}
is "$(skew "$T/ahead.err")/$(skew "$T/behind.err")" "1.0/-1.0" \
    "their own clocks were an hour ahead and an hour behind (-v's timestamps)"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'work' AND status = 'success' AND attempts = 1")" 40 \
    "the 40 due jobs succeeded, each at its first attempt"
is "$(sort "$T/ran" | uniq -d | wc -l)/$(wc -l <"$T/ran")" 0/40 \
    "each handler ran once between the two"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'later'")" \
    "pending	0" "the job due in 30 minutes was not run early by the runner an hour ahead"
# A schedule first seen enqueues no slot of the past: only one that
# began at or after the second the runners started (the server's minute
# changed while they ran), and none of the hour ahead.
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'tick'
           AND UNIX_TIMESTAMP(STR_TO_DATE(SUBSTRING_INDEX(business_key, '@', -1),
               '%Y-%m-%dT%H:%i')) BETWEEN $second_before AND UNIX_TIMESTAMP()")" \
    "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'tick'")" \
    "a schedule first seen enqueues no slot but those begun while it ran, none of the hour ahead"
is "$(sql "SELECT last_slot_utc <= UNIX_TIMESTAMP() FROM jobrun_schedules
           WHERE name = 'tick'")" 1 \
    "the schedule's last slot is the server's minute, not one an hour ahead"

# --- waiting runs an hour apart: a schedule's slot on the server's time -------

# Two waiting runs (--wait), one an hour ahead and one behind: the next
# slot is enqueued as the server's clock enters its minute, run within a
# second of its time by the server's clock, and once; no slot of the hour
# ahead is made.
sql "DELETE FROM polling_jobs"
# The slots to come are those after the schedule's last one, which the
# runs above recorded: the server's clock at this line is not that limit
# (a minute that begins between the runs above and this one has a slot
# still to make, rightly).
last_minute=$(sql "SELECT last_slot_utc DIV 60 FROM jobrun_schedules
    WHERE name = 'tick'")
JOBRUN=$T/ahead jobrun_bg --wait --max-seconds=100 -v >/dev/null 2>"$T/ahead.wait"
ahead=$bg ahead_pid=$bg_pid
JOBRUN=$T/behind jobrun_bg --wait --max-seconds=100 -v >/dev/null 2>"$T/behind.wait"
behind=$bg behind_pid=$bg_pid
# The slot judged is the first whose minute begins once both runs wait:
# one that began before (while the runs above ended and these started,
# 4 s under load in CI) is rightly made as they start, late by as much.
slot_of="UNIX_TIMESTAMP(STR_TO_DATE(SUBSTRING_INDEX(business_key, '@', -1),
    '%Y-%m-%dT%H:%i'))"
both_wait() {
	file_has "$T/ahead.wait" 'nothing due: waiting for work' &&
	    file_has "$T/behind.wait" 'nothing due: waiting for work'
}
wait_for 30 both_wait
armed=$(sql "SELECT UNIX_TIMESTAMP()")
ticked() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'tick'
	    AND status = 'success' AND $slot_of >= $armed")" -ge 1 ]
}
ok "waiting runs an hour apart: the next slot is enqueued and run" \
    wait_for 75 ticked
late=$(sql "SELECT TIMESTAMPDIFF(SECOND, STR_TO_DATE(SUBSTRING_INDEX(
    business_key, '@', -1), '%Y-%m-%dT%H:%i'), finished_at)
    FROM polling_jobs WHERE type = 'tick' AND $slot_of >= $armed
    ORDER BY id LIMIT 1")
took_between "$late" 0 1 "within a second of its time by the server's clock ($late s)"
# A slot whose minute begins as the runs are stopped may be enqueued and
# left pending for the next run, its attempt not spent: not lost.
stopped_at=$(sql "SELECT UNIX_TIMESTAMP()")
kill -TERM "$ahead_pid" "$behind_pid"
wait "$ahead"; rc_ahead=$?
wait "$behind"; rc_behind=$?
is "$rc_ahead/$rc_behind" 0/0 "both waiting runs exit 0 on SIGTERM"
wrong="type = 'tick'
    AND (NOT (status = 'success' AND attempts = 1
              OR status = 'pending' AND attempts = 0
                 AND $slot_of >= $stopped_at - 1)
         OR $slot_of DIV 60 <= $last_minute
         OR $slot_of > UNIX_TIMESTAMP())"
wrongs=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE $wrong")
is "$wrongs" 0 \
    "each slot after the schedule's last, run once; none of the hour ahead"
[ "$wrongs" = 0 ] || diag "$(sql "SELECT business_key, status, attempts, finished_at,
        UNIX_TIMESTAMP(), $last_minute, $stopped_at FROM polling_jobs
        WHERE $wrong")"
