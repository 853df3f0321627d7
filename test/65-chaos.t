#!/bin/bash
# Crash consistency: three runners work through 600 jobs while runners are
# SIGKILLed at random moments and replaced, as cron would start new ones.
# A poison job kills its runner every time.  When the queue has drained:
# no job lost or left in processing, every job's handler ran at least
# once, attempts never above max_attempts, and the poison job failed.
# Twice: runners with one handler at a time, then with --jobs=8 over four
# times as many jobs (a kill then strands up to eight jobs at once, and the
# poison job takes up to seven others down with it).  With the attempt
# history on (sql/010_attempts.sql): every job has exactly one success
# row, and the poison job one lost row per attempt, written by recovery.
. "${0%/*}/lib.sh"

jobs=${JOBRUN_TEST_CHAOS_JOBS:-600}
# valgrind runs a runner's slots one at a time: 100 jobs a round there
# (400 with --jobs=8).  Every runner the scene starts, and every job it
# runs, costs CPU under valgrind, which the valgrind pass is bound by
# (issue 31); kills still land while the runners work (each takes seconds
# to start there), and the plain and ASan passes drain 600 and 2400.
under_valgrind && jobs=${JOBRUN_TEST_CHAOS_JOBS:-100}
plan 20
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/010_attempts.sql" || bail_out "cannot load sql/010_attempts.sql"
write_config <<EOF2
[run]
lock_seconds = 3
recover_limit = 1000
batch_size = 100000
max_seconds = 30
backoff_base = 0
backoff_cap = 0

[type.work]
handler = exec
command = $HANDLERS/chaos-work $T/runs
timeout = 10

[type.poison]
handler = exec
command = $HANDLERS/kill-runner
timeout = 10
EOF2
# chaos_round SLOTS JOBS: the whole scene with runners of --jobs=SLOTS
chaos_round() {
	local slots=$1 jobs=$2
	sql "DELETE FROM polling_jobs"
	: >"$T/errors"
	sql "INSERT INTO polling_jobs (business_key, type, max_attempts, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('w:', seq), 'work', 10, NOW(), NOW(), NOW()
	     FROM seq_1_to_$jobs;
	     INSERT INTO polling_jobs (business_key, type, max_attempts, next_run_at,
	        created_at, updated_at)
	     VALUES ('poison', 'poison', 3, NOW(), NOW(), NOW())"
	: >"$T/runs"

	# runners: the live ones, as TIMEOUT-PID:JOBRUN-PID (jobrun_bg)
	runners=()
	kills=0
	started=0
	start_runner() {
		jobrun_bg -q --jobs="$slots" >/dev/null 2>>"$T/errors"
		runners+=("$bg:$bg_pid")
		started=$((started + 1))
	}
	alive() {
		local p live=()
		for p in "${runners[@]}"; do
			proc_gone "${p#*:}" || live+=("$p")
		done
		runners=("${live[@]}")
	}
	left() {
		sql "SELECT COUNT(*) FROM polling_jobs
		     WHERE status IN ('pending', 'processing')"
	}

	deadline=$(( $(date +%s) + 90 + 10 * ${JOBRUN_TEST_SLACK:-0} ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		alive
		while [ "${#runners[@]}" -lt 3 ]; do
			start_runner
		done
		# Under valgrind (JOBRUN_TEST_SLACK) a runner takes seconds to start:
		# kill less often, or none would get anywhere.
		sleep "$(( ${JOBRUN_TEST_SLACK:-0} / 10 )).$(( RANDOM % 4 + 2 ))"
		alive
		if [ "${#runners[@]}" -gt 0 ]; then
			victim=${runners[RANDOM % ${#runners[@]}]}
			kill -9 "${victim#*:}" 2>/dev/null && kills=$((kills + 1))
		fi
		[ "$(left)" -eq 0 ] && break
	done
	for p in "${runners[@]}"; do
		kill -9 "${p#*:}" 2>/dev/null
	done
	wait 2>/dev/null

	runs=$(wc -l <"$T/runs")
	unique=$(sort -u "$T/runs" | wc -l)
	diag "chaos, --jobs=$slots: $jobs jobs + 1 poison, $started runners started, $kills killed at" \
	     "random, $runs handler runs for $unique jobs ($((runs - unique)) repeated" \
	     "after a kill)"
	is "$(left)" 0 "--jobs=$slots: the queue drained: nothing pending or processing"
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'work' AND status = 'success'")" \
	    "$jobs" "--jobs=$slots: every job succeeded: none lost"
	is "$unique" "$jobs" "--jobs=$slots: every job's handler ran at least once"
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE attempts > max_attempts")" 0 \
	    "--jobs=$slots: attempts never above max_attempts"
	is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'poison'")" \
	    "failed	3" "--jobs=$slots: the poison job failed after its 3 attempts"
	like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'poison'")" \
	    "^lock expired: .*no attempts left" "--jobs=$slots: with a last_error that says why"
	is "$(sql "SELECT COUNT(*) FROM polling_jobs j WHERE type = 'work'
	    AND (SELECT COUNT(*) FROM polling_jobs_attempts a WHERE
	    a.job_id = j.id AND a.outcome = 'success') <> 1")" 0 \
	    "--jobs=$slots: every job has exactly one success row in its history"
	is "$(sql "SELECT GROUP_CONCAT(a.outcome ORDER BY a.id)
	    FROM polling_jobs_attempts a JOIN polling_jobs j ON j.id = a.job_id
	    WHERE j.business_key = 'poison'")" "lost,lost,lost" \
	    "--jobs=$slots: the poison job: a lost row for each of its 3 attempts"
	ok "--jobs=$slots: runners were killed along the way" test "$kills" -gt 0
	# (the shell's own "Killed" notices land in the same file: only jobrun's
	# lines count; -q keeps a line per job lost to a recovery, which the
	# counts above judge)
	is "$(grep -E '^(jobrun|ts=)' "$T/errors" | grep -v ' outcome=lost ' |
	    head -3)" "" "--jobs=$slots: no runner printed an error"
}

chaos_round 1 "$jobs"
# Eight slots drain four times as many jobs in about the same time: as many
# random kills land while they work.
chaos_round 8 $((jobs * 4))
