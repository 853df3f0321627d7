/*
 * queue_attempts.c - the attempt history table, <table>_attempts
 * (sql/010_attempts.sql).
 *
 * An attempt's row is written by the statement after its outcome's, in
 * the same transaction (the runner's, or the group's of --jobs), so the
 * history never holds an outcome the job table does not, nor misses one
 * it does; purge and retention delete the rows with their job (the
 * table's foreign key cascades).  A group's successes, marked with one
 * statement, get their rows with one statement too: the history costs
 * one statement per commit, not one per job.
 *
 * Recovery is the one writer that does not know the rows it gives back
 * before it writes them: with history on, it takes them one at a time,
 * locked, so that each gets exactly one row ("lost", or "cancelled")
 * however many runners recover at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempts.h"
#include "db.h"
#include "queue_sql.h"
#include "util.h"

/* The columns an attempt's insert writes, and one row of its values:
 * (job, attempt, runner, microseconds, outcome, exit, signal, http,
 * milliseconds, output). */
#define A_COLUMNS "(job_id, attempt, runner, started_at, finished_at," \
	" outcome, exit_status, signal_no, http_status, duration_ms, output)"
#define A_ROW "(?, ?, ?, NOW(6) - INTERVAL ? MICROSECOND, NOW(6)," \
	" ?, ?, ?, ?, ?, ?)"
#define A_NARGS 10
#define A_ROWS2 A_ROW ", " A_ROW
#define A_ROWS4 A_ROWS2 ", " A_ROWS2
#define A_ROWS8 A_ROWS4 ", " A_ROWS4
#define A_INSERT_TEXT(rows) "INSERT INTO %2$s " A_COLUMNS " VALUES " rows

enum attempts_stmt {
	A_PROBE,
	A_INSERT,	/* A_INSERT + n - 1: n rows */
	A_ANY_EXPIRED = A_INSERT + ATTEMPTS_MAX_ROWS, A_EXPIRED, A_LOST, A_RECOVER_ONE, A_COUNT_STMTS
};

static const char *const texts[A_COUNT_STMTS] = {
	[A_PROBE] = "SELECT job_id, attempt, runner, started_at, finished_at,"
	    " outcome, exit_status, signal_no, http_status, duration_ms,"
	    " output FROM %2$s WHERE FALSE",
	[A_INSERT + 0] = A_INSERT_TEXT(A_ROW),
	[A_INSERT + 1] = A_INSERT_TEXT(A_ROWS2),
	[A_INSERT + 2] = A_INSERT_TEXT(A_ROWS2 ", " A_ROW),
	[A_INSERT + 3] = A_INSERT_TEXT(A_ROWS4),
	[A_INSERT + 4] = A_INSERT_TEXT(A_ROWS4 ", " A_ROW),
	[A_INSERT + 5] = A_INSERT_TEXT(A_ROWS4 ", " A_ROWS2),
	[A_INSERT + 6] = A_INSERT_TEXT(A_ROWS4 ", " A_ROWS2 ", " A_ROW),
	[A_INSERT + 7] = A_INSERT_TEXT(A_ROWS8),
	[A_INSERT + 8] = A_INSERT_TEXT(A_ROWS8 ", " A_ROW),
	[A_INSERT + 9] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS2),
	[A_INSERT + 10] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS2 ", " A_ROW),
	[A_INSERT + 11] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS4),
	[A_INSERT + 12] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS4 ", " A_ROW),
	[A_INSERT + 13] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS4 ", " A_ROWS2),
	[A_INSERT + 14] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS4 ", " A_ROWS2
	    ", " A_ROW),
	[A_INSERT + 15] = A_INSERT_TEXT(A_ROWS8 ", " A_ROWS8),
	/* Whether any lock ran out: the look of every run's start, without
	 * a transaction or a lock, so that a run with none to recover pays
	 * one statement, as without the history. */
	[A_ANY_EXPIRED] = "SELECT 1 FROM %1$s WHERE status = 'processing' AND "
	    LOCK_EXPIRED " LIMIT 1",
	/* One job whose lock ran out, locked (Q_RECOVER's rule). */
	[A_EXPIRED] = "SELECT id FROM %1$s WHERE status = 'processing' AND "
	    LOCK_EXPIRED " LIMIT 1 FOR UPDATE",
	/* Its attempt's row: the runner is the lock's token, without an
	 * operator's cancel mark; when it started is not known.  (job) */
	[A_LOST] = "INSERT INTO %2$s (job_id, attempt, runner, finished_at,"
	    " outcome, output) SELECT id, attempts,"
	    " IF(" CANCEL_ASKED ", SUBSTRING(" TOKEN ", CHAR_LENGTH('"
	    CANCEL_PREFIX "') + 1), " TOKEN "), NOW(6),"
	    " IF(" CANCEL_ASKED ", 'cancelled', 'lost'), " RECOVER_WHY
	    " FROM %1$s WHERE id = ? AND status = 'processing'",
	/* (job) */
	[A_RECOVER_ONE] = "UPDATE %1$s SET" RECOVER_SET
	    " WHERE id = ? AND status = 'processing'",
};

