#!/bin/bash
# What an http handler makes of a 202's body (issue 12, item 4).  The body
# is read by the server's JSON functions: one that does not start (after
# blanks) with "{" is a plain 202, a success; a JSON object holding
# neither "checkpoint" nor "snooze" is a success too; "checkpoint" is
# stored as the server's JSON_EXTRACT returns it (digits as written) and
# the job runs again without spending an attempt; "snooze" must be a whole
# number of seconds (capped at backoff_cap).  Whatever else a body that
# starts with "{" holds (not valid JSON, cut by max_response, a snooze
# that is no whole number, a checkpoint that cannot be stored) is never a
# success: the attempt is retried, and last_error says why.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 46
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
start_http_server

# q TEXT: TEXT as a URL query value
q() {
	python3 -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"
}
# A type per body: [type.NAME] answering 202 with BODY.
types=
body_type() {
	types+="
[type.$1]
handler = http
url = $HTTP_URL/status/202?body=$(q "$2")
timeout = 10
"
}
body_type cp-big '{"checkpoint":{"last_id":18446744073709551615}}'
body_type snooze-300 '{"snooze":300,"reason":"a\u0000b"}'
body_type snooze-blanks $' \r\n\t{ "snooze" : 45 }\n'
body_type snooze-huge '{"snooze":99999999999999999999999}'
body_type snooze-string '{"snooze":"300"}'
body_type snooze-negative '{"snooze":-1}'
body_type snooze-fraction '{"snooze":1.5}'
body_type snooze-exponent '{"snooze":3e2}'
body_type snooze-null '{"snooze":null}'
body_type not-json '{"checkpoint": oops'
body_type garbage-after '{"snooze":5} x'
body_type surrogate '{"checkpoint":"\ud800"}'
body_type empty ''
body_type text accepted
body_type array '[1,2]'
body_type empty-object '{}'
body_type other-object '{"status":"queued","id":7}'
write_config <<EOF2
[run]
backoff_base = 60
backoff_cap = 3600
$types
[type.too-long]
handler = http
url = $HTTP_URL/repeat/202?head=$(q '{"checkpoint":{"page":1},"pad":"')&fill=x&times=200&tail=$(q '"}')
max_response = 100
timeout = 10

[type.blanks-too-long]
handler = http
url = $HTTP_URL/repeat/202?fill=%20&times=200&tail=$(q '{"checkpoint":{"page":1}}')
max_response = 100
timeout = 10

[type.cp-too-big]
handler = http
url = $HTTP_URL/repeat/202?head=$(q '{"checkpoint":"')&fill=x&times=70000&tail=$(q '"}')
max_response = 200000
timeout = 10
EOF2

job() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}
# The delay the mark set: next_run_at less the mark's own NOW() (the
# same statement sets updated_at), whatever time has passed since.
due_in() {
	job "$1" "TIMESTAMPDIFF(SECOND, updated_at, next_run_at)"
}
# once TYPE: a job of TYPE (its key is TYPE too), run once.  The job is
# inserted as an application would (enqueue is tested elsewhere): under
# valgrind a jobrun costs seconds of CPU, and this file ran 45 of them.
once() {
	insert_job "$1" "$1" "'{}'"
	run jobrun --type="$1" --max=1 --json
}
# Under valgrind, of the bodies below that take the very same path through
# src/http_reply.c with another value (the server's JSON functions read
# the body; jobrun only looks at the text they give back), one of each
# kind runs; the plain and ASan passes run them all.
# same_path N DESC: true, after skipping N tests, where that applies
same_path() {
	under_valgrind || return 1
	skip "$1" "under valgrind: $2 takes the path a case above took"
}
counts() {
	printf '%s/%s/%s' "$(jget succeeded <<<"$out")" "$(jget retried <<<"$out")" \
	    "$(jget snoozed <<<"$out")"
}
state() {
	job "$1" "CONCAT_WS('/', status, attempts, snoozes)"
}

# --- a checkpoint with a number past 64 bits ------------------------------

