/*
 * queue_info.c - what people read from the job table: the backlog by
 * type, lists of jobs, one job whole, the table's shape and the server's
 * settings, and the claim's plan.
 *
 * The backlog must stay cheap on a table with millions of finished rows,
 * so it never counts them: the types come from a loose scan of
 * idx_type_status (one jump per type), the counts of pending, processing
 * and failed jobs from ranges of that index (their number is the backlog,
 * not the history), the lag from the due range of idx_pick, expired locks
 * from idx_lock, and the number of success rows is the optimizer's
 * estimate.  Types compare byte for byte: ORDER_SYNC is not order_sync.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"
#include "util.h"

/* EXPLAIN in its table format, named: MySQL's default since 8.3 may be a
 * tree (explain_format), which has no "key" or "rows" column. */
#define EXPLAIN_TABLE "EXPLAIN FORMAT=TRADITIONAL"

#define LIST "SELECT id, type, business_key, status, attempts," \
	" max_attempts, next_run_at, updated_at, last_error," \
	" TIMESTAMPDIFF(SECOND, NOW(), next_run_at) FROM %1$s WHERE id < ?"

#define SHOW "SELECT id, business_key, type, payload, status, attempts," \
	" max_attempts, next_run_at, locked_by, locked_until, last_error," \
	" created_at, updated_at, finished_at, JSON_VALID(payload)," \
	" TIMESTAMPDIFF(SECOND, NOW(), next_run_at)"

