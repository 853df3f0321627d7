#!/bin/bash
# A typo is caught where it is made (issue 30, item 5): enqueue of a type
# no [type.NAME] section names warns (and still enqueues: another host may
# run it), -q silencing it; pause or resume of a type that no section, job
# or control row knows is refused (exit 1) unless --force; an unknown key
# or section in the
# configuration gets the known one it most likely meant;
# " #" in a value (a comment meant, which inih leaves in it) is refused at
# its line, but in a password; purge --older-than without a unit is
# refused, not taken as seconds.
. "${0%/*}/lib.sh"

plan 32
setup_db
write_config <<EOF2
[type.order_sync]
handler = noop
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}

# --- enqueue --type=order_synk ---------------------------------------------------

# warned: the warnings on stderr, without their time stamps
warned() {
	sed 's/^ts=[^ ]* //' <<<"$err"
}
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/006_fan_in.sql" || bail_out "cannot load sql/006_fan_in.sql"
run jobrun enqueue --type=order_synk --key=k1
is "$rc/$out" "0/job 1 created" "enqueue of a type no section names: created, exit 0"
is "$(warned)" "level=warn msg=\"enqueue: no [type.order_synk] section in $CONF: no run with this configuration takes its jobs; did you mean [type.order_sync]?\"" \
    "... with a warning that names the file and the type meant"
is "$(count "type = 'order_synk'")" 1 "the job is in the table"
run jobrun enqueue -q --type=order_synk --key=k2
is "$rc/$out/$err" "0/job 2 created/" "-q: the job is created, no warning"
run jobrun enqueue --type=order_sync --key=k3
is "$rc/$out/$err" "0/job 3 created/" "a configured type: no warning"
# Claims match types byte for byte: [type.order_sync] never runs Order_Sync.
run jobrun enqueue --type=Order_Sync --key=k4
is "$(warned)" "level=warn msg=\"enqueue: no [type.Order_Sync] section in $CONF: no run with this configuration takes its jobs; did you mean [type.order_sync]?\"" \
    "a type in another case is another type: warned"
run jobrun enqueue --type=order_sync --key-prefix=batch --range=1-2 --chunk=1 --then=report_sumary
is "$rc/$(warned)" "0/level=warn msg=\"enqueue: no [type.report_sumary] section in $CONF: no run with this configuration takes its jobs\"" \
    "--then names a type no section names: warned, nothing close to offer"
run jobrun enqueue --type=nosuch --key=k5 --json
is "$rc/$(jget created <<<"$out")" 0/true "--json: the object on stdout as before, the warning on stderr"

# --- pause ordr_sync ------------------------------------------------------------

sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"
flow_rows() {
	sql "SELECT COUNT(*) FROM polling_jobs_flow"
}
run jobrun pause ordr_sync
is "$rc/$out" 1/ "pause of a type nobody knows: exit 1, nothing on stdout"
is "$err" "jobrun: pause ordr_sync: unknown type: no [type.ordr_sync] section in $CONF, no job of it in polling_jobs, no row in polling_jobs_flow; did you mean order_sync? (--force: pause it all the same)" \
    "the message says why, and the type meant"
is "$(flow_rows)" 0 "no pause flag was written"
# Types are byte for byte: [type.order_sync] is not ORDER_SYNC.
run jobrun resume ORDER_SYNC --json
is "$rc/$out/$err" "1//jobrun: resume ORDER_SYNC: unknown type: no [type.ORDER_SYNC] section in $CONF, no job of it in polling_jobs, no row in polling_jobs_flow; did you mean order_sync? (--force: resume it all the same)" \
    "resume of a type in another case: refused, nothing on stdout"
run jobrun pause order_sync
is "$rc/$out" "0/order_sync: paused" "a configured type without jobs: paused"
run jobrun pause order_synk
is "$rc/$out" "0/order_synk: paused" "a type with jobs but no section here (another host's): paused"
run jobrun pause --force report_v2
is "$rc/$out" "0/report_v2: paused" "--force: a type before its first job is paused"
run jobrun resume report_v2
is "$rc/$out" "0/report_v2: resumed" "then it has a control row, and resume knows it"
run jobrun resume order_sync
is "$rc/$out" "0/order_sync: resumed" "resume of a configured type"
is "$(sql "SELECT GROUP_CONCAT(type, ':', paused ORDER BY type) FROM polling_jobs_flow")" \
    "order_sync:0,order_synk:1,report_v2:0" "the control table holds the three, as paused and resumed"

# --- the configuration: did you mean ...? -------------------------------------

# Line 6 is the first line after the [database] section write_config adds.
write_config <<EOF2
[run]
batchsize = 5
EOF2
run jobrun status
is "$rc/$err" "78/jobrun: $CONF:7: [run] batchsize: unknown key; did you mean batch_size?" \
    "a misspelt key: exit 78, file:line, and the key meant"
