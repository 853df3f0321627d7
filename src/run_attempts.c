/*
 * run_attempts.c - the runner's side of the attempt history: the row of
 * each attempt it ends, written in the transaction of the outcome it
 * records.
 *
 * With --jobs the outcomes are written in the group's transaction
 * (group.c), and the rows go in it; a job's outcome written on its own
 * (one slot, or a group written statement by statement) gets a
 * transaction of the queue's helper for the two statements.  An attempt
 * whose lock was lost writes no row: the job's outcome is recovery's to
 * write, and recovery writes the row with it (queue_attempts.c).
 */
#include <string.h>

#include "runner_int.h"

/* The word for the attempt's end: NULL when nothing was written. */
static const char *
outcome_word(const struct in_hand *h, const struct verdict *v, int owned)
{
	int timed_out = h->res != NULL && h->res->timed_out;

	if (owned < 0)
		return ATTEMPT_CANCELLED;
	if (owned == 0)
		return NULL;
	switch (v->verb) {
	case VERB_SUCCESS:
		return ATTEMPT_SUCCESS;
	case VERB_RETRY:
		return timed_out ? ATTEMPT_TIMED_OUT : ATTEMPT_RETRY;
	case VERB_FAIL:
		return timed_out ? ATTEMPT_TIMED_OUT : ATTEMPT_FAILED;
	case VERB_SNOOZE:
		return ATTEMPT_SNOOZED;
	case VERB_RELEASE:
		return ATTEMPT_PUT_BACK;
	case VERB_NOTHING:
		break;
	}
	return NULL;
}

static void
attempt_of(const struct in_hand *h, const char *outcome, struct attempt *at)
{
	const struct result *res = h->res;

	*at = (struct attempt){ .job_id = h->job->id,
	    .attempt = h->job->attempt, .runner = h->token,
	    .outcome = outcome, .exit_status = -1, .ms = h->ms };
	if (res == NULL)
		return;
	at->exit_status = res->exit_status;
	at->signo = res->signo;
	at->http_status = res->http_status;
	at->output = res->output;
	at->output_len = res->output_len;
}

/* The verdict and the attempt's row (a transaction open, or none). */
static enum db_status
apply_recorded(const struct in_hand *h, const struct verdict *v, int *owned,
    char *err, size_t errlen)
{
	enum db_status st = run_apply_once(h, v, owned, err, errlen);
	const char *outcome;
	struct attempt at;

	if (st != DB_OK || (outcome = outcome_word(h, v, *owned)) == NULL)
		return st;
	attempt_of(h, outcome, &at);
	return attempts_add(h->cy->attempts, &at, 1, err, errlen);
}

struct apply {
	const struct in_hand *h;
	const struct verdict *v;
	int *owned;
};

static enum db_status
apply_body(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct apply *a = arg;

	/* A COMMIT whose answer was lost is judged by the mark: the row
	 * still processing under our token says it was rolled back. */
	*w = (struct queue_witness){ a->h->job->id, a->h->token };
	return apply_recorded(a->h, a->v, a->owned, err, errlen);
}

enum db_status
run_apply(const struct in_hand *h, const struct verdict *v, int *owned,
    char *err, size_t errlen)
{
	struct apply a = { h, v, owned };
	struct queue_trx t = { apply_body, NULL, NULL, &a,
	    QUEUE_CLAIM_RETRIES + 1, 0, 0 };

	if (!h->cy->history)
		return run_apply_once(h, v, owned, err, errlen);
	if (queue_trx_open(h->q))
		return apply_recorded(h, v, owned, err, errlen);
	return queue_trx(h->q, &t, err, errlen);
}

enum db_status
run_record_successes(struct cycle *cy, const struct in_hand *const *hs,
    size_t n, char *err, size_t errlen)
{
	struct attempt at[ATTEMPTS_MAX_ROWS];
	size_t i;

	if (!cy->history || n == 0)
		return DB_OK;
	for (i = 0; i < n && i < ATTEMPTS_MAX_ROWS; i++)
		attempt_of(hs[i], ATTEMPT_SUCCESS, &at[i]);
	return attempts_add(cy->attempts, at, i, err, errlen);
}
