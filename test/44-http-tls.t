#!/bin/bash
# handler = http over TLS, against a server whose certificate comes from a
# throwaway CA made with openssl: verification is on by default and fails
# without that CA (a retry, curl's certificate error in last_error), succeeds
# with ca_file or ca_path, and insecure = yes turns it off with a warning on
# stderr at every run that may claim the type.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 26
setup_db
start_http_server --tls

# another CA, which did not sign the server's certificate
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -days 2 -subj '/CN=some other CA' -keyout "$T/other.key" -out "$T/other.pem" \
    2>/dev/null || bail_out "openssl cannot make a second CA"
# a CA directory in OpenSSL's hashed layout
mkdir "$T/capath"
cp "$CA_FILE" "$T/capath/test-ca.pem"
openssl rehash "$T/capath" 2>/dev/null || bail_out "openssl rehash failed"

write_config <<EOF2
[type.noca]
handler = http
url = $HTTPS_URL/ok
insecure = no

[type.wrongca]
handler = http
url = $HTTPS_URL/ok
ca_file = $T/other.pem

[type.withca]
handler = http
url = $HTTPS_URL/ok
ca_file = $CA_FILE

[type.capath]
handler = http
url = $HTTPS_URL/ok
ca_path = $T/capath

[type.tlsoff]
handler = http
url = $HTTPS_URL/ok
insecure = yes
EOF2
for t in noca wrongca withca capath tlsoff; do
	insert_job "$t" "$t"
done
col() {
	sql "SELECT $2 FROM polling_jobs WHERE business_key = '$1'"
}
warning='TLS verification is off'

verify_cert() {
	openssl verify -CAfile "$CA_FILE" "$T/tls/server.pem" >/dev/null 2>&1
}
# The fixture itself, checked before anything depends on it (not a test).
verify_cert || bail_out "the test certificate does not verify against the test CA"

run jobrun --type=noca --json
is "$rc" 1 "without ca_file: the run exits 1"
is "$(jget retried <<<"$out")" 1 "the job is retried"
is "$(col noca status)/$(col noca attempts)" pending/1 "pending, attempts 1"
like "$(col noca last_error)" '^curl error: .*(SSL certificate problem|certificate)' \
    "last_error is curl's certificate error"
between "$(col noca 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)')" 109 120 \
    "with the normal backoff"
unlike "$err" "$warning" "no warning when verification is on"

run jobrun --type=wrongca --json
is "$(jget retried <<<"$out")" 1 "ca_file of another CA: retried"
like "$(col wrongca last_error)" '^curl error: .*(SSL certificate problem|certificate)' \
    "last_error is curl's certificate error"
is "$(http_count --tls)" 0 "no request got past the failed handshakes"

run jobrun --type=withca --json
is "$rc" 0 "with ca_file = the test CA: the run exits 0"
is "$(col withca status)" success "the job is success"
unlike "$err" "$warning" "no warning"

run jobrun --type=capath --json
is "$rc" 0 "with ca_path = a hashed directory holding the test CA: exits 0"
is "$(col capath status)" success "the job is success"

run jobrun --type=tlsoff --json
is "$rc" 0 "insecure = yes: the run exits 0"
is "$(col tlsoff status)" success "the job is success"
like "$err" "$warning" "stderr warns that TLS verification is off"
like "$err" tlsoff "the warning names the type"

run jobrun --type=tlsoff --json
is "$(jget claimed <<<"$out")" 0 "a run with nothing due for the insecure type"
like "$err" "$warning" "warns again: every run that may claim the type"
run jobrun --json
like "$err" "$warning" "a run over all types warns too"
run jobrun --type=withca --json
unlike "$err" "$warning" "a run restricted to another type does not warn"

is "$(http_count --tls /ok)" 3 "three requests reached the server"
is "$(http_req --tls key=withca method)" POST "over TLS, the same request"
is "$(http_req --tls key=withca header:Idempotency-Key)" withca "with the same headers"
is "$(http_req --tls key=withca json:business_key)" withca "and the same body"
