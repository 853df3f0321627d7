#!/bin/bash
# Nothing from the table or a handler reaches a terminal raw.  A handler
# prints ESC [2J (clear the screen), OSC 0;title BEL (retitle the window), a
# C1 CSI and a line that imitates a log line; an http response body says
# the same; a business key and a type hold ESC and BEL.  The run's log
# (logfmt, and sentences on a terminal), list, show, status and enqueue
# show them as escapes (\x1b, \x07, \u009b, \n), never as the bytes, and
# the forged line stays inside its own line; the row's last_error still
# holds the raw text, and --json gives it back exactly.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 39
setup_db
start_http_server

cat >"$T/evil" <<'EOF2'
#!/bin/sh
printf '\033[2J\033]0;pwned\007\nlevel=error msg="forged line"\n\302\233J done'
exit 3
EOF2
chmod +x "$T/evil"
# The same body from the http server: 400, a permanent failure.
body='%1B%5B2J%1B%5D0%3Bpwned%07%0Alevel%3Derror%20msg%3D%22forged%22%C2%9BJ'
write_config <<EOF2
[type.evil]
handler = exec
command = $T/evil

[type.web]
handler = http
url = $HTTP_URL/status/400?body=$body
EOF2

key=$'evil:\e[2J\e]0;key\a:1'
insert_job "$key" evil
insert_job web:1 web
# A type no section handles, with ESC in its name, for status.
insert_job "odd:1" "$(printf 'odd\033[31mred')"

# raw FILE: how many control bytes a terminal would act on - C0 but the
# line feed, DEL, C1 (U+0080..U+009F) and bytes that are not UTF-8
raw() {
	python3 -c '
import re, sys
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8", "replace")
bad = re.findall("[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\ufffd]", text)
print(len(bad))' "$1"
}

# --- the run's log, logfmt --------------------------------------------------------

jobrun >"$T/out" 2>"$T/err"
rc=$?
is "$rc" 1 "the run exits 1 (a retry and a failure)"
is "$(raw "$T/err")" 0 "its stderr has no raw control bytes"
is "$(grep -vc '^ts=' "$T/err")" 0 "every line is one of jobrun's own (ts=...): no forged line"
is "$(grep -c 'outcome=' "$T/err")" 2 "two job lines, one per job"
exp='msg="exit status 3: \x1b[2J\x1b]0;pwned\x07\nlevel=error msg=\"forged line\"\n\u009bJ done"'
ok "the handler's output is there, escaped, as a logfmt parser would read it back" \
    grep -qF -- "$exp" "$T/err"
exp='msg="permanent failure: HTTP 400 Bad Request: \x1b[2J\x1b]0;pwned\x07\nlevel=error msg=\"forged\"\u009bJ"'
ok "the http response body too" grep -qF -- "$exp" "$T/err"

# The table keeps the text as it came.
is "$(sql "SELECT HEX(last_error) FROM polling_jobs WHERE type = 'evil'")" \
    "$(printf 'exit status 3: \033[2J\033]0;pwned\007\nlevel=error msg="forged line"\n\302\233J done' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" \
    "last_error in the table holds the raw bytes"
is "$(sql "SELECT LOCATE(UNHEX('1B5B324A'), last_error) > 0 FROM polling_jobs WHERE type = 'web'")" 1 \
    "the http job's last_error too"

# --- the run's log on a terminal: sentences ------------------------------------------

sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE type = 'evil'"
export -f jobrun jobrun_raw
SHELL=/bin/bash script -qec 'jobrun --type=evil' /dev/null </dev/null >"$T/tty" 2>&1
tr -d '\r' <"$T/tty" >"$T/tty.lf"	# the terminal's own CR LF line ends
is "$(raw "$T/tty.lf")" 0 "on a terminal too, no raw control bytes"
is "$(grep -c . "$T/tty.lf")" 1 "one line"
like "$(cat "$T/tty.lf")" \
    '^jobrun: job 1 \(evil\) attempt 2/5: retry, due again in [0-9]+ s \([0-9]+ ms\): exit status 3: ' \
    "a sentence, as on a terminal"
ok "with the output escaped" grep -qF -- \
    ': exit status 3: \x1b[2J\x1b]0;pwned\x07\nlevel=error msg="forged line"\n\u009bJ done' "$T/tty.lf"

# --- list, show, status, enqueue ---------------------------------------------------

jobrun list >"$T/list" 2>&1
is "$(raw "$T/list")" 0 "list: no raw control bytes"
ok "list shows the key escaped" grep -qF -- 'evil:\x1b[2J\x1b]0;key\x07:1' "$T/list"
ok "and the error's opening words and its last line, escaped" grep -qF -- \
    'exit status 3: ... \u009bJ done' "$T/list"
ok "the http job's too" grep -qF -- \
    'HTTP 400 Bad Request: ... level=error msg="forged"\u009bJ' "$T/list"
ok "and the type" grep -qF -- 'odd\x1b[31mred' "$T/list"

