#!/bin/bash
# Operations glue: the systemd units pass systemd-analyze verify, and the
# service's ExecStart hands the LoadCredential password to a real run; the
# timer fires every minute; the cron.d lines are well formed and jobrun
# accepts each of their command lines; the bash completion loads and
# completes commands, options, --status values and the config's type names;
# the PHP handler example gets each outcome of jobrun's exec contract
# through a real run; the example alert rules name only metrics a real run
# writes (and, with promtool, fire on the right series); make install puts
# the files in place with the right modes and keeps an existing config,
# make uninstall removes them, make install with another SYSCONFDIR on a
# built tree installs a binary that reads its configuration there; and,
# with JOBRUN_TEST_DEB=1 as root, the Debian package builds, installs,
# runs and is removed.
. "${0%/*}/lib.sh"

plan 71
setup_db

# man pages where man(1) finds them, for Documentation=man:... in the units
mkdir -p "$T/man/man1" "$T/man/man5" "$T/man/man7"
ln -s "$TOP/man/jobrun.1" "$T/man/man1/jobrun.1"
ln -s "$TOP/man/jobrun.conf.5" "$T/man/man5/jobrun.conf.5"
ln -s "$TOP/man/jobrun.7" "$T/man/man7/jobrun.7"

# --- systemd ------------------------------------------------------------------

SERVICE=$TOP/contrib/systemd/jobrun.service
TIMER=$TOP/contrib/systemd/jobrun.timer
WAITING=$TOP/contrib/systemd/jobrun-wait.service

if command -v systemd-analyze >/dev/null 2>&1; then
	run env MANPATH="$T/man" systemd-analyze verify "$TIMER" "$SERVICE" \
	    "$WAITING"
	is "$rc:$out$err" 0: "systemd-analyze verify: the three units pass, no warning"

	cp "$SERVICE" "$T/jobrun.service"
	printf '[Service]\nBogusKey=1\n' >>"$T/jobrun.service"
	run env MANPATH="$T/man" systemd-analyze verify "$T/jobrun.service"
	like "$err" "Unknown key 'BogusKey'" \
	    "(verify does report a mistake, so its silence above means something)"

	cal=$(sed -n 's/^OnCalendar=//p' "$TIMER")
	times=$(TZ=UTC systemd-analyze calendar --iterations=3 "$cal" |
	    sed -n 's/^ *\(Next elapse\|Iter\. #[0-9]\): *//p' |
	    while read -r t; do date -u -d "${t% UTC}" +%s; done | tr '\n' ' ')
	read -r t1 t2 t3 <<<"$times"
	is "$((t2 - t1)) $((t3 - t2)) $((t1 % 60))" "60 60 0" \
	    "the timer fires at second 0 of every minute ($cal)"
else
	skip 3 "systemd-analyze is not installed"
fi

unit_key() {
	sed -n "s/^$2=//p" "$1" | tr '\n' ' ' | sed 's/ $//'
}
is "$(unit_key "$TIMER" AccuracySec) $(unit_key "$TIMER" Persistent)" \
    "1s false" "timer: AccuracySec=1s, Persistent=false"
is "$(unit_key "$SERVICE" Type) $(unit_key "$SERVICE" User) $(unit_key "$SERVICE" KillMode) $(unit_key "$SERVICE" KillSignal)" \
    "oneshot jobrun mixed SIGTERM" \
    "service: oneshot, user jobrun, SIGTERM to jobrun alone on stop"
hardening=
for k in NoNewPrivileges ProtectSystem ProtectHome PrivateTmp PrivateDevices \
    ProtectKernelTunables ProtectKernelModules ProtectControlGroups \
    RestrictSUIDSGID LockPersonality RestrictRealtime \
    SystemCallArchitectures; do
	hardening+="$k=$(unit_key "$SERVICE" "$k") "
