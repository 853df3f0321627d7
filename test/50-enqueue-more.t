#!/bin/bash
# enqueue, beyond 16-enqueue.t: --at (stored as given; a date the server
# cannot read exits 65, a malformed one 64, with --delay 64), a duplicate key
# leaves the existing row alone whatever its status, type or schedule, the
# payload from "-", keys and types counted in characters, usage errors, and
# a database error that is reported rather than taken for a duplicate.
# Nothing is written on any failure.
. "${0%/*}/lib.sh"

plan 67
setup_db
write_config <<EOF2
[type.report]
handler = noop
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
by_key() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}

# --- --at ---------------------------------------------------------------

run jobrun enqueue --type=report --key=at:1 --at='2031-01-02 03:04:05' \
    --max-attempts=2 --json
is "$rc" 0 "--at exits 0"
is "$(jget created <<<"$out")/$(jget status <<<"$out")" true/pending \
    "--json says created, pending"
is "$(by_key at:1 next_run_at)" "2031-01-02 03:04:05" "next_run_at is the --at time"
is "$(by_key at:1 max_attempts)" 2 "--max-attempts stored with --at"

run jobrun enqueue --type=report --key=at:2 --at='2031-01-02T03:04'
is "$rc" 0 "--at with a T and no seconds exits 0"
is "$(by_key at:2 next_run_at)" "2031-01-02 03:04:00" "and is read as 03:04:00"

run jobrun enqueue --type=report --key=at:past --at='2001-01-01 00:00:00'
is "$rc/$(by_key at:past next_run_at)" "0/2001-01-01 00:00:00" \
    "an --at in the past is stored as given (due at once)"

before=$(count)
run jobrun enqueue --type=report --key=at:bad --at='2031-02-30 10:00:00'
is "$rc" 65 "--at of 30 February (the server cannot read it) exits 65"
like "$err" '^jobrun: --at: .*2031-02-30 10:00:00' "the message names --at and the value"
is "$out" "" "nothing on stdout"
run jobrun enqueue --type=report --key=at:bad --at='2031-13-01 00:00:00' --json
is "$rc" 65 "--at in month 13 exits 65"
is "$out" "" "and prints no JSON"
run jobrun enqueue --type=report --key=at:bad --at='0000-00-00 00:00'
is "$rc/$err" '65/jobrun: --at: the server does not read "0000-00-00 00:00" as a date and time' \
    "--at of the zero date (no time at all) exits 65"
run jobrun enqueue --type=report --key=at:bad --at=tomorrow
is "$rc" 64 "--at that is not YYYY-MM-DD HH:MM:SS exits 64"
like "$err" 'YYYY-MM-DD' "the message shows the expected form"
run jobrun enqueue --type=report --key=at:bad --at='2031-01-02 03:04:05' --delay=60
is "$rc" 64 "--at with --delay exits 64"
like "$err" '--at and --delay' "the message names both options"
is "$(count)" "$before" "no row written by a rejected --at"

# --- duplicates: the existing row is left alone ----------------------------

jobrun enqueue --type=report --key=dup:1 --payload='{"v":1}' --delay=3600 >/dev/null
id=$(by_key dup:1 id)
# updated_at an hour back: a write of the row, even in this second, shows.
sql "UPDATE polling_jobs SET status = 'failed', attempts = 5,
    last_error = 'boom', finished_at = NOW(),
    updated_at = NOW() - INTERVAL 1 HOUR WHERE id = $id"
snapshot() {
	sql "SELECT CONCAT_WS('|', type, payload, status, attempts, max_attempts,
	    next_run_at, last_error, updated_at) FROM polling_jobs WHERE id = $id"
}
was=$(snapshot)
run jobrun enqueue --type=other --key=dup:1 --payload='{"v":2}' \
    --at='2040-01-01 00:00:00' --max-attempts=9
is "$rc" 0 "a duplicate of a failed job exits 0"
is "$out" "job $id exists (status failed), not created" \
    "it names the existing job and its status"
is "$(snapshot)" "$was" "type, payload, status, schedule and error unchanged"
run jobrun enqueue --type=report --key=dup:1 --json
is "$(jget id <<<"$out")/$(jget created <<<"$out")/$(jget status <<<"$out")" \
    "$id/false/failed" '--json: {"id":ID,"created":false,"status":"failed"}'
is "$(count "business_key = 'dup:1'")" 1 "still one row with that key"

# --- the payload --------------------------------------------------------

run jobrun enqueue --type=report --key=stdin:1 - <<<'{"from":"dash"}'
is "$rc" 0 "the - operand reads the payload from standard input"
is "$(by_key stdin:1 "JSON_VALUE(payload, '\$.from')")" dash "payload stored"

before=$(count)
run jobrun enqueue --type=report --key=stdin:bad - <<<'{"from":'
is "$rc" 65 "invalid JSON on standard input exits 65"
like "$err" "payload is not valid JSON \\(the server's JSON_VALID refuses it\\)" \
    "the message says the server refuses it"
run jobrun enqueue --type=report --key=two --payload='{} {}'
is "$rc" 65 "two JSON documents are not one payload: 65"
run jobrun enqueue --type=report --key=empty --payload=''
is "$rc" 65 "an empty --payload is not JSON: 65"
run jobrun enqueue --type=report --key=both --payload='{}' - <<<'{}'
is "$rc" 64 "--payload with - exits 64"
run jobrun enqueue --type=report --key=both --payload='{}' --payload-file=/dev/null
is "$rc" 64 "--payload with --payload-file exits 64"
is "$(count)" "$before" "no row written by a rejected payload"

