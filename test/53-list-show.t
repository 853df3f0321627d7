#!/bin/bash
# list: newest first, filtered by status and type, in pages of --limit
# (default 20) that follow each other with --before-id and neither overlap
# nor skip (45 jobs: 20 + 20 + 5).  show: one job by id or --key, every
# column, the payload as stored (--json: embedded as JSON); an
# unknown id or key exits 1 with "no job".
. "${0%/*}/lib.sh"

plan 63
setup_db
write_config <<EOF2
[type.a]
handler = noop
EOF2
ids() {
	jpy '" ".join(str(j["id"]) for j in d["jobs"])'
}

run jobrun list --json
is "$rc/$out" '0/{"jobs":[],"next_before_id":null}' "list on an empty table: no jobs, no next page"
run jobrun list
is "$rc/$(wc -l <<<"$out")" 0/1 "as text: only the header"

# 45 jobs: types a and b by turns, every fifth failed, every seventh success
sql "INSERT INTO polling_jobs (business_key, type, payload, status, attempts,
        next_run_at, created_at, updated_at, last_error)
     SELECT CONCAT('job:', seq), IF(seq % 2, 'a', 'b'),
        JSON_OBJECT('n', seq), CASE WHEN seq % 5 = 0 THEN 'failed'
        WHEN seq % 7 = 0 THEN 'success' ELSE 'pending' END,
        IF(seq % 5 = 0, 5, 0), NOW(), NOW(), NOW(),
        IF(seq % 5 = 0, CONCAT('error of ', seq, '\nsecond line'), NULL)
     FROM seq_1_to_45"
all=$(sql "SELECT id FROM polling_jobs ORDER BY id DESC" | tr '\n' ' ')
all=${all% }

# --- pages ---------------------------------------------------------------

run jobrun list --limit=20 --json
is "$rc" 0 "list --limit=20 --json exits 0"
is "$(jkeys <<<"$out")" jobs,next_before_id "--json has jobs and next_before_id"
is "$(jpy '",".join(sorted(d["jobs"][0]))' <<<"$out")" \
    attempts,business_key,id,last_error,max_attempts,next_run_at,status,type,updated_at \
    "each job has the documented keys"
p1=$(ids <<<"$out")
next=$(jget next_before_id <<<"$out")
is "$(wc -w <<<"$p1")" 20 "page 1: 20 jobs"
is "$next" "${p1##* }" "next_before_id is the last id of the page"
run jobrun list --limit=20 --before-id="$next" --json
p2=$(ids <<<"$out")
next=$(jget next_before_id <<<"$out")
is "$(wc -w <<<"$p2")" 20 "page 2: 20 jobs"
run jobrun list --limit=20 --before-id="$next" --json
p3=$(ids <<<"$out")
is "$(wc -w <<<"$p3")" 5 "page 3: 5 jobs"
is "$(jget next_before_id <<<"$out")" null "and no next page"
is "$p1 $p2 $p3" "$all" "the pages together are every job, newest first, no overlap"

run jobrun list --json
is "$(ids <<<"$out" | wc -w)" 20 "the default limit is 20"
run jobrun list --limit=100 --json
is "$(ids <<<"$out")/$(jget next_before_id <<<"$out")" "$all/null" \
    "--limit=100: all 45 on one page, no next page"

run jobrun list --limit=20
is "$rc" 0 "text list exits 0"
like "$(head -n 1 <<<"$out")" '^ID +TYPE +STATUS +TRIES +NEXT RUN +KEY +LAST ERROR$' "a header line"
is "$(wc -l <<<"$out")" 22 "header, 20 jobs and a pointer to the next page"
is "$(tail -n 1 <<<"$out")" "(more: --before-id=${p1##* })" "the pointer names the next --before-id"
is "$(sed -n 2p <<<"$out" | awk '{ print $1 }')" "${all%% *}" "the newest job first"
run jobrun list --limit=20 --before-id="${p2##* }"
is "$(wc -l <<<"$out")" 6 "the last page: header and 5 jobs, no pointer"
failed_id=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'job:5'")
like "$(grep "^$failed_id " <<<"$out")" "^$failed_id +a +failed +5/5 +[0-9-]+ [0-9:]+ +job:5 +error of 5: \\.\\.\\. second line$" \
    "a row: id, type, status, tries, next run, key, and the error's first words and last line"

