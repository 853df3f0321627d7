/*
 * test_policy.c - what becomes of a job after its handler, branch by
 * branch: success, retry (backoff, Retry-After, the cap, the last
 * attempt), permanent failure, snooze (with and without progress, past
 * max_snoozes, without the migration), a lost lock, a second signal.
 *
 * The verdict is what an operator sees: the row's next state and delay,
 * last_error, and the log line's word, level and message, so each is
 * asserted as written.  Every job starts from the defaults of
 * jobrun.conf(5) (backoff 60 s to 3600 s, max_snoozes 100) on attempt 1
 * of 5, and each test changes what it is about.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "policy.h"

static struct policy_in
job(enum outcome outcome, long retry_after, const char *message)
{
	struct policy_in in = {
		.outcome = outcome, .retry_after = retry_after,
		.message = message, .secrets = NULL,
		.attempt = 1, .max_attempts = 5, .snoozes = 0,
		.resumable = 1, .progress = 0, .interrupted = 0, .signo = 0,
		.backoff_base = 60, .backoff_cap = 3600, .max_snoozes = 100,
	};

	return in;
}

/* The verdict on in; a static one, as it is large. */
static const struct verdict *
decide(const struct policy_in *in)
{
	static struct verdict v;

	memset(&v, 0x5a, sizeof v);	/* nothing is left as it was */
	policy_decide(in, &v);
	return &v;
}

static void
test_success(void **state)
{
	struct policy_in in = job(OUTCOME_SUCCESS, -1, "");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_SUCCESS);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->word, "success");
	assert_int_equal(v->level, LV_INFO);
	assert_string_equal(v->note, "");
	/* On the last attempt too, and whatever the handler said. */
	in.attempt = 5;
	in.message = "done: 3 rows";
	v = decide(&in);
	assert_int_equal(v->verb, VERB_SUCCESS);
	assert_string_equal(v->note, "");
}

/* base * 2^min(attempt, 6), capped: 120, 240, 480, 960, 1920, 3600. */
static void
test_retry_backoff(void **state)
{
	static const unsigned long want[] = { 120, 240, 480, 960, 1920, 3600,
	    3600, 3600 };
	struct policy_in in = job(OUTCOME_RETRY, -1, "exit 75: try later");
	const struct verdict *v;
	size_t i;

	(void)state;
	in.max_attempts = 2000;
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		in.attempt = i + 1;
		v = decide(&in);
		assert_int_equal(v->verb, VERB_RETRY);
		assert_int_equal(v->delay, want[i]);
		assert_string_equal(v->word, "retry");
		assert_int_equal(v->level, LV_WARN);
		assert_string_equal(v->message, "exit 75: try later");
		assert_string_equal(v->note, "exit 75: try later");
	}
	/* The exponent stops at 6 under a higher cap. */
	in.backoff_cap = 604800;
	in.attempt = 7;
	assert_int_equal(decide(&in)->delay, 60 * 64);
	in.attempt = 1000;
	assert_int_equal(decide(&in)->delay, 60 * 64);
	/* A base of 0 retries at once. */
	in.backoff_base = 0;
	assert_int_equal(decide(&in)->delay, 0);
}

/* A server's Retry-After beats the backoff, within backoff_cap. */
static void
test_retry_after_below_cap(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, 30, "HTTP 503");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 30);
	/* Longer than the backoff would be, still under the cap. */
	in.retry_after = 3000;
	assert_int_equal(decide(&in)->delay, 3000);
	in.retry_after = 3600;
	assert_int_equal(decide(&in)->delay, 3600);
	/* Retry-After: 0 means now. */
	in.retry_after = 0;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 0);
}

static void
test_retry_after_above_cap(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, 3601, "HTTP 429");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 3600);
	in.backoff_cap = 100;
	assert_int_equal(decide(&in)->delay, 100);
	/* 2^31 s, and the most a long holds. */
	in.retry_after = 2147483648L;
	assert_int_equal(decide(&in)->delay, 100);
	in.retry_after = LONG_MAX;
	assert_int_equal(decide(&in)->delay, 100);
	/* A cap of 0: every retry is due at once. */
	in.backoff_cap = 0;
	assert_int_equal(decide(&in)->delay, 0);
	in.retry_after = -1;
	assert_int_equal(decide(&in)->delay, 0);
}

