/*
 * cron.c - parse and walk five-field cron expressions.
 *
 * Schedules (schedule.c) need two questions answered: which wall-clock
 * minute at or before t is a slot, and which is the next one.  Both walk
 * whole days that do not match and whole hours that do not, so even
 * "0 0 29 2 *" is found within a few thousand steps; an expression that
 * matches no day within 28 years (the calendar's weekday cycle, leap
 * years included) never will, and is refused when parsed.
 *
 * The syntax is Vixie cron's, which operators know from crontab(5): a
 * field is a list of *, N or N-M, each with an optional /STEP (N/STEP
 * meaning N to the field's end); month and weekday names (jan, mon) in
 * any case; weekday 7 is Sunday as 0 is.  Everything else is an error
 * that says which field and why: numbers out of range, a step of 0, a
 * range that runs backwards, a sixth field, trailing junk.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cron.h"
#include "util.h"

#define DAYS_SEARCHED (28 * 366 + 1)

struct field {
	const char *name;
	int min, max;
	const char *const *names;	/* for min.., or NULL */
};

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may",
	"jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL };
static const char *const weekday_names[] = { "sun", "mon", "tue", "wed",
	"thu", "fri", "sat", NULL };

static const struct field fields[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day of month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day of week", 0, 7, weekday_names },
};

