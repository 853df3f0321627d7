#!/bin/bash
# [type.NAME] rate = R/s (burst B): six runners, two with --jobs=4, claim
# at most R + B jobs of the type in any one second, R a second on average
# (within 10 %), and no job spends an attempt waiting; burst saves up
# starts while the type is idle; bad values are configuration errors.
#
# Rates are judged by claim times on the server's clock, never by the
# times the handlers record: on a busy machine (valgrind, stress-ng) a
# fork or a shell may start late and another on time, so handlers'
# starts bunch together or spread apart whatever the limiter did.  Each
# claim of a rated type writes its control row's refilled_at, the
# server's clock as the claim's transaction read it under the row's lock
# (src/flow.c); a trigger of this file's own copies it, with the clock at
# the write, to a row per claim.
#
# The issue's figures are 20/s for 10 s; 10/s for 4 s (40 jobs) tests the
# same bucket in a fifth of the time (the file runs three times in CI,
# once under valgrind, where 4/s for 4 s keeps up with its slower runs).
. "${0%/*}/lib.sh"

plan 14
setup_db
sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"
sql "CREATE TABLE claim_times (n BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
         at DECIMAL(20,6) NOT NULL, written_at DECIMAL(20,6) NOT NULL)" &&
sql "CREATE TRIGGER claim_times AFTER UPDATE ON polling_jobs_flow
     FOR EACH ROW INSERT INTO claim_times (at, written_at)
       SELECT NEW.refilled_at,
              UNIX_TIMESTAMP() + MICROSECOND(NOW(6)) / 1000000
        WHERE NEW.claims = OLD.claims + 1" ||
    bail_out "cannot record claim times"

rate=10 secs=4
under_valgrind && rate=4
jobs=$((rate * secs))

rate_config() {	# rate_config RATE [BURST]
	write_config <<EOF2
[run]
batch_size = 1000
max_seconds = 100

[type.rated]
handler = exec
command = $HANDLERS/flow-record $T/rec 0
rate = $1
${2:+burst = $2}
EOF2
}
enqueue() {	# enqueue N: N due jobs r1..rN of type rated
	sql "DELETE FROM polling_jobs"
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('r', seq), 'rated', NOW(), NOW(), NOW()
	       FROM seq_1_to_$1"
	sql "DELETE FROM claim_times"
	rm -f "$T/rec"
}
count() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE $1"
}
calc() {	# calc EXPR: EXPR's value, as Python computes it (3 decimals)
	python3 -c 'import sys; print("%.3f" % eval(sys.argv[1]))' "$1"
}
records() {	# records WHAT [ARG]: test/flow-records.py over $T/rec
	python3 "$TOP/test/flow-records.py" "$1" "$T/rec" "${@:2}"
}
unix_now() {	# the server's clock, Unix seconds (as the claims read it)
	sql "SELECT UNIX_TIMESTAMP() + MICROSECOND(NOW(6)) / 1000000"
}
claims() {	# claims WHAT [ARG]: test/flow-records.py over the claim times
	sql "SELECT CONCAT('start ', at) FROM claim_times ORDER BY n" \
	    >"$T/claims"
	python3 "$TOP/test/flow-records.py" "$1" "$T/claims" "${@:2}"
}
# Every claim time was read from the server's clock during the run (t0..t1)
# and at or before the claim's own write of its control row: the times
# judged below are the server's, not the limiter's arithmetic.
claim_times_true() {	# claim_times_true T0 T1
	[ "$(sql "SELECT COUNT(*) FROM claim_times WHERE at < $1
	    OR at > written_at OR written_at > $2")" = 0 ] &&
	    [ "$(sql "SELECT COUNT(*) FROM claim_times")" -gt 0 ]
}
between_dec() {	# between_dec X LOW HIGH: LOW <= X <= HIGH (decimals)
	python3 -c 'import sys; x, lo, hi = map(float, sys.argv[1:]); sys.exit(not lo <= x <= hi)' "$@"
}
six_runners() {
	local p failed=0 pids=()
	for opt in --jobs=4 --jobs=4 --jobs=1 --jobs=1 --jobs=1 --jobs=1; do
		jobrun_bg "$opt" >/dev/null 2>>"$T/err"
		pids+=("$bg")
	done
	for p in "${pids[@]}"; do
		wait "$p" || failed=$((failed + 1))
	done
	return "$failed"
}

# --- bad values ------------------------------------------------------------------

for bad in 0/s 10 10/d 10/sec /s 1000001/s ''; do
	rate_config "$bad"
	run jobrun
	[ "$rc" = 78 ] || break
