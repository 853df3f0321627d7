#!/bin/bash
# Snooze and progress (sql/002_checkpoint.sql): a handler can say "not
# yet, run me again in N seconds" (exec: exit 99, N alone on its last line
# of output, digits only, capped at backoff_cap; http: 202 with
# {"snooze": N} or Retry-After) without spending an attempt, and "progress
# saved, run me again" (a new checkpoint, then exit 99, or 202 with
# {"checkpoint": ...}).  Each slice is a claim and counts against
# batch_size; progress resets the snooze count.  Snoozes without progress
# are bounded by [run] max_snoozes (0: every one is a retry); without the
# migration a snooze is an ordinary retry.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 41
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
start_http_server
write_config <<EOF2
[run]
max_snoozes = 2
backoff_base = 60

[type.later]
handler = exec
command = $HANDLERS/snooze 90
timeout = 10

[type.vague]
handler = exec
command = $HANDLERS/snooze
timeout = 10

[type.slices]
handler = exec
command = $HANDLERS/slices 1000 300 $T/items
timeout = 10

[type.web-progress]
handler = http
url = $HTTP_URL/status/202?body=%7B%22checkpoint%22%3A%7B%22page%22%3A7%7D%7D
timeout = 5

[type.web-snooze]
handler = http
url = $HTTP_URL/status/202?body=%7B%22snooze%22%3A45%7D
timeout = 5

[type.web-accepted]
handler = http
url = $HTTP_URL/status/202?body=queued
timeout = 5

[type.web-retry-after]
handler = http
url = $HTTP_URL/status/202?body=%7B%22snooze%22%3A%22soon%22%7D&retry_after=75
timeout = 5

[type.web-array]
handler = http
url = $HTTP_URL/status/202?body=%5B1%2C2%5D
timeout = 5

[type.web-other]
handler = http
url = $HTTP_URL/status/202?body=%7B%22status%22%3A%22queued%22%7D
timeout = 5

[type.not-digits]
handler = exec
command = $HANDLERS/snooze 1e3
timeout = 10