const struct queue_sql queue_info_sql[Q_COUNT] = {
	/* A loose index scan: one jump per type, not a row per job.  Types
	 * that differ only in case or accents come back as one. */
	[Q_TYPES] = { "list job types", Q_TEXT(
	    "SELECT DISTINCT type FROM %1$s FORCE INDEX (idx_type_status)"),
	    0, NULL, 0 },
	/* The exact types of those, and their counts. */
	[Q_TYPE_COUNTS] = { "count jobs", Q_TEXT(
	    "SELECT CAST(type AS BINARY), status, COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_type_status)"
	    " WHERE type = ? AND status IN ('pending', 'processing', 'failed')"
	    " GROUP BY 1, 2"), 0, NULL, 0 },
	/* Cancelled jobs are failed ones with the operator's last_error:
	 * this reads the type's failed rows, not its others. */
	[Q_CANCELLED_COUNT] = { "count cancelled jobs", Q_TEXT(
	    "SELECT COUNT(*) FROM %1$s FORCE INDEX (idx_type_status)"
	    " WHERE" TYPE_IS " AND status = 'failed' AND last_error <=> "
	    CANCELLED), 0, NULL, 0 },
	/* Success rows of the exact type (type, type) counted up to ? index
	 * entries: beyond, the optimizer's estimate. */
	[Q_SUCCESS_UPTO] = { "count finished jobs", Q_TEXT(
	    "SELECT COUNT(*) FROM (SELECT 1 FROM %1$s"
	    " FORCE INDEX (idx_type_status)"
	    " WHERE" TYPE_IS " AND status = 'success' LIMIT ?) AS s"),
	    0, NULL, 0 },
	/* Counting success rows exactly reads every one; the optimizer's
	 * estimate from the index is close enough to see growth. */
	[Q_SUCCESS_ESTIMATE] = { "estimate finished jobs", Q_TEXT(
	    EXPLAIN_TABLE " SELECT id FROM %1$s"
	    " FORCE INDEX (idx_type_status)"
	    " WHERE" TYPE_IS " AND status = 'success'"), 0, NULL, 0 },
	[Q_LAG] = { "measure lag", Q_TEXT(
	    "SELECT CAST(type AS BINARY), COUNT(*),"
	    " TIMESTAMPDIFF(SECOND, MIN(next_run_at), NOW())"
	    " FROM %1$s FORCE INDEX (idx_pick)"
	    " WHERE status = 'pending' AND next_run_at <= NOW() GROUP BY 1"),
	    0, NULL, 0 },
	[Q_EXPIRED] = { "count expired locks", Q_TEXT(
	    "SELECT CAST(type AS BINARY), COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_lock)"
	    " WHERE status = 'processing' AND " LOCK_EXPIRED " GROUP BY 1"),
	    0, NULL, 0 },
	/* (before id, [status,] [type, type,] limit) */
	[Q_LIST] = { "list jobs", (const struct queue_piece[]){
		{ 0, 0, LIST }, { Q_F_STATUS, 0, " AND status = ?" },
		{ Q_F_TYPE, 0, " AND" TYPE_IS },
		{ 0, 0, " ORDER BY id DESC LIMIT ?" }, { 0, 0, NULL } },
	    Q_F_STATUS | Q_F_TYPE, NULL, 0 },
	/* By id, or Q_F_KEY by business key (key, key). */
	[Q_SHOW] = { "show job", (const struct queue_piece[]){
		{ 0, 0, SHOW }, { Q_F_DEADLINE, 0, ", deadline" },
		{ 0, 0, " FROM %1$s WHERE " },
		{ 0, Q_F_KEY, "id = ?" },
		{ Q_F_KEY, 0, "business_key = ?"
		    " AND CAST(business_key AS BINARY) = CAST(? AS BINARY)" },
		{ 0, 0, NULL } }, Q_F_KEY | Q_F_DEADLINE, NULL, 0 },
	[Q_COLUMNS] = { "read the table's columns", Q_TEXT(
	    "SELECT COLUMN_NAME, IS_NULLABLE FROM information_schema.COLUMNS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"),
	    0, NULL, 0 },
	/* COLUMN_DEFAULT is SQL NULL for "no default" (an explicit DEFAULT
	 * NULL reads 'NULL'); generated and auto-increment columns fill
	 * themselves.  The list is the columns the inserts name. */
	[Q_UNFILLED_COLUMNS] = { "read the table's columns", Q_TEXT(
	    "SELECT COLUMN_NAME FROM information_schema.COLUMNS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
	    " AND IS_NULLABLE = 'NO' AND COLUMN_DEFAULT IS NULL"
	    " AND EXTRA NOT LIKE '%%auto_increment%%'"
	    " AND EXTRA NOT LIKE '%%GENERATED%%'"
	    " AND COLUMN_NAME NOT IN ('business_key', 'type', 'payload',"
	    " 'status', 'attempts', 'max_attempts', 'next_run_at',"
	    " 'created_at', 'updated_at') ORDER BY ORDINAL_POSITION"),
	    0, NULL, 0 },
	[Q_INDEXES] = { "read the table's indexes", Q_TEXT(
	    "SELECT INDEX_NAME, MIN(NON_UNIQUE),"
	    " GROUP_CONCAT(COLUMN_NAME, IF(COLLATION = 'D', ' DESC', '')"
	    " ORDER BY SEQ_IN_INDEX)"
	    " FROM information_schema.STATISTICS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
	    " GROUP BY INDEX_NAME"), 0, NULL, 0 },
	/* The foreign keys of table ?'s job_id to the job table ?'s id
	 * that delete its rows with their job's (sql/010_attempts.sql).
	 * MariaDB shows an account without more than SELECT and INSERT on
	 * the table no row of REFERENTIAL_CONSTRAINTS, which has the rule,
	 * but the key's in KEY_COLUMN_USAGE: a rule not shown counts. */
	[Q_CASCADES] = { "read the table's foreign keys", Q_TEXT(
	    "SELECT COUNT(*) FROM information_schema.KEY_COLUMN_USAGE k"
	    " LEFT JOIN information_schema.REFERENTIAL_CONSTRAINTS r"
	    " ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA"
	    " AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME"
	    " AND r.TABLE_NAME = k.TABLE_NAME"
	    " WHERE k.TABLE_SCHEMA = DATABASE() AND k.TABLE_NAME = ?"
	    " AND k.COLUMN_NAME = 'job_id' AND k.REFERENCED_TABLE_NAME = ?"
	    " AND k.REFERENCED_COLUMN_NAME = 'id'"
	    " AND (r.DELETE_RULE IS NULL OR r.DELETE_RULE = 'CASCADE')"),
	    0, NULL, 0 },
	[Q_VERSION] = { "read the server version",
	    Q_TEXT("SELECT VERSION()"), 0, NULL, 0 },
	[Q_SETTINGS] = { "read server settings", Q_TEXT(
	    "SHOW VARIABLES WHERE Variable_name IN ('innodb_lock_wait_timeout',"
	    " 'wait_timeout', 'time_zone', 'system_time_zone',"
	    " 'transaction_isolation', 'tx_isolation', 'max_allowed_packet',"
	    " 'innodb_flush_log_at_trx_commit', 'wsrep_on', 'log_bin',"
	    " 'binlog_format')"), 0, NULL, 0 },
	/* Pending jobs made "in the future" by the server's clock: an
	 * application that writes its own times in another time zone (its
	 * jobs then wait, or run, hours off).  The rows not yet due, read
	 * with their created_at: for check, once. */
	[Q_FUTURE_CREATED] = { "look for jobs created in the future", Q_TEXT(
	    "SELECT COUNT(*), CAST(MAX(TIMESTAMPDIFF(SECOND, NOW(),"
	    " created_at)) AS SIGNED) FROM %1$s FORCE INDEX (idx_pick)"
	    " WHERE status = 'pending' AND next_run_at > NOW()"
	    " AND created_at > NOW() + INTERVAL 60 SECOND"), 0, NULL, 0 },
	/* The account the server took the login for: what a GRANT names. */
	[Q_ACCOUNT] = { "read the account's name",
	    Q_TEXT("SELECT CURRENT_USER()"), 0, NULL, 0 },
};

