#!/bin/bash
# handler = http, the edges of the request and the answer:
#  - the configured headers are sent in the order of their keys in the
#    file (header, header_env and header_file mixed); "Name:" with nothing
#    after the colon is not sent and removes libcurl's own header of that
#    name (Accept); Content-Type, Idempotency-Key and User-Agent cannot be
#    configured, in any letter case (exit 78, naming file, line and key);
#  - an interim 1xx answer is followed by the final one, which decides;
#  - Retry-After: 0, or a date already past, makes the job due at once;
#  - http_proxy sends the request through that proxy.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 22
setup_db
start_http_server
printf 'X-File-One: f1\nX-File-Two: f2\n' >"$T/headers"
export JOBRUN_TEST_ENV_HEADER=from-env
col() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}

# --- headers ----------------------------------------------------------------
write_config <<EOF2
[type.order]
handler = http
url = $HTTP_URL/ok
header = X-Zulu: 1
header_env = X-Env: JOBRUN_TEST_ENV_HEADER
header = X-Alpha: 2
header_file = $T/headers
header = X-Mike: 3
header = X-Empty:
header = Accept:
EOF2
insert_job order order
run jobrun --json
is "$rc/$(col order status)" 0/success "a type with many headers: success"
xorder=$(http_py 'r = reqs[-1]; print(" ".join(k for k in r["headers"] if k.startswith("x-")))')
is "$(tr ' ' '\n' <<<"$xorder" | grep -E 'zulu|alpha|mike' | tr '\n' ' ')" "x-zulu x-alpha x-mike " \
    "the header keys arrive in the order given"
is "$(tr ' ' '\n' <<<"$xorder" | grep -E 'file' | tr '\n' ' ')" "x-file-one x-file-two " \
    "header_file's lines in the order of the file"
# jobrun(7): every header line in its order, then each header_env, then
# each header_file's lines.
is "$xorder" "x-zulu x-alpha x-mike x-env x-file-one x-file-two" \
    "header lines first, then header_env, then header_file"
is "$(http_req key=order header:X-Env)" from-env "header_env's value"
is "$(http_req key=order header:X-Empty)" MISSING "a header with nothing after the colon is not sent"
is "$(http_req key=order header:Accept)" MISSING "and Accept: removes libcurl's Accept"

for h in Content-Type:Content-Type content-type:Content-Type \
    Idempotency-Key:Idempotency-Key USER-AGENT:User-Agent; do
	name=${h#*:} h=${h%%:*}
	write_config <<EOF2
[type.reserved]
handler = http
url = $HTTP_URL/ok
header = $h: mine
EOF2
	run jobrun
	is "$rc" 78 "header = $h: ... exits 78"
	is "$err" "jobrun: $CONF:9: [type.reserved] header: $name is set by jobrun" \
	    "and names the file, line, key and header"
done

# --- answers ----------------------------------------------------------------
write_config <<EOF2
[run]
backoff_base = 60

[type.interim]
handler = http
url = $HTTP_URL/interim?code=102
timeout = 20

[type.ra0]
handler = http
url = $HTTP_URL/status/503?retry_after=0

[type.rapast]
handler = http
url = $HTTP_URL/status/503?retry_after=Wed,%2021%20Oct%202015%2007:28:00%20GMT

[type.proxied]
handler = http
url = http://no-such-host.invalid/ok
EOF2
insert_job interim interim
run jobrun --type=interim --json
is "$rc/$(col interim status)" 0/success "102 Processing, then 200: the final answer decides, success"

insert_job ra0 ra0 NULL max_attempts 9
run jobrun --type=ra0 --max=1 --json
is "$(jget retried <<<"$out")/$(col ra0 status)" 1/pending "Retry-After: 0 with a 503: a retry"
# jobrun(7): due a second later (at once would spend every attempt in
# an instant), measured against the mark's own NOW().
is "$(col ra0 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)')" 1 \
    "Retry-After: 0: due a second later"
insert_job rapast rapast NULL max_attempts 9
run jobrun --type=rapast --max=1 --json
is "$(jget retried <<<"$out")/$(col rapast status)" 1/pending "Retry-After of a date in 2015: a retry"
is "$(col rapast 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)')" 1 \
    "a Retry-After date in the past: due a second later too"

# --- a proxy ------------------------------------------------------------------
insert_job proxied proxied
http_proxy=$HTTP_URL run jobrun --type=proxied --json
is "$rc/$(col proxied status)" 0/success "http_proxy: a host that does not resolve is reached through the proxy"
is "$(http_req key=proxied path)" "http://no-such-host.invalid/ok" \
    "the proxy got the request for the absolute URL"