once cp-big
is "$rc/$(counts)" 0/0/0/1 "checkpoint: the run counts a snooze, not a success"
is "$(state cp-big)" pending/0/0 "the job is pending again, no attempt spent"
is "$(job cp-big checkpoint)" '{"last_id": 18446744073709551615}' \
    "the checkpoint is stored as the server's JSON_EXTRACT returns it, every digit kept"
is "$(due_in cp-big)" 0 "and the job is due again at once (it made progress)"
run jobrun --type=cp-big --max=1 --json
body_of_last() {
	http_py 'import base64
print(base64.b64decode(reqs[-1]["body_b64"]).decode("utf-8", "replace"))'
}
like "$(body_of_last)" ',"checkpoint":\{"last_id": 18446744073709551615\},"payload":\{\}\}$' \
    "the next request hands the checkpoint back as stored"
is "$(job cp-big status)" pending "still never a success"

# --- snooze ----------------------------------------------------------------

once snooze-300
is "$rc/$(counts)" 0/0/0/1 '{"snooze":300,"reason":"a\u0000b"}: a snooze'
is "$(state snooze-300)" pending/0/1 "pending, no attempt spent, one snooze counted"
is "$(due_in snooze-300)" 300 "due in 300 s by the server's NOW()"
like "$(job snooze-300 last_error)" '^HTTP 202: not yet' "last_error says it was put off"

once snooze-blanks
is "$(state snooze-blanks)" pending/0/1 "blanks around the object: still read, a snooze"
is "$(due_in snooze-blanks)" 45 "of the 45 s asked for"

once snooze-huge
is "$(state snooze-huge)" pending/0/1 "a snooze of 10^23 seconds is a snooze"
is "$(due_in snooze-huge)" 3600 "capped at backoff_cap (3600 s)"

# Not whole numbers: retried with the backoff, never a success.
whole() {
	once "$1"
	is "$rc/$(counts)/$(state "$1")" 1/0/1/0/pending/1/0 "$2: retried, an attempt spent"
	is "$(job "$1" last_error)" "HTTP 202: \"snooze\" must be a whole number of seconds, not $3" \
	    "$2: last_error says snooze must be a whole number"
}
whole snooze-string '{"snooze":"300"}' '"300"'
between "$(due_in snooze-string)" 109 120 \
    "after the backoff (120 s after a first attempt, less up to a tenth)"
if ! same_path 6 "a number that is no whole number of seconds"; then
	whole snooze-negative '{"snooze":-1}' -1
	whole snooze-fraction '{"snooze":1.5}' 1.5
	whole snooze-exponent '{"snooze":3e2}' 3e2
fi
whole snooze-null '{"snooze":null}' null

# --- bodies that start with "{" but cannot be read ---------------------------

INVALID="HTTP 202 with a body that is not valid JSON (the server's JSON_VALID refuses it)"
once not-json
is "$rc/$(counts)/$(state not-json)" 1/0/1/0/pending/1/0 '{"checkpoint": oops: retried'
is "$(job not-json last_error)" "$INVALID: {\"checkpoint\": oops" "last_error says why, with the body"

if ! same_path 1 "an object followed by garbage (JSON_VALID refuses it)"; then
	once garbage-after
	is "$(state garbage-after)/$(job garbage-after last_error)" \
	    "pending/1/0/$INVALID: {\"snooze\":5} x" "an object followed by garbage: retried"
fi

# A lone surrogate escape: the server's JSON_VALID refuses the whole body,
# so the checkpoint is never reached.
once surrogate
is "$(state surrogate)/$(job surrogate checkpoint)" pending/1/0/NULL \
    '{"checkpoint":"\ud800"}: retried, nothing stored'
# (--raw: the backslash as it is stored, not escaped by the client)
is "$(mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B --raw "$DB" -e \
    "SELECT last_error FROM polling_jobs WHERE business_key = 'surrogate'")" \
    "$INVALID: {\"checkpoint\":\"\\ud800\"}" \
    "last_error: the server's JSON_VALID refuses it"

