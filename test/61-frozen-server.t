#!/bin/bash
# A frozen server does not freeze jobrun.  The server of this file's own is
# SIGSTOPped (and SIGCONTed) for real while jobrun waits on it in a claim,
# a lock extension, a checkpoint and a mark.  Each statement waits at most
# read_timeout; a handler's timeout is enforced on time all the same; two
# signals end the run within a second; and what could not be recorded is
# left in processing for recovery, as the manual says.
. "${0%/*}/lib.sh"

plan 28

use_own_server
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
server_pid=$(cat "$OWN_SERVER/mysqld.pid")
defer_kill -CONT "$server_pid"
freeze() { kill -STOP "$server_pid"; }
thaw() { kill -CONT "$server_pid"; }
ms() { date +%s%3N; }

# The handler: says it started (its pid in the file), waits for go, then
# does what its argument says.
cat >"$T/step" <<EOF
#!/bin/sh
echo \$\$ >"$T/started.\$JOB_BUSINESS_KEY"
while [ ! -e "$T/go.\$JOB_BUSINESS_KEY" ]; do sleep 0.02; done
case \$1 in
ok) exit 0 ;;
checkpoint)
	echo '{"at":1}' >&3
	read -r answer <&3
	echo "\$answer" >"$T/answer.\$JOB_BUSINESS_KEY"
	exit 0 ;;
esac
EOF
cat >"$T/long" <<EOF
#!/bin/sh
echo \$\$ >"$T/started.\$JOB_BUSINESS_KEY"
sleep 60
EOF
chmod +x "$T/step" "$T/long"
{
	printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n' \
	    "$JOBRUN_TEST_SOCKET" "$DB"
	printf 'read_timeout = 2\nwrite_timeout = 2\nconnect_timeout = 2\n'
	printf '[run]\nlock_seconds = 3\n'
	printf '[type.ok]\nhandler = exec\ncommand = %s ok\n' "$T/step"
	printf '[type.cp]\nhandler = exec\ncommand = %s checkpoint\n' "$T/step"
	printf '[type.long]\nhandler = exec\ncommand = %s\ntimeout = 4\n' "$T/long"
	printf '[type.patient]\nhandler = exec\ncommand = %s\ntimeout = 120\n' "$T/long"
} >"$CONF"

