/*
 * queue.h - every SQL statement on the job table.
 *
 * Statements are prepared on first use and kept for the run, so an
 * invocation that finds nothing due prepares only what it ran.
 */
#ifndef JOBRUN_QUEUE_H
#define JOBRUN_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "handler.h"

#define QUEUE_KEY_MAX 128	/* polling_jobs.business_key VARCHAR(128) */
#define QUEUE_TYPE_MAX CFG_TYPE_MAX	/* config.h (via db.h) owns it */
#define QUEUE_TOKEN_MAX 100	/* polling_jobs.locked_by VARCHAR(100) */

/* The statements.  Those that operator commands run through queue_select
 * and queue_write say their parameters and result columns here. */
enum queue_stmt {
	/* The run cycle, through the functions below. */
	Q_RECOVER, Q_CLAIM, Q_CLAIM_TYPE, Q_READ, Q_READ_RESUMABLE, Q_SUCCESS,
	Q_RETRY, Q_FAIL, Q_EXTEND, Q_OWNER, Q_RELEASE, Q_CHECKPOINT,
	Q_CHECKPOINT_CHECK, Q_SNOOZE, Q_ENQUEUE, Q_VALID_AT, Q_VALID_JSON,
	Q_JSON_OBJECT,
	Q_READ_REPLY, Q_MAX_PACKET, Q_GET_LOCK,
	/* (id) -> status */
	Q_JOB_STATUS,
	/* () -> type; every type in the table */
	Q_TYPES,
	/* (type) -> exact type, status, count for pending, processing and
	 * failed rows whose type equals it under the column's collation */
	Q_TYPE_COUNTS,
	/* (type) -> EXPLAIN row: the estimated count of success rows is in
	 * column 8 ("rows") */
	Q_SUCCESS_ESTIMATE,
	/* () -> exact type, due count, seconds the oldest due job has waited */
	Q_LAG,
	/* () -> exact type, count of processing rows whose lock has expired */
	Q_EXPIRED,
	/* A type or key operand matches byte for byte.
	 * (before_id, [status], [type], limit) -> id, type, business_key,
	 * status, attempts, max_attempts, next_run_at, updated_at,
	 * last_error; newest first */
	Q_LIST, Q_LIST_STATUS, Q_LIST_TYPE, Q_LIST_STATUS_TYPE,
	/* (id) or (business_key) -> id, business_key, type, payload, status,
	 * attempts, max_attempts, next_run_at, locked_by, locked_until,
	 * last_error, created_at, updated_at, finished_at, JSON_VALID(payload) */
	Q_SHOW_ID, Q_SHOW_KEY,
	/* (id): failed (or, forced, pending) -> pending, due now, attempts 0 */
	Q_RETRY_ID, Q_RETRY_ID_FORCE,
	/* () or (type): up to QUEUE_BATCH failed jobs -> pending */
	Q_RETRY_FAILED, Q_RETRY_FAILED_TYPE,
	/* the same, leaving alone the jobs Q_CANCEL cancelled */
	Q_RETRY_UNCANCELLED, Q_RETRY_UNCANCELLED_TYPE,
	/* () or (type) -> failed jobs, and how many of them Q_CANCEL
	 * cancelled */
	Q_FAILED_COUNTS, Q_FAILED_COUNTS_TYPE,
	/* (id): pending -> failed, "cancelled by operator" */
	Q_CANCEL,
	/* (status, age, age, [type]): delete up to QUEUE_BATCH finished rows
	 * older than age seconds / count them */
	Q_PURGE, Q_PURGE_TYPE, Q_PURGE_COUNT, Q_PURGE_COUNT_TYPE,
	/* (table name) -> column name, IS_NULLABLE */
	Q_COLUMNS,
	/* (table name) -> column name: NOT NULL columns without a
	 * default that jobrun's inserts (Q_ENQUEUE, the fan-out's) leave out,
	 * so that every enqueue fails */
	Q_UNFILLED_COLUMNS,
	/* (table name) -> index name, non_unique, columns "a,b,c" */
	Q_INDEXES,
	/* () -> VERSION() */
	Q_VERSION,
	/* () -> variable name, value, for the settings check reports */
	Q_SETTINGS,
	/* the claims again, taking only ids with id MOD m = r */
	Q_CLAIM_SPREAD, Q_CLAIM_TYPE_SPREAD,
	Q_COUNT
};

