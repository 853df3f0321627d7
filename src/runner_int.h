/*
 * runner_int.h - what runner.c and group.c (the --jobs group commits)
 * share, and nobody else: the run's state and the steps of a job.
 */
#ifndef JOBRUN_RUNNER_INT_H
#define JOBRUN_RUNNER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "attempts.h"
#include "fanin.h"
#include "flow.h"
#include "policy.h"
#include "runner.h"
#include "watchdog.h"

struct request;

/* Jobs claimed for slots waiting to claim (run_ahead.c); the connection
 * guards it. */
struct run_ahead {
	size_t n;
	struct job jobs[FLOW_EXTRA_MAX];
	char tokens[FLOW_EXTRA_MAX][QUEUE_TOKEN_MAX + 1];
	char next[FLOW_EXTRA_MAX][QUEUE_TOKEN_MAX + 1];	/* a claim's */
};

/* What one run works with, for each of its jobs.  Its slots (--jobs)
 * share the one connection, and with it the queue, the counters and the
 * claim sequence: mu guards them all, and a slot holds it only for a
 * statement, never while its handler runs. */
struct cycle {
	const struct cfg *cfg;
	struct queue *q;
	const char *const *types;
	size_t ntypes;
	struct secrets secrets;
	const struct log *lg;
	struct db *db;
	struct watchdog watchdog;
	int guarded;		/* the watchdog runs */
	int guard_tried;	/* it was started, or could not be */
	struct run_stats *stats;
	const struct run_opts *opts;
	int64_t deadline;	/* now_ms() the time budget ends */
	char prefix[64];	/* of every claim token of the run */
	uint64_t tokens_made;	/* grouped claims' tokens: PREFIX:N, N from 1 */
	pthread_mutex_t mu;
	int drained;		/* a claim found nothing due */
	/* After a lock extension failed, none is tried before this (now_ms;
	 * 0: none failed since the last statement that went through), nor
	 * while a slot waits to claim or to write an outcome: on a server
	 * that stopped answering, every try holds the connection for
	 * read_timeout, and slots must not queue their tries in front of
	 * the statements that end the run. */
	int64_t ext_retry_at;
	_Atomic int waiting;	/* slots waiting for the connection */
	struct fanin *fanin;	/* fan-in work on the connection */
	struct attempts *attempts;	/* the history table, or NULL */
	int history;		/* each outcome writes its attempt's row */
	enum db_status st;	/* the first database error: the run ends */
	char err[1024];
	/* What slots have ready for the connection (--jobs above 1): each
	 * waits for whichever slot gets it first to serve them all, in one
	 * transaction.  pending_mu guards the list alone. */
	pthread_mutex_t pending_mu;
	int serving;		/* a slot serves the pending requests */
	size_t npending;	/* requests in pending */
	size_t returning;	/* slots given a job, not back with its verdict */
	pthread_cond_t gather;	/* a request joined pending */
	unsigned group_conflicts;	/* transactions rolled back by one */
	struct request *pending, **pending_tail;
	struct request *held;	/* keyed, held back (group.c's wait_held) */
	/* flow control: one slot of the run tries a claim at a time while
	 * the run's types are held back; the others wait on flow_turn.
	 * flow_mu guards flow_trying. */
	pthread_mutex_t flow_mu;
	pthread_cond_t flow_turn;
	int flow_trying;
	int held_said;		/* the log says flow control held claims back */
	_Atomic int claiming;	/* slots in claim_next */
	struct run_ahead ahead;
	unsigned claim_conflicts;	/* claims given up on a deadlock, in a row */
	/* flow control with no cap or rate among the run's types: slots
	 * share commits as without it, and each group's claims take the
	 * types not paused when it began (read into claim_types). */
	int flow_limited;
	/* of them, every limited type keyed (flow_keyed_only): the slots'
	 * group commits carry the claims (group.c) */
	int keyed_grouped;
	const char **claim_types;
	size_t nclaim;
	/* --wait (idle.c): slots with nothing to claim sleep on idle_wake
	 * while one of them watches the table.  idle_mu guards the idle_
	 * fields but idle_minute, the watcher's own (the connection held). */
	pthread_mutex_t idle_mu;
	pthread_cond_t idle_wake;
	int idle_watching;	/* a slot watches */
	int idle_said;		/* the log says the run waits */
	int idle_over;		/* the watcher saw the run end */
	int idle_false_due;	/* the last work seen was not claimed yet */
	size_t idle_sleepers;	/* slots asleep on idle_wake */
	size_t idle_wakes;	/* of them, woken to claim */
	int64_t idle_work_ms;	/* now_ms() the run last claimed a job */
	int64_t idle_minute;	/* the server's minute of the last look */
	int64_t idle_types_ms;	/* now_ms() paused types were last read */
};

/* The runner's view of the job being handled in one slot, for the watch
 * tick. */
struct in_hand {
	struct cycle *cy;	/* its mutex guards the connection */
	size_t slot;
	struct queue *q;
	struct job *job;
	const char *token;
	const struct log *lg;
	unsigned long lock_seconds;
	int64_t extended_at;
	int lost;
	int interrupted;	/* a second signal stopped the handler */
	int progress;		/* a checkpoint was saved in this attempt */
	int expired;		/* claimed past its deadline, not run */
	const struct result *res;	/* what the handler reported */
	int64_t ms;		/* the handler's time */
	struct watchdog *watchdog;	/* NULL when it could not start */
};

