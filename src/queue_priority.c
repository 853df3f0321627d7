/*
 * queue_priority.c - claims in priority order, on a table with
 * sql/013_priority.sql: a due job of a higher priority is claimed before
 * one of a lower, and one claim in PRIORITY_SHARE takes the job that has
 * waited longest whatever its priority, so no level waits for ever.
 *
 * The claim is still one UPDATE ... LIMIT 1, on idx_priority_pick
 * (status, priority DESC, next_run_at, id), or idx_type_priority with the
 * type after the status for a one-type run.  "next_run_at <= NOW()" bounds
 * the scan only within one level: over a plain range of levels the server
 * would read every job not yet due of each level above the first due one
 * (a level's retries waiting out their backoff, say).  So the claim names
 * one level, "priority = ?", the highest that has a due job of the run's
 * types, of the highest PRIORITY_LEVELS found type by type from the top,
 * two looks a level (a loose scan the server does not do on a descending
 * key part; read_levels), again after QUEUE_CURSOR_MS.  Each level has a
 * cursor, as the plain claim has (queue_cycle.c): a claim at a level
 * starts past the last job taken there, not at the head of its range,
 * where the entries of the jobs just claimed wait, delete-marked, for
 * InnoDB's purge (with 4 levels and --jobs=16 that stepping cost 0.31 x
 * the throughput of one level: bench/PRIORITY.md).  A level whose claim
 * finds nothing is passed over until the levels are read again.  A level
 * that gets a due job meanwhile waits that long for its order; a job of a
 * level past the list, or of one the list missed, is the plain claim's
 * (below).  A group's claims at a level with a cursor are one bulk
 * execution (queue_claim_priority_bulk), as the plain claim's are.
 *
 * After a conflict (an InnoDB deadlock: queue_cycle.c's claim_try) a
 * run's claims are the plain spread ones, and on Galera the plain ones
 * (queue_claim_priority says why).
 *
 * With one level among the pending rows the plain claim (queue_cycle.c)
 * is the same order, with its cursor: a table whose jobs all have
 * priority 0 claims as one without the column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"
#include "util.h"

#define LEVEL_LIST "(?, ?, ?, ?, ?, ?, ?, ?)"

_Static_assert(PRIORITY_LEVELS == 8, "LEVEL_LIST has PRIORITY_LEVELS marks");

/* The claim's index at a level (after "FORCE INDEX (idx_"), and its
 * first due job there, past the cursor with Q_F_AFTER (after "WHERE
 * status = 'pending' AND"): the claim's and the read of the job it gave
 * up waiting for (Q_DUE_PRIORITY) share them. */
#define LEVEL_INDEX \
	{ 0, Q_F_TYPE, "priority_pick)" }, { Q_F_TYPE, 0, "type_priority)" }
#define LEVEL_DUE \
	{ 0, Q_F_TYPE, " next_run_at <= NOW() AND CAST(type AS BINARY)" \
	    " IN (%2$s)" }, \
	{ Q_F_TYPE, 0, TYPE_IS " AND next_run_at <= NOW()" }, \
	{ 0, 0, " AND priority = ?" }, { Q_F_AFTER, 0, PAST_CURSOR }, \
	{ 0, 0, " ORDER BY priority DESC, next_run_at, id LIMIT 1" }

