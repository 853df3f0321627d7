/*
 * test_utf8.c - sanitising and cutting handler output, and result_set,
 * which turns that output into a job's last_error.
 *
 * last_error is a utf8mb4 column that MariaDB in strict mode refuses to
 * fill with invalid bytes, and it holds at most 1000 characters; so every
 * kind of malformed input is checked to come out as '?', and every message
 * result_set builds is checked, with a validator of the test's own, to be
 * well-formed UTF-8 of at most 1000 characters that keeps the output's end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "handler.h"
#include "utf8.h"

/* "a中😀b" and friends: 1 + 3 + 4 + 1 bytes. */
#define ZH "\xE4\xB8\xAD"		/* U+4E2D 中 */
#define WEN "\xE6\x96\x87"		/* U+6587 文 */
#define EMOJI "\xF0\x9F\x98\x80"	/* U+1F600 😀 */
#define E_ACUTE "\xC3\xA9"		/* U+00E9 é */

/* RFC 3629 well-formedness, written independently of utf8.c; also
 * counts the characters. Returns -1 when s is not well-formed. */
static long
check_utf8(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n, k;
	unsigned long cp, min;
	long chars = 0;

	while (i < len) {
		if (s[i] == 0)
			return -1;
		if (s[i] < 0x80) {
			n = 1;
			cp = s[i];
			min = 0;
		} else if ((s[i] & 0xE0) == 0xC0) {
			n = 2;
			cp = s[i] & 0x1Fu;
			min = 0x80;
		} else if ((s[i] & 0xF0) == 0xE0) {
			n = 3;
			cp = s[i] & 0x0Fu;
			min = 0x800;
		} else if ((s[i] & 0xF8) == 0xF0) {
			n = 4;
			cp = s[i] & 0x07u;
			min = 0x10000;
		} else
			return -1;
		if (len - i < n)
			return -1;
		for (k = 1; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return -1;
			cp = (cp << 6) | (s[i + k] & 0x3Fu);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return -1;
		i += n;
		chars++;
	}
	return chars;
}

/* Sanitise a copy of in (len bytes) and compare with want. */
static void
expect_sanitized(const char *in, size_t len, const char *want)
{
	char *buf = malloc(len + 1);

	assert_non_null(buf);
	memcpy(buf, in, len);
	buf[len] = '\0';
	utf8_sanitize(buf, len);
	assert_int_equal(strlen(want), len);
	assert_memory_equal(buf, want, len);
	assert_true(check_utf8(buf, len) >= 0);
	free(buf);
}

#define SANITIZED(lit, want) expect_sanitized(lit, sizeof(lit) - 1, want)

static void
test_sanitize_keeps_valid(void **state)
{
	static const char all[] = "plain ASCII ~" E_ACUTE ZH WEN EMOJI
	    "\xDF\xBF"			/* U+07FF */
	    "\xE0\xA0\x80"		/* U+0800 */
	    "\xED\x9F\xBF"		/* U+D7FF, just below surrogates */
	    "\xEE\x80\x80"		/* U+E000, just above */
	    "\xEF\xBF\xBF"		/* U+FFFF */
	    "\xF0\x90\x80\x80"		/* U+10000 */
	    "\xF4\x8F\xBF\xBF";		/* U+10FFFF */

	(void)state;
	SANITIZED(all, all);
	SANITIZED("", "");
}

static void
test_sanitize_lone_continuation(void **state)
{
	(void)state;
	SANITIZED("a\x80z", "a?z");
	SANITIZED("\xBF", "?");
	SANITIZED(ZH "\x80" ZH, ZH "?" ZH);
}

static void
test_sanitize_overlong(void **state)
{
	(void)state;
	SANITIZED("\xC0\x80", "??");		/* NUL, overlong */
	SANITIZED("\xC1\xBF", "??");
	SANITIZED("\xE0\x80\x80", "???");
	SANITIZED("\xE0\x9F\xBF", "???");
	SANITIZED("\xF0\x80\x80\x80", "????");
	SANITIZED("\xF0\x8F\xBF\xBF", "????");
}

static void
test_sanitize_surrogates(void **state)
{
	(void)state;
	SANITIZED("\xED\xA0\x80", "???");	/* U+D800 */
	SANITIZED("\xED\xBF\xBF", "???");	/* U+DFFF */
	SANITIZED("x\xED\xA0\x80\xED\xB0\x80y", "x??????y");
}

static void
test_sanitize_above_max(void **state)
{
	(void)state;
	SANITIZED("\xF4\x90\x80\x80", "????");	/* U+110000 */
	SANITIZED("\xF5\x80\x80\x80", "????");
	SANITIZED("\xF8\x88\x80\x80\x80", "?????");
	SANITIZED("\xFE\xFF", "??");
}

static void
test_sanitize_truncated(void **state)
{
	(void)state;
	SANITIZED("abc\xE4\xB8", "abc??");
	SANITIZED("abc\xF0\x9F\x98", "abc???");
	SANITIZED("abc\xC3", "abc?");
	/* Cut short by the next character, not by the end. */
	SANITIZED("\xE4\xB8" "a" ZH, "??a" ZH);
	SANITIZED("\xF0\x9F" EMOJI, "??" EMOJI);
}

static void
test_sanitize_nul(void **state)
{
	(void)state;
	SANITIZED("a\0b", "a?b");
	SANITIZED("\0\0", "??");
}

static void
test_sanitize_stops_at_len(void **state)
{
	char buf[] = "ok" ZH;

	(void)state;
	/* Only the first 4 bytes are given: the character is cut. */
	utf8_sanitize(buf, 4);
	assert_memory_equal(buf, "ok??\xAD", 6);
}

#define VALID(lit) utf8_valid(lit, sizeof(lit) - 1)

static void
test_valid(void **state)
{
	(void)state;
	assert_int_equal(VALID(""), 1);
	assert_int_equal(VALID("plain"), 1);
	assert_int_equal(VALID("a" E_ACUTE ZH WEN EMOJI "z"), 1);
	assert_int_equal(VALID("\xED\x9F\xBF" "\xEE\x80\x80"), 1);
	assert_int_equal(VALID("\xF4\x8F\xBF\xBF"), 1);

	assert_int_equal(VALID("a\x80"), 0);		/* lone continuation */
	assert_int_equal(VALID("\xC0\x80"), 0);		/* overlong */
	assert_int_equal(VALID("\xE0\x9F\xBF"), 0);	/* overlong */
	assert_int_equal(VALID("\xF0\x8F\xBF\xBF"), 0);	/* overlong */
	assert_int_equal(VALID("\xED\xA0\x80"), 0);	/* surrogate */
	assert_int_equal(VALID("\xF4\x90\x80\x80"), 0);	/* > U+10FFFF */
	assert_int_equal(VALID("\xF5\x80\x80\x80"), 0);
	assert_int_equal(VALID("\xFF"), 0);
	assert_int_equal(VALID("ab" "\xE4\xB8"), 0);	/* truncated */
	assert_int_equal(VALID("\xE4\xB8" "a"), 0);
	assert_int_equal(VALID("a\0b"), 0);		/* NUL */

	/* Only len bytes count. */
	assert_int_equal(utf8_valid("ab" ZH, 2), 1);
	assert_int_equal(utf8_valid("ab" ZH, 4), 0);
	assert_int_equal(utf8_valid("ab\xFF", 2), 1);
}

static void
test_count(void **state)
{
	static const char s[] = "a" ZH EMOJI "b" WEN E_ACUTE;

	(void)state;
	assert_int_equal(sizeof s - 1, 1 + 3 + 4 + 1 + 3 + 2);
	assert_int_equal(utf8_count(s, sizeof s - 1), 6);
	assert_int_equal(utf8_count(s, 0), 0);
	assert_int_equal(utf8_count("hello", 5), 5);
	assert_int_equal(utf8_count(ZH WEN, 6), 2);
}

static void
test_prefix(void **state)
{
	static const char s[] = "a" ZH EMOJI "b" WEN;
	size_t len = sizeof s - 1;

	(void)state;
	assert_int_equal(utf8_prefix(s, len, 0), 0);
	assert_int_equal(utf8_prefix(s, len, 1), 1);
	assert_int_equal(utf8_prefix(s, len, 2), 4);
	assert_int_equal(utf8_prefix(s, len, 3), 8);
	assert_int_equal(utf8_prefix(s, len, 4), 9);
	assert_int_equal(utf8_prefix(s, len, 5), 12);
	assert_int_equal(utf8_prefix(s, len, 6), len);
	assert_int_equal(utf8_prefix(s, len, 1000), len);
	assert_int_equal(utf8_prefix(s, 0, 3), 0);
}

static void
test_suffix(void **state)
{
	static const char s[] = "a" ZH EMOJI "b" WEN;
	size_t len = sizeof s - 1;

	(void)state;
	assert_int_equal(utf8_suffix(s, len, 0), len);
	assert_int_equal(utf8_suffix(s, len, 1), 9);
	assert_int_equal(utf8_suffix(s, len, 2), 8);
	assert_int_equal(utf8_suffix(s, len, 3), 4);
	assert_int_equal(utf8_suffix(s, len, 4), 1);
	assert_int_equal(utf8_suffix(s, len, 5), 0);
	assert_int_equal(utf8_suffix(s, len, 1000), 0);
	assert_int_equal(utf8_suffix(s, 0, 3), 0);
	assert_string_equal(s + utf8_suffix(s, len, 2), "b" WEN);
}

/* The message must be well-formed and at most LAST_ERROR_CHARS long. */
static long
message_chars(const struct result *res)
{
	size_t len = strlen(res->message);
	long chars = check_utf8(res->message, len);

	assert_true(len < sizeof res->message);
	assert_true(chars >= 0);
	assert_true(chars <= LAST_ERROR_CHARS);
	assert_int_equal(utf8_count(res->message, len), chars);
	return chars;
}

static void
test_result_what_and_detail(void **state)
{
	static const char out[] = "connection refused\n";
	struct result res = { 0 };

	(void)state;
	result_set(&res, OUTCOME_RETRY, "exit status 3", out, sizeof out - 1);
	assert_int_equal(res.outcome, OUTCOME_RETRY);
	assert_string_equal(res.message, "exit status 3: connection refused");
	message_chars(&res);
}

static void
test_result_strips_trailing_newlines(void **state)
{
	static const char out[] = "line 1\nline 2\r\n\n\r\n";
	struct result res = { 0 };

	(void)state;
	result_set(&res, OUTCOME_FAIL, "exit 65 (permanent failure)", out,
	    sizeof out - 1);
	assert_int_equal(res.outcome, OUTCOME_FAIL);
	assert_string_equal(res.message,
	    "exit 65 (permanent failure): line 1\nline 2");
}

static void
test_result_no_detail(void **state)
{
	struct result res = { 0 };

	(void)state;
	result_set(&res, OUTCOME_RETRY, "killed by signal 9", NULL, 0);
	assert_string_equal(res.message, "killed by signal 9");
	result_set(&res, OUTCOME_RETRY, "killed by signal 9", "", 0);
	assert_string_equal(res.message, "killed by signal 9");
	/* Only newlines: nothing worth a colon. */
	result_set(&res, OUTCOME_RETRY, "exit status 1", "\n\r\n", 3);
	assert_string_equal(res.message, "exit status 1");
	result_set(&res, OUTCOME_SUCCESS, "", NULL, 0);
	assert_int_equal(res.outcome, OUTCOME_SUCCESS);
	assert_string_equal(res.message, "");
}

static void
test_result_sanitizes_detail(void **state)
{
	static const char out[] = "bad \xFF\xFE byte, \xC0\x80, NUL \0 "
	    ZH "\xE4\xB8";
	struct result res = { 0 };

	(void)state;
	result_set(&res, OUTCOME_RETRY, "exit status 2", out, sizeof out - 1);
	assert_string_equal(res.message,
	    "exit status 2: bad ?? byte, ??, NUL ? " ZH "??");
	message_chars(&res);
}

static void
test_result_keeps_tail_of_long_ascii(void **state)
{
	static const char what[] = "exit status 3";
	size_t len = 5000, prefix = sizeof what - 1 + 2;
	char *out = malloc(len);
	struct result res = { 0 };
	size_t i;

	(void)state;
	assert_non_null(out);
	for (i = 0; i < len; i++)
		out[i] = (char)('0' + (char)(i % 10));
	memcpy(out + len - 4, "END\n", 4);
	result_set(&res, OUTCOME_RETRY, what, out, len);
	assert_int_equal(message_chars(&res), LAST_ERROR_CHARS);
	assert_int_equal(strlen(res.message), LAST_ERROR_CHARS);
	assert_memory_equal(res.message, "exit status 3: ", prefix);
	/* The newline is dropped, the rest is the last 985 bytes. */
	assert_memory_equal(res.message + prefix,
	    out + (len - 1) - (LAST_ERROR_CHARS - prefix),
	    LAST_ERROR_CHARS - prefix);
	assert_string_equal(res.message + LAST_ERROR_CHARS - 3, "END");
	free(out);
}

/* 3000 x 中 is 9000 bytes; only the last characters fit. */
static void
test_result_long_chinese(void **state)
{
	static const char what[] = "timed out after 5 s";
	size_t n = 3000, len = 3 * n, prefix = sizeof what - 1 + 2, i;
	char *out = malloc(len);
	struct result res = { 0 };

	(void)state;
	assert_non_null(out);
	for (i = 0; i < n; i++)
		memcpy(out + 3 * i, ZH, 3);
	result_set(&res, OUTCOME_RETRY, what, out, len);
	assert_int_equal(message_chars(&res), LAST_ERROR_CHARS);
	assert_memory_equal(res.message, "timed out after 5 s: ", prefix);
	assert_int_equal(strlen(res.message),
	    prefix + 3 * (LAST_ERROR_CHARS - prefix));
	for (i = prefix; i < strlen(res.message); i += 3)
		assert_memory_equal(res.message + i, ZH, 3);
	free(out);
}

/* The cut falls inside multi-byte text of mixed widths, and the output
 * starts with a broken character. */
static void
test_result_long_mixed_width(void **state)
{
	static const char piece[] = "a" E_ACUTE ZH EMOJI;	/* 4 chars */
	size_t reps = 700, plen = sizeof piece - 1, len = 2 + reps * plen, i;
	char *out = malloc(len);
	struct result res = { 0 };
	const char *tail;
	long chars;

	(void)state;
	assert_non_null(out);
	memcpy(out, "\x9F\x98", 2);
	for (i = 0; i < reps; i++)
		memcpy(out + 2 + i * plen, piece, plen);
	result_set(&res, OUTCOME_RETRY, "exit 75 (retry later)", out, len);
	chars = message_chars(&res);
	assert_int_equal(chars, LAST_ERROR_CHARS);
	/* The message ends with the output's last characters. */
	tail = res.message + strlen(res.message) - plen;
	assert_memory_equal(tail, piece, plen);
	free(out);
}

static void
test_result_long_emoji(void **state)
{
	size_t n = 1500, len = 4 * n, i;
	char *out = malloc(len);
	struct result res = { 0 };

	(void)state;
	assert_non_null(out);
	for (i = 0; i < n; i++)
		memcpy(out + 4 * i, EMOJI, 4);
	result_set(&res, OUTCOME_RETRY, "x", out, len);
	assert_int_equal(message_chars(&res), LAST_ERROR_CHARS);
	assert_int_equal(strlen(res.message), 3 + 4 * (LAST_ERROR_CHARS - 3));
	free(out);
}

static void
test_result_long_invalid_bytes(void **state)
{
	size_t len = 4000, i;
	char *out = malloc(len);
	struct result res = { 0 };

	(void)state;
	assert_non_null(out);
	for (i = 0; i < len; i++)
		out[i] = (char)(0x80 + (i % 0x40));	/* continuation bytes */
	result_set(&res, OUTCOME_RETRY, "exit status 1", out, len);
	assert_int_equal(message_chars(&res), LAST_ERROR_CHARS);
	assert_int_equal(strlen(res.message), LAST_ERROR_CHARS);
	assert_string_equal(res.message + LAST_ERROR_CHARS - 3, "???");
	free(out);
}

/* A what of 997 characters leaves room for ": " and one character. */
static void
test_result_long_what(void **state)
{
	char what[LAST_ERROR_CHARS + 100];
	struct result res = { 0 };

	(void)state;
	memset(what, 'w', 997);
	what[997] = '\0';
	result_set(&res, OUTCOME_RETRY, what, "abc", 3);
	assert_int_equal(message_chars(&res), LAST_ERROR_CHARS);
	assert_string_equal(res.message + 997, ": c");

	what[998] = '\0';
	what[997] = 'w';
	result_set(&res, OUTCOME_RETRY, what, "abc", 3);
	assert_int_equal(strlen(res.message), 998);
	message_chars(&res);

	memset(what, 'w', sizeof what - 1);
	what[sizeof what - 1] = '\0';
	result_set(&res, OUTCOME_RETRY, what, "abc", 3);
	assert_int_equal(strlen(res.message), LAST_ERROR_CHARS);
	message_chars(&res);
}

/* utf8_head and utf8_tail hold the byte bound whatever the text holds:
 * continuation bytes count as no character, so a cut by characters alone
 * would take them all. */
static void
test_head_tail_bytes(void **state)
{
	static const char s[] = "a" ZH EMOJI "b" WEN;
	char cont[300];
	size_t len = sizeof s - 1;

	(void)state;
	assert_int_equal(utf8_head(s, len, 6, len), len);
	assert_int_equal(utf8_head(s, len, 6, 7), 4);	/* not into 😀 */
	assert_int_equal(utf8_head(s, len, 6, 8), 8);
	assert_int_equal(utf8_head(s, len, 2, 100), 4);
	assert_int_equal(utf8_head(s, len, 6, 0), 0);
	assert_int_equal(utf8_tail(s, len, 6, len), 0);
	assert_int_equal(utf8_tail(s, len, 6, 4), 8);	/* b文 */
	assert_int_equal(utf8_tail(s, len, 6, 3), 9);
	assert_int_equal(utf8_tail(s, len, 6, 2), len);
	assert_int_equal(utf8_tail(s, len, 1, 100), 9);
	memset(cont, 0x80, sizeof cont);
	assert_true(utf8_head(cont, sizeof cont, 10, 100) <= 100);
	assert_true(sizeof cont - utf8_tail(cont, sizeof cont, 10, 100) <=
	    100);
}

/* utf8_narrow keeps what a narrower character set holds. */
static void
test_narrow(void **state)
{
	static const char s[] = "a" ZH EMOJI "b" E_ACUTE "\xFF";
	char *n;

	(void)state;
	n = utf8_narrow(s, sizeof s - 1, 4);
	assert_string_equal(n, "a" ZH EMOJI "b" E_ACUTE "?");
	free(n);
	n = utf8_narrow(s, sizeof s - 1, 3);
	assert_string_equal(n, "a" ZH "?b" E_ACUTE "?");
	free(n);
	n = utf8_narrow(s, sizeof s - 1, 1);
	assert_string_equal(n, "a??b??");
	free(n);
	n = utf8_narrow("x\0y", 3, 1);
	assert_string_equal(n, "x?y");
	free(n);
}

/* The heap overflow of issue 29: a status line whose reason phrase is
 * continuation bytes counted as no characters, so the body was given far
 * more room than the buffer has. */
static void
test_result_what_of_continuation_bytes(void **state)
{
	char what[200], body[4000];
	struct result res = { 0 };
	size_t i;

	(void)state;
	memcpy(what, "HTTP 500 ", 9);
	memset(what + 9, 0x80, 123);
	what[132] = '\0';
	for (i = 0; i < 1000; i++)
		memcpy(body + 4 * i, EMOJI, 4);
	result_set_head(&res, OUTCOME_RETRY, what, body, sizeof body);
	assert_int_equal(message_chars(&res), 1000);
	assert_memory_equal(res.message, "HTTP 500 ???", 12);
	result_set(&res, OUTCOME_RETRY, what, body, sizeof body);
	assert_int_equal(message_chars(&res), 1000);
}

/* A what of invalid bytes (a Latin-1 reason phrase, a cut that split a
 * character) comes out valid: the server refuses anything else. */
static void
test_result_what_invalid(void **state)
{
	struct result res = { 0 };

	(void)state;
	result_set(&res, OUTCOME_RETRY, "HTTP 500 Erreur de serveur \xe9",
	    NULL, 0);
	assert_string_equal(res.message, "HTTP 500 Erreur de serveur ?");
	result_set(&res, OUTCOME_RETRY, "cut " ZH "\xE4\xB8", "x", 1);
	assert_string_equal(res.message, "cut " ZH "??: x");
	message_chars(&res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitize_keeps_valid),
		cmocka_unit_test(test_sanitize_lone_continuation),
		cmocka_unit_test(test_sanitize_overlong),
		cmocka_unit_test(test_sanitize_surrogates),
		cmocka_unit_test(test_sanitize_above_max),
		cmocka_unit_test(test_sanitize_truncated),
		cmocka_unit_test(test_sanitize_nul),
		cmocka_unit_test(test_sanitize_stops_at_len),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_suffix),
		cmocka_unit_test(test_result_what_and_detail),
		cmocka_unit_test(test_result_strips_trailing_newlines),
		cmocka_unit_test(test_result_no_detail),
		cmocka_unit_test(test_result_sanitizes_detail),
		cmocka_unit_test(test_result_keeps_tail_of_long_ascii),
		cmocka_unit_test(test_result_long_chinese),
		cmocka_unit_test(test_result_long_mixed_width),
		cmocka_unit_test(test_result_long_emoji),
		cmocka_unit_test(test_result_long_invalid_bytes),
		cmocka_unit_test(test_result_long_what),
		cmocka_unit_test(test_head_tail_bytes),
		cmocka_unit_test(test_narrow),
		cmocka_unit_test(test_result_what_of_continuation_bytes),
		cmocka_unit_test(test_result_what_invalid),
	};

	return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}
