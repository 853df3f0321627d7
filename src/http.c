/*
 * http.c - the http handler: hand each job to a web application or an API.
 *
 * Many teams already have their job logic behind an internal endpoint (the
 * seed's PHP application).  This handler POSTs the job there while jobrun
 * keeps claiming, locking, retries and recovery.  The request carries
 * Idempotency-Key: <business_key>, because a crash between the receiver's
 * success and our mark makes a second delivery possible; the receiver is
 * the one place that can drop it.
 *
 * A type's curl handles live for the whole run, one per handler running at
 * once (--jobs), so consecutive jobs to the same host reuse connections.  The response body is kept only up
 * to max_response bytes; the rest is read and dropped, so a huge body
 * costs time (bounded by the timeout) but never memory.  While a request
 * runs, curl's progress callback drives the runner's watch tick, which
 * renews the job's lock and can abort the transfer when the lock is lost
 * or a second signal comes (once the server has begun its answer, only
 * if the rest has not come within HTTP_ANSWER_GRACE_MS).
 *
 * Status mapping: 2xx success; 408, 425, 429, 5xx and transport errors
 * (a reply that is not HTTP at all among them) are worth retrying
 * (Retry-After honoured); anything else (other 4xx, and 1xx or 3xx since
 * redirects are not followed) will not get better by itself and fails the
 * job at once.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config.h"
#include "defs.h"
#include "handler.h"
#include "http.h"
#include "http_reply.h"
#include "libcurl.h"
#include "rawjson.h"
#include "util.h"

#define HTTP_MAX_RESPONSE_LIMIT (16 * 1024 * 1024)
#define HTTP_TICK_MS 1000
/* A stop that finds the server already answering lets the answer finish
 * for this long, as exec's handlers have between SIGTERM and SIGKILL. */
#define HTTP_ANSWER_GRACE_MS 2000

struct http_state {
	char *url;
	int put;
	unsigned long timeout, connect_timeout, max_response;
	char *ca_file, *ca_path;
	int insecure;
	struct curl_slist *headers;	/* configured ones, in order */
	char **env_specs;		/* header_env values, resolved by prepare */
	char **files;			/* header_file paths, read by prepare */
	size_t nenv, nfiles;
	int prepared;
	struct libcurl lc;		/* loaded by the first key */
	/* Handles not in use, each with the connections it keeps open: a
	 * job takes one (or a new one) and puts it back, so the slots of a
	 * run (--jobs) never share one and never open more than one each. */
	pthread_mutex_t pool_lock;
	CURL **idle;
	size_t nidle, cap;
	int curl_initialised;
};

/* One request's state: the reply it collects, and the watch it ticks. */
struct exchange {
	struct http_reply reply;
	const struct handler_watch *watch;
	int64_t next_tick;
	int answering;		/* a final (not 1xx) status line came */
	int64_t stop_at;	/* a stop was asked for: abort then (or 0) */
	int abandoned;
};

static void *
http_create(void)
{
	struct http_state *st = xcalloc(1, sizeof *st);

	pthread_mutex_init(&st->pool_lock, NULL);
	return st;
}

/* "Name: value" with a token for a name and no line breaks anywhere. */
static int
valid_header(const char *h)
{
	const char *colon = strchr(h, ':');
	const char *p;

	if (colon == NULL || colon == h)
		return 0;
	for (p = h; p < colon; p++)
		if (!isgraph((unsigned char)*p))
			return 0;
	return strpbrk(h, "\r\n") == NULL;
}

/* curl_slist_append, whose NULL is out of memory. */
static struct curl_slist *
append(const struct http_state *st, struct curl_slist *list, const char *s)
{
	return xcheck(st->lc.slist_append(list, s));
}

static int
add_header(struct http_state *st, const char *h, char *err, size_t errlen)
{
	static const char *const ours[] = { "Content-Type:",
	    "Idempotency-Key:", "User-Agent:", NULL };
	const char *const *o;

	if (!valid_header(h))
		return errf(err, errlen, "not a header \"Name: value\"");
	for (o = ours; *o != NULL; o++)
		if (strncasecmp(h, *o, strlen(*o)) == 0)
			return errf(err, errlen, "%.*s is set by jobrun",
			    (int)strlen(*o) - 1, *o);
	st->headers = append(st, st->headers, h);
	return 0;
}

