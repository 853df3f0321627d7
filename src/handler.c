/*
 * handler.c - what the handler kinds share: their results, the secrets
 * their output is redacted of, the replies they read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler.h"
#include "utf8.h"
#include "util.h"

void
secrets_add(struct secrets *s, const char *value)
{
	size_t i;

	if (value == NULL || strlen(value) < 4)
		return;
	for (i = 0; i < s->n; i++)
		if (strcmp(s->values[i], value) == 0)
			return;
	s->values = xrealloc(s->values, (s->n + 1) * sizeof *s->values);
	s->values[s->n++] = xstrdup(value);
}

void
secrets_add_env(struct secrets *s, const char *name)
{
	size_t i;

	if (name == NULL || *name == '\0')
		return;
	for (i = 0; i < s->nenv; i++)
		if (strcmp(s->env_names[i], name) == 0)
			return;
	s->env_names = xrealloc(s->env_names, (s->nenv + 1) *
	    sizeof *s->env_names);
	s->env_names[s->nenv++] = xstrdup(name);
}

void
secrets_free(struct secrets *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		explicit_bzero(s->values[i], strlen(s->values[i]));
		free(s->values[i]);
	}
	free(s->values);
	s->values = NULL;
	s->n = 0;
	for (i = 0; i < s->nenv; i++)
		free(s->env_names[i]);
	free(s->env_names);
	s->env_names = NULL;
	s->nenv = 0;
}

/* The secret that starts at text[0], the longest when several do. */
static const char *
secret_at(const struct secrets *s, const char *text, size_t len,
    size_t *slen)
{
	const char *best = NULL;
	size_t i, n;

	*slen = 0;
	for (i = 0; s != NULL && i < s->n; i++) {
		n = strlen(s->values[i]);
		if (n <= len && n > *slen && memcmp(text, s->values[i], n) == 0) {
			best = s->values[i];
			*slen = n;
		}
	}
	return best;
}

char *
secrets_redact(const struct secrets *s, const char *text, size_t len,
    size_t *outlen)
{
	static const char mark[] = "[redacted]";
	size_t i = 0, o = 0, cap = len + 1, n;
	char *out = xmalloc(cap);

	while (i < len) {
		if (secret_at(s, text + i, len - i, &n) != NULL) {
			if (o + sizeof mark > cap)
				out = xrealloc(out, cap = cap * 2 + sizeof mark);
			memcpy(out + o, mark, sizeof mark - 1);
			o += sizeof mark - 1;
			i += n;
			continue;
		}
		if (o + 2 > cap)
			out = xrealloc(out, cap *= 2);
		out[o++] = text[i++];
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

void
reply_free(struct reply *reply)
{
	free(reply->checkpoint);
	free(reply->snooze);
	memset(reply, 0, sizeof *reply);
}

/* The attempt's output: the tail (or head) of the redacted detail. */
static void
keep_output(struct result *res, const char *clean, size_t len, int keep_tail)
{
	size_t start = 0, n;

	if (keep_tail) {
		start = utf8_tail(clean, len, len, ATTEMPT_OUTPUT_BYTES);
		n = len - start;
	} else
		n = utf8_head(clean, len, len, ATTEMPT_OUTPUT_BYTES);
	memcpy(res->output, clean + start, n);
	res->output[n] = '\0';
	res->output_len = n;
}

/* "<what>: <detail>" in res->message.  Both parts may hold bytes from
 * outside (a status line, a reply's text, a server's error), so each is
 * redacted, made valid UTF-8 and only then counted, and every cut is
 * bounded by bytes as well as characters: the buffer's size never rests
 * on what the text claims to be. */
static void
compose(struct result *res, enum outcome outcome, const char *what,
    const char *detail, size_t detail_len, int keep_tail)
{
	char *copy, *clean_what;
	size_t what_len, what_chars, room, room_bytes, start, n;

	res->outcome = outcome;
	res->retry_after = -1;
	clean_what = secrets_redact(res->secrets, what, strlen(what),
	    &what_len);
	utf8_sanitize(clean_what, what_len);
	what_len = utf8_head(clean_what, what_len, LAST_ERROR_CHARS,
	    sizeof res->message - 1);
	memcpy(res->message, clean_what, what_len);
	res->message[what_len] = '\0';
	what_chars = utf8_count(clean_what, what_len);
	free(clean_what);

	/* Skip trailing newlines: output usually ends in one. */
	while (detail_len > 0 && (detail[detail_len - 1] == '\n' ||
	    detail[detail_len - 1] == '\r'))
		detail_len--;
	res->output[0] = '\0';
	res->output_len = 0;
	if (detail == NULL || detail_len == 0)
		return;
	/* Secrets go before the cut, which could otherwise leave half of
	 * one that no longer matches. */
	copy = secrets_redact(res->secrets, detail, detail_len, &detail_len);
	utf8_sanitize(copy, detail_len);
	keep_output(res, copy, detail_len, keep_tail);
	if (what_chars + 2 >= LAST_ERROR_CHARS ||
	    what_len + 2 >= sizeof res->message - 1) {
		free(copy);
		return;
	}
	room = LAST_ERROR_CHARS - what_chars - 2;
	room_bytes = sizeof res->message - 1 - what_len - 2;
	if (keep_tail) {
		start = utf8_tail(copy, detail_len, room, room_bytes);
		n = detail_len - start;
	} else {
		start = 0;
		n = utf8_head(copy, detail_len, room, room_bytes);
	}
	memcpy(res->message + what_len, ": ", 2);
	memcpy(res->message + what_len + 2, copy + start, n);
	res->message[what_len + 2 + n] = '\0';
	free(copy);
}

void
result_set(struct result *res, enum outcome outcome, const char *what,
    const char *detail, size_t detail_len)
{
	compose(res, outcome, what, detail, detail_len, 1);
}

void
result_set_head(struct result *res, enum outcome outcome, const char *what,
    const char *detail, size_t detail_len)
{
	compose(res, outcome, what, detail, detail_len, 0);
}
