/*
 * queue_archive.c - retention's statements beside purge's: the move of
 * finished rows into [run] archive_table (sql/012_archive.sql) instead of
 * deleting them, and the bounded count of the rows past a rule.
 *
 * One transaction a batch, through queue_trx: the batch's ids are read
 * with FOR UPDATE, oldest first, on the range purge deletes from; the
 * rows of exactly those ids are inserted into the archive, then deleted.
 * The locks hold the rows from the read to the COMMIT, so both
 * statements act on the same rows, and each must change all of them or
 * the batch is rolled back.  A second runner keeping the table at the
 * same time waits for the first's rows and then reads past them (a
 * locking read sees the latest committed rows, under READ COMMITTED as
 * under REPEATABLE READ): no row is archived twice.  An insert that
 * fails (no table, no grant, a trigger's error), or that made the server
 * warn (a value cut to fit under a non-strict sql_mode), rolls the batch
 * back: no row is deleted without being archived whole.
 *
 * The columns are named, not "*": the archive may order them otherwise
 * (the job table's migrations add theirs at its end).  sql/002's,
 * sql/009's and sql/013's are copied when the job table has them, and
 * then the archive must have them too: an archive that lacks one stops
 * retention with "Unknown column" (and "jobrun check" says so) rather
 * than losing a checkpoint, a deadline or a priority.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "queue_sql.h"
#include "util.h"

#define ARCHIVE_MIGRATION "sql/012_archive.sql"

#define BASE_COLUMNS "id, business_key, type, payload, status, attempts," \
	" max_attempts, next_run_at, locked_by, locked_until, last_error," \
	" created_at, updated_at, finished_at"
/* ... and the migrations' that jobrun copies */
#define COLUMNS_MAX (sizeof BASE_COLUMNS + 64)

/* One rule's moves: what the body of a transaction needs. */
struct move {
	struct queue *q;
	const char *name;	/* the archive, as configured */
	char quoted[2 * CFG_NAME_MAX + 8];
	char columns[COLUMNS_MAX];
	char *pick;		/* the batch's locking read */
	struct db_arg *args;	/* and its arguments */
	unsigned nargs;
	unsigned long limit;
	uint64_t *ids;
	uint64_t moved;		/* by the last run of the body */
};

/* The read of a batch (then tail): purge's range (queue_admin.c), of one
 * type, or of every type but n others. */
static char *
pick_text(struct queue *q, const struct queue_scope *scope, size_t n,
    const char *head, const char *tail)
{
	unsigned f = queue_purge_flags(q, scope);
	const char *index = (f & Q_F_TYPE) != 0 && (f & Q_F_PICK) == 0 ?
	    "idx_type_pick" : "idx_pick";
	char start[512], end[256];

	snprintf(start, sizeof start, "%s FROM %%1$s FORCE INDEX (%s)"
	    PURGE_WHERE "%s", head, index, scope->type != NULL ?
	    " AND" TYPE_IS : n > 0 ? " AND CAST(type AS BINARY) NOT IN (" :
	    "");
	snprintf(end, sizeof end, "%s%s", n > 0 ? ")" : "", tail);
	return queue_list_text(start, n, end);
}

/* The batch's ids into m->ids; how many (or -1, err set). */
static long
pick_batch(struct move *m, char *err, size_t errlen)
{
	struct queue_stmts *s = queue_stmts_once(m->q, m->pick,
	    "pick jobs to archive", QUEUE_JOBS_TABLE);
	char *col[1] = { NULL };
	long n = 0;
	int rc = 0;

	if (queue_stmts_run(s, 0, m->args, m->nargs, err, errlen) != DB_OK)
		n = -1;
	while (n >= 0 && (rc = queue_stmts_fetch(s, 0, col, 1, err,
	    errlen)) > 0) {
		if ((unsigned long)n < m->limit)
			m->ids[n++] = queue_number(col[0]);
		db_free_cols(col, 1);
	}
	if (rc < 0)
		n = -1;
	queue_stmts_close(s);
	return n;
}

/* A move's statements: the insert, the delete (the probe's: the
 * insert). */
enum move_stmt { M_INSERT, M_DELETE, M_COUNT };
static const char *const move_purposes[M_COUNT] = {
	[M_INSERT] = "archive jobs", [M_DELETE] = "delete archived jobs",
};
static const char *const move_tables[M_COUNT] = {
	[M_INSERT] = QUEUE_OTHER_TABLE, [M_DELETE] = QUEUE_JOBS_TABLE,
};

/* Run the archive's insert: one that made the server warn failed,
 * whatever the sql_mode.  A strict mode refuses a value too long for
 * its column; a non-strict one cuts it and warns, and the move would
 * then delete a job it did not keep whole.  The count only: MySQL does
 * not prepare SHOW WARNINGS. */
