/*
 * dash_html.c - "jobrun report --html": the queue's state as one HTML
 * page that needs nothing else.
 *
 * The page goes where a web server serves it, behind the team's login, so
 * it is one file with its style inline, no script, no font or image to
 * fetch, and charts drawn as inline SVG: it renders the same with
 * JavaScript off, from a file, or behind any proxy.  Every value from the
 * table (types, keys, errors: any bytes an application or a handler
 * wrote) goes through dash_html_text, which first makes the bytes
 * readable as text the way status and list do for a terminal (utf8.c:
 * invalid UTF-8, NUL and control characters as visible escapes) and then
 * writes &, <, >, " and ' as entities, so no value can open an element or
 * an attribute.  Numbers and the times the server formats are the only
 * other things written.
 *
 * The page is a list of sections (sections[] below), each a function of
 * the gathered struct dash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dash.h"
#include "utf8.h"
#include "util.h"

/* The longest a value gets on the page, in bytes of its escaped text. */
#define TEXT_MAX 200
#define ERROR_MAX 2000

void
dash_html_text(FILE *f, const char *s, size_t len, size_t max,
    int keep_newlines)
{
	char *buf = xmalloc(max + 1);
	size_t n, i;

	n = utf8_escape(buf, max + 1, s, len, keep_newlines ?
	    UTF8_ESC_KEEP_NL : 0);
	for (i = 0; buf[i] != '\0'; i++) {
		switch (buf[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(buf[i], f);
		}
	}
	/* utf8_escape cut it at a whole character or escape. */
	if (n > max)
		fputs("\xe2\x80\xa6", f);
	free(buf);
}

/* A NUL-terminated value, or text (a fixed word) for NULL. */
static void
text_or(FILE *f, const char *s, size_t len, const char *text)
{
	if (s == NULL)
		fprintf(f, "<span class=\"none\">%s</span>", text);
	else
		dash_html_text(f, s, len, TEXT_MAX, 0);
}

static const char style[] =
"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;"
"background:#fff}\n"
"h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.6em 0 .5em}\n"
"p.when{color:#555;margin:0}\n"
"table{border-collapse:collapse}\n"
"th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left;"
"vertical-align:top}\n"
"th{background:#f3f3f3}td.n,th.n{text-align:right;"
"font-variant-numeric:tabular-nums}\n"
"tfoot td{font-weight:bold;border-top:2px solid #999}\n"
"td.bad{color:#b00;font-weight:bold}.none{color:#999}\n"
"pre{margin:0;white-space:pre-wrap;word-break:break-all;max-width:60em;"
"font-size:12px}\n"
"svg{max-width:100%;height:auto}svg text{font-size:11px;fill:#555}\n"
"rect.done{fill:#3b7dd8}rect.failed{fill:#d64545}\n"
"line.axis{stroke:#999}p.note{color:#555}\n";

/* --- the backlog -------------------------------------------------------- */

/* Seconds as people read a wait: 45s, 12m 05s, 3h 20m, 2d 4h. */
static void
put_lag(FILE *f, long s)
{
	if (s < 0)
		fputs("<span class=\"none\">-</span>", f);
	else if (s < 60)
		fprintf(f, "%lds", s);
	else if (s < 3600)
		fprintf(f, "%ldm %02lds", s / 60, s % 60);
	else if (s < 86400)
		fprintf(f, "%ldh %02ldm", s / 3600, s % 3600 / 60);
	else
		fprintf(f, "%ldd %ldh", s / 86400, s % 86400 / 3600);
}

/* A count; bad: shown as a problem when not 0. */
static void
count_cell(FILE *f, unsigned long n, int bad)
{
	fprintf(f, "<td class=\"n%s\">%lu</td>", bad && n > 0 ? " bad" : "",
	    n);
}

static void
counts_cells(FILE *f, const struct dash_type *t, int hours)
{
	count_cell(f, t->pending, 0);
	count_cell(f, t->due, 0);
	fputs("<td class=\"n\">", f);
	put_lag(f, t->lag);
	fputs("</td>", f);
	count_cell(f, t->processing, 0);
	count_cell(f, t->expired, 1);
	count_cell(f, t->failed, 1);
	if (hours) {
		count_cell(f, t->done_day, 0);
		if (t->deadline_day == 0)
			count_cell(f, t->failed_day, 1);
		else	/* of them, those past their deadline */
			fprintf(f, "<td class=\"n bad\">%lu<br><small>%lu past "
			    "deadline</small></td>", t->failed_day,
			    t->deadline_day);
	} else
		fputs("<td class=\"n none\">-</td><td class=\"n none\">-</td>",
		    f);
}

static void
section_backlog(FILE *f, const struct dash *d)
{
	size_t i;

	fputs("<h2 id=\"backlog\">Backlog</h2>\n<table class=\"backlog\">\n"
	    "<thead><tr><th>Type</th><th>Handler</th><th class=\"n\">Pending"
	    "</th><th class=\"n\">Due</th><th class=\"n\">Lag</th>"
	    "<th class=\"n\">Processing</th><th class=\"n\">Expired locks</th>"
	    "<th class=\"n\">Failed</th><th class=\"n\">Finished 24&#160;h"
	    "</th><th class=\"n\">Failed 24&#160;h</th></tr></thead>\n<tbody>\n",
	    f);
	for (i = 0; i < d->ntypes; i++) {
		const struct dash_type *t = &d->types[i];

		fputs("<tr><td>", f);
		dash_html_text(f, t->type, t->type_len, TEXT_MAX, 0);
		fputs("</td><td>", f);
		text_or(f, t->handler, t->handler != NULL ?
		    strlen(t->handler) : 0, "none");
		fputs("</td>", f);
		counts_cells(f, t, d->has_hours);
		fputs("</tr>\n", f);
	}
	fprintf(f, "</tbody>\n<tfoot><tr><td>Total (%zu type%s)</td><td></td>",
	    d->ntypes, d->ntypes == 1 ? "" : "s");
	counts_cells(f, &d->total, d->has_hours);
	fputs("</tr></tfoot>\n</table>\n", f);
}

/* --- the charts ---------------------------------------------------------- */

#define CHART_W 760
#define CHART_H 190
#define PLOT_X 44	/* left of the first bar */
#define PLOT_BOTTOM 160	/* the x axis */
#define PLOT_H 140	/* the tallest bar */
#define BAR_STEP 29
#define BAR_W 23

/* A bar's height: proportional to the largest, at least a pixel when it
 * is not 0. */
static unsigned long
bar_height(unsigned long v, unsigned long max)
{
	unsigned long h;

	if (v == 0 || max == 0)
		return 0;
	h = (v * PLOT_H + max / 2) / max;
	return h > 0 ? h : 1;
}

static void
chart(FILE *f, const struct dash *d, const unsigned long *v,
    const char *cls, const char *what)
{
	unsigned long max = 0, h, total = 0;
	int first = atoi(d->hours_from + 11), hour;
	size_t i;

	for (i = 0; i < DASH_HOURS; i++) {
		total += v[i];
		if (v[i] > max)
			max = v[i];
	}
	fprintf(f, "<svg class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\""
	    " width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\""
	    " aria-label=\"%s per hour, %lu in 24 hours\">\n", cls, CHART_W,
	    CHART_H, CHART_W, CHART_H, what, total);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
	    "y2=\"%d\"/>\n", PLOT_X - 4, PLOT_BOTTOM, PLOT_X + DASH_HOURS *
	    BAR_STEP, PLOT_BOTTOM);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%lu</text>\n",
	    PLOT_X - 8, PLOT_BOTTOM - PLOT_H + 4, max);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n",
	    PLOT_X - 8, PLOT_BOTTOM + 4);
	for (i = 0; i < DASH_HOURS; i++) {
		hour = (first + (int)i) % 24;
		h = bar_height(v[i], max);
		fprintf(f, "<rect class=\"%s\" x=\"%zu\" y=\"%lu\" width=\"%d\" "
		    "height=\"%lu\"><title>%02d:00 %lu %s</title></rect>\n",
		    cls, PLOT_X + i * BAR_STEP, PLOT_BOTTOM - h, BAR_W, h, hour,
		    v[i], what);
		if (i % 3 == 0 || i == DASH_HOURS - 1)
			fprintf(f, "<text x=\"%zu\" y=\"%d\" text-anchor=\""
			    "middle\">%02d:00</text>\n", PLOT_X + i * BAR_STEP +
			    BAR_W / 2, PLOT_BOTTOM + 16, hour);
	}
	fputs("</svg>\n", f);
}