const struct queue_sql queue_priority_sql[Q_COUNT] = {
	/* The claim's arguments as the plain claim's (queue_claim_args),
	 * then the level; Q_F_AFTER: then its cursor (time, time, id). */
	[Q_CLAIM_PRIORITY] = { "claim a job", (const struct queue_piece[]){
		{ 0, 0, "UPDATE %1$s FORCE INDEX (idx_" }, LEVEL_INDEX,
		{ 0, 0, CLAIM_SET " WHERE status = 'pending' AND" }, LEVEL_DUE,
		{ 0, 0, NULL } }, Q_F_TYPE | Q_F_AFTER, NULL, 0, 1 },
	/* The first due job at a level whose claim gave up waiting for a
	 * row's lock (held_at_level): a plain read of the claim's range,
	 * which waits for no lock.  The claim's arguments less its first
	 * three, then the level and (Q_F_AFTER) the cursor. */
	[Q_DUE_PRIORITY] = { "claim a job", (const struct queue_piece[]){
		{ 0, 0, "SELECT id, next_run_at FROM %1$s FORCE INDEX (idx_" },
		LEVEL_INDEX, { 0, 0, " WHERE status = 'pending' AND" },
		LEVEL_DUE,
		{ 0, 0, NULL } }, Q_F_TYPE | Q_F_AFTER, NULL, 0 },
	/* The highest level of the pending rows below ?: one look.
	 * Q_F_TYPE: (type, type, level). */
	[Q_LEVEL] = { "read the priority levels", (const struct queue_piece[]){
		{ 0, 0, "SELECT priority FROM %1$s FORCE INDEX (idx_" },
		{ 0, Q_F_TYPE, "priority_pick) WHERE status = 'pending'" },
		{ Q_F_TYPE, 0, "type_priority) WHERE status = 'pending' AND"
		    TYPE_IS },
		{ 0, 0, " AND priority < ? ORDER BY priority DESC LIMIT 1" },
		{ 0, 0, NULL } }, Q_F_TYPE, NULL, 0 },
	/* Whether type has a due job of one level: one look, no lock.
	 * (type, type, the level PRIORITY_LEVELS times.) */
	[Q_LEVEL_DUE] = { "read the priority levels", Q_TEXT(
	    "SELECT priority FROM %1$s FORCE INDEX (idx_type_priority)"
	    " WHERE status = 'pending' AND" TYPE_IS " AND next_run_at <= NOW()"
	    " AND priority IN " LEVEL_LIST " LIMIT 1"), 0, NULL, 0 },
	/* status: the pending rows by level, from the index alone; the
	 * oldest due one's wait.  Q_F_TYPE: (type, type, limit), else
	 * (limit). */
	[Q_LEVEL_COUNTS] = { "count jobs by priority",
	    (const struct queue_piece[]){
		{ 0, 0, "SELECT priority, COUNT(*), SUM(next_run_at <= NOW()),"
		    " TIMESTAMPDIFF(SECOND, MIN(next_run_at), NOW())"
		    " FROM %1$s FORCE INDEX (idx_" },
		{ 0, Q_F_TYPE, "priority_pick) WHERE status = 'pending'" },
		{ Q_F_TYPE, 0, "type_priority) WHERE status = 'pending' AND"
		    TYPE_IS },
		{ 0, 0, " GROUP BY priority ORDER BY priority DESC LIMIT ?" },
		{ 0, 0, NULL } }, Q_F_TYPE, NULL, 0 },
};

int
queue_has_priority(struct queue *q)
{
	return queue_supports(q, Q_CLAIM_PRIORITY, &q->caps.priority_probed,
	    &q->caps.priority);
}

/* Run stmt, a look that answers one level or none: *found, *level. */
static enum db_status
read_level(struct queue *q, unsigned stmt, const struct db_arg *args,
    unsigned nargs, long long *level, int *found, char *err, size_t errlen)
{
	enum db_status st;
	char *col = NULL;

	st = queue_stmt_one(q, stmt, args, nargs, &col, 1, found, err,
	    errlen);
	*found = st == DB_OK && *found && col != NULL;
	if (*found)
		*level = strtoll(col, NULL, 10);
	free(col);
	return st;
}

/* The next level of type's pending rows below *below (*found 0: none),
 * and whether it has a due job: two looks on idx_type_priority. */