#define A_TABLE "%2$s"

static const char *const purposes[A_COUNT_STMTS] = {
	[A_PROBE] = "check the attempt history",
	[A_INSERT + 0] = "record an attempt",
	[A_INSERT + 1] = "record attempts",
	[A_INSERT + 2] = "record attempts",
	[A_INSERT + 3] = "record attempts",
	[A_INSERT + 4] = "record attempts",
	[A_INSERT + 5] = "record attempts",
	[A_INSERT + 6] = "record attempts",
	[A_INSERT + 7] = "record attempts",
	[A_INSERT + 8] = "record attempts",
	[A_INSERT + 9] = "record attempts",
	[A_INSERT + 10] = "record attempts",
	[A_INSERT + 11] = "record attempts",
	[A_INSERT + 12] = "record attempts",
	[A_INSERT + 13] = "record attempts",
	[A_INSERT + 14] = "record attempts",
	[A_INSERT + 15] = "record attempts",
	[A_ANY_EXPIRED] = "look for expired locks",
	[A_EXPIRED] = "find a job whose lock expired",
	[A_LOST] = "record a lost attempt",
	[A_RECOVER_ONE] = "recover expired locks",
};

static const char *const tables[A_COUNT_STMTS] = {
	[A_PROBE] = A_TABLE, [A_INSERT + 0] = A_TABLE,
	[A_INSERT + 1] = A_TABLE, [A_INSERT + 2] = A_TABLE,
	[A_INSERT + 3] = A_TABLE, [A_INSERT + 4] = A_TABLE,
	[A_INSERT + 5] = A_TABLE, [A_INSERT + 6] = A_TABLE,
	[A_INSERT + 7] = A_TABLE, [A_INSERT + 8] = A_TABLE,
	[A_INSERT + 9] = A_TABLE, [A_INSERT + 10] = A_TABLE,
	[A_INSERT + 11] = A_TABLE, [A_INSERT + 12] = A_TABLE,
	[A_INSERT + 13] = A_TABLE, [A_INSERT + 14] = A_TABLE,
	[A_INSERT + 15] = A_TABLE,
	[A_ANY_EXPIRED] = QUEUE_JOBS_TABLE, [A_EXPIRED] = QUEUE_JOBS_TABLE,
	[A_LOST] = A_TABLE,
	[A_RECOVER_ONE] = QUEUE_JOBS_TABLE,
};

/* The statements whose privileges jobrun uses on the table, the look
 * first. */
static const size_t uses[] = { A_PROBE, A_INSERT };

struct attempts {
	struct queue *q;
	struct queue_stmts *set;
	char name[CFG_NAME_MAX + 1];
	char quoted[2 * CFG_NAME_MAX + 8];
	int none_left;		/* recovery found no lock run out */
};