#define QUEUE_BATCH 1000	/* rows per statement in bulk changes */
#define QUEUE_INSERT_BATCH 500	/* rows per multi-row insert */

struct queue {
	struct db *db;
	char name[65];		/* the table name as configured */
	char table[160];	/* the same, quoted as an identifier */
	size_t claim_types;	/* placeholders in the prepared claim */
	int no_type_index;	/* idx_type_pick is missing */
	int no_checkpoint;	/* sql/002_checkpoint.sql is not applied */
	MYSQL_STMT *stmt[Q_COUNT];
	MYSQL_STMT *batch;	/* the multi-row insert of a fan-out */
	size_t batch_rows;
	uint64_t conflicts;	/* deadlocks and lock waits retried */
	uint64_t reconnects;	/* connections lost and made again */
	char lock_name[65];	/* the --single lock we hold, or "" */
	int lock_lost;		/* a reconnect could not take it back */
	uint64_t random;	/* state of the retry pauses' generator */
	int no_retry;		/* attempt() runs a statement once */
	int spread;		/* a claim has met a conflict in this run */
};

/* A statement that meets a deadlock or lock wait timeout is run again
 * this many times before the error is reported. */
#define QUEUE_CONFLICT_RETRIES 5
#define QUEUE_CLAIM_RETRIES 10

void queue_init(struct queue *q, struct db *db, const char *table);
void queue_close(struct queue *q);

/* Give back jobs whose runner's lock expired: to pending, or to failed when
 * they have used all their attempts.  At most limit rows; *count says how
 * many. */
enum db_status queue_recover(struct queue *q, unsigned long limit,
                             uint64_t *count, char *err, size_t errlen);

/* Before a run's first claim: prepare every statement the cycle uses, for
 * claims over ntypes types, so that a table that lacks a column or an
 * index the run needs is found (DB_SCHEMA) before any row is touched. */
enum db_status queue_prepare_run(struct queue *q, size_t ntypes, char *err,
                                 size_t errlen);

/* Claim the oldest due pending job whose type is one of types (byte for
 * byte), holding it with token for lock_seconds of real time.  *claimed is 0 when nothing is due;
 * otherwise job is filled (free with queue_job_free). */
enum db_status queue_claim(struct queue *q, const char *const *types,
                           size_t ntypes, unsigned long lock_seconds,
                           const char *token, struct job *job, int *claimed,
                           char *err, size_t errlen);

void queue_job_free(struct job *job);

/* The fenced writes: each touches the job only while it is still ours
 * (id and token match); *owned is 0 when the lock was lost and nothing was
 * written. */
enum db_status queue_mark_success(struct queue *q, const struct job *job,
                                  const char *token, int *owned,
                                  char *err, size_t errlen);
enum db_status queue_mark_retry(struct queue *q, const struct job *job,
                                const char *token, unsigned long delay,
                                const char *last_error, int *owned,
                                char *err, size_t errlen);
enum db_status queue_mark_failed(struct queue *q, const struct job *job,
                                 const char *token, const char *last_error,
                                 int *owned, char *err, size_t errlen);
/* Store the handler's progress, json (len bytes) as it was written, in
 * the job's row and renew its lock, if the server's JSON_VALID takes it:
 * *valid 0 means it was refused and nothing changed. */
enum db_status queue_checkpoint(struct queue *q, const struct job *job,
                                const char *token, const char *json,
                                size_t len, unsigned long lock_seconds,
                                int *owned, int *valid, char *err,
                                size_t errlen);

/* Put the job off for delay seconds without spending this attempt.
 * progress says whether it saved a new checkpoint; without progress the
 * row's snooze count goes up, with it the count starts again. */
enum db_status queue_snooze(struct queue *q, const struct job *job,
                            const char *token, unsigned long delay,
                            int progress, const char *note, int *owned,
                            char *err, size_t errlen);

/* Whether the table has the checkpoint columns (sql/002_checkpoint.sql);
 * asks the server once, by preparing the statement that reads them. */
int queue_resumable(struct queue *q);

/* Give the job back, due now, without counting this attempt. */
enum db_status queue_release(struct queue *q, const struct job *job,
                             const char *token, int *owned, char *err,
                             size_t errlen);
