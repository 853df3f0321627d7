/*
 * flow.c - flow control: concurrency caps, rate limits, pause and resume,
 * kept in the database so that every runner on every host sees one state.
 *
 * The control table (sql/003_flow.sql, the job table's name + "_flow")
 * has a row per type: its pause flag, its rate limit's token bucket and a
 * count of claims made through it.  Nothing in it is a slot: the slots of
 * a capped type ARE its jobs in processing, counted through
 * idx_type_status when a claim is about to be made.  A slot is therefore
 * taken by the claim's own UPDATE, renewed with the job's lock, freed by
 * its mark and by recovery, and cannot leak or be freed twice: there is
 * nothing to free.  A heartbeat changes no status and counts nothing.
 *
 * A claim of a capped or rated type runs in one transaction: lock the
 * type's control row and count its processing rows (one SELECT ... FOR
 * UPDATE), refill and read its bucket (by the server's clock,
 * QUEUE_NOW_EPOCH), claim only among the types that have room, and write
 * the claimed type's row (tokens, claims + the jobs) before COMMIT.  The
 * row lock serialises the claimers of that type on one server, and under
 * READ COMMITTED (db.c) each count is a new read made after the lock was
 * granted, so it sees every claim committed before.  On Galera a row lock
 * is local to its node, but the write of the row is certified: of two
 * claimers on two nodes that both counted room for the same type, one
 * loses certification (1213) and its whole transaction is run again.  A
 * deadlock or conflict anywhere rolls the whole transaction back (the
 * claim with it, so no attempt is spent), and flow_claim starts it
 * again.  Galera may also roll the transaction back between two statements,
 * after which a prepared statement runs on its own in autocommit: a claim
 * whose reply says no transaction is open is given back before any handler
 * sees it.  A type's row is made by its first claim, inside the
 * transaction.  A keyed type with no cap or rate of its own, off Galera,
 * reads its row under a shared lock and does not write it: its claimers
 * take turns by its keys' buckets instead (flow_key.c), and let go of the
 * bucket after the transaction.  Statements run in the queue's
 * transaction helper (queue_trx).
 *
 * Waiting for a full type costs the server little, however many slots
 * and runners wait.  A type found full at its last claim is looked at
 * first, without a lock (one read: queue_type_load, or flow_keys_pick for
 * a keyed type): only when it shows room is the transaction started.  The
 * looks back off (FLOW_POLL_MS, doubled for each look that found it full),
 * and in a run one slot looks while the others wait; the slot whose job
 * of the type ended claims again at once, without a look (flow_job_done).
 *
 * A job in processing whose lock expired still holds its slot (its runner
 * may only be slow) until recovery, which a run that finds a type full
 * runs at most once a second: a dead runner's slots come back once its
 * locks expire.
 *
 * Pause is read before every claim (a row per type), so runs stop starting
 * a paused type's jobs within one claim; a limited type's flag is read
 * again under its row lock.  Types without limits claim as without flow.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow.h"
#include "flow_key.h"
#include "queue.h"
#include "util.h"

/* A full type is looked at again after this long (ms, plus up to as
 * much again at random, so runners do not look in step), doubled for
 * each look that found it full, up to FLOW_POLL_MAX_SHIFT doublings:
 * the places the run's own jobs free it claims again at once. */
#define FLOW_POLL_MS 20
#define FLOW_POLL_MAX_SHIFT 4
/* A limited type whose claim found no due job is not claimed again for
 * this long (ms): a claim of one type that has none scans the due jobs of
 * every other type in idx_pick, which a run mixing plain and limited
 * types would pay at every claim.  A job of it due meanwhile waits at
 * most this long more, as one behind the cursor does (queue.c). */
#define FLOW_DRY_MS 1000
#define FLOW_RECOVER_MS 1000	/* a full type's recovery, at most */

enum flow_stmt {
	F_PROBE, F_PAUSED, F_ENSURE, F_LOCK, F_LOCK_UNCOUNTED, F_LOCK_SHARED,
	F_TAKE,
	F_SET_PAUSE, F_ROWS, F_SHAPE,
	F_N
};

/* %1$s the job table, %2$s the control table, both quoted
 * (QUEUE_JOBS_TABLE, QUEUE_OTHER_TABLE). */
