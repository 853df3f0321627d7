/*
 * run_stats.c - what a run counts of the jobs it handled: each verdict
 * that was written, by verb and by type, the jobs claimed past their
 * deadline, and each job's start latency; and the line it logs for the
 * job.  The summary, the metrics file and the exit status read these.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "runner.h"
#include "runner_int.h"

/* The counters of job's type in this run. */
static struct type_count *
count_of(struct run_stats *stats, const char *type)
{
	static struct type_count nowhere;
	size_t i;

	for (i = 0; i < stats->ntypes; i++)
		if (strcmp(stats->by_type[i].type, type) == 0)
			return &stats->by_type[i];
	memset(&nowhere, 0, sizeof nowhere);
	return &nowhere;	/* a type that changed under us */
}

void
run_stats_free(struct run_stats *stats)
{
	free(stats->by_type);
	stats->by_type = NULL;
	stats->ntypes = 0;
}

/* What the run counts of each verb and what its log line shows, once its
 * write went through; a write that found the lock gone counts as lost.  A
 * job put back is no outcome of the job: it is not counted. */
#define COUNTER(name) 1, offsetof(struct run_stats, name), \
	offsetof(struct type_count, name)
static const struct {
	int counted;
	size_t in_run, in_type;	/* the counter in run_stats, type_count */
	int ms, delay;		/* the line shows the handler's time, delay */
} tally[] = {
	[VERB_SUCCESS] = { COUNTER(succeeded), 1, 0 },
	[VERB_RETRY] = { COUNTER(retried), 1, 1 },
	[VERB_FAIL] = { COUNTER(failed), 1, 0 },
	[VERB_SNOOZE] = { COUNTER(snoozed), 1, 1 },
	[VERB_RELEASE] = { 0, 0, 0, 0, 0 },
	[VERB_NOTHING] = { COUNTER(lost), 1, 0 },
};
#undef COUNTER
_Static_assert(sizeof tally / sizeof tally[0] == VERB_NOTHING + 1,
    "a verb without a row in tally[]");

/* One more in the counter at offset off of a run_stats or type_count. */
static void
bump(void *counters, size_t off)
{
	uint64_t *n = (uint64_t *)(void *)((char *)counters + off);

	(*n)++;
}

const int64_t run_latency_le_ms[RUN_LATENCY_BUCKETS] = {
	5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30000, 300000, INT64_MAX
};

/* The job's start latency into its type's histogram. */
static void
count_latency(struct type_count *t, int64_t ms)
{
	size_t i;

	if (ms < 0)
		return;
	for (i = 0; i < RUN_LATENCY_BUCKETS; i++)
		if (ms <= run_latency_le_ms[i])
			t->latency_le[i]++;
	t->latency_count++;
	t->latency_sum_ms += ms;
}

/* Count the verdict that was applied, and log it. */
void
run_tell(const struct in_hand *h, const struct verdict *v, int64_t ms,
    struct run_stats *stats)
{
	const struct job *job = h->job;
	struct log_event ev = { job->id, job->type, job->attempt,
	    job->max_attempts, v->word, tally[v->verb].ms ? ms : -1,
	    tally[v->verb].delay ? (long)v->delay : -1, v->note };
	struct type_count *t = count_of(stats, job->type);

	if (tally[v->verb].counted) {
		bump(stats, tally[v->verb].in_run);
		bump(t, tally[v->verb].in_type);
	}
	if (h->expired && v->verb == VERB_FAIL) {
		stats->deadline_passed++;
		t->deadline_passed++;
	}
	count_latency(t, job->start_latency_ms);
	log_job(h->lg, v->level, &ev);
}
