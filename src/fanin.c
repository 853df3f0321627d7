/*
 * fanin.c - fan-in: after every job of a fan-out has finished, one job of
 * another type, once, with the counts of those that succeeded and failed.
 *
 * The fan-in is a row of jobrun_fan_ins (sql/006_fan_in.sql) with its
 * number of members, and each member a row of jobrun_fan_in_jobs.  When a
 * runner has committed a job's outcome it calls fanin_after_finish: in
 * one transaction that first locks the fan-in's row, the member's outcome
 * is recorded (once: only while it is still NULL), the fan-in's count
 * goes up, and when the count reaches the total, the fan-in is marked
 * fired and its callback enqueued.  The lock makes runners that finish
 * the last two jobs at the same moment take turns, and the one that comes
 * second sees the other's count; the callback's business key is UNIQUE,
 * and "fired" is set in the same transaction that inserts it, so it can
 * exist once even if a purge later deletes it.
 *
 * A runner can die between a job's mark and this transaction (SIGKILL,
 * a lost connection), or a member may have finished before it became a
 * member (a chunk that existed already, or that a runner took before
 * enqueue added its member row).  So fanin_settle recounts a fan-in from
 * the table: members whose job has finished get their outcome, the counts
 * are taken from the members, and a complete fan-in fires.  enqueue
 * settles its fan-in when it has added every member, and every run
 * settles every open fan-in of its table when it starts (the sweep).
 *
 * Every transaction locks the fan-in's row before any member row, so two
 * of them never wait for each other in a cycle; a deadlock or lock wait
 * all the same runs the whole transaction again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanin.h"
#include "queue_schema.h"
#include "util.h"

#define FANIN_RETRIES 5
/* The sweep's lock wait (s), the session's before put back after. */
#define FANIN_LOCK_WAIT 5

