#!/bin/bash
# A busy table (a failure other job runners' users reported: runs that
# give up, and jobs run twice, when several programs share the table).
# Runs started again and again as cron would (--jobs=1 and --jobs=4),
# beside two copies of the seed's own PHP loop (bench/seed-loop.php:
# SELECT ... FOR UPDATE under REPEATABLE READ, the design jobrun
# replaces), an enqueuer, `purge` and `report`, until every job is done:
# every job is done, each job jobrun ran was claimed by it alone and run
# once, and no jobrun run exits 75, 70 or 69.
. "${0%/*}/lib.sh"

plan 5
setup_db
# Hundreds of runs, each seconds of CPU under valgrind: what this file
# checks (who claims what) is the same in every build.
if under_valgrind; then
	skip 5 "hundreds of runs beside PHP: not under valgrind"
	exit 0
fi
n=600 more=200
command -v php >/dev/null && php -m 2>/dev/null | grep -qi pdo_mysql ||
    bail_out "php-cli and php-mysql are needed (contrib/install-deps)"
write_config <<EOF2
[run]
batch_size = 50
max_seconds = 20

[type.work]
handler = exec
command = $HANDLERS/append-id $T/ran
EOF2
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('b', seq), 'work', NOW(), NOW(), NOW() FROM seq_1_to_$n"

# pending: a job is due, or the enqueuer is still at work.  (A job the
# PHP loop put back after a deadlock on its own success write is due two
# minutes later, and one whose PHP process died on a deadlock stays
# processing for its 5-minute lock: the seed's design, not waited for.)
pending() {
	[ -e "$T/enqueuing" ] ||
	    [ "$(sql "SELECT COUNT(*) FROM polling_jobs
	              WHERE status = 'pending' AND next_run_at <= NOW()")" != 0 ]
}
# runner N ARGS...: jobrun ARGS again and again while jobs are left,
# each run's exit status appended to $T/rcs.N
runner() {
	local n=$1
	shift
	while pending; do
		jobrun "$@" -q 2>>"$T/err.$n"
		echo "$?" >>"$T/rcs.$n"
		sleep 0.1	# a run's pace, not a wait for a state
	done
}
# seed_loop N: the seed's loop, invoked again and again as cron would
seed_loop() {
	while pending; do
		BENCH_SOCKET=$JOBRUN_TEST_SOCKET BENCH_DB=$DB \
		    BENCH_CLAIMS=$T/php-claims php "$TOP/bench/seed-loop.php" \
		    >>"$T/php.$1" 2>&1
	done
}
# enqueuer: $more more jobs, one at a time
enqueuer() {
	local i
	for i in $(seq "$more"); do
		[ "$i" = "$more" ] && rm -f "$T/enqueuing"
		jobrun enqueue --type=work --key="e$i" >/dev/null 2>>"$T/err.enq" ||
		    echo "enqueue $i: $?" >>"$T/err.enq"
	done
}
others() {	# purge and report, again and again
	while pending; do
		jobrun purge --status=success --older-than=1d >/dev/null \
		    2>>"$T/err.others" ||
		    echo "purge: $?" >>"$T/err.others"
		jobrun report --html="$T/report.html" >/dev/null \
		    2>>"$T/err.others" || echo "report: $?" >>"$T/err.others"
	done
}
pids=()
: >"$T/enqueuing"
runner 1 --jobs=1 & pids+=($!)
runner 2 --jobs=4 & pids+=($!)
runner 3 --jobs=1 & pids+=($!)
seed_loop 1 & pids+=($!)
seed_loop 2 & pids+=($!)
enqueuer & pids+=($!)
others & pids+=($!)
defer_kill "${pids[@]}"
for p in "${pids[@]}"; do
	wait "$p"
done
# The enqueuer may have finished after the last runs: drain the rest.
jobrun -q 2>>"$T/err.1"; echo "$?" >>"$T/rcs.1"

is "$(cat "$T"/rcs.* | sort -u | tr '\n' ' ')" "0 " \
    "every jobrun run exited 0 ($(cat "$T"/rcs.* | wc -l) runs)"
is "$(cat "$T"/err.* 2>/dev/null)" "" "and none of them, nor enqueue, purge or report, printed an error"
is "$(sql "SELECT COUNT(*) FROM polling_jobs
           WHERE status = 'success' OR (status = 'pending' AND
                 next_run_at > NOW() AND last_error LIKE '%Deadlock%') OR
                 (status = 'processing' AND locked_by NOT LIKE '%@%')")" \
    $((n + more)) \
    "the $((n + more)) jobs are done, but those the PHP loop left after a deadlock of its own"
# Every claim is one program's: a job's attempts are the claims jobrun
# made of it (a handler run each) plus those the PHP loops made (each
# logs its claims).  The seed's loop may claim its own job twice (a
# deadlock on its success write makes it retry a job it did, and then
# jobrun may run that retry): that is its flaw, and still adds up.
touch "$T/php-claims"
mismatch=$(sql "SELECT id, attempts FROM polling_jobs" | python3 -c '
import sys, collections
claims = collections.Counter()
for f in sys.argv[1:]:
    claims.update(l.strip() for l in open(f) if l.strip())
for line in sys.stdin:
    i, attempts = line.split()
    if int(attempts) != claims[i]:
        print(i, attempts, claims[i])' "$T/ran" "$T/php-claims")
is "$mismatch" "" "every job's attempts are the claims of it that jobrun and the PHP loops made: none claimed twice at once"
is "$(sort "$T/ran" | uniq -d | wc -l)" 0 "no jobrun handler ran twice"
diag "jobrun ran $(wc -l <"$T/ran") of them, the PHP loops the rest"
