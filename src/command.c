/*
 * command.c - what the subcommands share, and "jobrun run".
 */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "command.h"
#include "metrics.h"
#include "report.h"
#include "runner.h"
#include "util.h"

int
cmd_exit_for(enum db_status st)
{
	switch (st) {
	case DB_OK: return EX_OK;
	/* Not available now (down, login refused, read-only): the same
	 * run goes through once the server or the account is back. */
	case DB_UNREACHABLE: return EX_UNAVAILABLE;
	/* Needs a GRANT; retrying alone never helps. */
	case DB_DENIED: return EX_NOPERM;
	case DB_SCHEMA: return EX_CONFIG;
	case DB_BAD_INPUT: return EX_DATAERR;
	/* A deadlock or lock wait that outlasted every retry, or a
	 * statement the server stopped, changed nothing; the next run will
	 * most likely get through. */
	case DB_CONFLICT:
	case DB_INTERRUPTED: return EX_TEMPFAIL;
	case DB_ERROR: break;
	}
	return EX_SOFTWARE;
}

void
cmd_db_error(const struct ctx *c, enum db_status st, const char *err)
{
	const struct db_error *e = db_error_info(c->db.last_errno);
	/* last_errno is the last failure's; a hint is given only when it is
	 * the one that made st. */
	const char *hint = e != NULL && e->status == st ? e->hint : NULL;

	if (st == DB_SCHEMA)
		log_msg(&c->lg, LV_ERROR, "%s (%s%ssee sql/schema.sql and "
		    "[database] in %s; jobrun check tells more)", err,
		    hint != NULL ? hint : "", hint != NULL ? "; " : "",
		    c->cfg.path);
	else if (hint != NULL)
		log_msg(&c->lg, LV_ERROR, "%s (%s)", err, hint);
	else
		log_msg(&c->lg, LV_ERROR, "%s", err);
}

/* A job was claimed but no outcome of it counted: the error came while
 * it was in hand, and it stays processing under this run's lock. */
static int
job_in_hand(const struct run_stats *s)
{
	return s->claimed > s->succeeded + s->retried + s->failed + s->lost +
	    s->snoozed;
}

int
cmd_prepare_type(const struct ctx *c, const struct cfg_type *t, char *err,
    size_t errlen)
{
	char msg[768];

	if (t->kind->prepare == NULL ||
	    t->kind->prepare(t->handler, msg, sizeof msg) == 0)
		return 0;
	return errf(err, errlen, "%s: [type.%s] %s", c->cfg.path, t->name,
	    msg);
}

/* Read the secrets of the types this run may claim. */
static int
prepare_types(const struct ctx *c, const char *only)
{
	char err[1024];
	size_t i;

	for (i = 0; i < c->cfg.ntypes; i++) {
		if (only != NULL && strcmp(only, c->cfg.types[i].name) != 0)
			continue;
		if (cmd_prepare_type(c, &c->cfg.types[i], err,
		    sizeof err) != 0) {
			log_msg(&c->lg, LV_ERROR, "%s", err);
			return -1;
		}
	}
	return 0;
}

/* --single: the server-side named lock "jobrun:DB.TABLE[:TYPE]".  Another
 * runner holding it is not an error: this run has nothing to do.  Returns
 * an exit status to stop with, or -1 to go on. */
