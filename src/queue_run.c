/*
 * queue_run.c - the queue's one statement runner and transaction helper.
 *
 * Every statement jobrun sends runs here: the queue's own (queue_stmt_*)
 * and those of the modules beside it (queue_stmts_*: flow control,
 * fan-in, schedules).  A statement is prepared on first use and kept for
 * the run; outside a transaction a deadlock runs it again after a short
 * random pause, and a lost connection (server restarted, wait_timeout)
 * is made again once and the statement run again: every statement is
 * its own transaction, and a fenced write that did commit before the
 * connection broke finds its fence gone and changes nothing.  Inside a
 * transaction nothing is run again on its own: queue_trx begins,
 * commits, rolls back and runs the whole transaction again, and the rule
 * for a COMMIT whose answer was lost lives there, once.  A server that
 * did not answer within read_timeout is not asked again (the run must
 * end in bounded time).  Errors read "<purpose> in <table>: <cause>".
 */
#include <errno.h>
#include <limits.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue_sql.h"
#include "util.h"

/* The smallest max_allowed_packet a server can have: statements whose
 * values are smaller always fit. */
#define PACKET_FLOOR 1024

/* The runner's own question, after a lost connection. */
const struct queue_sql queue_run_sql[Q_COUNT] = {
	[Q_MAX_PACKET] = { "read max_allowed_packet",
	    Q_TEXT("SELECT @@max_allowed_packet"), 0, NULL, 0 },
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
	/* A set of one statement of one use (queue_stmts_once) owns it. */
	const char *once[3];
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
	free((char *)s->once[0]);
	free((char *)s->once[1]);
	free((char *)s->once[2]);
	free(s);
}

char *
queue_list_text(const char *head, size_t n, const char *tail)
{
	size_t nhead = strlen(head), ntail = strlen(tail), at = nhead, i;
	char *sql = xmalloc(nhead + 3 * n + ntail + 1);

	memcpy(sql, head, nhead);
	for (i = 0; i < n; i++) {
		memcpy(sql + at, i > 0 ? ", ?" : "?", i > 0 ? 3 : 1);
		at += i > 0 ? 3 : 1;
	}
	memcpy(sql + at, tail, ntail + 1);
	return sql;
}

struct queue_stmts *
queue_stmts_once(struct queue *q, const char *text, const char *purpose,
    const char *table)
{
	struct queue_stmts *s;

	s = queue_stmts_open(q, NULL, NULL, NULL, 1, NULL);
	s->once[0] = xstrdup(text);
	s->once[1] = xstrdup(purpose);
	s->once[2] = table != NULL ? xstrdup(table) : NULL;
	s->texts = &s->once[0];
	s->purposes = &s->once[1];
	s->tables = &s->once[2];
	return s;
}

MYSQL_STMT *
queue_stmts_handle(const struct queue_stmts *s, size_t which)
{
	return s->stmt[which];
}

/* Where statement which of s (the queue's own when NULL: an id and its
 * flags) is kept. */
static MYSQL_STMT **
slot_of(struct queue *q, struct queue_stmts *s, size_t which)
{
	return s == NULL ? queue_slot(q, (unsigned)which) : &s->stmt[which];
}

/* fmt with the job table for each %1$s and other for each %2$s, "%%" as
 * "%" (malloc'ed).  Substituted here, not by printf: a text may name the
 * second table alone, and glibc's _FORTIFY_SOURCE (Debian's hardened
 * build) aborts a printf whose %N$ skip an argument ("invalid %N$ use
 * detected"). */
static char *
format_tables(const char *fmt, const char *jobs, const char *other)
{
	size_t len = strlen(fmt) + 1, njobs = strlen(jobs),
	    nother = strlen(other), at = 0;
	const char *p;
	char *out;

	for (p = fmt; (p = strchr(p, '%')) != NULL; p++)
		len += njobs > nother ? njobs : nother;
	out = xmalloc(len);
	for (p = fmt; *p != '\0'; p++) {
		if (strncmp(p, "%1$s", 4) == 0) {
			memcpy(out + at, jobs, njobs);
			at += njobs;
			p += 3;
		} else if (strncmp(p, "%2$s", 4) == 0) {
			memcpy(out + at, other, nother);
			at += nother;
			p += 3;
		} else {
			out[at++] = *p;
			if (p[0] == '%' && p[1] == '%')
				p++;
		}
	}
	out[at] = '\0';
	return out;
}

