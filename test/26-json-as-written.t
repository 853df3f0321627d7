#!/bin/bash
# JSON as written (issue 12, item 3): the server's JSON_VALID is the one
# rule for payloads, and the bytes an application stored are the bytes a
# handler gets.  A differential test over test/json-corpus (big numbers,
# exponents, escapes, \u0000, surrogates, duplicate keys, nesting around
# the server's depth limit, BOM, blanks, garbage, raw NUL, bad UTF-8...):
# the server is asked about each file's exact bytes, never a list written
# here, and
#   - jobrun enqueue (--payload-file, and --payload when the file has no
#     NUL) accepts (exit 0) exactly what the server accepts and refuses
#     (exit 65, saying why) the rest, storing nothing;
#   - every accepted document reaches an exec handler's stdin and an http
#     receiver's body byte for byte (the payload is the body's last member:
#     everything after "payload": up to the final "}");
#   - rows an application inserted into a LONGTEXT payload column are
#     judged by the same rule when claimed: refused ones fail with the
#     documented last_error without running a handler, the others arrive
#     as stored;
#   - show --json and fan-out templates keep big numbers' digits.
# On MySQL a JSON column gives back the server's own form of the document
# (CAST(... AS JSON): blanks, key order, duplicate keys, numbers), so there
# "as stored" is that form, which the oracle asks the server for.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

CORPUS=$TOP/test/json-corpus
REFUSED="payload is not valid JSON (the server's JSON_VALID refuses it)"

setup_db
start_http_server
mkdir "$T/dump" "$T/rawdump" "$T/http"
write_config <<EOF2
[type.ex]
handler = exec
command = $HANDLERS/dump-job $T/dump
timeout = 20

[type.web]
handler = http
url = $HTTP_URL/ok
timeout = 20
EOF2

# The server's verdict on each document's bytes, as text of the payload
# column's character set (utf8mb4): "NAME<TAB>1|0<TAB>how".  Bytes that
# are not UTF-8 the server refuses as such text (ERROR 1300); for those
# it is also checked that an application's own INSERT into the JSON
# column fails (so refusing them loses nothing an application could
# store), and the verdict on them as binary is noted for the record.
# MySQL refuses them only in a hex literal: sent as text, as jobrun and
# applications send it, its JSON_VALID and its JSON column take them (with
# warning 1300), so there they are asked about as a string literal.  On
# MySQL the oracle also writes the server's form of each valid document
# (CAST(... AS JSON), as bytes) to $FORM/NAME.
FORM=$CORPUS
if on_mysql; then
	FORM=$T/form
	mkdir "$FORM"
fi
python3 - "$CORPUS" "$JOBRUN_TEST_SOCKET" "$DB" "${JOBRUN_TEST_SERVER:-mariadb}" \
    "$FORM" >"$T/oracle" <<'EOF'
import os, subprocess, sys
corpus, sock, db, server, form = sys.argv[1:]
mysql = server == "mysql"

# (raw: the statement's characters are its bytes, as text_lit makes them)
def ask(sql, raw=False):
    p = subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot",
                        "-N", "-B", db],
                       input=sql.encode("latin-1") if raw else sql.encode(),
                       capture_output=True)
    return p.returncode, p.stdout.decode().strip(), p.stderr.decode()

# MySQL: DATA as a utf8mb4 string literal, its bytes as they are (one
# character a byte: ask it raw)
def text_lit(data):
    return "_utf8mb4'%s'" % data.replace(b"\\", b"\\\\").replace(
        b"'", b"\\'").replace(b"\0", b"\\0").decode("latin-1")

# MySQL: the server's form of the valid document LIT to form/NAME
def write_form(name, lit):
    rc, out, err = ask("SET NAMES utf8mb4; SELECT HEX(CAST(%s AS JSON))" % lit,
                       raw=True)
    if rc == 0 and out:
        open(os.path.join(form, name), "wb").write(bytes.fromhex(out))

