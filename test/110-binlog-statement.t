#!/bin/bash
# A server that writes its binary log by statement (log_bin ON,
# binlog_format = STATEMENT) refuses every write of a session at READ
# COMMITTED, as jobrun's are: InnoDB logs those by row only.  check calls
# it a problem and gives the fix, and a run fails at its first write
# with exit 78 (the server's configuration, not a passing fault) and the
# fix, where it exited 70, an unknown error.  MariaDB only (the server
# of the file's own is started with MariaDB's options; not in
# MYSQL_TESTS).
. "${0%/*}/lib.sh"

plan 7
MARIADB_EXTRA_ARGS="--log-bin --binlog-format=STATEMENT --server-id=1" \
    use_own_server
setup_db
write_config <<EOF2
[type.ok]
handler = noop
EOF2
got=$(sql "SELECT CONCAT(@@log_bin, ' ', @@binlog_format)")
[ "$got" = "ON STATEMENT" ] ||
    bail_out "fixture: the server does not log by statement: $got"
insert_job j1 ok

run jobrun check
is "$rc" 78 "check on a server logging by statement: a problem, exit 78"
like "$out" "problem  binlog_format = STATEMENT, with log_bin ON: the server refuses every write jobrun makes, at READ COMMITTED" \
    "it says why"
like "$out" "fix: SET GLOBAL binlog_format = 'MIXED' \\(the default\\) or 'ROW', and so in the server's configuration" \
    "and how to fix it"

run jobrun
is "$rc" 78 "a run fails at its first write: exit 78"
like "$err" "the server's binlog_format is STATEMENT, under which jobrun's READ COMMITTED sessions cannot write: set MIXED or ROW" \
    "saying what to change"

sql "SET GLOBAL binlog_format = 'MIXED'"
run jobrun --json
is "$rc/$(jget succeeded <<<"$out")" 0/1 "with MIXED, the next run does the job"
run jobrun check
unlike "$out" "binlog_format = STATEMENT" "and check no longer says it"
