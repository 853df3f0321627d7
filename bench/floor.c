/*
 * floor.c - the floor jobrun is measured against, and claim timings.
 *
 *   floor [options] drain        claim, read, mark until nothing is due
 *   floor [options] claims K     K claims alone, each timed
 *   floor [options] seedclaims K seed 000's claim, each timed
 *
 * drain is a minimal loop over libmariadb prepared statements that does,
 * per job, exactly what jobrun's cycle does and nothing else: the claim
 * UPDATE, the read by id and the fenced success UPDATE, with jobrun's own
 * statement texts (sql.c), prepared once, parameters bound once.  No
 * handler, no JSON, no logging: the number jobrun is to approach.
 *
 * claims times the claim statement alone.  Claimed rows are put back to
 * pending between rounds (untimed), so K claims need not drain the table;
 * --round=N caps a round below the number of due jobs.  With --in-trx
 * each claim runs inside a transaction that is rolled back afterwards: the
 * statement's own work, without the commit's log flush.  Rows read are the
 * session's Handler_read_* counters around each round, less what reading
 * them costs.
 *
 * claims --priority times jobrun's claim in priority order
 * (src/queue_priority.c, Q_CLAIM_PRIORITY; with --type-index its one-type
 * variant on idx_type_priority) on a table with sql/013_priority.sql: the
 * levels are read first as jobrun reads them (Q_LEVEL, one look per level
 * from the top, at most PRIORITY_LEVELS), and the claim names the highest,
 * from its head, as jobrun's first claim at a level does (its later ones
 * start past its cursor); the levels found and the rows their reading
 * read are printed (levels=, level_reads=).
 * With --misses a claim that takes nothing is timed and counted as one
 * (misses=): the claim in priority order whose levels have nothing due
 * (jobrun then runs its plain claim after it).
 *
 * seedclaims is the claim of seed 000 (and bench/seed-loop.php) with the
 * session's default isolation: START TRANSACTION; SELECT * ... WHERE status
 * = 'pending' AND next_run_at <= ? ORDER BY id LIMIT 1 FOR UPDATE; UPDATE
 * ... WHERE id = ?; COMMIT.  --max-seconds bounds it: that claim reads
 * every finished row in front of the first pending one.
 *
 * drain claims as jobrun does, with its cursor (src/queue.c): each claim
 * after the first is Q_CLAIM | Q_F_AFTER, "AND (next_run_at > t OR
 * (next_run_at = t AND id > i))" for the last job claimed (t, i), read
 * back with the job (Q_READ), so that its range on idx_pick starts after
 * the index entries of jobs claimed in this run, which stay in the
 * 'pending' range, delete-marked, until InnoDB's purge removes them; the
 * plain claim runs when that finds nothing, and in place of it when the
 * last plain claim started QUEUE_CURSOR_MS ago or more.  drain --plain
 * claims with the plain claim only, as jobrun did before the cursor.
 *
 * drain --skip-locked is another prototype: the claim as a transaction,
 * "SELECT id ... ORDER BY next_run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED"
 * on idx_pick (without --plain, the cursor's range first), then jobrun's
 * claim UPDATE by that id, then COMMIT, so that concurrent runners pass
 * over each other's uncommitted claims instead of waiting for them.
 * bench/run does not use it: tried while building the suite, it cost a
 * single runner more (four round trips per claim instead of one) and did
 * not help 8 runners, whose claims were slowed by the purge-lag walk that
 * the cursor removes.
 *
 * drain --mark-trx writes each mark in a transaction of its own (START
 * TRANSACTION, the mark, COMMIT: jobrun's one-slot outcome when it keeps
 * the attempt history, sql/010_attempts.sql, without the attempt's
 * INSERT), so that bench/run's section 11 can tell what the two round
 * trips cost from what the row costs.
 *
 * Concurrent drains run a claim again after a deadlock or a lock wait
 * timeout, as jobrun does, and count them (conflicts=).
 *
 * Options: --socket=PATH --database=NAME [--table=polling_jobs]
 *   [--types=A,B,...] (the claim's type list; default "work")
 *   [--type-index]    one type, claimed with idx_type_pick (Q_CLAIM | Q_F_TYPE)
 *   [--round=N] [--in-trx] [--max-seconds=S] [--plain] [--skip-locked]
 *   [--mark-trx]      drain: each mark in START TRANSACTION ... COMMIT
 *   [--claims-out=FILE]  drain: each claim's time in µs, one a line
 *   [--priority]      claims: jobrun's claim in priority order (sql/013)
 *   [--misses]        claims: a claim that finds nothing is timed and
 *                     counted too (misses=), not the end of the round
 *   [--repeatable-read]  drain and claims keep the server's default
 *                        isolation instead of jobrun's READ COMMITTED
 *
 * Prints one line of key=value pairs; exit 0, or 1 with a message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>

#include "../src/config.h"	/* PRIORITY_HIGH */