static const char *const texts[FI_COUNT_STMTS] = {
	/* Prepared, never run: the tables exist. */
	[FI_PROBE] = "SELECT m.job_id FROM " FANIN_JOBS_TABLE " AS m JOIN "
	    FANIN_TABLE " AS f ON f.id = m.fan_in_id WHERE FALSE",
	[FI_MEMBER_OF] = "SELECT fan_in_id FROM " FANIN_JOBS_TABLE
	    " WHERE job_id = ?",
	[FI_LOCK] = "SELECT total, succeeded, failed, then_type, then_key,"
	    " then_payload FROM " FANIN_TABLE " WHERE id = ?"
	    " AND fired_at IS NULL FOR UPDATE",
	/* (outcome, job, fan-in) */
	[FI_SET_OUTCOME] = "UPDATE " FANIN_JOBS_TABLE " SET outcome = ?"
	    " WHERE job_id = ? AND fan_in_id = ? AND outcome IS NULL",
	/* (succeeded, failed, fan-in) */
	[FI_COUNT] = "UPDATE " FANIN_TABLE " SET succeeded = succeeded + ?,"
	    " failed = failed + ? WHERE id = ?",
	[FI_FIRE] = "UPDATE " FANIN_TABLE " SET fired_at = NOW()"
	    " WHERE id = ? AND fired_at IS NULL",
	/* The callback's payload: the fan-in's object with the counts set
	 * by the server.  (payload, total, succeeded, failed) */
	[FI_PAYLOAD] = "SELECT JSON_SET(IFNULL(?, '{}'), '$.total', ?,"
	    " '$.succeeded', ?, '$.failed', ?)",
	/* (table, table, table): also the fan-ins an earlier jobrun made
	 * under the table's name as configured */
	[FI_OPEN] = "SELECT id FROM " FANIN_TABLE " WHERE job_table "
	    QUEUE_TABLE_IDS " AND fired_at IS NULL",
	/* The sweep's next window: how many members not yet counted come
	 * after a job id, at most a batch of them, and the last one's
	 * (idx_fan_in, whose rows end with the job id, read in order).
	 * (fan-in, after, batch) */
	[FI_WINDOW] = "SELECT COUNT(*), IFNULL(MAX(w.job_id), 0) FROM"
	    " (SELECT job_id FROM " FANIN_JOBS_TABLE " WHERE fan_in_id = ?"
	    " AND outcome IS NULL AND job_id > ? ORDER BY job_id LIMIT ?)"
	    " AS w",
	/* Members whose job finished without the hook counting it, each
	 * outcome apart so that the counts go up by the rows changed.
	 * (fan-in, after, up to) */
	[FI_SETTLE_SUCCESS] = "UPDATE " FANIN_JOBS_TABLE " AS m"
	    QUEUE_JOIN_JOBS("j", "m.job_id") " SET m.outcome = '" QUEUE_SUCCESS
	    "' WHERE m.fan_in_id = ? AND m.outcome IS NULL"
	    " AND m.job_id > ? AND m.job_id <= ? AND"
	    QUEUE_STATUS_IS("j", QUEUE_SUCCESS),
	[FI_SETTLE_FAILED] = "UPDATE " FANIN_JOBS_TABLE " AS m"
	    QUEUE_JOIN_JOBS("j", "m.job_id") " SET m.outcome = '" QUEUE_FAILED
	    "' WHERE m.fan_in_id = ? AND m.outcome IS NULL"
	    " AND m.job_id > ? AND m.job_id <= ? AND"
	    QUEUE_STATUS_IS("j", QUEUE_FAILED),
	/* (table, table, type, key, payload, total) */
	[FI_CREATE] = "INSERT INTO " FANIN_TABLE " (job_table, then_type,"
	    " then_key, then_payload, total, created_at)"
	    " VALUES (" QUEUE_TABLE_ID ", ?, ?, ?, ?, NOW())"
	    " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
	[FI_OPEN_LIST] = "SELECT then_key, succeeded + failed, total FROM "
	    FANIN_TABLE " WHERE job_table " QUEUE_TABLE_IDS
	    " AND fired_at IS NULL ORDER BY id",
	[FI_ANY_OPEN] = "SELECT 1 FROM " FANIN_TABLE " WHERE job_table "
	    QUEUE_TABLE_IDS
	    " AND fired_at IS NULL LIMIT 1",
	/* (fan-in, fan-in) */
	[FI_STATE] = "SELECT then_type, fired_at IS NOT NULL, total,"
	    " (SELECT COUNT(*) FROM " FANIN_JOBS_TABLE " WHERE fan_in_id = ?)"
	    " FROM " FANIN_TABLE " WHERE id = ?",
	/* The jobs the members are, as the table holds them: lines that
	 * name one job under its collation made one member.  (fan-in,
	 * fan-in) */
	[FI_RECOUNT] = "UPDATE " FANIN_TABLE " SET total = (SELECT COUNT(*)"
	    " FROM " FANIN_JOBS_TABLE " WHERE fan_in_id = ?)"
	    " WHERE id = ? AND fired_at IS NULL",
	/* Prepared, never run: a member's insert, as fanin_add_members
	 * makes it for a list of keys, needs this privilege. */
	[FI_ADD_ONE] = "INSERT INTO " FANIN_JOBS_TABLE " (job_id, fan_in_id)"
	    " VALUES (?, ?) ON DUPLICATE KEY UPDATE job_id = job_id",
	/* The fan-in, open or fired, whose callback key the job table
	 * takes for this one (table, table, table, key) */
	[FI_KNOWN] = "SELECT f.then_key FROM " FANIN_TABLE " AS f WHERE"
	    " f.job_table " QUEUE_TABLE_IDS " AND" QUEUE_KEY_IS("f.then_key")
	    " ORDER BY f.id LIMIT 1",
};

static const char *const purposes[FI_COUNT_STMTS] = {
	[FI_PROBE] = "check the fan-in tables",
	[FI_MEMBER_OF] = "look up a job's fan-ins",
	[FI_LOCK] = "lock a fan-in",
	[FI_SET_OUTCOME] = "record a member's outcome",
	[FI_COUNT] = "count a fan-in's outcomes",
	[FI_FIRE] = "fire a fan-in",
	[FI_PAYLOAD] = "make a fan-in's payload",
	[FI_OPEN] = "look for complete fan-ins",
	[FI_SETTLE_SUCCESS] = "settle a fan-in's succeeded members",
	[FI_SETTLE_FAILED] = "settle a fan-in's failed members",
	[FI_CREATE] = "add a fan-in",
	[FI_OPEN_LIST] = "list open fan-ins",
	[FI_ANY_OPEN] = "look for open fan-ins",
	[FI_STATE] = "read a fan-in",
	[FI_RECOUNT] = "count a fan-in's members",
	[FI_ADD_ONE] = "add a fan-in's member",
	[FI_KNOWN] = "look up a fan-in's key",
	[FI_WINDOW] = "read a fan-in's members not yet counted",
};

