/*
 * group.c - the group commits of --jobs: what the slots have ready for
 * the connection (an outcome to write, a job to claim) is written by
 * whichever slot gets the connection first, for all of them, in one
 * transaction of the queue's helper (queue_trx): one commit where there
 * were as many as statements.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "flow_key.h"
#include "runner_int.h"
#include "util.h"

/* Requests served in one transaction at most: its locks are held, and
 * its marks wait, while its statements run. */
#define GROUP_MAX 16

/* What a slot has ready for the connection when --jobs is above 1: the
 * verdict on the job it finished, if any, and its wish for another. */
struct request {
	struct request *next;
	const struct in_hand *h;	/* the job to mark, or NULL */
	struct verdict v;
	int64_t ms;			/* its handler's time */
	int owned;			/* the mark found the job still ours */
	int marked;			/* its mark committed on its own (no
					 * transaction open: SOLO, or a write
					 * alone): not written again when the
					 * group's claims fail after it */
	struct job *job;		/* where to claim the next job */
	char *token;			/* its token, QUEUE_TOKEN_MAX + 1 bytes */
	int claimed;
	int read;			/* the job claimed was read already */
	int64_t claim_again_ms;		/* no claim: the claims gave up on a
					 * deadlock, or flow control held
					 * every due type back: try after
					 * this */
	pthread_cond_t wake;		/* served, or its turn to serve */
	int done;			/* served (pending_mu) */
	int held;			/* in cy->held (pending_mu) */
};

/* Up to GROUP_MAX of the pending requests, oldest first (pending_mu
 * held). */
static struct request *
cut_pending(struct cycle *cy)
{
	struct request *group, *last;
	size_t n;

	group = last = cy->pending;
	n = last != NULL;
	for (; last != NULL && last->next != NULL && n < GROUP_MAX; n++)
		last = last->next;
	if (last != NULL) {
		cy->pending = last->next;
		last->next = NULL;
		if (cy->pending == NULL)
			cy->pending_tail = &cy->pending;
	}
	cy->npending -= n;
	return group;
}

/* A keyed run's requests that flow control held back (every due job's
 * key busy) wait in cy->held for the next group, which takes them along
 * (pending_mu held): a slot whose job ended freed its key, and the claim
 * that carries its mark takes a job for each of them too, as the first
 * of them to end its wait would (wait_held). */
static struct request *
join_held(struct cycle *cy, struct request *group)
{
	struct request **tail = &group, *r;
	size_t n = 0;

	for (; *tail != NULL; tail = &(*tail)->next)
		n++;
	while (cy->held != NULL && n++ < GROUP_MAX) {
		r = cy->held;
		cy->held = r->next;
		r->next = NULL;
		r->held = 0;
		*tail = r;
		tail = &r->next;
	}
	return group;
}

/* Before a group is cut (pending_mu held): slots that were given a job
 * and are about to come back with its verdict (a handler that took no
 * time) are waited for, at most GATHER_US, less than a statement's round
 * trip, so that they share this commit rather than start the next. */
#define GATHER_US 100

static void
gather(struct cycle *cy)
{
	struct timespec until;
	int64_t ns;

	if (cy->returning == 0 || cy->npending >= GROUP_MAX)
		return;
	/* The monotonic clock, as cy->gather's attribute says: a wall
	 * clock stepped back would hold every slot here. */
	clock_gettime(CLOCK_MONOTONIC, &until);
	ns = until.tv_nsec + GATHER_US * 1000L;
	until.tv_sec += ns / 1000000000L;
	until.tv_nsec = ns % 1000000000L;
	while (cy->returning > 0 && cy->npending < GROUP_MAX &&
	    pthread_cond_timedwait(&cy->gather, &cy->pending_mu, &until) == 0)
		;
}

/* How a group is written: SHARED, one transaction, the successes in one
 * statement; EACH, one transaction, a statement per verdict; SOLO, each
 * statement its own transaction, run again on its own after a conflict,
 * as with one slot. */
enum group_mode { SHARED, EACH, SOLO };