static enum db_status
next_level(struct queue *q, const char *type, long long *below, int *found,
    int *due, char *err, size_t errlen)
{
	struct db_arg args[2 + PRIORITY_LEVELS];
	enum db_status st;
	long long same;
	unsigned i;

	args[0] = DB_STR(type);
	args[1] = DB_STR(type);
	args[2] = DB_SNUM(*below);
	st = read_level(q, Q_LEVEL | Q_F_TYPE, args, 3, below, found, err,
	    errlen);
	*due = 0;
	if (st != DB_OK || !*found)
		return st;
	for (i = 0; i < PRIORITY_LEVELS; i++)
		args[2 + i] = DB_SNUM(*below);
	return read_level(q, Q_LEVEL_DUE, args, 2 + PRIORITY_LEVELS,
	    &same, due, err, errlen);
}

/* Whether the pending rows of every type have one level, or none: the
 * highest, then whether there is one below it (idx_priority_pick). */
static enum db_status
one_level(struct queue *q, int *one, char *err, size_t errlen)
{
	long long level = PRIORITY_HIGH + 1LL;
	struct db_arg args[1];
	enum db_status st = DB_OK;
	unsigned i;
	int found = 1;

	for (i = 0; i < 2 && found && st == DB_OK; i++) {
		args[0] = DB_SNUM(level);
		st = read_level(q, Q_LEVEL, args, 1, &level, &found, err,
		    errlen);
	}
	*one = !found;
	return st;
}

/* level into l, highest first, without repeats, the highest
 * PRIORITY_LEVELS kept. */
static void
add_level(struct queue_levels *l, long long level)
{
	unsigned i, at = 0;

	while (at < l->n && l->level[at] > level)
		at++;
	if (at == PRIORITY_LEVELS || (at < l->n && l->level[at] == level))
		return;
	if (l->n < PRIORITY_LEVELS)
		l->n++;
	for (i = l->n - 1; i > at; i--)
		l->level[i] = l->level[i - 1];
	l->level[at] = level;
}

/* The levels that have a due job of the run's types, highest first:
 * each type's levels from the top, one look each and one more for
 * whether it has a due job, on idx_type_priority, so that neither a
 * level whose jobs all wait out a backoff nor another type's backlog
 * takes a place in the claim's list.  At most PRIORITY_SCAN levels a
 * type, and none past the list's lowest once it is full. */
static enum db_status
read_levels(struct queue *q, const char *const *types, size_t ntypes,
    struct queue_levels *l, char *err, size_t errlen)
{
	enum db_status st;
	long long below;
	int found, due;
	size_t t;
	unsigned k;

	l->n = l->first = 0;
	/* All the pending rows of one level (every job at the default, say):
	 * the plain claim's order, known in two looks, whatever the types. */
	st = one_level(q, &found, err, errlen);
	if (st != DB_OK || found)
		return st;
	for (t = 0; st == DB_OK && t < ntypes; t++) {
		below = PRIORITY_HIGH + 1LL;
		for (k = 0; k < PRIORITY_SCAN; k++) {
			st = next_level(q, types[t], &below, &found, &due, err,
			    errlen);
			if (st != DB_OK || !found || (l->n == PRIORITY_LEVELS &&
			    below <= l->level[l->n - 1]))
				break;
			if (due)
				add_level(l, below);
		}
	}
	return st;
}

/* The levels for the claim which over the types whose hash is hash,
 * read again when QUEUE_CURSOR_MS old or another list's. */
static enum db_status
levels_for(struct queue *q, unsigned which, const char *const *types,
    size_t ntypes, uint64_t hash, struct queue_levels **out, char *err,
    size_t errlen)
{
	struct queue_levels *l = (which & Q_F_TYPE) ? &q->levels_one :
	    &q->levels_all;
	int64_t now = now_ms();
	enum db_status st;

	*out = l;
	if (l->read && now - l->read_ms < QUEUE_CURSOR_MS && l->types == hash)
		return DB_OK;
	st = read_levels(q, types, ntypes, l, err, errlen);
	l->read = st == DB_OK;
	l->read_ms = now;
	l->types = hash;
	return st;
}

/* Whether the run's claims go in priority order now: *l the levels (NULL:
 * not), *which the plain claim whose arguments they take, *stmt the claim
 * at a level. */
