/*
 * queue.c - the job table's SQL, all of it: the text of every statement
 * (templates[]), the queue's life, and adding jobs.  The claims and
 * outcomes are queue_cycle.c's; running statements and transactions is
 * queue_run.c's.
 *
 * The claim is one autocommit UPDATE ... LIMIT 1: whichever runner's UPDATE
 * changes the row owns it, with no window between a SELECT and an UPDATE.
 * It orders by (next_run_at, id) and forces idx_pick (status, next_run_at,
 * id): the optimizer otherwise walks the primary key and reads every
 * finished row in front of the first due one, which grows with the table.
 * "id = LAST_INSERT_ID(id)" hands back the claimed id with the UPDATE's own
 * reply, so reading the job is one primary-key lookup.
 *
 * Types match byte for byte.  The type column compares under its
 * collation (utf8mb4_general_ci: case, accents and trailing blanks do not
 * count), which is right for the index range but would let a runner for
 * order_sync claim ORDER_SYNC; every statement that picks rows by type
 * also compares CAST(type AS BINARY), which is exact, so those rows are
 * left alone (status lists them as unhandled).
 *
 * Two clocks.  next_run_at is the application's: a local DATETIME in the
 * session's time zone, compared with NOW() as the application meant it.
 * A lock is jobrun's own and must last real time whatever the zone does
 * (a DST jump or SET GLOBAL time_zone would otherwise make a live lock
 * look expired, or a dead runner's job stay stuck for an hour), so the
 * lock's true end is kept where no zone reaches it: locked_by holds
 * "TOKEN@EPOCH", the claim's token and the Unix time the lock ends, from
 * the server's UNIX_TIMESTAMP().  locked_until is still written, in the
 * session zone, for people and for other workers (the seed's PHP loop)
 * that read it; a lock whose locked_by is not jobrun's is judged by
 * locked_until, as its writer judges it.
 *
 * The cursor.  A claimed job leaves its ('pending', next_run_at, id) entry
 * in idx_pick, delete-marked, until InnoDB's purge removes it, and a claim
 * from the head of the range steps over every such entry: a busy run
 * keeps purge thousands of entries behind, and the claim then costs more
 * than the mark.  So a claim after the first starts its range just past
 * the last job this run claimed (the cursor, (next_run_at, id) > (t, i),
 * read back with the job), and the plain claim from the head runs when
 * that finds nothing.  The cursor only narrows the one atomic UPDATE, which
 * keeps all its other conditions, so it cannot claim a job twice.  What it
 * costs is order: a job that becomes due behind the cursor (recovered with
 * its old next_run_at, put back, inserted with an earlier time or
 * committed late by a slow transaction, or after the clock went back) is
 * not seen by such a claim.  So a claim that starts QUEUE_CURSOR_MS (1 s)
 * or more after the last claim from the head is itself one from the head:
 * such a job waits at most that long more than the plain claim would make
 * it wait, and from the head the claims take jobs in (next_run_at, id)
 * order again.
 * The interval is the client's monotonic clock: it bounds this runner's own
 * claims, it compares no job's time.
 *
 * Every later write carries "WHERE id = ? AND <token of locked_by> = ?":
 * a runner whose lock expired and whose job was recovered and claimed
 * again finds zero rows and must not write.  All times are the server's,
 * so runners on hosts with skewed clocks agree.
 */
#include <errno.h>
#include <limits.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "queue_sql.h"
#include "utf8.h"
#include "util.h"

#define BATCH_PARAMS 8		/* per row of a multi-row insert */

/* The token part of locked_by (before "@EPOCH"). */
#define TOKEN "SUBSTRING_INDEX(locked_by, '@', 1)"

/* The fenced tail every write after the claim ends with. */
#define FENCE " WHERE id = ? AND " TOKEN " = ? AND status = 'processing'"

/* A new lock of ? seconds for token ?: (token, seconds, seconds). */
#define LOCK_SET " locked_by = CONCAT(?, '@', UNIX_TIMESTAMP() + ?)," \
	" locked_until = NOW() + INTERVAL ? SECOND"

/* The same lock, ? seconds from now: (seconds, seconds). */
#define LOCK_RENEW " locked_by = CONCAT(" TOKEN ", '@', UNIX_TIMESTAMP() + ?)," \
	" locked_until = NOW() + INTERVAL ? SECOND"

/* A lock that has run out: jobrun's by the Unix time in locked_by, any
 * other worker's by locked_until in the session zone.  A jobrun token is
 * HOST:PID:12 hex digits:SEQ, so another worker's id never passes for
 * one. */
#define LOCK_EXPIRED "(CASE WHEN locked_by REGEXP" \
	" '^[^@]+:[0-9]+:[0-9a-f]{12}:[0-9]+@[0-9]+$'" \
	" THEN CAST(SUBSTRING_INDEX(locked_by, '@', -1) AS UNSIGNED)" \
	" < UNIX_TIMESTAMP() ELSE locked_until < NOW() END)"

/* Exactly type ?, bound twice: the first compare uses the index, the
 * second makes it exact. */
#define TYPE_IS " type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)"

/* Sets the columns of a job going back to pending for an operator. */
#define REQUEUE "UPDATE %1$s SET status = 'pending', attempts = 0," \
	" next_run_at = NOW(), finished_at = NULL, locked_by = NULL," \
	" locked_until = NULL, updated_at = NOW()"

/* The last_error Q_CANCEL writes, compared byte for byte. */
#define CANCELLED "BINARY 'cancelled by operator'"

#define LIST "SELECT id, type, business_key, status, attempts," \
	" max_attempts, next_run_at, updated_at, last_error FROM %1$s" \
	" WHERE id < ?"
#define LIST_END " ORDER BY id DESC LIMIT ?"