static const char *const templates[F_N] = {
	[F_PROBE] = "SELECT type, paused, tokens, refilled_at, claims,"
	    " updated_at FROM %2$s WHERE FALSE",
	[F_PAUSED] = "SELECT type FROM %2$s WHERE paused <> 0",
	/* Changes nothing when the row is there (affected rows 0). */
	[F_ENSURE] = "INSERT INTO %2$s (type, paused, tokens, refilled_at,"
	    " claims, updated_at) VALUES (?, 0, 0, 0, 0, NOW())"
	    " ON DUPLICATE KEY UPDATE type = type",
	/* The row, and the type's jobs in processing (the queue's count,
	 * which reads no row).  The control row is a const table, read and
	 * locked while the statement is optimised; the subquery runs when
	 * the row is sent, after the lock was granted, and locks nothing:
	 * under READ COMMITTED it sees every claim committed before.
	 * (name, name, name) */
	[F_LOCK] = "SELECT paused, tokens, refilled_at, " QUEUE_NOW_EPOCH ", "
	    QUEUE_RUNNING_SQL " FROM %2$s WHERE type = ? FOR UPDATE",
	/* The same for a type without a cap, which needs no count (a
	 * keyed type's choice reads its processing rows itself). (name) */
	[F_LOCK_UNCOUNTED] = "SELECT paused, tokens, refilled_at, "
	    QUEUE_NOW_EPOCH ", 0 FROM %2$s WHERE type = ? FOR UPDATE",
	/* The same, shared, for a keyed type claimed under its keys'
	 * bucket locks (flow_key.c): its claimers do not wait for each other
	 * here, and a pause's write waits for the claims in flight. (name) */
	[F_LOCK_SHARED] = "SELECT paused, tokens, refilled_at, "
	    QUEUE_NOW_EPOCH ", 0 FROM %2$s WHERE type = ? LOCK IN SHARE MODE",
	/* (tokens, refilled_at, jobs, type): the write is what makes two
	 * claimers on two Galera nodes conflict. */
	[F_TAKE] = "UPDATE %2$s SET tokens = ?, refilled_at = ?,"
	    " claims = claims + ?, updated_at = NOW() WHERE type = ?",
	[F_SET_PAUSE] = "INSERT INTO %2$s (type, paused, tokens, refilled_at,"
	    " claims, updated_at) VALUES (?, ?, 0, 0, 0, NOW())"
	    " ON DUPLICATE KEY UPDATE paused = VALUES(paused),"
	    " updated_at = NOW()",
	[F_ROWS] = "SELECT type, paused, tokens, refilled_at, " QUEUE_NOW_EPOCH
	    " FROM %2$s ORDER BY type",
	/* (name, name): the primary key's columns, the type column's. */
	[F_SHAPE] = "SELECT (SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY"
	    " SEQ_IN_INDEX) FROM information_schema.STATISTICS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
	    " AND INDEX_NAME = 'PRIMARY'), (SELECT COLUMN_TYPE"
	    " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
	    " AND TABLE_NAME = ? AND COLUMN_NAME = 'type')",
};

static const char *const purposes[F_N] = {
	[F_PROBE] = "check the control table",
	[F_PAUSED] = "read paused types",
	[F_ENSURE] = "add a type's control row",
	[F_LOCK] = "lock a type's control row",
	[F_LOCK_UNCOUNTED] = "lock a type's control row",
	[F_LOCK_SHARED] = "lock a type's control row",
	[F_TAKE] = "count a start",
	[F_SET_PAUSE] = "set a type's pause flag",
	[F_ROWS] = "read the control table",
	[F_SHAPE] = "read the control table's indexes",
};

/* One type of the run's claims, as the control row had it this claim. */
struct flow_type {
	const char *name;
	const struct cfg_flow *limits;	/* NULL: none here */
	int paused;
	int held;		/* full or out of starts this claim */
	int looked;		/* held by a look, not the transaction */
	int due_known;		/* due was read, by a look or the lock */
	int due;		/* it has a due job */
	uint64_t running;	/* its jobs in processing, as judged */
	int64_t wait_ms;	/* when it may have room again */
	/* Kept from claim to claim: */
	int full;		/* at its cap when last judged */
	int keys_full;		/* keyed: due jobs, every key busy */
	int filled;		/* a claim of this run just took its last place */
	unsigned misses;	/* found full since a look last found room */
	int64_t dry_until;	/* its claim found no due job: none before */
	double tokens, now;	/* the bucket, refilled to now */
};

struct flow {
	struct queue *q;
	const struct cfg *cfg;
	char name[CFG_NAME_MAX + 1];
	char table[2 * CFG_NAME_MAX + 8];
	struct queue_stmts *set;
	struct flow_keys *keys;	/* the keyed types' choices (flow_key.c) */
	int keyed_first;	/* this claim tries the keyed types first */
	int64_t recover_at;	/* no recovery for a full type before */
	uint64_t recovered;	/* jobs it gave back in this run */
	struct flow_type *types;
	size_t ntypes;
};

