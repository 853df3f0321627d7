/*
 * queue_cycle.c - the run's cycle on the job table: claims (one, a
 * group's, a bulk of them), reading the claimed jobs, the cursor, and
 * every fenced write after the claim (outcomes, lock extensions,
 * checkpoints, snoozes), with the text of the statements they run.  Why
 * the claim and the fences are shaped so is at the top of queue.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysqld_error.h>

#include "queue_sql.h"
#include "utf8.h"
#include "util.h"

/* The same lock, ? seconds from now: (seconds, seconds). */
#define LOCK_RENEW " locked_by = CONCAT(" TOKEN \
	", '@', UNIX_TIMESTAMP() + ?)," \
	" locked_until = NOW() + INTERVAL ? SECOND"


#define SUCCESS_SET " SET status = 'success', finished_at = NOW()," \
	" last_error = NULL, locked_by = NULL, locked_until = NULL," \
	" updated_at = NOW()"

/* The claim (Q_CLAIM) has idx_pick, with no type: the exact compare is a
 * filter on the rows of the due range.  Q_F_TYPE, one type with
 * sql/001_type_pick.sql applied: the range of idx_type_pick holds only that
 * type's due jobs (and any that differ from it only in case or accents),
 * however many other types have waiting.  Q_F_SPREAD adds (m, r) after the
 * claim's arguments, Q_F_AFTER the cursor's (time, time, id). */
static const struct queue_piece claim[] = {
	{ 0, 0, "UPDATE %1$s FORCE INDEX (idx_" },
	{ 0, Q_F_TYPE, "pick)" },
	{ Q_F_TYPE, 0, "type_pick)" },
	{ 0, 0, CLAIM_SET " WHERE status = 'pending' AND" },
	{ 0, Q_F_TYPE, " next_run_at <= NOW() AND CAST(type AS BINARY)"
	    " IN (%2$s)" },
	{ Q_F_TYPE, 0, TYPE_IS " AND next_run_at <= NOW()" },
	{ Q_F_SPREAD, 0, " AND id MOD ? = ?" },
	{ Q_F_AFTER, 0, PAST_CURSOR },
	{ 0, 0, " ORDER BY next_run_at, id LIMIT 1" },
	{ 0, 0, NULL }
};