#define SHOW "SELECT id, business_key, type, payload, status, attempts," \
	" max_attempts, next_run_at, locked_by, locked_until, last_error," \
	" created_at, updated_at, finished_at, JSON_VALID(payload) FROM %1$s"

/* Finished rows older than the cutoff.  next_run_at is never later than
 * finished_at for a row jobrun finished (a job runs after it is due;
 * cancel moves next_run_at to now at the latest), so the extra condition
 * on it lets the delete walk idx_pick's (status, next_run_at) range and
 * stop at the cutoff instead of reading every finished row.  A DELETE
 * takes no index hint and MariaDB plans it on idx_lock with a filesort
 * of every finished row per batch, so the batch's ids are picked by a
 * derived SELECT that can be forced onto idx_pick. */
#define PURGE_WHERE " WHERE status = ?" \
	" AND next_run_at < NOW() - INTERVAL ? SECOND" \
	" AND finished_at < NOW() - INTERVAL ? SECOND"

/* A new job: (key, type, payload..., max_attempts or NULL, at or NULL,
 * delay), one row per JOB_ROW; the fan-out makes its payload with the
 * server's JSON_SET. */
#define INSERT_JOBS "INSERT INTO %1$s (business_key, type, payload, status," \
	" attempts, max_attempts, next_run_at, created_at, updated_at) VALUES "
#define JOB_ROW(payload) "(?, ?, " payload ", 'pending', 0," \
	" IFNULL(?, DEFAULT(max_attempts))," \
	" IFNULL(CAST(? AS DATETIME), NOW() + INTERVAL ? SECOND), NOW(), NOW())"
#define CHUNK_PAYLOAD "JSON_SET(?, '$.from', ?, '$.to', ?)"

/* enqueue --again: a finished job with the key starts over, as a new
 * job would, with the new payload and time; any other is left as it is.
 * The status is assigned last: ON DUPLICATE KEY UPDATE assigns left to
 * right, and every IF before it must still see the old status. */
#define FINISHED "status IN ('success', 'failed')"
#define AGAIN_SET " payload = IF(" FINISHED ", VALUES(payload), payload)," \
	" attempts = IF(" FINISHED ", 0, attempts)," \
	" max_attempts = IF(" FINISHED ", VALUES(max_attempts), max_attempts)," \
	" next_run_at = IF(" FINISHED ", VALUES(next_run_at), next_run_at)," \
	" last_error = IF(" FINISHED ", NULL, last_error)," \
	" finished_at = IF(" FINISHED ", NULL, finished_at)," \
	" locked_by = IF(" FINISHED ", NULL, locked_by)," \
	" locked_until = IF(" FINISHED ", NULL, locked_until)," \
	" updated_at = IF(" FINISHED ", NOW(), updated_at),"
#define AGAIN_RESUMABLE " checkpoint = IF(" FINISHED ", NULL, checkpoint)," \
	" snoozes = IF(" FINISHED ", 0, snoozes),"
#define AGAIN_END " status = IF(" FINISHED ", 'pending', status)"

/* (token, seconds, seconds) */
#define CLAIM_SET " SET status = 'processing'," LOCK_SET "," \
	" attempts = attempts + 1, updated_at = NOW()," \
	" id = LAST_INSERT_ID(id)"

/* Past the cursor (time, time, id): the rows after the last claimed job in
 * the claim's order, as two ranges of the index. */
#define PAST_CURSOR " AND (next_run_at > ? OR (next_run_at = ? AND id > ?))"

/* The claimed row: (id, token).  JSON_VALID is the server's judgement of
 * the payload, the one rule the application's inserts also met;
 * next_run_at, as it is stored, is the claim's cursor. */
#define READ "SELECT id, type, business_key, payload, attempts," \
	" max_attempts, IFNULL(JSON_VALID(payload), 1), next_run_at"

/* Several claimed rows, (id, token) pairs, at most QUEUE_GROUP_MAX: a
 * token is in locked_by only on the row its claim took, so a row whose
 * id and token are both in the lists is one of the pairs.  Unused places
 * repeat a pair. */
#define GROUP_LIST "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define FENCE_MANY " WHERE id IN " GROUP_LIST " AND " TOKEN " IN " \
	GROUP_LIST " AND status = 'processing'"
_Static_assert(QUEUE_GROUP_MAX == 16, "GROUP_LIST has 16 places");

#define SUCCESS_SET " SET status = 'success', finished_at = NOW()," \
	" last_error = NULL, locked_by = NULL, locked_until = NULL," \
	" updated_at = NOW()"

/* Statement texts: %1$s is the quoted table name, %2$s a list of as many
 * "?" as the claim has types. */