uint64_t
flow_recovered(const struct flow *f)
{
	return f != NULL ? f->recovered : 0;
}

const char *
flow_table(const struct flow *f)
{
	return f->name;
}

void
flow_close(struct flow *f)
{
	if (f == NULL)
		return;
	queue_stmts_close(f->set);
	flow_keys_close(f->keys);
	free(f->types);
	free(f);
}

/* A type name the control table's column cannot hold says so. */
static enum db_status
hint(struct flow *f, enum db_status st, char *err, size_t errlen)
{
	size_t n;

	if (st != DB_OK && queue_last_errno(f->q) == ER_DATA_TOO_LONG) {
		n = strlen(err);
		snprintf(err + n, errlen - n, " (a type name over 64 bytes: "
		    "apply " FLOW_TYPE_MIGRATION ")");
	}
	return st;
}

static enum db_status
run(struct flow *f, enum flow_stmt which, const struct db_arg *args,
    unsigned nargs, char *err, size_t errlen)
{
	return hint(f, queue_stmts_run(f->set, which, args, nargs, err,
	    errlen), err, errlen);
}

/* Run which and read its one row of ncols columns (malloc'ed). */
static enum db_status
one(struct flow *f, enum flow_stmt which, const struct db_arg *args,
    unsigned nargs, char **cols, unsigned ncols, int *found, char *err,
    size_t errlen)
{
	return hint(f, queue_stmts_one(f->set, which, args, nargs, cols,
	    ncols, found, err, errlen), err, errlen);
}

static double
number(const char *s)
{
	return s != NULL ? strtod(s, NULL) : 0;
}

/* --- set-up --------------------------------------------------------------- */

/* The statements whose privileges jobrun uses on the control table
 * (SELECT, INSERT, UPDATE), the look first. */
static const size_t uses[] = { F_PROBE, F_ENSURE, F_TAKE };

/* A flow of q's control table, its statements not prepared yet; NULL
 * when the job table's name leaves no room for the suffix (no such
 * table can exist). */
static struct flow *
flow_new(struct queue *q, const struct cfg *cfg)
{
	struct flow *f = xcalloc(1, sizeof *f);
	int n;

	f->q = q;
	f->cfg = cfg;
	n = snprintf(f->name, sizeof f->name, "%s" FLOW_SUFFIX, queue_name(q));
	if (n < 0 || (size_t)n >= sizeof f->name) {
		free(f);
		return NULL;
	}
	db_quote_ident(f->name, f->table, sizeof f->table);
	f->set = queue_stmts_open(q, templates, purposes, NULL, F_N, f->table);
	f->keys = cfg != NULL ? flow_keys_open(q, cfg) : NULL;
	return f;
}

/* The control table's reach: with need, every privilege jobrun uses
 * tried, else only the look (a run without limits prepares one
 * statement); how it stands into *a, said when not reached. */
static enum db_status
reach(struct queue *q, struct flow *f, int need, struct queue_access *a,
    char *err, size_t errlen)
{
	struct queue_feature feature = { { NULL, NULL }, FLOW_PRIVILEGES,
	    FLOW_MIGRATION };
	enum db_status st = DB_OK;
	char name[2 * CFG_NAME_MAX];

	a->reach = QUEUE_ABSENT;
	if (f != NULL)
		st = queue_stmts_reach(f->set, uses, need ? 3 : 1, &a->reach,
		    err, errlen);
	errf(name, sizeof name, "%s" FLOW_SUFFIX, queue_name(q));
	feature.tables[0] = name;
	if (st == DB_OK && a->reach != QUEUE_REACHED && need)
		queue_access_say(q, a->reach, &feature, a);
	return st;
}

enum db_status
flow_access(struct queue *q, struct queue_access *a, char *err,
    size_t errlen)
{
	struct flow *f = flow_new(q, NULL);
	enum db_status st = reach(q, f, 1, a, err, errlen);

	flow_close(f);
	return st;
}

enum db_status
flow_open(struct queue *q, const struct cfg *cfg, const char *needs,
    struct flow **out, char *err, size_t errlen)
{
	struct flow *f = flow_new(q, cfg);
	struct queue_access a;
	enum db_status st;
	char who[512];

	*out = NULL;
	if (needs == NULL && flow_needs(cfg, who, sizeof who))
		needs = who;
	st = reach(q, f, needs != NULL, &a, err, errlen);
	if (st == DB_OK && a.reach != QUEUE_REACHED && needs != NULL) {
		errf(err, errlen, "%s needs the control table: %s; %s", needs,
		    a.why, a.fix);
		st = a.status;
	}
	if (st == DB_OK && a.reach == QUEUE_REACHED)
		st = flow_keys_check(f->keys, err, errlen);
	/* Absent or not granted, and not needed: the plain claim. */
	if (st != DB_OK || a.reach != QUEUE_REACHED) {
		flow_close(f);
		return st;
	}
	*out = f;
	return DB_OK;
}