done
is "$rc/$err" "78/jobrun: $CONF:13: [type.rated] rate: not a rate: N/s, N/min or N/h with N in 1..1000000" \
    "rate = '$bad' and the other bad values: configuration error naming file, line and key"
write_config <<EOF2
[type.rated]
handler = noop
burst = 5
EOF2
run jobrun
is "$rc/$err" "78/jobrun: $CONF:8: [type.rated] burst: without rate" \
    "burst without rate: configuration error"

# --- R a second, six runners ---------------------------------------------------------

rate_config "$rate/s"
enqueue "$jobs"
t0=$(unix_now)
six_runners
is "$?" 0 "the six runners ended well (exit 0)"
is "$(cat "$T/err")" "" "they printed nothing"
is "$(count "status = 'success' AND attempts = 1")" "$jobs" \
    "all $jobs jobs succeeded, each at its first attempt (none spent waiting)"
t1=$(unix_now)
is "$(records starts)/$(claims starts)" "$jobs/$jobs" \
    "each handler started once, after a claim of its own"
ok "each claim time is the server's clock during the run" \
    claim_times_true "$t0" "$t1"
most=$(claims window 1)
diag "at most $most claims in one second; $(claims rate) claims/s on average (handlers' starts: at most $(records window 1) in one second)"
ok "no 1-second window holds more than $rate + 1 (the burst) claims ($most)" \
    test "$most" -le $((rate + 1))
# The average, as the time from the first claim to the last: no shorter
# than at R + 10 % (a count the limiter must not exceed, never widened),
# and no longer than at 0.6 × R.  Each start after the first waits for its
# token and then for a runner to wake and claim it, and with burst 1 a
# token that waits is lost: that wake-up latency is the machine's, not
# the limiter's, and at a load of 9 on two cores it took the average to
# 8.6/s (issue 31's repetitions).  So the test holds the limiter to what
# it decides: a bucket refilled at half the rate, or a wait for a whole
# second's tokens, fails here; how close to R a loaded machine gets is a
# figure for bench/, not a limit of the manual's (jobrun.conf(5): "at
# most").  JOBRUN_TEST_SLACK widens the duration, as took_between does.
span=$(claims span)
ok "the average is at most $rate/s + 10 % and at least 0.6 × $rate/s ($(claims rate); the $jobs claims took $span s)" \
    between_dec "$span" "$(calc "($jobs - 1) / ($rate * 1.1)")" \
    "$(calc "($jobs - 1) / ($rate * 0.6) + ${JOBRUN_TEST_SLACK:-0}")"
is "$(sql "SELECT claims FROM polling_jobs_flow WHERE type = 'rated'")" "$jobs" \
    "the control row counted every start"

# --- burst -----------------------------------------------------------------------------

# An idle type saves up to B starts: with B = 5, ten jobs start 5 at once
# and then R a second, so the last starts 5 / R s after the first (10 / R
# at a steady R a second would be 9 / R).  The bucket is full again after
# B / R seconds of idling; it has been idle since the drain above.
rate_config "$rate/s" 5
enqueue 10
wait_full() {
	[ "$(sql "SELECT UNIX_TIMESTAMP() + MICROSECOND(NOW(6)) / 1000000
	    - refilled_at >= 5 / $rate FROM polling_jobs_flow
	    WHERE type = 'rated'")" = 1 ]
}
wait_for 10 wait_full || bail_out "the bucket did not fill"
t0=$(unix_now)
run jobrun --jobs=10
t1=$(unix_now)
is "$rc/$(count "status = 'success' AND attempts = 1")/$(claims starts)" 0/10/10 \
    "a run with --jobs=10 claimed and ran the 10 jobs"
ok "each claim time is the server's clock during the run" \
    claim_times_true "$t0" "$t1"
span=$(claims span)
diag "the 10 claims took $span s (5 / $rate = $(calc "5 / $rate"), 9 / $rate without the burst; handlers' starts: $(records span) s)"
# Claims 6..10 each wait for a token, 1 / R s apart: claim 10 is at least
# 5 / R s after claim 1 (less 1 us: times are kept to the microsecond).
ok "after the burst the rate holds: the 10 claims took >= 5 / $rate s ($span)" \
    between_dec "$span" "$(calc "5 / $rate - 0.000001")" 1000
ok "the burst saved 5 starts: they took less than 9 / $rate s ($span)" \
    between_dec "$span" 0 "$(calc "9 / $rate")"