/* The table each statement works on (NULL: none). */
static const char *const tables[FI_COUNT_STMTS] = {
	[FI_PROBE] = FANIN_JOBS_TABLE " and " FANIN_TABLE,
	[FI_MEMBER_OF] = FANIN_JOBS_TABLE,
	[FI_LOCK] = FANIN_TABLE,
	[FI_SET_OUTCOME] = FANIN_JOBS_TABLE,
	[FI_COUNT] = FANIN_TABLE,
	[FI_FIRE] = FANIN_TABLE,
	[FI_OPEN] = FANIN_TABLE,
	[FI_SETTLE_SUCCESS] = FANIN_JOBS_TABLE,
	[FI_SETTLE_FAILED] = FANIN_JOBS_TABLE,
	[FI_CREATE] = FANIN_TABLE,
	[FI_OPEN_LIST] = FANIN_TABLE,
	[FI_ANY_OPEN] = FANIN_TABLE,
	[FI_STATE] = FANIN_TABLE,
	[FI_RECOUNT] = FANIN_TABLE,
	[FI_ADD_ONE] = FANIN_JOBS_TABLE,
	[FI_KNOWN] = FANIN_TABLE,
	[FI_WINDOW] = FANIN_JOBS_TABLE,
};

/* The statements whose privileges jobrun uses on the tables (SELECT,
 * INSERT, UPDATE on each), the look first. */
static const size_t uses[] = { FI_PROBE, FI_CREATE, FI_COUNT, FI_ADD_ONE,
    FI_SET_OUTCOME };
#define NUSES (sizeof uses / sizeof uses[0])

static const struct queue_feature feature = {
	{ FANIN_TABLE, FANIN_JOBS_TABLE }, FANIN_PRIVILEGES, FANIN_MIGRATION
};

void
fanin_open(struct fanin *fi, struct queue *q, const struct log *lg)
{
	memset(fi, 0, sizeof *fi);
	fi->q = q;
	fi->set = queue_stmts_open(q, texts, purposes, tables,
	    FI_COUNT_STMTS, NULL);
	fi->lg = lg;
}

void
fanin_close(struct fanin *fi)
{
	queue_stmts_close(fi->set);
	fi->set = NULL;
}

static enum db_status
fail_with(enum db_status st, char *err, size_t errlen, const char *cause)
{
	errf(err, errlen, "%s", cause);
	return st;
}

/* Run statement w; with ncols, read its one row into cols. */
static enum db_status
run(struct fanin *fi, enum fanin_stmt w, const struct db_arg *args,
    unsigned nargs, char **cols, unsigned ncols, int *found, char *err,
    size_t errlen)
{
	if (ncols == 0)
		return queue_stmts_run(fi->set, w, args, nargs, err, errlen);
	return queue_stmts_one(fi->set, w, args, nargs, cols, ncols, found,
	    err, errlen);
}

static uint64_t
changed(const struct fanin *fi, enum fanin_stmt w)
{
	return queue_stmts_changed(fi->set, w);
}

static uint64_t
number(const char *s)
{
	return s != NULL ? strtoull(s, NULL, 10) : 0;
}

/* The fan-in's row, locked, while it is open: cols[0..5] as FI_LOCK. */
enum { L_TOTAL, L_SUCCEEDED, L_FAILED, L_TYPE, L_KEY, L_PAYLOAD, L_COLS };

/* Mark the locked fan-in (cols) fired and enqueue its callback, in the
 * caller's transaction. */
static enum db_status
fire(struct fanin *fi, uint64_t id, char **cols, int *fired, char *err,
    size_t errlen)
{
	struct db_arg fire_args[1] = { DB_NUM(id) };
	struct db_arg args[4] = { DB_STR(cols[L_PAYLOAD]),
	    DB_NUM(number(cols[L_TOTAL])), DB_NUM(number(cols[L_SUCCEEDED])),
	    DB_NUM(number(cols[L_FAILED])) };
	struct queue_when when = { NULL, 0, 0, NULL, 0, 0, 0 };
	char *payload = NULL, *status = NULL;
	enum db_status st;
	uint64_t job = 0;
	int found = 0, created = 0;

	st = run(fi, FI_FIRE, fire_args, 1, NULL, 0, NULL, err, errlen);
	if (st != DB_OK || changed(fi, FI_FIRE) == 0)
		return st;
	st = run(fi, FI_PAYLOAD, args, 4, &payload, 1, &found, err, errlen);
	if (st == DB_OK && (!found || payload == NULL))
		st = fail_with(DB_BAD_INPUT, err, errlen, "the fan-in's "
		    "payload is not a JSON object");
	if (st == DB_OK)
		st = queue_enqueue(fi->q, cols[L_TYPE], cols[L_KEY],
		    payload, strlen(payload), &when, 0, &job, &created,
		    &status, err, errlen);
	if (st == DB_OK) {
		*fired = 1;
		log_msg(fi->lg, LV_INFO, "fan-in %s: %s of %s finished (%s "
		    "failed): job %llu %s", cols[L_KEY], cols[L_TOTAL],
		    cols[L_TOTAL], cols[L_FAILED], (unsigned long long)job,
		    created ? "enqueued" : "existed already");
	}
	free(payload);
	free(status);
	return st;
}

