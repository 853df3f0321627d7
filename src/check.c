/*
 * check.c - "jobrun check": is this configuration, server and table fit to
 * run?  Each problem is printed with the statement or file that fixes it.
 *
 * The configuration was loaded and the server answered before this runs
 * (or jobrun exited 78 or 69 saying why).  What is left: the table's
 * columns and indexes against the seed's schema, the claim's plan as the
 * server would execute it (EXPLAIN, the same statement text the runner
 * prepares), and the server settings that matter for a job runner.  A
 * column the application added is fine unless jobrun's inserts cannot
 * leave it out (NOT NULL, no default): then every enqueue fails.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "command.h"
#include "libcurl.h"
#include "report.h"
#include "util.h"

enum level { OK, ADVICE, PROBLEM };

static const char *const level_names[] = { "ok", "advice", "problem" };

struct report {
	int json;
	json_t *checks;
	int problems;
};

static void
note(struct report *r, enum level level, const char *fix, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static void
note(struct report *r, enum level level, const char *fix, const char *fmt,
    ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	r->problems += level == PROBLEM;
	if (r->json) {
		json_array_append_new(r->checks, json_pack("{s:s,s:s,s:s?}",
		    "level", level_names[level], "message", msg, "fix", fix));
		return;
	}
	printf("%-8s %s\n", level_names[level], msg);
	if (fix != NULL)
		printf("%-8s fix: %s\n", "", fix);
}

static const char *const required_columns[] = {
	"id", "business_key", "type", "payload", "status", "attempts",
	"max_attempts", "next_run_at", "locked_by", "locked_until",
	"last_error", "created_at", "updated_at", "finished_at", NULL,
};

/* Indexes jobrun relies on: the name, its columns, and why. */
static const struct {
	const char *name, *columns, *definition;
	int unique, required;
} indexes[] = {
	{ "uniq_business_key", "business_key",
	  "UNIQUE KEY uniq_business_key (business_key)", 1, 1 },
	{ "idx_pick", "status,next_run_at,id",
	  "KEY idx_pick (status, next_run_at, id)", 0, 1 },
	{ "idx_lock", "status,locked_until",
	  "KEY idx_lock (status, locked_until)", 0, 1 },
	{ "idx_type_status", "type,status",
	  "KEY idx_type_status (type, status)", 0, 1 },
	{ "idx_type_pick", "status,type,next_run_at,id",
	  "KEY idx_type_pick (status, type, next_run_at, id)", 0, 0 },
};
#define NINDEXES (sizeof indexes / sizeof indexes[0])

struct found {
	char **names;
	int *nullable;		/* IS_NULLABLE = 'YES' */
	size_t n;
	char *columns[NINDEXES];
	int unique[NINDEXES];
};

static int
on_column(void *arg, char **cols, unsigned ncols)
{
	struct found *f = arg;

	(void)ncols;
	f->names = xrealloc(f->names, (f->n + 1) * sizeof *f->names);
	f->nullable = xrealloc(f->nullable, (f->n + 1) * sizeof *f->nullable);
	f->nullable[f->n] = cols[1] != NULL && strcmp(cols[1], "YES") == 0;
	f->names[f->n++] = xstrdup(cols[0]);
	return 0;
}

static int
on_index(void *arg, char **cols, unsigned ncols)
{
	struct found *f = arg;
	size_t i;

	(void)ncols;
	for (i = 0; i < NINDEXES; i++)
		if (strcmp(cols[0], indexes[i].name) == 0) {
			f->columns[i] = xstrdup(cols[2] != NULL ? cols[2] : "");
			f->unique[i] = strcmp(cols[1], "0") == 0;
		}
	return 0;
}

struct unfilled {
	const struct ctx *c;
	struct report *r;
};

/* A column enqueue cannot fill: a problem, with the statement that fixes
 * it. */
static int
on_unfilled(void *arg, char **cols, unsigned ncols)
{
	struct unfilled *cr = arg;
	char fix[512], column[160];

	(void)ncols;
	db_quote_ident(cols[0], column, sizeof column);
	snprintf(fix, sizeof fix, "ALTER TABLE %s ALTER %s SET DEFAULT "
	    "<value>, or let the column be NULL", cr->c->q.table, column);
	note(cr->r, PROBLEM, fix, "table %s: column %s is NOT NULL without a "
	    "default, and jobrun's enqueue does not fill it: every enqueue "
	    "fails", cr->c->q.name, cols[0]);
	return 0;
}

/* 1 when the table has column name, 2 when it also allows NULL. */
static int
has_column(const struct found *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->names[i], name) == 0)
			return 1 + f->nullable[i];
	return 0;
}

/* Columns the seed's table declares NOT NULL and what a NULL in them
 * would mean: jobrun reads a NULL without harm, but the row then does
 * not behave as the design says. */
