#!/bin/bash
# What a handler gets: the payload on stdin (a NULL payload as {}), the job in
# JOB_* variables, jobrun's own environment minus JOBRUN_DB_PASSWORD (and,
# without sql/002_checkpoint.sql, without JOBRUN_CHECKPOINT*); and what it
# does not get: any descriptor but 0, 1 and 2, a signal jobrun ignores or
# blocks, jobrun's process group.
. "${0%/*}/lib.sh"

plan 22
setup_db
mkdir "$T/dump"
write_config <<EOF2
[type.dump]
handler = exec
command = $HANDLERS/dump-job $T/dump
timeout = 10

[type.fds]
handler = exec
command = $HANDLERS/inherited-fds $T/fds
timeout = 10

[type.sigs]
handler = exec
command = $HANDLERS/signal-state $T/sigs
timeout = 10
EOF2

key="order:1 'ü' \"q\""
jobrun enqueue --type=dump --key="$key" --max-attempts=7 \
    --payload='{"order_id": 10001, "name": "Zoë", "tags": ["a", "b"]}' >/dev/null
insert_job null:1 dump NULL
insert_job retry:1 dump "'[1,2]'" attempts 2

export JOBRUN_TEST_MARKER=hello
JOBRUN_DB_PASSWORD= JOBRUN_CHECKPOINT='{"not":"yours"}' JOBRUN_CHECKPOINT_FD=3 \
    run jobrun --type=dump --json
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
is "$(grep -c '^JOBRUN_CHECKPOINT' "$T/dump/1.env")" 0 \
    "JOBRUN_CHECKPOINT and JOBRUN_CHECKPOINT_FD in jobrun's environment are not passed on"

# Descriptors: the run has its database connection, its log and more open;
# the handler sees only its stdin, stdout and stderr.
insert_job fds fds
run jobrun --type=fds --json 7</dev/null 9>"$T/nine"
is "$(jget succeeded <<<"$out")" 1 "the descriptor handler ran"
is "$(cat "$T/fds")" "0 1 2" "it inherits descriptors 0, 1 and 2 only (not the connection, nor fds 7 and 9 of jobrun)"

# Signals: jobrun ignores SIGPIPE, SIGHUP, SIGUSR1, SIGUSR2 and SIGALRM and
# catches the stop signals; the handler starts as from a shell, none
# ignored or blocked, in a process group of its own.
insert_job sigs sigs
jobrun_bg --type=sigs --json >"$T/sigs.out" 2>"$T/sigs.err"
runner_pgid=$(ps -o pgid= -p "$bg_pid" | tr -d ' ')
wait "$bg"
# Signals 32 and 33 are glibc's own: no program can change them, and they
# are ignored here only if jobrun's own parent ignored them.
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$T/sigs")
is "$(printf '%016x' $(( 0x$ign & ~0x180000000 )))/$(sed -n 's/^SigBlk:[[:space:]]*//p' "$T/sigs")" \
    0000000000000000/0000000000000000 "the handler starts with no signal ignored or blocked"

# ... also when jobrun itself was started with every signal blocked.
insert_job sigs2 sigs
python3 -c '
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
os.execvp(sys.argv[1], sys.argv[1:])' "${JOBRUN_TIMEOUT[@]}" "$JOBRUN" --config="$CONF" --type=sigs --json >/dev/null
is "$(sed -n 's/^SigBlk:[[:space:]]*//p' "$T/sigs")" 0000000000000000 \
    "jobrun started with every signal blocked: its handler starts with none blocked"
pid=$(sed -n 's/^pid //p' "$T/sigs")
is "$(sed -n 's/^pgid //p' "$T/sigs")" "$pid" "it leads a process group of its own"
ok "not jobrun's ($runner_pgid)" test "$(sed -n 's/^pgid //p' "$T/sigs")" != "$runner_pgid"
