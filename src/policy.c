/*
 * policy.c - the verdict on a job after its handler: success, retry when,
 * fail, snooze, put back, or nothing.
 *
 * A pure function of the handler's result, the job's counters and the
 * [run] settings, so the rules an operator reads in jobrun(1) are each a
 * unit test, and the runner only applies the verb.  The rules:
 *   - a retry waits for Retry-After if the handler had one, else for the
 *     backoff; either way at most backoff_cap, the one cap on every delay;
 *   - a retry on the last attempt is a failure, "no attempts left";
 *   - a snooze is free only where it is bounded: the table must count
 *     snoozes and a job may put itself off at most max_snoozes times in a
 *     row without progress; otherwise it is a retry, with the delay and
 *     the message the handler gave;
 *   - a handler stopped by a second signal puts its job back, due now,
 *     without spending the attempt; one stopped for a lost lock writes
 *     nothing, and recovery (or the lock's new holder) has the job.
 */
#include <stdio.h>
#include <string.h>

#include "backoff.h"
#include "policy.h"

/* What the log says of each verb; a snooze that saved a checkpoint says
 * "progress". */
static const struct {
	const char *word;
	enum log_level level;
} says[] = {
	[VERB_SUCCESS] = { "success", LV_INFO },
	[VERB_RETRY] = { "retry", LV_WARN },
	[VERB_FAIL] = { "failed", LV_FAILURE },
	[VERB_SNOOZE] = { "snoozed", LV_INFO },
	[VERB_RELEASE] = { "put-back", LV_WARN },
	[VERB_NOTHING] = { "lost", LV_FAILURE },
};

static void
set_verb(struct verdict *v, enum verb verb, unsigned long delay)
{
	v->verb = verb;
	v->delay = delay;
	v->word = says[verb].word;
	v->level = says[verb].level;
}

/* The delay the handler asked for, else fallback; never over the cap. */
static unsigned long
delay_for(const struct policy_in *in, unsigned long fallback)
{
	unsigned long delay = in->retry_after >= 0 ?
	    (unsigned long)in->retry_after : fallback;

	return delay < in->backoff_cap ? delay : in->backoff_cap;
}

/* Why a snooze is not free, written in what; 0 when it is. */
static int
snooze_refused(const struct policy_in *in, char *what, size_t whatlen)
{
	if (!in->resumable)
		snprintf(what, whatlen, "asked to run again later, but the "
		    "table cannot count snoozes (apply sql/002_checkpoint.sql)");
	else if (!in->progress && in->snoozes >= in->max_snoozes)
		snprintf(what, whatlen, "put off %lu times in a row without "
		    "progress (max_snoozes)", in->snoozes);
	else
		return 0;
	return 1;
}

/* "<what>: <the handler's message>", redacted and cut to fit last_error
 * as every message is (result_set). */
static void
reason(const struct policy_in *in, const char *what, struct verdict *v)
{
	struct result r = { .secrets = in->secrets };

	result_set(&r, OUTCOME_RETRY, what, in->message, strlen(in->message));
	memcpy(v->message, r.message, sizeof v->message);
}

static void
retry(const struct policy_in *in, struct verdict *v)
{
	if (in->attempt >= in->max_attempts) {
		set_verb(v, VERB_FAIL, 0);
		snprintf(v->note, sizeof v->note, "no attempts left: %s",
		    v->message);
		return;
	}
	/* A server's Retry-After beats our guess, within the cap; the
	 * jitter is our guess's, never the server's. */
	set_verb(v, VERB_RETRY, delay_for(in, backoff_jitter(backoff_delay(
	    in->backoff_base, in->backoff_cap, in->attempt),
	    in->backoff_jitter, in->draw)));
	/* A handler that cannot start (a command cron's PATH lacks) is a
	 * set-up mistake every retry repeats: said under -q too. */
	if (in->setup)
		v->level = LV_FAILURE;
	snprintf(v->note, sizeof v->note, "%s", v->message);
}

static void
snooze(const struct policy_in *in, struct verdict *v)
{
	unsigned long delay = delay_for(in, in->progress ? 0 :
	    in->backoff_base);

	/* "Not yet, ask again now" without progress would spin through
	 * max_snoozes requests in an instant: a second apart at least, like
	 * Retry-After: 0.  Progress with no delay runs again at once. */
	if (delay == 0 && !in->progress)
		delay = 1;
	set_verb(v, VERB_SNOOZE, delay);
	if (in->progress)
		v->word = "progress";
	snprintf(v->note, sizeof v->note, "%s", v->message);
}

void
policy_decide(const struct policy_in *in, struct verdict *out)
{
	char what[256];

	snprintf(out->message, sizeof out->message, "%s", in->message);
	switch (in->outcome) {
	case OUTCOME_SUCCESS:
		set_verb(out, VERB_SUCCESS, 0);
		out->note[0] = '\0';
		return;
	case OUTCOME_RETRY:
		retry(in, out);
		return;
	case OUTCOME_FAIL:
		set_verb(out, VERB_FAIL, 0);
		snprintf(out->note, sizeof out->note, "permanent failure: %s",
		    out->message);
		return;
	case OUTCOME_SNOOZE:
		if (snooze_refused(in, what, sizeof what)) {
			reason(in, what, out);
			retry(in, out);
		} else
			snooze(in, out);
		return;
	case OUTCOME_ABANDONED:
		if (!in->interrupted)
			break;
		/* Stopped by the operator, not by the job. */
		set_verb(out, VERB_RELEASE, 0);
		snprintf(out->note, sizeof out->note, "handler stopped on "
		    "signal %d; job put back, due now", in->signo);
		return;
	}
	/* Abandoned for a lost lock, or an outcome we do not know: the row
	 * is not ours to write. */
	set_verb(out, VERB_NOTHING, 0);
	policy_lost(out);
}

void
policy_lost(struct verdict *v)
{
	/* One word per outcome, so logs and alerts can match it; the why
	 * goes in the note. */
	snprintf(v->note, sizeof v->note, "lock taken by another runner; "
	    "outcome not recorded: %s", v->verb == VERB_SUCCESS ? "success" :
	    v->message);
	set_verb(v, VERB_NOTHING, 0);
}

void
policy_settle(struct verdict *v, int owned)
{
	if (owned > 0)
		return;
	if (owned == 0) {
		if (v->verb != VERB_NOTHING)
			policy_lost(v);
		return;
	}
	snprintf(v->note, sizeof v->note, "cancelled by an operator while it "
	    "ran; outcome not recorded: %s", v->verb == VERB_SUCCESS ?
	    "success" : v->verb == VERB_NOTHING ? "stopped" : v->message);
	snprintf(v->message, sizeof v->message, "cancelled by operator");
	set_verb(v, VERB_FAIL, 0);
	v->word = "cancelled";
}