enum db_status
queue_future_created(struct queue *q, uint64_t *jobs, int64_t *ahead_s,
    char *err, size_t errlen)
{
	char *cols[2] = { NULL, NULL };
	enum db_status st;
	int found = 0;

	*jobs = 0;
	*ahead_s = 0;
	st = queue_stmt_one(q, Q_FUTURE_CREATED, NULL, 0, cols, 2, &found, err,
	    errlen);
	if (st == DB_OK && found) {
		*jobs = queue_number(cols[0]);
		if (cols[1] != NULL)
			queue_int64(cols[1], ahead_s);
	}
	free(cols[0]);
	free(cols[1]);
	return st;
}

const char *const queue_column_names[QC_COUNT] = {
	"id", "business_key", "type", "payload", "status", "attempts",
	"max_attempts", "next_run_at", "locked_by", "locked_until",
	"last_error", "created_at", "updated_at", "finished_at",
};

/* --- the backlog -------------------------------------------------------- */

/* The row of type (len bytes, compared byte for byte: "ab\0c" is not
 * "ab"), made when there is none yet. */
static struct queue_backlog_row *
backlog_row(struct queue_backlog *b, const char *type, size_t len)
{
	struct queue_backlog_row *r;
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->rows[i].type_len == len &&
		    memcmp(b->rows[i].type, type, len) == 0)
			return &b->rows[i];
	b->rows = xrealloc(b->rows, (b->n + 1) * sizeof *b->rows);
	r = memset(&b->rows[b->n], 0, sizeof b->rows[b->n]);
	r->type = xstrndup(type, len);	/* NUL bytes too */
	r->type_len = len;
	r->lag = -1;
	b->n++;
	return r;
}

/* One of the groups Q_TYPES gives (types the collation takes as equal),
 * each the bytes of one of them. */
struct groups {
	char **names;
	size_t *lens;
	size_t n;
};

static int
on_group(void *arg, char **cols, const size_t *lens)
{
	struct groups *g = arg;

	if (cols[0] == NULL)
		return 0;
	g->names = xrealloc(g->names, (g->n + 1) * sizeof *g->names);
	g->lens = xrealloc(g->lens, (g->n + 1) * sizeof *g->lens);
	g->names[g->n] = xmalloc(lens[0] + 1);
	memcpy(g->names[g->n], cols[0], lens[0]);
	g->names[g->n][lens[0]] = '\0';
	g->lens[g->n++] = lens[0];
	return 0;
}