/* --- the claim ------------------------------------------------------------ */

/* Byte order, so that every claimer locks several control rows in one
 * order and no two deadlock on them. */
static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct flow_type *)a)->name,
	    ((const struct flow_type *)b)->name);
}

/* The run's types, once, with their limits; reset for a claim. */
static void
set_types(struct flow *f, const char *const *types, size_t ntypes)
{
	const struct cfg_type *t;
	size_t i;

	if (f->types == NULL || f->ntypes != ntypes) {
		free(f->types);
		f->types = xcalloc(ntypes, sizeof *f->types);
		f->ntypes = ntypes;
		for (i = 0; i < ntypes; i++) {
			t = cfg_find_type(f->cfg, types[i]);
			f->types[i].name = types[i];
			if (t != NULL && (t->flow.concurrency ||
			    t->flow.rate || t->flow.key != NULL))
				f->types[i].limits = &t->flow;
		}
		qsort(f->types, ntypes, sizeof *f->types, by_name);
	}
	for (i = 0; i < ntypes; i++) {
		f->types[i].paused = f->types[i].held = 0;
		f->types[i].looked = f->types[i].due = 0;
		f->types[i].due_known = 0;
		f->types[i].wait_ms = 0;
	}
}

static struct flow_type *
find(struct flow *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->ntypes; i++)
		if (strcmp(f->types[i].name, name) == 0)
			return &f->types[i];
	return NULL;
}

/* Whether limited type t takes no part in this claim: paused, or its
 * claim found no due job a moment ago. */
static int
sits_out(const struct flow_type *t, int64_t now)
{
	return t->paused || (t->limits != NULL && t->dry_until > now);
}

/* Which of the run's types are paused now. */
static enum db_status
read_paused(struct flow *f, char *err, size_t errlen)
{
	struct flow_type *t;
	enum db_status st;
	char *col = NULL;
	int rc;

	if ((st = run(f, F_PAUSED, NULL, 0, err, errlen)) != DB_OK)
		return st;
	while ((rc = queue_stmts_fetch(f->set, F_PAUSED, &col, 1, err,
	    errlen)) == 1) {
		if (col != NULL && (t = find(f, col)) != NULL)
			t->paused = 1;
		free(col);
		col = NULL;
	}
	return rc < 0 ? DB_ERROR : DB_OK;
}

/* How long a full type waits before it is looked at again: FLOW_POLL_MS
 * doubled for each time it was found full since a look last found a
 * place that another run freed (the places this run frees it claims
 * again at once), plus as much again at random. */
static int64_t
poll_ms(struct flow_type *t)
{
	unsigned shift = t->misses < FLOW_POLL_MAX_SHIFT ? t->misses :
	    FLOW_POLL_MAX_SHIFT;
	int64_t base = (int64_t)FLOW_POLL_MS << shift;
	struct timespec ts;

	t->misses++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return base + (int64_t)((unsigned long)ts.tv_nsec %
	    (unsigned long)(base + 1));
}

/* Lock t's control row and judge whether it has room now; *room 0 holds
 * it back (t->wait_ms says for how long). */
static enum db_status
judge(struct flow *f, struct flow_type *t, int *room, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(t->name), DB_STR(t->name),
	    DB_STR(t->name) };
	const struct cfg_flow *l = t->limits;
	enum flow_stmt lock = l->concurrency ? F_LOCK :
	    flow_keys_bucketed(f->keys, t->name) ? F_LOCK_SHARED :
	    F_LOCK_UNCOUNTED;
	unsigned nargs = l->concurrency ? 3 : 1;
	char *cols[5] = { NULL };
	enum db_status st;
	int found;

	*room = 0;
	st = one(f, lock, args, nargs, cols, 5, &found, err, errlen);
	if (st == DB_OK && !found) {
		/* Deleted under us: make it again, and lock it. */
		st = run(f, F_ENSURE, args, 1, err, errlen);
		if (st == DB_OK)
			st = one(f, lock, args, nargs, cols, 5, &found, err,
			    errlen);
	}
	if (st != DB_OK || !found)
		goto out;
	if (number(cols[0]) != 0) {
		t->paused = 1;
		goto out;
	}
	t->now = number(cols[3]);
	t->tokens = flow_bucket(l, number(cols[1]), number(cols[2]), t->now,
	    &t->wait_ms);
	if (l->rate && t->wait_ms > 0) {
		t->held = 1;
		goto out;
	}
	t->running = queue_number(cols[4]);
	if (l->concurrency && t->running >= l->concurrency) {
		t->held = t->full = 1;
		t->wait_ms = poll_ms(t);
		goto out;
	}
	t->full = 0;
	*room = 1;