/* Levels looked at, as jobrun's PRIORITY_SCAN (src/queue_sql.h). */
#define LEVELS_SCANNED 32
#include "sql.h"

#define MAX_TYPES 8
#define LOCK_SECONDS 300ULL

static const char *opt_socket, *opt_db, *opt_table = "polling_jobs";
static const char *types[MAX_TYPES];
static size_t ntypes;
static int opt_type_index, opt_in_trx, opt_plain, opt_skip_locked, opt_rr;
static int opt_mark_trx, opt_priority, opt_misses;
static const char *opt_claims_out;	/* drain: each claim's µs, a line */
static unsigned long opt_round, opt_max_seconds;

static void
die(const char *fmt, ...)
{
	va_list ap;

	fputs("floor: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile (0..100) of n sorted values. */
static double
percentile(const double *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* Connect as jobrun does (src/db.c): utf8mb4, READ COMMITTED; seed 000's
 * loop keeps the server's default isolation (rc = 0). */
static MYSQL *
connect_db(int read_committed)
{
	MYSQL *m = mysql_init(NULL);

	if (m == NULL)
		die("mysql_init failed");
	mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (read_committed)
		mysql_options(m, MYSQL_INIT_COMMAND,
		    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	if (mysql_real_connect(m, NULL, "root", NULL, opt_db, 0, opt_socket,
	    0) == NULL)
		die("connect to %s: %s", opt_socket, mysql_error(m));
	return m;
}

static void
query(MYSQL *m, const char *sql)
{
	if (mysql_query(m, sql) != 0)
		die("%s: %s", sql, mysql_error(m));
}

static MYSQL_STMT *
prepare_text(MYSQL *m, const char *sql)
{
	MYSQL_STMT *s = mysql_stmt_init(m);

	if (s == NULL || mysql_stmt_prepare(s, sql, strlen(sql)) != 0)
		die("prepare %s: %s", sql, s ? mysql_stmt_error(s) :
		    mysql_error(m));
	return s;
}

static MYSQL_STMT *
prepare_q(MYSQL *m, int which, size_t n)
{
	char sql[4096];

	if (bench_statement(opt_table, which, n, sql, sizeof sql) != 0)
		die("statement %d too long", which);
	return prepare_text(m, sql);
}

static void
execute(MYSQL_STMT *s)
{
	if (mysql_stmt_execute(s) != 0)
		die("execute: %s", mysql_stmt_error(s));
}

static void
bind_str(MYSQL_BIND *b, const char *s, unsigned long *len)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_STRING;
	b->buffer = (void *)(uintptr_t)s;
	*len = (unsigned long)strlen(s);
	b->buffer_length = *len;
	b->length = len;
}

static void
bind_u64(MYSQL_BIND *b, unsigned long long *v)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = v;
	b->is_unsigned = 1;
}

/* The claim, its parameters bound to token (rewritten per claim). */
struct claim {
	MYSQL_STMT *stmt;
	MYSQL_BIND bind[4 + MAX_TYPES + PRIORITY_LEVELS];
	unsigned long len[4 + MAX_TYPES];
	char token[101];
	unsigned long long lock;
	long long level[LEVELS_SCANNED];	/* --priority */
	unsigned nlevels;
};

static void
bind_s64(MYSQL_BIND *b, long long *v)
{
	memset(b, 0, sizeof *b);
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = v;
}

/* Of the levels read, those with a due job, as jobrun keeps them
 * (read_levels looks at each with Q_LEVEL_DUE; here a plain query, its
 * cost not in the claims' figures). */
static void
keep_due_levels(MYSQL *m, struct claim *c)
{
	char sql[512];
	unsigned i, n = 0;
	MYSQL_RES *r;

	for (i = 0; i < c->nlevels; i++) {
		snprintf(sql, sizeof sql, "SELECT 1 FROM `%s` WHERE status ="
		    " 'pending' AND priority = %lld AND next_run_at <= NOW()"
		    " LIMIT 1", opt_table, c->level[i]);
		query(m, sql);
		if ((r = mysql_store_result(m)) == NULL)
			die("%s: %s", sql, mysql_error(m));
		if (mysql_num_rows(r) > 0)
			c->level[n++] = c->level[i];
		mysql_free_result(r);
	}
	c->nlevels = n;
}

/* --priority: the pending rows' levels, highest first, as jobrun reads
 * them (src/queue_priority.c, read_levels): Q_LEVEL with the level below
 * which to look, one look per level, at most PRIORITY_LEVELS. */
static void
read_levels(MYSQL *m, struct claim *c)
{
	MYSQL_STMT *s = prepare_q(m, Q_LEVEL | (opt_type_index ? Q_F_TYPE :
	    0), 1);
	MYSQL_BIND b[3], res[1];
	unsigned long len[2], rlen;
	long long below = PRIORITY_HIGH + 1LL, got;	/* as jobrun's */
	my_bool null;
	unsigned n = 0;
	int rc;

	if (opt_type_index) {
		bind_str(&b[n], types[0], &len[0]);
		n++;
		bind_str(&b[n], types[0], &len[1]);
		n++;
	}
	bind_s64(&b[n], &below);
	memset(res, 0, sizeof res);
	res[0].buffer_type = MYSQL_TYPE_LONGLONG;
	res[0].buffer = &got;
	res[0].length = &rlen;
	res[0].is_null = &null;
	if (mysql_stmt_bind_param(s, b) != 0 ||
	    mysql_stmt_bind_result(s, res) != 0)
		die("bind levels: %s", mysql_stmt_error(s));
	c->nlevels = 0;
	while (c->nlevels < LEVELS_SCANNED) {
		execute(s);
		rc = mysql_stmt_fetch(s);
		mysql_stmt_free_result(s);
		if (rc == MYSQL_NO_DATA)
			break;
		if (rc != 0 || null)
			die("read levels: %s", mysql_stmt_error(s));
		c->level[c->nlevels++] = below = got;
	}
	mysql_stmt_close(s);
	keep_due_levels(m, c);
	if (c->nlevels == 0)
		die("--priority: no level has a due job");
	if (c->nlevels > PRIORITY_LEVELS)
		c->nlevels = PRIORITY_LEVELS;
	/* The list's unused places repeat its last level, as jobrun's. */
	for (n = c->nlevels; n < PRIORITY_LEVELS; n++)
		c->level[n] = c->level[c->nlevels - 1];
}

static void
claim_prepare(MYSQL *m, struct claim *c)
{
	size_t i;
	unsigned which = opt_priority ? Q_CLAIM_PRIORITY : Q_CLAIM, nb;

	c->stmt = opt_type_index ? prepare_q(m, which | Q_F_TYPE, 1) :
	    prepare_q(m, which, ntypes);
	c->lock = LOCK_SECONDS;
	memset(c->token, 'x', sizeof c->token - 1);
	c->token[sizeof c->token - 1] = '\0';
	/* token, lock seconds twice (its Unix end and locked_until), the
	 * types; the type index's claim takes its one type twice. */
	bind_str(&c->bind[0], c->token, &c->len[0]);
	bind_u64(&c->bind[1], &c->lock);
	bind_u64(&c->bind[2], &c->lock);
	for (i = 0; i < (opt_type_index ? 2 : ntypes); i++)
		bind_str(&c->bind[3 + i], types[opt_type_index ? 0 : i],
		    &c->len[3 + i]);
	/* --priority: then the highest level (src/queue_priority.c). */
	nb = 3 + (unsigned)(opt_type_index ? 2 : ntypes);
	if (opt_priority) {
		read_levels(m, c);
		bind_s64(&c->bind[nb], &c->level[0]);
	}
	if (mysql_stmt_bind_param(c->stmt, c->bind) != 0)
		die("bind claim: %s", mysql_stmt_error(c->stmt));
}

/* A token like jobrun's "host:pid:random:seq". */
static void
claim_token(struct claim *c, const char *prefix, unsigned long long seq)
{
	int n = snprintf(c->token, sizeof c->token, "%s:%llu", prefix, seq);

	c->len[0] = n < 0 ? 0 : (unsigned long)n;
}

/* Claim one job; its id, or 0 when nothing was due. */
static unsigned long long
claim_one(struct claim *c)
{
	execute(c->stmt);
	if (mysql_stmt_affected_rows(c->stmt) == 0)
		return 0;
	return (unsigned long long)mysql_stmt_insert_id(c->stmt);
}

static void
token_prefix(char *out, size_t len)
{
	char host[64] = "localhost";

	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	snprintf(out, len, "%.40s:%ld:%06lx", host, (long)getpid(),
	    (unsigned long)(now_us()) & 0xffffff);
}

/* Deadlocks and lock wait timeouts met by concurrent drains: the claim
 * runs again, as jobrun's does (src/queue.c). */
static unsigned long conflicts;

/* Execute s; 1 after a deadlock or lock wait timeout, 0 when it ran. */
static int
execute_or_conflict(MYSQL_STMT *s)
{
	unsigned e;

	if (mysql_stmt_execute(s) == 0)
		return 0;
	e = mysql_stmt_errno(s);
	if (e != 1213 && e != 1205)
		die("execute: %s", mysql_stmt_error(s));
	conflicts++;
	return 1;
}

/* How drain claims: jobrun's claim (with its cursor; --plain without),
 * or a prototype (--skip-locked). */
struct claimer {
	MYSQL *m;
	struct claim plain;		/* jobrun's claim from the head */
	MYSQL_STMT *cursor_upd;		/* past the cursor: Q_F_AFTER */
	MYSQL_STMT *sel[2], *upd;	/* --skip-locked: [0] plain, [1] cursor */
	MYSQL_BIND cb[7 + MAX_TYPES], sb[2][3 + MAX_TYPES], ub[4], res[1];
	unsigned long clen[7 + MAX_TYPES], slen[2][3 + MAX_TYPES], idlen;
	unsigned long time_len;
	char time[40], idbuf[32];
	unsigned long long cur_id, sel_id, lock;
	int cursor_set;
	double head_us;			/* when the last plain claim started */
	unsigned long fallbacks, heads;
};

/* Bind the cursor's three parameters (time, time, id) at b; the time's
 * length is cl->time_len, set with each claimed job. */
static void
bind_cursor(struct claimer *cl, MYSQL_BIND *b)
{
	bind_str(&b[0], cl->time, &cl->time_len);
	b[0].buffer_length = sizeof cl->time;
	b[1] = b[0];
	bind_u64(&b[2], &cl->cur_id);
}

static void
claimer_init(MYSQL *m, struct claimer *cl)
{
	char sql[4096], upd[2048];
	size_t i, nb;
	int k;

	memset(cl, 0, sizeof *cl);
	cl->m = m;
	cl->lock = LOCK_SECONDS;
	claim_prepare(m, &cl->plain);
	if (!opt_plain && !opt_skip_locked) {
		/* jobrun's claim past the cursor: the plain claim's
		 * parameters, then time, time, id. */
		cl->cursor_upd = prepare_q(m, Q_CLAIM | Q_F_AFTER |
		    (opt_type_index ? Q_F_TYPE : 0), ntypes);
		nb = 3 + (opt_type_index ? 2 : ntypes);
		memcpy(cl->cb, cl->plain.bind, nb * sizeof *cl->cb);
		bind_cursor(cl, &cl->cb[nb]);
		if (mysql_stmt_bind_param(cl->cursor_upd, cl->cb) != 0)
			die("bind: %s", mysql_stmt_error(cl->cursor_upd));
	}
	if (!opt_skip_locked)
		return;
	for (k = 0; k < 2 - opt_plain; k++) {
		MYSQL_BIND *b = cl->sb[k];
		unsigned long *len = cl->slen[k];

		if (bench_skip_locked(opt_table, ntypes, k, sql, sizeof sql,
		    upd, sizeof upd) != 0)
			die("skip-locked claim too long");
		cl->sel[k] = prepare_text(m, sql);
		if (k == 1) {
			bind_cursor(cl, b);
			b += 3;
			len += 3;
		}
		for (i = 0; i < ntypes; i++)
			bind_str(&b[i], types[i], &len[i]);
		if (mysql_stmt_bind_param(cl->sel[k], cl->sb[k]) != 0)
			die("bind: %s", mysql_stmt_error(cl->sel[k]));
		memset(cl->res, 0, sizeof cl->res);
		cl->res[0].buffer_type = MYSQL_TYPE_STRING;
		cl->res[0].buffer = cl->idbuf;
		cl->res[0].buffer_length = sizeof cl->idbuf;
		cl->res[0].length = &cl->idlen;
		if (mysql_stmt_bind_result(cl->sel[k], cl->res) != 0)
			die("bind: %s", mysql_stmt_error(cl->sel[k]));
	}
	cl->upd = prepare_text(m, upd);
	cl->ub[0] = cl->plain.bind[0];
	bind_u64(&cl->ub[1], &cl->lock);
	bind_u64(&cl->ub[2], &cl->lock);
	bind_u64(&cl->ub[3], &cl->sel_id);
	if (mysql_stmt_bind_param(cl->upd, cl->ub) != 0)
		die("bind: %s", mysql_stmt_error(cl->upd));
}

/* --skip-locked: the id the SELECT ... SKIP LOCKED found (0: none), or
 * -1 after a conflict. */
static long long
skip_locked_select(struct claimer *cl, MYSQL_STMT *sel)
{
	int rc;

	if (execute_or_conflict(sel))
		return -1;
	rc = mysql_stmt_fetch(sel);
	if (rc == MYSQL_NO_DATA) {
		mysql_stmt_free_result(sel);
		return 0;
	}
	if (rc != 0)
		die("fetch: %s", mysql_stmt_error(sel));
	cl->idbuf[cl->idlen < sizeof cl->idbuf ? cl->idlen :
	    sizeof cl->idbuf - 1] = '\0';
	mysql_stmt_free_result(sel);
	return strtoll(cl->idbuf, NULL, 10);
}

static unsigned long long
skip_locked_claim(struct claimer *cl)
{
	long long id;

	for (;;) {
		query(cl->m, "START TRANSACTION");
		id = 0;
		if (cl->cursor_set) {
			id = skip_locked_select(cl, cl->sel[1]);
			if (id == 0)
				cl->fallbacks++;
		}
		if (id == 0)
			id = skip_locked_select(cl, cl->sel[0]);
		if (id > 0) {
			cl->sel_id = (unsigned long long)id;
			if (execute_or_conflict(cl->upd))
				id = -1;
		}
		if (id < 0) {
			query(cl->m, "ROLLBACK");
			continue;
		}
		query(cl->m, "COMMIT");
		return (unsigned long long)id;
	}
}

/* Claim the next job; its id, or 0 when nothing is due. */
static unsigned long long
claimer_claim(struct claimer *cl)
{
	MYSQL_STMT *s;

	if (opt_skip_locked)
		return skip_locked_claim(cl);
	/* As src/queue.c: past the cursor while the last claim from the
	 * head is younger than QUEUE_CURSOR_MS, else from the head. */
	if (cl->cursor_set && now_us() - cl->head_us >= QUEUE_CURSOR_MS * 1e3)
		cl->cursor_set = 0;
	if (cl->cursor_set) {
		while (execute_or_conflict(cl->cursor_upd))
			;
		if (mysql_stmt_affected_rows(cl->cursor_upd) != 0)
			return (unsigned long long)
			    mysql_stmt_insert_id(cl->cursor_upd);
		cl->fallbacks++;
	}
	cl->head_us = now_us();
	cl->heads++;
	s = cl->plain.stmt;
	while (execute_or_conflict(s))
		;
	if (mysql_stmt_affected_rows(s) == 0)
		return 0;
	return (unsigned long long)mysql_stmt_insert_id(s);
}

static void
claimer_close(struct claimer *cl)
{
	int k;

	mysql_stmt_close(cl->plain.stmt);
	if (cl->cursor_upd != NULL)
		mysql_stmt_close(cl->cursor_upd);
	for (k = 0; k < 2; k++)
		if (cl->sel[k] != NULL)
			mysql_stmt_close(cl->sel[k]);
	if (cl->upd != NULL)
		mysql_stmt_close(cl->upd);
}

static int
cmd_drain(void)
{
	MYSQL *m = connect_db(!opt_rr);
	struct claimer cl;
	char cols[11][256], prefix[80];
	MYSQL_STMT *rd, *ok = prepare_q(m, Q_SUCCESS, 1);
	MYSQL_BIND rb[2], okb[2], res[11];
	unsigned long rlen[2], oklen[2], lens[11];
	my_bool nulls[11];
	unsigned long long id = 0, n = 0;
	double t0, t1, t2, t3, tc = 0, tr = 0, tm = 0, start, total;
	int i, rc, ncols = 11;
	FILE *claims_out = NULL;

	claimer_init(m, &cl);
	/* jobrun's read: the job, next_run_at for the cursor, its start
	 * latency, and the seconds to its deadline (NULL without sql/009)
	 * and its age. */
	rd = prepare_q(m, Q_READ, 1);
	if (mysql_stmt_field_count(rd) != (unsigned)ncols)
		die("Q_READ has %u columns, not %d", mysql_stmt_field_count(rd),
		    ncols);
	bind_u64(&rb[0], &id);
	bind_str(&rb[1], cl.plain.token, &rlen[1]);
	rb[1].length = &cl.plain.len[0];
	bind_u64(&okb[0], &id);
	bind_str(&okb[1], cl.plain.token, &oklen[1]);
	okb[1].length = &cl.plain.len[0];
	if (mysql_stmt_bind_param(rd, rb) != 0 ||
	    mysql_stmt_bind_param(ok, okb) != 0)
		die("bind: %s", mysql_error(m));
	memset(res, 0, sizeof res);
	for (i = 0; i < ncols; i++) {
		res[i].buffer_type = MYSQL_TYPE_STRING;
		res[i].buffer = cols[i];
		res[i].buffer_length = sizeof cols[i];
		res[i].length = &lens[i];
		res[i].is_null = &nulls[i];
	}
	if (mysql_stmt_bind_result(rd, res) != 0)
		die("bind result: %s", mysql_stmt_error(rd));
	token_prefix(prefix, sizeof prefix);
	if (opt_claims_out != NULL &&
	    (claims_out = fopen(opt_claims_out, "w")) == NULL)
		die("%s: %s", opt_claims_out, strerror(errno));
	start = now_us();
	for (;;) {
		claim_token(&cl.plain, prefix, n + 1);
		t0 = now_us();
		id = claimer_claim(&cl);
		t1 = now_us();
		tc += t1 - t0;
		if (claims_out != NULL)
			fprintf(claims_out, "%.0f\n", t1 - t0);
		if (id == 0)
			break;
		while (execute_or_conflict(rd))
			;
		rc = mysql_stmt_fetch(rd);
		if (rc != 0 && rc != MYSQL_DATA_TRUNCATED)
			die("job %llu: read found no row", id);
		mysql_stmt_free_result(rd);
		if (!opt_plain) {
			if (nulls[7] || lens[7] >= sizeof cl.time)
				die("job %llu: no next_run_at", id);
			memcpy(cl.time, cols[7], lens[7]);
			cl.time[lens[7]] = '\0';
			cl.time_len = lens[7];
			cl.cur_id = id;
			cl.cursor_set = 1;
		}
		t2 = now_us();
		/* A deadlock with another runner's claim is run again, as
		 * jobrun's statements are (src/queue.c). */
		if (opt_mark_trx)
			query(m, "START TRANSACTION");
		while (execute_or_conflict(ok))
			;
		if (mysql_stmt_affected_rows(ok) != 1)
			die("job %llu: mark changed no row", id);
		if (opt_mark_trx)
			query(m, "COMMIT");
		t3 = now_us();
		tr += t2 - t1;
		tm += t3 - t2;
		n++;
	}
	total = now_us() - start;
	if (claims_out != NULL && fclose(claims_out) != 0)
		die("%s: %s", opt_claims_out, strerror(errno));
	printf("jobs=%llu seconds=%.3f jobs_per_s=%.1f us_per_job=%.1f "
	    "us_claim=%.1f us_read=%.1f us_mark=%.1f conflicts=%lu "
	    "cursor_fallbacks=%lu head_claims=%lu\n", n, total / 1e6,
	    n ? (double)n / (total / 1e6) : 0, n ? total / (double)n : 0,
	    tc / (double)(n + 1), n ? tr / (double)n : 0,
	    n ? tm / (double)n : 0, conflicts, cl.fallbacks, cl.heads);
	claimer_close(&cl);
	mysql_stmt_close(rd);
	mysql_stmt_close(ok);
	mysql_close(m);
	return 0;
}

/* The session's Handler_read_* counters: [0] all, [1] _key, [2] _next. */
static void
handler_reads(MYSQL *m, unsigned long long out[3])
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long long v;

	query(m, "SHOW SESSION STATUS LIKE 'Handler_read%'");
	r = mysql_store_result(m);
	if (r == NULL)
		die("SHOW STATUS: %s", mysql_error(m));
	out[0] = out[1] = out[2] = 0;
	while ((row = mysql_fetch_row(r)) != NULL) {
		v = strtoull(row[1], NULL, 10);
		out[0] += v;
		if (strcmp(row[0], "Handler_read_key") == 0)
			out[1] = v;
		else if (strcmp(row[0], "Handler_read_next") == 0)
			out[2] = v;
	}
	mysql_free_result(r);
}

/* What reading the counters adds to them. */
static void
handler_overhead(MYSQL *m, unsigned long long over[3])
{
	unsigned long long a[3], b[3];
	int i;

	handler_reads(m, a);
	handler_reads(m, b);
	for (i = 0; i < 3; i++)
		over[i] = b[i] - a[i];
}

/* Put claimed rows back: pending again, as before the claim. */
static void
put_back(MYSQL *m)
{
	char sql[512];

	snprintf(sql, sizeof sql, "UPDATE `%s` SET status = 'pending', "
	    "locked_by = NULL, locked_until = NULL, attempts = 0 "
	    "WHERE status = 'processing'", opt_table);
	query(m, sql);
}

struct timing {
	double *us;
	size_t n, cap;
	unsigned long long reads[3];
};

static void
timing_add(struct timing *t, double us)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->us = realloc(t->us, t->cap * sizeof *t->us);
		if (t->us == NULL)
			die("out of memory");
	}
	t->us[t->n++] = us;
}

