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
 * Every later write carries "WHERE id = ? AND locked_by = ?": a runner whose
 * lock expired and whose job was recovered and claimed again finds zero
 * rows and must not write.  All times are the server's NOW(), so runners
 * on hosts with skewed clocks agree.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "queue.h"
#include "util.h"

#define SQL_MAX 2048
#define BATCH_PARAMS 6		/* per row of a multi-row insert */

/* The fenced tail every write after the claim ends with. */
#define FENCE " WHERE id = ? AND locked_by = ? AND status = 'processing'"

/* Sets the columns of a job going back to pending for an operator. */
#define REQUEUE "UPDATE %s SET status = 'pending', attempts = 0," \
	" next_run_at = NOW(), finished_at = NULL, locked_by = NULL," \
	" locked_until = NULL, updated_at = NOW()"

/* The last_error Q_CANCEL writes, compared byte for byte. */
#define CANCELLED "BINARY 'cancelled by operator'"

#define LIST "SELECT id, type, business_key, status, attempts," \
	" max_attempts, next_run_at, updated_at, last_error FROM %s" \
	" WHERE id < ?"
#define LIST_END " ORDER BY id DESC LIMIT ?"

#define SHOW "SELECT id, business_key, type, payload, status, attempts," \
	" max_attempts, next_run_at, locked_by, locked_until, last_error," \
	" created_at, updated_at, finished_at FROM %s"

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

#define CLAIM_SET " SET status = 'processing', locked_by = ?," \
	" locked_until = NOW() + INTERVAL ? SECOND," \
	" attempts = attempts + 1, updated_at = NOW()," \
	" id = LAST_INSERT_ID(id)"