/* A header value from header_env or header_file is a secret: no message
 * may show it, nor its last word ("Bearer TOKEN": the token alone), which
 * a receiver's error page may echo. */
static void
remember_secret(struct secrets *out, const char *value)
{
	const char *end, *word;
	char *v;

	value += strspn(value, " \t");
	end = value + strlen(value);
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	v = xstrndup(value, (size_t)(end - value));
	secrets_add(out, v);
	for (word = end; word > value && word[-1] != ' ' && word[-1] != '\t';
	    word--)
		;
	if (word > value)
		secrets_add(out, word);
	explicit_bzero(v, strlen(v));
	free(v);
}

/* The variable a header_env spec names ("Name: VARIABLE"). */
static const char *
env_var(const char *spec)
{
	const char *colon = strchr(spec, ':');

	return colon != NULL ? colon + 1 + strspn(colon + 1, " \t") : spec;
}

/* header_env = Name: VARIABLE - the header's value comes from the
 * environment, so a token need not sit in any file. */
static int
add_env_header(struct http_state *st, const char *spec, char *err,
    size_t errlen)
{
	const char *colon = strchr(spec, ':');
	const char *var, *value;
	char *h;
	int rc;

	if (colon == NULL || colon == spec)
		return errf(err, errlen, "expected \"Name: VARIABLE\"");
	var = env_var(spec);
	if (*var == '\0')
		return errf(err, errlen, "expected \"Name: VARIABLE\"");
	value = getenv(var);
	if (value == NULL)
		return errf(err, errlen, "environment variable %s is not set",
		    var);
	if (strpbrk(value, "\r\n") != NULL)
		return errf(err, errlen, "the value of %s has a line break",
		    var);
	h = xmalloc((size_t)(colon - spec) + strlen(value) + 3);
	sprintf(h, "%.*s: %s", (int)(colon - spec), spec, value);
	rc = add_header(st, h, err, errlen);
	explicit_bzero(h, strlen(h));
	free(h);
	return rc;
}

/* Call fn with each header of a header_file: each non-empty line not
 * starting with # is one.  fn returns nonzero (with err) to stop. */
static int
each_file_header(const char *path, int (*fn)(void *arg, const char *line,
    char *msg, size_t msglen), void *arg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, msg[256];
	size_t cap = 0;
	int n = 0, rc = 0;

	if (f == NULL)
		return errf(err, errlen, "open %s: %s", path, strerror(errno));
	while (rc == 0 && getline(&line, &cap, f) != -1) {
		n++;
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (fn(arg, line, msg, sizeof msg) != 0)
			rc = errf(err, errlen, "%s:%d: %s", path, n, msg);
	}
	if (rc == 0 && ferror(f))
		rc = errf(err, errlen, "read %s: %s", path, strerror(errno));
	if (line != NULL)
		explicit_bzero(line, cap);
	free(line);
	fclose(f);
	return rc;
}

static int
header_from_file(void *arg, const char *line, char *msg, size_t msglen)
{
	return add_header(arg, line, msg, msglen);
}

static int
secret_from_file(void *arg, const char *line, char *msg, size_t msglen)
{
	const char *colon = strchr(line, ':');

	(void)msg, (void)msglen;
	if (colon != NULL)
		remember_secret(arg, colon + 1);
	return 0;
}

static int
add_header_file(struct http_state *st, const char *path, char *err,
    size_t errlen)
{
	return each_file_header(path, header_from_file, st, err, errlen);
}

/* Remember a header_env or header_file value for prepare. */
static void
remember(char ***list, size_t *n, const char *value)
{
	*list = xrealloc(*list, (*n + 1) * sizeof **list);
	(*list)[(*n)++] = xstrdup(value);
}

/* Whether this libcurl speaks scheme at all (one built without TLS has
 * no "https"): a URL it cannot use is refused with the configuration. */
