#!/bin/bash
# Server errors give the documented exit status and say what happened,
# each made for real on a server of this file's own (it changes users and
# global settings): jobrun connects as an ordinary account, without SUPER
# or READ ONLY ADMIN, that the test then locks, expires, limits, turns
# read-only, or takes a privilege from.
#   account locked, password expired, per-user connection limit: 69
#   read_only: enqueue 69; a run whose handler is running when it is
#     switched on: 69, the outcome not recorded, the job left processing
#     for recovery
#   a privilege revoked: 77
#   a NOT NULL column without a default: enqueue 78, naming the column
#   a payload over max_allowed_packet: enqueue 65, "too large"
# Every wait is for a state (a row, a file, a connection), not a time.
. "${0%/*}/lib.sh"

plan 52
# MySQL's disconnect_on_expired_password is read-only and ON by default:
# its server starts with it OFF, MariaDB's default, and is restarted with
# it ON where the test turns it on (see restart_own_server).
if on_mysql; then
	MYSQL_EXTRA_ARGS=--disconnect-on-expired-password=OFF use_own_server
else
	use_own_server
fi
setup_db

user=jobrun_t68
secret='s3cret-68-Kw'
sql "CREATE USER '$user'@'localhost' IDENTIFIED BY '$secret';
     GRANT SELECT, INSERT, UPDATE, DELETE ON \`$DB\`.* TO '$user'@'localhost'"
printf '%s\n' "$secret" >"$T/password"
chmod 0600 "$T/password"

# A handler that says it started, then waits (bounded) for the test's go.
cat >"$T/gate" <<'EOF2'
#!/bin/sh
: >"$1/started"
i=0
while [ ! -e "$1/go" ]; do
	i=$((i + 1))
	[ "$i" -le 1200 ] || exit 3
	sleep 0.1
done
EOF2
chmod +x "$T/gate"

cat >"$CONF" <<EOF2
[database]
socket = $JOBRUN_TEST_SOCKET
user = $user
password_file = $T/password
database = $DB

[run]
lock_seconds = 60

[type.gate]
handler = exec
command = $T/gate $T
timeout = 150

[type.quick]
handler = noop
EOF2

# wait_for CMD...: until CMD succeeds, at most 60 s
wait_for() {
	local i
	for i in $(seq 600); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

status_of() {	# KEY
	sql "SELECT status FROM polling_jobs WHERE business_key = '$1'"
}

count_key() {	# KEY
	sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key = '$1'"
}

# sessions N: the account has N sessions open now
sessions() {
	[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST
	    WHERE USER = '$user'")" = "$1" ]
}

# restart_own_server: on MySQL, shut our server down and start it again on
# the same data, with the default settings (MYSQL_EXTRA_ARGS unset)
restart_own_server() {
	local pid
	read -r pid <"$OWN_SERVER/mysqld.pid" ||
	    bail_out "no pid for our own server"
	sql "SHUTDOWN" || bail_out "cannot shut our own server down"
	wait_for proc_gone "$pid" || bail_out "our own server did not stop"
	JOBRUN_TEST_SOCKET=$("$THROWAWAY" start "$OWN_SERVER") ||
	    bail_out "cannot start our own server again"
}

# The servers word a locked account's refusal differently.
locked_msg='this account is locked'
if on_mysql; then
	locked_msg='Account is locked'
fi
# The statement an expired password must run first: MariaDB's SET
# PASSWORD; MySQL's ALTER USER
reset_stmt='SET PASSWORD'
if on_mysql; then
	reset_stmt='ALTER USER statement'
fi

run jobrun enqueue --type=quick --key=ok1
is "$rc" 0 "the account works as set up"

# --- the account is locked ----------------------------------------------------

sql "ALTER USER '$user'@'localhost' ACCOUNT LOCK"
run jobrun --json
is "$rc" 69 "account locked: run exits 69"
like "$err" "connect to .*$locked_msg" \
    "the message says the account is locked"
like "$err" "ACCOUNT UNLOCK" "and how to unlock it"
run jobrun enqueue --type=quick --key=locked1
is "$rc" 69 "account locked: enqueue exits 69"
sql "ALTER USER '$user'@'localhost' ACCOUNT UNLOCK"

# --- the password has expired -------------------------------------------------

# With disconnect_on_expired_password off (the default) the login works
# and every statement fails (1820); with it on, the login fails (1862).
sql "ALTER USER '$user'@'localhost' PASSWORD EXPIRE"
run jobrun enqueue --type=quick --key=expired1
is "$rc" 69 "password expired: enqueue exits 69"
like "$err" "$reset_stmt.*password has expired" \
    "the message says the password has expired"
if on_mysql; then
	restart_own_server
else
	sql "SET GLOBAL disconnect_on_expired_password = ON"
fi
run jobrun --json
is "$rc" 69 "password expired, refused at login: run exits 69"
like "$err" "connect to .*password has expired" "the message says so"
on_mysql || sql "SET GLOBAL disconnect_on_expired_password = OFF"
sql "ALTER USER '$user'@'localhost' IDENTIFIED BY '$secret'"
is "$(count_key expired1)" 0 "nothing was written"

# --- a per-user connection limit ------------------------------------------------

sql "ALTER USER '$user'@'localhost' WITH MAX_USER_CONNECTIONS 1"
MYSQL_PWD=$secret mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -u"$user" \
    -e "SELECT SLEEP(300)" >/dev/null 2>&1 &
holder=$!
defer_kill "$holder"
ok "another connection of the account is open" wait_for sessions 1
run jobrun status
is "$rc" 69 "MAX_USER_CONNECTIONS 1, one connection held: status exits 69"
like "$err" "max_user_connections.*MAX_USER_CONNECTIONS" \
    "the message names the limit"
run jobrun --json
is "$rc" 69 "and a run exits 69"
sql "KILL $(sql "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '$user'")"
wait "$holder"
wait_for sessions 0
sql "ALTER USER '$user'@'localhost' WITH MAX_USER_CONNECTIONS 0"
run jobrun status
is "$rc" 0 "the connection closed: status works again"

# --- the server is read-only --------------------------------------------------

sql "SET GLOBAL read_only = 1"
run jobrun enqueue --type=quick --key=ro1
is "$rc" 69 "read_only: enqueue exits 69"
like "$err" "enqueue job in .*--read-only" "the server's message says read-only"
like "$err" "the server is read-only: a replica, or a primary during failover" \
    "and the hint says what that means"
is "$(count_key ro1)" 0 "nothing was written"
run jobrun --json
is "$rc" 69 "read_only: a run exits 69"
like "$err" "recover expired locks in .*read-only" \
    "it says which write failed and why"
is "$(jget ok <<<"$out")" false "--json: ok is false"
run jobrun status
is "$rc" 0 "read_only: status, which only reads, still works"
sql "SET GLOBAL read_only = 0"

# A handler is running when the server turns read-only: its outcome cannot
# be written, and the job stays processing under the run's lock.
run jobrun enqueue --type=gate --key=g1
is "$rc" 0 "a gated job enqueued"
jobrun --json >"$T/out" 2>"$T/err" &
pid=$!
defer_kill "$pid"
ok "the handler started" wait_for test -e "$T/started"
is "$(status_of g1)" processing "its job is processing"
sql "SET GLOBAL read_only = 1"
: >"$T/go"
wait "$pid"
is "$?" 69 "read_only switched on while the handler ran: exit 69"
err=$(cat "$T/err")
like "$err" "mark job success in .*--read-only" \
    "stderr says the mark failed because the server is read-only"
like "$err" "outcome of the job in hand was not recorded" \
    "and that the outcome was not recorded"
like "$err" "stays processing until its lock expires" \
    "and that recovery will take it"
is "$(jget ok <"$T/out")" false "--json: ok is false"
is "$(sql "SELECT status, locked_by IS NOT NULL, attempts, locked_until > NOW()
    FROM polling_jobs WHERE business_key = 'g1'")" "processing	1	1	1" \
    "the row: processing, still locked by the run, one attempt"
sql "SET GLOBAL read_only = 0"
expire_lock g1
run jobrun --type=quick --json
is "$(jget recovered <<<"$out")" 1 "once the lock expires, a run recovers it"
is "$(status_of g1)" pending "and it is pending again"

# --- a privilege revoked --------------------------------------------------------

sql "REVOKE UPDATE ON \`$DB\`.* FROM '$user'@'localhost'"
run jobrun --json
is "$rc" 77 "UPDATE revoked: a run exits 77"
like "$err" "UPDATE command denied to user '$user'" "the server's message"
like "$err" "lacks a privilege" "and the hint"
is "$(sql "SELECT status, attempts FROM polling_jobs WHERE business_key = 'g1'")" \
    "pending	1" "no job was touched (g1 keeps its one attempt)"
sql "REVOKE INSERT ON \`$DB\`.* FROM '$user'@'localhost'"
run jobrun enqueue --type=quick --key=denied1
is "$rc" 77 "INSERT revoked: enqueue exits 77"
like "$err" "INSERT(, UPDATE)? command denied" "the message says what was denied"
sql "REVOKE ALL ON \`$DB\`.* FROM '$user'@'localhost'"
run jobrun status
is "$rc" 77 "no privilege on the database at all: 77"
sql "GRANT SELECT, INSERT, UPDATE, DELETE ON \`$DB\`.* TO '$user'@'localhost'"

# --- a NOT NULL column without a default ----------------------------------------

sql "ALTER TABLE polling_jobs ADD COLUMN tenant_ref INT NOT NULL"
run jobrun enqueue --type=quick --key=nn1
is "$rc" 78 "a NOT NULL column without a default: enqueue exits 78"
like "$err" "Field 'tenant_ref' doesn't have a default value" \
    "the message names the column"
like "$err" "NOT NULL column without a default that jobrun does not fill" \
    "and says what to do"
is "$(count_key nn1)" 0 "nothing was written"
sql "ALTER TABLE polling_jobs DROP COLUMN tenant_ref"

# --- a payload over max_allowed_packet --------------------------------------------

# The server answers 1153 and closes the connection.  Reading that answer
# is exit 65; a client that wrote into the closed connection sees "gone
# away", reconnects, finds the values larger than max_allowed_packet and
# does not send them again: exit 65 either way, and the server sees the
# statement once (one "Aborted connection" per statement in its log).
aborted() {
	grep -c "bigger than 'max_allowed_packet'" "$OWN_SERVER/error.log"
}
# MySQL logs an aborted connection as a note, at log_error_verbosity 3
# only (its default is 2).
if on_mysql; then
	sql "SET GLOBAL log_error_verbosity = 3" ||
	    bail_out "cannot log aborted connections"
fi
sql "SET GLOBAL max_allowed_packet = 16384"
python3 -c 'import json; print(json.dumps({"blob": "x" * 20000}))' >"$T/big.json"
before=$(aborted)
run jobrun enqueue --type=quick --key=big1 --payload-file="$T/big.json"
is "$rc" 65 "a 20 kB payload, max_allowed_packet 16 kB: enqueue exits 65"
like "$err" "too large for the server.s max_allowed_packet" \
    "the message says the payload is too large"
is "$(( $(aborted) - before ))" 1 "the statement reached the server once"
python3 -c 'import json; print(json.dumps({"blob": "x" * 1000000}))' >"$T/big.json"
before=$(aborted)
run jobrun enqueue --type=quick --key=big2 --payload-file="$T/big.json"
is "$rc" 65 "a 1 MB payload: enqueue exits 65"
like "$err" "too large for the server.s max_allowed_packet" \
    "the message says so again"
is "$(( $(aborted) - before ))" 1 "and it was sent once"
is "$(count_key big1)/$(count_key big2)" 0/0 "nothing was written"
sql "SET GLOBAL max_allowed_packet = 16777216"
