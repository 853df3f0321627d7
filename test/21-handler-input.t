#!/bin/bash
# What a handler gets: the payload on stdin (a NULL payload as {}), the job in
# JOB_* variables, jobrun's own environment minus JOBRUN_DB_PASSWORD.
. "${0%/*}/lib.sh"

plan 15
setup_db
mkdir "$T/dump"
write_config <<EOF2
[type.dump]
handler = exec
command = $HANDLERS/dump-job $T/dump
timeout = 10
EOF2

key="order:1 'ü' \"q\""
jobrun enqueue --type=dump --key="$key" --max-attempts=7 \
    --payload='{"order_id": 10001, "name": "Zoë", "tags": ["a", "b"]}' >/dev/null
insert_job null:1 dump NULL
insert_job retry:1 dump "'[1,2]'" attempts 2

export JOBRUN_TEST_MARKER=hello
run env JOBRUN_DB_PASSWORD= "$JOBRUN" --config="$CONF" --json
is "$rc" 0 "the run exits 0"
is "$(jget succeeded <<<"$out")" 3 "three jobs succeeded"

same_json() {
	python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1])) != json.loads(sys.argv[2]))' "$1" "$2"
}
ok "the payload arrives on stdin" \
    same_json "$T/dump/1.stdin" '{"order_id": 10001, "name": "Zoë", "tags": ["a", "b"]}'
ok "a NULL payload arrives as {}" same_json "$T/dump/2.stdin" '{}'
is "$(tr -d ' \n' <"$T/dump/2.stdin")" "{}" "exactly {}"
ok "an array payload arrives as is" same_json "$T/dump/3.stdin" '[1,2]'

envof() {
	sed -n "s/^$2=//p" "$T/dump/$1.env"
}
is "$(envof 1 JOB_ID)" 1 "JOB_ID"
is "$(envof 1 JOB_TYPE)" dump "JOB_TYPE"
is "$(envof 1 JOB_BUSINESS_KEY)" "$key" "JOB_BUSINESS_KEY, quotes and UTF-8 intact"
is "$(envof 1 JOB_ATTEMPT)" 1 "JOB_ATTEMPT is 1 on the first attempt"
is "$(envof 1 JOB_MAX_ATTEMPTS)" 7 "JOB_MAX_ATTEMPTS"
is "$(envof 3 JOB_ATTEMPT)" 3 "JOB_ATTEMPT counts earlier attempts"
is "$(envof 1 JOBRUN_TEST_MARKER)" hello "jobrun's environment is passed on"
is "$(grep -c '^JOBRUN_DB_PASSWORD=' "$T/dump/1.env")" 0 \
    "JOBRUN_DB_PASSWORD is not passed on"
is "$(envof 2 JOB_BUSINESS_KEY)" null:1 "each job gets its own variables"