id=$(sql "SELECT id FROM polling_jobs WHERE type = 'evil'")
jobrun show "$id" >"$T/show" 2>&1
is "$(raw "$T/show")" 0 "show: no raw control bytes"
like "$(grep '^business_key ' "$T/show")" '^business_key +evil:\\x1b\[2J\\x1b\]0;key\\x07:1$' \
    "show: the key, escaped"
is "$(grep -c '^level=error' "$T/show")" 0 "show: the forged line stays inside last_error"
# show prints last_error's lines one under another, indented, each escaped.
is "$(sed -n '/^last_error /,/^created_at /p' "$T/show" | sed '$d')" \
"last_error    exit status 3: \\x1b[2J\\x1b]0;pwned\\x07
              level=error msg=\"forged line\"
              \\u009bJ done" "show: last_error's lines indented, escaped"
jobrun show --key="$key" >"$T/show2" 2>&1
is "$(raw "$T/show2")/$(grep -c '^id ' "$T/show2")" 0/1 "show --key finds it, escaped"

jobrun status >"$T/status" 2>&1
is "$(raw "$T/status")" 0 "status: no raw control bytes"
ok "status names the odd type, escaped" grep -qF -- 'odd\x1b[31mred' "$T/status"

sql "UPDATE polling_jobs SET status = CONCAT('x', CHAR(27), '[2J') WHERE type = 'web'"
jobrun enqueue --type=web --key=web:1 >"$T/enq" 2>&1
is "$(raw "$T/enq")/$(grep -cF 'exists (status x\x1b[2J)' "$T/enq")" 0/1 \
    "enqueue of an existing key shows its status escaped"

# --- --json gives the text back exactly ---------------------------------------------

run jobrun list --json
is "$(KEY=$key jpy '[j["business_key"] for j in d["jobs"] if j["type"] == "evil"][0] == __import__("os").environ["KEY"]' <<<"$out")" \
    true "list --json: the key exactly as stored"
is "$(jpy '"\x1b[2J" in [j["last_error"] for j in d["jobs"] if j["type"] == "evil"][0]' <<<"$out")" \
    true "list --json: last_error with its ESC (JSON-escaped by jansson)"

# --- fan-in keys in status, --key-prefix, names in check -----------------------------

mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/006_fan_in.sql" || bail_out "cannot load sql/006"
# A fan-in whose key an application (not jobrun's enqueue) wrote with ESC.
sql "INSERT INTO jobrun_fan_ins (job_table, then_type, then_key, total,
    created_at) VALUES ('polling_jobs', 'web',
    CONCAT('fan', CHAR(27), ']0;t', CHAR(7), ':then'), 2, NOW())" ||
    bail_out "cannot insert the fan-in"
jobrun status >"$T/status2" 2>&1
is "$(raw "$T/status2")" 0 "status with a fan-in: no raw control bytes"
is "$(grep -c '^fan\\x1b]0;t\\x07:then  *0  *2$' "$T/status2")" 1 \
    "status shows the fan-in key escaped"

run jobrun enqueue --type=web --key-prefix=$'p\e]0;x\a' --range=1-2 --chunk=1
is "$rc" 64 "enqueue --key-prefix with ESC exits 64"
is "$err" "jobrun: --key-prefix: control character \\x1b at byte 2
Try 'jobrun --help'." \
    "and says which byte, escaped"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'p%'")" 0 \
    "and enqueues nothing"
printf 'a\n' >"$T/keys"
run jobrun enqueue --type=web --key-prefix=$'p\xc2\x9b' --keys-from="$T/keys"
is "$rc/$err" "64/jobrun: --key-prefix: control character \\u009b at byte 2
Try 'jobrun --help'." \
    "a C1 control in --key-prefix (--keys-from) is refused too"
# --then's type is not checked for control characters (a type may hold
# any), so it is escaped where enqueue's text names it.
jobrun enqueue --type=web --key-prefix=esc --range=1-1 --chunk=1 \
    --then="$(printf 'x\033[2Jy')" >"$T/then" 2>&1
is "$(raw "$T/then")" 0 "enqueue --then: no raw control bytes"
ok "the then: line shows the type escaped" grep -qxF -- \
    'then: a job of type x\x1b[2Jy, key esc:then, once every chunk has finished' "$T/then"
jobrun enqueue --type=web --key-prefix=nl --range=1-1 --chunk=1 --then=$'a\nb' \
    >"$T/then2" 2>&1
is "$(grep -c '^then: ' "$T/then2")/$(grep -cF 'type a\nb, key nl:then,' "$T/then2")" 1/1 \
    "a line feed in --then's type: one then: line, with \\n"

# Column and index names from the table.
sql "ALTER TABLE polling_jobs ADD \`col$(printf '\033')[2J\` INT NOT NULL,
    DROP INDEX idx_lock, ADD INDEX idx_lock (\`col$(printf '\033')[2J\`)" ||
    bail_out "cannot alter the table"
jobrun check >"$T/check" 2>&1
is "$(raw "$T/check")" 0 "check: no raw control bytes"
ok "check names the unfilled column escaped" grep -qF -- \
    'column col\x1b[2J is NOT NULL without a default' "$T/check"
ok "and the index's columns" grep -qF -- \
    'index idx_lock is on (col\x1b[2J), expected (status,locked_until)' "$T/check"
