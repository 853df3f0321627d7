#!/bin/bash
# jobrun on a real 3-node MariaDB Galera cluster.
#
#  1. jobrun check against node 2 reports Galera (wsrep_on).
#  2. Exactly once: JOBS jobs (default 3000) enqueued on node 1 and drained
#     by two runners on each of the three nodes at once.  Every job ends
#     success at attempt 1, its handler ran exactly once, nothing is left
#     processing, the three nodes hold the same rows, and no runner gave up
#     on a certification conflict (error 1213).  Conflicts and throughput
#     are reported as diagnostics.
#  3. Chaos: runners on all nodes SIGKILLed at random and started again
#     until the queue drains: none lost, none stuck, attempts never above
#     max_attempts, a poison job failed after its attempts.
#  4. --single takes GET_LOCK, which is node-local on Galera: a second
#     --single runner on node 1 skips, one on node 2 runs alongside; the
#     row claims stay exclusive (the two ran different jobs).
#  5. Flow control: concurrency = 3 and rate = 10/s hold with two runners
#     (one --jobs=4) on each node, from the handlers' own records.
#  6. Waiting runners (--wait), one on each node, run jobs inserted on all
#     three nodes while they wait, each once, and exit 0 on SIGTERM.
#
# The cluster: GALERA_DIR names one started by `test/galera/cluster start`
# (make galera-check does that); without it this file starts its own in a
# scratch directory and stops it at exit.  Runs as root (the servers then
# run as an unprivileged user, see test/galera/cluster) or as anyone who
# can run mariadbd.
#
# Environment: GALERA_DIR, GALERA_TEST_JOBS (3000), GALERA_CHAOS_JOBS (1000),
# GALERA_FLOW_JOBS (45),
# JOBRUN (the binary, default ./jobrun).

here=$(cd "${0%/*}" && pwd)
cluster=$here/cluster
own_cluster=
if [ -z "${GALERA_DIR:-}" ]; then
	GALERA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/jobrun-galera.XXXXXX") ||
	    { echo "Bail out! cannot create a directory for the cluster"; exit 255; }
	own_cluster=$GALERA_DIR
	if ! "$cluster" start "$GALERA_DIR" >/dev/null; then
		"$cluster" stop "$GALERA_DIR"
		rm -rf "$GALERA_DIR"
		echo "Bail out! cannot start a Galera cluster"
		exit 255
	fi
fi
GALERA_DIR=$(cd "$GALERA_DIR" && pwd)
for n in 1 2 3; do
	SOCK[n]=$GALERA_DIR/node$n/mysqld.sock
done
# lib.sh's sql, setup_db and write_config work on node 1
export JOBRUN_TEST_SOCKET=${SOCK[1]}
# shellcheck source=test/lib.sh
. "$here/../lib.sh"
if [ -n "$own_cluster" ]; then
	defer "'$cluster' stop '$own_cluster'; rm -rf '$own_cluster'"
fi

jobs=${GALERA_TEST_JOBS:-3000}
chaos_jobs=${GALERA_CHAOS_JOBS:-1000}
plan 78

# sqln N STATEMENTS: sql on node N, after it has applied every write the
# cluster committed before (a causal read: wsrep_sync_wait)
sqln() {
	mariadb --no-defaults -S "${SOCK[$1]}" -uroot -N -B "$DB" -e \
	    "SET SESSION wsrep_sync_wait = 1; $2"
}
# wsrep_counter NAME: a wsrep status counter summed over the nodes
wsrep_counter() {
	local n s=0 v
	for n in 1 2 3; do
		v=$(mariadb --no-defaults -S "${SOCK[$n]}" -uroot -N -B -e \
		    "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2)
		s=$((s + ${v:-0}))
	done
	printf '%s' "$s"
}
# node_configs <<EOF ... EOF: $T/nodeN.conf for node N = [database] for
# that node, then standard input
node_configs() {
	local n body
	body=$(cat)
	for n in 1 2 3; do
		{
			printf '[database]\nsocket = %s\nuser = root\n' "${SOCK[$n]}"
			printf 'database = %s\n\n%s\n' "$DB" "$body"
		} >"$T/node$n.conf"
	done
}
# fingerprint N: a digest of the job rows as node N has them
fingerprint() {
	sqln "$1" "SELECT COUNT(*), SUM(CRC32(CONCAT_WS(',', id, status,
	    attempts, IFNULL(locked_by, '-'), IFNULL(last_error, '-'))))
	    FROM polling_jobs"
}
left() {
	sql "SELECT COUNT(*) FROM polling_jobs
	     WHERE status IN ('pending', 'processing')"
}

