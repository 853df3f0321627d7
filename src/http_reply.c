/*
 * http_reply.c - what an http handler's reply says.
 *
 * Every byte here comes from the endpoint, which may be anyone's: the
 * status line's reason phrase is any bytes HTTP allows (Latin-1, or none
 * of a character set), and so are the headers and the body.  Values are
 * copied into fixed buffers with their lengths checked, and they reach
 * last_error only through result_set, which makes them valid UTF-8 and
 * bounds them by bytes.
 *
 * Status mapping: 2xx success; 408, 425, 429 and 5xx are worth retrying
 * (Retry-After honoured); anything else (other 4xx, and 1xx or 3xx since
 * redirects are not followed) will not get better by itself and fails
 * the job at once.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "html_text.h"
#include "http_reply.h"
#include "util.h"

/* What last_error keeps of an HTML error page: its title and text. */
#define HTTP_PAGE_SUMMARY 400

void
http_reply_body(struct http_reply *r, const char *data, size_t n)
{
	size_t keep = r->cap - r->len;

	if (keep > n)
		keep = n;
	r->cut |= keep < n;
	memcpy(r->body + r->len, data, keep);
	r->len += keep;
}

/* Copy a header's value (after "Name:") without surrounding blanks. */
static void
header_value(const char *line, size_t len, size_t name_len, char *out,
    size_t outlen)
{
	const char *v = line + name_len, *end = line + len;

	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	snprintf(out, outlen, "%.*s", (int)(end - v), v);
}

void
http_reply_header(struct http_reply *r, const char *line, size_t n)
{
	/* A new status line starts a new response (after a 100 Continue):
	 * forget the headers of the previous one. */
	if (n > 5 && strncmp(line, "HTTP/", 5) == 0) {
		const char *sp = memchr(line, ' ', n);

		r->retry_after[0] = r->date[0] = r->content_type[0] = '\0';
		r->in_head = 1;
		if (sp != NULL)
			header_value(sp, n - (size_t)(sp - line), 0,
			    r->status_line, sizeof r->status_line);
	} else if (!r->in_head)
		return;	/* a trailer, after the body: anyone may add one */
	else if ((n == 2 && line[0] == '\r' && line[1] == '\n') ||
	    (n == 1 && line[0] == '\n'))
		r->in_head = 0;	/* the blank line: the body comes next */
	else if (n > 12 && strncasecmp(line, "Retry-After:", 12) == 0)
		header_value(line, n, 12, r->retry_after,
		    sizeof r->retry_after);
	else if (n > 5 && strncasecmp(line, "Date:", 5) == 0)
		header_value(line, n, 5, r->date, sizeof r->date);
	else if (n > 13 && strncasecmp(line, "Content-Type:", 13) == 0)
		header_value(line, n, 13, r->content_type,
		    sizeof r->content_type);
}

/* Seconds the server asked us to wait, or -1.  An HTTP-date is measured
 * against the response's own Date, so our clock does not enter into it. */
static long
retry_after_seconds(const struct http_reply *r, http_getdate_fn getdate)
{
	unsigned long secs;
	time_t when, now;

	if (r->retry_after[0] == '\0')
		return -1;
	/* Seconds, however many: the runner caps the delay at backoff_cap,
	 * and a number too large to read is still "a long time". */
	if (strspn(r->retry_after, "0123456789") == strlen(r->retry_after))
		return parse_ulong(r->retry_after, 0, LONG_MAX, &secs) == 0 ?
		    (long)secs : LONG_MAX;
	when = getdate(r->retry_after, NULL);
	if (when < 0)
		return -1;
	now = r->date[0] != '\0' ? getdate(r->date, NULL) : -1;
	if (now < 0)
		now = time(NULL);
	return when > now ? (long)(when - now) : 0;
}

/* "Retry now" taken literally would spend every attempt within a second;
 * a one-second floor keeps a retry a retry. */
static long
retry_delay(const struct http_reply *r, http_getdate_fn getdate)
{
	long secs = retry_after_seconds(r, getdate);

	return secs == 0 ? 1 : secs;
}

static int
worth_retrying(long code)
{
	return code == 408 || code == 425 || code == 429 ||
	    (code >= 500 && code <= 599);
}

/* A 202 is read by the server's JSON functions, like every JSON jobrun
 * judges.  A body that is not a JSON object (none, text, a page) is an
 * ordinary success.  A JSON object holding "checkpoint" and/or "snooze"
 * says the receiver saved progress (stored like an exec handler's fd 3
 * line) or asks to be called again later, in "snooze" seconds or
 * Retry-After.  A body that looks like an object but cannot be read as
 * one as documented is not a success: the attempt did not finish, and
 * the job is retried with last_error saying why.  Returns whether the
 * 202 was decided here. */
