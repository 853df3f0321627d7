#!/bin/bash
# Secrets stay secret: the database password never appears in jobrun's
# command line, its errors, its --json output or a handler's environment,
# and a configuration file that holds a password while others can read it
# draws a warning.
. "${0%/*}/lib.sh"

plan 30
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
command = $HANDLERS/dump-job $T/seen $T/started $T/go
timeout = 60
EOF2
}
mkdir "$T/seen"

conf_with "password = $secret"
chmod 0644 "$CONF"
touch "$T/go"
run jobrun enqueue --type=env --key=e1
like "$err" "holds a password and is readable by others" "enqueue warns of a world-readable password"
run jobrun --json
is "$rc" 0 "a password in the file works"
like "$err" "^ts=\\S+ level=warn msg=\"$CONF holds a password and is readable by others \\(chmod o-r $CONF, or use password_file or JOBRUN_DB_PASSWORD\\)\"$" \
    "a world-readable file with a password draws a warning, with the fix"
for cmd in status list "show --key=e1" check; do
	# shellcheck disable=SC2086 # the command's words
	run jobrun $cmd
	like "$err" "holds a password and is readable by others" "${cmd%% *} warns too"
done
chmod 0600 "$CONF"
run jobrun --json
is "$err" "" "the same file at mode 0600: no warning"

conf_with "password = wrong-$secret"
chmod 0600 "$CONF"
run jobrun --json
is "$rc" 69 "a wrong password: exit 69"
unlike "$err$out" "$secret" "the password is not in the error or the output"

# From the environment: not on the command line, not in the handler's.
# The handler holds the run until the test has looked at jobrun's
# command line and environment, so both are those of the running program.
conf_with ""
rm -f "$T/go" "$T/started"
JOBRUN_DB_PASSWORD=$secret jobrun enqueue --type=env --key=e2 >/dev/null
e2=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'e2'")
JOBRUN_DB_PASSWORD=$secret jobrun_bg --json >"$T/out" 2>"$T/err"
wait_for 30 test -e "$T/started" || bail_out "the handler did not start"
cmdline=$(tr '\0' ' ' <"/proc/$bg_pid/cmdline")
touch "$T/go"
wait "$bg"
is "$?/$(jget claimed <"$T/out")" 0/1 "JOBRUN_DB_PASSWORD works: exit 0, the job claimed"
like "$cmdline" "--config=$CONF" "(the command line read is the running jobrun's)"
unlike "$cmdline" "$secret" "the password is not on jobrun's command line (ps)"
ok "the handler saved its environment" test -s "$T/seen/$e2.env"
unlike "$(cat "$T/seen/$e2.env")" "JOBRUN_DB_PASSWORD|$secret" \
    "the handler's environment has neither the variable nor the password"
unlike "$(cat "$T/out" "$T/err")" "$secret" "nor does --json or stderr"
unlike "$(cat "$T/seen/$e2.stdin")" "$secret" "nor the handler's stdin"

# header_env: the http handler copies the variable; an exec handler (here
# of another type, in the same run) is not handed it.
conf_with "password = $secret"
chmod 0600 "$CONF"
cat >>"$CONF" <<EOF2

[type.web]
handler = http
url = http://127.0.0.1:9/never
header_env = X-Token: HDR_TOKEN_67
EOF2
rm -f "$T/started"
touch "$T/go"
insert_job e3 env
e3=$(sql "SELECT id FROM polling_jobs WHERE business_key = 'e3'")
HDR_TOKEN_67=tok-67-Wq2 OTHER_67=kept run jobrun --type=env
is "$rc" 0 "a run beside an http type with header_env: exit 0"
ok "the handler saved its environment" test -s "$T/seen/$e3.env"
is "$(grep -c '^HDR_TOKEN_67=' "$T/seen/$e3.env")/$(grep -c 'tok-67-Wq2' "$T/seen/$e3.env")" 0/0 \
    "the exec handler's environment has neither the header_env variable nor its value"
is "$(grep -c '^OTHER_67=kept$' "$T/seen/$e3.env")" 1 \
    "(another variable of the runner's is still handed on)"

# --- files others can read or write --------------------------------------------

# A configuration file that others (or its group) can write: they choose
# `command =`.  One line each, with the fix.
conf_with ""
export JOBRUN_DB_PASSWORD=$secret
chmod 0646 "$CONF"
run jobrun status
like "$err" "^ts=\\S+ level=warn msg=\"$CONF is writable by others, who can choose the commands jobrun runs \\(chmod go-w $CONF\\)\"$" \
    "a configuration writable by others draws a warning naming the file and the fix"
chmod 0664 "$CONF"
run jobrun status
like "$err" "^ts=\\S+ level=warn msg=\"$CONF is writable by its group, who can choose the commands jobrun runs \\(chmod go-w $CONF\\)\"$" \
    "writable by its group: the same warning"
chmod 0644 "$CONF"
run jobrun status
is "$err" "" "at 0644: no warning"
unset JOBRUN_DB_PASSWORD

# A password_file others can read.
printf '%s\n' "$secret" >"$T/pw"
chmod 0644 "$T/pw"
conf_with "password_file = $T/pw"
chmod 0600 "$CONF"
run jobrun status
is "$rc" 0 "the password from a world-readable password_file works"
like "$err" "^ts=\\S+ level=warn msg=\"password_file $T/pw is readable by others \\(chmod o-r $T/pw\\)\"$" \
    "and draws a warning naming the file and the fix"
chmod 0640 "$T/pw"
run jobrun status
is "$rc/$err" "0/" "at 0640: no warning"

# A password line longer than the 1,023 bytes read is refused, not cut.
head -c 1024 /dev/zero | tr '\0' x >"$T/pw"
printf '\n' >>"$T/pw"
run jobrun status
is "$rc" 78 "a 1,024-byte password line: configuration error (78)"
is "$err" "jobrun: $CONF:5: [database] password_file: $T/pw: the password line is longer than 1023 bytes" \
    "the message names the file and the limit"
head -c 1023 /dev/zero | tr '\0' x >"$T/pw"
printf '\r\n' >>"$T/pw"
run jobrun status
is "$rc" 69 "a 1,023-byte line (CR LF) is read whole: a wrong password (69), not a configuration error"