static int
curl_speaks(const struct libcurl *lc, const char *scheme)
{
	const curl_version_info_data *v = lc->version_info(CURLVERSION_NOW);
	const char *const *p;

	for (p = v != NULL ? v->protocols : NULL; p != NULL && *p != NULL; p++)
		if (strcmp(*p, scheme) == 0)
			return 1;
	return 0;
}

static int
valid_url(const struct libcurl *lc, const char *url)
{
	CURLU *u = lc->url();
	char *scheme = NULL;
	int ok;

	if (u == NULL)
		return 0;
	ok = lc->url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    lc->url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
	if (ok && !curl_speaks(lc, scheme))
		ok = -1;
	lc->free(scheme);
	lc->url_cleanup(u);
	return ok;
}

/* libcurl, which url and header need, loaded once: 0, or -1 with err. */
static int
load_curl(struct http_state *st, char *err, size_t errlen)
{
	if (st->lc.handle == NULL && libcurl_open(&st->lc, err, errlen) != 0)
		return -1;
	return 0;
}

static int
parse_url(void *state, const char *value, char *err, size_t errlen)
{
	struct http_state *st = state;

	if (load_curl(st, err, errlen) != 0)
		return -1;
	switch (valid_url(&st->lc, value)) {
	case 0:
		return errf(err, errlen, "not an http:// or https:// URL: "
		    "\"%s\"", value);
	case -1:
		return errf(err, errlen, "this libcurl cannot fetch \"%s\" "
		    "(its scheme is not among curl --version's Protocols)",
		    value);
	}
	free(st->url);
	st->url = xstrdup(value);
	return 0;
}

static int
parse_header(void *state, const char *value, char *err, size_t errlen)
{
	if (load_curl(state, err, errlen) != 0)
		return -1;
	return add_header(state, value, err, errlen);
}

/* Only its form here; the variable is read by prepare. */
static int
parse_header_env(void *state, const char *value, char *err, size_t errlen)
{
	struct http_state *st = state;
	const char *colon = strchr(value, ':');

	if (colon == NULL || colon == value ||
	    strspn(colon + 1, " \t") == strlen(colon + 1))
		return errf(err, errlen, "expected \"Name: VARIABLE\"");
	remember(&st->env_specs, &st->nenv, value);
	return 0;
}

/* The file is read by prepare. */
static int
parse_header_file(void *state, const char *value, char *err, size_t errlen)
{
	struct http_state *st = state;

	if (value[0] == '\0')
		return errf(err, errlen, "an empty value (give one, or leave "
		    "the key out)");
	remember(&st->files, &st->nfiles, value);
	return 0;
}

#define HTTP_FIELD(f, t) CFG_FIELD(struct http_state, f, t)
#define HTTP_SECONDS(k, f, hi, d) { .section = "http", .key = k, \
	.kind = CFG_NUMBER, .offset = HTTP_FIELD(f, unsigned long), .min = 1, \
	.max = hi, .unit = "seconds", .def = d }
#define HTTP_PARSE(k, fn, rep) { .section = "http", .key = k, \
	.kind = CFG_CUSTOM, .parse = fn, .repeatable = rep }
#define HTTP_STRING(k, f) { .section = "http", .key = k, \
	.kind = CFG_STRING, .offset = HTTP_FIELD(f, char *) }

static const char *const methods[] = { "POST", "PUT", NULL };

/* The keys of an http section, which config.c reads into http_state;
 * only header and header_env may be given more than once. */
