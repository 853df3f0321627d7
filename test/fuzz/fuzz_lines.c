/*
 * fuzz_lines.c - libFuzzer target: a handler's checkpoint stream (fd 3),
 * any bytes in chunks of any size, split by lines.c into bounded lines.
 *
 * Byte 0 picks the bound (1 to 64 bytes, so overflows happen), byte 1 the
 * chunk sizes; the rest is the stream.  Each line must be what a plain
 * split of the stream gives (without "\n", or "\r\n" unless cut short), at
 * most the bound long, flagged as an overflow exactly when the line was
 * longer.  A refused line then becomes last_error the way exec.c words
 * it, the line itself as the server's error: well-formed UTF-8 within
 * LAST_ERROR_CHARS, whatever the bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler.h"
#include "lines.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct expect {
	const char *stream, *end;	/* what is left to split */
	size_t max;
};

static void
on_line(void *arg, const char *line, size_t len, int overflow)
{
	struct expect *e = arg;
	const char *nl = memchr(e->stream, '\n', (size_t)(e->end - e->stream));
	size_t whole = nl != NULL ? (size_t)(nl - e->stream) :
	    (size_t)(e->end - e->stream);
	size_t want = whole;
	struct result res = { 0 };
	char what[768];

	if (!overflow && want > 0 && e->stream[want - 1] == '\r')
		want--;
	if (overflow != (whole > e->max) || len > e->max)
		abort();
	if (!overflow && (len != want || memcmp(line, e->stream, len) != 0))
		abort();
	if (overflow && memcmp(line, e->stream, e->max) != 0)
		abort();
	e->stream += whole + (nl != NULL);
	snprintf(what, sizeof what, "exit status 3 (checkpoint refused: %.*s)",
	    (int)(len < 511 ? len : 511), line);
	result_set(&res, OUTCOME_RETRY, what, line, len);
	len = strlen(res.message);
	if (!utf8_valid(res.message, len) ||
	    utf8_count(res.message, len) > LAST_ERROR_CHARS)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct line_reader r;
	struct expect e;
	const char *p, *end;
	size_t chunk, step;

	if (size < 2)
		return 0;
	line_reader_init(&r, 1 + data[0] % 64u);
	step = data[1];
	p = (const char *)data + 2;
	end = (const char *)data + size;
	e.stream = p;
	e.end = end;
	e.max = r.max;
	while (p < end) {
		chunk = 1 + (step = step * 33 + 7) % 97;
		if (chunk > (size_t)(end - p))
			chunk = (size_t)(end - p);
		line_reader_feed(&r, p, chunk, on_line, &e);
		p += chunk;
	}
	line_reader_end(&r, on_line, &e);
	if (e.stream != end)
		abort();	/* every byte belongs to a line */
	line_reader_free(&r);
	return 0;
}