static const char *const templates[Q_COUNT] = {
	[Q_RECOVER] =
	    "UPDATE %s SET"
	    " last_error = CONCAT('lock expired: runner ',"
	    "  IFNULL(locked_by, '?'), ' did not finish attempt ', attempts,"
	    "  ' of ', max_attempts,"
	    "  IF(attempts >= max_attempts, '; no attempts left', '')),"
	    " finished_at = IF(attempts >= max_attempts, NOW(), NULL),"
	    " status = IF(attempts >= max_attempts, 'failed', 'pending'),"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()"
	    " WHERE status = 'processing' AND locked_until < NOW()"
	    " LIMIT ?",
	[Q_CLAIM] =
	    "UPDATE %s FORCE INDEX (idx_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND next_run_at <= NOW()"
	    " AND type IN (%s)"
	    " ORDER BY next_run_at, id LIMIT 1",
	/* One type, with sql/001_type_pick.sql applied: the range holds only
	 * that type's due jobs, however many other types have waiting. */
	[Q_CLAIM_TYPE] =
	    "UPDATE %s FORCE INDEX (idx_type_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND type = ? AND next_run_at <= NOW()"
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_CLAIM_SPREAD] =
	    "UPDATE %s FORCE INDEX (idx_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND next_run_at <= NOW()"
	    " AND type IN (%s) AND id MOD ? = ?"
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_CLAIM_TYPE_SPREAD] =
	    "UPDATE %s FORCE INDEX (idx_type_pick)" CLAIM_SET
	    " WHERE status = 'pending' AND type = ? AND next_run_at <= NOW()"
	    " AND id MOD ? = ?"
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_READ] =
	    "SELECT id, type, business_key, payload, attempts, max_attempts"
	    " FROM %s WHERE id = ? AND locked_by = ?",
	[Q_READ_RESUMABLE] =
	    "SELECT id, type, business_key, payload, attempts, max_attempts,"
	    " checkpoint, snoozes FROM %s WHERE id = ? AND locked_by = ?",
	[Q_SUCCESS] =
	    "UPDATE %s SET status = 'success', finished_at = NOW(),"
	    " last_error = NULL, locked_by = NULL, locked_until = NULL,"
	    " updated_at = NOW()" FENCE,
	[Q_RETRY] =
	    "UPDATE %s SET status = 'pending',"
	    " next_run_at = NOW() + INTERVAL ? SECOND, last_error = ?,"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()" FENCE,
	[Q_FAIL] =
	    "UPDATE %s SET status = 'failed', finished_at = NOW(),"
	    " last_error = ?, locked_by = NULL, locked_until = NULL,"
	    " updated_at = NOW()" FENCE,
	[Q_EXTEND] =
	    "UPDATE %s SET locked_until = NOW() + INTERVAL ? SECOND,"
	    " updated_at = NOW()" FENCE,
	[Q_OWNER] =
	    "SELECT id FROM %s" FENCE,
	[Q_RELEASE] =
	    "UPDATE %s SET status = 'pending', next_run_at = NOW(),"
	    " attempts = IF(attempts > 0, attempts - 1, 0),"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()" FENCE,
	[Q_GET_LOCK] = "SELECT GET_LOCK(?, 0)",
	[Q_CHECKPOINT] =
	    "UPDATE %s SET checkpoint = ?,"
	    " locked_until = NOW() + INTERVAL ? SECOND, updated_at = NOW()"
	    FENCE,
	/* attempts - 1 undoes the claim's count: a snooze is not a try. */
	[Q_SNOOZE] =
	    "UPDATE %s SET status = 'pending',"
	    " attempts = IF(attempts > 0, attempts - 1, 0),"
	    " snoozes = IF(?, 0, snoozes + 1),"
	    " next_run_at = NOW() + INTERVAL ? SECOND, last_error = ?,"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()" FENCE,
	[Q_ENQUEUE] =
	    "INSERT INTO %s (business_key, type, payload, status, attempts,"
	    " max_attempts, next_run_at, created_at, updated_at)"
	    " VALUES (?, ?, ?, 'pending', 0, IFNULL(?, DEFAULT(max_attempts)),"
	    " IFNULL(CAST(? AS DATETIME), NOW() + INTERVAL ? SECOND),"
	    " NOW(), NOW())"
	    /* Changes nothing on a duplicate, so affected rows is 0 and
	     * LAST_INSERT_ID is the existing job's id. */
	    " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
	[Q_VALID_AT] =
	    "SELECT CAST(? AS DATETIME) IS NOT NULL",
	[Q_JOB_STATUS] =
	    "SELECT status FROM %s WHERE id = ?",
	/* A loose index scan: one jump per type, not a row per job. */
	[Q_TYPES] =
	    "SELECT DISTINCT type FROM %s FORCE INDEX (idx_type_status)",
	[Q_TYPE_COUNTS] =
	    "SELECT status, COUNT(*) FROM %s FORCE INDEX (idx_type_status)"
	    " WHERE type = ? AND status IN ('pending', 'processing', 'failed')"
	    " GROUP BY status",
	/* Counting success rows exactly reads every one; the optimizer's
	 * estimate from the index is close enough to see growth. */
	[Q_SUCCESS_ESTIMATE] =
	    "EXPLAIN SELECT id FROM %s FORCE INDEX (idx_type_status)"
	    " WHERE type = ? AND status = 'success'",
	[Q_LAG] =
	    "SELECT type, COUNT(*), TIMESTAMPDIFF(SECOND, MIN(next_run_at),"
	    " NOW()) FROM %s FORCE INDEX (idx_pick)"
	    " WHERE status = 'pending' AND next_run_at <= NOW() GROUP BY type",
	[Q_EXPIRED] =
	    "SELECT type, COUNT(*) FROM %s FORCE INDEX (idx_lock)"
	    " WHERE status = 'processing' AND locked_until < NOW()"
	    " GROUP BY type",
	[Q_LIST] = LIST LIST_END,
	[Q_LIST_STATUS] = LIST " AND status = ?" LIST_END,
	[Q_LIST_TYPE] = LIST " AND type = ?" LIST_END,
	[Q_LIST_STATUS_TYPE] = LIST " AND status = ? AND type = ?" LIST_END,
	[Q_SHOW_ID] = SHOW " WHERE id = ?",
	[Q_SHOW_KEY] = SHOW " WHERE business_key = ?",
	[Q_RETRY_ID] = REQUEUE " WHERE id = ? AND status = 'failed'",
	[Q_RETRY_ID_FORCE] = REQUEUE
	    " WHERE id = ? AND status IN ('failed', 'pending')",
	[Q_RETRY_FAILED] = REQUEUE " WHERE status = 'failed' LIMIT 1000",
	[Q_RETRY_FAILED_TYPE] = REQUEUE
	    " WHERE type = ? AND status = 'failed' LIMIT 1000",
	[Q_RETRY_UNCANCELLED] = REQUEUE " WHERE status = 'failed'"
	    " AND NOT (last_error <=> " CANCELLED ") LIMIT 1000",
	[Q_RETRY_UNCANCELLED_TYPE] = REQUEUE " WHERE type = ?"
	    " AND status = 'failed' AND NOT (last_error <=> " CANCELLED ")"
	    " LIMIT 1000",
	[Q_FAILED_COUNTS] = "SELECT COUNT(*), COUNT(IF(last_error <=> "
	    CANCELLED ", 1, NULL)) FROM %s FORCE INDEX (idx_pick)"
	    " WHERE status = 'failed'",
	[Q_FAILED_COUNTS_TYPE] = "SELECT COUNT(*), COUNT(IF(last_error <=> "
	    CANCELLED ", 1, NULL)) FROM %s FORCE INDEX (idx_type_status)"
	    " WHERE type = ? AND status = 'failed'",
	[Q_CANCEL] =
	    "UPDATE %s SET status = 'failed',"
	    " last_error = 'cancelled by operator',"
	    " next_run_at = LEAST(next_run_at, NOW()), finished_at = NOW(),"
	    " updated_at = NOW() WHERE id = ? AND status = 'pending'",
	[Q_PURGE] = "DELETE j FROM %1$s AS j JOIN (SELECT id FROM %1$s"
	    " FORCE INDEX (idx_pick)" PURGE_WHERE
	    " ORDER BY next_run_at, id LIMIT 1000) AS d USING (id)",
	[Q_PURGE_TYPE] = "DELETE j FROM %1$s AS j JOIN (SELECT id FROM %1$s"
	    " FORCE INDEX (idx_pick)" PURGE_WHERE " AND type = ?"
	    " ORDER BY next_run_at, id LIMIT 1000) AS d USING (id)",
	[Q_PURGE_COUNT] = "SELECT COUNT(*) FROM %s FORCE INDEX (idx_pick)"
	    PURGE_WHERE,
	[Q_PURGE_COUNT_TYPE] = "SELECT COUNT(*) FROM %s FORCE INDEX (idx_pick)"
	    PURGE_WHERE " AND type = ?",
	[Q_COLUMNS] =
	    "SELECT COLUMN_NAME FROM information_schema.COLUMNS"
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
};

