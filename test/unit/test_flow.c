/*
 * test_flow.c - the rate limit's token bucket (flow_bucket): what a claim
 * of a rated type is allowed, from the control row's tokens and times.
 *
 * The bucket decides whether a job starts now or waits, so its edges are
 * asserted here: a new row (tokens 0 at time 0) is full, refills stop at
 * the burst, a clock that went back refills nothing, and the wait until
 * the next start is never too short (a runner that woke early would only
 * find the bucket empty again).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "flow.h"

static const struct cfg_flow ten_a_second = { .rate = 10, .period = 1,
    .burst = 1 };
static const struct cfg_flow twenty_a_minute_burst_5 = { .rate = 20,
    .period = 60, .burst = 5 };

static void
test_new_row_is_full(void **state)
{
	int64_t wait;

	(void)state;
	assert_true(flow_bucket(&ten_a_second, 0, 0, 1.8e9, &wait) == 1.0);
	assert_int_equal(wait, 0);
	assert_true(flow_bucket(&twenty_a_minute_burst_5, 0, 0, 1.8e9,
	    &wait) == 5.0);
	assert_int_equal(wait, 0);
}

static void
test_refill_by_rate(void **state)
{
	int64_t wait;
	double t;

	(void)state;
	/* Empty 50 ms ago at 10/s: half a start, 50 ms to wait. */
	t = flow_bucket(&ten_a_second, 0, 100.0, 100.05, &wait);
	assert_true(t > 0.499 && t < 0.501);
	assert_in_range(wait, 50, 51);
	/* 100 ms: one start, now (or in a millisecond: 100.1 - 100.0 is a
	 * hair under 0.1 in binary, and the wait is rounded up). */
	t = flow_bucket(&ten_a_second, 0, 100.0, 100.1, &wait);
	assert_true(t > 0.999);
	assert_in_range(wait, 0, 1);
	t = flow_bucket(&ten_a_second, 0, 100.0, 100.125, &wait);
	assert_int_equal(wait, 0);
	/* 20/min: 3 s a start; 1.5 s after a start, 1.5 s to wait. */
	flow_bucket(&twenty_a_minute_burst_5, 0, 100.0, 101.5, &wait);
	assert_in_range(wait, 1500, 1501);
}

static void
test_burst_caps_the_saving(void **state)
{
	int64_t wait;

	(void)state;
	assert_true(flow_bucket(&twenty_a_minute_burst_5, 2, 100, 1000,
	    &wait) == 5.0);
	assert_true(flow_bucket(&ten_a_second, 1, 100, 1000, &wait) == 1.0);
}

static void
test_clock_back_refills_nothing(void **state)
{
	int64_t wait;

	(void)state;
	assert_true(flow_bucket(&ten_a_second, 0.25, 100, 99, &wait) == 0.25);
	assert_in_range(wait, 75, 76);
}

static void
test_no_rate_no_wait(void **state)
{
	static const struct cfg_flow capped = { .concurrency = 3 };
	int64_t wait = 7;

	(void)state;
	assert_true(flow_bucket(&capped, 0, 0, 100, &wait) == 0);
	assert_int_equal(wait, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_row_is_full),
		cmocka_unit_test(test_refill_by_rate),
		cmocka_unit_test(test_burst_caps_the_saving),
		cmocka_unit_test(test_clock_back_refills_nothing),
		cmocka_unit_test(test_no_rate_no_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