static const char *const templates[Q_COUNT] = {
	[Q_RECOVER] =
	    "UPDATE %1$s SET"
	    " last_error = CONCAT('lock expired: runner ',"
	    "  IFNULL(" TOKEN ", '?'), ' did not finish attempt ', attempts,"
	    "  ' of ', max_attempts,"
	    "  IF(attempts >= max_attempts, '; no attempts left', '')),"
	    " finished_at = IF(attempts >= max_attempts, NOW(), NULL),"
	    " status = IF(attempts >= max_attempts, 'failed', 'pending'),"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()"
	    " WHERE status = 'processing' AND " LOCK_EXPIRED
	    " LIMIT ?",
	/* idx_pick has no type: the exact compare is a filter on the
	 * rows of the due range. */
	[Q_CLAIM] =
	    "UPDATE %1$s FORCE INDEX (idx_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND next_run_at <= NOW()"
	    " AND CAST(type AS BINARY) IN (%2$s)"
	    " ORDER BY next_run_at, id LIMIT 1",
	/* One type, with sql/001_type_pick.sql applied: the range holds only
	 * that type's due jobs (and any that differ from it only in case or
	 * accents), however many other types have waiting. */
	[Q_CLAIM_TYPE] =
	    "UPDATE %1$s FORCE INDEX (idx_type_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND" TYPE_IS
	    " AND next_run_at <= NOW()"
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_CLAIM_SPREAD] =
	    "UPDATE %1$s FORCE INDEX (idx_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND next_run_at <= NOW()"
	    " AND CAST(type AS BINARY) IN (%2$s) AND id MOD ? = ?"
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_CLAIM_TYPE_SPREAD] =
	    "UPDATE %1$s FORCE INDEX (idx_type_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND" TYPE_IS
	    " AND next_run_at <= NOW() AND id MOD ? = ?"
	    " ORDER BY next_run_at, id LIMIT 1",
	/* The same claims, past the cursor (the claim's arguments, then
	 * time, time, id). */
	[Q_CLAIM_AFTER] =
	    "UPDATE %1$s FORCE INDEX (idx_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND next_run_at <= NOW()"
	    " AND CAST(type AS BINARY) IN (%2$s)" PAST_CURSOR
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_CLAIM_TYPE_AFTER] =
	    "UPDATE %1$s FORCE INDEX (idx_type_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND" TYPE_IS
	    " AND next_run_at <= NOW()" PAST_CURSOR
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_READ] = READ " FROM %1$s" FENCE,
	[Q_READ_RESUMABLE] = READ ", checkpoint, snoozes FROM %1$s" FENCE,
	[Q_SUCCESS] = "UPDATE %1$s" SUCCESS_SET FENCE,
	[Q_READ_MANY] = READ " FROM %1$s" FENCE_MANY,
	[Q_READ_MANY_RESUMABLE] = READ ", checkpoint, snoozes FROM %1$s"
	    FENCE_MANY,
	[Q_SUCCESS_MANY] = "UPDATE %1$s" SUCCESS_SET FENCE_MANY,
	/* The jobs a bulk claim took past the cursor (time, time, id), by
	 * token: in idx_pick's 'processing' range past the cursor, where
	 * the claims left them (a claim does not move next_run_at). */
	[Q_READ_TOKENS] = READ ", " TOKEN " FROM %1$s FORCE INDEX (idx_pick)"
	    " WHERE status = 'processing'" PAST_CURSOR " AND " TOKEN
	    " IN " GROUP_LIST,
	[Q_READ_TOKENS_RESUMABLE] = READ ", checkpoint, snoozes, " TOKEN
	    " FROM %1$s FORCE INDEX (idx_pick) WHERE status = 'processing'"
	    PAST_CURSOR " AND " TOKEN " IN " GROUP_LIST,
	[Q_RETRY] =
	    "UPDATE %1$s SET status = 'pending',"
	    " next_run_at = NOW() + INTERVAL ? SECOND, last_error = ?,"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()" FENCE,
	[Q_FAIL] =
	    "UPDATE %1$s SET status = 'failed', finished_at = NOW(),"
	    " last_error = ?, locked_by = NULL, locked_until = NULL,"
	    " updated_at = NOW()" FENCE,
	[Q_EXTEND] =
	    "UPDATE %1$s SET" LOCK_RENEW ", updated_at = NOW()" FENCE,
	[Q_OWNER] =
	    "SELECT id FROM %1$s" FENCE,
	/* The same, waiting for a transaction that still holds the row: a
	 * killed session's COMMIT may yet finish or roll back. */
	[Q_OWNER_LOCKED] =
	    "SELECT id FROM %1$s" FENCE " LOCK IN SHARE MODE",
	/* The row a claim took, by its token, when the claim's reply
	 * carries no id (a trigger on the table resets it): among the
	 * processing rows only.  (token) */
	[Q_CLAIMED_ID] =
	    "SELECT id FROM %1$s FORCE INDEX (idx_lock)"
	    " WHERE status = 'processing' AND " TOKEN " = ?",
	[Q_RELEASE] =
	    "UPDATE %1$s SET status = 'pending', next_run_at = NOW(),"
	    " attempts = IF(attempts > 0, attempts - 1, 0),"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()" FENCE,
	[Q_GET_LOCK] = "SELECT GET_LOCK(?, 0)",
	/* The checkpoint as the handler wrote it, if the server's JSON_VALID
	 * takes it: (json, seconds, seconds, id, token, json). */
	[Q_CHECKPOINT] =
	    "UPDATE %1$s SET checkpoint = ?," LOCK_RENEW ", updated_at = NOW()"
	    FENCE " AND JSON_VALID(?)",
	/* After a checkpoint changed nothing: no row, the lock is lost; else
	 * whether the server found it valid JSON.  (json, id, token) */
	[Q_CHECKPOINT_CHECK] =
	    "SELECT JSON_VALID(?) FROM %1$s" FENCE,
	/* attempts - 1 undoes the claim's count: a snooze is not a try. */
	[Q_SNOOZE] =
	    "UPDATE %1$s SET status = 'pending',"
	    " attempts = IF(attempts > 0, attempts - 1, 0),"
	    " snoozes = IF(?, 0, snoozes + 1),"
	    " next_run_at = NOW() + INTERVAL ? SECOND, last_error = ?,"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()" FENCE,
	[Q_ENQUEUE] = INSERT_JOBS JOB_ROW("?")
	    /* Changes nothing on a duplicate, so affected rows is 0 and
	     * LAST_INSERT_ID is the existing job's id. */
	    " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
	/* Changed rows: 1 inserted, 2 re-armed, 0 left as it was. */
	[Q_ENQUEUE_AGAIN] = INSERT_JOBS JOB_ROW("?")
	    " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)," AGAIN_SET
	    AGAIN_END,
	[Q_ENQUEUE_AGAIN_RESUMABLE] = INSERT_JOBS JOB_ROW("?")
	    " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)," AGAIN_SET
	    AGAIN_RESUMABLE AGAIN_END,
	[Q_VALID_AT] =
	    "SELECT CAST(? AS DATETIME) IS NOT NULL",
	/* Each takes the text once: a payload may be nearly
	 * max_allowed_packet.  (Through a derived table the server would
	 * no longer check that the text is utf8mb4.) */
	[Q_VALID_JSON] = "SELECT JSON_VALID(?)",
	[Q_JSON_OBJECT] = "SELECT JSON_TYPE(?) = 'OBJECT'",
	/* What a handler's reply says, read by the server's JSON functions:
	 * members come back as written (numbers and strings untouched). */
	[Q_READ_REPLY] =
	    "SELECT JSON_VALID(b), JSON_TYPE(b),"
	    " JSON_EXTRACT(b, '$.checkpoint'), JSON_EXTRACT(b, '$.snooze')"
	    " FROM (SELECT ? AS b) AS reply",
	[Q_MAX_PACKET] = "SELECT @@max_allowed_packet",
	[Q_WSREP] = "SELECT @@GLOBAL.wsrep_on",
	/* Every column the cycle reads or writes and every index it forces
	 * (but the optional idx_type_pick and sql/002's columns, probed when
	 * first needed): prepared, never run. */
	[Q_SCHEMA] =
	    "SELECT id, type, business_key, payload, status, attempts,"
	    " max_attempts, next_run_at, locked_by, locked_until, last_error,"
	    " updated_at, finished_at FROM %1$s FORCE INDEX (idx_pick, idx_lock)"
	    " WHERE FALSE",
	[Q_JOB_STATUS] =
	    "SELECT status FROM %1$s WHERE id = ?",
	/* Whether a type has a due job.  (name, name) */
	[Q_TYPE_DUE] = "SELECT 1 FROM %1$s WHERE status = 'pending'"
	    " AND type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	    " AND next_run_at <= NOW() LIMIT 1",
	/* A type's jobs in processing and whether it has a due job, read
	 * without a lock.  (name, name, name, name) */
	[Q_TYPE_LOAD] = "SELECT " QUEUE_RUNNING_SQL ", EXISTS (SELECT 1"
	    " FROM %1$s WHERE status = 'pending' AND type = ?"
	    " AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	    " AND next_run_at <= NOW())",
	/* A loose index scan: one jump per type, not a row per job.  Types
	 * that differ only in case or accents come back as one. */
	[Q_TYPES] =
	    "SELECT DISTINCT type FROM %1$s FORCE INDEX (idx_type_status)",
	/* The exact types of those, and their counts. */
	[Q_TYPE_COUNTS] =
	    "SELECT CAST(type AS BINARY), status, COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_type_status)"
	    " WHERE type = ? AND status IN ('pending', 'processing', 'failed')"
	    " GROUP BY 1, 2",
	/* Counting success rows exactly reads every one; the optimizer's
	 * estimate from the index is close enough to see growth. */
	[Q_SUCCESS_ESTIMATE] =
	    "EXPLAIN SELECT id FROM %1$s FORCE INDEX (idx_type_status)"
	    " WHERE type = ? AND status = 'success'",
	[Q_LAG] =
	    "SELECT CAST(type AS BINARY), COUNT(*),"
	    " TIMESTAMPDIFF(SECOND, MIN(next_run_at), NOW())"
	    " FROM %1$s FORCE INDEX (idx_pick)"
	    " WHERE status = 'pending' AND next_run_at <= NOW() GROUP BY 1",
	[Q_EXPIRED] =
	    "SELECT CAST(type AS BINARY), COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_lock)"
	    " WHERE status = 'processing' AND " LOCK_EXPIRED " GROUP BY 1",
	[Q_LIST] = LIST LIST_END,
	[Q_LIST_STATUS] = LIST " AND status = ?" LIST_END,
	[Q_LIST_TYPE] = LIST " AND" TYPE_IS LIST_END,
	[Q_LIST_STATUS_TYPE] = LIST " AND status = ? AND" TYPE_IS LIST_END,
	[Q_SHOW_ID] = SHOW " WHERE id = ?",
	[Q_SHOW_KEY] = SHOW " WHERE business_key = ?"
	    " AND CAST(business_key AS BINARY) = CAST(? AS BINARY)",
	[Q_RETRY_ID] = REQUEUE " WHERE id = ? AND status = 'failed'",
	[Q_RETRY_ID_FORCE] = REQUEUE
	    " WHERE id = ? AND status IN ('failed', 'pending')",
	/* Batches of at most ? rows: the caller loops. */
	[Q_REQUEUE] = REQUEUE " WHERE status = 'failed' LIMIT ?",
	[Q_REQUEUE_TYPE] = REQUEUE
	    " WHERE" TYPE_IS " AND status = 'failed' LIMIT ?",
	[Q_REQUEUE_UNCANCELLED] = REQUEUE " WHERE status = 'failed'"
	    " AND NOT (last_error <=> " CANCELLED ") LIMIT ?",
	[Q_REQUEUE_UNCANCELLED_TYPE] = REQUEUE " WHERE" TYPE_IS
	    " AND status = 'failed' AND NOT (last_error <=> " CANCELLED ")"
	    " LIMIT ?",
	[Q_FAILED_COUNTS] = "SELECT COUNT(*), COUNT(IF(last_error <=> "
	    CANCELLED ", 1, NULL)) FROM %1$s FORCE INDEX (idx_pick)"
	    " WHERE status = 'failed'",
	[Q_FAILED_COUNTS_TYPE] = "SELECT COUNT(*), COUNT(IF(last_error <=> "
	    CANCELLED ", 1, NULL)) FROM %1$s FORCE INDEX (idx_type_status)"
	    " WHERE" TYPE_IS " AND status = 'failed'",
	[Q_CANCEL] =
	    "UPDATE %1$s SET status = 'failed',"
	    " last_error = 'cancelled by operator',"
	    " next_run_at = LEAST(next_run_at, NOW()), finished_at = NOW(),"
	    " updated_at = NOW() WHERE id = ? AND status = 'pending'",
	[Q_PURGE] = "DELETE j FROM %1$s AS j JOIN (SELECT id FROM %1$s"
	    " FORCE INDEX (idx_pick)" PURGE_WHERE
	    " ORDER BY next_run_at, id LIMIT ?) AS d USING (id)",
	[Q_PURGE_TYPE] = "DELETE j FROM %1$s AS j JOIN (SELECT id FROM %1$s"
	    " FORCE INDEX (idx_pick)" PURGE_WHERE " AND" TYPE_IS
	    " ORDER BY next_run_at, id LIMIT ?) AS d USING (id)",
	[Q_PURGE_COUNT] = "SELECT COUNT(*) FROM %1$s FORCE INDEX (idx_pick)"
	    PURGE_WHERE,
	[Q_PURGE_COUNT_TYPE] = "SELECT COUNT(*) FROM %1$s"
	    " FORCE INDEX (idx_pick)" PURGE_WHERE " AND" TYPE_IS,
	[Q_COLUMNS] =
	    "SELECT COLUMN_NAME, IS_NULLABLE FROM information_schema.COLUMNS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
	/* COLUMN_DEFAULT is SQL NULL for "no default" (an explicit DEFAULT
	 * NULL reads 'NULL'); generated and auto-increment columns fill
	 * themselves.  The list is the columns the inserts name. */
	[Q_UNFILLED_COLUMNS] =
	    "SELECT COLUMN_NAME FROM information_schema.COLUMNS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
	    " AND IS_NULLABLE = 'NO' AND COLUMN_DEFAULT IS NULL"
	    " AND EXTRA NOT LIKE '%%auto_increment%%'"
	    " AND EXTRA NOT LIKE '%%GENERATED%%'"
	    " AND COLUMN_NAME NOT IN ('business_key', 'type', 'payload',"
	    " 'status', 'attempts', 'max_attempts', 'next_run_at',"
	    " 'created_at', 'updated_at') ORDER BY ORDINAL_POSITION",
	[Q_INDEXES] =
	    "SELECT INDEX_NAME, MIN(NON_UNIQUE),"
	    " GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX)"
	    " FROM information_schema.STATISTICS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
	    " GROUP BY INDEX_NAME",
	[Q_VERSION] = "SELECT VERSION()",
	[Q_SETTINGS] =
	    "SHOW VARIABLES WHERE Variable_name IN ('innodb_lock_wait_timeout',"
	    " 'wait_timeout', 'time_zone', 'system_time_zone',"
	    " 'transaction_isolation', 'tx_isolation', 'max_allowed_packet',"
	    " 'innodb_flush_log_at_trx_commit', 'wsrep_on')",
	/* The report's clock: now, and the first of the 24 hours its
	 * charts cover (the current hour is the last). */
	[Q_REPORT_CLOCK] =
	    "SELECT NOW(), DATE_FORMAT(NOW() - INTERVAL 23 HOUR,"
	    " '%%Y-%%m-%%d %%H:00:00')",
	/* Jobs that ended since ? (bound twice), by exact type, outcome and
	 * hour: two ranges of idx_finished (sql/005_finished.sql), read
	 * from the index alone, as long as the last day's jobs, whatever
	 * the history before it. */
	[Q_REPORT_HOURS] =
	    "SELECT CAST(type AS BINARY), status,"
	    " TIMESTAMPDIFF(HOUR, ?, finished_at), COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_finished)"
	    " WHERE status IN ('success', 'failed') AND finished_at >= ?"
	    " GROUP BY 1, 2, 3",
	/* The ? latest failures: the tail of idx_finished's failed range,
	 * or, without it, of idx_pick's (in the order they were due). */
	[Q_REPORT_FAILURES] =
	    "SELECT id, type, business_key, attempts, max_attempts,"
	    " finished_at, last_error FROM %1$s FORCE INDEX (idx_finished)"
	    " WHERE status = 'failed' ORDER BY finished_at DESC LIMIT ?",
	[Q_REPORT_FAILURES_PICK] =
	    "SELECT id, type, business_key, attempts, max_attempts,"
	    " finished_at, last_error FROM %1$s FORCE INDEX (idx_pick)"
	    " WHERE status = 'failed' ORDER BY next_run_at DESC, id DESC"
	    " LIMIT ?",
};