/* The group's marks.  Success, the common verdict, is written for all
 * of them with one statement when SHARED: if that finds one job no
 * longer ours, which one is not known, and the group is run again
 * (DB_CONFLICT, *split) with a fenced write for each.  A mark that
 * committed on its own (SOLO, no transaction open) is not written again
 * when the group is, after its claims failed: it would find its job no
 * longer under its token, and call a success "lost". */
static enum db_status
group_marks(struct cycle *cy, struct request *group, enum group_mode mode,
    int *split, char *err, size_t errlen)
{
	uint64_t ids[GROUP_MAX], changed;
	const char *tokens[GROUP_MAX];
	const struct in_hand *hs[GROUP_MAX];
	struct request *r;
	enum db_status st = DB_OK;
	size_t n = 0;

	for (r = group; r != NULL; r = r->next)
		if (r->h != NULL && r->v.verb == VERB_SUCCESS && mode == SHARED) {
			hs[n] = r->h;
			ids[n] = r->h->job->id;
			tokens[n++] = r->h->token;
		}
	if (n >= 2) {
		st = queue_mark_success_many(cy->q, ids, tokens, n, &changed,
		    err, errlen);
		if (st == DB_OK && changed != n) {
			*split = 1;
			snprintf(err, errlen, "a job of the group was no "
			    "longer ours");
			return DB_CONFLICT;
		}
		if (st == DB_OK)
			st = run_record_successes(cy, hs, n, err, errlen);
	}
	for (r = group; r != NULL && st == DB_OK; r = r->next) {
		if (r->h == NULL || r->marked)
			continue;
		r->owned = 1;
		if (n < 2 || r->v.verb != VERB_SUCCESS)
			st = run_apply(r->h, &r->v, &r->owned, err, errlen);
		r->marked = st == DB_OK && !queue_in_trx(cy->q);
	}
	return st;
}

static size_t
success_count(const struct request *group)
{
	size_t n = 0;

	for (; group != NULL; group = group->next)
		n += group->h != NULL && group->v.verb == VERB_SUCCESS;
	return n;
}

/* -vv: a shared success found a job not ours (group_marks' split). */
static void
split_told(struct cycle *cy, const struct request *group)
{
	log_msg(cy->lg, LV_DEBUG, "a job of %zu marked success together "
	    "was no longer ours: each is written alone",
	    success_count(group));
}

/* Conflicts after which a run writes every group SOLO: where they are
 * that frequent (runners on several Galera nodes), a transaction of many
 * statements loses more often than it saves. */
#define GROUP_CONFLICTS_MAX 3

static void
new_token(struct cycle *cy, struct request *r)
{
	snprintf(r->token, QUEUE_TOKEN_MAX + 1, "%s:%llu", cy->prefix,
	    (unsigned long long)++cy->tokens_made);
}

/* The group's claims in one round trip (queue_claim_bulk), as many as
 * the batch budget allows; the slots it finds no job for are claimed one
 * by one after it. */
static enum db_status
group_claim_bulk(struct cycle *cy, struct request *group, char *err,
    size_t errlen)
{
	struct request *r, *take[GROUP_MAX];
	const char *tokens[GROUP_MAX];
	struct job *jobs[GROUP_MAX];
	size_t n = 0, i, claimed;
	uint64_t left;
	enum db_status st;

	if (!run_may_claim(cy))
		return DB_OK;
	left = cy->opts->batch_size - cy->stats->claimed;
	for (r = group; r != NULL && n < GROUP_MAX && n < left; r = r->next) {
		new_token(cy, r);
		take[n] = r;
		tokens[n] = r->token;
		jobs[n++] = r->job;
	}
	if (cy->nclaim == 0)
		return DB_OK;	/* every type paused: claimed one by one */
	st = queue_claim_bulk(cy->q, cy->claim_types, cy->nclaim,
	    cy->cfg->run.lock_seconds, tokens, jobs, n, &claimed, err, errlen);
	/* Jobs read are flagged even when the group failed after all, so
	 * that group_undo frees them. */
	for (i = 0; i < n; i++)
		if (take[i]->job->id != 0) {
			take[i]->claimed = take[i]->read = 1;
			cy->stats->claimed++;
		}
	return st;
}