/* A count of one exact type, status. */
static int
on_type_count(void *arg, char **cols, const size_t *lens)
{
	struct queue_backlog_row *t;
	unsigned long n = queue_number(cols[2]);

	if (cols[0] == NULL || cols[1] == NULL)
		return 0;
	t = backlog_row(arg, cols[0], lens[0]);
	if (strcmp(cols[1], "pending") == 0)
		t->pending = n;
	else if (strcmp(cols[1], "processing") == 0)
		t->processing = n;
	else if (strcmp(cols[1], "failed") == 0)
		t->failed = n;
	return 0;
}

static int
on_lag(void *arg, char **cols, const size_t *lens)
{
	struct queue_backlog_row *t;

	if (cols[0] == NULL)
		return 0;
	t = backlog_row(arg, cols[0], lens[0]);
	t->due = queue_number(cols[1]);
	t->lag = (long)queue_number(cols[2]);
	return 0;
}

static int
on_expired(void *arg, char **cols, const size_t *lens)
{
	if (cols[0] != NULL)
		backlog_row(arg, cols[0], lens[0])->expired =
		    queue_number(cols[1]);
	return 0;
}

/* The position of column name in stmt's result, or -1. */
static int
column_named(MYSQL_STMT *stmt, const char *name)
{
	MYSQL_RES *meta = mysql_stmt_result_metadata(stmt);
	MYSQL_FIELD *f;
	unsigned i, n;
	int at = -1;

	if (meta == NULL)
		return -1;
	f = mysql_fetch_fields(meta);
	n = mysql_num_fields(meta);
	for (i = 0; i < n && at < 0; i++)
		if (strcmp(f[i].name, name) == 0)
			at = (int)i;
	mysql_free_result(meta);
	return at;
}

/* The optimizer's estimate of type's success rows: EXPLAIN's "rows",
 * found by name (MySQL's EXPLAIN has more columns than MariaDB's). */
static enum db_status
success_estimate(struct queue *q, const struct queue_backlog_row *t,
    unsigned long *rows, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(t->type, t->type_len),
	    DB_STRN(t->type, t->type_len) };
	MYSQL_STMT *stmt;
	char *cols[32];
	unsigned ncols;
	enum db_status st;
	int at, rc;

	*rows = 0;
	st = queue_stmt_run(q, Q_SUCCESS_ESTIMATE, args, 2, err, errlen);
	if (st != DB_OK)
		return st;
	stmt = queue_handle(q, Q_SUCCESS_ESTIMATE);
	ncols = mysql_stmt_field_count(stmt);
	at = column_named(stmt, "rows");
	if (ncols > 32 || at < 0) {
		db_done(stmt);
		return DB_OK;	/* no estimate: 0 */
	}
	rc = db_fetch(stmt, cols, ncols, err, errlen);
	if (rc < 0)
		return DB_ERROR;
	if (rc == 1) {
		*rows = queue_number(cols[at]);
		db_free_cols(cols, ncols);
		db_done(stmt);
	}
	return DB_OK;
}

/* The one number a statement answers. */
static enum db_status
one_number(struct queue *q, unsigned which, const struct db_arg *args,
    unsigned nargs, unsigned long *n, char *err, size_t errlen)
{
	char *col = NULL;
	enum db_status st;
	int found = 0;

	st = queue_stmt_one(q, which, args, nargs, &col, 1, &found, err,
	    errlen);
	*n = (unsigned long)queue_number(col);
	free(col);
	return st;
}

/* What status shows of finished jobs: a row's cancelled jobs, out of
 * its failed ones (reading those rows), and its success rows, exactly up
 * to QUEUE_SUCCESS_EXACT, else the optimizer's estimate. */
