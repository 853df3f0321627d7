#!/bin/bash
# check tries each handler as a run would start its first job, without
# sending one: an exec command is looked up in the PATH check runs with
# (the line names it), must be executable, and its "#!" interpreter must
# be there (env's too, in PATH); an http URL gets a HEAD request with the
# configured headers, and a refused connection, 404, 410, 401 or 403 is a
# problem.  A problem names the type; the other types are still checked.
. "${0%/*}/lib.sh"
. "$TOP/test/http-lib.sh"

plan 39
setup_db
start_http_server

mkdir -p "$T/bin" "$T/h"
printf '#!/bin/sh\nexit 0\n' >"$T/h/good.sh"
printf '#!/bin/sh\nexit 0\n' >"$T/h/not-executable.sh"
printf '#!/usr/bin/env php8-nosuch\n<?php exit(0);\n' >"$T/h/env-php.php"
printf '#!/opt/nosuch/php\n<?php exit(0);\n' >"$T/h/abs-php.php"
printf 'echo no interpreter line\n' >"$T/h/no-shebang.sh"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/in-my-path"
chmod 0755 "$T/h/good.sh" "$T/h/env-php.php" "$T/h/abs-php.php" \
    "$T/h/no-shebang.sh" "$T/bin/in-my-path"
chmod 0644 "$T/h/not-executable.sh"

# line TYPE: check's line about [type.TYPE]
line() {
	grep -F "[type.$1]: " <<<"$out"
}
write_config <<EOF2
[type.good]
handler = exec
command = $T/h/good.sh --flag

[type.missing]
handler = exec
command = $T/h/no-such-script.sh

[type.notexec]
handler = exec
command = $T/h/not-executable.sh

[type.notinpath]
handler = exec
command = php8-nosuch $T/h/good.sh

[type.envphp]
handler = exec
command = $T/h/env-php.php

[type.absphp]
handler = exec
command = $T/h/abs-php.php

[type.noshebang]
handler = exec
command = $T/h/no-shebang.sh

[type.viapath]
handler = exec
command = in-my-path

[type.badarg]
handler = exec
command = /bin/sh $T/h/no-such-script.php
EOF2

run env PATH="$T/bin:$PATH" "$JOBRUN" -c "$CONF" check
is "$rc" 78 "check with broken exec handlers exits 78"
like "$(line good)" "^ok +\[type.good\]: $T/h/good.sh \(#!/bin/sh\)$" \
    "a script with #!/bin/sh: ok, and what it is"
like "$(line missing)" "^problem +\[type.missing\]: $T/h/no-such-script.sh: No such file or directory$" \
    "a missing script is a problem"
like "$(line notexec)" "^problem +\[type.notexec\]: $T/h/not-executable.sh: Permission denied$" \
    "a script that is not executable is a problem"
like "$(line notinpath)" "^problem +\[type.notinpath\]: php8-nosuch: not found in PATH$" \
    "an interpreter not in PATH is a problem"
like "$(line envphp)" "^problem +\[type.envphp\]: $T/h/env-php.php: #!/usr/bin/env php8-nosuch: php8-nosuch is not in PATH$" \
    "#!/usr/bin/env with a program not in PATH is a problem"
like "$(line absphp)" "^problem +\[type.absphp\]: $T/h/abs-php.php: its interpreter /opt/nosuch/php: No such file or directory$" \
    "a #! interpreter that is not there is a problem"
like "$(line noshebang)" "^problem +\[type.noshebang\]: $T/h/no-shebang.sh has no #! line: execve refuses it \(exit status 127, Exec format error, at every attempt\)$" \
    "a script without #! is a problem (execve refuses it)"
like "$(line viapath)" "^advice +\[type.viapath\]: in-my-path is $T/bin/in-my-path, in a directory that cron's PATH \(/usr/bin:/bin, unless the crontab sets one\) lacks$" \
    "a command found in PATH, but outside cron's: advice, with where"
