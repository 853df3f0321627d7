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

/* Sets the columns of a job going back to pending for an operator. */
#define REQUEUE "UPDATE %1$s SET status = 'pending', attempts = 0," \
	" next_run_at = NOW(), finished_at = NULL, locked_by = NULL," \
	" locked_until = NULL, updated_at = NOW()"

/* A DELETE takes no index hint and MariaDB plans it on idx_lock with a
 * filesort of every finished row per batch, so the batch's ids are
 * picked by a derived SELECT that can be forced onto idx_pick (PURGE_WHERE,
 * queue_sql.h). */
#define AND_TYPE { Q_F_TYPE, 0, " AND" TYPE_IS }
#define PURGE_INDEX { 0, 0, " FORCE INDEX (idx_" }, \
	{ Q_F_TYPE, Q_F_PICK, "type_pick)" }, \
	{ 0, Q_F_TYPE, "pick)" }, { Q_F_TYPE | Q_F_PICK, 0, "pick)" }

/* Q_F_TYPE: of one type only (type, type before the rest). */
const struct queue_sql queue_admin_sql[Q_COUNT] = {
	[Q_JOB_STATUS] = { "read job status",
	    Q_TEXT("SELECT status FROM %1$s WHERE id = ?"), 0, NULL, 0 },
	/* Whether a type has a due job.  (name, name) */
	[Q_TYPE_DUE] = { "look for due jobs", Q_TEXT(
	    "SELECT 1 FROM %1$s WHERE status = 'pending'"
	    " AND type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	    " AND next_run_at <= NOW() LIMIT 1"), 0, NULL, 0 },
	/* A type's jobs in processing and whether it has a due job, read
	 * without a lock.  (name, name, name, name) */
	[Q_TYPE_LOAD] = { "look at a full type", Q_TEXT(
	    "SELECT " QUEUE_RUNNING_SQL ", EXISTS (SELECT 1"
	    " FROM %1$s WHERE status = 'pending' AND type = ?"
	    " AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	    " AND next_run_at <= NOW())"), 0, NULL, 0 },
	/* Whether a type has a job, in any status.  (name, name) */
	[Q_TYPE_ANY] = { "look for a type's jobs", Q_TEXT(
	    "SELECT 1 FROM %1$s WHERE type = ?"
	    " AND CAST(type AS BINARY) = CAST(? AS BINARY) LIMIT 1"),
	    0, NULL, 0 },
	/* Q_F_FORCE: a pending job too. */
	[Q_RETRY_ID] = { "retry job", (const struct queue_piece[]){
		{ 0, 0, REQUEUE " WHERE id = ? AND status " },
		{ 0, Q_F_FORCE, "= 'failed'" },
		{ Q_F_FORCE, 0, "IN ('failed', 'pending')" }, { 0, 0, NULL } },
	    Q_F_FORCE, NULL, 0 },
	[Q_CANCEL] = { "cancel job", Q_TEXT(
	    "UPDATE %1$s SET status = 'failed',"
	    " last_error = 'cancelled by operator',"
	    " next_run_at = LEAST(next_run_at, NOW()), finished_at = NOW(),"
	    " updated_at = NOW() WHERE id = ? AND status = 'pending'"),
	    0, NULL, 0 },
	/* A running job: its runner stops it (CANCEL_ASKED); LEFT keeps
	 * another program's long holder within the column.  (id) */
	[Q_CANCEL_RUNNING] = { "cancel a running job", Q_TEXT(
	    "UPDATE %1$s SET locked_by = LEFT(CONCAT('" CANCEL_PREFIX "',"
	    " IFNULL(locked_by, '?')), 100), updated_at = NOW()"
	    " WHERE id = ? AND status = 'processing'"
	    " AND NOT " CANCEL_ASKED), 0, NULL, 0 },
	[Q_CANCEL_ASKED] = { "read a cancel request", Q_TEXT(
	    "SELECT COUNT(*) FROM %1$s WHERE id = ? AND status = 'processing'"
	    " AND " CANCEL_ASKED), 0, NULL, 0 },
	/* Batches of at most ? rows: the caller loops.  Q_F_UNCANCELLED
	 * leaves the jobs an operator cancelled. */
	[Q_REQUEUE] = { "retry failed jobs", (const struct queue_piece[]){
		{ 0, 0, REQUEUE " WHERE" }, { Q_F_TYPE, 0, TYPE_IS " AND" },
		{ 0, 0, " status = 'failed'" },
		{ Q_F_UNCANCELLED, 0, " AND NOT (last_error <=> " CANCELLED
		    ")" },
		{ 0, 0, " LIMIT ?" }, { 0, 0, NULL } },
	    Q_F_TYPE | Q_F_UNCANCELLED, NULL, 0 },
	[Q_FAILED_COUNTS] = { "count failed jobs",
	    (const struct queue_piece[]){
		{ 0, 0, "SELECT COUNT(*), COUNT(IF(last_error <=> " CANCELLED
		    ", 1, NULL)) FROM %1$s FORCE INDEX (idx_" },
		{ 0, Q_F_TYPE, "pick) WHERE" },
		{ Q_F_TYPE, 0, "type_status) WHERE" TYPE_IS " AND" },
		{ 0, 0, " status = 'failed'" }, { 0, 0, NULL } },
	    Q_F_TYPE, NULL, 0 },
	/* Q_F_TYPE walks idx_type_pick's (status, type, next_run_at) range,
	 * which holds that type's rows only, unless Q_F_PICK (a table
	 * without sql/001_type_pick.sql): idx_pick's, other types' rows
	 * read and passed over. */
	[Q_PURGE] = { "purge jobs", (const struct queue_piece[]){
		{ 0, 0, "DELETE j FROM %1$s AS j JOIN (SELECT id FROM %1$s" },
		PURGE_INDEX, { 0, 0, PURGE_WHERE }, AND_TYPE,
		{ 0, 0, " ORDER BY next_run_at, id LIMIT ?) AS d USING (id)" },
		{ 0, 0, NULL } }, Q_F_TYPE | Q_F_PICK, NULL, 0 },
	[Q_PURGE_COUNT] = { "count jobs to purge", (const struct queue_piece[]){
		{ 0, 0, "SELECT COUNT(*) FROM %1$s" }, PURGE_INDEX,
		{ 0, 0, PURGE_WHERE }, AND_TYPE, { 0, 0, NULL } },
	    Q_F_TYPE | Q_F_PICK, NULL, 0 },
};

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

enum db_status
queue_type_known(struct queue *q, const char *type, int *found, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(type), DB_STR(type) };
	char *col = NULL;
	enum db_status st;

	st = queue_stmt_one(q, Q_TYPE_ANY, args, 2, &col, 1, found, err,
	    errlen);
	free(col);
	return st;
}

/* Run a change of one job by id; *changed says whether it changed. */
static enum db_status
change_one(struct queue *q, unsigned which, uint64_t id, int *changed,
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
	return change_one(q, Q_RETRY_ID | (force ? Q_F_FORCE : 0), id,
	    changed, err, errlen);
}

enum db_status
queue_cancel_job(struct queue *q, uint64_t id, int *changed, char *err,
    size_t errlen)
{
	return change_one(q, Q_CANCEL, id, changed, err, errlen);
}

enum db_status
queue_cancel_running(struct queue *q, uint64_t id, int *changed,
    char *err, size_t errlen)
{
	return change_one(q, Q_CANCEL_RUNNING, id, changed, err, errlen);
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
numbers(struct queue *q, unsigned which, const struct db_arg *args,
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

	st = numbers(q, Q_FAILED_COUNTS | (scope->type != NULL ? Q_F_TYPE : 0),
	    args, add_type(args, 0, scope), n, 2, err, errlen);
	*failed = n[0];
	*cancelled = n[1];
	return st;
}

enum db_status
queue_requeue_failed(struct queue *q, const struct queue_scope *scope,
    unsigned long limit, uint64_t *changed, char *err, size_t errlen)
{
	unsigned w = Q_REQUEUE | (scope->type != NULL ? Q_F_TYPE : 0) |
	    (scope->include_cancelled ? 0 : Q_F_UNCANCELLED);
	struct db_arg args[3];
	unsigned n = add_type(args, 0, scope);
	enum db_status st;

	args[n++] = DB_NUM(limit);
	st = queue_stmt_run(q, w, args, n, err, errlen);
	*changed = st == DB_OK ? queue_stmt_changed(q, w) : 0;
	return st;
}

unsigned
queue_purge_flags(struct queue *q, const struct queue_scope *scope)
{
	if (scope->type == NULL)
		return 0;
	return Q_F_TYPE | (queue_type_index(q) ? 0 : Q_F_PICK);
}

unsigned
queue_purge_args(struct db_arg *args, const struct queue_scope *scope)
{
	unsigned i;

	args[0] = DB_STR(scope->status);
	for (i = 1; i <= 4; i++)	/* PURGE_CUTOFF, twice */
		args[i] = DB_NUM(scope->older_than);
	return add_type(args, 5, scope);
}

enum db_status
queue_purge(struct queue *q, const struct queue_scope *scope,
    unsigned long limit, uint64_t *deleted, char *err, size_t errlen)
{
	unsigned w = Q_PURGE | queue_purge_flags(q, scope);
	struct db_arg args[QUEUE_PURGE_ARGS + 1];
	unsigned n = queue_purge_args(args, scope);
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
	struct db_arg args[QUEUE_PURGE_ARGS];

	return numbers(q, Q_PURGE_COUNT | queue_purge_flags(q, scope),
	    args, queue_purge_args(args, scope), count, 1, err, errlen);
}

enum db_status
queue_cancel_asked(struct queue *q, uint64_t id, int *asked, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id) };
	uint64_t n = 0;
	enum db_status st;

	st = numbers(q, Q_CANCEL_ASKED, args, 1, &n, 1, err, errlen);
	*asked = st == DB_OK && n > 0;
	return st;
}

/* queue_purge of every type but except[0..n-1] (byte for byte), at most
 * limit rows: one statement made for the list. */
enum db_status
queue_purge_except(struct queue *q, const struct queue_scope *scope,
    const char *const *except, size_t n, unsigned long limit,
    uint64_t *deleted, char *err, size_t errlen)
{
	static const char head[] = "DELETE j FROM %1$s AS j JOIN (SELECT id"
	    " FROM %1$s FORCE INDEX (idx_pick)" PURGE_WHERE
	    " AND CAST(type AS BINARY) NOT IN (",
	    tail[] = ") ORDER BY next_run_at, id LIMIT ?) AS d USING (id)";
	struct queue_stmts *once;
	struct db_arg *args = xcalloc(n + QUEUE_PURGE_ARGS + 1, sizeof *args);
	char *sql = queue_list_text(head, n, tail);
	size_t i;
	unsigned k = queue_purge_args(args, &(struct queue_scope){ NULL,
	    scope->status, scope->older_than, 0 });
	enum db_status st;

	for (i = 0; i < n; i++)
		args[k++] = DB_STR(except[i]);
	args[k++] = DB_NUM(limit);
	once = queue_stmts_once(q, sql, "purge jobs", QUEUE_JOBS_TABLE);
	st = queue_stmts_run(once, 0, args, k, err, errlen);
	*deleted = st == DB_OK ? queue_stmts_changed(once, 0) : 0;
	queue_stmts_close(once);
	free(sql);
	free(args);
	return st;
}
