#!/bin/bash
# Three seams of [type.NAME] concurrency_key (jobrun.conf(5)) where jobrun,
# not the server, decides or once decided what one key is.
#
# Buckets: a keyed type's claims take the named lock of its key's bucket,
# and "keys the server calls equal share one".  Under a UCA collation
# (utf8mb4_unicode_ci) the server calls 'acme' equal to 'acme' followed by
# a no-break space, and to 'acme' followed by a blank and a zero-width
# space: the PAD SPACE rule weighs them as trailing blanks.  Checked first
# against the server; then, for each spelling, the bucket lock a run holds
# while its claim of that job waits for the job's row (held by another
# session), read from the server's list of user locks: the same lock for
# every spelling.  (Before, only U+0020 was trimmed: the spellings fell in
# other buckets, and two runs could start two jobs of one key at once.)
# The same on MariaDB under a collation of several levels
# (utf8mb4_uca1400_as_cs), which weighs each level apart.
#
# The key column named k: with key_concurrency = 2 the busy keys were
# grouped "GROUP BY k", which the server takes for the table's column k,
# not the key (its first 255 characters): two running jobs whose k differ
# after character 255 were two keys, each under the cap, and a third ran.
#
# One claim of several slots keeps the first due job of each key by the
# hash of the key's weight, which the run compares, and a key's room is
# judged by those hashes: the three spellings, all due, are one key to it
# too, on MySQL as well (whose NOT IN missed one).
. "${0%/*}/lib.sh"

plan 15

setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/003_flow.sql" || bail_out "cannot load sql/003_flow.sql"
sql "ALTER TABLE polling_jobs
       ADD cu VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci
         NULL,
       ADD k VARCHAR(400) NULL" || bail_out "cannot add the key columns"
on_mysql || sql "ALTER TABLE polling_jobs ADD ca VARCHAR(300)
       CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_as_cs NULL" ||
    bail_out "cannot add the uca1400 column"

# The spellings: as is, a no-break space after, a blank and a zero-width
# space after (hex of their UTF-8).
spellings="61636D65 61636D65C2A0 61636D6520E2808B"
n=0
for s in $spellings; do
	n=$((n + 1))
	sql "INSERT INTO polling_jobs (business_key, type, cu, payload,
	        next_run_at, created_at, updated_at)
	     VALUES ('premise$n', 'premise', _utf8mb4 X'$s', '{}', NOW(), NOW(),
	        NOW())" || bail_out "cannot add the premise's rows"
done
is "$(sql "SELECT COUNT(DISTINCT cu), COUNT(DISTINCT CAST(cu AS BINARY))
     FROM polling_jobs WHERE type = 'premise'")" "1	3" \
    "the server calls the three spellings one key (utf8mb4_unicode_ci)"
sql "DELETE FROM polling_jobs"

on_mysql || CA_KEY=ca
write_config <<EOF2
[type.u]
handler = noop
concurrency_key = cu

[type.a]
handler = noop
concurrency_key = ${CA_KEY:-cu}

[type.kk]
handler = noop
concurrency_key = k
key_concurrency = 2
EOF2

# held_bucket: the names of the bucket locks ('jobrun.' ...) held now by
# connections to this file's database (the suite's other files share the
# server, and their runs take bucket locks of their own)
if on_mysql; then
	held_bucket() {
		sql "SELECT IFNULL(GROUP_CONCAT(m.OBJECT_NAME), '')
		     FROM performance_schema.metadata_locks AS m
		     JOIN performance_schema.threads AS t
		       ON t.THREAD_ID = m.OWNER_THREAD_ID
		     WHERE m.OBJECT_TYPE = 'USER LEVEL LOCK'
		       AND m.OBJECT_NAME LIKE 'jobrun.%'
		       AND t.PROCESSLIST_DB = DATABASE()"
	}
else
	sql "INSTALL SONAME 'metadata_lock_info'" 2>/dev/null
	held_bucket() {
		sql "SELECT IFNULL(GROUP_CONCAT(m.TABLE_SCHEMA), '')
		     FROM information_schema.METADATA_LOCK_INFO AS m
		     JOIN information_schema.PROCESSLIST AS p ON p.ID = m.THREAD_ID
		     WHERE m.LOCK_TYPE = 'User lock'
		       AND m.TABLE_SCHEMA LIKE 'jobrun.%' AND p.DB = DATABASE()"
	}