/* What each statement is for, in error messages. */
static const char *const purposes[Q_COUNT] = {
	[Q_RECOVER] = "recover expired locks",
	[Q_CLAIM] = "claim a job",
	[Q_CLAIM_TYPE] = "claim a job",
	[Q_CLAIM_SPREAD] = "claim a job",
	[Q_CLAIM_TYPE_SPREAD] = "claim a job",
	[Q_READ] = "read the claimed job",
	[Q_READ_RESUMABLE] = "read the claimed job",
	[Q_CHECKPOINT] = "save a checkpoint",
	[Q_SNOOZE] = "put the job off",
	[Q_SUCCESS] = "mark job success",
	[Q_RETRY] = "mark job for retry",
	[Q_FAIL] = "mark job failed",
	[Q_EXTEND] = "extend job lock",
	[Q_OWNER] = "check job lock",
	[Q_RELEASE] = "put job back",
	[Q_GET_LOCK] = "take the --single lock",
	[Q_ENQUEUE] = "enqueue job",
	[Q_VALID_AT] = "check --at",
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
	[Q_RETRY_FAILED] = "retry failed jobs",
	[Q_RETRY_FAILED_TYPE] = "retry failed jobs",
	[Q_RETRY_UNCANCELLED] = "retry failed jobs",
	[Q_RETRY_UNCANCELLED_TYPE] = "retry failed jobs",
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
};

