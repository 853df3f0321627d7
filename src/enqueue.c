/*
 * enqueue.c - "jobrun enqueue": add one job, or fan a range out into chunk
 * jobs (seed 004's dispatcher).
 *
 * A job is created once: business_key is UNIQUE and the insert's
 * affected-rows count says whether this call created it or found it, so a
 * duplicate is reported, not hidden (INSERT IGNORE would also hide every
 * other error).  A fan-out derives each chunk's key from its range,
 * "PREFIX:FROM-TO", so running it again after an interruption inserts
 * only the chunks that are missing.  A signal stops a fan-out between two
 * batches (each one statement, so never half written) and the counts say
 * what was written before it.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "command.h"
#include "fanin.h"
#include "report.h"
#include "runner.h"
#include "utf8.h"
#include "util.h"

#define PAYLOAD_MAX (64 * 1024 * 1024)
#define FANOUT_MAX_CHUNKS 10000000UL
#define FANOUT_BATCH 500	/* chunks per multi-row insert */

/* The payload file's contents ("-": stdin), at most PAYLOAD_MAX bytes,
 * as they are (NUL bytes included); *lenp is their length. */
static char *
read_payload(const char *path, size_t *lenp, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t len = 0, cap = 65536, n;
	char *buf;

	if (f == NULL) {
		errf(err, errlen, "open %s: %s", path, strerror(errno));
		return NULL;
	}
	buf = xmalloc(cap + 1);
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap && cap < PAYLOAD_MAX) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		} else if (len == cap)
			break;
	}
	if (ferror(f) || len >= PAYLOAD_MAX) {
		errf(err, errlen, "read %s: %s", path, ferror(f) ?
		    strerror(errno) : "larger than 64 MiB");
		free(buf);
		buf = NULL;
	} else {
		buf[len] = '\0';
		*lenp = len;
	}
	if (f != stdin)
		fclose(f);
	return buf;
}

/* Whether the server takes text (len bytes) as JSON for what, and, when
 * object is set, as a JSON object: the server's JSON_VALID is the rule an
 * application's own inserts into a JSON column meet, so jobrun refuses
 * exactly what it refuses.  Returns an exit status, EX_OK when it is. */
