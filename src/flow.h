/*
 * flow.h - flow control across runs and hosts: concurrency caps, rate
 * limits, pause and resume (sql/003_flow.sql's control table).
 */
#ifndef JOBRUN_FLOW_H
#define JOBRUN_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "queue.h"

#define FLOW_MIGRATION "sql/003_flow.sql"
/* Widens a control table made before types of 64 characters fitted. */
#define FLOW_TYPE_MIGRATION "sql/007_flow_type.sql"
/* The control table is the job table's name with this after it. */
#define FLOW_SUFFIX "_flow"

struct flow;

/* What jobrun uses on the control table. */
#define FLOW_PRIVILEGES "SELECT, INSERT, UPDATE"

/* The control table next to q's job table, for the types of cfg: looked
 * at once (one statement prepared).  *f is NULL when the table is absent
 * or not granted to the account (queue_unseen) and nothing needs it (a
 * run then claims as before).  It is needed by a type that sets
 * concurrency or rate, or by the command needs names ("pause TYPE");
 * then every privilege jobrun uses on it is tried, and without one the
 * error (DB_SCHEMA when absent, else DB_DENIED) names the migration and
 * the GRANT.  A limited type's row is made by its first claim. */
enum db_status flow_open(struct queue *q, const struct cfg *cfg,
                         const char *needs, struct flow **f, char *err,
                         size_t errlen);
void flow_close(struct flow *f);

/* The most jobs a claim takes beside the one it was asked for. */
#define FLOW_EXTRA_MAX (QUEUE_GROUP_MAX - 1)

/* Jobs a claim may take beside the one asked for, for the run's other
 * slots waiting to claim: at most want, with tokens[i] into jobs[i]
 * (zeroed before); got says how many it took, each the caller's to run
 * or to give back. */
struct flow_extra {
	size_t want, got;
	const char *tokens[FLOW_EXTRA_MAX];
	struct job jobs[FLOW_EXTRA_MAX];
};

/* A write of the caller's that rides in a limited claim's transaction,
 * before any control row is locked: a slot's outcome, which then shares
 * the claim's commit.  write runs in the transaction and gives the
 * witness of what it wrote; done says it was committed so.  It rides in
 * the transaction's first run only: rolled back (a deadlock, a lock wait
 * that timed out, a lost connection), it is written alone at once
 * (alone), before the claim runs again, so that an outcome waits for no
 * more than one lock wait; alone says whether it was written, and when
 * it was not (a database error, which ends the caller's run) the claim
 * is not made either.  Neither done nor written alone (no limited claim
 * was made), the caller writes it alone. */
struct flow_rider {
	enum db_status (*write)(void *arg, struct queue_witness *w,
	                        char *err, size_t errlen);
	int (*alone)(void *arg);
	void *arg;
	int done;
	int out;		/* rolled back and written alone */
	int lost;		/* ... and that write failed */
};

/* Claim as queue_claim does, among types, but only a type that is not
 * paused, is below its cap and has a start left in its rate: a capped or
 * rated type is claimed inside one transaction that locks its control
 * row, so that the count, the bucket and the claim commit together.
 * When nothing was claimed but a held-back type has due jobs, *wait_ms
 * says how long to wait before trying again (0: nothing to wait for).
 * A keyed type without a cap or rate may take up to extra->want more
 * jobs in the same transaction (extra may be NULL); rider, if not NULL,
 * is written in the limited claim's transaction, if one is made. */
enum db_status flow_claim(struct flow *f, const char *const *types,
                          size_t ntypes, unsigned long lock_seconds,
                          const char *token, struct job *job, int *claimed,
                          struct flow_extra *extra, struct flow_rider *rider,
                          int64_t *wait_ms, char *err, size_t errlen);

/* The token bucket of a rate limit, a pure function: tokens saved at
 * refilled_at, refilled at l's rate to now (server seconds) and capped at
 * its burst.  *wait_ms is 0 when a start is allowed now, else how long
 * until one is (never too early).  Without a rate, tokens as they are. */
double flow_bucket(const struct cfg_flow *l, double tokens,
                   double refilled_at, double now, int64_t *wait_ms);

