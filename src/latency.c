/*
 * latency.c - start latency over the last hour (sql/008_start_latency.sql).
 *
 * The metrics file has each run's own histogram, but a run that waits
 * sees a handful of jobs and cron's runs on other hosts see the rest: the
 * question "how late do our jobs start" is the table's, across runs.  So
 * each run adds its histogram to a row per type and server minute when it
 * ends, one statement per type it claimed (none for a run that claimed
 * nothing), and status and report add up the last hour's rows.  The
 * counts are the metrics file's buckets; a quantile is interpolated in its
 * bucket, as Prometheus does with the same histogram, which is as exact
 * as the seed table's whole-second DATETIME columns allow anyway.
 *
 * The table is optional: a run, status and report without it (or without
 * the grant to it: queue_unseen) do what they did before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "util.h"

#define LATENCY_TABLE "jobrun_start_latency"
/* Rows older than this many minutes are deleted by the runs. */
#define LATENCY_KEEP_MINUTES 120

#define LE_COLUMNS "le_5, le_10, le_25, le_50, le_100, le_250, le_500," \
	" le_1000, le_5000, le_30000, le_300000, jobs"

enum latency_stmt { L_ADD, L_FORGET, L_READ, L_COUNT_STMTS };

static const char *const texts[L_COUNT_STMTS] = {
	/* (table, table, type, 12 counts, sum) */
	[L_ADD] = "INSERT INTO " QUEUE_OTHER_TABLE " (job_table, type, minute,"
	    " " LE_COLUMNS ", sum_ms) VALUES (" QUEUE_TABLE_ID ", ?,"
	    " UNIX_TIMESTAMP() DIV 60,"
	    " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	    " ON DUPLICATE KEY UPDATE le_5 = le_5 + VALUES(le_5),"
	    " le_10 = le_10 + VALUES(le_10), le_25 = le_25 + VALUES(le_25),"
	    " le_50 = le_50 + VALUES(le_50), le_100 = le_100 + VALUES(le_100),"
	    " le_250 = le_250 + VALUES(le_250),"
	    " le_500 = le_500 + VALUES(le_500),"
	    " le_1000 = le_1000 + VALUES(le_1000),"
	    " le_5000 = le_5000 + VALUES(le_5000),"
	    " le_30000 = le_30000 + VALUES(le_30000),"
	    " le_300000 = le_300000 + VALUES(le_300000),"
	    " jobs = jobs + VALUES(jobs), sum_ms = sum_ms + VALUES(sum_ms)",
	/* (table, table, minutes kept) */
	[L_FORGET] = "DELETE FROM " QUEUE_OTHER_TABLE " WHERE job_table = "
	    QUEUE_TABLE_ID
	    " AND minute < UNIX_TIMESTAMP() DIV 60 - ?",
	/* (table, table, minutes) */
	[L_READ] = "SELECT type, SUM(le_5), SUM(le_10), SUM(le_25), SUM(le_50),"
	    " SUM(le_100), SUM(le_250), SUM(le_500), SUM(le_1000),"
	    " SUM(le_5000), SUM(le_30000), SUM(le_300000), SUM(jobs)"
	    " FROM " QUEUE_OTHER_TABLE " WHERE job_table = " QUEUE_TABLE_ID
	    " AND minute >= UNIX_TIMESTAMP() DIV 60 - ? GROUP BY type"
	    " ORDER BY type",
};

static const char *const purposes[L_COUNT_STMTS] = {
	[L_ADD] = "add the run's start latencies",
	[L_FORGET] = "delete old start latencies",
	[L_READ] = "read the last hour's start latencies",
};

/* The statements whose privileges jobrun uses on the table, the look
 * first. */
static const size_t uses[] = { L_READ, L_ADD, L_FORGET };

static const struct queue_feature feature = {
	{ LATENCY_TABLE, NULL }, LATENCY_PRIVILEGES,
	"sql/008_start_latency.sql"
};

