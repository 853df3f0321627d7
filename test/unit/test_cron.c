/*
 * test_cron.c - the cron expressions of [schedule.NAME]: what each field
 * takes, what is refused (with the message an operator reads), and the
 * walk to the previous and next slot, across month ends, leap days and
 * the day-of-month / day-of-week rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cron.h"

static struct cron
ok(const char *text)
{
	struct cron c;
	char err[256] = "";

	if (cron_parse(text, &c, err, sizeof err) != 0)
		fail_msg("\"%s\" refused: %s", text, err);
	return c;
}

static void
refused(const char *text, const char *want)
{
	struct cron c;
	char err[256] = "";

	assert_int_equal(cron_parse(text, &c, err, sizeof err), -1);
	assert_string_equal(err, want);
}

static int64_t
at(const char *text)
{
	int64_t t;

	assert_int_equal(cron_read(text, &t), 0);
	return t;
}

static const char *
show(int64_t t)
{
	static char buf[32];

	cron_format_slot(t, buf, sizeof buf);
	return buf;
}

static const char *
prev(const char *expr, const char *from)
{
	struct cron c = ok(expr);
	int64_t t;

	assert_int_equal(cron_prev(&c, at(from), &t), 0);
	return show(t);
}

static const char *
next(const char *expr, const char *from)
{
	struct cron c = ok(expr);
	int64_t t;

	assert_int_equal(cron_next(&c, at(from), &t), 0);
	return show(t);
}

static void
test_fields(void **state)
{
	struct cron c;

	(void)state;
	c = ok("*/15 9-17 * * mon-fri");
	assert_true(c.minutes == (1ULL | 1ULL << 15 | 1ULL << 30 | 1ULL << 45));
	assert_int_equal(c.hours, 0x3fe00);
	assert_int_equal(c.weekdays, 0x3e);
	c = ok("5,10-12,50/5 0 1,15 JAN,Jul 7");
	assert_true(c.minutes == (1ULL << 5 | 1ULL << 10 | 1ULL << 11 |
	    1ULL << 12 | 1ULL << 50 | 1ULL << 55));
	assert_int_equal(c.days, 1 << 1 | 1 << 15);
	assert_int_equal(c.months, 1 << 1 | 1 << 7);
	assert_int_equal(c.weekdays, 1);	/* 7 is Sunday */
	c = ok("\t0  3 * * *\t");
	assert_int_equal(c.hours, 1 << 3);
	assert_true(c.days_star && c.weekdays_star);
	c = ok("0 0 */2 * 1-5/2");
	assert_true(c.days_star);
	assert_false(c.weekdays_star);
	/* A step takes leading zeros as a value does (Vixie cron too). */
	c = ok("*/05 05 * * *");
	assert_true(c.minutes == ok("*/5 5 * * *").minutes);
	assert_int_equal(c.hours, 1 << 5);
	c = ok("0-59/010 */012 * * *");
	assert_true(c.minutes == ok("*/10 * * * *").minutes);
	assert_int_equal(c.hours, 1 << 0 | 1 << 12);
}

static void
test_macros(void **state)
{
	(void)state;
	assert_string_equal(prev("@hourly", "2026-12-01 03:59:59"),
	    "2026-12-01T03:00");
	assert_string_equal(prev("@daily", "2026-12-01 03:59:00"),
	    "2026-12-01T00:00");
	assert_string_equal(prev("@midnight", "2026-12-01 00:00:00"),
	    "2026-12-01T00:00");
	/* 2026-12-01 is a Tuesday. */
	assert_string_equal(prev("@weekly", "2026-12-01 12:00:00"),
	    "2026-11-29T00:00");
	assert_string_equal(prev("@monthly", "2026-12-01 12:00:00"),
	    "2026-12-01T00:00");
	assert_string_equal(prev("@yearly", "2026-12-01 12:00:00"),
	    "2026-01-01T00:00");
	assert_string_equal(next("@annually", "2026-12-01 12:00:00"),
	    "2027-01-01T00:00");
	/* A step as long as its field's span: the first value alone. */
	assert_string_equal(prev("*/60 * * * *", "2026-12-01 03:59:59"),
	    "2026-12-01T03:00");
	assert_string_equal(next("0 */24 * * *", "2026-12-01 03:59:59"),
	    "2026-12-02T00:00");
}

