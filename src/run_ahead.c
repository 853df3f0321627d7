/*
 * run_ahead.c - jobs claimed ahead for the run's slots waiting in line.
 *
 * A keyed type (flow_key.c) is claimed under its control row's lock, one
 * transaction after another, and each transaction's fixed part (the
 * lock, the choice, the COMMIT) costs as much as its claim.  So a slot
 * that claims while others of its run wait to claim too takes a job for
 * each of them in the same transaction (flow_claim's extra), and leaves
 * them here; a slot that comes to claim takes one from here first, with
 * no statement.  Only as many are taken as slots are waiting, so a job
 * waits here no longer than its slot waits for the connection.  The
 * jobs are claimed, their tokens the run's; what the run does not start
 * (a signal, the end of its budget, a database error) is given back
 * when its slots are done, the attempts not spent.
 */
#include <stdio.h>
#include <string.h>

#include "runner_int.h"
#include "util.h"

int
run_ahead_take(struct cycle *cy, struct job *job, char *token,
    size_t tokenlen)
{
	struct run_ahead *a = &cy->ahead;

	if (a->n == 0 || cy->st != DB_OK || run_wait_over(cy))
		return 0;
	*job = a->jobs[0];
	snprintf(token, tokenlen, "%s", a->tokens[0]);
	a->n--;
	memmove(&a->jobs[0], &a->jobs[1], a->n * sizeof a->jobs[0]);
	memmove(&a->tokens[0], &a->tokens[1], a->n * sizeof a->tokens[0]);
	return 1;
}

void
run_ahead_want(struct cycle *cy, struct flow_extra *x)
{
	uint64_t left = cy->opts->batch_size - cy->stats->claimed;
	int others = cy->claiming - 1;
	size_t i;

	x->want = others > 0 ? (size_t)others : 0;
	if (x->want > FLOW_EXTRA_MAX - cy->ahead.n)
		x->want = FLOW_EXTRA_MAX - cy->ahead.n;
	if (left <= x->want)
		x->want = left > 0 ? (size_t)left - 1 : 0;
	x->got = 0;
	for (i = 0; i < x->want; i++) {
		snprintf(cy->ahead.next[i], sizeof cy->ahead.next[i],
		    "%s:%llu", cy->prefix,
		    (unsigned long long)cy->stats->claimed + 2 + i);
		x->tokens[i] = cy->ahead.next[i];
	}
}

void
run_ahead_keep(struct cycle *cy, struct flow_extra *x)
{
	struct run_ahead *a = &cy->ahead;
	size_t i;

	for (i = 0; i < x->got && a->n < FLOW_EXTRA_MAX; i++) {
		a->jobs[a->n] = x->jobs[i];
		snprintf(a->tokens[a->n], sizeof a->tokens[a->n], "%s",
		    x->tokens[i]);
		a->n++;
		cy->stats->claimed++;
	}
	x->got = 0;
}

void
run_ahead_release(struct cycle *cy)
{
	struct run_ahead *a = &cy->ahead;
	enum db_status st = DB_OK;
	char err[1024];
	size_t i;
	int owned;

	if (a->n == 0)
		return;
	/* Without the connection (a database error ended the run), the
	 * jobs wait for recovery, as any claim the run could not finish. */
	if (connection_take(cy, 0) == 0) {
		for (i = 0; i < a->n && st == DB_OK; i++)
			st = queue_release(cy->q, &a->jobs[i], a->tokens[i],
			    &owned, err, sizeof err);
		if (st != DB_OK)
			run_failed(cy, st, err);
		else
			log_msg(cy->lg, LV_DEBUG, "%zu job(s) claimed for "
			    "slots that did not start them given back", a->n);
		connection_give(cy);
	}
	for (i = 0; i < a->n; i++) {
		queue_job_free(&a->jobs[i]);
		cy->stats->claimed--;
	}
	a->n = 0;
}
