#!/bin/bash
# Secrets stay secret: the database password never appears in jobrun's
# command line, its errors, its --json output or a handler's environment,
# and a configuration file that holds a password while others can read it
# draws a warning.
. "${0%/*}/lib.sh"

plan 10
setup_db
secret='s3cret-67-Zq'
user=jobrun_t67
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -e "
    DROP USER IF EXISTS '$user'@'localhost';
    CREATE USER '$user'@'localhost' IDENTIFIED BY '$secret';
    GRANT ALL ON \`$DB\`.* TO '$user'@'localhost'"
defer "mariadb --no-defaults -S $JOBRUN_TEST_SOCKET -uroot -e \"DROP USER '$user'@'localhost'\""

conf_with() {	# PASSWORD-LINE
	cat >"$CONF" <<EOF2
[database]
socket = $JOBRUN_TEST_SOCKET
user = $user
database = $DB
$1

[type.env]
handler = exec
command = $HANDLERS/dump-job $T/seen
timeout = 10
EOF2
}
mkdir "$T/seen"

conf_with "password = $secret"
chmod 0644 "$CONF"
jobrun enqueue --type=env --key=e1 >/dev/null
run jobrun --json
is "$rc" 0 "a password in the file works"
like "$err" "holds a password and is readable by others" \
    "a world-readable file with a password draws a warning"
chmod 0600 "$CONF"
run jobrun --json
is "$err" "" "the same file at mode 0600: no warning"

conf_with "password = wrong-$secret"
chmod 0600 "$CONF"
run jobrun --json
is "$rc" 69 "a wrong password: exit 69"
unlike "$err$out" "$secret" "the password is not in the error or the output"

# From the environment: not on the command line, not in the handler's.
conf_with ""
jobrun enqueue --type=env --key=e2 >/dev/null 2>&1 ||
    JOBRUN_DB_PASSWORD=$secret jobrun enqueue --type=env --key=e2 >/dev/null
JOBRUN_DB_PASSWORD=$secret "$JOBRUN" --config="$CONF" --json >"$T/out" 2>"$T/err" &
pid=$!
cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
wait "$pid"
is "$?" 0 "JOBRUN_DB_PASSWORD works"
unlike "$cmdline" "$secret" "the password is not on jobrun's command line (ps)"
env_file=$(ls "$T"/seen/*.env | tail -1)
unlike "$(cat "$env_file")" "JOBRUN_DB_PASSWORD|$secret" \
    "the handler's environment has neither the variable nor the password"
unlike "$(cat "$T/out" "$T/err")" "$secret" "nor does --json or stderr"
unlike "$(cat "$T"/seen/*.stdin)" "$secret" "nor the handler's stdin"