static int
check_json(struct ctx *c, const char *what, const char *text, size_t len,
    int object)
{
	enum queue_json kind;
	char err[1024];
	enum db_status st;

	st = queue_json_kind(c->q, text, len, object, &kind, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (kind == QUEUE_JSON_INVALID) {
		log_msg(&c->lg, LV_ERROR, "enqueue: %s is not valid JSON (the "
		    "server's JSON_VALID refuses it)", what);
		return EX_DATAERR;
	}
	if (object && kind != QUEUE_JSON_OBJECT) {
		log_msg(&c->lg, LV_ERROR, "enqueue: %s must be a JSON object",
		    what);
		return EX_DATAERR;
	}
	return EX_OK;
}

/* --again: what happened, and its exit status: 0 for a job created,
 * re-armed or pending already; EX_TEMPFAIL for one running now (try again
 * once it has finished); EXIT_ATTENTION for any other status. */
static int
report_again(const struct ctx *c, uint64_t id, enum queue_again outcome,
    const char *status)
{
	static const char *const names[] = { "created", "rearmed", "left" };
	int running = outcome == QUEUE_LEFT && strcmp(status, "processing") == 0;
	int pending = outcome == QUEUE_LEFT && strcmp(status, "pending") == 0;
	char *shown;

	if (c->cli.json)
		report_json(json_pack("{s:I,s:s,s:s}", "id", (json_int_t)id,
		    "outcome", names[outcome], "status", status));
	else if (outcome == QUEUE_CREATED)
		printf("job %llu created\n", (unsigned long long)id);
	else if (outcome == QUEUE_REARMED)
		printf("job %llu enqueued again (pending, attempts 0)\n",
		    (unsigned long long)id);
	else if (pending)
		printf("job %llu is pending already, left as it is\n",
		    (unsigned long long)id);
	else if (running)
		printf("job %llu is running (status processing), not "
		    "touched\n", (unsigned long long)id);
	else {
		/* The status is the row's, whatever an application wrote. */
		shown = utf8_escape_dup(status, 0);
		printf("job %llu has status %s, not touched\n",
		    (unsigned long long)id, shown);
		free(shown);
	}
	if (running)
		return EX_TEMPFAIL;
	return outcome != QUEUE_LEFT || pending ? EX_OK : EXIT_ATTENTION;
}

static int
enqueue_again(struct ctx *c, const char *payload, size_t len,
    const struct queue_when *when)
{
	enum queue_again outcome;
	char err[1024], *status = NULL;
	enum db_status st;
	uint64_t id = 0;
	int rc;

	st = queue_enqueue_again(c->q, c->cli.type, c->cli.key, payload, len,
	    when, c->cli.max_attempts, &id, &outcome, &status, err,
	    sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	rc = report_again(c, id, outcome, status != NULL ? status : "NULL");
	free(status);
	return rc;
}

static int
enqueue_one(struct ctx *c)
{
	struct queue_when when = { c->cli.at, c->cli.delay };
	char err[1024], *file_payload = NULL, *status = NULL;
	const char *payload = c->cli.payload;
	const char *file = c->cli.payload_file;
	size_t len = payload != NULL ? strlen(payload) : 0;
	enum db_status st;
	uint64_t id = 0;
	int created = 0, rc = EX_OK;

	if (file == NULL && c->cli.nargs == 1)
		file = "-";	/* "jobrun enqueue ... -" */
	if (file != NULL) {
		file_payload = read_payload(file, &len, err, sizeof err);
		if (file_payload == NULL) {
			log_msg(&c->lg, LV_ERROR, "enqueue: %s", err);
			return EX_NOINPUT;
		}
		payload = file_payload;
	}
	if (payload != NULL &&
	    (rc = check_json(c, "payload", payload, len, 0)) != EX_OK)
		goto out;
	if (c->cli.again) {
		rc = enqueue_again(c, payload, len, &when);
		goto out;
	}
	st = queue_enqueue(c->q, c->cli.type, c->cli.key, payload, len, &when,
	    c->cli.max_attempts, &id, &created, &status, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		rc = cmd_exit_for(st);
		goto out;
	}
	report_enqueue(stdout, c->cli.json, id, created, status);
out:
	free(status);
	free(file_payload);
	return rc;
}

struct fanout {
	struct queue_new_job rows[FANOUT_BATCH];
	size_t n;
	struct fanin fi;	/* --then */
	uint64_t fan_in;	/* its id, or 0 */
	uint64_t total, created, done;
	int progress;		/* stderr is a terminal */
};

static void
free_rows(struct fanout *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free((char *)f->rows[i].key);
	f->n = 0;
}

/* The batch's chunks become members of the fan-in (--then). */
static enum db_status
add_members(struct fanout *f, char *err, size_t errlen)
{
	const char *keys[FANOUT_BATCH];
	size_t i;

	for (i = 0; i < f->n; i++)
		keys[i] = f->rows[i].key;
	return fanin_add_members(&f->fi, f->fan_in, keys, f->n, err, errlen);
}

/* --then: the fan-in, keyed "PREFIX:then", made before any chunk so that
 * no chunk can finish uncounted. */
static enum db_status
start_fan_in(struct ctx *c, struct fanout *f, char *err, size_t errlen)
{
	char key[QUEUE_KEY_MAX * 4 + 1], *payload;
	json_t *doc;
	enum db_status st;

	fanin_open(&f->fi, &c->db, c->q, &c->lg);
	if (c->cli.then_type == NULL)
		return DB_OK;
	snprintf(key, sizeof key, "%s:then", c->cli.key_prefix);
	doc = json_pack("{s:s}", "key_prefix", c->cli.key_prefix);
	payload = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	st = fanin_create(&f->fi, c->cli.then_type, key, payload, f->total,
	    &f->fan_in, err, errlen);
	free(payload);
	return st;
}

/* After the last chunk: count the chunks that had finished before they
 * became members, and fire when all have. */
static enum db_status
end_fan_in(struct ctx *c, struct fanout *f, int *fired, char *err,
    size_t errlen)
{
	*fired = 0;
	if (f->fan_in == 0)
		return DB_OK;
	(void)c;
	return fanin_settle(&f->fi, f->fan_in, fired, err, errlen);
}

static enum db_status
flush_rows(struct ctx *c, struct fanout *f, char *err, size_t errlen)
{
	struct queue_when when = { c->cli.at, c->cli.delay };
	uint64_t created = 0;
	enum db_status st;

	st = queue_enqueue_batch(c->q, c->cli.type, c->cli.payload_template,
	    f->rows, f->n, &when,
	    c->cli.max_attempts, &created, err, errlen);
	f->created += created;
	if (st == DB_OK && f->fan_in != 0)
		st = add_members(f, err, errlen);
	if (st == DB_OK)
		f->done += f->n;
	free_rows(f);
	if (f->progress)
		fprintf(stderr, "\rjobrun: enqueue: %llu of %llu chunks",
		    (unsigned long long)f->done, (unsigned long long)f->total);
	return st;
}

static int
enqueue_range(struct ctx *c)
{
	const struct cli *o = &c->cli;
	struct fanout *f;
	char err[1024], key[QUEUE_KEY_MAX * 4 + 1];
	unsigned long from;
	enum db_status st = DB_OK;
	int rc = EX_OK, stop = 0, fired = 0;

	if (o->payload_template != NULL && (rc = check_json(c,
	    "--payload-template", o->payload_template,
	    strlen(o->payload_template), 1)) != EX_OK)
		return rc;
	f = xcalloc(1, sizeof *f);
	f->total = (o->range_to - o->range_from) / o->chunk + 1;
	if (f->total > FANOUT_MAX_CHUNKS) {
		log_msg(&c->lg, LV_ERROR, "enqueue: %llu chunks is more than "
		    "%lu; use a larger --chunk", (unsigned long long)f->total,
		    FANOUT_MAX_CHUNKS);
		free(f);
		return EX_USAGE;
	}
	f->progress = isatty(STDERR_FILENO) && !o->quiet;
	st = start_fan_in(c, f, err, sizeof err);
	for (from = o->range_from; st == DB_OK; from += o->chunk) {
		unsigned long to = o->range_to - from < o->chunk - 1 ?
		    o->range_to : from + o->chunk - 1;

		/* Before each batch: a signal never cuts one. */
		if (f->n == 0 && (stop = run_stop_requested()) != 0)
			break;
		snprintf(key, sizeof key, "%s:%lu-%lu", o->key_prefix, from,
		    to);
		f->rows[f->n].key = xstrdup(key);
		f->rows[f->n].from = from;
		f->rows[f->n].to = to;
		if (++f->n == FANOUT_BATCH || to == o->range_to)
			st = flush_rows(c, f, err, sizeof err);
		if (to == o->range_to)
			break;
	}
	free_rows(f);
	if (st == DB_OK && stop == 0)
		st = end_fan_in(c, f, &fired, err, sizeof err);
	if (f->progress)
		fputc('\n', stderr);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		rc = cmd_exit_for(st);
	} else if (stop != 0) {
		log_msg(&c->lg, LV_WARN, "enqueue: stopped on signal %d after "
		    "%llu of %llu chunks; the same command adds the rest",
		    stop - 128, (unsigned long long)f->done,
		    (unsigned long long)f->total);
		rc = stop;
	}
	if (o->json) {
		json_t *doc = json_pack("{s:I,s:I,s:I,s:b}", "chunks",
		    (json_int_t)f->total, "created", (json_int_t)f->created,
		    "existing", (json_int_t)(f->done - f->created),
		    "complete", st == DB_OK && stop == 0);

		if (stop != 0)
			json_object_set_new(doc, "interrupted", json_true());
		if (f->fan_in != 0)
			json_object_set_new(doc, "then", json_pack("{s:s,s:s+,"
			    "s:b}", "type", o->then_type, "key", o->key_prefix,
			    ":then", "fired", fired));
		report_json(doc);
	} else {
		printf("%llu chunk jobs: %llu created, %llu existed%s\n",
		    (unsigned long long)f->done,
		    (unsigned long long)f->created,
		    (unsigned long long)(f->done - f->created),
		    stop != 0 ? " (interrupted)" : "");
		if (f->fan_in != 0)
			printf("then: a job of type %s, key %s:then, %s\n",
			    o->then_type, o->key_prefix, fired ? "enqueued "
			    "now: every chunk has finished" : "once every "
			    "chunk has finished");
	}
	fanin_close(&f->fi);
	free(f);
	return rc;
}

/* The keys of --keys-from, "PREFIX:LINE", sorted and each once: a fan-in
 * counts members, and a line given twice is one job. */
struct key_list {
	char **keys;
	size_t n;
};

static int
compare_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
free_keys(struct key_list *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->keys[i]);
	free(k->keys);
}