const struct queue_sql queue_cycle_sql[Q_COUNT] = {
	[Q_CLAIM] = { "claim a job", claim,
	    Q_F_TYPE | Q_F_SPREAD | Q_F_AFTER, NULL, 0, 1 },
	/* One job a caller chose (flow_key.c), if it is still pending and
	 * due.  (token, seconds, seconds, id) */
	[Q_CLAIM_JOB] = { "claim a job", Q_TEXT("UPDATE %1$s" CLAIM_SET
	    " WHERE id = ? AND status = 'pending' AND next_run_at <= NOW()"),
	    0, NULL, 0 },
	[Q_SUCCESS] = { "mark job success",
	    Q_TEXT("UPDATE %1$s" SUCCESS_SET FENCE), 0, NULL, 0 },
	[Q_SUCCESS_MANY] = { "mark jobs success",
	    Q_TEXT("UPDATE %1$s" SUCCESS_SET FENCE_MANY), 0, NULL, 0 },
	[Q_RETRY] = { "mark job for retry", Q_TEXT(
	    "UPDATE %1$s SET status = 'pending',"
	    " next_run_at = NOW() + INTERVAL ? SECOND, last_error = ?,"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()"
	    FENCE), 0, NULL, 0 },
	[Q_FAIL] = { "mark job failed", Q_TEXT(
	    "UPDATE %1$s SET status = 'failed', finished_at = NOW(),"
	    " last_error = ?, locked_by = NULL, locked_until = NULL,"
	    " updated_at = NOW()" FENCE), 0, NULL, 0 },
	[Q_EXTEND] = { "extend job lock", Q_TEXT(
	    "UPDATE %1$s SET" LOCK_RENEW ", updated_at = NOW()" FENCE),
	    0, NULL, 0 },
	/* Q_F_LOCKED waits for a transaction that still holds the row: a
	 * killed session's COMMIT may yet finish or roll back. */
	[Q_OWNER] = { "check job lock", (const struct queue_piece[]){
		{ 0, 0, "SELECT id FROM %1$s" FENCE },
		{ Q_F_LOCKED, 0, " LOCK IN SHARE MODE" }, { 0, 0, NULL } },
	    Q_F_LOCKED, "read what a lost commit kept", Q_F_LOCKED },
	/* The row a claim took, by its token, when the claim's reply
	 * carries no id (a trigger on the table resets it): among the
	 * processing rows only.  (token) */
	[Q_CLAIMED_ID] = { "find the claimed job", Q_TEXT(
	    "SELECT id FROM %1$s FORCE INDEX (idx_lock)"
	    " WHERE status = 'processing' AND " TOKEN " = ?"), 0, NULL, 0 },
	[Q_RELEASE] = { "put job back", Q_TEXT(
	    "UPDATE %1$s SET status = 'pending', next_run_at = NOW(),"
	    " attempts = IF(attempts > 0, attempts - 1, 0),"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()"
	    FENCE), 0, NULL, 0 },
	/* The checkpoint as the handler wrote it, if the server's JSON_VALID
	 * takes it: (json, seconds, seconds, id, token, json). */
	[Q_CHECKPOINT] = { "save a checkpoint", Q_TEXT(
	    "UPDATE %1$s SET checkpoint = ?," LOCK_RENEW ", updated_at = NOW()"
	    FENCE " AND JSON_VALID(?)"), 0, NULL, 0 },
	/* After a checkpoint changed nothing: no row, the lock is lost; else
	 * whether the server found it valid JSON.  (json, id, token) */
	[Q_CHECKPOINT_CHECK] = { "save a checkpoint",
	    Q_TEXT("SELECT JSON_VALID(?) FROM %1$s" FENCE), 0, NULL, 0 },
	/* attempts - 1 undoes the claim's count: a snooze is not a try. */
	[Q_SNOOZE] = { "put the job off", Q_TEXT(
	    "UPDATE %1$s SET status = 'pending',"
	    " attempts = IF(attempts > 0, attempts - 1, 0),"
	    " snoozes = IF(?, 0, snoozes + 1),"
	    " next_run_at = NOW() + INTERVAL ? SECOND, last_error = ?,"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()"
	    FENCE), 0, NULL, 0 },
	/* The cancel an operator asked for (CANCEL_ASKED), by the runner
	 * whose token the request holds.  (id, token) */
	[Q_CANCEL_DONE] = { "write the cancel", Q_TEXT(
	    "UPDATE %1$s SET status = 'failed', finished_at = NOW(),"
	    " last_error = 'cancelled by operator',"
	    " next_run_at = LEAST(next_run_at, NOW()),"
	    " locked_by = NULL, locked_until = NULL, updated_at = NOW()"
	    " WHERE id = ? AND " TOKEN " = CONCAT('" CANCEL_PREFIX "', ?)"
	    " AND status = 'processing'"), 0, NULL, 0 },
	[Q_WSREP] = { "read wsrep_on", Q_TEXT("SELECT @@GLOBAL.wsrep_on"),
	    0, NULL, 0 },
	[Q_LOCK_WAIT] = { "read innodb_lock_wait_timeout", Q_TEXT(
	    "SELECT @@SESSION.innodb_lock_wait_timeout"), 0, NULL, 0 },
	/* Every column the cycle reads or writes and every index it forces
	 * (but the optional idx_type_pick and sql/002's columns, probed when
	 * first needed): prepared, never run. */
	[Q_SCHEMA] = { "check the table", Q_TEXT(
	    "SELECT id, type, business_key, payload, status, attempts,"
	    " max_attempts, next_run_at, locked_by, locked_until, last_error,"
	    " updated_at, finished_at FROM %1$s"
	    " FORCE INDEX (idx_pick, idx_lock) WHERE FALSE"), 0, NULL, 0 },
};

enum db_status
queue_mark_success_many(struct queue *q, const uint64_t *ids,
    const char *const *tokens, size_t n, uint64_t *changed, char *err,
    size_t errlen)
{
	struct db_arg args[2 * QUEUE_GROUP_MAX];
	enum db_status st;

	*changed = 0;
	if (n == 0 || n > QUEUE_GROUP_MAX) {
		errf(err, errlen, "mark %zu jobs: 1 to %d", n,
		    QUEUE_GROUP_MAX);
		return DB_ERROR;
	}
	queue_group_args(args, ids, tokens, n);
	st = queue_stmt_run(q, Q_SUCCESS_MANY, args, 2 * QUEUE_GROUP_MAX, err,
	    errlen);
	if (st == DB_OK)
		*changed = queue_stmt_changed(q, Q_SUCCESS_MANY);
	return st;
}

/* Whether the single-type statements (the claim, a type's purge) can use
 * idx_type_pick: tried once, by preparing the claim; a table without the
 * index falls back to idx_pick. */
int
queue_type_index(struct queue *q)
{
	return queue_supports(q, Q_CLAIM | Q_F_TYPE, &q->caps.type_index_probed,
	    &q->caps.type_index);
}

