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

/* Write path atomically (a temporary file renamed over it): this run's
 * counts by type and outcome, its duration and exit status, when a run
 * last ended well, and, when queue is not NULL, the backlog and lag by
 * type, and, when flow is not NULL, the flow control state by type.  -1
 * with err on failure. */
int metrics_write(const char *path, const struct run_stats *stats,
                  int exit_status, const struct queue_backlog *queue,
                  const struct flow_states *flow, char *err,
                  size_t errlen);

#endif