struct attempts *
attempts_open(struct queue *q)
{
	struct attempts *a = xcalloc(1, sizeof *a);
	int n;

	a->q = q;
	n = snprintf(a->name, sizeof a->name, "%s" ATTEMPTS_SUFFIX,
	    queue_name(q));
	if (n < 0 || (size_t)n >= sizeof a->name) {
		free(a);
		return NULL;
	}
	db_quote_ident(a->name, a->quoted, sizeof a->quoted);
	a->set = queue_stmts_open(q, texts, purposes, tables, A_COUNT_STMTS,
	    a->quoted);
	return a;
}

void
attempts_close(struct attempts *a)
{
	if (a == NULL)
		return;
	queue_stmts_close(a->set);
	free(a);
}

enum db_status
attempts_probe(struct attempts *a, int write, int *on, char *err,
    size_t errlen)
{
	enum queue_reach reach;
	enum db_status st = DB_OK;

	/* Not granted INSERT, a run writes no history, as without the table
	 * (check says so): a run does not stop for want of its history.
	 * Reading it (show, report) needs the look alone. */
	*on = 0;
	if (a == NULL)
		return DB_OK;
	st = queue_stmts_reach(a->set, uses, write ? sizeof uses /
	    sizeof uses[0] : 1, &reach, err, errlen);
	*on = st == DB_OK && reach == QUEUE_REACHED;
	return st;
}

static struct db_arg
maybe_num(long value, int present)
{
	return present ? DB_NUM(value) : DB_STR(NULL);
}

enum db_status
attempts_add(struct attempts *a, const struct attempt *at, size_t n,
    char *err, size_t errlen)
{
	struct db_arg args[A_NARGS * ATTEMPTS_MAX_ROWS], *r;
	size_t i;

	if (n == 0 || n > ATTEMPTS_MAX_ROWS) {
		errf(err, errlen, "record %zu attempts: 1 to %d", n,
		    ATTEMPTS_MAX_ROWS);
		return DB_ERROR;
	}
	for (i = 0; i < n; i++) {
		r = args + A_NARGS * i;
		r[0] = DB_NUM(at[i].job_id);
		r[1] = DB_NUM(at[i].attempt);
		r[2] = DB_STR(at[i].runner);
		r[3] = DB_NUM(at[i].ms > 0 ? at[i].ms * 1000 : 0);
		r[4] = DB_STR(at[i].outcome);
		r[5] = maybe_num(at[i].exit_status, at[i].exit_status >= 0);
		r[6] = maybe_num(at[i].signo, at[i].signo > 0);
		r[7] = maybe_num(at[i].http_status, at[i].http_status > 0);
		r[8] = DB_NUM(at[i].ms > 0 ? at[i].ms : 0);
		r[9] = at[i].output_len > 0 ?
		    DB_STRN(at[i].output, at[i].output_len) : DB_STR(NULL);
	}
	return queue_stmts_run(a->set, A_INSERT + n - 1, args,
	    (unsigned)(A_NARGS * n), err, errlen);
}

/* Recover one job, if one's lock ran out (*found), with its row. */
static enum db_status
recover_one(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct attempts *a = arg;
	struct db_arg id;
	enum db_status st;
	char *col = NULL;
	int found;

	(void)w;	/* run again after a lost COMMIT: it looks again */
	st = queue_stmts_one(a->set, A_EXPIRED, NULL, 0, &col, 1, &found, err,
	    errlen);
	a->none_left = st == DB_OK && !found;
	if (st != DB_OK || !found) {
		free(col);
		return st;
	}
	id = DB_NUM(queue_number(col));
	free(col);
	st = queue_stmts_run(a->set, A_LOST, &id, 1, err, errlen);
	if (st == DB_OK)
		st = queue_stmts_run(a->set, A_RECOVER_ONE, &id, 1, err,
		    errlen);
	return st;
}

