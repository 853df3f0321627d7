#!/bin/bash
# A runner SIGSTOPped past its lock while another recovers the job and
# runs it, then SIGCONTed (a failure other job runners' users reported:
# two outcomes for one job, the stale runner's written over the new
# one's).  The stopped runner's write is refused: the job has one
# outcome, the second runner's success at attempt 2; the woken runner
# counts the job lost, says why, and exits 1.
. "${0%/*}/lib.sh"

plan 7
setup_db
cat >"$T/work" <<EOF2
#!/bin/sh
echo "\$JOB_ATTEMPT" >>"$T/ran"
echo \$\$ >"$T/pid.\$JOB_ATTEMPT"
: >"$T/started.\$JOB_ATTEMPT"
while [ ! -e "$T/go" ]; do sleep 0.05; done
EOF2
chmod +x "$T/work"
write_config <<EOF2
[run]
lock_seconds = 3

[type.work]
handler = exec
command = $T/work
EOF2
insert_job stop:1 work

jobrun_bg >/dev/null 2>"$T/a.err"
a=$bg a_pid=$bg_pid
wait_for 30 test -e "$T/started.1" || bail_out "runner A's handler did not start"
kill -STOP "$a_pid"
defer_kill -CONT "$a_pid"
# The lock's end (Unix s) is in its token; it has expired once the
# server's clock is past it.
end=$(sql "SELECT CAST(SUBSTRING_INDEX(locked_by, '@', -1) AS UNSIGNED)
           FROM polling_jobs WHERE business_key = 'stop:1'")
lock_ended() {
	[ "$(sql "SELECT UNIX_TIMESTAMP() > $end")" = 1 ]
}
wait_for 30 lock_ended || bail_out "runner A's lock never expired"
# Both handlers may finish now: A's is still running, A is stopped.
: >"$T/go"
run jobrun
is "$rc" 0 "runner B recovers the stopped runner's job and runs it: exit 0"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'stop:1'")" \
    "success	2" "the job succeeded at attempt 2, B's"
# A's handler has exited (a zombie until stopped A reaps it): woken, A
# finds a finished handler, not one to stop.
handler_exited() {
	[ "$(awk '{ print $3 }' "/proc/$(cat "$T/pid.1")/stat" 2>/dev/null)" = Z ]
}
wait_for 30 handler_exited || bail_out "runner A's handler did not exit"
kill -CONT "$a_pid"
wait "$a"
is "$?" 1 "runner A, woken, exits 1: its job was lost"
like "$(cat "$T/a.err")" 'outcome=lost .*msg="lock taken by another runner; outcome not recorded: success"' \
    "and says the lock was taken, and what it did not record"
is "$(sql "SELECT status, attempts, last_error IS NULL FROM polling_jobs WHERE business_key = 'stop:1'")" \
    "success	2	1" "A's write was refused: the job keeps B's one outcome"
is "$(sort "$T/ran" | tr '\n' ' ')" "1 2 " "each attempt's handler ran once"
is "$(sql "SELECT locked_by IS NULL FROM polling_jobs WHERE business_key = 'stop:1'")" 1 \
    "no lock left on the job"
