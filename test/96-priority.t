#!/bin/bash
# Priorities (sql/013_priority.sql): a due job of a higher priority is
# claimed before a due job of a lower, within a level by (next_run_at, id);
# but of every ten claims a run makes while the pending jobs have two
# levels or more, the tenth is the plain claim, the job that has waited
# longest whatever its level (jobrun.conf(5), priority).  The order is read
# from what the handlers record (the job ids in the order they ran, or for
# --jobs the claim's number in its token, locked_by's "...:N@EPOCH").
#
# enqueue --priority and [type.NAME] priority set the level of the jobs
# jobrun creates (one job, fan-outs, --keys-from, fan-in callbacks,
# schedules, --again), an application's INSERT gets the column's default,
# 0.  Without the migration --priority and a type's priority are refused
# (78) and check says so, and claims work as before.  Not-yet-due jobs of
# a high level cost a claim one look, not their rows (Handler_read_*, on a
# server of the file's own, last).
. "${0%/*}/lib.sh"

plan 95

setup_db
# migrate NAME...: apply sql/NAME.sql to $DB
migrate() {
	local m
	for m in "$@"; do
		mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
		    <"$TOP/sql/$m.sql" || bail_out "cannot load sql/$m.sql"
	done
}
# count [CONDITION]: how many rows (meet CONDITION)
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}
# level KEY: the priority of the job with business key KEY
level() {
	sql "SELECT priority FROM polling_jobs WHERE business_key = '$1'"
}
# add_rows <<EOF KEY TYPE LEVEL AGE ... EOF: due jobs as an application
# inserts them, in the lines' order (ids ascending), in one statement (one
# NOW()): of LEVEL, due AGE seconds ago
add_rows() {
	local k ty lv age values=
	while read -r k ty lv age; do
		values+="${values:+, }('$k', '$ty', $lv, NOW() - INTERVAL $age SECOND, NOW(), NOW())"
	done
	sql "INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
	        created_at, updated_at) VALUES $values"
}
# id_of KEY: the id of the job with business key KEY
id_of() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '$1'"
}
# keys_in FILE: the business keys of the job ids in FILE (one a line), in
# the file's order, blank-separated
keys_in() {
	sql "SELECT id, business_key FROM polling_jobs" >"$T/keymap"
	awk 'NR == FNR { k[$1] = $2; next }
	     { printf "%s%s", sep, ($1 in k ? k[$1] : "?" $1); sep = " " }
	     END { print "" }' "$T/keymap" "$1"
}
# positions FILE ERE: the places (1-based) in FILE's run order of the
# jobs whose key matches ERE, blank-separated
positions() {
	keys_in "$1" | tr ' ' '\n' | grep -nE -- "$2" | cut -d: -f1 | paste -sd' '
}
# plain_order CONDITION: the keys of the rows that meet CONDITION in the
# plain claim's order, (next_run_at, id)
plain_order() {
	sql "SELECT GROUP_CONCAT(business_key ORDER BY next_run_at, id
	    SEPARATOR ' ') FROM polling_jobs WHERE $1"
}
# full: not under valgrind.  There every jobrun costs a second of CPU or
# more, and the checks that take the same way through jobrun as others
# of the file are skipped (the plain pass runs them all).
full() {
	! under_valgrind
}
# problems < JSON: check --json's problems; check_of TEXT < JSON: its
# checks whose message holds TEXT, as "level: message / fix"
problems() {
	jpy '[c["message"] for c in d["checks"] if c["level"] == "problem"]'
}
check_of() {
	jpy "[c['level'] + ': ' + c['message'] + ' / ' + str(c['fix']) for c in d['checks'] if '$1' in c['message']]"
}

# --- without sql/013: refused where a priority is asked, plain otherwise -----

write_config <<EOF2
[type.a]
handler = exec
command = $HANDLERS/append-id $T/plain
[type.b]
handler = exec
command = $HANDLERS/append-id $T/plain
[type.pri]
handler = noop
priority = 3
EOF2
run jobrun enqueue --type=a --key=x1 --priority=5
is "$rc" 78 "enqueue --priority without sql/013 exits 78"
is "$err" "jobrun: --priority: \`polling_jobs\` has no priority column and indexes: apply sql/013_priority.sql (see sql/schema.sql and [database] in $CONF; jobrun check tells more)" \
    "and says which migration to apply"
run jobrun enqueue --type=pri --key=x2
is "$rc" 78 "enqueue of a type with priority = 3 exits 78"
is "$err" "jobrun: [type.pri] priority: \`polling_jobs\` has no priority column and indexes: apply sql/013_priority.sql (see sql/schema.sql and [database] in $CONF; jobrun check tells more)" \
    "and names the type's setting and the migration"
if full; then
	run jobrun enqueue --type=pri --key-prefix=xf --range=1-4 --chunk=1
	is "$rc" 78 "a fan-out of that type exits 78 too"
