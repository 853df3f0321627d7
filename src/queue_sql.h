/*
 * queue_sql.h - what the queue's files (queue*.c) share, and nobody
 * else: the statements, the queue's state, and running them.
 */
#ifndef JOBRUN_QUEUE_SQL_H
#define JOBRUN_QUEUE_SQL_H

#include "queue.h"

/* Every statement on the table; their text is queue.c's templates[]. */
enum queue_stmt {
	/* the run's cycle */
	Q_RECOVER, Q_CLAIM, Q_CLAIM_TYPE, Q_CLAIM_SPREAD, Q_CLAIM_TYPE_SPREAD,
	Q_CLAIM_AFTER, Q_CLAIM_TYPE_AFTER,
	Q_READ, Q_READ_RESUMABLE, Q_SUCCESS, Q_RETRY, Q_FAIL, Q_EXTEND,
	Q_READ_MANY, Q_READ_MANY_RESUMABLE, Q_SUCCESS_MANY,
	Q_READ_TOKENS, Q_READ_TOKENS_RESUMABLE,
	Q_OWNER, Q_OWNER_LOCKED, Q_CLAIMED_ID, Q_RELEASE, Q_CHECKPOINT, Q_CHECKPOINT_CHECK,
	Q_SNOOZE,
	Q_GET_LOCK, Q_READ_REPLY, Q_MAX_PACKET, Q_WSREP, Q_SCHEMA,
	/* flow control's reads of the job table */
	Q_TYPE_DUE, Q_TYPE_LOAD,
	/* adding jobs */
	Q_ENQUEUE, Q_ENQUEUE_AGAIN, Q_ENQUEUE_AGAIN_RESUMABLE, Q_VALID_AT,
	Q_VALID_JSON, Q_JSON_OBJECT, Q_JOB_STATUS,
	/* operators' changes */
	Q_RETRY_ID, Q_RETRY_ID_FORCE, Q_CANCEL,
	Q_REQUEUE, Q_REQUEUE_TYPE, Q_REQUEUE_UNCANCELLED,
	Q_REQUEUE_UNCANCELLED_TYPE, Q_FAILED_COUNTS, Q_FAILED_COUNTS_TYPE,
	Q_PURGE, Q_PURGE_TYPE, Q_PURGE_COUNT, Q_PURGE_COUNT_TYPE,
	/* what people read */
	Q_TYPES, Q_TYPE_COUNTS, Q_SUCCESS_ESTIMATE, Q_LAG, Q_EXPIRED,
	Q_LIST, Q_LIST_STATUS, Q_LIST_TYPE, Q_LIST_STATUS_TYPE,
	Q_SHOW_ID, Q_SHOW_KEY, Q_COLUMNS, Q_UNFILLED_COLUMNS, Q_INDEXES,
	Q_VERSION, Q_SETTINGS,
	/* the report (queue_report.c) */
	Q_REPORT_CLOCK, Q_REPORT_HOURS, Q_REPORT_FAILURES,
	Q_REPORT_FAILURES_PICK,
	Q_COUNT
};

/* What the table supports, probed once, by preparing a statement that
 * needs it. */
struct queue_caps {
	int type_index_probed, type_index;	/* sql/001_type_pick.sql */
	int checkpoint_probed, checkpoint;	/* sql/002_checkpoint.sql */
	int finished_index_probed, finished_index; /* sql/005_finished.sql */
	int galera_probed, galera;		/* wsrep_on (not the table's) */
};

/* A claim this long after the last one from the head of the range is
 * one from the head again: how much longer than the plain claim would
 * make it wait a job due behind the cursor may wait (man/jobrun.7). */
#define QUEUE_CURSOR_MS 1000

/* Where this run's claims have got to in the claim's (next_run_at, id)
 * order: the next claim starts its scan just past it (queue.c; read and
 * written by queue_claim alone, so a caller that serialises its claims
 * needs no more). */
struct queue_cursor {
	int set;		/* at and id hold the last claimed job */
	enum queue_stmt claim;	/* the plain claim they go with */
	uint64_t types;		/* and a hash of its types */
	char at[40];		/* that job's next_run_at, as the server wrote it */
	uint64_t id;
	int64_t head_ms;	/* when a claim last scanned from the head */
	/* A claim of a group (queue_claim_id) leaves the cursor where it
	 * is; queue_read_claimed moves it to this job, the group's last
	 * claimed in the claim's order (0: none). */
	uint64_t next_id;
	enum queue_stmt next_claim;
	uint64_t next_types;
};

