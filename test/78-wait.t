#!/bin/bash
# --wait: a run that finds nothing due waits for work until its time
# budget ends.  A job enqueued, inserted by a plain INSERT, due after a
# delay, or whose runner's lock expired starts while the run waits; the
# run still stops at --max, at its budget, and at once on SIGTERM (exit
# 0); idle, it costs the server a few reads a second whatever its --jobs;
# and four waiting runners with four slots each run every job once while
# jobs arrive from jobrun enqueue and from plain INSERTs.
. "${0%/*}/lib.sh"

plan 44
# A server of its own: the idle run's statements are counted on the
# server's Questions, which other test files running at once would add to.
use_own_server
setup_db
# note_config [LINE...]: the type note (its handler appends the job's id
# to $T/ids), after [run] LINE... when given
note_config() {
	{
		[ $# -eq 0 ] || printf '[run]\n'
		[ $# -eq 0 ] || printf '%s\n' "$@"
		printf '[type.note]\nhandler = exec\n'
		printf 'command = %s\ntimeout = 30\n' "$HANDLERS/append-id $T/ids"
	} | write_config
}
note_config

waiting() { file_has "$1" 'waiting for work'; }
succeeded() { job_is "$1" "status = 'success'"; }
running() { ! proc_gone "$1"; }

# --- one waiting run: what it notices --------------------------------------

jobrun_bg --wait --max-seconds=100 --json -v >"$T/out1" 2>"$T/err1"
run1=$bg pid1=$bg_pid
ok "with nothing due, the run says it waits" wait_for 30 waiting "$T/err1"

run jobrun enqueue --type=note --key=enq
ok "a job enqueued while the run waits is run" wait_for 30 succeeded enq
ok "by the waiting run, which goes on waiting" running "$pid1"

insert_job ins note
ok "a job of a plain INSERT is run too" wait_for 30 succeeded ins

sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
     updated_at) VALUES ('later', 'note', NOW() + INTERVAL 2 SECOND, NOW(),
     NOW())"
ok "a job due two seconds later is run when it is due" \
    wait_for 30 succeeded later
is "$(sql "SELECT TIMESTAMPDIFF(SECOND, next_run_at, updated_at) >= 0
     FROM polling_jobs WHERE business_key = 'later'")" 1 \
    "and not before its time (the server's clock)"

# A job whose runner died: processing, its lock expired.
insert_job dead note NULL "status, attempts, locked_by, locked_until" \
    "'processing', 1, 'gone:1:abcdefabcdef:1@1', NOW() - INTERVAL 1 SECOND"
ok "a job whose lock expired is recovered and run" \
    wait_for 30 succeeded dead
is "$(sql "SELECT attempts FROM polling_jobs WHERE business_key = 'dead'")" \
    2 "in its second attempt"
# A look from the head (an expired lock, a job due behind the cursor)
# comes at least every 10 s, however long it takes (jobrun(7)).
took_between "$(sql "SELECT TIMESTAMPDIFF(SECOND, created_at, finished_at)
    FROM polling_jobs WHERE business_key = 'dead'")" 0 10 \
    "within 10 s of its lock's end (the server's clock)"

# A job due behind the last claimed one (inserted with a time an hour
# past): the probe starts past that job, and from the head of the range
# once a second, so it is seen too.
inserted=$(sql "SELECT UNIX_TIMESTAMP()")
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
     updated_at) VALUES ('behind', 'note', NOW() - INTERVAL 1 HOUR,
     NOW() - INTERVAL 1 HOUR, NOW())"
ok "a job due behind the last one claimed is run too" \
    wait_for 30 succeeded behind
took_between "$(sql "SELECT UNIX_TIMESTAMP(finished_at) - $inserted
    FROM polling_jobs WHERE business_key = 'behind'")" 0 10 \
    "within 10 s of its INSERT (the server's clock)"

# Without --max (or [run] batch_size) a waiting run's budget is its time
# alone, not the default batch of 20.  (One INSERT of the 21: a job
# enqueued while the run waits is seen above; under valgrind each jobrun
# enqueue costs more than a second of CPU.)
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
     updated_at) SELECT CONCAT('more', seq), 'note', NOW(), NOW(), NOW()
     FROM seq_1_to_21"