done
is "$hardening" "NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes ProtectKernelTunables=yes ProtectKernelModules=yes ProtectControlGroups=yes RestrictSUIDSGID=yes LockPersonality=yes RestrictRealtime=yes SystemCallArchitectures=native " \
    "service: hardened"
is "$(unit_key "$SERVICE" LoadCredential)" db-password:/etc/jobrun/db-password \
    "service: the password comes from LoadCredential"

# The service's ExecStart as systemd runs it ($$ is a literal $), with the
# real jobrun and a config of its own for /usr/bin/jobrun and
# /etc/jobrun.conf, and the credential where systemd puts it: a database
# user whose password is only in the credential gets in.
pwuser=jobrun_t80
# shellcheck disable=SC2016 # a $ in the password, literally
password='pa ss$word"q'
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -e "
    DROP USER IF EXISTS '$pwuser'@'localhost';
    CREATE USER '$pwuser'@'localhost' IDENTIFIED BY '$password';
    GRANT ALL ON \`$DB\`.* TO '$pwuser'@'localhost'" ||
    bail_out "cannot create database user $pwuser"
defer "mariadb --no-defaults -S '$JOBRUN_TEST_SOCKET' -uroot -e \"DROP USER IF EXISTS '$pwuser'@'localhost'\""
mkdir -p "$T/cred"
printf '%s\n' "$password" >"$T/cred/db-password"
cat >"$T/unit.conf" <<EOF2
[database]
socket = $JOBRUN_TEST_SOCKET
user = $pwuser
database = $DB

[type.unit]
handler = noop
EOF2
exec_start=$(sed -n 's/^ExecStart=//p' "$SERVICE")
exec_start=${exec_start//'$$'/'$'}
exec_start=${exec_start//\/usr\/bin\/jobrun/$JOBRUN}
exec_start=${exec_start//\/etc\/jobrun.conf/$T/unit.conf}
eval "set -- $exec_start"
insert_job unit-1 unit
run env CREDENTIALS_DIRECTORY="$T/cred" "$@"
is "$rc:$err" 0: "ExecStart with the credential: the run connects and exits 0"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'unit-1'")" \
    success "... and runs the due job"
printf 'wrong\n' >"$T/cred/db-password"
run env CREDENTIALS_DIRECTORY="$T/cred" "$@"
is "$rc" 69 "with a wrong password in the credential, the database refuses (69)"
set --

# --- cron.d -------------------------------------------------------------------

CRON=$TOP/contrib/cron.d/jobrun
# The schedule lines, active or commented out: five time fields, the user.
sched=$(sed -n 's/^#\{0,1\}\(\([^ #=]\{1,\} \{1,\}\)\{5\}jobrun \{1,\}.*\)$/\1/p' "$CRON")
active=$(grep -c '^[^#].*jobrun' "$CRON")
is "$(wc -l <<<"$sched") $active" "5 1" \
    "cron.d: five schedule lines, one of them active"
bad=$(awk '{ for (i = 1; i <= 5; i++) if ($i !~ /^[0-9*\/,-]+$/) print }
    $6 != "jobrun" { print }' <<<"$sched")
is "$bad" "" "cron.d: each has five time fields and runs as jobrun"
like "$(grep 'sleep 30;' <<<"$sched")" "--max-seconds=2[0-9]( |$)" \
    "cron.d: the half-minute line sleeps 30 s and claims for under 30 s"
is "$(grep -c -- '--max-seconds=2[0-9]' <<<"$sched") $(grep -c flock <<<"$sched")" \
    "2 0" "cron.d: both twice-a-minute lines claim for under 30 s, without flock"

# jobrun accepts every command line: with the config swapped for a missing
# one, each stops on the config (78), not on its arguments (64).
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${JOBRUN_TIMEOUT[*]}" "$JOBRUN" >"$T/bin/jobrun"
# Under valgrind, where a jobrun costs a second or more of CPU, the
# completion below asks the same --completion-helper questions ~80 times:
# each distinct question is put to jobrun (under valgrind) once, and its
# answer (jobrun's own tables: the same words for the same question)
# kept for the next time it is asked.  Every other command line runs.
if under_valgrind; then
	mkdir -p "$T/asked"
	cat >"$T/bin/jobrun" <<EOF2
#!/bin/bash
if [ "\${1:-}" = --completion-helper ]; then
	kept=$T/asked/\$(printf '%s\\n' "\$@" | md5sum | cut -c1-32)
	if [ ! -e "\$kept.rc" ]; then
		${JOBRUN_TIMEOUT[*]} "$JOBRUN" "\$@" >"\$kept.out" 2>"\$kept.err"
		echo \$? >"\$kept.rc"
	fi
	cat "\$kept.out"
	cat "\$kept.err" >&2
	exit "\$(cat "\$kept.rc")"
fi
exec ${JOBRUN_TIMEOUT[*]} "$JOBRUN" "\$@"
EOF2
fi
chmod +x "$T/bin/jobrun"
cron_rcs=
while read -r _ _ _ _ _ _ cmd; do
	cmd=${cmd//sleep 30;/sleep 0;}
	cmd=${cmd//\/etc\/jobrun.conf/$T/missing.conf}
	PATH=$T/bin:$PATH sh -c "$cmd" >/dev/null 2>"$T/cron.err"
	cron_rcs+="$? "
done <<<"$sched"
is "$cron_rcs" "78 78 78 78 78 " "cron.d: jobrun accepts each line's arguments"

# --- bash completion ----------------------------------------------------------

COMPLETION=$TOP/contrib/bash-completion/jobrun
is "$(bash -c 'source "$1" && complete -p jobrun' _ "$COMPLETION" 2>&1)" \
    "complete -F _jobrun jobrun" "completion: loads in bash and completes jobrun"

cat >"$T/types.conf" <<'EOF2'
[database]
database = x

[type.order_sync]
handler = noop
  [type.smoke]
handler = noop
#[type.commented_out]
;[type.also_commented]
[type.eu:orders-v2.1]
handler = noop
EOF2

# complete WORD...: what _jobrun offers for the words as readline splits
# them (--status=pe is "--status" "=" "pe"), the last being completed
complete_words() {
	PATH=$T/bin:$PATH bash -c 'source "$1"; shift
	    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _jobrun
	    printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@" | sort | tr '\n' ' '
}
# complete_line LINE: the same, as bash calls it (COMP_LINE, COMP_POINT)
complete_line() {
	PATH=$T/bin:$PATH bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}
	    read -r -a COMP_WORDS <<<"$2"; COMP_CWORD=${#COMP_WORDS[@]}; _jobrun
	    printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$1" | sort | tr '\n' ' '
}

is "$(complete_words jobrun st)" "status " "completion: jobrun st -> status"
is "$(complete_words jobrun '')" \
    "audit cancel check enqueue list pause purge report resume retry run schedules show status " \
    "completion: jobrun <TAB> -> the fourteen commands"
is "$(complete_words jobrun list --status =)" \
    "failed pending processing success " \
    "completion: jobrun list --status= -> the four statuses"
is "$(complete_words jobrun list --status = p)" "pending processing " \
    "completion: jobrun list --status=p -> pending processing"
is "$(complete_words jobrun purge --status =)" "failed success " \
    "completion: jobrun purge --status= -> only success and failed"
is "$(complete_words jobrun "--config" = "$T/types.conf" --type =)" \
    "eu:orders-v2.1 order_sync smoke " \
    "completion: --type= -> the [type.NAME] sections of --config"
is "$(JOBRUN_CONFIG=$T/types.conf complete_words jobrun status --type '')" \
    "eu:orders-v2.1 order_sync smoke " \
    "completion: --type NAME from \$JOBRUN_CONFIG"
is "$(JOBRUN_CONFIG=$T/types.conf complete_words jobrun pause o)" \
    "order_sync " "completion: jobrun pause's operand is a type name"
is "$(complete_line "jobrun -c $T/types.conf run --type=eu:")" "orders-v2.1 " \
    "completion: a type name with ':' (a word break) completes after it"
is "$(complete_words jobrun list --st) $(complete_words jobrun --log =)" \
    "--status=  stderr syslog " "completion: options and --log values"

# Every option jobrun --help shows is offered, and jobrun takes each option
# the completion offers for a command with that command.
help_opts=$(jobrun_raw --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
offered=$(for c in run enqueue status list show retry cancel purge check schedules report audit; do
	complete_words jobrun "$c" --
done | tr ' ' '\n' | sed 's/=$//' | sort -u)
is "$(comm -23 <(printf '%s\n' "$help_opts") <(printf '%s\n' "$offered") | tr '\n' ' ')" "" \
    "completion: offers every option of jobrun --help"
# (Under valgrind run, enqueue and purge: jobrun's parser is one walk of
# each command's table of options, and the other nine commands cost a
# jobrun each, a second of CPU there, for the same path.)
refused= cmds="run enqueue status list show retry cancel purge check schedules report audit"
under_valgrind && cmds="run enqueue purge"
for c in $cmds; do
	args=()
	for o in $(complete_words jobrun "$c" --); do
		case $o in
		--help= | --help | --version) ;;
		--range=) args+=(--range=1-2) ;;
		--at=) args+=("--at=2030-01-01 00:00:00") ;;
		--status=) args+=(--status=failed) ;;
		--older-than= | --since=) args+=("${o}1d") ;;
		--log=) args+=(--log=stderr) ;;
		--config=) args+=(--config="$T/missing.conf") ;;
		--verbose) ;;	# -q and -v contradict each other
		*=) args+=("${o}1") ;;
		*) args+=("$o") ;;
		esac
	done
	out=$(jobrun_raw "$c" "${args[@]}" 2>&1)
	if [[ $out == *"is not for"* || $out == *"unknown option"* ]]; then
		refused+="$c: $out; "
	fi
done
is "$refused" "" "completion: jobrun accepts every option offered for each command$(under_valgrind && echo ' (under valgrind: run, enqueue, purge)')"

# --- PHP handler ----------------------------------------------------------------

PHP_HANDLER=$TOP/contrib/handlers/php-handler.php
if command -v php >/dev/null 2>&1; then
	run php -l "$PHP_HANDLER"
	is "$rc" 0 "php -l: the PHP handler example parses"

	# Through a real run, with the checkpoint columns: each outcome.
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
	    <"$TOP/sql/002_checkpoint.sql" || bail_out "cannot apply 002_checkpoint.sql"
	write_config <<EOF2
[type.php]
handler = exec
command = php $PHP_HANDLER
timeout = 30
EOF2
	insert_job php-ok php "'{\"order_id\":10001}'"
	insert_job php-bad php "'{\"order_id\":\"x\"}'"
	insert_job php-temp php "'{\"order_id\":1,\"demo\":\"temporary\"}'"
	insert_job php-later php "'{\"order_id\":1,\"demo\":\"not_yet\"}'"
	insert_job php-long php "'{\"order_id\":2,\"lines\":250}'"
	run jobrun --type=php
	is "$rc" 1 "php: the run exits 1 (a job retried, one failed)"
	php_row() {
		sql "SELECT CONCAT_WS(' ', status, attempts, checkpoint)
		    FROM polling_jobs WHERE business_key = '$1'"
	}
	is "$(php_row php-ok)" "success 1" "php: exit 0 -> success"
	is "$(php_row php-bad)" "failed 1" "php: PermanentFailure, exit 65 -> failed at once"
	like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'php-bad'")" \
	    "^exit 65 \(permanent failure\): .*no positive integer order_id" \
	    "php: ... and last_error says why"
	is "$(php_row php-temp)" "pending 1" "php: TemporaryFailure, exit 75 -> retried, attempt spent"
	is "$(php_row php-later)" "pending 0" \
	    "php: NotYet, exit 99 -> snoozed, no attempt spent"
	between "$(sql "SELECT TIMESTAMPDIFF(SECOND, NOW(), next_run_at)
	    FROM polling_jobs WHERE business_key = 'php-later'")" 280 300 \
	    "php: ... for the 300 s it printed on its last line"
	is "$(php_row php-long)" 'success 1 {"line":200}' \
	    "php: long job -> success, its checkpoints saved on fd 3"
	# The next attempt resumes after the checkpoint (and then, asked to,
	# fails, so that its output is in last_error).
	sql "UPDATE polling_jobs SET status = 'pending', next_run_at = NOW(),
	    payload = '{\"order_id\":2,\"lines\":350,\"demo\":\"temporary\"}'
	    WHERE business_key = 'php-long'"
	run jobrun --type=php
	like "$(sql "SELECT last_error FROM polling_jobs WHERE business_key = 'php-long'")" \
	    "attempt 2 of 5.*resuming after line 200" \
	    "php: the next attempt resumes from JOBRUN_CHECKPOINT"
else
	skip 10 "php is not installed"
fi

# --- alert rules ----------------------------------------------------------------

ALERTS=$TOP/contrib/prometheus/jobrun-alerts.yml
write_config <<EOF2
[type.m_ok]
handler = noop

[type.m_bad]
handler = exec
command = /bin/sh -c "exit 65"
EOF2
insert_job m-bad m_bad
run jobrun --metrics-file="$T/jobrun.prom"
insert_job m-ok m_ok
run jobrun --metrics-file="$T/jobrun.prom"
is "$rc" 0 "metrics: a run with --metrics-file exits 0"
written=$(grep -o '^jobrun_[a-z_]*' "$T/jobrun.prom" | sort -u)
used=$(python3 -c '
import re, sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]:
        print("\n".join(re.findall(r"jobrun_[a-z_]+", r["expr"])))' "$ALERTS" | sort -u)
is "$(comm -23 <(printf '%s\n' "$used") <(printf '%s\n' "$written") | tr '\n' ' ')" "" \
    "alerts: every metric the rules use is one jobrun writes"
if command -v promtool >/dev/null 2>&1; then
	run promtool check rules "$ALERTS"
	is "$rc" 0 "promtool check rules: the rules and their templates are valid"
	# The rules without annotations (promtool compares those too).
	python3 -c '
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
for g in doc["groups"]:
    for r in g["rules"]:
        r.pop("annotations", None)
yaml.safe_dump(doc, open(sys.argv[2], "w"))' "$ALERTS" "$T/rules.yml"
	cat >"$T/rules-test.yml" <<'EOF2'
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # h1 runs every minute and succeeds; a type lags, failures grow.
      - series: 'jobrun_last_run_timestamp_seconds{instance="h1"}'
        values: '0+60x40'
      - series: 'jobrun_last_success_timestamp_seconds{instance="h1"}'
        values: '0+60x40'
      - series: 'jobrun_queue_lag_seconds{instance="h1",type="slow"}'
        values: '0 0 400x38'
      - series: 'jobrun_queue_lag_seconds{instance="h1",type="fast"}'
        values: '0x40'
      - series: 'jobrun_queue_failed{instance="h1",type="slow"}'
        values: '0x20 1x20'
      - series: 'jobrun_queue_expired_locks{instance="h1",type="slow"}'
        values: '0x40'
      # h2's runs stopped at minute 5: its file stays as it was.
      - series: 'jobrun_last_run_timestamp_seconds{instance="h2"}'
        values: '0+60x5 300x35'
      - series: 'jobrun_last_success_timestamp_seconds{instance="h2"}'
        values: '0+60x5 300x35'
      # h3 runs, but none has succeeded since minute 0; h4 never did.
      - series: 'jobrun_last_run_timestamp_seconds{instance="h3"}'
        values: '0+60x40'
      - series: 'jobrun_last_success_timestamp_seconds{instance="h3"}'
        values: '0x40'
      - series: 'jobrun_last_run_timestamp_seconds{instance="h4"}'
        values: '0+60x40'
    alert_rule_test:
      - eval_time: 8m
        alertname: JobrunQueueLagHigh
        exp_alerts: []
      - eval_time: 13m
        alertname: JobrunQueueLagHigh
        exp_alerts:
          - exp_labels: {severity: warning, instance: h1, type: slow}
      - eval_time: 4m
        alertname: JobrunNotRunning
        exp_alerts: []
      - eval_time: 12m
        alertname: JobrunNotRunning
        exp_alerts:
          - exp_labels: {severity: critical, instance: h2}
      - eval_time: 4m
        alertname: JobrunNoSuccessfulRun
        exp_alerts: []
      - eval_time: 12m
        alertname: JobrunNoSuccessfulRun
        exp_alerts:
          - exp_labels: {severity: critical, instance: h4}
      - eval_time: 22m
        alertname: JobrunNoSuccessfulRun
        exp_alerts:
          - exp_labels: {severity: critical, instance: h3}
          - exp_labels: {severity: critical, instance: h4}
      - eval_time: 27m
        alertname: JobrunNoSuccessfulRun
        exp_alerts:
          - exp_labels: {severity: critical, instance: h2}
          - exp_labels: {severity: critical, instance: h3}
          - exp_labels: {severity: critical, instance: h4}
      - eval_time: 19m
        alertname: JobrunFailedJobsGrowing
        exp_alerts: []
      - eval_time: 25m
        alertname: JobrunFailedJobsGrowing
        exp_alerts:
          - exp_labels: {severity: warning, instance: h1, type: slow}
      - eval_time: 30m
        alertname: JobrunExpiredLocks
        exp_alerts: []
      - eval_time: 30m
        alertname: JobrunMetricsMissing
        exp_alerts: []
EOF2
	run promtool test rules "$T/rules-test.yml"
	is "$rc" 0 "promtool test rules: each alert fires on its series, and only then"
	[ "$rc" -eq 0 ] || diag "$out"
else
	skip 2 "promtool is not installed (Debian package prometheus)"
fi

# --- make install / uninstall ---------------------------------------------------

ROOT=$T/root
if [ -x "$TOP/jobrun" ]; then
	# -o jobrun: install the binary that is there, never rebuild it here.
	run make -C "$TOP" -o jobrun install DESTDIR="$ROOT" PREFIX=/usr
	is "$rc" 0 "make install DESTDIR=... PREFIX=/usr"
	modes=$(cd "$ROOT" && find . -type f -printf '%m %p\n' | sort -k2 | tr '\n' ' ')
	is "$modes" "640 ./etc/jobrun.conf 755 ./usr/bin/jobrun 644 ./usr/share/man/man1/jobrun.1 644 ./usr/share/man/man5/jobrun.conf.5 644 ./usr/share/man/man7/jobrun.7 " \
	    "make install: binary 0755, man pages 0644, config 0640"
	cmp -s "$ROOT/etc/jobrun.conf" "$TOP/etc/jobrun.conf"
	is "$?" 0 "make install: the config is etc/jobrun.conf"
	like "$("$ROOT/usr/bin/jobrun" --version)" "^jobrun $VERSION" \
	    "make install: the installed binary runs"

	echo '# the operator was here' >>"$ROOT/etc/jobrun.conf"
	chmod 0600 "$ROOT/etc/jobrun.conf"
	rm "$ROOT/usr/bin/jobrun"
	run make -C "$TOP" -o jobrun install DESTDIR="$ROOT" PREFIX=/usr
	is "$rc:$(tail -n 1 "$ROOT/etc/jobrun.conf"):$(stat -c %a "$ROOT/etc/jobrun.conf")" \
	    "0:# the operator was here:600" \
	    "make install again: an existing config is left as it is"
	ok "make install again: the binary is back" test -x "$ROOT/usr/bin/jobrun"

	run make -C "$TOP" uninstall DESTDIR="$ROOT" PREFIX=/usr
	left=$(cd "$ROOT" && find . -type f | sort | tr '\n' ' ')
	is "$rc:$left" "0:./etc/jobrun.conf " \
	    "make uninstall: binary and man pages gone, the operator's config kept"

	# A tree built for /etc, installed with another SYSCONFDIR: the
	# binary installed must read its configuration there, not the path
	# compiled in before.  In a copy of the tree and its objects (times
	# kept), since the other tests run $TOP/jobrun meanwhile.
	mkdir -p "$T/tree"
	# shellcheck disable=SC2046 # the objects' names, one word each
	(cd "$TOP" && tar -cf - Makefile src man etc jobrun \
	    $(ls build/*.o build/*.d build/defs.h 2>/dev/null)) | tar -xf - -C "$T/tree"
	default_config() {	# default_config JOBRUN: the path --help names
		"${JOBRUN_TIMEOUT[@]}" "$1" --help | sed -n 's/^ *then \(.*\))$/\1/p'
	}
	make -C "$T/tree" -s jobrun >"$T/build.log" 2>&1 ||
	    bail_out "cannot build the copy of the tree: $(tail -n 5 "$T/build.log")"
	is "$(default_config "$T/tree/jobrun")" /etc/jobrun.conf \
	    "a tree built with the default SYSCONFDIR reads /etc/jobrun.conf"
	run make -C "$T/tree" install SYSCONFDIR="$T/sysconf" DESTDIR="$T/root2" PREFIX=/usr
	is "$rc/$(default_config "$T/root2/usr/bin/jobrun")" "0/$T/sysconf/jobrun.conf" \
	    "make install SYSCONFDIR=DIR on it: the installed jobrun --help names DIR/jobrun.conf"
	run "${JOBRUN_TIMEOUT[@]}" "$T/root2/usr/bin/jobrun" check
	is "$rc/$err" "78/jobrun: open $T/sysconf/jobrun.conf: No such file or directory" \
	    "... and reads it there (check, the example being under DESTDIR)"
	ok "the example configuration is in DESTDIR/SYSCONFDIR" test -f "$T/root2$T/sysconf/jobrun.conf"
	touch "$T/before-again"
	run make -C "$T/tree" install SYSCONFDIR="$T/sysconf" DESTDIR="$T/root2" PREFIX=/usr
	is "$rc/$(find "$T/tree/jobrun" "$T/tree/build" -type f -newer "$T/before-again" | wc -l)" 0/0 \
	    "make install again with the same SYSCONFDIR: nothing is rebuilt"
else
	skip 12 "no $TOP/jobrun to install (run make)"
fi

# --- Debian package -------------------------------------------------------------

# http types load libcurl at run time (dlopen), which ${shlibs:Depends}
# cannot see: the package must name it.
is "$(sed -n 's/^Recommends: *//p' "$TOP/debian/control" | tr ', ' '\n\n' | grep -cx libcurl4)" 1 \
    "debian/control recommends libcurl4"

deb_tests=16
if [ "${JOBRUN_TEST_DEB:-}" != 1 ]; then
	skip $deb_tests "set JOBRUN_TEST_DEB=1 to build and install the Debian package"
elif [ "$(id -u)" != 0 ]; then
	skip $deb_tests "installing the Debian package needs root"
elif ! command -v dpkg-buildpackage >/dev/null 2>&1 || ! command -v dh >/dev/null 2>&1; then
	skip $deb_tests "dpkg-dev and debhelper are not installed (contrib/install-deps)"
elif dpkg-query -W -f='${db:Status-Status}' jobrun 2>/dev/null | grep -q installed ||
    [ -e /etc/jobrun.conf ] || [ -e /usr/bin/jobrun ]; then
	skip $deb_tests "jobrun is already installed here; not touching it"
else
	version=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
	make -C "$TOP" deb >"$T/deb.log" 2>&1
	rc=$?
	is "$rc" 0 "make deb: dpkg-buildpackage builds the package"
	[ "$rc" -eq 0 ] || diag "$(tail -n 30 "$T/deb.log")"
	deb=$TOP/build/deb/jobrun_${version}_$(dpkg --print-architecture).deb
	like "$(cat "$T/deb.log")" "All tests successful" "make deb: the unit tests ran in the build"
	like "$(dpkg-deb -f "$deb" Recommends 2>&1)" '(^|[ ,])libcurl4($|[ ,(])' \
	    "the package recommends libcurl4, which http types load at run time"
	# Linked as Debian links the client library: dpkg-shlibdeps names
	# libmariadb3, so its security updates reach jobrun.
	like "$(dpkg-deb -f "$deb" Depends 2>&1)" '(^|[ ,])libmariadb3 \(>= [^)]*\)' \
	    "the package depends on libmariadb3, found by dpkg-shlibdeps"
	defer "dpkg -P jobrun"
	run dpkg -i "$deb"
	is "$rc" 0 "dpkg -i $(basename "$deb")"
	[ "$rc" -eq 0 ] || diag "$out" "$err"
	like "$(/usr/bin/jobrun --version 2>&1)" "^jobrun ${version%-*}" \
	    "/usr/bin/jobrun --version runs from the package"
	files=$(dpkg -L jobrun)
	is "$(grep -c -x -E '/usr/share/man/(man1/jobrun\.1|man5/jobrun\.conf\.5|man7/jobrun\.7)\.gz' <<<"$files")" \
	    3 "dpkg -L jobrun lists the three man pages"
	is "$(grep -c -E '^(/lib/systemd/system/jobrun(\.service|\.timer|-wait\.service)|/usr/share/bash-completion/completions/jobrun|/usr/share/doc/jobrun/examples/prometheus/jobrun-alerts\.yml|/usr/share/jobrun/sql/schema\.sql)$' <<<"$files")" \
	    6 "the package has the units, the completion, the alert rules and the schema"
	is "$(dpkg-query -W -f='${Conffiles}' jobrun | awk '{print $1}' | tr -d '\n')" \
	    /etc/jobrun.conf "/etc/jobrun.conf is a conffile"
	is "$(stat -c '%a %U:%G' /etc/jobrun.conf)" "640 root:jobrun" \
	    "/etc/jobrun.conf is mode 0640, group jobrun (a system user the package made)"
	ok "the timer is not enabled" \
	    not test -e /etc/systemd/system/timers.target.wants/jobrun.timer
	if command -v systemd-analyze >/dev/null 2>&1; then
		run systemd-analyze verify /lib/systemd/system/jobrun.timer \
		    /lib/systemd/system/jobrun.service \
		    /lib/systemd/system/jobrun-wait.service
		is "$rc:$out$err" 0: "the installed units pass systemd-analyze verify"
	else
		skip 1 "systemd-analyze is not installed"
	fi
	is "$(bash -c 'source /usr/share/bash-completion/completions/jobrun &&
	    COMP_WORDS=(jobrun st) COMP_CWORD=1 && _jobrun && echo "${COMPREPLY[*]}"')" \
	    status "the installed completion works"
	write_config <<EOF2
[type.deb]
handler = noop
EOF2
	insert_job deb-1 deb
	run /usr/bin/jobrun --config="$CONF" --json
	is "$rc:$(jget succeeded <<<"$out")" 0:1 "the packaged jobrun runs a job against the server"
	run dpkg -r jobrun
	is "$rc:$(test -e /usr/bin/jobrun && echo left)" 0: "dpkg -r jobrun removes /usr/bin/jobrun"
	run dpkg -P jobrun
	is "$rc:$(test -e /etc/jobrun.conf && echo left)" 0: "dpkg -P jobrun removes /etc/jobrun.conf"
fi