/* err, a cause, becomes "<what which does> in <its table>: <cause>". */
static void
say_where(const struct queue *q, const struct queue_stmts *s, size_t which,
    const char *cause, char *err, size_t errlen)
{
	const char *what = s == NULL ? queue_purpose((unsigned)which) :
	    s->purposes[which];
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

/* Close every prepared statement (they die with their connection). */
void
queue_forget(struct queue *q)
{
	size_t i, v;

	for (i = 0; i < Q_COUNT; i++)
		for (v = 0; v < QUEUE_VARIANTS; v++)
			if (q->stmt[i][v] != NULL)
				mysql_stmt_close(q->stmt[i][v]);
	memset(q->stmt, 0, sizeof q->stmt);
	queue_stmts_close(q->batch);
	q->batch = NULL;
}

/* A claim's scan with its short lock wait (CLAIM_SCAN_PREFIX), in place
 * of sql (freed). */
static char *
claim_scan_text(char *sql)
{
	char *t = xmalloc(sizeof CLAIM_SCAN_PREFIX + strlen(sql));

	memcpy(t, CLAIM_SCAN_PREFIX, sizeof CLAIM_SCAN_PREFIX - 1);
	strcpy(t + sizeof CLAIM_SCAN_PREFIX - 1, sql);
	free(sql);
	return t;
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
	sql = s == NULL ? queue_stmt_text(q, (unsigned)which) :
	    format_tables(s->texts[which], q->table, s->other);
	if (s == NULL && queue_sql_of((unsigned)which)->claim_scan &&
	    !db_is_mysql(q->db))
		sql = claim_scan_text(sql);
	st = db_prepare(q->db, sql, slot, cause, len);
	free(sql);
	return st;
}

enum db_status
queue_prepare(struct queue *q, unsigned which, char *cause, size_t len)
{
	return prepare_in(q, NULL, which, cause, len);
}

/* The next number of the queue's own generator (xorshift: no shared
 * state with anyone else's random()). */
uint64_t
queue_random(struct queue *q)
{
	uint64_t x = q->random ? q->random : 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return q->random = x;
}

/* Sleep 2..10 ms, doubled per earlier attempt. */
void
queue_conflict_pause(struct queue *q, unsigned attempt)
{
	struct timespec ts;
	long ms;

	ms = (long)(2 + queue_random(q) % 9) << (attempt < 5 ? attempt : 5);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Whether the last statement's lock wait timed out under a wait that
 * queue_lock_wait set: its caller chose to give up after that long, and
 * running the statement again would wait as long again (a row held for
 * minutes would hold the run for QUEUE_CONFLICT_RETRIES of them). */
static int
gives_up(const struct queue *q)
{
	return queue_lock_wait_ended(q) && q->lock_wait_short &&
	    q->lock_wait_at == q->counters.reconnects;
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
		    q->no_retry || q->in_trx || gives_up(q))
			break;
		/* Each statement is its own transaction and a deadlock rolled
		 * it back whole, so running it again is safe; the random
		 * pause keeps two runners from colliding again in step. */
		q->counters.conflicts++;
		queue_conflict_pause(q, tries);
		st = DB_OK;
	}
	return st;
}