out:
	db_free_cols(cols, 5);
	return st;
}

/* Count the jobs claimed (a keyed type's extras too) in the claimed
 * type's row, and its start in the bucket. */
static enum db_status
take(struct flow *f, const struct flow_type *t, size_t jobs, char *err,
    size_t errlen)
{
	char tokens[64], now[64];
	double left = t->limits->rate ? t->tokens - 1 : 0;
	struct db_arg args[] = { DB_STR(tokens), DB_STR(now), DB_NUM(jobs),
	    DB_STR(t->name) };

	snprintf(tokens, sizeof tokens, "%.6f", left);
	snprintf(now, sizeof now, "%.6f", t->now);
	return run(f, F_TAKE, args, 4, err, errlen);
}

/* A claim that committed on its own, outside our transaction (so with no
 * cap or bucket judged; queue_trx_open): give the job back, its attempt
 * not spent, before any handler sees it, and have the transaction run
 * again. */
static enum db_status
undo_lone_claim(struct flow *f, const char *token, struct job *job,
    struct flow_extra *extra, char *err, size_t errlen)
{
	enum db_status st;
	int owned;

	st = queue_release(f->q, job, token, &owned, err, errlen);
	if (st == DB_OK)
		st = flow_extra_release(f->q, extra, err, errlen);
	if (st != DB_OK)
		return st;
	errf(err, errlen, "claim a job: the transaction was rolled back "
	    "under it");
	return DB_CONFLICT;
}

/* Types with room whose claim found no due job sit out a while. */
static void
dry(struct flow *f, const char *const *names, size_t n)
{
	struct flow_type *t;
	size_t i;

	for (i = 0; i < n; i++)
		if ((t = find(f, names[i])) != NULL)
			t->dry_until = now_ms() + FLOW_DRY_MS;
}

/* A claim among the limited types, in the queue's transaction helper. */
struct limited_claim {
	struct flow *f;
	unsigned long lock_seconds;
	const char *token;
	struct job *job;
	int *claimed;
	struct flow_extra *extra;
	struct flow_rider *rider;	/* or NULL */
};

/* Claim a due job of keyed type t whose key has room; none while t has
 * due jobs: every key of them is busy, and t waits as a full type does
 * (looked at first). */
static enum db_status
claim_keyed(struct limited_claim *c, struct flow_type *t, char *err,
    size_t errlen)
{
	enum db_status st;

	st = flow_keys_claim(c->f->keys, t->name, c->lock_seconds, c->token,
	    c->job, c->claimed, &t->due, c->extra, err, errlen);
	t->due_known = 1;
	if (st == DB_OK && !*c->claimed && t->due) {
		t->held = t->keys_full = 1;
		t->wait_ms = poll_ms(t);
	} else if (st == DB_OK && !*c->claimed)
		t->dry_until = now_ms() + FLOW_DRY_MS;
	return st;
}

/* Claim a job of the first keyed type among room that has one for it. */
static enum db_status
claim_each_keyed(struct limited_claim *c, const char **room, size_t n,
    char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	size_t i;

	for (i = 0; st == DB_OK && !*c->claimed && i < n; i++)
		if (flow_keys_has(c->f->keys, room[i]))
			st = claim_keyed(c, find(c->f, room[i]), err, errlen);
	return st;
}

/* Claim among the types with room: the others' in one claim, and each
 * keyed type's. */
static enum db_status
claim_room(struct limited_claim *c, const char **room, size_t n, char *err,
    size_t errlen)
{
	struct flow *f = c->f;
	const char **plain = xcalloc(n, sizeof *plain);
	enum db_status st = DB_OK;
	size_t i, nplain = 0;

	for (i = 0; i < n; i++)
		if (!flow_keys_has(f->keys, room[i]))
			plain[nplain++] = room[i];
	/* Keyed first every other claim: neither kind waits for the other
	 * to run dry. */
	f->keyed_first = !f->keyed_first;
	if (f->keyed_first)
		st = claim_each_keyed(c, room, n, err, errlen);
	if (st == DB_OK && !*c->claimed && nplain > 0) {
		st = queue_claim(f->q, plain, nplain, c->lock_seconds,
		    c->token, c->job, c->claimed, err, errlen);
		if (st == DB_OK && !*c->claimed)
			dry(f, plain, nplain);
	}
	if (st == DB_OK && !*c->claimed && !f->keyed_first)
		st = claim_each_keyed(c, room, n, err, errlen);
	free(plain);
	return st;
}

