#!/bin/bash
# What a handler's exit means: 65 fails the job at once, 75 retries it,
# any other status or a signal retries with backoff; last_error says which.
# The same holds when jobrun is started with SIGCHLD ignored (a
# disposition that survives exec): at b888798 the kernel then reaped the
# handlers, waitpid said ECHILD, and every one was recorded as a success.
. "${0%/*}/lib.sh"

plan 30
setup_db
write_config <<EOF2
[type.perm]
handler = exec
command = $HANDLERS/exit-with 65 "bad request: no such customer"
timeout = 10

[type.later]
handler = exec
command = $HANDLERS/exit-with 75 "server busy"
timeout = 10

[type.crash]
handler = exec
command = $HANDLERS/exit-with 3 "oops"
timeout = 10

[type.killed]
handler = exec
command = /bin/sh -c "echo dying; kill -9 \$\$"
timeout = 10

[type.missing]
handler = exec
command = $T/no-such-program
timeout = 10

[type.noexec]
handler = exec
command = $T/not-executable
timeout = 10
EOF2
printf '#!/bin/sh\nexit 0\n' >"$T/not-executable"
chmod 0644 "$T/not-executable"

for t in perm later crash killed missing noexec; do
	insert_job "$t" "$t"
done
job_id() {
	sql "SELECT id FROM polling_jobs WHERE business_key = '$1'"
}

run jobrun --json
is "$rc" 1 "the run exits 1"
is "$(jget claimed <<<"$out")" 6 "claimed 6"
is "$(jget failed <<<"$out")" 1 "failed 1 (the exit 65)"
is "$(jget retried <<<"$out")" 5 "retried 5"

p=$(job_id perm)
is "$(field "$p" status)" failed "exit 65: failed at once"
is "$(field "$p" attempts)/$(field "$p" max_attempts)" 1/5 "after 1 of 5 attempts"
like "$(field "$p" last_error)" '^exit 65 \(permanent failure\): .*bad request: no such customer' \
    "exit 65: last_error says permanent failure, with the output"
is "$(field "$p" 'finished_at IS NOT NULL')" 1 "exit 65: finished_at set"

l=$(job_id later)
is "$(field "$l" status)" pending "exit 75: pending"
is "$(field "$l" attempts)" 1 "exit 75: attempts 1"
like "$(field "$l" last_error)" '^exit 75 \(retry later\): .*server busy' \
    "exit 75: last_error says retry later"
between "$(field "$l" 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)')" \
    109 120 "exit 75: retried with backoff (120 s less up to a tenth)"

c=$(job_id crash)
is "$(field "$c" status)/$(field "$c" attempts)" pending/1 "exit 3: pending, attempts 1"
like "$(field "$c" last_error)" '^exit status 3: .*oops' "exit 3: last_error has the status"
between "$(field "$c" 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)')" \
    109 120 "exit 3: retried with backoff (120 s less up to a tenth)"

k=$(job_id killed)
is "$(field "$k" status)/$(field "$k" attempts)" pending/1 "SIGKILL: pending, attempts 1"
# (the config's $$ is not expanded by jobrun: the shell's own pid is killed)
is "$(field "$k" last_error)" "killed by signal 9 (Killed): dying" \
    "SIGKILL: last_error names the signal, then the output"

# Under valgrind the forked child that fails to exec is still valgrind's,
# and its leak check at _exit turns 127 into valgrind's error status 99:
# the status is checked in the other passes only.
if under_valgrind; then
	status127() { sed 's/^asked to run again later, .*: exit 99 (not yet): /exit status 127: /'; }
else
	status127() { cat; }
fi
m=$(job_id missing)
is "$(field "$m" status)/$(field "$m" attempts)" pending/1 "a missing program: pending (retried), attempts 1"
is "$(field "$m" last_error | status127)" \
    "exit status 127: jobrun: cannot execute handler: $T/no-such-program: No such file or directory" \
    "a missing program: exit status 127, and why"
between "$(field "$m" 'TIMESTAMPDIFF(SECOND, updated_at, next_run_at)')" \
    109 120 "a missing program: retried with backoff (120 s less up to a tenth)"

n=$(job_id noexec)
is "$(field "$n" status)/$(field "$n" attempts)" pending/1 "a program that is not executable: pending, attempts 1"
is "$(field "$n" last_error | status127)" \
    "exit status 127: jobrun: cannot execute handler: $T/not-executable: Permission denied" \
    "a program that is not executable: exit status 127, permission denied"

# --- started with SIGCHLD ignored ---------------------------------------------------
for t in perm crash killed; do
	insert_job "ign-$t" "$t"
done
ignoring_sigchld() {
	"${JOBRUN_TIMEOUT[@]}" python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
run ignoring_sigchld "$JOBRUN" --config="$CONF"
is "$rc" 1 "started with SIGCHLD ignored: exit 1 (jobs failed), not 0"
is "$(field "$(job_id ign-perm)" status)/$(field "$(job_id ign-perm)" last_error)" \
    "failed/exit 65 (permanent failure): bad request: no such customer" \
    "SIGCHLD ignored: exit 65 still fails the job"
is "$(field "$(job_id ign-crash)" status)/$(field "$(job_id ign-crash)" last_error)" \
    "pending/exit status 3: oops" "SIGCHLD ignored: exit 3 still retries it"
is "$(field "$(job_id ign-killed)" status)/$(field "$(job_id ign-killed)" last_error)" \
    "pending/killed by signal 9 (Killed): dying" "SIGCHLD ignored: a signal still retries it"

# --- no shell: a script without #! is not run through /bin/sh ---------------

# The script would create $T/ran if a shell ran it; execve refuses it
# (ENOEXEC), and the parent, told the errno over a pipe, writes why.
printf ': >"%s"\nexit 0\n' "$T/ran" >"$T/no-shebang"
chmod 0755 "$T/no-shebang"
mkdir "$T/bin"
printf '#!/bin/sh\necho "found in PATH: $1"\nexit 3\n' >"$T/bin/in-path"
chmod 0755 "$T/bin/in-path"
cat >>"$CONF" <<EOF2

[type.noshebang]
handler = exec
command = $T/no-shebang
timeout = 10

[type.bare]
handler = exec
command = in-path hello
timeout = 10
EOF2
insert_job noshebang noshebang
insert_job bare bare
PATH=$T/bin:$PATH run jobrun --type=noshebang
s=$(job_id noshebang)
is "$(field "$s" status)/$(field "$s" attempts)" pending/1 \
    "a script without #!: pending (retried), attempts 1"
is "$(field "$s" last_error | status127)" \
    "exit status 127: jobrun: cannot execute handler: $T/no-shebang: Exec format error" \
    "a script without #!: exit status 127, Exec format error (ENOEXEC)"
ok "a script without #!: no shell ran it" test ! -e "$T/ran"
PATH=$T/bin:$PATH run jobrun --type=bare
b=$(job_id bare)
is "$(field "$b" last_error)" "exit status 3: found in PATH: hello" \
    "a command without a slash is found in PATH and run"
