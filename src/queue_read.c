/*
 * queue_read.c - reading back the jobs a run claimed: one by id and token,
 * a group's by their ids and tokens, a bulk claim's by tokens past the
 * cursor, and what each row's columns make of a job (handler.h's struct
 * job).  The claims themselves and the writes after them are in
 * queue_cycle.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"
#include "util.h"

/* The claimed row: (id, token).  JSON_VALID is the server's judgement of the
 * payload, the one rule the application's inserts also met; next_run_at, as it
 * is stored, is the claim's cursor; then the job's start latency, by the
 * server's clock.  Q_F_RESUMABLE adds sql/002's columns. */
#define READ "SELECT id, type, business_key, payload, attempts," \
	" max_attempts, IFNULL(JSON_VALID(payload), 1), next_run_at," \
	" TIMESTAMPDIFF(MICROSECOND, GREATEST(next_run_at, created_at)," \
	" NOW(6)) DIV 1000"
/* The same, when MySQL's JSON_VALID refused the payload with an error (a
 * text column nested past its 100 levels) where MariaDB answers 0. */
#define READ_REFUSED "SELECT id, type, business_key, payload, attempts," \
	" max_attempts, 0, next_run_at," \
	" TIMESTAMPDIFF(MICROSECOND, GREATEST(next_run_at, created_at)," \
	" NOW(6)) DIV 1000"
/* Then the seconds to the job's deadline (sql/009's column; negative once
 * it passed, NULL for none) and the job's age, both by the server's
 * clock: the runner judges a type's deadline by the age. */
#define READ_DEADLINE \
	{ Q_F_DEADLINE, 0, ", TIMESTAMPDIFF(SECOND, NOW(), deadline)" }, \
	{ 0, Q_F_DEADLINE, ", NULL" }, \
	{ 0, 0, ", TIMESTAMPDIFF(SECOND, created_at, NOW())" }
#define READ_MORE READ_DEADLINE, { Q_F_RESUMABLE, 0, ", checkpoint, snoozes" }
/* The columns a read fetches: READ's and READ_DEADLINE's, and sql/002's
 * two when resumable. */
#define READ_COLS(which) ((which) & Q_F_RESUMABLE ? 13u : 11u)
#define READ_COLS_MAX 13

const struct queue_sql queue_read_sql[Q_COUNT] = {
	[Q_READ] = { "read the claimed job", (const struct queue_piece[]){
		{ 0, Q_F_REFUSED, READ }, { Q_F_REFUSED, 0, READ_REFUSED },
		READ_MORE, { 0, 0, " FROM %1$s" FENCE },
		{ 0, 0, NULL } }, Q_F_RESUMABLE | Q_F_REFUSED | Q_F_DEADLINE,
	    NULL, 0 },
	[Q_READ_MANY] = { "read the claimed jobs", (const struct queue_piece[]){
		{ 0, 0, READ }, READ_MORE, { 0, 0, " FROM %1$s" FENCE_MANY },
		{ 0, 0, NULL } }, Q_F_RESUMABLE | Q_F_DEADLINE, NULL, 0 },
	/* The jobs a bulk claim took past the cursor (time, time, id), by
	 * token: in idx_pick's 'processing' range past the cursor, where
	 * the claims left them (a claim does not move next_run_at). */
	[Q_READ_TOKENS] = { "read the claimed jobs",
	    (const struct queue_piece[]){ { 0, 0, READ }, READ_MORE,
		{ 0, 0, ", " TOKEN " FROM %1$s FORCE INDEX (idx_pick)"
		    " WHERE status = 'processing'" PAST_CURSOR " AND " TOKEN
		    " IN " GROUP_LIST },
		{ 0, 0, NULL } }, Q_F_RESUMABLE | Q_F_DEADLINE, NULL, 0 },
};

/* A claimed row's columns (READ's, and checkpoint and snoozes when
 * resumable) as job id, and its next_run_at into at (atlen bytes; ""
 * when NULL or longer).  Every column may be NULL in a table that is not
 * quite the seed's: a NULL key stays NULL (the handlers say so), a NULL
 * payload is "{}", NULL numbers are 0.  Takes the columns it keeps. */