is "$(mariadb --no-defaults -S "${SOCK[2]}" -uroot -N -B -e \
    "SELECT @@wsrep_on, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
     WHERE VARIABLE_NAME = 'wsrep_cluster_size'")" "1	3" \
    "node 2 is in a Galera cluster of 3"

setup_db
# The attempt history (sql/010_attempts.sql): each outcome's row is
# written in its outcome's transaction, on Galera too.
for f in 001_type_pick.sql 002_checkpoint.sql 010_attempts.sql; do
	mariadb --no-defaults -S "${SOCK[1]}" -uroot "$DB" <"$TOP/sql/$f" ||
	    bail_out "cannot load sql/$f"
done

# --- 1. check ----------------------------------------------------------------

node_configs <<EOF
[type.bulk]
handler = noop
EOF
run jobrun_raw check --config="$T/node2.conf"
is "$rc" 0 "jobrun check on node 2 exits 0 (schema replicated from node 1)"
like "$out" "(^|
)advice +Galera \(wsrep_on\)" "and reports Galera (wsrep_on) as advice"

# --- 2. exactly once, six runners on three nodes ----------------------------

node_configs <<EOF
[run]
batch_size = 1000000
max_seconds = 300
lock_seconds = 300

[type.bulk]
handler = exec
command = $HANDLERS/append-id $T/ids
timeout = 30
EOF
# exactly_once LABEL [JOBRUN-ARGS...]: the round, its runners started with
# the arguments given (13 tests)
exactly_once() {
	local label=$1
	shift
	extra=("$@")
	sql "DELETE FROM polling_jobs"
	rm -f "$T"/run.*
	sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('bulk:', seq), 'bulk', JSON_OBJECT('n', seq), NOW(),
	        NOW(), NOW() FROM seq_1_to_$jobs"
	[ -z "$levels" ] || sql "UPDATE polling_jobs SET priority = id % $levels"
	[ -z "$keys" ] ||
	    sql "UPDATE polling_jobs SET payload = JSON_OBJECT('k', id % $keys)"
	is "$(sqln 3 'SELECT COUNT(*) FROM polling_jobs')" "$jobs" \
	    "$jobs jobs enqueued on node 1 are on node 3"
	: >"$T/ids"

	# A runner that stops on an error while jobs are left is started again,
	# as cron would; each such stop is a give-up.
	declare -a pid node
	giveups=0
	start_runner() {	# start_runner SLOT
		local f=$T/run.$1.$RANDOM$RANDOM
		"$JOBRUN" --config="$T/node${node[$1]}.conf" -v --json "${extra[@]}" \
		    >"$f.out" 2>"$f.err" &
		pid[$1]=$!
		printf '%s\n' "${node[$1]}" >"$f.node"
	}
	cert0=$(wsrep_counter wsrep_local_cert_failures)
	bf0=$(wsrep_counter wsrep_local_bf_aborts)
	t0=$(date +%s%N)
	for r in 0 1 2 3 4 5; do
		node[r]=$((r % 3 + 1))
		start_runner "$r"
	done
	deadline=$((SECONDS + 240))
	while [ "$SECONDS" -lt "$deadline" ]; do
		busy=0
		for r in 0 1 2 3 4 5; do
			[ -n "${pid[r]}" ] || continue
			if ! proc_gone "${pid[r]}"; then
				busy=1
				continue
			fi
			wait "${pid[r]}"
			st=$?
			pid[r]=
			if [ "$st" -ne 0 ]; then
				giveups=$((giveups + 1))
				if [ "$(sql "SELECT COUNT(*) FROM polling_jobs
				    WHERE status = 'pending'")" -gt 0 ]; then
					start_runner "$r"
					busy=1
				fi
			fi
		done
		[ "$busy" = 1 ] || break
		sleep 0.05
	done
	t1=$(date +%s%N)
	for r in 0 1 2 3 4 5; do
		[ -n "${pid[r]}" ] && kill -9 "${pid[r]}" 2>/dev/null
	done
	wait 2>/dev/null
	ms=$(( (t1 - t0) / 1000000 ))
	claims=0 reruns=0
	declare -a node_claims=(0 0 0 0)
	for f in "$T"/run.*.out; do
		[ -e "$f" ] || continue
		c=$(grep -o '"claimed":[0-9]*' "$f" | cut -d: -f2)
		n=$(cat "${f%.out}.node")
		claims=$((claims + ${c:-0}))
		node_claims[n]=$((node_claims[n] + ${c:-0}))
	done
	for f in "$T"/run.*.err; do
		c=$(grep -o '[0-9]* statement(s) run again' "$f" | cut -d' ' -f1)
		reruns=$((reruns + ${c:-0}))
	done
	cert=$(( $(wsrep_counter wsrep_local_cert_failures) - cert0 ))
	bf=$(( $(wsrep_counter wsrep_local_bf_aborts) - bf0 ))
	diag "exactly-once round ($label): $jobs jobs, 6 runners (2 per node), $ms ms," \
	     "$((jobs * 1000 / (ms > 0 ? ms : 1))) jobs/s; claims by node 1/2/3: ${node_claims[1]}/${node_claims[2]}/${node_claims[3]}" \
	     "$reruns statement(s) run again after 1213/1205 ($((reruns * 100 / (claims > 0 ? claims : 1)))% of claims); $giveups runner(s) gave up and were started again" \
	     "servers: $cert certification failures, $bf BF aborts (wsrep_local_*, summed)"

	is "$(left)" 0 "the queue drained"
	is "$claims" "$jobs" "the runners claimed $jobs jobs between them"
	ok "runners on each of the three nodes claimed jobs" \
	    test "${node_claims[1]}" -gt 0 -a "${node_claims[2]}" -gt 0 -a \
	    "${node_claims[3]}" -gt 0
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" \
	    "$jobs" "all $jobs jobs are success"
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE attempts <> 1")" 0 \
	    "every job has attempts 1"
	is "$(sql "SELECT CONCAT(COUNT(*), ' ', COUNT(DISTINCT job_id), ' ',
	        SUM(outcome = 'success' AND attempt = 1))
	    FROM polling_jobs_attempts")" "$jobs $jobs $jobs" \
	    "the history holds one row a job, its first attempt's success"
	is "$(wc -l <"$T/ids")" "$jobs" "the handlers ran $jobs times"
	is "$(sort -u "$T/ids" | wc -l)" "$jobs" "with $jobs different job ids"
	sql 'SELECT id FROM polling_jobs ORDER BY id' >"$T/table-ids"
	ok "the ids run are the ids in the table" cmp -s "$T/table-ids" \
	    <(sort -n "$T/ids")
	f1=$(fingerprint 1)
	is "$(fingerprint 2) $(fingerprint 3)" "$f1 $f1" \
	    "nodes 2 and 3 hold the same job rows as node 1"
	is "$giveups" 0 "no runner gave up on a conflict"
	grep -hv 'level=info' "$T"/run.*.err | sed 's/^ts=[^ ]* //' | sort |
	    uniq -c >"$T/complaints"
	is "$(grep -v 'Deadlock found' "$T/complaints")" "" \
	    "no runner printed any other error"
	[ -s "$T/complaints" ] && diag "what the runners that gave up said:" \
	    "$(cat "$T/complaints")"
	lost_story
}