for name in sorted(os.listdir(corpus)):
    if not name.endswith(".json"):
        continue
    data = open(os.path.join(corpus, name), "rb").read()
    lit = "X'%s'" % data.hex() if data else "''"
    rc, out, err = ask("SELECT JSON_VALID(_utf8mb4 %s)" % lit)
    if rc == 0 and out in ("0", "1"):
        print("%s\t%s\tJSON_VALID %s" % (name, out, out))
        if mysql and out == "1":
            write_form(name, "_utf8mb4 " + lit)
        continue
    if "ERROR 1300" not in err:
        print("%s\t?\tthe server did not answer: %s" % (name, err.strip()))
        continue
    if mysql:
        tl = text_lit(data)
        rc, out, err = ask("SET NAMES utf8mb4; SELECT JSON_VALID(%s)" % tl,
                           raw=True)
        rc2, _, _ = ask("SET NAMES utf8mb4; INSERT INTO polling_jobs"
                        " (business_key, type, payload, next_run_at, created_at,"
                        " updated_at) VALUES ('oracle', 'none', %s, NOW(), NOW(),"
                        " NOW()); DELETE FROM polling_jobs WHERE business_key ="
                        " 'oracle'" % tl, raw=True)
        if rc == 0 and out == "1" and rc2 == 0:
            print("%s\t1\tnot UTF-8 text, which MySQL's JSON_VALID and JSON"
                  " column take as text (warning 1300)" % name)
            write_form(name, tl)
        else:
            print("%s\t?\tnot UTF-8 text, on MySQL: JSON_VALID %s, an INSERT"
                  " %s" % (name, out or err.strip(), "works" if rc2 == 0 else "fails"))
        continue
    rc, _, err = ask("INSERT INTO polling_jobs (business_key, type, payload,"
                     " next_run_at, created_at, updated_at) VALUES"
                     " ('oracle', 'none', %s, NOW(), NOW(), NOW())" % lit)
    _, binary, _ = ask("SELECT JSON_VALID(%s)" % lit)
    if rc == 0 or "ERROR 1366" not in err:
        print("%s\t?\tnot UTF-8, yet the JSON column takes it" % name)
    else:
        print("%s\t0\tnot UTF-8 text (ERROR 1300; an INSERT gets ERROR"
              " 1366; as binary JSON_VALID says %s)" % (name, binary))
EOF
# Under valgrind (about 2.5 s a jobrun) an eighth of the corpus, every
# eighth document, and those named below go through: the full corpus,
# 150 runs of jobrun, took 400 s there alone, and the plain and ASan
# passes run all of it.
# The documents show --json is checked on, below.
SHOW_DOCS="int-2p63.json int-2p64.json int-neg-2p63-1.json int-100-digits.json
obj-2p64-1.json num-1e400.json num-0.1.json num-12345678901234567.89.json
num-minus-zero.json num-long-fraction.json num-huge-exponent.json"
# Under valgrind show --json is checked on three of them (a number past
# 64 bits, at the top and inside an object, and one past a double's
# range): each show is the same splice of the stored text, and each of
# the eight others kept a document in the part and cost a show, some 25
# jobruns in all.
if under_valgrind; then
	SHOW_DOCS="int-2p64.json obj-2p64-1.json num-1e400.json"
fi
if under_valgrind; then
	awk -v keep="$SHOW_DOCS trailing-garbage.json" 'BEGIN { n = split(keep, k, /[ \n]+/)
	    for (i = 1; i <= n; i++) show[k[i]] = 1 }
	    NR % 8 == 1 || ($1 in show)' FS='\t' "$T/oracle" >"$T/oracle.part"
	mv "$T/oracle.part" "$T/oracle"
fi
ndocs=$(wc -l <"$T/oracle")
naccepted=$(awk -F '\t' '$2 == 1' "$T/oracle" | wc -l)
# Documents without NUL bytes also go through --payload.
nargs=0
while IFS=$'\t' read -r name verdict _; do
	[ "$verdict" = 1 ] && tr -d '\000' <"$CORPUS/$name" | cmp -s - "$CORPUS/$name" &&
	    nargs=$((nargs + 1))