[type.too-long]
handler = exec
command = $HANDLERS/snooze 99999999
timeout = 10
EOF2
job() { sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"; }
# The jobs are inserted as an application would (insert_job; enqueue is
# tested elsewhere): under valgrind each jobrun costs a second or more of
# CPU, and this file started 15 of them only to make its jobs.
# due_in KEY: the delay the mark set (next_run_at - updated_at, one statement)
due_in() { job "$1" "TIMESTAMPDIFF(SECOND, updated_at, next_run_at)"; }

insert_job later later
run jobrun --type=later --json
is "$rc" 0 "a snooze is not a failure: exit 0"
is "$(jget snoozed <<<"$out")" 1 "--json counts it as snoozed"
is "$(job later status)/$(job later attempts)/$(job later snoozes)" pending/0/1 \
    "the job is pending, no attempt spent, one snooze counted"
is "$(due_in later)" 90 "due again in the 90 s the handler named"

insert_job vague vague
run jobrun --type=vague --json
is "$(due_in vague)" 60 "no delay named: backoff_base (60 s)"

sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key = 'vague'"
run jobrun --type=vague --json
is "$(job vague snoozes)/$(job vague attempts)" 2/0 "a second snooze in a row"
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key = 'vague'"
run jobrun --type=vague --json
is "$(job vague status)/$(job vague attempts)" pending/1 \
    "past max_snoozes (2) without progress, the snooze spends an attempt"
like "$(job vague last_error)" "put off 2 times in a row without progress" \
    "and last_error says why"

# Progress: 1000 items in slices of 300, each attempt resuming from the
# last checkpoint; one run does them all, since progress is due at once.
insert_job slices slices
run jobrun --type=slices --json
is "$(jget snoozed <<<"$out")/$(jget succeeded <<<"$out")" 3/1 \
    "three slices saved progress and ran again, the fourth finished"
is "$(job slices status)/$(job slices attempts)/$(job slices snoozes)" success/1/0 \
    "the job is success, one attempt spent in all"
is "$(wc -l <"$T/items")/$(sort -un "$T/items" | wc -l)" 1000/1000 \
    "each of the 1000 items was processed exactly once"
is "$(job slices checkpoint)" "$(json_as_stored '{"last":1000}')" "the last checkpoint is kept"

# http: 202 with a checkpoint or a snooze; a plain 202 is a success.
insert_job wp web-progress NULL max_attempts 1
run jobrun --type=web-progress --max=1 --json
is "$(job wp checkpoint)" '{"page": 7}' \
    "202 with a checkpoint: stored as the server's JSON_EXTRACT reads it"
is "$(job wp status)/$(job wp attempts)" pending/0 "and the job runs again without spending its attempt"
is "$(due_in wp)" 0 "at once, since it made progress"
is "$(http_req key=wp json:checkpoint)" null "the first request carried no checkpoint"
run jobrun --type=web-progress --max=1 --json
like "$(http_req key=wp json:checkpoint)" '^\{"page": ?7\}$' \
    "the next request hands the receiver its checkpoint back"
is "$(job wp snoozes)/$(job wp attempts)" 1/0 \
    "the same checkpoint again is no progress: it counts as a snooze"
insert_job ws web-snooze
run jobrun --type=web-snooze --json
is "$(job ws status)/$(job ws attempts)" pending/0 "202 with a snooze: pending, no attempt spent"
is "$(due_in ws)" 45 "due in the 45 s asked for"
insert_job wa web-accepted
run jobrun --type=web-accepted --json
is "$(job wa status)" success "a plain 202 is a success"
insert_job wra web-retry-after
run jobrun --type=web-retry-after --json
# "snooze" must be a whole number of seconds: a reply jobrun cannot read
# as documented is an attempt not done, never a success (Retry-After
# notwithstanding).
is "$(job wra status)/$(job wra attempts)/$(job wra snoozes)" pending/1/0 \
    "202 with a snooze that is not a number: a retry, the attempt spent"
like "$(job wra last_error)" '^HTTP 202: "snooze" must be a whole number of seconds, not "soon"' \
    "last_error says why"
for t in web-array:warr web-other:woth; do
	insert_job "${t#*:}" "${t%%:*}"
	run jobrun --type="${t%%:*}" --json
	is "$(job "${t#*:}" status)/$(jget succeeded <<<"$out")" success/1 \
	    "a 202 whose body is not a snooze or checkpoint object (${t%%:*}): an ordinary success"
done

# The delay line: digits only, and never past backoff_cap (3600).
insert_job nd not-digits
run jobrun --type=not-digits --json
is "$(job nd status)/$(job nd attempts)" pending/0 "a last line of 1e3: still a snooze"
is "$(due_in nd)" 60 "but not a delay: backoff_base (60 s)"
insert_job tl too-long
run jobrun --type=too-long --json
is "$(due_in tl)" 3600 "a delay of 99999999 s is capped at backoff_cap (3600)"

# Slices count against batch_size: --max=2 gives two slices.
insert_job sl2 slices
: >"$T/items"
run jobrun --type=slices --max=2 --json
is "$(jget claimed <<<"$out")/$(jget snoozed <<<"$out")" 2/2 "--max=2: two slices, each a claim"
is "$(wc -l <"$T/items")/$(job sl2 status)" 600/pending "600 items done, the job waits for the next run"

# Progress resets the snooze count.
sql "UPDATE polling_jobs SET snoozes = 5 WHERE business_key = 'sl2'"
run jobrun --type=slices --max=1 --json
is "$(job sl2 snoozes)" 0 "a slice that made progress sets snoozes back to 0"

# max_snoozes = 0: every snooze without progress is a retry.  (The jobs
# above are left out: on a slow run their delays may have passed.)
sql "DELETE FROM polling_jobs"
write_config <<EOF2
[run]
max_snoozes = 0
backoff_base = 60

[type.later]
handler = exec
command = $HANDLERS/snooze 90
timeout = 10
EOF2
insert_job zero later
run jobrun --type=later --json
is "$(jget retried <<<"$out")/$(job zero attempts)/$(job zero status)" 1/1/pending \
    "max_snoozes = 0: the snooze spends an attempt"
# (the client shows the newline in last_error as \n)
is "$(job zero last_error)" \
    'put off 0 times in a row without progress (max_snoozes): exit 99 (not yet): waiting for the warehouse\n90' \
    "and last_error says why, then what the handler said"

# Without the migration, exit 99 is an ordinary retry.
sql "DELETE FROM polling_jobs"
sql "ALTER TABLE polling_jobs DROP COLUMN checkpoint, DROP COLUMN snoozes"
insert_job later2 later
run jobrun --type=later --json
is "$(jget retried <<<"$out")" 1 "without sql/002_checkpoint.sql a snooze is a retry"
is "$(job later2 status)/$(job later2 attempts)" pending/1 "it spends an attempt"
like "$(job later2 last_error)" "apply sql/002_checkpoint.sql" "and last_error says how to enable snooze"
write_config <<EOF2
[type.web-snooze]
handler = http
url = $HTTP_URL/status/202?body=%7B%22snooze%22%3A45%7D
timeout = 5

[type.web-progress]
handler = http
url = $HTTP_URL/status/202?body=%7B%22checkpoint%22%3A%7B%22page%22%3A7%7D%7D
timeout = 5
EOF2
insert_job ws2 web-snooze
insert_job wp2 web-progress
run jobrun --json
is "$(jget retried <<<"$out")" 2 "without the migration both 202s are retries"
is "$(job ws2 attempts)/$(job wp2 attempts)" 1/1 "each spends an attempt"
is "$(due_in ws2)" 45 "the snooze's delay still counts"
like "$(job wp2 last_error)" '^HTTP 202: checkpoint refused: ' "the checkpoint is refused for want of the column"
is "$(due_in later2)" 90 "the delay the handler named still counts"
