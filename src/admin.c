/*
 * admin.c - "jobrun retry", "cancel" and "purge": the changes operators
 * otherwise make with raw SQL, made safely.
 *
 * Each statement states the status it expects in its WHERE clause, so a
 * job that a runner claimed in the meantime is left alone rather than
 * yanked from under it, and the affected-rows count says what happened.
 * Bulk changes go in statements of at most BATCH rows, each its own
 * short transaction, so no lock is held long on a busy table, and a
 * signal stops them between two statements: what was done is done whole,
 * and said.  retry --failed leaves the jobs an operator cancelled alone
 * unless asked: a cancel is a decision, not a failure to repair.
 *
 * Each change leaves its row in the record of operators' changes
 * (audit.c), in the change's own transaction: the ids of one command in
 * one transaction, and a bulk change's row inserted with its first batch
 * and counted up with each later one, so that a signal or a crash
 * between two batches leaves a row that says what was committed.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "audit.h"
#include "command.h"
#include "fanin.h"
#include "queue_schema.h"
#include "report.h"
#include "runner.h"
#include "util.h"

/* Rows per statement of a bulk change. */
#define BATCH 1000

/* A job the statement did not change: it does not exist, has another
 * status, or (retry --force of a pending job due now, in the same second)
 * already was what the statement makes it - MariaDB counts changed rows,
 * not matched ones.  *done says whether it counts as done. */
static enum db_status
explain_skip(struct ctx *c, const char *verb, unsigned long id,
    const char *wanted, json_t *skipped, int *done, char *err,
    size_t errlen)
{
	char *status = NULL;
	enum db_status st;

	*done = 0;
	st = queue_job_status(c->q, id, &status, err, errlen);
	if (st != DB_OK)
		return st;
	if (status != NULL && c->cli.force &&
	    strcmp(status, QUEUE_PENDING) == 0) {
		*done = 1;
		free(status);
		return DB_OK;
	}
	if (status == NULL)
		log_msg(&c->lg, LV_WARN, "%s: no job %lu", verb, id);
	else
		log_msg(&c->lg, LV_WARN, "%s: job %lu is %s, not %s; left "
		    "alone", verb, id, status, wanted);
	json_array_append_new(skipped, json_pack("{s:I,s:s?}", "id",
	    (json_int_t)id, "status", status));
	free(status);
	return DB_OK;
}

/* A running job asked to stop: *asked says whether it was (a job
 * already asked counts too). */
static enum db_status
cancel_running(struct ctx *c, unsigned long id, int *asked, char *err,
    size_t errlen)
{
	enum db_status st;

	st = queue_cancel_running(c->q, id, asked, err, errlen);
	if (st != DB_OK || *asked)
		return st;
	return queue_cancel_asked(c->q, id, asked, err, errlen);
}

/* With --wait, until each asked job is no longer processing, within its
 * lock's length and the handler's grace: its runner writes the cancel
 * at its next lock extension, or recovery does once the lock ran out. */
static enum db_status
wait_stopped(struct ctx *c, json_t *asked, int *late, char *err,
    size_t errlen)
{
	int64_t until = now_ms() + ((int64_t)c->cfg.run.lock_seconds + 10) *
	    1000;
	struct timespec ts = { 0, 100 * 1000000L };
	enum db_status st = DB_OK;
	char *status = NULL;
	size_t i;

	*late = 0;
	for (i = 0; st == DB_OK && i < json_array_size(asked); i++) {
		uint64_t id = (uint64_t)json_integer_value(json_array_get(asked,
		    i));

		for (;;) {
			free(status);
			status = NULL;
			st = queue_job_status(c->q, id, &status, err, errlen);
			if (st != DB_OK || status == NULL ||
			    strcmp(status, QUEUE_PROCESSING) != 0)
				break;
			if (now_ms() > until || run_stop_requested()) {
				*late = 1;
				break;
			}
			nanosleep(&ts, NULL);
		}
		if (st == DB_OK && status != NULL)
			log_msg(&c->lg, LV_INFO, "cancel: job %llu is %s",
			    (unsigned long long)id, status);
	}
	free(status);
	return st;
}