done <"$T/oracle"
[ "$ndocs" -ge 40 ] || under_valgrind ||
    bail_out "the corpus has only $ndocs documents"

plan $((ndocs + naccepted + 20))
diag "$ndocs documents, $naccepted of them valid JSON for the server"

# --- enqueue: accept exactly what the server accepts ----------------------

# How one enqueue went: its exit status, and for 65 whether it said why.
enqueue_result() {
	run jobrun enqueue --type="$1" --key="$2" "$3"
	printf '%s' "$rc"
	if [ "$rc" = 65 ] && [[ $err == *"enqueue: $REFUSED"* ]]; then
		printf ' (says why)'
	fi
}

while IFS=$'\t' read -r name verdict how; do
	f=$CORPUS/$name
	if [ "$verdict" = 1 ]; then
		verdict_rc=0
	else
		verdict_rc="65 (says why)"
	fi
	want="file=$verdict_rc"
	got="file=$(enqueue_result ex "ex:$name" --payload-file="$f")"
	if tr -d '\000' <"$f" | cmp -s - "$f"; then
		# read stops at a NUL, so with none it keeps every byte,
		# trailing newlines included
		IFS= read -r -d '' p <"$f"
		want+=" arg=$verdict_rc"
		got+=" arg=$(enqueue_result ex "arg:$name" --payload="$p")"
	fi
	is "$got" "$want" "$name: enqueue agrees with the server ($how)"
done <"$T/oracle"

is "$(sql "SELECT COUNT(*) FROM polling_jobs")" $((naccepted + nargs)) \
    "a refused payload stores nothing; each accepted one is one job"
# The same documents for the http type: copies of the stored rows.
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
    created_at, updated_at)
    SELECT CONCAT('web:', SUBSTRING(business_key, 4)), 'web', payload,
	NOW(), NOW(), NOW() FROM polling_jobs WHERE business_key LIKE 'ex:%'"

# --- handlers get the bytes as stored --------------------------------------

# (on MySQL: the server's form of the document, $FORM/NAME)

run jobrun --max=100000 --json
is "$rc" 0 "the run exits 0"
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" \
    "$((2 * naccepted + nargs))/$((2 * naccepted + nargs))" \
    "every job was claimed and succeeded"

# Each http request's payload, cut out of the body as the receiver is told
# to: the body is one object, the payload its last member; what precedes
# ,"payload": is jobrun's own JSON (no stored text), so the first such
# mark ends it.
http_py '
import base64, os
for r in reqs:
    raw = base64.b64decode(r["body_b64"])
    cut = raw.find(b",\"payload\":")
    if cut < 0 or not raw.endswith(b"}"):
        continue
    key = json.loads(raw[:cut] + b"}")["business_key"]
    with open(os.path.join(args[0], key), "wb") as f:
        f.write(raw[cut + len(b",\"payload\":"):-1])
' "$T/http"

job_id() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '$1'"
}
# same FILE GOT: "same", "differs" or "missing"
same() {
	if [ ! -e "$2" ]; then
		printf missing
	elif cmp -s "$1" "$2"; then
		printf same
	else
		printf differs
	fi
}
while IFS=$'\t' read -r name verdict _; do
	[ "$verdict" = 1 ] || continue
	f=$FORM/$name
	want="exec=same http=same"
	got="exec=$(same "$f" "$T/dump/$(job_id "ex:$name").stdin")"
	got+=" http=$(same "$f" "$T/http/web:$name")"
	if [ -n "$(job_id "arg:$name")" ]; then
		want+=" exec(--payload)=same"
		got+=" exec(--payload)=$(same "$f" "$T/dump/$(job_id "arg:$name").stdin")"
	fi
	is "$got" "$want" "$name arrives byte for byte"
done <"$T/oracle"

# --- show keeps what was stored ---------------------------------------------

