/*
 * test_latency.c - the p50 and p99 that status and report give from the
 * start latency histogram (latency_quantile): the rank found in its
 * bucket and interpolated there, as Prometheus' histogram_quantile does,
 * with the edges: no job, one job, empty buckets below and between, and
 * a quantile past the last finite bound (300 s).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "latency.h"

/* got within a millionth of a millisecond of want (cmocka's float
 * assertion works in float). */
#define assert_near(got, want) do { \
	double got_ = (got), want_ = (want); \
	assert_true(got_ - want_ < 1e-6 && want_ - got_ < 1e-6); \
} while (0)

/* A row from per-bucket counts (not cumulative), in the bounds' order:
 * 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30000, 300000 ms, +Inf. */
static struct latency_row
row(const uint64_t per[RUN_LATENCY_BUCKETS])
{
	struct latency_row r;
	uint64_t sum = 0;
	int i;

	memset(&r, 0, sizeof r);
	for (i = 0; i < RUN_LATENCY_BUCKETS; i++)
		r.le[i] = sum += per[i];
	return r;
}

static void
test_no_job(void **state)
{
	static const uint64_t per[RUN_LATENCY_BUCKETS] = { 0 };
	struct latency_row r = row(per);

	(void)state;
	assert_true(latency_quantile(&r, 0.5) < 0);
	assert_true(latency_quantile(&r, 0.99) < 0);
}

static void
test_interpolated_in_bucket(void **state)
{
	/* 10 jobs between 10 and 25 ms: the 5th is half way, 17.5 ms. */
	static const uint64_t per[RUN_LATENCY_BUCKETS] = { 0, 0, 10 };
	struct latency_row r = row(per);

	(void)state;
	assert_near(latency_quantile(&r, 0.5), 17.5);
	assert_near(latency_quantile(&r, 0.99), 10 + 15 * 0.99);
	assert_near(latency_quantile(&r, 1), 25);
}

static void
test_rank_on_a_bound(void **state)
{
	/* 50 jobs in the first bucket, 50 in the 250-500 ms one: the 50th
	 * is the first bucket's top; the 99th near the second's. */
	static const uint64_t per[RUN_LATENCY_BUCKETS] = {
		50, 0, 0, 0, 0, 0, 50
	};
	struct latency_row r = row(per);

	(void)state;
	assert_near(latency_quantile(&r, 0.5), 5);
	assert_near(latency_quantile(&r, 0.99), 250 + 250 * 49.0 / 50);
}

static void
test_one_job(void **state)
{
	static const uint64_t per[RUN_LATENCY_BUCKETS] = {
		0, 0, 0, 0, 0, 0, 0, 1
	};
	struct latency_row r = row(per);

	(void)state;
	/* One job between 500 ms and 1 s: p50 is half way. */
	assert_near(latency_quantile(&r, 0.5), 750);
}

static void
test_past_the_last_bound(void **state)
{
	/* 98 fast, 2 over 300 s: p99 is the last finite bound. */
	static const uint64_t per[RUN_LATENCY_BUCKETS] = {
		98, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2
	};
	struct latency_row r = row(per);

	(void)state;
	assert_near(latency_quantile(&r, 0.5), 5 * 50.0 / 98);
	assert_near(latency_quantile(&r, 0.99), 300000);
}

static void
test_line(void **state)
{
	static const uint64_t per[RUN_LATENCY_BUCKETS] = {
		98, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2
	};
	static const uint64_t none[RUN_LATENCY_BUCKETS] = { 0 };
	struct latency_row r = row(per), z = row(none);
	char buf[128];

	(void)state;
	latency_line(buf, sizeof buf, &r);
	assert_string_equal(buf, "p50 3 ms, p99 300 s or more (100 jobs)");
	latency_line(buf, sizeof buf, &z);
	assert_string_equal(buf, "no job");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_job),
		cmocka_unit_test(test_interpolated_in_bucket),
		cmocka_unit_test(test_rank_on_a_bound),
		cmocka_unit_test(test_one_job),
		cmocka_unit_test(test_past_the_last_bound),
		cmocka_unit_test(test_line),
	};

	return cmocka_run_group_tests_name("latency", tests, NULL, NULL);
}