enum db_status
attempts_recover(struct attempts *a, unsigned long limit, uint64_t *count,
    char *err, size_t errlen)
{
	struct queue_trx t = { recover_one, NULL, NULL, a,
	    QUEUE_CLAIM_RETRIES + 1, 1, 0 };
	enum db_status st;
	char *col = NULL;
	int found;

	*count = 0;
	if (limit == 0)
		return DB_OK;
	st = queue_stmts_one(a->set, A_ANY_EXPIRED, NULL, 0, &col, 1, &found,
	    err, errlen);
	free(col);
	if (st != DB_OK || !found)
		return st;
	while (*count < limit) {
		st = queue_trx(a->q, &t, err, errlen);
		if (st != DB_OK || a->none_left)
			break;
		++*count;
	}
	return st;
}

const char *const attempt_column_names[ATTEMPT_COLS] = {
	[AC_ID] = "id", [AC_ATTEMPT] = "attempt", [AC_RUNNER] = "runner",
	[AC_STARTED] = "started_at", [AC_FINISHED] = "finished_at",
	[AC_OUTCOME] = "outcome", [AC_EXIT] = "exit_status",
	[AC_SIGNAL] = "signal", [AC_HTTP] = "http_status",
	[AC_MS] = "duration_ms", [AC_OUTPUT] = "output", [AC_JOB] = "job_id",
};

enum db_status
attempts_each(struct attempts *a, const uint64_t *job_ids, size_t n,
    void (*fn)(void *arg, char **cols, const size_t *lens), void *arg, char *err, size_t errlen)
{
	static const char *const purpose[1] = { "list jobs' attempts" };
	static const char *const table[1] = { A_TABLE };
	char *cols[ATTEMPT_COLS] = { 0 };
	size_t lens[ATTEMPT_COLS];
	struct db_arg *args;
	struct queue_stmts *s;
	const char *text[1];
	enum db_status st;
	size_t i;
	int rc = 0;

	if (n == 0 || n > ATTEMPTS_LIST_MAX)
		return DB_OK;
	args = xcalloc(n, sizeof *args);
	for (i = 0; i < n; i++)
		args[i] = DB_NUM(job_ids[i]);
	text[0] = queue_list_text("SELECT id, attempt, runner, started_at,"
	    " finished_at, outcome, exit_status, signal_no, http_status,"
	    " duration_ms, output, job_id FROM %2$s WHERE job_id IN (", n,
	    ") ORDER BY job_id, id");
	s = queue_stmts_open(a->q, text, purpose, table, 1, a->quoted);
	st = queue_stmts_run(s, 0, args, (unsigned)n, err, errlen);
	while (st == DB_OK && (rc = queue_stmts_fetch_len(s, 0, cols, lens,
	    ATTEMPT_COLS, err, errlen)) > 0) {
		fn(arg, cols, lens);
		db_free_cols(cols, ATTEMPT_COLS);
	}
	if (st == DB_OK && rc < 0)
		st = DB_ERROR;
	queue_stmts_close(s);
	free((char *)text[0]);
	free(args);
	return st;
}

static const struct queue_feature feature = {
	{ "<table>" ATTEMPTS_SUFFIX, NULL }, ATTEMPTS_PRIVILEGES,
	ATTEMPTS_MIGRATION
};

enum db_status
attempts_access(struct queue *q, struct queue_access *acc, char *err,
    size_t errlen)
{
	struct attempts *a = attempts_open(q);
	struct queue_feature f = feature;
	enum db_status st;

	if (a == NULL) {
		acc->reach = QUEUE_ABSENT;
		return DB_OK;
	}
	f.tables[0] = a->name;
	st = queue_stmts_reach(a->set, uses, sizeof uses / sizeof uses[0],
	    &acc->reach, err, errlen);
	if (st == DB_OK && acc->reach != QUEUE_REACHED)
		queue_access_say(q, acc->reach, &f, acc);
	attempts_close(a);
	return st;
}
