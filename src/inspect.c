/*
 * inspect.c - "jobrun status", "list" and "show": what is in the table,
 * without writing to it, as text for people or JSON for scripts.
 *
 * The queue module reads (queue_info.c: cheap on millions of finished
 * rows, types byte for byte); this file prints.  Every value from the
 * table reaches a terminal escaped (a key or an error may hold control
 * sequences); JSON keeps the values exact, the payload as stored.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "attempts.h"
#include "command.h"
#include "fanin.h"
#include "flow.h"
#include "latency.h"
#include "queue_schema.h"
#include "rawjson.h"
#include "report.h"
#include "priority_view.h"
#include "retention_view.h"
#include "schedule.h"
#include "utf8.h"
#include "util.h"

/* len bytes of s, control characters escaped (malloc'ed); NULL s is
 * "NULL". */
static char *
escaped(const char *s, size_t len, int flags)
{
	size_t n;
	char *out;

	if (s == NULL)
		return xstrdup("NULL");
	n = utf8_escape(NULL, 0, s, len, flags);
	out = xmalloc(n + 1);
	utf8_escape(out, n + 1, s, len, flags);
	return out;
}

/* A string column as JSON: its bytes as they are (report_text). */
static json_t *
text_json(struct queue_text t)
{
	return report_text(t.s, t.len);
}

static json_t *
number_json(const char *s)
{
	unsigned long v = 0;

	if (s == NULL)
		return json_null();
	parse_ulong(s, 0, ULONG_MAX, &v);
	return json_integer((json_int_t)v);
}

static json_t *
string_json(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* --- status ------------------------------------------------------------ */

/* The handler of type (len bytes), or NULL when the configuration has no
 * section for it (byte for byte). */
static const char *
handler_of(const struct ctx *c, const char *type, size_t len)
{
	const struct cfg_type *t = cfg_find_type_n(&c->cfg, type, len);

	return t != NULL ? t->kind->name : NULL;
}

static void
print_status_text(const struct ctx *c, const struct queue_backlog *b)
{
	char lag[32], success[32], *type;
	const char *handler;
	size_t i;
	int unhandled = 0;

	printf("%-24s %8s %6s %8s %10s %7s %7s %9s %10s  %s\n", "TYPE",
	    "PENDING", "DUE", "LAG", "PROCESSING", "EXPIRED", "FAILED",
	    "CANCELLED", "SUCCESS", "HANDLER");
	for (i = 0; i < b->n; i++) {
		const struct queue_backlog_row *t = &b->rows[i];

		if (t->lag < 0)
			snprintf(lag, sizeof lag, "-");
		else
			snprintf(lag, sizeof lag, "%lds", t->lag);
		snprintf(success, sizeof success, "%s%lu",
		    t->success_exact ? "" : "~", t->success);
		handler = handler_of(c, t->type, t->type_len);
		type = escaped(t->type, t->type_len, 0);
		printf("%-24s %8lu %6lu %8s %10lu %7lu %7lu %9lu %10s  %s\n",
		    type, t->pending, t->due, lag, t->processing,
		    t->expired, t->failed, t->cancelled, success,
		    handler != NULL ? handler : "-");
		free(type);
		unhandled |= handler == NULL && t->pending > 0;
	}
	if (!unhandled)
		return;
	printf("\nPending jobs of these types have no [type.NAME] section in "
	    "%s:\n", c->cfg.path);
	for (i = 0; i < b->n; i++)
		if (handler_of(c, b->rows[i].type, b->rows[i].type_len) ==
		    NULL && b->rows[i].pending > 0) {
			type = escaped(b->rows[i].type, b->rows[i].type_len, 0);
			printf("  %s\n", type);
			free(type);
		}
}

static void
print_status_json(const struct ctx *c, const struct queue_backlog *b,
    json_t *schedules, json_t *fan_ins, json_t *flow, json_t *latency,
    json_t *retention, json_t *priorities)
{
	json_t *types = json_array(), *unhandled = json_array();
	const char *handler;
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct queue_backlog_row *t = &b->rows[i];

		handler = handler_of(c, t->type, t->type_len);
		json_array_append_new(types, json_pack(
		    "{s:o,s:s?,s:I,s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:b}",
		    "type", report_text(t->type, t->type_len),
		    "handler", handler,
		    QUEUE_PENDING, (json_int_t)t->pending,
		    "due", (json_int_t)t->due,
		    "lag_seconds", t->lag < 0 ? json_null() :
		    json_integer(t->lag),
		    QUEUE_PROCESSING, (json_int_t)t->processing,
		    "expired_locks", (json_int_t)t->expired,
		    QUEUE_FAILED, (json_int_t)t->failed,
		    "cancelled", (json_int_t)t->cancelled,
		    "success_estimate", (json_int_t)t->success,
		    "success_exact", t->success_exact));
		if (handler == NULL && t->pending > 0)
			json_array_append_new(unhandled,
			    report_text(t->type, t->type_len));
	}
	/* "flow" only with the control table: documents of tables without
	 * it keep their keys. */
	report_json(json_pack("{s:o,s:o,s:o*,s:o*,s:o*,s:o*,s:o*,s:o*}",
	    "types", types, "unhandled", unhandled, "schedules", schedules,
	    "fan_ins", fan_ins, "flow", flow, "start_latency", latency,
	    "retention", retention, "priorities", priorities));
}