fi
bucket_held() {
	[ -n "$(held_bucket)" ]
}

# bucket_of HEX [TYPE COLUMN]: the bucket lock a run of type TYPE (u)
# holds while it claims the one due job, whose key (COLUMN, cu) is HEX,
# its row held by another session
bucket_of() {
	local type=${2:-u} column=${3:-cu}
	sql "DELETE FROM polling_jobs;
	     INSERT INTO polling_jobs (business_key, type, $column, payload,
	        next_run_at, created_at, updated_at)
	     VALUES ('one', '$type', _utf8mb4 X'$1', '{}', NOW(), NOW(), NOW())"
	other_start
	other_send "BEGIN; SELECT 'locked', id FROM polling_jobs WHERE business_key = 'one' FOR UPDATE;"
	wait_for 30 file_has "$T/other.out" '^locked' ||
	    diag "the other session did not lock the row"
	jobrun_bg --type="$type" --max=1 2>"$T/u.err"
	wait_for 60 bucket_held || diag "no bucket lock taken"
	bucket=$(held_bucket)
	other_send "ROLLBACK;"
	other_end
	wait "$bg"
	claimed+="$?/$(sql "SELECT status FROM polling_jobs
	     WHERE business_key = 'one'") "
}

claimed= buckets=
for s in $spellings; do
	bucket_of "$s"
	buckets+="$bucket "
done
set -- $buckets
like "$1" '^jobrun\.[0-9a-f]+\.[0-7]$' "a run of u claims under a bucket lock ($1)"
is "$claimed" "0/success 0/success 0/success " \
    "each spelling's job claimed and run once its row was let go"
is "$2" "$1" "'acme' and 'acme' + no-break space: one bucket"
is "$3" "$1" "'acme' and 'acme' + blank + zero-width space: one bucket"
is "$(held_bucket)" "" "no bucket lock left held"

if on_mysql; then
	skip 2 "MySQL has no utf8mb4_uca1400_as_cs"
else
	sql "INSERT INTO polling_jobs (business_key, type, ca, payload,
	        next_run_at, created_at, updated_at)
	     VALUES ('p1', 'premise', _utf8mb4 X'61636D6532', '{}', NOW(), NOW(),
	        NOW()),
	       ('p2', 'premise', _utf8mb4 X'61636D653220E2808B', '{}', NOW(),
	        NOW(), NOW())"
	is "$(sql "SELECT COUNT(DISTINCT ca) FROM polling_jobs
	     WHERE type = 'premise'")" 1 \
	    "the server calls 'acme2' and 'acme2' + blank + zero-width space one key (uca1400_as_cs)"
	bucket_of 61636D6532 a ca
	first=$bucket
	bucket_of 61636D653220E2808B a ca
	is "$bucket" "$first" "... and they share one bucket"
fi

# The column k: two of its jobs running under another runner's live lock,
# three more due, all one key by their first 255 characters.
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, k, payload, status,
        attempts, next_run_at, locked_by, locked_until, created_at,
        updated_at)
     VALUES
       ('run1', 'kk', CONCAT(REPEAT('x', 255), '1'), '{}', 'processing', 1,
        NOW(), 'another-runner', NOW() + INTERVAL 1 HOUR, NOW(), NOW()),
       ('run2', 'kk', CONCAT(REPEAT('x', 255), '2'), '{}', 'processing', 1,
        NOW(), 'another-runner', NOW() + INTERVAL 1 HOUR, NOW(), NOW());
     INSERT INTO polling_jobs (business_key, type, k, payload, next_run_at,
        created_at, updated_at)
     VALUES ('due3', 'kk', CONCAT(REPEAT('x', 255), '3'), '{}', NOW(), NOW(),
        NOW()),
       ('due4', 'kk', CONCAT(REPEAT('x', 255), '4'), '{}', NOW(), NOW(),
        NOW()),
       ('due5', 'kk', CONCAT(REPEAT('x', 255), '5'), '{}', NOW(), NOW(),
        NOW())" || bail_out "cannot add kk's jobs"