/* The claim statement for ntypes types, and its spread variant; a
 * prepared one for another number of types (the variants without
 * Q_F_TYPE) is dropped. */
unsigned
queue_claim_stmt(struct queue *q, size_t ntypes, unsigned *spread)
{
	static const unsigned s[] = { Q_CLAIM, Q_CLAIM | Q_F_SPREAD,
	    Q_CLAIM | Q_F_AFTER, Q_CLAIM | Q_F_SPREAD | Q_F_AFTER, Q_PROBE,
	    Q_PROBE | Q_F_AFTER, Q_CLAIM_PRIORITY };
	MYSQL_STMT **slot;
	size_t i;

	if (q->claim_types != ntypes)
		for (i = 0; i < sizeof s / sizeof s[0]; i++)
			if (*(slot = queue_slot(q, s[i])) != NULL) {
				mysql_stmt_close(*slot);
				*slot = NULL;
			}
	q->claim_types = ntypes;
	if (ntypes == 1 && queue_type_index(q)) {
		*spread = Q_CLAIM | Q_F_TYPE | Q_F_SPREAD;
		return Q_CLAIM | Q_F_TYPE;
	}
	*spread = Q_CLAIM | Q_F_SPREAD;
	return Q_CLAIM;
}

/* The claim's arguments: the lock, then the types (the one type twice for
 * the index's claim), room for the spread's two more or the cursor's
 * three. */
struct db_arg *
queue_claim_args(unsigned which, const char *const *types,
    size_t ntypes, unsigned long lock_seconds, const char *token,
    unsigned *nargs)
{
	struct db_arg *args = xcalloc(ntypes + 7, sizeof *args);
	unsigned n = 0;
	size_t i;

	args[n++] = DB_STR(token);
	args[n++] = DB_NUM(lock_seconds);
	args[n++] = DB_NUM(lock_seconds);
	for (i = 0; i < ntypes; i++)
		args[n++] = DB_STR(types[i]);
	if ((which & Q_F_TYPE) != 0)
		args[n++] = DB_STR(types[0]);
	*nargs = n;
	return args;
}

enum db_status
queue_prepare_run(struct queue *q, size_t ntypes, char *err, size_t errlen)
{
	unsigned which, spread;
	MYSQL_STMT **schema;
	char cause[512];
	enum db_status st;

	/* The claim and the recovery run first anyway; one more statement,
	 * prepared and dropped, names every column and index the others
	 * use, so a start-up costs one round trip more, not ten. */
	which = queue_claim_stmt(q, ntypes, &spread);
	st = queue_prepare(q, which, cause, sizeof cause);
	if (st == DB_OK)
		st = queue_prepare(q, which = Q_RECOVER, cause, sizeof cause);
	if (st == DB_OK)
		st = queue_prepare(q, which = Q_SCHEMA, cause, sizeof cause);
	if (*(schema = queue_slot(q, Q_SCHEMA)) != NULL) {
		mysql_stmt_close(*schema);
		*schema = NULL;
	}
	if (st != DB_OK)
		errf(err, errlen, "%s in %s: %s", queue_purpose(which), q->table,
		    cause);
	return st;
}

/* The id of the row claimed with token, read back by the token: a
 * trigger on the table (an audit trail, say) leaves the claim's reply
 * without LAST_INSERT_ID's value. */
enum db_status
queue_claimed_by_token(struct queue *q, const char *token, uint64_t *id, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(token) };
	enum db_status st;
	char *col = NULL;
	int found;

	st = queue_stmt_one(q, Q_CLAIMED_ID, args, 1, &col, 1, &found, err,
	    errlen);
	*id = queue_number(col);
	free(col);
	return st;
}

/* A hash of the claim's types (FNV-1a over their bytes and lengths): the
 * cursor of one list of types is no place to start a claim of another. */
