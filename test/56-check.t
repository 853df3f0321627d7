#!/bin/bash
# check: exit 0 when the configuration, the server, the table's columns and
# required indexes and the claim's plan are fine (a missing idx_type_pick
# is only advice, pointing at sql/001_type_pick.sql, and so is idx_finished,
# at sql/005_finished.sql); with the migration
# applied, --type claims are planned on idx_type_pick.  A missing or wrong
# index, a missing column or table, or a configuration problem exits 78
# with a fix, and the ALTER TABLE it proposes does fix it.
. "${0%/*}/lib.sh"

plan 97
setup_db
write_config <<EOF2
[type.a]
handler = noop

[type.b]
handler = noop
EOF2
# fresh_table: polling_jobs as sql/schema.sql makes it, empty
fresh_table() {
	sql "DROP TABLE IF EXISTS polling_jobs"
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
	    <"$TOP/sql/schema.sql" || bail_out "cannot load sql/schema.sql"
}
levels() {
	jpy '" ".join(sorted(set(c["level"] for c in d["checks"])))'
}
problems() {
	grep '^problem ' <<<"$out"
}

# --- all is well -----------------------------------------------------------

run jobrun check
is "$rc" 0 "check on sql/schema.sql exits 0"
is "$err" "" "nothing on stderr"
like "$out" "(^|
)ok +configuration $CONF: 2 job type\(s\)" "the configuration is ok"
version=$(sql "SELECT VERSION()")
kind=MariaDB
if on_mysql; then
	kind=MySQL
