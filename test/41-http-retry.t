#!/bin/bash
# handler = http: 408, 425, 429 and 5xx are "try again later": the job goes
# back to pending with the normal backoff, or with the delay Retry-After asks
# for (delta-seconds, or an HTTP-date measured against the answer's Date
# header, exactly: the jitter is the backoff's alone), never beyond [run]
# backoff_cap.  last_error has the status line and the start of the body.
# After max_attempts a retry becomes failed.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 46
setup_db
start_http_server

# a server whose clock is far off: its Date is in 2015
old_date='Wed,%2021%20Oct%202015%2007:28:00%20GMT'
old_plus_45='Wed,%2021%20Oct%202015%2007:28:45%20GMT'
old_plus_day='Thu,%2022%20Oct%202015%2007:28:00%20GMT'
# no Date header: an HTTP-date 3000 s ahead of our clock (far enough that
# a slow run, e.g. under valgrind, cannot overtake it)
made_at=$(date +%s)
in_3000s=$(python3 -c 'import email.utils, time
print(email.utils.formatdate(time.time() + 3000, usegmt=True).replace(" ", "%20"))')

types() {
	local name path
	while read -r name path; do
		printf '[type.%s]\nhandler = http\nurl = %s%s\n\n' "$name" "$HTTP_URL" "$path"
	done <<EOF2
e500 /status/500?body=boom
e503 /status/503?body=down%20for%20maintenance%20until%2012:00
e502 /status/502
r408 /status/408
r425 /status/425
r429 /status/429?retry_after=30&body=slow%20down
r503 /status/503?retry_after=30
rdate /status/429?date=$old_date&retry_after=$old_plus_45
rnodate /status/429?date=none&retry_after=$in_3000s
rcap /status/429?retry_after=100000
rhuge /status/429?retry_after=2147483648
rdigits /status/429?retry_after=99999999999999999999999999
rcapdate /status/429?date=$old_date&retry_after=$old_plus_day
rbad /status/429?retry_after=soon
rtrail /trailer/503?body=down&retry_after=30
EOF2
}
types | write_config

for t in e500 e503 e502 r408 r425 r429 r503 rdate rnodate rcap rhuge rdigits rcapdate rbad rtrail; do
	insert_job "$t" "$t"
done
insert_job last e503 NULL max_attempts 1

id() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '$1'"
}
col() {
	field "$(id "$1")" "$2"
}
# snapshot: every job's delay as its mark set it (next_run_at -
# updated_at, one statement, one NOW(): exact however slow the test), and
# next_run_at - NOW() for the one measured against this host's clock
snapshot() {
	sql "SELECT business_key, TIMESTAMPDIFF(SECOND, updated_at, next_run_at),
	    TIMESTAMPDIFF(SECOND, NOW(), next_run_at) FROM polling_jobs" >"$T/delays"
	snapped_at=$(date +%s)
}
delay() {
	awk -v k="$1" '$1 == k { print $2 }' "$T/delays"
}
left_of() {
	awk -v k="$1" '$1 == k { print $3 }' "$T/delays"
}

run jobrun --json
snapshot
is "$rc" 1 "a run with retried jobs exits 1"
is "$(jget claimed <<<"$out")" 16 "claimed 16"
is "$(jget retried <<<"$out")/$(jget failed <<<"$out")" 15/1 \
    "retried 15, failed 1 (the one with max_attempts 1)"
is "$(http_count /status/)/$(http_count /trailer/)" 15/1 "one request per job"

is "$(col e500 status)/$(col e500 attempts)" pending/1 "500: pending, attempts 1"
between "$(delay e500)" 109 120 "500: next_run_at is NOW() + 120 s less up to a tenth (the backoff)"
like "$(col e500 last_error)" '^HTTP 500 Internal Server Error: boom$' \
    "500: last_error is the status line and the body"
is "$(col e500 'locked_by IS NULL AND locked_until IS NULL AND finished_at IS NULL')" 1 \
    "500: the lock is cleared, finished_at stays NULL"