# lost_story: for each job a runner of the round said it lost (its outcome
# not recorded), every line any runner wrote about the job, and the
# info lines (statements run again, reconnections) of the runner that lost
# it: what the next look at such a failure needs, which the round's
# files, overwritten by the next round, do not keep.  Where the table
# still shows the job's end, that too.
lost_story() {
	local id f
	for id in $(grep -ho 'job=[0-9]* [^"]*outcome=lost' "$T"/run.*.err |
	    sed 's/^job=\([0-9]*\) .*/\1/' | sort -un); do
		diag "job $id, said lost: its row now:" \
		    "$(sql "SELECT status, attempts, locked_by, finished_at
			FROM polling_jobs WHERE id = $id")" \
		    "the runners' lines about it:" \
		    "$(grep -H "job=$id " "$T"/run.*.err | sed "s|^$T/||")"
		for f in $(grep -l "job=$id .*outcome=lost" "$T"/run.*.err); do
			diag "the info lines of ${f#"$T"/} but jobs':" \
			    "$(grep -v ' job=' "$f")"
		done
	done
}

levels= keys=
exactly_once "one handler per runner"
# The same with four handlers per runner: each runner's slots share a
# transaction for what they have ready (their marks and their next
# claims), and a certification failure at its COMMIT rolls all of it
# back: it is run again whole.
exactly_once "--jobs=4" --jobs=4
# A table with priorities (sql/013_priority.sql, four levels): on Galera
# the claims are the plain ones (src/queue_priority.c says why), and
# exactly once holds.
mariadb --no-defaults -S "${SOCK[1]}" -uroot "$DB" <"$TOP/sql/013_priority.sql" ||
    bail_out "cannot load sql/013_priority.sql"
