/*
 * retention.c - a table that stays small by itself: each run deletes a
 * bounded batch of the finished rows older than [run] keep_success and
 * keep_failed, or a type's own keep_success and keep_failed, so that no
 * separate purge is needed.
 *
 * A run deletes at most RETENTION_BATCH rows per status and rule, with the
 * statement "jobrun purge" runs (a range of idx_pick, or of idx_type_pick
 * for a type's own rule when the table has it, oldest first), before
 * its first claim: a cron line every minute removes up to that many a
 * minute, a steady trickle rather than one long DELETE that holds purge
 * back and locks a range for minutes.  Like recovery it is not limited by
 * --type: the configuration's rules hold for the whole table, a type's
 * own rule for that type's rows and the run's for every other type.
 * With [run] archive_table the rows are moved there instead, a batch a
 * transaction (queue_archive.c), and deleted only with their copy made.
 * Failing to delete (say, no DELETE grant) is a warning, never the run's
 * end: the jobs still run, and the log says every time why the table is
 * not kept small.
 *
 * Retention comes before the claims, so it must not hold them up: its
 * statements wait at most RETENTION_LOCK_WAIT seconds for a row another
 * session holds (a stalled runner, an application's long transaction),
 * and never more than half of the run's time budget left; a lock wait
 * that times out ends retention for this run (the next run tries again),
 * and no batch starts once the budget is spent.
 */
#include <stdlib.h>

#include "queue_schema.h"
#include "retention_view.h"
#include "runner.h"
#include "runner_int.h"
#include "util.h"

/* Whose turn (args: job table, seconds, seconds, seconds): a new row,
 * or one whose turn is due (or further off than two keep_every, after
 * the server's clock went back or keep_every was shortened), takes the
 * turn and moves it keep_every on: 1 or 2 rows changed; 0, another run's
 * turn.  Unix time (QUEUE_NOW_EPOCH), so that neither the session's
 * time zone nor a DST change moves it.  Twice keep_every, not
 * once: "now" is the statement's start, and a statement that waited for
 * the row's lock while another took the turn started before it, so the
 * turn it finds is up to that wait more than keep_every off. */
enum pace_stmt { P_LOOK, P_TURN, P_COUNT_STMTS };
static const char *const pace_texts[P_COUNT_STMTS] = {
	/* (job table, job table): seconds to the next turn, < 0 when due */
	[P_LOOK] = "SELECT next_at - " QUEUE_NOW_EPOCH " FROM "
	    QUEUE_OTHER_TABLE " WHERE job_table = " QUEUE_TABLE_ID,
	/* (job table, job table, seconds, seconds, seconds) */
	[P_TURN] = "INSERT INTO " QUEUE_OTHER_TABLE " (job_table, next_at)"
	    " VALUES (" QUEUE_TABLE_ID ", " QUEUE_NOW_EPOCH " + ?)"
	    " ON DUPLICATE KEY UPDATE"
	    " next_at = IF(next_at <= " QUEUE_NOW_EPOCH " OR next_at > "
	    QUEUE_NOW_EPOCH " + 2 * ?, " QUEUE_NOW_EPOCH " + ?, next_at)",
};
static const char *const pace_purposes[P_COUNT_STMTS] = {
	[P_LOOK] = "read retention's next turn",
	[P_TURN] = "take retention's turn",
};
/* The statements whose privileges jobrun uses on the table, the look
 * first. */
static const size_t pace_uses[] = { P_LOOK, P_TURN };

static const struct queue_feature pace_feature = {
	{ RETENTION_PACE_TABLE, NULL }, RETENTION_PACE_PRIVILEGES,
	RETENTION_PACE_MIGRATION
};

static struct queue_stmts *
pace_open(struct queue *q)
{
	return queue_stmts_open(q, pace_texts, pace_purposes, NULL,
	    P_COUNT_STMTS, RETENTION_PACE_TABLE);
}

enum db_status
retention_pace_access(struct queue *q, struct queue_access *a,
    double *next_in, char *err, size_t errlen)
{
	struct db_arg args[2] = { QUEUE_TABLE_ID_ARGS(q) };
	struct queue_stmts *set = pace_open(q);
	char *col = NULL;
	enum db_status st;
	int found = 0;

	*next_in = 0;
	st = queue_stmts_reach(set, pace_uses, sizeof pace_uses /
	    sizeof pace_uses[0], &a->reach, err, errlen);
	if (st == DB_OK && a->reach != QUEUE_REACHED)
		queue_access_say(q, a->reach, &pace_feature, a);
	if (st == DB_OK && a->reach == QUEUE_REACHED)
		st = queue_stmts_one(set, P_LOOK, args, 2, &col, 1, &found,
		    err, errlen);
	if (st == DB_OK && found && col != NULL)
		*next_in = strtod(col, NULL);
	free(col);
	queue_stmts_close(set);
	return st;
}

/* The longest wait (s) of retention's statements for a row lock, the
 * session's own put back after (as the fan-in sweep's, fanin.c). */
#define RETENTION_LOCK_WAIT 5

static const char *const statuses[2] = {
	[CFG_KEEP_SUCCESS] = QUEUE_SUCCESS, [CFG_KEEP_FAILED] = QUEUE_FAILED,
};

/* One batch of scope's rows (of every type but own[0..nown-1] when scope
 * has no type) deleted, or moved into [run] archive_table. */
static enum db_status
remove_batch(struct cycle *cy, const struct queue_scope *scope,
    const char **own, size_t nown, uint64_t *n, char *err, size_t errlen)
{
	const char *archive = cy->cfg->run.archive_table;

	*n = 0;
	if (now_ms() >= cy->deadline)
		return DB_OK;	/* no batch past the run's time budget */
	if (archive != NULL)
		return queue_archive(cy->q, archive, scope, own, nown,
		    RETENTION_BATCH, n, err, errlen);
	if (scope->type != NULL || nown == 0)
		return queue_purge(cy->q, scope, RETENTION_BATCH, n, err,
		    errlen);
	return queue_purge_except(cy->q, scope, own, nown, RETENTION_BATCH,
	    n, err, errlen);
}

