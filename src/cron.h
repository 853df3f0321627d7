/*
 * cron.h - five-field cron expressions over wall-clock minutes.
 *
 * Pure: no clock, no time zone.  A wall-clock time is a count of minutes
 * since 1970-01-01 00:00 on a calendar without zones (what a clock on the
 * wall reads, turned into a number); the caller maps it to real time.
 */
#ifndef JOBRUN_CRON_H
#define JOBRUN_CRON_H

#include <stddef.h>
#include <stdint.h>

/* The longest expression accepted, in bytes. */
#define CRON_TEXT_MAX 256

/* A parsed expression: one bit per allowed value of each field. */
struct cron {
	uint64_t minutes;	/* bits 0..59 */
	uint32_t hours;		/* bits 0..23 */
	uint32_t days;		/* bits 1..31 */
	uint16_t months;	/* bits 1..12 */
	uint8_t weekdays;	/* bits 0..6, Sunday 0 */
	/* The day-of-month or day-of-week field starts with '*': then a day
	 * must match both fields, otherwise either (Vixie cron's rule). */
	int days_star, weekdays_star;
};

/* Parse text: five fields ("m h dom mon dow": numbers, *, a-b, lists,
 * /step, month and day names) or @hourly, @daily, @midnight, @weekly,
 * @monthly, @yearly, @annually.  0, or -1 with err saying what is wrong.
 * An expression no day of 28 years matches (30 2 *) is refused. */
int cron_parse(const char *text, struct cron *c, char *err, size_t errlen);

/* Whether wall-clock minute t matches. */
int cron_matches(const struct cron *c, int64_t t);

/* The latest matching minute <= t (*out), or -1 when none in 28 years. */
int cron_prev(const struct cron *c, int64_t t, int64_t *out);

/* The earliest matching minute >= t (*out), or -1 when none in 28 years. */
int cron_next(const struct cron *c, int64_t t, int64_t *out);

/* Wall-clock minute of a date and time (month 1..12, day 1..31), and back
 * again; the weekday is 0 for Sunday. */
int64_t cron_minute(int year, int month, int day, int hour, int minute);
void cron_civil(int64_t t, int *year, int *month, int *day, int *hour,
                int *minute, int *weekday);

/* "YYYY-MM-DD HH:MM:SS" (seconds ignored, the server's DATETIME text) into
 * *t: 0, or -1 when text is not such a time. */
int cron_read(const char *text, int64_t *t);

/* t as "YYYY-MM-DD HH:MM:00" (sql) or "YYYY-MM-DDTHH:MM" (a slot's name);
 * out needs 20 bytes. */
void cron_format_sql(int64_t t, char *out, size_t len);
void cron_format_slot(int64_t t, char *out, size_t len);

#endif
