#!/bin/bash
# A lock lasts real time whatever the time zone does.  next_run_at is the
# application's local time, but a lock is jobrun's: a DST jump or a SET
# GLOBAL time_zone must neither make a live lock look expired (the same
# job would run twice at once) nor keep a dead runner's job stuck for an
# hour.  Zones with transitions a few seconds ahead are compiled with zic
# and loaded into a server of this file's own, as mysql_tzinfo_to_sql
# loads a real zone; runners claim before a transition and others look
# at the lock after it.
. "${0%/*}/lib.sh"

plan 24

command -v zic >/dev/null || bail_out "zic (libc-bin) is needed"
use_own_server
setup_db

now() {
	sql "SELECT UNIX_TIMESTAMP()"
}

# offset ZONE: minutes ZONE is ahead of UTC now, by the server
offset() {
	sql "SET time_zone = '$1'; SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(),
	    NOW())"
}

# wait_until EPOCH: the server's clock has passed EPOCH
wait_until() {
	local i=0
	while [ "$(now)" -lt "$1" ]; do
		i=$((i + 1))
		[ $i -lt 1200 ] || bail_out "the server's clock never reached $1"
		sleep 0.1
	done
}

# make_zone NAME DIRECTION EPOCH: a zone at UTC+0 standard time with a DST
# rule (UTC+1) that starts (spring) or ends (fall) at EPOCH, compiled by zic
# and loaded into the server as mysql_tzinfo_to_sql loads any zone
make_zone() {
	local day time
	day=$(date -u -d "@$3" '+%b %-d')
	time=$(date -u -d "@$3" '+%H:%M:%S')
	{
		if [ "$2" = spring ]; then
			printf 'Rule T%s 2026 only - Jan 1 0:00u 0 S\n' "$1"
			printf 'Rule T%s 2026 only - %s %su 1:00 D\n' "$1" "$day" "$time"
		else
			printf 'Rule T%s 2026 only - Jan 1 0:00u 1:00 D\n' "$1"
			printf 'Rule T%s 2026 only - %s %su 0 S\n' "$1" "$day" "$time"
		fi
		printf 'Zone Test/%s 0:00 T%s X%%sT\n' "$1" "$1"
	} >"$T/$1.zic"
	zic -d "$T/zoneinfo" "$T/$1.zic" 2>"$T/zic.err" ||
	    bail_out "zic: $(cat "$T/zic.err")"
	mariadb-tzinfo-to-sql "$T/zoneinfo/Test/$1" "Test/$1" 2>/dev/null |
	    mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot mysql ||
	    bail_out "cannot load zone Test/$1"
}

# config FILE ZONE LOCK: a config for the test's jobs in ZONE ("" for the
# server's) with lock_seconds LOCK
config() {
	{
		printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n' \
		    "$JOBRUN_TEST_SOCKET" "$DB"
		[ -n "$2" ] && printf 'time_zone = %s\n' "$2"
		printf '[run]\nlock_seconds = %s\nmax_seconds = 120\n' "$3"
		printf '[type.hold]\nhandler = exec\ncommand = %s\ntimeout = 300\n' \
		    "$T/hold"
		printf '[type.idle]\nhandler = noop\n'
	} >"$1"
}

# The handler says it started and holds its job until told to go.
cat >"$T/hold" <<EOF
#!/bin/sh
echo "\$JOB_ID" >>"$T/runs"
echo "\$PPID" >"$T/runner-pid.\$JOB_BUSINESS_KEY"
touch "$T/started.\$JOB_BUSINESS_KEY"
while [ ! -e "$T/go.\$JOB_BUSINESS_KEY" ]; do sleep 0.05; done
EOF
chmod +x "$T/hold"
: >"$T/runs"

wait_file() {
	local i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -lt 1200 ] || return 1
		sleep 0.05
	done
}

# start_runner CONF KEY: a runner that claims job KEY; RUNNER is the pid
# of jobrun itself (its handler's parent), not of the timeout around it
start_runner() {
	jobrun_raw --config="$1" --type=hold --max=1 >"$T/runner.$2" 2>&1 &
	RUNNER_WATCH=$!
	wait_file "$T/started.$2" || bail_out "job $2 was never started"
	RUNNER=$(cat "$T/runner-pid.$2")
}

enqueue() {
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	    created_at, updated_at) VALUES ('$1', 'hold', NOW(), NOW(), NOW())"
}

job() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}

# The Unix time the claim was made, from the lock jobrun wrote.
claimed_at() {
	echo $(( $(job "$1" "SUBSTRING_INDEX(locked_by, '@', -1)") - $2 ))
}