static enum db_status
finished_counts(struct queue *q, struct queue_backlog_row *t, int estimate,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(t->type, t->type_len),
	    DB_STRN(t->type, t->type_len), DB_NUM(QUEUE_SUCCESS_EXACT) };
	enum db_status st = DB_OK;
	unsigned long upto;

	if (!estimate)
		return DB_OK;
	if (t->failed > 0)
		st = one_number(q, Q_CANCELLED_COUNT, args, 2, &t->cancelled,
		    err, errlen);
	if (st != DB_OK)
		return st;
	if (t->cancelled <= t->failed)
		t->failed -= t->cancelled;
	st = one_number(q, Q_SUCCESS_UPTO, args, 3, &upto, err, errlen);
	t->success_exact = st == DB_OK && upto < QUEUE_SUCCESS_EXACT;
	if (st != DB_OK || t->success_exact) {
		t->success = upto;
		return st;
	}
	st = success_estimate(q, t, &t->success, err, errlen);
	if (t->success < upto)
		t->success = upto;
	return st;
}

enum db_status
queue_backlog(struct queue *q, const char *const *known, size_t nknown,
    const char *only, int estimate, struct queue_backlog *b, char *err,
    size_t errlen)
{
	struct groups g = { NULL, NULL, 0 };
	struct db_arg arg;
	enum db_status st = DB_OK;
	size_t i;

	memset(b, 0, sizeof *b);
	/* Rows for the types asked for first, so they lead the table. */
	if (only != NULL) {
		backlog_row(b, only, strlen(only));
		g.names = xcalloc(1, sizeof *g.names);
		g.lens = xcalloc(1, sizeof *g.lens);
		g.lens[g.n] = strlen(only);
		g.names[g.n++] = xstrdup(only);
	} else {
		for (i = 0; i < nknown; i++)
			backlog_row(b, known[i], strlen(known[i]));
		st = queue_stmt_walk(q, Q_TYPES, NULL, 0, 1, on_group, &g,
		    err, errlen);
	}
	for (i = 0; st == DB_OK && i < g.n; i++) {
		if (only == NULL)
			backlog_row(b, g.names[i], g.lens[i]);
		arg = DB_STRN(g.names[i], g.lens[i]);
		st = queue_stmt_walk(q, Q_TYPE_COUNTS, &arg, 1, 3,
		    on_type_count, b, err, errlen);
	}
	for (i = 0; i < g.n; i++)
		free(g.names[i]);
	free(g.names);
	free(g.lens);
	if (st == DB_OK)
		st = queue_stmt_walk(q, Q_LAG, NULL, 0, 3, on_lag, b, err,
		    errlen);
	if (st == DB_OK)
		st = queue_stmt_walk(q, Q_EXPIRED, NULL, 0, 2, on_expired, b,
		    err, errlen);
	/* Those see every type; keep the one asked for. */
	while (only != NULL && b->n > 1)
		free(b->rows[--b->n].type);
	for (i = 0; st == DB_OK && i < b->n; i++)
		st = finished_counts(q, &b->rows[i], estimate, err, errlen);
	return st;
}

void
queue_backlog_free(struct queue_backlog *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->rows[i].type);
	free(b->rows);
	memset(b, 0, sizeof *b);
}

/* --- list and show --------------------------------------------------------- */

static struct queue_text
text_of(char **cols, const size_t *lens, unsigned i)
{
	struct queue_text t = { cols[i], lens[i] };

	return t;
}

struct list_walk {
	void (*fn)(void *arg, const struct queue_listed *);
	void *arg;
};

static int
on_listed(void *arg, char **cols, const size_t *lens)
{
	struct list_walk *w = arg;
	struct queue_listed job;

	job.id = queue_number(cols[0]);
	job.type = text_of(cols, lens, 1);
	job.business_key = text_of(cols, lens, 2);
	job.status = text_of(cols, lens, 3);
	job.attempts = cols[4];
	job.max_attempts = cols[5];
	job.next_run_at = cols[6];
	job.updated_at = cols[7];
	job.last_error = text_of(cols, lens, 8);
	job.due_in = cols[9];
	w->fn(w->arg, &job);
	return 0;
}

