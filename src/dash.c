/*
 * dash.c - "jobrun report": gather the queue's state once, then write it
 * as an HTML page (--html=FILE, dash_html.c) and/or print it as JSON
 * (--json), the same figures both ways.
 *
 * Cron refreshes the page every minute into a directory a web server
 * serves, so the page is replaced atomically (replace.c) and its cost does
 * not grow with the history: the backlog is status's (queue_info.c), the
 * hours come from idx_finished, the failures are the tail of a range
 * (queue_report.c).  The page says what "jobrun status" and "jobrun list
 * --status=failed" say, no more: no connection detail, no handler
 * setting, only the handler's kind.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "audit.h"
#include "command.h"
#include "dash.h"
#include "replace.h"
#include "report.h"
#include "util.h"

int
cmd_report_check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->nargs > 0)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[0]);
	if (cli->html == NULL && !cli->json)
		return errf(err, errlen, "report needs --html=FILE or --json");
	if (cli->html != NULL && cli->html[0] == '\0')
		return errf(err, errlen, "--html: an empty file name");
	if (cli->html != NULL && strcmp(cli->html, "-") == 0 && cli->json)
		return errf(err, errlen, "--html=- and --json would both "
		    "write to standard output");
	return 0;
}

void
dash_free(struct dash *d)
{
	size_t i, j;

	free(d->db_now);
	free(d->hours_from);
	for (i = 0; i < d->ntypes; i++)
		free(d->types[i].type);
	free(d->types);
	for (i = 0; i < d->nlast; i++) {
		free(d->last[i].type);
		free(d->last[i].business_key);
		free(d->last[i].last_error);
		free(d->last[i].finished_at);
		for (j = 0; j < d->last[i].nhistory; j++)
			db_free_cols(d->last[i].history[j].cols, ATTEMPT_COLS);
		free(d->last[i].history);
	}
	free(d->last);
	latency_view_free(&d->latency);
	retention_view_free(&d->retention);
	json_decref(d->changes);
	memset(d, 0, sizeof *d);
}

/* --- gathering ------------------------------------------------------- */

/* The row of type (len bytes, byte for byte: "ab\0c" is not "ab"). */
static struct dash_type *
type_row(struct dash *d, const char *type, size_t len)
{
	struct dash_type *t;
	size_t i;

	for (i = 0; i < d->ntypes; i++)
		if (d->types[i].type_len == len &&
		    memcmp(d->types[i].type, type, len) == 0)
			return &d->types[i];
	d->types = xrealloc(d->types, (d->ntypes + 1) * sizeof *d->types);
	t = memset(&d->types[d->ntypes], 0, sizeof d->types[d->ntypes]);
	t->type = xstrndup(type, len);	/* NUL bytes too */
	t->type_len = len;
	t->lag = -1;
	d->ntypes++;
	return t;
}

static void
add_backlog(struct dash *d, const struct queue_backlog *b)
{
	struct dash_type *t, *all = &d->total;
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct queue_backlog_row *r = &b->rows[i];

		t = type_row(d, r->type, r->type_len);
		t->pending = r->pending;
		t->due = r->due;
		t->processing = r->processing;
		t->expired = r->expired;
		t->failed = r->failed;
		t->lag = r->lag;
		all->pending += r->pending;
		all->due += r->due;
		all->processing += r->processing;
		all->expired += r->expired;
		all->failed += r->failed;
		if (r->lag > all->lag)
			all->lag = r->lag;
	}
}

static void
on_hour(void *arg, const struct queue_hour_count *h)
{
	struct dash *d = arg;
	struct dash_type *t;

	if (h->hour < 0 || h->hour >= DASH_HOURS)
		return;
	t = type_row(d, h->type.s, h->type.len);
	if (h->failed) {
		d->failures[h->hour] += h->count;
		t->failed_day += h->count;
		d->total.failed_day += h->count;
		if (h->deadline) {
			t->deadline_day += h->count;
			d->total.deadline_day += h->count;
		}
	} else {
		d->done[h->hour] += h->count;
		t->done_day += h->count;
		d->total.done_day += h->count;
	}
}

/* A column's bytes, kept whole (NUL and all). */
static char *
copy_text(struct queue_text t, size_t *len)
{
	*len = t.len;
	return t.s != NULL ? xstrndup(t.s, t.len) : NULL;
}