like "$(grep -A1 '\[type.viapath\]' <<<"$out" | tail -n 1)" "fix: a PATH= line in the crontab, or a full path in command" \
    "its fix"
like "$(grep -A1 '\[type.notexec\]' <<<"$out" | tail -n 1)" "fix: chmod \+x $T/h/not-executable.sh$" \
    "a script that is not executable: the fix is chmod +x"
like "$(grep -A1 '\[type.noshebang\]' <<<"$out" | tail -n 1)" "fix: add a #! line to $T/h/no-shebang.sh \(#!/usr/bin/php, say\), or name its interpreter first in command$" \
    "a script without #!: the fix says to add one"
like "$(line badarg)" "^advice +\[type.badarg\]: /bin/sh: argument $T/h/no-such-script.php: No such file or directory$" \
    "the script after its interpreter is not there: advice (check sees only the program)"
like "$out" "(^|
)ok +exec commands were looked up in PATH=$T/bin:" "check says which PATH it looked in"
like "$(grep -A1 '\[type.notinpath\]' <<<"$out" | tail -n 1)" "fix: give command a full path, or set PATH where the run starts \(a PATH= line in the crontab; cron's is /usr/bin:/bin\)" \
    "the fix says a run has the PATH of what starts it"

# Under cron's PATH the command in $T/bin is not found: what check says is
# what a run started by cron meets.
run env PATH=/usr/bin:/bin "$JOBRUN" -c "$CONF" check
like "$(line viapath)" "^problem +\[type.viapath\]: in-my-path: not found in PATH$" \
    "under cron's PATH=/usr/bin:/bin, the same command is a problem"
like "$out" "ok +exec commands were looked up in PATH=/usr/bin:/bin," "and check names that PATH"

# The runs agree: what check calls a problem costs the job an attempt.
run env PATH=/usr/bin:/bin "$JOBRUN" -c "$CONF" enqueue --type=viapath --key=v1
run env PATH=/usr/bin:/bin "$JOBRUN" -c "$CONF" --type=viapath
is "$rc/$(sql "SELECT attempts FROM polling_jobs WHERE business_key = 'v1'")" 1/1 \
    "(a run under that PATH spends an attempt on it: exit 1)"
like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'v1'")" \
    "^exit status 127: jobrun: cannot execute handler: in-my-path: No such file or directory" \
    "(its last_error: the handler could not start)"
# -q, cron's level, says so at once: every retry would repeat it.
sql "UPDATE polling_jobs SET next_run_at = NOW() WHERE business_key = 'v1'"
run env PATH=/usr/bin:/bin "$JOBRUN" -c "$CONF" -q --type=viapath
like "$err" "^ts=\S+ level=warn job=[0-9]+ type=viapath attempt=2 max_attempts=5 outcome=retry ms=[0-9]+ delay=(21[7-9]|2[23][0-9]|240) msg=\"exit status 127: jobrun: cannot execute handler: in-my-path: No such file or directory" \
    "-q: a handler that cannot start is said, though retried"

# --- http ------------------------------------------------------------------

port=$(free_port)
export CHECK_TOKEN=secret-85
write_config <<EOF2
[type.up]
handler = http
url = $HTTP_URL/ok
header_env = Authorization: CHECK_TOKEN

[type.posts_only]
handler = http
url = $HTTP_URL/status/405

[type.gone]
handler = http
url = $HTTP_URL/nowhere

[type.refused]
handler = http
url = http://127.0.0.1:$port/jobs

[type.denied]
handler = http
url = $HTTP_URL/status/401
EOF2
run jobrun check
is "$rc" 78 "check with broken http handlers exits 78"
like "$(line up)" "^ok +\[type.up\]: $HTTP_URL/ok answers \(HTTP 200 to a HEAD request\)$" \
    "a URL that answers 200: ok"
like "$(line posts_only)" "^ok +\[type.posts_only\]: .* answers \(HTTP 405 to a HEAD request\)$" \
    "405 (the endpoint takes POST only): ok, the endpoint is there"
