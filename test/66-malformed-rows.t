#!/bin/bash
# Rows written by other programs that jobrun did not expect: each gets a
# clear error or the documented behaviour, never a crash.
#  - a payload that is JSON but not an object is handed over as it is;
#  - a payload that is not JSON at all (a table whose payload column is
#    plain text) fails the job at once with a last_error saying so;
#  - a status jobrun does not know is never claimed or changed;
#  - a pending job with attempts already above max_attempts gets one more
#    attempt, and fails if that one fails;
#  - a processing row without locked_until is not recovered (no lock to
#    expire) but is shown by status as processing.
. "${0%/*}/lib.sh"

plan 17
setup_db
mkdir "$T/seen"
write_config <<EOF2
[type.echo]
handler = exec
command = $HANDLERS/dump-job $T/seen
timeout = 10

[type.fail]
handler = exec
command = $HANDLERS/exit-with 3 nope
timeout = 10
EOF2

ins() {	# KEY TYPE PAYLOAD-SQL [STATUS [ATTEMPTS [MAX]]]
	sql "INSERT INTO polling_jobs (business_key, type, payload, status,
	        attempts, max_attempts, next_run_at, created_at, updated_at)
	     VALUES ('$1', '$2', $3, '${4:-pending}', ${5:-0}, ${6:-5}, NOW(),
	        NOW(), NOW())"
}
st() { sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"; }

ins arr echo "'[1, 2, 3]'"
ins str echo "'\"just text\"'"
ins num echo "'42'"
run jobrun --type=echo --json
is "$(jget succeeded <<<"$out")" 3 "array, string and number payloads: all three ran"
like "$(cat "$T"/seen/*.stdin | tr '\n' ' ')" '\[1, ?2, ?3\]' \
    "an array payload reaches the handler as it is"

ins weird echo NULL paused
ins over fail NULL pending 7 5
run jobrun --json
is "$(st weird status)/$(st weird attempts)" paused/0 "an unknown status is never claimed or changed"
is "$(st over status)/$(st over attempts)" failed/8 \
    "attempts 7 of 5, pending: one more attempt, then failed"
like "$(st over last_error)" "^exit status 3: nope$" "with its last_error"

# Another application's table: payload as plain text, not JSON.
sql "ALTER TABLE polling_jobs MODIFY payload LONGTEXT NULL"
ins bad echo "'{not json'"
run jobrun --type=echo --json
is "$rc" 1 "a payload that is not JSON: exit 1"
is "$(st bad status)/$(st bad attempts)" failed/1 "the job fails at once"
is "$(st bad last_error)" "payload is not valid JSON (the server's JSON_VALID refuses it)" \
    "last_error says the payload is not JSON"
is "$(ls "$T"/seen/*.stdin | wc -l)" 3 "the handler was not run for it"

# A processing row with no lock at all.
ins nolock echo NULL processing 1 5
run jobrun --json
is "$(jget recovered <<<"$out")" 0 "a processing row without locked_until is not recovered"
is "$(st nolock status)" processing "and is left as it is"
run jobrun status --type=echo --json
is "$rc" 0 "status copes with the odd rows"
is "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["types"][0]["processing"])' <<<"$out")" \
    1 "and counts the lockless row as processing"
run jobrun list --json
is "$rc" 0 "list copes with them too"
is "$(jpy '" ".join("%s:%s" % (j["business_key"], j["status"]) for j in d["jobs"])' <<<"$out")" \
    "nolock:processing bad:failed over:failed weird:paused num:success str:success arr:success" \
    "and shows every row, newest first, the unknown status as it is"
run jobrun show --key=weird --json
is "$rc/$(jget status <<<"$out")" 0/paused "show shows the unknown status as it is"
run jobrun show --key=bad --json
is "$rc/$(jget payload <<<"$out")" "0/{not json" "show --json of a payload that is not JSON: a string"
