/*
 * metrics.c - Prometheus text exposition of a run.
 *
 * A run lives for seconds, so nothing scrapes it; node_exporter's textfile
 * collector reads a file instead.  The file is written whole to a
 * temporary name and renamed over the old one, so the collector never
 * reads half of it.  Counts are of this run (gauges: the next run replaces
 * them); jobrun_last_success_timestamp_seconds is carried over from the
 * previous file when this run did not end well, so "no good run for N
 * minutes" can be alerted on.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "replace.h"
#include "utf8.h"
#include "util.h"

#define LAST_SUCCESS "jobrun_last_success_timestamp_seconds"

/* A label value of len bytes: made text first (utf8_escape: a NUL, a
 * control, a byte not of UTF-8 as an escape such as \x00, which keeps
 * two types that differ only there apart, where a cut at the NUL made
 * them one series twice, which a scraper refuses, and keeps the file
 * UTF-8), then with \, " and line breaks escaped, as the format wants. */
static void
put_label_n(FILE *f, const char *v, size_t len)
{
	size_t n = utf8_escape(NULL, 0, v, len, UTF8_ESC_KEEP_NL);
	char *text = xmalloc(n + 1);
	const char *t;

	utf8_escape(text, n + 1, v, len, UTF8_ESC_KEEP_NL);
	for (t = text; *t != '\0'; t++) {
		if (*t == '\\' || *t == '"')
			fprintf(f, "\\%c", *t);
		else if (*t == '\n')
			fputs("\\n", f);
		else
			fputc(*t, f);
	}
	free(text);
}

static void
put_label(FILE *f, const char *v)
{
	put_label_n(f, v, strlen(v));
}

