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
#include "rawjson.h"
#include "report.h"
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

/* A count of one exact type, among those that equal the one asked for
 * under the column's collation (ORDER_SYNC beside order_sync). */
static int
on_type_count(void *arg, char **cols, unsigned ncols)
{
	struct type_status *t;
	unsigned long n = number_or_zero(cols[2]);

	(void)ncols;
	if (cols[0] == NULL || cols[1] == NULL)
		return 0;
	t = status_row(arg, cols[0]);
	if (strcmp(cols[1], "pending") == 0)
		t->pending = n;
	else if (strcmp(cols[1], "processing") == 0)
		t->processing = n;
	else if (strcmp(cols[1], "failed") == 0)
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
	struct type_status *t;

	(void)ncols;
	if (cols[0] == NULL)
		return 0;
	t = status_row(arg, cols[0]);
	t->due = number_or_zero(cols[1]);
	t->lag = (long)number_or_zero(cols[2]);
	return 0;
}

static int
on_expired(void *arg, char **cols, unsigned ncols)
{
	(void)ncols;
	if (cols[0] != NULL)
		status_row(arg, cols[0])->expired = number_or_zero(cols[1]);
	return 0;
}

/* The types Q_TYPES found: one of each group that the column's collation
 * takes as equal; each group's counts come back by exact type. */
struct groups {
	char **names;
	size_t n;
};

static int
on_group(void *arg, char **cols, unsigned ncols)
{
	struct groups *g = arg;

	(void)ncols;
	if (cols[0] == NULL)
		return 0;
	g->names = xrealloc(g->names, (g->n + 1) * sizeof *g->names);
	g->names[g->n++] = xstrdup(cols[0]);
	return 0;
}

static void
free_groups(struct groups *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->names[i]);
	free(g->names);
}

