#!/bin/bash
# Keys compared the table's way (jobrun(7)): wherever jobrun decides that
# two keys or names are the same, business_key's collation decides, or the
# configuration refuses what would collide.  Each case is asked of the
# server with the column's own collation (the schema's utf8mb4 default:
# case, trailing blanks and accents do not count):
#   - a --keys-from line that is the callback's key PREFIX:then for the
#     table ("THEN", "then ", "thén") is refused, as "then" is;
#   - lines the table takes for one job count once in the fan-in's total,
#     so it fires;
#   - under utf8mb4_bin, "THEN" is just another key ("then " is not:
#     it pads);
#   - a fan-out run again with another --range, --chunk, list or --then
#     type is refused (exit 65) before a job is written; the same one is
#     "existed", and so is one whose --key-prefix the table takes for the
#     same, before and after its fan-in fired;
#   - [schedule.Rep] beside [schedule.rep] is a config error (exit 78).
. "${0%/*}/lib.sh"

plan 44
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/006_fan_in.sql" || bail_out "cannot load sql/006"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/004_schedules.sql" || bail_out "cannot load sql/004"
write_config <<EOF
[type.slice]
handler = noop
[type.report]
handler = noop
EOF
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
fan_in() {
	sql "SELECT CONCAT_WS(' ', then_type, total, fired_at IS NOT NULL)
	    FROM jobrun_fan_ins WHERE then_key = '$1:then'"
}
payload() {
	sql "SELECT CONCAT(type, ' ', payload) FROM polling_jobs
	    WHERE business_key = '$1'"
}
coll=$(sql "SELECT COLLATION_NAME FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'polling_jobs'
    AND COLUMN_NAME = 'business_key'")
# same A B: 1 when the column's collation takes A and B for the same
same() {
	sql "SELECT _utf8mb4'$1' COLLATE $coll = _utf8mb4'$2' COLLATE $coll"
}
diag "business_key's collation: $coll"
[ "$(same THEN then)$(same 'then ' then)$(same thén then)" = 111 ] ||
    bail_out "$coll does not ignore case, trailing blanks and accents"

# --- a line that is the callback's key ------------------------------------------

n=0
for line in THEN 'then ' thén then; do
	n=$((n + 1))
	run jobrun enqueue --type=slice --key-prefix=cb$n --keys-from=- \
	    --then=report <<<"a1"$'\n'"$line"
	is "$rc:$(count "business_key LIKE 'cb$n:%'"):$(fan_in cb$n)" "65:0:" \
	    "line \"$line\" (= then under $coll): exit 65, no job, no fan-in"
	is "$err" "jobrun: enqueue: the key cb$n:$line is the --then job's, cb$n:then, as the table compares keys" \
	    "line \"$line\": the error names the key and the callback's"
done

# --- lines that are one job count once -------------------------------------------

lines=$'Bob@x.org\nbob@x.org\nann@x.org\nann@x.org \nzoé\nzoe'
run jobrun enqueue --type=slice --key-prefix=m --keys-from=- --then=report \
    <<<"$lines"
is "$rc:$(count "business_key LIKE 'm:%'")" "0:3" \
    "6 lines, 3 jobs under $coll (case, trailing blank, accent)"
is "$out" "6 jobs: 3 created, 3 existed
then: a job of type report, key m:then, once every job has finished (3 jobs: the table takes some keys for the same)" \
    "the output says the fan-in waits for 3 jobs"
is "$(fan_in m)" "report 3 0" "the fan-in's total is the jobs, not the lines"
run jobrun -q
is "$(payload m:then)" \
    'report {"key_prefix": "m", "total": 3, "succeeded": 3, "failed": 0}' \
    "once the 3 have run, the callback is enqueued with their counts"
# the same lines again, once the fan-in has fired: the same fan-out
run jobrun enqueue --type=slice --key-prefix=m --keys-from=- --then=report \
    <<<"$lines"
is "$rc" 0 "the same lines again exit 0"
is "$out" "6 jobs: 0 created, 6 existed
then: a job of type report, key m:then, enqueued already: every job had finished (3 jobs: the table takes some keys for the same)" \
    "and say that the callback was enqueued already"
run jobrun enqueue --type=slice --key-prefix=m --keys-from=- --then=report \
    <<<$'BOB@x.org\nANN@x.org\nZOE'
is "$rc:$out" "0:3 jobs: 0 created, 3 existed
then: a job of type report, key m:then, enqueued already: every job had finished" \
    "other lines for the same 3 jobs are the same fan-out"
is "$(count "type = 'report'")" 1 "one callback"

# --- a fan-out run again ------------------------------------------------------------

run jobrun enqueue --type=slice --key-prefix=r --range=1-60 --chunk=10 \
    --then=report
is "$rc:$(fan_in r)" "0:report 6 0" "6 chunks: a fan-in of 6"
run jobrun enqueue --type=slice --key-prefix=r --range=1-60 --chunk=30 \
    --then=report
is "$rc:$(count "business_key LIKE 'r:%'"):$(fan_in r)" "65:6:report 6 0" \
    "another --chunk: exit 65, no chunk written, the fan-in unchanged"
is "$err" "jobrun: enqueue: the fan-in r:then has 6 members and this run's keys name 0 of them: another fan-out (another --range, --chunk or --keys-from) than the one that made it; run that one again, or use another --key-prefix" \
    "and says what differs"
run jobrun enqueue --type=slice --key-prefix=r --range=1-120 --chunk=20 \
    --then=report
is "$rc:$(count "business_key LIKE 'r:%'"):$(fan_in r)" "65:6:report 6 0" \
    "another --range and --chunk of as many chunks: exit 65, nothing written"
run jobrun enqueue --type=slice --key-prefix=r --range=1-70 --chunk=10 \
    --then=report
is "$rc:$(count "business_key LIKE 'r:%'"):$(fan_in r)" "65:6:report 6 0" \
    "a wider --range: exit 65, nothing written"
is "$err" "jobrun: enqueue: the fan-in r:then waits for 6 jobs and this run names 7: another fan-out (another --range, --chunk or --keys-from) than the one that made it; run that one again, or use another --key-prefix" \
    "and says what differs"
run jobrun enqueue --type=slice --key-prefix=r --range=1-60 --chunk=10 \
    --then=other
is "$rc:$(fan_in r)" "65:report 6 0" "another --then type: exit 65, unchanged"
is "$err" "jobrun: enqueue: the fan-in r:then exists with --then=report, not other: run the same fan-out again, or use another --key-prefix" \
    "and names both types"
run jobrun enqueue --type=slice --key-prefix=r --range=1-60 --chunk=10 \
    --then=report
is "$rc:$out" "0:6 chunk jobs: 0 created, 6 existed
then: a job of type report, key r:then, once every chunk has finished" \
    "the same fan-out again: existed"
run jobrun enqueue --type=slice --key-prefix=r --range=1-60 --chunk=10 \
    --then=report --json
is "$(jpy 'd["then"]' <<<"$out")" \
    '{"type": "report", "key": "r:then", "fired": false, "jobs": 6}' \
    "--json: the fan-in waits for 6 jobs"
# A --key-prefix the table takes for the same ("R" for "r"): the same
# fan-in (jobrun_fan_ins compares bytes; the job table does not).
fan_ins_r() {
	sql "SELECT COUNT(*) FROM jobrun_fan_ins WHERE LOWER(then_key) = 'r:then'"
}
run jobrun enqueue --type=slice --key-prefix=R --range=1-60 --chunk=10 \
    --then=report
is "$rc:$(fan_ins_r):$(head -n 1 <<<"$out")" "0:1:6 chunk jobs: 0 created, 6 existed" \
    "--key-prefix=R, which the table takes for r: the same fan-in, existed"
run jobrun -q
is "$(payload r:then)" \
    'report {"key_prefix": "r", "total": 6, "succeeded": 6, "failed": 0}' \
    "the callback: the type and the 6 chunks of the first run"
run jobrun enqueue --type=slice --key-prefix=r --range=1-70 --chunk=10 \
    --then=report
is "$rc:$(count "business_key LIKE 'r:%'")" "65:7" \
    "a wider --range once the fan-in has fired: exit 65, nothing written"
run jobrun enqueue --type=slice --key-prefix=R --range=1-60 --chunk=10 \
    --then=report
is "$rc:$(fan_ins_r):$(head -n 1 <<<"$out")" "0:1:6 chunk jobs: 0 created, 6 existed" \
    "--key-prefix=R once r's fan-in has fired: still that fan-in"

# a list run again
run jobrun enqueue --type=slice --key-prefix=l --keys-from=- --then=report \
    <<<$'a\nb'
is "$rc:$(fan_in l)" "0:report 2 0" "a list of 2: a fan-in of 2"
run jobrun enqueue --type=slice --key-prefix=l --keys-from=- --then=report \
    <<<$'a\nb\nc'
is "$rc:$(count "business_key LIKE 'l:%'"):$(fan_in l)" "65:2:report 2 0" \
    "a longer list: exit 65, nothing written"
is "$err" "jobrun: enqueue: the fan-in l:then waits for 2 jobs and this run names 3: another fan-out (another --range, --chunk or --keys-from) than the one that made it; run that one again, or use another --key-prefix" \
    "and says what differs"
run jobrun enqueue --type=slice --key-prefix=l --keys-from=- --then=report \
    <<<$'a\nc'
is "$rc:$(count "business_key LIKE 'l:%'"):$(fan_in l)" "65:2:report 2 0" \
    "another list of as many: exit 65, nothing written"
run jobrun enqueue --type=slice --key-prefix=l --keys-from=- --then=report \
    <<<$'A\nb\nB '
is "$rc:$out" "0:3 jobs: 0 created, 3 existed
then: a job of type report, key l:then, once every job has finished (2 jobs: the table takes some keys for the same)" \
    "lines for the same 2 jobs: the same fan-out"
is "$(fan_in l)" "report 2 0" "still a fan-in of 2"
run jobrun -q
is "$(payload l:then)" \
    'report {"key_prefix": "l", "total": 2, "succeeded": 2, "failed": 0}' \
    "it fires once the 2 have run"

# --- schedule names ----------------------------------------------------------------

write_config <<EOF
[type.tick]
handler = noop
[schedule.Rep]
type = tick
cron = @daily
[schedule.rep]
type = tick
cron = @hourly
EOF
run jobrun check
is "$rc" 78 "[schedule.Rep] and [schedule.rep]: check exits 78"
is "$err" "jobrun: $CONF:12: [schedule.rep]: the same name as [schedule.Rep] (line 9) for the job table, whose collation ignores case: both would enqueue the slot keys rep@..." \
    "and names both sections and lines"
run jobrun -q
is "$rc:$(count "type = 'tick'")" "78:0" "a run exits 78 and enqueues nothing"
write_config <<EOF
[type.tick]
handler = noop
[schedule.rep]
type = tick
cron = @daily
[schedule.rep_2]
type = tick
cron = @hourly
EOF
run jobrun check
is "$rc" 0 "names that differ beyond case are taken"

# --- under utf8mb4_bin, THEN is another key -----------------------------------------

write_config <<EOF
[type.slice]
handler = noop
[type.report]
handler = noop
EOF
sql "ALTER TABLE polling_jobs MODIFY business_key VARCHAR(128)
    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"
run jobrun enqueue --type=slice --key-prefix=bin --keys-from=- --then=report \
    <<<$'THEN\nthén'
is "$rc:$(count "business_key LIKE 'bin:%'")" "0:2" \
    "under utf8mb4_bin, THEN and thén are jobs of the fan-out"
run jobrun -q
is "$(payload bin:then)" \
    'report {"key_prefix": "bin", "total": 2, "succeeded": 2, "failed": 0}' \
    "and the callback is bin:then"
run jobrun enqueue --type=slice --key-prefix=pad --keys-from=- --then=report \
    <<<'then '
is "$rc:$(count "business_key LIKE 'pad:%'")" "65:0" \
    "utf8mb4_bin pads with blanks: \"then \" is still the callback's key"