enum db_status
queue_attempt(struct queue *q, unsigned which, const struct db_arg *args,
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
	if (queue_attempt(q, Q_GET_LOCK, args, 1, cause, sizeof cause) != DB_OK)
		return;
	rc = db_fetch(queue_handle(q, Q_GET_LOCK), &col, 1, cause,
	    sizeof cause);
	if (rc == 1) {
		q->lock_lost = col == NULL || strcmp(col, "1") != 0;
		db_done(queue_handle(q, Q_GET_LOCK));
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

	if (size < PACKET_FLOOR || queue_attempt(q, Q_MAX_PACKET, NULL, 0, tmp,
	    sizeof tmp) != DB_OK)
		return 0;
	rc = db_fetch(queue_handle(q, Q_MAX_PACKET), &col, 1, tmp, sizeof tmp);
	if (rc == 1) {
		if (col != NULL)
			parse_ulong(col, 0, ULONG_MAX, &max);
		db_done(queue_handle(q, Q_MAX_PACKET));
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
enum db_status
queue_reconnect(struct queue *q, size_t size, char *cause, size_t len)
{
	enum db_status st;

	queue_forget(q);
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
enum db_status
queue_run_rows(struct queue *q, struct queue_stmts *s, size_t which,
    const struct db_arg *args, unsigned nargs, unsigned nrows, char *err,
    size_t errlen)
{
	size_t size = db_args_size(args, nargs * (nrows > 0 ? nrows : 1));
	char cause[512], more[512];
	enum db_status st = DB_OK;

	if (q->db->conn == NULL)
		st = queue_reconnect(q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = attempt_rows(q, s, which, args, nargs, nrows, cause,
		    sizeof cause);
	if (st == DB_UNREACHABLE && db_connection_lost(q->db->last_errno)) {
		if (q->db->timed_out) {
			queue_forget(q);
			db_close(q->db);
		} else if (q->in_trx) {
			/* The transaction died with the connection: its caller
			 * runs it again whole, on a new one. */
			q->trx_lost = queue_reconnect(q, size, more, sizeof more) ==
			    DB_OK;
		} else {
			st = queue_reconnect(q, size, cause, sizeof cause);
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
queue_stmt_run(struct queue *q, unsigned which,
    const struct db_arg *args, unsigned nargs, char *err, size_t errlen)
{
	return queue_run_rows(q, NULL, which, args, nargs, 0, err, errlen);
}

enum db_status
queue_stmts_prepare(struct queue_stmts *s, size_t which, char *err,
    size_t errlen)
{
	char cause[512];
	enum db_status st = DB_OK;

	if (s->q->db->conn == NULL)
		st = queue_reconnect(s->q, 0, cause, sizeof cause);
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
	return queue_run_rows(s->q, s, which, args, nargs, 0, err, errlen);
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
	st = queue_run_rows(q, s, which, args, nargs, 0, err, errlen);
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
	return queue_stmts_fetch_len(s, which, cols, NULL, ncols, err, errlen);
}

int
queue_stmts_fetch_len(struct queue_stmts *s, size_t which, char **cols,
    size_t *lens, unsigned ncols, char *err, size_t errlen)
{
	char cause[512];
	int rc = db_fetch_len(s->stmt[which], cols, lens, ncols, cause,
	    sizeof cause);

	if (rc < 0)
		say_where(s->q, s, which, cause, err, errlen);
	return rc;
}

unsigned
queue_stmts_warnings(const struct queue_stmts *s)
{
	return s->q->db->conn != NULL ?
	    mysql_warning_count(s->q->db->conn) : 0;
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

int
queue_lock_wait_ended(const struct queue *q)
{
	return q->db->last_errno == ER_LOCK_WAIT_TIMEOUT;
}

int
queue_unseen(const struct queue *q, enum db_status st)
{
	unsigned e = q->db->last_errno;

	return (st == DB_SCHEMA && e == ER_NO_SUCH_TABLE) ||
	    (st == DB_DENIED && e == ER_TABLEACCESS_DENIED_ERROR);
}

/* Prepare which[0..n-1] of s (the queue's own when NULL) in order: how
 * their tables stand for the account, by the one rule. */
static enum db_status
reach_in(struct queue *q, struct queue_stmts *s, const size_t *which,
    size_t n, enum queue_reach *reach, char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	char cause[512];
	size_t i;

	*reach = QUEUE_REACHED;
	if (q->db->conn == NULL)
		st = queue_reconnect(q, 0, cause, sizeof cause);
	for (i = 0; st == DB_OK && i < n; i++) {
		st = prepare_in(q, s, which[i], cause, sizeof cause);
		if (st != DB_OK && queue_unseen(q, st)) {
			*reach = st == DB_SCHEMA ? QUEUE_ABSENT : i == 0 ?
			    QUEUE_HIDDEN : QUEUE_UNGRANTED;
			return DB_OK;
		}
	}
	if (st != DB_OK)
		say_where(q, s, i > 0 ? which[i - 1] : which[0], cause, err,
		    errlen);
	return st;
}

enum db_status
queue_stmts_reach(struct queue_stmts *s, const size_t *which, size_t n,
    enum queue_reach *reach, char *err, size_t errlen)
{
	return reach_in(s->q, s, which, n, reach, err, errlen);
}

enum db_status
queue_jobs_access(struct queue *q, struct queue_access *a, char *err,
    size_t errlen)
{
	/* SELECT, INSERT (and UPDATE), UPDATE, DELETE */
	static const size_t uses[] = { Q_JOB_STATUS, Q_ENQUEUE, Q_CANCEL,
	    Q_PURGE };
	struct queue_feature f = { { q->name, NULL }, QUEUE_PRIVILEGES,
	    "sql/schema.sql" };
	enum db_status st;

	st = reach_in(q, NULL, uses, sizeof uses / sizeof uses[0], &a->reach,
	    err, errlen);
	if (st == DB_OK && a->reach != QUEUE_REACHED)
		queue_access_say(q, a->reach, &f, a);
	return st;
}

uint64_t
queue_stmt_changed(const struct queue *q, unsigned which)
{
	return (uint64_t)mysql_stmt_affected_rows(queue_handle(q, which));
}

enum db_status
queue_stmt_one(struct queue *q, unsigned which,
    const struct db_arg *args, unsigned nargs, char **cols, unsigned ncols,
    int *found, char *err, size_t errlen)
{
	return run_one(q, NULL, which, args, nargs, cols, ncols, found, err,
	    errlen);
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
		st = queue_reconnect(q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = db_query(q->db, sql, cause, sizeof cause);
	if (st == DB_UNREACHABLE && db_connection_lost(q->db->last_errno) &&
	    strcmp(sql, "COMMIT") == 0) {
		if (!q->db->timed_out)
			q->commit_lost = queue_reconnect(q, 0, more, sizeof more) ==
			    DB_OK;
	} else if (st == DB_UNREACHABLE &&
	    db_connection_lost(q->db->last_errno)) {
		if (q->db->timed_out) {
			queue_forget(q);
			db_close(q->db);
		} else
			q->trx_lost = queue_reconnect(q, 0, more, sizeof more) ==
			    DB_OK;
	}
	if (st != DB_OK)
		errf(err, errlen, "%s in %s: %s", purpose, q->table, cause);
	return st;
}

/* START TRANSACTION: inside it no statement is run again after a
 * deadlock or a lost connection; queue_trx rolls it back, puts the
 * claim's cursor back and runs it again whole. */
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
		st = queue_claimed_by_token(q, w->token, &id, err, errlen);
		*kept = id != 0;
		return st;
	}
	st = queue_stmt_one(q, Q_OWNER | Q_F_LOCKED, args, 2, &col, 1, &found,
	    err, errlen);
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
}

enum db_status
queue_trx(struct queue *q, const struct queue_trx *t, char *err,
    size_t errlen)
{
	struct queue_witness w;
	enum db_status st;
	unsigned tries;
	int again, alone, begun;

	for (tries = 1;; tries++) {
		w = (struct queue_witness){ 0, NULL };
		alone = t->alone != NULL && t->alone(t->arg);
		st = alone ? DB_OK : begin_trx(q, err, errlen);
		begun = !alone && st == DB_OK;
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
		    (t->lock_wait_again || !queue_lock_wait_ended(q))));
		q->commit_lost = 0;
		rollback_trx(q);
		/* Whatever ended the transaction (a ROLLBACK, or the server
		 * on a deadlock or a lost connection, which leaves in_trx
		 * clear), its claims are undone: the cursor goes back to
		 * where it was before them, so that a job one of them took
		 * is not left behind it. */
		if (begun)
			q->cursor = q->trx_cursor;
		if (t->undo != NULL)
			t->undo(t->arg, st);
		if (!again || tries >= t->tries)
			return st;
		if (st == DB_CONFLICT)
			queue_conflict_pause(q, tries < 3 ? tries : 3);
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

int
queue_in_trx(const struct queue *q)
{
	return q->in_trx;
}

enum db_status
queue_lock_wait(struct queue *q, unsigned seconds, char *err, size_t errlen)
{
	char sql[160], cause[512];
	enum db_status st = DB_OK;

	/* A connection made again meanwhile has the session's own wait:
	 * nothing to put back. */
	if (seconds == 0 && q->lock_wait_at != q->counters.reconnects) {
		q->lock_wait_short = 0;
		return DB_OK;
	}
	if (seconds > 0)
		snprintf(sql, sizeof sql, "SET @jobrun_lock_wait ="
		    " @@innodb_lock_wait_timeout, innodb_lock_wait_timeout"
		    " = %u", seconds);
	else
		snprintf(sql, sizeof sql, "SET innodb_lock_wait_timeout ="
		    " @jobrun_lock_wait");
	if (q->db->conn == NULL)
		st = queue_reconnect(q, 0, cause, sizeof cause);
	if (st == DB_OK)
		st = db_query(q->db, sql, cause, sizeof cause);
	if (st != DB_OK)
		errf(err, errlen, "%s the session's lock wait: %s", seconds > 0 ?
		    "set" : "put back", cause);
	q->lock_wait_at = q->counters.reconnects;
	q->lock_wait_short = seconds > 0 && st == DB_OK;
	return st;
}

enum db_status
queue_stmt_walk(struct queue *q, unsigned which,
    const struct db_arg *args, unsigned nargs, unsigned ncols,
    int (*fn)(void *arg, char **cols, const size_t *lens), void *arg,
    char *err, size_t errlen)
{
	char *cols[32];
	size_t lens[32];
	enum db_status st;
	int rc, stop = 0;

	if (ncols > 32) {
		errf(err, errlen, "%s: too many columns", queue_purpose(which));
		return DB_ERROR;
	}
	st = queue_stmt_run(q, which, args, nargs, err, errlen);
	while (st == DB_OK && !stop) {
		rc = db_fetch_len(queue_handle(q, which), cols, lens, ncols,
		    err, errlen);
		if (rc < 0)
			st = DB_ERROR;
		if (rc <= 0)
			break;
		stop = fn(arg, cols, lens);
		db_free_cols(cols, ncols);
	}
	if (stop)
		db_done(queue_handle(q, which));
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
