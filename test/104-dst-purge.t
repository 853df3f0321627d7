#!/bin/bash
# Ages across a DST change: purge --older-than and retention (keep_success)
# count real time, never wall-clock time, in [database] time_zone.  The
# job table's times are local DATETIMEs: 20 minutes after Europe/Berlin's
# spring-forward, a row written 20 real minutes earlier reads 80 minutes
# old on the wall clock, and must outlive a 1 h rule; after the autumn
# fall-back, a row of the repeated hour's second pass reads younger than
# the real instant 1 h ago (which is in the first pass), and must too.
# Rows older than the rule by real time still go.  The server's clock is
# pinned for the jobrun account with init_connect (SET timestamp), which
# the server runs for an account without SUPER; the zone is the system's
# tzdata, loaded as mariadb-tzinfo-to-sql loads any zone.  Own server: it
# makes a user and sets a global.
. "${0%/*}/lib.sh"

plan 8
use_own_server
setup_db
[ -r /usr/share/zoneinfo/Europe/Berlin ] || bail_out "tzdata is needed"
mariadb-tzinfo-to-sql /usr/share/zoneinfo/Europe/Berlin Europe/Berlin \
    2>/dev/null | mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot mysql ||
    bail_out "cannot load Europe/Berlin"
sql "CREATE USER 'pinned'@'localhost' IDENTIFIED BY 'pinned-pw';
     GRANT ALL ON \`$DB\`.* TO 'pinned'@'localhost'" ||
    bail_out "cannot make the account pinned"
export JOBRUN_DB_PASSWORD=pinned-pw
{
	printf '[database]\nsocket = %s\nuser = pinned\ndatabase = %s\n' \
	    "$JOBRUN_TEST_SOCKET" "$DB"
	printf 'time_zone = Europe/Berlin\n\n[run]\nkeep_success = 1h\n\n'
	printf '[type.work]\nhandler = noop\n'
} >"$CONF"

# pin EPOCH: the jobrun account's sessions see NOW() at Unix time EPOCH
pin() {
	sql "SET GLOBAL init_connect = 'SET timestamp = $1'"
}
# done_at KEY LOCAL: a success row whose every time is LOCAL (Berlin)
done_at() {
	sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
	        next_run_at, created_at, updated_at, finished_at)
	     VALUES ('$1', 'work', 'success', 1, '$2', '$2', '$2', '$2')"
}
keys() {
	sql "SELECT IFNULL(GROUP_CONCAT(business_key ORDER BY business_key), '')
	     FROM polling_jobs"
}

# --- spring: 2027-03-28 03:10 CEST, 20 minutes after 02:00 CET became 03:00
pin 1806196200
run jobrun status --json
is "$rc" 0 "the account connects with the clock pinned"
is "$(mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -upinned -ppinned-pw \
    -N -B -e "SET time_zone = 'Europe/Berlin'; SELECT NOW()")" \
    "2027-03-28 03:10:00" "its NOW() is the pinned instant in Berlin"
done_at young '2027-03-28 01:50:00'	# 20 real minutes ago
done_at old '2027-03-28 01:00:00'	# 70 real minutes ago
run jobrun purge --status=success --older-than=1h --dry-run
is "$out" "purge: 1 job(s) would be deleted (dry run)" \
    "spring: the dry run counts only the row older than 1 h of real time"
run jobrun purge --status=success --older-than=1h
is "$rc/$(keys)" "0/young" \
    "spring: purge deletes the 70-minute-old row, keeps the 20-minute-old one"

sql "DELETE FROM polling_jobs"
done_at young '2027-03-28 01:50:00'
done_at old '2027-03-28 01:00:00'
run jobrun --json
is "$rc/$(jget deleted <<<"$out")/$(keys)" "0/1/young" \
    "spring: retention (keep_success = 1h) does the same"

# --- autumn: 2027-10-31 02:30 CET, the second pass of 02:00-03:00; the real
# instant 1 h ago is 02:30 CEST, the first pass
sql "DELETE FROM polling_jobs"
pin 1824946200
done_at second '2027-10-31 02:10:00'	# 20 real minutes ago, CET
done_at old '2027-10-31 00:30:00'	# 3 real hours ago, CEST
run jobrun purge --status=success --older-than=1h --dry-run
is "$out" "purge: 1 job(s) would be deleted (dry run)" \
    "autumn: the dry run counts only the row older than 1 h"
run jobrun purge --status=success --older-than=1h
is "$rc/$(keys)" "0/second" \
    "autumn: purge keeps the second pass's 20-minute-old row, deletes the old one"

sql "DELETE FROM polling_jobs"
done_at second '2027-10-31 02:10:00'
done_at old '2027-10-31 00:30:00'
run jobrun --json
is "$rc/$(jget deleted <<<"$out")/$(keys)" "0/1/second" \
    "autumn: retention does the same"

