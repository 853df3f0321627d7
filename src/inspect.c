/*
 * inspect.c - "jobrun status", "list" and "show": what is in the table,
 * without writing to it.
 *
 * status must stay cheap on a table with millions of finished rows, so it
 * never counts them: the types come from a loose scan of idx_type_status,
 * the counts of pending, processing and failed jobs from ranges of that
 * index (their number is the backlog, not the history), the lag from the
 * due range of idx_pick, expired locks from idx_lock, and the number of
 * success rows is the optimizer's estimate, marked with "~".
 *
 * Types, keys, statuses, errors and payloads come from the table, written
 * by applications and handlers: in text output every control character in
 * them is escaped (utf8_escape), so that a key holding ESC [2J shows as
 * text instead of clearing the operator's screen.  --json needs nothing
 * more: JSON escapes control characters itself.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "command.h"
#include "utf8.h"
#include "util.h"

static struct type_status *
status_row(struct status *s, const char *type)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->rows[i].type, type) == 0)
			return &s->rows[i];
	s->rows = xrealloc(s->rows, (s->n + 1) * sizeof *s->rows);
	memset(&s->rows[s->n], 0, sizeof s->rows[s->n]);
	s->rows[s->n].type = xstrdup(type);
	s->rows[s->n].lag = -1;
	return &s->rows[s->n++];
}

static unsigned long
number_or_zero(const char *s)
{
	unsigned long v = 0;

	if (s != NULL)
		parse_ulong(s, 0, ULONG_MAX, &v);
	return v;
}

static int
on_type(void *arg, char **cols, unsigned ncols)
{
	(void)ncols;
	if (cols[0] != NULL)
		status_row(arg, cols[0]);
	return 0;
}

static int
on_type_count(void *arg, char **cols, unsigned ncols)
{
	struct type_status *t = arg;
	unsigned long n = number_or_zero(cols[1]);

	(void)ncols;
	if (strcmp(cols[0], "pending") == 0)
		t->pending = n;
	else if (strcmp(cols[0], "processing") == 0)
		t->processing = n;
	else if (strcmp(cols[0], "failed") == 0)
		t->failed = n;
	return 0;
}

static int
on_estimate(void *arg, char **cols, unsigned ncols)
{
	struct type_status *t = arg;

	(void)ncols;
	t->success = number_or_zero(cols[8]);
	return 1;
}

static int
on_lag(void *arg, char **cols, unsigned ncols)
{
	struct type_status *t = status_row(arg, cols[0]);

	(void)ncols;
	t->due = number_or_zero(cols[1]);
	t->lag = (long)number_or_zero(cols[2]);
	return 0;
}

static int
on_expired(void *arg, char **cols, unsigned ncols)
{
	(void)ncols;
	status_row(arg, cols[0])->expired = number_or_zero(cols[1]);
	return 0;
}

enum db_status
cmd_collect_status(struct ctx *c, int estimate, struct status *s, char *err,
    size_t errlen)
{
	enum db_status st = DB_OK;
	const struct cfg_type *t;
	struct db_arg arg;
	size_t i;

	if (c->cli.type != NULL)
		status_row(s, c->cli.type);
	else {
		for (i = 0; i < c->cfg.ntypes; i++)
			status_row(s, c->cfg.types[i].name);
		st = queue_select(&c->q, Q_TYPES, NULL, 0, 1, on_type, s, err,
		    errlen);
	}
	if (st == DB_OK)
		st = queue_select(&c->q, Q_LAG, NULL, 0, 3, on_lag, s, err,
		    errlen);
	if (st == DB_OK)
		st = queue_select(&c->q, Q_EXPIRED, NULL, 0, 2, on_expired, s,
		    err, errlen);
	/* Q_LAG and Q_EXPIRED see every type; keep the one asked for. */
	if (c->cli.type != NULL)
		while (s->n > 1) {
			free(s->rows[--s->n].type);
		}
	for (i = 0; st == DB_OK && i < s->n; i++) {
		arg = DB_STR(s->rows[i].type);
		st = queue_select(&c->q, Q_TYPE_COUNTS, &arg, 1, 2,
		    on_type_count, &s->rows[i], err, errlen);
		if (st == DB_OK && estimate)
			st = queue_select(&c->q, Q_SUCCESS_ESTIMATE, &arg, 1,
			    10, on_estimate, &s->rows[i], err, errlen);
		t = cfg_find_type(&c->cfg, s->rows[i].type);
		s->rows[i].handler = t != NULL ? t->kind->name : NULL;
	}
	return st;
}

