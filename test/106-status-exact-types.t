#!/bin/bash
# status and report tell types apart byte for byte, as list does: a type
# with a NUL byte ('ab\0c') is not 'ab' (its own line, \x00 in the text,
# the exact string in --json).
. "${0%/*}/lib.sh"

plan 6
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

