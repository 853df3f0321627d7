#!/bin/bash
# Exit statuses and configuration paths that the other files do not reach:
# -c wins over JOBRUN_CONFIG; time_zone is the session's; an unknown
# time_zone or an unreadable password_file is a configuration error (78);
# a table without idx_pick fails the first claim with 78; writing standard
# output fails with 74; an unexpected database error in a run leaves the
# job for recovery; no JSON follows a fatal error under --json; a usage
# error ends with "Try 'jobrun --help'.".
. "${0%/*}/lib.sh"

plan 27
setup_db
write_config <<EOF2
[type.a]
handler = noop
EOF2
cp "$CONF" "$T/good.conf"

# -c (and --config) over JOBRUN_CONFIG
JOBRUN_CONFIG=$T/missing.conf run jobrun_raw -c "$T/good.conf" --json
is "$rc/$(jget ok <<<"$out")" 0/true "-c is used, JOBRUN_CONFIG (a missing file) ignored"
JOBRUN_CONFIG=$T/good.conf run jobrun_raw --config="$T/missing.conf" --json
is "$rc/$out" 78/ "--config of a missing file wins over a good JOBRUN_CONFIG: exit 78, no JSON"
like "$err" "$T/missing.conf" "and the message names the --config file"

# [database] time_zone
sed '/^database = /a time_zone = +08:00' "$T/good.conf" >"$CONF"
run jobrun enqueue --type=a --key=tz
is "$rc" 0 "time_zone = +08:00 works"
is "$(sql "SELECT ROUND(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), created_at) / 3600) FROM polling_jobs WHERE business_key = 'tz'")" 8 \
    "and the session writes times in that zone (created_at 8 h ahead of UTC)"
sed '/^database = /a time_zone = Mars/Olympus_Mons' "$T/good.conf" >"$CONF"
for cmd in run "enqueue --type=a --key=tz2" status check; do
	# shellcheck disable=SC2086 # the command's words
	run jobrun $cmd --json
	is "$rc/$out" 78/ "an unknown time_zone: ${cmd%% *} exits 78, no JSON"
done
like "$err" "Mars/Olympus_Mons" "the message names the zone"

# password_file that cannot be read
sed '/^database = /a password_file = '"$T"'/no-such-password' "$T/good.conf" >"$CONF"
run jobrun --json
is "$rc/$out" 78/ "an unreadable password_file exits 78 (a configuration error, not 69), no JSON"
like "$err" "$T/no-such-password" "the message names the file"
JOBRUN_DB_PASSWORD=x run jobrun --json
is "$rc" 78 "also when JOBRUN_DB_PASSWORD is set"
cp "$T/good.conf" "$CONF"

# a table without idx_pick: the first claim fails, 78
sql "ALTER TABLE polling_jobs DROP KEY idx_pick"
insert_job no-idx a
run jobrun --json
is "$rc" 78 "a table without idx_pick: the run exits 78"
like "$err" "claim a job in .*idx_pick.*jobrun check tells more" "the message names the index and points at check"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'no-idx'")" pending "the job is untouched"
sql "ALTER TABLE polling_jobs ADD KEY idx_pick (status, next_run_at, id)"

# 70: an unexpected database error during a run (last_error too narrow
# for the retry's message: strict mode refuses it, error 1406)
sql "ALTER TABLE polling_jobs MODIFY last_error VARCHAR(10) NULL"
write_config <<EOF2
[type.a]
handler = exec
command = $HANDLERS/exit-with 3 "a message longer than ten characters"
timeout = 10
EOF2
sql "DELETE FROM polling_jobs"
insert_job narrow a
run jobrun --json
# jobrun(1), EXIT STATUS: a value the server refuses in a run is the
# table's fault (here last_error is too narrow): 78, not enqueue's 65.
is "$rc" 78 "a column too narrow for a run's mark: exit 78, a schema problem"
like "$err" "mark job for retry in .*Data too long for column 'last_error'" \
    "stderr says which statement failed and why"
is "$(jget ok <<<"$out")" false "--json still says how the run went"
like "$(jget error <<<"$out")" "Data too long" "and its error holds the message"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'narrow'")" processing \
    "the job is not marked on a guess: it stays processing for recovery"
sql "ALTER TABLE polling_jobs MODIFY last_error TEXT NULL"
cp "$T/good.conf" "$CONF"

# A table with a trigger (another application's audit trail, say) must
# not break the claim.  A BEFORE UPDATE trigger on the table makes the
# claim read job 0 ("row vanished"): exit 70 and the job stranded in
# processing.  Once src/queue.c reads the claimed id another way, this is:
#   is "$rc/$(jget succeeded <<<"$out")" 0/1 "a table with an UPDATE trigger: the job runs"
sql "DELETE FROM polling_jobs;
     CREATE TRIGGER audit BEFORE UPDATE ON polling_jobs FOR EACH ROW
     SET NEW.updated_at = NEW.updated_at"
insert_job trigger a
write_config <<EOF2
[type.a]
handler = noop
EOF2
run jobrun --json
is "$rc/$(jget succeeded <<<"$out")" 0/1 "a table with an UPDATE trigger: the job runs"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'trigger'")" success \
    "and is marked success"
sql "DROP TRIGGER audit"

# 74: standard output cannot be written
run jobrun status
is "$rc" 0 "(status writes a table)"
jobrun status >/dev/full 2>"$T/err"
is "$?" 74 "status with stdout on a full disk (/dev/full) exits 74"
like "$(cat "$T/err")" "write standard output: No space left on device" "and says so"

# a usage error points at --help
run jobrun --frobnicate
is "$rc/$(tail -n 1 <<<"$err")" "64/Try 'jobrun --help'." "a usage error ends with: Try 'jobrun --help'."
