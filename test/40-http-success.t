#!/bin/bash
# handler = http: a 2xx answer is success, and the request is what the
# receiver is promised: POST (or PUT) of the job as JSON with the payload as
# JSON, Content-Type, Idempotency-Key = business_key (control characters
# percent-encoded, so a key cannot inject a header), User-Agent, and the
# configured headers from `header`, `header_file` and `header_env`.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 41
setup_db
start_http_server

printf '%s\n' '# token: this comment is not a header' 'X-From-File: file-value' \
    '' 'X-Second-File: 2' >"$T/headers"
chmod 0600 "$T/headers"
export JOBRUN_TEST_TOKEN='Bearer s3cr3t'

write_config <<EOF2
[type.ok200]
handler = http
url = $HTTP_URL/status/200?body=fine
header = X-Custom: one
header = X-Other:   two words
header_file = $T/headers
header_env = Authorization: JOBRUN_TEST_TOKEN

[type.ok201]
handler = http
url = $HTTP_URL/status/201?body=created

[type.ok204]
handler = http
url = $HTTP_URL/status/204

[type.put]
handler = http
url = $HTTP_URL/ok
method = PUT
EOF2

key="order:1 'ü' \"q\""
payload='{"order_id": 10001, "name": "Zoë", "tags": ["a", "b"], "x": {"y": null}}'
jobrun enqueue --type=ok200 --key="$key" --max-attempts=7 --payload="$payload" >/dev/null
insert_job null:1 ok200 NULL
insert_job arr:1 ok200 "'[1, 2]'" attempts 2
ctl_key=$'ctl:a\tb\r\nX-Injected: 1'
insert_job "$ctl_key" ok200
insert_job c201 ok201
insert_job c204 ok204
jobrun enqueue --type=put --key=put:1 --payload='{"p": 1}' >/dev/null

job_id() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '${1//\'/\'\'}'"
}
same_json() {
	python3 -c 'import json, sys
sys.exit(json.loads(sys.argv[1]) != json.loads(sys.argv[2]))' "$1" "$2"
}

run jobrun --json
is "$rc" 0 "a run where every answer is 2xx exits 0"
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" 7/7 "claimed 7, succeeded 7"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 7 \
    "all 7 jobs are success"
is "$(field "$(job_id c201)" status)" success "201 Created is success"
is "$(field "$(job_id c204)" status)" success "204 No Content is success"
is "$(field "$(job_id c204)" 'last_error IS NULL AND finished_at IS NOT NULL')" 1 \
    "success: last_error NULL, finished_at set"
is "$(http_count)" 7 "one request per job"

k="key=$key"
is "$(http_req "$k" method)" POST "the method is POST by default"
is "$(http_req "$k" path)" "/status/200?body=fine" "the URL's path and query are used as given"
is "$(http_req "$k" header:Content-Type)" application/json "Content-Type: application/json"
pct() {
	python3 -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1].encode(), safe=":"))' "$1"
}
is "$(http_req "$k" header:Idempotency-Key)" "$(pct "$key")" \
    "Idempotency-Key is the business key, percent-encoded but for letters, digits and -._~:"
is "$(http_req "$k" header:User-Agent)" "jobrun/$VERSION" "User-Agent: jobrun/$VERSION"
is "$(http_req "$k" body | jkeys)" attempt,business_key,id,max_attempts,payload,type \
    "the body is a JSON object with exactly the job's fields"
is "$(http_req "$k" json:id)" "$(job_id "$key")" "body id"
is "$(http_req "$k" json:type)" ok200 "body type"
is "$(http_req "$k" json:business_key)" "$key" "body business_key, quotes and UTF-8 intact"
is "$(http_req "$k" json:attempt)" 1 "body attempt is 1 on the first attempt"
is "$(http_req "$k" json:max_attempts)" 7 "body max_attempts"
is "$(http_req "$k" jtype:payload)" object "the payload is embedded as JSON, not as a string"
ok "the payload equals the enqueued one" same_json "$(http_req "$k" json:payload)" "$payload"

is "$(http_req key=null:1 jtype:payload)" object "a NULL payload is sent as an object"
is "$(http_req key=null:1 json:payload)" "{}" "a NULL payload is sent as {}"
ok "an array payload is sent as that array" same_json "$(http_req key=arr:1 json:payload)" '[1, 2]'
is "$(http_req key=arr:1 json:attempt)" 3 "attempt counts earlier attempts"

is "$(http_req "$k" header:X-Custom)" one "a configured header arrives"
is "$(http_req "$k" header:X-Other)" "two words" "a second header line arrives too"
is "$(http_req "$k" header:X-From-File)" file-value "a header from header_file arrives"
is "$(http_req "$k" header:X-Second-File)" 2 "every line of header_file counts"
is "$(http_req "$k" "header:# token")" MISSING "a # line of header_file is a comment"
is "$(http_req "$k" header:Authorization)" "Bearer s3cr3t" "a header_env header carries the variable's value"
is "$(http_req key=null:1 header:Authorization)" "Bearer s3cr3t" "every job of the type gets it"
is "$(http_req key=c201 header:Authorization)" MISSING "another type does not get it"

c="key=$ctl_key"
is "$(http_req "$c" json:business_key)" "$ctl_key" "a key with control characters: exact in the body"
is "$(http_req "$c" header:Idempotency-Key)" 'ctl:a%09b%0D%0AX-Injected:%201' \
    "and percent-encoded in Idempotency-Key"
is "$(http_req "$c" header:X-Injected)" MISSING "so it cannot inject a header"

is "$(http_req key=put:1 method)" PUT "method = PUT sends PUT"
is "$(http_req key=put:1 path)" /ok "to the type's url"
is "$(http_req key=put:1 json:payload)" '{"p": 1}' "with the same JSON body"
is "$(field "$(job_id put:1)" status)" success "and the job is success"

run jobrun --json
is "$rc/$(jget claimed <<<"$out")" 0/0 "a second run finds nothing due"
is "$(http_count)" 7 "and sends nothing"