/* Judge each limited, unpaused type under its control row's lock, claim
 * among those with room, and count the start in the claimed type's row. */
static enum db_status
claim_limited_body(void *arg, struct queue_witness *w, char *err,
    size_t errlen)
{
	struct limited_claim *c = arg;
	struct flow *f = c->f;
	const char **room;
	struct queue_witness rode = { 0, NULL };
	struct flow_type *t;
	enum db_status st = DB_OK;
	size_t i, n = 0;
	int ok;

	*c->claimed = 0;
	/* Its run ends with the error that met the rider written alone: a
	 * job claimed now would wait in processing for recovery. */
	if (c->rider != NULL && c->rider->lost) {
		errf(err, errlen, "claim a job: not made, the outcome before "
		    "it could not be written");
		return DB_ERROR;
	}
	room = xcalloc(f->ntypes, sizeof *room);
	/* The rider first: its row is its own, and the control rows are
	 * locked after it, so it lengthens no other claimer's wait. */
	if (c->rider != NULL && !c->rider->out)
		st = c->rider->write(c->rider->arg, &rode, err, errlen);
	for (i = 0; st == DB_OK && i < f->ntypes; i++) {
		t = &f->types[i];
		if (t->limits == NULL || sits_out(t, now_ms()) || t->looked)
			continue;
		t->held = 0;
		st = judge(f, t, &ok, err, errlen);
		if (st == DB_OK && ok)
			room[n++] = t->name;
	}
	if (st == DB_OK && n > 0)
		st = claim_room(c, room, n, err, errlen);
	free(room);
	/* The claim's own reply and the read after it came back outside the
	 * transaction: the claim stands alone.  Give it back. */
	if (st == DB_OK && *c->claimed && !queue_trx_open(f->q))
		return undo_lone_claim(f, c->token, c->job, c->extra, err,
		    errlen);
	if (st == DB_OK && *c->claimed) {
		t = find(f, c->job->type);
		/* A bucketed type's claims are not counted in its row: the
		 * write would have them wait for each other again. */
		if (t != NULL && t->limits != NULL &&
		    !flow_keys_bucketed(f->keys, t->name))
			st = take(f, t, 1 + (c->extra != NULL ?
			    c->extra->got : 0), err, errlen);
		/* Its last place taken: the next claim looks first. */
		if (t != NULL && t->limits != NULL && t->limits->concurrency &&
		    t->running + 1 >= t->limits->concurrency)
			t->full = t->filled = 1;
	}
	/* Rolled back after the claim: the claim went with it. */
	if (st == DB_OK && *c->claimed && !queue_trx_open(f->q)) {
		errf(err, errlen, "claim a job: the transaction was rolled "
		    "back under it");
		return DB_CONFLICT;
	}
	if (*c->claimed)
		*w = (struct queue_witness){ 0, c->token };
	else
		*w = rode;
	return st;
}

/* Whatever happened, nothing of a claim that failed stays: it was rolled
 * back with the rest (or died with the connection).  The rider that was
 * rolled back with it is written alone now (flow_rider). */
static void
claim_limited_undo(void *arg, enum db_status st)
{
	struct limited_claim *c = arg;

	(void)st;
	if (*c->claimed)
		queue_job_free(c->job);
	*c->claimed = 0;
	flow_extra_drop(c->extra);
	if (c->rider != NULL && !c->rider->out) {
		c->rider->out = 1;
		c->rider->lost = !c->rider->alone(c->rider->arg);
	}
}

/* The transaction, run again after a deadlock, a lost certification, a
 * lock wait or a lost connection. */
static enum db_status
claim_limited(struct flow *f, unsigned long lock_seconds, const char *token,
    struct job *job, int *claimed, struct flow_extra *extra,
    struct flow_rider *rider, char *err, size_t errlen)
{
	struct limited_claim c = { f, lock_seconds, token, job, claimed,
	    extra, rider };
	struct queue_trx t = { claim_limited_body, claim_limited_undo, NULL,
	    &c, QUEUE_CLAIM_RETRIES + 1, 0, 1 };
	enum db_status st = queue_trx(f->q, &t, err, errlen);
	char cause[512];

	/* Committed or not, the bucket of keys is free again; one that
	 * could not be unlocked is unlocked before the next claim takes
	 * one (a lost connection has none). */
	(void)flow_keys_release(f->keys, cause, sizeof cause);
	if (st == DB_OK && rider != NULL && !rider->out)
		rider->done = 1;
	return st;
}

