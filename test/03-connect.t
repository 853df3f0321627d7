#!/bin/bash
# An unreachable database or a refused login exits 69, for run and enqueue.
. "${0%/*}/lib.sh"

plan 10
setup_db

db_conf() {
	{
		printf '[database]\n'
		printf '%s\n' "$@"
		printf 'user = root\ndatabase = %s\n\n[type.email]\nhandler = noop\n' "$DB"
	} >"$CONF"
}

db_conf "socket = $T/no-such-dir/mysqld.sock"
run jobrun
is "$rc" 69 "a socket path that does not exist exits 69"
like "$err" '^jobrun: ' "with a jobrun: message"
run jobrun enqueue --type=email --key=k1
is "$rc" 69 "enqueue through that socket exits 69 too"

db_conf "socket = $JOBRUN_TEST_SOCKET" "password = wrong"
run jobrun
is "$rc" 69 "a wrong password exits 69"
like "$err" '[Aa]ccess denied' "the message says access denied"

printf 'wrong\n' >"$T/pw"
db_conf "socket = $JOBRUN_TEST_SOCKET" "password_file = $T/pw"
run jobrun
is "$rc" 69 "a wrong password from password_file exits 69"

db_conf "socket = $JOBRUN_TEST_SOCKET"
JOBRUN_DB_PASSWORD=wrong run jobrun
is "$rc" 69 "a wrong JOBRUN_DB_PASSWORD exits 69"
unlike "$err" 'wrong' "the password is not echoed"

run jobrun
is "$rc" 0 "the right credentials work"

is "$(sql 'SELECT COUNT(*) FROM polling_jobs')" 0 "nothing was written"
