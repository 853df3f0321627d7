#!/bin/bash
# Logging and metrics for unattended runs: off a terminal every event is
# one logfmt line (ts= level= job= type= attempt= outcome= ms=), on a
# terminal a sentence; --log=syslog reaches a real syslog listener on
# /dev/log; --metrics-file writes Prometheus text that a real parser
# (prometheus_client) reads, atomically, with the documented figures: a
# line for every outcome of every type, mode 0644, nothing written by a
# command that stops before its run, a failed write reported.  Line
# breaks in messages are shown as \n.
. "${0%/*}/lib.sh"

plan 44
setup_db
write_config <<EOF2
[run]
backoff_base = 60

[type.good]
handler = noop

[type.bad]
handler = exec
command = $HANDLERS/exit-with 3 "it broke; see \"details\""
timeout = 10
EOF2
enq() { insert_job "$2" "$1"; }

enq good g1
enq bad b1
run jobrun -v
is "$rc" 1 "a run with a retried job exits 1"
line=$(grep 'outcome=retry' <<<"$err")
like "$line" '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z level=warn job=[0-9]+ type=bad attempt=1 max_attempts=5 outcome=retry ms=[0-9]+ delay=(109|11[0-9]|120) msg="exit status 3: it broke; see \\"details\\""$' \
    "the retry is one logfmt line, quotes escaped"
like "$(grep 'type=good' <<<"$err")" '^ts=\S+ level=info job=[0-9]+ type=good attempt=1 max_attempts=5 outcome=success ms=[0-9]+$' \
    "-v: the success is one too"
like "$(tail -1 <<<"$err")" '^ts=\S+ level=info msg="1 claimed, 0 succeeded|^ts=\S+ level=info msg="2 claimed' \
    "the summary is a logfmt line as well"
is "$(grep -vc '^ts=' <<<"$err")" 0 "every line is logfmt"

# On a terminal: sentences.
enq bad b2
sql "UPDATE polling_jobs SET next_run_at = NOW()"
/usr/bin/python3 - "$CONF" "${JOBRUN_TIMEOUT[@]}" "$JOBRUN" >"$T/tty.out" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:] + ["--config=" + sys.argv[1], "--type=bad"])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode())
PY
like "$(cat "$T/tty.out")" 'jobrun: job [0-9]+ \(bad\) attempt [0-9]/5: retry, due again in [0-9]+ s \([0-9]+ ms\): exit status 3' \
    "on a terminal a job event reads as a sentence"

# Fatal errors stay sentences everywhere.
run jobrun --type=nosuch
like "$err" '^jobrun: --type=nosuch: ' "a fatal error is a sentence off a terminal too"

# syslog: a real listener on /dev/log (root only; left alone if one exists).
if [ "$(id -u)" = 0 ] && [ ! -e /dev/log ]; then
	/usr/bin/python3 - "$T/syslog" <<'PY' &
import contextlib, os, socket, sys, signal
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
# The test's cleanup removes /dev/log too, and may be first.
def gone(*a):
    with contextlib.suppress(FileNotFoundError):
        os.unlink("/dev/log")
    sys.exit(0)
signal.signal(signal.SIGTERM, gone)
s.settimeout(20)
with open(sys.argv[1], "ab", buffering=0) as f:
    try:
        while True:
            f.write(s.recv(65536) + b"\n")
    except socket.timeout:
        pass
gone()
PY
	listener=$!
	defer_kill "$listener"
	defer "rm -f /dev/log"
	wait_for 30 test -S /dev/log || bail_out "no syslog listener on /dev/log"
	enq good g2
	enq bad b3
	run jobrun --log=syslog -v --type=good
	run jobrun --log=syslog --type=bad
	run jobrun --log=syslog --type=nosuch
	ok "--log=syslog: the success reached the syslog listener" \
	    wait_for 30 file_has "$T/syslog" 'jobrun\[[0-9]*\]: level=info job=[0-9]* type=good .*outcome=success'
	wait_for 30 file_has "$T/syslog" 'jobrun\[[0-9]+\]: --type=nosuch'
	is "$(grep -c 'jobrun\[[0-9]*\]: level=info job=[0-9]* type=good .*outcome=success' "$T/syslog")" 1 \
	    "once"
	like "$(cat "$T/syslog")" '<28>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} jobrun\[[0-9]+\]: level=warn job=[0-9]+ type=bad attempt=1 .*outcome=retry' \
	    "a retry arrives as daemon.warning (priority 28) in logfmt"
	is "$err" "jobrun: --type=nosuch: $CONF has no [type.nosuch] section" \
	    "a fatal error still reaches stderr"
	like "$(cat "$T/syslog")" '<27>.*jobrun\[[0-9]+\]: --type=nosuch' "and syslog, as daemon.err"
	write_config <<EOF2
[run]
log = syslog

[type.good]
handler = noop
EOF2
	enq good g3
	run jobrun -v
	is "$err" "" "[run] log = syslog: nothing on stderr"
	two_successes() {
		[ "$(grep -c 'type=good .*outcome=success' "$T/syslog")" = 2 ]
	}
	ok "and the event went to syslog" wait_for 30 two_successes