static uint64_t
types_hash(const char *const *types, size_t ntypes)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;
	const char *p;

	for (i = 0; i < ntypes; i++) {
		for (p = types[i]; *p != '\0'; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return h;
}

/* The cursor of the claim which over the types whose hash is hash: a run that
 * claims from two lists of types in turn (flow control: the types with room in
 * its transaction, then the plain ones) keeps a cursor for each, the other
 * list's waiting in the spare.  It is not used when it belongs to another
 * claim, after a spread claim, or when the last claim from the head is
 * QUEUE_CURSOR_MS old (see the top of queue.c). */
void
queue_cursor_for(struct queue *q, unsigned which, uint64_t hash,
    int64_t start)
{
	struct queue_cursor *c = &q->cursor, other;

	if (c->types != hash || c->claim != which) {
		other = q->cursor_spare;
		q->cursor_spare = *c;
		*c = other;
	}
	if (c->set && (c->claim != which || c->types != hash ||
	    start - c->head_ms >= QUEUE_CURSOR_MS || q->spread))
		c->set = 0;
}

/* One try of the claim which (args: its n, room for 3 more): the first
 * past the cursor when it is set, from the head when that finds nothing;
 * after a conflict a spread one.  *used is the statement whose reply
 * counts; *start moves when the claim scans from the head.
 *
 * Every runner's claim aims at the head of the queue.  On one server
 * they queue up on its row lock; on Galera, runners on different nodes
 * each take it locally and all but one lose certification (1213), and a
 * statement run again as it was loses again about half the time.  After
 * a first loss, this runner aims at a random one of the first 32, 64,
 * then 128 due rows instead (id MOD m = r), for the rest of the run:
 * runners on different nodes rarely pick the same row.  A residue with
 * no due row falls back to the head.  One server never gets here unless
 * an InnoDB deadlock happens, and then only loosens the order among due
 * jobs.  The spread claims use no cursor: they skip rows on purpose. */
static enum db_status
claim_try(struct queue *q, unsigned tries, unsigned which, unsigned spread,
    struct db_arg *args, unsigned n, unsigned *used, int64_t *start,
    char *err, size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	unsigned after = which | Q_F_AFTER;
	enum db_status st;
	uint64_t m;

	*used = which;
	if (tries == 0 && !q->spread && c->set) {
		args[n] = DB_STR(c->at);
		args[n + 1] = DB_STR(c->at);
		args[n + 2] = DB_NUM(c->id);
		*used = after;
		st = queue_stmt_run(q, after, args, n + 3, err, errlen);
		if (st != DB_OK || queue_stmt_changed(q, after) != 0)
			return st;
		/* Nothing due past it: from the head. */
		c->set = 0;
		*used = which;
		*start = now_ms();
		return queue_stmt_run(q, which, args, n, err, errlen);
	}
	if (tries == 0 && !q->spread)
		return queue_stmt_run(q, which, args, n, err, errlen);
	m = 32ULL << (tries < 2 ? tries : 2);
	args[n] = DB_NUM(m);
	args[n + 1] = DB_NUM(queue_random(q) % m);
	*used = spread;
	st = queue_stmt_run(q, spread, args, n + 2, err, errlen);
	if (st == DB_OK && queue_stmt_changed(q, spread) == 0) {
		*used = which;
		st = queue_stmt_run(q, which, args, n, err, errlen);
	}
	return st;
}

/* A claim gave up waiting for a row's lock: if no job is due, by a read
 * that waits for none, there is nothing to claim (DB_OK); else the
 * conflict stands, which the run meets by claiming again within its
 * time, and the transaction it was in, if any, goes on as after any
 * lock wait that timed out.  The row held is the first due one's (the
 * claim would have taken that else), unless another runner took it
 * meanwhile: the cursor of the claim which (hash, its types; 0, a claim
 * in priority order, which has its own) moves past it, so that the jobs
 * behind it are claimed, and the claim from the head a second later
 * tries it again (the top of queue.c). */
static enum db_status
claim_gave_up(struct queue *q, unsigned which, uint64_t hash,
    const char *const *types, size_t ntypes, char *err, size_t errlen)
{
	struct queue_held *h = &q->held;
	char at[sizeof h->at];
	enum db_status st;
	uint64_t id;

	st = queue_due(q, which, types, ntypes, &id, at, sizeof at, err,
	    errlen);
	if (st != DB_OK || id == 0)
		return st;
	if (hash != 0) {
		memcpy(h->at, at, sizeof at);
		h->id = id;
		h->claim = which;
		h->types = hash;
		h->ms = now_ms();
		h->applied = 0;
	}
	/* (The read succeeded: the claim's lock wait stays the last error,
	 * which the transaction's helper and group.c judge it by.) */
	errf(err, errlen, "claim a job in %s: a due job's row is held by "
	    "another transaction", q->table);
	return DB_CONFLICT;
}

int
queue_past_held(struct queue *q, unsigned which, uint64_t hash, int keep)
{
	struct queue_cursor *c = &q->cursor;
	struct queue_held *h = &q->held;

	if (h->id == 0 || h->claim != which || h->types != hash)
		return 0;
	if (q->spread || now_ms() - h->ms >= QUEUE_CURSOR_MS) {
		h->id = 0;
		return 0;
	}
	if (!h->applied) {
		memcpy(c->at, h->at, sizeof c->at);
		c->id = h->id;
		c->claim = which;
		c->types = hash;
		c->head_ms = h->ms;
		c->set = 1;
		h->applied = 1;
	}
	if (!keep)
		h->id = 0;
	return 1;
}

/* Run the claim: *id is the row it took, 0 for none.  The cursor is
 * left as it was, and where it may move next (next_id) is noted. */
static enum db_status
claim_row(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, uint64_t *id, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	unsigned which, spread, used;
	struct db_arg *args;
	enum db_status st;
	unsigned tries, n;
	int by_priority;
	uint64_t hash;
	int64_t start;

	*id = 0;
	if (ntypes == 0) {
		errf(err, errlen, "claim a job: no types");
		return DB_ERROR;
	}
	which = queue_claim_stmt(q, ntypes, &spread);
	hash = types_hash(types, ntypes);
	st = queue_claim_priority(q, which, types, ntypes, lock_seconds, token,
	    hash, &by_priority, id, err, errlen);
	if (by_priority && (st != DB_OK || *id != 0)) {
		/* Its level's cursor may move to the job (next_id). */
		if (st != DB_CONFLICT)
			return st;
		if (queue_lock_wait_ended(q))
			return claim_gave_up(q, which, 0, types, ntypes, err,
			    errlen);
		c->next_id = 0;
		/* Met a conflict: the spread claims below, as the plain
		 * claim's first loss leads to. */
		q->counters.conflicts++;
		q->spread = 1;
		if (q->in_trx)
			return st;
	}
	args = queue_claim_args(which, types, ntypes, lock_seconds, token, &n);
	start = now_ms();
	queue_cursor_for(q, which, hash, start);
	queue_past_held(q, which, hash, 0);
	q->no_retry = 1;
	for (tries = 0;; tries++) {
		st = claim_try(q, tries, which, spread, args, n, &used, &start,
		    err, errlen);
		if (st != DB_CONFLICT || tries >= QUEUE_CLAIM_RETRIES ||
		    queue_lock_wait_ended(q))
			break;
		q->counters.conflicts++;
		q->spread = 1;
		/* In a transaction of several statements, the deadlock rolled
		 * back all of it: its caller runs it again whole. */
		if (q->in_trx)
			break;
		queue_conflict_pause(q, tries < 3 ? tries : 3);
	}
	q->no_retry = 0;
	free(args);
	if (used == which)
		c->head_ms = start;
	if (st == DB_CONFLICT && queue_lock_wait_ended(q))
		return claim_gave_up(q, which, hash, types, ntypes, err,
		    errlen);
	if (st != DB_OK || queue_stmt_changed(q, used) == 0)
		return st;
	*id = (uint64_t)mysql_stmt_insert_id(queue_handle(q, used));
	if (*id == 0 && (st = queue_claimed_by_token(q, token, id, err,
	    errlen)) != DB_OK)
		return st;
	/* The cursor may move to the job just claimed, in the claim's
	 * order: never after a spread claim, which took a row out of
	 * order. */
	c->next_id = 0;
	if (!q->spread && used != spread) {
		c->next_id = *id;
		c->next_claim = which;
		c->next_types = hash;
	}
	return DB_OK;
}

enum db_status
queue_claim(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, char *err, size_t errlen)
{
	char at[sizeof q->cursor.at];
	enum db_status st;
	uint64_t id;

	*claimed = 0;
	st = claim_row(q, types, ntypes, lock_seconds, token, &id, err,
	    errlen);
	q->cursor.set = 0;
	if (st != DB_OK || id == 0)
		return st;
	*claimed = 1;
	st = queue_read_job(q, id, token, job, at, sizeof at, err, errlen);
	if (st == DB_OK)
		queue_cursor_move(q, id, at);
	return st;
}

enum db_status
queue_claim_job(struct queue *q, uint64_t id, unsigned long lock_seconds,
    const char *token, struct job *job, int *claimed, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(token), DB_NUM(lock_seconds),
	    DB_NUM(lock_seconds), DB_NUM(id) };
	char at[sizeof q->cursor.at];
	enum db_status st;

	*claimed = 0;
	st = queue_stmt_run(q, Q_CLAIM_JOB, args, 4, err, errlen);
	if (st != DB_OK || queue_stmt_changed(q, Q_CLAIM_JOB) == 0)
		return st;
	*claimed = 1;
	return queue_read_job(q, id, token, job, at, sizeof at, err, errlen);
}

