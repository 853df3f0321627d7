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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "util.h"

#define SQL_MAX 2048

/* The fenced tail every write after the claim ends with. */
#define FENCE " WHERE id = ? AND locked_by = ? AND status = 'processing'"

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
	    "UPDATE %s FORCE INDEX (idx_pick) SET"
	    " status = 'processing', locked_by = ?,"
	    " locked_until = NOW() + INTERVAL ? SECOND,"
	    " attempts = attempts + 1, updated_at = NOW(),"
	    " id = LAST_INSERT_ID(id)"
	    " WHERE status = 'pending' AND next_run_at <= NOW()"
	    " AND type IN (%s)"
	    " ORDER BY next_run_at, id LIMIT 1",
	[Q_READ] =
	    "SELECT id, type, business_key, payload, attempts, max_attempts"
	    " FROM %s WHERE id = ? AND locked_by = ?",
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
	[Q_ENQUEUE] =
	    "INSERT INTO %s (business_key, type, payload, status, attempts,"
	    " max_attempts, next_run_at, created_at, updated_at)"
	    " VALUES (?, ?, ?, 'pending', 0, IFNULL(?, DEFAULT(max_attempts)),"
	    " NOW() + INTERVAL ? SECOND, NOW(), NOW())"
	    /* Changes nothing on a duplicate, so affected rows is 0 and
	     * LAST_INSERT_ID is the existing job's id. */
	    " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
	[Q_STATUS] =
	    "SELECT status FROM %s WHERE id = ?",
};

/* What each statement is for, in error messages. */
static const char *const purposes[Q_COUNT] = {
	[Q_RECOVER] = "recover expired locks",
	[Q_CLAIM] = "claim a job",
	[Q_READ] = "read the claimed job",
	[Q_SUCCESS] = "mark job success",
	[Q_RETRY] = "mark job for retry",
	[Q_FAIL] = "mark job failed",
	[Q_EXTEND] = "extend job lock",
	[Q_OWNER] = "check job lock",
	[Q_ENQUEUE] = "enqueue job",
	[Q_STATUS] = "read job status",
};

void
queue_init(struct queue *q, struct db *db, const char *table)
{
	memset(q, 0, sizeof *q);
	q->db = db;
	db_quote_ident(table, q->table, sizeof q->table);
}