write_config <<EOF2
[type.order_sync]
hander = exec
command = /bin/true
EOF2
run jobrun status
is "$rc/$err" "78/jobrun: $CONF:7: [type.order_sync] hander: unknown key; did you mean handler?" \
    "a misspelt handler key: named at its line, not \"handler: missing\""
write_config <<EOF2
[types.order_sync]
handler = noop
EOF2
run jobrun status
is "$rc/$err" "78/jobrun: $CONF:7: [types.order_sync]: unknown section (known: database, run, type.NAME, schedule.NAME); did you mean [type.order_sync]?" \
    "a misspelt section: the known ones, and the one meant"
write_config <<EOF2
[type.order_sync]
handler = noop
EOF2

# --- the configuration: " #" is not a comment -----------------------------------

# The user would be "root # db user", and the error would blame the login.
printf '[database]\nsocket = %s\nuser = root # db user\ndatabase = %s\n' \
    "$JOBRUN_TEST_SOCKET" "$DB" >"$CONF"
run jobrun status
is "$rc/$out/$err" "78//jobrun: $CONF:3: [database] user: the value holds \" #\", which is not a comment here: a comment after a value starts with \" ;\"" \
    "user = root # db user: exit 78 at its line, saying how a comment starts"
# The command would get "#" and "main" as arguments, and check said ok.
write_config <<EOF2
[type.order_sync]
handler = exec
command = /bin/true # main
EOF2
run jobrun check
is "$rc/$err" "78/jobrun: $CONF:8: [type.order_sync] command: the value holds \" #\", which is not a comment here: a comment after a value starts with \" ;\"" \
    "command = ... # main: check refuses it (78) at its line"
write_config <<EOF2
[type.order_sync]
handler = exec
command = /bin/true ; main
EOF2
run jobrun check
is "$rc" 0 "with \" ;\" the comment is one, and check passes"
# A header and a key on one line: inih keeps the header and drops the
# rest, and the type would have no handler, or an earlier one's.
write_config <<EOF2
[type.order_sync] handler = noop
EOF2
run jobrun check
is "$rc/$err" "78/jobrun: $CONF:6: text after the section header [type.order_sync]: a header stands alone on its line, and a comment after it starts with \" ;\"" \
    "[type.order_sync] handler = noop: exit 78 at its line"
write_config <<EOF2
[type.order_sync] # sync
handler = noop
EOF2
run jobrun check
is "$rc" 78 "[type.order_sync] # sync: the same (\" #\" is no comment)"
write_config <<EOF2
[type.order_sync] ; sync
handler = noop
EOF2
run jobrun check
is "$rc/$err" "0/" "[type.order_sync] ; sync: a comment, and check passes"
# A password may hold " #": a user whose password has one logs in.
pwuser=jobrun_t83
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -e "
    DROP USER IF EXISTS '$pwuser'@'localhost';
    CREATE USER '$pwuser'@'localhost' IDENTIFIED BY 'pa #ss';
    GRANT ALL ON \`$DB\`.* TO '$pwuser'@'localhost'" ||
    bail_out "cannot create database user $pwuser"
defer "mariadb --no-defaults -S '$JOBRUN_TEST_SOCKET' -uroot -e \"DROP USER IF EXISTS '$pwuser'@'localhost'\""
printf '[database]\nsocket = %s\nuser = %s\npassword = pa #ss\ndatabase = %s\n[type.order_sync]\nhandler = noop\n' \
    "$JOBRUN_TEST_SOCKET" "$pwuser" "$DB" >"$CONF"
chmod 0600 "$CONF"
run jobrun status --json
is "$rc/$err" 0/ "password = pa #ss: the password, # and all, logs in"
write_config <<EOF2
[type.order_sync]
handler = noop
EOF2

# --- purge --older-than=30: thirty what? ----------------------------------------

# A job finished a minute ago, which "30 seconds" would purge.
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     VALUES ('done:1', 'order_sync', 'success', 1, NOW() - INTERVAL 2 MINUTE,
        NOW() - INTERVAL 2 MINUTE, NOW(), NOW() - INTERVAL 1 MINUTE)"
run jobrun purge --status=success --older-than=30
is "$rc/$out" 64/ "purge --older-than=30 (no unit): usage error (64), nothing printed"
is "$err" "jobrun: --older-than: \"30\" has no unit: write 30s, 30m, 30h, 30d or 30w
Try 'jobrun --help'." "the message says to add a unit"
is "$(count "status = 'success'")" 1 "the job finished a minute ago is still there"
run jobrun purge --status=success --older-than=30d
is "$rc/$out/$(count "status = 'success'")" "0/purge: 0 job(s)/1" \
    "with the unit meant (30d) it stays too"