like "$(line gone)" "^problem +\[type.gone\]: $HTTP_URL/nowhere answers a HEAD request with HTTP 404$" \
    "404 is a problem"
like "$(line refused)" "^problem +\[type.refused\]: http://127.0.0.1:$port/jobs: .*[Cc]onnect" \
    "a refused connection is a problem"
like "$(line denied)" "^problem +\[type.denied\]: .* answers a HEAD request with HTTP 401$" \
    "401 is a problem"
is "$(http_py 'print(sorted(set(r["method"] for r in reqs)))')" "['HEAD']" \
    "check sent HEAD requests only: no job"
is "$(http_req path=/ok header:Authorization)" "secret-85" \
    "with the configured headers"

# A header_env variable missing (as under cron): that type is a problem,
# the others are still checked.
run env -u CHECK_TOKEN "$JOBRUN" -c "$CONF" check
like "$(grep -F 'CHECK_TOKEN' <<<"$out")" "^problem .*CHECK_TOKEN" \
    "a header_env variable missing: a problem naming it"
like "$(line posts_only)" "^ok " "the other types are still checked"

# A run meets it the same way: the type that needs the variable waits, its
# jobs untouched, and the others run; the run exits 78 so cron mails it.
cat >>"$CONF" <<EOF2

[type.local]
handler = exec
command = $T/h/good.sh
EOF2
insert_job u1 up
insert_job l1 local
run env -u CHECK_TOKEN "$JOBRUN" -c "$CONF" -q
is "$rc" 78 "a run with a header_env variable unset exits 78"
like "$err" "\[type.up\] .*CHECK_TOKEN.*; its jobs wait" "it says which type waits, and why"
is "$(sql "SELECT CONCAT(status, '/', attempts) FROM polling_jobs WHERE business_key = 'u1'")" pending/0 \
    "that type's job is not claimed: no attempt spent"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'l1'")" success \
    "the other type's job ran"

# --- what waits -----------------------------------------------------------

# Pending jobs of a type no section here names (a typo in the
# application's INSERT), and a paused type: both wait, and check says so.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     VALUES ('t1', 'order_synk', NOW(), NOW(), NOW()), ('t2', 'order_synk', NOW(), NOW(), NOW())"
e=$(mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" 2>&1 \
    <"$TOP/sql/003_flow.sql") || bail_out "cannot load sql/003_flow.sql: $e"
run jobrun pause local
[ "$rc" = 0 ] || bail_out "pause failed: $err"
run env CHECK_TOKEN=x "$JOBRUN" -c "$CONF" check
like "$out" "(^|
)advice +2 pending job\(s\) of type order_synk: no \[type.order_synk\] section in $CONF, so no run with it claims them" \
    "check names the pending jobs of a type without a section"
like "$out" "(^|
)advice +type local is paused: no run claims its jobs" "and each paused type"
like "$out" "(^|
) +fix: jobrun resume local, when it should run again" "with the command that ends it"

# A PHP application in another time zone than the database session: its
# jobs are created "in the future" and wait that long, without an error.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at, updated_at)
     VALUES ('tz1', 'local', NOW() + INTERVAL 8 HOUR, NOW() + INTERVAL 8 HOUR, NOW() + INTERVAL 8 HOUR),
            ('tz2', 'local', NOW() + INTERVAL 1 DAY, NOW() + INTERVAL 30 SECOND, NOW())"
run env CHECK_TOKEN=x "$JOBRUN" -c "$CONF" check
like "$out" "(^|
)advice +1 pending job\\(s\\) created in the future by the server's clock, up to 8\\.0 h ahead: the application writes its times in another time zone" \
    "check: a job created 8 h in the future is a time zone mistake (one 30 s ahead is not)"
like "$out" "(^|
) +fix: write created_at and next_run_at with the database's NOW\\(\\), or set \\[database\\] time_zone to the application's" \
    "with its fix"
