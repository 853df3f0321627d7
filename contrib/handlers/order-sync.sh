#!/bin/sh
# order-sync.sh - an example jobrun exec handler: send one order to a remote
# API.  Keep the shape; replace the curl call with your own work.
#
#   [type.order_sync]
#   handler = exec
#   command = /usr/local/libexec/jobrun/order-sync.sh
#   timeout = 60
#
# What jobrun gives it (HANDLERS in jobrun(7)):
#   stdin             the job's payload as JSON ({} when it is NULL), here
#                     {"order_id":10001}
#   JOB_ID            the job's id
#   JOB_TYPE          its type, order_sync
#   JOB_BUSINESS_KEY  its unique key, such as order_sync:10001.  A job can run
#                     more than once (after a crash, or when its lock expired
#                     while it ran), so hand this key on to whatever can drop
#                     a repeat; here the API's Idempotency-Key header.
#   JOB_ATTEMPT       this attempt, 1 on the first
#   JOB_MAX_ATTEMPTS  the job's max_attempts
#
# What it answers, by its exit status:
#   0      done: the job becomes success
#   75     not now (EX_TEMPFAIL): the job is retried after the backoff delay,
#          and becomes failed once JOB_ATTEMPT reaches JOB_MAX_ATTEMPTS
#   65     never (EX_DATAERR): the job becomes failed at once, no more
#          attempts; "jobrun retry ID" puts it back once the cause is fixed
#   other  like 75: a crash, a program not found (127), a signal, the timeout
#
# Everything it prints, stdout and stderr together, is kept; when the job
# does not succeed, the end of it becomes the job's last_error.  So the last
# line should say why.
#
# Its own settings come from the environment jobrun runs in (the crontab's
# variables, for example):
#   ORDER_API_URL      default https://api.example.com/orders
#   ORDER_API_HEADERS  a file of "Name: value" lines, mode 0600, such as
#                      "Authorization: Bearer ...", so that the token is on
#                      no command line (ps(1) shows those); default
#                      /etc/jobrun/order-api.headers

set -u

api=${ORDER_API_URL:-https://api.example.com/orders}
headers=${ORDER_API_HEADERS:-/etc/jobrun/order-api.headers}

# A missing tool is this host's problem, not the job's: retry later, and the
# message in last_error says what to install.
if command -v jq >/dev/null 2>&1; then
	json=jq
elif command -v python3 >/dev/null 2>&1; then
	json=python3
else
	echo "order-sync: neither jq nor python3 is installed"
	exit 75
fi
command -v curl >/dev/null 2>&1 || { echo "order-sync: curl is not installed"; exit 75; }

payload=$(cat) || exit 75

# positive_int NAME: print the payload's top-level NAME when it is a positive
# integer, else nothing.  jobrun has checked that the payload is valid JSON,
# so a nonzero status means the tool itself failed.
positive_int() {
	if [ "$json" = jq ]; then
		printf '%s' "$payload" | jq -r --arg k "$1" \
		    'if type == "object" then .[$k] else null end |
		     select(type == "number" and . == floor and . > 0)'
	else
		printf '%s' "$payload" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
v = doc.get(sys.argv[1]) if isinstance(doc, dict) else None
if isinstance(v, float) and v.is_integer():
    v = int(v)
if isinstance(v, int) and not isinstance(v, bool) and v > 0:
    print(v)
' "$1"
	fi
}

if ! order_id=$(positive_int order_id); then
	echo "order-sync: job $JOB_ID: $json could not read the payload"
	exit 75
fi
case $order_id in
'' | *[!0-9]*)
	# The same payload will be just as wrong on every attempt: fail now.
	echo "order-sync: job $JOB_ID ($JOB_BUSINESS_KEY): payload has no order_id: $payload"
	exit 65
	;;
esac

echo "order-sync: job $JOB_ID ($JOB_BUSINESS_KEY) attempt $JOB_ATTEMPT/$JOB_MAX_ATTEMPTS: order $order_id"

if [ ! -r "$headers" ]; then
	# Set-up, not data: retried, and last_error tells the operator.
	echo "order-sync: cannot read $headers"
	exit 75
fi

body=$(mktemp) || exit 75
trap 'rm -f "$body"' EXIT

# --max-time stays below the type's timeout, so that a slow API is reported
# here, with a message, rather than killed by jobrun.
code=$(printf '{"order_id":%s}' "$order_id" |
    curl -sS -o "$body" -w '%{http_code}' --max-time 50 -X PUT \
	-H 'Content-Type: application/json' \
	-H "Idempotency-Key: $JOB_BUSINESS_KEY" \
	-H @"$headers" \
	--data-binary @- "$api/$order_id")
rc=$?
reply=$(dd if="$body" bs=300 count=1 2>/dev/null | tr '\n' ' ')
reply=${reply% }

if [ "$rc" -ne 0 ]; then
	# Connection refused, DNS, TLS, timeout: the API may be back later.
	echo "order-sync: order $order_id: curl exit $rc (see above)"
	exit 75
fi
case $code in
2??)
	echo "order-sync: order $order_id: synced (HTTP $code)"
	exit 0
	;;
408 | 425 | 429 | 5??)
	# Busy or broken on their side: try again later.
	echo "order-sync: order $order_id: HTTP $code, will retry: $reply"
	exit 75
	;;
*)
	# Any other answer (404 no such order, 422 rejected) will be the same
	# next time: fail the job now.
	echo "order-sync: order $order_id: HTTP $code, giving up: $reply"
	exit 65
	;;
esac
