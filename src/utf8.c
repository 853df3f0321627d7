/*
 * utf8.c - UTF-8 validation and character-wise cutting.
 *
 * last_error is a utf8mb4 TEXT column and MariaDB in strict mode rejects an
 * invalid byte sequence, which would turn a handler's garbage output into a
 * failed mark and a job stuck until recovery.  So output is sanitised first
 * (invalid bytes become '?') and only then cut, on character boundaries.
 * Well-formed here means RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF.
 */
#include "utf8.h"

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
