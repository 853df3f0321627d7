/*
 * runner.h - one run: recover, then claim, handle and mark jobs until a
 * budget is spent or nothing is due.
 */
#ifndef JOBRUN_RUNNER_H
#define JOBRUN_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "db.h"
#include "flow.h"
#include "log.h"
#include "queue.h"

/* What the command line asked of this run. */
struct run_opts {
	const char *const *types;	/* the types to claim (--type's, or */
	size_t ntypes;			/* the configured ones ready to run) */
	unsigned long batch_size;	/* claim at most this many jobs */
	unsigned long max_seconds;	/* stop claiming after this long */
	unsigned long jobs;		/* handlers at once (0: one) */
	const char *single_lock;	/* the --single lock held, or NULL */
	int wait;			/* nothing due: wait until max_seconds */
	struct flow *flow;	/* flow control hook (flow.h), or NULL */
};

/* The upper bounds of the start latency histogram's buckets, in
 * milliseconds (the last is +Inf). */
#define RUN_LATENCY_BUCKETS 12
extern const int64_t run_latency_le_ms[RUN_LATENCY_BUCKETS];

/* Outcomes of one type's jobs in this run, and their start latencies:
 * how long after it was due (max(next_run_at, created_at)) each was
 * claimed, by the server's clock. */
struct type_count {
	const char *type;
	uint64_t succeeded, retried, failed, lost, snoozed;
	uint64_t deadline_passed;	/* of failed: claimed too late */
	uint64_t latency_le[RUN_LATENCY_BUCKETS];	/* cumulative */
	uint64_t latency_count;
	int64_t latency_sum_ms;
};

/* What the run did, for the summary, the metrics and the exit status. */
struct run_stats {
	uint64_t recovered, claimed, succeeded, retried, failed, lost, snoozed;
	uint64_t deadline_passed;	/* of failed: claimed too late */
	uint64_t deleted;		/* finished rows retention deleted */
	uint64_t by_priority;		/* claims in priority order (of
					 * claimed; queue_counters') */
	int64_t elapsed_ms;
	struct type_count *by_type;	/* one per type the run could claim */
	size_t ntypes;
};

void run_stats_free(struct run_stats *stats);

/* Signal handler: the first call stops claiming and lets the running
 * handlers finish; the second also stops them and puts their jobs
 * back. */
void run_request_stop(int sig);

/* 128 + the signal when a second signal interrupted the run, else 0. */
int run_interrupted(void);

/* 128 + the last signal once any signal arrived, else 0: for commands
 * that work in batches and stop between two. */
int run_stop_requested(void);

/* Run one cycle, with opts->jobs handlers at once over the one
 * connection db.  Returns DB_OK when the run went through (whatever the
 * jobs' outcomes, which are in stats) or the first database error that
 * ended it, with err set; a job whose outcome it could not write is left
 * for recovery. */
enum db_status run_cycle(const struct cfg *cfg, struct db *db,
                         struct queue *q, const struct run_opts *opts,
                         const struct log *lg, struct run_stats *stats,
                         char *err, size_t errlen);

#endif
