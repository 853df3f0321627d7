#!/bin/bash
# handler = http keeps one connection per type for the whole run: 50 jobs to
# one server use one TCP connection (the server numbers each connection it
# accepts), and two when jobs of two types take turns.
. "${0%/*}/lib.sh"
. "${0%/*}/http-lib.sh"

plan 11
setup_db
start_http_server

write_config <<EOF2
[type.reuse]
handler = http
url = $HTTP_URL/ok

[type.other]
handler = http
url = $HTTP_URL/status/201
EOF2

sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
    SELECT CONCAT('r:', seq), 'reuse', JSON_OBJECT('n', seq), NOW(), NOW(), NOW()
    FROM seq_1_to_50"

run jobrun --max=50 --json
is "$rc" 0 "50 jobs in one run: exits 0"
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" 50/50 "claimed 50, succeeded 50"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 50 "all 50 are success"
is "$(http_count /ok)" 50 "the server got 50 requests"
is "$(http_py 'print(len({json.loads(r["body"])["business_key"] for r in reqs}))')" 50 \
    "one for each job"
conns=$(http_conns)
diag "connections for 50 jobs: $conns"
is "$conns" 1 "they came over one TCP connection"

# two types taking turns: each keeps its own connection
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
    SELECT CONCAT('t:', seq), IF(seq % 2, 'reuse', 'other'), NULL, NOW(), NOW(), NOW()
    FROM seq_1_to_50"
: >"$(http_file log)"
run jobrun --max=50 --json
is "$rc" 0 "50 jobs of two types taking turns: exits 0"
is "$(jget succeeded <<<"$out")" 50 "succeeded 50"
is "$(http_count /ok)/$(http_count /status/201)" 25/25 "25 requests for each type"
ok "in the order claimed" test "$(http_req 1 path)$(http_req 2 path)" = "/ok/status/201"
conns=$(http_conns)
diag "connections for 50 jobs of two types: $conns"
is "$conns" 2 "they came over two TCP connections, one per type"