/* What each statement is for, in error messages. */
static const char *const purposes[Q_COUNT] = {
	[Q_RECOVER] = "recover expired locks",
	[Q_CLAIM] = "claim a job",
	[Q_CLAIM_TYPE] = "claim a job",
	[Q_CLAIM_SPREAD] = "claim a job",
	[Q_CLAIM_TYPE_SPREAD] = "claim a job",
	[Q_CLAIM_AFTER] = "claim a job",
	[Q_CLAIM_TYPE_AFTER] = "claim a job",
	[Q_READ] = "read the claimed job",
	[Q_READ_RESUMABLE] = "read the claimed job",
	[Q_READ_MANY] = "read the claimed jobs",
	[Q_READ_MANY_RESUMABLE] = "read the claimed jobs",
	[Q_SUCCESS_MANY] = "mark jobs success",
	[Q_READ_TOKENS] = "read the claimed jobs",
	[Q_READ_TOKENS_RESUMABLE] = "read the claimed jobs",
	[Q_CHECKPOINT] = "save a checkpoint",
	[Q_CHECKPOINT_CHECK] = "save a checkpoint",
	[Q_SNOOZE] = "put the job off",
	[Q_SUCCESS] = "mark job success",
	[Q_RETRY] = "mark job for retry",
	[Q_FAIL] = "mark job failed",
	[Q_EXTEND] = "extend job lock",
	[Q_OWNER] = "check job lock",
	[Q_OWNER_LOCKED] = "read what a lost commit kept",
	[Q_CLAIMED_ID] = "find the claimed job",
	[Q_RELEASE] = "put job back",
	[Q_GET_LOCK] = "take the --single lock",
	[Q_ENQUEUE] = "enqueue job",
	[Q_ENQUEUE_AGAIN] = "enqueue job again",
	[Q_ENQUEUE_AGAIN_RESUMABLE] = "enqueue job again",
	[Q_VALID_AT] = "check --at",
	[Q_VALID_JSON] = "check the payload",
	[Q_JSON_OBJECT] = "check the payload",
	[Q_READ_REPLY] = "read the handler's reply",
	[Q_MAX_PACKET] = "read max_allowed_packet",
	[Q_WSREP] = "read wsrep_on",
	[Q_SCHEMA] = "check the table",
	[Q_JOB_STATUS] = "read job status",
	[Q_TYPE_DUE] = "look for due jobs",
	[Q_TYPE_LOAD] = "look at a full type",
	[Q_TYPES] = "list job types",
	[Q_TYPE_COUNTS] = "count jobs",
	[Q_SUCCESS_ESTIMATE] = "estimate finished jobs",
	[Q_LAG] = "measure lag",
	[Q_EXPIRED] = "count expired locks",
	[Q_LIST] = "list jobs",
	[Q_LIST_STATUS] = "list jobs",
	[Q_LIST_TYPE] = "list jobs",
	[Q_LIST_STATUS_TYPE] = "list jobs",
	[Q_SHOW_ID] = "show job",
	[Q_SHOW_KEY] = "show job",
	[Q_RETRY_ID] = "retry job",
	[Q_RETRY_ID_FORCE] = "retry job",
	[Q_REQUEUE] = "retry failed jobs",
	[Q_REQUEUE_TYPE] = "retry failed jobs",
	[Q_REQUEUE_UNCANCELLED] = "retry failed jobs",
	[Q_REQUEUE_UNCANCELLED_TYPE] = "retry failed jobs",
	[Q_FAILED_COUNTS] = "count failed jobs",
	[Q_FAILED_COUNTS_TYPE] = "count failed jobs",
	[Q_CANCEL] = "cancel job",
	[Q_PURGE] = "purge jobs",
	[Q_PURGE_TYPE] = "purge jobs",
	[Q_PURGE_COUNT] = "count jobs to purge",
	[Q_PURGE_COUNT_TYPE] = "count jobs to purge",
	[Q_COLUMNS] = "read the table's columns",
	[Q_UNFILLED_COLUMNS] = "read the table's columns",
	[Q_INDEXES] = "read the table's indexes",
	[Q_VERSION] = "read the server version",
	[Q_SETTINGS] = "read server settings",
	[Q_REPORT_CLOCK] = "read the database clock",
	[Q_REPORT_HOURS] = "count finished jobs by hour",
	[Q_REPORT_FAILURES] = "list the latest failures",
	[Q_REPORT_FAILURES_PICK] = "list the latest failures",
};