/* The connection held: a job claimed ahead for the slot into job and
 * token, 1 if there was one and the run may start it. */
int run_ahead_take(struct cycle *cy, struct job *job, char *token,
                   size_t tokenlen);
/* How many jobs a claim may take ahead for the slots waiting (x->want),
 * and their tokens; keep those it took (x->got). */
void run_ahead_want(struct cycle *cy, struct flow_extra *x);
void run_ahead_keep(struct cycle *cy, struct flow_extra *x);
/* The slots done: give back the jobs claimed ahead that none started. */
void run_ahead_release(struct cycle *cy);

/* Whether h's outcome may ride in a limited claim's transaction, as far
 * as its lock goes: not on Galera, and not when the lock, no longer
 * extended, could expire while the claim waits for a control row. */
int run_ride_ok(const struct cycle *cy, const struct in_hand *h);

/* Take the connection; with try, only if no other slot has it.  -1 when
 * it would have to wait, or when a database error has ended the run. */
int connection_take(struct cycle *cy, int try);
void connection_give(struct cycle *cy);

/* A database error ends the run: the first one is what it reports. */
void run_failed(struct cycle *cy, enum db_status st, const char *err);
/* Whether the run may claim another job (the connection held). */
int run_may_claim(const struct cycle *cy);
/* The same but for having found nothing due: no error, no signal, the
 * --single lock held, the budgets not spent. */
int run_may_go_on(const struct cycle *cy);
/* Give back jobs whose lock expired, counted and logged; *n of them. */
/* Delete a batch of the finished rows past their keep (retention.c);
 * errors are warnings. */
void run_retention(struct cycle *cy);
enum db_status run_recover(struct cycle *cy, uint64_t *n, char *err,
                           size_t errlen);
/* The schedules' due slots as jobs (*created of them), and the fan-ins a
 * killed runner left complete. */
enum db_status run_schedules(struct cycle *cy, uint64_t *created, char *err,
                             size_t errlen);
/* The claims gave up on a deadlock (err says why; the connection held):
 * how long to wait before claiming again, longer each time in a row,
 * logged with err. */
int64_t run_claim_conflict(struct cycle *cy, const char *err);
void run_held_say(struct cycle *cy, int64_t wait_ms);
/* Sleep ms, or until a stop or the end of the budget. */
void run_pause(const struct cycle *cy, int64_t ms);
/* Whether a slot waiting to claim stops waiting: a signal, or the time
 * budget spent. */
int run_wait_over(const struct cycle *cy);
/* Run the handler of a job claimed for slot, into res; returns the
 * milliseconds it took.  h is filled in for the job's mark. */
int64_t run_work(struct cycle *cy, size_t slot, struct job *job,
                 const char *token, struct in_hand *h, struct result *res);
/* What becomes of the job: policy.c's verdict. */
void run_decide(const struct cfg *cfg, const struct in_hand *h,
                const struct result *res, struct verdict *v);
/* The verdict's one write; *owned is 0 when its fence found another
 * runner's lock, -1 when an operator's cancel was written instead.  With
 * the history on, the attempt's row goes with it, in the caller's
 * transaction or in one of its own (run_attempts.c). */
enum db_status run_apply(const struct in_hand *h, const struct verdict *v,
                         int *owned, char *err, size_t errlen);
/* The same without the attempt's row. */
enum db_status run_apply_once(const struct in_hand *h,
                              const struct verdict *v, int *owned,
                              char *err, size_t errlen);
/* The rows of n attempts whose successes were written together (in the
 * caller's transaction). */
enum db_status run_record_successes(struct cycle *cy,
                                    const struct in_hand *const *hs,
                                    size_t n, char *err, size_t errlen);
/* Count the verdict that was applied, and log it. */
void run_tell(const struct in_hand *h, const struct verdict *v, int64_t ms,
              struct run_stats *stats);

/* A job a slot has finished whose outcome is not written yet: it rides
 * in the slot's next claim when that is a limited claim's transaction
 * (flow_rider: one commit for both), else it is written alone first. */
struct finished {
	struct in_hand h;
	struct verdict v;
	struct result *res;
	int owned;
	int pending;		/* decided, not written */
};
/* The outcome's write, in the claim's transaction (flow_rider's write):
 * its witness is the job's row when the write found it ours. */
enum db_status finished_write(void *arg, struct queue_witness *w, char *err,
                              size_t errlen);
/* The outcome committed: count and log it, and tell fan-in. */
void finished_told(struct cycle *cy, struct finished *fin);
/* The outcome written on its own (the connection held): 1 when it was; a
 * database error ends the run, and the job waits for recovery. */
int finished_alone(struct cycle *cy, struct finished *fin);
/* The same, for flow_rider's alone: the claim's transaction it rode in
 * was rolled back. */
int finished_rolled_back(void *arg);

/* Wait on cond (CLOCK_MONOTONIC, its mutex held) for at most ms. */
void cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *mu, int64_t ms);

/* --wait (idle.c): a slot whose claim found nothing waits for work; 1
 * when it should claim again, 0 when the run ends (at once without
 * --wait). */
int run_idle(struct cycle *cy);
/* A slot claimed a job: the run has work, and one more slot may. */
void run_idle_claimed(struct cycle *cy);

/* A slot of a run of --jobs above 1 (group.c): claims and outcomes of
 * the slots written together, group by group. */
void run_slot_grouped(struct cycle *cy, size_t slot);

#endif
