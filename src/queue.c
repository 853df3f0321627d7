/*
 * queue.c - the job table's SQL, all of it.
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
/* The smallest max_allowed_packet a server can have: statements whose
 * values are smaller always fit. */
#define PACKET_FLOOR 1024

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

/* A module's statements (queue.h): the queue's runner runs them as it
 * runs its own. */
struct queue_stmts {
	struct queue *q;
	const char *const *texts, *const *purposes, *const *tables;
	size_t n;
	char *other;		/* the module's table, quoted */
	MYSQL_STMT **stmt;	/* n of them, NULL until prepared */
	uint64_t reconnects;	/* the queue's count when they were */
};

struct queue_stmts *
queue_stmts_open(struct queue *q, const char *const *texts,
    const char *const *whats, const char *const *tables, size_t n,
    const char *other)
{
	struct queue_stmts *s = xcalloc(1, sizeof *s);

	*s = (struct queue_stmts){ .q = q, .texts = texts,
	    .purposes = whats, .tables = tables, .n = n,
	    .other = xstrdup(other != NULL ? other : ""),
	    .stmt = xcalloc(n, sizeof *s->stmt),
	    .reconnects = q->counters.reconnects };
	return s;
}

/* Close the statements (those of a connection already gone are only
 * freed). */
static void
stmts_forget(struct queue_stmts *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->stmt[i] != NULL) {
			mysql_stmt_close(s->stmt[i]);
			s->stmt[i] = NULL;
		}
}

void
queue_stmts_close(struct queue_stmts *s)
{
	if (s == NULL)
		return;
	stmts_forget(s);
	free(s->stmt);
	free(s->other);
	free(s);
}

/* Where statement which of s (the queue's own when NULL) is kept. */
static MYSQL_STMT **
slot_of(struct queue *q, struct queue_stmts *s, size_t which)
{
	return s == NULL ? &q->stmt[which] : &s->stmt[which];
}

/* fmt with the job table as %1$s and other as %2$s (malloc'ed). */
static char *
format_tables(const char *fmt, const char *jobs, const char *other)
{
	char *out;
	int len;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	len = snprintf(NULL, 0, fmt, jobs, other);
	out = xmalloc((size_t)len + 1);
	snprintf(out, (size_t)len + 1, fmt, jobs, other);
#pragma GCC diagnostic pop
	return out;
}