void
queue_init(struct queue *q, struct db *db, const char *table)
{
	memset(q, 0, sizeof *q);
	q->db = db;
	snprintf(q->name, sizeof q->name, "%s", table);
	q->random = (uint64_t)getpid() << 32 ^ (uint64_t)now_ms();
	db_quote_ident(table, q->table, sizeof q->table);
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
	forget_statements(q);
}

/* "?, ?, ?" for n placeholders. */
static void
placeholders(char *out, size_t outlen, size_t n)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < n && o + 4 < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, i ? ", ?" : "?");
}

/* The text of statement which. */
static int
statement_text(const struct queue *q, enum queue_stmt which, char *sql,
    size_t len)
{
	char in[SQL_MAX / 2];
	int n;

	placeholders(in, sizeof in, q->claim_types);
	/* Only the quoted table name and "?"s are formatted in. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	n = snprintf(sql, len, templates[which], q->table, in);
#pragma GCC diagnostic pop
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static enum db_status
prepare(struct queue *q, enum queue_stmt which, char *cause, size_t len)
{
	char sql[SQL_MAX];

	if (q->stmt[which] != NULL)
		return DB_OK;
	if (statement_text(q, which, sql, sizeof sql) != 0) {
		errf(cause, len, "statement too long");
		return DB_ERROR;
	}
	return db_prepare(q->db, sql, &q->stmt[which], cause, len);
}

/* Sleep 2..10 ms, doubled per earlier attempt (xorshift: no shared
 * state with anyone else's random()). */
static void
pause_after_conflict(struct queue *q, unsigned attempt)
{
	struct timespec ts;
	uint64_t x = q->random ? q->random : 0x9e3779b97f4a7c15ULL;
	long ms;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	q->random = x;
	ms = (long)(2 + x % 9) << (attempt < 5 ? attempt : 5);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Prepare (if need be) and execute once, running it again after a
 * deadlock. */
static enum db_status
attempt(struct queue *q, enum queue_stmt which, const struct db_arg *args,
    unsigned nargs, char *cause, size_t len)
{
	enum db_status st;
	unsigned tries;

	st = prepare(q, which, cause, len);
	for (tries = 0; st == DB_OK; tries++) {
		st = db_execute(q->db, q->stmt[which], args, nargs, cause,
		    len);
		if (st != DB_CONFLICT || tries >= QUEUE_CONFLICT_RETRIES ||
		    q->no_retry)
			break;
		/* Each statement is its own transaction and a deadlock rolled
		 * it back whole, so running it again is safe; the random
		 * pause keeps two runners from colliding again in step. */
		q->conflicts++;
		pause_after_conflict(q, tries);
		st = DB_OK;
	}
	return st;
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

/* Run statement which with args, preparing it first if need be.  A lost
 * connection (server restarted, wait_timeout) is reconnected once and the
 * statement run again: every statement is its own transaction, and a
 * fenced write that did commit before the connection broke finds its
 * fence gone and changes nothing.  Errors read "<purpose> in <table>:
 * <cause>". */
static enum db_status
run(struct queue *q, enum queue_stmt which, const struct db_arg *args,
    unsigned nargs, char *err, size_t errlen)
{
	char cause[512];
	enum db_status st;

	st = attempt(q, which, args, nargs, cause, sizeof cause);
	if (st == DB_UNREACHABLE && db_connection_lost(q->db->last_errno)) {
		forget_statements(q);
		st = db_reconnect(q->db, cause, sizeof cause);
		if (st == DB_OK) {
			q->reconnects++;
			retake_lock(q);
			st = attempt(q, which, args, nargs, cause,
			    sizeof cause);
		}
	}
	if (st != DB_OK)
		errf(err, errlen, "%s in %s: %s", purposes[which], q->table,
		    cause);
	return st;
}

static uint64_t
affected(const struct queue *q, enum queue_stmt which)
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
	st = run(q, Q_RECOVER, args, 1, err, errlen);
	if (st == DB_OK)
		*count = affected(q, Q_RECOVER);
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

int
queue_resumable(struct queue *q)
{
	char cause[512];

	if (q->no_checkpoint)
		return 0;
	if (prepare(q, Q_READ_RESUMABLE, cause, sizeof cause) != DB_OK)
		q->no_checkpoint = 1;
	return !q->no_checkpoint;
}

/* Read back the row just claimed. */
static enum db_status
read_job(struct queue *q, uint64_t id, const char *token, struct job *job,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id), DB_STR(token) };
	enum queue_stmt which = queue_resumable(q) ? Q_READ_RESUMABLE : Q_READ;
	unsigned ncols = which == Q_READ ? 6 : 8, i;
	char *cols[8] = { NULL };
	enum db_status st;
	unsigned long attempts = 0, max_attempts = 0;
	int rc;

	st = run(q, which, args, 2, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[which], cols, ncols, err, errlen);
	if (rc <= 0) {
		if (rc == 0)
			errf(err, errlen, "read the claimed job %llu in %s: "
			    "row vanished", (unsigned long long)id, q->table);
		return DB_ERROR;
	}
	db_done(q->stmt[which]);
	/* INT UNSIGNED columns always parse; a failure leaves 0. */
	parse_ulong(cols[4], 0, 0xffffffffUL, &attempts);
	parse_ulong(cols[5], 0, 0xffffffffUL, &max_attempts);
	job->id = id;
	job->type = cols[1];
	job->business_key = cols[2];
	job->payload = cols[3] != NULL ? cols[3] : xstrdup("{}");
	job->attempt = attempts;
	job->max_attempts = max_attempts;
	job->checkpoint = cols[6];
	if (cols[7] != NULL)
		parse_ulong(cols[7], 0, 0xffffffffUL, &job->snoozes);
	job->resumable = which == Q_READ_RESUMABLE;
	cols[1] = cols[2] = cols[3] = cols[6] = NULL;
	for (i = 0; i < ncols; i++)
		free(cols[i]);
	return DB_OK;
}

/* Whether the single-type claim can use idx_type_pick: tried once, by
 * preparing it; a table without the index falls back to idx_pick. */
static int
type_index_usable(struct queue *q)
{
	char cause[512];

	if (q->no_type_index)
		return 0;
	if (prepare(q, Q_CLAIM_TYPE, cause, sizeof cause) != DB_OK)
		q->no_type_index = 1;
	return !q->no_type_index;
}

enum db_status
queue_claim(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, char *err, size_t errlen)
{
	struct db_arg args[2 + 64 + 2];
	enum queue_stmt which = Q_CLAIM, spread = Q_CLAIM_SPREAD, used;
	enum db_status st;
	unsigned tries;
	uint64_t m;
	size_t i;

	*claimed = 0;
	if (ntypes == 0 || ntypes > 64) {
		errf(err, errlen, "claim a job: %zu types (1..64 allowed)",
		    ntypes);
		return DB_ERROR;
	}
	if (ntypes == 1 && type_index_usable(q)) {
		which = Q_CLAIM_TYPE;
		spread = Q_CLAIM_TYPE_SPREAD;
	}
	if (q->stmt[Q_CLAIM] != NULL && q->claim_types != ntypes) {
		mysql_stmt_close(q->stmt[Q_CLAIM]);
		q->stmt[Q_CLAIM] = NULL;
	}
	if (q->stmt[Q_CLAIM_SPREAD] != NULL && q->claim_types != ntypes) {
		mysql_stmt_close(q->stmt[Q_CLAIM_SPREAD]);
		q->stmt[Q_CLAIM_SPREAD] = NULL;
	}
	q->claim_types = ntypes;
	args[0] = DB_STR(token);
	args[1] = DB_NUM(lock_seconds);
	for (i = 0; i < ntypes; i++)
		args[2 + i] = DB_STR(types[i]);
	/* Every runner's claim aims at the head of the queue.  On one
	 * server they queue up on its row lock; on Galera, runners on
	 * different nodes each take it locally and all but one lose
	 * certification (1213), and a statement run again as it was loses
	 * again about half the time.  After a first loss, this runner aims
	 * at a random one of the first 32, 64, then 128 due rows instead
	 * (id MOD m = r), for the rest of the run: runners on different
	 * nodes rarely pick the same row.  A residue with no due row falls
	 * back to the head.  One server never gets here unless an InnoDB
	 * deadlock happens, and then only loosens the order among due jobs. */
	q->no_retry = 1;
	for (tries = 0;; tries++) {
		used = which;
		if (tries == 0 && !q->spread) {
			st = run(q, which, args, (unsigned)(2 + ntypes), err,
			    errlen);
		} else {
			m = 32ULL << (tries < 2 ? tries : 2);
			q->random ^= q->random << 13;
			q->random ^= q->random >> 7;
			q->random ^= q->random << 17;
			args[2 + ntypes] = DB_NUM(m);
			args[3 + ntypes] = DB_NUM(q->random % m);
			used = spread;
			st = run(q, spread, args, (unsigned)(4 + ntypes), err,
			    errlen);
			if (st == DB_OK && affected(q, spread) == 0) {
				used = which;
				st = run(q, which, args,
				    (unsigned)(2 + ntypes), err, errlen);
			}
		}
		if (st != DB_CONFLICT || tries >= QUEUE_CLAIM_RETRIES)
			break;
		q->conflicts++;
		q->spread = 1;
		pause_after_conflict(q, tries < 3 ? tries : 3);
	}
	q->no_retry = 0;
	if (st != DB_OK || affected(q, used) == 0)
		return st;
	*claimed = 1;
	return read_job(q, (uint64_t)mysql_stmt_insert_id(q->stmt[used]),
	    token, job, err, errlen);
}

/* Run a fenced write; *owned says whether it found the job still ours. */
static enum db_status
fenced(struct queue *q, enum queue_stmt which, struct db_arg *args,
    unsigned nargs, int *owned, char *err, size_t errlen)
{
	enum db_status st = run(q, which, args, nargs, err, errlen);

	*owned = st == DB_OK && affected(q, which) == 1;
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

	return fenced(q, Q_RETRY, args, 4, owned, err, errlen);
}

enum db_status
queue_mark_failed(struct queue *q, const struct job *job, const char *token,
    const char *last_error, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(last_error), DB_NUM(job->id),
	    DB_STR(token) };

	return fenced(q, Q_FAIL, args, 3, owned, err, errlen);
}

