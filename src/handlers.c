/*
 * handlers.c - the table of handler kinds: the one place that knows every
 * kind, so that the kinds (exec.c, http.c, noop.c) and what they share
 * (handler.c) do not depend on each other both ways.
 */
#include <stdio.h>
#include <string.h>

#include "handler.h"

extern const struct handler_kind exec_kind;
extern const struct handler_kind http_kind;
extern const struct handler_kind noop_kind;

static const struct handler_kind *const kinds[] = {
	&exec_kind,
	&http_kind,
	&noop_kind,
};

const struct handler_kind *
handler_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i]->name, name) == 0)
			return kinds[i];
	return NULL;
}

const char *
handler_names(char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof kinds / sizeof kinds[0] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i > 0 ? ", " :
		    "", kinds[i]->name);
	return buf;
}