/* err, a cause, becomes "<what which does> in <its table>: <cause>". */
static void
say_where(const struct queue *q, const struct queue_stmts *s, size_t which,
    const char *cause, char *err, size_t errlen)
{
	const char *what = s == NULL ? purposes[which] : s->purposes[which];
	const char *table = s == NULL ? QUEUE_JOBS_TABLE : s->tables == NULL ?
	    QUEUE_OTHER_TABLE : s->tables[which];
	char *where;

	if (table == NULL) {
		errf(err, errlen, "%s: %s", what, cause);
		return;
	}
	where = format_tables(table, q->table, s != NULL ? s->other : "");
	errf(err, errlen, "%s in %s: %s", what, where, cause);
	free(where);
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

/* Close every prepared statement (they die with their connection). */
static void
forget_statements(struct queue *q)
{
	int i;

	for (i = 0; i < Q_COUNT; i++)
		if (q->stmt[i] != NULL)
			mysql_stmt_close(q->stmt[i]);
	memset(q->stmt, 0, sizeof q->stmt);
	if (q->batch != NULL)
		mysql_stmt_close(q->batch);
	q->batch = NULL;
}

void
queue_close(struct queue *q)
{
	if (q == NULL)
		return;
	forget_statements(q);
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

/* Prepare statement which of s (the queue's own when NULL), unless it
 * is; a module's statements died with the connection the queue made
 * again. */
static enum db_status
prepare_in(struct queue *q, struct queue_stmts *s, size_t which,
    char *cause, size_t len)
{
	MYSQL_STMT **slot = slot_of(q, s, which);
	enum db_status st;
	char *sql;

	if (s != NULL && s->reconnects != q->counters.reconnects) {
		stmts_forget(s);
		s->reconnects = q->counters.reconnects;
	}
	if (*slot != NULL)
		return DB_OK;
	sql = s == NULL ? queue_stmt_text(q, (enum queue_stmt)which) :
	    format_tables(s->texts[which], q->table, s->other);
	st = db_prepare(q->db, sql, slot, cause, len);
	free(sql);
	return st;
}

static enum db_status
prepare(struct queue *q, enum queue_stmt which, char *cause, size_t len)
{
	return prepare_in(q, NULL, which, cause, len);
}

/* The next number of the queue's own generator (xorshift: no shared
 * state with anyone else's random()). */
static uint64_t
next_random(struct queue *q)
{
	uint64_t x = q->random ? q->random : 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return q->random = x;
}

/* Sleep 2..10 ms, doubled per earlier attempt. */
static void
pause_after_conflict(struct queue *q, unsigned attempt)
{
	struct timespec ts;
	long ms;

	ms = (long)(2 + next_random(q) % 9) << (attempt < 5 ? attempt : 5);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Prepare (if need be) and execute once, running it again after a
 * deadlock. */
static enum db_status
attempt_rows(struct queue *q, struct queue_stmts *s, size_t which,
    const struct db_arg *args, unsigned nargs, unsigned nrows, char *cause,
    size_t len)
{
	MYSQL_STMT **slot = slot_of(q, s, which);
	enum db_status st;
	unsigned tries;

	st = prepare_in(q, s, which, cause, len);
	for (tries = 0; st == DB_OK; tries++) {
		st = nrows > 0 ? db_execute_bulk(q->db, *slot, args, nargs,
		    nrows, cause, len) : db_execute(q->db, *slot, args, nargs,
		    cause, len);
		if (st == DB_CONFLICT && q->in_trx && !q->no_retry)
			q->counters.conflicts++;	/* run again whole */
		if (st != DB_CONFLICT || tries >= QUEUE_CONFLICT_RETRIES ||
		    q->no_retry || q->in_trx)
			break;
		/* Each statement is its own transaction and a deadlock rolled
		 * it back whole, so running it again is safe; the random
		 * pause keeps two runners from colliding again in step. */
		q->counters.conflicts++;
		pause_after_conflict(q, tries);
		st = DB_OK;
	}
	return st;
}

static enum db_status
attempt(struct queue *q, enum queue_stmt which, const struct db_arg *args,
    unsigned nargs, char *cause, size_t len)
{
	return attempt_rows(q, NULL, which, args, nargs, 0, cause, len);
}

/* The --single lock died with the old connection: take it again, or
 * note that another runner has it now. */
static void
retake_lock(struct queue *q)
{
	struct db_arg args[] = { DB_STR(q->lock_name) };
	char cause[512], *col = NULL;
	int rc;

	if (q->lock_name[0] == '\0')
		return;
	q->lock_lost = 1;
	if (attempt(q, Q_GET_LOCK, args, 1, cause, sizeof cause) != DB_OK)
		return;
	rc = db_fetch(q->stmt[Q_GET_LOCK], &col, 1, cause, sizeof cause);
	if (rc == 1) {
		q->lock_lost = col == NULL || strcmp(col, "1") != 0;
		db_done(q->stmt[Q_GET_LOCK]);
	}
	free(col);
}

/* After a lost connection, whether the values just sent (size bytes) are
 * what the server refused: it closes the connection on a packet over its
 * max_allowed_packet, which the client can only see as "gone away".
 * Asked only of statements that could be that large, on the new
 * connection; such a statement must never be sent again. */
static int
over_max_packet(struct queue *q, size_t size, char *cause, size_t len)
{
	char *col = NULL, tmp[512];
	unsigned long max = 0;
	int rc;

	if (size < PACKET_FLOOR || attempt(q, Q_MAX_PACKET, NULL, 0, tmp,
	    sizeof tmp) != DB_OK)
		return 0;
	rc = db_fetch(q->stmt[Q_MAX_PACKET], &col, 1, tmp, sizeof tmp);
	if (rc == 1) {
		if (col != NULL)
			parse_ulong(col, 0, ULONG_MAX, &max);
		db_done(q->stmt[Q_MAX_PACKET]);
	}
	free(col);
	/* The values travel with some bytes of framing around them. */
	if (max == 0 || size + PACKET_FLOOR <= max)
		return 0;
	errf(cause, len, "%zu bytes of values: too large for the server's "
	    "max_allowed_packet (%lu); not sent again", size, max);
	return 1;
}

/* Lost the connection (server restarted, wait_timeout): make it again.
 * Returns DB_OK when the statement that met it may be run again. */
static enum db_status
reconnect(struct queue *q, size_t size, char *cause, size_t len)
{
	enum db_status st;

	forget_statements(q);
	st = db_reconnect(q->db, cause, len);
	if (st != DB_OK)
		return st;
	q->counters.reconnects++;
	retake_lock(q);
	return over_max_packet(q, size, cause, len) ? DB_BAD_INPUT : DB_OK;
}

/* Run statement which with args, preparing it first if need be.  A lost
 * connection (server restarted, wait_timeout) is reconnected once and the
 * statement run again: every statement is its own transaction, and a
 * fenced write that did commit before the connection broke finds its
 * fence gone and changes nothing.  A server that did not answer within
 * read_timeout is not asked again by this statement (the run must end
 * in bounded time); the connection is dropped, and the next statement
 * tries a new one.  Errors read "<purpose> in <table>: <cause>". */
/* queue_stmt_run, for nrows rows of arguments at once when nrows > 0
 * (a bulk execution, made only inside a transaction). */
static enum db_status
stmt_run_rows(struct queue *q, struct queue_stmts *s, size_t which,
    const struct db_arg *args, unsigned nargs, unsigned nrows, char *err,
    size_t errlen)
{
	size_t size = db_args_size(args, nargs * (nrows > 0 ? nrows : 1));
	char cause[512], more[512];
	enum db_status st = DB_OK;

	if (q->db->conn == NULL)
		st = reconnect(q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = attempt_rows(q, s, which, args, nargs, nrows, cause,
		    sizeof cause);
	if (st == DB_UNREACHABLE && db_connection_lost(q->db->last_errno)) {
		if (q->db->timed_out) {
			forget_statements(q);
			db_close(q->db);
		} else if (q->in_trx) {
			/* The transaction died with the connection: its caller
			 * runs it again whole, on a new one. */
			q->trx_lost = reconnect(q, size, more, sizeof more) ==
			    DB_OK;
		} else {
			st = reconnect(q, size, cause, sizeof cause);
			if (st == DB_OK)
				st = attempt_rows(q, s, which, args, nargs, 0,
				    cause, sizeof cause);
		}
	}
	if (st != DB_OK)
		say_where(q, s, which, cause, err, errlen);
	return st;
}

enum db_status
queue_stmt_run(struct queue *q, enum queue_stmt which,
    const struct db_arg *args, unsigned nargs, char *err, size_t errlen)
{
	return stmt_run_rows(q, NULL, which, args, nargs, 0, err, errlen);
}

enum db_status
queue_stmts_prepare(struct queue_stmts *s, size_t which, char *err,
    size_t errlen)
{
	char cause[512];
	enum db_status st = DB_OK;

	if (s->q->db->conn == NULL)
		st = reconnect(s->q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = prepare_in(s->q, s, which, cause, sizeof cause);
	if (st != DB_OK)
		say_where(s->q, s, which, cause, err, errlen);
	return st;
}

enum db_status
queue_stmts_run(struct queue_stmts *s, size_t which,
    const struct db_arg *args, unsigned nargs, char *err, size_t errlen)
{
	return stmt_run_rows(s->q, s, which, args, nargs, 0, err, errlen);
}

/* Run statement which of s (the queue's own when NULL) and read its one
 * row, if any. */
static enum db_status
run_one(struct queue *q, struct queue_stmts *s, size_t which,
    const struct db_arg *args, unsigned nargs, char **cols, unsigned ncols,
    int *found, char *err, size_t errlen)
{
	MYSQL_STMT **slot = slot_of(q, s, which);
	enum db_status st;
	char cause[512];
	int rc;

	*found = 0;
	st = stmt_run_rows(q, s, which, args, nargs, 0, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(*slot, cols, ncols, cause, sizeof cause);
	if (rc < 0) {
		say_where(q, s, which, cause, err, errlen);
		return DB_ERROR;
	}
	if (rc == 1)
		db_done(*slot);
	*found = rc == 1;
	return DB_OK;
}

enum db_status
queue_stmts_one(struct queue_stmts *s, size_t which,
    const struct db_arg *args, unsigned nargs, char **cols, unsigned ncols,
    int *found, char *err, size_t errlen)
{
	return run_one(s->q, s, which, args, nargs, cols, ncols, found, err,
	    errlen);
}

int
queue_stmts_fetch(struct queue_stmts *s, size_t which, char **cols,
    unsigned ncols, char *err, size_t errlen)
{
	char cause[512];
	int rc = db_fetch(s->stmt[which], cols, ncols, cause, sizeof cause);

	if (rc < 0)
		say_where(s->q, s, which, cause, err, errlen);
	return rc;
}

uint64_t
queue_stmts_changed(const struct queue_stmts *s, size_t which)
{
	return (uint64_t)mysql_stmt_affected_rows(s->stmt[which]);
}

uint64_t
queue_stmts_insert_id(const struct queue_stmts *s, size_t which)
{
	return (uint64_t)mysql_stmt_insert_id(s->stmt[which]);
}

unsigned
queue_last_errno(const struct queue *q)
{
	return q->db->last_errno;
}

uint64_t
queue_stmt_changed(const struct queue *q, enum queue_stmt which)
{
	return (uint64_t)mysql_stmt_affected_rows(q->stmt[which]);
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
static int
supports(struct queue *q, enum queue_stmt which, int *probed, int *has)
{
	char cause[512];

	if (!*probed) {
		*has = prepare(q, which, cause, sizeof cause) == DB_OK;
		*probed = 1;
	}
	return *has;
}

int
queue_resumable(struct queue *q)
{
	return supports(q, Q_READ_RESUMABLE, &q->caps.checkpoint_probed,
	    &q->caps.checkpoint);
}

int
queue_finished_index(struct queue *q)
{
	return supports(q, Q_REPORT_HOURS, &q->caps.finished_index_probed,
	    &q->caps.finished_index);
}

/* A claimed row's columns (READ's, and checkpoint and snoozes when
 * resumable) as job id, and its next_run_at into at (atlen bytes; ""
 * when NULL or longer).  Every column may be NULL in a table that is not
 * quite the seed's: a NULL key stays NULL (the handlers say so), a NULL
 * payload is "{}", NULL numbers are 0.  Takes the columns it keeps. */
static void
fill_job(struct job *job, uint64_t id, char **cols, const size_t *lens,
    unsigned ncols, int resumable, char *at, size_t atlen)
{
	unsigned long attempts = 0, max_attempts = 0;
	unsigned i;

	if (cols[4] != NULL)
		parse_ulong(cols[4], 0, 0xffffffffUL, &attempts);
	if (cols[5] != NULL)
		parse_ulong(cols[5], 0, 0xffffffffUL, &max_attempts);
	job->id = id;
	job->type = cols[1] != NULL ? cols[1] : xstrdup("");
	job->business_key = cols[2];
	job->business_key_len = lens[2];
	job->payload = cols[3] != NULL ? cols[3] : xstrdup("{}");
	job->payload_len = cols[3] != NULL ? lens[3] : 2;
	job->payload_valid = cols[6] != NULL && strcmp(cols[6], "1") == 0;
	job->attempt = attempts;
	job->max_attempts = max_attempts;
	at[0] = '\0';
	if (cols[7] != NULL && lens[7] < atlen)
		memcpy(at, cols[7], lens[7] + 1);
	job->resumable = resumable;
	if (resumable) {
		job->checkpoint = cols[8];
		job->checkpoint_len = lens[8];
		if (cols[9] != NULL)
			parse_ulong(cols[9], 0, 0xffffffffUL, &job->snoozes);
		cols[8] = NULL;
	}
	cols[1] = cols[2] = cols[3] = NULL;
	for (i = 0; i < ncols; i++) {
		free(cols[i]);
		cols[i] = NULL;
	}
}

/* Read back the row just claimed, and its next_run_at into at. */
static enum db_status
read_job(struct queue *q, uint64_t id, const char *token, struct job *job,
    char *at, size_t atlen, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id), DB_STR(token) };
	enum queue_stmt which = queue_resumable(q) ? Q_READ_RESUMABLE : Q_READ;
	unsigned ncols = which == Q_READ ? 8 : 10;
	char *cols[10] = { NULL };
	size_t lens[10] = { 0 };
	enum db_status st;
	int rc;

	st = queue_stmt_run(q, which, args, 2, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch_len(q->stmt[which], cols, lens, ncols, err, errlen);
	if (rc <= 0) {
		if (rc == 0)
			errf(err, errlen, "read the claimed job %llu in %s: "
			    "row vanished", (unsigned long long)id, q->table);
		/* Inside a transaction (flow.c's), Galera rolled the claim
		 * back under us (a replicated write won): the transaction is
		 * run again. */
		return rc == 0 && q->in_trx ? DB_CONFLICT : DB_ERROR;
	}
	db_done(q->stmt[which]);
	fill_job(job, id, cols, lens, ncols, which == Q_READ_RESUMABLE, at,
	    atlen);
	return DB_OK;
}

/* The arguments of a statement on several claimed rows (FENCE_MANY):
 * n ids, then their n tokens, the unused places repeating the first. */
static void
group_args(struct db_arg *args, const uint64_t *ids,
    const char *const *tokens, size_t n)
{
	size_t i, k;

	for (i = 0; i < QUEUE_GROUP_MAX; i++) {
		k = i < n ? i : 0;
		args[i] = DB_NUM(ids[k]);
		args[QUEUE_GROUP_MAX + i] = DB_STR(tokens[k]);
	}
}

/* The cursor moves to the job just read, if it is the one the claims
 * left for it (see queue_cursor). */
static void
cursor_move(struct queue *q, uint64_t id, const char *at)
{
	struct queue_cursor *c = &q->cursor;

	if (c->next_id == 0 || id != c->next_id || at[0] == '\0')
		return;
	memcpy(c->at, at, sizeof c->at);
	c->id = id;
	c->claim = c->next_claim;
	c->types = c->next_types;
	c->set = 1;
	c->next_id = 0;
}

enum db_status
queue_read_claimed(struct queue *q, const uint64_t *ids,
    const char *const *tokens, struct job *const *jobs, size_t n, char *err,
    size_t errlen)
{
	struct db_arg args[2 * QUEUE_GROUP_MAX];
	enum queue_stmt which = queue_resumable(q) ? Q_READ_MANY_RESUMABLE :
	    Q_READ_MANY;
	unsigned ncols = which == Q_READ_MANY ? 8 : 10;
	char *cols[10] = { NULL }, at[sizeof q->cursor.at];
	size_t lens[10] = { 0 }, i, found = 0;
	enum db_status st;
	uint64_t id;
	int rc;

	if (n == 0 || n > QUEUE_GROUP_MAX) {
		errf(err, errlen, "read %zu claimed jobs: 1 to %d", n,
		    QUEUE_GROUP_MAX);
		return DB_ERROR;
	}
	group_args(args, ids, tokens, n);
	st = queue_stmt_run(q, which, args, 2 * QUEUE_GROUP_MAX, err, errlen);
	while (st == DB_OK && (rc = db_fetch_len(q->stmt[which], cols, lens,
	    ncols, err, errlen)) != 0) {
		if (rc < 0)
			return DB_ERROR;
		id = queue_number(cols[0]);
		for (i = 0; i < n && (ids[i] != id || jobs[i]->type != NULL);
		    i++)
			;
		if (i == n) {
			db_free_cols(cols, ncols);
			continue;
		}
		fill_job(jobs[i], id, cols, lens, ncols,
		    which == Q_READ_MANY_RESUMABLE, at, sizeof at);
		cursor_move(q, id, at);
		found++;
	}
	if (st == DB_OK && found < n) {
		errf(err, errlen, "read the claimed jobs in %s: %zu of %zu "
		    "rows vanished", q->table, n - found, n);
		st = DB_ERROR;
	}
	return st;
}

enum db_status
queue_mark_success_many(struct queue *q, const uint64_t *ids,
    const char *const *tokens, size_t n, uint64_t *changed, char *err,
    size_t errlen)
{
	struct db_arg args[2 * QUEUE_GROUP_MAX];
	enum db_status st;

	*changed = 0;
	if (n == 0 || n > QUEUE_GROUP_MAX) {
		errf(err, errlen, "mark %zu jobs: 1 to %d", n,
		    QUEUE_GROUP_MAX);
		return DB_ERROR;
	}
	group_args(args, ids, tokens, n);
	st = queue_stmt_run(q, Q_SUCCESS_MANY, args, 2 * QUEUE_GROUP_MAX, err,
	    errlen);
	if (st == DB_OK)
		*changed = queue_stmt_changed(q, Q_SUCCESS_MANY);
	return st;
}

/* Whether the single-type claim can use idx_type_pick: tried once, by
 * preparing it; a table without the index falls back to idx_pick. */
static int
type_index_usable(struct queue *q)
{
	return supports(q, Q_CLAIM_TYPE, &q->caps.type_index_probed,
	    &q->caps.type_index);
}

/* The claim statement for ntypes types; a prepared one for another
 * number of types is dropped. */
enum queue_stmt
queue_claim_stmt(struct queue *q, size_t ntypes, enum queue_stmt *spread)
{
	enum queue_stmt s[] = { Q_CLAIM, Q_CLAIM_SPREAD, Q_CLAIM_AFTER };
	size_t i;

	if (q->claim_types != ntypes)
		for (i = 0; i < sizeof s / sizeof s[0]; i++)
			if (q->stmt[s[i]] != NULL) {
				mysql_stmt_close(q->stmt[s[i]]);
				q->stmt[s[i]] = NULL;
			}
	q->claim_types = ntypes;
	if (ntypes == 1 && type_index_usable(q)) {
		*spread = Q_CLAIM_TYPE_SPREAD;
		return Q_CLAIM_TYPE;
	}
	*spread = Q_CLAIM_SPREAD;
	return Q_CLAIM;
}

/* The claim's arguments: the lock, then the types (the one type twice for
 * the index's claim), room for the spread's two more or the cursor's
 * three. */
struct db_arg *
queue_claim_args(enum queue_stmt which, const char *const *types,
    size_t ntypes, unsigned long lock_seconds, const char *token,
    unsigned *nargs)
{
	struct db_arg *args = xcalloc(ntypes + 7, sizeof *args);
	unsigned n = 0;
	size_t i;

	args[n++] = DB_STR(token);
	args[n++] = DB_NUM(lock_seconds);
	args[n++] = DB_NUM(lock_seconds);
	for (i = 0; i < ntypes; i++)
		args[n++] = DB_STR(types[i]);
	if (which == Q_CLAIM_TYPE)
		args[n++] = DB_STR(types[0]);
	*nargs = n;
	return args;
}

enum db_status
queue_prepare_run(struct queue *q, size_t ntypes, char *err, size_t errlen)
{
	enum queue_stmt which, spread;
	char cause[512];
	enum db_status st;

	/* The claim and the recovery run first anyway; one more statement,
	 * prepared and dropped, names every column and index the others
	 * use, so a start-up costs one round trip more, not ten. */
	which = queue_claim_stmt(q, ntypes, &spread);
	st = prepare(q, which, cause, sizeof cause);
	if (st == DB_OK)
		st = prepare(q, which = Q_RECOVER, cause, sizeof cause);
	if (st == DB_OK)
		st = prepare(q, which = Q_SCHEMA, cause, sizeof cause);
	if (q->stmt[Q_SCHEMA] != NULL) {
		mysql_stmt_close(q->stmt[Q_SCHEMA]);
		q->stmt[Q_SCHEMA] = NULL;
	}
	if (st != DB_OK)
		errf(err, errlen, "%s in %s: %s", purposes[which], q->table,
		    cause);
	return st;
}

/* The id of the row claimed with token, read back by the token: a
 * trigger on the table (an audit trail, say) leaves the claim's reply
 * without LAST_INSERT_ID's value. */
static enum db_status
claimed_by_token(struct queue *q, const char *token, uint64_t *id, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(token) };
	enum db_status st;
	char *col = NULL;
	int found;

	st = queue_stmt_one(q, Q_CLAIMED_ID, args, 1, &col, 1, &found, err,
	    errlen);
	*id = queue_number(col);
	free(col);
	return st;
}

/* A hash of the claim's types (FNV-1a over their bytes and lengths): the
 * cursor of one list of types is no place to start a claim of another. */
static uint64_t
types_hash(const char *const *types, size_t ntypes)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;
	const char *p;

	for (i = 0; i < ntypes; i++) {
		for (p = types[i]; *p != '\0'; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return h;
}

/* Run the claim: *id is the row it took, 0 for none.  The cursor is
 * left as it was, and where it may move next (next_id) is noted. */
static enum db_status
claim_row(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, uint64_t *id, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	enum queue_stmt which, spread, after, used;
	struct db_arg *args;
	enum db_status st;
	unsigned tries, n;
	uint64_t m, hash;
	int64_t start;

	*id = 0;
	if (ntypes == 0) {
		errf(err, errlen, "claim a job: no types");
		return DB_ERROR;
	}
	which = queue_claim_stmt(q, ntypes, &spread);
	after = which == Q_CLAIM_TYPE ? Q_CLAIM_TYPE_AFTER : Q_CLAIM_AFTER;
	args = queue_claim_args(which, types, ntypes, lock_seconds, token, &n);
	/* Past the cursor, unless it belongs to another claim or the last
	 * claim from the head is QUEUE_CURSOR_MS old (see the top of the
	 * file). */
	start = now_ms();
	hash = types_hash(types, ntypes);
	/* A run that claims from two lists of types in turn (flow control:
	 * the types with room in its transaction, then the plain ones)
	 * keeps a cursor for each: the other list's waits in the spare. */
	if (c->types != hash || c->claim != which) {
		struct queue_cursor other = q->cursor_spare;

		q->cursor_spare = *c;
		*c = other;
	}
	if (c->set && (c->claim != which || c->types != hash ||
	    start - c->head_ms >= QUEUE_CURSOR_MS || q->spread))
		c->set = 0;
	if (c->set) {
		args[n] = DB_STR(c->at);
		args[n + 1] = DB_STR(c->at);
		args[n + 2] = DB_NUM(c->id);
	}
	/* Every runner's claim aims at the head of the queue.  On one
	 * server they queue up on its row lock; on Galera, runners on
	 * different nodes each take it locally and all but one lose
	 * certification (1213), and a statement run again as it was loses
	 * again about half the time.  After a first loss, this runner aims
	 * at a random one of the first 32, 64, then 128 due rows instead
	 * (id MOD m = r), for the rest of the run: runners on different
	 * nodes rarely pick the same row.  A residue with no due row falls
	 * back to the head.  One server never gets here unless an InnoDB
	 * deadlock happens, and then only loosens the order among due jobs.
	 * The spread claims use no cursor: they skip rows on purpose. */
	q->no_retry = 1;
	for (tries = 0;; tries++) {
		used = which;
		if (tries == 0 && !q->spread && c->set) {
			used = after;
			st = queue_stmt_run(q, after, args, n + 3, err, errlen);
			if (st == DB_OK && queue_stmt_changed(q, after) == 0) {
				/* Nothing due past it: from the head. */
				c->set = 0;
				used = which;
				start = now_ms();
				st = queue_stmt_run(q, which, args, n, err,
				    errlen);
			}
		} else if (tries == 0 && !q->spread) {
			st = queue_stmt_run(q, which, args, n, err, errlen);
		} else {
			m = 32ULL << (tries < 2 ? tries : 2);
			args[n] = DB_NUM(m);
			args[n + 1] = DB_NUM(next_random(q) % m);
			used = spread;
			st = queue_stmt_run(q, spread, args, n + 2, err, errlen);
			if (st == DB_OK && queue_stmt_changed(q, spread) == 0) {
				used = which;
				st = queue_stmt_run(q, which, args, n, err, errlen);
			}
		}
		if (st != DB_CONFLICT || tries >= QUEUE_CLAIM_RETRIES)
			break;
		q->counters.conflicts++;
		q->spread = 1;
		/* In a transaction of several statements, the deadlock rolled
		 * back all of it: its caller runs it again whole. */
		if (q->in_trx)
			break;
		pause_after_conflict(q, tries < 3 ? tries : 3);
	}
	q->no_retry = 0;
	free(args);
	if (used == which)
		c->head_ms = start;
	if (st != DB_OK || queue_stmt_changed(q, used) == 0)
		return st;
	*id = (uint64_t)mysql_stmt_insert_id(q->stmt[used]);
	if (*id == 0 && (st = claimed_by_token(q, token, id, err, errlen)) !=
	    DB_OK)
		return st;
	/* The cursor may move to the job just claimed, in the claim's
	 * order: never after a spread claim, which took a row out of
	 * order. */
	c->next_id = 0;
	if (!q->spread && (used == which || used == after)) {
		c->next_id = *id;
		c->next_claim = which;
		c->next_types = hash;
	}
	return DB_OK;
}

enum db_status
queue_claim(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, char *err, size_t errlen)
{
	char at[sizeof q->cursor.at];
	enum db_status st;
	uint64_t id;

	*claimed = 0;
	st = claim_row(q, types, ntypes, lock_seconds, token, &id, err,
	    errlen);
	q->cursor.set = 0;
	if (st != DB_OK || id == 0)
		return st;
	*claimed = 1;
	st = read_job(q, id, token, job, at, sizeof at, err, errlen);
	if (st == DB_OK)
		cursor_move(q, id, at);
	return st;
}

enum db_status
queue_claim_id(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, uint64_t *id, char *err,
    size_t errlen)
{
	return claim_row(q, types, ntypes, lock_seconds, token, id, err,
	    errlen);
}

/* Read the jobs a bulk claim took, by their tokens, into the matching
 * jobs; *found is how many.  The cursor moves to the last of them in
 * the claim's order. */
static enum db_status
read_tokens(struct queue *q, const char *const *tokens,
    struct job *const *jobs, size_t n, size_t *found, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	enum queue_stmt which = queue_resumable(q) ? Q_READ_TOKENS_RESUMABLE :
	    Q_READ_TOKENS;
	unsigned ncols = which == Q_READ_TOKENS ? 8 : 10;
	struct db_arg args[3 + QUEUE_GROUP_MAX];
	char *cols[11] = { NULL }, at[sizeof c->at], last_at[sizeof c->at];
	size_t lens[11] = { 0 }, i;
	uint64_t id, last_id = 0;
	enum db_status st;
	int rc;

	*found = 0;
	args[0] = DB_STR(c->at);
	args[1] = DB_STR(c->at);
	args[2] = DB_NUM(c->id);
	for (i = 0; i < QUEUE_GROUP_MAX; i++)
		args[3 + i] = DB_STR(tokens[i < n ? i : 0]);
	st = queue_stmt_run(q, which, args, 3 + QUEUE_GROUP_MAX, err, errlen);
	while (st == DB_OK && (rc = db_fetch_len(q->stmt[which], cols, lens,
	    ncols + 1, err, errlen)) != 0) {
		if (rc < 0)
			return DB_ERROR;
		for (i = 0; i < n && (cols[ncols] == NULL ||
		    strcmp(tokens[i], cols[ncols]) != 0 ||
		    jobs[i]->type != NULL); i++)
			;
		free(cols[ncols]);
		cols[ncols] = NULL;
		if (i == n) {
			db_free_cols(cols, ncols);
			continue;
		}
		id = queue_number(cols[0]);
		fill_job(jobs[i], id, cols, lens, ncols,
		    which == Q_READ_TOKENS_RESUMABLE, at, sizeof at);
		(*found)++;
		if (at[0] != '\0' && (last_id == 0 || strcmp(at, last_at) > 0 ||
		    (strcmp(at, last_at) == 0 && id > last_id))) {
			memcpy(last_at, at, sizeof last_at);
			last_id = id;
		}
	}
	if (st == DB_OK && last_id != 0) {
		memcpy(c->at, last_at, sizeof c->at);
		c->id = last_id;
	}
	return st;
}

/* Bulk claims need the server's bulk execution, and are not made on
 * Galera: there a transaction that a replicated write set aborted under
 * a bulk execution was seen (test/galera) to lose the statements before
 * it without an error, the group's marks with them, so groups there
 * claim one by one.  Asked once; a server that cannot say counts as
 * Galera. */
static int
bulk_claims_ok(struct queue *q)
{
	char *col = NULL, tmp[512];

	if (!db_bulk_supported(q->db))
		return 0;
	if (!q->caps.galera_probed) {
		q->caps.galera_probed = q->caps.galera = 1;
		if (attempt(q, Q_WSREP, NULL, 0, tmp, sizeof tmp) == DB_OK &&
		    db_fetch(q->stmt[Q_WSREP], &col, 1, tmp, sizeof tmp) == 1) {
			q->caps.galera = col == NULL || (strcmp(col, "0") != 0 &&
			    strcasecmp(col, "OFF") != 0);
			db_done(q->stmt[Q_WSREP]);
		}
		free(col);
	}
	return !q->caps.galera;
}

enum db_status
queue_claim_bulk(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *const *tokens,
    struct job *const *jobs, size_t n, size_t *claimed, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	enum queue_stmt which, spread, after;
	struct db_arg *one, *rows;
	enum db_status st;
	size_t i, found;
	unsigned nargs;

	*claimed = 0;
	if (n < 2 || n > QUEUE_GROUP_MAX || ntypes == 0 || !q->in_trx ||
	    q->spread || !bulk_claims_ok(q))
		return DB_OK;
	which = queue_claim_stmt(q, ntypes, &spread);
	after = which == Q_CLAIM_TYPE ? Q_CLAIM_TYPE_AFTER : Q_CLAIM_AFTER;
	if (!c->set || c->claim != which ||
	    c->types != types_hash(types, ntypes) ||
	    now_ms() - c->head_ms >= QUEUE_CURSOR_MS)
		return DB_OK;
	one = queue_claim_args(which, types, ntypes, lock_seconds, tokens[0],
	    &nargs);
	one[nargs] = DB_STR(c->at);
	one[nargs + 1] = DB_STR(c->at);
	one[nargs + 2] = DB_NUM(c->id);
	nargs += 3;
	rows = xcalloc(n * nargs, sizeof *rows);
	for (i = 0; i < n; i++) {
		memcpy(&rows[i * nargs], one, nargs * sizeof *one);
		rows[i * nargs] = DB_STR(tokens[i]);
	}
	/* In the transaction: a conflict or a lost connection is its
	 * caller's to run again whole (attempt_rows and stmt_run_rows). */
	st = stmt_run_rows(q, NULL, after, rows, nargs, (unsigned)n, err,
	    errlen);
	free(rows);
	free(one);
	if (st != DB_OK)
		return st;
	if (queue_stmt_changed(q, after) == 0)
		return DB_OK;
	st = read_tokens(q, tokens, jobs, n, &found, err, errlen);
	/* Fewer jobs under their tokens than the bulk took (seen on Galera,
	 * before bulk claims were left out there: a transaction aborted
	 * under the bulk, the read run outside it).  Nothing is committed
	 * yet: a conflict, the group rolled back and written again one
	 * statement at a time. */
	if (st == DB_OK && found != queue_stmt_changed(q, after)) {
		errf(err, errlen, "read the claimed jobs in %s: %zu rows "
		    "claimed, %zu found", q->table,
		    (size_t)queue_stmt_changed(q, after), found);
		q->counters.conflicts++;
		st = DB_CONFLICT;
	}
	*claimed = found;
	return st;
}

/* Run a fenced write; *owned says whether it found the job still ours. */
static enum db_status
fenced(struct queue *q, enum queue_stmt which, struct db_arg *args,
    unsigned nargs, int *owned, char *err, size_t errlen)
{
	enum db_status st = queue_stmt_run(q, which, args, nargs, err, errlen);

	*owned = st == DB_OK && queue_stmt_changed(q, which) == 1;
	return st;
}

/* A fenced write whose args[text] is a message for last_error.  Every
 * message is valid UTF-8, but a table made in utf8mb3 or latin1 cannot
 * hold every character, and in strict mode the server refuses the whole
 * write (1366, or 1977 for a conversion): the job would stay processing
 * and every run that claimed it would end the same way.  Refused so, the
 * message is written again with the characters utf8mb3 cannot hold as
 * '?', and then with every character beyond ASCII so, which every such
 * character set holds. */
static enum db_status
fenced_text(struct queue *q, enum queue_stmt which, struct db_arg *args,
    unsigned nargs, unsigned text, int *owned, char *err, size_t errlen)
{
	static const size_t narrower[] = { 3, 1 };
	enum db_status st = fenced(q, which, args, nargs, owned, err, errlen);
	const char *message = args[text].str;
	size_t len, i;
	char *narrow;

	if (message == NULL)
		return st;
	len = args[text].len == DB_STRLEN ? strlen(message) : args[text].len;
	for (i = 0; i < 2 && st != DB_OK && (q->db->last_errno == 1366 ||
	    q->db->last_errno == 1977); i++) {
		narrow = utf8_narrow(message, len, narrower[i]);
		args[text] = DB_STR(narrow);
		st = fenced(q, which, args, nargs, owned, err, errlen);
		free(narrow);
	}
	args[text] = DB_STRN(message, len);
	return st;
}

enum db_status
queue_mark_success(struct queue *q, const struct job *job, const char *token,
    int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(job->id), DB_STR(token) };

	return fenced(q, Q_SUCCESS, args, 2, owned, err, errlen);
}

enum db_status
queue_mark_retry(struct queue *q, const struct job *job, const char *token,
    unsigned long delay, const char *last_error, int *owned, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_NUM(delay), DB_STR(last_error),
	    DB_NUM(job->id), DB_STR(token) };

	return fenced_text(q, Q_RETRY, args, 4, 1, owned, err, errlen);
}

enum db_status
queue_mark_failed(struct queue *q, const struct job *job, const char *token,
    const char *last_error, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(last_error), DB_NUM(job->id),
	    DB_STR(token) };

	return fenced_text(q, Q_FAIL, args, 3, 0, owned, err, errlen);
}

enum db_status
queue_stmt_one(struct queue *q, enum queue_stmt which,
    const struct db_arg *args, unsigned nargs, char **cols, unsigned ncols,
    int *found, char *err, size_t errlen)
{
	return run_one(q, NULL, which, args, nargs, cols, ncols, found, err,
	    errlen);
}

/* A fenced write that may change nothing (the same lock time or the same
 * checkpoint within one second): MariaDB then reports zero changed rows,
 * which is also what a lost lock reports, so ask with check whether the
 * job is still ours; *answer is check's one column ("1" true), when
 * asked. */
static enum db_status
fenced_or_owner(struct queue *q, enum queue_stmt which, struct db_arg *args,
    unsigned nargs, enum queue_stmt check, const struct db_arg *check_args,
    unsigned check_nargs, int *owned, int *answer, char *err,
    size_t errlen)
{
	enum db_status st;
	char *col = NULL;

	st = fenced(q, which, args, nargs, owned, err, errlen);
	if (st != DB_OK || *owned)
		return st;
	st = queue_stmt_one(q, check, check_args, check_nargs, &col, 1, owned, err,
	    errlen);
	if (answer != NULL)
		*answer = col != NULL && strcmp(col, "1") == 0;
	free(col);
	return st;
}

enum db_status
queue_checkpoint(struct queue *q, const struct job *job, const char *token,
    const char *json, size_t len, unsigned long lock_seconds, int *owned,
    int *valid, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(json, len), DB_NUM(lock_seconds),
	    DB_NUM(lock_seconds), DB_NUM(job->id), DB_STR(token),
	    DB_STRN(json, len) };
	struct db_arg check[] = { DB_STRN(json, len), DB_NUM(job->id),
	    DB_STR(token) };
	enum db_status st;

	*valid = 1;
	st = fenced_or_owner(q, Q_CHECKPOINT, args, 6, Q_CHECKPOINT_CHECK,
	    check, 3, owned, valid, err, errlen);
	if (st == DB_OK && !*owned)
		*valid = 1;	/* not asked: the lock is gone */
	return st;
}

enum db_status
queue_snooze(struct queue *q, const struct job *job, const char *token,
    unsigned long delay, int progress, const char *note, int *owned,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(progress != 0), DB_NUM(delay),
	    DB_STR(note), DB_NUM(job->id), DB_STR(token) };

	return fenced_text(q, Q_SNOOZE, args, 5, 2, owned, err, errlen);
}

enum db_status
queue_release(struct queue *q, const struct job *job, const char *token,
    int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(job->id), DB_STR(token) };

	return fenced(q, Q_RELEASE, args, 2, owned, err, errlen);
}