/* A fenced write that may change nothing (the same lock time or the same
 * checkpoint within one second): MariaDB then reports zero changed rows,
 * which is also what a lost lock reports, so ask whether the job is
 * still ours. */
static enum db_status
fenced_or_owner(struct queue *q, enum queue_stmt which, struct db_arg *args,
    unsigned nargs, const struct job *job, const char *token, int *owned,
    char *err, size_t errlen)
{
	struct db_arg owner_args[] = { DB_NUM(job->id), DB_STR(token) };
	enum db_status st;
	char *col;
	int rc;

	st = fenced(q, which, args, nargs, owned, err, errlen);
	if (st != DB_OK || *owned)
		return st;
	st = run(q, Q_OWNER, owner_args, 2, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[Q_OWNER], &col, 1, err, errlen);
	if (rc < 0)
		return DB_ERROR;
	if (rc == 1) {
		free(col);
		db_done(q->stmt[Q_OWNER]);
	}
	*owned = rc == 1;
	return DB_OK;
}

enum db_status
queue_checkpoint(struct queue *q, const struct job *job, const char *token,
    const char *json, unsigned long lock_seconds, int *owned, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(json), DB_NUM(lock_seconds),
	    DB_NUM(job->id), DB_STR(token) };

	return fenced_or_owner(q, Q_CHECKPOINT, args, 4, job, token, owned,
	    err, errlen);
}