static enum db_status
in_priority_order(struct queue *q, const char *const *types, size_t ntypes,
    uint64_t hash, unsigned *which, unsigned *stmt, struct queue_levels **l,
    char *err, size_t errlen)
{
	enum db_status st;

	*l = NULL;
	/* Not on Galera: there a group's transaction whose claims in
	 * priority order (after reads of the levels) a replicated write set
	 * aborted was seen (test/galera) to commit without them and without
	 * an error, as a bulk claim's was (queue_cycle.c): the plain claims
	 * only, which hold exactly once there. */
	if (!queue_has_priority(q) || queue_wsrep_on(q))
		return DB_OK;
	/* After a conflict (an InnoDB deadlock: queue_cycle.c's claim_try)
	 * the run's claims are the plain spread ones, out of order. */
	if (q->spread)
		return DB_OK;
	/* One type: idx_type_priority, which sql/013 makes with the other,
	 * whether or not the plain claim has sql/001's idx_type_pick. */
	*which = ntypes == 1 ? Q_CLAIM | Q_F_TYPE : Q_CLAIM;
	*stmt = Q_CLAIM_PRIORITY | (*which & Q_F_TYPE);
	st = levels_for(q, *which, types, ntypes, hash, l, err, errlen);
	/* One level, or none: the plain claim is the same order. */
	if (st != DB_OK || (*l)->n < 2)
		*l = NULL;
	return st;
}

/* The cursor's hash for a level: each level's claims have a cursor of
 * their own, in the level's (next_run_at, id) order. */
static uint64_t
level_hash(uint64_t hash, long long level)
{
	return (hash ^ (uint64_t)level) * 0x100000001b3ULL;
}

/* One claim at the level args[n - 1] names: past its cursor when that is
 * set and fresh, else (or when that finds nothing) from its head.  *used
 * is the statement whose reply counts, *got whether it claimed a job. */
static enum db_status
claim_level(struct queue *q, unsigned stmt, struct db_arg *args,
    unsigned n, uint64_t lhash, unsigned *used, int *got, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	int64_t start = now_ms();
	enum db_status st;
	int held;

	queue_cursor_for(q, stmt, lhash, start);
	held = queue_past_held(q, stmt, lhash, 1);
	if (c->set) {
		args[n] = DB_STR(c->at);
		args[n + 1] = DB_STR(c->at);
		args[n + 2] = DB_NUM(c->id);
		*used = stmt | Q_F_AFTER;
		st = queue_stmt_run(q, *used, args, n + 3, err, errlen);
		*got = st == DB_OK && queue_stmt_changed(q, *used) != 0;
		if (st != DB_OK || *got)
			return st;
		c->set = 0;
	}
	/* The level's head is a job whose row is held: none here now (the
	 * next level's turn); a second after, the head again. */
	*got = 0;
	if (held)
		return DB_OK;
	*used = stmt;
	/* From the head: the cursor it may set (queue_cursor_move) is
	 * as fresh as this scan. */
	c->head_ms = start;
	st = queue_stmt_run(q, stmt, args, n, err, errlen);
	*got = st == DB_OK && queue_stmt_changed(q, stmt) != 0;
	return st;
}

/* The claim at a level (used, its variant; args and n as claim_level's,
 * lhash the level's) gave up waiting for a row's lock: the level's first
 * due job, by a plain read, is the one held (the claim would have taken
 * it else, unless another runner did meanwhile), and the level's next
 * claim starts past it (queue_past_held), as the plain claim's does. */