static int
complete(char **cols)
{
	return number(cols[L_SUCCEEDED]) + number(cols[L_FAILED]) >=
	    number(cols[L_TOTAL]);
}

/* The members a settle counts: those not counted yet whose job ids are
 * in (after, upto].  enqueue's take every one (batch 0); the sweep's end
 * at the batch'th such member, read in the transaction (members: how
 * many there were; counted: how many of them had finished). */
struct window {
	uint64_t after, upto, batch;
	uint64_t members, counted;
};

/* The body of a transaction of this file: (fi, a, b, win, fired). */
typedef enum db_status fanin_body(struct fanin *, uint64_t, uint64_t,
    struct window *, int *, char *, size_t);

struct fanin_trx {
	struct fanin *fi;
	fanin_body *body;
	uint64_t a, b;
	struct window *win;
	int *fired;
};

static enum db_status
fanin_trx_body(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct fanin_trx *t = arg;

	(void)w;	/* idempotent: each write is conditional */
	*t->fired = 0;
	return t->body(t->fi, t->a, t->b, t->win, t->fired, err, errlen);
}

/* One transaction, in the queue's helper: run again whole after a
 * deadlock, a lost connection or a lost COMMIT (each write changes only
 * what is still to change, so twice is once); a lock wait that timed
 * out is another runner holding the fan-in for as long: not again. */
static enum db_status
in_transaction(struct fanin *fi, fanin_body *body, uint64_t a, uint64_t b,
    struct window *win, int *fired, char *err, size_t errlen)
{
	struct fanin_trx arg = { fi, body, a, b, win, fired };
	struct queue_trx t = { fanin_trx_body, NULL, NULL, &arg,
	    FANIN_RETRIES, 1, 0 };

	return queue_trx(fi->q, &t, err, errlen);
}

/* The hook's transaction for job in fan-in id. */
static enum db_status
count_job(struct fanin *fi, uint64_t id, uint64_t job, struct window *win,
    int *fired, char *err, size_t errlen)
{
	struct db_arg lock[1] = { DB_NUM(id) };
	struct db_arg set[3], count[3];
	char *cols[L_COLS] = { NULL }, *status = NULL;
	enum db_status st;
	int found = 0, ok;

	(void)win;
	st = run(fi, FI_LOCK, lock, 1, cols, L_COLS, &found, err, errlen);
	if (st != DB_OK || !found)
		goto out;
	/* The member's status, read in the transaction that holds the
	 * fan-in's lock. */
	st = queue_job_status(fi->q, job, &status, err, errlen);
	if (st != DB_OK || status == NULL ||
	    (strcmp(status, QUEUE_SUCCESS) != 0 &&
	    strcmp(status, QUEUE_FAILED) != 0))
		goto out;
	ok = strcmp(status, QUEUE_SUCCESS) == 0;
	set[0] = DB_STR(ok ? QUEUE_SUCCESS : QUEUE_FAILED);
	set[1] = DB_NUM(job);
	set[2] = DB_NUM(id);
	st = run(fi, FI_SET_OUTCOME, set, 3, NULL, 0, NULL, err, errlen);
	if (st != DB_OK)
		goto out;
	if (changed(fi, FI_SET_OUTCOME) == 1) {
		count[0] = DB_NUM(ok);
		count[1] = DB_NUM(!ok);
		count[2] = DB_NUM(id);
		st = run(fi, FI_COUNT, count, 3, NULL, 0, NULL, err, errlen);
		if (st != DB_OK)
			goto out;
		db_free_cols(cols, L_COLS);
		st = run(fi, FI_LOCK, lock, 1, cols, L_COLS, &found, err,
		    errlen);
	}
	if (st == DB_OK && found && complete(cols))
		st = fire(fi, id, cols, fired, err, errlen);
out:
	db_free_cols(cols, L_COLS);
	free(status);
	return st;
}