enum db_status
queue_snooze(struct queue *q, const struct job *job, const char *token,
    unsigned long delay, int progress, const char *note, int *owned,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(progress != 0), DB_NUM(delay),
	    DB_STR(note), DB_NUM(job->id), DB_STR(token) };

	return fenced(q, Q_SNOOZE, args, 5, owned, err, errlen);
}

enum db_status
queue_release(struct queue *q, const struct job *job, const char *token,
    int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(job->id), DB_STR(token) };

	return fenced(q, Q_RELEASE, args, 2, owned, err, errlen);
}

enum db_status
queue_get_lock(struct queue *q, const char *name, int *held, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(name) };
	enum db_status st;
	char *col = NULL;
	int rc;

	*held = 0;
	st = run(q, Q_GET_LOCK, args, 1, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[Q_GET_LOCK], &col, 1, err, errlen);
	if (rc < 0)
		return DB_ERROR;
	*held = rc == 1 && col != NULL && strcmp(col, "1") == 0;
	if (*held)
		snprintf(q->lock_name, sizeof q->lock_name, "%s", name);
	free(col);
	if (rc == 1)
		db_done(q->stmt[Q_GET_LOCK]);
	return DB_OK;
}

enum db_status
queue_extend(struct queue *q, const struct job *job, const char *token,
    unsigned long lock_seconds, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(lock_seconds), DB_NUM(job->id),
	    DB_STR(token) };

	return fenced_or_owner(q, Q_EXTEND, args, 3, job, token, owned, err,
	    errlen);
}

