/*
 * policy.h - what becomes of a job once its handler has returned.
 *
 * One function of plain values decides: the runner gathers them, applies
 * the verdict with one queue call and counts and logs it.  Nothing here
 * reads the clock, the database or a global, so every branch is a unit
 * test (test/unit/test_policy.c).
 */
#ifndef JOBRUN_POLICY_H
#define JOBRUN_POLICY_H

#include <stdint.h>

#include "handler.h"
#include "log.h"

/* What the runner does with the job's row. */
enum verb {
	VERB_SUCCESS,	/* done */
	VERB_RETRY,	/* pending again after delay; the attempt is spent */
	VERB_FAIL,	/* failed for good */
	VERB_SNOOZE,	/* pending again after delay; the attempt is given back */
	VERB_RELEASE,	/* pending again now; the attempt is given back */
	VERB_NOTHING	/* no write: the lock is lost, recovery has the job */
};

/* Everything the decision depends on. */
struct policy_in {
	/* What the handler reported (struct result). */
	enum outcome outcome;
	long retry_after;		/* seconds asked for, or -1 */
	const char *message;
	const struct secrets *secrets;	/* kept out of our reasons, or NULL */
	/* The job, as claimed, and what this attempt did. */
	unsigned long attempt;		/* this one, counting from 1 */
	unsigned long max_attempts;
	unsigned long snoozes;		/* put off in a row without progress */
	int resumable;			/* the table can count snoozes */
	int progress;			/* this attempt saved a new checkpoint */
	int interrupted;		/* a second signal stopped the handler */
	int signo;			/* that signal, for the note */
	int setup;			/* the handler could not start */
	/* The [run] settings, backoff_jitter the type's when it has one. */
	unsigned long backoff_base, backoff_cap, max_snoozes;
	unsigned long backoff_jitter;	/* permille of the backoff */
	uint32_t draw;			/* uniform random, for the jitter */
};

/* The decision, and what to say about it. */
struct verdict {
	enum verb verb;
	unsigned long delay;		/* seconds until due (RETRY, SNOOZE) */
	/* The handler's message, or our reason around it: last_error for
	 * RETRY, FAIL and SNOOZE ("" for none). */
	char message[LAST_ERROR_BYTES];
	char note[LAST_ERROR_BYTES + 128];	/* the log line's message */
	const char *word;		/* the log line's outcome word */
	enum log_level level;
};

/* Decide what becomes of the job: in -> out.  Delays are capped at
 * backoff_cap, except the one second a snooze without progress waits at
 * least. */
void policy_decide(const struct policy_in *in, struct verdict *out);

/* The fenced write of v found another runner's lock: turn v into the
 * "lost" verdict the runner counts and logs instead. */
void policy_lost(struct verdict *v);

/* v once its write was answered (run_apply's owned): 1, as decided; 0,
 * the fence found another runner's lock, so lost; -1, an operator had
 * asked to stop the job, and its cancel was written instead. */
void policy_settle(struct verdict *v, int owned);

#endif