/* The write of the group by which a COMMIT whose answer was lost is
 * judged (queue_trx): a mark that was written, else a claim
 * that took a job; none when the group wrote nothing. */
static struct queue_witness
group_witness(const struct request *group)
{
	const struct request *r;

	for (r = group; r != NULL; r = r->next)
		if (r->h != NULL && r->owned && r->v.verb != VERB_NOTHING)
			return (struct queue_witness){ r->h->job->id,
			    r->h->token };
	for (r = group; r != NULL; r = r->next)
		if (r->claimed && r->job->id != 0)
			return (struct queue_witness){ 0, r->token };
	return (struct queue_witness){ 0, NULL };
}

/* The types the group's claims take: the run's, less those paused now
 * when the control table is there (flow control hook: one read a
 * group). */
static enum db_status
group_types(struct cycle *cy, char *err, size_t errlen)
{
	if (cy->opts->flow == NULL || !run_may_claim(cy))
		return DB_OK;
	return flow_unpaused(cy->opts->flow, cy->types, cy->ntypes,
	    cy->claim_types, &cy->nclaim, err, errlen);
}

/* A group being served (serve): how it is written, and what to put back
 * in the run's state when a run of it fails. */
struct group_write {
	struct cycle *cy;
	struct request *group;
	enum group_mode mode;
	int split;		/* a shared success found a job not ours */
	int no_claims;		/* the marks alone: the claims gave up */
	uint64_t claimed;	/* the run's count before */
	int drained;
	/* A claim met a conflict after the claims before it were made
	 * for good (group_body): why, for run_claim_conflict. */
	int claims_stopped;
	char stopped_cause[512];
};

/* Whether the group's statements are each their own: one write, or SOLO. */
static int
group_alone(void *arg)
{
	struct group_write *g = arg;
	struct request *r;
	size_t writes = 0;

	for (r = g->group; r != NULL; r = r->next)
		writes += (size_t)(r->h != NULL) +
		    (size_t)(!g->no_claims && run_may_claim(g->cy));
	return writes <= 1 || g->mode == SOLO;
}

/* Whether the claims a group made before one that met a conflict stand:
 * each was its own statement (SOLO, or one write), committed; or the
 * conflict was a lock wait that timed out, which undid its statement
 * alone, and the transaction goes on.  Then the group keeps them, claims
 * no more, and its other slots claim again later (serve): undone as
 * after a deadlock, the jobs claimed on their own were left processing,
 * counted by no one, until recovery. */
static int
claims_kept(struct cycle *cy)
{
	return !queue_in_trx(cy->q) || (queue_lock_wait_ended(cy->q) &&
	    queue_trx_open(cy->q));
}

/* Run a group's statements: the marks, then a claim for each slot that
 * may have another job; in one transaction when there is more than one
 * write, but SOLO (group_alone).  The marks go first: a mark waits for
 * the claims of the slots that got the connection with it, for no
 * running job.  The jobs claimed are read after the commit
 * (group_read). */
static enum db_status
group_body(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct group_write *g = arg;
	struct cycle *cy = g->cy;
	struct request *r;
	enum db_status st;
	uint64_t id;

	g->split = 0;
	g->claims_stopped = 0;
	if (!g->no_claims && (st = group_types(cy, err, errlen)) != DB_OK)
		return st;
	st = group_marks(cy, g->group, g->mode, &g->split, err, errlen);
	if (st == DB_OK && !g->no_claims && !group_alone(g))
		st = group_claim_bulk(cy, g->group, err, errlen);
	for (r = g->group; r != NULL && st == DB_OK && !g->no_claims &&
	    run_may_claim(cy); r = r->next) {
		if (r->claimed)
			continue;
		if (cy->nclaim == 0) {	/* every type paused */
			cy->drained = 1;
			break;
		}
		new_token(cy, r);
		st = queue_claim_id(cy->q, cy->claim_types, cy->nclaim,
		    cy->cfg->run.lock_seconds, r->token, &id, err, errlen);
		if (st == DB_CONFLICT && claims_kept(cy)) {
			g->claims_stopped = 1;
			snprintf(g->stopped_cause, sizeof g->stopped_cause,
			    "%s", err);
			st = DB_OK;
			break;
		}
		if (st == DB_OK && id == 0)
			cy->drained = 1;
		else if (st == DB_OK) {
			cy->stats->claimed++;
			r->job->id = id;
			r->claimed = 1;
		}
	}
	if (st == DB_OK)
		*w = group_witness(g->group);
	return st;
}