/* What each_id did: the changed, the skipped, and the running jobs asked
 * to stop (with --wait, late when one still ran at the end); takes the
 * arrays. */
static void
print_ids(const struct ctx *c, const char *verb, json_t *changed,
    json_t *skipped, json_t *asked, int late)
{
	size_t i, nasked = json_array_size(asked);

	if (c->cli.json) {
		json_t *doc = json_pack("{s:I,s:o,s:o}", "count",
		    (json_int_t)json_array_size(changed), "ids", changed,
		    "skipped", skipped);

		if (nasked > 0 || strcmp(verb, "cancel") == 0)
			json_object_set_new(doc, "stop_requested", asked);
		else
			json_decref(asked);
		if (late)
			json_object_set_new(doc, "still_running", json_true());
		report_json(doc);
		return;
	}
	/* A cancel says both of what it did, as --json's count and
	 * stop_requested do and the audit row's sum does: a running job
	 * asked to stop is not (yet) a job cancelled. */
	if (strcmp(verb, "cancel") == 0)
		printf("cancel: %zu pending job(s) cancelled, %zu running "
		    "job(s) asked to stop\n", json_array_size(changed),
		    nasked);
	else
		printf("%s: %zu job(s)\n", verb, json_array_size(changed));
	for (i = 0; i < nasked; i++)
		printf("%s: job %lld is running: stop requested%s\n", verb,
		    (long long)json_integer_value(json_array_get(asked, i)),
		    c->cli.wait ? (late ? "; still running" : "; stopped") :
		    "; its runner stops it at its next lock extension");
	json_decref(changed);
	json_decref(skipped);
	json_decref(asked);
}

/* One command's ids: what each_id changes in one transaction. */
struct id_change {
	struct ctx *c;
	const char *verb, *wanted;
	int cancel;
	json_t *changed, *skipped, *asked;
};

/* Retry or cancel every id operand; *n counts the jobs changed and the
 * running ones asked to stop. */
static enum db_status
change_ids(void *arg, uint64_t *n, char *err, size_t errlen)
{
	struct id_change *x = arg;
	struct ctx *c = x->c;
	enum db_status st = DB_OK;
	unsigned long id;
	int i, done;

	for (i = 0; st == DB_OK && i < c->cli.nargs; i++) {
		parse_ulong(c->cli.args[i], 1, ULONG_MAX, &id);
		st = x->cancel ? queue_cancel_job(c->q, id, &done, err,
		    errlen) : queue_retry_job(c->q, id, c->cli.force, &done, err,
		    errlen);
		if (st == DB_OK && !done && x->cancel) {
			st = cancel_running(c, id, &done, err, errlen);
			if (st == DB_OK && done) {
				json_array_append_new(x->asked,
				    json_integer((json_int_t)id));
				continue;
			}
		}
		if (st == DB_OK && !done)
			st = explain_skip(c, x->verb, id, x->wanted, x->skipped,
			    &done, err, errlen);
		if (st == DB_OK && done)
			json_array_append_new(x->changed,
			    json_integer((json_int_t)id));
	}
	*n = json_array_size(x->changed) + json_array_size(x->asked);
	return st;
}

/* A run of change_ids rolled back: its lists start again. */
static void
undo_ids(void *arg)
{
	struct id_change *x = arg;

	json_array_clear(x->changed);
	json_array_clear(x->skipped);
	json_array_clear(x->asked);
}

/* Jobs cancelled are finished members of their fan-ins: settled now, as
 * a runner settles its jobs', so that a fan-in whose last members were
 * cancelled fires without waiting for a run (which would count them). */
static void
settle_fan_ins(struct ctx *c)
{
	struct fanin fi;
	char err[768];

	fanin_open(&fi, c->q, &c->lg);
	if (fanin_sweep(&fi, err, sizeof err) != DB_OK)
		log_msg(&c->lg, LV_WARN, "fan-ins of the jobs cancelled: %s "
		    "(the next run counts them)", err);
	fanin_close(&fi);
}

