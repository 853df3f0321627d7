#!/bin/sh
# resumable-walk.sh - an example resumable jobrun exec handler: walk the rows
# of a table by id, in batches, saving its progress after each batch, so that
# a crash, a timeout or a deploy in the middle costs at most one batch.
#
#   resumable-walk.sh [TABLE [BATCH]]     default: users 1000
#
# It is made for the chunk jobs of a fan-out (RESUMABLE JOBS in jobrun(7)):
#
#   jobrun enqueue --type=import --key-prefix=import:users \
#       --range=1-100000000 --chunk=100000
#
# makes 1000 jobs whose payloads are {"from":1,"to":100000}, ... ; each job
# walks the ids FROM..TO of TABLE that exist, BATCH at a time, in id order.
#
#   [type.import]
#   handler = exec
#   command = /usr/local/libexec/jobrun/resumable-walk.sh users 1000
#   timeout = 3600
#
# It needs sql/002_checkpoint.sql applied to the job table.  Without it
# there is no fd 3: the walk still works, but every attempt starts again at
# FROM.
#
# What jobrun gives it:
#   stdin                 the payload, {"from":N,"to":M} (other keys ignored)
#   JOBRUN_CHECKPOINT_FD  3: each line of JSON written to fd 3 is stored in
#                         the job's row at once (and renews the job's lock)
#   JOBRUN_CHECKPOINT     the last line stored, on a later attempt; here
#                         {"last_id":N}: every id up to N is done
#
# What it answers:
#   0       every id of FROM..TO is done: the job becomes success
#   99      not now: the database is busy (an error that means "try again
#           later", or more than WALK_MAX_RUNNING threads running), or the
#           time slice WALK_SLICE is used up.  The last line of output is
#           the delay in seconds.  No attempt is spent; after a saved
#           checkpoint this is progress, otherwise a snooze, of which jobrun
#           allows [run] max_snoozes in a row.
#   65      the payload has no numeric "from" and "to", or a bad TABLE or
#           BATCH: retrying will not help
#   75      any other failure (a database error, the work failing): retry
#           with backoff; the next attempt resumes from the checkpoint
#
# Its settings come from the environment jobrun runs in (the crontab's
# variables, for example); the database credentials never go on a command
# line, where ps(1) would show them:
#   WALK_DEFAULTS_FILE  required: an option file for the mariadb client,
#                       mode 0600, owned by the user that runs jobrun:
#                         [client]
#                         user = walker
#                         password = ...
#                         socket = /run/mysqld/mysqld.sock
#                         [mysql]
#                         database = app
#   WALK_WORK           a program to run for each batch instead of the
#                       placeholder below, with the batch's ids on its
#                       standard input, one per line
#   WALK_BUSY_DELAY     seconds to wait when the database is busy (30)
#   WALK_MAX_RUNNING    snooze when the server's Threads_running is above
#                       this (0, the default: never look)
#   WALK_SLICE          stop after this many seconds, saved progress and
#                       all, and let jobrun run the job again at once,
#                       without spending an attempt; keep it below the
#                       type's timeout (0, the default: no slices)
#
# The work must be idempotent: after a crash the batch after the last
# checkpoint is done a second time.

set -u

table=${1:-users}
batch=${2:-1000}
busy_delay=${WALK_BUSY_DELAY:-30}
max_running=${WALK_MAX_RUNNING:-0}
slice=${WALK_SLICE:-0}

is_number() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
}

case $table in
'' | *[!A-Za-z0-9_]*)
	echo "resumable-walk: bad table name \"$table\" (letters, digits, _)"
	exit 65
	;;
esac
if ! is_number "$batch" || [ "$batch" -lt 1 ]; then
	echo "resumable-walk: bad batch size \"$batch\""
	exit 65
fi
for n in "$busy_delay" "$max_running" "$slice"; do
	if ! is_number "$n"; then
		echo "resumable-walk: WALK_BUSY_DELAY, WALK_MAX_RUNNING and WALK_SLICE take a number of seconds or threads, not \"$n\""
		exit 65
	fi
done

# A host without the client or the option file is this host's problem, not
# the job's: retry later, and last_error says why.
if command -v mariadb >/dev/null 2>&1; then
	client=mariadb
elif command -v mysql >/dev/null 2>&1; then
	client=mysql
else
	echo "resumable-walk: neither mariadb nor mysql (the client) is installed"
	exit 75
fi
cnf=${WALK_DEFAULTS_FILE:-}
if [ -z "$cnf" ] || [ ! -r "$cnf" ]; then
	echo "resumable-walk: WALK_DEFAULTS_FILE must name a readable option file for $client (it is \"$cnf\")"
	exit 75
