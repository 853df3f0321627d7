/*
 * latency.h - start latency over the last hour, kept in the database
 * (sql/008_start_latency.sql) so that status and report see every
 * runner's jobs, on every host.
 */
#ifndef JOBRUN_LATENCY_H
#define JOBRUN_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "queue.h"
#include "runner.h"

/* The minutes status and report look back over. */
#define LATENCY_MINUTES 60

/* One type's start latencies (or all types', type NULL): cumulative
 * bucket counts, le[i] the jobs claimed at most run_latency_le_ms[i]
 * after they were due, the last all of them. */
struct latency_row {
	char *type;
	uint64_t le[RUN_LATENCY_BUCKETS];
};

struct latency_view {
	int present;			/* the table is there */
	struct latency_row all;		/* every type's added up */
	struct latency_row *rows;	/* by type, as the runs claimed them */
	size_t n;
};

/* Add the run's latencies (stats) to the table, in the server's minute,
 * and delete its rows over two hours old.  No table (or none granted):
 * nothing, DB_OK. */
enum db_status latency_record(struct queue *q, const struct run_stats *stats,
                              char *err, size_t errlen);

/* The last LATENCY_MINUTES minutes' latencies, of one type (exact bytes)
 * or of all.  No table (or none granted): v->present 0, DB_OK. */
enum db_status latency_read(struct queue *q, const char *type,
                            struct latency_view *v, char *err,
                            size_t errlen);
void latency_view_free(struct latency_view *v);

/* What jobrun uses on the table. */
#define LATENCY_PRIVILEGES "SELECT, INSERT, UPDATE, DELETE"

/* For check: how the table stands for the account, every privilege
 * jobrun uses on it tried (a->why and a->fix said when not reached). */
enum db_status latency_access(struct queue *q, struct queue_access *a,
                              char *err, size_t errlen);

/* The q-quantile (0 < q <= 1) of r's latencies in ms, interpolated in
 * its bucket as Prometheus' histogram_quantile does (a quantile past the
 * last finite bound is that bound); -1 when r counts no job. */
double latency_quantile(const struct latency_row *r, double q);

/* v as status --json and report --json give it: {"minutes", "jobs",
 * "p50_ms", "p99_ms" (null without jobs), "types": [the same with
 * "type"]}; NULL without the table. */
json_t *latency_json(const struct latency_view *v);

/* "p50 12 ms, p99 85 ms (1234 jobs)", or "no job" without any. */
void latency_line(char *buf, size_t size, const struct latency_row *r);

#endif