enum db_status
latency_access(struct queue *q, struct queue_access *a, char *err,
    size_t errlen)
{
	struct queue_stmts *set;
	enum db_status st;

	set = queue_stmts_open(q, texts, purposes, NULL, L_COUNT_STMTS,
	    LATENCY_TABLE);
	st = queue_stmts_reach(set, uses, sizeof uses / sizeof uses[0],
	    &a->reach, err, errlen);
	if (st == DB_OK && a->reach != QUEUE_REACHED)
		queue_access_say(q, a->reach, &feature, a);
	queue_stmts_close(set);
	return st;
}

static enum db_status
add_type(struct queue_stmts *set, struct queue *q, const struct type_count *t,
    char *err, size_t errlen)
{
	struct db_arg args[3 + RUN_LATENCY_BUCKETS + 1];
	unsigned i;

	args[0] = DB_STR(queue_name(q));
	args[1] = DB_STR(queue_name(q));
	args[2] = DB_STR(t->type);
	for (i = 0; i < RUN_LATENCY_BUCKETS; i++)
		args[3 + i] = DB_NUM(t->latency_le[i]);
	args[3 + RUN_LATENCY_BUCKETS] = DB_NUM(t->latency_sum_ms > 0 ?
	    t->latency_sum_ms : 0);
	return queue_stmts_run(set, L_ADD, args, 3 + RUN_LATENCY_BUCKETS + 1,
	    err, errlen);
}

enum db_status
latency_record(struct queue *q, const struct run_stats *stats, char *err,
    size_t errlen)
{
	struct db_arg forget[3] = { QUEUE_TABLE_ID_ARGS(q),
	    DB_NUM(LATENCY_KEEP_MINUTES) };
	struct queue_stmts *set;
	enum db_status st = DB_OK;
	size_t i;
	int added = 0;

	set = queue_stmts_open(q, texts, purposes, NULL, L_COUNT_STMTS,
	    LATENCY_TABLE);
	for (i = 0; st == DB_OK && i < stats->ntypes; i++) {
		if (stats->by_type[i].latency_count == 0)
			continue;
		st = add_type(set, q, &stats->by_type[i], err, errlen);
		added = st == DB_OK;
	}
	if (added)
		st = queue_stmts_run(set, L_FORGET, forget, 3, err, errlen);
	if (st != DB_OK && queue_unseen(q, st))
		st = DB_OK;
	queue_stmts_close(set);
	return st;
}

/* A row of L_READ into r (cols: type and the 12 sums). */
static void
read_row(char **cols, struct latency_row *r)
{
	unsigned i;

	r->type = cols[0];
	cols[0] = NULL;
	for (i = 0; i < RUN_LATENCY_BUCKETS; i++)
		r->le[i] = queue_number(cols[1 + i]);
}

static void
free_cols(char **cols, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		free(cols[i]);
		cols[i] = NULL;
	}
}

enum db_status
latency_read(struct queue *q, const char *type, struct latency_view *v,
    char *err, size_t errlen)
{
	struct db_arg args[3] = { QUEUE_TABLE_ID_ARGS(q),
	    DB_NUM(LATENCY_MINUTES - 1) };
	char *cols[1 + RUN_LATENCY_BUCKETS] = { NULL };
	struct queue_stmts *set;
	struct latency_row r;
	enum db_status st;
	unsigned i;
	int rc;

	memset(v, 0, sizeof *v);
	set = queue_stmts_open(q, texts, purposes, NULL, L_COUNT_STMTS,
	    LATENCY_TABLE);
	st = queue_stmts_run(set, L_READ, args, 3, err, errlen);
	v->present = st == DB_OK;
	while (st == DB_OK && (rc = queue_stmts_fetch(set, L_READ, cols,
	    1 + RUN_LATENCY_BUCKETS, err, errlen)) != 0) {
		if (rc < 0) {
			st = DB_ERROR;
			break;
		}
		read_row(cols, &r);
		free_cols(cols, 1 + RUN_LATENCY_BUCKETS);
		/* Types are exact bytes, as the runs claimed them. */
		if (type != NULL && strcmp(r.type, type) != 0) {
			free(r.type);
			continue;
		}
		for (i = 0; i < RUN_LATENCY_BUCKETS; i++)
			v->all.le[i] += r.le[i];
		v->rows = xrealloc(v->rows, (v->n + 1) * sizeof *v->rows);
		v->rows[v->n++] = r;
	}
	free_cols(cols, 1 + RUN_LATENCY_BUCKETS);
	queue_stmts_close(set);
	if (st != DB_OK && queue_unseen(q, st)) {
		latency_view_free(v);
		st = DB_OK;
	}
	return st;
}