const char *
queue_purpose(enum queue_stmt which)
{
	return purposes[which];
}

struct queue *
queue_open(struct db *db, const char *table)
{
	struct queue *q = xcalloc(1, sizeof *q);

	q->db = db;
	snprintf(q->name, sizeof q->name, "%s", table);
	q->random = (uint64_t)getpid() << 32 ^ (uint64_t)now_ms();
	db_quote_ident(table, q->table, sizeof q->table);
	return q;
}

const char *
queue_name(const struct queue *q)
{
	return q->name;
}

const char *
queue_quoted(const struct queue *q)
{
	return q->table;
}

void
queue_counters(const struct queue *q, struct queue_counters *out)
{
	*out = q->counters;
}

void
queue_close(struct queue *q)
{
	if (q == NULL)
		return;
	queue_forget(q);
	free(q);
}

/* The text of statement which (malloc'ed): the quoted table name and, for
 * the claims, one "?" per type; nothing else is ever formatted in. */
char *
queue_stmt_text(const struct queue *q, enum queue_stmt which)
{
	char *in, *sql;
	size_t i, n = q->claim_types > 0 ? q->claim_types : 1;
	int len;

	in = xmalloc(3 * n);
	in[0] = '?';
	for (i = 1; i < n; i++)
		memcpy(in + 1 + 3 * (i - 1), ", ?", 3);
	in[1 + 3 * (n - 1)] = '\0';
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	len = snprintf(NULL, 0, templates[which], q->table, in);
	sql = xmalloc((size_t)len + 1);
	snprintf(sql, (size_t)len + 1, templates[which], q->table, in);
#pragma GCC diagnostic pop
	free(in);
	return sql;
}