enum db_status
queue_list(struct queue *q, const struct queue_list_filter *f,
    void (*fn)(void *arg, const struct queue_listed *), void *arg,
    char *err, size_t errlen)
{
	unsigned which = Q_LIST | (f->status != NULL ? Q_F_STATUS : 0) |
	    (f->type != NULL ? Q_F_TYPE : 0);
	struct list_walk w = { fn, arg };
	struct db_arg args[5];
	unsigned n = 0;

	args[n++] = DB_NUM(f->before_id ? f->before_id : UINT64_MAX >> 1);
	if (f->status != NULL)
		args[n++] = DB_STR(f->status);
	if (f->type != NULL) {
		args[n++] = DB_STR(f->type);
		args[n++] = DB_STR(f->type);
	}
	args[n++] = DB_NUM(f->limit);
	return queue_stmt_walk(q, which, args, n, 10, on_listed, &w, err,
	    errlen);
}

struct show_walk {
	void (*fn)(void *arg, const struct queue_shown *);
	void *arg;
	int found;
	int deadline;		/* the table has sql/009's column */
};

static int
on_shown(void *arg, char **cols, const size_t *lens)
{
	struct show_walk *w = arg;
	struct queue_shown job;
	unsigned i;

	for (i = 0; i < QC_COUNT; i++)
		job.col[i] = text_of(cols, lens, i);
	job.payload_valid = cols[QC_COUNT] != NULL &&
	    strcmp(cols[QC_COUNT], "1") == 0;
	job.due_in = cols[QC_COUNT + 1];
	job.has_deadline = w->deadline;
	job.deadline = w->deadline ? cols[QC_COUNT + 2] : NULL;
	w->found = 1;
	w->fn(w->arg, &job);
	return 1;
}

enum db_status
queue_show(struct queue *q, uint64_t id, const char *key,
    void (*fn)(void *arg, const struct queue_shown *), void *arg,
    int *found, char *err, size_t errlen)
{
	struct show_walk w = { fn, arg, 0, queue_has_deadline(q) };
	struct db_arg args[2];
	enum db_status st;

	if (key != NULL) {
		args[0] = DB_STR(key);
		args[1] = DB_STR(key);
	} else
		args[0] = DB_NUM(id);
	st = queue_stmt_walk(q, Q_SHOW | (key != NULL ? Q_F_KEY : 0) |
	    (w.deadline ? Q_F_DEADLINE : 0), args, key != NULL ? 2 : 1,
	    QC_COUNT + 2 + (w.deadline ? 1 : 0), on_shown, &w, err, errlen);
	*found = w.found;
	return st;
}

/* --- the table and the server ---------------------------------------------- */

static struct queue_column_info *
column_info(struct queue_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ncolumns; i++)
		if (strcmp(t->columns[i].name, name) == 0)
			return &t->columns[i];
	return NULL;
}

static int
on_column(void *arg, char **cols, const size_t *lens)
{
	struct queue_table *t = arg;
	struct queue_column_info *c;

	(void)lens;
	if (cols[0] == NULL)
		return 0;
	t->columns = xrealloc(t->columns, (t->ncolumns + 1) *
	    sizeof *t->columns);
	c = &t->columns[t->ncolumns++];
	c->name = xstrdup(cols[0]);
	c->nullable = cols[1] != NULL && strcmp(cols[1], "YES") == 0;
	c->unfilled = 0;
	return 0;
}

static int
on_unfilled(void *arg, char **cols, const size_t *lens)
{
	struct queue_column_info *c;

	(void)lens;
	if (cols[0] != NULL && (c = column_info(arg, cols[0])) != NULL)
		c->unfilled = 1;
	return 0;
}

static int
on_index(void *arg, char **cols, const size_t *lens)
{
	struct queue_table *t = arg;
	struct queue_index_info *x;

	(void)lens;
	if (cols[0] == NULL)
		return 0;
	t->indexes = xrealloc(t->indexes, (t->nindexes + 1) *
	    sizeof *t->indexes);
	x = &t->indexes[t->nindexes++];
	x->name = xstrdup(cols[0]);
	x->unique = cols[1] != NULL && strcmp(cols[1], "0") == 0;
	x->columns = xstrdup(cols[2] != NULL ? cols[2] : "");
	return 0;
}

