/*
 * html_text.h - what an HTML error page says, in a line.
 *
 * A web application that fails answers with a page made for a browser:
 * kilobytes of markup, styles and scripts around a title and a sentence.
 * last_error keeps what a person reads there: the title, then the start
 * of the visible text.  The page is untrusted bytes; this reads at most
 * its given length, never writes past out, and is fuzzed through
 * http_reply_result (test/fuzz/fuzz_reply.c).
 */
#ifndef JOBRUN_HTML_TEXT_H
#define JOBRUN_HTML_TEXT_H

#include <stddef.h>

/* Whether a body of that Content-Type (may be "") and those bytes is an
 * HTML page: the type says text/html, or the body opens with <!doctype
 * html or <html. */
int html_is_page(const char *content_type, const char *body, size_t len);

/* "TITLE: TEXT" into out (outcap bytes, NUL-ended), blanks collapsed:
 * the <title>'s text, then the text outside tags, comments, <head>,
 * <script> and <style>, cut to fit.  Returns the length written. */
size_t html_summary(const char *page, size_t len, char *out, size_t outcap);

#endif
