/*
 * log.h - messages on stderr, filtered by verbosity.
 *
 * Quiet when all is well so cron mails nothing: the default level prints
 * only what needs attention (a retried, failed or lost job, a recovered
 * lock); -v adds a line per job, -q leaves only fatal errors.
 */
#ifndef JOBRUN_LOG_H
#define JOBRUN_LOG_H

enum log_level {
	LV_ERROR,	/* fatal: printed even with -q */
	LV_WARN,	/* needs attention: the default */
	LV_INFO,	/* one line per job: -v */
	LV_DEBUG	/* -vv */
};

struct log {
	enum log_level level;
};

/* Print "jobrun: <message>" on stderr when lg allows level. */
void log_msg(const struct log *lg, enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
