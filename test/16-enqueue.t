#!/bin/bash
# enqueue: creates a due pending job once per business key; a duplicate key
# writes nothing and says "exists"; invalid JSON (65), an unreadable payload
# file (66) and over-long keys or types (64) write nothing.
. "${0%/*}/lib.sh"

plan 47
setup_db
write_config <<EOF2
[type.order_sync]
handler = noop
EOF2
count() {
	sql 'SELECT COUNT(*) FROM polling_jobs'
}

run jobrun enqueue --type=order_sync --key=order_sync:10001 --payload='{"order_id":10001}'
is "$rc" 0 "enqueue exits 0"
is "$out" "job 1 created" "it prints the new id"
is "$(field 1 type)/$(field 1 business_key)" order_sync/order_sync:10001 "type and key stored"
is "$(field 1 status)/$(field 1 attempts)/$(field 1 max_attempts)" pending/0/5 \
    "pending, attempts 0, max_attempts 5"
is "$(field 1 "JSON_VALUE(payload, '\$.order_id')")" 10001 "payload stored"
is "$(field 1 'TIMESTAMPDIFF(SECOND, created_at, next_run_at)')" 0 "due now (next_run_at is the insert's NOW())"
is "$(field 1 'created_at IS NOT NULL AND updated_at IS NOT NULL')" 1 \
    "created_at and updated_at set"

run jobrun enqueue --type=order_sync --key=order_sync:10001 --payload='{"order_id":99}'
is "$rc" 0 "a duplicate key exits 0"
is "$out" "job 1 exists (status pending), not created" "it says the job exists"
is "$(count)" 1 "still one row"
is "$(field 1 "JSON_VALUE(payload, '\$.order_id')")" 10001 "the first payload is kept"

run jobrun enqueue --type=order_sync --key=order_sync:10001 --json
is "$rc" 0 "a duplicate with --json exits 0"
is "$(jget id <<<"$out")/$(jget created <<<"$out")/$(jget status <<<"$out")" 1/false/pending \
    '--json: {"id":1,"created":false,"status":"pending"}'

sql "UPDATE polling_jobs SET status = 'success' WHERE id = 1"
run jobrun enqueue --type=order_sync --key=order_sync:10001
is "$out" "job 1 exists (status success), not created" "the status shown is the row's"

run jobrun enqueue --type=order_sync --key=order_sync:10002 --payload='{"order_id":10002}' --json
is "$rc" 0 "--json create exits 0"
is "$(jkeys <<<"$out")" created,id,status "--json has id, created, status"
id2=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'order_sync:10002'")
is "$(jget id <<<"$out")/$(jget created <<<"$out")/$(jget status <<<"$out")" "$id2/true/pending" \
    '--json: {"id":ID,"created":true,"status":"pending"} for the new row'

run jobrun enqueue --type=order_sync --key=later --delay=600
is "$(sql "SELECT TIMESTAMPDIFF(SECOND, created_at, next_run_at) FROM polling_jobs WHERE business_key = 'later'")" \
    600 "--delay=600: due in 600 s"

run jobrun enqueue --type order_sync --key few --max-attempts 3
is "$rc" 0 "options also take separate values"
is "$(sql "SELECT max_attempts FROM polling_jobs WHERE business_key = 'few'")" 3 \
    "--max-attempts=3 stored"

printf '{"from": "file", "n": [1, 2, 3]}\n' >"$T/payload.json"
run jobrun enqueue --type=order_sync --key=from-file --payload-file="$T/payload.json"
is "$rc" 0 "--payload-file exits 0"
is "$(sql "SELECT JSON_VALUE(payload, '\$.from') FROM polling_jobs WHERE business_key = 'from-file'")" \
    file "payload read from the file"

run jobrun enqueue --type=order_sync --key=from-stdin --payload-file=- <<<'{"from":"stdin"}'
is "$rc" 0 "--payload-file=- exits 0"
is "$(sql "SELECT JSON_VALUE(payload, '\$.from') FROM polling_jobs WHERE business_key = 'from-stdin'")" \
    stdin "payload read from standard input"