enum db_status
queue_recover(struct queue *q, unsigned long limit, uint64_t *count,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(limit) };
	enum db_status st;

	*count = 0;
	if (limit == 0)
		return DB_OK;
	st = queue_stmt_run(q, Q_RECOVER, args, 1, err, errlen);
	if (st == DB_OK)
		*count = queue_stmt_changed(q, Q_RECOVER);
	return st;
}

void
queue_job_free(struct job *job)
{
	free(job->type);
	free(job->business_key);
	free(job->payload);
	free(job->checkpoint);
	memset(job, 0, sizeof *job);
}

/* What the table supports, known by preparing a statement that needs
 * it, once: *probed says it was tried, *has the answer. */
int
queue_supports(struct queue *q, enum queue_stmt which, int *probed, int *has)
{
	char cause[512];

	if (!*probed) {
		*has = queue_prepare(q, which, cause, sizeof cause) == DB_OK;
		*probed = 1;
	}
	return *has;
}

int
queue_resumable(struct queue *q)
{
	return queue_supports(q, Q_READ_RESUMABLE, &q->caps.checkpoint_probed,
	    &q->caps.checkpoint);
}

int
queue_finished_index(struct queue *q)
{
	return queue_supports(q, Q_REPORT_HOURS, &q->caps.finished_index_probed,
	    &q->caps.finished_index);
}