/* A handler that could not start is retried as any failure, but said at
 * the failure level (-q), as a set-up mistake every retry repeats; a
 * retry that started stays a warning. */
static void
test_retry_setup_is_said(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, -1,
	    "jobrun: cannot execute handler: php8: No such file or directory");
	const struct verdict *v;

	(void)state;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->level, LV_WARN);
	in.setup = 1;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 120);
	assert_int_equal(v->level, LV_FAILURE);
}

/* A retry on the last attempt fails; last_error keeps the handler's
 * message, the log says why. */
static void
test_retry_last_attempt_fails(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, 30, "exit 75: try later");
	const struct verdict *v;

	(void)state;
	in.attempt = 5;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_FAIL);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->word, "failed");
	assert_int_equal(v->level, LV_FAILURE);
	assert_string_equal(v->message, "exit 75: try later");
	assert_string_equal(v->note, "no attempts left: exit 75: try later");
	/* Past the last (max_attempts lowered under a running job). */
	in.attempt = 6;
	assert_int_equal(decide(&in)->verb, VERB_FAIL);
	/* One before the last still retries. */
	in.attempt = 4;
	assert_int_equal(decide(&in)->verb, VERB_RETRY);
}

static void
test_permanent_failure(void **state)
{
	struct policy_in in = job(OUTCOME_FAIL, -1,
	    "exit 65 (permanent failure): bad request");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_FAIL);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->word, "failed");
	assert_int_equal(v->level, LV_FAILURE);
	assert_string_equal(v->message,
	    "exit 65 (permanent failure): bad request");
	assert_string_equal(v->note, "permanent failure: "
	    "exit 65 (permanent failure): bad request");
	/* A delay asked for does not matter, nor does the last attempt. */
	in.retry_after = 300;
	in.attempt = 5;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_FAIL);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->note, "permanent failure: "
	    "exit 65 (permanent failure): bad request");
}

static void
test_snooze_with_delay(void **state)
{
	struct policy_in in = job(OUTCOME_SNOOZE, 300, "HTTP 202: not yet");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_SNOOZE);
	assert_int_equal(v->delay, 300);
	assert_string_equal(v->word, "snoozed");
	assert_int_equal(v->level, LV_INFO);
	assert_string_equal(v->message, "HTTP 202: not yet");
	assert_string_equal(v->note, "HTTP 202: not yet");
	/* The cap holds for snoozes too. */
	in.retry_after = 86400;
	assert_int_equal(decide(&in)->delay, 3600);
	in.retry_after = LONG_MAX;
	assert_int_equal(decide(&in)->delay, 3600);
	/* No delay asked: the backoff's base. */
	in.retry_after = -1;
	assert_int_equal(decide(&in)->delay, 60);
	/* The last attempt does not matter: a snooze spends none. */
	in.attempt = 5;
	assert_int_equal(decide(&in)->verb, VERB_SNOOZE);
	/* One put-off short of max_snoozes still snoozes. */
	in.snoozes = 99;
	assert_int_equal(decide(&in)->verb, VERB_SNOOZE);
	/* An empty message stays empty (last_error becomes NULL). */
	in.message = "";
	v = decide(&in);
	assert_string_equal(v->message, "");
	assert_string_equal(v->note, "");
}

/* "Ask again now" without progress waits a second, as Retry-After: 0. */
static void
test_snooze_no_progress_zero_waits_1s(void **state)
{
	struct policy_in in = job(OUTCOME_SNOOZE, 0, "not yet");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_SNOOZE);
	assert_int_equal(v->delay, 1);
	assert_string_equal(v->word, "snoozed");
	/* No delay asked and a base of 0: the same second. */
	in.retry_after = -1;
	in.backoff_base = 0;
	assert_int_equal(decide(&in)->delay, 1);
	/* A cap of 0 does not make it spin either. */
	in.retry_after = 30;
	in.backoff_cap = 0;
	assert_int_equal(decide(&in)->delay, 1);
}