static const struct {
	const char *name, *effect, *definition;
} not_null[] = {
	{ "business_key", "UNIQUE does not stop two jobs with a NULL key, "
	  "and such a job has no Idempotency-Key", "VARCHAR(128) NOT NULL" },
	{ "type", "a job with a NULL type is never run", "VARCHAR(64) NOT NULL" },
	{ "status", "a job with a NULL status is never run",
	  "VARCHAR(20) NOT NULL DEFAULT 'pending'" },
	{ "attempts", "a NULL attempts count is never compared with "
	  "max_attempts", "INT UNSIGNED NOT NULL DEFAULT 0" },
	{ "max_attempts", "a NULL max_attempts fails the job at its first "
	  "failure", "INT UNSIGNED NOT NULL DEFAULT 5" },
	{ "next_run_at", "a job with a NULL next_run_at is never due",
	  "DATETIME NOT NULL" },
};

static void
check_nullable(struct report *r, const struct ctx *c, const struct found *f)
{
	char fix[256];
	size_t i;

	for (i = 0; i < sizeof not_null / sizeof not_null[0]; i++) {
		if (has_column(f, not_null[i].name) != 2)
			continue;
		snprintf(fix, sizeof fix, "ALTER TABLE %s MODIFY %s %s",
		    c->q.table, not_null[i].name, not_null[i].definition);
		note(r, PROBLEM, fix, "column %s allows NULL: %s",
		    not_null[i].name, not_null[i].effect);
	}
}

static void
free_found(struct found *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->nullable);
	for (i = 0; i < NINDEXES; i++)
		free(f->columns[i]);
}

/* Columns and indexes; 0 when the claim can be explained at all. */
static enum db_status
check_table(struct ctx *c, struct report *r, int *usable, char *err,
    size_t errlen)
{
	struct db_arg arg = DB_STR(c->q.name);
	struct unfilled unfilled = { c, r };
	struct found f = { 0 };
	char fix[512];
	enum db_status st;
	size_t i, missing = 0;

	*usable = 0;
	st = queue_select(&c->q, Q_COLUMNS, &arg, 1, 2, on_column, &f, err,
	    errlen);
	if (st == DB_OK)
		st = queue_select(&c->q, Q_INDEXES, &arg, 1, 3, on_index, &f,
		    err, errlen);
	if (st != DB_OK)
		goto out;
	if (f.n == 0) {
		snprintf(fix, sizeof fix, "mariadb %s < sql/schema.sql, or set "
		    "[database] table in %s", c->cfg.db.database, c->cfg.path);
		note(r, PROBLEM, fix, "table %s.%s does not exist",
		    c->cfg.db.database, c->q.name);
		goto out;
	}
	for (i = 0; required_columns[i] != NULL; i++)
		if (!has_column(&f, required_columns[i])) {
			missing++;
			note(r, PROBLEM, "compare the table with sql/schema.sql",
			    "table %s lacks column %s", c->q.name,
			    required_columns[i]);
		}
	if (missing == 0)
		note(r, OK, NULL, "table %s.%s has the %zu columns jobrun uses",
		    c->cfg.db.database, c->q.name, f.n);
	check_nullable(r, c, &f);
	st = queue_select(&c->q, Q_UNFILLED_COLUMNS, &arg, 1, 1, on_unfilled,
	    &unfilled, err, errlen);
	if (st != DB_OK)
		goto out;
	if (has_column(&f, "checkpoint") && has_column(&f, "snoozes"))
		note(r, OK, NULL, "checkpoints and snooze are on (columns "
		    "checkpoint, snoozes)");
	else
		note(r, ADVICE, "sql/002_checkpoint.sql", "checkpoints and "
		    "snooze are off: the table has no checkpoint and snoozes "
		    "columns");
	for (i = 0; i < NINDEXES; i++) {
		snprintf(fix, sizeof fix, "ALTER TABLE %s ADD %s", c->q.table,
		    indexes[i].definition);
		if (f.columns[i] != NULL &&
		    strcmp(f.columns[i], indexes[i].columns) == 0 &&
		    f.unique[i] == indexes[i].unique)
			note(r, OK, NULL, "index %s (%s)", indexes[i].name,
			    indexes[i].columns);
		else if (!indexes[i].required)
			note(r, ADVICE, "sql/001_type_pick.sql", "no index %s: "
			    "claims of one type (--type, or a configuration "
			    "with one type) read past other types' due jobs",
			    indexes[i].name);
		else if (f.columns[i] == NULL)
			note(r, PROBLEM, fix, "index %s is missing",
			    indexes[i].name);
		else
			note(r, PROBLEM, "drop it and add it as in "
			    "sql/schema.sql", "index %s is on (%s)%s, expected "
			    "(%s)%s", indexes[i].name, f.columns[i],
			    f.unique[i] ? " unique" : "", indexes[i].columns,
			    indexes[i].unique ? " unique" : "");
	}
	*usable = missing == 0 && f.columns[1] != NULL;
out:
	free_found(&f);
	return st;
}