static const struct cfg_key http_keys[] = {
	HTTP_PARSE("url", parse_url, 0),
	{ .section = "http", .key = "method", .kind = CFG_ENUM,
	  .offset = HTTP_FIELD(put, int), .names = methods, .def = "POST" },
	HTTP_SECONDS("timeout", timeout, 86400, "60"),
	HTTP_SECONDS("connect_timeout", connect_timeout, 3600, "10"),
	HTTP_PARSE("header", parse_header, 1),
	HTTP_PARSE("header_env", parse_header_env, 1),
	HTTP_PARSE("header_file", parse_header_file, 0),
	HTTP_STRING("ca_file", ca_file),
	HTTP_STRING("ca_path", ca_path),
	{ .section = "http", .key = "insecure", .kind = CFG_BOOL,
	  .offset = HTTP_FIELD(insecure, int), .def = "no" },
	{ .section = "http", .key = "max_response", .kind = CFG_NUMBER,
	  .offset = HTTP_FIELD(max_response, unsigned long), .min = 0,
	  .max = HTTP_MAX_RESPONSE_LIMIT, .unit = "bytes", .def = "65536" },
};

static int
http_ready(void *state, char *err, size_t errlen)
{
	struct http_state *st = state;

	if (load_curl(st, err, errlen) != 0)
		return -1;
	if (st->url == NULL)
		return errf(err, errlen, "handler http needs a url");
	return 0;
}

/* Secrets are read here, not while parsing, so that "jobrun enqueue" or
 * a run of another type does not need the token's variable or file. */
static int
http_prepare(void *state, char *err, size_t errlen)
{
	struct http_state *st = state;
	char msg[512];
	size_t i;

	if (st->prepared)
		return 0;
	for (i = 0; i < st->nenv; i++)
		if (add_env_header(st, st->env_specs[i], msg, sizeof msg) != 0)
			return errf(err, errlen, "header_env: %s", msg);
	for (i = 0; i < st->nfiles; i++)
		if (add_header_file(st, st->files[i], msg, sizeof msg) != 0)
			return errf(err, errlen, "header_file: %s", msg);
	st->prepared = 1;
	return 0;
}

/* The values header_env and header_file give, read for this even when
 * the type was not prepared: a run of another type must not show them
 * either (its exec handler inherits the same environment).  Read as well
 * as they can be; a missing one has nothing to hide. */
static void
http_secrets(void *state, struct secrets *out)
{
	struct http_state *st = state;
	const char *value;
	char err[512];
	size_t i;

	for (i = 0; i < st->nenv; i++) {
		/* This handler copied the value when prepared; an exec
		 * handler, of this type's run or another's, never sees it. */
		secrets_add_env(out, env_var(st->env_specs[i]));
		if ((value = getenv(env_var(st->env_specs[i]))) != NULL)
			remember_secret(out, value);
	}
	for (i = 0; i < st->nfiles; i++)
		each_file_header(st->files[i], secret_from_file, out, err,
		    sizeof err);
}

static const char *
http_warning(void *state)
{
	struct http_state *st = state;

	return st->insecure ? "insecure = yes: TLS verification is off" :
	    NULL;
}

static void
http_destroy(void *state)
{
	struct http_state *st = state;
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->nidle; i++)
		st->lc.easy_cleanup(st->idle[i]);
	free(st->idle);
	pthread_mutex_destroy(&st->pool_lock);
	if (st->curl_initialised)
		st->lc.global_cleanup();
	if (st->headers != NULL)
		st->lc.slist_free_all(st->headers);
	for (i = 0; i < st->nenv; i++)
		free(st->env_specs[i]);
	for (i = 0; i < st->nfiles; i++)
		free(st->files[i]);
	free(st->env_specs);
	free(st->files);
	libcurl_close(&st->lc);
	free(st->url);
	free(st->ca_file);
	free(st->ca_path);
	free(st);
}

/* curl's write callback: keep the first max bytes, drop the rest. */
static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct exchange *ex = arg;

	http_reply_body(&ex->reply, data, size * nmemb);
	return size * nmemb;
}

static size_t
on_header(char *line, size_t size, size_t nmemb, void *arg)
{
	struct exchange *ex = arg;
	size_t n = size * nmemb;

	http_reply_header(&ex->reply, line, n);
	/* "HTTP/1.1 200 OK": the digit after the first blank. */
	if (n > 5 && strncmp(line, "HTTP/", 5) == 0) {
		const char *sp = memchr(line, ' ', n);

		ex->answering = sp != NULL && (size_t)(sp - line) + 1 < n &&
		    sp[1] >= '2' && sp[1] <= '9';
	}
	return n;
}