static enum db_status
insert_whole(struct queue_stmts *s, const struct db_arg *args,
    unsigned nargs, const char *archive, char *err, size_t errlen)
{
	enum db_status st;
	unsigned warnings;

	st = queue_stmts_run(s, M_INSERT, args, nargs, err, errlen);
	if (st != DB_OK || (warnings = queue_stmts_warnings(s)) == 0)
		return st;
	errf(err, errlen, "archive jobs in %s: the server warned %u time(s) "
	    "(a value cut to fit its column, a NOT NULL column left empty, "
	    "under a non-strict sql_mode?), so the rows would not be kept "
	    "as they are", archive, warnings);
	return DB_ERROR;
}

/* Whether statement which changed all n rows (err set when not). */
static enum db_status
all_changed(struct move *m, struct queue_stmts *s, size_t which, size_t n,
    char *err, size_t errlen)
{
	uint64_t changed = queue_stmts_changed(s, which);

	if (changed == n)
		return DB_OK;
	errf(err, errlen, "%s in %s: %llu of %zu rows", move_purposes[which],
	    which == M_INSERT ? m->name : queue_name(m->q),
	    (unsigned long long)changed, n);
	return DB_ERROR;
}

/* Insert and delete the n picked rows; each statement must change all. */
static enum db_status
move_rows(struct move *m, size_t n, char *err, size_t errlen)
{
	char head[512];
	const char *texts[M_COUNT];
	struct db_arg *args = xcalloc(n, sizeof *args);
	struct queue_stmts *s;
	enum db_status st;
	size_t i;

	snprintf(head, sizeof head, "INSERT INTO %%2$s (%s) SELECT %s FROM"
	    " %%1$s WHERE id IN (", m->columns, m->columns);
	texts[M_INSERT] = queue_list_text(head, n, ")");
	texts[M_DELETE] = queue_list_text("DELETE FROM %1$s WHERE id IN (",
	    n, ")");
	for (i = 0; i < n; i++)
		args[i] = DB_NUM(m->ids[i]);
	s = queue_stmts_open(m->q, texts, move_purposes, move_tables, M_COUNT,
	    m->quoted);
	st = insert_whole(s, args, (unsigned)n, m->quoted, err, errlen);
	if (queue_unseen(m->q, st))
		errf(err + strlen(err), errlen - strlen(err),
		    " (" ARCHIVE_MIGRATION " makes the table)");
	if (st == DB_OK)
		st = all_changed(m, s, M_INSERT, n, err, errlen);
	if (st == DB_OK)
		st = queue_stmts_run(s, M_DELETE, args, (unsigned)n, err,
		    errlen);
	if (st == DB_OK)
		st = all_changed(m, s, M_DELETE, n, err, errlen);
	queue_stmts_close(s);
	free((char *)texts[M_INSERT]);
	free((char *)texts[M_DELETE]);
	free(args);
	return st;
}

static enum db_status
move_batch(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct move *m = arg;
	long n;
	enum db_status st;

	(void)w;	/* run again after a lost COMMIT: it picks again */
	m->moved = 0;
	if ((n = pick_batch(m, err, errlen)) <= 0)
		return n < 0 ? DB_ERROR : DB_OK;
	st = move_rows(m, (size_t)n, err, errlen);
	if (st == DB_OK)
		m->moved = (uint64_t)n;
	return st;
}

/* The arguments of pick_text's read, then limit (malloc'ed). */
static struct db_arg *
range_args(const struct queue_scope *scope, const char *const *except,
    size_t n, unsigned long limit, unsigned *nargs)
{
	struct db_arg *args = xcalloc(n + QUEUE_PURGE_ARGS + 1, sizeof *args);
	size_t i;

	*nargs = queue_purge_args(args, scope);
	for (i = 0; scope->type == NULL && i < n; i++)
		args[(*nargs)++] = DB_STR(except[i]);
	args[(*nargs)++] = DB_NUM(limit);
	return args;
}

/* Whether the job table has sql/013's priority column (probed once):
 * the column alone, not the claim's indexes, which an application's
 * own priorities need no less. */
static int
has_priority_column(struct queue *q)
{
	struct queue_stmts *s;
	char cause[512];

	if (!q->caps.priority_column_probed) {
		s = queue_stmts_once(q, "SELECT priority FROM %1$s WHERE FALSE",
		    "read the job table's priority", QUEUE_JOBS_TABLE);
		q->caps.priority_column = queue_stmts_prepare(s, 0, cause,
		    sizeof cause) == DB_OK;
		q->caps.priority_column_probed = 1;
		queue_stmts_close(s);
	}
	return q->caps.priority_column;
}