static void
on_failure(void *arg, const struct queue_failure *f)
{
	struct dash *d = arg;
	struct dash_failure *x;

	d->last = xrealloc(d->last, (d->nlast + 1) * sizeof *d->last);
	x = &d->last[d->nlast++];
	memset(x, 0, sizeof *x);
	x->id = f->id;
	x->type = copy_text(f->type, &x->type_len);
	x->business_key = copy_text(f->business_key, &x->business_key_len);
	x->last_error = copy_text(f->last_error, &x->last_error_len);
	x->attempts = f->attempts;
	x->max_attempts = f->max_attempts;
	x->finished_at = f->finished_at != NULL ? xstrdup(f->finished_at) :
	    NULL;
}

/* An attempt of one of the latest failures, given to its failure by its
 * job's id (cols[AC_JOB]). */
static void
on_attempt(void *arg, char **cols, const size_t *lens)
{
	struct dash *d = arg;
	uint64_t job = queue_number(cols[AC_JOB]);
	struct dash_failure *x = NULL;
	struct dash_attempt *a;
	size_t i;

	for (i = 0; i < d->nlast && x == NULL; i++)
		if (d->last[i].id == job)
			x = &d->last[i];
	if (x == NULL)
		return;
	x->history = xrealloc(x->history, (x->nhistory + 1) *
	    sizeof *x->history);
	a = &x->history[x->nhistory++];
	for (i = 0; i < ATTEMPT_COLS; i++) {
		a->cols[i] = cols[i] != NULL ? xstrndup(cols[i], lens[i]) :
		    NULL;
		a->lens[i] = cols[i] != NULL ? lens[i] : 0;
	}
}

/* The attempts of the latest failures, when the table has a history: one
 * statement for them all. */
static enum db_status
failures_history(struct ctx *c, struct dash *d, char *err, size_t errlen)
{
	struct attempts *a = attempts_open(c->q);
	uint64_t ids[DASH_FAILURES];
	enum db_status st;
	size_t i;

	st = attempts_probe(a, 0, &d->has_history, err, errlen);
	for (i = 0; i < d->nlast && i < DASH_FAILURES; i++)
		ids[i] = d->last[i].id;
	if (st == DB_OK && d->has_history)
		st = attempts_each(a, ids, i, on_attempt, d, err, errlen);
	attempts_close(a);
	return st;
}

static void
on_change(void *arg, const struct audit_row *r)
{
	json_array_append_new(arg, audit_report_json(r));
}

/* The last operators' changes; d->changes stays NULL without the table. */
static enum db_status
gather_changes(struct ctx *c, struct dash *d, char *err, size_t errlen)
{
	json_t *rows = json_array();
	enum db_status st;
	int present = 0;

	st = audit_list(c->q, 0, AUDIT_REPORT_ROWS, on_change, rows, &present,
	    err, errlen);
	if (st == DB_OK && present)
		d->changes = rows;
	else
		json_decref(rows);
	return st;
}

static enum db_status
dash_gather(struct ctx *c, struct dash *d, char *err, size_t errlen)
{
	const char **known = cmd_type_names(c);
	struct queue_backlog b = { NULL, 0 };
	const struct cfg_type *ct;
	size_t i;
	struct tm tm;
	time_t now = time(NULL);
	enum db_status st;

	memset(d, 0, sizeof *d);
	d->total.lag = -1;
	strftime(d->written_at, sizeof d->written_at, "%Y-%m-%d %H:%M:%S UTC",
	    gmtime_r(&now, &tm));
	st = queue_report_clock(c->q, &d->db_now, &d->hours_from, err,
	    errlen);
	if (st == DB_OK)
		st = queue_backlog(c->q, known, c->cfg.ntypes, NULL, 1, &b,
		    err, errlen);
	if (st == DB_OK)
		add_backlog(d, &b);
	d->has_hours = st == DB_OK && queue_finished_index(c->q);
	if (st == DB_OK && d->has_hours)
		st = queue_finished_hours(c->q, d->hours_from, on_hour, d, err,
		    errlen);
	/* Each type's handler kind, the types only the hours found too
	 * (byte for byte, as a run picks its handler). */
	for (i = 0; i < d->ntypes; i++)
		if ((ct = cfg_find_type_n(&c->cfg, d->types[i].type,
		    d->types[i].type_len)) != NULL)
			d->types[i].handler = ct->kind->name;
	if (st == DB_OK)
		st = queue_last_failures(c->q, DASH_FAILURES, on_failure, d,
		    err, errlen);
	if (st == DB_OK)
		st = failures_history(c, d, err, errlen);
	if (st == DB_OK)
		st = latency_read(c->q, NULL, &d->latency, err, errlen);
	if (st == DB_OK)
		st = gather_changes(c, d, err, errlen);
	if (st == DB_OK)
		st = retention_view_read(&c->cfg, c->q, 1, &d->retention, err,
		    errlen);
	if (st == DB_OK)
		st = priority_view_read(c->q, NULL, &d->priorities, err,
		    errlen);
	queue_backlog_free(&b);
	free(known);
	return st;
}