/* Progress saved and no delay asked: run again at once. */
static void
test_snooze_progress_no_delay(void **state)
{
	struct policy_in in = job(OUTCOME_SNOOZE, -1, "");
	const struct verdict *v;

	(void)state;
	in.progress = 1;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_SNOOZE);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->word, "progress");
	assert_int_equal(v->level, LV_INFO);
	in.retry_after = 0;
	assert_int_equal(decide(&in)->delay, 0);
	/* A delay asked for still holds, within the cap. */
	in.retry_after = 30;
	assert_int_equal(decide(&in)->delay, 30);
	in.retry_after = 7200;
	assert_int_equal(decide(&in)->delay, 3600);
}

/* Past max_snoozes without progress, a snooze is a retry that keeps the
 * delay and the message the handler gave. */
static void
test_snooze_past_max_snoozes(void **state)
{
	struct policy_in in = job(OUTCOME_SNOOZE, 300, "not yet");
	const struct verdict *v;

	(void)state;
	in.snoozes = 100;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 300);
	assert_string_equal(v->word, "retry");
	assert_int_equal(v->level, LV_WARN);
	assert_string_equal(v->message, "put off 100 times in a row without "
	    "progress (max_snoozes): not yet");
	assert_string_equal(v->note, v->message);
	/* No delay asked: the backoff's. */
	in.retry_after = -1;
	in.attempt = 2;
	assert_int_equal(decide(&in)->delay, 240);
	/* An empty message: the reason alone. */
	in.message = "";
	assert_string_equal(decide(&in)->message, "put off 100 times in a "
	    "row without progress (max_snoozes)");
	/* On the last attempt it fails. */
	in.message = "not yet";
	in.attempt = 5;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_FAIL);
	assert_string_equal(v->message, "put off 100 times in a row without "
	    "progress (max_snoozes): not yet");
	assert_string_equal(v->note, "no attempts left: put off 100 times in "
	    "a row without progress (max_snoozes): not yet");
	/* max_snoozes 0: no put-off without progress is free. */
	in.attempt = 1;
	in.snoozes = 0;
	in.max_snoozes = 0;
	assert_string_equal(decide(&in)->message, "put off 0 times in a row "
	    "without progress (max_snoozes): not yet");
	/* Progress starts the count again: still a snooze. */
	in.snoozes = 100;
	in.max_snoozes = 100;
	in.progress = 1;
	in.retry_after = 300;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_SNOOZE);
	assert_string_equal(v->word, "progress");
	assert_int_equal(v->delay, 300);
}

/* A table without the migration cannot count snoozes: a retry. */
static void
test_snooze_without_migration(void **state)
{
	struct policy_in in = job(OUTCOME_SNOOZE, 45, "not yet");
	const struct verdict *v;

	(void)state;
	in.resumable = 0;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 45);
	assert_string_equal(v->message, "asked to run again later, but the "
	    "table cannot count snoozes (apply sql/002_checkpoint.sql): "
	    "not yet");
	/* Progress cannot have been saved there, but would not help. */
	in.progress = 1;
	assert_int_equal(decide(&in)->verb, VERB_RETRY);
	/* 0 stays 0 for a retry: the 1 s floor is a snooze's. */
	in.retry_after = 0;
	assert_int_equal(decide(&in)->delay, 0);
	in.attempt = 5;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_FAIL);
	assert_string_equal(v->note, "no attempts left: asked to run again "
	    "later, but the table cannot count snoozes (apply "
	    "sql/002_checkpoint.sql): not yet");
}

/* The reason around a handler's message is redacted and cut like every
 * last_error: at most LAST_ERROR_CHARS characters, the message's end
 * kept. */