void
latency_view_free(struct latency_view *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free(v->rows[i].type);
	free(v->rows);
	memset(v, 0, sizeof *v);
}

double
latency_quantile(const struct latency_row *r, double q)
{
	uint64_t total = r->le[RUN_LATENCY_BUCKETS - 1], below = 0;
	double rank, lower = 0;
	unsigned i;

	if (total == 0)
		return -1;
	rank = q * (double)total;
	for (i = 0; i < RUN_LATENCY_BUCKETS - 1; i++) {
		if ((double)r->le[i] >= rank && r->le[i] > below)
			return lower + ((double)run_latency_le_ms[i] - lower) *
			    (rank - (double)below) / (double)(r->le[i] - below);
		below = r->le[i];
		lower = (double)run_latency_le_ms[i];
	}
	return lower;	/* past the last finite bound */
}

static json_t *
ms_or_null(double ms)
{
	return ms < 0 ? json_null() : json_integer((json_int_t)(ms + 0.5));
}

static json_t *
row_json(const struct latency_row *r)
{
	return json_pack("{s:I,s:o,s:o}", "jobs",
	    (json_int_t)r->le[RUN_LATENCY_BUCKETS - 1], "p50_ms",
	    ms_or_null(latency_quantile(r, 0.5)), "p99_ms",
	    ms_or_null(latency_quantile(r, 0.99)));
}

json_t *
latency_json(const struct latency_view *v)
{
	json_t *doc, *types, *t, *name;
	size_t i;

	if (!v->present)
		return NULL;
	types = json_array();
	for (i = 0; i < v->n; i++) {
		t = row_json(&v->rows[i]);
		name = json_string(v->rows[i].type);
		/* Not UTF-8 (a type the table holds as bytes): still a row. */
		json_object_set_new(t, "type", name != NULL ? name :
		    json_string("?"));
		json_array_append_new(types, t);
	}
	doc = row_json(&v->all);
	json_object_set_new(doc, "minutes", json_integer(LATENCY_MINUTES));
	json_object_set_new(doc, "types", types);
	return doc;
}

/* "12 ms", or "300 s or more" past the last finite bound. */
static void
quantile_text(char *buf, size_t size, double ms)
{
	double top = (double)run_latency_le_ms[RUN_LATENCY_BUCKETS - 2];

	if (ms >= top)
		snprintf(buf, size, "%.0f s or more", top / 1000);
	else
		snprintf(buf, size, "%.0f ms", ms);
}

void
latency_line(char *buf, size_t size, const struct latency_row *r)
{
	uint64_t jobs = r->le[RUN_LATENCY_BUCKETS - 1];

	char p50[32], p99[32];

	if (jobs == 0) {
		snprintf(buf, size, "no job");
		return;
	}
	quantile_text(p50, sizeof p50, latency_quantile(r, 0.5));
	quantile_text(p99, sizeof p99, latency_quantile(r, 0.99));
	snprintf(buf, size, "p50 %s, p99 %s (%llu job%s)", p50, p99,
	    (unsigned long long)jobs, jobs == 1 ? "" : "s");
}
