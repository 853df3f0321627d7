#!/bin/bash
# handler = http: no usable answer (a timeout, a dropped connection, a refused
# connection, a name that does not resolve) is "try again later" with
# "curl error: ..." in last_error.  A huge body is cut at max_response while
# it arrives: a 2xx stays success, an error keeps only the start of the body,
# last_error stays at most 1000 whole characters, and the runner's
# memory does not grow with the body.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 37
setup_db
start_http_server
closed=$(free_port)
ten_mb=10485760

write_config <<EOF2
[type.slow]
handler = http
url = $HTTP_URL/slow?seconds=10
timeout = 1

[type.drop]
handler = http
url = $HTTP_URL/drop

[type.garbage]
handler = http
url = $HTTP_URL/junk?hex=$(printf 'garbage\r\n\r\n' | od -An -tx1 | tr -d ' \n')

[type.hello]
handler = http
url = $HTTP_URL/junk?hex=68656c6c6f

[type.refused]
handler = http
url = http://127.0.0.1:$closed/ok
connect_timeout = 2

[type.nxdomain]
handler = http
url = http://no-such-host.invalid/ok

[type.small]
handler = http
url = $HTTP_URL/ok

[type.big200]
handler = http
url = $HTTP_URL/big?bytes=$ten_mb

[type.big500]
handler = http
url = $HTTP_URL/big?bytes=$ten_mb&code=500&fill=%C3%A9%E2%82%AC

[type.cut10]
handler = http
url = $HTTP_URL/big?bytes=1000&code=500
max_response = 10

[type.cututf8]
handler = http
url = $HTTP_URL/big?bytes=1000&code=503&fill=%C3%A9
max_response = 9
EOF2

base=$(baseline_ms --type=small --json)	# nothing enqueued yet
for t in slow drop garbage hello refused nxdomain small big200 big500 cut10 cututf8; do
	insert_job "$t" "$t"
done
col() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}
# delay KEY: the delay the mark set (next_run_at - updated_at, one statement)
delay() {
	col "$1" 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)'
}
# rss_run ARG...: jobrun ARG... like run, and $rss its peak memory in KiB
rss_run() {
	run python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$T/rss" "${JOBRUN_TIMEOUT[@]}" "$JOBRUN" --config="$CONF" "$@"
	rss=$(cat "$T/rss")
}

start=$(date +%s%N)
run jobrun --type=slow --json
took=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 1 "an answer slower than timeout = 1: the run exits 1"
is "$(jget retried <<<"$out")" 1 "the job is retried"
took_between_ms "$took" 1000 $((1000 + base + 1500)) "the run gives up after about 1 s (took $took ms)"
is "$(col slow status)/$(col slow attempts)" pending/1 "slow: pending, attempts 1"
like "$(col slow last_error)" '^curl error: .*[Tt]imed out' "slow: last_error says timed out"
between "$(delay slow)" 109 120 "slow: with the normal backoff (less up to a tenth)"
is "$(http_count /slow)" 1 "the server did get the request"

run jobrun --type=drop --json
is "$(jget retried <<<"$out")" 1 "a dropped connection: retried"
is "$(col drop status)/$(col drop attempts)" pending/1 "drop: pending, attempts 1"
like "$(col drop last_error)" '^curl error: ' "drop: last_error is curl's error"
between "$(delay drop)" 109 120 "drop: with the normal backoff (less up to a tenth)"

# A reply that is not HTTP (no status line) is no answer either: curl
# calls it HTTP/0.9, which it does not take, and says so.
for t in garbage hello; do
	run jobrun --type=$t --json
	is "$(jget retried <<<"$out")/$(jget failed <<<"$out")" 1/0 \
	    "a reply that is not HTTP ($t): retried, not failed"
	is "$(col $t status)/$(col $t attempts)" pending/1 "$t: pending, attempts 1"
	is "$(col $t last_error)" "curl error: Received HTTP/0.9 when not allowed" \
	    "$t: last_error is the error that decided"
done

run jobrun --type=refused --json
is "$(jget retried <<<"$out")" 1 "a refused connection: retried"
is "$(col refused status)/$(col refused attempts)" pending/1 "refused: pending, attempts 1"
like "$(col refused last_error)" '^curl error: .*([Cc]onnect|refused)' \
    "refused: last_error is curl's error about connecting"

run jobrun --type=nxdomain --json
is "$(jget retried <<<"$out")" 1 "a host name that does not resolve: retried"
is "$(col nxdomain status)/$(col nxdomain attempts)" pending/1 "nxdomain: pending, attempts 1"
like "$(col nxdomain last_error)" '^curl error: .*no-such-host\.invalid' \
    "nxdomain: last_error is curl's error naming the host"

rss_run --type=small
small_rss=$rss
is "$rc" 0 "a small answer: the run exits 0 (peak memory ${small_rss} KiB)"

rss_run --type=big200 --json
is "$rc" 0 "a 10 MiB body with 200: the run exits 0"
is "$(col big200 status)" success "a 2xx with a body over max_response is success"
is "$(col big200 last_error)" NULL "with no last_error"
ok "peak memory ${rss} KiB: less than 4 MiB above the small run's" \
    test "$((rss - small_rss))" -lt 4096

rss_run --type=big500 --json
is "$(jget retried <<<"$out")" 1 "a 10 MiB body with 500: retried"
# The status line, then the body's start: 1000 characters in all, whole
# ones (é is 2 bytes, € 3).
want=$(python3 -c '
s = "HTTP 500 Internal Server Error: begin " + "é€" * 1000
print(s[:1000].encode().hex().upper())')
is "$(col big500 'HEX(last_error)')" "$want" \
    "last_error is the status line and the start of the body, cut at 1000 whole characters"
ok "peak memory ${rss} KiB: less than 4 MiB above the small run's" \
    test "$((rss - small_rss))" -lt 4096

run jobrun --type=cut10 --json
is "$(jget retried <<<"$out")" 1 "max_response = 10 with a 500: retried"
is "$(col cut10 last_error)" "HTTP 500 Internal Server Error: begin 0123" \
    "last_error keeps only the first 10 bytes of the body"

run jobrun --type=cututf8 --json
is "$(jget retried <<<"$out")" 1 "max_response = 9 with a 503: retried"
# 9 bytes of "begin éé...": "begin ", one é, and half of the next, which
# is an invalid byte and so becomes "?" (jobrun(1): "invalid bytes become
# ?").
is "$(col cututf8 'HEX(last_error)')" \
    "$(printf 'HTTP 503 Service Unavailable: begin é?' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" \
    "a body cut inside a character keeps the whole one before, the half one as ?"

is "$(http_count /big)" 4 "one request for each big-body job"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job is left processing"