is "$(sql "SELECT COUNT(DISTINCT LEFT(k, 255)), COUNT(DISTINCT k)
     FROM polling_jobs")" "1	5" \
    "the server calls the five values of k one key (the first 255 characters)"
run jobrun status
like "$(grep '^kk:' "$T/stdout")" '^kk: 2 at a time per k: 1 key at it, 3 due jobs waiting for it$' \
    "status: the key at its cap of 2, its 3 due jobs waiting"
# (It waits for the key to its budget's end: two seconds.)
run jobrun --type=kk --jobs=4 --max-seconds=2
is "$rc/$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'pending'")" \
    "0/3" "a run of two seconds starts none of them: the key is at its cap of 2"
sql "UPDATE polling_jobs SET status = 'success', locked_by = NULL,
       locked_until = NULL WHERE business_key = 'run1'"
run jobrun --type=kk --jobs=4
is "$rc/$(sql "SELECT GROUP_CONCAT(business_key ORDER BY id) FROM polling_jobs
     WHERE status = 'success'")" "0/run1,due3,due4,due5" \
    "one place freed: the run starts the three due jobs in it"

# One claim of several slots: a run of --jobs=4 chooses its jobs in one
# statement and keeps the first of each key by the hash of its weight
# (flow_key_sql.h's many_one_parts).  Its first slot claims alone and
# takes z, due first; its other three claim together, with the three
# spellings of one key due and free: they take one of them, and the others
# wait for it (had the run compared the keys' bytes, it would take all
# three at once).
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, cu, payload, next_run_at,
        created_at, updated_at)
     VALUES ('z', 'g', 'zed', '{}', NOW() - INTERVAL 1 MINUTE, NOW(), NOW())" ||
    bail_out "cannot add g's jobs"
n=0
for s in $spellings; do
	n=$((n + 1))
	sql "INSERT INTO polling_jobs (business_key, type, cu, payload,
	        next_run_at, created_at, updated_at)
	     VALUES ('g$n', 'g', _utf8mb4 X'$s', '{}', NOW(), NOW(), NOW())" ||
	    bail_out "cannot add g's jobs"
done
# hold: a handler that runs while $T/hold exists (120 s at most)
cat >"$T/hold" <<'EOF2'
#!/bin/sh
i=0
while [ -e "${0%/*}/hold.on" ] && [ $i -lt 2400 ]; do
	sleep 0.05
	i=$((i + 1))
done
EOF2
chmod +x "$T/hold"
: >"$T/hold.on"
cat >>"$CONF" <<EOF2

[type.g]
handler = exec
command = $T/hold
concurrency_key = cu
EOF2
jobrun_bg --type=g --jobs=4 >/dev/null 2>"$T/g.err"
running_g() {
	sql "SELECT GROUP_CONCAT(IF(business_key = 'z', 'z', 'acme')
	       ORDER BY business_key = 'z' DESC)
	     FROM polling_jobs WHERE type = 'g' AND status = 'processing'"
}
g_started() {
	[[ "$(running_g)" == z,acme* ]]
}
# (The slots that claim together commit their claims at once, and the
# handlers hold them: what is processing once one is, stays.)
wait_for 60 g_started || diag "z and a job of the key acme not both claimed"
is "$(running_g)" z,acme \
    "--jobs=4, three spellings of one key due: the slots claiming together take one"
# Another run, its slots claiming alone and together: the key is busy
# under every spelling (MySQL 9's NOT IN missed the no-break space's, in
# the plan it takes for a claim of several at times: the room is judged
# by the keys' hashes)
run jobrun --type=g --jobs=4 --max-seconds=2
is "$rc/$(running_g)" 0/z,acme \
    "another run starts none of the others while one runs: one key"
rm "$T/hold.on"
wait "$bg"
is "$?/$(sql "SELECT COUNT(*) FROM polling_jobs
     WHERE type = 'g' AND status = 'success' AND attempts = 1")" 0/4 \
    "... and the run does the three, one after another"