else
	skip 7 "needs root and no /dev/log"
fi

# Metrics, parsed by the Prometheus client library's own parser.
write_config <<EOF2
[run]
backoff_base = 60

[type.good]
handler = noop

[type.bad]
handler = exec
command = $HANDLERS/exit-with 3 nope
timeout = 10
EOF2
sql "DELETE FROM polling_jobs"
enq good m1; enq good m2; enq bad m3
# m2 was due two hours ago: its start latency is over the last finite
# bucket (300 s), m1's under it.
sql "UPDATE polling_jobs SET next_run_at = NOW() - INTERVAL 2 HOUR,
     created_at = NOW() - INTERVAL 2 HOUR WHERE business_key = 'm2'"
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     VALUES ('late', 'unconfigured', NOW() - INTERVAL 300 SECOND, NOW(), NOW())"
prom=$T/jobrun.prom
s0=$(date +%s)
run jobrun --metrics-file="$prom"
s1=$(date +%s)
is "$rc" 1 "the run exits 1 (a retry)"
metric() {	# NAME [LABELS-AS-PYTHON-DICT]: the sample's value
	/usr/bin/python3 - "$prom" "$1" "${2:-{\}}" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
want = eval(sys.argv[3])
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        if s.name == sys.argv[2] and all(s.labels.get(k) == v for k, v in want.items()):
            print(int(s.value) if s.value == int(s.value) else s.value)
            sys.exit(0)
print("MISSING")
PY
}
is "$(metric jobrun_run_jobs "{'type': 'good', 'outcome': 'succeeded'}")/$(metric jobrun_run_jobs "{'type': 'bad', 'outcome': 'retried'}")" \
    2/1 "the parser reads the run's counts by type and outcome"
is "$(metric jobrun_run_exit_status)" 1 "the exit status"
is "$(metric jobrun_run_start_latency_seconds_count "{'type': 'good'}")/$(metric jobrun_run_start_latency_seconds_bucket "{'type': 'good', 'le': '300'}")/$(metric jobrun_run_start_latency_seconds_bucket "{'type': 'good', 'le': '+Inf'}")" \
    2/1/2 "the start latency histogram: two jobs, one started within 300 s of its time"
between "$(metric jobrun_run_start_latency_seconds_sum "{'type': 'good'}" | cut -d. -f1)" 7200 $((7200 + 300 + s1 - s0)) \
    "its sum counts the two hours the other one waited"
is "$(metric jobrun_queue_pending "{'type': 'bad'}")/$(metric jobrun_queue_due "{'type': 'unconfigured'}")" 1/1 \
    "the backlog by type, unconfigured types included"
between "$(metric jobrun_queue_lag_seconds "{'type': 'unconfigured'}")" 300 $((300 + s1 - s0 + 1)) \
    "the lag of the oldest due job: 300 s when inserted, plus the run's time"
is "$(metric jobrun_last_success_timestamp_seconds)" MISSING "no successful run yet: no last-success time"
sql "DELETE FROM polling_jobs WHERE type = 'bad'"
enq good m4
s0=$(date +%s)
run jobrun --metrics-file="$prom"
s1=$(date +%s)
ok_at=$(metric jobrun_last_success_timestamp_seconds)
between "$ok_at" "$s0" "$s1" "a run that ends well sets the last-success time to its end"
enq bad m5
run jobrun --metrics-file="$prom"
is "$(metric jobrun_last_success_timestamp_seconds)/$(metric jobrun_run_exit_status)" "$ok_at/1" \
    "a run that does not keeps the previous last-success time"
is "$(ls "$T" | grep -c 'jobrun.prom.')" 0 "no temporary file is left behind"

# Every outcome of every type the run could claim has a line, 0 included.
is "$(/usr/bin/python3 - "$prom" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
seen = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        if s.name == "jobrun_run_jobs":
            seen[(s.labels["type"], s.labels["outcome"])] = int(s.value)
print(" ".join("%s/%s=%d" % (t, o, v) for (t, o), v in sorted(seen.items())))
PY
)" "bad/failed=0 bad/lost=0 bad/retried=1 bad/snoozed=0 bad/succeeded=0 good/failed=0 good/lost=0 good/retried=0 good/snoozed=0 good/succeeded=0" \
    "a line for each outcome of each configured type, zeros included"
is "$(stat -c %a "$prom")" 644 "the metrics file has mode 0644"

# Nothing is written by a command that stops before the run.
cp "$prom" "$T/before.prom"
run jobrun --metrics-file="$prom" --max=abc
run jobrun --metrics-file="$prom" --type=nosuch
ok "a usage error and a configuration error leave the metrics file as it was" cmp -s "$prom" "$T/before.prom"

# A file that cannot be written: an error line, even under -q (stale
# metrics are how monitoring would notice), and the exit status the jobs
# gave.
enq good m6
run jobrun --metrics-file="$T/no-such-dir/jobrun.prom"
is "$rc" 0 "a metrics file that cannot be written does not change the exit status"
like "$err" "write metrics $T/no-such-dir/jobrun.prom\\.[A-Za-z0-9]{6}: No such file or directory" \
    "it is reported, naming the temporary file and why"