static void
timing_print(struct timing *t, const char *extra)
{
	double sum = 0;
	size_t i;

	if (t->n == 0)
		die("no claim succeeded: nothing due?");
	for (i = 0; i < t->n; i++)
		sum += t->us[i];
	qsort(t->us, t->n, sizeof *t->us, cmp_double);
	printf("claims=%zu us_median=%.1f us_mean=%.1f us_p10=%.1f "
	    "us_p90=%.1f reads_per_claim=%.2f read_key_per_claim=%.2f "
	    "read_next_per_claim=%.2f%s\n", t->n, percentile(t->us, t->n, 50),
	    sum / (double)t->n, percentile(t->us, t->n, 10),
	    percentile(t->us, t->n, 90),
	    (double)t->reads[0] / (double)t->n,
	    (double)t->reads[1] / (double)t->n,
	    (double)t->reads[2] / (double)t->n, extra);
	free(t->us);
}

static int
cmd_claims(unsigned long count)
{
	MYSQL *m = connect_db(!opt_rr);
	struct claim c;
	struct timing t = { 0 };
	unsigned long long over[3], h0[3], h1[3], seq = 0, id;
	unsigned long in_round;
	char prefix[80];
	double t0, start = now_us();
	int i, rounds = 0;
	unsigned long long l0[3], l1[3], misses = 0;
	char extra[96 + 12 * PRIORITY_LEVELS];
	size_t o;
	unsigned k;

	handler_overhead(m, over);
	put_back(m);
	handler_reads(m, l0);
	claim_prepare(m, &c);
	handler_reads(m, l1);
	token_prefix(prefix, sizeof prefix);
	while (t.n < count) {
		size_t before = t.n;

		handler_reads(m, h0);
		for (in_round = 0; t.n < count && (opt_round == 0 ||
		    in_round < opt_round); in_round++) {
			claim_token(&c, prefix, ++seq);
			if (opt_in_trx)
				query(m, "START TRANSACTION");
			t0 = now_us();
			id = claim_one(&c);
			if (id != 0 || opt_misses)
				timing_add(&t, now_us() - t0);
			misses += id == 0;
			if (opt_in_trx)
				query(m, "ROLLBACK");
			if ((id == 0 && !opt_misses) || (opt_max_seconds > 0 &&
			    now_us() - start > (double)opt_max_seconds * 1e6))
				break;
		}
		handler_reads(m, h1);
		/* A round that ended on "nothing due" counted that claim's
		 * reads too; fine: a real drain ends the same way. */
		for (i = 0; i < 3; i++)
			t.reads[i] += h1[i] - h0[i] - over[i];
		if (!opt_in_trx)
			put_back(m);
		rounds++;
		if (t.n == before)
			die("no job is due");
		if (opt_max_seconds > 0 &&
		    now_us() - start > (double)opt_max_seconds * 1e6)
			break;
	}
	o = (size_t)snprintf(extra, sizeof extra, " rounds=%d misses=%llu",
	    rounds, misses);
	if (opt_priority) {
		/* The levels' looks: what claim_prepare's read_levels
		 * read (a prepare reads no row). */
		o += (size_t)snprintf(extra + o, sizeof extra - o,
		    " level_reads=%llu levels=", l1[0] - l0[0] - over[0]);
		for (k = 0; k < c.nlevels; k++)
			o += (size_t)snprintf(extra + o, sizeof extra - o,
			    "%s%lld", k ? "," : "", c.level[k]);
	}
	timing_print(&t, extra);
	mysql_stmt_close(c.stmt);
	mysql_close(m);
	return 0;
}