static void
header(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void
by_type_n(FILE *f, const char *name, const char *type, size_t type_len,
    const char *label2, const char *value2, double v)
{
	fprintf(f, "%s{type=\"", name);
	put_label_n(f, type, type_len);
	if (label2 != NULL)
		fprintf(f, "\",%s=\"%s", label2, value2);
	fprintf(f, "\"} %.15g\n", v);
}

static void
by_type(FILE *f, const char *name, const char *type, const char *label2,
    const char *value2, double v)
{
	by_type_n(f, name, type, strlen(type), label2, value2, v);
}

/* The last-success time in the file we replace, or -1. */
static double
previous_success(const char *path)
{
	char line[256];
	double v = -1;
	FILE *f;

	/* Not a FIFO (its open waits for a writer), nor /dev/stdout (which
	 * reads the terminal, or the pipe the run writes to). */
	if (replace_through(path) || (f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, LAST_SUCCESS " ", sizeof LAST_SUCCESS) == 0)
			v = strtod(line + sizeof LAST_SUCCESS, NULL);
	fclose(f);
	return v;
}

/* How long after it was due each job of the last run started, by type:
 * a Prometheus histogram of the server's figures (runner.c). */
static void
latency_figures(FILE *f, const struct run_stats *s)
{
	const char *name = "jobrun_run_start_latency_seconds";
	size_t i, k;

	fprintf(f, "# HELP %s How long after it was due (the later of "
	    "next_run_at and created_at) each job of the last run was "
	    "claimed, by type.\n# TYPE %s histogram\n", name, name);
	for (i = 0; i < s->ntypes; i++) {
		const struct type_count *t = &s->by_type[i];

		for (k = 0; k < RUN_LATENCY_BUCKETS; k++) {
			fprintf(f, "%s_bucket{type=\"", name);
			put_label(f, t->type);
			if (run_latency_le_ms[k] == INT64_MAX)
				fprintf(f, "\",le=\"+Inf\"}");
			else
				fprintf(f, "\",le=\"%g\"}",
				    (double)run_latency_le_ms[k] / 1000.0);
			fprintf(f, " %llu\n",
			    (unsigned long long)t->latency_le[k]);
		}
		by_type(f, "jobrun_run_start_latency_seconds_sum", t->type,
		    NULL, NULL, (double)t->latency_sum_ms / 1000.0);
		by_type(f, "jobrun_run_start_latency_seconds_count", t->type,
		    NULL, NULL, (double)t->latency_count);
	}
}

static void
run_figures(FILE *f, const struct run_stats *s)
{
	static const char *const outcomes[] = { "succeeded", "retried",
	    "failed", "lost", "snoozed" };
	size_t i, k;

	header(f, "jobrun_run_jobs", "Jobs the last run handled, by type "
	    "and outcome.");
	for (i = 0; i < s->ntypes; i++) {
		const struct type_count *t = &s->by_type[i];
		const uint64_t v[] = { t->succeeded, t->retried, t->failed,
		    t->lost, t->snoozed };

		for (k = 0; k < 5; k++)
			by_type(f, "jobrun_run_jobs", t->type, "outcome",
			    outcomes[k], (double)v[k]);
	}
	header(f, "jobrun_run_deadline_passed", "Jobs the last run claimed "
	    "past their deadline and failed without running (counted in "
	    "failed too), by type.");
	for (i = 0; i < s->ntypes; i++)
		by_type(f, "jobrun_run_deadline_passed", s->by_type[i].type,
		    NULL, NULL, (double)s->by_type[i].deadline_passed);
	header(f, "jobrun_run_deleted", "Finished jobs the last run deleted "
	    "past keep_success and keep_failed.");
	fprintf(f, "jobrun_run_deleted %llu\n", (unsigned long long)s->deleted);
	header(f, "jobrun_run_claimed_by_priority", "Of the jobs the last "
	    "run claimed, those it took in priority order.");
	fprintf(f, "jobrun_run_claimed_by_priority %llu\n",
	    (unsigned long long)s->by_priority);
	header(f, "jobrun_run_recovered", "Expired locks the last run gave "
	    "back.");
	fprintf(f, "jobrun_run_recovered %llu\n",
	    (unsigned long long)s->recovered);
	header(f, "jobrun_run_duration_seconds", "How long the last run "
	    "took.");
	fprintf(f, "jobrun_run_duration_seconds %.3f\n",
	    (double)s->elapsed_ms / 1000.0);
	latency_figures(f, s);
}

static void
queue_figures(FILE *f, const struct queue_backlog *q)
{
	static const struct {
		const char *name, *help;
		size_t offset;
	} gauges[] = {
		{ "jobrun_queue_pending", "Pending jobs, by type.",
		  offsetof(struct queue_backlog_row, pending) },
		{ "jobrun_queue_due", "Pending jobs already due, by type.",
		  offsetof(struct queue_backlog_row, due) },
		{ "jobrun_queue_processing", "Jobs being handled, by type.",
		  offsetof(struct queue_backlog_row, processing) },
		{ "jobrun_queue_expired_locks", "Processing jobs whose lock "
		  "expired (their runner stopped), by type.",
		  offsetof(struct queue_backlog_row, expired) },
		{ "jobrun_queue_failed", "Failed jobs, by type.",
		  offsetof(struct queue_backlog_row, failed) },
	};
	size_t g, i;

	for (g = 0; g < sizeof gauges / sizeof gauges[0]; g++) {
		header(f, gauges[g].name, gauges[g].help);
		for (i = 0; i < q->n; i++)
			by_type_n(f, gauges[g].name, q->rows[i].type,
			    q->rows[i].type_len, NULL, NULL,
			    (double)*(const unsigned long *)(const void *)
			    ((const char *)&q->rows[i] + gauges[g].offset));
	}
	header(f, "jobrun_queue_lag_seconds", "How long the oldest due "
	    "pending job has waited, by type (0: none due).");
	for (i = 0; i < q->n; i++)
		by_type_n(f, "jobrun_queue_lag_seconds", q->rows[i].type,
		    q->rows[i].type_len, NULL, NULL,
		    q->rows[i].lag > 0 ? (double)q->rows[i].lag : 0);
}

/* Flow control (src/flow.c): what holds each type back now. */
static void
flow_figures(FILE *f, const struct flow_states *s)
{
	size_t i;

	header(f, "jobrun_flow_paused", "1 when the type is paused (jobrun "
	    "pause), by type.");
	for (i = 0; i < s->n; i++)
		by_type(f, "jobrun_flow_paused", s->rows[i].type, NULL, NULL,
		    s->rows[i].paused);
	header(f, "jobrun_flow_concurrency", "The type's concurrency cap in "
	    "this host's configuration, by type.");
	for (i = 0; i < s->n; i++)
		if (s->rows[i].concurrency)
			by_type(f, "jobrun_flow_concurrency", s->rows[i].type,
			    NULL, NULL, (double)s->rows[i].concurrency);
	header(f, "jobrun_flow_in_use", "Places of the cap in use: the "
	    "type's jobs in processing, by capped type.");
	for (i = 0; i < s->n; i++)
		if (s->rows[i].concurrency)
			by_type(f, "jobrun_flow_in_use", s->rows[i].type,
			    NULL, NULL, (double)s->rows[i].in_use);
	header(f, "jobrun_flow_rate_tokens", "Starts the rate limit allows "
	    "now (its bucket), by rated type.");
	for (i = 0; i < s->n; i++)
		if (s->rows[i].rate)
			by_type(f, "jobrun_flow_rate_tokens", s->rows[i].type,
			    NULL, NULL, s->rows[i].tokens);
	header(f, "jobrun_flow_keys_full", "Keys with key_concurrency jobs "
	    "in processing, by keyed type.");
	for (i = 0; i < s->n; i++)
		if (s->rows[i].key != NULL)
			by_type(f, "jobrun_flow_keys_full", s->rows[i].type,
			    NULL, NULL, (double)s->rows[i].keys_full);
	header(f, "jobrun_flow_key_waiting", "Due jobs waiting for their key "
	    "(at its key_concurrency), by keyed type.");
	for (i = 0; i < s->n; i++)
		if (s->rows[i].key != NULL)
			by_type(f, "jobrun_flow_key_waiting", s->rows[i].type,
			    NULL, NULL, (double)s->rows[i].key_waiting);
	header(f, "jobrun_flow_throttled", "1 when the type's cap is full or "
	    "its rate allows no start now, by limited type.");
	for (i = 0; i < s->n; i++)
		if (s->rows[i].concurrency || s->rows[i].rate)
			by_type(f, "jobrun_flow_throttled", s->rows[i].type,
			    NULL, NULL, s->rows[i].full ||
			    s->rows[i].throttled);
}

static void
schedule_figures(FILE *f, const struct sched_view *v, size_t n)
{
	size_t i;

	header(f, "jobrun_schedule_last_slot_timestamp_seconds", "The latest "
	    "slot enqueued, by schedule (Unix time; 0: none yet).");
	for (i = 0; i < n; i++) {
		fprintf(f, "jobrun_schedule_last_slot_timestamp_seconds"
		    "{schedule=\"");
		put_label(f, v[i].s->name);
		fprintf(f, "\"} %lld\n", (long long)v[i].last_utc);
	}
	header(f, "jobrun_schedule_lag_seconds", "How long the latest due "
	    "slot has waited to be enqueued, by schedule (0: enqueued).");
	for (i = 0; i < n; i++) {
		fprintf(f, "jobrun_schedule_lag_seconds{schedule=\"");
		put_label(f, v[i].s->name);
		fprintf(f, "\"} %ld\n", v[i].lag);
	}
}

static void
fanin_figures(FILE *f, const struct fanin_view *v, size_t n)
{
	size_t i;

	header(f, "jobrun_fan_in_done", "Members of an open fan-in that have "
	    "finished, by the key of the job it enqueues.");
	for (i = 0; i < n; i++) {
		fprintf(f, "jobrun_fan_in_done{fan_in=\"");
		put_label(f, v[i].key);
		fprintf(f, "\"} %llu\n", (unsigned long long)v[i].done);
	}
	header(f, "jobrun_fan_in_total", "Members of an open fan-in, by the "
	    "key of the job it enqueues.");
	for (i = 0; i < n; i++) {
		fprintf(f, "jobrun_fan_in_total{fan_in=\"");
		put_label(f, v[i].key);
		fprintf(f, "\"} %llu\n", (unsigned long long)v[i].total);
	}
}

/* What metrics_write puts in the file. */
struct figures {
	const struct run_stats *stats;
	int exit_status;
	const struct queue_backlog *queue;
	const struct metrics_extra *extra;
	double now, last;
};

static void
write_figures(FILE *f, void *arg)
{
	const struct figures *m = arg;

	run_figures(f, m->stats);
	header(f, "jobrun_run_exit_status", "The last run's exit status "
	    "(0: all claimed jobs succeeded or none was due).");
	fprintf(f, "jobrun_run_exit_status %d\n", m->exit_status);
	header(f, "jobrun_last_run_timestamp_seconds", "When the last run "
	    "ended (Unix time).");
	fprintf(f, "jobrun_last_run_timestamp_seconds %.0f\n", m->now);
	if (m->exit_status == 0 || m->last >= 0) {
		header(f, LAST_SUCCESS, "When a run last ended with exit "
		    "status 0 (Unix time).");
		fprintf(f, LAST_SUCCESS " %.0f\n", m->exit_status == 0 ?
		    m->now : m->last);
	}
	if (m->queue != NULL)
		queue_figures(f, m->queue);
	if (m->extra != NULL && m->extra->sched != NULL &&
	    m->extra->nsched > 0)
		schedule_figures(f, m->extra->sched, m->extra->nsched);
	if (m->extra != NULL && m->extra->fanin_active)
		fanin_figures(f, m->extra->fanin, m->extra->nfanin);
	if (m->extra != NULL && m->extra->flow != NULL)
		flow_figures(f, m->extra->flow);
}

int
metrics_write(const char *path, const struct run_stats *stats,
    int exit_status, const struct queue_backlog *queue,
    const struct metrics_extra *extra, char *err, size_t errlen)
{
	struct figures m = { stats, exit_status, queue, extra,
	    (double)time(NULL), previous_success(path) };

	/* 0644: node_exporter runs as another user. */
	return replace_file(path, "metrics", 0644, write_figures, &m, err,
	    errlen);
}
