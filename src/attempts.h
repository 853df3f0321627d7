/*
 * attempts.h - the attempt history (sql/010_attempts.sql): one row per
 * attempt in <table>_attempts, written in the transaction of the outcome
 * it records.
 *
 * The table is optional: without it (or without the grant to it:
 * queue_unseen) runs write no history and do what they did before.
 */
#ifndef JOBRUN_ATTEMPTS_H
#define JOBRUN_ATTEMPTS_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"

#define ATTEMPTS_SUFFIX "_attempts"
#define ATTEMPTS_PRIVILEGES "SELECT, INSERT"
#define ATTEMPTS_MIGRATION "sql/010_attempts.sql"

/* The outcomes an attempt's row may hold, as its outcome column spells
 * them. */
#define ATTEMPT_SUCCESS "success"
#define ATTEMPT_RETRY "retry"
#define ATTEMPT_FAILED "failed"
#define ATTEMPT_LOST "lost"
#define ATTEMPT_SNOOZED "snoozed"
#define ATTEMPT_PUT_BACK "put back"
#define ATTEMPT_TIMED_OUT "timed out"
#define ATTEMPT_CANCELLED "cancelled"

/* One attempt as the runner saw it end.  exit_status -1, signo 0 and
 * http_status 0 are "none" (NULL in the row). */
struct attempt {
	uint64_t job_id;
	unsigned long attempt;
	const char *runner;		/* the claim's token: host, pid */
	const char *outcome;		/* an ATTEMPT_* word */
	int exit_status;
	int signo;
	long http_status;
	int64_t ms;			/* the handler's time */
	const char *output;		/* redacted, valid UTF-8 */
	size_t output_len;
};

/* At most this many attempts in one statement (a group's). */
#define ATTEMPTS_MAX_ROWS 16

struct attempts;

/* q's history table (not looked at yet); NULL when the job table's name
 * leaves no room for the suffix (no such table can exist). */
struct attempts *attempts_open(struct queue *q);
void attempts_close(struct attempts *a);

/* Whether the table is there for the account, looked at once: *on says
 * whether it may be read, or, with write, written too (a run's history;
 * show and report only read it). */
enum db_status attempts_probe(struct attempts *a, int write, int *on,
                              char *err, size_t errlen);

/* Add n (1..ATTEMPTS_MAX_ROWS) attempts in one statement, in the caller's
 * transaction: finished now by the server's clock, started the handler's
 * time before. */
enum db_status attempts_add(struct attempts *a, const struct attempt *at,
                            size_t n, char *err, size_t errlen);

/* Recovery with history: at most limit jobs whose lock ran out given back
 * (queue_recover's rule), each in a transaction with its attempt's row
 * ("lost", or "cancelled" when an operator asked); *count of them. */
enum db_status attempts_recover(struct attempts *a, unsigned long limit,
                                uint64_t *count, char *err, size_t errlen);

/* The attempts of n jobs (1..ATTEMPTS_LIST_MAX), in one statement,
 * job by job, each job's oldest first: fn gets each row's ATTEMPT_COLS
 * columns (NULL for SQL NULL) and their lengths (the output may hold NUL
 * bytes), the last its job's id. */
enum { AC_ID, AC_ATTEMPT, AC_RUNNER, AC_STARTED, AC_FINISHED, AC_OUTCOME,
       AC_EXIT, AC_SIGNAL, AC_HTTP, AC_MS, AC_OUTPUT, AC_JOB, ATTEMPT_COLS };
#define ATTEMPTS_LIST_MAX 1000
/* Their names, as show --json and report --json give them. */
extern const char *const attempt_column_names[ATTEMPT_COLS];
enum db_status attempts_each(struct attempts *a, const uint64_t *job_ids,
                             size_t n, void (*fn)(void *arg, char **cols,
                             const size_t *lens),
                             void *arg, char *err, size_t errlen);

/* For check: how the table stands for the account (queue_access). */
enum db_status attempts_access(struct queue *q, struct queue_access *acc,
                               char *err, size_t errlen);

#endif
