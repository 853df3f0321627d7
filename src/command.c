/*
 * command.c - what the subcommands share.
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

void
cmd_resolve(struct ctx *c)
{
	const struct cli *o = &c->cli;
	const struct cfg_run *r = &c->cfg.run;

	c->set.wait = o->wait || r->wait;
	/* A waiting run's budget is its time: [run] batch_size (20 jobs a
	 * run, in the example file too) would end it within the minute;
	 * --max still holds. */
	c->set.batch_size = o->has_max ? o->max : c->set.wait ?
	    CFG_BATCH_MAX : r->batch_size;
	c->set.max_seconds = o->has_max_seconds ? o->max_seconds :
	    r->max_seconds;
	c->set.jobs = o->has_jobs ? o->jobs : r->jobs;
	c->set.single = o->single || r->single;
	c->set.syslog = o->log != NULL ? strcmp(o->log, "syslog") == 0 :
	    r->syslog;
	c->set.metrics_file = o->metrics_file != NULL ? o->metrics_file :
	    r->metrics_file;
}

const char **
cmd_type_names(const struct ctx *c)
{
	const char **names = xcalloc(c->cfg.ntypes + 1, sizeof *names);
	size_t i;

	for (i = 0; i < c->cfg.ntypes; i++)
		names[i] = c->cfg.types[i].name;
	return names;
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