static void
print_status_text(const struct status *s, const char *config)
{
	char lag[32], success[32], *type;
	size_t i;
	int unhandled = 0;

	printf("%-24s %8s %6s %8s %10s %7s %7s %10s  %s\n", "TYPE", "PENDING",
	    "DUE", "LAG", "PROCESSING", "EXPIRED", "FAILED", "SUCCESS",
	    "HANDLER");
	for (i = 0; i < s->n; i++) {
		const struct type_status *t = &s->rows[i];

		if (t->lag < 0)
			snprintf(lag, sizeof lag, "-");
		else
			snprintf(lag, sizeof lag, "%lds", t->lag);
		snprintf(success, sizeof success, "~%lu", t->success);
		type = utf8_escape_dup(t->type, 0);
		printf("%-24s %8lu %6lu %8s %10lu %7lu %7lu %10s  %s\n",
		    type, t->pending, t->due, lag, t->processing,
		    t->expired, t->failed, success,
		    t->handler != NULL ? t->handler : "-");
		free(type);
		unhandled |= t->handler == NULL && t->pending > 0;
	}
	if (!unhandled)
		return;
	printf("\nPending jobs of these types have no [type.NAME] section in "
	    "%s:\n", config);
	for (i = 0; i < s->n; i++)
		if (s->rows[i].handler == NULL && s->rows[i].pending > 0) {
			type = utf8_escape_dup(s->rows[i].type, 0);
			printf("  %s\n", type);
			free(type);
		}
}

static void
print_status_json(const struct status *s)
{
	json_t *types = json_array(), *unhandled = json_array();
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct type_status *t = &s->rows[i];

		json_array_append_new(types, json_pack(
		    "{s:s,s:s?,s:I,s:I,s:o,s:I,s:I,s:I,s:I}",
		    "type", t->type, "handler", t->handler,
		    "pending", (json_int_t)t->pending,
		    "due", (json_int_t)t->due,
		    "lag_seconds", t->lag < 0 ? json_null() :
		    json_integer(t->lag),
		    "processing", (json_int_t)t->processing,
		    "expired_locks", (json_int_t)t->expired,
		    "failed", (json_int_t)t->failed,
		    "success_estimate", (json_int_t)t->success));
		if (t->handler == NULL && t->pending > 0)
			json_array_append_new(unhandled,
			    json_string(t->type));
	}
	cmd_print_json(json_pack("{s:o,s:o}", "types", types, "unhandled",
	    unhandled));
}

void
cmd_free_status(struct status *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->rows[i].type);
	free(s->rows);
	s->rows = NULL;
	s->n = 0;
}

int
cmd_status(struct ctx *c)
{
	struct status s = { NULL, 0 };
	char err[1024];
	enum db_status st;

	st = cmd_collect_status(c, 1, &s, err, sizeof err);
	if (st != DB_OK)
		cmd_db_error(c, st, err);
	else if (c->cli.json)
		print_status_json(&s);
	else
		print_status_text(&s, c->cfg.path);
	cmd_free_status(&s);
	return cmd_exit_for(st);
}

/* --- list ------------------------------------------------------------ */

struct listing {
	int json;
	json_t *jobs;
	unsigned long count;
	char last_id[32];
};

/* The first line of last_error, cut to 60 characters for a table cell,
 * escaped. */
static void
one_line(const char *s, char *out, size_t outlen)
{
	size_t n = s != NULL ? strcspn(s, "\r\n") : 0;

	n = s != NULL ? utf8_prefix(s, n, 60) : 0;
	utf8_escape(out, outlen, s != NULL ? s : "", n, 0);
}

/* A text cell of a listed row, escaped. */
static char *
cell(const char *s)
{
	return utf8_escape_dup(s != NULL ? s : "NULL", 0);
}

static json_t *
number_json(const char *s)
{
	return s != NULL ? json_integer((json_int_t)number_or_zero(s)) :
	    json_null();
}