/* With the latency table, one line under the types' table. */
static void
print_latency_text(const struct latency_view *lv)
{
	char line[128];

	if (!lv->present)
		return;
	latency_line(line, sizeof line, &lv->all);
	printf("\nStart latency, last %d minutes: %s\n", LATENCY_MINUTES,
	    line);
}

/* The schedules' part of status: their latest slot and lag. */
static void
print_schedules_text(const struct sched_view *v, size_t n)
{
	size_t i;

	printf("\n%-24s %-16s %8s\n", "SCHEDULE", "LAST SLOT", "LAG");
	for (i = 0; i < n; i++)
		printf("%-24s %-16s %7lds\n", v[i].s->name,
		    v[i].last[0] != '\0' ? v[i].last : "-", v[i].lag);
}

static json_t *
schedules_json(const struct sched_view *v, size_t n)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:s,s:o,s:I}",
		    "name", v[i].s->name, "last_slot", v[i].last[0] != '\0' ?
		    json_string(v[i].last) : json_null(),
		    "lag_seconds", (json_int_t)v[i].lag));
	return list;
}

static void
print_fanins_text(const struct fanin_view *v, size_t n)
{
	char *shown;
	size_t i;

	if (n == 0)
		return;
	printf("\n%-40s %10s %10s\n", "FAN-IN", "DONE", "TOTAL");
	for (i = 0; i < n; i++) {
		/* A key from the table: escaped, never raw to a terminal. */
		shown = utf8_escape_dup(v[i].key, 0);
		printf("%-40s %10llu %10llu\n", shown,
		    (unsigned long long)v[i].done,
		    (unsigned long long)v[i].total);
		free(shown);
	}
}

static json_t *
fanins_json(const struct fanin_view *v, size_t n)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:s,s:I,s:I}", "key",
		    v[i].key, "done", (json_int_t)v[i].done, "total",
		    (json_int_t)v[i].total));
	return list;
}

/* What holds a type back now, in a word or two. */
static const char *
flow_word(const struct flow_state *s)
{
	if (s->paused)
		return "paused";
	if (s->full && s->throttled)
		return "full,throttled";
	return s->full ? "full" : s->throttled ? "throttled" : "-";
}

/* The keyed types: how many keys are at their cap, and the due jobs that
 * wait for them. */
static void
print_keys_text(const struct flow_states *fs)
{
	char *type, *key;
	size_t i;

	for (i = 0; i < fs->n; i++) {
		const struct flow_state *s = &fs->rows[i];

		if (s->key == NULL)
			continue;
		type = utf8_escape_dup(s->type, 0);
		key = utf8_escape_dup(s->key, 0);
		printf("%s: %lu at a time per %s: %lu %s at it, %lu due "
		    "%s waiting for %s\n", type, s->key_concurrency, key,
		    s->keys_full, s->keys_full == 1 ? "key" : "keys",
		    s->key_waiting, s->key_waiting == 1 ? "job" : "jobs",
		    s->keys_full == 1 ? "it" : "them");
		free(type);
		free(key);
	}
}

