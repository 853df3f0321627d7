#!/bin/bash
# Bytes from outside in last_error: a reply's status line, a 202's text
# and a server's error are counted only once they are valid UTF-8, cut by
# bytes as well as characters, and stored as valid utf8mb4.
#  - a reason phrase of 123 continuation bytes (0x80) and a body of 1,000
#    four-byte characters: the job is retried with a last_error of 1,000
#    characters that starts with the status line made valid (at b888798
#    this wrote past the message buffer: ASan's heap-buffer-overflow);
#  - a Latin-1 reason phrase ("Erreur de serveur \xe9", which HTTP allows):
#    the mark is written (not refused by the server in strict mode, which
#    ended the run with 78 and left the job processing), the byte as '?';
#  - a 202 whose "snooze" text is cut at 200 bytes inside a character:
#    the half character is '?', the job retried;
#  - a table whose last_error is utf8mb3 or latin1 (an older application's
#    table): a message it cannot hold is written with those characters as
#    '?' (first what utf8mb3 cannot hold, then all beyond ASCII), where the
#    server in strict mode refused the whole mark (exit 78, job left
#    processing), one slot or several.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 22
setup_db
start_http_server

hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
emoji=$(hex $'\xf0\x9f\x98\x80')
latin=$(hex $'Erreur de serveur \xe9')
e_acute=%C3%A9
write_config <<EOF2
[type.overflow]
handler = http
url = $HTTP_URL/raw/500?reason_hex=80&reason_times=123&fill_hex=$emoji&times=1000
max_response = 8000

[type.latin]
handler = http
url = $HTTP_URL/raw/500?reason_hex=$latin&head_hex=$(hex 'try later')

[type.say]
handler = exec
command = $HANDLERS/exit-with 3 "emoji $(printf '\xf0\x9f\x98\x80') zh 中文 e é"

[type.snooze]
handler = http
url = $HTTP_URL/repeat/202?head=%7B%22snooze%22%3A%20%22&fill=$e_acute&times=150&tail=%22%7D
EOF2
col() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}

# --- continuation bytes in the status line ------------------------------------
insert_job overflow overflow
run jobrun
is "$rc" 1 "a 500 with a reason phrase of continuation bytes: exit 1, a job retried"
is "$(col overflow "CONCAT(status, '/', attempts)")" pending/1 \
    "the job is retried (pending, attempt 1 spent)"
is "$(col overflow 'CHAR_LENGTH(last_error)')" 1000 \
    "last_error holds 1,000 characters, the column's documented bound"
q=$(printf '?%.0s' $(seq 123))
is "$(col overflow 'LEFT(last_error, 134)')" "HTTP 500 $q: " \
    "it starts with the status line, each invalid byte as '?', then the body"
is "$(col overflow "SUBSTRING(last_error, 135) = REPEAT(UNHEX('$emoji'), 866)")" 1 \
    "and the body's head fills the rest: 866 whole characters"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job is left processing"

# --- a Latin-1 reason phrase ----------------------------------------------------
insert_job latin latin
run jobrun
is "$rc" 1 "a Latin-1 reason phrase: exit 1 (a job retried), not 78"
is "$(col latin status)" pending "the job is retried, not stuck in processing"
is "$(col latin last_error)" "HTTP 500 Erreur de serveur ?: try later" \
    "last_error: the byte that is not UTF-8 as '?'"
is "$(col latin 'last_error = CONVERT(last_error USING utf8mb4)')" 1 \
    "last_error is valid utf8mb4"

# --- a 202's text cut inside a character ----------------------------------------
insert_job snooze snooze
run jobrun
is "$rc" 1 "a 202 whose snooze text is cut inside a character: exit 1, not 78"
is "$(col snooze status)" pending "the job is retried"
want="HTTP 202: \"snooze\" must be a whole number of seconds, not \"$(printf 'é%.0s' $(seq 99))?"
is "$(col snooze last_error)" "$want" \
    "the half character at the 200-byte cut is '?'"
# A later run meets a job whose row holds nothing odd: the poison is gone.
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key IN ('latin', 'snooze')"
run jobrun
is "$rc" 1 "the same jobs run again, retried again: exit 1, not 78"

# --- a last_error column that cannot hold every character -----------------------
say_run() {	# KEY [ARG...]: enqueue a say job under KEY, run jobrun ARG...
	insert_job "$1" say
	run jobrun --type=say "${@:2}"
}
charset() {
	sql "SELECT CHARACTER_SET_NAME FROM information_schema.COLUMNS
	    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'polling_jobs'
	    AND COLUMN_NAME = 'last_error'"
}
sql "UPDATE polling_jobs SET last_error = NULL"
sql "ALTER TABLE polling_jobs MODIFY last_error TEXT CHARACTER SET utf8mb3 NULL"
[ "$(charset)" = utf8mb3 ] || bail_out "last_error could not be made utf8mb3"
say_run mb3
is "$rc/$(col mb3 status)" 1/pending "last_error in utf8mb3: the job is retried (exit 1, not 78)"
# Compared on the server, in hex: a client would print a stored emoji as
# '?' too.
stored_is() {	# KEY TEXT: last_error holds TEXT byte for byte
	[ "$(col "$1" 'HEX(CONVERT(last_error USING utf8mb4))')" = \
	    "$(printf '%s' "$2" | od -An -v -tx1 | tr -d ' \n' | tr a-f A-F)" ]
}
ok "utf8mb3: only the character it cannot hold is '?'" \
    stored_is mb3 "exit status 3: emoji ? zh 中文 e é"
say_run mb3-slots --jobs=2
is "$rc/$(col mb3-slots status)" 1/pending "the same with --jobs=2"
ok "--jobs=2: the same last_error" \
    stored_is mb3-slots "exit status 3: emoji ? zh 中文 e é"
sql "UPDATE polling_jobs SET last_error = NULL"
sql "ALTER TABLE polling_jobs MODIFY last_error TEXT CHARACTER SET latin1 NULL"
[ "$(charset)" = latin1 ] || bail_out "last_error could not be made latin1"
say_run latin1
is "$rc/$(col latin1 status)" 1/pending "last_error in latin1: the job is retried (exit 1, not 78)"
ok "latin1: every character beyond ASCII is '?'" \
    stored_is latin1 "exit status 3: emoji ? zh ?? e ?"
say_run latin1-slots --jobs=2
is "$rc/$(col latin1-slots status)" 1/pending "the same with --jobs=2"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job is left processing"