static int
progress_reply(const struct http_reply *r, const struct handler_watch *w,
    http_getdate_fn getdate, struct result *res)
{
	struct reply reply = { 0 };
	char err[512], what[768];
	size_t skip = 0;
	unsigned long secs;
	int rc = 0;

	while (skip < r->len && strchr(" \t\r\n", r->body[skip]) != NULL &&
	    r->body[skip] != '\0')
		skip++;
	/* Cut short, a body that may be an object (nothing but blanks kept,
	 * or a "{") cannot be read, and must not pass for a success. */
	if (r->cut && (skip == r->len || r->body[skip] == '{')) {
		result_set(res, OUTCOME_RETRY, "HTTP 202 with a body longer "
		    "than max_response: cannot read a checkpoint from it",
		    NULL, 0);
		return 1;
	}
	if (skip == r->len || r->body[skip] != '{')
		return 0;
	if (w == NULL || w->read_reply(w->arg, r->body, r->len, &reply, err,
	    sizeof err) != 0) {
		snprintf(what, sizeof what, "HTTP 202: cannot read the reply: "
		    "%s", w == NULL ? "no database" : err);
		result_set(res, OUTCOME_RETRY, what, NULL, 0);
		return 1;
	}
	if (!reply.valid || !reply.object) {
		result_set_head(res, OUTCOME_RETRY, "HTTP 202 with a body that "
		    "is not valid JSON (the server's JSON_VALID refuses it)",
		    r->body, r->len);
		goto out;
	}
	if (reply.checkpoint == NULL && reply.snooze == NULL) {
		reply_free(&reply);
		return 0;	/* an object that asks nothing: done */
	}
	if (reply.snooze != NULL && strspn(reply.snooze, "0123456789") !=
	    strlen(reply.snooze)) {
		snprintf(what, sizeof what, "HTTP 202: \"snooze\" must be a "
		    "whole number of seconds, not %.200s", reply.snooze);
		result_set(res, OUTCOME_RETRY, what, NULL, 0);
		goto out;
	}
	if (reply.checkpoint != NULL)
		rc = w->checkpoint(w->arg, reply.checkpoint,
		    reply.checkpoint_len, err, sizeof err);
	if (rc > 0)
		result_set(res, OUTCOME_ABANDONED, "lock lost", NULL, 0);
	else if (rc < 0) {
		/* A checkpoint we cannot keep is the receiver's mistake. */
		snprintf(what, sizeof what, "HTTP 202: checkpoint refused: %s",
		    err);
		result_set(res, OUTCOME_RETRY, what, NULL, 0);
	} else {
		result_set(res, OUTCOME_SNOOZE, "HTTP 202: not yet", NULL, 0);
		res->retry_after = retry_after_seconds(r, getdate);
		if (reply.snooze != NULL)
			res->retry_after = parse_ulong(reply.snooze, 0,
			    LONG_MAX, &secs) == 0 ? (long)secs : LONG_MAX;
	}
out:
	reply_free(&reply);
	return 1;
}

/* A failure's last_error: the status line and the body's start, or of
 * an error page made for a browser, its title and the start of its
 * text, which is what a person reads there. */
static void
failure_body(const struct http_reply *r, struct result *res,
    enum outcome outcome, const char *what)
{
	char page[HTTP_PAGE_SUMMARY];
	size_t n;

	if (!html_is_page(r->content_type, r->body, r->len)) {
		result_set_head(res, outcome, what, r->body, r->len);
		return;
	}
	n = html_summary(r->body, r->len, page, sizeof page);
	result_set_head(res, outcome, what, page, n);
}

void
http_reply_result(const struct http_reply *r, long code,
    const struct handler_watch *w, http_getdate_fn getdate,
    struct result *res)
{
	char what[300];

	snprintf(what, sizeof what, "HTTP %s", r->status_line[0] ?
	    r->status_line : "(no status line)");
	if (code == 202 && progress_reply(r, w, getdate, res))
		;	/* "saved progress, run me again" or "not yet" */
	else if (code >= 200 && code <= 299)
		result_set(res, OUTCOME_SUCCESS, what, NULL, 0);
	else if (worth_retrying(code)) {
		failure_body(r, res, OUTCOME_RETRY, what);
		res->retry_after = retry_delay(r, getdate);
	} else
		failure_body(r, res, OUTCOME_FAIL, what);
}