/* One key per line (blank lines skipped, a final \r dropped), each 1 to
 * QUEUE_KEY_MAX - len(PREFIX:) characters of UTF-8. */
static int
read_keys(struct ctx *c, struct key_list *k)
{
	const char *path = c->cli.keys_from, *prefix = c->cli.key_prefix;
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t cap = 0, room, len, i, out;
	char *line = NULL, err[256], what[64];
	ssize_t got;
	unsigned long lineno = 0;
	int rc = EX_OK;

	memset(k, 0, sizeof *k);
	if (f == NULL) {
		log_msg(&c->lg, LV_ERROR, "enqueue: open %s: %s", path,
		    strerror(errno));
		return EX_NOINPUT;
	}
	/* Characters, as the column counts them: the prefix is 1 to
	 * QUEUE_KEY_MAX - 2 characters (cmd_enqueue_check), so room is at
	 * least 1, however many bytes the prefix takes. */
	room = QUEUE_KEY_MAX - utf8_count(prefix, strlen(prefix)) - 1;
	while (rc == EX_OK && (got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		len = (size_t)got;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		snprintf(what, sizeof what, "keys-from line %lu", lineno);
		if (strlen(line) != len || cli_check_text(what, line, room, err,
		    sizeof err) != 0) {
			log_msg(&c->lg, LV_ERROR, "enqueue: %s", strlen(line) !=
			    len ? "a key holds a NUL byte" : err);
			rc = EX_DATAERR;
			break;
		}
		if (k->n >= FANOUT_MAX_CHUNKS) {
			log_msg(&c->lg, LV_ERROR, "enqueue: more than %lu keys",
			    FANOUT_MAX_CHUNKS);
			rc = EX_USAGE;
			break;
		}
		k->keys = xrealloc(k->keys, (k->n + 1) * sizeof *k->keys);
		k->keys[k->n] = xmalloc(strlen(prefix) + len + 2);
		sprintf(k->keys[k->n++], "%s:%s", prefix, line);
	}
	if (rc == EX_OK && ferror(f)) {
		log_msg(&c->lg, LV_ERROR, "enqueue: read %s: %s", path,
		    strerror(errno));
		rc = EX_NOINPUT;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	qsort(k->keys, k->n, sizeof *k->keys, compare_keys);
	for (i = out = 0; i < k->n; i++)
		if (out > 0 && strcmp(k->keys[out - 1], k->keys[i]) == 0)
			free(k->keys[i]);
		else
			k->keys[out++] = k->keys[i];
	k->n = out;
	return rc;
}

/* One job per key of --keys-from, each with the template as payload, and
 * with --then the fan-in over them. */
static int
enqueue_list(struct ctx *c)
{
	const struct cli *o = &c->cli;
	struct queue_when when = { o->at, o->delay };
	struct fanout *f;
	struct key_list k;
	char err[1024], *status = NULL;
	const char *payload = o->payload_template;
	enum db_status st = DB_OK;
	size_t i, from = 0;
	uint64_t id;
	int rc, made, fired = 0;

	if (payload != NULL && (rc = check_json(c, "--payload-template",
	    payload, strlen(payload), 1)) != EX_OK)
		return rc;
	if ((rc = read_keys(c, &k)) != EX_OK) {
		free_keys(&k);
		return rc;
	}
	for (i = 0; o->then_type != NULL && i < k.n; i++)
		if (strcmp(k.keys[i] + strlen(o->key_prefix), ":then") == 0) {
			log_msg(&c->lg, LV_ERROR, "enqueue: the key %s is the "
			    "--then job's", k.keys[i]);
			free_keys(&k);
			return EX_DATAERR;
		}
	f = xcalloc(1, sizeof *f);
	f->total = k.n;
	st = start_fan_in(c, f, err, sizeof err);
	for (i = 0; st == DB_OK && i < k.n; i++) {
		st = queue_enqueue(c->q, o->type, k.keys[i], payload,
		    payload != NULL ? strlen(payload) : 0, &when,
		    o->max_attempts, &id, &made, &status, err, sizeof err);
		free(status);
		status = NULL;
		f->created += (uint64_t)made;
		if (st == DB_OK && f->fan_in != 0 &&
		    (i + 1 - from == FANOUT_BATCH || i + 1 == k.n)) {
			st = fanin_add_members(&f->fi, f->fan_in,
			    (const char *const *)&k.keys[from], i + 1 - from,
			    err, sizeof err);
			from = i + 1;
		}
		if (st == DB_OK)
			f->done++;
	}
	if (st == DB_OK)
		st = end_fan_in(c, f, &fired, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		rc = cmd_exit_for(st);
	}
	if (o->json) {
		json_t *doc = json_pack("{s:I,s:I,s:I,s:b}", "jobs",
		    (json_int_t)f->total, "created", (json_int_t)f->created,
		    "existing", (json_int_t)(f->done - f->created),
		    "complete", st == DB_OK);

		if (f->fan_in != 0)
			json_object_set_new(doc, "then", json_pack("{s:s,s:s+,"
			    "s:b}", "type", o->then_type, "key", o->key_prefix,
			    ":then", "fired", fired));
		report_json(doc);
	} else {
		printf("%llu jobs: %llu created, %llu existed\n",
		    (unsigned long long)f->done,
		    (unsigned long long)f->created,
		    (unsigned long long)(f->done - f->created));
		if (f->fan_in != 0)
			printf("then: a job of type %s, key %s:then, %s\n",
			    o->then_type, o->key_prefix, fired ? "enqueued "
			    "now: every job has finished" : "once every job "
			    "has finished");
	}
	fanin_close(&f->fi);
	free(f);
	free_keys(&k);
	return rc;
}

/* A key prefix names every key of a fan-out, and with --then the fan-in
 * that status and metrics print: besides cli_check_text's rules it holds
 * no control character (C0, DEL, C1), which a terminal would act on. */
static int
check_key_prefix(const char *prefix, size_t max, char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)prefix;
	size_t i;

	if (cli_check_text("key-prefix", prefix, max, err, errlen) != 0)
		return -1;
	for (i = 0; p[i] != '\0'; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return errf(err, errlen, "--key-prefix: control "
			    "character \\x%02x at byte %zu", p[i], i + 1);
		if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			return errf(err, errlen, "--key-prefix: control "
			    "character \\u%04x at byte %zu", p[i + 1], i + 1);
	}
	return 0;
}

/* enqueue: one job (--key, a payload from one place) or a fan-out
 * (--key-prefix, --range, --chunk), never both. */
int
cmd_enqueue_check(const struct cli *cli, char *err, size_t errlen)
{
	int fan_out = cli->key_prefix != NULL || cli->has_range ||
	    cli->chunk != 0 || cli->payload_template != NULL ||
	    cli->keys_from != NULL;
	int from_stdin = cli->nargs == 1 && strcmp(cli->args[0], "-") == 0;

	if (cli->nargs > 1 || (cli->nargs == 1 && !from_stdin))
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[cli->nargs > 1 && from_stdin ? 1 : 0]);
	if (cli->type == NULL)
		return errf(err, errlen, "enqueue needs --type");
	if (cli->at != NULL && cli->has_delay)
		return errf(err, errlen, "--at and --delay exclude each other");
	if (cli->at != NULL && !cli_valid_datetime(cli->at))
		return errf(err, errlen, "--at: not \"YYYY-MM-DD HH:MM:SS\": "
		    "\"%s\"", cli->at);
	if (fan_out) {
		if (cli->key != NULL || cli->payload != NULL ||
		    cli->payload_file != NULL || from_stdin)
			return errf(err, errlen, "--key-prefix/--range/--chunk "
			    "exclude --key and --payload*");
		if (cli->again)
			return errf(err, errlen, "--again is for one job "
			    "(--key), not a fan-out");
		if (cli->then_type != NULL && cli_check_text("then",
		    cli->then_type, QUEUE_TYPE_MAX, err, errlen) != 0)
			return -1;
		if (cli->keys_from != NULL && (cli->has_range ||
		    cli->chunk != 0))
			return errf(err, errlen, "--keys-from excludes --range "
			    "and --chunk");
		if (cli->keys_from != NULL && cli->key_prefix == NULL)
			return errf(err, errlen, "--keys-from needs "
			    "--key-prefix");
		if (cli->keys_from != NULL)
			return check_key_prefix(cli->key_prefix,
			    QUEUE_KEY_MAX - 2, err, errlen);
		if (cli->key_prefix == NULL || !cli->has_range ||
		    cli->chunk == 0)
			return errf(err, errlen, "a fan-out needs --key-prefix, "
			    "--range and --chunk");
		/* The longest key is "P:<to>-<to>". */
		return check_key_prefix(cli->key_prefix, QUEUE_KEY_MAX - 42,
		    err, errlen);
	}
	if (cli->then_type != NULL)
		return errf(err, errlen, "--then is for a fan-out "
		    "(--key-prefix, --range, --chunk)");
	if (cli->key == NULL)
		return errf(err, errlen, "enqueue needs --key (or "
		    "--key-prefix, --range and --chunk)");
	if (cli_check_text("key", cli->key, QUEUE_KEY_MAX, err, errlen) != 0)
		return -1;
	if ((cli->payload != NULL) + (cli->payload_file != NULL) +
	    from_stdin > 1)
		return errf(err, errlen,
		    "--payload, --payload-file and - exclude each other");
	return 0;
}

int
cmd_enqueue(struct ctx *c)
{
	if (c->cli.keys_from != NULL)
		return enqueue_list(c);
	return c->cli.key_prefix != NULL ? enqueue_range(c) : enqueue_one(c);
}
