#!/bin/bash
# status: per type the pending, due, lag (age of the oldest due job),
# processing, expired-lock, failed and estimated success counts and the
# handler, then the types with pending jobs but no [type.NAME] section; as a
# table and as --json.  On a table of 200,000 finished rows it reads a few
# dozen rows, not the table (the server's Handler_read_* counters around
# the run).  Set JOBRUN_TEST_FINISHED to use another table size.
. "${0%/*}/lib.sh"

finished=${JOBRUN_TEST_FINISHED:-200000}
plan 46
# Its own server: the Handler_read_* counters are global, and another
# test file's statements would count in them.
use_own_server
setup_db
write_config <<EOF2
[type.work]
handler = noop

[type.mail]
handler = exec
command = /bin/true
EOF2
# add KEY TYPE STATUS NEXT-RUN-SQL [LOCKED-UNTIL-SQL]
add() {
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	    next_run_at, locked_by, locked_until, created_at, updated_at,
	    finished_at)
	    VALUES ('$1', '$2', '$3', IF('$3' = 'pending', 0, 1), $4,
	    IF('$3' = 'processing', 'runner-1', NULL), ${5:-NULL}, NOW(), NOW(),
	    IF('$3' IN ('success', 'failed'), NOW(), NULL))"
}
# line TYPE: the status table's line for TYPE
line() {
	printf '%s\n' "$out" | grep "^$1 "
}

run jobrun status --json
is "$rc" 0 "status on an empty table exits 0"
is "$(jpy '[t["type"] for t in d["types"]]' <<<"$out")" '["work", "mail"]' \
    "it lists the configured types, in configuration order"
is "$(jpy '[[t["pending"], t["due"], t["lag_seconds"], t["processing"], t["expired_locks"], t["failed"]] for t in d["types"]]' <<<"$out")" \
    '[[0, 0, null, 0, 0, 0], [0, 0, null, 0, 0, 0]]' "all counts 0, no lag"
is "$(jpy 'd["unhandled"]' <<<"$out")" '[]' "nothing unhandled"

for i in 1 2 3 4; do add "w:due:$i" work pending 'NOW() - INTERVAL 10 SECOND'; done
for i in 1 2; do add "w:later:$i" work pending 'NOW() + INTERVAL 1 HOUR'; done
add w:expired work processing 'NOW() - INTERVAL 400 SECOND' 'NOW() - INTERVAL 60 SECOND'
for i in 1 2; do
	add "w:run:$i" work processing 'NOW() - INTERVAL 5 SECOND' 'NOW() + INTERVAL 300 SECOND'
done
for i in 1 2 3; do add "w:failed:$i" work failed 'NOW() - INTERVAL 1 HOUR'; done
for i in 1 2 3 4; do add "w:done:$i" work success 'NOW() - INTERVAL 1 HOUR'; done
o_added=$(date +%s)
add o:due orphan pending 'NOW() - INTERVAL 5 SECOND'
add o:later orphan pending 'NOW() + INTERVAL 1 DAY'
add g:failed ghost failed 'NOW() - INTERVAL 1 HOUR'
# a job an operator cancelled is failed with the words cancel writes
add g:cancelled ghost pending 'NOW() + INTERVAL 1 HOUR'
jobrun cancel "$(sql "SELECT id FROM polling_jobs WHERE business_key = 'g:cancelled'")" >/dev/null
# the oldest due job, last, so that its age is 100 s when status looks
add w:old work pending 'NOW() - INTERVAL 100 SECOND'
old_added=$(date +%s)

# --- the table ---------------------------------------------------------

run jobrun status
s1=$(date +%s)
is "$rc" 0 "status exits 0"
is "$err" "" "nothing on stderr"
like "$(head -n 1 <<<"$out")" '^TYPE +PENDING +DUE +LAG +PROCESSING +EXPIRED +FAILED +CANCELLED +SUCCESS +HANDLER$' \
    "a header line"
like "$(line work)" '^work +7 +5 +[0-9]+s +3 +1 +3 +0 +4 +noop$' \
    "work: 7 pending, 5 due, a lag, 3 processing, 1 expired, 3 failed, none cancelled, 4 success (exact), noop"
