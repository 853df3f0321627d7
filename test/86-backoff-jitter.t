#!/bin/bash
# backoff_jitter: 1,000 jobs that failed together come back spread over
# the documented window, not in one second.  The default 0.1 takes up to
# a tenth off each backoff: the first retry 109 to 120 s after the
# failure, each second as likely (jobrun.conf(5)).  0 gives the seed's
# exact formula; a [type.NAME] may set its own.  Delays are read as the
# mark wrote them: next_run_at - updated_at, one NOW() of one statement.
. "${0%/*}/lib.sh"

plan 14
setup_db
write_config <<EOF2
[run]
jobs = 16
batch_size = 2000

[type.down]
handler = exec
command = false
timeout = 10

[type.exact]
handler = exec
command = false
timeout = 10
backoff_jitter = 0

[type.half]
handler = exec
command = false
timeout = 10
backoff_jitter = 0.5
EOF2

# jobs TYPE N: N due jobs of TYPE, keys TYPE1..TYPEN
jobs() {
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('$1', seq), '$1', NOW(), NOW(), NOW()
	       FROM seq_1_to_$2"
}
# delays TYPE: "SECONDS COUNT" per delay the marks of TYPE's jobs set
delays() {
	sql "SELECT TIMESTAMPDIFF(SECOND, updated_at, next_run_at), COUNT(*)
	     FROM polling_jobs WHERE type = '$1' GROUP BY 1 ORDER BY 1"
}

# attempt_all WHERE [ARG...]: run jobrun ARG... until every job of WHERE
# has had its attempt, a run taking at most the ones left: a run stops at
# its time budget, which a loaded machine (valgrind, two CPU hogs) may
# reach first, and its claims take the jobs not yet tried before any
# retry come due again (their next_run_at is older).  rc: the last run's;
# fails after 10 runs.
attempt_all() {
	local where=$1 left n
	shift
	for n in 1 2 3 4 5 6 7 8 9 10; do
		left=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE $where")
		[ "$left" = 0 ] && return 0
		run jobrun --max="$left" "$@"
	done
	return 1
}

jobs down 1000
jobs exact 20
jobs half 200
attempt_all "attempts = 0" ||
    bail_out "the 1,220 jobs were not all tried in 10 runs"
is "$rc" 1 "every job failed once: the run exits 1"
is "$(sql "SELECT COUNT(*) FROM polling_jobs
    WHERE status = 'pending' AND attempts = 1")" 1220 \
    "all 1,220 are pending again, after one attempt"

d=$(delays down)
is "$(awk 'NR == 1 { print $1 }' <<<"$d")/$(awk 'END { print $1 }' <<<"$d")" \
    109/120 "the default 0.1: delays from 109 to 120 s"
is "$(wc -l <<<"$d")" 12 "each of those 12 seconds is used"
# 1,000 draws over 12 seconds: 83 each on average, sd 8.8; 40 and 130
# are five standard deviations away (a false alarm about once in 10^6).
is "$(awk '$2 < 40 || $2 > 130' <<<"$d")" "" \
    "each second holds 40 to 130 of the 1,000, none all of them"
diag "seconds and jobs: $(tr '\t\n' ': ' <<<"$d")"

is "$(delays exact)" "$(printf '120\t20')" \
    "backoff_jitter = 0: all 20 exactly 120 s, the seed's formula"

d=$(delays half)
is "$(awk '$1 < 61 || $1 > 120' <<<"$d")" "" \
    "[type.half] backoff_jitter = 0.5: every delay within 61 to 120 s"
ok "and half of them below the default's window" \
    test "$(awk '$1 < 109 { n += $2 } END { print n + 0 }' <<<"$d")" -ge 100

# The second failure doubles the backoff, and the window with it: 217 to
# 240 s.  Make the jobs due again and fail them once more.
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE type = 'down'"
attempt_all "type = 'down' AND attempts = 1" -t down
is "$(sql "SELECT COUNT(*) FROM polling_jobs
    WHERE type = 'down' AND attempts = 2")" 1000 "the 1,000 failed again"
d=$(delays down)
is "$(awk 'NR == 1 { print $1 }' <<<"$d")/$(awk 'END { print $1 }' <<<"$d")" \
    217/240 "after the second failure: 217 to 240 s"
is "$(wc -l <<<"$d")" 24 "over its 24 seconds"

# A value that is not a fraction stops the run at its line.
write_config <<EOF2
[run]
backoff_jitter = 10%
EOF2
run jobrun
is "$rc" 78 "backoff_jitter = 10%: a configuration error (exit 78)"
like "$err" 'backoff_jitter: not a fraction from 0 to 1' "saying what it takes"
ok "and nothing was claimed" test "$(sql "SELECT COUNT(*) FROM polling_jobs
    WHERE attempts > 2")" = 0