int
queue_single_lost(const struct queue *q)
{
	return q->lock_lost;
}

enum db_status
queue_take_single(struct queue *q, const char *name, int *held, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(name) };
	enum db_status st;
	char *col = NULL;
	int found;

	st = queue_stmt_one(q, Q_GET_LOCK, args, 1, &col, 1, &found, err, errlen);
	*held = st == DB_OK && found && col != NULL && strcmp(col, "1") == 0;
	if (*held)
		snprintf(q->lock_name, sizeof q->lock_name, "%s", name);
	free(col);
	return st;
}

/* Ask the server whether it reads at as a DATETIME; CAST would
 * otherwise turn a typo into NULL, and NULL into "due now". */
static enum db_status
check_at(struct queue *q, const char *at, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(at) };
	char *ok = NULL;
	enum db_status st;
	int found, valid;

	st = queue_stmt_one(q, Q_VALID_AT, args, 1, &ok, 1, &found, err, errlen);
	valid = found && ok != NULL && strcmp(ok, "1") == 0;
	free(ok);
	if (st == DB_OK && !valid) {
		errf(err, errlen, "--at: the server does not read \"%s\" as "
		    "a date and time", at);
		return DB_BAD_INPUT;
	}
	return st;
}

/* Ask which, a one-column yes or no, about text. */
static enum db_status
ask_json(struct queue *q, enum queue_stmt which, const char *text,
    size_t len, int *yes, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(text, len) };
	char *col = NULL;
	enum db_status st;
	int found;

	st = queue_stmt_one(q, which, args, 1, &col, 1, &found, err, errlen);
	*yes = found && col != NULL && strcmp(col, "1") == 0;
	free(col);
	return st;
}

enum db_status
queue_json_kind(struct queue *q, const char *text, size_t len, int object,
    enum queue_json *kind, char *err, size_t errlen)
{
	enum db_status st;
	int yes;

	*kind = QUEUE_JSON_INVALID;
	st = ask_json(q, Q_VALID_JSON, text, len, &yes, err, errlen);
	if (st != DB_OK || !yes)
		return st;
	*kind = QUEUE_JSON_OTHER;
	if (!object)
		return DB_OK;
	st = ask_json(q, Q_JSON_OBJECT, text, len, &yes, err, errlen);
	if (st == DB_OK && yes)
		*kind = QUEUE_JSON_OBJECT;
	return st;
}

enum db_status
queue_read_reply(struct queue *q, const char *text, size_t len,
    struct reply *reply, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(text, len) };
	char *cols[4] = { NULL, NULL, NULL, NULL };
	size_t lens[4] = { 0 };
	enum db_status st;
	int rc;

	memset(reply, 0, sizeof *reply);
	st = queue_stmt_run(q, Q_READ_REPLY, args, 1, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch_len(q->stmt[Q_READ_REPLY], cols, lens, 4, err, errlen);
	if (rc < 0)
		return DB_ERROR;
	if (rc == 1)
		db_done(q->stmt[Q_READ_REPLY]);
	reply->valid = cols[0] != NULL && strcmp(cols[0], "1") == 0;
	reply->object = cols[1] != NULL && strcmp(cols[1], "OBJECT") == 0;
	reply->checkpoint = cols[2];
	reply->checkpoint_len = lens[2];
	reply->snooze = cols[3];
	free(cols[0]);
	free(cols[1]);
	return DB_OK;
}

enum db_status
queue_enqueue(struct queue *q, const char *type, const char *key,
    const char *payload, size_t payload_len, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *id, int *created, char **status,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(key), DB_STR(type),
	    DB_STRN(payload, payload_len),
	    max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL),
	    DB_STR(when->at), DB_NUM(when->delay) };
	struct db_arg status_args[1];
	enum db_status st;
	int found;

	*status = NULL;
	if (when->at != NULL && (st = check_at(q, when->at, err, errlen)) !=
	    DB_OK)
		return st;
	st = queue_stmt_run(q, Q_ENQUEUE, args, 6, err, errlen);
	if (st != DB_OK)
		return st;
	*created = queue_stmt_changed(q, Q_ENQUEUE) == 1;
	*id = (uint64_t)mysql_stmt_insert_id(q->stmt[Q_ENQUEUE]);
	if (*created) {
		*status = xstrdup("pending");
		return DB_OK;
	}
	status_args[0] = DB_NUM(*id);
	st = queue_stmt_one(q, Q_JOB_STATUS, status_args, 1, status, 1, &found, err,
	    errlen);
	if (st == DB_OK && !found) {
		errf(err, errlen, "read job status in %s: job %llu vanished",
		    q->table, (unsigned long long)*id);
		return DB_ERROR;
	}
	return st;
}