/* Ask the server whether it reads at as a DATETIME; CAST would
 * otherwise turn a typo into NULL, and NULL into "due now". */
static enum db_status
check_at(struct queue *q, const char *at, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(at) };
	char *ok = NULL;
	enum db_status st;
	int rc, valid;

	st = run(q, Q_VALID_AT, args, 1, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[Q_VALID_AT], &ok, 1, err, errlen);
	if (rc < 0)
		return DB_ERROR;
	valid = rc == 1 && ok != NULL && strcmp(ok, "1") == 0;
	free(ok);
	if (rc == 1)
		db_done(q->stmt[Q_VALID_AT]);
	if (!valid) {
		errf(err, errlen, "--at: the server does not read \"%s\" as "
		    "a date and time", at);
		return DB_BAD_INPUT;
	}
	return DB_OK;
}

enum db_status
queue_enqueue(struct queue *q, const char *type, const char *key,
    const char *payload, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *id, int *created, char **status,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(key), DB_STR(type), DB_STR(payload),
	    max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL),
	    DB_STR(when->at), DB_NUM(when->delay) };
	struct db_arg status_args[1];
	enum db_status st;
	int rc;

	*status = NULL;
	if (when->at != NULL && (st = check_at(q, when->at, err, errlen)) !=
	    DB_OK)
		return st;
	st = run(q, Q_ENQUEUE, args, 6, err, errlen);
	if (st != DB_OK)
		return st;
	*created = affected(q, Q_ENQUEUE) == 1;
	*id = (uint64_t)mysql_stmt_insert_id(q->stmt[Q_ENQUEUE]);
	if (*created) {
		*status = xstrdup("pending");
		return DB_OK;
	}
	status_args[0] = DB_NUM(*id);
	st = run(q, Q_JOB_STATUS, status_args, 1, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[Q_JOB_STATUS], status, 1, err, errlen);
	if (rc <= 0) {
		if (rc == 0)
			errf(err, errlen, "read job status in %s: job %llu "
			    "vanished", q->table, (unsigned long long)*id);
		return DB_ERROR;
	}
	db_done(q->stmt[Q_JOB_STATUS]);
	return DB_OK;
}

/* The multi-row insert for n rows, prepared once per batch size. */
static enum db_status
prepare_batch(struct queue *q, size_t n, char *err, size_t errlen)
{
	static const char row[] = "(?, ?, ?, 'pending', 0, "
	    "IFNULL(?, DEFAULT(max_attempts)), "
	    "IFNULL(CAST(? AS DATETIME), NOW() + INTERVAL ? SECOND), NOW(), "
	    "NOW())";
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
	i = (size_t)snprintf(sql, len, "INSERT INTO %s (business_key, type, "
	    "payload, status, attempts, max_attempts, next_run_at, created_at, "
	    "updated_at) VALUES ", q->table);
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
queue_enqueue_batch(struct queue *q, const char *type,
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
		a[2] = DB_STR(jobs[i].payload);
		a[3] = max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL);
		a[4] = DB_STR(when->at);
		a[5] = DB_NUM(when->delay);
	}
	st = db_execute(q->db, q->batch, args, (unsigned)(n * BATCH_PARAMS),
	    cause, sizeof cause);
	free(args);
	if (st != DB_OK) {
		errf(err, errlen, "enqueue jobs in %s: %s", q->table, cause);
		return st;
	}
	*created = (uint64_t)mysql_stmt_affected_rows(q->batch);
	return DB_OK;
}

