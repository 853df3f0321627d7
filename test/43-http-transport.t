#!/bin/bash
# handler = http: no usable answer (a timeout, a dropped connection, a refused
# connection, a name that does not resolve) is "try again later" with
# "curl error: ..." in last_error.  A huge body is cut at max_response while
# it arrives: a 2xx stays success, an error keeps only the start of the body,
# last_error stays at most 1000 characters of valid UTF-8, and the runner's
# memory does not grow with the body.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 34
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

for t in slow drop refused nxdomain small big200 big500 cut10 cututf8; do
	jobrun enqueue --type="$t" --key="$t" >/dev/null
done
col() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}
delay() {
	col "$1" 'TIMESTAMPDIFF(SECOND, NOW(), next_run_at)'
}
# utf8_ok KEY: last_error of that job is valid UTF-8, byte for byte
utf8_ok() {
	sql "SELECT HEX(last_error) FROM polling_jobs WHERE business_key = '$1'" |
	    python3 -c 'import sys; bytes.fromhex(sys.stdin.read().strip()).decode("utf-8")' 2>/dev/null
}
# rss_run ARG...: jobrun ARG... like run, and $rss its peak memory in KiB
rss_run() {
	run python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$T/rss" "$JOBRUN" --config="$CONF" "$@"
	rss=$(cat "$T/rss")
}

start=$SECONDS
run jobrun --type=slow --json
took=$((SECONDS - start))
is "$rc" 1 "an answer slower than timeout = 1: the run exits 1"
is "$(jget retried <<<"$out")" 1 "the job is retried"
between "$took" 0 4 "the run gives up after about 1 s (took ${took} s)"
is "$(col slow status)/$(col slow attempts)" pending/1 "slow: pending, attempts 1"
like "$(col slow last_error)" '^curl error: .*[Tt]imed out' "slow: last_error says timed out"
between "$(delay slow)" 118 122 "slow: with the normal backoff"
is "$(http_count /slow)" 1 "the server did get the request"

run jobrun --type=drop --json
is "$(jget retried <<<"$out")" 1 "a dropped connection: retried"
is "$(col drop status)/$(col drop attempts)" pending/1 "drop: pending, attempts 1"
like "$(col drop last_error)" '^curl error: ' "drop: last_error is curl's error"
between "$(delay drop)" 118 122 "drop: with the normal backoff"

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
like "$(col big500 last_error)" '^HTTP 500 Internal Server Error: begin (é€)+' \
    "last_error is the status line and the start of the body"
between "$(col big500 'CHAR_LENGTH(last_error)')" 900 1000 "last_error is cut at 1000 characters"
ok "last_error is valid UTF-8" utf8_ok big500
ok "peak memory ${rss} KiB: less than 4 MiB above the small run's" \
    test "$((rss - small_rss))" -lt 4096

run jobrun --type=cut10 --json
is "$(jget retried <<<"$out")" 1 "max_response = 10 with a 500: retried"
is "$(col cut10 last_error)" "HTTP 500 Internal Server Error: begin 0123" \
    "last_error keeps only the first 10 bytes of the body"

run jobrun --type=cututf8 --json
is "$(jget retried <<<"$out")" 1 "max_response = 9 with a 503: retried"
like "$(col cututf8 last_error)" '^HTTP 503 Service Unavailable: begin é' \
    "a body cut inside a character keeps the whole ones"
ok "and last_error is still valid UTF-8" utf8_ok cututf8

is "$(http_count /big)" 4 "one request for each big-body job"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job is left processing"