# show --json splices a valid payload in as it is stored (the last
# member): its text is the document's, and a reader that keeps numbers as
# text gets every digit.
# (on MySQL: those of them it takes; it refuses 1e400 and the like)
show_json_differs() {
	local name
	for name in $SHOW_DOCS; do
		if on_mysql && [ ! -e "$FORM/$name" ]; then
			continue
		fi
		jobrun show --json --key="ex:$name" >"$T/show.json"
		python3 -c '
import json, sys
raw, doc = open(sys.argv[1], "rb").read().rstrip(b"\n"), open(sys.argv[2], "rb").read()
keep = lambda s: s
d = json.loads(raw, parse_int=keep, parse_float=keep, parse_constant=keep)
p = json.loads(doc, parse_int=keep, parse_float=keep, parse_constant=keep)
sys.exit(not (raw.endswith(b",\"payload\":" + doc + b"}") and d["payload"] == p))
' "$T/show.json" "$FORM/$name" || printf '%s ' "$name"
	done
}
is "$(show_json_differs)" "" "show --json keeps big numbers' digits and the payload's text"
run jobrun show --key=ex:obj-2p64-1.json
if on_mysql; then
	like "$out" $'\npayload +\\{"last_id": 18446744073709551615\\}\n' \
	    "show prints the payload as stored (MySQL's form)"
else
	like "$out" $'\npayload +\\{"last_id":18446744073709551615\\}\n' \
	    "show prints the payload as stored"
fi

# --- fan-out templates -----------------------------------------------------