# recover_within CONF KEY LOCK: run runners that claim nothing until one
# recovers KEY; prints the seconds from the claim to the end of that run,
# and from the claim to the start of the last run that did not recover it
# (none: the first did), both by the server's clock.  A poll's own length
# (a loaded machine stretches each run) then widens neither figure.
recover_within() {
	local claim deadline r t0 miss=none
	claim=$(claimed_at "$2" "$3")
	deadline=$((claim + $3 + 60))
	while [ "$(now)" -lt "$deadline" ]; do
		t0=$(now)
		r=$(jobrun_raw --config="$1" --type=idle --json 2>/dev/null |
		    jget recovered)
		if [ "$r" = 1 ]; then
			echo "$(( $(now) - claim )) $miss"
			return
		fi
		miss=$((t0 - claim))
		sleep 0.2
	done
	echo "never $miss"
}
# on_time "TOOK MISS" LOCK: recovered no sooner than LOCK + 1 s after the
# claim (the lock is over), and not missed by a run that started LOCK + 2 s
# after it or later (whole seconds: the claim's second and the lock's end
# may each be read one apart)
on_time() {
	local took=${1% *} miss=${1#* }
	[ "$took" != never ] && [ "$took" -ge $(($2 + 1)) ] &&
	    { [ "$miss" = none ] || [ "$miss" -le $(($2 + 1)) ]; }
}

# --- spring forward: a live lock stays live -----------------------------------

# Time for a runner to start and claim (more under valgrind).
margin=$((4 + ${JOBRUN_TEST_SLACK:-0}))

start=$(now)
jump=$((start + margin + 4))
make_zone Spring spring "$jump"
config "$T/spring.conf" Test/Spring 60
enqueue spring
start_runner "$T/spring.conf" spring
is "$(offset Test/Spring)" 0 "the zone is on UTC when runner A claims"
ok "runner A claimed before the clocks went forward" \
    test "$(now)" -lt "$jump"
wait_until $((jump + 1))
is "$(offset Test/Spring)" 60 "then the clocks go forward an hour"
run jobrun_raw --config="$T/spring.conf" --type=idle --json
is "$(jget recovered <<<"$out")" 0 \
    "after the jump a second runner does not take the live lock"
is "$(job spring status)" processing "the job is still processing under A"
touch "$T/go.spring"
wait "$RUNNER_WATCH"
is "$?" 0 "runner A finishes its job"
is "$(job spring "CONCAT(status, '/', attempts)")" success/1 \
    "the job succeeded on its first attempt"
is "$(grep -cx "$(job spring id)" "$T/runs")" 1 "its handler ran once"

# --- fall back: a dead runner's job comes back on time ------------------------

start=$(now)
jump=$((start + margin + 6))
make_zone Fall fall "$jump"
# A lock longer than the runner may take to claim, so that it ends after
# the clocks went back.
lock=$((margin + 2))
config "$T/fall.conf" Test/Fall "$lock"
enqueue fall
wait_until $((jump - margin))
start_runner "$T/fall.conf" fall
is "$(offset Test/Fall)" 60 "the zone is an hour ahead of UTC when runner A claims"
claim=$(claimed_at fall "$lock")
ok "runner A claimed before the clocks went back" test "$claim" -lt "$jump"
kill -KILL "$RUNNER"
wait "$RUNNER_WATCH" 2>/dev/null
killed_runner_gone
is "$(job fall status)" processing "A died holding the job"
took=$(recover_within "$T/fall.conf" fall "$lock")
is "$(offset Test/Fall)" 0 "the clocks have gone back"
ok "across the hour that repeats, recovered within lock_seconds + 1 s of the claim (s from the claim: recovered, last missed: $took)" \
    on_time "$took" "$lock"
is "$(job fall "CONCAT(status, '/', attempts)")" pending/1 \
    "the job is pending again, its attempt counted"
ok "its last_error names the runner that died" \
    test -n "$(job fall "last_error LIKE 'lock expired: runner %:%:%:% did not finish attempt 1 of 5'" | grep -x 1)"
sql "DELETE FROM polling_jobs WHERE business_key = 'fall'"

# --- a global zone change mid-run ---------------------------------------------

sql "SET GLOBAL time_zone = '+00:00'"
config "$T/global.conf" "" 60
enqueue global
start_runner "$T/global.conf" global
sql "SET GLOBAL time_zone = '+05:00'"
is "$(sql "SELECT @@session.time_zone")" +05:00 "new sessions are five hours ahead"
run jobrun_raw --config="$T/global.conf" --type=idle --json
is "$(jget recovered <<<"$out")" 0 \
    "SET GLOBAL time_zone ahead: a new runner does not take the live lock"
is "$(job global status)" processing "the job stays with runner A"
touch "$T/go.global"
wait "$RUNNER_WATCH"
is "$(job global "CONCAT(status, '/', attempts)")/$(grep -cx "$(job global id)" "$T/runs")" \
    success/1/1 "runner A records success; the job ran once"

config "$T/back.conf" "" 5
enqueue back
start_runner "$T/back.conf" back
kill -KILL "$RUNNER"
wait "$RUNNER_WATCH" 2>/dev/null
killed_runner_gone
sql "SET GLOBAL time_zone = '-05:00'"
took=$(recover_within "$T/back.conf" back 5)
ok "SET GLOBAL time_zone ten hours back: the dead runner's job comes back on time ($took)" \
    on_time "$took" 5
sql "DELETE FROM polling_jobs WHERE business_key = 'back'"
sql "SET GLOBAL time_zone = '+00:00'"

# --- another worker's lock is judged as that worker judges it ------------------

sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
    next_run_at, locked_by, locked_until, created_at, updated_at) VALUES
    ('php-live', 'hold', 'processing', 1, NOW(), 'web1-12345',
     NOW() + INTERVAL 5 MINUTE, NOW(), NOW()),
    ('php-dead', 'hold', 'processing', 1, NOW(), 'web1-12346',
     NOW() - INTERVAL 1 SECOND, NOW(), NOW()),
    ('php-at', 'hold', 'processing', 1, NOW(), 'worker@1',
     NOW() + INTERVAL 5 MINUTE, NOW(), NOW())"
run jobrun_raw --config="$T/back.conf" --type=idle --json
is "$(jget recovered <<<"$out")" 1 "a seed-style worker's expired lock is recovered"
is "$(job php-dead status)" pending "the one whose locked_until passed"
is "$(job php-live status)" processing "one whose locked_until is ahead is left alone"
is "$(job php-at status)" processing \
    "a worker id ending in @digits is not mistaken for a jobrun lock"
