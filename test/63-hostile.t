#!/bin/bash
# Hostile handlers: a flood of output, stdout closed early, stdin never
# read under a 10 MB payload, death by a signal, a grandchild left holding
# the pipe.  The runner keeps bounded memory and its time, each job gets a
# clear outcome and last_error, and no handler process outlives its job.
. "${0%/*}/lib.sh"

plan 16
setup_db
write_config <<EOF2
[run]
backoff_base = 60

[type.gigabyte]
handler = exec
command = $HANDLERS/hostile gigabyte
timeout = 60

[type.quiet]
handler = exec
command = $HANDLERS/sleep-then-ok 1
timeout = 10

[type.close-early]
handler = exec
command = $HANDLERS/hostile close-early
timeout = 10

[type.no-stdin]
handler = exec
command = $HANDLERS/hostile no-stdin
timeout = 10

[type.reads]
handler = exec
command = /bin/sh -c "cat >/dev/null; sleep 0.5"
timeout = 60

[type.segfault]
handler = exec
command = $HANDLERS/hostile segfault
timeout = 10

[type.grandchild]
handler = exec
command = $HANDLERS/hostile grandchild
timeout = 10
EOF2

# peak_rss_kb ARG...: `jobrun ARG...` in the background (jobrun_bg), and
# the highest VmHWM of its process seen in /proc while it ran (kB); its
# exit status goes to $T/rc
peak_rss_kb() {
	local peak=0 hwm
	jobrun_bg "$@" >"$T/stdout" 2>"$T/stderr"
	while ! proc_gone "$bg_pid"; do
		hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$bg_pid/status" 2>/dev/null)
		[ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
		sleep 0.05
	done
	wait "$bg"
	echo $? >"$T/rc"
	echo "$peak"
}
now_ms() {
	echo $(( $(date +%s%N) / 1000000 ))
}

insert_job q quiet
base=$(peak_rss_kb --type=quiet)
insert_job g gigabyte
start=$(now_ms)
peak=$(peak_rss_kb --type=gigabyte)
took=$(( $(now_ms) - start ))
is "$(cat "$T/rc")/$(sql "SELECT status FROM polling_jobs WHERE business_key = 'g'")" 0/success \
    "1 GiB of output: the run exits 0 and the job is success"
diag "peak RSS: $base kB for a quiet 1 s job, $peak kB with 1 GiB of output ($took ms)"
ok "1 GiB of output costs the runner under 4 MiB more memory ($((peak - base)) kB)" \
    test "$((peak - base))" -lt 4096
took_between_ms "$took" 0 30000 "and is drained in bounded time"

insert_job c close-early
run jobrun --type=close-early --json
is "$(jget succeeded <<<"$out")" 1 "stdout and stderr closed early: success"

# The baseline: the same 10 MB payload to a handler that reads it all.
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
     VALUES ('r', 'reads', JSON_OBJECT('blob', REPEAT('x', 10485760)), NOW(), NOW(), NOW())"
start=$(now_ms)
run jobrun --type=reads --json
base=$(( $(now_ms) - start ))
is "$(jget succeeded <<<"$out")" 1 "(a 10 MB payload read whole: success, in $base ms)"
sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
     VALUES ('n', 'no-stdin', JSON_OBJECT('blob', REPEAT('x', 10485760)), NOW(), NOW(), NOW())"
start=$(now_ms)
run jobrun --type=no-stdin --json
took=$(( $(now_ms) - start ))
is "$(jget succeeded <<<"$out")" 1 "a 10 MB payload the handler never reads: success, not the 10 s timeout"
# Both handlers sleep 0.5 s: never reading costs no more than reading.
took_between_ms "$took" 500 $((base + 1500)) "without waiting on the pipe ($took ms, $base ms read whole)"

insert_job s segfault
run jobrun --type=segfault --json
is "$rc" 1 "death by SIGSEGV: exit 1"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 's'")" pending \
    "the job is retried"
is "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 's'")" \
    'killed by signal 11 (Segmentation fault): about to crash' \
    "last_error names the signal and keeps the output"

base=$(baseline_ms --type=grandchild --json)
insert_job gc grandchild
start=$(now_ms)
run jobrun --type=grandchild --json
took=$(( $(now_ms) - start ))
# The handler exits at once; jobrun reads on for at most 200 ms, then kills
# what is left of the group.
took_between_ms "$took" 0 $((base + 1500)) "a grandchild holding the pipe does not hold up the run ($took ms)"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'gc'")" pending \
    "the job's own exit status (3) decides: retry"
is "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'gc'")" \
    'exit status 3: leaving' "last_error has the handler's output, and not the grandchild's"
grandchildren() {
	[ "$(pgrep -fc "hostile grandchild" || true)" = 0 ]
}
ok "the grandchild was killed with its process group" wait_for 10 grandchildren

is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job left in processing"
is "$(pgrep -fc "$HANDLERS/hostile" || true)" 0 "no handler process left"
