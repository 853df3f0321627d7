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
 *
 * The account's privileges are tried by preparing (never running) a
 * statement that needs each one jobrun uses, on the job table and on
 * each migration's table.  MariaDB hides from an account whether a table
 * it has no privilege on exists, so such a table's advice says both
 * steps: the migration if absent, then the GRANT (queue.h, queue_reach).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>

#include "attempts.h"
#include "audit.h"
#include "command.h"
#include "fanin.h"
#include "flow.h"
#include "latency.h"
#include "libcurl.h"
#include "queue_schema.h"
#include "report.h"
#include "retention_view.h"
#include "schedule.h"
#include "utf8.h"
#include "util.h"

enum level { OK, ADVICE, PROBLEM };

static const char *const level_names[] = { "ok", "advice", "problem" };

struct report {
	int json;
	json_t *checks;
	int problems;
	json_t *settings;	/* the server's, while they are read */
};

/* A check's line: with --json, type (type_len bytes, NUL ones too) the
 * exact name of the type it is about, when there is one. */
static void
vnote(struct report *r, enum level level, const char *fix, const char *type,
    size_t type_len, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

static void
vnote(struct report *r, enum level level, const char *fix, const char *type,
    size_t type_len, const char *fmt, va_list ap)
{
	char msg[1024], *shown;
	json_t *o;

	vsnprintf(msg, sizeof msg, fmt, ap);
	r->problems += level == PROBLEM;
	if (r->json) {
		o = json_pack("{s:s,s:s,s:s?}", "level", level_names[level],
		    "message", msg, "fix", fix);
		if (o != NULL && type != NULL)
			json_object_set_new(o, "type",
			    json_stringn(type, type_len));
		json_array_append_new(r->checks, o);
		return;
	}
	/* Column and index names come from the table: escaped, never raw
	 * to a terminal (--json gives them as they are). */
	shown = utf8_escape_dup(msg, 0);
	printf("%-8s %s\n", level_names[level], shown);
	free(shown);
	if (fix != NULL) {
		shown = utf8_escape_dup(fix, 0);
		printf("%-8s fix: %s\n", "", shown);
		free(shown);
	}
}

static void
note(struct report *r, enum level level, const char *fix, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static void
note(struct report *r, enum level level, const char *fix, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(r, level, fix, NULL, 0, fmt, ap);
	va_end(ap);
}

/* note() about the type type (type_len bytes); with --json the line has
 * its exact name as "type". */
static void
note_type(struct report *r, enum level level, const char *fix,
    const char *type, size_t type_len, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void
note_type(struct report *r, enum level level, const char *fix,
    const char *type, size_t type_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(r, level, fix, type, type_len, fmt, ap);
	va_end(ap);
}

/* A type's name for a check's message: escaped as in list, but with
 * --json as it is (jansson escapes it) unless it holds a NUL, which a
 * C string cannot: then escaped too ("type" has it exactly). */
static char *
type_for(const struct report *r, const char *type, size_t len)
{
	char *out;
	size_t n;

	if (r->json && memchr(type, '\0', len) == NULL) {
		out = xmalloc(len + 1);
		memcpy(out, type, len);
		out[len] = '\0';
		return out;
	}
	n = utf8_escape(NULL, 0, type, len, 0);
	out = xmalloc(n + 1);
	utf8_escape(out, n + 1, type, len, 0);
	return out;
}

/* The table's column name: 0 when it has none, 1 when it has it, 2 when
 * it also allows NULL. */
static int
has_column(const struct queue_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ncolumns; i++)
		if (strcmp(t->columns[i].name, name) == 0)
			return 1 + t->columns[i].nullable;
	return 0;
}

/* The index called name, or NULL. */
static const struct queue_index_info *
index_named(const struct queue_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nindexes; i++)
		if (strcmp(t->indexes[i].name, name) == 0)
			return &t->indexes[i];
	return NULL;
}

/* Columns enqueue cannot fill: each a problem, with the statement that
 * fixes it. */
static void
check_unfilled(struct report *r, const struct ctx *c,
    const struct queue_table *t)
{
	char fix[512], column[160];
	size_t i;

	for (i = 0; i < t->ncolumns; i++) {
		if (!t->columns[i].unfilled)
			continue;
		db_quote_ident(t->columns[i].name, column, sizeof column);
		snprintf(fix, sizeof fix, "ALTER TABLE %s ALTER %s SET DEFAULT "
		    "<value>, or let the column be NULL", queue_quoted(c->q),
		    column);
		note(r, PROBLEM, fix, "table %s: column %s is NOT NULL without "
		    "a default, and jobrun's enqueue does not fill it: every "
		    "enqueue fails", queue_name(c->q), t->columns[i].name);
	}
}

/* Columns the seed's table declares NOT NULL that allow NULL here: each
 * a problem, with what the NULL would break (queue_schema.c). */
static void
check_nullable(struct report *r, const struct ctx *c,
    const struct queue_table *t)
{
	size_t i, n;
	const struct queue_schema_column *col = queue_schema_columns(&n);
	char fix[256];

	for (i = 0; i < n; i++) {
		if (col[i].null_breaks == NULL ||
		    has_column(t, col[i].name) != 2)
			continue;
		snprintf(fix, sizeof fix, "ALTER TABLE %s MODIFY %s %s",
		    queue_quoted(c->q), col[i].name, col[i].definition);
		note(r, PROBLEM, fix, "column %s allows NULL: %s",
		    col[i].name, col[i].null_breaks);
	}
}

/* The indexes jobrun relies on, against the table's. */
static void
check_indexes(struct report *r, const struct ctx *c,
    const struct queue_table *t)
{
	size_t i, n;
	const struct queue_schema_index *want = queue_schema_indexes(&n);
	const struct queue_index_info *x;
	char fix[512];

	for (i = 0; i < n; i++) {
		x = index_named(t, want[i].name);
		snprintf(fix, sizeof fix, "ALTER TABLE %s ADD %s",
		    queue_quoted(c->q), want[i].definition);
		if (x != NULL && strcmp(x->columns, want[i].columns) == 0 &&
		    x->unique == want[i].unique)
			note(r, OK, NULL, "index %s (%s)", want[i].name,
			    want[i].columns);
		else if (want[i].migration != NULL && x == NULL)
			note(r, ADVICE, want[i].migration, "no index %s: %s",
			    want[i].name, want[i].without);
		else if (x == NULL)
			note(r, PROBLEM, fix, "index %s is missing",
			    want[i].name);
		else
			note(r, PROBLEM, "drop it and add it as in "
			    "sql/schema.sql", "index %s is on (%s)%s, expected "
			    "(%s)%s", want[i].name, x->columns,
			    x->unique ? " unique" : "", want[i].columns,
			    want[i].unique ? " unique" : "");
	}
}

/* The columns sql/schema.sql creates, against the table's: the number
 * missing, each a problem. */
static size_t
check_required(struct report *r, const struct ctx *c,
    const struct queue_table *t)
{
	size_t i, n, missing = 0;
	const struct queue_schema_column *col = queue_schema_columns(&n);

	for (i = 0; i < n; i++)
		if (col[i].migration == NULL && !has_column(t, col[i].name)) {
			missing++;
			note(r, PROBLEM, "compare the table with sql/schema.sql",
			    "table %s lacks column %s", queue_name(c->q),
			    col[i].name);
		}
	return missing;
}

/* A type's priority needs the column: without it its enqueues fail. */
static void
check_priority(struct report *r, const struct ctx *c,
    const struct queue_table *t)
{
	size_t i;

	if (has_column(t, "priority") && index_named(t, "idx_priority_pick")
	    != NULL && index_named(t, "idx_type_priority") != NULL)
		return;
	for (i = 0; i < c->cfg.ntypes; i++)
		if (c->cfg.types[i].priority_set)
			note(r, PROBLEM, "sql/013_priority.sql", "[type.%s] "
			    "priority: table %s has no priority column and "
			    "indexes, and every enqueue of the type fails",
			    c->cfg.types[i].name, queue_name(c->q));
}

/* Checkpoints and snooze need both of the migration's columns. */
static void
check_checkpoint(struct report *r, const struct queue_table *t)
{
	if (has_column(t, "checkpoint") && has_column(t, "snoozes"))
		note(r, OK, NULL, "checkpoints and snooze are on (columns "
		    "checkpoint, snoozes)");
	else
		note(r, ADVICE, queue_schema_column("checkpoint")->migration,
		    "checkpoints and snooze are off: the table has no "
		    "checkpoint and snoozes columns");
}

/* Columns and indexes; *usable when the claim can be explained at all. */
static enum db_status
check_table(struct ctx *c, struct report *r, int *usable, char *err,
    size_t errlen)
{
	struct queue_table t;
	struct queue_access a;
	char fix[512];
	enum db_status st;
	size_t missing = 0;

	*usable = 0;
	st = queue_describe(c->q, &t, err, errlen);
	if (st != DB_OK)
		goto out;
	/* information_schema lists only what the account may see. */
	if (t.ncolumns == 0 && (st = queue_jobs_access(c->q, &a, err,
	    errlen)) == DB_OK && a.reach == QUEUE_HIDDEN) {
		note(r, PROBLEM, a.fix, "table %s: %s", queue_name(c->q),
		    a.why);
		goto out;
	}
	if (t.ncolumns == 0) {
		snprintf(fix, sizeof fix, "mariadb %s < sql/schema.sql, or set "
		    "[database] table in %s", c->cfg.db.database, c->cfg.path);
		note(r, PROBLEM, fix, "table %s.%s does not exist",
		    c->cfg.db.database, queue_name(c->q));
		goto out;
	}
	missing = check_required(r, c, &t);
	if (missing == 0)
		note(r, OK, NULL, "table %s.%s has the %zu columns jobrun uses",
		    c->cfg.db.database, queue_name(c->q), t.ncolumns);
	check_nullable(r, c, &t);
	check_unfilled(r, c, &t);
	check_checkpoint(r, &t);
	check_indexes(r, c, &t);
	check_priority(r, c, &t);
	*usable = missing == 0 && index_named(&t, "idx_pick") != NULL;
	if (*usable && (st = queue_jobs_access(c->q, &a, err, errlen)) ==
	    DB_OK && a.reach != QUEUE_REACHED) {
		note(r, PROBLEM, a.fix, "table %s: %s", queue_name(c->q),
		    a.why);
		*usable = 0;
	}
out:
	queue_table_free(&t);
	return st;
}

static enum db_status
check_plan(struct ctx *c, struct report *r, const char *const *types,
    size_t ntypes, const char *what, char *err, size_t errlen)
{
	unsigned long rows = 0;
	char *index = NULL;
	enum db_status st;

	st = queue_explain_claim(c->q, types, ntypes, &index, &rows, err,
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

/* Each type as a run would start its first job, without sending one: its
 * secrets read (prepare), then its command found or its URL reached
 * (the kind's probe).  A problem stops that type only, as at a run. */
static void
check_types(struct ctx *c, struct report *r)
{
	static const enum level levels[] = { PROBLEM, OK, ADVICE };
	const char *path = getenv("PATH");
	struct probe_note pn;
	struct cfg_type *t;
	size_t i;
	int execs = 0, rc;

	for (i = 0; i < c->cfg.ntypes; i++) {
		t = &c->cfg.types[i];
		execs += strcmp(t->kind->name, "exec") == 0;
		if (cmd_prepare_type(c, t, pn.msg, sizeof pn.msg) != 0) {
			note(r, PROBLEM, strstr(pn.msg, "header_env") != NULL ?
			    "give the run that variable (a VAR=value line in "
			    "the crontab), or use header_file" :
			    "see jobrun.conf(5)", "%s", pn.msg);
			continue;
		}
		if (t->kind->probe == NULL)
			continue;
		rc = t->kind->probe(t->handler, &pn);
		note(r, levels[rc + 1], rc == 0 ? NULL : pn.fix,
		    "[type.%s]: %s", t->name, pn.msg);
	}
	if (execs > 0)
		note(r, OK, NULL, "exec commands were looked up in PATH=%s, "
		    "this check's: a run has the PATH of whatever starts it",
		    path != NULL ? path : "(unset: /bin:/usr/bin)");
}

/* A paused type's jobs wait, which may be forgotten: each is named. */
static void
note_paused(struct report *r, const struct flow_states *fs)
{
	char *type, fix[300];
	size_t i;

	for (i = 0; i < fs->n; i++) {
		if (!fs->rows[i].paused)
			continue;
		type = type_for(r, fs->rows[i].type,
		    strlen(fs->rows[i].type));
		snprintf(fix, sizeof fix, "jobrun resume %s, when it should "
		    "run again", type);
		note_type(r, ADVICE, fix, fs->rows[i].type,
		    strlen(fs->rows[i].type), "type %s is paused: no run "
		    "claims its jobs", type);
		free(type);
	}
}

/* Pending jobs of a type with no [type.NAME] section here wait for a
 * runner configured elsewhere, or for ever (a typo in enqueue's --type
 * or the application's INSERT). */
static enum db_status
check_unhandled(struct ctx *c, struct report *r, char *err, size_t errlen)
{
	const char **known = cmd_type_names(c);
	struct queue_backlog b;
	enum db_status st;
	char *type;
	size_t i;

	st = queue_backlog(c->q, known, c->cfg.ntypes, NULL, 0, &b, err,
	    errlen);
	free(known);
	for (i = 0; st == DB_OK && i < b.n; i++) {
		/* The type's bytes, NUL ones too: "zz" and "zz\0q" are two. */
		if (b.rows[i].pending == 0 || cfg_find_type_n(&c->cfg,
		    b.rows[i].type, b.rows[i].type_len) != NULL)
			continue;
		type = type_for(r, b.rows[i].type, b.rows[i].type_len);
		note_type(r, ADVICE, "add a [type.NAME] section, or run them "
		    "where one is", b.rows[i].type, b.rows[i].type_len,
		    "%lu pending job(s) of type %s: no [type.%s] "
		    "section in %s, so no run with it claims them",
		    b.rows[i].pending, type, type, c->cfg.path);
		free(type);
	}
	queue_backlog_free(&b);
	return st;
}

/* Jobs created "in the future" by the server's clock were written by an
 * application in another time zone: they wait hours, without an error
 * (the README's INSERT writes NOW()). */
static enum db_status
check_clock(struct ctx *c, struct report *r, char *err, size_t errlen)
{
	uint64_t jobs;
	int64_t ahead;
	enum db_status st;

	st = queue_future_created(c->q, &jobs, &ahead, err, errlen);
	if (st == DB_OK && jobs > 0)
		note(r, ADVICE, "write created_at and next_run_at with the "
		    "database's NOW(), or set [database] time_zone to the "
		    "application's", "%llu pending job(s) created in the "
		    "future by the server's clock, up to %.1f h ahead: the "
		    "application writes its times in another time zone, and "
		    "its jobs run that much late (or early)",
		    (unsigned long long)jobs, (double)ahead / 3600);
	return st;
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

/* An optional feature whose tables the account does not reach (a),
 * and nothing needs: as before without its tables when absent, advice
 * when the account cannot see them (they may be there, not granted), a
 * problem when a privilege is missing (what uses it fails). */
static void
check_unused(struct report *r, const char *feature,
    const struct queue_access *a)
{
	if (a->reach == QUEUE_HIDDEN)
		note(r, ADVICE, a->fix, "%s is off: %s", feature, a->why);
	else if (a->reach == QUEUE_UNGRANTED)
		note(r, PROBLEM, a->fix, "%s: %s", feature, a->why);
}

/* Schedules need sql/004's table and zones the server knows: what stops
 * a run before it claims is a problem here. */
static void
check_schedules(struct ctx *c, struct report *r)
{
	struct sched_view *v;
	struct queue_access a;
	char err[1024];
	enum db_status st;

	if (c->cfg.nschedules == 0)
		return;
	st = sched_access(c->q, &a, err, sizeof err);
	if (st != DB_OK) {
		note(r, PROBLEM, "compare the table with sql/004_schedules.sql",
		    "%s", err);
		return;
	}
	if (a.reach != QUEUE_REACHED) {
		note(r, PROBLEM, a.fix, "%zu schedule(s) need the table "
		    SCHED_TABLE ": %s", c->cfg.nschedules, a.why);
		return;
	}
	v = xcalloc(c->cfg.nschedules, sizeof *v);
	st = sched_view(&c->cfg, c->q, v, err, sizeof err);
	if (st == DB_OK)
		note(r, OK, NULL, "%zu schedule(s): table " SCHED_TABLE
		    " present, every time zone known", c->cfg.nschedules);
	else
		note(r, PROBLEM, db_tzinfo_command(&c->db), "%s", err);
	free(v);
}

/* Fan-in is opt-in (enqueue --then refuses to start without its
 * tables): their presence is said, their absence is no advice. */
static void
check_fan_in(struct ctx *c, struct report *r)
{
	struct fanin_view *v = NULL;
	struct queue_access a;
	struct fanin fi;
	char err[1024];
	size_t n = 0;

	if (fanin_access(c->q, &a, err, sizeof err) != DB_OK) {
		note(r, PROBLEM, "apply " FANIN_MIGRATION, "%s", err);
		return;
	}
	if (a.reach != QUEUE_REACHED) {
		check_unused(r, "fan-in (enqueue --then)", &a);
		return;
	}
	fanin_open(&fi, c->q, &c->lg);
	if (fanin_list(&fi, &v, &n, err, sizeof err) != DB_OK)
		note(r, PROBLEM, "apply " FANIN_MIGRATION, "%s", err);
	else if (fi.active)
		note(r, OK, NULL, "fan-in is on (tables " FANIN_TABLE ", "
		    FANIN_JOBS_TABLE "), %zu open", n);
	fanin_list_free(v, n);
	fanin_close(&fi);
}

/* The start latency table is optional too (sql/008_start_latency.sql):
 * said when present. */
static void
check_latency(struct ctx *c, struct report *r)
{
	struct latency_view v;
	struct queue_access a;
	char err[1024], line[128];

	if (latency_access(c->q, &a, err, sizeof err) != DB_OK) {
		note(r, PROBLEM, "apply sql/008_start_latency.sql", "%s", err);
		return;
	}
	if (a.reach != QUEUE_REACHED) {
		check_unused(r, "start latency (status, report)", &a);
		return;
	}
	if (latency_read(c->q, NULL, &v, err, sizeof err) != DB_OK)
		note(r, PROBLEM, "apply sql/008_start_latency.sql", "%s", err);
	else if (v.present) {
		latency_line(line, sizeof line, &v.all);
		note(r, OK, NULL, "start latency is kept (table "
		    "jobrun_start_latency), last %d minutes: %s",
		    LATENCY_MINUTES, line);
	}
	latency_view_free(&v);
}

/* The attempt history's rows go with their job's by its foreign key: one
 * dropped (as to TRUNCATE the job table) leaves the attempts of every job
 * purge, retention or the application deletes, for ever. */
static void
check_history_cascade(struct ctx *c, struct report *r)
{
	char name[CFG_NAME_MAX + sizeof ATTEMPTS_SUFFIX], err[1024];
	int cascades;

	snprintf(name, sizeof name, "%s" ATTEMPTS_SUFFIX, queue_name(c->q));
	if (queue_cascades(c->q, name, &cascades, err, sizeof err) != DB_OK)
		note(r, PROBLEM, NULL, "%s", err);
	else if (!cascades)
		note(r, PROBLEM, "add the foreign key of " ATTEMPTS_MIGRATION,
		    "the attempt history (table %s) has no foreign key to %s "
		    "ON DELETE CASCADE: the attempts of the jobs purge, "
		    "retention or the application delete stay in it", name,
		    queue_name(c->q));
	else
		note(r, OK, NULL, "each attempt is kept (table %s)", name);
}

/* The attempt history is optional (sql/010_attempts.sql): said when
 * present, and when the account cannot write it. */
static void
check_history(struct ctx *c, struct report *r)
{
	struct queue_access a;
	char err[1024];

	if (attempts_access(c->q, &a, err, sizeof err) != DB_OK)
		note(r, PROBLEM, "compare the table with " ATTEMPTS_MIGRATION,
		    "%s", err);
	else if (a.reach != QUEUE_REACHED)
		check_unused(r, "the attempt history (show, report)", &a);
	else
		check_history_cascade(c, r);
}

/* The record of operators' changes (sql/011_audit.sql) is optional:
 * said either way, as the operator may believe changes are recorded;
 * there but not granted in full, a problem: every change is refused. */
static void
check_audit(struct ctx *c, struct report *r)
{
	struct queue_access a;
	char err[1024];

	if (audit_access(c->q, &a, err, sizeof err) != DB_OK)
		note(r, PROBLEM, "compare the table with " AUDIT_MIGRATION, "%s",
		    err);
	else if (a.reach == QUEUE_REACHED)
		note(r, OK, NULL, "operators' changes are recorded (table "
		    AUDIT_TABLE ")");
	else if (a.reach == QUEUE_ABSENT)
		note(r, OK, "apply " AUDIT_MIGRATION, "operators' changes are "
		    "not recorded: no table " AUDIT_TABLE);
	else
		check_unused(r, "the record of operators' changes (audit)", &a);
}

/* Retention's turns (sql/014_retention_pace.sql), when it deletes:
 * without the table each run deletes its batch, which runs started
 * back to back make a storm of DELETEs. */
static void
check_retention_pace(struct ctx *c, struct report *r)
{
	unsigned long every = c->cfg.run.keep_every;
	struct queue_access a;
	char err[1024];
	double next_in;

	if (retention_pace_access(c->q, &a, &next_in, err, sizeof err) !=
	    DB_OK) {
		note(r, PROBLEM, "compare the table with "
		    RETENTION_PACE_MIGRATION, "%s", err);
		return;
	}
	if (a.reach == QUEUE_ABSENT)
		note(r, ADVICE, "apply " RETENTION_PACE_MIGRATION, "retention "
		    "is not paced: each run deletes its batch, so runs started "
		    "back to back delete as fast as they start (table "
		    RETENTION_PACE_TABLE " absent)");
	else if (a.reach != QUEUE_REACHED)
		check_unused(r, "retention's pace (keep_every)", &a);
	else if (every == 0)
		note(r, OK, NULL, "retention's pace: keep_every = 0, each run "
		    "deletes its batch");
	else if (next_in > 0)
		note(r, OK, NULL, "retention's pace: one turn in %lus for all "
		    "runs on this table (table " RETENTION_PACE_TABLE "), the "
		    "next in %.0fs", every, next_in < 1 ? 1 : next_in);
	else
		note(r, OK, NULL, "retention's pace: one turn in %lus for all "
		    "runs on this table (table " RETENTION_PACE_TABLE "), the "
		    "next one due now", every);
}

/* Retention's rules, said; an archive_table the account cannot fill is a
 * problem: retention deletes nothing until it can. */
static void
check_retention(struct ctx *c, struct report *r)
{
	struct retention_view v = { NULL, 0, NULL, 0, 0 };
	char err[1024], line[1024];

	retention_view_read(&c->cfg, c->q, 0, &v, err, sizeof err);
	retention_view_summary(&v, line, sizeof line);
	note(r, OK, NULL, "%s", line);
	if (v.archive != NULL &&
	    queue_archive_probe(c->q, v.archive, err, sizeof err) != DB_OK)
		note(r, PROBLEM, "apply sql/012_archive.sql (the table under "
		    "the configured name, with every column of the job table "
		    "jobrun copies) and GRANT INSERT on it to jobrun's "
		    "account", "retention moves nothing to archive_table %s: "
		    "%s", v.archive, err);
	retention_view_free(&v);
	if (retention_on(&c->cfg))
		check_retention_pace(c, r);
}

/* The bytes a "varbinary(N)" column holds. */
static unsigned long
type_bytes(const char *column)
{
	unsigned long n = 0;

	return sscanf(column, "varbinary(%lu)", &n) == 1 ? n : 0;
}

/* Flow control's table not reached (a): a problem when a type's limit
 * needs it or when a privilege is missing on it, else the feature is
 * off: said as it was without the table, advice when the account cannot
 * see it (it may be there, not granted). */
static enum db_status
check_off(struct ctx *c, struct report *r, const struct queue_access *a)
{
	char who[512];

	if (flow_needs(&c->cfg, who, sizeof who))
		note(r, PROBLEM, a->fix, "%s needs the control table: %s", who,
		    a->why);
	else if (a->reach == QUEUE_ABSENT)
		note(r, OK, NULL, "flow control (concurrency, rate, pause) is "
		    "off: no control table %s%s (%s adds it)",
		    queue_name(c->q), FLOW_SUFFIX, FLOW_MIGRATION);
	else
		check_unused(r, "flow control (concurrency, rate, pause)", a);
	return DB_OK;
}

/* The control table of flow control (sql/003_flow.sql): needed by a
 * type with a limit, optional otherwise; its primary key is what the
 * claim locks, and its type column must compare bytes. */
static enum db_status
check_flow(struct ctx *c, struct report *r, char *err, size_t errlen)
{
	struct flow_states fs = { NULL, 0 };
	struct queue_access a;
	char *primary = NULL, *column = NULL;
	struct flow *f = NULL;
	enum db_status st;
	size_t i, paused = 0;

	st = flow_access(c->q, &a, err, errlen);
	if (st == DB_OK && a.reach != QUEUE_REACHED)
		return check_off(c, r, &a);
	if (st == DB_OK)
		st = flow_open(c->q, &c->cfg, NULL, &f, err, errlen);
	/* A concurrency_key the table or the server refuses is the
	 * configuration's to fix (flow_keys_check's message names it). */
	if (st == DB_SCHEMA) {
		note(r, PROBLEM, strncmp(err, "[type.", 6) == 0 ? "fix "
		    "concurrency_key" : FLOW_MIGRATION, "%s", err);
		return DB_OK;
	}
	if (st != DB_OK)
		return st;
	st = flow_shape(f, &primary, &column, err, errlen);
	if (st == DB_OK)
		st = flow_read(f, NULL, &fs, err, errlen);
	if (st == DB_OK && (primary == NULL || strcmp(primary, "type") != 0))
		note(r, PROBLEM, "drop the table and create it as in "
		    FLOW_MIGRATION, "control table %s: primary key on (%s), "
		    "expected (type)", flow_table(f),
		    primary != NULL ? primary : "nothing");
	else if (st == DB_OK && (column == NULL ||
	    strncmp(column, "varbinary", 9) != 0))
		note(r, PROBLEM, "drop the table and create it as in "
		    FLOW_MIGRATION, "control table %s: column type is %s, "
		    "expected varbinary (types compare byte for byte)",
		    flow_table(f), column != NULL ? column : "missing");
	else if (st == DB_OK && type_bytes(column) < QUEUE_TYPE_MAX * 4)
		note(r, PROBLEM, "apply " FLOW_TYPE_MIGRATION, "control table "
		    "%s: column type is %s, which cannot hold every type name "
		    "of %d characters (up to %d bytes)", flow_table(f),
		    column, QUEUE_TYPE_MAX, QUEUE_TYPE_MAX * 4);
	else if (st == DB_OK) {
		for (i = 0; i < fs.n; i++)
			paused += fs.rows[i].paused != 0;
		note(r, OK, NULL, "control table %s: primary key (type), "
		    "%zu paused type(s)", flow_table(f), paused);
		note_paused(r, &fs);
	}
	free(primary);
	free(column);
	flow_states_free(&fs);
	flow_close(f);
	return st;
}

static void
on_setting(void *arg, const char *name, const char *value)
{
	struct report *r = arg;

	json_object_set_new(r->settings, name, json_string(value));
	if (!r->json)
		printf("%-8s %s = %s\n", "info", name, value);
	if (strcmp(name, "wsrep_on") == 0 && strcmp(value, "ON") == 0)
		note(r, ADVICE, NULL, "Galera (wsrep_on): row claims are "
		    "safe cluster-wide; expect some claims to meet "
		    "certification conflicts (error 1213)");
}

/* A binary log by statement refuses every write of a session at READ
 * COMMITTED, as jobrun's are (InnoDB logs those by row only): the runs
 * fail at their first write, each with the server's sentence. */
static void
check_binlog(struct report *r)
{
	const char *log = json_string_value(json_object_get(r->settings,
	    "log_bin"));
	const char *format = json_string_value(json_object_get(r->settings,
	    "binlog_format"));

	if (log != NULL && strcmp(log, "ON") == 0 && format != NULL &&
	    strcasecmp(format, "STATEMENT") == 0)
		note(r, PROBLEM, "SET GLOBAL binlog_format = 'MIXED' (the "
		    "default) or 'ROW', and so in the server's configuration",
		    "binlog_format = STATEMENT, with log_bin ON: the server "
		    "refuses every write jobrun makes, at READ COMMITTED");
}

/* Whether the connection is encrypted, and with what: over TCP in clear,
 * advice. */
static void
check_tls(struct ctx *c, struct report *r, json_t *server)
{
	const struct cfg_db *db = &c->cfg.db;
	char tls[128];

	if (db_tls(&c->db, tls, sizeof tls)) {
		json_object_set_new(server, "tls", json_string(tls));
		if (db->tls == CFG_TLS_VERIFY)
			note(r, OK, NULL, "connection: TLS (%s), the server's "
			    "certificate and name verified", tls);
		else
			note(r, ADVICE, "set [database] tls = verify (see "
			    "jobrun.conf(5))", "connection: TLS (%s), the "
			    "server not verified (tls = on)", tls);
		return;
	}
	json_object_set_new(server, "tls", json_null());
	if (cfg_db_tcp(db))
		note(r, ADVICE, "set [database] tls = verify (see "
		    "jobrun.conf(5))", "connection: TCP in clear");
	else
		note(r, OK, NULL, "connection: the unix socket, no TLS");
}

static enum db_status
check_server(struct ctx *c, struct report *r, json_t *server, char *err,
    size_t errlen)
{
	enum db_status st;
	char *version = NULL;

	r->settings = json_object();
	st = queue_server(c->q, &version, on_setting, r, err, errlen);
	if (st == DB_OK)
		check_binlog(r);
	if (version != NULL) {
		json_object_set_new(server, "version", json_string(version));
		json_object_set_new(server, "name",
		    json_string(db_server_name(&c->db)));
		note(r, OK, NULL, "server %s (%s) answers at %s", version,
		    db_server_name(&c->db), c->db.where);
	}
	/* What MariaDB has and MySQL lacks, as far as jobrun goes: said,
	 * as nothing is to be done about it. */
	if (version != NULL && db_is_mysql(&c->db))
		note(r, OK, NULL, "MySQL: with --jobs each claim is a "
		    "statement of its own (no bulk execution, which MariaDB "
		    "has), and a JSON payload is kept in MySQL's form (keys "
		    "reordered, spacing normalized), not as it was written");
	free(version);
	if (st == DB_OK)
		check_tls(c, r, server);
	json_object_set_new(server, "settings", r->settings);
	r->settings = NULL;
	return st;
}

int
cmd_check(struct ctx *c)
{
	struct report r = { c->cli.json, json_array(), 0, NULL };
	json_t *server = json_object();
	const char **types = xcalloc(c->cfg.ntypes + 1, sizeof *types);
	char err[1024], what[128];
	enum db_status st;
	size_t i;
	int usable = 0;

	note(&r, c->cfg.ntypes > 0 ? OK : PROBLEM, c->cfg.ntypes > 0 ? NULL :
	    "add a [type.NAME] section (see jobrun.conf(5))",
	    "configuration %s: %zu job type(s)", c->cfg.path, c->cfg.ntypes);
	check_libcurl(c, &r);
	check_types(c, &r);
	st = check_server(c, &r, server, err, sizeof err);
	if (st == DB_OK)
		st = check_table(c, &r, &usable, err, sizeof err);
	if (st == DB_OK) {
		check_schedules(c, &r);
		check_fan_in(c, &r);
		check_latency(c, &r);
		check_history(c, &r);
		check_audit(c, &r);
		check_retention(c, &r);
	}
	if (st == DB_OK && usable)
		st = check_flow(c, &r, err, sizeof err);
	if (st == DB_OK && usable)
		st = check_unhandled(c, &r, err, sizeof err);
	if (st == DB_OK && usable)
		st = check_clock(c, &r, err, sizeof err);
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