run jobrun enqueue --type=report --key=scalar --payload=42
is "$rc/$(by_key scalar payload)" 0/42 "a JSON scalar is a valid payload"
run jobrun enqueue --type=report --key=no-payload --json
is "$rc/$(by_key no-payload 'payload IS NULL')" 0/1 "no payload: NULL"

# MariaDB's JSON column refuses nesting deeper than 32 levels (MySQL's
# deeper than 100), which jansson accepts: the server's refusal must not
# look like success or a duplicate, and it is a bad payload (65), not an
# internal error (70).
depth=40
on_mysql && depth=101
deep=$(printf '[%.0s' $(seq $depth))$(printf ']%.0s' $(seq $depth))
before=$(count)
run jobrun enqueue --type=report --key=deep --payload="$deep"
is "$rc" 65 "a payload the server refuses (nested $depth deep) exits 65"
like "$err" 'payload' "the message names the payload"
unlike "$out" 'created|exists' "it reports neither created nor exists"
is "$(count)" "$before" "nothing written"

# --- keys and types: characters, not bytes ---------------------------------

e128=$(printf 'é%.0s' $(seq 128))
run jobrun enqueue --type=report --key="$e128"
is "$rc" 0 "a key of 128 two-byte characters (256 bytes) is accepted"
is "$(sql "SELECT CHAR_LENGTH(business_key) FROM polling_jobs WHERE business_key = '$e128'")" \
    128 "and stored whole"
before=$(count)
run jobrun enqueue --type=report --key="é$e128"
is "$rc" 64 "129 characters exit 64"
like "$err" '--key: 1\.\.128 characters, got 129' "the message gives the limit and the length"
run jobrun enqueue --type=report --key=$'bad\xff'
is "$rc" 64 "a key that is not UTF-8 exits 64"
like "$err" 'UTF-8' "the message says why"
run jobrun enqueue --type=report --key=''
is "$rc" 64 "an empty key exits 64"
t64=$(printf 't%.0s' $(seq 64))
run jobrun enqueue --type="$t64" --key=type64
is "$rc/$(by_key type64 'CHAR_LENGTH(type)')" 0/64 "a 64-character type is accepted"
run jobrun enqueue --type="x$t64" --key=type65
is "$rc" 64 "a 65-character type exits 64"
like "$err" '--type: 1\.\.64 characters, got 65' "the message gives the limit and the length"
is "$(count)" "$((before + 1))" "only the valid type's row was written"

# --- usage --------------------------------------------------------------

before=$(count)
run jobrun enqueue --key=k
is "$rc" 64 "no --type: 64"
run jobrun enqueue --type=report
is "$rc" 64 "no --key: 64"
run jobrun enqueue --type=report --key=k --max-attempts=0
is "$rc" 64 "--max-attempts=0: 64"
run jobrun enqueue --type=report --key=k --delay=-1
is "$rc" 64 "--delay=-1: 64"
run jobrun enqueue --type=report --key=k extra
is "$rc" 64 "an extra operand: 64"
run jobrun enqueue --type=report --key=k --status=failed
is "$rc" 64 "an option of another command: 64"
like "$err" 'option --status is not for "enqueue"' "the message names the option"
is "$(count)" "$before" "no row written by a usage error"

# --- other database errors are errors --------------------------------------

mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot --delimiter=// "$DB" -e "
CREATE TRIGGER refuse BEFORE INSERT ON polling_jobs FOR EACH ROW
  IF NEW.business_key LIKE 'refused:%' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by a trigger';
  END IF//"
run jobrun enqueue --type=report --key=refused:1 --json
is "$rc" 70 "an unexpected database error exits 70"
like "$err" 'enqueue job in .*refused by a trigger' "the message carries the server's"
is "$out" "" "no created/exists JSON"
is "$(count "business_key = 'refused:1'")" 0 "nothing written"

# --- a multibyte --key-prefix: the room left for --keys-from in characters ----

# 80 characters in 160 bytes: room for keys of 128 - 80 - 1 = 47 characters.
prefix=$(printf '\303\251%.0s' {1..80})
printf '%s\n' "$(printf 'k%.0s' {1..47})" >"$T/keys47"
printf 'short\n%s\n' "$(printf 'k%.0s' {1..48})" >"$T/keys48"
run jobrun enqueue --type=report --key-prefix="$prefix" --keys-from="$T/keys47"
is "$rc" 0 "a 47-character key after an 80-character multibyte prefix is enqueued"
is "$(sql "SELECT CHAR_LENGTH(business_key) FROM polling_jobs
    WHERE business_key LIKE '$prefix:k%'")" 128 "its key is 128 characters, whole"
run jobrun enqueue --type=report --key-prefix="$prefix" --keys-from="$T/keys48"
is "$rc" 65 "a 48-character key after it exits 65"
is "$err" "jobrun: enqueue: --keys-from line 2: 1..47 characters, got 48" \
    "the message names the line and the room"
is "$(count "business_key LIKE '$prefix:%'")" 1 \
    "nothing more is inserted, not even the short key before it"
is "$(count "business_key LIKE '$prefix:%' AND CHAR_LENGTH(business_key) <> 128")" 0 \
    "and no key is cut short"