/* Take the named server lock without waiting; *held says whether we got
 * it (it is released when the connection closes). */
enum db_status queue_get_lock(struct queue *q, const char *name, int *held,
                              char *err, size_t errlen);
enum db_status queue_extend(struct queue *q, const struct job *job,
                            const char *token, unsigned long lock_seconds,
                            int *owned, char *err, size_t errlen);

/* When a job should first run: at a DATETIME in the session time zone
 * (at non-NULL) or delay seconds from now. */
struct queue_when {
	const char *at;
	unsigned long delay;
};

/* What the server's JSON functions make of a text. */
enum queue_json {
	QUEUE_JSON_INVALID,	/* JSON_VALID says no */
	QUEUE_JSON_OBJECT,
	QUEUE_JSON_OTHER	/* valid, but not an object */
};

/* Ask the server whether text (len bytes) is JSON, and, when object is
 * set, whether it is an object: the one rule, the same as a JSON
 * column's.  Without object, a valid text is QUEUE_JSON_OTHER. */
enum db_status queue_json_kind(struct queue *q, const char *text, size_t len,
                               int object, enum queue_json *kind, char *err,
                               size_t errlen);

/* Read a handler's JSON reply (struct reply, handler.h) with the
 * server's JSON functions. */
enum db_status queue_read_reply(struct queue *q, const char *text,
                                size_t len, struct reply *reply,
                                char *err, size_t errlen);

/* Insert a pending job, unless one with that key exists.  max_attempts 0
 * keeps the column default.  *created says which; *id is the new or
 * existing job and *status (malloc'ed) its status.  An `at` the server
 * cannot read as a DATETIME is DB_BAD_INPUT with err saying so, and so is
 * a statement larger than the server's max_allowed_packet. */
enum db_status queue_enqueue(struct queue *q, const char *type,
                             const char *key, const char *payload,
                             size_t payload_len,
                             const struct queue_when *when,
                             unsigned long max_attempts, uint64_t *id,
                             int *created, char **status, char *err,
                             size_t errlen);

/* One chunk of a fan-out: its key and its range. */
struct queue_new_job {
	const char *key;
	unsigned long from, to;
};

/* Insert n chunk jobs of one type in one statement (one short
 * transaction), skipping keys that exist; each payload is template (a JSON
 * object; NULL for {}) with "from" and "to" set by the server.  *created
 * counts the rows inserted. */
enum db_status queue_enqueue_batch(struct queue *q, const char *type,
                                   const char *template,
                                   const struct queue_new_job *jobs,
                                   size_t n, const struct queue_when *when,
                                   unsigned long max_attempts,
                                   uint64_t *created, char *err,
                                   size_t errlen);

/* Called with each row of a select, as strings (NULL for SQL NULL).
 * A nonzero return stops the walk. */
typedef int (*queue_row_fn)(void *arg, char **cols, unsigned ncols);

/* Run a select listed above and hand each row to fn. */
enum db_status queue_select(struct queue *q, enum queue_stmt which,
                            const struct db_arg *args, unsigned nargs,
                            unsigned ncols, queue_row_fn fn, void *arg,
                            char *err, size_t errlen);

/* The same, with each column's length: for columns that may hold NUL
 * bytes (keys, payloads). */
typedef int (*queue_row_len_fn)(void *arg, char **cols, const size_t *lens,
                                unsigned ncols);
enum db_status queue_select_len(struct queue *q, enum queue_stmt which,
                                const struct db_arg *args, unsigned nargs,
                                unsigned ncols, queue_row_len_fn fn,
                                void *arg, char *err, size_t errlen);

/* Run a change listed above; *changed is the number of rows it changed. */
enum db_status queue_write(struct queue *q, enum queue_stmt which,
                           const struct db_arg *args, unsigned nargs,
                           uint64_t *changed, char *err, size_t errlen);

/* EXPLAIN the claim statement a run over types would use: the index it
 * picks (malloc'ed, NULL for none) and the rows the server expects to
 * read. */
enum db_status queue_explain_claim(struct queue *q, const char *const *types,
                                   size_t ntypes, char **index,
                                   unsigned long *rows, char *err,
                                   size_t errlen);

#endif