fi
like "$out" "
ok +server ${version//[.+]/.} \($kind\) answers at $JOBRUN_TEST_SOCKET
" "the server answers, with its version"
like "$out" "
info +time_zone = " "the server's settings are shown"
like "$out" "
ok +table $DB.polling_jobs has the 14 columns jobrun uses
" "the columns are there"
for idx in 'uniq_business_key (business_key)' 'idx_pick (status,next_run_at,id)' \
    'idx_lock (status,locked_until)' 'idx_type_status (type,status)'; do
	like "$out" "
ok +index ${idx//[()]/.}
" "index ${idx%% *} is ok"
done
like "$out" "
advice +no index idx_type_pick: [^
]*
 +fix: sql/001_type_pick.sql
" "no idx_type_pick is advice, with the migration as the fix"
like "$out" "
ok +claim of all types uses idx_pick, ~[0-9]+ row\(s\) to read
" "the claim is planned on idx_pick"
like "$out" "
ok +claim --type=a uses idx_pick" "and a --type=a claim too"
like "$out" "
advice +checkpoints and snooze are off: [^
]*
 +fix: sql/002_checkpoint.sql
" "without sql/002_checkpoint.sql checkpoints are off, as advice"
unlike "$out" 'problem' "no problem"

run jobrun check --json
is "$rc" 0 "check --json exits 0"
is "$(jkeys <<<"$out")" checks,ok,server "--json has ok, checks, server"
is "$(jget ok <<<"$out")" true "ok is true"
is "$(jpy 'sorted(set(",".join(sorted(c)) for c in d["checks"]))' <<<"$out")" '["fix,level,message"]' \
    "each check has level, message, fix"
is "$(levels <<<"$out")" "advice ok" "levels: ok and advice only"
is "$(jpy 'sorted(c["fix"] for c in d["checks"] if c["level"] == "advice")' <<<"$out")" \
    '["sql/001_type_pick.sql", "sql/002_checkpoint.sql", "sql/005_finished.sql", "sql/013_priority.sql", "sql/013_priority.sql"]' \
    "the advice's fixes are the four migrations (013's two indexes)"
is "$(jpy 'd["server"]["version"]' <<<"$out")" "$version" "server.version"
is "$(jpy 'sorted(k for k in d["server"]["settings"] if k in ("time_zone", "innodb_lock_wait_timeout", "max_allowed_packet"))' <<<"$out")" \
    '["innodb_lock_wait_timeout", "max_allowed_packet", "time_zone"]' "server.settings has the relevant variables"

# The plan stays bounded with many finished rows in the table.  (MySQL's
# ANALYZE TABLE has no PERSISTENT FOR: its InnoDB statistics are
# persistent by default.)
analyze='ANALYZE TABLE polling_jobs PERSISTENT FOR ALL'
if on_mysql; then
	analyze='ANALYZE TABLE polling_jobs'
fi
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('done:', seq), IF(seq % 2, 'a', 'b'), 'success', 1,
        NOW() - INTERVAL 1 DAY, NOW(), NOW(), NOW()
     FROM seq_1_to_20000;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     SELECT CONCAT('due:', seq), 'a', NOW() - INTERVAL seq SECOND, NOW(), NOW()
     FROM seq_1_to_10;
     $analyze" >/dev/null || bail_out "cannot fill and analyze the table"
run jobrun check --json
rows=$(jpy '[c["message"] for c in d["checks"] if c["message"].startswith("claim of all types")][0]' <<<"$out" |
    sed -n 's/.*~\([0-9]*\) row.*/\1/p')
diag "claim plan at 20000 finished rows: ~$rows row(s) to read"
between "$rows" 1 100 "with 20000 finished rows the claim reads ~$rows row(s), not the table"

# --- with sql/001_type_pick.sql ------------------------------------------------

mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/001_type_pick.sql"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/005_finished.sql"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/013_priority.sql"
run jobrun check
is "$rc" 0 "check with idx_type_pick exits 0"
like "$out" "
ok +checkpoints and snooze are on" "with sql/002_checkpoint.sql checkpoints are on"
like "$out" "
ok +index idx_type_pick \(status,type,next_run_at,id\)
" "idx_type_pick is ok"
like "$out" "
ok +claim --type=a uses idx_type_pick, ~[0-9]+ row\(s\) to read
" "a --type=a claim is planned on idx_type_pick"
like "$out" "
ok +claim --type=b uses idx_type_pick" "and --type=b's"
like "$out" "
ok +claim of all types uses idx_pick" "the claim of all types stays on idx_pick"
unlike "$out" 'advice' "no advice left"
run jobrun check --json
is "$(jget ok <<<"$out")/$(levels <<<"$out")" "true/ok" "--json: ok, every check ok"

cp "$CONF" "$T/two.conf"
write_config <<EOF2
[type.a]
handler = noop
EOF2
run jobrun check
is "$rc" 0 "check with one type exits 0"
like "$out" "
ok +claim of all types uses idx_type_pick" "one type's claim is planned on idx_type_pick"
cp "$T/two.conf" "$CONF"

# --- a missing required index: 78, and the fix that fixes it ------------------------

# (Under valgrind two of the four, a unique one and another: the check
# and its fix are one walk of the same table of indexes whichever is
# missing, and each index costs three jobruns, seconds of CPU there.)
indexes="uniq_business_key idx_pick idx_lock idx_type_status"
under_valgrind && indexes="uniq_business_key idx_pick"
for idx in $indexes; do
	fresh_table
	sql "ALTER TABLE polling_jobs DROP KEY $idx"
	run jobrun check --json
	is "$rc" 78 "no $idx: check exits 78"
	is "$(jget ok <<<"$out")" false "--json: ok false"
	fix=$(jpy "[c['fix'] for c in d['checks'] if c['level'] == 'problem' and c['message'] == 'index $idx is missing'][0]" <<<"$out")
	like "$fix" "^ALTER TABLE \`polling_jobs\` ADD (UNIQUE )?KEY $idx \(" "the problem names $idx and its fix: $fix"
	run jobrun check
	like "$(problems)" "^problem +index $idx is missing$" "as text: problem index $idx is missing"
	like "$out" "
 +fix: ALTER TABLE \`polling_jobs\` ADD " "with a fix: line"
	sql "$fix"
	run jobrun check
	is "$rc" 0 "after the proposed fix check exits 0"
done
under_valgrind &&
    skip 12 "under valgrind: idx_lock and idx_type_status missing take the path uniq_business_key and idx_pick took (src/check.c's check_indexes)"

fresh_table
sql "ALTER TABLE polling_jobs DROP KEY idx_pick, DROP KEY idx_lock"
run jobrun check
is "$rc" 78 "two indexes missing: 78"
is "$(problems | wc -l)" 2 "two problems"
unlike "$out" 'claim of all types' "no claim plan without idx_pick"

fresh_table
sql "ALTER TABLE polling_jobs DROP KEY idx_type_status, ADD KEY idx_type_status (status, type)"
run jobrun check
is "$rc" 78 "idx_type_status on (status, type): 78"
like "$(problems)" 'index idx_type_status is on \(status,type\), expected \(type,status\)' \
    "the problem shows the columns found and expected"
like "$out" 'fix: drop it and add it as in sql/schema.sql' "and how to fix it"

fresh_table
sql "ALTER TABLE polling_jobs DROP KEY uniq_business_key, ADD KEY uniq_business_key (business_key)"
run jobrun check
is "$rc" 78 "uniq_business_key not unique: 78"
like "$(problems)" 'index uniq_business_key is on \(business_key\), expected \(business_key\) unique' \
    "the problem says it should be unique"

# --- a missing column or table ---------------------------------------------------

fresh_table
sql "ALTER TABLE polling_jobs DROP COLUMN finished_at"
run jobrun check
is "$rc" 78 "no finished_at column: 78"
like "$(problems)" 'table polling_jobs lacks column finished_at' "the problem names the column"
like "$out" 'fix: compare the table with sql/schema.sql' "and the fix"

sql "DROP TABLE polling_jobs"
run jobrun check --json
is "$rc" 78 "no table: 78"
is "$(jpy '[c["message"] for c in d["checks"] if c["level"] == "problem"]' <<<"$out")" \
    "[\"table $DB.polling_jobs does not exist\"]" "the problem names the table"
like "$(jpy '[c["fix"] for c in d["checks"] if c["level"] == "problem"][0]' <<<"$out")" \
    'sql/schema.sql' "the fix loads sql/schema.sql"
fresh_table

# --- configuration problems ---------------------------------------------------

write_config </dev/null
run jobrun check
is "$rc" 78 "no [type.NAME] section: 78"
like "$(problems)" "configuration $CONF: 0 job type\(s\)" "the problem names the file"
like "$out" 'fix: add a \[type.NAME\] section' "and the fix"

write_config <<EOF2
[type.push]
handler = http
url = http://127.0.0.1:9/
header_env = Authorization: JOBRUN_TEST_UNSET_TOKEN
EOF2
unset JOBRUN_TEST_UNSET_TOKEN
run jobrun check
is "$rc" 78 "an http type whose header_env is unset: 78"
like "$(problems)" '\[type.push\].*JOBRUN_TEST_UNSET_TOKEN' "the problem names the section and the variable"
# Only a run of the type and check read it (jobrun.conf(5), header_env).
run jobrun enqueue --type=push --key=push:1
is "$rc" 0 "enqueue does not need the header_env variable"
run jobrun --type=push
is "$rc" 78 "a run of the type does: 78"
like "$err" 'JOBRUN_TEST_UNSET_TOKEN' "naming the variable"
sql "DELETE FROM polling_jobs WHERE business_key = 'push:1'"
cp "$T/two.conf" "$CONF"

sed "s|^socket = .*|socket = $T/no-such.sock|" "$CONF" >"$T/gone.conf"
run jobrun_raw check --config="$T/gone.conf"
is "$rc" 69 "no server: 69"
like "$err" "no-such.sock" "the message names the socket"

# --- columns the application added -------------------------------------------

# With a default, NULL or generated they are fine; NOT NULL without a
# default makes every enqueue fail, and check says so, with a fix that
# works.  (The generated column is on attempts: MySQL refuses one on an
# AUTO_INCREMENT column.)
fresh_table
sql "ALTER TABLE polling_jobs ADD tenant_id INT NOT NULL DEFAULT 0,
    ADD note TEXT NULL, ADD code BIGINT AS (attempts + 1) VIRTUAL" ||
    bail_out "cannot add the application's columns"
run jobrun check
is "$rc/$(problems)" 0/ "added columns with a default, NULL or generated: exit 0"
sql "ALTER TABLE polling_jobs ADD region VARCHAR(10) NOT NULL"
run jobrun check
is "$rc" 78 "a NOT NULL column without a default: 78"
is "$(problems)" \
    "problem  table polling_jobs: column region is NOT NULL without a default, and jobrun's enqueue does not fill it: every enqueue fails" \
    "the problem names the column, and only it"
like "$out" 'fix: ALTER TABLE `polling_jobs` ALTER `region` SET DEFAULT <value>, or let the column be NULL' \
    "the fix gives it a default"
run jobrun enqueue --type=a --key=region:1
ok "(enqueue does fail: exit $rc)" [ "$rc" -ne 0 ]
sql "ALTER TABLE polling_jobs ALTER region SET DEFAULT 'eu'"
run jobrun check
is "$rc/$(problems)" 0/ "with a default: exit 0"
run jobrun enqueue --type=a --key=region:2
is "$rc" 0 "and enqueue works"
fresh_table

# --- libcurl, for http types --------------------------------------------------

# An empty file in front of the real library: libcurl cannot be loaded, as
# on a machine where the package was installed without its Recommends.
mkdir "$T/nocurl"
: >"$T/nocurl/libcurl.so.4"
. "$TOP/test/http-lib.sh"
start_http_server	# check sends the URL a HEAD request
write_config <<EOF2
[type.push]
handler = http
url = $HTTP_URL/ok
EOF2
run jobrun check
is "$rc/$(problems)" 0/ "an http type with libcurl at hand: exit 0"
like "$out" "ok +libcurl loads" "check says libcurl loads"
LD_LIBRARY_PATH=$T/nocurl run jobrun check
is "$rc" 78 "libcurl cannot be loaded: 78"
like "$out$err" 'libcurl\.so\.4.*install libcurl4' "the message names libcurl.so.4 and the package"
cp "$T/two.conf" "$CONF"
LD_LIBRARY_PATH=$T/nocurl run jobrun check
is "$rc" 0 "without an http type libcurl does not matter"
unlike "$out" libcurl "and check does not mention it"

# --- usage --------------------------------------------------------------------

run jobrun check extra
is "$rc" 64 "check with an operand exits 64"
run jobrun check --type=a
is "$rc" 64 "check --type exits 64"
