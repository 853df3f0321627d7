#!/bin/bash
# jobrun -v says once a run, and only then, that flow control held its
# claims back: "flow control holds the claims back (a cap, a rate or a
# busy key): trying again in N ms" (jobrun(7) Levels).  Test 35 waits for
# the line at a full cap and at a busy key; here a rate holds a run of
# --jobs=4 back, and the line comes once, not once a slot or a look, with
# the wait the bucket gives; a paused type, a type without limits, and a
# run without -v do not say it.
. "${0%/*}/lib.sh"

plan 16
setup_db
sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"

# One start a minute: the run's first claim takes the bucket's one start
# and its other claims are held back until the minute is over, which is
# past the run's 3 s budget, whatever the machine's speed.
write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 3

[type.rated]
handler = noop
rate = 1/min
EOF2
enqueue() {	# enqueue TYPE N: N due jobs of TYPE
	local i
	for ((i = 1; i <= $2; i++)); do
		insert_job "$1-$i" "$1"
	done
}
count() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE $1"
}
held_lines() {	# held_lines FILE: how many times FILE says the claims were held
	grep -c 'flow control holds the claims back' "$1"
}

wait_said() {	# wait_said FILE: the N of "trying again in N ms"
	sed -n 's/.*flow control holds the claims back.*trying again in \([0-9]*\) ms.*/\1/p' "$1" | head -n 1
}

# A rate: the run's first claim takes the bucket's one start; its four
# slots' other claims are held back for the rest of the minute
enqueue rated 3
run jobrun --type=rated --jobs=4 -v
printf '%s\n' "$err" >"$T/rated.err"
is "$rc" 0 "a run held back by a rate exits 0 at its budget: the one job it claimed succeeded"
is "$(count "type = 'rated' AND status = 'success'")" 1 "the rate let one job start"
is "$(count "type = 'rated' AND status = 'pending' AND attempts = 0")" 2 \
    "the two held back are pending and spent no attempt"
is "$(held_lines "$T/rated.err")" 1 "-v says once that flow control held the claims back"
# The next start is a minute after the first, by the server's clock, and
# the run held its claims back within its 3 s budget after that first.
n=$(wait_said "$T/rated.err")
between "${n:-0}" 57000 60000 "it says when the bucket has a start again: in a minute less the run's time so far ($n ms)"
like "$(grep 'flow control holds' "$T/rated.err")" 'level=info ' "at level info"

# The bucket is empty: a run without -v is held back at once and does not
# say it (info is for -v)
run jobrun --type=rated
is "$rc" 0 "a run without -v held back from its first claim exits 0"
is "$err" "" "and writes nothing to stderr"
is "$(count "type = 'rated' AND status = 'pending' AND attempts = 0")" 2 \
    "the held jobs are untouched"

# A full cap: one job at a time, handlers of a second, three slots.  The
# waiting slots look many times (every 20 to 640 ms); the line comes once.
write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 60

[type.capped]
handler = exec
command = /bin/sleep 1
concurrency = 1
EOF2
enqueue capped 3
run jobrun --type=capped --jobs=3 -v
printf '%s\n' "$err" >"$T/capped.err"
is "$(count "type = 'capped' AND status = 'success'")" 3 "the capped type's three jobs ran"
is "$(held_lines "$T/capped.err")" 1 "a full cap's waits, many looks over two seconds, are said once"

# A paused type's jobs are not a wait: the run ends as drained, silently
write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 60

[type.stopped]
handler = noop

[type.free]
handler = noop
EOF2
enqueue stopped 1
jobrun pause stopped >/dev/null || bail_out "jobrun pause failed"
run jobrun --type=stopped -v
is "$rc" 0 "a run whose only due job is paused exits 0"
is "$(held_lines "$T/stderr")" 0 "and does not say flow control held it back"
is "$(count "type = 'stopped' AND status = 'pending' AND attempts = 0")" 1 "the paused job is untouched"

# A type without limits is never held back
enqueue free 2
run jobrun --type=free --jobs=2 -v
is "$(count "type = 'free' AND status = 'success'")" 2 "a type without limits runs its jobs"
is "$(held_lines "$T/stderr")" 0 "and -v never says they were held back"
