/*
 * log.c - one line per event, as a sentence or as logfmt.
 *
 * Messages often carry a handler's output, or a business key, which may
 * hold line breaks and terminal control sequences of their own; every
 * control character is shown as an escape (utf8_escape) so that one event
 * stays one line and a terminal reading the log only shows text.  logfmt
 * values are quoted when they hold a blank, a quote, an equals sign or
 * anything escaped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utf8.h"

#define LOG_LINE_MAX 8192

static const char *const level_names[] = {
	[LV_ERROR] = "error", [LV_FAILURE] = "warn", [LV_WARN] = "warn",
	[LV_INFO] = "info", [LV_DEBUG] = "debug",
};

static const int priorities[] = {
	[LV_ERROR] = LOG_ERR, [LV_FAILURE] = LOG_WARNING,
	[LV_WARN] = LOG_WARNING, [LV_INFO] = LOG_INFO, [LV_DEBUG] = LOG_DEBUG,
};

/* A growing line with a fixed ceiling; what does not fit is cut. */
struct line {
	char buf[LOG_LINE_MAX];
	size_t len;
};

static void
put(struct line *l, const char *s, size_t n)
{
	if (n > sizeof l->buf - 1 - l->len)
		n = sizeof l->buf - 1 - l->len;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

static void
putf(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
putf(struct line *l, const char *fmt, ...)
{
	char tmp[LOG_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(l, tmp, strlen(tmp));
}

/* s with control characters escaped (and, quoted, " and \ too); what
 * does not fit is cut, on a whole character or escape. */
static void
put_escaped(struct line *l, const char *s, int quoted)
{
	l->len += utf8_escape(l->buf + l->len, sizeof l->buf - l->len, s,
	    strlen(s), quoted ? UTF8_ESC_QUOTED : 0);
	if (l->len > sizeof l->buf - 1)
		l->len = strlen(l->buf);
}

/* " key=value", quoting value when logfmt needs it. */
static void
put_pair(struct line *l, const char *key, const char *value)
{
	size_t len = strlen(value);
	int quote = len == 0 || strpbrk(value, " \"=\\") != NULL ||
	    utf8_escape(NULL, 0, value, len, 0) != len;

	putf(l, " %s=", key);
	if (quote)
		put(l, "\"", 1);
	put_escaped(l, value, quote);
	if (quote)
		put(l, "\"", 1);
}

/* "ts=... level=..." opening a logfmt line (syslog stamps its own). */
static void
put_head(const struct log *lg, struct line *l, enum log_level level)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;

	if (!lg->syslog && gmtime_r(&now, &tm) != NULL &&
	    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
		putf(l, "ts=%s ", ts);
	putf(l, "level=%s", level_names[level]);
}

static void
emit(const struct log *lg, enum log_level level, const struct line *l)
{
	if (lg->syslog)
		syslog(priorities[level], "%s", l->buf);
	if (!lg->syslog || level == LV_ERROR)
		fprintf(stderr, "%s\n", l->buf);
}

void
log_open(struct log *lg, enum log_level level, int to_syslog)
{
	lg->level = level;
	lg->syslog = to_syslog;
	lg->logfmt = to_syslog || !isatty(STDERR_FILENO);
	if (to_syslog)
		openlog("jobrun", LOG_PID, LOG_DAEMON);
}

void
log_close(struct log *lg)
{
	if (lg->syslog)
		closelog();
}

void
log_msg(const struct log *lg, enum log_level level, const char *fmt, ...)
{
	char text[LOG_LINE_MAX];
	struct line l = { "", 0 };
	va_list ap;

	if (lg != NULL && level > lg->level)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	/* A fatal error is a sentence for whoever reads cron's mail. */
	if (lg == NULL || !lg->logfmt || level == LV_ERROR) {
		put(&l, "jobrun: ", 8);
		put_escaped(&l, text, 0);
		if (lg != NULL && lg->syslog)
			syslog(priorities[level], "%s", l.buf + 8);
		if (lg == NULL || !lg->syslog || level == LV_ERROR)
			fprintf(stderr, "%s\n", l.buf);
		return;
	}
	put_head(lg, &l, level);
	put_pair(&l, "msg", text);
	emit(lg, level, &l);
}

void
log_job(const struct log *lg, enum log_level level, const struct log_event *e)
{
	struct line l = { "", 0 };
	char num[32];

	if (level > lg->level)
		return;
	if (!lg->logfmt) {
		putf(&l, "jobrun: job %llu (", e->job);
		put_escaped(&l, e->type, 0);
		putf(&l, ") attempt %lu/%lu: %s", e->attempt, e->max_attempts,
		    e->outcome);
		if (e->delay >= 0)
			putf(&l, ", due again in %ld s", e->delay);
		if (e->ms >= 0)
			putf(&l, " (%lld ms)", e->ms);
		if (e->msg != NULL && e->msg[0] != '\0') {
			put(&l, ": ", 2);
			put_escaped(&l, e->msg, 0);
		}
		emit(lg, level, &l);
		return;
	}
	put_head(lg, &l, level);
	snprintf(num, sizeof num, "%llu", e->job);
	put_pair(&l, "job", num);
	put_pair(&l, "type", e->type);
	snprintf(num, sizeof num, "%lu", e->attempt);
	put_pair(&l, "attempt", num);
	snprintf(num, sizeof num, "%lu", e->max_attempts);
	put_pair(&l, "max_attempts", num);
	put_pair(&l, "outcome", e->outcome);
	if (e->ms >= 0) {
		snprintf(num, sizeof num, "%lld", e->ms);
		put_pair(&l, "ms", num);
	}
	if (e->delay >= 0) {
		snprintf(num, sizeof num, "%ld", e->delay);
		put_pair(&l, "delay", num);
	}
	if (e->msg != NULL && e->msg[0] != '\0')
		put_pair(&l, "msg", e->msg);
	emit(lg, level, &l);
}