like "$err" "^jobrun: write metrics " "it is an error line, a sentence as fatal errors are"
enq good m7
run jobrun -q --metrics-file="$T/no-such-dir/jobrun.prom"
is "$rc" 0 "-q: the exit status is still the jobs'"
like "$err" "^jobrun: write metrics $T/no-such-dir/jobrun.prom" \
    "and -q does not hide it"

# Written through, never replaced nor read back: /dev/stdout (the file
# the shell opened keeps the run's JSON; a pipe ends), a FIFO (a reader
# waits on it).
enq good m8
run jobrun --json --metrics-file=/dev/stdout
is "$rc/$(grep -c '^jobrun_run_jobs{' "$T/stdout")/$(grep -c '^{"ok"' "$T/stdout")" \
    "0/10/1" "--metrics-file=/dev/stdout into a file: the metrics and the run's JSON both there"
enq good m9
jobrun -q --metrics-file=/dev/stdout | cat >"$T/pipe.out"
is "${PIPESTATUS[0]}/$(grep -c '^jobrun_run_jobs{' "$T/pipe.out")" 0/10 \
    "--metrics-file=/dev/stdout into a pipe: the run ends, the metrics read"
mkfifo "$T/metrics.fifo"
cat "$T/metrics.fifo" >"$T/fifo.out" &
reader=$!
enq good m10
run jobrun -q --metrics-file="$T/metrics.fifo"
wait "$reader"
is "$rc/$(grep -c '^jobrun_run_jobs{' "$T/fifo.out")" 0/10 \
    "--metrics-file=FIFO: written through to its reader"
run jobrun --config= --max=1
is "$rc/$err" "64/jobrun: --config: an empty FILE
Try 'jobrun --help'." \
    "--config= (an unset variable): a usage error, not the default configuration"

# The log: recovered locks, line breaks, why a job failed.
write_config <<EOF2
[run]
backoff_base = 60

[type.lines]
handler = exec
command = /bin/sh -c "printf 'one\\\\ntwo\\\\r\\\\n'; exit 3"
timeout = 10

[type.perm]
handler = exec
command = $HANDLERS/exit-with 65 "no such customer"
timeout = 10
EOF2
sql "DELETE FROM polling_jobs;
     INSERT INTO polling_jobs (business_key, type, status, attempts, next_run_at,
        locked_by, locked_until, created_at, updated_at)
     VALUES ('stranded', 'gone', 'processing', 1, NOW(), 'dead', NOW() - INTERVAL 5 SECOND, NOW(), NOW())"
enq lines l1
enq perm p1
sql "INSERT INTO polling_jobs (business_key, type, attempts, max_attempts, next_run_at, created_at, updated_at)
     VALUES ('last', 'lines', 4, 5, NOW(), NOW(), NOW())"
run jobrun
is "$(grep -c . <<<"$err")" 4 "four lines: the recovery and three jobs"
like "$err" "(^|
)ts=\\S+ level=warn msg=\"recovered 1 job\\(s\\) whose runner's lock expired\"(
|\$)" "recovered locks: a warning"
like "$(grep 'attempt=1 .*type=lines\|type=lines attempt=1' <<<"$err")" 'outcome=retry ms=[0-9]+ delay=(109|11[0-9]|120) msg="exit status 3: one\\ntwo"$' \
    "line breaks in the output are shown as \\n, a trailing CR-LF dropped"
like "$(grep 'type=perm' <<<"$err")" 'outcome=failed ms=[0-9]+ msg="permanent failure: exit 65 \(permanent failure\): no such customer"$' \
    "a permanent failure's msg begins with 'permanent failure:'"
like "$(grep 'attempt=5' <<<"$err")" 'outcome=failed ms=[0-9]+ msg="no attempts left: exit status 3: one\\ntwo"$' \
    "the last attempt's failure begins with 'no attempts left:'"

# Types that differ only past a NUL, or hold a tab: one series each, the
# bytes as escapes (\x00, \t), where a cut at the NUL gave type "nul"
# twice, a file the scraper refuses as a whole.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     VALUES ('n1', 'nul', NOW(), NOW(), NOW()),
            ('n2', CONCAT('nul', CHAR(0), 'x'), NOW(), NOW(), NOW()),
            ('n3', CONCAT('tab', CHAR(9), 'x'), NOW(), NOW(), NOW())"
run jobrun --metrics-file="$prom"
is "$(metric jobrun_queue_pending "{'type': 'nul'}")/$(metric jobrun_queue_pending "{'type': 'nul\\\\x00x'}")/$(metric jobrun_queue_pending "{'type': 'tab\\\\tx'}")" 1/1/1 \
    "a type with a NUL or a tab is a series of its own, the byte an escape"
is "$(awk '!/^#/ { print $1 }' "$prom" | sort | uniq -d)" "" \
    "no series is written twice"