static void
test_snooze_reason_redacted_and_cut(void **state)
{
	static char big[3000];
	char *secret_values[] = { "hunter22" };
	const struct secrets secrets = { .values = secret_values, .n = 1 };
	struct policy_in in = job(OUTCOME_SNOOZE, 10, "token hunter22 said "
	    "wait\n");
	const struct verdict *v;
	size_t len;

	(void)state;
	in.resumable = 0;
	in.secrets = &secrets;
	v = decide(&in);
	assert_string_equal(v->message, "asked to run again later, but the "
	    "table cannot count snoozes (apply sql/002_checkpoint.sql): "
	    "token [redacted] said wait");
	memset(big, 'x', sizeof big - 2);
	big[sizeof big - 2] = 'Z';
	in.message = big;
	v = decide(&in);
	len = strlen(v->message);
	assert_int_equal(len, LAST_ERROR_CHARS);
	assert_int_equal(v->message[len - 1], 'Z');
	assert_memory_equal(v->message, "asked to run again later", 24);
	assert_string_equal(v->note, v->message);
}

/* Stopped for a lost lock: write nothing, say so. */
static void
test_lost_lock_nothing(void **state)
{
	struct policy_in in = job(OUTCOME_ABANDONED, -1, "lock lost");
	const struct verdict *v = decide(&in);

	(void)state;
	assert_int_equal(v->verb, VERB_NOTHING);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->word, "lost");
	assert_int_equal(v->level, LV_FAILURE);
	assert_string_equal(v->note, "lock taken by another runner; outcome "
	    "not recorded: lock lost");
	/* The last attempt changes nothing. */
	in.attempt = 5;
	assert_int_equal(decide(&in)->verb, VERB_NOTHING);
}

/* Stopped by a second signal: back, due now, the attempt not spent. */
static void
test_abandoned_by_signal_released(void **state)
{
	struct policy_in in = job(OUTCOME_ABANDONED, -1,
	    "stopped by the runner");
	const struct verdict *v;

	(void)state;
	in.interrupted = 1;
	in.signo = 15;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RELEASE);
	assert_int_equal(v->delay, 0);
	assert_string_equal(v->word, "put-back");
	assert_int_equal(v->level, LV_WARN);
	assert_string_equal(v->note, "handler stopped on signal 15; job put "
	    "back, due now");
	/* On the last attempt too. */
	in.attempt = 5;
	in.signo = 2;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RELEASE);
	assert_string_equal(v->note, "handler stopped on signal 2; job put "
	    "back, due now");
}

/* A handler that finished despite the second signal is marked as usual. */
static void
test_signal_after_handler_finished(void **state)
{
	struct policy_in in = job(OUTCOME_SUCCESS, -1, "");

	(void)state;
	in.interrupted = 1;
	in.signo = 15;
	assert_int_equal(decide(&in)->verb, VERB_SUCCESS);
	in.outcome = OUTCOME_RETRY;
	assert_int_equal(decide(&in)->verb, VERB_RETRY);
}

/* The write found another runner's lock: the verdict becomes "lost". */
static void
test_lost_after_write(void **state)
{
	struct policy_in in = job(OUTCOME_SUCCESS, -1, "");
	static struct verdict v;

	(void)state;
	policy_decide(&in, &v);
	policy_lost(&v);
	assert_int_equal(v.verb, VERB_NOTHING);
	assert_string_equal(v.word, "lost");
	assert_int_equal(v.level, LV_FAILURE);
	assert_string_equal(v.note, "lock taken by another runner; outcome "
	    "not recorded: success");
	/* Any other verdict: its message, reason and all. */
	in = job(OUTCOME_SNOOZE, 300, "not yet");
	in.snoozes = 100;
	policy_decide(&in, &v);
	policy_lost(&v);
	assert_int_equal(v.verb, VERB_NOTHING);
	assert_int_equal(v.delay, 0);
	assert_string_equal(v.note, "lock taken by another runner; outcome "
	    "not recorded: put off 100 times in a row without progress "
	    "(max_snoozes): not yet");
	in = job(OUTCOME_FAIL, -1, "bad");
	policy_decide(&in, &v);
	policy_lost(&v);
	assert_string_equal(v.note, "lock taken by another runner; outcome "
	    "not recorded: bad");
}

static void
test_edge_attempt_zero(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, -1, "e");
	const struct verdict *v;

	(void)state;
	/* A row edited by hand to attempts 0: the base, unchanged. */
	in.attempt = 0;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_RETRY);
	assert_int_equal(v->delay, 60);
	/* ...and with max_attempts 0 as well, nothing is left. */
	in.max_attempts = 0;
	v = decide(&in);
	assert_int_equal(v->verb, VERB_FAIL);
	assert_string_equal(v->note, "no attempts left: e");
}