enum db_status
queue_claim_jobs(struct queue *q, const uint64_t *ids, size_t n,
    unsigned long lock_seconds, const char *const *tokens,
    struct job *const *jobs, char *err, size_t errlen)
{
	struct db_arg *rows = xcalloc(n, 4 * sizeof *rows);
	enum db_status st = DB_OK;
	size_t i;

	if (n == 0 || n > QUEUE_GROUP_MAX || !q->in_trx) {
		free(rows);
		errf(err, errlen, "claim %zu chosen jobs: 1 to %d, in a "
		    "transaction", n, QUEUE_GROUP_MAX);
		return DB_ERROR;
	}
	for (i = 0; i < n; i++) {
		rows[4 * i] = DB_STR(tokens[i]);
		rows[4 * i + 1] = DB_NUM(lock_seconds);
		rows[4 * i + 2] = DB_NUM(lock_seconds);
		rows[4 * i + 3] = DB_NUM(ids[i]);
	}
	/* One round trip where the server runs bulks, else one each.
	 * Whether each job was taken is known by reading them back
	 * (queue_read_claimed: one missing is a conflict in a transaction),
	 * not from the count of changed rows: a bulk's takes in the rows its
	 * triggers changed (an application's, counting claims, say). */
	if (n > 1 && db_bulk_supported(q->db))
		st = queue_run_rows(q, NULL, Q_CLAIM_JOB, rows, 4,
		    (unsigned)n, err, errlen);
	else
		for (i = 0; st == DB_OK && i < n; i++)
			st = queue_stmt_run(q, Q_CLAIM_JOB, &rows[4 * i], 4,
			    err, errlen);
	free(rows);
	return st == DB_OK ? queue_read_claimed(q, ids, tokens, jobs, n, err,
	    errlen) : st;
}