static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct exchange *ex = arg;
	int64_t now = now_ms();
	char what[96];

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (ex->stop_at != 0) {
		ex->abandoned = now >= ex->stop_at;
		return ex->abandoned;	/* nonzero aborts the transfer */
	}
	if (ex->watch == NULL || now < ex->next_tick)
		return 0;
	ex->next_tick = now + HTTP_TICK_MS;
	if (ex->watch->tick(ex->watch->arg) == 0)
		return 0;
	/* The server has done the work and is sending its answer: cut off
	 * now, the job would run again for nothing.  So the answer gets a
	 * short while to arrive, and its outcome is written. */
	if (ex->answering) {
		ex->stop_at = now + HTTP_ANSWER_GRACE_MS;
		if (ex->watch->say != NULL) {
			snprintf(what, sizeof what, "stopping: the server is "
			    "already answering; its answer has %d s to arrive",
			    HTTP_ANSWER_GRACE_MS / 1000);
			ex->watch->say(ex->watch->arg, what);
		}
		return 0;
	}
	ex->abandoned = 1;
	return 1;
}

/* The request body: the job as JSON, with its payload and checkpoint as
 * the row holds them, byte for byte (the payload last, so a receiver can
 * also cut it out as text).  NULL when the key cannot be a JSON string:
 * bytes that are not UTF-8 (MariaDB's utf8mb4 also stores encoded
 * surrogates), which no JSON text can carry exactly. */
static char *
request_body(const struct job *job, size_t *lenp)
{
	struct raw_member raw[2];
	json_t *doc, *key = json_null();
	size_t n = 0;
	char *text;

	if (job->business_key != NULL && (key = json_stringn(job->business_key,
	    job->business_key_len)) == NULL)
		return NULL;
	doc = json_pack("{s:I,s:s,s:o,s:I,s:I}",
	    "id", (json_int_t)job->id, "type", job->type,
	    "business_key", key,
	    "attempt", (json_int_t)job->attempt,
	    "max_attempts", (json_int_t)job->max_attempts);
	if (doc == NULL)
		return NULL;
	/* A resumable job's receiver gets its last checkpoint back. */
	if (job->resumable)
		raw[n++] = (struct raw_member){ "checkpoint", job->checkpoint,
		    job->checkpoint_len };
	raw[n++] = (struct raw_member){ "payload", job->payload,
	    job->payload_len };
	text = rawjson_object(doc, raw, n, lenp);
	json_decref(doc);
	return text;
}

/* Bytes a key keeps as they are in Idempotency-Key; every other byte,
 * "%" first of all, is written %XX, so two keys never give one value. */
static int
key_byte_plain(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~' || c == ':';
}

char *
http_idempotency_value(const char *key, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(len * 3 + 1), *o = out;
	const unsigned char *k = (const unsigned char *)key;
	size_t i;

	for (i = 0; i < len; i++) {
		if (key_byte_plain(k[i])) {
			*o++ = (char)k[i];
			continue;
		}
		*o++ = '%';
		*o++ = hex[k[i] >> 4];
		*o++ = hex[k[i] & 15];
	}
	*o = '\0';
	return out;
}

/* A handle for one exchange, the pool's lock held: an idle one, with
 * the connections it keeps open, or a new one; NULL when curl cannot
 * make one. */