static void
test_edge_max_attempts_zero(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, 5, "e");

	(void)state;
	in.max_attempts = 0;
	assert_int_equal(decide(&in)->verb, VERB_FAIL);
	/* A snooze does not spend an attempt: still a snooze. */
	in.outcome = OUTCOME_SNOOZE;
	assert_int_equal(decide(&in)->verb, VERB_SNOOZE);
	in.outcome = OUTCOME_SUCCESS;
	assert_int_equal(decide(&in)->verb, VERB_SUCCESS);
	/* max_attempts 1: the first retry is the last. */
	in.outcome = OUTCOME_RETRY;
	in.max_attempts = 1;
	assert_int_equal(decide(&in)->verb, VERB_FAIL);
}

static void
test_edge_huge_values(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, LONG_MAX, "e");

	(void)state;
	in.backoff_cap = 604800;
	in.max_attempts = ULONG_MAX;
	in.attempt = ULONG_MAX - 1;
	assert_int_equal(decide(&in)->delay, 604800);
	in.retry_after = -1;
	in.backoff_base = 86400;
	assert_int_equal(decide(&in)->delay, 604800);
	in.attempt = ULONG_MAX;
	assert_int_equal(decide(&in)->verb, VERB_FAIL);
	in.outcome = OUTCOME_SNOOZE;
	in.retry_after = LONG_MAX;
	in.snoozes = 4294967295UL;
	in.max_snoozes = 4294967295UL;
	assert_string_equal(decide(&in)->message, "put off "
	    "4294967295 times in a row without progress "
	    "(max_snoozes): e");
}

/* An outcome no handler reports is not ours to write either. */
static void
test_unknown_outcome_nothing(void **state)
{
	struct policy_in in = job((enum outcome)99, -1, "?");

	(void)state;
	assert_int_equal(decide(&in)->verb, VERB_NOTHING);
}

/* The jitter shortens the backoff, within its fraction; a delay the
 * handler asked for (Retry-After) is kept as asked. */
static void
test_retry_jitter(void **state)
{
	struct policy_in in = job(OUTCOME_RETRY, -1, "boom");

	(void)state;
	in.backoff_jitter = 100;
	in.draw = UINT32_MAX;
	assert_int_equal(decide(&in)->delay, 109);
	in.draw = 0;
	assert_int_equal(decide(&in)->delay, 120);
	in.draw = UINT32_MAX;
	in.attempt = 4;
	assert_int_equal(decide(&in)->delay, 960 - 96 + 1);
	in.retry_after = 300;
	assert_int_equal(decide(&in)->delay, 300);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success),
		cmocka_unit_test(test_retry_backoff),
		cmocka_unit_test(test_retry_after_below_cap),
		cmocka_unit_test(test_retry_after_above_cap),
		cmocka_unit_test(test_retry_setup_is_said),
		cmocka_unit_test(test_retry_last_attempt_fails),
		cmocka_unit_test(test_permanent_failure),
		cmocka_unit_test(test_snooze_with_delay),
		cmocka_unit_test(test_snooze_no_progress_zero_waits_1s),
		cmocka_unit_test(test_snooze_progress_no_delay),
		cmocka_unit_test(test_snooze_past_max_snoozes),
		cmocka_unit_test(test_snooze_without_migration),
		cmocka_unit_test(test_snooze_reason_redacted_and_cut),
		cmocka_unit_test(test_lost_lock_nothing),
		cmocka_unit_test(test_abandoned_by_signal_released),
		cmocka_unit_test(test_signal_after_handler_finished),
		cmocka_unit_test(test_lost_after_write),
		cmocka_unit_test(test_edge_attempt_zero),
		cmocka_unit_test(test_edge_max_attempts_zero),
		cmocka_unit_test(test_edge_huge_values),
		cmocka_unit_test(test_unknown_outcome_nothing),
		cmocka_unit_test(test_retry_jitter),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