once too-long
is "$rc/$(counts)/$(state too-long)" 1/0/1/0/pending/1/0 \
    "an object longer than max_response: retried, never a success"
is "$(job too-long last_error)/$(job too-long checkpoint)" \
    "HTTP 202 with a body longer than max_response: cannot read a checkpoint from it/NULL" \
    "last_error says it was cut, and no checkpoint is taken from half a body"

# More blanks than max_response keeps, then an object: what was kept is
# all blank, but the body goes on, so it may well start with "{".
once blanks-too-long
is "$rc/$(counts)/$(state blanks-too-long)" 1/0/1/0/pending/1/0 \
    "200 blanks, then a checkpoint, max_response 100: retried, never a success"
is "$(job blanks-too-long last_error)" \
    "HTTP 202 with a body longer than max_response: cannot read a checkpoint from it" \
    "last_error says it was cut"

# Valid JSON whose checkpoint cannot be stored.
once cp-too-big
is "$rc/$(counts)/$(state cp-too-big)" 1/0/1/0/pending/1/0 \
    "a checkpoint over 65536 bytes: retried"
is "$(job cp-too-big last_error)/$(job cp-too-big checkpoint)" \
    "HTTP 202: checkpoint refused: over 65536 bytes/NULL" \
    "last_error: checkpoint refused, and why"

# --- bodies that ask nothing: success -----------------------------------------

for t in "empty:no body" "text:accepted" "array:[1,2]" "empty-object:{}" \
    'other-object:{"status":"queued","id":7}'; do
	case ${t%%:*} in
	array) same_path 1 "a body that does not start with {" && continue ;;
	other-object) same_path 1 "an object that asks nothing" && continue ;;
	esac
	once "${t%%:*}"
	is "$rc/$(counts)/$(job "${t%%:*}" "CONCAT_WS('/', status, attempts, checkpoint IS NULL)")" \
	    0/1/0/0/success/1/1 "a 202 with ${t#*:}: success"
done

# --- a table without sql/002_checkpoint.sql ------------------------------------

sql "CREATE TABLE plain_jobs LIKE polling_jobs;
    ALTER TABLE plain_jobs DROP COLUMN checkpoint, DROP COLUMN snoozes"
PLAIN=$T/plain.conf
sed "/^\\[database\\]\$/a table = plain_jobs" "$CONF" >"$PLAIN"
pjob() {
	sql "SELECT $2 FROM plain_jobs WHERE business_key = '$1'"
}
# (the jobs inserted as once does)
sql "INSERT INTO plain_jobs (business_key, type, payload, next_run_at,
    created_at, updated_at) VALUES ('p-cp', 'cp-big', '{}', NOW(), NOW(), NOW()),
    ('p-snooze', 'snooze-300', '{}', NOW(), NOW(), NOW())"
run jobrun_raw --config="$PLAIN" --type=cp-big --max=1 --json
is "$rc/$(counts)" 1/0/1/0 "without the checkpoint column a checkpoint is retried"
is "$(pjob p-cp "CONCAT_WS('/', status, attempts, last_error)")" \
    "pending/1/HTTP 202: checkpoint refused: the table has no checkpoint column (apply sql/002_checkpoint.sql)" \
    "last_error: checkpoint refused, and how to enable it"
run jobrun_raw --config="$PLAIN" --type=snooze-300 --max=1 --json
is "$rc/$(counts)/$(pjob p-snooze "CONCAT_WS('/', status, attempts)")" 1/0/1/0/pending/1 \
    "and a snooze is a retry that spends an attempt"
# The delay as the mark wrote it (one statement): NOW() read after the run
# is late by however long the run and this test took (297 s under load).
is "$(pjob p-snooze "TIMESTAMPDIFF(SECOND, updated_at, next_run_at)")" 300 \
    "after the 300 s asked for"

is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success' AND
    business_key NOT IN ('empty', 'text', 'array', 'empty-object', 'other-object')")" 0 \
    "no job whose 202 said more than done was marked success"
