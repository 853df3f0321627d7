#!/bin/bash
# enqueue --key-prefix --range --chunk: a range fanned out into chunk jobs
# keyed "P:FROM-TO" with {"from","to"} merged into the template.  Running it
# again adds only the chunks that are missing, whether rows were deleted or
# an earlier run was cut off by a database error half-way.  1,000,000 items
# in chunks of 100 (10,000 jobs) take well under 30 s.  Progress goes to
# stderr only when it is a terminal.
. "${0%/*}/lib.sh"

plan 65
setup_db
write_config <<EOF2
[type.slice]
handler = noop
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
by_key() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}
# now_s: seconds since the epoch, with nanoseconds
now_s() {
	date +%s.%N
}

# --- a small fan-out --------------------------------------------------------

run jobrun enqueue --type=slice --key-prefix=small --range=1-10 --chunk=3 \
    --payload-template='{"report":"daily","from":99}'
is "$rc" 0 "a fan-out exits 0"
is "$out" "4 chunk jobs: 4 created, 0 existed" "it counts the chunks"
is "$err" "" "no progress on stderr when it is not a terminal"
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY id) FROM polling_jobs")" \
    "small:1-3,small:4-6,small:7-9,small:10-10" "keys P:FROM-TO, the last chunk short"
is "$(by_key small:4-6 "CONCAT_WS(',', JSON_VALUE(payload, '\$.report'),
    JSON_VALUE(payload, '\$.from'), JSON_VALUE(payload, '\$.to'))")" daily,4,6 \
    "payload: the template with from and to (the template's from replaced)"
is "$(by_key small:10-10 "JSON_VALUE(payload, '\$.from') = 10 AND JSON_VALUE(payload, '\$.to') = 10")" \
    1 "the short chunk's payload is 10..10"
is "$(count "type = 'slice' AND status = 'pending' AND attempts = 0")" 4 \
    "all of the type, pending, attempts 0"
left_between "$(sql "SELECT MAX(TIMESTAMPDIFF(SECOND, NOW(), next_run_at)) FROM polling_jobs")" \
    -2 0 "all due now"

run jobrun enqueue --type=slice --key-prefix=small --range=1-10 --chunk=3 --json
is "$rc" 0 "the same fan-out again exits 0"
is "$(jkeys <<<"$out")" "chunks,complete,created,existing" "--json has chunks, created, existing, complete"
is "$(jget chunks <<<"$out")/$(jget created <<<"$out")/$(jget existing <<<"$out")/$(jget complete <<<"$out")" \
    4/0/4/true "nothing created, 4 existing, complete"
is "$(count)" 4 "still 4 rows"

run jobrun enqueue --type=slice --key-prefix=one --range=5-5 --chunk=100
is "$out/$(by_key one:5-5 "JSON_VALUE(payload, '\$.to')")" "1 chunk jobs: 1 created, 0 existed/5" \
    "a range of one item is one chunk"
run jobrun enqueue --type=slice --key-prefix=zero --range=0-250 --chunk=1000
is "$(count "business_key = 'zero:0-250'")" 1 "a chunk larger than the range is one job"

run jobrun enqueue --type=slice --key-prefix=later --range=1-4 --chunk=2 \
    --delay=600 --max-attempts=3
is "$rc" 0 "a fan-out with --delay and --max-attempts exits 0"
is "$(count "business_key LIKE 'later:%' AND max_attempts = 3 AND
    TIMESTAMPDIFF(SECOND, NOW(), next_run_at) BETWEEN 598 AND 600")" 2 \
    "both chunks due in 600 s with max_attempts 3"
run jobrun enqueue --type=slice --key-prefix=at --range=1-4 --chunk=2 \
    --at='2031-05-06 07:08:09'
is "$(count "business_key LIKE 'at:%' AND next_run_at = '2031-05-06 07:08:09'")" 2 \
    "--at applies to every chunk"

# --- refused -------------------------------------------------------------

before=$(count)
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10 --chunk=3 \
    --payload-template='[1, 2]'
is "$rc" 65 "a template that is not an object exits 65"
like "$err" 'payload-template must be a JSON object' "the message says so"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10 --chunk=3 \
    --payload-template='{"a":'
is "$rc" 65 "a template that is not JSON exits 65"
like "$err" 'payload-template is not valid JSON' "the message says so"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10 --chunk=3 \
    --at='2031-02-30 00:00:00'