static void
free_row(char **cols, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		free(cols[i]);
}

enum db_status
queue_select(struct queue *q, enum queue_stmt which,
    const struct db_arg *args, unsigned nargs, unsigned ncols,
    queue_row_fn fn, void *arg, char *err, size_t errlen)
{
	char *cols[32];
	enum db_status st;
	int rc, stop = 0;

	if (ncols > 32) {
		errf(err, errlen, "%s: too many columns", purposes[which]);
		return DB_ERROR;
	}
	st = run(q, which, args, nargs, err, errlen);
	while (st == DB_OK && !stop) {
		rc = db_fetch(q->stmt[which], cols, ncols, err, errlen);
		if (rc < 0)
			st = DB_ERROR;
		if (rc <= 0)
			break;
		stop = fn(arg, cols, ncols);
		free_row(cols, ncols);
	}
	if (stop)
		db_done(q->stmt[which]);
	return st;
}

enum db_status
queue_write(struct queue *q, enum queue_stmt which,
    const struct db_arg *args, unsigned nargs, uint64_t *changed, char *err,
    size_t errlen)
{
	enum db_status st = run(q, which, args, nargs, err, errlen);

	*changed = st == DB_OK ? affected(q, which) : 0;
	return st;
}

enum db_status
queue_explain_claim(struct queue *q, const char *const *types, size_t ntypes,
    char **index, unsigned long *rows, char *err, size_t errlen)
{
	struct db_arg args[2 + 64];
	enum queue_stmt which = Q_CLAIM;
	char sql[SQL_MAX + 16], cause[512], *cols[10];
	MYSQL_STMT *stmt = NULL;
	enum db_status st;
	size_t i;
	int rc;

	*index = NULL;
	*rows = 0;
	if (ntypes == 0 || ntypes > 64) {
		errf(err, errlen, "explain the claim: %zu types", ntypes);
		return DB_ERROR;
	}
	if (ntypes == 1 && type_index_usable(q))
		which = Q_CLAIM_TYPE;
	q->claim_types = ntypes;
	if (q->stmt[Q_CLAIM] != NULL) {
		mysql_stmt_close(q->stmt[Q_CLAIM]);
		q->stmt[Q_CLAIM] = NULL;
	}
	memcpy(sql, "EXPLAIN ", 8);
	if (statement_text(q, which, sql + 8, sizeof sql - 8) != 0) {
		errf(err, errlen, "explain the claim: statement too long");
		return DB_ERROR;
	}
	args[0] = DB_STR("explain");
	args[1] = DB_NUM(1);
	for (i = 0; i < ntypes; i++)
		args[2 + i] = DB_STR(types[i]);
	st = db_prepare(q->db, sql, &stmt, cause, sizeof cause);
	if (st == DB_OK)
		st = db_execute(q->db, stmt, args, (unsigned)(2 + ntypes), cause,
		    sizeof cause);
	if (st == DB_OK) {
		rc = db_fetch(stmt, cols, 10, cause, sizeof cause);
		if (rc < 0)
			st = DB_ERROR;
		if (rc == 1) {
			*index = cols[5];
			cols[5] = NULL;
			if (cols[8] != NULL)
				parse_ulong(cols[8], 0, ULONG_MAX, rows);
			free_row(cols, 10);
			db_done(stmt);
		}
	}
	if (stmt != NULL)
		mysql_stmt_close(stmt);
	if (st != DB_OK)
		errf(err, errlen, "explain the claim in %s: %s", q->table,
		    cause);
	return st;
}
