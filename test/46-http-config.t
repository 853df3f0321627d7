#!/bin/bash
# handler = http: configuration mistakes exit 78 before any job is claimed,
# with a message that names the key (and file:line where there is one).
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 43
setup_db
start_http_server
insert_job cfg:1 web "'{\"a\": 1}'"
unset JOBRUN_TEST_UNSET

# config_error DESC ERE <<EOF2: a [type.web] config made of stdin; the run
# exits 78, its message matches ERE, and the job was not touched
config_error() {
	write_config
	run jobrun
	is "$rc" 78 "$1: exits 78"
	like "$err" "$2" "$1: the message names it"
}

# line 6 is the first line after the [database] section write_config adds
config_error "missing url" "url" <<EOF2
[type.web]
handler = http
method = POST
EOF2
config_error "empty url" "url" <<EOF2
[type.web]
handler = http
url =
EOF2
config_error "an ftp:// url" "url.*ftp://|ftp://.*url" <<EOF2
[type.web]
handler = http
url = ftp://127.0.0.1/jobs
EOF2
config_error "a url without a scheme" "url" <<EOF2
[type.web]
handler = http
url = 127.0.0.1/jobs
EOF2
config_error "an unknown key" "$CONF:8.*retries|retries.*$CONF:8" <<EOF2
[type.web]
handler = http
retries = 3
url = $HTTP_URL/ok
EOF2
config_error "a header without a colon" "$CONF:8.*header|header.*$CONF:8" <<EOF2
[type.web]
handler = http
header = X-Token abc
url = $HTTP_URL/ok
EOF2
config_error "header_env naming an unset variable" "JOBRUN_TEST_UNSET" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
header_env = Authorization: JOBRUN_TEST_UNSET
EOF2
# Only a run that may claim the type reads header_env: enqueue, status and
# a run of another type do not need the variable.
write_config <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
header_env = Authorization: JOBRUN_TEST_UNSET

[type.other]
handler = noop
EOF2
run jobrun enqueue --type=web --key=cfg:enqueue
is "$rc/$err" 0/ "header_env unset: enqueue of the type works, no complaint"
run jobrun status
is "$rc" 0 "status works"
run jobrun --type=other --json
is "$rc/$(jget claimed <<<"$out")" 0/0 "a run of another type works"
sql "DELETE FROM polling_jobs WHERE business_key = 'cfg:enqueue'"
config_error "header_env without a colon" "header_env" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
header_env = JOBRUN_TEST_TOKEN
EOF2
config_error "method = DELETE" "method.*DELETE|DELETE.*method" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
method = DELETE
EOF2
config_error "a missing header_file" "$T/no-such-headers" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
header_file = $T/no-such-headers
EOF2
printf 'X-Good: 1\nthis line has no colon\n' >"$T/bad-headers"
config_error "a header_file line without a colon" "$T/bad-headers:2" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
header_file = $T/bad-headers
EOF2
config_error "timeout = 0" "timeout" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
timeout = 0
EOF2
config_error "timeout = 86401" "timeout" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
timeout = 86401
EOF2
config_error "connect_timeout = abc" "connect_timeout" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
connect_timeout = abc
EOF2
config_error "max_response = 16777217" "max_response" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
max_response = 16777217
EOF2
config_error "insecure = maybe" "insecure" <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
insecure = maybe
EOF2
config_error "header given with an exec handler" "header" <<EOF2
[type.web]
handler = exec
command = /bin/true
header = X-A: 1
EOF2

is "$(field 1 status)/$(field 1 attempts)" pending/0 "the job was never claimed"
is "$(http_count)" 0 "and no request was sent"

# the limits themselves are fine
export JOBRUN_TEST_TOKEN=abc
write_config <<EOF2
[type.web]
handler = http
url = $HTTP_URL/ok
method = PUT
timeout = 86400
connect_timeout = 1
max_response = 16777216
insecure = no
header_env = X-Token: JOBRUN_TEST_TOKEN
EOF2
run jobrun --json
is "$rc" 0 "a good config at the limits runs"
is "$(field 1 status)" success "the job is success"
is "$(http_req 1 method)" PUT "method = PUT sends PUT"
is "$(http_req 1 header:X-Token)" abc "header_env"
