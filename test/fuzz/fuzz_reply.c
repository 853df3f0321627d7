/*
 * fuzz_reply.c - libFuzzer target: an http handler's reply, as any
 * endpoint may send it, read by http_reply.c and turned into a result.
 *
 * The input is a reply: byte 0 picks the status code, byte 1 max_response
 * (0 to 4,080 bytes, so the cut is reached), byte 2 what the stand-ins
 * for the database answer; then header lines up to an empty line, then
 * the body, handed over in chunks whose sizes the body's own bytes pick.
 * Whatever arrives, the result's message must be well-formed UTF-8 of at
 * most LAST_ERROR_CHARS characters inside its buffer, with the secret
 * redacted (ASan catches any write past it).  The stand-ins read a 202's
 * JSON with jansson and refuse a checkpoint with the reply's own bytes as
 * the server's error, as a server quoting the value back would.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handler.h"
#include "http_reply.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const long codes[] = { 200, 202, 204, 301, 400, 404, 408, 425, 429,
    500, 503, 599, 100, 0 };
static const char secret[] = "s3cr3t-Token";

struct stand_in {
	unsigned mode;
	const char *text;	/* the reply, for the server's error */
	size_t len;
};

static int
stand_in_checkpoint(void *arg, const char *json, size_t len, char *err,
    size_t errlen)
{
	struct stand_in *s = arg;
	size_t n = s->len < errlen - 1 ? s->len : errlen - 1;

	(void)json, (void)len;
	if (s->mode % 3 == 0)
		return 0;
	if (s->mode % 3 == 1)
		return 1;
	memcpy(err, s->text, n);	/* any bytes, NULs cut it short */
	err[n] = '\0';
	return -1;
}

static char *
member_text(json_t *doc, const char *name, size_t *len)
{
	json_t *v = json_object_get(doc, name);
	char *text;

	if (v == NULL)
		return NULL;
	text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (text != NULL && len != NULL)
		*len = strlen(text);
	return text;
}

static int
stand_in_read_reply(void *arg, const char *text, size_t len,
    struct reply *out, char *err, size_t errlen)
{
	struct stand_in *s = arg;
	json_t *doc;

	if (s->mode & 4) {
		snprintf(err, errlen, "%.*s", (int)(len < 300 ? len : 300),
		    text);
		return -1;
	}
	memset(out, 0, sizeof *out);
	doc = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	out->valid = doc != NULL;
	out->object = json_is_object(doc);
	if (out->object) {
		out->checkpoint = member_text(doc, "checkpoint",
		    &out->checkpoint_len);
		out->snooze = member_text(doc, "snooze", NULL);
	}
	json_decref(doc);
	return 0;
}

static void
check_message(const struct result *res)
{
	size_t len = strnlen(res->message, sizeof res->message);

	if (len == sizeof res->message)
		abort();		/* not NUL-ended inside its buffer */
	if (!utf8_valid(res->message, len))
		abort();
	if (utf8_count(res->message, len) > LAST_ERROR_CHARS)
		abort();
	if (memmem(res->message, len, secret, sizeof secret - 1) != NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_reply r = { 0 };
	struct secrets secrets = { 0 };
	struct result res = { 0 };
	struct stand_in s;
	struct handler_watch w = { 0 };
	const char *p, *end, *nl;
	size_t chunk;

	if (size < 3)
		return 0;
	r.cap = (size_t)data[1] * 16;
	r.body = malloc(r.cap + 1);
	if (r.body == NULL)
		return 0;
	s.mode = data[2];
	s.text = (const char *)data + 3;
	s.len = size - 3;
	w.checkpoint = stand_in_checkpoint;
	w.read_reply = stand_in_read_reply;
	w.arg = &s;
	p = (const char *)data + 3;
	end = (const char *)data + size;
	/* Header lines, as curl hands them over: each with its end. */
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		chunk = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		http_reply_header(&r, p, chunk);
		p += chunk;
		if (chunk <= 2 && (chunk == 1 || p[-2] == '\r'))
			break;		/* the empty line: the body follows */
	}
	while (p < end) {
		chunk = 1 + (unsigned char)*p % 64;
		if (chunk > (size_t)(end - p))
			chunk = (size_t)(end - p);
		http_reply_body(&r, p, chunk);
		p += chunk;
	}
	if (r.len > r.cap)
		abort();
	secrets_add(&secrets, secret);
	res.secrets = &secrets;
	http_reply_result(&r, codes[data[0] % (sizeof codes / sizeof codes[0])],
	    data[2] & 8 ? NULL : &w, curl_getdate, &res);
	check_message(&res);
	secrets_free(&secrets);
	free(r.body);
	return 0;
}