/* The shortest wait among the held types that have due jobs; a full type
 * first has its expired locks recovered (at most once a second). */
static enum db_status
held_wait(struct flow *f, int64_t *wait_ms, char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	struct flow_type *t;
	uint64_t recovered;
	size_t i;

	*wait_ms = 0;
	for (i = 0; st == DB_OK && i < f->ntypes; i++) {
		t = &f->types[i];
		if (!t->held || t->paused)
			continue;
		/* Without a due job there is nothing to wait for. */
		if (!t->due_known && (st = queue_type_due(f->q, t->name,
		    &t->due, err, errlen)) != DB_OK)
			break;
		if (!t->due)	/* nothing to wait for */
			continue;
		if ((t->limits->concurrency || t->keys_full) &&
		    now_ms() >= f->recover_at) {
			f->recover_at = now_ms() + FLOW_RECOVER_MS;
			st = queue_recover(f->q, f->cfg->run.recover_limit,
			    &recovered, err, errlen);
			f->recovered += recovered;
			if (st == DB_OK && recovered > 0)
				t->wait_ms = 0;
		}
		if (*wait_ms == 0 || t->wait_ms < *wait_ms)
			*wait_ms = t->wait_ms > 0 ? t->wait_ms : 1;
	}
	return st;
}

/* A keyed type whose due jobs all had busy keys at its last claim: chosen
 * again without a lock (one statement, which also says whether any is
 * still due); none, it is held back, else the transaction goes for it. */
static enum db_status
look_keys(struct flow *f, struct flow_type *t, size_t *judge, char *err,
    size_t errlen)
{
	enum db_status st;
	uint64_t id;
	int due;

	st = flow_keys_pick(f->keys, t->name, &id, &due, err, errlen);
	if (st == DB_OK && id == 0) {
		t->held = t->looked = t->due_known = 1;
		t->due = due;
		t->wait_ms = poll_ms(t);
	} else if (st == DB_OK) {
		t->misses = 0;
		t->keys_full = 0;
		(*judge)++;
	}
	return st;
}

/* Look before locking: a type found full at its last judgement is
 * counted again without a lock.  Still full, it is held back without the
 * claim's transaction (and its control row) being touched: waiting for a
 * full type costs one read.  *judge is how many limited types are left
 * for the transaction. */
static enum db_status
look(struct flow *f, size_t *judge, char *err, size_t errlen)
{
	struct flow_type *t;
	enum db_status st = DB_OK;
	uint64_t running;
	size_t i;
	int due;

	*judge = 0;
	for (i = 0; st == DB_OK && i < f->ntypes; i++) {
		t = &f->types[i];
		if (t->limits == NULL || sits_out(t, now_ms()))
			continue;
		if (!t->full && t->keys_full) {
			st = look_keys(f, t, judge, err, errlen);
			continue;
		}
		if (!t->full) {
			(*judge)++;
			continue;
		}
		if (t->filled) {
			/* Full by our own claim a moment ago: wait before
			 * even looking (a job of the run that ends says so
			 * at once, flow_job_done). */
			t->filled = 0;
			t->held = t->looked = t->due_known = t->due = 1;
			t->wait_ms = poll_ms(t);
			continue;
		}
		st = queue_type_load(f->q, t->name, &running, &due, err,
		    errlen);
		if (st == DB_OK && running >= t->limits->concurrency) {
			t->held = t->looked = t->due_known = 1;
			t->due = due;
			t->wait_ms = poll_ms(t);
		} else if (st == DB_OK) {
			/* Another run freed a place: look often again. */
			t->misses = 0;
			(*judge)++;
		}
	}
	return st;
}

void
flow_job_done(struct flow *f, const char *type, uint64_t id)
{
	struct flow_type *t = find(f, type);

	/* The place it held is free: the next claim goes for it at once,
	 * without a look first. */
	if (t != NULL && t->limits != NULL && t->limits->concurrency)
		t->full = t->filled = 0;
	/* Its key has a place free: claimed again at once. */
	if (t != NULL && t->limits != NULL && t->limits->key != NULL) {
		flow_keys_freed(f->keys, type, id);
		t->keys_full = 0;
		t->dry_until = 0;
		t->misses = 0;
	}
}