is "$rc" 65 "an --at the server cannot read exits 65"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-100000000 --chunk=1
is "$rc" 64 "100,000,000 chunks (over the limit) exit 64"
like "$err" 'use a larger --chunk' "the message says what to do"
run jobrun enqueue --type=slice --key-prefix=bad --range=10-1 --chunk=3
is "$rc" 64 "--range with FROM > TO exits 64"
like "$err" '--range: not FROM-TO' "the message names --range"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-x --chunk=3
is "$rc" 64 "--range that is not numbers exits 64"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10 --chunk=0
is "$rc" 64 "--chunk=0 exits 64"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10
is "$rc" 64 "no --chunk exits 64"
like "$err" 'needs --key-prefix, --range and --chunk' "the message lists what a fan-out needs"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10 --chunk=3 --key=k
is "$rc" 64 "--key with --key-prefix exits 64"
run jobrun enqueue --type=slice --key-prefix=bad --range=1-10 --chunk=3 --payload='{}'
is "$rc" 64 "--payload with --key-prefix exits 64"
run jobrun enqueue --key-prefix=bad --range=1-10 --chunk=3
is "$rc" 64 "no --type exits 64"
p86=$(printf 'p%.0s' $(seq 86))
run jobrun enqueue --type=slice --key-prefix="x$p86" --range=1-10 --chunk=3
is "$rc" 64 "an 87-character prefix (keys could pass 128) exits 64"
is "$(count)" "$before" "no row written by a refused fan-out"
run jobrun enqueue --type=slice --key-prefix="$p86" \
    --range=9223372036854775800-9223372036854775807 --chunk=100
is "$rc" 0 "an 86-character prefix with the largest numbers fits"
is "$(count "CHAR_LENGTH(business_key) = 126")" 1 "in a 126-character key"

# --- 1,000,000 items in chunks of 100 ---------------------------------------

t0=$(now_s)
run jobrun enqueue --type=slice --key-prefix=big --range=1-1000000 --chunk=100 --json
t1=$(now_s)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
diag "fan-out of 1000000 items in chunks of 100: $secs s"
is "$rc" 0 "the 1,000,000-item fan-out exits 0"
ok "it takes less than 30 s ($secs s)" awk -v s="$secs" 'BEGIN { exit !(s < 30) }'
is "$(jget chunks <<<"$out")/$(jget created <<<"$out")/$(jget existing <<<"$out")/$(jget complete <<<"$out")" \
    10000/10000/0/true "10,000 chunks created"
is "$err" "" "nothing on stderr"
is "$(count "business_key LIKE 'big:%'")" 10000 "10,000 rows"
is "$(sql "SELECT CONCAT_WS(' ', COUNT(DISTINCT business_key),
        MIN(JSON_VALUE(payload, '\$.from') + 0), MAX(JSON_VALUE(payload, '\$.to') + 0),
        SUM(JSON_VALUE(payload, '\$.to') - JSON_VALUE(payload, '\$.from') + 1),
        SUM(MOD(JSON_VALUE(payload, '\$.from') - 1, 100) = 0 AND
            JSON_VALUE(payload, '\$.to') - JSON_VALUE(payload, '\$.from') = 99),
        SUM(business_key = CONCAT('big:', JSON_VALUE(payload, '\$.from'), '-',
            JSON_VALUE(payload, '\$.to'))))
    FROM polling_jobs WHERE business_key LIKE 'big:%'")" \
    "10000 1 1000000 1000000 10000 10000" \
    "chunks 1-100 ... 999901-1000000: no gap, no overlap, keys match payloads"
is "$(by_key big:999901-1000000 "JSON_VALUE(payload, '\$.from')")" 999901 "the last chunk is 999901-1000000"

t0=$(now_s)
run jobrun enqueue --type=slice --key-prefix=big --range=1-1000000 --chunk=100
t1=$(now_s)
diag "the same fan-out again: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
is "$out" "10000 chunk jobs: 0 created, 10000 existed" "run again, it creates nothing"
is "$(count "business_key LIKE 'big:%'")" 10000 "still 10,000 rows"

# --- resumed after rows went missing ----------------------------------------

maxid=$(sql "SELECT MAX(id) FROM polling_jobs")
sql "DELETE FROM polling_jobs WHERE business_key LIKE 'big:%' AND
    (MOD(id, 271) = 0 OR business_key IN ('big:1-100', 'big:999901-1000000'))"