static CURL *
take_handle(struct http_state *st)
{
	if (st->nidle > 0)
		return st->idle[--st->nidle];
	if (!st->curl_initialised) {
		if (st->lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return NULL;
		st->curl_initialised = 1;
	}
	return st->lc.easy_init();
}

/* Back to the pool, for the next job to reuse its connections. */
static void
put_handle(struct http_state *st, CURL *curl)
{
	pthread_mutex_lock(&st->pool_lock);
	if (st->nidle == st->cap) {
		st->cap = st->cap == 0 ? 4 : st->cap * 2;
		st->idle = xrealloc(st->idle, st->cap * sizeof *st->idle);
	}
	st->idle[st->nidle++] = curl;
	pthread_mutex_unlock(&st->pool_lock);
}

static void
configure(struct http_state *st, CURL *c, struct exchange *ex,
    const char *body, size_t body_len, struct curl_slist *headers)
{

	/* Options persist on a reused handle; set every one each time. */
	st->lc.easy_setopt(c, CURLOPT_URL, st->url);
	st->lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	st->lc.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	st->lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	st->lc.easy_setopt(c, CURLOPT_CUSTOMREQUEST, st->put ? "PUT" : NULL);
	st->lc.easy_setopt(c, CURLOPT_POST, 1L);
	st->lc.easy_setopt(c, CURLOPT_POSTFIELDS, body);
	st->lc.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)body_len);
	st->lc.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	st->lc.easy_setopt(c, CURLOPT_TIMEOUT, (long)st->timeout);
	st->lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)st->connect_timeout);
	st->lc.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, st->insecure ? 0L : 1L);
	st->lc.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, st->insecure ? 0L : 2L);
	/* ca_file alone trusts that file only, not the system's CAs too. */
	if (st->ca_file != NULL)
		st->lc.easy_setopt(c, CURLOPT_CAINFO, st->ca_file);
	if (st->ca_path != NULL || st->ca_file != NULL)
		st->lc.easy_setopt(c, CURLOPT_CAPATH, st->ca_path);
	st->lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	st->lc.easy_setopt(c, CURLOPT_WRITEDATA, ex);
	st->lc.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	st->lc.easy_setopt(c, CURLOPT_HEADERDATA, ex);
	st->lc.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	st->lc.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	st->lc.easy_setopt(c, CURLOPT_XFERINFODATA, ex);
}

static struct curl_slist *
request_headers(const struct http_state *st, const struct job *job)
{
	struct curl_slist *h = NULL;
	const struct curl_slist *c;
	char *idem = NULL, *value;

	/* No key (NULL): no header.  An empty key: an empty header, which
	 * curl sends when the name ends in ";". */
	if (job->business_key != NULL) {
		value = http_idempotency_value(job->business_key,
		    job->business_key_len);
		idem = xmalloc(strlen(value) + sizeof "Idempotency-Key: ");
		sprintf(idem, value[0] != '\0' ? "Idempotency-Key: %s" :
		    "Idempotency-Key;%s", value);
		free(value);
	}
	h = append(st, h, "Content-Type: application/json");
	h = append(st, h, "User-Agent: jobrun/" JOBRUN_VERSION);
	if (idem != NULL)
		h = append(st, h, idem);
	/* No "Expect: 100-continue" round trip for large payloads. */
	h = append(st, h, "Expect:");
	for (c = st->headers; c != NULL; c = c->next)
		h = append(st, h, c->data);
	free(idem);
	return h;
}

static void
http_run(void *state, const struct job *job, const struct handler_watch *w,
    struct result *res)
{
	struct http_state *st = state;
	struct exchange ex = { 0 };
	char errbuf[CURL_ERROR_SIZE] = "", what[300];
	struct curl_slist *headers = NULL;
	char *body = NULL;
	size_t body_len = 0;
	CURL *curl = NULL;
	CURLcode rc;
	long code = 0;
	int prepared;