/* Read the jobs a group claimed, in one statement. */
static enum db_status
group_read(struct cycle *cy, struct request *group, char *err, size_t errlen)
{
	uint64_t ids[GROUP_MAX];
	const char *tokens[GROUP_MAX];
	struct job *jobs[GROUP_MAX];
	struct request *r;
	size_t n = 0;

	for (r = group; r != NULL; r = r->next)
		if (r->claimed && !r->read) {
			ids[n] = r->job->id;
			r->job->id = 0;
			tokens[n] = r->token;
			jobs[n++] = r->job;
		}
	if (n == 0)
		return DB_OK;
	return queue_read_claimed(cy->q, ids, tokens, jobs, n, err, errlen);
}

/* Undo what a run of a group that failed changed in the run's own
 * state, and choose how the group is written if it is run again: each
 * success apart when a shared one found a job no longer ours, SOLO after
 * a conflict. */
static void
group_undo(void *arg, enum db_status st)
{
	struct group_write *g = arg;
	struct cycle *cy = g->cy;
	struct request *r;

	for (r = g->group; r != NULL; r = r->next)
		if (r->claimed || r->read) {
			queue_job_free(r->job);
			memset(r->job, 0, sizeof *r->job);
			r->claimed = r->read = 0;
		}
	cy->stats->claimed = g->claimed;
	cy->drained = g->drained;
	if (g->split) {
		split_told(cy, g->group);
		g->mode = EACH;
	} else if (st == DB_CONFLICT) {
		cy->group_conflicts++;
		g->mode = SOLO;
	}
}

/* The group's transaction gave up on a deadlock that persisted: the
 * marks are written without the claims (each its own statement: the
 * group is SOLO after a conflict), so that no finished job waits for
 * recovery because another program deadlocks the claims; then its slots
 * wait longer each time in a row (run_claim_conflict) and claim again,
 * within the run's budget, rather than end the run with 75.  A deadlock
 * the marks alone still meet ends the run. */
static enum db_status
serve_marks_alone(struct cycle *cy, struct group_write *g,
    const struct queue_trx *t, char *err, size_t errlen)
{
	char cause[1024];
	enum db_status st;
	struct request *r;
	int64_t wait_ms;

	snprintf(cause, sizeof cause, "%s", err);
	g->no_claims = 1;
	st = queue_trx(cy->q, t, err, errlen);
	if (st != DB_OK || run_wait_over(cy))
		return st;
	wait_ms = run_claim_conflict(cy, cause);
	for (r = g->group; r != NULL; r = r->next)
		r->claim_again_ms = wait_ms;
	return DB_OK;
}

/* The group's claims stopped at a conflict (claims_kept): its slots
 * without a job wait longer each time in a row and claim again, within
 * the run's budget (at its end the other slots' jobs in hand are still
 * to be marked: the run ends as one that ran out of time). */
static void
claim_later(struct cycle *cy, struct request *group, const char *cause)
{
	struct request *r;
	int64_t wait_ms;

	if (run_wait_over(cy))
		return;
	wait_ms = run_claim_conflict(cy, cause);
	for (r = group; r != NULL; r = r->next)
		if (!r->claimed)
			r->claim_again_ms = wait_ms;
}

/* r's mark is committed: count and log its outcome, tell fan-in. */
static void
outcome_told(struct cycle *cy, struct request *r)
{
	policy_settle(&r->v, r->owned);
	run_tell(r->h, &r->v, r->ms, cy->stats);
	/* fan-in hook: the outcome is committed. */
	fanin_after_finish(cy->fanin, r->h->job->id);
}