/* Flow control: caps in use, rates, pauses (after the backlog). */
static void
print_flow_text(const struct ctx *c, const struct flow *f,
    const struct flow_states *fs)
{
	char cap[32], rate[48], burst[32], tokens[32], *type;
	size_t i;

	if (fs->n == 0)
		return;
	printf("\nFlow control (%s; limits from %s):\n", flow_table(f),
	    c->cfg.path);
	printf("%-24s %-15s %6s %6s %12s %6s %8s\n", "TYPE", "HELD BACK",
	    "IN USE", "CAP", "RATE", "BURST", "STARTS");
	for (i = 0; i < fs->n; i++) {
		const struct flow_state *s = &fs->rows[i];

		snprintf(cap, sizeof cap, s->concurrency ? "%lu" : "-",
		    s->concurrency);
		if (s->rate) {
			snprintf(rate, sizeof rate, "%lu/%s", s->rate,
			    flow_unit(s->period));
			snprintf(tokens, sizeof tokens, "%.1f", s->tokens);
			snprintf(burst, sizeof burst, "%lu", s->burst);
		} else {
			snprintf(rate, sizeof rate, "-");
			snprintf(burst, sizeof burst, "-");
			snprintf(tokens, sizeof tokens, "-");
		}
		type = utf8_escape_dup(s->type, 0);
		printf("%-24s %-15s %6lu %6s %12s %6s %8s\n", type,
		    flow_word(s), s->in_use, cap, rate, burst, tokens);
		free(type);
	}
	print_keys_text(fs);
}

static json_t *
flow_json(const struct flow_states *fs)
{
	json_t *rows = json_array(), *rate, *key;
	size_t i;

	for (i = 0; i < fs->n; i++) {
		const struct flow_state *s = &fs->rows[i];

		rate = s->rate ? json_pack("{s:I,s:s,s:I,s:f}", "count",
		    (json_int_t)s->rate, "per", flow_unit(s->period), "burst",
		    (json_int_t)s->burst, "tokens", s->tokens) : json_null();
		key = s->key != NULL ? json_pack("{s:s,s:I,s:I,s:I}",
		    "concurrency_key", s->key, "key_concurrency",
		    (json_int_t)s->key_concurrency, "keys_full",
		    (json_int_t)s->keys_full, "waiting",
		    (json_int_t)s->key_waiting) : json_null();
		json_array_append_new(rows, json_pack(
		    "{s:s,s:b,s:I,s:o,s:o,s:o,s:b,s:b}",
		    "type", s->type, "paused", s->paused,
		    "in_use", (json_int_t)s->in_use,
		    "concurrency", s->concurrency ?
		    json_integer((json_int_t)s->concurrency) : json_null(),
		    "rate", rate, "key", key, "full", s->full,
		    "throttled", s->throttled));
	}
	return rows;
}

int
cmd_status(struct ctx *c)
{
	struct queue_backlog b;
	struct flow_states fs = { NULL, 0 };
	const char **known = cmd_type_names(c);
	struct sched_view *v = xcalloc(c->cfg.nschedules + 1, sizeof *v);
	size_t nsched = c->cli.type == NULL ? c->cfg.nschedules : 0;
	struct fanin_view *fv = NULL;
	size_t nfv = 0;
	struct latency_view lv = { 0 };
	struct retention_view rv = { NULL, 0, NULL, 0, 0 };
	struct priority_view levels;
	struct fanin fi;
	struct flow *f = NULL;
	char err[1024];
	enum db_status st;

	st = queue_backlog(c->q, known, c->cfg.ntypes, c->cli.type, 1, &b,
	    err, sizeof err);
	if (st == DB_OK && nsched > 0)
		st = sched_view(&c->cfg, c->q, v, err, sizeof err);
	fanin_open(&fi, c->q, &c->lg);
	if (st == DB_OK && c->cli.type == NULL)
		st = fanin_list(&fi, &fv, &nfv, err, sizeof err);
	/* flow control hook: shown when the control table exists */
	if (st == DB_OK &&
	    ((st = flow_open(c->q, &c->cfg, NULL, &f, err, sizeof err)) ==
	    DB_SCHEMA || st == DB_DENIED)) {
		/* A limit without its table: the backlog is still worth
		 * showing. */
		log_msg(&c->lg, LV_WARN, "%s", err);
		st = DB_OK;
	}
	if (st == DB_OK && f != NULL)
		st = flow_read(f, c->cli.type, &fs, err, sizeof err);
	if (st == DB_OK)
		st = latency_read(c->q, c->cli.type, &lv, err, sizeof err);
	if (st == DB_OK)
		st = retention_view_read(&c->cfg, c->q, 1, &rv, err,
		    sizeof err);
	if (st == DB_OK)
		st = priority_view_read(c->q, c->cli.type, &levels, err,
		    sizeof err);
	if (st != DB_OK)
		cmd_db_error(c, st, err);
	else if (c->cli.json)
		print_status_json(c, &b, nsched > 0 ? schedules_json(v, nsched) :
		    NULL, fi.active ? fanins_json(fv, nfv) : NULL,
		    f != NULL ? flow_json(&fs) : NULL, latency_json(&lv),
		    retention_view_json(&rv), priority_view_json(&levels));
	else {
		print_status_text(c, &b);
		priority_view_print(&levels);
		print_latency_text(&lv);
		if (nsched > 0)
			print_schedules_text(v, nsched);
		print_fanins_text(fv, nfv);
		if (f != NULL)
			print_flow_text(c, f, &fs);
		retention_view_print(&rv);
	}
	retention_view_free(&rv);
	fanin_list_free(fv, nfv);
	fanin_close(&fi);
	latency_view_free(&lv);
	flow_states_free(&fs);
	flow_close(f);
	queue_backlog_free(&b);
	free(known);
	free(v);
	return cmd_exit_for(st);
}