int
queue_many_claims(struct queue *q)
{
	return !queue_galera(q);
}

enum db_status
queue_claim_id(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *token, uint64_t *id, char *err,
    size_t errlen)
{
	return claim_row(q, types, ntypes, lock_seconds, token, id, err,
	    errlen);
}

/* Bulk claims need the server's bulk execution, and are not made on Galera:
 * there a transaction that a replicated write set aborted under a bulk
 * execution was seen (test/galera) to lose the statements before it without an
 * error, the group's marks with them, so groups there claim one by one.  Asked
 * once; a server that cannot say counts as Galera. */
static int
bulk_claims_ok(struct queue *q)
{
	return db_bulk_supported(q->db) && !queue_galera(q);
}

/* wsrep_on, asked once: caps.galera when it is on or the server cannot
 * say, caps.wsrep when it says on.  A server without the variable (MySQL:
 * error 1193) has no wsrep at all; taken for Galera, it made every keyed
 * claim one job at a time (test 62, on MySQL).  Judged by the error, not
 * by db_is_mysql(): Percona XtraDB Cluster is MySQL with Galera, and has
 * the variable. */
static void
probe_wsrep(struct queue *q)
{
	char *col = NULL, tmp[512];

	if (q->caps.galera_probed)
		return;
	q->caps.galera_probed = q->caps.galera = 1;
	if (queue_attempt(q, Q_WSREP, NULL, 0, tmp, sizeof tmp) == DB_OK &&
	    db_fetch(queue_handle(q, Q_WSREP), &col, 1, tmp,
	    sizeof tmp) == 1) {
		q->caps.galera = q->caps.wsrep = col != NULL &&
		    strcmp(col, "0") != 0 && strcasecmp(col, "OFF") != 0;
		if (col == NULL)
			q->caps.galera = 1;
		db_done(queue_handle(q, Q_WSREP));
	} else if (queue_last_errno(q) == ER_UNKNOWN_SYSTEM_VARIABLE)
		q->caps.galera = 0;
	free(col);
}

int
queue_galera(struct queue *q)
{
	probe_wsrep(q);
	return q->caps.galera;
}

int
queue_wsrep_on(struct queue *q)
{
	probe_wsrep(q);
	return q->caps.wsrep;
}

unsigned long
queue_lock_wait_seconds(struct queue *q)
{
	char *col = NULL, tmp[512];

	if (q->caps.lock_wait_probed &&
	    q->caps.lock_wait_conn == q->counters.reconnects)
		return q->caps.lock_wait;
	q->caps.lock_wait_probed = 1;
	q->caps.lock_wait_conn = q->counters.reconnects;
	q->caps.lock_wait = ULONG_MAX;
	if (queue_attempt(q, Q_LOCK_WAIT, NULL, 0, tmp, sizeof tmp) == DB_OK &&
	    db_fetch(queue_handle(q, Q_LOCK_WAIT), &col, 1, tmp,
	    sizeof tmp) == 1) {
		if (col != NULL)
			q->caps.lock_wait = (unsigned long)queue_number(col);
		db_done(queue_handle(q, Q_LOCK_WAIT));
	}
	free(col);
	return q->caps.lock_wait;
}