static enum db_status
check_plan(struct ctx *c, struct report *r, const char *const *types,
    size_t ntypes, const char *what, char *err, size_t errlen)
{
	unsigned long rows = 0;
	char *index = NULL;
	enum db_status st;

	st = queue_explain_claim(&c->q, types, ntypes, &index, &rows, err,
	    errlen);
	if (st != DB_OK)
		return st;
	if (index != NULL && (strcmp(index, "idx_pick") == 0 ||
	    strcmp(index, "idx_type_pick") == 0))
		note(r, OK, NULL, "claim %s uses %s, ~%lu row(s) to read",
		    what, index, rows);
	else
		note(r, PROBLEM, "check the indexes above against "
		    "sql/schema.sql", "claim %s uses %s, expected idx_pick or "
		    "idx_type_pick",
		    what, index != NULL ? index : "no index (a table scan)");
	free(index);
	return DB_OK;
}

/* http types load libcurl when a run prepares them, and the package only
 * recommends it: without it, the first http job of a run fails. */
static void
check_libcurl(const struct ctx *c, struct report *r)
{
	const struct handler_kind *http = handler_find("http");
	struct libcurl lc;
	char err[512];
	size_t i;

	for (i = 0; i < c->cfg.ntypes; i++)
		if (c->cfg.types[i].kind == http)
			break;
	if (i == c->cfg.ntypes)
		return;
	if (libcurl_open(&lc, err, sizeof err) != 0) {
		note(r, PROBLEM, "install libcurl (Debian: apt install libcurl4)",
		    "[type.%s] is an http type, but %s", c->cfg.types[i].name,
		    err);
		return;
	}
	libcurl_close(&lc);
	note(r, OK, NULL, "libcurl loads, for the http type(s)");
}

struct settings {
	struct report *r;
	json_t *obj;
};

static int
on_setting(void *arg, char **cols, unsigned ncols)
{
	struct settings *s = arg;

	(void)ncols;
	json_object_set_new(s->obj, cols[0], json_string(cols[1] ? cols[1] :
	    ""));
	if (!s->r->json)
		printf("%-8s %s = %s\n", "info", cols[0], cols[1] ? cols[1] :
		    "");
	if (strcmp(cols[0], "wsrep_on") == 0 && cols[1] != NULL &&
	    strcmp(cols[1], "ON") == 0)
		note(s->r, ADVICE, NULL, "Galera (wsrep_on): row claims are "
		    "safe cluster-wide; expect some claims to meet "
		    "certification conflicts (error 1213)");
	return 0;
}

static int
on_version(void *arg, char **cols, unsigned ncols)
{
	(void)ncols;
	json_object_set_new(arg, "version", json_string(cols[0]));
	return 1;
}

static enum db_status
check_server(struct ctx *c, struct report *r, json_t *server, char *err,
    size_t errlen)
{
	struct settings s = { r, json_object() };
	enum db_status st;

	st = queue_select(&c->q, Q_VERSION, NULL, 0, 1, on_version, server,
	    err, errlen);
	if (st == DB_OK)
		note(r, OK, NULL, "server %s answers at %s",
		    json_string_value(json_object_get(server, "version")),
		    c->db.where);
	if (st == DB_OK)
		st = queue_select(&c->q, Q_SETTINGS, NULL, 0, 2, on_setting,
		    &s, err, errlen);
	json_object_set_new(server, "settings", s.obj);
	return st;
}

int
cmd_check(struct ctx *c)
{
	struct report r = { c->cli.json, json_array(), 0 };
	json_t *server = json_object();
	const char **types = xcalloc(c->cfg.ntypes + 1, sizeof *types);
	char err[1024], what[128];
	enum db_status st;
	size_t i;
	int usable = 0;

	note(&r, c->cfg.ntypes > 0 ? OK : PROBLEM, c->cfg.ntypes > 0 ? NULL :
	    "add a [type.NAME] section (see jobrun.conf(5))",
	    "configuration %s: %zu job type(s)", c->cfg.path, c->cfg.ntypes);
	for (i = 0; i < c->cfg.ntypes; i++)
		if (cmd_prepare_type(c, &c->cfg.types[i], err, sizeof err) != 0)
			note(&r, PROBLEM, "see jobrun.conf(5)", "%s", err);
	check_libcurl(c, &r);
	st = check_server(c, &r, server, err, sizeof err);
	if (st == DB_OK)
		st = check_table(c, &r, &usable, err, sizeof err);
	for (i = 0; i < c->cfg.ntypes; i++)
		types[i] = c->cfg.types[i].name;
	if (st == DB_OK && usable && c->cfg.ntypes > 0)
		st = check_plan(c, &r, types, c->cfg.ntypes, "of all types",
		    err, sizeof err);
	for (i = 0; st == DB_OK && usable && c->cfg.ntypes > 1 &&
	    i < c->cfg.ntypes; i++) {
		snprintf(what, sizeof what, "--type=%s", types[i]);
		st = check_plan(c, &r, &types[i], 1, what, err, sizeof err);
	}
	free(types);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		r.problems++;
	}
	if (r.json)
		report_json(json_pack("{s:b,s:o,s:o}", "ok", r.problems == 0,
		    "checks", r.checks, "server", server));
	else {
		json_decref(r.checks);
		json_decref(server);
	}
	if (st != DB_OK && st != DB_SCHEMA)
		return cmd_exit_for(st);
	return r.problems == 0 ? EX_OK : EX_CONFIG;
}