started() { [ -s "$T/started.$1" ]; }
job() { sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"; }
enqueue() { insert_job "$2" "$1"; }
# start_run TYPE: a run in the background; WATCH is its pid
start_run() {
	jobrun --type="$1" --max=1 --json >"$T/out.$1" 2>"$T/err.$1" &
	WATCH=$!
}
# finish: wait for the run; RC its exit status, TOOK the ms since $since
finish() {
	wait "$WATCH"
	RC=$?
	TOOK=$(( $(ms) - since ))
}

# --- a mark ------------------------------------------------------------------

enqueue ok mark
start_run ok
wait_for 30 started mark || bail_out "the handler never started"
freeze
since=$(ms)
touch "$T/go.mark"
finish
thaw
is "$RC" 69 "the server freezes before the mark: exit 69"
took_between_ms "$TOOK" 1500 4500 "after read_timeout (2 s), not when the server comes back ($TOOK ms)"
like "$(cat "$T/err.ok")" "no answer within read_timeout 2 s" "stderr says the server did not answer"
# The mark reached the server before it froze: the server may still apply
# it when it wakes up, or jobrun's run left it to recovery; either way the
# attempt counts once and the job is never run twice at once.
like "$(job mark "CONCAT(status, '/', attempts)")" '^(processing|success)/1$' \
    "the job is left for recovery, or has the mark the server got before it froze"
sql "DELETE FROM polling_jobs"

# --- a lock extension, and the handler's timeout ------------------------------

enqueue long ext
start_run long
wait_for 30 started ext || bail_out "the handler never started"
handler=$(cat "$T/started.ext")
freeze
since=$(ms)
gone() { proc_gone "$handler"; }
wait_for 20 gone
dead=$(( $(ms) - since ))
took_between_ms "$dead" 2500 5500 "frozen server: the handler's 4 s timeout still stops it on time ($dead ms)"
is "$(kill -0 "$server_pid" && ps -o stat= -p "$server_pid" | cut -c1)" T \
    "while the server is still stopped"
thaw
finish
is "$RC" 1 "once the server answers, the run records the outcome (exit 1)"
is "$(job ext status)/$(job ext attempts)" pending/1 "the job is put back for a retry"
like "$(job ext last_error)" "^timed out after 4 s" "last_error: timed out after 4 s"
sql "DELETE FROM polling_jobs"

# --- a checkpoint ----------------------------------------------------------------

enqueue cp cp
start_run cp
wait_for 30 started cp || bail_out "the handler never started"
freeze
since=$(ms)
touch "$T/go.cp"
answered() { [ -s "$T/answer.cp" ]; }
wait_for 10 answered
took=$(( $(ms) - since ))
took_between_ms "$took" 1500 4500 "a checkpoint during the freeze is answered after read_timeout ($took ms)"
like "$(cat "$T/answer.cp")" "^refused: save a checkpoint .*no answer within read_timeout" \
    "refused, saying the server did not answer"
finish
thaw
is "$RC" 69 "the mark cannot be made either: exit 69"
like "$(job cp "CONCAT(status, '/', IFNULL(checkpoint, 'none'))")" \
    '^processing/(none|\{"at":1\})$' \
    "the job waits for recovery (with the checkpoint the server got before it froze, if any)"
sql "DELETE FROM polling_jobs"

# --- a claim ------------------------------------------------------------------------

enqueue ok claim
# Another session holds the row, so the claim waits on it, on the server.
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" -e \
    "BEGIN; SELECT id FROM polling_jobs WHERE business_key = 'claim' FOR UPDATE;
     SELECT SLEEP(600)" >/dev/null 2>"$T/holder.err" &
holder=$!
defer_kill "$holder"
# It sleeps only once its SELECT ... FOR UPDATE holds the row.
held() {
	[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE INFO LIKE 'SELECT SLEEP(600)%'")" -ge 1 ]
}
wait_for 10 held || bail_out "the holder never locked the row: $(cat "$T/holder.err")"
# jobrun's claim, on the server, executing and held up by the row
# (INNODB_TRX does not always list a statement waiting this way; the
# process list does).  Executing: the claim's text is in the list while
# it is being prepared too (COMMAND 'Prepare'), and a freeze then hits
# the run's start-up statements, not the claim.  On MariaDB the claim
# waits a second at a time (SET STATEMENT ... FOR UPDATE ...), then
# looks whether the job is due and claims again: a freeze in between
# meets the claim's next statement.
waiting() {
	[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE COMMAND = 'Execute'
	      AND INFO LIKE '%UPDATE%FORCE INDEX (idx_pick)%'")" -ge 1 ]
}
rm -f "$T/out.ok" "$T/err.ok"
# A claim may wait on the row up to read_timeout: give it 8 s here, time
# enough on a slow machine to see it wait before the server freezes.
sed 's/^read_timeout = 2$/read_timeout = 8/' "$CONF" >"$T/claim.conf"
jobrun_raw --config="$T/claim.conf" --type=ok --max=1 --json >"$T/out.ok" \
    2>"$T/err.ok" &
WATCH=$!
if ! wait_for 30 waiting; then
	sql "SELECT * FROM information_schema.PROCESSLIST;
	     SELECT trx_state, trx_query FROM information_schema.INNODB_TRX" \
	    >"$T/claim.diag" 2>&1
	bail_out "the claim never waited on the row: $(cat "$T/err.ok")"
fi
freeze
since=$(ms)
finish
thaw
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
is "$RC" 69 "the server freezes during the claim: exit 69"
took_between_ms "$TOOK" 0 9000 "within read_timeout ($TOOK ms)"
like "$(cat "$T/err.ok")" "claim a job in .*no answer within read_timeout 8 s" "stderr says the claim got no answer"
# The server may still finish the claim it was holding once it wakes and
# the row is free: then the job waits, locked by a run that is gone, for
# recovery.  Either way no handler ran it.
like "$(job claim "CONCAT(status, '/', attempts)")" '^(pending/0|processing/1)$' \
    "the job was not run: untouched, or claimed by the gone run for recovery"
sql "DELETE FROM polling_jobs"

# --- four slots (--jobs=4), a frozen server ----------------------------------------

# Every slot's handler timeout is kept; the first mark waits read_timeout
# and ends the run; the other slots send nothing more (each would wait
# read_timeout in turn), nor retry their lock extensions one after the
# other, and their jobs are left for recovery.
for k in s1 s2 s3 s4; do
	enqueue long "$k"
done
jobrun --type=long --jobs=4 --json >"$T/out.slots" 2>"$T/err.slots" &
WATCH=$!
all_started() { started s1 && started s2 && started s3 && started s4; }
wait_for 30 all_started || bail_out "the four handlers never started"
handlers=$(cat "$T"/started.s?)
freeze
since=$(ms)
all_gone() {
	local p
	for p in $handlers; do
		proc_gone "$p" || return 1
	done
}
wait_for 20 all_gone
dead=$(( $(ms) - since ))
took_between_ms "$dead" 2500 5500 "four slots, frozen server: every handler's 4 s timeout stops it on time ($dead ms)"
finish
thaw
is "$RC" 69 "the first mark finds the server frozen: exit 69"
# Each statement sent to the frozen server costs a read_timeout (2 s), or a
# reconnection's connect and handshake (2 s each): the extension under way
# when the handlers stop, then the first mark.  Slot after slot, each
# retrying its extension and its mark, would be four times as many.
took_between_ms "$TOOK" 4000 14500 "after the timeout and at most two statements' timeouts ($TOOK ms)"
between "$(grep -c 'extend job lock' "$T/err.slots")" 0 2 \
    "at most two lock extensions tried during the freeze, not one per slot"
like "$(cat "$T/err.slots")" "the outcomes of the 4 jobs in hand were not recorded" \
    "stderr says the four outcomes were not recorded"
# The one mark sent may still be applied once the server wakes.
between "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing' AND attempts = 1")" 3 4 \
    "the jobs whose marks were never sent are left in processing for recovery"