/* The archive's columns into buf: the job table's that jobrun knows. */
static void
archive_columns(struct queue *q, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", BASE_COLUMNS,
	    queue_resumable(q) ? ", checkpoint, snoozes" : "",
	    queue_has_deadline(q) ? ", deadline" : "",
	    has_priority_column(q) ? ", priority" : "");
}

enum db_status
queue_archive(struct queue *q, const char *archive,
    const struct queue_scope *scope, const char *const *except, size_t n,
    unsigned long limit, uint64_t *moved, char *err, size_t errlen)
{
	struct move m = { .q = q, .name = archive, .limit = limit };
	struct queue_trx t = { move_batch, NULL, NULL, &m,
	    QUEUE_CLAIM_RETRIES + 1, 1, 0 };
	enum db_status st;

	*moved = 0;
	db_quote_ident(archive, m.quoted, sizeof m.quoted);
	archive_columns(q, m.columns, sizeof m.columns);
	m.pick = pick_text(q, scope, scope->type != NULL ? 0 : n, "SELECT id",
	    " ORDER BY next_run_at, id LIMIT ? FOR UPDATE");
	m.args = range_args(scope, except, n, limit, &m.nargs);
	m.ids = xcalloc(limit, sizeof *m.ids);
	st = queue_trx(q, &t, err, errlen);
	if (st == DB_OK)
		*moved = m.moved;
	free(m.ids);
	free(m.args);
	free(m.pick);
	return st;
}

/* Whether archive is the job table itself (*same), as the server tells
 * tables apart: its insert would run, and every move fail on the ids. */
static enum db_status
is_job_table(struct queue *q, const char *archive, int *same, char *err,
    size_t errlen)
{
	struct db_arg args[4] = { DB_STR(archive), DB_STR(archive),
	    QUEUE_TABLE_ID_ARGS(q) };
	struct queue_stmts *s = queue_stmts_once(q, "SELECT "
	    QUEUE_TABLE_ID " = " QUEUE_TABLE_ID, "compare archive_table",
	    QUEUE_JOBS_TABLE);
	char *col = NULL;
	enum db_status st;
	int found = 0;

	st = queue_stmts_one(s, 0, args, 4, &col, 1, &found, err, errlen);
	*same = st == DB_OK && found && col != NULL && strcmp(col, "1") == 0;
	free(col);
	queue_stmts_close(s);
	return st;
}

/* The move's insert of no row, executed: the server resolves the
 * columns, and finds one it cannot fill, at EXECUTE, not at PREPARE. */
enum db_status
queue_archive_probe(struct queue *q, const char *archive, char *err,
    size_t errlen)
{
	char quoted[2 * CFG_NAME_MAX + 8], text[1024];
	const char *texts[1] = { text };
	char columns[COLUMNS_MAX];
	struct queue_stmts *s;
	enum db_status st;
	int same = 0;

	st = is_job_table(q, archive, &same, err, errlen);
	if (st == DB_OK && same) {
		errf(err, errlen, "it is the job table itself");
		return DB_SCHEMA;
	}
	if (st != DB_OK)
		return st;
	archive_columns(q, columns, sizeof columns);
	db_quote_ident(archive, quoted, sizeof quoted);
	snprintf(text, sizeof text, "INSERT INTO %%2$s (%s) SELECT %s FROM"
	    " %%1$s WHERE FALSE", columns, columns);
	s = queue_stmts_open(q, texts, move_purposes, move_tables, 1, quoted);
	st = insert_whole(s, NULL, 0, quoted, err, errlen);
	queue_stmts_close(s);
	return st;
}

enum db_status
queue_count_past(struct queue *q, const struct queue_scope *scope,
    const char *const *except, size_t n, unsigned long cap,
    uint64_t *count, char *err, size_t errlen)
{
	size_t k = scope->type != NULL ? 0 : n;
	char *sql = pick_text(q, scope, k, "SELECT COUNT(*) FROM (SELECT 1",
	    " LIMIT ?) AS p");
	unsigned nargs;
	struct db_arg *args = range_args(scope, except, k, cap, &nargs);
	struct queue_stmts *s = queue_stmts_once(q, sql,
	    "count jobs past their keep", QUEUE_JOBS_TABLE);
	char *col[1] = { NULL };
	enum db_status st;
	int found;

	*count = 0;
	st = queue_stmts_one(s, 0, args, nargs, col, 1, &found, err, errlen);
	if (st == DB_OK && found)
		*count = queue_number(col[0]);
	free(col[0]);
	queue_stmts_close(s);
	free(args);
	free(sql);
	return st;
}