/* START TRANSACTION, COMMIT or ROLLBACK.  A connection lost before the
 * COMMIT took the transaction with it: a new one is made (trx_lost says
 * so) and the caller may run the transaction again; one lost during the
 * COMMIT leaves its outcome unknown: a new one is made (commit_lost says
 * so) for commit_trx to ask what the server kept.  A server
 * that did not answer in time is not asked again here. */
static enum db_status
trx_statement(struct queue *q, const char *sql, const char *purpose,
    char *err, size_t errlen)
{
	char cause[512], more[512];
	enum db_status st = DB_OK;

	if (q->db->conn == NULL)
		st = reconnect(q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = db_query(q->db, sql, cause, sizeof cause);
	if (st == DB_UNREACHABLE && db_connection_lost(q->db->last_errno) &&
	    strcmp(sql, "COMMIT") == 0) {
		if (!q->db->timed_out)
			q->commit_lost = reconnect(q, 0, more, sizeof more) ==
			    DB_OK;
	} else if (st == DB_UNREACHABLE &&
	    db_connection_lost(q->db->last_errno)) {
		if (q->db->timed_out) {
			forget_statements(q);
			db_close(q->db);
		} else
			q->trx_lost = reconnect(q, 0, more, sizeof more) ==
			    DB_OK;
	}
	if (st != DB_OK)
		errf(err, errlen, "%s in %s: %s", purpose, q->table, cause);
	return st;
}

/* START TRANSACTION: inside it no statement is run again after a
 * deadlock or a lost connection; queue_trx rolls it back (which also puts
 * the claim's cursor back) and runs it again whole. */
static enum db_status
begin_trx(struct queue *q, char *err, size_t errlen)
{
	enum db_status st;

	q->trx_lost = 0;
	st = trx_statement(q, "START TRANSACTION", "start a transaction", err,
	    errlen);
	if (st == DB_OK) {
		q->in_trx = 1;
		q->trx_cursor = q->cursor;
	}
	return st;
}

/* Whether the server kept the transaction w witnesses, asked on the new
 * connection after its COMMIT's answer was lost.  A mark takes its row
 * out of 'processing' under its token, so the row still there under it
 * (read with a lock: the killed session may still hold it) says the
 * transaction was rolled back; a claim leaves a row 'processing' under
 * its token, so finding one says it was kept. */
static enum db_status
witness_kept(struct queue *q, const struct queue_witness *w, int *kept,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(w->id), DB_STR(w->token) };
	enum db_status st;
	uint64_t id;
	char *col = NULL;
	int found;

	*kept = 1;
	if (w->token == NULL)
		return DB_OK;		/* it wrote nothing */
	if (w->id == 0) {
		st = claimed_by_token(q, w->token, &id, err, errlen);
		*kept = id != 0;
		return st;
	}
	st = queue_stmt_one(q, Q_OWNER_LOCKED, args, 2, &col, 1, &found, err,
	    errlen);
	free(col);
	*kept = !found;
	return st;
}