enum db_status
queue_describe(struct queue *q, struct queue_table *t, char *err,
    size_t errlen)
{
	struct db_arg arg = DB_STR(q->name);
	enum db_status st;

	memset(t, 0, sizeof *t);
	st = queue_stmt_walk(q, Q_COLUMNS, &arg, 1, 2, on_column, t, err,
	    errlen);
	if (st == DB_OK)
		st = queue_stmt_walk(q, Q_UNFILLED_COLUMNS, &arg, 1, 1,
		    on_unfilled, t, err, errlen);
	if (st == DB_OK)
		st = queue_stmt_walk(q, Q_INDEXES, &arg, 1, 3, on_index, t,
		    err, errlen);
	return st;
}

enum db_status
queue_cascades(struct queue *q, const char *from, int *cascades, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(from), DB_STR(q->name) };
	enum db_status st;
	char *col = NULL;
	int found = 0;

	st = queue_stmt_one(q, Q_CASCADES, args, 2, &col, 1, &found, err,
	    errlen);
	*cascades = st == DB_OK && found && queue_number(col) > 0;
	free(col);
	return st;
}

void
queue_table_free(struct queue_table *t)
{
	size_t i;

	for (i = 0; i < t->ncolumns; i++)
		free(t->columns[i].name);
	for (i = 0; i < t->nindexes; i++) {
		free(t->indexes[i].name);
		free(t->indexes[i].columns);
	}
	free(t->columns);
	free(t->indexes);
	memset(t, 0, sizeof *t);
}

struct settings_walk {
	void (*fn)(void *arg, const char *name, const char *value);
	void *arg;
};

static int
on_setting(void *arg, char **cols, const size_t *lens)
{
	struct settings_walk *w = arg;

	(void)lens;
	if (cols[0] != NULL)
		w->fn(w->arg, cols[0], cols[1] != NULL ? cols[1] : "");
	return 0;
}

enum db_status
queue_server(struct queue *q, char **version,
    void (*fn)(void *arg, const char *name, const char *value), void *arg,
    char *err, size_t errlen)
{
	struct settings_walk w = { fn, arg };
	enum db_status st;
	int found;

	*version = NULL;
	st = queue_stmt_one(q, Q_VERSION, NULL, 0, version, 1, &found, err,
	    errlen);
	if (st == DB_OK)
		st = queue_stmt_walk(q, Q_SETTINGS, NULL, 0, 2, on_setting, &w,
		    err, errlen);
	return st;
}

/* --- the claim's plan -------------------------------------------------------- */

enum db_status
queue_explain_claim(struct queue *q, const char *const *types, size_t ntypes,
    char **index, unsigned long *rows, char *err, size_t errlen)
{
	enum queue_stmt which, spread;
	struct db_arg *args = NULL;
	char *text, *sql, *cols[32];
	struct queue_stmts *once;
	MYSQL_STMT *stmt;
	enum db_status st;
	unsigned n, ncols;
	int rc, key, nrows;

	*index = NULL;
	*rows = 0;
	if (ntypes == 0) {
		errf(err, errlen, "explain the claim: no types");
		return DB_ERROR;
	}
	/* The very statement a run would prepare, behind EXPLAIN, which
	 * plans it without changing a row. */
	which = queue_claim_stmt(q, ntypes, &spread);
	text = queue_stmt_text(q, which);
	sql = xmalloc(strlen(text) + sizeof EXPLAIN_TABLE " ");
	sprintf(sql, EXPLAIN_TABLE " %s", text);
	free(text);
	args = queue_claim_args(which, types, ntypes, 1, "explain", &n);
	once = queue_stmts_once(q, sql, "explain the claim", QUEUE_JOBS_TABLE);
	free(sql);
	st = queue_stmts_run(once, 0, args, n, err, errlen);
	free(args);
	stmt = queue_stmts_handle(once, 0);
	ncols = stmt != NULL ? mysql_stmt_field_count(stmt) : 0;
	key = st == DB_OK ? column_named(stmt, "key") : -1;
	nrows = st == DB_OK ? column_named(stmt, "rows") : -1;
	if (st == DB_OK && (ncols > 32 || key < 0 || nrows < 0)) {
		errf(err, errlen, "explain the claim in %s: EXPLAIN has no "
		    "key or rows column", q->table);
		st = DB_ERROR;
	}
	if (st == DB_OK) {
		rc = queue_stmts_fetch(once, 0, cols, ncols, err, errlen);
		if (rc < 0)
			st = DB_ERROR;
		if (rc == 1) {
			*index = cols[key];
			cols[key] = NULL;
			if (cols[nrows] != NULL)
				parse_ulong(cols[nrows], 0, ULONG_MAX, rows);
			db_free_cols(cols, ncols);
			db_done(stmt);
		}
	}
	queue_stmts_close(once);
	return st;
}

