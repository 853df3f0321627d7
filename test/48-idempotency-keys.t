#!/bin/bash
# Distinct business keys stay distinct everywhere (issue 12, item 5).  The
# Idempotency-Key is the key's bytes with letters, digits and "-._~:" as
# they are and every other byte %XX in capitals, so it is injective; a
# NULL key sends no header, an empty one an empty header; the body's
# business_key is the exact string; an exec handler gets the same
# encoding in JOB_IDEMPOTENCY_KEY, and JOB_BUSINESS_KEY unless the key is
# NULL or holds a NUL byte.  Then the receiver the README prescribes,
# contrib/http-receiver.php under php -S, does each job's work exactly
# once, on a first delivery and on a second one.
#
# The keys are written into the table by SQL (hex literals for odd bytes),
# as an application would, in pairs that a sloppier encoding merges.  The
# table's business_key is nullable and case-sensitive (utf8mb4_bin), as
# some applications have it, so "Order:7" and "order:7" are two jobs.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 48
setup_db
start_http_server
sql "ALTER TABLE polling_jobs MODIFY business_key VARCHAR(128)
    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL"

# name, then the key as a hex literal (or NULL)
KEYS=(
	"blank-order:7"	"X'206F726465723A37'"		# " order:7"
	"order:7"	"X'6F726465723A37'"		# "order:7"
	"Order:7"	"X'4F726465723A37'"		# "Order:7"
	"pay-newline"	"X'7061793A310A58'"		# "pay:1\nX"
	"pay-percent"	"X'7061793A3125304158'"		# "pay:1%0AX"
	"nul"		"X'6B007461696C'"		# "k\0tail"
	"nul-cut"	"X'6B'"				# "k"
	"slash"		"X'612F62'"			# "a/b"
	"slash-pct"	"X'6125324662'"			# "a%2Fb"
	"e-acute"	"X'C3A9'"			# "é"
	"empty"		"''"				# ""
	"null"		"NULL"
)
njobs=$((${#KEYS[@]} / 2))
for ((i = 0; i < ${#KEYS[@]}; i += 2)); do
	sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
	    created_at, updated_at) VALUES (${KEYS[i + 1]}, 'web',
	    '{\"order_id\": $((i / 2 + 1))}', NOW(), NOW(), NOW())"
done
is "$(sql "SELECT COUNT(*), COUNT(DISTINCT HEX(business_key)) FROM polling_jobs")" \
    "$njobs	$((njobs - 1))" "$njobs jobs, each with its own key (one NULL)"
# id TAB name of each job, in the order above
for ((i = 0; i < ${#KEYS[@]}; i += 2)); do
	printf '%s\t%s\n' $((i / 2 + 1)) "${KEYS[i]}"
done >"$T/names"

# id TAB hex of the key (or NULL), from the table itself
sql "SELECT id, IFNULL(HEX(business_key), 'NULL') FROM polling_jobs" >"$T/keys"
# encode(bytes): the documented Idempotency-Key of a key (written here from
# the documentation, not taken from jobrun); load(path): that file
ENCODE='
def encode(key):
    plain = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"
    return "".join(chr(b) if b in plain else "%%%02X" % b for b in key)
def load(path):
    keys = {}
    for line in open(path):
        i, h = line.rstrip("\n").split("\t")
        keys[int(i)] = None if h == "NULL" else bytes.fromhex(h)
    return keys
'

# The README's receiver, served by php -S against this test's database
# (its tables are made below, before it gets its first job).
port=$(free_port)
env JOBRUN_RECEIVER_TOKEN=tok-48-receiver \
    APP_DB_DSN="mysql:unix_socket=$JOBRUN_TEST_SOCKET;dbname=$DB;charset=utf8mb4" \
    APP_DB_USER=root APP_DB_PASSWORD= \
    php -S "127.0.0.1:$port" "$TOP/contrib/http-receiver.php" \
    </dev/null >"$T/php.out" 2>"$T/php.err" &
php_pid=$!
defer_kill "$php_pid"
listening() {
	python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null
}
for _ in $(seq 100); do
	listening && break
	proc_gone "$php_pid" && break
	sleep 0.1
done
listening || bail_out "php -S did not start: $(cat "$T/php.err")"

write_config <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
timeout = 10

[type.ex]
handler = exec
command = /bin/sh -c 'cat >/dev/null; env -0 >"\$0/\$JOB_ID.env"' $T/env
timeout = 10

[type.order_push]
handler = http
url = http://127.0.0.1:$port/internal/jobs/order-push
header_env = Authorization: ORDER_PUSH_TOKEN
timeout = 20
EOF2
mkdir "$T/env"

# --- the http handler --------------------------------------------------------

run jobrun --type=web --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" "0/$njobs" "every job of the http type succeeded"
is "$(http_count /ok)" "$njobs" "one request each"

# For each job: what its request carried, against the documented encoding
# of the key's bytes as the table holds them.
http_py "$ENCODE"'
import base64
keys = load(args[0])
for r in reqs:
    body = json.loads(base64.b64decode(r["body_b64"]))
    key = keys[body["id"]]
    h = r["headers"].get("idempotency-key")
    bk = body["business_key"]
    if key is None:
        hv = "none" if h is None else "got %r" % h
        bv = "null" if bk is None else "got %r" % bk
    else:
        hv = "documented" if h == encode(key) else "got %r, want %r" % (h, encode(key))
        bv = "exact" if isinstance(bk, str) and bk.encode() == key else "got %r" % bk
    print("%d\theader %s, body %s" % (body["id"], hv, bv))
' "$T/keys" | sort -n >"$T/web"
while IFS=$'\t' read -r id name; do
	got=$(awk -F '\t' -v id="$id" '$1 == id { print $2 }' "$T/web")
	want="header documented, body exact"
	[ "$name" = null ] && want="header none, body null"
	is "$got" "$want" "key $name: Idempotency-Key and body business_key"
done <"$T/names"

is "$(http_py 'hs = [r["headers"].get("idempotency-key") for r in reqs]
hs = [h for h in hs if h is not None]
print(len(hs), len(set(hs)))')" "$((njobs - 1)) $((njobs - 1))" \
    "every header value is distinct"
id_of() {
	awk -F '\t' -v n="$1" '$2 == n { print $1 }' "$T/names"
}
hdr() {
	http_py 'import base64
for r in reqs:
    if json.loads(base64.b64decode(r["body_b64"]))["id"] == int(args[0]):
        print(r["headers"].get("idempotency-key", "MISSING"))' "$(id_of "$1")"
}
# The pairs, spelt out.
is "$(hdr blank-order:7) $(hdr order:7) $(hdr Order:7)" "%20order:7 order:7 Order:7" \
    '" order:7", "order:7" and "Order:7"'
is "$(hdr pay-newline) $(hdr pay-percent)" "pay:1%0AX pay:1%250AX" \
    '"pay:1\nX" and "pay:1%0AX": "%" itself is encoded'
is "$(hdr nul) $(hdr nul-cut)" "k%00tail k" 'a key with a NUL byte is not cut there'
is "$(hdr slash) $(hdr slash-pct)" "a%2Fb a%252Fb" '"a/b" and "a%2Fb"'
is "$(hdr e-acute)" "%C3%A9" '"é": each byte of UTF-8'
is "$(hdr empty)/$(hdr null)" "/MISSING" "an empty key sends an empty header, a NULL key none"
is "$(http_py 'import base64
for r in reqs:
    print(base64.b64decode(r["body_b64"]).decode())' | grep -c '"business_key":"k\\u0000tail"')" 1 \
    'the body carries the NUL key as "k\u0000tail"'

# --- the exec handler ----------------------------------------------------------

sql "UPDATE polling_jobs SET type = 'ex', status = 'pending', attempts = 0,
    next_run_at = NOW(), finished_at = NULL"
run jobrun --type=ex --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" "0/$njobs" "every job of the exec type succeeded"
python3 -c "import sys, os, json
$ENCODE"'
keys = load(sys.argv[1])
for i, key in sorted(keys.items()):
    env = {}
    for item in open(os.path.join(sys.argv[2], "%d.env" % i), "rb").read().split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            env[k.decode()] = v
    idem = env.get("JOB_IDEMPOTENCY_KEY")
    bk = env.get("JOB_BUSINESS_KEY")
    if key is None:
        iv = "unset" if idem is None else "got %r" % idem
        bv = "unset" if bk is None else "got %r" % bk
    else:
        iv = "documented" if idem == encode(key).encode() else "got %r" % idem
        if b"\0" in key:
            bv = "unset" if bk is None else "got %r" % bk
        else:
            bv = "exact" if bk == key else "got %r" % bk
    print("%d\tJOB_IDEMPOTENCY_KEY %s, JOB_BUSINESS_KEY %s" % (i, iv, bv))
' "$T/keys" "$T/env" >"$T/exec"
while IFS=$'\t' read -r id name; do
	got=$(awk -F '\t' -v id="$id" '$1 == id { print $2 }' "$T/exec")
	case $name in
	null) want="JOB_IDEMPOTENCY_KEY unset, JOB_BUSINESS_KEY unset" ;;
	nul) want="JOB_IDEMPOTENCY_KEY documented, JOB_BUSINESS_KEY unset" ;;
	*) want="JOB_IDEMPOTENCY_KEY documented, JOB_BUSINESS_KEY exact" ;;
	esac
	is "$got" "$want" "key $name: the exec handler's environment"
done <"$T/names"

# --- the README's receiver ---------------------------------------------------------

# Its tables: jobrun_done exactly as its comment defines it, and orders
# whose every push is counted by a trigger (the work to do once).
python3 - "$TOP/contrib/http-receiver.php" >"$T/jobrun_done.sql" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^ \*   (CREATE TABLE jobrun_done \(.*?;)$", text, re.M | re.S)
print(re.sub(r"^ \*   ", "", m.group(1), flags=re.M))
EOF
sql "$(cat "$T/jobrun_done.sql")
    CREATE TABLE orders (id BIGINT UNSIGNED PRIMARY KEY,
	status VARCHAR(20) NOT NULL DEFAULT 'new', pushed_at DATETIME NULL);
    CREATE TABLE pushes (n INT AUTO_INCREMENT PRIMARY KEY,
	order_id BIGINT UNSIGNED NOT NULL);
    CREATE TRIGGER count_push AFTER UPDATE ON orders FOR EACH ROW
	INSERT INTO pushes (order_id) VALUES (NEW.id);
    INSERT INTO orders (id) SELECT seq FROM seq_1_to_$njobs" ||
    bail_out "cannot create the receiver's tables from its comment"
# shellcheck disable=SC2016 # backquotes of SQL, not of the shell
like "$(sql "SHOW CREATE TABLE jobrun_done")" \
    '`idem_key` varchar\(1536\) CHARACTER SET ascii COLLATE ascii_bin NOT NULL' \
    "the receiver's key column compares byte for byte"

export ORDER_PUSH_TOKEN='Bearer tok-48-receiver'

sql "UPDATE polling_jobs SET type = 'order_push', status = 'pending', attempts = 0,
    next_run_at = NOW(), finished_at = NULL"
run jobrun --type=order_push --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" "0/$njobs" "the receiver took every job: all success"
is "$(sql "SELECT COUNT(*), COUNT(DISTINCT order_id) FROM pushes")" "$njobs	$njobs" \
    "each job's work was done, once"
is "$(sql "SELECT COUNT(*) FROM jobrun_done")" "$njobs" "and recorded under its own key"
# The recorded keys are the headers' (and "#job:ID" for the NULL key).
is "$(sql "SELECT GROUP_CONCAT(idem_key ORDER BY idem_key SEPARATOR ' ') FROM jobrun_done")" \
    "$(python3 -c "import sys
$ENCODE"'
keys = load(sys.argv[1])
want = sorted(encode(k) if k is not None else "#job:%d" % i for i, k in keys.items())
print(" ".join(want))' "$T/keys")" \
    "jobrun_done holds each job's Idempotency-Key"

# A second delivery of every job, as after a runner died between the
# receiver's commit and its mark: success again, no work done twice.
sql "UPDATE polling_jobs SET status = 'pending', attempts = 0,
    next_run_at = NOW(), finished_at = NULL"
run jobrun --type=order_push --max=100 --json
is "$rc/$(jget succeeded <<<"$out")" "0/$njobs" "delivered again: all success"
is "$(sql "SELECT COUNT(*) FROM pushes")/$(sql "SELECT COUNT(*) FROM jobrun_done")" \
    "$njobs/$njobs" "and no job's work was done a second time"

# --- list --json keeps keys apart too ------------------------------------------

# Every job listed, each key exactly as the table holds it (the NUL key
# not cut to "k", which is another job's key).
run jobrun list --json --limit=100
is "$(python3 -c "import sys, json
$ENCODE"'
keys = load(sys.argv[1])
listed = {j["id"]: j["business_key"] for j in json.load(open(sys.argv[2]))["jobs"]}
bad = ["job %d: %r, not %r" % (i, listed.get(i, "missing"), k)
       for i, k in sorted(keys.items())
       if i not in listed or (listed[i] is None) != (k is None)
       or (k is not None and listed[i].encode() != k)]
print(" ".join(bad))' "$T/keys" "$T/stdout")" "" \
    "list --json gives every key exactly (the NUL key whole)"

# --- a key the column stores that is not UTF-8 -------------------------------

# MariaDB's utf8mb4 takes an encoded surrogate (ED A0 80), which no JSON
# text can carry as it is.  The http job must say so, not pass it off as
# a failure to allocate; list --json must still list every job.
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
    created_at, updated_at) VALUES (X'7375723AEDA080', 'web', '{}', NOW(), NOW(), NOW())"
before=$(http_count /ok)
run jobrun --type=web --max=10
last=$(sql "SELECT last_error FROM polling_jobs WHERE HEX(business_key) = '7375723AEDA080'")
like "$last" "business.key.*UTF-8" "a key that is not UTF-8: last_error says so"
unlike "$last" "out of memory" "not \"out of memory?\""
is "$(( $(http_count /ok) - before ))" 0 "and no request goes out with a mangled key"
run jobrun list --json --limit=100
is "$(jpy 'len(d["jobs"])' <"$T/stdout")" "$(sql "SELECT COUNT(*) FROM polling_jobs")" \
    "list --json still lists every job"