static void
test_hostile(void **state)
{
	char big[400];

	(void)state;
	refused("60 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"60\"");
	refused("* 24 * * *", "hour: not 0..23, a list, a range or a step "
	    "of 1 to 24: \"24\"");
	refused("* * 0 * *", "day of month: not 1..31, a list, a range or a "
	    "step of 1 to 31: \"0\"");
	refused("* * * 13 *", "month: not 1..12, a list, a range or a step "
	    "of 1 to 12: \"13\"");
	refused("* * * * 8", "day of week: not 0..7, a list, a range or a "
	    "step of 1 to 8: \"8\"");
	refused("*/0 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"*/0\"");
	refused("*/61 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"*/61\"");
	refused("*/00 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"*/00\"");
	refused("*/061 * * * *", "minute: not 0..59, a list, a range or a "
	    "step of 1 to 60: \"*/061\"");
	refused("*/0005 * * * *", "minute: not 0..59, a list, a range or a "
	    "step of 1 to 60: \"*/0005\"");
	refused("99999999999999999999 * * * *", "minute: not 0..59, a list, a "
	    "range or a step of 1 to 60: \"99999999999999999999\"");
	refused("*/99999999999999999999 * * * *", "minute: not 0..59, a list, "
	    "a range or a step of 1 to 60: \"*/99999999999999999999\"");
	refused("0005 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"0005\"");
	refused("5-1 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"5-1\"");
	refused("1,,2 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"1,,2\"");
	refused("1, * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"1,\"");
	refused("-1 * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"-1\"");
	refused("1/2/3 * * * *", "minute: not 0..59, a list, a range or a "
	    "step of 1 to 60: \"1/2/3\"");
	refused("*/-1 * * * *", "minute: not 0..59, a list, a range or a "
	    "step of 1 to 60: \"*/-1\"");
	refused("** * * * *", "minute: not 0..59, a list, a range or a step "
	    "of 1 to 60: \"**\"");
	refused("0 0 * * monx", "day of week: not 0..7, a list, a range or a "
	    "step of 1 to 8: \"monx\"");
	refused("0 0 * jan-feb-mar *", "month: not 1..12, a list, a range or "
	    "a step of 1 to 12: \"jan-feb-mar\"");
	refused("0 0 * * * *", "not five fields (minute hour day-of-month "
	    "month day-of-week) or @daily and the like: \"0 0 * * * *\"");
	refused("0 0 * *", "not five fields (minute hour day-of-month month "
	    "day-of-week) or @daily and the like: \"0 0 * *\"");
	refused("", "not five fields (minute hour day-of-month month "
	    "day-of-week) or @daily and the like: \"\"");
	refused("@reboot", "unknown \"@reboot\" (known: @hourly, @daily, "
	    "@weekly, @monthly, @yearly)");
	refused("@daily x", "unknown \"@daily x\" (known: @hourly, @daily, "
	    "@weekly, @monthly, @yearly)");
	refused("0 0 30 2 *", "no day matches: \"0 0 30 2 *\"");
	refused("0 0 31 4,6,9,11 *", "no day matches: \"0 0 31 4,6,9,11 *\"");
	memset(big, '1', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	refused(big, "longer than 256 bytes");
}

static void
test_walk(void **state)
{
	(void)state;
	/* A slot at exactly t is t's own. */
	assert_string_equal(prev("0 3 * * *", "2026-12-01 03:00:00"),
	    "2026-12-01T03:00");
	assert_string_equal(prev("0 3 * * *", "2026-12-01 02:59:59"),
	    "2026-11-30T03:00");
	assert_string_equal(next("0 3 * * *", "2026-12-01 03:00:00"),
	    "2026-12-01T03:00");
	assert_string_equal(next("0 3 * * *", "2026-12-01 03:01:00"),
	    "2026-12-02T03:00");
	/* Month and year ends. */
	assert_string_equal(next("0 0 31 * *", "2026-04-01 00:00:00"),
	    "2026-05-31T00:00");
	assert_string_equal(next("59 23 31 12 *", "2026-12-31 23:59:00"),
	    "2026-12-31T23:59");
	assert_string_equal(next("0 0 1 1 *", "2026-12-31 23:59:00"),
	    "2027-01-01T00:00");
	/* A leap day comes every four years (2100 is not one). */
	assert_string_equal(next("0 12 29 2 *", "2026-03-01 00:00:00"),
	    "2028-02-29T12:00");
	assert_string_equal(prev("0 12 29 2 *", "2028-02-29 11:59:00"),
	    "2024-02-29T12:00");
	assert_string_equal(next("0 0 29 2 *", "2097-01-01 00:00:00"),
	    "2104-02-29T00:00");
	/* Both day fields restricted: either matches (the 13th, or a
	 * Friday); one of them '*': both must. */
	assert_string_equal(next("0 0 13 * 5", "2026-12-01 00:00:00"),
	    "2026-12-04T00:00");
	assert_string_equal(next("0 0 13 * 5", "2026-12-12 00:00:00"),
	    "2026-12-13T00:00");
	assert_string_equal(next("0 0 */2 * 5", "2026-12-01 00:00:00"),
	    "2026-12-11T00:00");
	/* Steps and lists inside an hour. */
	assert_string_equal(prev("*/20 * * * *", "2026-12-01 10:59:00"),
	    "2026-12-01T10:40");
	assert_string_equal(prev("10-12 * * * *", "2026-12-01 00:05:00"),
	    "2026-11-30T23:12");
	/* Before 1970 too (minutes are negative there). */
	assert_string_equal(prev("30 6 * * *", "1969-12-31 06:00:00"),
	    "1969-12-30T06:30");
}

static void
test_read_format(void **state)
{
	int64_t t;
	char sql[32];

	(void)state;
	assert_int_equal(cron_read("1970-01-01 00:00:00", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(cron_read("2026-12-01 03:07:59", &t), 0);
	cron_format_sql(t, sql, sizeof sql);
	assert_string_equal(sql, "2026-12-01 03:07:00");
	assert_string_equal(show(t), "2026-12-01T03:07");
	assert_int_equal(cron_read("2026-02-30 00:00:00", &t), -1);
	assert_int_equal(cron_read("2026-12-01 24:00:00", &t), -1);
	assert_int_equal(cron_read("2026-12-01 03:00:00x", &t), -1);
	assert_int_equal(cron_read("2026-12-01", &t), -1);
	assert_int_equal(cron_read("", &t), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_macros),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_read_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