static void
fill_job(struct job *job, uint64_t id, char **cols, const size_t *lens,
    unsigned ncols, int resumable, char *at, size_t atlen)
{
	unsigned long attempts = 0, max_attempts = 0;
	unsigned i;

	if (cols[4] != NULL)
		parse_ulong(cols[4], 0, 0xffffffffUL, &attempts);
	if (cols[5] != NULL)
		parse_ulong(cols[5], 0, 0xffffffffUL, &max_attempts);
	job->id = id;
	job->type = cols[1] != NULL ? cols[1] : xstrdup("");
	job->business_key = cols[2];
	job->business_key_len = lens[2];
	job->payload = cols[3] != NULL ? cols[3] : xstrdup("{}");
	job->payload_len = cols[3] != NULL ? lens[3] : 2;
	job->payload_valid = cols[6] != NULL && strcmp(cols[6], "1") == 0;
	job->attempt = attempts;
	job->max_attempts = max_attempts;
	at[0] = '\0';
	if (cols[7] != NULL && lens[7] < atlen)
		memcpy(at, cols[7], lens[7] + 1);
	job->start_latency_ms = -1;
	if (cols[8] != NULL && queue_int64(cols[8], &job->start_latency_ms) !=
	    0)
		job->start_latency_ms = -1;
	job->deadline_left_s = INT64_MAX;
	if (cols[9] != NULL && queue_int64(cols[9], &job->deadline_left_s) !=
	    0)
		job->deadline_left_s = INT64_MAX;
	job->age_s = -1;
	if (cols[10] != NULL && queue_int64(cols[10], &job->age_s) != 0)
		job->age_s = -1;
	job->resumable = resumable;
	if (resumable) {
		job->checkpoint = cols[11];
		job->checkpoint_len = lens[11];
		if (cols[12] != NULL)
			parse_ulong(cols[12], 0, 0xffffffffUL, &job->snoozes);
		cols[11] = NULL;
	}
	cols[1] = cols[2] = cols[3] = NULL;
	for (i = 0; i < ncols; i++) {
		free(cols[i]);
		cols[i] = NULL;
	}
}

/* After a fetch of which failed: whether MySQL refused a payload as JSON
 * (into last_errno, as a statement's error is), the result let go. */
static int
json_refused(struct queue *q, unsigned which)
{
	unsigned int e = db_stmt_errno(queue_handle(q, which));

	db_done(queue_handle(q, which));
	if (!db_json_refused(e))
		return 0;
	q->db->last_errno = e;
	return 1;
}

/* Read back the row just claimed, and its next_run_at into at; refused,
 * with the payload taken as not JSON (Q_F_REFUSED). */
static enum db_status
read_job(struct queue *q, uint64_t id, const char *token, struct job *job,
    char *at, size_t atlen, int refused, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(id), DB_STR(token) };
	unsigned which = Q_READ | queue_read_flags(q) |
	    (refused ? Q_F_REFUSED : 0);
	unsigned ncols = READ_COLS(which);
	char *cols[READ_COLS_MAX] = { NULL };
	size_t lens[READ_COLS_MAX] = { 0 };
	enum db_status st;
	int rc;

	st = queue_stmt_run(q, which, args, 2, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch_len(queue_handle(q, which), cols, lens, ncols, err,
	    errlen);
	if (rc < 0 && json_refused(q, which))
		return DB_BAD_INPUT;
	if (rc <= 0) {
		if (rc == 0)
			errf(err, errlen, "read the claimed job %llu in %s: "
			    "row vanished", (unsigned long long)id, q->table);
		/* Inside a transaction (flow.c's), Galera rolled the claim
		 * back under us (a replicated write won): the transaction is
		 * run again. */
		return rc == 0 && q->in_trx ? DB_CONFLICT : DB_ERROR;
	}
	db_done(queue_handle(q, which));
	fill_job(job, id, cols, lens, ncols, (which & Q_F_RESUMABLE) != 0, at,
	    atlen);
	return DB_OK;
}

enum db_status
queue_read_job(struct queue *q, uint64_t id, const char *token, struct job *job,
    char *at, size_t atlen, char *err, size_t errlen)
{
	enum db_status st;

	st = read_job(q, id, token, job, at, atlen, 0, err, errlen);
	if (st == DB_BAD_INPUT && db_json_refused(q->db->last_errno))
		st = read_job(q, id, token, job, at, atlen, 1, err, errlen);
	return st;
}

/* The arguments of a statement on several claimed rows (FENCE_MANY):
 * n ids, then their n tokens, the unused places repeating the first. */
void
queue_group_args(struct db_arg *args, const uint64_t *ids,
    const char *const *tokens, size_t n)
{
	size_t i, k;

	for (i = 0; i < QUEUE_GROUP_MAX; i++) {
		k = i < n ? i : 0;
		args[i] = DB_NUM(ids[k]);
		args[QUEUE_GROUP_MAX + i] = DB_STR(tokens[k]);
	}
}

/* The cursor moves to the job just read, if it is the one the claims
 * left for it (see queue_cursor). */
void
queue_cursor_move(struct queue *q, uint64_t id, const char *at)
{
	struct queue_cursor *c = &q->cursor;

	if (c->next_id == 0 || id != c->next_id || at[0] == '\0')
		return;
	memcpy(c->at, at, sizeof c->at);
	c->id = id;
	c->claim = c->next_claim;
	c->types = c->next_types;
	c->set = 1;
	c->next_id = 0;
}

/* queue_read_claimed's one statement; DB_BAD_INPUT when MySQL refused a
 * payload as JSON, the jobs read before it filled in. */