enum db_status
cmd_collect_status(struct ctx *c, int estimate, struct status *s, char *err,
    size_t errlen)
{
	struct groups g = { NULL, 0 };
	enum db_status st = DB_OK;
	const struct cfg_type *t;
	struct db_arg arg;
	size_t i;

	/* Rows for the configured types first, so they lead the table. */
	if (c->cli.type != NULL)
		status_row(s, c->cli.type);
	else
		for (i = 0; i < c->cfg.ntypes; i++)
			status_row(s, c->cfg.types[i].name);
	if (c->cli.type != NULL) {
		g.names = xcalloc(1, sizeof *g.names);
		g.names[g.n++] = xstrdup(c->cli.type);
	} else
		st = queue_select(&c->q, Q_TYPES, NULL, 0, 1, on_group, &g,
		    err, errlen);
	for (i = 0; st == DB_OK && i < g.n; i++) {
		if (c->cli.type == NULL)
			status_row(s, g.names[i]);
		arg = DB_STR(g.names[i]);
		st = queue_select(&c->q, Q_TYPE_COUNTS, &arg, 1, 3,
		    on_type_count, s, err, errlen);
	}
	free_groups(&g);
	if (st == DB_OK)
		st = queue_select(&c->q, Q_LAG, NULL, 0, 3, on_lag, s, err,
		    errlen);
	if (st == DB_OK)
		st = queue_select(&c->q, Q_EXPIRED, NULL, 0, 2, on_expired, s,
		    err, errlen);
	/* The queries see every type; keep the one asked for. */
	if (c->cli.type != NULL)
		while (s->n > 1) {
			free(s->rows[--s->n].type);
		}
	for (i = 0; st == DB_OK && i < s->n; i++) {
		arg = DB_STR(s->rows[i].type);
		if (estimate)
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
	report_json(json_pack("{s:o,s:o}", "types", types, "unhandled",
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

/* A string column as JSON: its bytes as they are (NUL included).  Bytes
 * that are not UTF-8 (an encoded surrogate, which utf8mb4 stores) cannot
 * be a JSON string; they become "?" rather than losing the row. */
static json_t *
bytes_json(const char *s, size_t len)
{
	json_t *v;
	char *copy;

	if (s == NULL)
		return json_null();
	if ((v = json_stringn(s, len)) != NULL)
		return v;
	copy = xstrndup(s, len);
	utf8_sanitize(copy, len);
	v = json_stringn(copy, len);
	free(copy);
	return v != NULL ? v : json_string("?");
}

/* A text cell of a listed row, escaped (len bytes; NULL as "NULL"). */
static char *
cell_len(const char *s, size_t len)
{
	size_t n;
	char *out;

	if (s == NULL)
		return xstrdup("NULL");
	n = utf8_escape(NULL, 0, s, len, 0);
	out = xmalloc(n + 1);
	utf8_escape(out, n + 1, s, len, 0);
	return out;
}

static int
on_listed(void *arg, char **cols, const size_t *lens, unsigned ncols)
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
		    "id", number_json(cols[0]), "type", bytes_json(cols[1],
		    lens[1]), "business_key", bytes_json(cols[2], lens[2]),
		    "status", bytes_json(cols[3], lens[3]),
		    "attempts", number_json(cols[4]),
		    "max_attempts", number_json(cols[5]),
		    "next_run_at", string_json(cols[6]),
		    "updated_at", string_json(cols[7]),
		    "last_error", bytes_json(cols[8], lens[8])));
		return 0;
	}
	one_line(cols[8], err_cell, sizeof err_cell);
	type = cell(cols[1]);
	status = cell(cols[3]);
	key = cell_len(cols[2], lens[2]);
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
	st = queue_select_len(&c->q, by_filter[c->cli.status != NULL]
	    [c->cli.type != NULL], args, n, 9, on_listed, &l, err,
	    sizeof err);
	if (st != DB_OK) {
		json_decref(l.jobs);
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	/* A full page may have more behind it: say where to go on. */
	if (l.json)
		report_json(json_pack("{s:o,s:o}", "jobs", l.jobs,
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

/* len bytes of s on stdout, control characters escaped. */
static void
print_escaped(const char *s, size_t len, int flags)
{
	size_t n = utf8_escape(NULL, 0, s, len, flags);
	char *out = xmalloc(n + 1);

	utf8_escape(out, n + 1, s, len, flags);
	fwrite(out, 1, n, stdout);
	free(out);
}

/* The payload is shown as the row holds it, never re-encoded: text as it
 * is, and in JSON spliced in whole when the server takes it as JSON (a
 * string holding it otherwise). */
static int
on_shown(void *arg, char **cols, const size_t *lens, unsigned ncols)
{
	struct shown *s = arg;
	struct raw_member payload = { "payload", cols[3], lens[3] };
	int valid = cols[SHOW_COLUMNS] != NULL &&
	    strcmp(cols[SHOW_COLUMNS], "1") == 0;
	json_t *obj;
	char *text;
	size_t len;
	unsigned i;

	(void)ncols;
	s->found = 1;
	if (!s->json) {
		/* Every value as stored, escaped for the terminal; the
		 * payload keeps its own line breaks. */
		for (i = 0; i < SHOW_COLUMNS; i++) {
			printf("%-13s ", show_columns[i]);
			if (cols[i] != NULL)
				print_escaped(cols[i], lens[i], i == 3 ?
				    UTF8_ESC_KEEP_NL : 0);
			else
				fputs("NULL", stdout);
			putchar('\n');
		}
		return 1;
	}
	obj = json_object();
	for (i = 0; i < SHOW_COLUMNS; i++) {
		if (i == 3 && cols[i] != NULL && valid)
			continue;	/* spliced in below */
		json_object_set_new(obj, show_columns[i], i == 0 || i == 5 ||
		    i == 6 ? number_json(cols[i]) : bytes_json(cols[i],
		    lens[i]));
	}
	text = rawjson_object(obj, &payload, cols[3] != NULL && valid, &len);
	json_decref(obj);
	fwrite(text, 1, len, stdout);
	putchar('\n');
	free(text);
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
	st = queue_select_len(&c->q, c->cli.key != NULL ? Q_SHOW_KEY :
	    Q_SHOW_ID, &arg, 1, SHOW_COLUMNS + 1, on_shown, &s, err,
	    sizeof err);
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