more_done() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
	    AND business_key LIKE 'more%'")" = 21 ]
}
ok "21 more jobs are run by the same run" wait_for 60 more_done
ok "the run still waits, inside its budget" running "$pid1"
t0=$(date +%s%N)
kill -TERM "$pid1"
wait "$run1"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$rc" 0 "SIGTERM while it waits: the run exits 0"
took_between_ms "$ms" 0 2000 \
    "at once (in $ms ms), not at the end of its budget"
out=$(cat "$T/out1")
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" 26/26 \
    "--json counts the 26 jobs it ran"
is "$(jget recovered <<<"$out")" 1 "and the one it recovered"
is "$(sort -n "$T/ids" | uniq -d)" "" "no job ran twice"

# --- budgets ----------------------------------------------------------------

# The time budget: an empty queue keeps a waiting run until it ends.
t0=$(date +%s%N)
run jobrun --wait --max-seconds=2 --json
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$rc" 0 "an idle waiting run exits 0 at its budget"
took_between_ms "$ms" 2000 20000 \
    "after its two seconds ($ms ms), not before"
run jobrun --max-seconds=2 --json
is "$rc/$(jget claimed <<<"$out")" 0/0 "without --wait it exits at once"

# The batch budget: --max=2 stops after the second job, whatever is left.
jobrun_bg --wait --max=2 --max-seconds=100 --json -v >"$T/out2" 2>"$T/err2"
run2=$bg
ok "a waiting run with --max=2 waits" wait_for 30 waiting "$T/err2"
insert_job m1 note
ok "it runs the first job" wait_for 30 succeeded m1
insert_job m2 note
wait "$run2"
is "$?" 0 "and exits 0 after the second"
is "$(jget claimed <<<"$(cat "$T/out2")")" 2 "having claimed two"
insert_job m3 note
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'm3'")" \
    pending "a third job waits for the next run"

# [run] wait = yes does what --wait does; [run] batch_size is not a
# waiting run's budget.
note_config "wait = yes" "batch_size = 1" "max_seconds = 100"
jobrun_bg -v >"$T/out3" 2>"$T/err3"
run3=$bg pid3=$bg_pid
ok "[run] wait = yes: the run takes the job left" wait_for 30 succeeded m3
ok "and waits for more" wait_for 30 waiting "$T/err3"
insert_job m4 note
ok "batch_size = 1 does not end it: it runs the next job too" \
    wait_for 30 succeeded m4

# --- what waiting costs the server ------------------------------------------

# Idle, with eight slots: one of them reads the table, the others sleep.
# Questions counts every statement the server is sent (this test's own
# three included); the run's are at most ten a second (one read each
# 100 ms), not ten per slot.
kill -TERM "$pid3"
wait "$run3"
jobrun_bg --wait --jobs=8 --max-seconds=100 -v >"$T/out4" 2>"$T/err4"
run4=$bg pid4=$bg_pid
wait_for 30 waiting "$T/err4"
q0=$(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }')
t0=$(date +%s%N)
sleep 3		# the window measured, not a wait for a state
q1=$(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }')
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
per_s=$(( (q1 - q0) * 1000 / ms ))
between "$per_s" 0 20 "an idle waiting run with --jobs=8 sends $per_s statements a second (at most 20)"

# --- exactly once ------------------------------------------------------------

# Four waiting runners with four slots each; two enqueuers and an
# application's plain INSERTs add 240 jobs meanwhile (24 under valgrind,
# where an enqueue takes seconds of CPU, and the runners' budget must
# outlast them: every path of this scene, four runners at once taking
# jobs from both kinds of feeder, is there with 24).
kill -TERM "$pid4"
wait "$run4"

