/*
 * handler.c - the table of handler kinds and what they share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler.h"
#include "utf8.h"
#include "util.h"

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
handler_names(void)
{
	return "exec, http, noop";
}

static void
compose(struct result *res, enum outcome outcome, const char *what,
    const char *detail, size_t detail_len, int keep_tail)
{
	char *copy;
	size_t what_len, what_chars, room, start, n;

	res->outcome = outcome;
	res->retry_after = -1;
	/* what is ours (ASCII or already clean), but cut it too. */
	what_len = strlen(what);
	what_len = utf8_prefix(what, what_len, LAST_ERROR_CHARS);
	memcpy(res->message, what, what_len);
	res->message[what_len] = '\0';
	what_chars = utf8_count(what, what_len);

	/* Skip trailing newlines: output usually ends in one. */
	while (detail_len > 0 && (detail[detail_len - 1] == '\n' ||
	    detail[detail_len - 1] == '\r'))
		detail_len--;
	if (detail == NULL || detail_len == 0 ||
	    what_chars + 2 >= LAST_ERROR_CHARS)
		return;

	copy = xstrndup(detail, detail_len);
	utf8_sanitize(copy, detail_len);
	room = LAST_ERROR_CHARS - what_chars - 2;
	if (keep_tail) {
		start = utf8_suffix(copy, detail_len, room);
		n = detail_len - start;
	} else {
		start = 0;
		n = utf8_prefix(copy, detail_len, room);
	}
	memcpy(res->message + what_len, ": ", 2);
	memcpy(res->message + what_len + 2, copy + start, n);
	res->message[what_len + 2 + n] = '\0';
	free(copy);
}

void
result_set(struct result *res, enum outcome outcome, const char *what,
    const char *detail, size_t detail_len)
{
	compose(res, outcome, what, detail, detail_len, 1);
}

void
result_set_head(struct result *res, enum outcome outcome, const char *what,
    const char *detail, size_t detail_len)
{
	compose(res, outcome, what, detail, detail_len, 0);
}