static json_t *
string_json(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static int
on_listed(void *arg, char **cols, unsigned ncols)
{
	struct listing *l = arg;
	char err_cell[241], *type, *status, *key;

	(void)ncols;
	if (l->count++ == 0 && !l->json)
		printf("%-10s %-16s %-10s %-7s %-19s  %s\n", "ID", "TYPE",
		    "STATUS", "TRIES", "NEXT RUN", "KEY  LAST ERROR");
	snprintf(l->last_id, sizeof l->last_id, "%s", cols[0]);
	if (l->json) {
		json_array_append_new(l->jobs, json_pack(
		    "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
		    "id", number_json(cols[0]), "type", string_json(cols[1]),
		    "business_key", string_json(cols[2]),
		    "status", string_json(cols[3]),
		    "attempts", number_json(cols[4]),
		    "max_attempts", number_json(cols[5]),
		    "next_run_at", string_json(cols[6]),
		    "updated_at", string_json(cols[7]),
		    "last_error", string_json(cols[8])));
		return 0;
	}
	one_line(cols[8], err_cell, sizeof err_cell);
	type = cell(cols[1]);
	status = cell(cols[3]);
	key = cell(cols[2]);
	printf("%-10s %-16s %-10s %3s/%-3s %-19s  %s%s%s\n", cols[0], type,
	    status, cols[4], cols[5], cols[6], key, err_cell[0] ? "  " : "",
	    err_cell);
	free(type);
	free(status);
	free(key);
	return 0;
}

int
cmd_list(struct ctx *c)
{
	static const enum queue_stmt by_filter[2][2] = {
		{ Q_LIST, Q_LIST_TYPE }, { Q_LIST_STATUS, Q_LIST_STATUS_TYPE },
	};
	struct listing l = { c->cli.json, json_array(), 0, "" };
	struct db_arg args[4];
	unsigned n = 0;
	char err[1024];
	enum db_status st;

	args[n++] = DB_NUM(c->cli.before_id ? c->cli.before_id :
	    (unsigned long long)LLONG_MAX);
	if (c->cli.status != NULL)
		args[n++] = DB_STR(c->cli.status);
	if (c->cli.type != NULL)
		args[n++] = DB_STR(c->cli.type);
	args[n++] = DB_NUM(c->cli.limit);
	st = queue_select(&c->q, by_filter[c->cli.status != NULL]
	    [c->cli.type != NULL], args, n, 9, on_listed, &l, err,
	    sizeof err);
	if (st != DB_OK) {
		json_decref(l.jobs);
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	/* A full page may have more behind it: say where to go on. */
	if (l.json)
		cmd_print_json(json_pack("{s:o,s:o}", "jobs", l.jobs,
		    "next_before_id", l.count == c->cli.limit ?
		    number_json(l.last_id) : json_null()));
	else {
		json_decref(l.jobs);
		if (l.count == 0)
			printf("no jobs\n");
		if (l.count == c->cli.limit)
			printf("(more: --before-id=%s)\n", l.last_id);
	}
	return EX_OK;
}

/* --- show ------------------------------------------------------------ */

static const char *const show_columns[] = {
	"id", "business_key", "type", "payload", "status", "attempts",
	"max_attempts", "next_run_at", "locked_by", "locked_until",
	"last_error", "created_at", "updated_at", "finished_at",
};
#define SHOW_COLUMNS (sizeof show_columns / sizeof show_columns[0])

struct shown {
	int json, found;
};

static int
on_shown(void *arg, char **cols, unsigned ncols)
{
	struct shown *s = arg;
	json_t *obj = json_object(), *payload;
	char *pretty, *text;
	unsigned i;

	s->found = 1;
	for (i = 0; i < ncols; i++) {
		payload = i == 3 && cols[i] != NULL ?
		    json_loads(cols[i], JSON_DECODE_ANY, NULL) : NULL;
		if (i == 3 && cols[i] != NULL && payload == NULL)
			payload = json_string(cols[i]);	/* not JSON: as is */
		if (s->json) {
			json_object_set_new(obj, show_columns[i], i == 3 &&
			    payload != NULL ? payload : i == 0 || i == 5 ||
			    i == 6 ? number_json(cols[i]) :
			    string_json(cols[i]));
			continue;
		}
		/* The payload keeps the line breaks of its indentation. */
		if (payload != NULL) {
			pretty = json_dumps(payload, JSON_INDENT(2) |
			    JSON_ENCODE_ANY);
			text = utf8_escape_dup(pretty ? pretty : "",
			    UTF8_ESC_KEEP_NL);
			printf("%-13s %s\n", "payload", text);
			free(text);
			free(pretty);
			json_decref(payload);
			continue;
		}
		text = utf8_escape_dup(cols[i] != NULL ? cols[i] : "NULL", 0);
		printf("%-13s %s\n", show_columns[i], text);
		free(text);
	}
	if (s->json)
		cmd_print_json(obj);
	else
		json_decref(obj);
	return 1;
}

int
cmd_show(struct ctx *c)
{
	struct shown s = { c->cli.json, 0 };
	unsigned long id = 0;
	struct db_arg arg;
	char err[1024];
	enum db_status st;

	if (c->cli.key != NULL)
		arg = DB_STR(c->cli.key);
	else {
		parse_ulong(c->cli.args[0], 1, ULONG_MAX, &id);
		arg = DB_NUM(id);
	}
	st = queue_select(&c->q, c->cli.key != NULL ? Q_SHOW_KEY : Q_SHOW_ID,
	    &arg, 1, SHOW_COLUMNS, on_shown, &s, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (!s.found) {
		log_msg(&c->lg, LV_ERROR, "show: no job %s%s", c->cli.key ?
		    "with key " : "", c->cli.key ? c->cli.key :
		    c->cli.args[0]);
		return EXIT_ATTENTION;
	}
	return EX_OK;
}