fi

# The value of "KEY":NUMBER in the JSON on standard input, or nothing.
# jobrun and MariaDB write the payload compactly; MySQL adds blanks.
json_number() {
	tr -d ' \t\r\n' | sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p"
}

payload=$(cat) || exit 75
from=$(printf '%s' "$payload" | json_number from)
to=$(printf '%s' "$payload" | json_number to)
if [ -z "$from" ] || [ -z "$to" ] || [ "$from" -gt "$to" ]; then
	echo "resumable-walk: the payload needs \"from\" and \"to\", from <= to: $payload"
	exit 65
fi

# Where to start: after the last checkpoint of this job, if any.
last=$((from - 1))
saved=$(printf '%s' "${JOBRUN_CHECKPOINT:-}" | json_number last_id)
if [ -n "$saved" ] && [ "$saved" -gt "$last" ]; then
	last=$saved
	echo "resumable-walk: attempt ${JOB_ATTEMPT:-?} resumes after id $last"
fi

# Checkpoints need fd 3, which jobrun opens only when the job table has
# the checkpoint column (sql/002_checkpoint.sql).
checkpoints=no
[ "${JOBRUN_CHECKPOINT_FD:-}" = 3 ] && checkpoints=yes

# Run one statement; its rows, tab-separated, go to standard output.  On
# an error, write it to standard error and return 99 when it means the
# database is busy or away for a while, 75 otherwise.  query runs in a
# command substitution, a subshell, so the caller acts on that status.
query() {
	if out=$("$client" --defaults-file="$cnf" --batch --skip-column-names \
	    -e "$1" 2>&1); then
		printf '%s\n' "$out"
		return 0
	fi
	printf 'resumable-walk: %s\n' "$out" >&2
	code=$(printf '%s\n' "$out" | sed -n 's/^ERROR \([0-9][0-9]*\).*/\1/p')
	case $code in
	# too many connections, server shutdown, max_user_connections, lock
	# wait timeout, deadlock, connection killed, cannot connect, server
	# gone away, connection lost
	1040 | 1053 | 1203 | 1205 | 1213 | 1927 | 2002 | 2003 | 2006 | 2013)
		return 99 ;;
	esac
	return 75
}

# Not now: say why, then the delay alone on the last line, and exit 99.
snooze() {
	echo "resumable-walk: $1; again in $busy_delay s (ids after $last to go)"
	echo "$busy_delay"
	exit 99
}

# End the attempt after a failed query (its status is $1).
give_up() {
	[ "$1" -eq 99 ] && snooze "the database is busy or away"
	exit 75
}

# THE WORK.  This is a placeholder: replace it with what each row needs,
# or set WALK_WORK.  It gets the batch's ids on standard input, one per
# line, and returns 0 only when all of them are done.  It must be
# idempotent: a batch cut off by a crash is done again on the next attempt.
work() {
	if [ -n "${WALK_WORK:-}" ]; then
		"$WALK_WORK"
	else
		cat >/dev/null
	fi
}

[ "$slice" -gt 0 ] && started=$(date +%s)
while :; do
	if [ "$max_running" -gt 0 ]; then
		status=$(query "SHOW GLOBAL STATUS LIKE 'Threads_running'") ||
		    give_up $?
		running=$(printf '%s\n' "$status" | cut -f 2)
		if is_number "$running" && [ "$running" -gt "$max_running" ]; then
			snooze "Threads_running is $running, above $max_running"
		fi
	fi
	ids=$(query "SELECT id FROM \`$table\` WHERE id > $last AND id <= $to ORDER BY id LIMIT $batch") ||
	    give_up $?
	[ -n "$ids" ] || break
	if ! printf '%s\n' "$ids" | work; then
		echo "resumable-walk: the work failed on ids after $last"
		exit 75
	fi
	count=$(printf '%s\n' "$ids" | wc -l)
	last=$(printf '%s\n' "$ids" | tail -n 1)
	[ "$checkpoints" = yes ] && echo "{\"last_id\":$last}" >&3
	[ $((count)) -lt "$batch" ] && break
	# A slice needs checkpoints: without them the next attempt would
	# start again at FROM.
	if [ "$slice" -gt 0 ] && [ "$checkpoints" = yes ] &&
	    [ $(($(date +%s) - started)) -ge "$slice" ]; then
		echo "resumable-walk: $slice s slice used up after id $last; progress saved"
		echo 0
		exit 99
	fi
done
echo "resumable-walk: ids $from..$to of $table done (last id $last)"
exit 0