void
queue_close(struct queue *q)
{
	int i;

	for (i = 0; i < Q_COUNT; i++)
		if (q->stmt[i] != NULL)
			mysql_stmt_close(q->stmt[i]);
	memset(q->stmt, 0, sizeof q->stmt);
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

/* Run statement which with args, preparing it first if need be.  Errors
 * read "<purpose> in <table>: <cause>". */
static enum db_status
run(struct queue *q, enum queue_stmt which, const struct db_arg *args,
    unsigned nargs, char *err, size_t errlen)
{
	char sql[SQL_MAX], in[SQL_MAX / 2], cause[512];
	enum db_status st = DB_OK;
	int n;

	if (q->stmt[which] == NULL) {
		placeholders(in, sizeof in, q->claim_types);
		/* Only the quoted table name and "?"s are formatted in. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		n = snprintf(sql, sizeof sql, templates[which], q->table, in);
#pragma GCC diagnostic pop
		if (n < 0 || (size_t)n >= sizeof sql) {
			errf(err, errlen, "%s: statement too long",
			    purposes[which]);
			return DB_ERROR;
		}
		st = db_prepare(q->db, sql, &q->stmt[which], cause,
		    sizeof cause);
	}
	if (st == DB_OK)
		st = db_execute(q->db, q->stmt[which], args, nargs, cause,
		    sizeof cause);
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
	memset(job, 0, sizeof *job);
}

/* Read back the row just claimed. */
static enum db_status
read_job(struct queue *q, uint64_t id, const char *token, struct job *job,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id), DB_STR(token) };
	char *cols[6];
	enum db_status st;
	unsigned long attempts = 0, max_attempts = 0;
	int rc;

	st = run(q, Q_READ, args, 2, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[Q_READ], cols, 6, err, errlen);
	if (rc <= 0) {
		if (rc == 0)
			errf(err, errlen, "read the claimed job %llu in %s: "
			    "row vanished", (unsigned long long)id, q->table);
		return DB_ERROR;
	}
	db_done(q->stmt[Q_READ]);
	/* INT UNSIGNED columns always parse; a failure leaves 0. */
	parse_ulong(cols[4], 0, 0xffffffffUL, &attempts);
	parse_ulong(cols[5], 0, 0xffffffffUL, &max_attempts);
	job->id = id;
	job->type = cols[1];
	job->business_key = cols[2];
	job->payload = cols[3] != NULL ? cols[3] : xstrdup("{}");
	job->attempt = attempts;
	job->max_attempts = max_attempts;
	free(cols[0]);
	free(cols[4]);
	free(cols[5]);
	return DB_OK;
}

enum db_status
queue_claim(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, char *err, size_t errlen)
{
	struct db_arg args[2 + 64];
	enum db_status st;
	size_t i;

	*claimed = 0;
	if (ntypes == 0 || ntypes > 64) {
		errf(err, errlen, "claim a job: %zu types (1..64 allowed)",
		    ntypes);
		return DB_ERROR;
	}
	if (q->stmt[Q_CLAIM] != NULL && q->claim_types != ntypes) {
		mysql_stmt_close(q->stmt[Q_CLAIM]);
		q->stmt[Q_CLAIM] = NULL;
	}
	q->claim_types = ntypes;
	args[0] = DB_STR(token);
	args[1] = DB_NUM(lock_seconds);
	for (i = 0; i < ntypes; i++)
		args[2 + i] = DB_STR(types[i]);
	st = run(q, Q_CLAIM, args, (unsigned)(2 + ntypes), err, errlen);
	if (st != DB_OK || affected(q, Q_CLAIM) == 0)
		return st;
	*claimed = 1;
	return read_job(q, (uint64_t)mysql_stmt_insert_id(q->stmt[Q_CLAIM]),
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

enum db_status
queue_extend(struct queue *q, const struct job *job, const char *token,
    unsigned long lock_seconds, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(lock_seconds), DB_NUM(job->id),
	    DB_STR(token) };
	struct db_arg owner_args[] = { DB_NUM(job->id), DB_STR(token) };
	enum db_status st;
	char *col;
	int rc;

	st = fenced(q, Q_EXTEND, args, 3, owned, err, errlen);
	if (st != DB_OK || *owned)
		return st;
	/* Zero changed rows is also what an extension within the same second
	 * as the last one reports; ask whether the job is still ours. */
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
queue_enqueue(struct queue *q, const char *type, const char *key,
    const char *payload, unsigned long delay, unsigned long max_attempts,
    uint64_t *id, int *created, char **status, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(key), DB_STR(type), DB_STR(payload),
	    max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL),
	    DB_NUM(delay) };
	struct db_arg status_args[1];
	enum db_status st;
	int rc;

	*status = NULL;
	st = run(q, Q_ENQUEUE, args, 5, err, errlen);
	if (st != DB_OK)
		return st;
	*created = affected(q, Q_ENQUEUE) == 1;
	*id = (uint64_t)mysql_stmt_insert_id(q->stmt[Q_ENQUEUE]);
	if (*created) {
		*status = xstrdup("pending");
		return DB_OK;
	}
	status_args[0] = DB_NUM(*id);
	st = run(q, Q_STATUS, status_args, 1, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch(q->stmt[Q_STATUS], status, 1, err, errlen);
	if (rc <= 0) {
		if (rc == 0)
			errf(err, errlen, "read job status in %s: job %llu "
			    "vanished", q->table, (unsigned long long)*id);
		return DB_ERROR;
	}
	db_done(q->stmt[Q_STATUS]);
	return DB_OK;
}