/* A database error ended the run while the group was served: the marks
 * that had committed on their own before it (SOLO, r->marked) are
 * counted and logged, as the table holds them; the rest were not
 * written, and recovery takes their jobs back. */
static void
marked_told(struct cycle *cy, struct request *group)
{
	struct request *r;

	for (r = group; r != NULL; r = r->next)
		if (r->h != NULL && r->marked)
			outcome_told(cy, r);
}

/* The group's marks are committed: count and log them, tell fan-in;
 * then read the jobs its claims took. */
static void
group_told(struct cycle *cy, struct request *group)
{
	struct request *r;
	enum db_status st;
	char err[1024];

	cy->ext_retry_at = 0;
	for (r = group; r != NULL; r = r->next)
		if (r->h != NULL)
			outcome_told(cy, r);
	/* The claims are committed: a job that cannot be read now is left
	 * to recovery, as with a claim whose run failed after it. */
	if ((st = group_read(cy, group, err, sizeof err)) != DB_OK) {
		run_failed(cy, st, err);
		for (r = group; r != NULL; r = r->next)
			if (r->claimed) {
				queue_job_free(r->job);
				r->claimed = 0;
			}
	}
}

/* --- keyed runs ------------------------------------------------------
 * A run whose limited types are all keyed, with neither a cap nor a
 * rate (flow_keyed_only): a group's claims are flow_claim's transaction,
 * which locks the types' control rows and takes a job for each request
 * of the group at once (flow_extra), and the group's marks ride in it
 * (flow_rider), written before any control row is locked: one commit
 * for the group, as without limits, where a slot claiming on its own
 * (runner.c's claim_once) had one for each job's outcome. */

/* A keyed run's group being served: how its marks are written (mode,
 * split as struct group_write's), and whether they were, alone. */
struct keyed_write {
	struct cycle *cy;
	struct request *group;
	enum group_mode mode;
	int split;
	int marked;
};

/* The marks alone, in a transaction of their own (mode as group_body's:
 * SHARED, EACH after a shared success found a job not ours, SOLO after
 * a conflict); also flow_rider's write, in the claim's transaction. */
static enum db_status
keyed_marks(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct keyed_write *g = arg;
	enum db_status st;

	g->split = 0;
	st = group_marks(g->cy, g->group, g->mode, &g->split, err, errlen);
	if (st == DB_OK)
		*w = group_witness(g->group);
	return st;
}

static void
keyed_marks_undo(void *arg, enum db_status st)
{
	struct keyed_write *g = arg;

	if (g->split) {
		split_told(g->cy, g->group);
		g->mode = EACH;
	} else if (st == DB_CONFLICT) {
		/* As group_undo: a run that keeps losing certification
		 * (Galera) stops trying shared writes first. */
		g->cy->group_conflicts++;
		g->mode = SOLO;
	}
}

static int
keyed_marks_single(void *arg)
{
	struct keyed_write *g = arg;
	struct request *r;
	size_t marks = 0;

	for (r = g->group; r != NULL; r = r->next)
		marks += r->h != NULL;
	return marks <= 1 || g->mode == SOLO;
}

/* flow_rider's alone: the claim's transaction the marks rode in was
 * rolled back; each is written on its own at once, before the claim
 * runs again, so that a mark waits for one lock wait at most. */
static int
keyed_marks_alone(void *arg)
{
	struct keyed_write *g = arg;
	enum db_status st;
	char err[1024];
	int split = 0;

	if (g->split)
		split_told(g->cy, g->group);
	g->mode = SOLO;
	st = group_marks(g->cy, g->group, SOLO, &split, err, sizeof err);
	if (st != DB_OK)
		run_failed(g->cy, st, err);
	g->marked = st == DB_OK;
	return g->marked;
}

/* Whether the group's marks may ride in the claim's transaction: not on
 * Galera, nor when a job's lock could expire while the claim waits for
 * a control row (runner.c's run_ride_ok). */
static int
keyed_may_ride(struct cycle *cy, const struct request *group)
{
	const struct request *r;

	for (r = group; r != NULL; r = r->next)
		if (r->h != NULL && !run_ride_ok(cy, r->h))
			return 0;
	return run_may_claim(cy);
}