sql "DELETE FROM polling_jobs"

# --- two signals while the server is frozen ----------------------------------------

enqueue patient sig
start_run patient
wait_for 30 started sig || bail_out "the handler never started"
handler=$(cat "$T/started.sig")
runner=$(awk '{ print $4 }' "/proc/$handler/stat")
# A statement the run sent to the frozen server, not answered: its bytes
# wait, unread, in the server's end of the run's connection.  (ss lines:
# recv-q $2, the socket's inode $5, its peer's $7.)
unanswered() {
	ss -xHnp state established | awk -v pid="pid=$runner," '
	    index($0, pid) { mine[$5] = 1 }
	    { unread[$7] = $2 }
	    END { for (i in mine) if (unread[i] > 0) exit 0; exit 1 }'
}
freeze
# A lock extension (every second) is under way: the run waits on the
# server when the signals come.
wait_for 10 unanswered || bail_out "no lock extension reached the frozen server"
since=$(ms)
kill -TERM "$runner"
# Two signals sent before the first is taken arrive as one (a pending
# signal is not queued twice); an operator's second Ctrl-C or kill comes
# later.
wait_for 10 sig_seen "$runner" 15
kill -TERM "$runner"
finish
is "$RC" 143 "two SIGTERMs end the run at once, frozen server or not"
took_between_ms "$TOOK" 0 2000 "within a second of the second signal ($TOOK ms, from the first)"
ok "the handler was stopped too" proc_gone "$handler"
thaw
is "$(job sig "CONCAT(status, '/', attempts)")" processing/1 \
    "the job could not be put back: it is left for recovery"
like "$(cat "$T/err.patient")" "stopped on signal 15" "stderr says why the run stopped"