enum db_status
queue_enqueue_again(struct queue *q, const char *type, const char *key,
    const char *payload, size_t payload_len, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *id, enum queue_again *outcome,
    char **status, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(key), DB_STR(type),
	    DB_STRN(payload, payload_len),
	    max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL),
	    DB_STR(when->at), DB_NUM(when->delay) };
	/* A re-armed job must not resume an earlier run's checkpoint. */
	enum queue_stmt which = queue_resumable(q) ?
	    Q_ENQUEUE_AGAIN_RESUMABLE : Q_ENQUEUE_AGAIN;
	struct db_arg status_args[1];
	enum db_status st;
	uint64_t changed;
	int found;

	*status = NULL;
	if (when->at != NULL && (st = check_at(q, when->at, err, errlen)) !=
	    DB_OK)
		return st;
	st = queue_stmt_run(q, which, args, 6, err, errlen);
	if (st != DB_OK)
		return st;
	changed = queue_stmt_changed(q, which);
	*id = (uint64_t)mysql_stmt_insert_id(q->stmt[which]);
	*outcome = changed == 1 ? QUEUE_CREATED : changed == 2 ?
	    QUEUE_REARMED : QUEUE_LEFT;
	if (*outcome != QUEUE_LEFT) {
		*status = xstrdup("pending");
		return DB_OK;
	}
	status_args[0] = DB_NUM(*id);
	st = queue_stmt_one(q, Q_JOB_STATUS, status_args, 1, status, 1, &found,
	    err, errlen);
	if (st == DB_OK && !found) {
		errf(err, errlen, "read job status in %s: job %llu vanished",
		    q->table, (unsigned long long)*id);
		return DB_ERROR;
	}
	return st;
}

/* The multi-row insert for n rows, prepared once per batch size.  Each
 * row's payload is the template with "from" and "to" set by the server's
 * JSON_SET, so the template's own numbers and strings stay as written. */
static void
prepare_batch(struct queue *q, size_t n)
{
	static const char row[] = JOB_ROW(CHUNK_PAYLOAD);
	char *sql;
	size_t i, len, at;

	if (q->batch != NULL && q->batch_rows == n)
		return;
	queue_stmts_close(q->batch);
	len = sizeof INSERT_JOBS + n * (sizeof row + 2) + 40;
	sql = xmalloc(len);
	at = (size_t)snprintf(sql, len, "%s", INSERT_JOBS);
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(sql + at, len - at, "%s%s", row,
		    i + 1 < n ? ", " : "");
	/* An existing key is left as it is and not counted as changed. */
	snprintf(sql + at, len - at, " ON DUPLICATE KEY UPDATE id = id");
	q->batch = queue_stmts_once(q, sql, "enqueue jobs", QUEUE_JOBS_TABLE);
	q->batch_rows = n;
	free(sql);
}

enum db_status
queue_enqueue_batch(struct queue *q, const char *type, const char *template,
    const struct queue_new_job *jobs, size_t n, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *created, char *err, size_t errlen)
{
	struct db_arg *args;
	enum db_status st;
	size_t i;

	*created = 0;
	if (n == 0)
		return DB_OK;
	if (when->at != NULL && (st = check_at(q, when->at, err, errlen)) !=
	    DB_OK)
		return st;
	prepare_batch(q, n);
	args = xcalloc(n * BATCH_PARAMS, sizeof *args);
	for (i = 0; i < n; i++) {
		struct db_arg *a = &args[BATCH_PARAMS * i];

		a[0] = DB_STR(jobs[i].key);
		a[1] = DB_STR(type);
		a[2] = DB_STR(template != NULL ? template : "{}");
		a[3] = DB_NUM(jobs[i].from);
		a[4] = DB_NUM(jobs[i].to);
		a[5] = max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL);
		a[6] = DB_STR(when->at);
		a[7] = DB_NUM(when->delay);
	}
	/* Too big for the server: the runner says so, rather than "gone
	 * away", and does not send it again. */
	st = queue_stmts_run(q->batch, 0, args, (unsigned)(n * BATCH_PARAMS),
	    err, errlen);
	free(args);
	if (st != DB_OK)
		return st;
	*created = queue_stmts_changed(q->batch, 0);
	return DB_OK;
}

/* The keys go into a derived table under a column of business_key's own
 * type (the UNION takes the column's charset and collation over the
 * parameters'), so "x.k = ?" compares as the table's UNIQUE key does,
 * whatever collation an application gave the column; no row is read. */
enum db_status
queue_key_among(struct queue *q, const char *key, const char *const *keys,
    size_t n, size_t *index, char *err, size_t errlen)
{
	static const char head[] = "SELECT MIN(x.n) FROM (SELECT business_key"
	    " AS k, 0 AS n FROM %1$s WHERE FALSE",
	    tail[] = ") AS x WHERE x.k = ?";
	struct queue_stmts *once;
	struct db_arg *args;
	char *sql, *col = NULL;
	enum db_status st;
	size_t i, len, at;
	int found;

	*index = 0;
	if (n == 0)
		return DB_OK;
	len = sizeof head + n * 40 + sizeof tail;
	sql = xmalloc(len);
	at = (size_t)snprintf(sql, len, "%s", head);
	for (i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(sql + at, len - at,
		    " UNION ALL SELECT ?, %zu", i + 1);
	snprintf(sql + at, len - at, "%s", tail);
	args = xcalloc(n + 1, sizeof *args);
	for (i = 0; i < n; i++)
		args[i] = DB_STR(keys[i]);
	args[n] = DB_STR(key);
	once = queue_stmts_once(q, sql, "compare keys", QUEUE_JOBS_TABLE);
	st = queue_stmts_one(once, 0, args, (unsigned)(n + 1), &col, 1,
	    &found, err, errlen);
	if (st == DB_OK && found && col != NULL)
		*index = (size_t)strtoull(col, NULL, 10);
	queue_stmts_close(once);
	free(col);
	free(args);
	free(sql);
	return st;
}