/* --- JSON --------------------------------------------------------------- */

static json_t *
counts_json(const struct dash_type *t, int hours)
{
	json_t *o = json_pack("{s:I,s:I,s:o,s:I,s:I,s:I}",
	    "pending", (json_int_t)t->pending, "due", (json_int_t)t->due,
	    "lag_seconds", t->lag < 0 ? json_null() : json_integer(t->lag),
	    "processing", (json_int_t)t->processing,
	    "expired_locks", (json_int_t)t->expired,
	    "failed", (json_int_t)t->failed);

	json_object_set_new(o, "finished_24h", hours ?
	    json_integer((json_int_t)t->done_day) : json_null());
	json_object_set_new(o, "failed_24h", hours ?
	    json_integer((json_int_t)t->failed_day) : json_null());
	json_object_set_new(o, "deadline_passed_24h", hours ?
	    json_integer((json_int_t)t->deadline_day) : json_null());
	return o;
}

static json_t *
hours_json(const unsigned long *v)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < DASH_HOURS; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *
history_json(const struct dash_failure *f)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < f->nhistory; i++)
		json_array_append_new(list, report_attempt(f->history[i].cols,
		    f->history[i].lens));
	return list;
}

static json_t *
failure_json(const struct dash_failure *f, int has_history)
{
	json_t *o = json_pack("{s:I,s:o,s:o,s:I,s:I,s:o,s:o}",
	    "id", (json_int_t)f->id,
	    "type", report_text(f->type, f->type_len),
	    "business_key", report_text(f->business_key,
	    f->business_key_len),
	    "attempts", (json_int_t)f->attempts,
	    "max_attempts", (json_int_t)f->max_attempts,
	    "finished_at", f->finished_at != NULL ?
	    json_string(f->finished_at) : json_null(),
	    "last_error", report_text(f->last_error, f->last_error_len));

	if (has_history)
		json_object_set_new(o, "history", history_json(f));
	return o;
}

static json_t *
dash_json(const struct dash *d)
{
	json_t *types = json_array(), *last = json_array(), *t, *doc;
	size_t i;

	for (i = 0; i < d->ntypes; i++) {
		t = counts_json(&d->types[i], d->has_hours);
		json_object_set_new(t, "type", report_text(d->types[i].type,
		    d->types[i].type_len));
		json_object_set_new(t, "handler", d->types[i].handler != NULL ?
		    json_string(d->types[i].handler) : json_null());
		json_array_append_new(types, t);
	}
	for (i = 0; i < d->nlast; i++) {
		const struct dash_failure *f = &d->last[i];

		json_array_append_new(last, failure_json(f, d->has_history));
	}
	doc = json_pack("{s:s,s:s,s:o,s:o,s:o}", "written_at", d->written_at,
	    "database_now", d->db_now, "total", counts_json(&d->total,
	    d->has_hours), "types", types, "last_failures", last);
	if (d->latency.present)
		json_object_set_new(doc, "start_latency",
		    latency_json(&d->latency));
	if ((t = retention_view_json(&d->retention)) != NULL)
		json_object_set_new(doc, "retention", t);
	if ((t = priority_view_json(&d->priorities)) != NULL)
		json_object_set_new(doc, "priorities", t);
	if (d->changes != NULL)
		json_object_set_new(doc, "operator_changes",
		    json_incref(d->changes));
	json_object_set_new(doc, "hours", d->has_hours ? json_pack(
	    "{s:s,s:o,s:o}", "from", d->hours_from, "finished",
	    hours_json(d->done), "failed", hours_json(d->failures)) :
	    json_null());
	return doc;
}

/* --- the command ------------------------------------------------------ */

static void
write_page(FILE *f, void *arg)
{
	dash_html(f, arg);
}

int
cmd_report(struct ctx *c)
{
	struct dash d;
	char err[1024];
	enum db_status st;
	int status = EX_OK;

	st = dash_gather(c, &d, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		dash_free(&d);
		return cmd_exit_for(st);
	}
	if (c->cli.html != NULL && strcmp(c->cli.html, "-") == 0)
		dash_html(stdout, &d);
	/* 0644: the web server that serves it runs as another user. */
	else if (c->cli.html != NULL && replace_file(c->cli.html, "report",
	    0644, write_page, &d, err, sizeof err) != 0) {
		log_msg(&c->lg, LV_ERROR, "%s", err);
		status = EX_IOERR;
	}
	if (c->cli.json)
		report_json(dash_json(&d));
	dash_free(&d);
	return status;
}