/* --- list ------------------------------------------------------------ */

int
cmd_list_check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->status != NULL && !cli_one_of(cli->status, queue_statuses))
		return errf(err, errlen, "--status: " QUEUE_PENDING ", "
		    QUEUE_PROCESSING ", " QUEUE_SUCCESS " or " QUEUE_FAILED
		    ", not \"%s\"", cli->status);
	if (cli->nargs > 0)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[0]);
	return 0;
}

struct listing {
	int json;
	json_t *jobs;
	unsigned long count;
	uint64_t last_id;
};

#define LIST_ERROR_CHARS 60

/* When a pending job is due, by the server's clock: "in 8 h", "3 min
 * ago", "now" (an application that wrote next_run_at in another time zone
 * shows at once).  Empty for other statuses. */
static void
due_words(const char *due_in, struct queue_text status, char *buf,
    size_t size)
{
	/* from twice a unit on, in that unit, rounded down */
	static const struct {
		long long from, secs;
		const char *unit;
	} units[] = {
		{ 2 * 86400, 86400, "d" }, { 2 * 3600, 3600, "h" },
		{ 120, 60, "min" }, { 0, 1, "s" },
	};
	long long s, a;
	size_t i;

	buf[0] = '\0';
	if (due_in == NULL || status.s == NULL || status.len != 7 ||
	    memcmp(status.s, "pending", 7) != 0)
		return;
	s = strtoll(due_in, NULL, 10);
	a = s < 0 ? -s : s;
	if (a == 0) {
		snprintf(buf, size, "now");
		return;
	}
	for (i = 0; a < units[i].from; i++)
		;
	snprintf(buf, size, s > 0 ? "in %lld %s" : "%lld %s ago",
	    a / units[i].secs, units[i].unit);
}

/* Where the last non-blank line of s[0..len) starts; *n its length. */
static size_t
last_line(const char *s, size_t len, size_t *n)
{
	size_t end = len, start;

	while (end > 0 && memchr("\n\r\t ", s[end - 1], 4) != NULL)
		end--;
	start = end;
	while (start > 0 && s[start - 1] != '\n' && s[start - 1] != '\r')
		start--;
	*n = end - start;
	return start;
}

/* The length of last_error's opening words, jobrun's own ("exit status
 * 3", "no attempts left: HTTP 500 Internal Server Error"): up to the
 * first ": " of line, and past a "no attempts left: " to the next. */
static size_t
opening_words(const char *line, size_t n)
{
	static const char last[] = "no attempts left: ";
	const char *colon;
	size_t from = 0;

	if (n > sizeof last - 1 && memcmp(line, last, sizeof last - 1) == 0)
		from = sizeof last - 1;
	colon = memmem(line + from, n - from, ": ", 2);
	return colon != NULL ? (size_t)(colon - line) : n;
}

