/*
 * lines.h - split a stream of untrusted bytes into lines, each bounded.
 */
#ifndef JOBRUN_LINES_H
#define JOBRUN_LINES_H

#include <stddef.h>

/* Called for each line, without its "\n" or "\r\n": len bytes at line
 * (not NUL-ended; NUL bytes are the writer's).  overflow: the line was
 * longer than the reader's max, and line holds its first max bytes. */
typedef void (*line_fn)(void *arg, const char *line, size_t len,
                        int overflow);

struct line_reader {
	char *line;		/* max bytes */
	size_t len, max;
	int overflow;
};

void line_reader_init(struct line_reader *r, size_t max);
void line_reader_free(struct line_reader *r);

/* n more bytes of the stream: fn for each line they complete. */
void line_reader_feed(struct line_reader *r, const char *buf, size_t n,
                      line_fn fn, void *arg);

/* The stream has ended: fn for a last line without its "\n", if any. */
void line_reader_end(struct line_reader *r, line_fn fn, void *arg);

#endif
