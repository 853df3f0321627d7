/*
 * html_text.c - what an HTML error page says, in a line.
 *
 * Not an HTML parser: it needs only where text is, and every index stays
 * below the length it was given.  Markup it does not understand is
 * skipped up to its '>', or to the end.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "html_text.h"

/* Where ASCII word (lower case) first starts in s[from..len), ignoring
 * case; len when it does not. */
static size_t
find(const char *s, size_t len, size_t from, const char *word)
{
	size_t n = strlen(word), i;

	for (i = from; i + n <= len; i++)
		if (strncasecmp(s + i, word, n) == 0)
			return i;
	return len;
}

/* Whether ASCII word (lower case) starts s[i..len), ignoring case, and
 * ends there (no letter or digit after it) when whole. */
static int
at(const char *s, size_t len, size_t i, const char *word, int whole)
{
	size_t n = strlen(word);

	if (i + n > len || strncasecmp(s + i, word, n) != 0)
		return 0;
	return !whole || i + n == len || !isalnum((unsigned char)s[i + n]);
}

/* Just past the '>' at or after from, or len. */
static size_t
past_gt(const char *s, size_t len, size_t from)
{
	const char *gt;

	if (from >= len)
		return len;
	gt = memchr(s + from, '>', len - from);
	return gt != NULL ? (size_t)(gt - s) + 1 : len;
}

/* Text going into out, runs of blanks as one space, none leading. */
struct sink {
	char *out;
	size_t len, cap;
	int blank;
};

static void
put_text(struct sink *k, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && k->len + 1 < k->cap; i++) {
		if (isspace((unsigned char)s[i]) || s[i] == '\0') {
			k->blank = k->len > 0;
			continue;
		}
		if (k->blank && k->len + 2 < k->cap)
			k->out[k->len++] = ' ';
		k->blank = 0;
		k->out[k->len++] = s[i];
	}
	k->out[k->len] = '\0';
}

/* The text of s[0..len) outside markup, and outside the elements whose
 * content no reader sees as the page's text. */
static void
put_visible(struct sink *k, const char *s, size_t len)
{
	static const char *const hidden[] = { "head", "title", "script",
	    "style", NULL };
	char close[16];
	const char *lt;
	size_t i = 0, name, end;
	int h;

	while (i < len && k->len + 1 < k->cap) {
		lt = memchr(s + i, '<', len - i);
		end = lt != NULL ? (size_t)(lt - s) : len;
		put_text(k, s + i, end - i);
		if (end >= len)
			break;
		k->blank = k->len > 0;	/* a tag separates words */
		if (at(s, len, end, "<!--", 0)) {
			i = find(s, len, end + 4, "-->");
			i = i + 3 <= len ? i + 3 : len;
			continue;
		}
		name = end + 1;
		for (h = 0; hidden[h] != NULL; h++)
			if (at(s, len, name, hidden[h], 1))
				break;
		i = past_gt(s, len, name);
		if (hidden[h] == NULL)
			continue;
		close[0] = '<';
		close[1] = '/';
		strcpy(close + 2, hidden[h]);
		i = past_gt(s, len, find(s, len, i, close));
	}
}

int
html_is_page(const char *content_type, const char *body, size_t len)
{
	size_t i = 0;

	if (content_type != NULL &&
	    find(content_type, strlen(content_type), 0, "text/html") <
	    strlen(content_type))
		return 1;
	while (i < len && isspace((unsigned char)body[i]))
		i++;
	return at(body, len, i, "<!doctype html", 1) ||
	    at(body, len, i, "<html", 1);
}

size_t
html_summary(const char *page, size_t len, char *out, size_t outcap)
{
	struct sink k = { out, 0, outcap, 0 };
	size_t t, from, to;

	if (outcap == 0)
		return 0;
	out[0] = '\0';
	t = find(page, len, 0, "<title");
	if (t < len) {
		from = past_gt(page, len, t + 6);
		to = find(page, len, from, "</title");
		put_text(&k, page + from, to - from);
		k.blank = 0;	/* the title's trailing blanks */
		if (k.len > 0)
			put_text(&k, ":", 1);
		k.blank = k.len > 0;
	}
	put_visible(&k, page, len);
	return k.len;
}