/* Jobs whose runner's lock expired that a run gave back while a cap was
 * full (after its start's recovery); 0 for NULL. */
uint64_t flow_recovered(const struct flow *f);

/* How the run's types are limited: not at all; only by keys, with
 * neither a cap nor a rate, whose claims take a job for each of the
 * slots waiting (flow_extra) and count nothing in the control rows, so
 * that the slots' group commits can carry them (group.c); or with a cap
 * or a rate, whose claims are flow_claim's transactions, one slot at a
 * time. */
enum flow_limits { FLOW_UNLIMITED, FLOW_KEYED_ONLY, FLOW_CAPPED };
enum flow_limits flow_limits_of(struct flow *f, const char *const *types,
                                size_t ntypes);

/* The run's types that are not paused now, into out (room for ntypes),
 * *nout of them: what claims of a run without limits may take.  One
 * read of the control table, outside any transaction. */
enum db_status flow_unpaused(struct flow *f, const char *const *types,
                             size_t ntypes, const char **out, size_t *nout,
                             char *err, size_t errlen);

/* A job of type that a claim of f took has ended (its outcome written):
 * a place in the type's cap is free. */
void flow_job_done(struct flow *f, const char *type, uint64_t id);

/* jobrun pause / resume: set type's flag for every run on every host;
 * *changed says whether the type's control row was written. */
enum db_status flow_set_paused(struct flow *f, const char *type, int paused,
                               int *changed, char *err, size_t errlen);

/* The control state of one type, as status shows it. */
struct flow_state {
	char *type;
	int paused;
	unsigned long concurrency;	/* this host's config; 0: none */
	unsigned long rate, period, burst;
	double tokens;			/* starts left now (rated types) */
	unsigned long in_use;		/* jobs in processing */
	int throttled;			/* rated, no start left now */
	int full;			/* capped, every slot in use */
	/* concurrency_key (this host's config; NULL: none), its cap, the
	 * keys at it and the due jobs waiting for one of those */
	const char *key;
	unsigned long key_concurrency;
	unsigned long keys_full, key_waiting;
};

struct flow_states {
	struct flow_state *rows;
	size_t n;
};

/* Every type with a control row or a limit in cfg (or only `only`), with
 * in_use read from the job table. */
enum db_status flow_read(struct flow *f, const char *only,
                         struct flow_states *out, char *err, size_t errlen);
void flow_states_free(struct flow_states *s);
/* The row of type in s, added (zeroed) when s has none (flow_state.c). */
struct flow_state *flow_state_of(struct flow_states *s, const char *type);
/* Fill s in (flow_state.c): the limits cfg sets for its type, its jobs
 * in processing and due (q), and with a key its keys at their cap and
 * the due jobs that wait for one (keys). */
struct flow_keys;
enum db_status flow_state_fill(const struct cfg *cfg, struct queue *q,
                               struct flow_keys *keys, struct flow_state *s,
                               char *err, size_t errlen);

/* For check: the control table's primary key columns ("type") and the
 * type column's SQL type ("varbinary(64)"), malloc'ed, NULL if none. */
enum db_status flow_shape(struct flow *f, char **primary,
                          char **type_column, char *err, size_t errlen);

/* "s", "min" or "h": the unit a rate with period seconds is written in. */
const char *flow_unit(unsigned long period);

/* Whether a type of cfg needs the control table (a cap or a rate): who
 * says which ("FILE: [type.NAME] concurrency"). */
int flow_needs(const struct cfg *cfg, char *who, size_t len);

/* For check: how the control table stands for the account, every
 * privilege jobrun uses on it tried (a->why and a->fix said when it is
 * not reached). */
enum db_status flow_access(struct queue *q, struct queue_access *a,
                           char *err, size_t errlen);

/* The control table's name (unquoted). */
const char *flow_table(const struct flow *f);

/* Free the jobs extra took (a claim rolled back), or give them back
 * first (release: committed, but not to be run), their attempts not
 * spent. */
void flow_extra_drop(struct flow_extra *extra);
enum db_status flow_extra_release(struct queue *q, struct flow_extra *extra,
                                  char *err, size_t errlen);

#endif