/* The rows of status (a CFG_KEEP_ index) past their keep; *n removed. */
static enum db_status
keep_one_status(struct cycle *cy, int which, uint64_t *n, char *err,
    size_t errlen)
{
	const struct cfg *cfg = cy->cfg;
	struct queue_scope scope = { NULL, statuses[which], 0, 0 };
	const char **own = xcalloc(cfg->ntypes + 1, sizeof *own);
	enum db_status st = DB_OK;
	size_t i, nown = 0;
	uint64_t d = 0;

	*n = 0;
	for (i = 0; st == DB_OK && i < cfg->ntypes; i++) {
		const struct cfg_type *t = &cfg->types[i];

		if (!t->keep_set[which])
			continue;
		own[nown++] = t->name;
		if (t->keep[which] == 0)
			continue;	/* this type's rows: for ever */
		scope.type = t->name;
		scope.older_than = t->keep[which];
		st = remove_batch(cy, &scope, NULL, 0, &d, err, errlen);
		*n += d;
	}
	scope.type = NULL;
	scope.older_than = cfg->run.keep[which];
	if (st == DB_OK && scope.older_than > 0) {
		st = remove_batch(cy, &scope, own, nown, &d, err, errlen);
		*n += d;
	}
	free(own);
	return st;
}

int
retention_on(const struct cfg *cfg)
{
	size_t i;
	int which;

	for (which = 0; which < 2; which++) {
		if (cfg->run.keep[which] > 0)
			return 1;
		for (i = 0; i < cfg->ntypes; i++)
			if (cfg->types[i].keep_set[which] &&
			    cfg->types[i].keep[which] > 0)
				return 1;
	}
	return 0;
}

/* Whether this run takes retention's turn (*mine): always without the
 * pace's table or its grant, or with keep_every 0. */
static enum db_status
take_turn(struct cycle *cy, int *mine, char *err, size_t errlen)
{
	unsigned long every = cy->cfg->run.keep_every;
	struct db_arg args[5] = { QUEUE_TABLE_ID_ARGS(cy->q), DB_NUM(every),
	    DB_NUM(every), DB_NUM(every) };
	struct queue_stmts *set;
	enum db_status st;

	*mine = 1;
	if (every == 0)
		return DB_OK;
	set = pace_open(cy->q);
	st = queue_stmts_run(set, P_TURN, args, 5, err, errlen);
	if (st == DB_OK)
		*mine = queue_stmts_changed(set, P_TURN) > 0;
	else if (queue_unseen(cy->q, st))
		st = DB_OK;
	queue_stmts_close(set);
	return st;
}

/* The turn taken, each status's batches: *n removed. */
static enum db_status
keep_all(struct cycle *cy, uint64_t n[2], char *err, size_t errlen)
{
	enum db_status st;
	int which, mine;

	st = take_turn(cy, &mine, err, errlen);
	if (st == DB_OK && !mine) {
		log_msg(cy->lg, LV_DEBUG, "retention: another run took the "
		    "turn within keep_every (%lus)", cy->cfg->run.keep_every);
		return DB_OK;
	}
	for (which = 0; which < 2 && st == DB_OK; which++)
		st = keep_one_status(cy, which, &n[which], err, errlen);
	return st;
}

/* Retention's lock wait: RETENTION_LOCK_WAIT, or half the run's time
 * budget left when that is shorter (0: too little left to wait at all,
 * the server's shortest wait being 1 s). */
static unsigned
lock_wait_of(const struct cycle *cy)
{
	int64_t half_s = (cy->deadline - now_ms()) / 2000;

	return half_s < RETENTION_LOCK_WAIT ? (half_s > 0 ?
	    (unsigned)half_s : 0) : RETENTION_LOCK_WAIT;
}

void
run_retention(struct cycle *cy)
{
	uint64_t n[2] = { 0, 0 };
	unsigned wait = lock_wait_of(cy);
	enum db_status st, put;
	char err[1024], cause[512];

	if (!retention_on(cy->cfg))
		return;
	if (wait == 0) {
		log_msg(cy->lg, LV_INFO, "retention: skipped, the run's time "
		    "budget is nearly spent");
		return;
	}
	st = queue_lock_wait(cy->q, wait, err, sizeof err);
	if (st == DB_OK) {
		st = keep_all(cy, n, err, sizeof err);
		/* Put back whatever retention met: the claims wait as the
		 * session would. */
		put = queue_lock_wait(cy->q, 0, cause, sizeof cause);
		if (put != DB_OK)
			log_msg(cy->lg, LV_WARN, "retention: %s", cause);
	}
	cy->stats->deleted += n[0] + n[1];
	if (st != DB_OK)
		log_msg(cy->lg, LV_WARN, "retention: %s; finished jobs are "
		    "kept until it works", err);
	else if (n[0] + n[1] > 0 && cy->cfg->run.archive_table != NULL)
		log_msg(cy->lg, LV_INFO, "retention: moved %llu success and "
		    "%llu failed job(s) past keep_success and keep_failed to "
		    "%s", (unsigned long long)n[0], (unsigned long long)n[1],
		    cy->cfg->run.archive_table);
	else if (n[0] + n[1] > 0)
		log_msg(cy->lg, LV_INFO, "retention: deleted %llu success and "
		    "%llu failed job(s) past keep_success and keep_failed",
		    (unsigned long long)n[0], (unsigned long long)n[1]);
}