/* In settle's transaction: the sweep's window of fan-in id read (its
 * end and members), then its members whose job has finished counted:
 * *ok succeeded, *failed failed. */
static enum db_status
count_window(struct fanin *fi, uint64_t id, struct window *w,
    uint64_t *ok, uint64_t *failed, char *err, size_t errlen)
{
	struct db_arg read[3] = { DB_NUM(id), DB_NUM(w->after),
	    DB_NUM(w->batch) }, range[3];
	char *cols[2] = { NULL, NULL };
	enum db_status st = DB_OK;
	int found = 0;

	*ok = *failed = 0;
	w->members = w->counted = 0;
	if (w->batch > 0) {
		st = run(fi, FI_WINDOW, read, 3, cols, 2, &found, err,
		    errlen);
		w->members = number(cols[0]);
		w->upto = number(cols[1]);
		db_free_cols(cols, 2);
		if (st != DB_OK || w->members == 0)
			return st;
	}
	range[0] = DB_NUM(id);
	range[1] = DB_NUM(w->after);
	range[2] = DB_NUM(w->upto);
	st = run(fi, FI_SETTLE_SUCCESS, range, 3, NULL, 0, NULL, err, errlen);
	if (st == DB_OK) {
		*ok = changed(fi, FI_SETTLE_SUCCESS);
		st = run(fi, FI_SETTLE_FAILED, range, 3, NULL, 0, NULL, err,
		    errlen);
	}
	if (st == DB_OK)
		*failed = changed(fi, FI_SETTLE_FAILED);
	w->counted = *ok + *failed;
	return st;
}

/* settle's transaction for fan-in id, over the members of window w;
 * with recount, its total becomes its number of members first
 * (fanin_finish). */
static enum db_status
settle(struct fanin *fi, uint64_t id, uint64_t recount, struct window *w,
    int *fired, char *err, size_t errlen)
{
	struct db_arg one[1] = { DB_NUM(id) }, two[2] = { DB_NUM(id),
	    DB_NUM(id) }, count[3];
	char *cols[L_COLS] = { NULL };
	uint64_t ok = 0, failed = 0;
	enum db_status st;
	int found = 0;

	w->members = w->counted = 0;
	st = run(fi, FI_LOCK, one, 1, cols, L_COLS, &found, err, errlen);
	if (st != DB_OK || !found)
		goto out;
	if (recount) {
		st = run(fi, FI_RECOUNT, two, 2, NULL, 0, NULL, err, errlen);
		db_free_cols(cols, L_COLS);
		if (st == DB_OK)
			st = run(fi, FI_LOCK, one, 1, cols, L_COLS, &found,
			    err, errlen);
		if (st != DB_OK || !found)
			goto out;
	}
	st = count_window(fi, id, w, &ok, &failed, err, errlen);
	if (st == DB_OK && ok + failed > 0) {
		count[0] = DB_NUM(ok);
		count[1] = DB_NUM(failed);
		count[2] = DB_NUM(id);
		st = run(fi, FI_COUNT, count, 3, NULL, 0, NULL, err, errlen);
		db_free_cols(cols, L_COLS);
		if (st == DB_OK)
			st = run(fi, FI_LOCK, one, 1, cols, L_COLS, &found,
			    err, errlen);
	}
	if (st == DB_OK && found && complete(cols))
		st = fire(fi, id, cols, fired, err, errlen);
out:
	db_free_cols(cols, L_COLS);
	return st;
}

/* Every member not yet counted (enqueue's settles). */
#define WHOLE { 0, UINT64_MAX, 0, 0, 0 }

enum db_status
fanin_settle(struct fanin *fi, uint64_t id, int *fired, char *err,
    size_t errlen)
{
	struct window w = WHOLE;

	return in_transaction(fi, settle, id, 0, &w, fired, err, errlen);
}

/* The fan-in's row: cols[0..3] as FI_STATE. */
static enum db_status
read_state(struct fanin *fi, uint64_t id, struct fanin_state *state,
    char *err, size_t errlen)
{
	struct db_arg args[2] = { DB_NUM(id), DB_NUM(id) };
	char *cols[4] = { NULL, NULL, NULL, NULL };
	enum db_status st;
	int found = 0;

	st = run(fi, FI_STATE, args, 2, cols, 4, &found, err, errlen);
	if (st == DB_OK && !found)
		st = fail_with(DB_ERROR, err, errlen, "the fan-in vanished");
	if (st == DB_OK) {
		free(state->then_type);
		state->then_type = cols[0];
		cols[0] = NULL;
		state->fired = number(cols[1]) != 0;
		state->total = number(cols[2]);
		state->members = number(cols[3]);
	}
	db_free_cols(cols, 4);
	return st;
}