else
	skip 1 "under valgrind: a fan-out of that type"
fi
is "$(count)" 0 "and none of them wrote a row"
run jobrun enqueue --type=a --key=x3
is "$rc/$out" "0/job 1 created" "a type without priority enqueues as before"
sql "DELETE FROM polling_jobs"

run jobrun check --json
is "$rc" 78 "check: a type's priority without the column is a problem (78)"
is "$(problems <<<"$out")" \
    '["[type.pri] priority: table polling_jobs has no priority column and indexes, and every enqueue of the type fails"]' \
    "check names the type and what fails"
is "$(check_of '[type.pri] priority' <<<"$out")" \
    '["problem: [type.pri] priority: table polling_jobs has no priority column and indexes, and every enqueue of the type fails / sql/013_priority.sql"]' \
    "and its fix is sql/013_priority.sql"
is "$(check_of 'idx_priority_pick' <<<"$out")/$(check_of 'idx_type_priority' <<<"$out")" \
    '["advice: no index idx_priority_pick: claims take due jobs oldest first, whatever their priority / sql/013_priority.sql"]/["advice: no index idx_type_priority: claims take due jobs oldest first, whatever their priority / sql/013_priority.sql"]' \
    "check advises both indexes of sql/013"

# Plain claims on the table without the column, the type's priority in
# the configuration notwithstanding: (next_run_at, id), whatever the
# insertion order.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at) VALUES
     ('p3', 'b', NOW() - INTERVAL 30 SECOND, NOW(), NOW()),
     ('p1', 'a', NOW() - INTERVAL 50 SECOND, NOW(), NOW()),
     ('p4', 'a', NOW() - INTERVAL 30 SECOND, NOW(), NOW()),
     ('p5', 'b', NOW() - INTERVAL 10 SECOND, NOW(), NOW()),
     ('p2', 'b', NOW() - INTERVAL 40 SECOND, NOW(), NOW())"
run jobrun --max=10 --json
is "$rc/$(jget succeeded <<<"$out")" 0/5 "without sql/013 a run claims and runs every job"
is "$(keys_in "$T/plain")" "p1 p2 p3 p4 p5" "in (next_run_at, id) order"

# --- sql/013 applied -------------------------------------------------------------

sql "DELETE FROM polling_jobs"
migrate 001_type_pick 004_schedules 006_fan_in 013_priority
run jobrun check --json
is "$rc/$(problems <<<"$out")" "0/[]" "with sql/013 check finds no problem"
is "$(check_of 'idx_priority_pick' <<<"$out")/$(check_of 'idx_type_priority' <<<"$out")" \
    '["ok: index idx_priority_pick (status,priority DESC,next_run_at,id) / None"]/["ok: index idx_type_priority (status,type,priority DESC,next_run_at,id) / None"]' \
    "and lists both indexes, priority descending"

# --- enqueue --priority and [type.NAME] priority -------------------------------

cat >"$T/keys" <<EOF2
k1
k2
k3
EOF2
write_config <<EOF2
[type.plain]
handler = noop
[type.pri]
handler = noop
priority = 3
[type.cb]
handler = noop
priority = -6
[type.tick]
handler = noop
priority = 4
[schedule.tick]
type = tick
cron = * * * * *
EOF2

run jobrun enqueue --type=plain --key=e1 --priority=7
is "$rc/$out" "0/job $(id_of e1) created" "enqueue --priority=7 exits 0"
is "$(level e1)" 7 "the job's priority is 7"
if full; then
	run jobrun enqueue --type=plain --key=e2
	is "$(level e2)" 0 "without --priority or a type's priority: 0"
else
	skip 1 "under valgrind: enqueue without --priority"