/* Retry (cancel false) or cancel every id operand; report changed and
 * skipped ones, and the running ones asked to stop. */
static int
each_id(struct ctx *c, const char *verb, int cancel, const char *wanted)
{
	struct id_change x = { c, verb, wanted, cancel, json_array(),
	    json_array(), json_array() };
	struct audit a;
	size_t nskipped;
	char err[1024];
	enum db_status st;
	int late = 0;

	st = audit_open(c, queue_name(c->q), &a, err, sizeof err);
	if (st == DB_OK)
		st = audit_change(&a, change_ids, undo_ids, &x, err,
		    sizeof err);
	audit_close(&a);
	if (st == DB_OK && cancel && json_array_size(x.changed) > 0)
		settle_fan_ins(c);
	if (st == DB_OK && c->cli.wait)
		st = wait_stopped(c, x.asked, &late, err, sizeof err);
	if (st != DB_OK)
		cmd_db_error(c, st, err);
	nskipped = json_array_size(x.skipped);
	print_ids(c, verb, x.changed, x.skipped, x.asked, late);
	if (st != DB_OK)
		return cmd_exit_for(st);
	if (late)
		return EX_TEMPFAIL;
	return nskipped == 0 ? EX_OK : EXIT_ATTENTION;
}

/* One batch of a bulk change, as audit_change runs it. */
struct batch_change {
	struct ctx *c;
	enum db_status (*batch)(struct queue *, const struct queue_scope *,
	    unsigned long, uint64_t *, char *, size_t);
	const struct queue_scope *scope;
};

static enum db_status
change_batch(void *arg, uint64_t *n, char *err, size_t errlen)
{
	struct batch_change *b = arg;

	return b->batch(b->c->q, b->scope, BATCH, n, err, errlen);
}

/* Repeat a bulk statement until a batch comes back short, or until a
 * signal asks to stop: *stop is then 128 + the signal.  The signal is
 * looked at before each statement, never during one, so every batch is
 * done whole or not at all; each batch is its own transaction, with the
 * command's audit row inserted (the first) or counted up (the others). */
static enum db_status
in_batches(struct ctx *c, enum db_status (*batch)(struct queue *,
    const struct queue_scope *, unsigned long, uint64_t *, char *, size_t),
    const struct queue_scope *scope, uint64_t *total, int *stop, char *err,
    size_t errlen)
{
	struct batch_change b = { c, batch, scope };
	enum db_status st;
	struct audit a;
	uint64_t n = BATCH;

	*total = 0;
	st = audit_open(c, queue_name(c->q), &a, err, errlen);
	while (st == DB_OK && n == BATCH &&
	    (*stop = run_stop_requested()) == 0) {
		st = audit_change(&a, change_batch, NULL, &b, err, errlen);
		n = a.changed - *total;
		*total = a.changed;
	}
	audit_close(&a);
	return st;
}

/* The warning of a bulk change a signal stopped. */
static void
say_stopped(const struct ctx *c, const char *verb, int stop)
{
	log_msg(&c->lg, LV_WARN, "%s: stopped on signal %d between two "
	    "batches; the same command does the rest", verb, stop - 128);
}

/* "count", "dry_run" and, when a signal stopped it, "interrupted". */
static json_t *
bulk_json(uint64_t n, int dry_run, int stop)
{
	json_t *doc = json_pack("{s:I,s:b}", "count", (json_int_t)n,
	    "dry_run", dry_run);

	if (stop != 0)
		json_object_set_new(doc, "interrupted", json_true());
	return doc;
}

static void
print_purged(const struct ctx *c, uint64_t n, int dry_run, int stop)
{
	if (c->cli.json)
		report_json(bulk_json(n, dry_run, stop));
	else
		printf("purge: %llu job(s)%s%s\n", (unsigned long long)n,
		    dry_run ? " would be deleted (dry run)" : "",
		    stop != 0 ? " (interrupted)" : "");
}

/* retry --failed: every failed job, or only those of one type, but those
 * an operator cancelled only with --include-cancelled.  The cancelled
 * ones are counted first: the batches that skip them never change them,
 * so the count is also what was left alone, and a dry run is the count
 * alone. */