levels=4
exactly_once "--jobs=4, four priority levels" --jobs=4
levels=
by=$(cat "$T"/run.*.out | grep -o '"by_priority":[0-9]*' | cut -d: -f2 |
    awk '{ s += $1 } END { print s + 0 }')
is "$by" 0 "on Galera no claim goes by priority (plain claims only)"

# A keyed type (concurrency_key, sql/003_flow.sql's control table, which
# the caps below use too): every claim writes the type's control row, so
# claimers on two nodes conflict and one runs again; exactly once holds,
# and no two jobs of one key (id % 40) overlap.
mariadb --no-defaults -S "${SOCK[1]}" -uroot "$DB" <"$TOP/sql/003_flow.sql" ||
    bail_out "cannot load sql/003_flow.sql"
node_configs <<EOF
[run]
batch_size = 1000000
max_seconds = 300
lock_seconds = 300

[type.bulk]
handler = exec
command = $HANDLERS/id-record $T/ids $T/rec
timeout = 30
concurrency_key = \$.k
EOF
: >"$T/rec"
all_jobs=$jobs
jobs=${GALERA_KEY_JOBS:-400}
keys=40
exactly_once "--jobs=4, one job at a time per key" --jobs=4
keys=
jobs=$all_jobs
is "$(python3 - "$T/rec" <<'PY'
import sys
events = []
for line in open(sys.argv[1]):
    what, when, job = line.split()
    events.append((float(when), what == 'start', int(job) % 40))
events.sort()
now, most = {}, 0
for when, start, key in events:
    now[key] = now.get(key, 0) + (1 if start else -1)
    most = max(most, now[key])
print(most)
PY
)" 1 "no two jobs of one key ran at once, across the three nodes"

# --- 3. chaos: SIGKILLs on all nodes ------------------------------------------

node_configs <<EOF
[run]
lock_seconds = 3
recover_limit = 1000
batch_size = 100000
max_seconds = 30
backoff_base = 0
backoff_cap = 0

[type.work]
handler = exec
command = $HANDLERS/chaos-work $T/runs
timeout = 10

[type.poison]
handler = exec
command = $HANDLERS/kill-runner
timeout = 10
EOF
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, max_attempts, next_run_at,
        created_at, updated_at)
     SELECT CONCAT('w:', seq), 'work', 10, NOW(), NOW(), NOW()
     FROM seq_1_to_$chaos_jobs;
     INSERT INTO polling_jobs (business_key, type, max_attempts, next_run_at,
        created_at, updated_at)
     VALUES ('poison', 'poison', 3, NOW(), NOW(), NOW())"
