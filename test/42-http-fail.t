#!/bin/bash
# handler = http: 4xx other than 408, 425 and 429 is a permanent failure (the
# job is failed at once, like exec's exit 65), and so is a 3xx: redirects are
# not followed.  last_error is the status line and the start of the body.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 29
setup_db
start_http_server

while read -r name path; do
	printf '[type.%s]\nhandler = http\nurl = %s%s\n\n' "$name" "$HTTP_URL" "$path"
done >"$T/types" <<EOF2
c400 /status/400?body=missing%20field%20order_id
c401 /status/401
c404 /status/404?body=no%20such%20order
c409 /status/409?body=conflict
c422 /status/422
c499 /status/499
c301 /status/301?location=$HTTP_URL/ok
c302 /status/302?location=/ok&body=see%20/ok
c304 /status/304
EOF2
write_config <"$T/types"

types="c400 c401 c404 c409 c422 c499 c301 c302 c304"
for t in $types; do
	insert_job "$t" "$t"
done

col() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}

run jobrun --json
is "$rc" 1 "a run with failed jobs exits 1"
is "$(jget claimed <<<"$out")/$(jget failed <<<"$out")" 9/9 "claimed 9, failed 9"
is "$(jget retried <<<"$out")" 0 "none retried"

is "$(col c400 status)/$(col c400 attempts)/$(col c400 max_attempts)" failed/1/5 \
    "400: failed after 1 of 5 attempts"
like "$(col c400 last_error)" '^HTTP 400 Bad Request: missing field order_id$' \
    "400: last_error is the status line and the body"
is "$(col c400 'finished_at IS NOT NULL AND locked_by IS NULL AND locked_until IS NULL')" 1 \
    "400: finished_at set, lock cleared"
is "$(col c401 status)/$(col c401 attempts)" failed/1 "401: failed at once"
like "$(col c401 last_error)" '^HTTP 401 Unauthorized' "401: last_error has the status line"
is "$(col c404 status)/$(col c404 attempts)" failed/1 "404: failed at once"
like "$(col c404 last_error)" '^HTTP 404 Not Found: no such order$' \
    "404: last_error is HTTP 404 Not Found: and the body"
is "$(col c409 status)/$(col c409 attempts)" failed/1 "409: failed at once"
like "$(col c409 last_error)" '^HTTP 409 Conflict: conflict$' "409: last_error"
is "$(col c422 status)/$(col c422 attempts)" failed/1 "422: failed at once"
like "$(col c422 last_error)" '^HTTP 422 Unprocessable' "422: last_error"
is "$(col c499 status)/$(col c499 attempts)" failed/1 "499 (no reason phrase): failed at once"
like "$(col c499 last_error)" '^HTTP 499' "499: last_error has the status"

is "$(col c301 status)/$(col c301 attempts)" failed/1 "301: failed at once"
like "$(col c301 last_error)" '^HTTP 301 Moved Permanently' "301: last_error has the status line"
is "$(col c302 status)/$(col c302 attempts)" failed/1 "302: failed at once"
like "$(col c302 last_error)" '^HTTP 302 Found: see /ok$' "302: last_error has the status line and body"
is "$(col c304 status)" failed "304: failed at once"
like "$(col c304 last_error)" '^HTTP 304 Not Modified' "304: last_error has the status line"
is "$(http_count /ok)" 0 "redirects are not followed"
is "$(http_count /status/)" 9 "one request per job"

run jobrun --json
is "$rc/$(jget claimed <<<"$out")" 0/0 "failed jobs are not claimed again"
is "$(http_count)" 9 "no further requests"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'failed'")" 9 "all nine stay failed"

# An error page made for a browser: last_error keeps its title and the
# start of its text, not kilobytes of markup, styles and scripts.
cat >>"$CONF" <<EOF2

[type.page]
handler = http
url = $HTTP_URL/page/500
EOF2
insert_job page:1 page
run jobrun --type=page
is "$rc/$(col page:1 status)" 1/pending "an HTML 500 page: retried"
is "$(col page:1 last_error)" \
    "HTTP 500 Internal Server Error: Server Error: 500 SQLSTATE[HY000] [2002] Connection refused" \
    "last_error is the status line, the page's title and its text"