/* Seed 000's claim: PollingJobService::claim, as ThinkPHP sends it. */
static int
cmd_seedclaims(unsigned long count)
{
	MYSQL *m = connect_db(0);
	MYSQL_STMT *sel, *upd;
	MYSQL_BIND sb[2], ub[5], *res;
	unsigned long slen[2], ulen[5], *lens;
	char sql[1024], now[32], until[32], worker[80], (*cols)[256];
	unsigned long long over[3], h0[3], h1[3], id;
	struct timing t = { 0 };
	double t0, start = now_us();
	time_t clock_now;
	unsigned i, ncols, empty = 0;
	int rc;

	snprintf(sql, sizeof sql, "SELECT * FROM `%s` WHERE `status` = ? AND "
	    "`next_run_at` <= ? ORDER BY `id` ASC LIMIT 1 FOR UPDATE",
	    opt_table);
	sel = prepare_text(m, sql);
	snprintf(sql, sizeof sql, "UPDATE `%s` SET `status` = ?, "
	    "`locked_by` = ?, `locked_until` = ?, `updated_at` = ?, "
	    "`attempts` = `attempts` + 1 WHERE `id` = ?", opt_table);
	upd = prepare_text(m, sql);
	token_prefix(worker, sizeof worker);
	bind_str(&sb[0], "pending", &slen[0]);
	bind_str(&sb[1], now, &slen[1]);
	bind_str(&ub[0], "processing", &ulen[0]);
	bind_str(&ub[1], worker, &ulen[1]);
	bind_str(&ub[2], until, &ulen[2]);
	bind_str(&ub[3], now, &ulen[3]);
	bind_u64(&ub[4], &id);
	/* SELECT *: every column is fetched, as the ORM does. */
	ncols = mysql_stmt_field_count(sel);
	res = calloc(ncols, sizeof *res);
	lens = calloc(ncols, sizeof *lens);
	cols = calloc(ncols, sizeof *cols);
	if (res == NULL || lens == NULL || cols == NULL)
		die("out of memory");
	for (i = 0; i < ncols; i++) {
		res[i].buffer_type = MYSQL_TYPE_STRING;
		res[i].buffer = cols[i];
		res[i].buffer_length = sizeof cols[i];
		res[i].length = &lens[i];
	}
	if (mysql_stmt_bind_result(sel, res) != 0)
		die("bind result: %s", mysql_stmt_error(sel));
	handler_overhead(m, over);
	put_back(m);
	while (t.n < count) {
		clock_now = time(NULL);
		strftime(now, sizeof now, "%Y-%m-%d %H:%M:%S",
		    localtime(&clock_now));
		clock_now += 300;
		strftime(until, sizeof until, "%Y-%m-%d %H:%M:%S",
		    localtime(&clock_now));
		slen[1] = (unsigned long)strlen(now);
		ulen[2] = (unsigned long)strlen(until);
		ulen[3] = slen[1];
		if (mysql_stmt_bind_param(sel, sb) != 0 ||
		    mysql_stmt_bind_param(upd, ub) != 0)
			die("bind: %s", mysql_error(m));
		handler_reads(m, h0);
		t0 = now_us();
		query(m, "START TRANSACTION");
		execute(sel);
		rc = mysql_stmt_fetch(sel);
		if (rc == MYSQL_NO_DATA) {
			/* All claimed: put them back, as claims does. */
			query(m, "COMMIT");
			if (++empty > 1)
				die("no job is due");
			put_back(m);
			continue;
		}
		if (rc != 0 && rc != MYSQL_DATA_TRUNCATED)
			die("fetch: %s", mysql_stmt_error(sel));
		empty = 0;
		cols[0][lens[0] < sizeof cols[0] ? lens[0] :
		    sizeof cols[0] - 1] = '\0';
		id = strtoull(cols[0], NULL, 10);
		mysql_stmt_free_result(sel);
		execute(upd);
		query(m, "COMMIT");
		timing_add(&t, now_us() - t0);
		handler_reads(m, h1);
		for (i = 0; i < 3; i++)
			t.reads[i] += h1[i] - h0[i] - over[i];
		if (opt_max_seconds > 0 &&
		    now_us() - start > (double)opt_max_seconds * 1e6)
			break;
	}
	put_back(m);
	timing_print(&t, "");
	free(res);
	free(lens);
	free(cols);
	mysql_stmt_close(sel);
	mysql_stmt_close(upd);
	mysql_close(m);
	return 0;
}

