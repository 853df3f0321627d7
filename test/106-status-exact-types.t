#!/bin/bash
# status and report tell types apart byte for byte, as list does:
# a type with a NUL byte ('ab\0c') is not 'ab' (its own line, \x00 in the
# text, the exact string in --json), and the counts of finished jobs
# (SUCCESS, CANCELLED) of one type leave out the types the collation calls
# equal to it ('done', 'DONE', 'done ', 'dóne').
. "${0%/*}/lib.sh"

plan 16
setup_db
write_config <<EOF2
[type.work]
handler = noop
EOF2
# add TYPE-SQL KEY STATUS [LAST-ERROR-SQL]
add() {
	sql "INSERT INTO polling_jobs (business_key, type, status, next_run_at,
	    created_at, updated_at, finished_at, last_error)
	    VALUES ('$2', $1, '$3', NOW() - INTERVAL 1 MINUTE, NOW(), NOW(),
	    IF('$3' IN ('success', 'failed'), NOW(), NULL), ${4:-NULL})"
}

add "CONCAT('ab', CHAR(0), 'c')" k1 pending
add "CONCAT('ab', CHAR(0), 'c')" k2 pending
add "'ab'" k3 pending

run jobrun status
is "$(grep -c '^ab ' <<<"$out")/$(grep -c '^ab\\x00c ' <<<"$out")" 1/1 \
    "status: 'ab' and 'ab\\x00c' are two lines"
like "$(grep '^ab ' <<<"$out")" '^ab +1 +1 ' "status: ab has 1 pending, 1 due"
like "$(grep '^ab\\x00c ' <<<"$out")" '^ab\\x00c +2 +2 ' \
    "status: ab\\x00c has 2 pending, 2 due"
run jobrun status --json
is "$(jpy 'sorted([t["type"], t["pending"], t["due"]] for t in d["types"])' <<<"$out")" \
    '[["ab", 1, 1], ["ab\u0000c", 2, 2], ["work", 0, 0]]' \
    "status --json: the two types exact, apart"
is "$(jpy 'sorted(d["unhandled"])' <<<"$out")" '["ab", "ab\u0000c"]' \
    "status --json: both unhandled"
run jobrun report --json
is "$(jpy 'sorted([t["type"], t["pending"]] for t in d["types"])' <<<"$out")" \
    '[["ab", 1], ["ab\u0000c", 2], ["work", 0]]' \
    "report --json: the two types exact, apart"

# check: 'ab' configured, 'ab\0c' is not: its jobs are unhandled, named
# with the \x00, and 'ab''s are handled.
write_config <<EOF2
[type.ab]
handler = noop
EOF2
run jobrun check
like "$out" '2 pending job\(s\) of type ab\\x00c: no \[type\.ab\\x00c\] section' \
    "check: ab\\x00c's two jobs unhandled, named whole"
unlike "$out" 'of type ab:' "check: ab's job handled"
# check --json names them exactly (jansson's escapes only), the sentence
# and "type": a tab, a backslash, a quote and a newline read back (a NUL,
# which the sentence cannot hold, is escaped there, exact in "type").
add "CONCAT('t', CHAR(9), 'tab')" k4 pending
add "CONCAT('a', CHAR(92), 'b\"c', CHAR(10), 'd')" k5 pending
run jobrun check --json
is "$(jpy 'sorted([c["type"], c["message"].split(": ")[0]] for c in d["checks"] if "type" in c)' <<<"$out")" \
    '[["a\\b\"c\nd", "1 pending job(s) of type a\\b\"c\nd"], ["ab\u0000c", "2 pending job(s) of type ab\\x00c"], ["t\ttab", "1 pending job(s) of type t\ttab"]]' \
    "check --json: the types exact, in the message and as type"
run jobrun check
like "$out" '1 pending job\(s\) of type t\\ttab: no' "check: the text escapes as list"
sql "DELETE FROM polling_jobs WHERE business_key IN ('k4', 'k5')"
write_config <<EOF2
[type.work]
handler = noop
EOF2

# Types the collation calls equal: their finished jobs are not DONE's.
sql "DELETE FROM polling_jobs"
add "'DONE'" d1 pending
add "'done '" d2 pending
add "'dóne'" d3 pending
add "'done'" d4 success
add "'done'" d5 failed "'cancelled by operator'"
add "'DONE'" d6 success
run jobrun status -t DONE --json
is "$(jpy '[[t["type"], t["pending"], t["success_estimate"], t["success_exact"], t["cancelled"]] for t in d["types"]]' <<<"$out")" \
    '[["DONE", 1, 1, true, 0]]' \
    "status -t DONE: its own success job alone, exact; no cancelled"
run jobrun status -t done --json
is "$(jpy '[[t["type"], t["pending"], t["success_estimate"], t["cancelled"], t["failed"]] for t in d["types"]]' <<<"$out")" \
    '[["done", 0, 1, 1, 0]]' \
    "status -t done: its success and cancelled jobs"
run jobrun status --json
is "$(jpy 'sorted([t["type"], t["pending"], t["success_estimate"], t["cancelled"]] for t in d["types"])' <<<"$out")" \
    '[["DONE", 1, 1, 0], ["done", 0, 1, 1], ["done ", 1, 0, 0], ["d\u00f3ne", 1, 0, 0], ["work", 0, 0, 0]]' \
    "status: each type's finished jobs its own"
run jobrun status
like "$(grep '^DONE ' <<<"$out")" '^DONE +1 .* 0 +1  -$' \
    "status text: DONE's SUCCESS is 1, exact"
like "$(grep '^done  ' <<<"$out" | head -1)" '^done +0 .* 1 +1  -$' \
    "status text: done's CANCELLED 1, SUCCESS 1"
run jobrun report --json
is "$(jpy 'sorted([t["type"], t["pending"]] for t in d["types"])' <<<"$out")" \
    '[["DONE", 1], ["done", 0], ["done ", 1], ["d\u00f3ne", 1], ["work", 0]]' \
    "report --json: every type apart"
