#!/bin/bash
# Checkpoints are acknowledged: fd 3 is a socket, and after storing each
# line jobrun answers "ok" (or "refused: why") on it.  A handler that waits
# for "ok" before going on redoes at most one checkpoint interval when its
# runner dies, however it dies: here the runner is SIGKILLed right after an
# acknowledged checkpoint, twenty times in a row, and each resumed attempt
# redoes no more than one interval.  A handler that never reads the
# answers keeps working (test 70).
. "${0%/*}/lib.sh"

# A job far longer than the cycles get through: under load a runner may
# live seconds past the acknowledgement the test waits for, and with
# 100000 items the handler once finished the whole job by the 11th kill,
# leaving later cycles nothing to resume.
total=100000000 every=20
# Twenty kills; five under valgrind (valgrind_rounds): each kill is the
# same check of at most one interval redone.
cycles=$(valgrind_rounds 20)
plan $((cycles + 13))
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
write_config <<EOF
[run]
lock_seconds = 3
max_seconds = 300

[type.long]
handler = exec
command = $HANDLERS/acked $total $every $T/items
timeout = 600

[type.answers]
handler = exec
command = $HANDLERS/ack-refused $T/answers

[type.toolong]
handler = exec
command = /bin/sh -c 'head -c 70000 /dev/zero | tr "\\0" 1 >&3; echo >&3; read -r a <&3; echo "\$a" >$T/toolong'
EOF
job() { sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"; }

acks() {
	grep -c ' ok$' "$T/items.acks" 2>/dev/null || echo 0
}
acks_above() {
	[ "$(acks)" -gt "$1" ]
}
handler_gone() {
	proc_gone "$(cat "$T/items.pid" 2>/dev/null)"
}
# The handler's runner: its parent.
runner_of_handler() {
	awk '{ print $4 }' "/proc/$(cat "$T/items.pid")/stat" 2>/dev/null
}

# kill_after_ack: start a runner, SIGKILL it right after one to three more
# acknowledged checkpoints, and wait until its handler is gone too
kill_after_ack() {
	local start_acks watch
	start_acks=$(acks)
	rm -f "$T/items.pid"
	jobrun --type=long >/dev/null 2>&1 &
	watch=$!
	wait_for 60 acks_above $((start_acks + $1 % 3)) ||
	    bail_out "no acknowledged checkpoint after kill $1; the job: $(sql "SELECT CONCAT_WS(' | ', status, attempts, next_run_at, NOW(), locked_by, last_error) FROM polling_jobs WHERE business_key = 'long'")"
	kill -KILL "$(runner_of_handler)"
	wait "$watch" 2>/dev/null
	killed_runner_gone
	wait_for 10 handler_gone || bail_out "the handler outlived its runner"
}
duplicates() {
	echo $(( $(wc -l <"$T/items") - $(sort -un "$T/items" | wc -l) ))
}

insert_job long long NULL max_attempts 100
: >"$T/items"
kill_after_ack 0
before=0
for cycle in $(seq "$cycles"); do
	# Its lock would run out in 3 s; end it now instead, and recover it
	# (a run of a type that has nothing to claim).
	expire_lock long
	run jobrun --type=answers --json
	kill_after_ack "$cycle"
	now=$(duplicates)
	between $((now - before)) 0 "$every" \
	    "kill $cycle: the resumed attempt redid at most one interval"
	before=$now
done
dups=$before
diag "items processed twice over $cycles kills: $dups (checkpoint every $every)"
between "$dups" 0 $((cycles * every)) "in all, at most one interval per kill"
is "$(grep -vc ' ok$' "$T/items.acks")" 0 "every checkpoint was answered ok"
if on_mysql; then
	like "$(job long checkpoint)" '^\{"last": [0-9]+\}$' \
	    "the row holds the last checkpoint, in MySQL's form of JSON"
else
	like "$(job long checkpoint)" '^\{"last":[0-9]+\}$' \
	    "the row holds the last checkpoint as written"
fi
is "$(job long attempts)" "$((cycles + 1))" "each kill cost the attempt it interrupted"

# Answers to lines that are not checkpoints; the row keeps the good ones
# as written, blanks included.
insert_job answers answers
run jobrun --type=answers --json
is "$rc" 0 "a handler that reads every answer succeeds"
is "$(sed -n 1p "$T/answers")" ok "a checkpoint stored: ok"
like "$(sed -n 2p "$T/answers")" "^refused: not valid JSON" \
    "a line the server does not take as JSON: refused, and why"
is "$(sed -n 3p "$T/answers")" "refused: an empty line" "an empty line: refused"
# (on MySQL: byte for byte the server's form of it, json_as_stored)
is "$(job answers checkpoint)" "$(json_as_stored '{"n":3} ')" \
    "the last good one is stored byte for byte, trailing blank and all"
is "$(sed -n 4p "$T/answers")" ok "and answered ok"

# A line over the limit, from a handler that then succeeds: refused, and
# said so where the operator looks, though the job ends well.
insert_job toolong toolong
run jobrun --type=toolong --json
is "$(jget succeeded <<<"$out")" 1 "a handler whose checkpoint was too long may still succeed"
is "$(cat "$T/toolong")" "refused: over 65536 bytes" "it was answered why"
like "$err" "level=warn .*checkpoint refused: over 65536 bytes" \
    "and the run warns about it"