enum db_status
flow_claim(struct flow *f, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, struct flow_extra *extra, struct flow_rider *rider,
    int64_t *wait_ms, char *err, size_t errlen)
{
	const char **plain = xcalloc(ntypes, sizeof *plain);
	enum db_status st;
	size_t i, nplain = 0, nlimited = 0;

	*claimed = 0;
	*wait_ms = 0;
	if (extra != NULL)
		extra->got = 0;
	set_types(f, types, ntypes);
	/* A limited type's flag is read under its row lock anyway. */
	for (i = 0; i < f->ntypes; i++)
		nplain += f->types[i].limits == NULL;
	st = nplain > 0 ? read_paused(f, err, errlen) : DB_OK;
	nplain = 0;
	for (i = 0; st == DB_OK && i < f->ntypes; i++) {
		if (sits_out(&f->types[i], now_ms()))
			continue;
		if (f->types[i].limits != NULL)
			nlimited++;
		else
			plain[nplain++] = f->types[i].name;
	}
	if (st == DB_OK && nlimited > 0)
		st = look(f, &nlimited, err, errlen);
	if (st == DB_OK && nlimited > 0)
		st = claim_limited(f, lock_seconds, token, job, claimed, extra,
		    rider, err, errlen);
	if (st == DB_OK && !*claimed && nplain > 0)
		st = queue_claim(f->q, plain, nplain, lock_seconds, token, job,
		    claimed, err, errlen);
	if (st == DB_OK && !*claimed)
		st = held_wait(f, wait_ms, err, errlen);
	free(plain);
	return st;
}

enum flow_limits
flow_limits_of(struct flow *f, const char *const *types, size_t ntypes)
{
	enum flow_limits limits = FLOW_UNLIMITED;
	const struct cfg_flow *l;
	size_t i;

	set_types(f, types, ntypes);
	for (i = 0; i < f->ntypes; i++)
		if ((l = f->types[i].limits) == NULL)
			continue;
		else if (l->key == NULL || l->concurrency || l->rate)
			return FLOW_CAPPED;
		else
			limits = FLOW_KEYED_ONLY;
	return limits;
}

enum db_status
flow_unpaused(struct flow *f, const char *const *types, size_t ntypes,
    const char **out, size_t *nout, char *err, size_t errlen)
{
	enum db_status st;
	size_t i;

	*nout = 0;
	set_types(f, types, ntypes);
	st = read_paused(f, err, errlen);
	for (i = 0; st == DB_OK && i < f->ntypes; i++)
		if (!f->types[i].paused)
			out[(*nout)++] = f->types[i].name;
	return st;
}

/* --- operators ------------------------------------------------------------ */

enum db_status
flow_set_paused(struct flow *f, const char *type, int paused, int *changed,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(type), DB_NUM(paused != 0) };
	enum db_status st;

	st = run(f, F_SET_PAUSE, args, 2, err, errlen);
	/* ON DUPLICATE KEY UPDATE: 1 inserted, 2 updated, 0 unchanged */
	*changed = st == DB_OK && queue_stmts_changed(f->set, F_SET_PAUSE) > 0;
	return st;
}

enum db_status
flow_shape(struct flow *f, char **primary, char **type_column, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(f->name), DB_STR(f->name) };
	char *cols[2] = { NULL, NULL };
	enum db_status st;
	int found;

	st = one(f, F_SHAPE, args, 2, cols, 2, &found, err, errlen);
	*primary = cols[0];
	*type_column = cols[1];
	return st;
}

enum db_status
flow_read(struct flow *f, const char *only, struct flow_states *out,
    char *err, size_t errlen)
{
	const struct cfg_type *t;
	struct flow_state *s;
	char *cols[5] = { NULL };
	enum db_status st;
	int64_t wait;
	size_t i;
	int rc;

	memset(out, 0, sizeof *out);
	if ((st = run(f, F_ROWS, NULL, 0, err, errlen)) != DB_OK)
		return st;
	while ((rc = queue_stmts_fetch(f->set, F_ROWS, cols, 5, err,
	    errlen)) == 1) {
		if (cols[0] != NULL && (only == NULL ||
		    strcmp(only, cols[0]) == 0)) {
			s = flow_state_of(out, cols[0]);
			s->paused = number(cols[1]) != 0;
			t = cfg_find_type(f->cfg, cols[0]);
			s->tokens = t == NULL ? number(cols[2]) :
			    flow_bucket(&t->flow, number(cols[2]),
			    number(cols[3]), number(cols[4]), &wait);
		}
		db_free_cols(cols, 5);
	}
	if (rc < 0)
		return DB_ERROR;
	for (i = 0; i < f->cfg->ntypes; i++) {
		t = &f->cfg->types[i];
		if ((t->flow.concurrency || t->flow.rate || t->flow.key) &&
		    (only == NULL || strcmp(only, t->name) == 0))
			flow_state_of(out, t->name);
	}
	for (i = 0; st == DB_OK && i < out->n; i++)
		st = flow_state_fill(f->cfg, f->q, f->keys, &out->rows[i],
		    err, errlen);
	return st;
}