# A paused type's due job is no work: a waiting run reads the pauses
# once a second, rather than probe and claim for that job ten times a
# second; resumed, the job runs while the run waits.
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/003_flow.sql" || bail_out "cannot load sql/003_flow.sql"
jobrun pause note >/dev/null
insert_job held note
jobrun_bg --wait --max-seconds=100 -v >"$T/out8" 2>"$T/err8"
run8=$bg pid8=$bg_pid
wait_for 30 waiting "$T/err8"
q0=$(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }')
t0=$(date +%s%N)
sleep 3		# the window measured, not a wait for a state
q1=$(sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }')
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
per_s=$(( (q1 - q0) * 1000 / ms ))
between "$per_s" 0 20 "with a paused type's job due, a waiting run sends $per_s statements a second (at most 20)"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'held'")" \
    pending "and leaves the job alone"
jobrun resume note >/dev/null
ok "resumed, the job is run by the waiting run" wait_for 30 succeeded held
kill -TERM "$pid8"
wait "$run8"
is "$?" 0 "which exits 0 on SIGTERM"
: >"$T/ids"
note_config
per=80
under_valgrind && per=8
total=$((3 * per))
pids=() runs=()
for i in 1 2 3 4; do
	jobrun_bg --wait --jobs=4 --max-seconds=100 -v >"$T/out5.$i" \
	    2>"$T/err5.$i"
	pids+=("$bg_pid") runs+=("$bg")
done
for i in 1 2; do
	( for n in $(seq 1 "$per"); do
		jobrun enqueue --type=note --key="x-e$i-$n" >/dev/null || exit 1
	done ) &
	feeders+=($!)
done
( for n in $(seq 1 "$per"); do insert_job "x-i-$n" note >/dev/null || exit 1;
    done ) &
feeders+=($!)
fed=0
for f in "${feeders[@]}"; do wait "$f" || fed=1; done
is "$fed" 0 "$total jobs went in, from jobrun enqueue and plain INSERTs"
all_done() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
	    AND business_key LIKE 'x-%'")" = "$total" ]
}
ok "every one of them succeeded" wait_for 120 all_done
kill -TERM "${pids[@]}"
st=0
for r in "${runs[@]}"; do wait "$r" || st=$?; done
is "$st" 0 "the four runners exit 0 on SIGTERM"
is "$(wc -l <"$T/ids")" "$total" "$total handler runs"
is "$(sort -n "$T/ids" | uniq -d | wc -l)" 0 "none of them twice"
claimed=0
for i in 1 2 3 4; do
	grep -q 'waiting for work' "$T/err5.$i" && claimed=$((claimed + 1))
done
is "$claimed" 4 "every runner waited"

# --- a schedule's slot, on time -----------------------------------------------

# A waiting run looks at the schedules as the server's clock enters each
# minute: the next slot of an every-minute schedule is enqueued and run
# within a second of its time, by the server's clock, and once, with two
# waiting runs.
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/004_schedules.sql" || bail_out "cannot load sql/004"
cat >>"$CONF" <<EOF2

[schedule.tick]
type = note
cron = * * * * *
EOF2
jobrun_bg --wait --max-seconds=100 -v >"$T/out6" 2>"$T/err6"
run6=$bg pid6=$bg_pid
jobrun_bg --wait --max-seconds=100 -v >"$T/out7" 2>"$T/err7"
run7=$bg pid7=$bg_pid
ticks() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'tick@%'
	    AND status = 'success'"
}
a_tick() { [ "$(ticks)" -ge 1 ]; }
ok "the slot after the runs started is enqueued and run" wait_for 75 a_tick
# The slot's time is in its key (the session's zone, as NOW()'s).
late=$(sql "SELECT TIMESTAMPDIFF(SECOND, STR_TO_DATE(SUBSTRING_INDEX(
    business_key, '@', -1), '%Y-%m-%dT%H:%i'), finished_at)
    FROM polling_jobs WHERE business_key LIKE 'tick@%' ORDER BY id DESC
    LIMIT 1")
took_between "$late" 0 1 "within a second of its time ($late s, the server's clock)"
kill -TERM "$pid6" "$pid7"
wait "$run6"; r6=$?
wait "$run7"; r7=$?
is "$r6/$r7" 0/0 "both runs exit 0"
once=
for id in $(sql "SELECT id FROM polling_jobs WHERE business_key LIKE 'tick@%'")
do
	once+="$(grep -cx "$id" "$T/ids") "
done
like "$once" '^(1 )+$' "each slot's job ran once, with two waiting runs ($once)"
