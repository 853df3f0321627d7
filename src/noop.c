/*
 * noop.c - a handler that succeeds at once.
 *
 * For smoke tests of a deployment and for benchmarks: a noop type measures
 * what jobrun and the database cost per job, without fork and exec.
 */
#include <stdlib.h>

#include "handler.h"
#include "util.h"

static void *
noop_create(void)
{
	return xcalloc(1, 1);
}

static int
noop_ready(void *state, char *err, size_t errlen)
{
	(void)state;
	(void)err;
	(void)errlen;
	return 0;
}

static void
noop_run(void *state, const struct job *job, const struct handler_watch *w,
    struct result *res)
{
	(void)state;
	(void)job;
	(void)w;
	result_set(res, OUTCOME_SUCCESS, "", NULL, 0);
}

static void
noop_destroy(void *state)
{
	free(state);
}

const struct handler_kind noop_kind = {
	.name = "noop",
	.create = noop_create,
	.ready = noop_ready,
	.run = noop_run,
	.destroy = noop_destroy,
};
