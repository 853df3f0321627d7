/*
 * test_backoff.c - the retry delay: min(cap, base * 2^min(attempts, 6)).
 *
 * The delay decides when a failed job runs again, so the exact numbers an
 * operator reads in jobrun.conf(5) are asserted here, including the edges
 * (no attempts yet, a cap below the doubling, a base that would overflow).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>

#include "backoff.h"

static void
test_defaults_sequence(void **state)
{
	static const unsigned long want[] = {
		120, 240, 480, 960, 1920, 3600, 3600,
	};
	unsigned long attempts;

	(void)state;
	for (attempts = 1; attempts <= 7; attempts++)
		assert_int_equal(backoff_delay(60, 3600, attempts),
		    want[attempts - 1]);
}

static void
test_zero_attempts_is_base(void **state)
{
	(void)state;
	assert_int_equal(backoff_delay(60, 3600, 0), 60);
	assert_int_equal(backoff_delay(7, 3600, 0), 7);
}

static void
test_exponent_capped_at_6(void **state)
{
	(void)state;
	assert_int_equal(backoff_delay(10, ULONG_MAX, 5), 320);
	assert_int_equal(backoff_delay(10, ULONG_MAX, 6), 640);
	assert_int_equal(backoff_delay(10, ULONG_MAX, 7), 640);
	assert_int_equal(backoff_delay(10, ULONG_MAX, 20), 640);
	assert_int_equal(backoff_delay(10, ULONG_MAX, ULONG_MAX), 640);
}

static void
test_cap_below_doubling(void **state)
{
	(void)state;
	assert_int_equal(backoff_delay(60, 100, 0), 60);
	assert_int_equal(backoff_delay(60, 100, 1), 100);
	assert_int_equal(backoff_delay(60, 100, 6), 100);
	/* A cap below the base wins too (the config refuses it, the function
	 * must still never exceed cap). */
	assert_int_equal(backoff_delay(60, 30, 0), 30);
	assert_int_equal(backoff_delay(60, 0, 3), 0);
	/* Exactly at the cap. */
	assert_int_equal(backoff_delay(60, 3840, 6), 3840);
}

static void
test_base_zero(void **state)
{
	(void)state;
	assert_int_equal(backoff_delay(0, 3600, 0), 0);
	assert_int_equal(backoff_delay(0, 3600, 1), 0);
	assert_int_equal(backoff_delay(0, 3600, 100), 0);
	assert_int_equal(backoff_delay(0, 0, 3), 0);
}

static void
test_huge_base_does_not_overflow(void **state)
{
	(void)state;
	assert_int_equal(backoff_delay(ULONG_MAX, 3600, 0), 3600);
	assert_int_equal(backoff_delay(ULONG_MAX, 3600, 1), 3600);
	assert_int_equal(backoff_delay(ULONG_MAX, 3600, 6), 3600);
	assert_int_equal(backoff_delay(ULONG_MAX / 2 + 1, 3600, 1), 3600);
	/* base << 6 wraps to exactly 0 here: must not come back as 0. */
	assert_int_equal(backoff_delay(1UL << (sizeof(long) * CHAR_BIT - 6),
	    3600, 6), 3600);
	assert_int_equal(backoff_delay(ULONG_MAX, ULONG_MAX, 6), ULONG_MAX);
	/* The largest configurable base still doubles exactly. */
	assert_int_equal(backoff_delay(86400, 604800, 6), 604800);
	assert_int_equal(backoff_delay(86400, ULONG_MAX, 6), 86400UL * 64);
}

/* The jitter takes off up to its fraction, never adds, and every second
 * of the window is as likely: 0.1 of 120 s is 109..120, 12 seconds. */
static void
test_jitter_window(void **state)
{
	unsigned long seen[121] = { 0 }, d, i;
	uint64_t draw;

	(void)state;
	assert_int_equal(backoff_jitter(120, 0, UINT32_MAX), 120);
	assert_int_equal(backoff_jitter(120, 100, 0), 120);
	assert_int_equal(backoff_jitter(120, 100, UINT32_MAX), 109);
	assert_int_equal(backoff_jitter(120, 1000, UINT32_MAX), 1);
	assert_int_equal(backoff_jitter(120, 5000, UINT32_MAX), 1);
	assert_int_equal(backoff_jitter(0, 1000, UINT32_MAX), 0);
	assert_int_equal(backoff_jitter(604800, 1000, UINT32_MAX), 1);
	assert_int_equal(backoff_jitter(4000001, 1000, UINT32_MAX), 4000001);
	for (draw = 0; draw <= UINT32_MAX; draw += 1 << 16) {
		d = backoff_jitter(120, 100, (uint32_t)draw);
		assert_in_range(d, 109, 120);
		seen[d]++;
	}
	/* 65536 draws over 12 seconds: 5461 or 5462 each. */
	for (i = 109; i <= 120; i++)
		assert_in_range(seen[i], 5461, 5462);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_sequence),
		cmocka_unit_test(test_zero_attempts_is_base),
		cmocka_unit_test(test_exponent_capped_at_6),
		cmocka_unit_test(test_cap_below_doubling),
		cmocka_unit_test(test_base_zero),
		cmocka_unit_test(test_huge_base_does_not_overflow),
		cmocka_unit_test(test_jitter_window),
	};

	return cmocka_run_group_tests_name("backoff", tests, NULL, NULL);
}
