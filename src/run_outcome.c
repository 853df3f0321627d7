/*
 * run_outcome.c - a finished job's outcome written: the verdict's one
 * fenced write, and a slot's finished job whose outcome rides in the
 * transaction of its next claim (flow_rider: one commit for both, where
 * a claim of a limited type is a transaction anyway) or is written alone
 * before it.
 */
#include <stdio.h>

#include "fanin.h"
#include "flow.h"
#include "policy.h"
#include "runner_int.h"

/* The verdict's one write; *owned is 0 when its fence found another
 * runner's lock. */
static enum db_status
write_verdict(const struct in_hand *h, const struct verdict *v, int *owned,
    char *err, size_t errlen)
{
	const struct job *job = h->job;

	switch (v->verb) {
	case VERB_SUCCESS:
		return queue_mark_success(h->q, job, h->token, owned, err,
		    errlen);
	case VERB_RETRY:
		return queue_mark_retry(h->q, job, h->token, v->delay,
		    v->message, owned, err, errlen);
	case VERB_FAIL:
		return queue_mark_failed(h->q, job, h->token, v->message,
		    owned, err, errlen);
	case VERB_SNOOZE:
		return queue_snooze(h->q, job, h->token, v->delay,
		    h->progress, v->message[0] != '\0' ? v->message : NULL,
		    owned, err, errlen);
	case VERB_RELEASE:
		return queue_release(h->q, job, h->token, owned, err, errlen);
	case VERB_NOTHING:
		*owned = 0;	/* the verdict already says lost */
		break;
	}
	return DB_OK;
}

/* The verdict's one write, then, when its fence found the job no longer
 * ours, the cancel an operator may have asked for: *owned is 1, 0 when
 * another runner's lock was found, -1 when the cancel was written. */
enum db_status
run_apply_once(const struct in_hand *h, const struct verdict *v, int *owned,
    char *err, size_t errlen)
{
	enum db_status st = write_verdict(h, v, owned, err, errlen);
	int done = 0;

	if (st != DB_OK || *owned != 0)
		return st;
	st = queue_cancel_done(h->q, h->job, h->token, &done, err, errlen);
	if (done)
		*owned = -1;
	return st;
}

/* The outcome's write, in the claim's transaction (flow_rider). */
enum db_status
finished_write(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct finished *fin = arg;
	enum db_status st;

	fin->owned = 1;
	st = run_apply(&fin->h, &fin->v, &fin->owned, err, errlen);
	if (st == DB_OK && fin->owned == 1 && fin->v.verb != VERB_NOTHING)
		*w = (struct queue_witness){ fin->h.job->id, fin->h.token };
	return st;
}

/* The outcome committed: count and log it, and tell fan-in. */
void
finished_told(struct cycle *cy, struct finished *fin)
{
	fin->pending = 0;
	policy_settle(&fin->v, fin->owned);
	run_tell(&fin->h, &fin->v, fin->h.ms, cy->stats);
	cy->ext_retry_at = 0;
	/* fan-in hook: the outcome is committed. */
	fanin_after_finish(cy->fanin, fin->h.job->id);
}

/* The outcome written on its own (the connection held): 1 when it was.
 * A database error ends the run: the job waits for recovery. */
int
finished_alone(struct cycle *cy, struct finished *fin)
{
	enum db_status st;
	char err[1024];

	fin->pending = 0;
	fin->owned = 1;
	st = run_apply(&fin->h, &fin->v, &fin->owned, err, sizeof err);
	if (st != DB_OK)
		run_failed(cy, st, err);
	else
		finished_told(cy, fin);
	return st == DB_OK;
}

int
finished_rolled_back(void *arg)
{
	struct finished *fin = arg;

	return finished_alone(fin->h.cy, fin);
}
