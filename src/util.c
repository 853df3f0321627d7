/*
 * util.c - checked allocation, strict number parsing, monotonic time.
 *
 * Allocation failure is the one condition jobrun does not try to survive:
 * a runner that cannot allocate a few kilobytes cannot do anything useful
 * and must not half-record a job, so it exits 70 (EX_SOFTWARE) at once and
 * leaves the claimed job, if any, to lock-expiry recovery.  This is the
 * only place that says so: jansson allocates through xmalloc, and what
 * libmariadb and libcurl allocate passes xcheck.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>
#include <time.h>

#include "util.h"

static void
out_of_memory(void)
{
	fputs("jobrun: out of memory\n", stderr);
	exit(EX_SOFTWARE);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		out_of_memory();
	return q;
}

void *
xcheck(void *p)
{
	if (p == NULL)
		out_of_memory();
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

int
parse_ulong(const char *s, unsigned long min, unsigned long max,
    unsigned long *out)
{
	char *end;
	unsigned long v;

	/* strtoul accepts leading blanks and a minus sign; a config value or
	 * option with either is a mistake, not a number. */
	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
parse_long(const char *s, long min, long max, long *out)
{
	const char *digits = s != NULL && s[0] == '-' ? s + 1 : s;
	char *end;
	long v;

	/* As parse_ulong: no blanks, no "+"; one "-" before the digits. */
	if (digits == NULL || !isdigit((unsigned char)digits[0]))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
parse_fraction(const char *s, unsigned long *permille)
{
	unsigned long n = 0, scale = 1000;
	const char *p = s;

	if (*p == '0' || *p == '1')
		n = (unsigned long)(*p++ - '0') * 1000;
	if (p != s && *p == '.' && p[1] != '\0')
		for (p++; *p >= '0' && *p <= '9' && scale > 1; p++)
			n += (unsigned long)(*p - '0') * (scale /= 10);
	if (p == s || *p != '\0' || n > 1000)
		return -1;
	*permille = n;
	return 0;
}

int64_t
now_ms(void)
{
	return now_us() / 1000;
}

int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* PF_EXITING in /proc/PID/stat's flags (include/linux/sched.h): set at the
 * start of do_exit, before the process closes its files, so a handler
 * whose output pipe just reached its end is seen exiting although it is
 * not a zombie yet. */
#define PROC_PF_EXITING 0x4u

int
proc_exiting(pid_t pid)
{
	char path[64], buf[1024], state = '\0';
	unsigned int flags = 0;
	const char *rp;
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name, in parentheses, may hold anything: the fields
	 * after the last ')' are state, ppid, pgrp, session, tty_nr, tpgid,
	 * flags. */
	if ((rp = strrchr(buf, ')')) == NULL ||
	    sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
		return 0;
	return state == 'Z' || state == 'X' || (flags & PROC_PF_EXITING) != 0;
}

int
parse_bool(const char *value, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	int i;

	for (i = 0; yes[i] != NULL; i++)
		if (strcasecmp(value, yes[i]) == 0)
			return *out = 1, 0;
	for (i = 0; no[i] != NULL; i++)
		if (strcasecmp(value, no[i]) == 0)
			return *out = 0, 0;
	return -1;
}