void
fanin_state_free(struct fanin_state *state)
{
	free(state->then_type);
	state->then_type = NULL;
}

enum db_status
fanin_finish(struct fanin *fi, uint64_t id, int *fired, uint64_t *total,
    char *err, size_t errlen)
{
	struct fanin_state state = { 0 };
	struct window w = WHOLE;
	enum db_status st;

	*total = 0;
	st = in_transaction(fi, settle, id, 1, &w, fired, err, errlen);
	if (st == DB_OK)
		st = read_state(fi, id, &state, err, errlen);
	if (st == DB_OK)
		*total = state.total;
	fanin_state_free(&state);
	return st;
}

/* Whether the tables are there for the account: preparing a statement
 * on both says; absent or not granted, fan-in is off (queue_unseen). */
static enum db_status
probe(struct fanin *fi, char *err, size_t errlen)
{
	enum queue_reach reach;
	enum db_status st;

	st = queue_stmts_reach(fi->set, uses, 1, &reach, err, errlen);
	fi->active = st == DB_OK && reach == QUEUE_REACHED;
	return st;
}

/* Every privilege jobrun uses on the tables tried, on fi's statements. */
static enum db_status
access_of(struct fanin *fi, struct queue_access *a, char *err, size_t errlen)
{
	enum db_status st;

	st = queue_stmts_reach(fi->set, uses, NUSES, &a->reach, err, errlen);
	if (st == DB_OK && a->reach != QUEUE_REACHED)
		queue_access_say(fi->q, a->reach, &feature, a);
	return st;
}

enum db_status
fanin_access(struct queue *q, struct queue_access *a, char *err,
    size_t errlen)
{
	struct fanin fi;
	enum db_status st;

	fanin_open(&fi, q, NULL);
	st = access_of(&fi, a, err, errlen);
	fanin_close(&fi);
	return st;
}

/* The sweep's settles of fan-in id, a window of at most
 * FANIN_SWEEP_BATCH members not yet counted at a time, the lowest job ids
 * first: on to the next while every member of one had finished (each
 * read counted a member, which happens once), until it fires or a window
 * holds a job still to finish; such a window's reads are what an open
 * fan-in costs a sweep. */
static enum db_status
sweep_one(struct fanin *fi, uint64_t id, char *err, size_t errlen)
{
	struct window w = { 0, 0, FANIN_SWEEP_BATCH, 0, 0 };
	enum db_status st;
	int fired = 0;

	do {
		w.after = w.upto;
		st = in_transaction(fi, settle, id, 0, &w, &fired, err,
		    errlen);
	} while (st == DB_OK && !fired && w.members == FANIN_SWEEP_BATCH &&
	    w.counted == w.members);
	return st;
}

enum db_status
fanin_sweep(struct fanin *fi, char *err, size_t errlen)
{
	struct db_arg args[3] = { QUEUE_TABLE_IDS_ARGS(fi->q) };
	uint64_t *ids = NULL;
	size_t n = 0, i;
	char *col = NULL, cause[768];
	enum db_status st;
	int rc;

	if ((st = probe(fi, err, errlen)) != DB_OK || !fi->active)
		return st;
	st = run(fi, FI_OPEN, args, 3, NULL, 0, NULL, cause, sizeof cause);
	while (st == DB_OK && (rc = queue_stmts_fetch(fi->set, FI_OPEN, &col,
	    1, cause, sizeof cause)) != 0) {
		if (rc < 0) {
			st = DB_ERROR;
			break;
		}
		ids = xrealloc(ids, (n + 1) * sizeof *ids);
		ids[n++] = number(col);
		free(col);
		col = NULL;
	}
	/* A fan-in whose row another holds is skipped after a short wait
	 * (a stalled runner must not hold up every run's start); the next
	 * run settles it. */
	if (st == DB_OK && n > 0)
		st = queue_lock_wait(fi->q, FANIN_LOCK_WAIT, cause,
		    sizeof cause);
	for (i = 0; st == DB_OK && i < n; i++) {
		st = sweep_one(fi, ids[i], cause, sizeof cause);
		if (st == DB_CONFLICT) {
			log_msg(fi->lg, LV_WARN, "fan-in %llu: skipped in this "
			    "run: %s", (unsigned long long)ids[i], cause);
			st = DB_OK;
		}
	}
	if (st == DB_OK && n > 0)
		st = queue_lock_wait(fi->q, 0, cause, sizeof cause);
	if (st != DB_OK)
		errf(err, errlen, "settle fan-ins: %s", cause);
	free(ids);
	return st;
}