/* Requests a keyed claim found no job for while it took others: the
 * due jobs whose keys had room are all taken, so they wait among the
 * held ones (wait_held) this long at most, taken along by the next group
 * served, rather than try the control row again at once. */
#define KEYED_LEFT_MS 20

/* The jobs flow_claim took, one for each request from the first; those
 * left without one wait KEYED_LEFT_MS when it took some, the wait it
 * gives when flow control held every type back, and not at all when
 * nothing is due. */
static void
keyed_hand_out(struct cycle *cy, struct request **want, size_t n,
    int claimed, struct flow_extra *x, int64_t wait_ms)
{
	size_t i, got = claimed ? 1 + x->got : 0;

	for (i = 0; i < n; i++) {
		if (i >= got) {
			want[i]->claim_again_ms = claimed ? KEYED_LEFT_MS :
			    wait_ms;
			continue;
		}
		if (i > 0) {
			*want[i]->job = x->jobs[i - 1];
			memset(&x->jobs[i - 1], 0, sizeof x->jobs[i - 1]);
		}
		want[i]->claimed = want[i]->read = 1;
		cy->stats->claimed++;
	}
	x->got = 0;
	if (!claimed && wait_ms == 0)
		cy->drained = 1;
}

/* The group's claims in flow_claim's one transaction, rider in it. */
static enum db_status
keyed_claims(struct cycle *cy, struct request *group,
    struct flow_rider *rider, char *err, size_t errlen)
{
	struct request *want[GROUP_MAX], *r;
	struct flow_extra x;
	uint64_t left = cy->opts->batch_size - cy->stats->claimed;
	enum db_status st;
	int64_t wait_ms = 0;
	size_t n = 0, i;
	int claimed = 0;

	for (r = group; r != NULL && n < GROUP_MAX && n < left; r = r->next) {
		new_token(cy, r);
		want[n++] = r;
	}
	memset(&x, 0, sizeof x);
	x.want = n - 1;
	for (i = 1; i < n; i++)
		x.tokens[i - 1] = want[i]->token;
	st = flow_claim(cy->opts->flow, cy->types, cy->ntypes,
	    cy->cfg->run.lock_seconds, want[0]->token, want[0]->job, &claimed,
	    &x, rider, &wait_ms, err, errlen);
	if (st == DB_CONFLICT && now_ms() < cy->deadline) {
		wait_ms = run_claim_conflict(cy, err);
		st = DB_OK;
	} else if (st == DB_OK) {
		cy->claim_conflicts = 0;
		if (!claimed && wait_ms > 0)
			run_held_say(cy, wait_ms);
	}
	/* A signal or the budget's end while the claim waited: the jobs
	 * taken for the other slots are given back, their attempts not
	 * spent; the first is run, as a claim of one slot would be. */
	if (st == DB_OK && x.got > 0 && run_wait_over(cy)) {
		i = x.got;
		st = flow_extra_release(cy->q, &x, err, errlen);
		if (st == DB_OK)
			log_msg(cy->lg, LV_DEBUG, "%zu job(s) claimed for "
			    "slots that did not start them given back", i);
	}
	if (st == DB_OK)
		keyed_hand_out(cy, want, n, claimed, &x, wait_ms);
	return st;
}

/* Serve a keyed run's group: its marks ride in its claims' transaction
 * when they may, else are written first in one of their own; and when
 * no claim's transaction was made to carry them, after. */