enum db_status
queue_claim_bulk(struct queue *q, const char *const *types, size_t ntypes,
    unsigned long lock_seconds, const char *const *tokens,
    struct job *const *jobs, size_t n, size_t *claimed, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	unsigned which, spread, after;
	struct db_arg *one, *rows;
	enum db_status st;
	size_t i, found;
	unsigned nargs;
	int by_priority;

	*claimed = 0;
	if (n < 2 || n > QUEUE_GROUP_MAX || ntypes == 0 || !q->in_trx ||
	    q->spread || !bulk_claims_ok(q))
		return DB_OK;
	st = queue_claim_priority_bulk(q, types, ntypes, lock_seconds, tokens,
	    jobs, n, types_hash(types, ntypes), &by_priority, claimed, err,
	    errlen);
	if (by_priority)
		return st;
	which = queue_claim_stmt(q, ntypes, &spread);
	after = which | Q_F_AFTER;
	if (!c->set || c->claim != which ||
	    c->types != types_hash(types, ntypes) ||
	    now_ms() - c->head_ms >= QUEUE_CURSOR_MS)
		return DB_OK;
	one = queue_claim_args(which, types, ntypes, lock_seconds, tokens[0],
	    &nargs);
	one[nargs] = DB_STR(c->at);
	one[nargs + 1] = DB_STR(c->at);
	one[nargs + 2] = DB_NUM(c->id);
	nargs += 3;
	rows = xcalloc(n * nargs, sizeof *rows);
	for (i = 0; i < n; i++) {
		memcpy(&rows[i * nargs], one, nargs * sizeof *one);
		rows[i * nargs] = DB_STR(tokens[i]);
	}
	/* In the transaction: a conflict or a lost connection is its
	 * caller's to run again whole (attempt_rows and stmt_run_rows). */
	st = queue_run_rows(q, NULL, after, rows, nargs, (unsigned)n, err,
	    errlen);
	free(rows);
	free(one);
	if (st != DB_OK)
		return st;
	if (queue_stmt_changed(q, after) == 0)
		return DB_OK;
	/* What the bulk took is what its tokens read back, in the same
	 * transaction.  Not compared with the count of changed rows: on MariaDB
	 * a bulk's count takes in the rows its table's triggers changed (an
	 * application's log of claims, say), and each bulk would then look
	 * like a conflict (test 27).  Safe only because bulk claims are never
	 * made on Galera (bulk_claims_ok), where a bulk was seen to lose its
	 * rows without an error: enabling them there needs a guard back. */
	st = queue_read_tokens(q, tokens, jobs, n, &found, err, errlen);
	*claimed = found;
	return st;
}

/* Run a fenced write; *owned says whether it found the job still ours. */
static enum db_status
fenced(struct queue *q, unsigned which, struct db_arg *args,
    unsigned nargs, int *owned, char *err, size_t errlen)
{
	enum db_status st = queue_stmt_run(q, which, args, nargs, err, errlen);

	*owned = st == DB_OK && queue_stmt_changed(q, which) == 1;
	return st;
}

/* A fenced write whose args[text] is a message for last_error.  Every message
 * is valid UTF-8, but a table made in utf8mb3 or latin1 cannot hold every
 * character, and in strict mode the server refuses the whole write (1366, or
 * 1977 for a conversion; MySQL: 3988, a parameter it cannot convert, in any
 * mode): the job would stay processing and every run that claimed it would end
 * the same way.  Refused so, the message is written again with the characters
 * utf8mb3 cannot hold as '?', and then with every character beyond ASCII so,
 * which every such character set holds. */
static enum db_status
fenced_text(struct queue *q, unsigned which, struct db_arg *args,
    unsigned nargs, unsigned text, int *owned, char *err, size_t errlen)
{
	static const size_t narrower[] = { 3, 1 };
	enum db_status st = fenced(q, which, args, nargs, owned, err, errlen);
	const char *message = args[text].str;
	size_t len, i;
	char *narrow;

	if (message == NULL)
		return st;
	len = args[text].len == DB_STRLEN ? strlen(message) : args[text].len;
	for (i = 0; i < 2 && st != DB_OK && (q->db->last_errno == 1366 ||
	    q->db->last_errno == 1977 || q->db->last_errno == 3988); i++) {
		narrow = utf8_narrow(message, len, narrower[i]);
		args[text] = DB_STR(narrow);
		st = fenced(q, which, args, nargs, owned, err, errlen);
		free(narrow);
	}
	args[text] = DB_STRN(message, len);
	return st;
}

