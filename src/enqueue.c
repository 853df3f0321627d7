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
 * what was written before it.  --again and the fan-outs leave a row in
 * the record of operators' changes (audit.c), in their transactions.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "audit.h"
#include "command.h"
#include "fanin.h"
#include "queue_schema.h"
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
	int running = outcome == QUEUE_LEFT &&
	    strcmp(status, QUEUE_PROCESSING) == 0;
	int pending = outcome == QUEUE_LEFT &&
	    strcmp(status, QUEUE_PENDING) == 0;
	char *shown;

	if (c->cli.json)
		report_json(json_pack("{s:I,s:s,s:s}", "id", (json_int_t)id,
		    "outcome", names[outcome], "status", status));
	else if (outcome == QUEUE_CREATED)
		printf("job %llu created\n", (unsigned long long)id);
	else if (outcome == QUEUE_REARMED)
		printf("job %llu enqueued again (" QUEUE_PENDING
		    ", attempts 0)\n", (unsigned long long)id);
	else if (pending)
		printf("job %llu is " QUEUE_PENDING " already, left as "
		    "it is\n", (unsigned long long)id);
	else if (running)
		printf("job %llu is running (status " QUEUE_PROCESSING
		    "), not touched\n", (unsigned long long)id);
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

/* When the new jobs are due, their deadline (a DATETIME, or else a
 * DURATION from now: cmd_enqueue_check let only those through), and
 * their --priority. */
static struct queue_when
when_of(const struct cli *cli)
{
	struct queue_when w = { cli->at, cli->delay, 0, NULL, 0, 0, 0 };

	/* cmd_enqueue_check let only a number through. */
	if (cli->priority != NULL)
		w.has_priority = parse_long(cli->priority, PRIORITY_LOW,
		    PRIORITY_HIGH, &w.priority) == 0;
	if (cli->deadline == NULL)
		return w;
	w.has_deadline = 1;
	if (cli_valid_datetime(cli->deadline))
		w.deadline_at = cli->deadline;
	else
		cli_duration(cli->deadline, &w.deadline_in);
	return w;
}

/* --again, as audit_change runs it. */
struct again {
	struct ctx *c;
	const char *payload;
	size_t len;
	const struct queue_when *when;
	uint64_t id;
	enum queue_again outcome;
	char *status;
};

static enum db_status
change_again(void *arg, uint64_t *n, char *err, size_t errlen)
{
	struct again *x = arg;
	enum db_status st;

	free(x->status);
	x->status = NULL;
	st = queue_enqueue_again(x->c->q, x->c->cli.type, x->c->cli.key,
	    x->payload, x->len, x->when, x->c->cli.max_attempts, &x->id,
	    &x->outcome, &x->status, err, errlen);
	*n = st == DB_OK && x->outcome != QUEUE_LEFT;
	return st;
}