static void
group_serve_keyed(struct cycle *cy, struct request *group)
{
	struct keyed_write g = { .cy = cy, .group = group,
	    .mode = cy->group_conflicts >= GROUP_CONFLICTS_MAX ? SOLO : SHARED };
	struct queue_trx t = { keyed_marks, keyed_marks_undo,
	    keyed_marks_single, &g, QUEUE_CLAIM_RETRIES + 1, 0, 1 };
	struct flow_rider rider = { .write = keyed_marks,
	    .alone = keyed_marks_alone, .arg = &g };
	enum db_status st = DB_OK;
	struct request *r;
	char err[1024];
	int marks = 0;

	for (r = group; r != NULL; r = r->next)
		if (r->h != NULL) {
			marks = 1;
			/* Its key is free once its mark is written. */
			flow_job_done(cy->opts->flow, r->h->job->type,
			    r->h->job->id);
		}
	if (marks && !keyed_may_ride(cy, group)) {
		st = queue_trx(cy->q, &t, err, sizeof err);
		g.marked = st == DB_OK;
		marks = 0;
	}
	if (st == DB_OK && run_may_claim(cy))
		st = keyed_claims(cy, group, marks ? &rider : NULL, err,
		    sizeof err);
	if (st == DB_OK && marks && !rider.done && !rider.out) {
		st = queue_trx(cy->q, &t, err, sizeof err);
		g.marked = st == DB_OK;
	}
	if (st != DB_OK)
		run_failed(cy, st, err);
	/* Marks committed are counted and logged even when the claim
	 * failed after them, or a later mark of the group did. */
	if (cy->st == DB_OK || g.marked || rider.done)
		group_told(cy, group);
	else
		marked_told(cy, group);
}

/* Serve a group (the connection held): write its marks and make its
 * claims, committed together (the queue's transaction helper); then
 * count and log the marks.  A deadlock (or a Galera certification
 * failure) rolls the whole transaction back, and the group is written
 * again SOLO; one that lost its connection before the COMMIT is run
 * again as it was, and so is one whose COMMIT's answer was lost and that
 * the server did not keep (asked on the new connection by one of its
 * writes): a handler that finished is never run again for want of its
 * mark.  Any other error ends the run, as with one handler: the jobs
 * whose marks were not written wait for recovery. */
static void
serve(struct cycle *cy, struct request *group)
{
	struct group_write g = { .cy = cy, .group = group,
	    .mode = cy->group_conflicts >= GROUP_CONFLICTS_MAX ? SOLO : SHARED,
	    .claimed = cy->stats->claimed, .drained = cy->drained };
	struct queue_trx t = { group_body, group_undo, group_alone, &g,
	    QUEUE_CLAIM_RETRIES + 1, 0, 1 };
	enum db_status st;
	char err[1024];

	if (cy->st != DB_OK)
		return;		/* a database error ended the run */
	if (cy->keyed_grouped) {
		group_serve_keyed(cy, group);
		return;
	}
	st = queue_trx(cy->q, &t, err, sizeof err);
	if (st == DB_CONFLICT)
		st = serve_marks_alone(cy, &g, &t, err, sizeof err);
	else if (st == DB_OK && g.claims_stopped)
		claim_later(cy, group, g.stopped_cause);
	else if (st == DB_OK)
		cy->claim_conflicts = 0;
	if (st != DB_OK) {
		marked_told(cy, group);
		run_failed(cy, st, err);
		return;
	}
	group_told(cy, group);
}

/* Hand r to the connection and wait until it is served.  The first
 * slot to find no one serving serves every request pending up to its
 * own, group by group, with the connection, and then wakes the oldest
 * request left to serve the rest; the others wait to be told theirs was
 * served, each woken alone (a slot that waited for the connection itself
 * to learn that would wait behind the next group's statements, and
 * waking every slot for every group keeps two CPUs busy with slots that
 * only go back to sleep). */
static void
submit(struct cycle *cy, struct request *r)
{
	struct request *group, *g;
	int ours;

	r->next = NULL;
	pthread_mutex_lock(&cy->pending_mu);
	if (r->claimed)
		cy->returning--;
	r->claimed = r->read = r->done = r->marked = 0;
	r->claim_again_ms = 0;
	*cy->pending_tail = r;
	cy->pending_tail = &r->next;
	cy->npending++;
	if (cy->serving)
		pthread_cond_signal(&cy->gather);
	while (!r->done) {
		if (cy->serving) {
			pthread_cond_wait(&r->wake, &cy->pending_mu);
			continue;
		}
		cy->serving = 1;
		pthread_mutex_unlock(&cy->pending_mu);
		/* Without the connection (a database error ended the run),
		 * requests are done unserved: nothing claimed, nothing
		 * written; recovery takes the jobs back. */
		ours = connection_take(cy, 0) == 0;
		pthread_mutex_lock(&cy->pending_mu);
		while (!r->done) {
			gather(cy);
			group = join_held(cy, cut_pending(cy));
			pthread_mutex_unlock(&cy->pending_mu);
			if (ours)
				serve(cy, group);
			pthread_mutex_lock(&cy->pending_mu);
			for (g = group; g != NULL; g = g->next) {
				g->done = 1;
				cy->returning += g->claimed != 0;
				pthread_cond_signal(&g->wake);
			}
		}
		if (ours)
			connection_give(cy);
		/* The oldest request waiting is the next to serve. */
		cy->serving = 0;
		if (cy->pending != NULL)
			pthread_cond_signal(&cy->pending->wake);
	}
	pthread_mutex_unlock(&cy->pending_mu);
}

