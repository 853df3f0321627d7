/*
 * log.c - one line per message on stderr.
 *
 * Messages often carry a handler's output, which has line breaks of its
 * own; they are shown as \n so that one event stays one line for grep and
 * for whoever reads cron's mail.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

#define LOG_LINE_MAX 8192

void
log_msg(const struct log *lg, enum log_level level, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	const char *p;
	va_list ap;

	if (lg != NULL && level > lg->level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fputs("jobrun: ", stderr);
	for (p = line; *p != '\0'; p++) {
		if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p == '\r')
			fputs("\\r", stderr);
		else
			fputc(*p, stderr);
	}
	fputc('\n', stderr);
}
