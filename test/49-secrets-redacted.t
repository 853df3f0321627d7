#!/bin/bash
# Secrets stay secret even when a receiver or a handler repeats them (issue
# 12, item 6).  Values of header_env and header_file headers (the whole
# value and its last word: the token of "Bearer TOKEN") and the database
# password (password, password_file or JOBRUN_DB_PASSWORD) are replaced by
# [redacted] in last_error, in log lines and so in show and list, before
# any cut to 1000 characters; values under 4 bytes are not.
#
# A receiver answers 500 with a debug page echoing the request headers
# (and the bearer token alone), after as many filler bytes as each job's
# payload asks, so that in one job or another every secret straddles the
# 1000-character cut of last_error.  The database password is real: a user
# of this test's own, that the server checks.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 34
setup_db
start_http_server

TOKEN=s3Q7cr9Wt81z
APIKEY=fk456Qx9Lm
FILETOKEN=tf789Rw2Pz
DBPW=dbQ7391pZsx-Vk
TRAILTOKEN=tr4Yk2Vq8Ns
user=jobrun_t49
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -e "
    DROP USER IF EXISTS '$user'@'localhost';
    CREATE USER '$user'@'localhost' IDENTIFIED BY '$DBPW';
    GRANT ALL ON \`$DB\`.* TO '$user'@'localhost'" ||
    bail_out "cannot create the database user $user"
defer "mariadb --no-defaults -S $JOBRUN_TEST_SOCKET -uroot -e \"DROP USER '$user'@'localhost'\""

printf '%s\n' "X-Api-Key: $APIKEY" "X-Auth: Token $FILETOKEN" "X-Short: ab1" \
    >"$T/headers"
printf '%s\n' "$DBPW" >"$T/dbpass"
chmod 0600 "$T/headers" "$T/dbpass"
export TOKEN_VAR="Bearer $TOKEN"
# The same value under a name no header_env reads: exec handlers are not
# handed TOKEN_VAR, but may come by the token another way.
export TOKEN_COPY=$TOKEN_VAR
export TRAIL_VAR="Bearer $TRAILTOKEN "	# a blank at the end, as files often have
export LEAK=$DBPW	# for the handler that prints the password

# conf_with PASSWORD-LINE: this test's user, its password as given
conf_with() {
	cat >"$CONF" <<EOF2
[database]
socket = $JOBRUN_TEST_SOCKET
user = $user
database = $DB
$1

[type.echo]
handler = http
url = $HTTP_URL/echo-headers
header_env = Authorization: TOKEN_VAR
header_file = $T/headers
timeout = 10

[type.echo-trailing]
handler = http
url = $HTTP_URL/echo-headers
header_env = Authorization: TRAIL_VAR
timeout = 10

[type.say-token]
handler = exec
command = /bin/sh -c 'echo "I was given \${TOKEN_VAR:-nothing}, a copy \$TOKEN_COPY"; exit 3'
timeout = 10

[type.say-password]
handler = exec
command = /bin/sh -c 'n=\$(tr -dc 0-9); printf "password: %s" "\$LEAK"; printf "%\${n}s" "" | tr " " .; exit 3'
timeout = 10
EOF2
	chmod 0600 "$CONF"
}
conf_with "password_file = $T/dbpass"

# leaks TEXT...: the secrets, or a 4-character piece of one, found in TEXT
leaks() {
	python3 -c '
import sys
text = sys.stdin.read()
found = set()
for s in sys.argv[1:]:
    for i in range(len(s) - 3):
        if s[i:i + 4] in text:
            found.add(s)
print(" ".join(sorted(found)))' "$TOKEN" "$APIKEY" "$FILETOKEN" "$DBPW" "$TRAILTOKEN"
}
job() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}

# --- http: a receiver's debug page --------------------------------------------

# pad 0, then every pad that puts the page's secrets across the cut
# (inserted by SQL: 412 jobs, and enqueue is not what is tested here)
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
    created_at, updated_at)
    SELECT CONCAT('echo:', seq), 'echo', CONCAT('{\"pad\": ', seq, '}'),
	NOW(), NOW(), NOW() FROM seq_550_to_960 UNION ALL
    SELECT 'echo:0', 'echo', '{\"pad\": 0}', NOW(), NOW(), NOW()"
run jobrun --type=echo --max=1000 --json -v
log=$err err=	# 412 lines: checked below, not repeated by every failure
is "$rc/$(jget retried <<<"$out")" 1/412 "every echo job was retried (500)"
is "$(http_req key=echo:0 header:Authorization)" "Bearer $TOKEN" \
    "the receiver got the token (and echoed it)"
first=$(job echo:0 last_error)
like "$first" '^HTTP 500 Internal Server Error: Internal Server Error' \
    "last_error holds the start of the page"
like "$first" "Authorization: \\[redacted\\]" "header_env's value is [redacted]"
like "$first" "token: \\[redacted\\]" "and so is its last word, the bare token"
like "$first" "X-Api-Key: \\[redacted\\]" "header_file's value is [redacted]"
like "$first" "X-Auth: \\[redacted\\]" "a header_file value of two words too"
like "$first" "X-Short: ab1" "a value under 4 bytes is not redacted"
is "$(sql "SELECT last_error FROM polling_jobs WHERE type = 'echo'" | leaks)" "" \
    "no last_error holds a secret or a piece of one, wherever the cut falls"
between "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'echo'
    AND CHAR_LENGTH(last_error) = 1000")" 100 412 \
    "(most of them were cut at 1000 characters)"
is "$(leaks <<<"$log")" "" "the run's log lines (logfmt, -v) hold none"
like "$log" "\\[redacted\\]" "they show [redacted] instead"

run jobrun show --key=echo:0
is "$(leaks <<<"$out$err")" "" "jobrun show holds none"
like "$out" "Authorization: \\[redacted\\]" "it shows [redacted]"
run jobrun show --json --key=echo:0
is "$(leaks <<<"$out$err")" "" "show --json holds none"
run jobrun list --type=echo --limit=1000
is "$(leaks <<<"$out$err")" "" "list holds none"
run jobrun list --json --type=echo --limit=1000
is "$(leaks <<<"$out$err")" "" "list --json holds none"

# A header_env value that ends in a blank: its last word is still the
# token, and the page that echoes the token alone must not show it.
insert_job trailing echo-trailing
run jobrun --type=echo-trailing --max=1
is "$(job trailing last_error | leaks)" "" \
    "\"Bearer TOKEN \" (a trailing blank): the bare token is redacted too"

# The same run again, its log in full (-vv).
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key = 'echo:0'"
run jobrun --type=echo --max=1 -vv
is "$rc/$(leaks <<<"$out$err")" 1/ "-vv: the debug log holds none either"

# --- exec: a handler that prints the secrets ---------------------------------

# The http type's token, printed by an exec handler of the same run: not
# handed TOKEN_VAR, it prints the copy.
insert_job say-token say-token
run jobrun --max=10 -v
is "$(job say-token last_error)" "exit status 3: I was given nothing, a copy [redacted]" \
    "an exec handler is not given header_env's variable, and a copy of its value is [redacted]"
is "$(leaks <<<"$err")" "" "and not in the log lines"
# A run of that type alone: the token's value is still a secret.
insert_job say-token-alone say-token
run jobrun --type=say-token --max=10 -v
is "$(job say-token-alone last_error)" "exit status 3: I was given nothing, a copy [redacted]" \
    "in a run of the exec type alone (--type), the same: no variable, the copy [redacted]"
is "$(leaks <<<"$err")" "" "and not in the log lines"

# The database password, as each of the three ways gives it, with every
# length of filler that puts it across the cut of the output's tail.
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
    created_at, updated_at)
    SELECT CONCAT('pw:', seq), 'say-password', seq, NOW(), NOW(), NOW()
    FROM seq_965_to_990 UNION ALL
    SELECT 'pw:0', 'say-password', '0', NOW(), NOW(), NOW()"
run jobrun --type=say-password --max=100 -v
log=$err err=
is "$rc/$(job pw:0 attempts)" 1/1 "password_file: the server took the password (the jobs ran)"
is "$(job pw:0 last_error)" "exit status 3: password: [redacted]" \
    "a handler that prints the password: [redacted]"
is "$(sql "SELECT last_error FROM polling_jobs WHERE business_key LIKE 'pw:%'" | leaks)" "" \
    "no piece of it in any last_error, wherever the cut falls"
is "$(leaks <<<"$log")" "" "nor in the log lines"

again() {
	sql "UPDATE polling_jobs SET next_run_at = NOW(), last_error = NULL
	    WHERE business_key LIKE 'pw:%'"
}
again
conf_with ""
JOBRUN_DB_PASSWORD=$DBPW run jobrun --type=say-password --max=100 -v
is "$rc/$(job pw:0 attempts)" 1/2 "JOBRUN_DB_PASSWORD: the server took it"
is "$(job pw:0 last_error)" "exit status 3: password: [redacted]" "it is [redacted]"
is "$(sql "SELECT last_error FROM polling_jobs WHERE business_key LIKE 'pw:%'" | leaks)$(leaks <<<"$err")" "" \
    "no piece of it in last_error or the log"

again
conf_with "password = $DBPW"
run jobrun --type=say-password --max=100 -v
is "$rc/$(job pw:0 attempts)" 1/3 "password in the file: the server took it"
is "$(job pw:0 last_error)" "exit status 3: password: [redacted]" "it is [redacted]"
is "$(sql "SELECT last_error FROM polling_jobs WHERE business_key LIKE 'pw:%'" | leaks)$(leaks <<<"$err")" "" \
    "no piece of it in last_error or the log"

run jobrun show --key=pw:0
is "$(leaks <<<"$out$err")" "" "show of such a job holds none"