# the lag: the age of the oldest due job, 100 s when it was added, plus the
# seconds since (the clock read after the run bounds them)
lag=$(line work | awk '{ print $4 }')
between "${lag%s}" 100 $((100 + s1 - old_added + 1)) "work's lag is the oldest due job's age ($lag)"
like "$(line mail)" '^mail +0 +0 +- +0 +0 +0 +0 +0 +exec$' \
    "mail: configured, no jobs (0 success, not ~1), no lag, exec"
like "$(line orphan)" '^orphan +2 +1 +[0-9]+s +0 +0 +0 +0 +0 +-$' \
    "orphan (not configured): 2 pending, 1 due, no handler"
lag=$(line orphan | awk '{ print $4 }')
between "${lag%s}" 5 $((5 + s1 - o_added + 1)) "orphan's lag is its due job's age ($lag)"
like "$(line ghost)" '^ghost +0 +0 +- +0 +0 +1 +1 +0 +-$' \
    "ghost (not configured, only failed jobs) is listed too, its cancelled job apart"
is "$(sed -n '/^Pending jobs of these types/,$p' <<<"$out")" \
    "Pending jobs of these types have no [type.NAME] section in $CONF:
  orphan" "the unhandled list names orphan (pending) but not ghost (none pending)"

# --- --json ----------------------------------------------------------------

run jobrun status --json
s1=$(date +%s)
is "$rc" 0 "status --json exits 0"
is "$(jkeys <<<"$out")" types,unhandled "--json has types and unhandled"
is "$(jpy '",".join(sorted(d["types"][0]))' <<<"$out")" \
    cancelled,due,expired_locks,failed,handler,lag_seconds,pending,processing,success_estimate,success_exact,type \
    "each type has the documented keys"
is "$(jpy '[t["type"] for t in d["types"]][:2]' <<<"$out")" '["work", "mail"]' \
    "configured types first"
is "$(jpy 'sorted(t["type"] for t in d["types"])' <<<"$out")" '["ghost", "mail", "orphan", "work"]' \
    "then the types found in the table"
work='[t for t in d["types"] if t["type"] == "work"][0]'
is "$(jpy "[${work}[k] for k in ('handler', 'pending', 'due', 'processing', 'expired_locks', 'failed')]" <<<"$out")" \
    '["noop", 7, 5, 3, 1, 3]' "work: noop, 7 pending, 5 due, 3 processing, 1 expired, 3 failed"
between "$(jpy "${work}['lag_seconds']" <<<"$out")" 100 $((100 + s1 - old_added + 1)) \
    "work's lag is the age of its oldest due job (100 s)"
is "$(jpy "[${work}['success_estimate'], ${work}['success_exact']]" <<<"$out")" '[4, true]' \
    "work: 4 success, counted exactly (under 100)"
is "$(jpy '[[t["failed"], t["cancelled"]] for t in d["types"] if t["type"] == "ghost"][0]' <<<"$out")" \
    '[1, 1]' "ghost: 1 failed and 1 cancelled, apart"
is "$(jpy '[[t["handler"], t["lag_seconds"]] for t in d["types"] if t["type"] == "mail"][0]' <<<"$out")" \
    '["exec", null]' "mail: exec, lag null"
is "$(jpy '[[t["handler"], t["pending"], t["due"]] for t in d["types"] if t["type"] == "orphan"][0]' <<<"$out")" \
    '[null, 2, 1]' "orphan: handler null, 2 pending, 1 due"
is "$(jpy 'd["unhandled"]' <<<"$out")" '["orphan"]' 'unhandled: ["orphan"]'

# --- --type --------------------------------------------------------------

run jobrun status --type=work
is "$rc/$(wc -l <<<"$out")" 0/2 "--type=work: a header and one line"
like "$(line work)" '^work +7 +5 +1[0-9][0-9]s +3 +1 +3 ' "with work's counts"
run jobrun status --type=orphan --json
is "$(jpy '[t["type"] for t in d["types"]]' <<<"$out")/$(jpy 'd["unhandled"]' <<<"$out")" \
    '["orphan"]/["orphan"]' "--type=orphan --json: one type, unhandled"