	pthread_mutex_lock(&st->pool_lock);
	if ((prepared = http_prepare(st, what, sizeof what) == 0))
		curl = take_handle(st);
	pthread_mutex_unlock(&st->pool_lock);
	if (!prepared) {
		result_set(res, OUTCOME_RETRY, what, NULL, 0);
		goto out;
	}
	if (curl == NULL) {
		result_set(res, OUTCOME_RETRY, "http: cannot set up a curl "
		    "handle", NULL, 0);
		goto out;
	}
	if ((body = request_body(job, &body_len)) == NULL) {
		/* The key will not change: trying again cannot help. */
		result_set(res, OUTCOME_FAIL, "http: business_key is not "
		    "valid UTF-8 and cannot be sent in the JSON body; no "
		    "request was made", NULL, 0);
		goto out;
	}
	headers = request_headers(st, job);
	ex.reply.cap = st->max_response;
	ex.reply.body = xmalloc(ex.reply.cap + 1);
	ex.watch = w;
	ex.next_tick = now_ms() + HTTP_TICK_MS;
	configure(st, curl, &ex, body, body_len, headers);
	st->lc.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	rc = st->lc.easy_perform(curl);
	st->lc.easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	if (ex.abandoned) {
		result_set(res, OUTCOME_ABANDONED, "stopped by the runner",
		    NULL, 0);
		goto out;
	}
	if (rc != CURLE_OK) {
		snprintf(what, sizeof what, "curl error: %s", errbuf[0] ?
		    errbuf : st->lc.easy_strerror(rc));
		/* The URL was parsed, and its scheme found in this libcurl,
		 * with the configuration: CURLE_UNSUPPORTED_PROTOCOL here is
		 * a reply that is not HTTP ("Received HTTP/0.9 when not
		 * allowed"), which the next attempt may not get. */
		result_set(res, rc == CURLE_URL_MALFORMAT ? OUTCOME_FAIL :
		    OUTCOME_RETRY, what, NULL, 0);
		res->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
		goto out;
	}
	st->lc.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	http_reply_result(&ex.reply, code, w, st->lc.getdate, res);
	res->http_status = code;
out:
	if (curl != NULL)
		put_handle(st, curl);
	st->lc.slist_free_all(headers);
	free(body);	/* json_dumps uses malloc by default */
	free(ex.reply.body);
}

/* A HEAD request to the URL with the configured headers, as check makes
 * it: no job is sent.  A connection or TLS failure, and an answer that
 * says the URL names nothing (404, 410) or refuses the credentials (401,
 * 403), are problems; any other answer (405 to a HEAD that only takes
 * POST, say) shows the endpoint is there. */
static int
http_probe(void *state, struct probe_note *out)
{
	char *msg = out->msg;
	size_t msglen = sizeof out->msg;

	struct http_state *st = state;
	struct exchange ex = { 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	struct job none = { 0 };
	struct curl_slist *headers;
	CURL *curl;
	CURLcode rc;
	long code = 0;

	pthread_mutex_lock(&st->pool_lock);
	curl = take_handle(st);
	pthread_mutex_unlock(&st->pool_lock);
	snprintf(out->fix, sizeof out->fix, "check url and the headers "
	    "(jobrun.conf(5))");
	if (curl == NULL)
		return errf(msg, msglen, "cannot set up a curl handle");
	headers = request_headers(st, &none);
	ex.reply.cap = 0;
	ex.reply.body = xmalloc(1);
	ex.next_tick = INT64_MAX;
	configure(st, curl, &ex, NULL, 0, headers);
	st->lc.easy_setopt(curl, CURLOPT_POST, 0L);
	st->lc.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, NULL);
	st->lc.easy_setopt(curl, CURLOPT_NOBODY, 1L);
	st->lc.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	rc = st->lc.easy_perform(curl);
	st->lc.easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	st->lc.easy_setopt(curl, CURLOPT_NOBODY, 0L);
	if (rc == CURLE_OK)
		st->lc.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	put_handle(st, curl);
	st->lc.slist_free_all(headers);
	free(ex.reply.body);
	if (rc != CURLE_OK)
		return errf(msg, msglen, "%s: %s", st->url, errbuf[0] ? errbuf :
		    st->lc.easy_strerror(rc));
	if (code == 404 || code == 410 || code == 401 || code == 403)
		return errf(msg, msglen, "%s answers a HEAD request with HTTP "
		    "%ld", st->url, code);
	errf(msg, msglen, "%s answers (HTTP %ld to a HEAD request)", st->url,
	    code);
	return 0;
}

const struct handler_kind http_kind = {
	.name = "http",
	.keys = http_keys,
	.nkeys = sizeof http_keys / sizeof http_keys[0],
	.create = http_create,
	.ready = http_ready,
	.prepare = http_prepare,
	.warning = http_warning,
	.secrets = http_secrets,
	.probe = http_probe,
	.run = http_run,
	.destroy = http_destroy,
};
