/*
 * log.c - one line per message on stderr.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

void
log_msg(const struct log *lg, enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (lg != NULL && level > lg->level)
		return;
	fputs("jobrun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
