/*
 * http_reply.h - what an http handler's reply says, read from its bytes.
 *
 * Everything here reads bytes from the network, so it is kept apart from
 * the transfer (http.c) and fuzzed on its own (test/fuzz/fuzz_reply.c).
 */
#ifndef JOBRUN_HTTP_REPLY_H
#define JOBRUN_HTTP_REPLY_H

#include <stddef.h>
#include <time.h>

#include "handler.h"

/* One response as it arrives: the status line and the headers that
 * matter (of the last response, after any 1xx), and the body's first cap
 * bytes (body holds cap + 1 bytes). */
struct http_reply {
	char *body;
	size_t len, cap;
	int cut;		/* the body was longer than cap */
	int in_head;		/* between a status line and its blank line */
	char status_line[128];
	char retry_after[128];
	char date[128];
	char content_type[128];
};

/* An HTTP-date as seconds since the epoch, or -1 (curl_getdate). */
typedef time_t (*http_getdate_fn)(const char *date, const time_t *unused);

/* One header line as received, "\r\n" and all (n bytes, not NUL-ended).
 * Lines after the blank line that ends a response's headers (a chunked
 * body's trailers, which libcurl passes here too) are not its headers:
 * they are ignored. */
void http_reply_header(struct http_reply *r, const char *line, size_t n);

/* n more bytes of the body: the first cap are kept, the rest dropped. */
void http_reply_body(struct http_reply *r, const char *data, size_t n);

/* res from a complete reply with status code: success, retry (with the
 * server's Retry-After) or failure, last_error the status line and the
 * body's start (of an HTML page, its title and text: html_text.h).  A 202 whose body is a JSON object is read with w's
 * read_reply, the server's JSON functions (w NULL: it cannot be). */
void http_reply_result(const struct http_reply *r, long code,
                       const struct handler_watch *w, http_getdate_fn getdate,
                       struct result *res);

#endif
