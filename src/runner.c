/*
 * runner.c - the recover -> claim -> handle -> mark cycle.
 *
 * The runner owns the guarantees; handlers only report outcomes.  Recovery
 * runs first so a job stranded by a dead runner is due again before this
 * run claims.  Each job is claimed with a token unique to this claim, and
 * every later write is fenced by it, so a runner that stalled past its lock
 * and lost the job to another runner finds out and writes nothing.  While
 * a handler runs, its lock is extended every lock_seconds/3.  What becomes
 * of the job then is policy.c's verdict; run_outcome.c only applies it,
 * with one fenced write, and counts and logs it from one table.
 *
 * A database error ends the run: the job in hand stays "processing" under
 * our lock and recovery gives it back once the lock expires, which is safe;
 * guessing at a mark without the database is not.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fanin.h"
#include "policy.h"
#include "runner.h"
#include "runner_int.h"
#include "util.h"
#include "watchdog.h"

/* Signals received during the run, and the last one: the only state
 * shared with a signal handler.  Lock-free atomics, not just volatile:
 * every slot thread and the watchdog read them. */
static _Atomic int signals_received;
static _Atomic int last_signal;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2,
    "a signal handler may only touch lock-free atomics");

void
run_request_stop(int sig)
{
	if (signals_received < 2)
		signals_received++;
	last_signal = sig;
}

int
run_interrupted(void)
{
	return signals_received >= 2 ? 128 + last_signal : 0;
}

int
run_stop_requested(void)
{
	return signals_received > 0 ? 128 + last_signal : 0;
}

/* Take the connection; with try, only if no other slot has it.  -1 when
 * it would have to wait, or when a database error has ended the run: no
 * slot sends another statement then (each would wait out read_timeout
 * in turn on a server that stopped answering), and what a slot could not
 * write is left to recovery, as with one handler. */
int
connection_take(struct cycle *cy, int try)
{
	if (try) {
		if (pthread_mutex_trylock(&cy->mu) != 0)
			return -1;
	} else {
		cy->waiting++;
		pthread_mutex_lock(&cy->mu);
		cy->waiting--;
	}
	if (cy->st == DB_OK)
		return 0;
	pthread_mutex_unlock(&cy->mu);
	return -1;
}

void
connection_give(struct cycle *cy)
{
	pthread_mutex_unlock(&cy->mu);
}

/* "host:pid:random" - who holds a lock, readable in the table, unique per
 * run; a claim sequence number is appended per job, and the queue adds
 * "@" and the lock's end.  The host keeps only letters, digits, "." , "-"
 * and "_", so the token has the one shape queue.c knows as jobrun's. */
