/*
 * utf8.c - UTF-8 validation and character-wise cutting.
 *
 * last_error is a utf8mb4 TEXT column and MariaDB in strict mode rejects an
 * invalid byte sequence, which would turn a handler's garbage output into a
 * failed mark and a job stuck until recovery.  So output is sanitised first
 * (invalid bytes become '?') and only then cut, on character boundaries.
 * Well-formed here means RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF.
 *
 * The same text reaches terminals (the log, list, show): there an ESC, a
 * BEL or a C1 control is an instruction to the terminal, not text - clear
 * the screen, retitle the window, move the cursor back over a line - and a
 * line feed starts a forged log line.  A bidirectional override shows what
 * follows it backwards, on a terminal or a page, so it is escaped too.  utf8_escape is the one place that
 * turns them into visible escapes; the escapes are those of Go's and
 * logfmt's quoted strings, so a logfmt parser reads the original back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "util.h"

/* Length of the well-formed sequence starting at s, or 0 if there is none. */
static size_t
sequence_length(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;	/* overlong */
		else if (c == 0xED)
			hi = 0x9F;	/* surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;	/* overlong */
		else if (c == 0xF4)
			hi = 0x8F;	/* above U+10FFFF */
	} else
		return 0;
	if (avail < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return n;
}

void
utf8_sanitize(char *s, size_t len)
{
	unsigned char *p = (unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = sequence_length(p + i, len - i);
		if (n == 0) {
			p[i++] = '?';
			continue;
		}
		i += n;
	}
}

int
utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = sequence_length(p + i, len - i);
		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

/* A continuation byte never starts a character. */
static int
starts_char(unsigned char c)
{
	return (c & 0xC0) != 0x80;
}

size_t
utf8_count(const char *s, size_t len)
{
	size_t i, count = 0;

	for (i = 0; i < len; i++)
		if (starts_char((unsigned char)s[i]))
			count++;
	return count;
}

size_t
utf8_prefix(const char *s, size_t len, size_t n)
{
	size_t i, count = 0;

	for (i = 0; i < len; i++)
		if (starts_char((unsigned char)s[i]) && count++ == n)
			return i;
	return len;
}

size_t
utf8_suffix(const char *s, size_t len, size_t n)
{
	size_t i = len, count = 0;

	if (n == 0)
		return len;
	while (i > 0) {
		i--;
		if (starts_char((unsigned char)s[i]) && ++count == n)
			return i;
	}
	return 0;
}

size_t
utf8_head(const char *s, size_t len, size_t chars, size_t bytes)
{
	size_t n = utf8_prefix(s, len, chars);

	/* Counting characters alone trusts the text: a run of continuation
	 * bytes counts as nothing and would lift the byte bound. */
	if (n > bytes) {
		n = bytes;
		while (n > 0 && !starts_char((unsigned char)s[n]))
			n--;
	}
	return n;
}

size_t
utf8_tail(const char *s, size_t len, size_t chars, size_t bytes)
{
	size_t start = utf8_suffix(s, len, chars);

	if (len - start > bytes) {
		start = len - bytes;
		while (start < len && !starts_char((unsigned char)s[start]))
			start++;
	}
	return start;
}

char *
utf8_narrow(const char *s, size_t len, size_t max_bytes)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xmalloc(len + 1);
	size_t i = 0, o = 0, n;

	while (i < len) {
		n = sequence_length(p + i, len - i);
		if (n > 0 && n <= max_bytes) {
			memcpy(out + o, s + i, n);
			o += n;
		} else
			out[o++] = '?';
		i += n > 0 ? n : 1;
	}
	out[o] = '\0';
	return out;
}

/* Whether the character of n bytes at p changes the order or the lines
 * text is shown in: the bidirectional marks, embeddings, overrides and
 * isolates (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line
 * and paragraph separators (U+2028, U+2029).  A type name holding U+202E
 * would show the rest of a line backwards. */
static int
reorders(const unsigned char *p, size_t n)
{
	if (n != 3 || p[0] != 0xE2)
		return 0;
	if (p[1] == 0x80)
		return p[2] == 0x8E || p[2] == 0x8F ||
		    (p[2] >= 0xA8 && p[2] <= 0xAE);
	return p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9;
}

/* The escape of the character of n bytes at p (n 0: a byte that starts
 * none), made in esc, or NULL when it is written as it is. */
static const char *
escape_of(const unsigned char *p, size_t n, int flags, char esc[8])
{
	if (n == 0) {
		snprintf(esc, 8, "\\x%02x", p[0]);
		return esc;
	}
	if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
		snprintf(esc, 8, "\\u%04x", p[1]);
		return esc;
	}
	if (reorders(p, n)) {
		snprintf(esc, 8, "\\u%04x", ((p[0] & 0x0F) << 12) |
		    ((p[1] & 0x3F) << 6) | (p[2] & 0x3F));
		return esc;
	}
	if (n > 1)
		return NULL;
	switch (p[0]) {
	case '\n':
		return flags & UTF8_ESC_KEEP_NL ? NULL : "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '"':
	case '\\':
		if (!(flags & UTF8_ESC_QUOTED))
			return NULL;
		snprintf(esc, 8, "\\%c", p[0]);
		return esc;
	}
	if (p[0] < 0x20 || p[0] == 0x7f) {
		snprintf(esc, 8, "\\x%02x", p[0]);
		return esc;
	}
	return NULL;
}

size_t
utf8_escape(char *out, size_t outlen, const char *s, size_t len, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, o = 0, total = 0, ulen;
	const char *unit;
	char esc[8];
	int full = 0;

	while (i < len) {
		n = sequence_length(p + i, len - i);
		unit = escape_of(p + i, n, flags, esc);
		if (n == 0)
			n = 1;
		ulen = unit != NULL ? strlen(unit) : n;
		if (unit == NULL)
			unit = s + i;
		total += ulen;
		/* Whole units only, so a cut line ends cleanly. */
		if (!full && o + ulen < outlen) {
			memcpy(out + o, unit, ulen);
			o += ulen;
		} else
			full = 1;
		i += n;
	}
	if (outlen > 0)
		out[o] = '\0';
	return total;
}

char *
utf8_escape_dup(const char *s, int flags)
{
	size_t len = strlen(s), n = utf8_escape(NULL, 0, s, len, flags);
	char *out = xmalloc(n + 1);

	utf8_escape(out, n + 1, s, len, flags);
	return out;
}