static enum db_status
read_many(struct queue *q, const uint64_t *ids,
    const char *const *tokens, struct job *const *jobs, size_t n,
    size_t *found, char *err, size_t errlen)
{
	struct db_arg args[2 * QUEUE_GROUP_MAX];
	unsigned which = Q_READ_MANY | queue_read_flags(q);
	unsigned ncols = READ_COLS(which);
	char *cols[READ_COLS_MAX] = { NULL }, at[sizeof q->cursor.at];
	size_t lens[READ_COLS_MAX] = { 0 }, i;
	enum db_status st;
	uint64_t id;
	int rc;

	queue_group_args(args, ids, tokens, n);
	st = queue_stmt_run(q, which, args, 2 * QUEUE_GROUP_MAX, err, errlen);
	while (st == DB_OK && (rc = db_fetch_len(queue_handle(q, which), cols,
	    lens, ncols, err, errlen)) != 0) {
		if (rc < 0)
			return json_refused(q, which) ? DB_BAD_INPUT :
			    DB_ERROR;
		id = queue_number(cols[0]);
		for (i = 0; i < n && (ids[i] != id || jobs[i]->type != NULL);
		    i++)
			;
		if (i == n) {
			db_free_cols(cols, ncols);
			continue;
		}
		fill_job(jobs[i], id, cols, lens, ncols,
		    (which & Q_F_RESUMABLE) != 0, at, sizeof at);
		queue_cursor_move(q, id, at);
		(*found)++;
	}
	return st;
}

enum db_status
queue_read_claimed(struct queue *q, const uint64_t *ids,
    const char *const *tokens, struct job *const *jobs, size_t n, char *err,
    size_t errlen)
{
	char at[sizeof q->cursor.at];
	size_t i, found = 0;
	enum db_status st;

	if (n == 0 || n > QUEUE_GROUP_MAX) {
		errf(err, errlen, "read %zu claimed jobs: 1 to %d", n,
		    QUEUE_GROUP_MAX);
		return DB_ERROR;
	}
	st = read_many(q, ids, tokens, jobs, n, &found, err, errlen);
	if (st == DB_BAD_INPUT && db_json_refused(q->db->last_errno))
		/* A payload MySQL refused stopped the read: the rest one
		 * by one, each taken as not JSON only if it is refused. */
		for (i = 0, st = DB_OK; st == DB_OK && i < n; i++) {
			if (jobs[i]->type != NULL)
				continue;
			st = queue_read_job(q, ids[i], tokens[i], jobs[i], at,
			    sizeof at, err, errlen);
			if (st == DB_OK) {
				queue_cursor_move(q, ids[i], at);
				found++;
			}
		}
	if (st == DB_OK && found < n) {
		errf(err, errlen, "read the claimed jobs in %s: %zu of %zu "
		    "rows vanished", q->table, n - found, n);
		/* As queue_read_job's: in a transaction, Galera rolled the
		 * claims back under us (a replicated write won, the abort
		 * seen by no statement); it is run again whole. */
		st = q->in_trx ? DB_CONFLICT : DB_ERROR;
		if (q->in_trx)
			q->counters.conflicts++;
	}
	return st;
}

/* Read the jobs a bulk claim took, by their tokens, into the matching
 * jobs; *found is how many.  The cursor moves to the last of them in
 * the claim's order. */
enum db_status
queue_read_tokens(struct queue *q, const char *const *tokens,
    struct job *const *jobs, size_t n, size_t *found, char *err,
    size_t errlen)
{
	struct queue_cursor *c = &q->cursor;
	unsigned which = Q_READ_TOKENS | queue_read_flags(q);
	unsigned ncols = READ_COLS(which);
	struct db_arg args[3 + QUEUE_GROUP_MAX];
	char *cols[READ_COLS_MAX + 1] = { NULL }, at[sizeof c->at],
	    last_at[sizeof c->at];
	size_t lens[READ_COLS_MAX + 1] = { 0 }, i;
	uint64_t id, last_id = 0;
	enum db_status st;
	int rc;

	*found = 0;
	args[0] = DB_STR(c->at);
	args[1] = DB_STR(c->at);
	args[2] = DB_NUM(c->id);
	for (i = 0; i < QUEUE_GROUP_MAX; i++)
		args[3 + i] = DB_STR(tokens[i < n ? i : 0]);
	st = queue_stmt_run(q, which, args, 3 + QUEUE_GROUP_MAX, err, errlen);
	while (st == DB_OK && (rc = db_fetch_len(queue_handle(q, which), cols,
	    lens, ncols + 1, err, errlen)) != 0) {
		if (rc < 0)
			return DB_ERROR;
		for (i = 0; i < n && (cols[ncols] == NULL ||
		    strcmp(tokens[i], cols[ncols]) != 0 ||
		    jobs[i]->type != NULL); i++)
			;
		free(cols[ncols]);
		cols[ncols] = NULL;
		if (i == n) {
			db_free_cols(cols, ncols);
			continue;
		}
		id = queue_number(cols[0]);
		fill_job(jobs[i], id, cols, lens, ncols,
		    (which & Q_F_RESUMABLE) != 0, at, sizeof at);
		(*found)++;
		if (at[0] != '\0' && (last_id == 0 || strcmp(at, last_at) > 0 ||
		    (strcmp(at, last_at) == 0 && id > last_id))) {
			memcpy(last_at, at, sizeof last_at);
			last_id = id;
		}
	}
	if (st == DB_OK && last_id != 0) {
		memcpy(c->at, last_at, sizeof c->at);
		c->id = last_id;
	}
	return st;
}