/* --- the account's way to jobrun's other tables ---------------------------- */

/* s as an SQL string literal, quotes and backslashes doubled. */
static void
literal(const char *s, char *out, size_t len)
{
	size_t o = 0;

	if (len < 3) {
		out[0] = '\0';
		return;
	}
	out[o++] = '\'';
	for (; *s != '\0' && o + 3 < len; s++) {
		if (*s == '\'' || *s == '\\')
			out[o++] = *s;
		out[o++] = *s;
	}
	out[o++] = '\'';
	out[o] = '\0';
}

/* The account as a GRANT names it: 'user'@'host' by CURRENT_USER(). */
static void
account(struct queue *q, char *out, size_t len)
{
	char *col = NULL, *at, user[200], host[200], err[512];
	int found = 0;

	if (queue_stmt_one(q, Q_ACCOUNT, NULL, 0, &col, 1, &found, err,
	    sizeof err) == DB_OK && col != NULL &&
	    (at = strrchr(col, '@')) != NULL) {
		*at = '\0';
		literal(col, user, sizeof user);
		literal(at + 1, host, sizeof host);
		errf(out, len, "%s@%s", user, host);
	} else
		snprintf(out, len, "<the account>");
	free(col);
}

void
queue_access_say(struct queue *q, enum queue_reach reach,
    const struct queue_feature *f, struct queue_access *out)
{
	char who[420], db[160], table[160], names[400] = "", grants[700] = "";
	size_t i, n = f->tables[1] != NULL ? 2 : 1, at;

	account(q, who, sizeof who);
	db_quote_ident(q->db->cfg->database, db, sizeof db);
	for (i = 0; i < n; i++) {
		db_quote_ident(f->tables[i], table, sizeof table);
		at = strlen(names);
		errf(names + at, sizeof names - at, "%s%s.%s",
		    i > 0 ? " and " : "", db, table);
		at = strlen(grants);
		errf(grants + at, sizeof grants - at, "%sGRANT %s ON %s.%s "
		    "TO %s", i > 0 ? "; " : "", f->privileges, db, table, who);
	}
	out->reach = reach;
	out->status = reach == QUEUE_ABSENT ? DB_SCHEMA : DB_DENIED;
	if (reach == QUEUE_ABSENT) {
		errf(out->why, sizeof out->why, n > 1 ? "%s are not both "
		    "there" : "no table %s", names);
		/* 1146 comes only to an account whose privileges reach
		 * the name (on the database, say): once made, the table is
		 * theirs; a privilege still missing, check then names. */
		errf(out->fix, sizeof out->fix, "apply %s", f->migration);
	} else if (reach == QUEUE_HIDDEN) {
		errf(out->why, sizeof out->why, "%s cannot see %s: absent, "
		    "or not granted (the server does not say which)", who, names);
		errf(out->fix, sizeof out->fix, "apply %s if %s %s not exist, "
		    "then %s", f->migration, names, n > 1 ? "do" : "does",
		    grants);
	} else {
		errf(out->why, sizeof out->why, "%s lacks a privilege jobrun "
		    "uses on %s", who, names);
		errf(out->fix, sizeof out->fix, "%s", grants);
	}
}