long_id=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'job:10'")
sql "UPDATE polling_jobs SET last_error = CONCAT(REPEAT('x', 100), '\nsecond line')
     WHERE id = $long_id"
run jobrun list --status=failed --limit=100
is "$(grep "^$long_id " <<<"$out" | sed 's/.* //')" "$(printf 'x%.0s' $(seq 60))" \
    "LAST ERROR is cut to 60 characters"

# What a PHP handler leaves: a banner first, why it failed last.  The list
# shows the opening words jobrun wrote and the last line (blank lines and
# trailing blanks aside); show prints every line, indented.
banner_id=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'job:15'")
sql "UPDATE polling_jobs SET last_error = 'no attempts left: exit status 255: PHP 8.2 worker v1.4 starting\nloaded 12 classes\nPHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused\n\n  '
     WHERE id = $banner_id"
run jobrun list --status=failed --limit=100
is "$(grep "^$banner_id " <<<"$out" | sed 's/.*job:15  //')" \
    "no attempts left: exit status 255: ... PHP Fatal error:  Unc" \
    "LAST ERROR: jobrun's opening words, then the handler's last line, 60 characters"
run jobrun show "$banner_id"
is "$(sed -n '/^last_error /,/^created_at /p' <<<"$out")" \
"last_error    no attempts left: exit status 255: PHP 8.2 worker v1.4 starting
              loaded 12 classes
              PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused
              
                
created_at    $(sql "SELECT created_at FROM polling_jobs WHERE id = $banner_id")" \
    "show prints last_error's lines, each under the first, not as \\n"

# When a pending job is due, by the server's clock: a next_run_at written
# in another time zone shows at once.
sql "UPDATE polling_jobs SET next_run_at = NOW() + INTERVAL 8 HOUR + INTERVAL 30 SECOND WHERE business_key = 'job:1';
     UPDATE polling_jobs SET next_run_at = NOW() - INTERVAL 150 SECOND WHERE business_key = 'job:2';
     UPDATE polling_jobs SET next_run_at = NOW() + INTERVAL 3 DAY + INTERVAL 1 HOUR WHERE business_key = 'job:3'"
run jobrun list --status=pending --limit=100
like "$(grep ' job:1$' <<<"$out")" '^[0-9]+ +a +pending +0/5 +[0-9-]+ [0-9:]+ in 8 h +job:1$' \
    "list: a job due in 8 h 0 min 30 s says 'in 8 h'"
like "$(grep ' job:2$' <<<"$out")" ' [0-9:]+ 2 min ago +job:2$' "one due 150 s ago: '2 min ago'"
like "$(grep ' job:3$' <<<"$out")" ' [0-9:]+ in 3 d +job:3$' "one due in 3 d 1 h: 'in 3 d'"
run jobrun show --key=job:1
like "$(grep '^next_run_at ' <<<"$out")" '^next_run_at +[0-9-]+ [0-9:]+ \(in 8 h\)$' \
    "show: next_run_at says when too"
run jobrun show "$banner_id"
like "$(grep '^next_run_at ' <<<"$out")" '^next_run_at +[0-9-]+ [0-9:]+$' \
    "not for a failed job"

# --- filters -------------------------------------------------------------

run jobrun list --status=failed --json
is "$(ids <<<"$out")" "$(sql "SELECT id FROM polling_jobs WHERE status = 'failed' ORDER BY id DESC" | tr '\n' ' ' | sed 's/ $//')" \
    "--status=failed: the 9 failed jobs, newest first"
is "$(jpy 'd["jobs"][0]["last_error"]' <<<"$out")" "error of 45
second line" "--json has the whole last_error"
run jobrun list --type=b --limit=100 --json
is "$(jpy 'sorted(set(j["type"] for j in d["jobs"]))' <<<"$out")/$(ids <<<"$out" | wc -w)" \
    '["b"]/22' "--type=b: only b's 22 jobs"
run jobrun list --type=a --status=success --json
is "$(jpy '[j["business_key"] for j in d["jobs"]]' <<<"$out")" '["job:21", "job:7"]' \
    "--type=a --status=success: jobs 21 and 7, newest first"