static int
enqueue_again(struct ctx *c, const char *payload, size_t len,
    const struct queue_when *when)
{
	struct again x = { c, payload, len, when, 0, QUEUE_LEFT, NULL };
	char err[1024];
	enum db_status st;
	struct audit a;
	int rc;

	st = audit_open(c, queue_name(c->q), &a, err, sizeof err);
	if (st == DB_OK)
		st = audit_change(&a, change_again, NULL, &x, err, sizeof err);
	audit_close(&a);
	if (st != DB_OK) {
		free(x.status);
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	rc = report_again(c, x.id, x.outcome, x.status != NULL ? x.status :
	    "NULL");
	free(x.status);
	return rc;
}

static int
enqueue_one(struct ctx *c)
{
	struct queue_when when = when_of(&c->cli);
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
	struct fanin_state state;	/* as the fan-in was found */
	uint64_t members;	/* the jobs it waits for, once all are added */
	uint64_t total, created, done;
	int progress;		/* stderr is a terminal */
	struct audit audit;	/* its row: created counts the jobs */
};

/* A batch of a fan-out (keys NULL) or of --keys-from's keys, as
 * audit_change runs it (one transaction with its row): *n created. */
struct fan_change {
	struct ctx *c;
	struct fanout *f;
	char *const *keys;
	size_t nkeys;
};

static enum db_status
change_fan(void *arg, uint64_t *n, char *err, size_t errlen)
{
	struct fan_change *x = arg;
	const struct cli *o = &x->c->cli;
	const char *t = o->payload_template;
	struct queue_when when = when_of(o);
	char *status = NULL;
	enum db_status st = DB_OK;
	uint64_t id;
	size_t i;
	int made;

	if (x->keys == NULL)
		return queue_enqueue_batch(x->c->q, o->type, t, x->f->rows,
		    x->f->n, &when, o->max_attempts, n, err, errlen);
	*n = 0;
	for (i = 0; st == DB_OK && i < x->nkeys; i++) {
		made = 0, status = NULL;
		st = queue_enqueue(x->c->q, o->type, x->keys[i], t, t != NULL ?
		    strlen(t) : 0, &when, o->max_attempts, &id, &made,
		    &status, err, errlen);
		free(status);
		*n += (uint64_t)made;
	}
	return st;
}

static void
free_rows(struct fanout *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free((char *)f->rows[i].key);
	f->n = 0;
}

static int
compare_ids(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
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

	fanin_open(&f->fi, c->q, &c->lg);
	if (c->cli.then_type == NULL)
		return DB_OK;
	snprintf(key, sizeof key, "%s:then", c->cli.key_prefix);
	doc = json_pack("{s:s}", "key_prefix", c->cli.key_prefix);
	payload = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	st = fanin_create(&f->fi, c->cli.then_type, key, payload, f->total,
	    &f->fan_in, &f->state, err, errlen);
	free(payload);
	return st;
}

/* A fan-in an earlier run made is this run's only if this run is the same
 * fan-out: the same --then type (byte for byte, as runners match types),
 * every member among this run's keys, and as many keys as the fan-in
 * waits for jobs (or, when fewer, each key one of its members' jobs).
 * Anything else is refused before a job is written: another --range or
 * --chunk mixed into the fan-in would fire its callback while chunks are
 * pending, or never, and the callback would keep the first run's type.
 * This is the first two; named[0..nnamed-1] are the members this run's
 * keys name (fanin_members_named). */
static int
same_fan_out(struct ctx *c, struct fanout *f, uint64_t *named, size_t nnamed)
{
	const struct cli *o = &c->cli;
	size_t i, n;

	if (strcmp(f->state.then_type, o->then_type) != 0) {
		log_msg(&c->lg, LV_ERROR, "enqueue: the fan-in %s:then exists "
		    "with --then=%s, not %s: run the same fan-out again, or "
		    "use another --key-prefix", o->key_prefix,
		    f->state.then_type, o->then_type);
		return EX_DATAERR;
	}
	if (nnamed > 1)	/* named is NULL when it names none */
		qsort(named, nnamed, sizeof *named, compare_ids);
	for (i = n = 0; i < nnamed; i++)
		if (i == 0 || named[i] != named[i - 1])
			n++;
	if (n < f->state.members) {
		log_msg(&c->lg, LV_ERROR, "enqueue: the fan-in %s:then has %llu "
		    "members and this run's keys name %llu of them: another "
		    "fan-out (another --range, --chunk or --keys-from) than "
		    "the one that made it; run that one again, or use another "
		    "--key-prefix", o->key_prefix,
		    (unsigned long long)f->state.members,
		    (unsigned long long)n);
		return EX_DATAERR;
	}
	return EX_OK;
}

/* The third: this run's keys would change what the fan-in waits for. */
static int
other_count(struct ctx *c, struct fanout *f)
{
	log_msg(&c->lg, LV_ERROR, "enqueue: the fan-in %s:then waits for %llu "
	    "jobs and this run names %llu: another fan-out (another --range, "
	    "--chunk or --keys-from) than the one that made it; run that one "
	    "again, or use another --key-prefix", c->cli.key_prefix,
	    (unsigned long long)f->state.total, (unsigned long long)f->total);
	return EX_DATAERR;
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
	return fanin_finish(&f->fi, f->fan_in, fired, &f->members, err,
	    errlen);
}

/* The "then" line: the fan-in waits for the jobs the table holds, which
 * are fewer than the keys when it takes some keys for the same. */
static void
print_then(const struct ctx *c, const struct fanout *f, int fired,
    const char *what)
{
	const struct cli *o = &c->cli;
	/* A type may hold any bytes (--key-prefix refuses controls). */
	char *type = utf8_escape_dup(o->then_type, 0);
	char *prefix = utf8_escape_dup(o->key_prefix, 0);

	printf("then: a job of type %s, key %s:then, ", type, prefix);
	free(type);
	free(prefix);
	if (fired)
		printf("enqueued now: every %s has finished", what);
	else if (f->state.fired)
		printf("enqueued already: every %s had finished", what);
	else
		printf("once every %s has finished", what);
	if (f->members != 0 && f->members < f->done)
		printf(" (%llu %ss: the table takes some keys for the same)",
		    (unsigned long long)f->members, what);
	putchar('\n');
}

static json_t *
then_json(const struct ctx *c, const struct fanout *f, int fired)
{
	return json_pack("{s:s,s:s+,s:b,s:I}", "type", c->cli.then_type,
	    "key", c->cli.key_prefix, ":then", "fired", fired, "jobs",
	    (json_int_t)f->members);
}

static enum db_status
flush_rows(struct ctx *c, struct fanout *f, char *err, size_t errlen)
{
	struct fan_change x = { c, f, NULL, 0 };
	enum db_status st;

	st = audit_change(&f->audit, change_fan, NULL, &x, err, errlen);
	f->created = f->audit.changed;
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

/* The chunk from from, its key into key; returns its last number. */
static unsigned long
chunk_key(const struct cli *o, unsigned long from, char *key, size_t size)
{
	unsigned long to = o->range_to - from < o->chunk - 1 ? o->range_to :
	    from + o->chunk - 1;

	snprintf(key, size, "%s:%lu-%lu", o->key_prefix, from, to);
	return to;
}

/* A fan-in that exists: the chunks must be its members, as
 * same_fan_out says, and as many. */
static int
range_again(struct ctx *c, struct fanout *f)
{
	const struct cli *o = &c->cli;
	char err[1024], key[QUEUE_KEY_MAX * 4 + 1];
	const char *keys[FANOUT_BATCH];
	uint64_t *named = NULL;
	size_t n = 0, nnamed = 0, i;
	unsigned long from, to = 0;
	enum db_status st = DB_OK;
	int rc;

	for (from = o->range_from; st == DB_OK; from += o->chunk) {
		to = chunk_key(o, from, key, sizeof key);
		keys[n++] = xstrdup(key);
		if (n == FANOUT_BATCH || to == o->range_to) {
			st = fanin_members_named(&f->fi, f->fan_in, keys, n,
			    &named, &nnamed, err, sizeof err);
			for (i = 0; i < n; i++)
				free((char *)keys[i]);
			n = 0;
		}
		if (to == o->range_to)
			break;
	}
	if (st != DB_OK) {
		free(named);
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	rc = same_fan_out(c, f, named, nnamed);
	free(named);
	/* Chunks are distinct jobs. */
	if (rc == EX_OK && f->total != f->state.total)
		rc = other_count(c, f);
	return rc;
}

/* What a fan-out did, on stdout: its jobs (of what: "chunk" or "job"),
 * how many it created and found, whether it is complete or was
 * interrupted, and its fan-in. */
static void
report_fanout(struct ctx *c, struct fanout *f, int complete,
    int interrupted, int fired, const char *what)
{
	json_t *doc;

	if (c->cli.json) {
		doc = json_pack("{s:I,s:I,s:I,s:b}", strcmp(what, "chunk") ==
		    0 ? "chunks" : "jobs", (json_int_t)f->total, "created",
		    (json_int_t)f->created, "existing",
		    (json_int_t)(f->done - f->created), "complete", complete);
		if (interrupted)
			json_object_set_new(doc, "interrupted", json_true());
		if (f->fan_in != 0)
			json_object_set_new(doc, "then", then_json(c, f,
			    fired));
		report_json(doc);
		return;
	}
	printf("%llu %sjobs: %llu created, %llu existed%s\n",
	    (unsigned long long)f->done, strcmp(what, "chunk") == 0 ?
	    "chunk " : "", (unsigned long long)f->created,
	    (unsigned long long)(f->done - f->created),
	    interrupted ? " (interrupted)" : "");
	if (f->fan_in != 0)
		print_then(c, f, fired, what);
}

static void
fanout_free(struct fanout *f)
{
	fanin_state_free(&f->state);
	fanin_close(&f->fi);
	audit_close(&f->audit);
	free(f);
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
	st = audit_open(c, queue_name(c->q), &f->audit, err, sizeof err);
	if (st == DB_OK)
		st = start_fan_in(c, f, err, sizeof err);
	if (st == DB_OK && f->state.existed) {
		if ((rc = range_again(c, f)) != EX_OK) {
			fanout_free(f);
			return rc;
		}
	}
	for (from = o->range_from; st == DB_OK; from += o->chunk) {
		unsigned long to;

		/* Before each batch: a signal never cuts one. */
		if (f->n == 0 && (stop = run_stop_requested()) != 0)
			break;
		to = chunk_key(o, from, key, sizeof key);
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
	report_fanout(c, f, st == DB_OK && stop == 0, stop != 0, fired,
	    "chunk");
	fanout_free(f);
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

/* With --then, no key may be the callback's, PREFIX:then, as the table
 * compares keys: "THEN", "then " or "thén" would make a member the
 * callback's job, and the fan-in would fire on it and enqueue nothing. */
static int
check_then_key(struct ctx *c, const struct key_list *k)
{
	char then[QUEUE_KEY_MAX * 4 + 8], err[1024];
	enum db_status st;
	size_t i, n, at = 0;

	snprintf(then, sizeof then, "%s:then", c->cli.key_prefix);
	for (i = 0; i < k->n && at == 0; i += n) {
		n = k->n - i < FANOUT_BATCH ? k->n - i : FANOUT_BATCH;
		st = queue_key_among(c->q, then, (const char *const *)
		    &k->keys[i], n, &at, err, sizeof err);
		if (st != DB_OK) {
			cmd_db_error(c, st, err);
			return cmd_exit_for(st);
		}
		if (at != 0) {
			log_msg(&c->lg, LV_ERROR, "enqueue: the key %s is the "
			    "--then job's, %s, as the table compares keys",
			    k->keys[i + at - 1], then);
			return EX_DATAERR;
		}
	}
	return EX_OK;
}

/* A fan-in that exists: the keys must name its members, as
 * same_fan_out says, and be as many or each name one. */
static int
list_again(struct ctx *c, struct fanout *f, const struct key_list *k)
{
	uint64_t *named = NULL;
	size_t nnamed = 0, i, n, before;
	enum db_status st = DB_OK;
	char err[1024];
	int rc = EX_OK;

	for (i = 0; st == DB_OK && i < k->n; i += n) {
		n = k->n - i < FANOUT_BATCH ? k->n - i : FANOUT_BATCH;
		st = fanin_members_named(&f->fi, f->fan_in,
		    (const char *const *)&k->keys[i], n, &named, &nnamed, err,
		    sizeof err);
	}
	if (st == DB_OK)
		rc = same_fan_out(c, f, named, nnamed);
	/* Other than the total: keys the table takes for one job (the
	 * fan-in counts that job once) are each a member's; asked one by
	 * one. */
	for (i = 0; st == DB_OK && rc == EX_OK && k->n != f->state.total &&
	    i < k->n; i++) {
		before = nnamed;
		st = fanin_members_named(&f->fi, f->fan_in,
		    (const char *const *)&k->keys[i], 1, &named, &nnamed, err,
		    sizeof err);
		if (st == DB_OK && nnamed == before)
			rc = other_count(c, f);
	}
	free(named);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	return rc;
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
	if (k->n > 1)
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
	struct fan_change x = { c, NULL, NULL, 0 };
	struct fanout *f;
	struct key_list k;
	char err[1024];
	const char *payload = o->payload_template;
	enum db_status st = DB_OK;
	size_t from;
	int rc, fired = 0;

	if (payload != NULL && (rc = check_json(c, "--payload-template",
	    payload, strlen(payload), 1)) != EX_OK)
		return rc;
	if ((rc = read_keys(c, &k)) != EX_OK) {
		free_keys(&k);
		return rc;
	}
	if (o->then_type != NULL && (rc = check_then_key(c, &k)) != EX_OK) {
		free_keys(&k);
		return rc;
	}
	f = xcalloc(1, sizeof *f);
	x.f = f;
	f->total = k.n;
	st = audit_open(c, queue_name(c->q), &f->audit, err, sizeof err);
	if (st == DB_OK)
		st = start_fan_in(c, f, err, sizeof err);
	if (st == DB_OK && f->state.existed) {
		if ((rc = list_again(c, f, &k)) != EX_OK) {
			fanout_free(f);
			free_keys(&k);
			return rc;
		}
	}
	/* With the audit table, a transaction per FANOUT_BATCH keys. */
	for (from = 0; st == DB_OK && from < k.n; from += x.nkeys) {
		x.keys = &k.keys[from];
		x.nkeys = k.n - from < FANOUT_BATCH ? k.n - from :
		    FANOUT_BATCH;
		st = audit_change(&f->audit, change_fan, NULL, &x, err,
		    sizeof err);
		f->created = f->audit.changed;
		if (st == DB_OK && f->fan_in != 0)
			st = fanin_add_members(&f->fi, f->fan_in,
			    (const char *const *)x.keys, x.nkeys, err,
			    sizeof err);
		f->done += st == DB_OK ? x.nkeys : 0;
	}
	if (st == DB_OK)
		st = end_fan_in(c, f, &fired, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		rc = cmd_exit_for(st);
	}
	report_fanout(c, f, st == DB_OK, 0, fired, "job");
	fanout_free(f);
	free_keys(&k);
	return rc;
}

/* A type no section here names is still enqueued (another host's
 * configuration may run it), with a warning once it is: "order_synk" is
 * more often a typo.  Claims match types byte for byte, so this does
 * too. */
static void
warn_unserved(struct ctx *c, const char *type)
{
	struct cfg_near near;
	char hint[200];
	size_t i;

	if (type == NULL || cfg_find_type(&c->cfg, type) != NULL)
		return;
	cfg_near_init(&near, type);
	for (i = 0; i < c->cfg.ntypes; i++)
		cfg_near_offer(&near, c->cfg.types[i].name);
	log_msg(&c->lg, LV_WARN, "enqueue: no [type.%s] section in %s: no run "
	    "with this configuration takes its jobs%s", type, c->cfg.path,
	    cfg_near_hint(&near, "[type.", "]", hint, sizeof hint));
}

int
cmd_enqueue(struct ctx *c)
{
	int rc;

	if (c->cli.keys_from != NULL)
		rc = enqueue_list(c);
	else
		rc = c->cli.key_prefix != NULL ? enqueue_range(c) :
		    enqueue_one(c);
	if (rc == EX_OK) {
		warn_unserved(c, c->cli.type);
		warn_unserved(c, c->cli.then_type);
	}
	return rc;
}
