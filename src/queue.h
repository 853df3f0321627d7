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
#define QUEUE_TYPE_MAX 64	/* polling_jobs.type VARCHAR(64) */
#define QUEUE_TOKEN_MAX 100	/* polling_jobs.locked_by VARCHAR(100) */

enum queue_stmt {
	Q_RECOVER, Q_CLAIM, Q_READ, Q_SUCCESS, Q_RETRY, Q_FAIL, Q_EXTEND,
	Q_OWNER, Q_ENQUEUE, Q_STATUS, Q_COUNT
};

struct queue {
	struct db *db;
	char table[160];	/* quoted identifier */
	size_t claim_types;	/* placeholders in the prepared claim */
	MYSQL_STMT *stmt[Q_COUNT];
};

void queue_init(struct queue *q, struct db *db, const char *table);
void queue_close(struct queue *q);

/* Give back jobs whose runner's lock expired: to pending, or to failed when
 * they have used all their attempts.  At most limit rows; *count says how
 * many. */
enum db_status queue_recover(struct queue *q, unsigned long limit,
                             uint64_t *count, char *err, size_t errlen);

/* Claim the oldest due pending job whose type is one of types, holding it
 * with token for lock_seconds.  *claimed is 0 when nothing is due;
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
enum db_status queue_extend(struct queue *q, const struct job *job,
                            const char *token, unsigned long lock_seconds,
                            int *owned, char *err, size_t errlen);

/* Insert a pending job due in delay seconds, unless one with that key
 * exists.  max_attempts 0 keeps the column default.  *created says which;
 * *id is the new or existing job and *status (malloc'ed) its status. */
enum db_status queue_enqueue(struct queue *q, const char *type,
                             const char *key, const char *payload,
                             unsigned long delay, unsigned long max_attempts,
                             uint64_t *id, int *created, char **status,
                             char *err, size_t errlen);

#endif
