/*
 * log.h - what jobrun has to say, on stderr or to syslog.
 *
 * Quiet when all is well so cron mails nothing: the default level prints
 * only what needs attention (a retried, failed or lost job, a recovered
 * lock); -v adds a line per job; -q leaves the jobs a person must look at
 * (failed for good, or lost) and fatal errors, which is what cron should
 * mail; -qq leaves only fatal errors.  On a
 * terminal a line reads as a sentence; anywhere else (cron, systemd, a
 * pipe) events are logfmt, "ts=... level=... job=... msg=...", stable and
 * greppable.  Fatal errors always read as a sentence, "jobrun: what: why",
 * and always reach stderr, even with syslog, so cron mails them.
 */
#ifndef JOBRUN_LOG_H
#define JOBRUN_LOG_H

enum log_level {
	LV_ERROR,	/* fatal: printed even with -qq */
	LV_FAILURE,	/* a job failed for good or lost: printed with -q */
	LV_WARN,	/* needs attention: the default */
	LV_INFO,	/* one line per job: -v */
	LV_DEBUG	/* -vv */
};

struct log {
	enum log_level level;
	int logfmt;	/* key=value lines instead of sentences */
	int syslog;	/* to syslog(3) instead of stderr */
};

/* Set up lg: to syslog when to_syslog, else stderr (logfmt unless stderr
 * is a terminal). */
void log_open(struct log *lg, enum log_level level, int to_syslog);
void log_close(struct log *lg);

/* A message that is not about one job. */
void log_msg(const struct log *lg, enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What happened to one job. */
struct log_event {
	unsigned long long job;
	const char *type;
	unsigned long attempt, max_attempts;
	const char *outcome;	/* success, retry, failed, lost, ... */
	long long ms;		/* time the handler took, or -1 */
	long delay;		/* seconds until the job is due again, or -1 */
	const char *msg;	/* last_error or a note, or NULL */
};

void log_job(const struct log *lg, enum log_level level,
             const struct log_event *ev);

#endif