static int
take_single_lock(struct ctx *c, const char *type)
{
	char name[256], err[1024];
	enum db_status st;
	int held = 0;

	/* GET_LOCK names are at most 64 characters; a longer one is cut,
	 * which can only make two scopes share one lock. */
	snprintf(name, sizeof name, "jobrun:%s.%s%s%s", c->cfg.db.database,
	    c->q.name, type != NULL ? ":" : "", type != NULL ? type : "");
	name[CFG_NAME_MAX] = '\0';
	st = queue_get_lock(&c->q, name, &held, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (held)
		return -1;
	log_msg(&c->lg, LV_INFO, "another runner holds %s; nothing to do",
	    name);
	if (c->cli.json)
		report_json(json_pack("{s:b,s:b}", "ok", 1, "skipped", 1));
	return EX_OK;
}

/* --metrics-file: the run's figures, and the backlog when the database
 * still answers.  A failure to write them is reported, not fatal: the
 * jobs were handled. */
static void
write_metrics(struct ctx *c, const struct run_stats *stats, int status,
    int db_ok)
{
	const char *path = c->cli.metrics_file != NULL ?
	    c->cli.metrics_file : c->cfg.run.metrics_file;
	struct status queue = { NULL, 0 };
	const char *saved_type = c->cli.type;
	char err[1024];

	if (path == NULL)
		return;
	c->cli.type = NULL;	/* the backlog of every type */
	if (db_ok && cmd_collect_status(c, 0, &queue, err, sizeof err) !=
	    DB_OK) {
		log_msg(&c->lg, LV_WARN, "metrics without the backlog: %s",
		    err);
		db_ok = 0;
	}
	c->cli.type = saved_type;
	/* Not fatal (the jobs were handled) but never silent, not even
	 * under -q: stale metrics are how monitoring would notice. */
	if (metrics_write(path, stats, status, db_ok ? &queue : NULL, err,
	    sizeof err) != 0)
		log_msg(&c->lg, LV_ERROR, "%s", err);
	cmd_free_status(&queue);
}

int
cmd_run(struct ctx *c)
{
	struct run_opts opts = {
		.type = c->cli.type,
		.batch_size = c->cli.has_max ? c->cli.max :
		    c->cfg.run.batch_size,
		.max_seconds = c->cli.has_max_seconds ? c->cli.max_seconds :
		    c->cfg.run.max_seconds,
	};
	struct run_stats stats;
	char err[1024];
	enum db_status st;
	int status;

	if (opts.type != NULL && cfg_find_type(&c->cfg, opts.type) == NULL) {
		log_msg(&c->lg, LV_ERROR, "--type=%s: %s has no [type.%s] "
		    "section", opts.type, c->cfg.path, opts.type);
		return EX_CONFIG;
	}
	if (c->cfg.ntypes == 0) {
		log_msg(&c->lg, LV_ERROR, "%s: no [type.NAME] section: no "
		    "job type to run", c->cfg.path);
		return EX_CONFIG;
	}
	if (prepare_types(c, opts.type) != 0)
		return EX_CONFIG;
	if (c->cli.single || c->cfg.run.single) {
		status = take_single_lock(c, opts.type);
		if (status >= 0)
			return status;
	}
	st = run_cycle(&c->cfg, &c->q, &opts, &c->lg, &stats, err,
	    sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		if (job_in_hand(&stats))
			log_msg(&c->lg, LV_ERROR, "the outcome of the job in "
			    "hand was not recorded: it stays processing until "
			    "its lock expires and a later run recovers it (a "
			    "server that stopped answering may still apply a "
			    "mark it had received)");
	}
	/* An operator who stopped the run hears so, whatever the database
	 * said meanwhile (a second signal gives up on a server that does
	 * not answer). */
	status = run_interrupted() ? run_interrupted() : st != DB_OK ?
	    cmd_exit_for(st) : stats.retried + stats.failed + stats.lost > 0 ?
	    EXIT_ATTENTION : EX_OK;
	if (c->q.reconnects > 0)
		log_msg(&c->lg, LV_INFO, "connection to the database lost and "
		    "made again %llu time(s)",
		    (unsigned long long)c->q.reconnects);
	if (c->q.conflicts > 0)
		log_msg(&c->lg, LV_INFO, "%llu statement(s) run again after a "
		    "deadlock or lock wait timeout",
		    (unsigned long long)c->q.conflicts);
	if (c->cli.verbose)
		report_run_text(&c->lg, &stats);
	if (c->cli.json)
		report_run_json(stdout, &stats, status == EX_OK,
		    st != DB_OK ? err : NULL);
	write_metrics(c, &stats, status, st == DB_OK);
	run_stats_free(&stats);
	return status;
}
