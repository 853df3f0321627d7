/*
 * metrics.h - the run's figures in Prometheus text format, for
 * node_exporter's textfile collector.
 */
#ifndef JOBRUN_METRICS_H
#define JOBRUN_METRICS_H

#include <stddef.h>

#include "flow.h"
#include "queue.h"
#include "runner.h"
#include "fanin.h"
#include "schedule.h"

/* What a run adds to the metrics besides its own figures: the schedules'
 * latest slot and lag, and the open fan-ins' progress. */
struct metrics_extra {
	const struct sched_view *sched;
	size_t nsched;
	const struct fanin_view *fanin;	/* when the fan-in tables exist */
	size_t nfanin;
	int fanin_active;
	const struct flow_states *flow;	/* with the control table */
};

/* Write path atomically (a temporary file renamed over it): this run's
 * counts by type and outcome, its duration and exit status, when a run
 * last ended well, and, when queue is not NULL, the backlog and lag by
 * type, and, when extra is not NULL, the schedules, open fan-ins and
 * flow control state by type.  -1 with err on failure. */
int metrics_write(const char *path, const struct run_stats *stats,
                  int exit_status, const struct queue_backlog *queue,
                  const struct metrics_extra *extra, char *err,
                  size_t errlen);

#endif