/* last_error for a table cell, LIST_ERROR_CHARS characters at most,
 * escaped (malloc'ed).  A handler's output starts with whatever it says
 * first (a banner, a warning) and ends with why it gave up, so a
 * last_error of several lines reads as its opening words, then its last
 * line: "exit status 3: ... DB down". */
static char *
error_summary(struct queue_text t)
{
	size_t first, head, tail_at, tail_n, len;
	char *cell, *joined;

	if (t.s == NULL)
		return xstrdup("");
	for (first = 0; first < t.len; first++)
		if (t.s[first] == '\n' || t.s[first] == '\r')
			break;
	tail_at = last_line(t.s, t.len, &tail_n);
	if (tail_at + tail_n <= first)
		return escaped(t.s, utf8_prefix(t.s, first, LIST_ERROR_CHARS),
		    0);
	head = opening_words(t.s, first);
	len = head + 6 + tail_n;
	joined = xmalloc(len + 1);
	memcpy(joined, t.s, head);
	memcpy(joined + head, ": ... ", 6);
	memcpy(joined + head + 6, t.s + tail_at, tail_n);
	joined[len] = '\0';
	cell = escaped(joined, utf8_prefix(joined, len, LIST_ERROR_CHARS), 0);
	free(joined);
	return cell;
}

static void
on_listed(void *arg, const struct queue_listed *job)
{
	struct listing *l = arg;
	char *type, *status, *key, *error, due[32];

	if (l->count++ == 0 && !l->json)
		printf("%-10s %-16s %-10s %-7s %-30s  %s\n", "ID", "TYPE",
		    "STATUS", "TRIES", "NEXT RUN", "KEY  LAST ERROR");
	l->last_id = job->id;
	if (l->json) {
		json_array_append_new(l->jobs, json_pack(
		    "{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
		    "id", (json_int_t)job->id, "type", text_json(job->type),
		    "business_key", text_json(job->business_key),
		    "status", text_json(job->status),
		    "attempts", number_json(job->attempts),
		    "max_attempts", number_json(job->max_attempts),
		    "next_run_at", string_json(job->next_run_at),
		    "updated_at", string_json(job->updated_at),
		    "last_error", text_json(job->last_error)));
		return;
	}
	type = escaped(job->type.s, job->type.len, 0);
	status = escaped(job->status.s, job->status.len, 0);
	key = escaped(job->business_key.s, job->business_key.len, 0);
	error = error_summary(job->last_error);
	due_words(job->due_in, job->status, due, sizeof due);
	printf("%-10llu %-16s %-10s %3s/%-3s %-19s %-10s  %s%s%s\n",
	    (unsigned long long)job->id, type, status,
	    job->attempts != NULL ? job->attempts : "-",
	    job->max_attempts != NULL ? job->max_attempts : "-",
	    job->next_run_at != NULL ? job->next_run_at : "NULL", due, key,
	    error[0] ? "  " : "", error);
	free(type);
	free(status);
	free(key);
	free(error);
}