tmpl='{"big":18446744073709551616,"neg":-9223372036854775809,"f":0.1,"x":12345678901234567.89,"e":1e400,"a":1,"a":2}'
# MySQL's JSON refuses 1e400 (out of a double's range; num-1e400.json
# above): there the template is the same less that member.
on_mysql && tmpl=${tmpl/,\"e\":1e400/}
run jobrun enqueue --type=ex --key-prefix=fan --range=1-25 --chunk=10 \
    --payload-template="$tmpl"
is "$rc/$out" "0/3 chunk jobs: 3 created, 0 existed" "a template with big numbers fans out"
# Each chunk's payload is what the server's JSON_SET makes of the template.
# (MySQL reads a string + 0 as a double, 10.0: there the bounds are cast.)
tq=${tmpl//\'/\'\'}
from="SUBSTRING_INDEX(SUBSTRING_INDEX(business_key, ':', -1), '-', 1) + 0"
to="SUBSTRING_INDEX(business_key, '-', -1) + 0"
if on_mysql; then
	from="CAST(${from% + 0} AS UNSIGNED)"
	to="CAST(${to% + 0} AS UNSIGNED)"
fi
is "$(sql "SELECT GROUP_CONCAT(business_key ORDER BY id) FROM polling_jobs
    WHERE business_key LIKE 'fan:%' AND CAST(payload AS BINARY) =
    CAST(JSON_SET('$tq', '\$.from', $from,
	'\$.to', $to) AS BINARY)")" \
    "fan:1-10,fan:11-20,fan:21-25" \
    "each chunk's payload is the server's JSON_SET of the template, byte for byte"
if on_mysql; then
	# MySQL keeps numbers past 64 bits as doubles: no digits to keep;
	# each chunk has the values the server reads in the template.
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'fan:%'
	    AND JSON_EXTRACT(payload, '\$.big') = JSON_EXTRACT('$tq', '\$.big')
	    AND JSON_EXTRACT(payload, '\$.neg') = JSON_EXTRACT('$tq', '\$.neg')
	    AND JSON_EXTRACT(payload, '\$.x') = JSON_EXTRACT('$tq', '\$.x')
	    AND JSON_EXTRACT(payload, '\$.a') = 2")" 3 \
	    "every chunk keeps the big numbers, as the server reads them"
else
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE business_key LIKE 'fan:%'
	    AND payload LIKE '%\"big\": 18446744073709551616,%'
	    AND payload LIKE '%\"x\": 12345678901234567.89,%'
	    AND payload LIKE '%\"e\": 1e400,%'")" 3 "every chunk keeps the big numbers' digits"
fi
run jobrun --type=ex --max=10 --json
is "$(jget succeeded <<<"$out")" 3 "the chunk jobs run"
hexof() {
	od -An -v -tx1 "$1" | tr -d ' \n' | tr a-f A-F
}
fan_differs() {
	local id
	for id in $(sql "SELECT id FROM polling_jobs WHERE business_key LIKE 'fan:%'"); do
		[ "$(sql "SELECT HEX(payload) FROM polling_jobs WHERE id = $id")" = \
		    "$(hexof "$T/dump/$id.stdin")" ] || printf '%s ' "$id"
	done
}
is "$(fan_differs)" "" "each chunk's handler gets its payload as stored"
run jobrun enqueue --type=ex --key-prefix=bad --range=1-2 --chunk=1 \
    --payload-template='{"a":1} x'
is "$rc" 65 "a template the server's JSON_VALID refuses: exit 65"
run jobrun enqueue --type=ex --key-prefix=bad --range=1-2 --chunk=1 \
    --payload-template='[18446744073709551616]'
is "$rc:$err" "65:jobrun: enqueue: --payload-template must be a JSON object" \
    "a template that is valid JSON but no object: exit 65"

# --- rows an application inserted, valid or not ------------------------------

# A LONGTEXT payload column takes any text: the runner must judge each row
# by the server's rule when it claims it.
sql "CREATE TABLE raw_jobs LIKE polling_jobs;
    ALTER TABLE raw_jobs MODIFY payload LONGTEXT
	CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL"
RAWCONF=$T/raw.conf
{
	# the [database] section of $CONF, with the table
	sed -n '1,/^$/p' "$CONF" | sed '/^\[database\]$/a table = raw_jobs'
	cat <<EOF2
[type.ex]
handler = exec
command = $HANDLERS/dump-job $T/rawdump
timeout = 20

[type.web]
handler = http
url = $HTTP_URL/must-not-be-called
timeout = 20
EOF2
} >"$RAWCONF"

# sql, with the statement on stdin (a hex literal of 70 kB is too long
# for an argument)
sql_in() {
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B "$DB"
}
# On MySQL the text that is not UTF-8 is kept out of this table: MySQL's
# JSON column takes it but its utf8mb4 LONGTEXT column refuses it (ERROR
# 1366: no application can store it here).  The rows deeper than MySQL's
# JSON nesting limit stay: its JSON_VALID fails on them (ERROR 3157)
# where MariaDB's answers 0, and jobrun takes that as refused too.
nbad=0 unstorable=''
while IFS=$'\t' read -r name verdict how; do
	hex=$(hexof "$CORPUS/$name")
	lit="X'$hex'"
	[ -z "$hex" ] && lit="''"
	if [ "$verdict" = 1 ]; then
		if ! sql_in 2>"$T/insert.err" <<<"INSERT INTO raw_jobs (business_key,
		    type, payload, next_run_at, created_at, updated_at) VALUES
		    ('good:$name', 'ex', $lit, NOW(), NOW(), NOW())"; then
			if on_mysql && [[ $how == "not UTF-8"* ]] &&
			    grep -q '^ERROR 1366 ' "$T/insert.err"; then
				unstorable+="$name "
			else
				cat "$T/insert.err" >&2
			fi
		fi
	elif sql_in 2>/dev/null <<<"INSERT INTO raw_jobs (business_key, type,
	    payload, next_run_at, created_at, updated_at) VALUES
	    ('bad:$name', 'ex', $lit, NOW(), NOW(), NOW()),
	    ('badweb:$name', 'web', $lit, NOW(), NOW(), NOW())"; then
		nbad=$((nbad + 1))
	fi
done <"$T/oracle"
diag "$nbad refused documents stored in a LONGTEXT column"
if on_mysql; then
	diag "left out on MySQL: not UTF-8 text: ${unstorable:-none}"
fi

http_before=$(http_count /must-not-be-called)
run jobrun_raw --config="$RAWCONF" --max=100000 --json
is "$rc" 1 "a run that failed jobs exits 1"
is "$(jget failed <<<"$out")/$(jget succeeded <<<"$out")" "$((2 * nbad))/$((naccepted - $(wc -w <<<"$unstorable")))" \
    "each invalid row failed, each valid one succeeded"