static void
section_hours(FILE *f, const struct dash *d)
{
	if (!d->has_hours) {
		fputs("<h2 id=\"hours\">Finished and failed per hour</h2>\n"
		    "<p class=\"note\">Not counted: the table has no index "
		    "idx_finished (sql/005_finished.sql), without which they "
		    "would be counted by reading every finished job.</p>\n", f);
		return;
	}
	fprintf(f, "<h2 id=\"finished\">Jobs finished per hour</h2>\n"
	    "<p class=\"note\">The last 24 hours by the database clock, from "
	    "%s.</p>\n", d->hours_from);
	chart(f, d, d->done, "done", "finished");
	fputs("<h2 id=\"failures\">Jobs failed per hour</h2>\n"
	    "<p class=\"note\">Jobs that failed for good (no attempts left, "
	    "or a permanent failure); jobs an operator cancelled are not "
	    "counted here.</p>\n", f);
	chart(f, d, d->failures, "failed", "failed");
}

/* --- the latest failures ------------------------------------------------ */

static void
section_failures(FILE *f, const struct dash *d)
{
	size_t i;

	fputs("<h2 id=\"latest\">Latest failures</h2>\n", f);
	if (d->nlast == 0) {
		fputs("<p class=\"note\">No failed jobs.</p>\n", f);
		return;
	}
	fputs("<table class=\"failures\">\n<thead><tr><th class=\"n\">Id</th>"
	    "<th>Type</th><th>Business key</th><th class=\"n\">Attempts</th>"
	    "<th>Failed at</th><th>Last error</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < d->nlast; i++) {
		const struct dash_failure *x = &d->last[i];

		if (x->nhistory > 0)
			fprintf(f, "<tr><td class=\"n\"><a href=\"#job-%llu\">"
			    "%llu</a></td><td>", (unsigned long long)x->id,
			    (unsigned long long)x->id);
		else
			fprintf(f, "<tr><td class=\"n\">%llu</td><td>",
			    (unsigned long long)x->id);
		text_or(f, x->type, x->type_len, "NULL");
		fputs("</td><td>", f);
		text_or(f, x->business_key, x->business_key_len, "NULL");
		fprintf(f, "</td><td class=\"n\">%lu/%lu</td><td>",
		    x->attempts, x->max_attempts);
		text_or(f, x->finished_at, x->finished_at != NULL ?
		    strlen(x->finished_at) : 0, "-");
		fputs("</td><td><pre>", f);
		if (x->last_error != NULL)
			dash_html_text(f, x->last_error, x->last_error_len,
			    ERROR_MAX, 1);
		fputs("</pre></td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

/* --- their attempts (sql/010_attempts.sql) ---------------------------- */

static void
attempt_row(FILE *f, char *const *a, const size_t *lens)
{
	static const int shown[] = { AC_ATTEMPT, AC_OUTCOME, AC_FINISHED,
	    AC_MS, AC_EXIT, AC_SIGNAL, AC_HTTP, AC_RUNNER };
	size_t i;

	fputs("<tr>", f);
	for (i = 0; i < sizeof shown / sizeof shown[0]; i++) {
		fputs("<td>", f);
		text_or(f, a[shown[i]], lens[shown[i]], "-");
		fputs("</td>", f);
	}
	fputs("<td><pre>", f);
	if (a[AC_OUTPUT] != NULL)
		dash_html_text(f, a[AC_OUTPUT], lens[AC_OUTPUT], ERROR_MAX,
		    1);
	fputs("</pre></td></tr>\n", f);
}

/* Each latest failure's attempts, where the table keeps them: what the
 * last_error alone does not say (what the earlier attempts said, how
 * long each took, where it ran). */
static void
section_history(FILE *f, const struct dash *d)
{
	size_t i, j;

	if (!d->has_history || d->nlast == 0)
		return;
	fputs("<h2 id=\"history\">Attempts of the latest failures</h2>\n", f);
	for (i = 0; i < d->nlast; i++) {
		const struct dash_failure *x = &d->last[i];

		if (x->nhistory == 0)
			continue;
		fprintf(f, "<h3 id=\"job-%llu\">Job %llu</h3>\n"
		    "<table class=\"failures\">\n<thead><tr><th>Attempt</th>"
		    "<th>Outcome</th><th>Finished at</th><th>ms</th>"
		    "<th>Exit</th><th>Signal</th><th>HTTP</th><th>Runner</th>"
		    "<th>Output</th></tr></thead>\n<tbody>\n",
		    (unsigned long long)x->id, (unsigned long long)x->id);
		for (j = 0; j < x->nhistory; j++)
			attempt_row(f, x->history[j].cols, x->history[j].lens);
		fputs("</tbody>\n</table>\n", f);
	}
}

/* --- start latency ------------------------------------------------------ */

static void
section_latency(FILE *f, const struct dash *d)
{
	char line[128];
	size_t i;

	if (!d->latency.present)
		return;	/* no sql/008_start_latency.sql */
	fprintf(f, "<h2 id=\"latency\">Start latency</h2>\n<p class=\"note\">"
	    "How long after it was due each job was claimed, the last %d "
	    "minutes.</p>\n<table>\n<thead><tr><th>Type</th><th>p50, p99"
	    "</th></tr></thead>\n<tbody>\n", LATENCY_MINUTES);
	for (i = 0; i < d->latency.n; i++) {
		const struct latency_row *r = &d->latency.rows[i];

		latency_line(line, sizeof line, r);
		fputs("<tr><td>", f);
		dash_html_text(f, r->type, strlen(r->type), TEXT_MAX, 0);
		fprintf(f, "</td><td>%s</td></tr>\n", line);
	}
	latency_line(line, sizeof line, &d->latency.all);
	fprintf(f, "<tr><th>all</th><th>%s</th></tr>\n</tbody>\n</table>\n",
	    line);
}

/* --- retention ---------------------------------------------------------- */

static void
section_retention(FILE *f, const struct dash *d)
{
	const struct retention_view *v = &d->retention;
	char keep[32], past[32];
	size_t i;

	if (v->n == 0)
		return;	/* no keep_success, keep_failed */
	fprintf(f, "<h2 id=\"retention\">Retention</h2>\n<p class=\"note\">"
	    "Finished jobs past their keep are %s%s, %d a run per rule; past "
	    "%d, the count stops.</p>\n<table>\n<thead><tr><th>Rule</th>"
	    "<th>Status</th><th class=\"n\">Keep</th><th class=\"n\">Past"
	    "</th></tr></thead>\n<tbody>\n", v->archive != NULL ?
	    "moved to archive_table " : "deleted", v->archive != NULL ?
	    v->archive : "", RETENTION_BATCH, RETENTION_VIEW_CAP);
	for (i = 0; i < v->n; i++) {
		const struct retention_rule *r = &v->rules[i];

		fputs("<tr><td>", f);
		dash_html_text(f, r->rule, strlen(r->rule), TEXT_MAX, 0);
		fprintf(f, "</td><td>%s</td><td class=\"n\">%s</td>"
		    "<td class=\"n\">%s</td></tr>\n", r->status,
		    retention_keep_words(r->keep, keep, sizeof keep),
		    retention_past_words(r, past, sizeof past));
	}
	fputs("</tbody>\n</table>\n", f);
}

/* --- priorities --------------------------------------------------------- */

static void
section_priorities(FILE *f, const struct dash *d)
{
	const struct priority_view *v = &d->priorities;
	char lag[32];
	size_t i;

	if (!priority_view_shown(v))
		return;	/* no sql/013, or every pending job at 0 */
	fputs("<h2 id=\"priorities\">Pending jobs by priority</h2>\n"
	    "<p class=\"note\">The highest due level is claimed first; one "
	    "claim in ten takes the oldest job whatever its level.</p>\n"
	    "<table>\n<thead><tr><th class=\"n\">Priority</th><th class=\"n\">"
	    "Pending</th><th class=\"n\">Due</th><th class=\"n\">Lag</th>"
	    "</tr></thead>\n<tbody>\n", f);
	for (i = 0; i < v->n; i++) {
		const struct queue_level_count *l = &v->rows[i];

		fprintf(f, "<tr><td class=\"n\">%ld</td><td class=\"n\">%llu"
		    "</td><td class=\"n\">%llu</td><td class=\"n\">%s</td>"
		    "</tr>\n", l->level, (unsigned long long)l->pending,
		    (unsigned long long)l->due,
		    priority_lag_words(l, lag, sizeof lag));
	}
	fputs("</tbody>\n</table>\n", f);
}

/* --- operators' changes ------------------------------------------------- */

/* A member of a row of d->changes as text ("" when not a string). */
static void
change_cell(FILE *f, json_t *row, const char *name, const char *tag)
{
	const char *s = json_string_value(json_object_get(row, name));

	fprintf(f, "<%s>", tag);
	if (s != NULL)
		dash_html_text(f, s, strlen(s), TEXT_MAX, 0);
	fprintf(f, "</%s>", tag);
}

static void
section_changes(FILE *f, const struct dash *d)
{
	size_t i;
	json_t *row;

	if (d->changes == NULL)
		return;	/* no sql/011_audit.sql */
	fputs("<h2 id=\"changes\">Operators&#39; changes</h2>\n", f);
	if (json_array_size(d->changes) == 0) {
		fputs("<p class=\"note\">None recorded.</p>\n", f);
		return;
	}
	fputs("<table class=\"changes\">\n<thead><tr><th>At</th><th>Who</th>"
	    "<th class=\"n\">Rows</th><th>Command</th></tr></thead>\n"
	    "<tbody>\n", f);
	json_array_foreach(d->changes, i, row) {
		fputs("<tr>", f);
		change_cell(f, row, "at", "td");
		change_cell(f, row, "os_user", "td");
		fprintf(f, "<td class=\"n\">%lld</td>", (long long)
		    json_integer_value(json_object_get(row, "changed")));
		change_cell(f, row, "command", "td");
		fputs("</tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

/* The page's sections in order.  Flow control (caps, rates, pauses) and
 * schedules and fan-ins, when their issues land, are a row each here. */
static void (*const sections[])(FILE *, const struct dash *) = {
	section_backlog,
	section_priorities,
	section_latency,
	section_hours,
	section_failures,
	section_history,
	section_retention,
	section_changes,
};

void
dash_html(FILE *f, const struct dash *d)
{
	size_t i;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\""
	    "width=device-width, initial-scale=1\">\n"
	    "<title>jobrun report</title>\n<style>\n%s</style>\n</head>\n"
	    "<body>\n<h1>jobrun report</h1>\n<p class=\"when\">Written %s "
	    "(this host&#39;s clock); database clock %s.</p>\n", style,
	    d->written_at, d->db_now);
	for (i = 0; i < sizeof sections / sizeof sections[0]; i++)
		sections[i](f, d);
	fputs("</body>\n</html>\n", f);
}