before=$(count)
run jobrun enqueue --type=order_sync --key=bad-json --payload='{"order_id":'
is "$rc" 65 "invalid JSON exits 65"
like "$err" '^jobrun: ' "with a jobrun: message"
is "$(count)" "$before" "nothing written"

run jobrun enqueue --type=order_sync --key=bad-json --payload='not json at all'
is "$rc" 65 "a bare word is not JSON either: 65"

run jobrun enqueue --type=order_sync --key=bad-file --payload-file="$T/missing.json"
is "$rc" 66 "a missing payload file exits 66"
like "$err" "missing.json" "the message names the file"
is "$(count)" "$before" "nothing written"

printf '{"a":' >"$T/bad.json"
run jobrun enqueue --type=order_sync --key=bad-file --payload-file="$T/bad.json"
is "$rc" 65 "invalid JSON in a payload file exits 65"

key128=$(printf 'k%.0s' $(seq 128))
run jobrun enqueue --type=order_sync --key="$key128"
is "$rc" 0 "a 128-character key is accepted"
run jobrun enqueue --type=order_sync --key="x$key128"
is "$rc" 64 "a 129-character key exits 64"
like "$err" '^jobrun: ' "with a jobrun: message"
type65=$(printf 't%.0s' $(seq 65))
run jobrun enqueue --type="$type65" --key=long-type
is "$rc" 64 "a 65-character type exits 64"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key IN ('x$key128', 'long-type')")" \
    0 "over-long keys and types are not written"

run jobrun enqueue --type=order_sync --key="ünïcode key 'quoted' \"too\""
is "$rc" 0 "a key with quotes and UTF-8 is fine"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key = 'ünïcode key ''quoted'' \"too\"'")" \
    1 "and stored as given"

# -q where something would be said: a duplicate key (stdout is the result,
# kept) and a world-readable password (a warning, hidden).
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -e "
    DROP USER IF EXISTS 'jobrun_t16'@'localhost';
    CREATE USER 'jobrun_t16'@'localhost' IDENTIFIED BY 'pw-16';
    GRANT ALL ON \`$DB\`.* TO 'jobrun_t16'@'localhost'"
defer "mariadb --no-defaults -S $JOBRUN_TEST_SOCKET -uroot -e \"DROP USER 'jobrun_t16'@'localhost'\""
sed 's/^user = root$/user = jobrun_t16\npassword = pw-16/' "$CONF" >"$T/pw.conf"
chmod 0644 "$T/pw.conf"
run jobrun_raw enqueue --config="$T/pw.conf" --type=order_sync --key=order_sync:10001
like "$err" 'holds a password and is readable by others' "(without -q: the warning)"
run jobrun_raw enqueue --config="$T/pw.conf" --type=order_sync --key=order_sync:10001 -q
is "$rc/$out/$err" "0/job 1 exists (status success), not created/" \
    "-q: the result on stdout, no warning on stderr"

# the bounds of --delay and --max-attempts
run jobrun enqueue --type=order_sync --key=far --delay=315360000 --max-attempts=1000000
is "$rc/$(sql "SELECT max_attempts FROM polling_jobs WHERE business_key = 'far'")" 0/1000000 \
    "--delay=315360000 (ten years) and --max-attempts=1000000 are accepted"
run jobrun enqueue --type=order_sync --key=too-far --delay=315360001
is "$rc" 64 "--delay=315360001 exits 64"
run jobrun enqueue --type=order_sync --key=too-many --max-attempts=1000001
is "$rc" 64 "--max-attempts=1000001 exits 64"

# a payload file over 64 MiB: 66, nothing written
before=$(count)
python3 -c 'import sys; sys.stdout.write("\"" + "x" * (64 * 1024 * 1024) + "\"")' >"$T/huge.json"
run jobrun enqueue --type=order_sync --key=huge --payload-file="$T/huge.json"
is "$rc" 66 "a payload file over 64 MiB exits 66"
like "$err" "huge.json" "the message names the file"
is "$(count)" "$before" "nothing written"
rm -f "$T/huge.json"
