/*
 * flow_extra.c - the jobs a claim took for a run's other slots
 * (struct flow_extra, flow.h): freed when their claim was rolled back,
 * given back when it committed but they are not to be run.
 */
#include <stddef.h>

#include "flow.h"
#include "queue.h"

void
flow_extra_drop(struct flow_extra *extra)
{
	size_t j;

	for (j = 0; extra != NULL && j < extra->got; j++)
		queue_job_free(&extra->jobs[j]);
	if (extra != NULL)
		extra->got = 0;
}

enum db_status
flow_extra_release(struct queue *q, struct flow_extra *extra, char *err,
    size_t errlen)
{
	enum db_status st = DB_OK;
	size_t j;
	int owned;

	for (j = 0; extra != NULL && st == DB_OK && j < extra->got; j++)
		st = queue_release(q, &extra->jobs[j], extra->tokens[j],
		    &owned, err, errlen);
	flow_extra_drop(extra);
	return st;
}