: >"$T/runs"
: >"$T/errors"
runners=()
kills=0
started=0
chaos_start() {	# chaos_start NODE
	"$JOBRUN" --config="$T/node$1.conf" -q >/dev/null 2>>"$T/errors" &
	runners+=("$!:$1")
	disown "$!"	# reaped unseen: no "Killed" notice for each victim
	started=$((started + 1))
}
chaos_alive() {
	local e live=()
	for e in "${runners[@]}"; do
		proc_gone "${e%%:*}" || live+=("$e")
	done
	runners=("${live[@]}")
}
# chaos_top_up: two live runners per node
chaos_top_up() {
	local n e c
	for n in 1 2 3; do
		c=0
		for e in "${runners[@]}"; do
			[ "${e#*:}" = "$n" ] && c=$((c + 1))
		done
		while [ "$c" -lt 2 ]; do
			chaos_start "$n"
			c=$((c + 1))
		done
	done
}
t0=$SECONDS
deadline=$((SECONDS + 150))
while [ "$SECONDS" -lt "$deadline" ]; do
	chaos_alive
	chaos_top_up
	sleep "0.$((RANDOM % 3 + 1))"
	chaos_alive
	if [ "${#runners[@]}" -gt 0 ]; then
		victim=${runners[RANDOM % ${#runners[@]}]}
		kill -9 "${victim%%:*}" 2>/dev/null && kills=$((kills + 1))
	fi
	[ "$(left)" -eq 0 ] && break
done
for e in "${runners[@]}"; do
	kill -9 "${e%%:*}" 2>/dev/null
done
wait 2>/dev/null
runs=$(wc -l <"$T/runs")
unique=$(sort -u "$T/runs" | wc -l)
chaos_giveups=$(grep -c 'Deadlock found' "$T/errors")
diag "chaos: $chaos_jobs jobs + 1 poison over 3 nodes in $((SECONDS - t0)) s; $started runners started, $kills killed at random" \
     "$runs handler runs for $unique jobs ($((runs - unique)) repeated after a kill); $chaos_giveups runner(s) gave up on a conflict"

is "$(left)" 0 "chaos: the queue drained, nothing pending or processing"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'work'
    AND status = 'success'")" "$chaos_jobs" "chaos: every job succeeded, none lost"
is "$unique" "$chaos_jobs" "chaos: every job's handler ran at least once"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE attempts > max_attempts")" \
    0 "chaos: attempts never above max_attempts"
is "$(sql "SELECT status, attempts FROM polling_jobs
    WHERE business_key = 'poison'")" "failed	3" \
    "chaos: the poison job failed after its 3 attempts"
ok "chaos: runners were killed along the way" test "$kills" -gt 0
# (-q keeps a line per job lost: a runner whose 3 s lock expired while
# it was starved lost it to another, which the count above holds to once)
is "$(grep -v '^$' "$T/errors" | grep -v 'Deadlock found' |
    grep -v ' outcome=lost ' | head -3)" "" \
    "chaos: no runner printed an error other than a conflict or a lost lock"

# --- 4. --single is node-local -----------------------------------------------

node_configs <<EOF
[type.slow]
handler = exec
command = $HANDLERS/append-id $T/slow-ids
timeout = 30

[type.nap]
handler = exec
command = $HANDLERS/sleep-then-ok 4
timeout = 30
EOF
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
        updated_at)
     SELECT CONCAT('s:', seq), 'slow', NOW(), NOW(), NOW() FROM seq_1_to_2"
: >"$T/slow-ids"
# The first runner holds the lock on node 1 for as long as its handler
# runs: a wrapper that records the id, then sleeps.
cat >"$T/slow-handler" <<EOF
#!/bin/sh
echo "\$JOB_ID" >>"$T/slow-ids"
sleep 4
EOF
chmod +x "$T/slow-handler"
sed -i "s|^command = .*append-id.*|command = $T/slow-handler|" \
    "$T"/node[123].conf
"$JOBRUN" --config="$T/node1.conf" --single --type=slow --max=1 --json \
    >"$T/single1" 2>&1 &
first=$!
defer_kill -9 "$first"
i=0
until [ "$(wc -l <"$T/slow-ids")" -ge 1 ] || [ "$i" -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
run jobrun_raw --config="$T/node1.conf" --single --type=slow --max=1 --json
is "$out" '{"ok":true,"skipped":true}' \
    "--single: a second runner on node 1 finds the lock taken and skips"
run jobrun_raw --config="$T/node2.conf" --single --type=slow --max=1 --json
is "$(jget claimed <<<"$out")" 1 \
    "--single: a runner on node 2 is not held back (GET_LOCK is node-local)"
wait "$first"
is "$(jget claimed <"$T/single1")" 1 "--single: the runner on node 1 ran its job"
is "$(sort -u "$T/slow-ids" | wc -l) $(wc -l <"$T/slow-ids")" "2 2" \
    "--single: the two ran different jobs, once each (row claims stay exclusive)"

# --- 5. a concurrency cap and a rate across the three nodes ------------------

# Two runners on each node, one of them with --jobs=4, drain a type with
# concurrency = 3 whose handler records its start and end: at no instant
# do more than 3 run anywhere.  Then a rate of 10/s the same way: no
# second holds more than 10 + 1 starts.  The control rows' writes are
# certified, so claimers on two nodes that both saw room conflict and one
# claims again; no runner may give up on that.  (The control table was
# loaded for the keyed round of section 2.)
flow_jobs=${GALERA_FLOW_JOBS:-45}
flow_drain() {	# flow_drain KEY=VALUE: the six runners over a type with it
	node_configs <<EOF2
[run]
batch_size = 100000
max_seconds = 120
lock_seconds = 60

[type.flow]
handler = exec
command = $HANDLERS/flow-record $T/rec $2
$1
EOF2
	sql "DELETE FROM polling_jobs;
	     INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('f:', seq), 'flow', NOW(), NOW(), NOW()
	     FROM seq_1_to_$flow_jobs"
	rm -f "$T/rec"
	sqln 3 "SELECT 1" >/dev/null
	local n p failed=0 pids=()
	for n in 1 2 3; do
		"$JOBRUN" --config="$T/node$n.conf" --jobs=4 2>>"$T/flow-err" &
		pids+=($!)
		"$JOBRUN" --config="$T/node$n.conf" 2>>"$T/flow-err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || failed=$((failed + 1))
	done
	return "$failed"
}
records() {
	python3 "$TOP/test/flow-records.py" "$1" "$T/rec" "${@:2}"
}
: >"$T/flow-err"
flow_drain "concurrency = 3" 0.2
is "$?/$(cat "$T/flow-err")" "0/" "cap: the six runners on three nodes ended well, silent"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
    AND attempts = 1")" "$flow_jobs" "cap: every job succeeded at its first attempt"
is "$(records overlap)" 3 "cap: at no instant did more than 3 run across the nodes"
diag "cap: $(records rate) starts/s (3 / 0.2 s = 15); the cap in use $(records busy 3) of the time"
flow_drain "rate = 10/s" 0
is "$?/$(cat "$T/flow-err")" "0/" "rate: the six runners ended well, silent"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'
    AND attempts = 1")" "$flow_jobs" "rate: every job succeeded at its first attempt"
most=$(records window 1)
diag "rate: at most $most starts in a second, $(records rate) a second on average"
ok "rate: no second held more than 10 + 1 starts ($most)" test "$most" -le 11

# --- 6. waiting runners on the three nodes ------------------------------------

# A waiting run (--wait) on each node, with two slots; 60 jobs inserted
# meanwhile by plain INSERTs, in turn on each node.  Each is run once, by
# whichever runner notices it first, and the runners exit 0 on SIGTERM.
node_configs <<EOF2
[run]
max_seconds = 100
lock_seconds = 60

[type.late]
handler = exec
command = $HANDLERS/append-id $T/late-ids
timeout = 30
EOF2
sql "DELETE FROM polling_jobs"
: >"$T/late-ids"
waiters=()
for n in 1 2 3; do
	"$JOBRUN" --config="$T/node$n.conf" --wait --jobs=2 -v \
	    2>"$T/late-err.$n" &
	waiters+=($!)
done
for n in 1 2 3; do
	wait_for 60 file_has "$T/late-err.$n" 'waiting for work' ||
	    bail_out "the runner on node $n did not start waiting"
done
for i in $(seq 1 60); do
	sqln $(( i % 3 + 1 )) "INSERT INTO polling_jobs (business_key, type,
	    next_run_at, created_at, updated_at)
	    VALUES ('late:$i', 'late', NOW(), NOW(), NOW())"
done
late_done() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" = 60 ]
}
ok "waiting: the 60 jobs inserted on the three nodes were run" wait_for 60 late_done
kill -TERM "${waiters[@]}"
failed=0
for p in "${waiters[@]}"; do
	wait "$p" || failed=$((failed + 1))
done
is "$failed" 0 "waiting: the three runners exit 0 on SIGTERM"
is "$(wc -l <"$T/late-ids")/$(sort -u "$T/late-ids" | wc -l)" 60/60 \
    "waiting: 60 handler runs, none twice"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE attempts = 1")" 60 \
    "waiting: each at its first attempt"
