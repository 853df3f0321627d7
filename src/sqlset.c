/*
 * sqlset.c - statements of the modules beside queue.c.
 *
 * queue.c keeps its statements for the run and runs them again after a
 * lost connection or a deadlock, since each is its own transaction.  The
 * statements here run inside transactions (a schedule's slots, a
 * fan-in's count and callback), where running one statement again alone
 * would be wrong: an error is returned as it is and the caller rolls
 * back (and, for a deadlock, runs its whole transaction again).  They
 * are prepared on the queue's connection and forgotten when the queue
 * has made that connection again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlset.h"
#include "util.h"

void
sqlset_open(struct sqlset *s, struct db *db, struct queue *q,
    const char *const *texts, const char *const *purposes,
    const char *const *tables, size_t n)
{
	struct queue_counters c;

	queue_counters(q, &c);
	*s = (struct sqlset){ .db = db, .q = q, .texts = texts,
	    .purposes = purposes, .tables = tables, .n = n,
	    .stmt = xcalloc(n, sizeof *s->stmt), .reconnects = c.reconnects };
}

void
sqlset_say_what(const struct sqlset *s, const char *what, const char *table,
    char *err, size_t errlen)
{
	char cause[1024];

	snprintf(cause, sizeof cause, "%s", err);
	if (table == NULL)
		errf(err, errlen, "%s: %s", what, cause);
	else
		errf(err, errlen, "%s in %s: %s", what,
		    strcmp(table, SQLSET_JOBS) == 0 ? queue_quoted(s->q) :
		    table, cause);
}

/* Close the statements (they may belong to a connection already gone:
 * libmariadb then only frees them). */
static void
forget(struct sqlset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->stmt[i] != NULL) {
			mysql_stmt_close(s->stmt[i]);
			s->stmt[i] = NULL;
		}
}

void
sqlset_close(struct sqlset *s)
{
	if (s->stmt == NULL)
		return;
	forget(s);
	free(s->stmt);
	s->stmt = NULL;
}

static void
forget_if_reconnected(struct sqlset *s)
{
	struct queue_counters c;

	queue_counters(s->q, &c);
	if (c.reconnects != s->reconnects) {
		forget(s);
		s->reconnects = c.reconnects;
	}
}

enum db_status
sqlset_prepare(struct sqlset *s, const char *fmt, const char *what,
    const char *table, MYSQL_STMT **out, char *err, size_t errlen)
{
	enum db_status st;
	char *sql;
	int len;

	forget_if_reconnected(s);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	len = snprintf(NULL, 0, fmt, queue_quoted(s->q));
	sql = xmalloc((size_t)len + 1);
	snprintf(sql, (size_t)len + 1, fmt, queue_quoted(s->q));
#pragma GCC diagnostic pop
	st = db_prepare(s->db, sql, out, err, errlen);
	free(sql);
	if (st != DB_OK)
		sqlset_say_what(s, what, table, err, errlen);
	return st;
}

enum db_status
sqlset_run(struct sqlset *s, size_t w, const struct db_arg *args,
    unsigned nargs, char **cols, unsigned ncols, int *found, char *err,
    size_t errlen)
{
	enum db_status st;
	int rc;

	if (s->db->conn == NULL) {
		errf(err, errlen, "no connection");
		sqlset_say_what(s, s->purposes[w], s->tables[w], err, errlen);
		return DB_UNREACHABLE;
	}
	forget_if_reconnected(s);
	if (s->stmt[w] == NULL && (st = sqlset_prepare(s, s->texts[w],
	    s->purposes[w], s->tables[w], &s->stmt[w], err, errlen)) !=
	    DB_OK)
		return st;
	st = db_execute(s->db, s->stmt[w], args, nargs, err, errlen);
	if (st != DB_OK)
		sqlset_say_what(s, s->purposes[w], s->tables[w], err, errlen);
	if (st != DB_OK || ncols == 0)
		return st;
	rc = db_fetch(s->stmt[w], cols, ncols, err, errlen);
	if (rc < 0) {
		sqlset_say_what(s, s->purposes[w], s->tables[w], err, errlen);
		return DB_ERROR;
	}
	if (rc == 1)
		db_done(s->stmt[w]);
	*found = rc == 1;
	return DB_OK;
}

int
sqlset_fetch(struct sqlset *s, size_t w, char **cols, unsigned ncols,
    char *err, size_t errlen)
{
	return db_fetch(s->stmt[w], cols, ncols, err, errlen);
}

uint64_t
sqlset_changed(const struct sqlset *s, size_t w)
{
	return (uint64_t)mysql_stmt_affected_rows(s->stmt[w]);
}

enum db_status
sqlset_plain(struct sqlset *s, const char *sql, char *err, size_t errlen)
{
	return db_query(s->db, sql, err, errlen);
}

int
sqlset_int64(const char *s, int64_t *out)
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
