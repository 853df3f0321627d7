#!/bin/bash
# Type filtering: --type claims only that type; without --type only types
# with a [type.NAME] section are claimed; other types stay pending, untouched.
. "${0%/*}/lib.sh"

plan 14
setup_db
write_config <<EOF2
[type.a]
handler = noop

[type.b]
handler = noop
EOF2
for k in a1 a2; do insert_job "$k" a; done
for k in b1 b2; do insert_job "$k" b; done
for k in c1 c2; do insert_job "$k" c; done
state() {
	sql "SELECT GROUP_CONCAT(CONCAT(status, '/', attempts) ORDER BY id)
	       FROM polling_jobs WHERE type = '$1'"
}

run jobrun --type=a --json
is "$rc" 0 "--type=a exits 0"
is "$(jget claimed <<<"$out")" 2 "--type=a claims 2"
is "$(state a)" success/1,success/1 "type a: done"
is "$(state b)" pending/0,pending/0 "type b: untouched"
is "$(state c)" pending/0,pending/0 "type c: untouched"

run jobrun --json
is "$rc" 0 "a run without --type exits 0"
is "$(jget claimed <<<"$out")" 2 "it claims the 2 jobs of configured type b"
is "$(state b)" success/1,success/1 "type b: done"
is "$(state c)" pending/0,pending/0 "type c (no [type.c]): still pending, attempts 0"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'c'
             AND locked_by IS NULL AND last_error IS NULL")" 2 "type c: no lock, no error"

run jobrun --type=c
is "$rc" 78 "--type=c without [type.c] exits 78"
is "$(state c)" pending/0,pending/0 "type c: still untouched"

insert_job a3 a
run jobrun -t a --json
is "$(jget claimed <<<"$out")" 1 "-t a claims the new job of type a"
is "$(state c)" pending/0,pending/0 "type c: still untouched"