static enum db_status
held_at_level(struct queue *q, unsigned used, const struct db_arg *args,
    unsigned n, uint64_t lhash, char *err, size_t errlen)
{
	unsigned look = Q_DUE_PRIORITY | (used & (Q_F_TYPE | Q_F_AFTER));
	struct queue_held *h = &q->held;
	char *cols[2] = { NULL, NULL };
	enum db_status st;
	int found = 0;

	st = queue_stmt_one(q, look, args + 3,
	    n - 3 + 1 + (used & Q_F_AFTER ? 3 : 0), cols, 2, &found, err,
	    errlen);
	if (st == DB_OK && found && cols[0] != NULL && cols[1] != NULL &&
	    strlen(cols[1]) < sizeof h->at) {
		h->id = queue_number(cols[0]);
		snprintf(h->at, sizeof h->at, "%s", cols[1]);
		h->claim = used & ~(unsigned)Q_F_AFTER;
		h->types = lhash;
		h->ms = now_ms();
	}
	db_free_cols(cols, 2);
	return st;
}

enum db_status
queue_claim_priority(struct queue *q, unsigned which,
    const char *const *types, size_t ntypes, unsigned long lock_seconds,
    const char *token, uint64_t hash, int *tried, uint64_t *id, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	unsigned stmt, used = 0, n;
	struct queue_levels *l;
	struct db_arg *args;
	enum db_status st;
	uint64_t lhash = 0;
	int got = 0;

	*tried = 0;
	*id = 0;
	st = in_priority_order(q, types, ntypes, hash, &which, &stmt, &l, err,
	    errlen);
	if (l == NULL)
		return st;
	/* The share of the plain claim: the longest waiting job first; the
	 * turns a group's bulk left to the claims after it first. */
	if (q->share_turns > 0) {
		q->share_turns--;
		return DB_OK;
	}
	if (q->counted_ahead > 0)
		q->counted_ahead--;
	else if (++q->priority_claims % PRIORITY_SHARE == 0)
		return DB_OK;
	args = queue_claim_args(which, types, ntypes, lock_seconds, token, &n);
	args = xrealloc(args, (n + 4) * sizeof *args);
	*tried = 1;
	q->no_retry = 1;
	/* The highest level first; one that has no due job left is passed
	 * over until the levels are read again. */
	for (; l->first < l->n; l->first++) {
		args[n] = DB_SNUM(l->level[l->first]);
		lhash = level_hash(hash, l->level[l->first]);
		st = claim_level(q, stmt, args, n + 1, lhash, &used, &got,
		    err, errlen);
		if (st != DB_OK || got)
			break;
	}
	q->no_retry = 0;
	if (st == DB_CONFLICT && queue_lock_wait_ended(q)) {
		enum db_status held = held_at_level(q, used, args, n, lhash,
		    err, errlen);

		if (held != DB_OK)
			st = held;
	}
	free(args);
	if (st != DB_OK || l->first == l->n)
		return st;
	q->counters.by_priority++;
	*id = (uint64_t)mysql_stmt_insert_id(queue_handle(q, used));
	if (*id == 0)
		st = queue_claimed_by_token(q, token, id, err, errlen);
	/* The level's cursor moves to the job once it is read
	 * (queue_cursor_move). */
	c->next_id = *id;
	c->next_claim = stmt;
	c->next_types = lhash;
	return st;
}

/* The plain claim's turns among the next n claims, whose count is
 * after: the multiples of PRIORITY_SHARE in (after, after + n]. */
static size_t
share_turns_among(uint64_t after, size_t n)
{
	return (size_t)((after + n) / PRIORITY_SHARE - after / PRIORITY_SHARE);
}

/* The bulk's rows: the claim past the level's cursor for tokens[0..m-1]. */
static struct db_arg *
bulk_rows(struct queue *q, unsigned which, const char *const *types,
    size_t ntypes, unsigned long lock_seconds, long long level,
    const char *const *tokens, size_t m, unsigned *nargs)
{
	const struct queue_cursor *c = &q->cursor;
	struct db_arg *one, *rows;
	size_t k;

	one = queue_claim_args(which, types, ntypes, lock_seconds, tokens[0],
	    nargs);
	one = xrealloc(one, (*nargs + 4) * sizeof *one);
	one[(*nargs)++] = DB_SNUM(level);
	one[(*nargs)++] = DB_STR(c->at);
	one[(*nargs)++] = DB_STR(c->at);
	one[(*nargs)++] = DB_NUM(c->id);
	rows = xcalloc(m * *nargs, sizeof *rows);
	for (k = 0; k < m; k++) {
		memcpy(&rows[k * *nargs], one, *nargs * sizeof *one);
		rows[k * *nargs] = DB_STR(tokens[k]);
	}
	free(one);
	return rows;
}

