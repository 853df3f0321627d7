# http-lib.sh - a real HTTP server for the http handler tests; source it
# after lib.sh and setup_db (it works in $T).
#
#   start_http_server          test/http-server.py on 127.0.0.1; sets HTTP_URL
#   start_http_server --tls    the same over TLS with a throwaway CA; sets
#                              HTTPS_URL (https://localhost:PORT) and CA_FILE
#   http_requests [--tls]      the request log, one JSON object a line
#   http_count [--tls] [PATH]  how many requests (whose path starts with PATH)
#   http_conns [--tls]         how many distinct TCP connections they used
#   http_req [--tls] SEL WHAT  one thing about one request; SEL is N (the
#                              Nth, -1 the last), key=BUSINESS_KEY or
#                              path=PREFIX (the last such request); WHAT is
#                              method, path, conn, body, header:NAME,
#                              json:KEY (of the body; strings unquoted) or
#                              jtype:KEY (object, array, string, number...).
#                              Prints MISSING when there is no such thing.
#   free_port                  a TCP port on 127.0.0.1 that nobody listens on
#
# The server answers as the path says (see test/http-server.py), so a test
# points each [type.NAME] url at the behaviour it wants.

# http_file [--tls] SUFFIX: the server's file of that kind
http_file() {
	if [ "$1" = --tls ]; then
		printf '%s/https.%s' "$T" "$2"
	else
		printf '%s/http.%s' "$T" "$1"
	fi
}

# make_test_ca: a CA and a certificate for localhost and 127.0.0.1 in $T/tls
make_test_ca() {
	local d=$T/tls
	local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
	mkdir -p "$d" || return 1
	printf '%s\n' 'basicConstraints = critical, CA:FALSE' \
	    'keyUsage = critical, digitalSignature, keyEncipherment' \
	    'extendedKeyUsage = serverAuth' \
	    'subjectAltName = DNS:localhost, IP:127.0.0.1' \
	    'subjectKeyIdentifier = hash' \
	    'authorityKeyIdentifier = keyid, issuer' >"$d/server.ext"
	openssl req -x509 "${ec[@]}" -days 2 -subj '/CN=jobrun test CA' \
	    -addext 'basicConstraints = critical, CA:TRUE' \
	    -addext 'keyUsage = critical, keyCertSign, cRLSign' \
	    -keyout "$d/ca.key" -out "$d/ca.pem" 2>"$d/openssl.err" &&
	openssl req "${ec[@]}" -subj /CN=localhost \
	    -keyout "$d/server.key" -out "$d/server.csr" 2>>"$d/openssl.err" &&
	openssl x509 -req -days 2 -in "$d/server.csr" -CA "$d/ca.pem" \
	    -CAkey "$d/ca.key" -CAcreateserial -extfile "$d/server.ext" \
	    -out "$d/server.pem" 2>>"$d/openssl.err"
}

# shellcheck disable=SC2120 # arguments are optional
start_http_server() {
	local tls='' pid port
	if [ "${1:-}" = --tls ]; then
		tls=--tls
		make_test_ca || bail_out "openssl cannot make a test CA: $(cat "$T/tls/openssl.err")"
		CA_FILE=$T/tls/ca.pem
		export CA_FILE
	fi
	python3 "$TOP/test/http-server.py" \
	    --port-file "$(http_file $tls port)" --log "$(http_file $tls log)" \
	    ${tls:+--cert "$T/tls/server.pem" --key "$T/tls/server.key"} \
	    </dev/null >/dev/null 2>"$(http_file $tls err)" &
	pid=$!
	defer "kill $pid"
	for _ in $(seq 100); do
		[ -s "$(http_file $tls port)" ] && break
		proc_gone "$pid" && break
		sleep 0.1
	done
	port=$(cat "$(http_file $tls port)" 2>/dev/null)
	[[ $port =~ ^[0-9]+$ ]] ||
	    bail_out "the test HTTP server did not start: $(cat "$(http_file $tls err)")"
	if [ -n "$tls" ]; then
		HTTPS_URL=https://localhost:$port
		export HTTPS_URL
	else
		HTTP_URL=http://127.0.0.1:$port
		export HTTP_URL
	fi
}

# shellcheck disable=SC2120
http_requests() {
	cat "$(http_file "$@" log)"
}

# http_py [--tls] CODE ARG...: run python CODE with reqs, the parsed log
http_py() {
	local log
	if [ "$1" = --tls ]; then
		log=$(http_file --tls log)
		shift
	else
		log=$(http_file log)
	fi
	python3 -c '
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
args = sys.argv[2:]
'"$1" "$log" "${@:2}"
}

# shellcheck disable=SC2120
http_count() {
	local tls=
	[ "${1:-}" = --tls ] && tls=--tls && shift
	http_py $tls 'print(sum(r["path"].startswith(args[0]) for r in reqs))' "${1:-}"
}

# shellcheck disable=SC2120
http_conns() {
	http_py "$@" 'print(len({r["conn"] for r in reqs}))'
}

http_req() {
	local tls=
	[ "$1" = --tls ] && tls=--tls && shift
	http_py $tls '
def key_of(r):
    try:
        return json.loads(r["body"]).get("business_key")
    except Exception:
        return None
sel, what = args
if sel.startswith("key="):
    found = [r for r in reqs if key_of(r) == sel[4:]]
elif sel.startswith("path="):
    found = [r for r in reqs if r["path"].startswith(sel[5:])]
else:
    n = int(sel)
    found = [reqs[n - 1 if n > 0 else n]] if -len(reqs) <= n <= len(reqs) and n else []
if not found:
    print("MISSING"); sys.exit(1)
r = found[-1]
try:
    if what.startswith("header:"):
        v = r["headers"][what[7:].lower()]
    elif what.startswith("json:"):
        v = json.loads(r["body"])[what[5:]]
    elif what.startswith("jtype:"):
        v = json.loads(r["body"])[what[6:]]
        v = {dict: "object", list: "array", str: "string", bool: "boolean",
             type(None): "null"}.get(type(v), "number")
    else:
        v = r[what]
except (KeyError, ValueError, TypeError):
    print("MISSING"); sys.exit(1)
print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2"
}

free_port() {
	python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}