static void
set_types(char *list)
{
	char *p, *save = NULL;

	ntypes = 0;
	for (p = strtok_r(list, ",", &save); p != NULL;
	    p = strtok_r(NULL, ",", &save)) {
		if (ntypes == MAX_TYPES)
			die("at most %d types", MAX_TYPES);
		types[ntypes++] = p;
	}
	if (ntypes == 0)
		die("--types: empty");
}

static unsigned long
number(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0')
		die("%s: not a number: %s", what, s);
	return v;
}

int
main(int argc, char **argv)
{
	static char default_types[] = "work";
	int i, rc;

	set_types(default_types);
	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		char *a = argv[i];

		if (strncmp(a, "--socket=", 9) == 0)
			opt_socket = a + 9;
		else if (strncmp(a, "--database=", 11) == 0)
			opt_db = a + 11;
		else if (strncmp(a, "--table=", 8) == 0)
			opt_table = a + 8;
		else if (strncmp(a, "--types=", 8) == 0)
			set_types(a + 8);
		else if (strcmp(a, "--type-index") == 0)
			opt_type_index = 1;
		else if (strcmp(a, "--in-trx") == 0)
			opt_in_trx = 1;
		else if (strcmp(a, "--plain") == 0)
			opt_plain = 1;
		else if (strcmp(a, "--mark-trx") == 0)
			opt_mark_trx = 1;
		else if (strcmp(a, "--priority") == 0)
			opt_priority = 1;
		else if (strcmp(a, "--misses") == 0)
			opt_misses = 1;
		else if (strncmp(a, "--claims-out=", 13) == 0)
			opt_claims_out = a + 13;
		else if (strcmp(a, "--skip-locked") == 0)
			opt_skip_locked = 1;
		else if (strcmp(a, "--repeatable-read") == 0)
			opt_rr = 1;
		else if (strncmp(a, "--round=", 8) == 0)
			opt_round = number(a + 8, "--round");
		else if (strncmp(a, "--max-seconds=", 14) == 0)
			opt_max_seconds = number(a + 14, "--max-seconds");
		else
			die("unknown option %s", a);
	}
	if (opt_socket == NULL || opt_db == NULL || i >= argc)
		die("usage: floor --socket=PATH --database=NAME [options] "
		    "drain | claims K | seedclaims K");
	if (opt_type_index && ntypes != 1)
		die("--type-index takes one type");
	if (opt_priority && strcmp(argv[i], "claims") != 0)
		die("--priority: with claims only");
	if (strcmp(argv[i], "drain") == 0)
		rc = cmd_drain();
	else if (strcmp(argv[i], "claims") == 0 && i + 1 < argc)
		rc = cmd_claims(number(argv[i + 1], "claims"));
	else if (strcmp(argv[i], "seedclaims") == 0 && i + 1 < argc)
		rc = cmd_seedclaims(number(argv[i + 1], "seedclaims"));
	else
		die("unknown command %s", argv[i]);
	mysql_library_end();
	return rc;
}