/* Whether a fan-in of the table is open, asked at most once a second: a
 * run that finishes jobs while none is open pays one query a second,
 * not one a job.  A fan-in made meanwhile counts its members' outcomes
 * when enqueue settles it, and the next run's sweep counts any this run
 * missed. */
static int
any_open(struct fanin *fi)
{
	struct db_arg args[3] = { QUEUE_TABLE_IDS_ARGS(fi->q) };
	int64_t now = now_ms();
	char err[512], *col = NULL;
	int found = 0;

	if (fi->open_checked != 0 && now - fi->open_checked < 1000)
		return fi->open;
	fi->open_checked = now;
	if (run(fi, FI_ANY_OPEN, args, 3, &col, 1, &found, err, sizeof err) !=
	    DB_OK)
		found = 1;	/* the hook's own statements will say */
	free(col);
	return fi->open = found;
}

void
fanin_after_finish(struct fanin *fi, uint64_t job_id)
{
	struct db_arg args[1] = { DB_NUM(job_id) };
	char err[768], *col = NULL;
	uint64_t ids[16];
	size_t n = 0, i;
	enum db_status st;
	int rc, fired;

	if (fi == NULL || !fi->active || !any_open(fi))
		return;
	st = run(fi, FI_MEMBER_OF, args, 1, NULL, 0, NULL, err, sizeof err);
	while (st == DB_OK && (rc = queue_stmts_fetch(fi->set, FI_MEMBER_OF,
	    &col, 1, err, sizeof err)) != 0) {
		if (rc < 0) {
			st = DB_ERROR;
			break;
		}
		/* More fan-ins than that for one job: the sweep counts the
		 * rest. */
		if (n < sizeof ids / sizeof ids[0])
			ids[n++] = number(col);
		free(col);
		col = NULL;
	}
	for (i = 0; st == DB_OK && i < n; i++)
		st = in_transaction(fi, count_job, ids[i], job_id, NULL,
		    &fired, err, sizeof err);
	if (st != DB_OK)
		log_msg(fi->lg, LV_WARN, "fan-in of job %llu: %s (the next "
		    "run counts it)", (unsigned long long)job_id, err);
}

/* The spelling under which then_key is known (*out, malloc'ed): a
 * fan-in's callback key, open or fired, that the job table's collation
 * takes for equal (the server compares), else a job's (its callback,
 * say, enqueued by hand); else NULL.  jobrun_fan_ins compares its keys
 * byte for byte (utf8mb4_bin), so two prefixes the job table takes for
 * one ("Fan", "fan") would otherwise make two fan-ins over the same jobs,
 * and two callbacks once the first was purged. */
static enum db_status
known_spelling(struct fanin *fi, const char *then_key, char **out,
    char *err, size_t errlen)
{
	struct db_arg args[4] = { QUEUE_TABLE_IDS_ARGS(fi->q),
	    DB_STR(then_key) };
	enum db_status st;
	int found = 0;

	*out = NULL;
	st = run(fi, FI_KNOWN, args, 4, out, 1, &found, err, errlen);
	if (st != DB_OK || *out != NULL)
		return st;
	return queue_key_spelling(fi->q, then_key, out, err, errlen);
}

enum db_status
fanin_create(struct fanin *fi, const char *then_type, const char *then_key,
    const char *payload, uint64_t total, uint64_t *id,
    struct fanin_state *state, char *err, size_t errlen)
{
	struct db_arg args[6] = { QUEUE_TABLE_ID_ARGS(fi->q),
	    DB_STR(then_type), DB_STR(then_key), DB_STR(payload),
	    DB_NUM(total) };
	struct queue_access a;
	enum db_status st;
	char *known = NULL;