/* COMMIT, and when the connection is lost during it (not for want of an
 * answer in time), a new one is made and asked by w whether the server
 * kept the transaction: kept, DB_OK; rolled back, the error with
 * trx_lost set, so queue_trx runs it again whole.  If the new connection
 * cannot tell, the error stands; without w, commit_lost says so. */
static enum db_status
commit_trx(struct queue *q, const struct queue_witness *w, char *err,
    size_t errlen)
{
	enum db_status st, asked;
	char cause[512];
	size_t n;
	int kept;

	q->commit_lost = 0;
	st = trx_statement(q, "COMMIT", "commit the claims and outcomes", err,
	    errlen);
	if (st == DB_OK)
		q->in_trx = 0;
	else if (st == DB_CONFLICT)
		q->counters.conflicts++;	/* Galera: run again whole */
	if (st == DB_OK || !q->commit_lost || w == NULL)
		return st;
	/* The transaction is gone from the new connection either way: what
	 * is asked now is asked on its own. */
	q->commit_lost = 0;
	q->in_trx = 0;
	asked = witness_kept(q, w, &kept, cause, sizeof cause);
	if (asked != DB_OK) {
		n = strlen(err);
		snprintf(err + n, errlen - n, "; then %s", cause);
		return st;
	}
	if (kept)
		return DB_OK;
	/* Rolled back: the caller runs it again whole. */
	q->cursor = q->trx_cursor;
	q->trx_lost = 1;
	return st;
}