enum db_status
queue_mark_success(struct queue *q, const struct job *job, const char *token,
    int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(job->id), DB_STR(token) };

	return fenced(q, Q_SUCCESS, args, 2, owned, err, errlen);
}

enum db_status
queue_mark_retry(struct queue *q, const struct job *job, const char *token,
    unsigned long delay, const char *last_error, int *owned, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_NUM(delay), DB_STR(last_error),
	    DB_NUM(job->id), DB_STR(token) };

	return fenced_text(q, Q_RETRY, args, 4, 1, owned, err, errlen);
}

enum db_status
queue_mark_failed(struct queue *q, const struct job *job, const char *token,
    const char *last_error, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(last_error), DB_NUM(job->id),
	    DB_STR(token) };

	return fenced_text(q, Q_FAIL, args, 3, 0, owned, err, errlen);
}

/* A fenced write that may change nothing (the same lock time or the same
 * checkpoint within one second): MariaDB then reports zero changed rows, which
 * is also what a lost lock reports, so ask with check whether the job is still
 * ours; *answer is check's one column ("1" true), when asked. */
static enum db_status
fenced_or_owner(struct queue *q, unsigned which, struct db_arg *args,
    unsigned nargs, unsigned check, const struct db_arg *check_args,
    unsigned check_nargs, int *owned, int *answer, char *err,
    size_t errlen)
{
	enum db_status st;
	char *col = NULL;

	st = fenced(q, which, args, nargs, owned, err, errlen);
	if (st != DB_OK || *owned)
		return st;
	st = queue_stmt_one(q, check, check_args, check_nargs, &col, 1, owned, err,
	    errlen);
	if (answer != NULL)
		*answer = col != NULL && strcmp(col, "1") == 0;
	free(col);
	return st;
}

enum db_status
queue_checkpoint(struct queue *q, const struct job *job, const char *token,
    const char *json, size_t len, unsigned long lock_seconds, int *owned,
    int *valid, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(json, len), DB_NUM(lock_seconds),
	    DB_NUM(lock_seconds), DB_NUM(job->id), DB_STR(token),
	    DB_STRN(json, len) };
	struct db_arg check[] = { DB_STRN(json, len), DB_NUM(job->id),
	    DB_STR(token) };
	enum db_status st;

	*valid = 1;
	st = fenced_or_owner(q, Q_CHECKPOINT, args, 6, Q_CHECKPOINT_CHECK,
	    check, 3, owned, valid, err, errlen);
	/* MySQL refuses text that is not JSON before the row is looked at
	 * (MariaDB's JSON_VALID answers 0): refused as not JSON; whether the
	 * lock is still ours the next write finds out, fenced. */
	if (st == DB_BAD_INPUT && db_json_refused(q->db->last_errno)) {
		*owned = 1;
		*valid = 0;
		return DB_OK;
	}
	if (st == DB_OK && !*owned)
		*valid = 1;	/* not asked: the lock is gone */
	return st;
}

enum db_status
queue_snooze(struct queue *q, const struct job *job, const char *token,
    unsigned long delay, int progress, const char *note, int *owned,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(progress != 0), DB_NUM(delay),
	    DB_STR(note), DB_NUM(job->id), DB_STR(token) };

	return fenced_text(q, Q_SNOOZE, args, 5, 2, owned, err, errlen);
}

enum db_status
queue_release(struct queue *q, const struct job *job, const char *token,
    int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(job->id), DB_STR(token) };

	return fenced(q, Q_RELEASE, args, 2, owned, err, errlen);
}

enum db_status
queue_extend(struct queue *q, const struct job *job, const char *token,
    unsigned long lock_seconds, int *owned, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(lock_seconds), DB_NUM(lock_seconds),
	    DB_NUM(job->id), DB_STR(token) };

	return fenced_or_owner(q, Q_EXTEND, args, 4, Q_OWNER, args + 2, 2,
	    owned, NULL, err, errlen);
}

enum db_status
queue_cancel_done(struct queue *q, const struct job *job, const char *token,
    int *done, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(job->id), DB_STR(token) };
	enum db_status st;

	st = queue_stmt_run(q, Q_CANCEL_DONE, args, 2, err, errlen);
	*done = st == DB_OK && queue_stmt_changed(q, Q_CANCEL_DONE) == 1;
	return st;
}
