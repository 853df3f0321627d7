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
 */
#include <stdlib.h>

#include "queue_schema.h"
#include "retention_view.h"
#include "runner.h"
#include "runner_int.h"
#include "util.h"

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

void
run_retention(struct cycle *cy)
{
	uint64_t n[2] = { 0, 0 };
	enum db_status st = DB_OK;
	char err[1024];
	int which;

	for (which = 0; which < 2 && st == DB_OK; which++)
		st = keep_one_status(cy, which, &n[which], err, sizeof err);
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