run jobrun status --type=nosuch --json
is "$rc" 0 "--type of an unknown type exits 0"
is "$(jpy '[[t["type"], t["handler"], t["pending"], t["failed"], t["lag_seconds"]] for t in d["types"]]' <<<"$out")" \
    '[["nosuch", null, 0, 0, null]]' "and shows it empty"
is "$(jpy 'd["unhandled"]' <<<"$out")" '[]' "an empty unknown type is not unhandled"
run jobrun status --type="$(printf 't%.0s' $(seq 65))"
is "$rc" 64 "--type over 64 characters exits 64"
run jobrun status extra
is "$rc" 64 "an operand exits 64"

# --- once every type has a section ----------------------------------------------

cat >>"$CONF" <<EOF2

[type.orphan]
handler = noop
EOF2
run jobrun status
unlike "$out" 'Pending jobs of these types' "no unhandled list when every pending type has a section"
like "$(line orphan)" ' noop$' "orphan now shows its handler"
run jobrun status --json
is "$(jpy 'd["unhandled"]' <<<"$out")" '[]' '--json: unhandled []'

# --- a table that is not there ------------------------------------------------

sed '/^database = /a table = no_such_table' "$CONF" >"$T/missing.conf"
run jobrun_raw status --config="$T/missing.conf"
is "$rc" 78 "status on a missing table exits 78"
like "$err" 'no_such_table' "the message names the table"

# --- cheap on a large table ------------------------------------------------

sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('done:', seq), IF(seq % 4 = 0, 'mail', 'work'), 'success', 1,
        NOW() - INTERVAL 1 DAY, NOW(), NOW(), NOW()
     FROM seq_1_to_$finished;
     ANALYZE TABLE polling_jobs PERSISTENT FOR ALL" >/dev/null
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" $((finished + 4)) \
    "$finished more finished rows"

reads() {
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B -e \
	    "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}
# least_reads CMD...: the fewest Handler_read_* the server counts around
# CMD in three tries (other clients of the server can only add to them)
least_reads() {
	local i before after n least=
	for i in 1 2 3; do
		before=$(reads)
		"$@" >/dev/null 2>&1
		after=$(reads)
		n=$((after - before))
		if [ -z "$least" ] || [ "$n" -lt "$least" ]; then
			least=$n
		fi
	done
	printf '%s\n' "$least"
}
idle=$(least_reads true)
t0=$(date +%s%N)
jobrun status --json >/dev/null
t1=$(date +%s%N)
all=$(( $(least_reads jobrun status --json) - idle ))
one=$(( $(least_reads jobrun status --type=work) - idle ))
diag "rows read by status at $finished finished rows: $all (--type=work: $one);" \
     "status took $(( (t1 - t0) / 1000000 )) ms"
is "$(jpy '[t["pending"] for t in d["types"] if t["type"] == "work"][0]' <<<"$(jobrun status --json)")" 7 \
    "the counts are unchanged: work 7 pending"
between "$all" 0 1000 "status reads at most 1000 rows of $finished ($all)"
between "$one" 0 1000 "status --type=work reads at most 1000 rows ($one)"
s0=$(date +%s)
run jobrun status --json
s1=$(date +%s)
estimate=$(jpy '[t["success_estimate"] for t in d["types"] if t["type"] == "work"][0]' <<<"$out")
real=$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'work' AND status = 'success'")
diag "work's success rows: $real, estimated $estimate"
between "$estimate" $((real / 2)) $((real * 2)) "the success estimate is within a factor of 2 ($estimate of $real)"
like "$(jobrun status | grep '^work ')" ' ~[0-9]{5,6} +noop$' "the table shows it with ~"
between "$(jpy '[t["lag_seconds"] for t in d["types"] if t["type"] == "work"][0]' <<<"$out")" \
    $((100 + s0 - old_added - 1)) $((100 + s1 - old_added + 1)) \
    "the lag is still the oldest due job's age ($((100 + s0 - old_added)) s by now)"
