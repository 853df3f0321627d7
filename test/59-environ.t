#!/bin/bash
# A handler cannot read the database password from jobrun's own
# /proc/<pid>/environ: jobrun wipes and removes JOBRUN_DB_PASSWORD once it
# has read it, and makes itself non-dumpable, so that a process of the same
# user cannot open that file at all.  The handler looks at its parent's
# environ and says what it found.  Run as root, which may read any process's
# environ, only the wipe can hold; run as nobody, as jobrun is in
# production, the file cannot be opened.  This file has its own server: it
# lets another user reach the server's socket, and adds a database user.
. "${0%/*}/lib.sh"

plan 13
use_own_server
setup_db
secret='pw-59-Vq7s'
user=jobrun_t59
sql "CREATE USER '$user'@'localhost' IDENTIFIED BY '$secret';
     GRANT ALL ON \`$DB\`.* TO '$user'@'localhost'"

# The handler: what /proc/$PPID/environ (jobrun's, as it reads its
# cmdline to be sure) shows it, one word, into $T/seen/ID.
cat >"$T/peek" <<'EOF2'
#!/bin/sh
out=$1/$JOB_ID
case $(tr '\0' ' ' <"/proc/$PPID/cmdline") in
*jobrun*) ;;
*) echo "parent-is-not-jobrun" >"$out"; exit 0 ;;
esac
if ! env=$(tr '\0' '\n' <"/proc/$PPID/environ" 2>/dev/null); then
	echo unreadable >"$out"
elif printf '%s\n' "$env" | grep -q "$2"; then
	echo leaked >"$out"
elif printf '%s\n' "$env" | grep -q '^JOBRUN_DB_PASSWORD='; then
	echo variable-without-password >"$out"
else
	echo clean >"$out"
fi
EOF2
chmod 0755 "$T/peek"
mkdir "$T/seen"
chmod 0777 "$T/seen"
cat >"$CONF" <<EOF2
[database]
socket = $JOBRUN_TEST_SOCKET
user = $user
database = $DB

[type.peek]
handler = exec
command = $T/peek $T/seen $secret
EOF2
chmod 0644 "$CONF"
chmod 0755 "$T"

seen() {	# KEY: what the handler of the job with that key saw
	cat "$T/seen/$(sql "SELECT id FROM polling_jobs WHERE business_key = '$1'")" 2>/dev/null
}

export -f jobrun jobrun_raw
# "${nobody[@]}" bash -c CMD: the shell command CMD (jobrun and the like)
# as the user nobody
nobody=(setpriv --reuid=nobody --regid="$(id -g nobody 2>/dev/null)" --clear-groups)

# --- as the user running the tests ----------------------------------------------

JOBRUN_DB_PASSWORD=$secret jobrun enqueue --type=peek --key=k1 >/dev/null
run env JOBRUN_DB_PASSWORD="$secret" bash -c 'jobrun'
is "$rc" 0 "a run with the password in JOBRUN_DB_PASSWORD works"
if [ "${JOBRUN##*/}" = valgrind-jobrun ]; then
	# valgrind starts the program on a copy of the environment: the
	# block /proc/PID/environ shows is valgrind's own
	pass "# skip: under valgrind, /proc/PID/environ is not jobrun's to wipe"
elif [ "$(id -u)" = 0 ]; then
	# root may read any environ: what it shows must not hold the password
	is "$(seen k1)" variable-without-password \
	    "as root: jobrun's environ no longer holds the password (its bytes are wiped)"
else
	is "$(seen k1)" unreadable \
	    "as another user: the handler cannot open jobrun's environ"
fi

# --- MYSQL_PWD, libmariadb's own variable ----------------------------------------
# Taken as the password when the configuration gives none, then wiped and
# removed like JOBRUN_DB_PASSWORD: no handler sees it, and a handler that
# prints it has it redacted.  (At b888798 libmariadb read it, and every
# exec handler inherited it.)
cat >"$T/envdump" <<'EOF3'
#!/bin/sh
env >"$1/$JOB_ID.env"
echo "connecting with $2"
exit 3
EOF3
chmod 0755 "$T/envdump"
cat >>"$CONF" <<EOF2

[type.envdump]
handler = exec
command = $T/envdump $T/seen $secret
EOF2
MYSQL_PWD=$secret jobrun enqueue --type=envdump --key=m1 >/dev/null
run env MYSQL_PWD="$secret" bash -c 'jobrun --type=envdump'
is "$rc" 1 "the password in MYSQL_PWD alone: jobrun connects (the job is retried: exit 1)"
m1=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'm1'")
is "$(grep -c '^MYSQL_PWD=' "$T/seen/$m1.env")" 0 \
    "MYSQL_PWD is not in the handler's environment"
is "$(grep -c -- "$secret" "$T/seen/$m1.env")" 0 \
    "nor is the password anywhere in it"
is "$(sql "SELECT last_error FROM polling_jobs WHERE id = $m1")" \
    "exit status 3: connecting with [redacted]" \
    "the password from MYSQL_PWD is redacted from last_error"

# --- as an unprivileged user, as in production ------------------------------------

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 ||
    ! command -v setpriv >/dev/null; then
	for i in 1 2 3 4 5 6 7; do
		pass "# skip: needs root, setpriv and a user nobody"
	done
	exit 0
fi
# nobody must reach the socket of this file's own server (and, when
# jobrun runs under test/valgrind-jobrun, write its report somewhere).
chmod 0755 "$OWN_SERVER"
mkdir -m 1777 "$T/valgrind"
export VALGRIND_LOGS=$T/valgrind

JOBRUN_DB_PASSWORD=$secret jobrun enqueue --type=peek --key=k2 >/dev/null
run env JOBRUN_DB_PASSWORD="$secret" "${nobody[@]}" bash -c jobrun
is "$rc" 0 "jobrun as nobody runs the job"
is "$(seen k2)" unreadable \
    "its handler, also nobody, cannot open jobrun's /proc/PID/environ"

# The same handler run by hand, as nobody, next to a process of nobody that
# is dumpable, does read that one's environ: the check can tell.
env JOBRUN_DB_PASSWORD="$secret" "${nobody[@]}" bash -c 'exec sleep 60' \
    </dev/null >/dev/null 2>&1 &
sleeper=$!
defer_kill "$sleeper"
ok "a dumpable process of nobody has started" \
    bash -c "for i in \$(seq 200); do [ \"\$(cat /proc/$sleeper/comm)\" = sleep ] && exit 0; sleep 0.05; done; exit 1"
is "$("${nobody[@]}" cat "/proc/$sleeper/environ" | tr '\0' '\n' | grep -c "$secret")" 1 \
    "(the control: nobody reads a dumpable process's environ, password and all)"
kill "$sleeper"

# The file's owner tells: /proc/PID of a non-dumpable process is root's.
JOBRUN_DB_PASSWORD=$secret jobrun enqueue --type=peek --key=k3 >/dev/null
cat >"$T/peek-owner" <<'EOF2'
#!/bin/sh
stat -c %U "/proc/$PPID/environ" >"$1/$JOB_ID"
EOF2
chmod 0755 "$T/peek-owner"
sed -i "s|^command = .*|command = $T/peek-owner $T/seen|" "$CONF"
run env JOBRUN_DB_PASSWORD="$secret" "${nobody[@]}" bash -c jobrun
is "$rc" 0 "another run as nobody"
is "$(seen k3)" root "jobrun's /proc/PID/environ belongs to root: jobrun is not dumpable"
ok "the run did not leave the password in any file of the test" \
    not grep -rqF "$secret" "$T/seen"