/* A request of a keyed run that flow control held back waits up to ms
 * (the budget's end at most) in cy->held, where the next group served
 * takes it along (join_held); at the end of its wait it is submitted
 * itself, and takes the others along: one try a wait for the run, and a
 * key freed by a job that ended is claimed at once.  In steps of a tenth
 * of a second: slot threads block signals. */
static void
wait_held(struct cycle *cy, struct request *r, int64_t ms)
{
	int64_t until = now_ms() + ms, left;

	pthread_mutex_lock(&cy->pending_mu);
	r->claimed = r->read = r->done = r->marked = 0;
	r->claim_again_ms = 0;
	r->next = cy->held;
	cy->held = r;
	r->held = 1;
	while (r->held && !run_wait_over(cy) && (left = until - now_ms()) > 0)
		cond_wait_ms(&r->wake, &cy->pending_mu, left < 100 ? left : 100);
	if (r->held) {
		struct request **p;

		for (p = &cy->held; *p != r; p = &(*p)->next)
			;
		*p = r->next;
		r->next = NULL;
		r->held = 0;
		pthread_mutex_unlock(&cy->pending_mu);
		submit(cy, r);
		return;
	}
	while (!r->done)
		pthread_cond_wait(&r->wake, &cy->pending_mu);
	pthread_mutex_unlock(&cy->pending_mu);
}

/* One slot of several: its mark and its next claim go to the connection
 * together, and share a commit with what other slots have ready. */
void
run_slot_grouped(struct cycle *cy, size_t slot)
{
	struct result *res = xcalloc(1, sizeof *res);
	struct request *r = xcalloc(1, sizeof *r);
	char tokens[2][QUEUE_TOKEN_MAX + 1];
	pthread_condattr_t cattr;
	int64_t held_ms = 0;
	struct job jobs[2];
	struct in_hand h;
	int cur = 0;

	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&r->wake, &cattr);
	pthread_condattr_destroy(&cattr);
	memset(jobs, 0, sizeof jobs);
	for (;;) {
		/* The job in hand is marked from jobs[cur ^ 1] while the
		 * next is claimed into jobs[cur]. */
		memset(&jobs[cur], 0, sizeof jobs[cur]);
		r->job = &jobs[cur];
		r->token = tokens[cur];
		if (held_ms > 0)
			wait_held(cy, r, held_ms);
		else
			submit(cy, r);
		held_ms = 0;
		if (r->h != NULL)
			queue_job_free(&jobs[cur ^ 1]);
		r->h = NULL;
		if (!r->claimed && r->claim_again_ms > 0 &&
		    !run_wait_over(cy) && cy->keyed_grouped) {
			held_ms = r->claim_again_ms;
			continue;
		}
		if (!r->claimed && r->claim_again_ms > 0 &&
		    !run_wait_over(cy)) {
			run_pause(cy, r->claim_again_ms);
			continue;
		}
		if (!r->claimed && run_idle(cy))
			continue;
		if (!r->claimed)
			break;
		run_idle_claimed(cy);
		r->ms = run_work(cy, slot, &jobs[cur], tokens[cur], &h, res);
		run_decide(cy->cfg, &h, res, &r->v);
		r->h = &h;
		cur ^= 1;
	}
	pthread_cond_destroy(&r->wake);
	free(r);
	free(res);
}