static const struct {
	const char *name, *fields;
} macros[] = {
	{ "@hourly", "0 * * * *" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@monthly", "0 0 1 * *" },
	{ "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
};

/* A number or a name of field f at *p (advanced past it) into *out. */
static int
read_value(const struct field *f, const char **p, int *out)
{
	const char *s = *p;
	int i, n = 0, digits = 0;

	if (f->names != NULL)
		for (i = 0; f->names[i] != NULL; i++)
			if (strncasecmp(s, f->names[i], 3) == 0) {
				*out = f->min + i;
				*p = s + 3;
				return 0;
			}
	/* Three digits are more than any field takes: no overflow. */
	while (*s >= '0' && *s <= '9') {
		if (++digits > 3)
			return -1;
		n = n * 10 + (*s++ - '0');
	}
	if (digits == 0 || n < f->min || n > f->max)
		return -1;
	*out = n;
	*p = s;
	return 0;
}

/* The step after the "/" at *p (advanced past both) into *out: 1 to 3
 * digits, leading zeros too, as read_value takes a value; -1 without. */
static int
read_step(const char **p, int *out)
{
	const char *s = *p + 1;
	int n = 0, digits = 0;

	while (*s >= '0' && *s <= '9') {
		if (++digits > 3)
			return -1;
		n = n * 10 + (*s++ - '0');
	}
	if (digits == 0)
		return -1;
	*out = n;
	*p = s;
	return 0;
}

/* One field's text (NUL-ended) into bits; -1 with err. */
static int
parse_field(const struct field *f, const char *text, uint64_t *bits,
    char *err, size_t errlen)
{
	const char *p = text;
	int lo, hi, step, v;

	*bits = 0;
	for (;;) {
		step = 1;
		if (*p == '*') {
			lo = f->min;
			hi = f->max;
			p++;
		} else {
			if (read_value(f, &p, &lo) != 0)
				goto bad;
			hi = lo;
			if (*p == '-') {
				p++;
				if (read_value(f, &p, &hi) != 0 || hi < lo)
					goto bad;
			} else if (*p == '/')
				hi = f->max;
		}
		/* Up to the field's whole span: a step of 60 in minutes is
		 * minute 0 alone, as other crons take it.  Its digits are read
		 * as a value's are (a step of 05 is 5). */
		if (*p == '/' && (read_step(&p, &step) != 0 || step < 1 ||
		    step > f->max - f->min + 1))
			goto bad;
		for (v = lo; v <= hi; v += step)
			*bits |= 1ULL << v;
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			goto bad;
	}
bad:
	return errf(err, errlen, "%s: not %d..%d, a list, a range or a step "
	    "of 1 to %d: \"%s\"", f->name, f->min, f->max,
	    f->max - f->min + 1, text);
}

static int day_matches(const struct cron *c, int64_t day);

int
cron_parse(const char *text, struct cron *c, char *err, size_t errlen)
{
	char buf[CRON_TEXT_MAX + 1], *words[6], *save = NULL, *w;
	uint64_t bits[5];
	size_t i, n = 0;
	int64_t any;

	memset(c, 0, sizeof *c);
	if (strlen(text) > CRON_TEXT_MAX)
		return errf(err, errlen, "longer than %d bytes", CRON_TEXT_MAX);
	for (i = 0; text[0] == '@' && i < sizeof macros / sizeof macros[0];
	    i++)
		if (strcmp(text, macros[i].name) == 0)
			text = macros[i].fields;
	if (text[0] == '@')
		return errf(err, errlen, "unknown \"%s\" (known: @hourly, "
		    "@daily, @weekly, @monthly, @yearly)", text);
	snprintf(buf, sizeof buf, "%s", text);
	for (w = strtok_r(buf, " \t", &save); w != NULL && n < 6;
	    w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	if (n != 5)
		return errf(err, errlen, "not five fields (minute hour "
		    "day-of-month month day-of-week) or @daily and the like: "
		    "\"%s\"", text);
	for (i = 0; i < 5; i++)
		if (parse_field(&fields[i], words[i], &bits[i], err,
		    errlen) != 0)
			return -1;
	c->minutes = bits[0];
	c->hours = (uint32_t)bits[1];
	c->days = (uint32_t)bits[2];
	c->months = (uint16_t)bits[3];
	/* 7 is Sunday, as 0 is. */
	c->weekdays = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f);
	c->days_star = words[2][0] == '*';
	c->weekdays_star = words[4][0] == '*';
	if (cron_next(c, 0, &any) != 0)
		return errf(err, errlen, "no day matches: \"%s\"", text);
	return 0;
}

/* Days since 1970-01-01 of a civil date, and back (H. Hinnant's
 * algorithms, exact for the proleptic Gregorian calendar). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int64_t
cron_minute(int year, int month, int day, int hour, int minute)
{
	return days_from_civil(year, month, day) * 1440 + hour * 60 + minute;
}

void
cron_civil(int64_t t, int *year, int *month, int *day, int *hour,
    int *minute, int *weekday)
{
	int64_t days = floor_div(t, 1440), m = t - days * 1440;

	civil_from_days(days, year, month, day);
	*hour = (int)(m / 60);
	*minute = (int)(m % 60);
	/* 1970-01-01 was a Thursday. */
	*weekday = (int)(((days + 4) % 7 + 7) % 7);
}

static int
day_matches(const struct cron *c, int64_t day)
{
	int y, m, d, h, mi, wd, dom, dow;

	cron_civil(day * 1440, &y, &m, &d, &h, &mi, &wd);
	if (!(c->months >> m & 1))
		return 0;
	dom = (int)(c->days >> d & 1);
	dow = c->weekdays >> wd & 1;
	if (c->days_star || c->weekdays_star)
		return dom && dow;
	return dom || dow;
}

int
cron_matches(const struct cron *c, int64_t t)
{
	int64_t day = floor_div(t, 1440), m = t - day * 1440;

	return day_matches(c, day) && (c->hours >> (m / 60) & 1) &&
	    (c->minutes >> (m % 60) & 1);
}

/* The minute of day from `from` down (dir -1) or up (dir 1) in a matching
 * day that matches hour and minute, or -1. */
static int
scan_day(const struct cron *c, int from, int dir)
{
	int h, m;

	for (h = from / 60; h >= 0 && h < 24; h += dir) {
		if (!(c->hours >> h & 1))
			continue;
		m = h == from / 60 ? from % 60 : dir < 0 ? 59 : 0;
		for (; m >= 0 && m < 60; m += dir)
			if (c->minutes >> m & 1)
				return h * 60 + m;
	}
	return -1;
}

static int
walk(const struct cron *c, int64_t t, int dir, int64_t *out)
{
	int64_t day = floor_div(t, 1440);
	int from = (int)(t - day * 1440), n, m;

	for (n = 0; n < DAYS_SEARCHED; n++, day += dir) {
		if (day_matches(c, day) && (m = scan_day(c, from, dir)) >= 0) {
			*out = day * 1440 + m;
			return 0;
		}
		from = dir < 0 ? 1439 : 0;
	}
	return -1;
}

int
cron_prev(const struct cron *c, int64_t t, int64_t *out)
{
	return walk(c, t, -1, out);
}

int
cron_next(const struct cron *c, int64_t t, int64_t *out)
{
	return walk(c, t, 1, out);
}

int
cron_read(const char *text, int64_t *t)
{
	int y, mo, d, h, mi, s, n = 0, wd;
	int yy, mm, dd, hh, nn;

	if (sscanf(text, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi,
	    &s, &n) != 6 || text[n] != '\0' || n != 19 || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 || y < 1 || h < 0 ||
	    mi < 0 || s < 0)
		return -1;
	*t = cron_minute(y, mo, d, h, mi);
	/* 2026-02-30 is not a day. */
	cron_civil(*t, &yy, &mm, &dd, &hh, &nn, &wd);
	return yy == y && mm == mo && dd == d ? 0 : -1;
}

void
cron_format_sql(int64_t t, char *out, size_t len)
{
	int y, m, d, h, mi, wd;

	cron_civil(t, &y, &m, &d, &h, &mi, &wd);
	snprintf(out, len, "%04d-%02d-%02d %02d:%02d:00", y, m, d, h, mi);
}

void
cron_format_slot(int64_t t, char *out, size_t len)
{
	int y, m, d, h, mi, wd;

	cron_civil(t, &y, &m, &d, &h, &mi, &wd);
	snprintf(out, len, "%04d-%02d-%02dT%02d:%02d", y, m, d, h, mi);
}