fi
run jobrun enqueue --type=plain --key=e3 --priority=-32768
run jobrun enqueue --type=plain --key=e4 --priority=32767
is "$(level e3)/$(level e4)" "-32768/32767" "the extremes are stored as given"
# Under valgrind, three spellings of the refusal, not ten.
bad=(1.5 32768 "")
more=(+1 1x -32769 " 1" 0x10 - 99999999999999999999)
if ! full; then
	skip 1 "under valgrind: -0 and 012"
	skip ${#more[@]} "under valgrind: more spellings of the same refusal"
	more=()
else
	run jobrun enqueue --type=plain --key=e5 --priority=-0
	run jobrun enqueue --type=plain --key=e6 --priority=012
	is "$(level e5)/$(level e6)" "0/12" "-0 is 0 and 012 is 12"
fi
rows=$(count)
for b in "${bad[@]}" "${more[@]}"; do
	run jobrun enqueue --type=plain --key=bad --priority="$b"
	is "$rc/$err" "64/jobrun: --priority: not a whole number in -32768..32767: \"$b\"
Try 'jobrun --help'." "--priority=\"$b\" is a usage error (64) with the message"
done
is "$(count)" "$rows" "and none of them wrote a row"

run jobrun enqueue --type=pri --key=t1
is "$rc/$(level t1)" 0/3 "[type.pri] priority = 3: its enqueue gets 3"
run jobrun enqueue --type=pri --key=t2 --priority=-2
is "$(level t2)" -2 "--priority=-2 overrides the type's 3"
run jobrun enqueue --type=pri --key-prefix=fo --range=1-5 --chunk=2
is "$rc/$out" "0/3 chunk jobs: 3 created, 0 existed" "a fan-out of the type"
is "$(sql "SELECT GROUP_CONCAT(priority ORDER BY id) FROM polling_jobs
    WHERE business_key LIKE 'fo:%'")" 3,3,3 "gives each chunk the type's 3"
if full; then
	run jobrun enqueue --type=pri --key-prefix=fp --range=1-5 --chunk=2 \
	    --priority=9
	is "$(sql "SELECT GROUP_CONCAT(priority ORDER BY id) FROM polling_jobs
	    WHERE business_key LIKE 'fp:%'")" 9,9,9 \
	    "--priority=9 on a fan-out gives each chunk 9"
else
	skip 1 "under valgrind: a fan-out's --priority over the type's"
fi
if ! full; then
	skip 1 "under valgrind: a fan-out's --priority on a type without one"
else
	run jobrun enqueue --type=plain --key-prefix=fq --range=1-4 --chunk=2 \
	    --priority=-1
	is "$(sql "SELECT GROUP_CONCAT(priority ORDER BY id) FROM polling_jobs
	    WHERE business_key LIKE 'fq:%'")" -1,-1 "and -1 on a type without one"
fi
run jobrun enqueue --type=pri --key-prefix=kf --keys-from="$T/keys"
is "$rc/$(sql "SELECT GROUP_CONCAT(priority ORDER BY id) FROM polling_jobs
    WHERE business_key LIKE 'kf:%'")" 0/3,3,3 "--keys-from: each job gets the type's 3"
if full; then
	run jobrun enqueue --type=pri --key-prefix=kg --keys-from="$T/keys" \
	    --priority=11
	is "$(sql "SELECT GROUP_CONCAT(priority ORDER BY id) FROM polling_jobs
	    WHERE business_key LIKE 'kg:%'")" 11,11,11 \
	    "--keys-from with --priority=11: 11"
else
	skip 1 "under valgrind: --keys-from with --priority"
fi

# An application's own INSERT: the column's default, or what it writes.
insert_job app0 plain
insert_job app5 plain NULL priority 5
is "$(level app0)/$(level app5)" 0/5 \
    "an application's INSERT gets 0 without the column, else its own value"
sql "INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     VALUES ('appnull', 'plain', NULL, NOW(), NOW(), NOW())" 2>"$T/null.err"
like "$(cat "$T/null.err")" "Column 'priority' cannot be null" \
    "an INSERT of priority NULL is refused by the server (NOT NULL)"
is "$(count "business_key = 'appnull'")" 0 "and writes nothing"

# The fan-in's callback, enqueued by the run that finishes the last
# chunk: of type cb, priority -6 ([type.cb]), whatever the chunks had.
run jobrun enqueue --type=plain --key-prefix=fi --range=1-2 --chunk=1 \
    --then=cb --priority=8
is "$rc" 0 "a fan-out with --then and --priority=8"
is "$(sql "SELECT GROUP_CONCAT(priority) FROM polling_jobs
    WHERE business_key LIKE 'fi:%'")" 8,8 "its chunks have 8"
# (the schedule's first look: it enqueues no slot of the past)
b=$(( ($(date +%s) / 60 + 2) * 60 ))
JOBRUN_TEST_NOW=$((b - 30)) run jobrun --max=1000 --json
is "$rc/$(count "status = 'pending'")" 0/0 "a run drains every job"
is "$(sql "SELECT CONCAT(type, ' ', priority) FROM polling_jobs
    WHERE business_key = 'fi:then'")" "cb -6" \
    "the fan-in's callback has its type's priority, -6"
JOBRUN_TEST_NOW=$((b + 1)) run jobrun -q --max=1000
is "$rc/$(sql "SELECT CONCAT(COUNT(*), ' ', IFNULL(GROUP_CONCAT(priority), ''))
    FROM polling_jobs WHERE business_key LIKE 'tick@%'")" "0/1 4" \
    "a schedule's job has its type's priority, 4"

# --again: a finished job re-armed takes the new priority.
run jobrun enqueue --type=plain --key=e1 --again --priority=-3
is "$out/$(sql "SELECT CONCAT(status, ' ', priority) FROM polling_jobs
    WHERE business_key = 'e1'")" \
    "job $(id_of e1) enqueued again (pending, attempts 0)/pending -3" \
    "--again --priority=-3 re-arms the finished job at -3"
if full; then
	run jobrun enqueue --type=plain --key=e1 --again --priority=9
	is "$out/$(level e1)" \
	    "job $(id_of e1) is pending already, left as it is/-3" \
	    "--again on a pending job leaves its priority as it is"
else
	skip 1 "under valgrind: --again on a pending job"
fi
run jobrun enqueue --type=pri --key=t2 --again
is "$(sql "SELECT CONCAT(status, ' ', priority) FROM polling_jobs
    WHERE business_key = 't2'")" "pending 3" \
    "--again without --priority re-arms a job of [type.pri] at the type's 3"
# And of a type without one: at 0, as a new job would be, not its old level.
sql "UPDATE polling_jobs SET status = 'success' WHERE business_key = 'e1'"
run jobrun enqueue --type=plain --key=e1 --again
is "$rc/$(level e1)" "0/0" \
    "--again without --priority re-arms a job of a type without one at 0, not its old -3"

# A type's priority the column cannot hold: the configuration is refused.
cp "$CONF" "$T/good.conf"
cat >>"$CONF" <<EOF2
[type.big]
handler = noop
priority = 40000
EOF2
line=$(grep -n '^priority = 40000' "$CONF" | cut -d: -f1)
run jobrun enqueue --type=plain --key=never
is "$rc/$err" "78/jobrun: $CONF:$line: [type.big] priority: not a whole number in -32768..32767: \"40000\"" \
    "[type.big] priority = 40000: a configuration error (78) naming the line"
is "$(count "business_key = 'never'")" 0 "and nothing is enqueued"
cp "$T/good.conf" "$CONF"

# --- the order: one slot, several types -----------------------------------------

sql "DELETE FROM polling_jobs"
write_config <<EOF2
[type.a]
handler = exec
command = $HANDLERS/append-id $T/order1
[type.b]
handler = exec
command = $HANDLERS/append-id $T/order1
[type.c]
handler = exec
command = $HANDLERS/append-id $T/order1
EOF2
# Four levels of four jobs, inserted out of order; some due at the same
# second (then by id).  Key LNN: level L (h 10, m 5, z 0, n -5).
add_rows <<EOF2
n1 c -5 100
z2 a 0 50
h2 b 10 10
m3 a 5 30
h3 c 10 10
n3 a -5 90
z3 b 0 50
m1 b 5 40
h4 a 10 5
z1 c 0 60
m4 c 5 30
n2 b -5 100
h1 b 10 20
z4 a 0 45
m2 a 5 35
n4 c -5 80
EOF2
run jobrun --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" 0/16 "16 jobs of levels 10, 5, 0, -5 run"
# Claims 1-9 by level, then by (next_run_at, id); the 10th the oldest of
# all (n1 and n2 due together, n1 first by id); then by level again.
is "$(keys_in "$T/order1")" "h1 h2 h3 h4 m1 m2 m3 m4 z1 n1 z2 z3 z4 n2 n3 n4" \
    "in level order, within a level by (next_run_at, id), the 10th claim the oldest job"

# The same with one type (--type=a: idx_type_priority): the other types'
# jobs, at a higher level and older, are not this run's and do not count
# among its levels.
sql "DELETE FROM polling_jobs"
rm -f "$T/order1"
add_rows <<EOF2
z3 a 0 20
h2 a 10 10
x1 b 20 900
m1 a 5 40
n1 a -5 100
h1 a 10 30
z1 a 0 60
m3 a 5 30
x2 c 20 900
h3 a 10 10
z4 a 0 10
n2 a -5 100
m2 a 5 35
z2 a 0 40
EOF2
run jobrun --type=a --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" 0/12 "--type=a runs its 12 jobs"
is "$(keys_in "$T/order1")" "h1 h2 h3 m1 m2 m3 z1 z2 z3 n1 z4 n2" \
    "--type=a: by level, the 10th claim the oldest (n1, the lower id)"
is "$(count "type <> 'a' AND status = 'pending' AND attempts = 0")" 2 \
    "the other types' jobs are left alone"

# --jobs=4: the slots' claims, in the order of the claim numbers in their
# tokens (the handlers start in any order), follow the same rule, but for
# where the tenth claims fall: one that falls among a group's claims is
# made after the group's others (jobrun.conf(5)), so the 10th claim's is
# the 10th to 13th, the 20th's the 20th to the 22nd (after hi20).
cat >"$T/claimed" <<EOF2
#!/bin/sh
n=\$(mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B "$DB" -e "SELECT SUBSTRING_INDEX(SUBSTRING_INDEX(locked_by, '@', 1), ':', -1) FROM polling_jobs WHERE id = \$JOB_ID")
echo "\$n \$JOB_ID" >>"$T/claims"
EOF2
chmod +x "$T/claimed"
# claimed_config: types a and b record their claim numbers
claimed_config() {
	write_config <<EOF2
[type.a]
handler = exec
command = $T/claimed
[type.b]
handler = exec
command = $T/claimed
EOF2
}
claimed_config
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('hi', LPAD(seq, 2, '0')), IF(seq % 2, 'a', 'b'), 10,
        NOW() - INTERVAL 10 SECOND, NOW(), NOW() FROM seq_1_to_20;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('lo', LPAD(seq, 2, '0')), IF(seq % 2, 'b', 'a'), 0,
        NOW() - INTERVAL (100 - seq) SECOND, NOW(), NOW() FROM seq_1_to_20"
run jobrun --jobs=4 --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" 0/40 "--jobs=4 runs the 40 jobs"
sort -n "$T/claims" | cut -d' ' -f2 >"$T/claim-order"
expected="$(printf 'hi%02d ' $(seq 1 20))$(printf 'lo%02d ' $(seq 3 20))"
is "$(keys_in "$T/claim-order" | sed 's/lo0[12] //g')" "${expected% }" \
    "--jobs=4: every level-10 job claimed before the level-0 ones but two, in order"
read -r lo1 lo2 <<<"$(positions "$T/claim-order" '^lo0[12]$')"
ok "--jobs=4: those two, the oldest (lo01, lo02), are the 10th and 20th claims or in their groups (at $lo1 and $lo2)" \
    test "$(( lo1 >= 10 && lo1 <= 13 && lo2 >= 20 && lo2 <= 22 ))" = 1
is "$(cut -d' ' -f1 "$T/claims" | sort -n | uniq -d | wc -l)" 0 \
    "(each job had a claim number of its own)"

# --- all at one level: the plain claim's order ------------------------------------

write_config <<EOF2
[type.a]
handler = exec
command = $HANDLERS/append-id $T/order0
[type.b]
handler = exec
command = $HANDLERS/append-id $T/order0
EOF2
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('s', LPAD(seq, 2, '0')), IF(seq % 3, 'a', 'b'),
        NOW() - INTERVAL ((seq * 7) % 13) SECOND, NOW(), NOW()
     FROM seq_1_to_24"
expected=$(plain_order "status = 'pending'")
run jobrun --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" 0/24 "24 jobs, all of priority 0"
is "$(keys_in "$T/order0")" "$expected" \
    "all of priority 0: claimed by (next_run_at, id), as without the column"
if ! full; then
	skip 1 "under valgrind: all of priority 7 (the same claims as all of 0)"
else
	sql "UPDATE polling_jobs SET status = 'pending', priority = 7,
	        finished_at = NULL"
	rm -f "$T/order0"
	run jobrun --max=100 --json
	is "$(keys_in "$T/order0")" "$expected" "all of priority 7: the same order"
fi

# --- the extremes, and an application's own rows -------------------------------------

sql "DELETE FROM polling_jobs"
rm -f "$T/order0"
run jobrun enqueue --type=a --key=low --priority=-32768
run jobrun enqueue --type=b --key=top --priority=32767
insert_job app-none a
insert_job app-9 b NULL priority 9
insert_job app-minus a NULL priority -9
# the lower the level, the longer it has waited
sql "UPDATE polling_jobs
     SET next_run_at = NOW() - INTERVAL (1000 - FLOOR(priority / 100)) SECOND"
run jobrun --max=100 --json
is "$rc/$(keys_in "$T/order0")" "0/top app-9 app-none app-minus low" \
    "32767 first, -32768 last, an application's rows by the level they wrote (none: 0)"

# Eight levels whose jobs all wait out a backoff take no place in the
# claim's list: the due levels below them keep their order.
sql "DELETE FROM polling_jobs"
rm -f "$T/order0"
sql "INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('later:', seq), 'a', seq, NOW() + INTERVAL 1 HOUR, NOW(),
        NOW() FROM seq_1_to_8"
add_rows <<EOF2
low:1 a -1 100
low:2 a -1 100
low:3 a -1 100
mid:1 a 0 10
mid:2 a 0 10
mid:3 a 0 10
EOF2
run jobrun --max=100 --json
is "$rc/$(keys_in "$T/order0")" "0/mid:1 mid:2 mid:3 low:1 low:2 low:3" \
    "eight levels of jobs not yet due above them: level 0 before the older -1"

# The extremes under --jobs=4, where a group's claims at a level are one
# bulk past that level's cursor (kept per level): by the claim numbers,
# all of 32767's jobs, then 0's, then -32768's.  The higher the level the
# older its jobs, so the tenth claims (the oldest) keep that order.
claimed_config
rm -f "$T/claims"
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('x', seq), IF(seq % 2, 'a', 'b'),
        ELT(1 + (seq - 1) DIV 8, 32767, 0, -32768),
        NOW() - INTERVAL (100 - seq) SECOND, NOW(), NOW() FROM seq_1_to_24"
run jobrun --jobs=4 --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" 0/24 "--jobs=4: 8 jobs at each of 32767, 0 and -32768 run"
ids=$(sort -n "$T/claims" | cut -d' ' -f2 | paste -sd,)
is "$(sql "SELECT GROUP_CONCAT(CONCAT(priority, 'x', n) ORDER BY first SEPARATOR ' ')
        FROM (SELECT priority, COUNT(*) n, MIN(FIELD(id, $ids)) first
              FROM polling_jobs GROUP BY priority) l")" \
    "32767x8 0x8 -32768x8" "--jobs=4: the levels' claims one after another, 32767 first, -32768 last"
is "$(sql "SELECT COUNT(*) FROM polling_jobs a JOIN polling_jobs b
        ON a.priority > b.priority AND FIELD(a.id, $ids) > FIELD(b.id, $ids)")" 0 \
    "--jobs=4: no job claimed after one of a lower level"

# A level that appears while a run works is seen at the run's next claim
# a second or more after its first read of the levels: w1 is claimed (one
# level among the pending jobs then: the plain claim) and its handler
# holds the run until a level-5 job has been inserted and a second and a
# tenth has passed since w1 was claimed; the next claim takes that job.
cat >"$T/gate" <<EOF2
#!/bin/sh
echo "\$JOB_ID" >>"$T/order-new"
[ "\$JOB_BUSINESS_KEY" = w1 ] || exit 0
: >"$T/started"
i=0
while [ ! -e "$T/go" ] && [ \$i -lt 1200 ]; do sleep 0.05; i=\$((i + 1)); done
EOF2
chmod +x "$T/gate"
write_config <<EOF2
[type.a]
handler = exec
command = $T/gate
EOF2
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('w', seq), 'a', NOW() - INTERVAL (10 - seq) SECOND, NOW(),
        NOW() FROM seq_1_to_5"
now_ms() {
	echo $(( $(date +%s%N) / 1000000 ))
}
past_ms() {
	[ "$(now_ms)" -ge "$1" ]
}
jobrun_bg --max=100 --json >"$T/new.out" 2>"$T/new.err"
wait_for 30 test -e "$T/started"
t0=$(now_ms)
insert_job urgent a NULL priority 5
wait_for 10 past_ms $((t0 + 1100))
touch "$T/go"
wait "$bg"
is "$?/$(jget succeeded <"$T/new.out")" 0/6 "a run of 5 jobs at level 0 and one inserted meanwhile at 5"
is "$(keys_in "$T/order-new")" "w1 urgent w2 w3 w4 w5" \
    "the level inserted meanwhile is seen a second after the first claim: its job goes next"

# --- fair share: a tenth of the claims for the oldest ----------------------------------

write_config <<EOF2
[type.lo]
handler = exec
command = $HANDLERS/append-id $T/share
[type.hi]
handler = exec
command = $HANDLERS/append-id $T/share
EOF2
# 20 low jobs (older), 180 high ones: of 100 claims, the 10th, 20th ...
# 100th take the oldest low job each, the others high ones.
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('lo', LPAD(seq, 2, '0')), 'lo', 0,
        NOW() - INTERVAL (1000 - seq) SECOND, NOW(), NOW() FROM seq_1_to_20;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('hi', LPAD(seq, 3, '0')), 'hi', 5,
        NOW() - INTERVAL (200 - seq) SECOND, NOW(), NOW() FROM seq_1_to_180"
# The count of claims is each run's own: two runs of 9 take no low job.
run jobrun --max=9 -q
run jobrun --max=9 -q
is "$(count "status = 'success'")/$(count "type = 'lo' AND status = 'success'")" 18/0 \
    "two runs of 9 claims each take 18 high jobs and no low one"
rm -f "$T/share"
run jobrun --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" 0/100 "--max=100 runs 100 of the 182 left"
is "$(count "type = 'lo' AND status = 'success'")" 10 "exactly 10 low jobs ran"
is "$(positions "$T/share" '^lo')" "10 20 30 40 50 60 70 80 90 100" \
    "at claims 10, 20, ... 100"
is "$(keys_in "$T/share" | tr ' ' '\n' | grep '^lo' | paste -sd' ')" \
    "lo01 lo02 lo03 lo04 lo05 lo06 lo07 lo08 lo09 lo10" "the oldest ten, oldest first"

# A steady flood: an application inserts high-priority jobs, 50 at a time,
# while a waiting run works; 5 low jobs (3 under valgrind), older, still
# run, each at a tenth claim.  The run takes a moment per job (the handler's sleep) and the
# flood keeps well ahead of it: a high job is always due.
cat >"$T/slow" <<EOF2
#!/bin/sh
echo "\$JOB_ID" >>"$T/flood-order"
sleep 0.02
EOF2
chmod +x "$T/slow"
lows=5
under_valgrind && lows=3
claims=$((10 * lows + 10))
write_config <<EOF2
[type.lo]
handler = exec
command = $T/slow
[type.hi]
handler = exec
command = $T/slow
EOF2
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('lo', seq), 'lo', 0, NOW() - INTERVAL (100 - seq) SECOND,
        NOW(), NOW() FROM seq_1_to_$lows;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('seed', seq), 'hi', 5, NOW() - INTERVAL (50 - seq) SECOND,
        NOW(), NOW() FROM seq_1_to_10"
flood() {
	local i=0
	while [ ! -e "$T/stop-flood" ] && [ "$i" -lt 100 ]; do
		i=$((i + 1))
		sql "INSERT INTO polling_jobs (business_key, type, priority,
		        next_run_at, created_at, updated_at)
		     SELECT CONCAT('flood', $i, ':', seq), 'hi', 5, NOW(), NOW(),
		        NOW() FROM seq_1_to_50" || return 1
		echo "$i" >"$T/flood-rounds"
	done
}
flood &
flooder=$!
defer "touch $T/stop-flood"
defer_kill "$flooder"
wait_for 30 test -s "$T/flood-rounds"
run jobrun --wait --max=$claims --max-seconds=100 --json
touch "$T/stop-flood"
wait "$flooder"
is "$rc/$(jget succeeded <<<"$out")" "0/$claims" "the waiting run ends after its $claims claims"
is "$(count "type = 'lo' AND status = 'success'")" $lows "every low job ran in the flood"
tenths=$(seq -s' ' 10 10 $((10 * lows)))
is "$(positions "$T/flood-order" '^lo')" "$tenths" "each at a tenth claim: $tenths"
is "$(count "business_key LIKE 'flood%' AND status = 'success'")" $((claims - lows - 10)) \
    "the other $((claims - lows - 10)) claims after the 10 seeded jobs took jobs the flood inserted meanwhile"