static int
retry_failed(struct ctx *c)
{
	struct queue_scope scope = { .type = c->cli.type,
	    .include_cancelled = c->cli.include_cancelled };
	int all = c->cli.include_cancelled, stop = 0;
	uint64_t n = 0, left = 0, failed = 0, cancelled = 0;
	char err[1024];
	enum db_status st;

	st = queue_count_failed(c->q, &scope, &failed, &cancelled, err,
	    sizeof err);
	if (!all)
		left = cancelled;
	if (st == DB_OK && c->cli.dry_run)
		n = all ? failed : failed - cancelled;
	else if (st == DB_OK)
		st = in_batches(c, queue_requeue_failed, &scope, &n, &stop,
		    err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (stop != 0)
		say_stopped(c, "retry", stop);
	if (c->cli.json) {
		json_t *doc = bulk_json(n, c->cli.dry_run, stop);

		json_object_set_new(doc, "cancelled_left",
		    json_integer((json_int_t)left));
		report_json(doc);
		return stop != 0 ? stop : EX_OK;
	}
	printf("retry: %llu job(s)%s%s", (unsigned long long)n,
	    c->cli.dry_run ? " would be put back (dry run)" : "",
	    stop != 0 ? " (interrupted)" : "");
	if (left > 0)
		printf("; %llu cancelled by an operator left failed "
		    "(--include-cancelled retries them too)",
		    (unsigned long long)left);
	putchar('\n');
	return stop != 0 ? stop : EX_OK;
}

int
cmd_retry_check(const struct cli *cli, char *err, size_t errlen)
{
	if ((cli->nargs > 0) == cli->failed)
		return errf(err, errlen, "retry needs job ids or --failed");
	if (cli->type != NULL && !cli->failed)
		return errf(err, errlen, "--type goes with --failed");
	if (cli->force && cli->failed)
		return errf(err, errlen, "--force goes with job ids");
	if ((cli->include_cancelled || cli->dry_run) && !cli->failed)
		return errf(err, errlen, "%s goes with --failed",
		    cli->dry_run ? "--dry-run" : "--include-cancelled");
	return cli_check_ids(cli, err, errlen);
}

int
cmd_retry(struct ctx *c)
{
	if (!c->cli.failed)
		return each_id(c, "retry", 0, c->cli.force ?
		    QUEUE_FAILED " or " QUEUE_PENDING : QUEUE_FAILED);
	return retry_failed(c);
}

int
cmd_cancel_check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->nargs == 0)
		return errf(err, errlen, "cancel needs job ids");
	return cli_check_ids(cli, err, errlen);
}

int
cmd_cancel(struct ctx *c)
{
	return each_id(c, "cancel", 1, QUEUE_PENDING);
}

int
cmd_purge_check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->status == NULL ||
	    !cli_one_of(cli->status, queue_finished_statuses))
		return errf(err, errlen, "purge needs --status=" QUEUE_SUCCESS
		    " or --status=" QUEUE_FAILED);
	if (!cli->has_older_than)
		return errf(err, errlen, "purge needs --older-than");
	if (cli->nargs > 0)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[0]);
	return 0;
}

int
cmd_purge(struct ctx *c)
{
	struct queue_scope scope = { .type = c->cli.type,
	    .status = c->cli.status, .older_than = c->cli.older_than };
	uint64_t n = 0;
	char err[1024];
	enum db_status st;
	int stop = 0;

	if (c->cli.dry_run)
		st = queue_count_purgeable(c->q, &scope, &n, err, sizeof err);
	else
		st = in_batches(c, queue_purge, &scope, &n, &stop, err,
		    sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		/* A count that was not made is no count. */
		if (c->cli.dry_run)
			return cmd_exit_for(st);
	}
	if (stop != 0)
		say_stopped(c, "purge", stop);
	/* Batches already deleted stay deleted: say how many, even then. */
	print_purged(c, n, c->cli.dry_run, stop);
	return st != DB_OK ? cmd_exit_for(st) : stop != 0 ? stop : EX_OK;
}
