/*
 * lines.c - split a stream of untrusted bytes into lines, each bounded.
 *
 * A handler writes checkpoints on fd 3, one per line, and may write
 * anything: no newline for megabytes, NUL bytes, a "\r" alone.  A line
 * is kept up to max bytes; the rest of it is counted as an overflow, not
 * stored, so a flood costs time but never memory.  Fuzzed by
 * test/fuzz/fuzz_lines.c.
 */
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "util.h"

void
line_reader_init(struct line_reader *r, size_t max)
{
	r->line = xmalloc(max > 0 ? max : 1);
	r->len = 0;
	r->max = max;
	r->overflow = 0;
}

void
line_reader_free(struct line_reader *r)
{
	free(r->line);
	r->line = NULL;
}

static void
emit(struct line_reader *r, line_fn fn, void *arg)
{
	size_t len = r->len;

	/* "\r\n" ends a line as "\n" does; a line cut short keeps its
	 * bytes as they came. */
	if (len > 0 && r->line[len - 1] == '\r' && !r->overflow)
		len--;
	fn(arg, r->line, len, r->overflow);
	r->len = 0;
	r->overflow = 0;
}

void
line_reader_feed(struct line_reader *r, const char *buf, size_t n,
    line_fn fn, void *arg)
{
	const char *nl;
	size_t take, room;

	while (n > 0) {
		nl = memchr(buf, '\n', n);
		take = nl != NULL ? (size_t)(nl - buf) : n;
		room = r->max - r->len;
		if (take > room)
			r->overflow = 1;
		memcpy(r->line + r->len, buf, take < room ? take : room);
		r->len += take < room ? take : room;
		if (nl == NULL)
			return;
		emit(r, fn, arg);
		buf += take + 1;
		n -= take + 1;
	}
}

void
line_reader_end(struct line_reader *r, line_fn fn, void *arg)
{
	if (r->len > 0 || r->overflow)
		emit(r, fn, arg);
}
