#!/bin/bash
# A handler that runs longer than lock_seconds keeps its lock: the runner
# renews locked_until while it runs (every lock_seconds/3), so another
# runner does not recover (and re-run) the job, and the first runner's
# result is recorded.  The handler runs until the test lets it go; the
# second runner starts once the first lock would have expired by the
# server's clock.  Over a whole lock_seconds the lock's margin, sampled by
# the server, never drops below two thirds of lock_seconds less a second
# (locked_until is whole seconds): renewed every lock_seconds instead, it
# would reach 0.
. "${0%/*}/lib.sh"

plan 11
setup_db
write_config <<EOF2
[run]
lock_seconds = 6

[type.long]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go
timeout = 60
EOF2

# min_margin: the smallest margin of job 1's lock, in ms, over 7 s sampled
# every 100 ms by the server (a stored procedure: MySQL has no BEGIN NOT
# ATOMIC; NOW(6) is read afresh by each statement of a procedure, on both
# servers)
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <<'SQL' ||
DELIMITER //
CREATE PROCEDURE min_margin()
BEGIN
  DECLARE m BIGINT DEFAULT 99999999; DECLARE i INT DEFAULT 0;
  WHILE i < 70 DO
    SET m = LEAST(m, (SELECT TIMESTAMPDIFF(MICROSECOND, NOW(6), locked_until)
                      FROM polling_jobs WHERE id = 1) DIV 1000);
    DO SLEEP(0.1); SET i = i + 1;
  END WHILE;
  SELECT m;
END//
SQL
    bail_out "cannot create the procedure min_margin"

insert_job long:1 long
jobrun_bg -vv --json >"$T/a.out" 2>"$T/a.err"
a=$bg
ok "the handler started" wait_for 30 test -e "$T/started"
first=$(field 1 locked_until)
# past_first_lock: by the server's clock, the lock the claim took has expired
past_first_lock() {
	[ "$(sql "SELECT NOW() > '$first'")" = 1 ]
}
ok "the server's clock passes the claim's locked_until ($first)" wait_for 30 past_first_lock
ok "-vv logs the extensions" wait_for 30 file_has "$T/a.err" 'msg="job 1: lock extended by 6 s"'
# The smallest margin, in ms, over 7 s sampled every 100 ms by the server.
min_margin=$(sql "CALL min_margin()")
# Renewed every 2 s to NOW() + 6 s, truncated to the second: at least
# 3000 ms, less the renewal's own delay; renewed every 6 s it reaches 0.
slack=${JOBRUN_TEST_SLACK:-0}
ok "over 7 s the lock's margin stays above 1.5 s: renewed every lock_seconds/3 ($min_margin ms at least)" \
    test "$min_margin" -ge $((3000 - 1500 * (slack > 0 ? 2 : 1)))
left=$(field 1 'TIMESTAMPDIFF(SECOND, NOW(), locked_until)')
run jobrun --json
is "$(jget recovered <<<"$out")" 0 "past the first lock's expiry: not recovered"
is "$(jget claimed <<<"$out")" 0 "and not claimed by the second runner"
# Renewed at least every 2 s to NOW() + 6 s: 4 to 6 s ahead, less only
# when the runner is slow.
left_between "$left" 4 6 "locked_until was renewed: $left s ahead of NOW()"
touch "$T/go"
wait "$a"
is "$?" 0 "the first runner exits 0"
is "$(jget succeeded <"$T/a.out")/$(jget lost <"$T/a.out")" 1/0 "it records the success, nothing lost"
is "$(field 1 status)/$(field 1 attempts)" success/1 "the job ran once and is success"
is "$(grep -Ev 'level=(debug|info)' "$T/a.err")" "" "no warning or error from the first runner"