static void
make_token_prefix(char *out, size_t outlen)
{
	char host[64] = "localhost";
	unsigned char rnd[6] = { 0 };
	ssize_t n;
	char *h;

	if (gethostname(host, sizeof host - 1) != 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	for (h = host; *h != '\0'; h++)
		if (!isalnum((unsigned char)*h) && *h != '.' && *h != '-')
			*h = '_';
	do
		n = getrandom(rnd, sizeof rnd, 0);
	while (n < 0 && errno == EINTR);
	snprintf(out, outlen, "%.32s:%ld:%02x%02x%02x%02x%02x%02x", host,
	    (long)getpid(), rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
}

static int
watch_tick(void *arg)
{
	struct in_hand *h = arg;
	int64_t now = now_ms();
	enum db_status st;
	char err[512];
	int owned = 1;

	/* The first signal lets the handler finish; the second stops it. */
	if (signals_received >= 2) {
		h->interrupted = 1;
		return 1;
	}
	if (now - h->extended_at < (int64_t)h->lock_seconds * 1000 / 3)
		return 0;
	if (connection_take(h->cy, now - h->extended_at <
	    (int64_t)h->lock_seconds * 1000 / 2) != 0)
		return 0;	/* another slot has it: next tick */
	if (h->cy->ext_retry_at != 0 && (now < h->cy->ext_retry_at ||
	    h->cy->waiting > 0)) {
		connection_give(h->cy);
		return 0;
	}
	st = queue_extend(h->q, h->job, h->token, h->lock_seconds, &owned,
	    err, sizeof err);
	h->cy->ext_retry_at = st == DB_OK ? 0 : now_ms() +
	    ((int64_t)h->lock_seconds * 1000 / 6 > 1000 ?
	    (int64_t)h->lock_seconds * 1000 / 6 : 1000);
	connection_give(h->cy);
	if (st != DB_OK) {
		/* The lock still runs for a while; try again next tick. */
		log_msg(h->lg, LV_WARN, "job %llu: %s",
		    (unsigned long long)h->job->id, err);
		return 0;
	}
	h->extended_at = now;
	if (!owned) {
		log_msg(h->lg, LV_INFO, "job %llu (%s): lock lost while the "
		    "handler ran; stopping it", (unsigned long long)h->job->id,
		    h->job->type);
		h->lost = 1;
		return 1;
	}
	log_msg(h->lg, LV_DEBUG, "job %llu: lock extended by %lu s",
	    (unsigned long long)h->job->id, h->lock_seconds);
	return 0;
}

/* A checkpoint we will not store: say so now (a handler that goes on to
 * succeed would otherwise leave no trace of it) and to the handler. */
static int
refuse(const struct in_hand *h, char *err, size_t errlen, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static int
refuse(const struct in_hand *h, char *err, size_t errlen, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	log_msg(h->lg, LV_WARN, "job %llu (%s): checkpoint refused: %s",
	    (unsigned long long)h->job->id, h->job->type, err);
	return -1;
}

/* The handler reports progress: store it as written (which also renews
 * the lock) if the server takes it as JSON, and remember that this
 * attempt got somewhere. */
static int
watch_checkpoint(void *arg, const char *text, size_t len, char *err,
    size_t errlen)
{
	struct in_hand *h = arg;
	char cause[512];
	enum db_status st;
	int owned = 1, valid = 1;

	if (!h->job->resumable)
		return refuse(h, err, errlen, "the table has no checkpoint "
		    "column (apply sql/002_checkpoint.sql)");
	if (len > CHECKPOINT_MAX)
		return refuse(h, err, errlen, "over %d bytes", CHECKPOINT_MAX);
	if (connection_take(h->cy, 0) != 0)
		return refuse(h, err, errlen, "a database error ended the run");
	st = queue_checkpoint(h->q, h->job, h->token, text, len,
	    h->lock_seconds, &owned, &valid, cause, sizeof cause);
	connection_give(h->cy);
	if (st != DB_OK)
		return refuse(h, err, errlen, "%s", cause);
	if (!owned) {
		h->lost = 1;
		return 1;
	}
	if (!valid)
		return refuse(h, err, errlen, "not valid JSON (the server's "
		    "JSON_VALID refuses it)");
	h->extended_at = now_ms();
	/* The same checkpoint again is no progress: it must not buy an
	 * endless run of free snoozes. */
	if (h->job->checkpoint == NULL || h->job->checkpoint_len != len ||
	    memcmp(text, h->job->checkpoint, len) != 0)
		h->progress = 1;
	free(h->job->checkpoint);
	h->job->checkpoint = xstrndup(text, len);
	h->job->checkpoint_len = len;
	log_msg(h->lg, LV_DEBUG, "job %llu: checkpoint saved",
	    (unsigned long long)h->job->id);
	return 0;
}

/* A handler's reply, read by the server's JSON functions. */
static int
watch_read_reply(void *arg, const char *text, size_t len, struct reply *out,
    char *err, size_t errlen)
{
	struct in_hand *h = arg;
	enum db_status st;

	if (connection_take(h->cy, 0) != 0) {
		snprintf(err, errlen, "a database error ended the run");
		return -1;
	}
	st = queue_read_reply(h->q, text, len, out, err, errlen);
	connection_give(h->cy);
	return st == DB_OK ? 0 : -1;
}

static void
watch_guard(void *arg, pid_t pgid, int64_t deadline)
{
	struct in_hand *h = arg;

	if (h->watchdog != NULL)
		watchdog_guard(h->watchdog, h->slot, pgid, deadline);
}

static void
watch_say(void *arg, const char *what)
{
	struct in_hand *h = arg;

	log_msg(h->lg, LV_WARN, "job %llu (%s): %s",
	    (unsigned long long)h->job->id, h->job->type, what);
}

static int
watch_guarded(void *arg)
{
	struct in_hand *h = arg;
	int fired = h->watchdog != NULL ? watchdog_fired(h->watchdog, h->slot) :
	    0;

	if (fired & WATCHDOG_STOPPED)
		h->interrupted = 1;
	return fired;
}

/* A payload the server does not take as JSON is the job's fault, not the
 * handler's. */
static int
payload_ok(const struct job *job, struct result *res)
{
	if (job->payload_valid)
		return 1;
	result_set(res, OUTCOME_FAIL, "payload is not valid JSON (the "
	    "server's JSON_VALID refuses it)", NULL, 0);
	return 0;
}

/* Whether the job was claimed after its deadline: its own (sql/009's
 * column), or its type's, counted from created_at; both by the server's
 * clock, in whole seconds, the deadline itself still in time. */
static int
deadline_passed(const struct cfg_type *type, const struct job *job)
{
	return job->deadline_left_s < 0 || (type->deadline != 0 &&
	    job->age_s >= 0 && (uint64_t)job->age_s > type->deadline);
}

static void
handle(const struct cfg_type *type, struct in_hand *h, struct result *res)
{
	struct handler_watch watch = { watch_tick, watch_checkpoint,
	    watch_read_reply, watch_guard, watch_guarded, watch_say, h };

	if (deadline_passed(type, h->job)) {
		/* Not run: a late start is worth nothing to this job. */
		result_set(res, OUTCOME_FAIL, QUEUE_DEADLINE_PASSED, NULL, 0);
		h->expired = 1;
		return;
	}
	if (!payload_ok(h->job, res))
		return;
	type->kind->run(type->handler, h->job, &watch, res);
	/* A handler that had already exited 0 when the lock was found lost
	 * keeps its success: the write is refused by the token, and the log
	 * says what was not recorded. */
	if (h->lost && res->outcome != OUTCOME_SUCCESS)
		res->outcome = OUTCOME_ABANDONED;
}

/* Decide what becomes of the job: policy.c's verdict. */
void
run_decide(const struct cfg *cfg, const struct in_hand *h,
    const struct result *res, struct verdict *v)
{
	const struct job *job = h->job;
	const struct cfg_type *t = cfg_find_type(cfg, job->type);
	const struct policy_in in = {
		.outcome = res->outcome, .retry_after = res->retry_after,
		.message = res->message, .secrets = res->secrets,
		.attempt = job->attempt, .max_attempts = job->max_attempts,
		.snoozes = job->snoozes, .resumable = job->resumable,
		.progress = h->progress, .interrupted = h->interrupted,
		.signo = last_signal, .setup = res->setup,
		.backoff_base = cfg->run.backoff_base,
		.backoff_cap = cfg->run.backoff_cap,
		.max_snoozes = cfg->run.max_snoozes,
		.backoff_jitter = t != NULL && t->jitter_set ?
		    t->backoff_jitter : cfg->run.backoff_jitter,
		.draw = arc4random(),
	};

	policy_decide(&in, v);
}

/* The watchdog, started before the run's first statement (a second
 * signal must be heeded even while the first claim waits on a frozen
 * server); a run that cannot start it goes on without. */
static void
guard(struct cycle *cy)
{
	if (cy->guard_tried)
		return;
	cy->guard_tried = 1;
	cy->guarded = watchdog_start(&cy->watchdog, cy->db,
	    cy->opts->jobs > 0 ? cy->opts->jobs : 1, run_interrupted) == 0;
	if (!cy->guarded)
		log_msg(cy->lg, LV_WARN, "start the watchdog thread: %s; "
		    "handler timeouts wait for the database",
		    strerror(errno));
}

/* A database error ends the run: the first one is what it reports. */
void
run_failed(struct cycle *cy, enum db_status st, const char *err)
{
	if (cy->st != DB_OK)
		return;
	cy->st = st;
	snprintf(cy->err, sizeof cy->err, "%s", err);
}

int
run_may_go_on(const struct cycle *cy)
{
	return cy->st == DB_OK && signals_received == 0 &&
	    !queue_single_lost(cy->q) &&
	    cy->stats->claimed < cy->opts->batch_size &&
	    now_ms() < cy->deadline;
}

/* Whether the run may claim another job (the connection held). */
int
run_may_claim(const struct cycle *cy)
{
	return !cy->drained && run_may_go_on(cy);
}

/* Claim the run's next job into job and token (the connection held),
 * if the run may claim another; *claimed says whether one was. */
static enum db_status
claim_one(struct cycle *cy, struct job *job, char *token, size_t tokenlen,
    int *claimed, char *err, size_t errlen)
{
	enum db_status st;

	*claimed = 0;
	if (!run_may_claim(cy))
		return DB_OK;
	snprintf(token, tokenlen, "%s:%llu", cy->prefix,
	    (unsigned long long)cy->stats->claimed + 1);
	st = queue_claim(cy->q, cy->types, cy->ntypes,
	    cy->cfg->run.lock_seconds, token, job, claimed, err, errlen);
	if (st == DB_OK && !*claimed)
		cy->drained = 1;
	else if (st == DB_OK)
		cy->stats->claimed++;
	return st;
}

/* Another program's transactions on the table deadlocked the claim
 * QUEUE_CLAIM_RETRIES times running: outlast it within the run's budget,
 * backing off longer each time, rather than hand the jobs to the next
 * run.  The wait after the nth time running: 100 ms doubled each time,
 * at most 1.6 s, and up to a tenth more at random so that two runners do
 * not come back in step. */
int64_t
run_claim_conflict(struct cycle *cy, const char *err)
{
	unsigned n = cy->claim_conflicts++;
	int64_t ms = (int64_t)100 << (n < 4 ? n : 4);

	ms += now_ms() % (ms / 10 + 1);
	log_msg(cy->lg, LV_INFO, "%s; claiming again in %lld ms", err,
	    (long long)ms);
	return ms;
}

/* Seconds a job's lock must outlast the claim's longest wait for its
 * outcome to ride in it: a late clock, a slow COMMIT. */
#define RIDE_LOCK_MARGIN_S 5

int
run_ride_ok(const struct cycle *cy, const struct in_hand *h)
{
	int64_t left_s = ((int64_t)h->lock_seconds * 1000 -
	    (now_ms() - h->extended_at)) / 1000 - RIDE_LOCK_MARGIN_S;

	return !queue_galera(cy->q) && left_s > 0 &&
	    queue_lock_wait_seconds(cy->q) < (unsigned long)left_s;
}

/* Whether fin's outcome may ride in the slot's claim (flow_rider): only
 * into a limited claim's transaction, when the run claims on.  Not on
 * Galera, where a replicated write may roll the transaction back under
 * the outcome and have the claim run on its own (flow.c).  Nor when the
 * job's lock, no longer extended, could expire while the claim waits
 * for a control row (one innodb_lock_wait_timeout at most, flow_rider):
 * recovery could then give the job back as its outcome is written. */
static int
may_ride(struct cycle *cy, const struct finished *fin)
{
	return cy->opts->flow != NULL && cy->ahead.n == 0 &&
	    run_may_claim(cy) && run_ride_ok(cy, &fin->h);
}

/* The first time flow control holds the run's claims back (a type at its
 * cap or rate, every due job's key busy), -v says so, once: from then on
 * the run waits, and a wait's cost is its looks (flow.c). */
void
run_held_say(struct cycle *cy, int64_t wait_ms)
{
	if (cy->held_said)
		return;
	cy->held_said = 1;
	log_msg(cy->lg, LV_INFO, "flow control holds the claims back (a cap, "
	    "a rate or a busy key): trying again in %lld ms",
	    (long long)wait_ms);
}

/* Claim the run's next job for a slot: 1 with job and token filled in,
 * 0 when the run claims no more (its budget spent, a signal, nothing
 * due, a database error) or, with *wait_ms > 0, none now (flow control
 * held every due type back).  fin, when pending, is the slot's finished
 * job: its outcome is written here, in the claim's transaction or alone
 * before it. */
static int
claim_once(struct cycle *cy, struct job *job, char *token, size_t tokenlen,
    struct finished *fin, int64_t *wait_ms)
{
	struct flow_rider rider = { .write = finished_write,
	    .alone = finished_rolled_back, .arg = fin };
	struct flow_extra extra;
	enum db_status st = DB_OK;
	char err[1024];
	int claimed = 0;

	*wait_ms = 0;
	if (connection_take(cy, 0) != 0)
		return 0;
	if (fin != NULL && fin->pending) {
		/* Its place and its key are free once the outcome is written
		 * (below, or in the claim's transaction, before its choice). */
		if (cy->opts->flow != NULL)
			flow_job_done(cy->opts->flow, fin->h.job->type,
			    fin->h.job->id);
		if (!may_ride(cy, fin))
			finished_alone(cy, fin);
	}
	if (cy->opts->flow != NULL && run_ahead_take(cy, job, token,
	    tokenlen))
		claimed = 1;
	else if (cy->opts->flow != NULL && run_may_claim(cy)) {
		/* flow control hook: caps, rates and pauses */
		snprintf(token, tokenlen, "%s:%llu", cy->prefix,
		    (unsigned long long)cy->stats->claimed + 1);
		run_ahead_want(cy, &extra);
		st = flow_claim(cy->opts->flow, cy->types, cy->ntypes,
		    cy->cfg->run.lock_seconds, token, job, &claimed, &extra,
		    fin != NULL && fin->pending ? &rider : NULL, wait_ms, err,
		    sizeof err);
		if (st == DB_OK && claimed) {
			cy->stats->claimed++;
			run_ahead_keep(cy, &extra);
		}
		else if (st == DB_OK && *wait_ms == 0)
			cy->drained = 1;
		else if (st == DB_OK)
			run_held_say(cy, *wait_ms);
	} else if (cy->opts->flow == NULL)
		st = claim_one(cy, job, token, tokenlen, &claimed, err,
		    sizeof err);
	if (st != DB_OK && st != DB_CONFLICT)
		run_failed(cy, st, err);
	/* The outcome rode in the claim's transaction; or none was made, or
	 * it failed: written alone now, so that no finished job waits for
	 * recovery because the claim could not be made. */
	if (fin != NULL && fin->pending && rider.done)
		finished_told(cy, fin);
	else if (fin != NULL && fin->pending)
		finished_alone(cy, fin);
	if (st == DB_CONFLICT && now_ms() < cy->deadline) {
		*wait_ms = run_claim_conflict(cy, err);
		st = DB_OK;
	} else if (st == DB_OK)
		cy->claim_conflicts = 0;
	/* A claim whose row could not be read is not run: the job keeps
	 * its lock until recovery takes it. */
	if (st != DB_OK) {
		run_failed(cy, st, err);
		claimed = 0;
	} else
		cy->ext_retry_at = 0;
	connection_give(cy);
	return claimed;
}

/* In steps of a tenth of a second: slot threads block signals. */
void
run_pause(const struct cycle *cy, int64_t ms)
{
	int64_t until = now_ms() + ms, left;
	struct timespec ts;

	if (until > cy->deadline)
		until = cy->deadline;
	while (!run_stop_requested() && (left = until - now_ms()) > 0) {
		if (left > 100)
			left = 100;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		nanosleep(&ts, NULL);
	}
}

void
cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *mu, int64_t ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(cond, mu, &until);
}

int
run_wait_over(const struct cycle *cy)
{
	return run_stop_requested() || now_ms() >= cy->deadline;
}

/* The trying slot, held back: wait wait_ms (the budget's end at most).
 * In steps of a tenth of a second: slot threads block signals, and must
 * see a stop that soon.  flow_mu held but while it waits, so that no
 * other slot takes the turn meanwhile. */
static void
flow_hold(struct cycle *cy, int64_t wait_ms)
{
	int64_t until = now_ms() + wait_ms, left;

	if (until > cy->deadline)
		until = cy->deadline;
	while (!run_stop_requested() && (left = until - now_ms()) > 0)
		cond_wait_ms(&cy->flow_turn, &cy->flow_mu, left < 100 ?
		    left : 100);
}

/* flow control hook: a type held back by its cap or rate while it has
 * due jobs is tried again later in the run, not taken for drained.  One
 * slot of the run tries at a time and waits out the hold; the others
 * wait for it.  So a full type costs the server one try per run and per
 * wait, however many of the run's slots want a job.  A slot that has
 * just finished a job (after_job) tries once at once, out of turn: the
 * place its job held is free, and it takes it again itself, with no
 * other thread to wake. */
static int
claim_in_turn(struct cycle *cy, struct job *job, char *token,
    size_t tokenlen, struct finished *fin)
{
	int64_t wait_ms;
	int claimed;

	if (fin != NULL) {
		claimed = claim_once(cy, job, token, tokenlen, fin, &wait_ms);
		if (claimed || wait_ms == 0 || run_wait_over(cy))
			return claimed;
	}
	for (;;) {
		pthread_mutex_lock(&cy->flow_mu);
		while (cy->flow_trying && !run_wait_over(cy))
			cond_wait_ms(&cy->flow_turn, &cy->flow_mu, 100);
		if (cy->flow_trying) {
			pthread_mutex_unlock(&cy->flow_mu);
			return 0;
		}
		cy->flow_trying = 1;
		pthread_mutex_unlock(&cy->flow_mu);
		claimed = claim_once(cy, job, token, tokenlen, NULL,
		    &wait_ms);
		pthread_mutex_lock(&cy->flow_mu);
		if (!claimed && wait_ms > 0)
			flow_hold(cy, wait_ms);
		cy->flow_trying = 0;
		pthread_cond_broadcast(&cy->flow_turn);
		pthread_mutex_unlock(&cy->flow_mu);
		if (claimed || wait_ms == 0 || run_wait_over(cy))
			return claimed;
	}
}

/* The slot's next job; with flow control, the slots that want one are
 * counted, and a claim takes jobs ahead for the others (run_ahead.c).
 * fin (or NULL) is the job the slot finished: its outcome is written by
 * the first claim. */
static int
claim_next(struct cycle *cy, struct job *job, char *token, size_t tokenlen,
    struct finished *fin)
{
	int64_t wait_ms;
	int claimed;

	if (cy->opts->flow == NULL) {
		while (!(claimed = claim_once(cy, job, token, tokenlen, fin,
		    &wait_ms)) && wait_ms > 0 && !run_wait_over(cy))
			run_pause(cy, wait_ms);
		return claimed;
	}
	cy->claiming++;
	claimed = claim_in_turn(cy, job, token, tokenlen, fin);
	cy->claiming--;
	return claimed;
}

/* Run the handler of a job claimed for slot, into res; returns the
 * milliseconds it took.  h is filled in for the job's mark. */
int64_t
run_work(struct cycle *cy, size_t slot, struct job *job, const char *token,
    struct in_hand *h, struct result *res)
{
	const struct cfg_type *type;
	int64_t start;

	*h = (struct in_hand){ .cy = cy, .slot = slot, .q = cy->q, .job = job,
	    .token = token, .lg = cy->lg,
	    .lock_seconds = cy->cfg->run.lock_seconds,
	    .watchdog = cy->guarded ? &cy->watchdog : NULL };
	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	h->res = res;
	start = h->extended_at = now_ms();
	type = cfg_find_type(cy->cfg, job->type);
	res->secrets = &cy->secrets;
	if (type == NULL) {
		/* Only configured types are claimed; a row whose type changed
		 * under us is not ours to run. */
		result_set(res, OUTCOME_FAIL, "no handler configured for type",
		    job->type, strlen(job->type));
	} else
		handle(type, h, res);
	return h->ms = now_ms() - start;
}

/* One slot: claim, handle and mark jobs until the run claims no more.
 * The job in hand is run from jobs[cur], and its outcome written by the
 * claim of the next into jobs[cur ^ 1] (claim_once). */
static void
run_slot(struct cycle *cy, size_t slot)
{
	char tokens[2][QUEUE_TOKEN_MAX + 1];
	struct finished fin;
	struct job jobs[2];
	int cur = 0, claimed;

	memset(&fin, 0, sizeof fin);
	memset(jobs, 0, sizeof jobs);
	fin.res = xcalloc(1, sizeof *fin.res);
	for (;;) {
		memset(&jobs[cur], 0, sizeof jobs[cur]);
		claimed = claim_next(cy, &jobs[cur], tokens[cur],
		    sizeof tokens[cur], fin.h.job != NULL ? &fin : NULL);
		/* The job before is written (claim_once): done with. */
		if (fin.h.job != NULL)
			queue_job_free(&jobs[cur ^ 1]);
		if (!claimed) {
			fin.h.job = NULL;
			if (run_idle(cy))
				continue;
			break;
		}
		run_idle_claimed(cy);
		fin.h.ms = run_work(cy, slot, &jobs[cur], tokens[cur], &fin.h,
		    fin.res);
		run_decide(cy->cfg, &fin.h, fin.res, &fin.v);
		fin.pending = 1;
		cur ^= 1;
	}
	free(fin.res);
}

/* A slot of the run: alone, each claim and each outcome its own
 * statement; or with a cap, rate or key among the run's types, whose
 * claims are transactions of their own, judged type by type, each
 * outcome written in the next claim's (claim_once); else shared commits
 * with the other slots.  With the attempt history on, a slot alone
 * shares them too: its outcome and its row need a transaction anyway,
 * and the next claim in it saves a commit a job. */
static void
run_any_slot(struct cycle *cy, size_t slot)
{
	if ((cy->opts->jobs <= 1 && !cy->history) ||
	    (cy->flow_limited && !cy->keyed_grouped))
		run_slot(cy, slot);
	else
		run_slot_grouped(cy, slot);
}

struct slot_thread {
	pthread_t thread;
	struct cycle *cy;
	size_t slot;
};

static void *
slot_main(void *arg)
{
	struct slot_thread *t = arg;

	run_any_slot(t->cy, t->slot);
	return NULL;
}

/* A slot's stack: its deepest path (a handler's output drained into a
 * 16 kB buffer, a log line, a statement through libmariadb) needs a
 * fraction of this, even under ASan; the default (8 MB, RLIMIT_STACK)
 * would have 256 slots reserve 2 GB of address space. */
#define SLOT_STACK_BYTES (1024 * 1024)

/* Start slots 1..n-1 as threads (slot 0 is the caller's); returns how
 * many started.  They block every signal: signals are the main thread's,
 * and each slot sees their effect within its handler's next tick. */
static size_t
start_slots(struct cycle *cy, struct slot_thread *t, size_t n)
{
	pthread_attr_t attr;
	sigset_t all, saved;
	size_t i;
	int rc = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SLOT_STACK_BYTES);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	for (i = 1; i < n; i++) {
		t[i] = (struct slot_thread){ .cy = cy, .slot = i };
		if ((rc = pthread_create(&t[i].thread, &attr, slot_main,
		    &t[i])) != 0)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	pthread_attr_destroy(&attr);
	if (i < n)
		log_msg(cy->lg, LV_WARN, "--jobs=%zu: only %zu handler slot(s) "
		    "started: %s", n, i, strerror(rc));
	return i;
}

/* Claim, handle and mark jobs in every slot until the run claims no
 * more and the jobs in hand are done. */
static void
run_slots(struct cycle *cy, size_t n)
{
	struct slot_thread *t = xcalloc(n, sizeof *t);
	size_t started = start_slots(cy, t, n), i;

	run_any_slot(cy, 0);
	for (i = 1; i < started; i++)
		pthread_join(t[i].thread, NULL);
	run_ahead_release(cy);
	free(t);
}

/* What no message of this run may show: the database password and the
 * secrets of every type, not only those it may run (a handler of one
 * inherits the environment that holds another's). */
static void
collect_secrets(const struct cfg *cfg, struct secrets *out)
{
	const struct cfg_type *t;
	size_t i;

	secrets_add(out, cfg->db.password);
	for (i = 0; i < cfg->ntypes; i++) {
		t = &cfg->types[i];
		if (t->kind->secrets != NULL)
			t->kind->secrets(t->handler, out);
	}
}

/* Settings the operator must not forget, such as TLS verification off. */
static void
warn_types(const struct cfg *cfg, const char *const *types, size_t ntypes,
    const struct log *lg)
{
	const struct cfg_type *t;
	const char *warning;
	size_t i;

	for (i = 0; i < ntypes; i++) {
		t = cfg_find_type(cfg, types[i]);
		if (t != NULL && t->kind->warning != NULL &&
		    (warning = t->kind->warning(t->handler)) != NULL)
			log_msg(lg, LV_WARN, "[type.%s]: %s", t->name,
			    warning);
	}
}

/* The run's state: its types (opts->types), counters, locks and the condition variables its slots wait on. */
static struct cycle *
cycle_new(const struct cfg *cfg, struct db *db, struct queue *q,
    const struct run_opts *opts, const struct log *lg,
    struct run_stats *stats, int64_t start)
{
	struct cycle *cy = xcalloc(1, sizeof *cy);
	enum flow_limits limits;
	pthread_condattr_t cattr;
	const char **types;
	size_t ntypes = 0, i;

	memset(stats, 0, sizeof *stats);
	ntypes = opts->ntypes;
	types = xcalloc(ntypes + 1, sizeof *types);
	memcpy(types, opts->types, ntypes * sizeof *types);
	stats->by_type = xcalloc(ntypes, sizeof *stats->by_type);
	for (i = 0; i < ntypes; i++)
		stats->by_type[i].type = types[i];
	stats->ntypes = ntypes;
	*cy = (struct cycle){ .cfg = cfg, .q = q, .types = types,
	    .ntypes = ntypes, .lg = lg, .db = db, .stats = stats,
	    .opts = opts, .deadline = start +
	    (int64_t)opts->max_seconds * 1000 };
	pthread_mutex_init(&cy->mu, NULL);
	pthread_mutex_init(&cy->pending_mu, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&cy->gather, &cattr);
	pthread_mutex_init(&cy->flow_mu, NULL);
	pthread_cond_init(&cy->flow_turn, &cattr);
	pthread_mutex_init(&cy->idle_mu, NULL);
	pthread_cond_init(&cy->idle_wake, &cattr);
	pthread_condattr_destroy(&cattr);
	cy->idle_work_ms = start;
	cy->idle_minute = -1;
	cy->pending_tail = &cy->pending;
	cy->claim_types = xcalloc(ntypes, sizeof *cy->claim_types);
	cy->nclaim = ntypes;
	memcpy(cy->claim_types, types, ntypes * sizeof *types);
	limits = opts->flow != NULL ? flow_limits_of(opts->flow, types,
	    ntypes) : FLOW_UNLIMITED;
	cy->flow_limited = limits != FLOW_UNLIMITED;
	cy->keyed_grouped = limits == FLOW_KEYED_ONLY && opts->jobs > 1;
	make_token_prefix(cy->prefix, sizeof cy->prefix);
	warn_types(cfg, types, ntypes, lg);
	collect_secrets(cfg, &cy->secrets);
	return cy;
}

static void
cycle_free(struct cycle *cy)
{
	if (cy->guarded)
		watchdog_stop(&cy->watchdog);
	pthread_mutex_destroy(&cy->mu);
	pthread_mutex_destroy(&cy->pending_mu);
	pthread_cond_destroy(&cy->gather);
	pthread_mutex_destroy(&cy->flow_mu);
	pthread_cond_destroy(&cy->flow_turn);
	pthread_mutex_destroy(&cy->idle_mu);
	pthread_cond_destroy(&cy->idle_wake);
	free(cy->claim_types);
	free((void *)cy->types);
	secrets_free(&cy->secrets);
	free(cy);
}

enum db_status
run_cycle(const struct cfg *cfg, struct db *db, struct queue *q,
    const struct run_opts *opts, const struct log *lg,
    struct run_stats *stats, char *err, size_t errlen)
{
	int64_t start = now_ms();
	struct cycle *cy = cycle_new(cfg, db, q, opts, lg, stats, start);
	uint64_t scheduled = 0, recovered = 0;
	struct fanin fanin;
	enum db_status st;

	guard(cy);
	fanin_open(&fanin, q, lg);
	cy->fanin = &fanin;
	cy->attempts = attempts_open(q);
	/* A table that lacks what the run needs stops it here, before any
	 * row is touched. */
	st = queue_prepare_run(q, cy->ntypes, err, errlen);
	if (st == DB_OK)
		st = attempts_probe(cy->attempts, 1, &cy->history, err,
		    errlen);
	if (st == DB_OK)
		st = run_recover(cy, &recovered, err, errlen);
	/* Due slots of [schedule.NAME] become jobs before the first claim,
	 * so this run can already take them (schedule.c); fan-ins a killed
	 * runner left complete fire now (fan-in hook). */
	if (st == DB_OK)
		st = run_schedules(cy, &scheduled, err, errlen);
	if (st == DB_OK)
		run_retention(cy);
	if (st == DB_OK) {
		run_slots(cy, opts->jobs > 0 ? opts->jobs : 1);
		if ((st = cy->st) != DB_OK)
			snprintf(err, errlen, "%s", cy->err);
	}
	if (signals_received > 0)
		log_msg(lg, LV_WARN, "stopped on signal %d", last_signal);
	if (queue_single_lost(q))
		log_msg(lg, LV_WARN, "stopped: the connection was lost and "
		    "another runner took the --single lock %s",
		    opts->single_lock != NULL ? opts->single_lock : "");
	attempts_close(cy->attempts);
	cycle_free(cy);
	fanin_close(&fanin);
	stats->elapsed_ms = now_ms() - start;
	return st;
}