static void
rollback_trx(struct queue *q)
{
	char err[512];

	/* After a deadlock or a lost connection there is nothing left to
	 * roll back, and the ROLLBACK costs nothing; after a lock wait
	 * timeout, only the statement was. */
	if (!q->in_trx)
		return;
	if (q->db->conn != NULL && !q->trx_lost)
		(void)db_query(q->db, "ROLLBACK", err, sizeof err);
	q->in_trx = 0;
	q->cursor = q->trx_cursor;
}

enum db_status
queue_trx(struct queue *q, const struct queue_trx *t, char *err,
    size_t errlen)
{
	struct queue_witness w;
	enum db_status st;
	unsigned tries;
	int again, alone;

	for (tries = 1;; tries++) {
		w = (struct queue_witness){ 0, NULL };
		alone = t->alone != NULL && t->alone(t->arg);
		st = alone ? DB_OK : begin_trx(q, err, errlen);
		if (st == DB_OK)
			st = t->body(t->arg, &w, err, errlen);
		if (st == DB_OK && !alone)
			st = commit_trx(q, t->idempotent ? NULL : &w, err,
			    errlen);
		if (st == DB_OK)
			return st;
		/* An idempotent transaction whose COMMIT's answer was lost
		 * is run again: twice is the same as once. */
		again = !alone && (q->trx_lost || (q->commit_lost &&
		    t->idempotent) || (st == DB_CONFLICT &&
		    (t->lock_wait_again || q->db->last_errno !=
		    ER_LOCK_WAIT_TIMEOUT)));
		q->commit_lost = 0;
		rollback_trx(q);
		if (t->undo != NULL)
			t->undo(t->arg, st);
		if (!again || tries >= t->tries)
			return st;
		if (st == DB_CONFLICT)
			pause_after_conflict(q, tries < 3 ? tries : 3);
	}
}