enum db_status
queue_claim_priority_bulk(struct queue *q, const char *const *types,
    size_t ntypes, unsigned long lock_seconds, const char *const *tokens,
    struct job *const *jobs, size_t n, uint64_t hash, int *tried,
    size_t *claimed, char *err, size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	unsigned which, stmt, nargs;
	struct queue_levels *l;
	struct db_arg *rows;
	enum db_status st;
	size_t turns, m;

	*tried = 0;
	*claimed = 0;
	st = in_priority_order(q, types, ntypes, hash, &which, &stmt, &l, err,
	    errlen);
	if (l == NULL)
		return st;
	/* In priority order now: the plain claim's bulk, in its order, is
	 * not made.  Only past the top level's cursor, as the plain bulk
	 * only past the plain claim's: the claims one by one set it. */
	*tried = 1;
	if (l->first == l->n || q->share_turns > 0 || q->counted_ahead > 0)
		return DB_OK;
	queue_cursor_for(q, stmt, level_hash(hash, l->level[l->first]),
	    now_ms());
	turns = share_turns_among(q->priority_claims, n);
	m = n - turns;
	if (!c->set || m < 2)
		return DB_OK;
	/* The plain claim's turns among the n: the claims one by one after
	 * this one's (share_turns). */
	q->priority_claims += n;
	q->share_turns = (unsigned)turns;
	q->counted_ahead = (unsigned)m;
	rows = bulk_rows(q, which, types, ntypes, lock_seconds,
	    l->level[l->first], tokens, m, &nargs);
	/* In the transaction: a conflict or a lost connection is its
	 * caller's to run again whole, as the plain bulk's. */
	st = queue_run_rows(q, NULL, stmt | Q_F_AFTER, rows, nargs,
	    (unsigned)m, err, errlen);
	free(rows);
	if (st != DB_OK || queue_stmt_changed(q, stmt | Q_F_AFTER) == 0)
		return st;
	/* What it took is what its tokens read back past the cursor, which
	 * moves past them (queue_claim_bulk says why not by its count of
	 * changed rows). */
	st = queue_read_tokens(q, tokens, jobs, m, claimed, err, errlen);
	q->counters.by_priority += *claimed;
	q->counted_ahead = (unsigned)(m - *claimed);
	return st;
}

struct level_walk {
	struct queue_level_count *out;
	size_t max, n;
};

static int
on_level(void *arg, char **cols, const size_t *lens)
{
	struct level_walk *w = arg;
	struct queue_level_count *l = &w->out[w->n];

	(void)lens;
	if (w->n >= w->max || cols[0] == NULL)
		return 0;
	l->level = strtol(cols[0], NULL, 10);
	l->pending = queue_number(cols[1]);
	l->due = queue_number(cols[2]);
	l->lag = l->due > 0 && cols[3] != NULL ? strtol(cols[3], NULL, 10) :
	    -1;
	w->n++;
	return 0;
}

enum db_status
queue_level_counts(struct queue *q, const char *type,
    struct queue_level_count *out, size_t max, size_t *n, char *err,
    size_t errlen)
{
	struct level_walk w = { out, max, 0 };
	struct db_arg args[3];
	unsigned k = 0;
	enum db_status st;

	*n = 0;
	if (!queue_has_priority(q))
		return DB_OK;
	if (type != NULL) {
		args[k++] = DB_STR(type);
		args[k++] = DB_STR(type);
	}
	args[k++] = DB_NUM(max);
	st = queue_stmt_walk(q, Q_LEVEL_COUNTS | (type != NULL ? Q_F_TYPE : 0),
	    args, k, 4, on_level, &w, err, errlen);
	*n = w.n;
	return st;
}