run jobrun list --status=pending --limit=10 --json
pend1=$(ids <<<"$out")
run jobrun list --status=pending --limit=10 --before-id="$(jget next_before_id <<<"$out")" --json
pend2=$(ids <<<"$out")
is "$pend1 $pend2" "$(sql "SELECT id FROM polling_jobs WHERE status = 'pending' ORDER BY id DESC LIMIT 20" | tr '\n' ' ' | sed 's/ $//')" \
    "pages of a filtered list follow each other"
run jobrun list --status=processing --json
is "$out" '{"jobs":[],"next_before_id":null}' "no processing jobs: an empty list"

run jobrun list --status=bogus
is "$rc" 64 "--status=bogus exits 64"
like "$err" 'pending, processing, success or failed' "the message lists the statuses"
run jobrun list --limit=0
is "$rc" 64 "--limit=0 exits 64"
run jobrun list --limit=100001
is "$rc" 64 "--limit=100001 exits 64"
run jobrun list --before-id=x
is "$rc" 64 "--before-id=x exits 64"

# --- show ------------------------------------------------------------------

jobrun enqueue --type=a --key=show:1 \
    --payload='{"order":{"id":7,"lines":[1,2]},"note":"é"}' >/dev/null
id=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'show:1'")
sql "UPDATE polling_jobs SET status = 'failed', attempts = 5,
    last_error = 'exit status 3: no route', finished_at = NOW() WHERE id = $id"

run jobrun show "$id"
is "$rc" 0 "show ID exits 0"
is "$(awk '{ print $1 }' <<<"$out" | grep -E '^[a-z_]+:?$' | tr -d : | tr '\n' ' ')" \
    "id business_key type payload status attempts max_attempts next_run_at locked_by locked_until last_error created_at updated_at finished_at " \
    "it shows every column"
show_line() {
	grep "^$1 " <<<"$out"
}
like "$(show_line id)" "^id +$id$" "the id"
like "$(show_line status)" '^status +failed$' "the status"
like "$(show_line last_error)" '^last_error +exit status 3: no route$' "the last error"
like "$(show_line locked_by)" '^locked_by +NULL$' "NULL columns as NULL"
is "$(show_line payload)" \
    "payload       $(json_as_stored '{"order":{"id":7,"lines":[1,2]},"note":"é"}')" \
    "the payload as it is stored, UTF-8 included"
by_id=$out
run jobrun show --key=show:1
is "$rc/$out" "0/$by_id" "show --key shows the same job, line for line"

run jobrun show "$id" --json
is "$rc" 0 "show --json exits 0"
is "$(jkeys <<<"$out")" \
    attempts,business_key,created_at,finished_at,id,last_error,locked_by,locked_until,max_attempts,next_run_at,payload,status,type,updated_at \
    "--json has every column"
is "$(jpy '[d["id"], d["attempts"], d["max_attempts"], d["status"], d["locked_by"]]' <<<"$out")" \
    "[$id, 5, 5, \"failed\", null]" "numbers as numbers, NULL as null"
is "$(jpy 'd["payload"]["order"]["lines"]' <<<"$out")" '[1, 2]' "the payload is embedded as JSON, not a string"
is "$(jpy 'd["payload"]["note"]' <<<"$out")" 'é' "with its UTF-8"
run jobrun show --key=show:1 --json
is "$(jget id <<<"$out")" "$id" "show --key --json finds it by key"
nopayload=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'job:1'")
sql "UPDATE polling_jobs SET payload = NULL WHERE id = $nopayload"
run jobrun show "$nopayload" --json
is "$(jget payload <<<"$out")" null "no payload: null"

run jobrun show 999999
is "$rc" 1 "show of an unknown id exits 1"
is "$err" "jobrun: show: no job 999999" "it says there is no such job"
is "$out" "" "nothing on stdout"
run jobrun show --key=no:such --json
is "$rc/$out" 1/ "show --key of an unknown key exits 1, no JSON"
like "$err" 'no job with key no:such' "the message names the key"
run jobrun show
is "$rc" 64 "show without an id or --key exits 64"
run jobrun show 1 2
is "$rc" 64 "show with two ids exits 64"
run jobrun show 1 --key=show:1
is "$rc" 64 "show with an id and --key exits 64"
run jobrun show abc
is "$rc" 64 "show abc exits 64"