is "$(col e503 status)/$(col e503 attempts)" pending/1 "503: pending, attempts 1"
between "$(delay e503)" 109 120 "503: next_run_at is NOW() + the backoff"
like "$(col e503 last_error)" '^HTTP 503 Service Unavailable: down for maintenance until 12:00$' \
    "503: last_error starts with the status line, then the body"
is "$(col e502 status)/$(col e502 attempts)" pending/1 "502: pending, attempts 1"
like "$(col e502 last_error)" '^HTTP 502 Bad Gateway' "502: last_error has the status line"

is "$(col r408 status)" pending "408 Request Timeout is retried"
between "$(delay r408)" 109 120 "408: with the backoff"
like "$(col r408 last_error)" '^HTTP 408 Request Timeout' "408: last_error has the status line"
is "$(col r425 status)" pending "425 Too Early is retried"
between "$(delay r425)" 109 120 "425: with the backoff"
like "$(col r425 last_error)" '^HTTP 425 Too Early' "425: last_error has the status line"

is "$(col r429 status)/$(col r429 attempts)" pending/1 "429: pending, attempts 1"
is "$(delay r429)" 30 "429 with Retry-After: 30: next_run_at is NOW() + 30 s"
like "$(col r429 last_error)" '^HTTP 429 Too Many Requests: slow down$' \
    "429: last_error has the status line and the body"
is "$(delay r503)" 30 "503 with Retry-After: 30: NOW() + 30 s"
is "$(delay rdate)" 45 \
    "Retry-After as an HTTP-date 45 s after the answer's Date: NOW() + 45 s"
left=$(( 3000 - (snapped_at - made_at) ))
left_between "$(left_of rnodate)" $((left - 3)) $((left + 2)) \
    "Retry-After as an HTTP-date, no Date header: measured against our clock"
is "$(delay rcap)" 3600 "Retry-After: 100000 is capped at backoff_cap (3600)"
is "$(delay rhuge)" 3600 "Retry-After: 2^31 is capped too, not read as no Retry-After"
is "$(delay rdigits)" 3600 "so is one with more digits than a number holds"
is "$(delay rcapdate)" 3600 "an HTTP-date a day later is capped too"
between "$(delay rbad)" 109 120 "an unreadable Retry-After: the normal backoff"
# Headers after a chunked body (a trailer) are not the reply's headers.
between "$(delay rtrail)" 109 120 "Retry-After: 30 in a trailer: ignored, the normal backoff"
like "$(col rtrail last_error)" '^HTTP 503 Service Unavailable: down$' \
    "trailer: last_error is the status line and the body"

is "$(col last status)/$(col last attempts)" failed/1 "a retry at max_attempts is failed"
like "$(col last last_error)" '^HTTP 503 Service Unavailable' "with the status line in last_error"
is "$(col last 'finished_at IS NOT NULL')" 1 "and finished_at set"

# the second failure doubles the backoff; Retry-After still wins
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key IN ('e500', 'r429')"
run jobrun --json
snapshot
is "$(jget claimed <<<"$out")" 2 "the second run claims the two jobs made due"
is "$(col e500 attempts)" 2 "500 again: attempts 2"
between "$(delay e500)" 217 240 "500 again: NOW() + 240 s less up to a tenth"
is "$(col r429 attempts)" 2 "429 again: attempts 2"
is "$(delay r429)" 30 "429 again: Retry-After: 30 still gives NOW() + 30 s"

# the cap is the configured one
{
	printf '[run]\nbackoff_base = 10\nbackoff_cap = 100\n\n'
	types
} | write_config
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key IN ('rcap', 'r429', 'e503')"
run jobrun --json
snapshot
is "$(jget claimed <<<"$out")" 3 "a run with backoff_cap = 100 claims three jobs"
is "$(delay rcap)" 100 "Retry-After: 100000 is capped at backoff_cap = 100"
is "$(delay r429)" 30 "Retry-After: 30 below the cap is kept"
between "$(delay e503)" 37 40 "no Retry-After: backoff_base 10 * 2^2 = 40 s, less up to a tenth"
is "$(col e503 attempts)" 2 "attempts 2"
is "$(http_count /status/)" 20 "every claim made exactly one request"