struct queue {
	struct db *db;
	char name[65];		/* the table name as configured */
	char table[160];	/* the same, quoted as an identifier */
	struct queue_caps caps;
	size_t claim_types;	/* placeholders in the prepared claim */
	MYSQL_STMT *stmt[Q_COUNT];
	struct queue_stmts *batch;	/* the multi-row insert of a fan-out */
	size_t batch_rows;
	struct queue_counters counters;
	char lock_name[65];	/* the --single lock we hold, or "" */
	int lock_lost;		/* a reconnect could not take it back */
	uint64_t random;	/* state of the pauses' and spread's generator */
	int no_retry;		/* a statement meets a conflict once */
	int spread;		/* a claim has met a conflict in this run */
	struct queue_cursor cursor;
	struct queue_cursor cursor_spare;	/* another list of types' */
	/* A transaction of several statements is open (queue_trx): a
	 * deadlock or a lost connection ends it whole, so no statement in
	 * it is run again on its own; trx_lost says the connection was lost
	 * (and made again) before the COMMIT, so its caller may run the
	 * whole transaction again; the cursor goes back to trx_cursor when
	 * it is rolled back. */
	int in_trx, trx_lost;
	int commit_lost;	/* the COMMIT's answer was lost; reconnected */
	uint64_t lock_wait_at;	/* reconnects when queue_lock_wait set it */
	struct queue_cursor trx_cursor;
};

/* Statement which of s, as prepared (its result's metadata). */
MYSQL_STMT *queue_stmts_handle(const struct queue_stmts *s, size_t which);

/* What statement which does, for messages (queue.c). */
const char *queue_purpose(enum queue_stmt which);

/* --- queue_run.c: the runner's parts the claims use ---------------------- */

/* Prepare statement which, unless it is. */
enum db_status queue_prepare(struct queue *q, enum queue_stmt which,
                             char *cause, size_t len);
/* Prepare (if need be) and execute which once, again after a deadlock
 * outside a transaction; cause is the bare cause. */
enum db_status queue_attempt(struct queue *q, enum queue_stmt which,
                             const struct db_arg *args, unsigned nargs,
                             char *cause, size_t len);
/* queue_stmt_run for nrows rows of arguments at once when nrows > 0 (a
 * bulk execution, made only inside a transaction); s NULL. */
struct queue_stmts;
enum db_status queue_run_rows(struct queue *q, struct queue_stmts *s,
                              size_t which, const struct db_arg *args,
                              unsigned nargs, unsigned nrows, char *err,
                              size_t errlen);
/* Lost the connection: make it again.  DB_OK when the statement that met
 * it (values of size bytes) may be run again; DB_BAD_INPUT when they were
 * too large for the server's max_allowed_packet. */
enum db_status queue_reconnect(struct queue *q, size_t size, char *cause,
                               size_t len);
/* Close every prepared statement of the queue's (they die with their
 * connection). */
void queue_forget(struct queue *q);
/* The next number of the queue's own generator (xorshift). */
uint64_t queue_random(struct queue *q);
/* Sleep 2..10 ms, doubled per earlier attempt. */
void queue_conflict_pause(struct queue *q, unsigned attempt);

/* --- queue.c and queue_cycle.c ------------------------------------------- */

/* Whether the table supports which (prepared once to see). */
int queue_supports(struct queue *q, enum queue_stmt which, int *probed,
                   int *has);
/* The job claimed with token: its id, 0 for none. */
enum db_status queue_claimed_by_token(struct queue *q, const char *token,
                                      uint64_t *id, char *err,
                                      size_t errlen);

/* Run statement which with args (preparing it first if need be, running
 * it again after a deadlock or a lost connection); err reads "<purpose>
 * in <table>: <cause>". */
enum db_status queue_stmt_run(struct queue *q, enum queue_stmt which,
                              const struct db_arg *args, unsigned nargs,
                              char *err, size_t errlen);

/* Rows the last run of which changed. */
uint64_t queue_stmt_changed(const struct queue *q, enum queue_stmt which);

/* Run a select that gives at most one row of ncols columns (malloc'ed,
 * NULL for SQL NULL); *found says whether it did. */
enum db_status queue_stmt_one(struct queue *q, enum queue_stmt which,
                              const struct db_arg *args, unsigned nargs,
                              char **cols, unsigned ncols, int *found,
                              char *err, size_t errlen);

/* Run a select and hand each row (columns and their lengths) to fn, until
 * fn returns nonzero. */
enum db_status queue_stmt_walk(struct queue *q, enum queue_stmt which,
                               const struct db_arg *args, unsigned nargs,
                               unsigned ncols,
                               int (*fn)(void *arg, char **cols,
                                         const size_t *lens),
                               void *arg, char *err, size_t errlen);

/* The text of which (malloc'ed). */
char *queue_stmt_text(const struct queue *q, enum queue_stmt which);

/* The claim a run over ntypes types uses, and its arguments (malloc'ed,
 * with room for the spread's two more or the cursor's three). */
enum queue_stmt queue_claim_stmt(struct queue *q, size_t ntypes,
                                 enum queue_stmt *spread);
struct db_arg *queue_claim_args(enum queue_stmt which,
                                const char *const *types, size_t ntypes,
                                unsigned long lock_seconds,
                                const char *token, unsigned *nargs);

#endif