	st = access_of(fi, &a, err, errlen);
	if (st == DB_OK && a.reach != QUEUE_REACHED) {
		errf(err, errlen, "enqueue --then needs the fan-in tables: %s; "
		    "%s", a.why, a.fix);
		return a.status;
	}
	if (st != DB_OK)
		return st;
	fi->active = 1;
	memset(state, 0, sizeof *state);
	if ((st = known_spelling(fi, then_key, &known, err, errlen)) != DB_OK)
		return st;
	if (known != NULL)	/* the key, after the table and the type */
		args[3] = DB_STR(known);
	st = run(fi, FI_CREATE, args, 6, NULL, 0, NULL, err, errlen);
	free(known);
	if (st != DB_OK)
		return st;
	*id = queue_stmts_insert_id(fi->set, FI_CREATE);
	/* One row inserted; an existing one is left unchanged (0). */
	state->existed = changed(fi, FI_CREATE) != 1;
	return read_state(fi, *id, state, err, errlen);
}

/* Run text, a statement of one use on the fan-in's members, with (id,
 * keys...), through the queue's runner; with ids, read its job ids. */
static enum db_status
run_key_list(struct fanin *fi, const char *what, const char *head,
    const char *tail, uint64_t id, const char *const *keys, size_t n,
    uint64_t **ids, size_t *nids, char *err, size_t errlen)
{
	char *text = queue_list_text(head, n, tail);
	struct db_arg *args = xcalloc(n + 1, sizeof *args);
	struct queue_stmts *set;
	enum db_status st;
	char *col = NULL;
	size_t i;
	int rc;

	args[0] = DB_NUM(id);
	for (i = 0; i < n; i++)
		args[i + 1] = DB_STR(keys[i]);
	set = queue_stmts_once(fi->q, text, what, FANIN_JOBS_TABLE);
	st = queue_stmts_run(set, 0, args, (unsigned)(n + 1), err, errlen);
	while (st == DB_OK && ids != NULL && (rc = queue_stmts_fetch(set, 0,
	    &col, 1, err, errlen)) != 0) {
		if (rc < 0) {
			st = DB_ERROR;
			break;
		}
		*ids = xrealloc(*ids, (*nids + 1) * sizeof **ids);
		(*ids)[(*nids)++] = number(col);
		free(col);
		col = NULL;
	}
	queue_stmts_close(set);
	free(text);
	free(args);
	return st;
}

enum db_status
fanin_members_named(struct fanin *fi, uint64_t id, const char *const *keys,
    size_t n, uint64_t **ids, size_t *nids, char *err, size_t errlen)
{
	if (n == 0)
		return DB_OK;
	return run_key_list(fi, "read a fan-in's members",
	    "SELECT m.job_id FROM " FANIN_JOBS_TABLE " AS m WHERE"
	    " m.fan_in_id = ? AND m.job_id IN (SELECT j.id FROM"
	    QUEUE_JOBS_KEYED_IN("j"), "))", id, keys, n, ids, nids, err,
	    errlen);
}

enum db_status
fanin_add_members(struct fanin *fi, uint64_t id, const char *const *keys,
    size_t n, char *err, size_t errlen)
{
	if (n == 0)
		return DB_OK;
	return run_key_list(fi, "add a fan-in's members",
	    "INSERT INTO " FANIN_JOBS_TABLE " (job_id,"
	    " fan_in_id) SELECT j.id, ? FROM" QUEUE_JOBS_KEYED_IN("j"),
	    ") ON DUPLICATE KEY UPDATE job_id = job_id", id, keys, n, NULL,
	    NULL, err, errlen);
}

enum db_status
fanin_list(struct fanin *fi, struct fanin_view **out, size_t *n, char *err,
    size_t errlen)
{
	struct db_arg args[3] = { QUEUE_TABLE_IDS_ARGS(fi->q) };
	char *cols[3] = { NULL, NULL, NULL };
	enum db_status st;
	int rc;

	*out = NULL;
	*n = 0;
	if ((st = probe(fi, err, errlen)) != DB_OK || !fi->active)
		return st;
	st = run(fi, FI_OPEN_LIST, args, 3, NULL, 0, NULL, err, errlen);
	while (st == DB_OK && (rc = queue_stmts_fetch(fi->set, FI_OPEN_LIST,
	    cols, 3, err, errlen)) != 0) {
		if (rc < 0) {
			st = DB_ERROR;
			break;
		}
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		(*out)[*n] = (struct fanin_view){ .key = cols[0],
		    .done = number(cols[1]), .total = number(cols[2]) };
		(*n)++;
		free(cols[1]);
		free(cols[2]);
		cols[0] = cols[1] = cols[2] = NULL;
	}
	return st;
}

void
fanin_list_free(struct fanin_view *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].key);
	free(v);
}
