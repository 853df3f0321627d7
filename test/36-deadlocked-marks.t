#!/bin/bash
# A deadlock (1213) on the success write, three times for every job (a
# failure other job runners' users reported: the job run again, or
# failed, because its outcome met a deadlock): the handler runs once, and
# the job succeeds at its first attempt.  One slot (each mark its own
# statement, run again after a deadlock) and four (the group's
# transaction run again whole).  And a claim that meets a deadlock 15
# times running, more than the claim's own 10 tries (a busy neighbour,
# such as the seed's own PHP loop): the run backs off and outlasts it
# within its budget, with and without flow control and with --jobs=4
# (whose claims share a transaction with the marks: the marks are written
# on their own, and the slots claim again later), instead of giving up
# with 75.  The server raises the deadlocks itself, from a trigger, and
# counts them in a table that a rollback does not undo (MyISAM, on
# both servers).
. "${0%/*}/lib.sh"

plan 18
setup_db
write_config <<EOF2
[type.work]
handler = exec
command = $HANDLERS/append-id $T/ran
EOF2
sql "CREATE TABLE deadlocks (id BIGINT UNSIGNED PRIMARY KEY, left_ INT,
        raised INT NOT NULL DEFAULT 0) ENGINE=MyISAM" ||
    bail_out "cannot create the deadlock counter"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <<'SQL' ||
DELIMITER //
CREATE TRIGGER deadlock_marks BEFORE UPDATE ON polling_jobs
FOR EACH ROW BEGIN
  IF NEW.status = 'success' AND OLD.status = 'processing' AND
     (SELECT left_ FROM deadlocks WHERE id = NEW.id) > 0 THEN
    UPDATE deadlocks SET left_ = left_ - 1, raised = raised + 1
     WHERE id = NEW.id;
    SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213,
      MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction';
  END IF;
END//
SQL
    bail_out "cannot create the trigger"

# drain JOBS: 12 jobs, each one's success write deadlocked three times
drain() {
	sql "DELETE FROM polling_jobs; DELETE FROM deadlocks"
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('d', seq), 'work', NOW(), NOW(), NOW()
	       FROM seq_1_to_12;
	     INSERT INTO deadlocks (id, left_) SELECT id, 3 FROM polling_jobs"
	rm -f "$T/ran"
	run jobrun "--jobs=$1"
}

for jobs in 1 4; do
	drain "$jobs"
	is "$rc" 0 "--jobs=$jobs: the run exits 0 through 36 deadlocked success writes"
	is "$(sql "SELECT SUM(raised) FROM deadlocks")" 36 \
	    "--jobs=$jobs: the server raised the 36 deadlocks"
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success' AND attempts = 1")" 12 \
	    "--jobs=$jobs: all 12 jobs succeeded at their first attempt"
	is "$(sort "$T/ran" | uniq -d | wc -l)/$(wc -l <"$T/ran")" 0/12 \
	    "--jobs=$jobs: each handler ran once"
done

# --- claims deadlocked 15 times running ------------------------------------

sql "CREATE TABLE claim_deadlocks (left_ INT, raised INT NOT NULL DEFAULT 0)
        ENGINE=MyISAM; INSERT INTO claim_deadlocks (left_) VALUES (0)"
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <<'SQL' ||
DELIMITER //
CREATE TRIGGER deadlock_claims BEFORE UPDATE ON polling_jobs
FOR EACH ROW BEGIN
  IF NEW.status = 'processing' AND OLD.status = 'pending' AND
     (SELECT left_ FROM claim_deadlocks) > 0 THEN
    UPDATE claim_deadlocks SET left_ = left_ - 1, raised = raised + 1;
    SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213,
      MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction';
  END IF;
END//
SQL
    bail_out "cannot create the claims' trigger"
sql "$(cat "$TOP/sql/003_flow.sql")" || bail_out "cannot apply sql/003_flow.sql"
for kind in plain grouped capped; do
	if [ "$kind" = capped ]; then
		printf 'concurrency = 2\n' >>"$CONF"
	fi
	sql "DELETE FROM polling_jobs; DELETE FROM deadlocks;
	     UPDATE claim_deadlocks SET left_ = 15, raised = 0"
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('c', seq), 'work', NOW(), NOW(), NOW()
	       FROM seq_1_to_6"
	rm -f "$T/ran"
	if [ "$kind" = grouped ]; then
		run jobrun -v --jobs=4
	else
		run jobrun -v
	fi
	is "$rc" 0 "$kind: the run outlasts 15 deadlocked claims running and exits 0"
	is "$(sql "SELECT raised FROM claim_deadlocks")" 15 \
	    "$kind: the server raised the 15 deadlocks"
	is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success' AND attempts = 1")/$(wc -l <"$T/ran")" 6/6 \
	    "$kind: the 6 jobs succeeded, each at its first attempt, each handler once"
done
like "$err" "claim a job in .*Deadlock found.*; claiming again in [0-9]+ ms" \
    "-v says the claim gave up for a while, and when it claims again"