int
queue_trx_open(struct queue *q)
{
	if (q->db->conn != NULL && (q->db->conn->server_status &
	    SERVER_STATUS_IN_TRANS) != 0)
		return 1;
	/* Rolled back under us: nothing is left to roll back, and what
	 * follows runs on its own. */
	q->in_trx = 0;
	return 0;
}

enum db_status
queue_lock_wait(struct queue *q, unsigned seconds, char *err, size_t errlen)
{
	char sql[160], cause[512];
	enum db_status st = DB_OK;

	/* A connection made again meanwhile has the session's own wait:
	 * nothing to put back. */
	if (seconds == 0 && q->lock_wait_at != q->counters.reconnects)
		return DB_OK;
	if (seconds > 0)
		snprintf(sql, sizeof sql, "SET @jobrun_lock_wait ="
		    " @@innodb_lock_wait_timeout, innodb_lock_wait_timeout"
		    " = %u", seconds);
	else
		snprintf(sql, sizeof sql, "SET innodb_lock_wait_timeout ="
		    " @jobrun_lock_wait");
	if (q->db->conn == NULL)
		st = reconnect(q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = db_query(q->db, sql, cause, sizeof cause);
	if (st != DB_OK)
		errf(err, errlen, "%s the session's lock wait: %s", seconds > 0 ?
		    "set" : "put back", cause);
	q->lock_wait_at = q->counters.reconnects;
	return st;
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

enum db_status
queue_extend(struct queue *q, const struct job *job, const char *token,
    unsigned long lock_seconds, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(lock_seconds), DB_NUM(lock_seconds),
	    DB_NUM(job->id), DB_STR(token) };

	return fenced_or_owner(q, Q_EXTEND, args, 4, Q_OWNER, args + 2, 2,
	    owned, NULL, err, errlen);
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
static enum db_status
prepare_batch(struct queue *q, size_t n, char *err, size_t errlen)
{
	static const char row[] = JOB_ROW(CHUNK_PAYLOAD);
	char *sql, cause[512];
	size_t i, len;
	enum db_status st;

	if (q->batch != NULL && q->batch_rows == n)
		return DB_OK;
	if (q->batch != NULL)
		mysql_stmt_close(q->batch);
	q->batch = NULL;
	len = 256 + strlen(q->table) + n * (sizeof row + 2);
	sql = xmalloc(len);
	i = (size_t)snprintf(sql, len, INSERT_JOBS, q->table);
	for (; n > 0 && i < len; n--)
		i += (size_t)snprintf(sql + i, len - i, "%s%s", row,
		    n > 1 ? ", " : "");
	/* An existing key is left as it is and not counted as changed. */
	snprintf(sql + i, len - i, " ON DUPLICATE KEY UPDATE id = id");
	st = db_prepare(q->db, sql, &q->batch, cause, sizeof cause);
	free(sql);
	if (st != DB_OK) {
		errf(err, errlen, "enqueue jobs in %s: %s", q->table, cause);
		return st;
	}
	q->batch_rows = mysql_stmt_param_count(q->batch) / BATCH_PARAMS;
	return DB_OK;
}

enum db_status
queue_enqueue_batch(struct queue *q, const char *type, const char *template,
    const struct queue_new_job *jobs, size_t n, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *created, char *err, size_t errlen)
{
	struct db_arg *args;
	char cause[512];
	enum db_status st;
	size_t i;

	*created = 0;
	if (n == 0)
		return DB_OK;
	if (when->at != NULL && (st = check_at(q, when->at, err, errlen)) !=
	    DB_OK)
		return st;
	st = prepare_batch(q, n, err, errlen);
	if (st != DB_OK)
		return st;
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
	st = db_execute(q->db, q->batch, args, (unsigned)(n * BATCH_PARAMS),
	    cause, sizeof cause);
	/* Too big for the server: say so, rather than "gone away". */
	if (st == DB_UNREACHABLE && db_connection_lost(q->db->last_errno) &&
	    reconnect(q, db_args_size(args, (unsigned)(n * BATCH_PARAMS)),
	    cause, sizeof cause) == DB_BAD_INPUT)
		st = DB_BAD_INPUT;
	free(args);
	if (st != DB_OK) {
		errf(err, errlen, "enqueue jobs in %s: %s", q->table, cause);
		return st;
	}
	*created = (uint64_t)mysql_stmt_affected_rows(q->batch);
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
	    " AS k, 0 AS n FROM %s WHERE FALSE",
	    tail[] = ") AS x WHERE x.k = ?";
	MYSQL_STMT *stmt = NULL;
	struct db_arg *args;
	char *sql, *col = NULL, cause[512];
	enum db_status st;
	size_t i, len, at;
	int rc;

	*index = 0;
	if (n == 0)
		return DB_OK;
	len = sizeof head + strlen(q->table) + n * 40 + sizeof tail;
	sql = xmalloc(len);
	at = (size_t)snprintf(sql, len, head, q->table);
	for (i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(sql + at, len - at,
		    " UNION ALL SELECT ?, %zu", i + 1);
	snprintf(sql + at, len - at, "%s", tail);
	args = xcalloc(n + 1, sizeof *args);
	for (i = 0; i < n; i++)
		args[i] = DB_STR(keys[i]);
	args[n] = DB_STR(key);
	st = db_prepare(q->db, sql, &stmt, cause, sizeof cause);
	if (st == DB_OK)
		st = db_execute(q->db, stmt, args, (unsigned)(n + 1), cause,
		    sizeof cause);
	if (st == DB_OK) {
		rc = db_fetch(stmt, &col, 1, cause, sizeof cause);
		if (rc < 0)
			st = DB_ERROR;
		else if (rc == 1) {
			if (col != NULL)
				*index = (size_t)strtoull(col, NULL, 10);
			db_done(stmt);
		}
	}
	if (st != DB_OK)
		errf(err, errlen, "compare keys as %s does: %s", q->table,
		    cause);
	if (stmt != NULL)
		mysql_stmt_close(stmt);
	free(col);
	free(args);
	free(sql);
	return st;
}

enum db_status
queue_stmt_walk(struct queue *q, enum queue_stmt which,
    const struct db_arg *args, unsigned nargs, unsigned ncols,
    int (*fn)(void *arg, char **cols, const size_t *lens), void *arg,
    char *err, size_t errlen)
{
	char *cols[32];
	size_t lens[32];
	enum db_status st;
	int rc, stop = 0;

	if (ncols > 32) {
		errf(err, errlen, "%s: too many columns", purposes[which]);
		return DB_ERROR;
	}
	st = queue_stmt_run(q, which, args, nargs, err, errlen);
	while (st == DB_OK && !stop) {
		rc = db_fetch_len(q->stmt[which], cols, lens, ncols, err,
		    errlen);
		if (rc < 0)
			st = DB_ERROR;
		if (rc <= 0)
			break;
		stop = fn(arg, cols, lens);
		db_free_cols(cols, ncols);
	}
	if (stop)
		db_done(q->stmt[which]);
	return st;
}

unsigned long
queue_number(const char *s)
{
	unsigned long v = 0;

	if (s != NULL)
		parse_ulong(s, 0, ULONG_MAX, &v);
	return v;
}

int
queue_int64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (s == NULL)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		return -1;
	*out = v;
	return 0;
}