int
cmd_list(struct ctx *c)
{
	struct queue_list_filter f = { c->cli.status, c->cli.type,
	    c->cli.before_id, c->cli.limit };
	struct listing l = { c->cli.json, json_array(), 0, 0 };
	char err[1024];
	enum db_status st;

	st = queue_list(c->q, &f, on_listed, &l, err, sizeof err);
	if (st != DB_OK) {
		json_decref(l.jobs);
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	/* A full page may have more behind it: say where to go on. */
	if (l.json)
		report_json(json_pack("{s:o,s:o}", "jobs", l.jobs,
		    "next_before_id", l.count == c->cli.limit ?
		    json_integer((json_int_t)l.last_id) : json_null()));
	else {
		json_decref(l.jobs);
		if (l.count == 0)
			printf("no jobs\n");
		if (l.count == c->cli.limit)
			printf("(more: --before-id=%llu)\n",
			    (unsigned long long)l.last_id);
	}
	return EX_OK;
}

/* --- show ------------------------------------------------------------ */

static int
numeric_column(int i)
{
	return i == QC_ID || i == QC_ATTEMPTS || i == QC_MAX_ATTEMPTS;
}

/* v's lines, each but the first indented under the first. */
static void
print_block(const char *v)
{
	const char *line;
	size_t n;

	for (line = v;; line += n + 1) {
		n = strcspn(line, "\n");
		printf("%s%.*s\n", line == v ? "" : "              ", (int)n,
		    line);
		if (line[n] == '\0' || line[n + 1] == '\0')
			break;
	}
}

/* Every value as stored, escaped for the terminal.  The payload keeps
 * its own line breaks; last_error's (a handler's output) become lines
 * indented under the first; a pending job's next_run_at says when. */
static void
print_shown_text(const struct queue_shown *job)
{
	char *v, due[32];
	int i;

	for (i = 0; i < QC_COUNT; i++) {
		v = escaped(job->col[i].s, job->col[i].len,
		    i == QC_PAYLOAD || i == QC_LAST_ERROR ? UTF8_ESC_KEEP_NL :
		    0);
		printf("%-13s ", queue_column_names[i]);
		if (i == QC_LAST_ERROR)
			print_block(v);
		else if (i == QC_NEXT_RUN_AT) {
			due_words(job->due_in, job->col[QC_STATUS], due,
			    sizeof due);
			printf("%s%s%s%s\n", v, due[0] ? " (" : "", due,
			    due[0] ? ")" : "");
		} else
			printf("%s\n", v);
		free(v);
	}
	if (job->has_deadline)
		printf("%-13s %s\n", "deadline", job->deadline != NULL ?
		    job->deadline : "NULL");
}

/* What show found: the job's id, and for --json its object and its
 * payload, kept until the attempts are added (the walk's values last
 * only the call). */
struct shown {
	int json;
	uint64_t id;
	json_t *obj;
	char *payload;		/* spliced in whole, or NULL */
	size_t payload_len;
};

/* The payload is never re-encoded: spliced in whole when the server takes
 * it as JSON, a string otherwise. */
static void
keep_json(struct shown *sh, const struct queue_shown *job)
{
	const struct queue_text *p = &job->col[QC_PAYLOAD];
	int raw = p->s != NULL && job->payload_valid;
	int i;

	sh->obj = json_object();
	for (i = 0; i < QC_COUNT; i++) {
		if (i == QC_PAYLOAD && raw)
			continue;	/* spliced in when printed */
		json_object_set_new(sh->obj, queue_column_names[i],
		    numeric_column(i) ? number_json(job->col[i].s) :
		    text_json(job->col[i]));
	}
	if (job->has_deadline)
		json_object_set_new(sh->obj, "deadline", job->deadline !=
		    NULL ? json_string(job->deadline) : json_null());
	if (raw) {
		sh->payload = xmalloc(p->len + 1);
		memcpy(sh->payload, p->s, p->len);
		sh->payload_len = p->len;
	}
}

static void
print_kept_json(const struct shown *sh)
{
	struct raw_member payload = { "payload", sh->payload,
	    sh->payload_len };
	char *text;
	size_t len;

	text = rawjson_object(sh->obj, &payload, sh->payload != NULL ? 1 : 0,
	    &len);
	fwrite(text, 1, len, stdout);
	putchar('\n');
	free(text);
}

static void
on_shown(void *arg, const struct queue_shown *job)
{
	struct shown *sh = arg;

	sh->id = queue_number(job->col[QC_ID].s);
	if (sh->json)
		keep_json(sh, job);
	else
		print_shown_text(job);
}

/* One attempt's row (attempts_each): a line of what it was, and its
 * output's lines under it. */
static void
print_attempt_text(void *arg, char **cols, const size_t *lens)
{
	char *output;

	(void)arg;
	printf("%-13s %s, %s", cols[AC_ATTEMPT], cols[AC_OUTCOME],
	    cols[AC_FINISHED]);
	if (cols[AC_MS] != NULL)
		printf(", %s ms", cols[AC_MS]);
	if (cols[AC_EXIT] != NULL)
		printf(", exit %s", cols[AC_EXIT]);
	if (cols[AC_SIGNAL] != NULL)
		printf(", signal %s", cols[AC_SIGNAL]);
	if (cols[AC_HTTP] != NULL)
		printf(", HTTP %s", cols[AC_HTTP]);
	printf(", %s\n", cols[AC_RUNNER] != NULL ? cols[AC_RUNNER] : "?");
	if (cols[AC_OUTPUT] == NULL)
		return;
	output = escaped(cols[AC_OUTPUT], lens[AC_OUTPUT], UTF8_ESC_KEEP_NL);
	printf("%-13s ", "");
	print_block(output);
	free(output);
}

static void
add_attempt_json(void *arg, char **cols, const size_t *lens)
{
	json_array_append_new(arg, report_attempt(cols, lens));
}

/* The job's attempts, when the table has a history: lines under the
 * job, or a "history" member of its JSON object. */
static enum db_status
show_attempts(struct ctx *c, struct shown *sh, char *err, size_t errlen)
{
	struct attempts *a = attempts_open(c->q);
	json_t *list = json_array();
	enum db_status st;
	int on = 0;

	st = attempts_probe(a, 0, &on, err, errlen);
	if (st == DB_OK && on && !sh->json)
		printf("history\n");
	if (st == DB_OK && on)
		st = attempts_each(a, &sh->id, 1, sh->json ? add_attempt_json :
		    print_attempt_text, list, err, errlen);
	if (st == DB_OK && on && sh->json)
		json_object_set(sh->obj, "history", list);
	json_decref(list);
	attempts_close(a);
	return st;
}

int
cmd_show_check(const struct cli *cli, char *err, size_t errlen)
{
	if ((cli->nargs == 1) == (cli->key != NULL) || cli->nargs > 1)
		return errf(err, errlen, "show needs one job id or --key");
	if (cli->key != NULL)
		return cli_check_text("key", cli->key, QUEUE_KEY_MAX, err,
		    errlen);
	return cli_check_ids(cli, err, errlen);
}

int
cmd_show(struct ctx *c)
{
	struct shown sh = { .json = c->cli.json };
	unsigned long id = 0;
	char err[1024];
	enum db_status st;
	int found = 0;

	if (c->cli.key == NULL)
		parse_ulong(c->cli.args[0], 1, ULONG_MAX, &id);
	st = queue_show(c->q, id, c->cli.key, on_shown, &sh, &found,
	    err, sizeof err);
	if (st == DB_OK && found)
		st = show_attempts(c, &sh, err, sizeof err);
	if (sh.obj != NULL && st == DB_OK)
		print_kept_json(&sh);
	json_decref(sh.obj);
	free(sh.payload);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (!found) {
		log_msg(&c->lg, LV_ERROR, "show: no job %s%s", c->cli.key ?
		    "with key " : "", c->cli.key ? c->cli.key :
		    c->cli.args[0]);
		return EXIT_ATTENTION;
	}
	return EX_OK;
}

static json_t *
slot_json(const char *slot)
{
	return slot[0] != '\0' ? json_string(slot) : json_null();
}

/* `jobrun schedules`: every schedule's slots and lag. */
static void
print_views(const struct sched_view *v, size_t n, int json)
{
	json_t *list;
	size_t i;

	if (json) {
		list = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(list, json_pack(
			    "{s:s,s:s,s:s,s:o,s:I,s:o,s:o,s:o,s:I}",
			    "name", v[i].s->name, "type", v[i].s->type,
			    "cron", v[i].s->cron_text, "time_zone",
			    v[i].s->time_zone != NULL ?
			    json_string(v[i].s->time_zone) : json_null(),
			    "catch_up", (json_int_t)v[i].s->catch_up,
			    "last_slot", slot_json(v[i].last),
			    "due_slot", slot_json(v[i].due),
			    "next_slot", slot_json(v[i].next),
			    "lag", (json_int_t)v[i].lag));
		report_json(json_pack("{s:o}", "schedules", list));
		return;
	}
	printf("%-20s %-20s %-16s %-16s %-16s %s\n", "SCHEDULE", "TYPE",
	    "LAST SLOT", "DUE SLOT", "NEXT SLOT", "LAG");
	for (i = 0; i < n; i++)
		printf("%-20s %-20s %-16s %-16s %-16s %ld\n", v[i].s->name,
		    v[i].s->type, v[i].last[0] ? v[i].last : "-",
		    v[i].due[0] ? v[i].due : "-",
		    v[i].next[0] ? v[i].next : "-", v[i].lag);
}

int
cmd_schedules(struct ctx *c)
{
	struct sched_view *v = xcalloc(c->cfg.nschedules + 1, sizeof *v);
	char err[1024];
	enum db_status st;
	int rc = EX_OK;

	st = sched_view(&c->cfg, c->q, v, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		rc = cmd_exit_for(st);
	} else
		print_views(v, c->cfg.nschedules, c->cli.json);
	free(v);
	return rc;
}