is "$(sql "SELECT GROUP_CONCAT(business_key) FROM raw_jobs
    WHERE business_key NOT LIKE 'good:%' AND NOT (status = 'failed'
    AND attempts = 1 AND last_error <=> '${REFUSED//\'/\'\'}')")" NULL \
    "every row whose payload JSON_VALID refuses: failed with \"$REFUSED\""
no_handler_ran() {
	local id
	for id in $(sql "SELECT id FROM raw_jobs WHERE business_key LIKE 'bad:%'"); do
		[ -e "$T/rawdump/$id.stdin" ] && printf '%s ' "$id"
	done
}
is "$(no_handler_ran)/$(( $(http_count /must-not-be-called) - http_before ))" "/0" \
    "no handler ran for them: no exec, no request"
raw_differs() {
	local name id
	while IFS=$'\t' read -r name verdict _; do
		[ "$verdict" = 1 ] || continue
		[[ " $unstorable" == *" $name "* ]] && continue
		id=$(sql "SELECT id FROM raw_jobs WHERE business_key = 'good:$name'")
		cmp -s "$CORPUS/$name" "$T/rawdump/$id.stdin" || printf '%s ' "$name"
	done <"$T/oracle"
}
is "$(raw_differs)" "" "valid rows inserted by SQL reach the handler byte for byte"
run jobrun_raw show --config="$RAWCONF" --json --key=bad:trailing-garbage.json
is "$(jget payload <<<"$out")" "{} x" \
    "show --json gives a payload JSON_VALID refuses as a string of its text"

# A row nested 1000 deep, past either server's JSON limit (MariaDB: 32
# levels, MySQL: 100), fails as refused like the others, without a
# handler, and the run ends as a run that failed a job does.
deep_row_refused() {
	local deep id
	deep=$(printf '[%.0s' $(seq 1000))$(printf ']%.0s' $(seq 1000))
	sql "INSERT INTO raw_jobs (business_key, type, payload, next_run_at,
	    created_at, updated_at) VALUES ('deep:1000', 'ex', '$deep', NOW(),
	    NOW(), NOW())"
	id=$(sql "SELECT id FROM raw_jobs WHERE business_key = 'deep:1000'")
	run jobrun_raw --config="$RAWCONF" --json
	is "$rc/$(sql "SELECT CONCAT_WS('/', status, attempts, last_error)
	    FROM raw_jobs WHERE id = $id")/$(ls "$T/rawdump/$id.stdin" 2>/dev/null)" \
	    "1/failed/1/$REFUSED/" \
	    "a row nested deeper than the server's JSON limit: failed with \"$REFUSED\", no handler run"
}
deep_row_refused

# The same among valid jobs read together (--jobs: one statement reads a
# group's rows; on MySQL the refused payload fails that read, and each
# row is then read alone).
deep=$(printf '[%.0s' $(seq 1000))$(printf ']%.0s' $(seq 1000))
sql "INSERT INTO raw_jobs (business_key, type, payload, next_run_at,
    created_at, updated_at) VALUES ('grp:1', 'ex', '{\"n\": 1}', NOW(),
    NOW(), NOW()), ('grp:deep', 'ex', '$deep', NOW(), NOW(), NOW()),
    ('grp:2', 'ex', '[2]', NOW(), NOW(), NOW())"
run jobrun_raw --config="$RAWCONF" --jobs=4 --json
is "$rc/$(sql "SELECT GROUP_CONCAT(CONCAT_WS('/', business_key, status,
    attempts, IF(last_error LIKE 'payload is not valid JSON (%', 'refused',
    last_error))
    ORDER BY business_key SEPARATOR ' ') FROM raw_jobs
    WHERE business_key LIKE 'grp:%'")" \
    "1/grp:1/success/1 grp:2/success/1 grp:deep/failed/1/refused" \
    "with --jobs=4: the deep row failed as refused, the others ran"