gone=$(sql "SELECT 10000 - COUNT(*) FROM polling_jobs WHERE business_key LIKE 'big:%'")
missing=$(sql "SELECT seq FROM seq_1_to_10000 WHERE CONCAT('big:', (seq - 1) * 100 + 1, '-', seq * 100)
    NOT IN (SELECT business_key FROM polling_jobs) ORDER BY seq" | tr '\n' ' ')
# (the set-up, not a test: rows are gone, the first and the last among them)
[ "$gone" -gt 2 ] && [ "${missing%% *}" = 1 ] && [ "$(awk '{ print $NF }' <<<"$missing")" = 10000 ] ||
    bail_out "the deletion did not go as planned: $gone gone, missing $missing"
run jobrun enqueue --type=slice --key-prefix=big --range=1-1000000 --chunk=100 --json
is "$rc" 0 "the resumed fan-out exits 0"
is "$(jget created <<<"$out")/$(jget existing <<<"$out")/$(jget complete <<<"$out")" \
    "$gone/$((10000 - gone))/true" "it creates the $gone missing chunks only"
is "$(sql "SELECT (JSON_VALUE(payload, '\$.from') - 1) DIV 100 + 1 FROM polling_jobs
    WHERE business_key LIKE 'big:%' AND id > $maxid ORDER BY 1" | tr '\n' ' ')" \
    "$missing" "the new rows are exactly the deleted chunks"
is "$(count "business_key LIKE 'big:%' AND id > $maxid AND
    business_key = CONCAT('big:', JSON_VALUE(payload, '\$.from'), '-', JSON_VALUE(payload, '\$.to'))")" \
    "$gone" "with the same keys and matching payloads"
is "$(count "business_key LIKE 'big:%'")/$(sql "SELECT COUNT(DISTINCT business_key) FROM polling_jobs WHERE business_key LIKE 'big:%'")" \
    10000/10000 "10,000 chunks again, no duplicates"

# --- resumed after a run was cut off -----------------------------------------

# A trigger fails the insert of chunk 5001 (the first of the 11th batch of
# 500): the batches before it are committed, that one and the rest are not.
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot --delimiter=// "$DB" -e "
CREATE TRIGGER cut_off BEFORE INSERT ON polling_jobs FOR EACH ROW
  IF NEW.business_key = 'cut:500001-500100' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'cut off by the test';
  END IF//"
run jobrun enqueue --type=slice --key-prefix=cut --range=1-1000000 --chunk=100 --json
is "$rc" 70 "a fan-out cut off by a database error exits 70"
like "$err" 'cut off by the test' "the error is on stderr"
is "$(jget chunks <<<"$out")/$(jget created <<<"$out")/$(jget complete <<<"$out")" \
    10000/5000/false "--json: 5000 of 10000 created, complete false"
is "$(count "business_key LIKE 'cut:%'")" 5000 "the first 5000 chunks are in the table"
is "$(count "business_key = 'cut:499901-500000'")/$(count "business_key = 'cut:500001-500100'")" \
    1/0 "up to chunk 5000, not beyond"
sql "DROP TRIGGER cut_off"
run jobrun enqueue --type=slice --key-prefix=cut --range=1-1000000 --chunk=100 --json
is "$rc" 0 "run again, it exits 0"
is "$(jget created <<<"$out")/$(jget existing <<<"$out")/$(jget complete <<<"$out")" \
    5000/5000/true "it adds the other 5000 only"
is "$(count "business_key LIKE 'cut:%'")/$(sql "SELECT COUNT(DISTINCT JSON_VALUE(payload, '\$.from')) FROM polling_jobs WHERE business_key LIKE 'cut:%'")" \
    10000/10000 "10,000 distinct chunks"

# --- progress on a terminal ---------------------------------------------

# tty_fanout PREFIX ARG...: a fan-out of 5000 chunks of 1 with stderr on a
# pseudo-terminal (to $T/tty-err) and stdout to $T/tty-out; its status
tty_fanout() {
	local prefix=$1
	shift
	python3 - "$T/tty-err" "$T/tty-out" "${JOBRUN_TIMEOUT[@]}" "$JOBRUN" enqueue \
	    --config="$CONF" --type=slice --key-prefix="$prefix" --range=1-5000 \
	    --chunk=1 "$@" <<'EOF2'
import os, pty, subprocess, sys
err_path, out_path, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
master, slave = pty.openpty()
with open(out_path, "w") as out:
    p = subprocess.Popen(argv, stdout=out, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
open(err_path, "wb").write(data)
sys.exit(p.wait())
EOF2
}
tty_fanout tty
is "$?" 0 "a fan-out with stderr on a terminal exits 0"
like "$(tr '\r' '\n' <"$T/tty-err")" 'enqueue: 5000 of 5000 chunks' "progress reaches 5000 of 5000 on stderr"
# 5000 chunks go in 500 to a statement: one update after each of the 10.
is "$(tr '\r' '\n' <"$T/tty-err" | grep -o '[0-9]* of 5000 chunks' | cut -d' ' -f1 | tr '\n' ' ')" \
    "500 1000 1500 2000 2500 3000 3500 4000 4500 5000 " \
    "progress is updated as each batch of 500 goes in"
is "$(cat "$T/tty-out")" "5000 chunk jobs: 5000 created, 0 existed" "the summary is on stdout"
tty_fanout tty2 -q
is "$?/$(cat "$T/tty-err")" "0/" "-q, stderr on a terminal: no progress"
is "$(cat "$T/tty-out")" "5000 chunk jobs: 5000 created, 0 existed" "and the summary still on stdout"
