#!/bin/bash
# Hostile handlers: a flood of output, stdout closed early, stdin never
# read under a 10 MB payload, death by a signal, a grandchild left holding
# the pipe.  The runner keeps bounded memory and its time, each job gets a
# clear outcome and last_error, and no handler process outlives its job.
. "${0%/*}/lib.sh"

plan 15
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

[type.segfault]
handler = exec
command = $HANDLERS/hostile segfault
timeout = 10

[type.grandchild]
handler = exec
command = $HANDLERS/hostile grandchild
timeout = 10
EOF2

# peak_rss_kb CMD...: run CMD in the background and report the highest
# VmHWM seen in /proc while it ran (kB); CMD's status goes to $T/rc
peak_rss_kb() {
	local pid peak=0 hwm
	"$@" >"$T/stdout" 2>"$T/stderr" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
		sleep 0.05
	done
	wait "$pid"
	echo $? >"$T/rc"
	echo "$peak"
}

jobrun enqueue --type=quiet --key=q >/dev/null
base=$(peak_rss_kb "$JOBRUN" --config="$CONF" --type=quiet)
jobrun enqueue --type=gigabyte --key=g >/dev/null
start=$(date +%s)
peak=$(peak_rss_kb "$JOBRUN" --config="$CONF" --type=gigabyte)
took=$(( $(date +%s) - start ))
is "$(cat "$T/rc")" 0 "1 GiB of output: the job still succeeds"
diag "peak RSS: $base kB for a quiet 1 s job, $peak kB with 1 GiB of output ($took s)"
between $((peak - base)) -100000 4096 "1 GiB of output costs the runner under 4 MiB more memory"
between "$took" 0 30 "and is drained in bounded time"

jobrun enqueue --type=close-early --key=c >/dev/null
run jobrun --type=close-early --json
is "$(jget succeeded <<<"$out")" 1 "stdout and stderr closed early: success"

sql "INSERT INTO polling_jobs (business_key, type, payload, next_run_at, created_at, updated_at)
     VALUES ('n', 'no-stdin', JSON_OBJECT('blob', REPEAT('x', 10485760)), NOW(), NOW(), NOW())"
start=$(date +%s)
run jobrun --type=no-stdin --json
took=$(( $(date +%s) - start ))
is "$(jget succeeded <<<"$out")" 1 "a 10 MB payload the handler never reads: success"
between "$took" 0 5 "without waiting on the pipe ($took s)"

jobrun enqueue --type=segfault --key=s >/dev/null
run jobrun --type=segfault --json
is "$rc" 1 "death by SIGSEGV: exit 1"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 's'")" pending \
    "the job is retried"
like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 's'")" \
    '^killed by signal 11 \(Segmentation fault\): about to crash$' \
    "last_error names the signal and keeps the output"

jobrun enqueue --type=grandchild --key=gc >/dev/null
start=$(date +%s)
run jobrun --type=grandchild --json
took=$(( $(date +%s) - start ))
between "$took" 0 3 "a grandchild holding the pipe does not hold up the run ($took s)"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'gc'")" pending \
    "the job's own exit status (3) decides: retry"
like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'gc'")" \
    '^exit status 3: leaving$' "last_error has the handler's output"
sleep 0.3
is "$(pgrep -f "sleep 60" -P 1 2>/dev/null | wc -l)/$(pgrep -fc "hostile grandchild" || true)" \
    "0/0" "the grandchild was killed with its process group"

is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'processing'")" 0 \
    "no job left in processing"
is "$(pgrep -fc "$HANDLERS/hostile" || true)" 0 "no handler process left"