diag "the flood inserted $(count "business_key LIKE 'flood%'") jobs in $(cat "$T/flood-rounds") rounds"

# --- the cost of a claim: not-yet-due jobs of a high level ------------------------------

# Its own server: the Handler_read_* counters are global.  A claim with a
# level whose jobs are all not yet due (retries waiting out their backoff)
# costs that level one look, not its rows; per job the run also reads the
# job back and marks it, a row each (test 30).
rm -rf "$T"
use_own_server
setup_db
migrate 001_type_pick 013_priority
write_config <<EOF2
[type.work]
handler = noop
[type.more]
handler = noop
EOF2
reads() {
	sql "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}
# What reads() itself adds (MySQL's SHOW reads ~450 rows of its own).
r0=$(reads)
show_cost=$(( $(reads) - r0 ))
# (20,000 finished rows under valgrind: the insert is the server's time,
# not jobrun's, but the whole valgrind pass shares the machine)
later=5000 jobs=50 finished=100000
under_valgrind && finished=20000
sql "INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('later:', seq), 'work', 9, NOW() + INTERVAL 1 HOUR, NOW(),
        NOW() FROM seq_1_to_$later;
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('due:', seq), IF(seq % 2, 'work', 'more'), 0,
        NOW() - INTERVAL seq SECOND, NOW(), NOW() FROM seq_1_to_300"
# per_claim BEFORE AFTER N: the rows a claim of a run of N jobs read:
# per job, less the read-back and the mark (a row each), and less what
# reading the counters costs
per_claim() {
	echo $(( ($2 - $1 - show_cost) / $3 - 2 ))
}
before=$(reads)
run jobrun --max=$jobs --json
after=$(reads)
is "$rc/$(jget succeeded <<<"$out")" "0/$jobs" \
    "$jobs due jobs of level 0 run, $later of level 9 due in an hour"
is "$(count "business_key LIKE 'later:%' AND status = 'pending' AND attempts = 0")" \
    $later "the level-9 jobs not yet due are left alone"
claim=$(per_claim "$before" "$after" $jobs)
diag "rows read per claim, $later not-yet-due jobs at level 9: $claim ($((after - before)) Handler_read_* for $jobs jobs, $show_cost of them reading the counters)"
between "$claim" 0 4 "a claim reads at most 4 rows, not the $later of level 9"

if full; then
	before=$(reads)
	run jobrun --type=work --max=$jobs --json
	after=$(reads)
	is "$rc/$(jget succeeded <<<"$out")" "0/$jobs" "--type=work: $jobs jobs"
	claim=$(per_claim "$before" "$after" $jobs)
	diag "rows read per claim, --type=work: $claim"
	between "$claim" 0 4 "--type=work: a claim reads at most 4 rows"
else
	skip 2 "under valgrind: --type=work beside the level-9 jobs not yet due"
fi

# One type's claims do not read another type's jobs due at a higher level
# (idx_type_priority).
sql "INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('other:', seq), 'other', 9, NOW(), NOW(), NOW()
     FROM seq_1_to_$later"
before=$(reads)
run jobrun --type=work --max=20 --json
after=$(reads)
claim=$(per_claim "$before" "$after" 20)
diag "rows read per claim, --type=work beside $later due jobs of another type at level 9: $claim"
between "$claim" 0 4 "--type=work: a claim reads at most 4 rows beside another type's $later due at level 9"
# A run of several types reads the levels of every type: another type's
# due jobs of a higher level are read at every claim and dropped.
before=$(reads)
run jobrun --max=20 --json
after=$(reads)
claim=$(per_claim "$before" "$after" 20)
diag "rows read per claim, types work and more beside $later due jobs of type other at level 9: $claim"
at0='(not measured under valgrind)'
if full; then
	sql "UPDATE polling_jobs SET priority = 0 WHERE type = 'other'"
	before=$(reads)
	run jobrun --max=20 --json
	after=$(reads)
	at0=$(per_claim "$before" "$after" 20)
	diag "and with those jobs of type other at level 0: $at0"
fi
between "$claim" 0 4 "types work and more: a claim reads at most 4 rows beside another type's due jobs of a higher level"
sql "DELETE FROM polling_jobs WHERE type = 'other'"

# And with $finished finished rows of every level.
sql "INSERT INTO polling_jobs (business_key, type, priority, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('done:', seq), IF(seq % 2, 'work', 'more'), CAST(seq % 7 AS SIGNED) - 3,
        IF(seq % 5, 'success', 'failed'), 1, NOW() - INTERVAL 1 DAY, NOW(),
        NOW(), NOW()
     FROM seq_1_to_$finished;
     ANALYZE TABLE polling_jobs" >/dev/null
before=$(reads)
run jobrun --max=$jobs --json
after=$(reads)
is "$rc/$(jget succeeded <<<"$out")" "0/$jobs" "beside $finished finished rows: $jobs jobs"
claim=$(per_claim "$before" "$after" $jobs)
diag "rows read per claim beside $finished finished rows: $claim"
between "$claim" 0 4 "a claim still reads at most 4 rows"

# --jobs=16: a group's claims at the top level go past that level's cursor
# in one bulk execution, read back by token (as the plain claim's, test
# 30): fewer statements than jobs, a handful of rows read a job, and the
# order kept.  320 of 4 levels' 960 due jobs, level 0's the oldest: the
# 240 of level 30, then 48 of level 20, and one claim in ten (32) the
# oldest, of level 0.
questions() {
	sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2
}
sql "DELETE FROM polling_jobs WHERE status = 'pending';
     INSERT INTO polling_jobs (business_key, type, priority, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('many:', seq), IF(seq % 2, 'work', 'more'),
        (seq % 4) * 10, NOW() - INTERVAL 4 HOUR + INTERVAL (seq % 4) HOUR
        + INTERVAL seq SECOND, NOW(), NOW() FROM seq_1_to_960"
before=$(reads) q0=$(questions)
run jobrun --jobs=16 --max=320 --json
after=$(reads) q1=$(questions)
is "$rc/$(jget succeeded <<<"$out")/$(jget by_priority <<<"$out")" 0/320/288 \
    "--jobs=16: 320 jobs run, 288 in priority order"
is "$(sql "SELECT GROUP_CONCAT(priority, ':', n ORDER BY priority DESC) FROM
        (SELECT priority, COUNT(*) n FROM polling_jobs WHERE status = 'success'
         AND business_key LIKE 'many:%' GROUP BY priority) l")" "30:240,20:48,0:32" \
    "--jobs=16: all of level 30, then level 20's; the tenth claims level 0's oldest"
is "$(count "business_key LIKE 'many:%' AND status = 'success' AND priority = 20 AND
        next_run_at > (SELECT MIN(next_run_at) FROM (SELECT next_run_at FROM polling_jobs
        WHERE business_key LIKE 'many:%' AND status = 'pending' AND priority = 20) p)")" 0 \
    "--jobs=16: level 20's jobs taken oldest first"
per_job=$(( (after - before - show_cost) / 320 ))
diag "--jobs=16 in priority order: $per_job rows read and $(( (q1 - q0) * 100 / 320 ))/100 statements a job"
between "$per_job" 1 10 "--jobs=16 in priority order: a job reads at most 10 rows"
if on_mysql; then
	skip 1 "on MySQL, which has no bulk execution, a group's claims are a statement each"
else
	ok "--jobs=16 in priority order: fewer statements than jobs ($((q1 - q0)) for 320)" \
	    test $((q1 - q0)) -lt 320
fi
