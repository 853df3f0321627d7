/*
 * queue_admin.c - the changes operators make to the job table: retry,
 * cancel, bulk requeue and purge, as named operations; and the reads of
 * one job's status and of a type's load (flow control's look).
 *
 * Each statement states the status it expects in its WHERE clause, so a
 * job that a runner claimed in the meantime is left alone; the changed
 * row count says what happened.  Bulk changes take a limit: one call is
 * one statement and one short transaction, and the caller, who loops,
 * owns the batch size.
 */
#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"
#include "util.h"

enum db_status
queue_job_status(struct queue *q, uint64_t id, char **status, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id) };
	int found;

	*status = NULL;
	return queue_stmt_one(q, Q_JOB_STATUS, args, 1, status, 1, &found, err,
	    errlen);
}

enum db_status
queue_key_spelling(struct queue *q, const char *key, char **stored,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(key) };
	struct queue_stmts *once;
	enum db_status st;
	int found;

	*stored = NULL;
	once = queue_stmts_once(q, "SELECT business_key FROM %1$s"
	    " WHERE business_key = ? LIMIT 1", "look up a key",
	    QUEUE_JOBS_TABLE);
	st = queue_stmts_one(once, 0, args, 1, stored, 1, &found, err,
	    errlen);
	queue_stmts_close(once);
	return st;
}

enum db_status
queue_type_due(struct queue *q, const char *type, int *due, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(type), DB_STR(type) };
	char *col = NULL;
	enum db_status st;

	st = queue_stmt_one(q, Q_TYPE_DUE, args, 2, &col, 1, due, err, errlen);
	free(col);
	return st;
}

enum db_status
queue_type_load(struct queue *q, const char *type, uint64_t *running,
    int *due, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(type), DB_STR(type), DB_STR(type),
	    DB_STR(type) };
	char *cols[2] = { NULL };
	enum db_status st;
	int found;

	st = queue_stmt_one(q, Q_TYPE_LOAD, args, 4, cols, 2, &found, err,
	    errlen);
	*running = st == DB_OK && found ? queue_number(cols[0]) : 0;
	*due = st == DB_OK && found && queue_number(cols[1]) != 0;
	db_free_cols(cols, 2);
	return st;
}

/* Run a change of one job by id; *changed says whether it changed. */
static enum db_status
change_one(struct queue *q, enum queue_stmt which, uint64_t id, int *changed,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id) };
	enum db_status st;

	st = queue_stmt_run(q, which, args, 1, err, errlen);
	*changed = st == DB_OK && queue_stmt_changed(q, which) == 1;
	return st;
}

enum db_status
queue_retry_job(struct queue *q, uint64_t id, int force, int *changed,
    char *err, size_t errlen)
{
	return change_one(q, force ? Q_RETRY_ID_FORCE : Q_RETRY_ID, id,
	    changed, err, errlen);
}

enum db_status
queue_cancel_job(struct queue *q, uint64_t id, int *changed, char *err,
    size_t errlen)
{
	return change_one(q, Q_CANCEL, id, changed, err, errlen);
}

/* The type of scope, twice (the index's compare and the exact one), into
 * args at n; returns the new count. */
static unsigned
add_type(struct db_arg *args, unsigned n, const struct queue_scope *scope)
{
	if (scope->type != NULL) {
		args[n++] = DB_STR(scope->type);
		args[n++] = DB_STR(scope->type);
	}
	return n;
}

/* A select of one row of unsigned numbers. */
static enum db_status
numbers(struct queue *q, enum queue_stmt which, const struct db_arg *args,
    unsigned nargs, uint64_t *out, unsigned nout, char *err, size_t errlen)
{
	char *cols[2] = { NULL, NULL };
	enum db_status st;
	unsigned i;
	int found;

	st = queue_stmt_one(q, which, args, nargs, cols, nout, &found, err,
	    errlen);
	for (i = 0; i < nout; i++) {
		out[i] = queue_number(cols[i]);
		free(cols[i]);
	}
	return st;
}

enum db_status
queue_count_failed(struct queue *q, const struct queue_scope *scope,
    uint64_t *failed, uint64_t *cancelled, char *err, size_t errlen)
{
	struct db_arg args[2];
	uint64_t n[2] = { 0, 0 };
	enum db_status st;

	st = numbers(q, scope->type != NULL ? Q_FAILED_COUNTS_TYPE :
	    Q_FAILED_COUNTS, args, add_type(args, 0, scope), n, 2, err,
	    errlen);
	*failed = n[0];
	*cancelled = n[1];
	return st;
}

enum db_status
queue_requeue_failed(struct queue *q, const struct queue_scope *scope,
    unsigned long limit, uint64_t *changed, char *err, size_t errlen)
{
	static const enum queue_stmt which[2][2] = {
		{ Q_REQUEUE_UNCANCELLED, Q_REQUEUE_UNCANCELLED_TYPE },
		{ Q_REQUEUE, Q_REQUEUE_TYPE },
	};
	enum queue_stmt w = which[scope->include_cancelled != 0]
	    [scope->type != NULL];
	struct db_arg args[3];
	unsigned n = add_type(args, 0, scope);
	enum db_status st;

	args[n++] = DB_NUM(limit);
	st = queue_stmt_run(q, w, args, n, err, errlen);
	*changed = st == DB_OK ? queue_stmt_changed(q, w) : 0;
	return st;
}

/* (status, age, age, [type, type]) of a purge. */
static unsigned
purge_args(struct db_arg *args, const struct queue_scope *scope)
{
	args[0] = DB_STR(scope->status);
	args[1] = DB_NUM(scope->older_than);
	args[2] = DB_NUM(scope->older_than);
	return add_type(args, 3, scope);
}

enum db_status
queue_purge(struct queue *q, const struct queue_scope *scope,
    unsigned long limit, uint64_t *deleted, char *err, size_t errlen)
{
	enum queue_stmt w = scope->type != NULL ? Q_PURGE_TYPE : Q_PURGE;
	struct db_arg args[6];
	unsigned n = purge_args(args, scope);
	enum db_status st;

	args[n++] = DB_NUM(limit);
	st = queue_stmt_run(q, w, args, n, err, errlen);
	*deleted = st == DB_OK ? queue_stmt_changed(q, w) : 0;
	return st;
}

enum db_status
queue_count_purgeable(struct queue *q, const struct queue_scope *scope,
    uint64_t *count, char *err, size_t errlen)
{
	struct db_arg args[5];

	return numbers(q, scope->type != NULL ? Q_PURGE_COUNT_TYPE :
	    Q_PURGE_COUNT, args, purge_args(args, scope), count, 1, err,
	    errlen);
}
