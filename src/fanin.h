/*
 * fanin.h - fan-in: one job of a type, once, after every job of a
 * fan-out has finished (enqueue --then).
 */
#ifndef JOBRUN_FANIN_H
#define JOBRUN_FANIN_H

#include <stdint.h>

#include "db.h"
#include "log.h"
#include "queue.h"

/* The tables of sql/006_fan_in.sql. */
#define FANIN_TABLE "jobrun_fan_ins"
#define FANIN_JOBS_TABLE "jobrun_fan_in_jobs"
#define FANIN_MIGRATION "sql/006_fan_in.sql"
/* What jobrun uses on each. */
#define FANIN_PRIVILEGES "SELECT, INSERT, UPDATE"

enum fanin_stmt {
	FI_PROBE, FI_MEMBER_OF, FI_LOCK, FI_SET_OUTCOME,
	FI_COUNT, FI_FIRE, FI_PAYLOAD, FI_OPEN, FI_SETTLE_SUCCESS,
	FI_SETTLE_FAILED, FI_CREATE, FI_OPEN_LIST, FI_ANY_OPEN, FI_STATE,
	FI_RECOUNT, FI_ADD_ONE, FI_KNOWN, FI_WINDOW,
	FI_COUNT_STMTS
};

/* A run's (or a command's) fan-in statements on the queue's connection. */
struct fanin {
	struct queue *q;
	struct queue_stmts *set;
	const struct log *lg;
	int active;		/* the tables are there for the account */
	int open;		/* a fan-in of the table is open */
	int64_t open_checked;	/* now_ms() that was asked, or 0 */
};

/* Open fan-in work for q's table, on q's connection; close it once (a
 * zeroed struct fanin may be closed too). */
void fanin_open(struct fanin *fi, struct queue *q, const struct log *lg);
void fanin_close(struct fanin *fi);

/* The sweep settles a fan-in a window of at most this many members not
 * yet counted at a time (settling reads each): a window that holds a
 * job still to finish ends the fan-in's turn, so an open fan-in costs a
 * sweep that many reads at most, whatever its size; a window whose
 * members had all finished counts them and goes on. */
#define FANIN_SWEEP_BATCH 1000

/* A run's start: whether the tables are there for the account
 * (fi->active; absent or not granted, fan-in is off), and every open
 * fan-in is settled by windows of FANIN_SWEEP_BATCH (the sweep: a runner
 * killed between a job's mark and its fan-in bookkeeping, or before the
 * callback, leaves a member uncounted or its fan-in complete but
 * unfired; recovery, an operator's cancel or SQL finish members no
 * runner counts). */
enum db_status fanin_sweep(struct fanin *fi, char *err, size_t errlen);

/* After the outcome of job_id is committed: count it in its fan-ins
 * and, when it was the last, enqueue their callbacks.  While no fan-in
 * of the table is open (asked again at most once a second) it does
 * nothing.  Errors are logged,
 * not returned: the job's outcome is written, and the next sweep counts
 * what this could not. */
void fanin_after_finish(struct fanin *fi, uint64_t job_id);

/* For check and enqueue --then: how the tables stand for the account,
 * every privilege jobrun uses on them tried (a->why and a->fix said when
 * they are not reached). */
enum db_status fanin_access(struct queue *q, struct queue_access *a,
                            char *err, size_t errlen);

/* A fan-in as enqueue finds it. */
struct fanin_state {
	int existed;		/* made by an earlier run */
	int fired;		/* its callback is enqueued */
	char *then_type;	/* malloc'ed */
	uint64_t total;		/* members it waits for */
	uint64_t members;	/* member rows it has */
};

/* enqueue --then: the fan-in that enqueues then_type as then_key
 * (payload: a JSON object the counts are added to) once total members
 * have finished; an existing one with that key is left as it is and
 * described in *state (free with fanin_state_free).  *id is it. */
enum db_status fanin_create(struct fanin *fi, const char *then_type,
                            const char *then_key, const char *payload,
                            uint64_t total, uint64_t *id,
                            struct fanin_state *state, char *err,
                            size_t errlen);
void fanin_state_free(struct fanin_state *state);

/* The member jobs of fan-in id that keys[0..n-1] name (as the job
 * table's collation compares keys), appended to *ids (*nids of them,
 * malloc'ed; a job may come more than once). */
enum db_status fanin_members_named(struct fanin *fi, uint64_t id,
                                   const char *const *keys, size_t n,
                                   uint64_t **ids, size_t *nids, char *err,
                                   size_t errlen);

/* The jobs with keys[0..n-1] become members of fan-in id (again: no-op). */
enum db_status fanin_add_members(struct fanin *fi, uint64_t id,
                                 const char *const *keys, size_t n,
                                 char *err, size_t errlen);

/* Count what the hooks did not (members already finished when they were
 * added), and fire fan-in id when complete; *fired says whether this
 * call enqueued its callback. */
enum db_status fanin_settle(struct fanin *fi, uint64_t id, int *fired,
                            char *err, size_t errlen);

/* enqueue's settle once every member is added: the fan-in's total becomes
 * the number of member jobs the table holds (keys its collation takes
 * for the same are one job, one member), then as fanin_settle.  *total
 * is that number (0 when the fan-in had fired already). */
enum db_status fanin_finish(struct fanin *fi, uint64_t id, int *fired,
                            uint64_t *total, char *err, size_t errlen);

/* The open fan-ins of the table, for status and metrics. */
struct fanin_view {
	char *key;		/* then_key */
	uint64_t done, total;
};
enum db_status fanin_list(struct fanin *fi, struct fanin_view **out,
                          size_t *n, char *err, size_t errlen);
void fanin_list_free(struct fanin_view *v, size_t n);

#endif
