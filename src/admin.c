/*
 * admin.c - "jobrun retry", "cancel" and "purge": the changes operators
 * otherwise make with raw SQL, made safely.
 *
 * Each statement states the status it expects in its WHERE clause, so a
 * job that a runner claimed in the meantime is left alone rather than
 * yanked from under it, and the affected-rows count says what happened.
 * Bulk changes go in statements of at most QUEUE_BATCH rows, each its own
 * short transaction, so no lock is held long on a busy table, and a
 * signal stops them between two statements: what was done is done whole,
 * and said.  retry --failed leaves the jobs an operator cancelled alone
 * unless asked: a cancel is a decision, not a failure to repair.
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "command.h"
#include "report.h"
#include "runner.h"
#include "util.h"

struct job_state {
	char *status;
};

static int
on_job_status(void *arg, char **cols, unsigned ncols)
{
	struct job_state *s = arg;

	(void)ncols;
	s->status = cols[0] != NULL ? xstrdup(cols[0]) : NULL;
	return 1;
}

/* A job the statement did not change: it does not exist, has another
 * status, or (retry --force of a pending job due now, in the same second)
 * already was what the statement makes it - MariaDB counts changed rows,
 * not matched ones.  *done says whether it counts as done. */
static enum db_status
explain_skip(struct ctx *c, const char *verb, unsigned long id,
    const char *wanted, json_t *skipped, int *done, char *err,
    size_t errlen)
{
	struct job_state s = { NULL };
	struct db_arg arg = DB_NUM(id);
	enum db_status st;

	*done = 0;
	st = queue_select(&c->q, Q_JOB_STATUS, &arg, 1, 1, on_job_status, &s,
	    err, errlen);
	if (st != DB_OK)
		return st;
	if (s.status != NULL && c->cli.force &&
	    strcmp(s.status, "pending") == 0) {
		*done = 1;
		free(s.status);
		return DB_OK;
	}
	if (s.status == NULL)
		log_msg(&c->lg, LV_WARN, "%s: no job %lu", verb, id);
	else
		log_msg(&c->lg, LV_WARN, "%s: job %lu is %s, not %s; left "
		    "alone", verb, id, s.status, wanted);
	json_array_append_new(skipped, json_pack("{s:I,s:s?}", "id",
	    (json_int_t)id, "status", s.status));
	free(s.status);
	return DB_OK;
}

/* Apply which to every id operand; report changed and skipped ones. */
static int
each_id(struct ctx *c, const char *verb, enum queue_stmt which,
    const char *wanted)
{
	json_t *changed = json_array(), *skipped = json_array();
	size_t nchanged, nskipped;
	unsigned long id;
	uint64_t n;
	char err[1024];
	enum db_status st = DB_OK;
	int i, done;

	for (i = 0; st == DB_OK && i < c->cli.nargs; i++) {
		struct db_arg arg;

		parse_ulong(c->cli.args[i], 1, ULONG_MAX, &id);
		arg = DB_NUM(id);
		st = queue_write(&c->q, which, &arg, 1, &n, err, sizeof err);
		done = n == 1;
		if (st == DB_OK && !done)
			st = explain_skip(c, verb, id, wanted, skipped, &done,
			    err, sizeof err);
		if (st == DB_OK && done)
			json_array_append_new(changed,
			    json_integer((json_int_t)id));
	}
	if (st != DB_OK)
		cmd_db_error(c, st, err);
	nchanged = json_array_size(changed);
	nskipped = json_array_size(skipped);
	if (c->cli.json)
		report_json(json_pack("{s:I,s:o,s:o}", "count",
		    (json_int_t)nchanged, "ids", changed, "skipped", skipped));
	else {
		printf("%s: %zu job(s)\n", verb, nchanged);
		json_decref(changed);
		json_decref(skipped);
	}
	if (st != DB_OK)
		return cmd_exit_for(st);
	return nskipped == 0 ? EX_OK : EXIT_ATTENTION;
}

/* Repeat a bulk statement until a batch comes back short, or until a
 * signal asks to stop: *stop is then 128 + the signal.  The signal is
 * looked at before each statement, never during one, so every batch is
 * done whole or not at all. */
static enum db_status
in_batches(struct ctx *c, enum queue_stmt which, const struct db_arg *args,
    unsigned nargs, uint64_t *total, int *stop, char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	uint64_t n = QUEUE_BATCH;

	*total = 0;
	while (st == DB_OK && n == QUEUE_BATCH &&
	    (*stop = run_stop_requested()) == 0) {
		st = queue_write(&c->q, which, args, nargs, &n, err, errlen);
		*total += n;
	}
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

struct failed_counts {
	uint64_t failed, cancelled;
};

static int
on_failed_counts(void *arg, char **cols, unsigned ncols)
{
	struct failed_counts *fc = arg;
	unsigned long failed = 0, cancelled = 0;

	(void)ncols;
	if (cols[0] != NULL)
		parse_ulong(cols[0], 0, ULONG_MAX, &failed);
	if (cols[1] != NULL)
		parse_ulong(cols[1], 0, ULONG_MAX, &cancelled);
	fc->failed = failed;
	fc->cancelled = cancelled;
	return 1;
}

/* retry --failed: every failed job, or only those of one type, but those
 * an operator cancelled only with --include-cancelled.  The cancelled
 * ones are counted first: the batches that skip them never change them,
 * so the count is also what was left alone, and a dry run is the count
 * alone. */
static int
retry_failed(struct ctx *c)
{
	static const enum queue_stmt retry[2][2] = {
		{ Q_RETRY_UNCANCELLED, Q_RETRY_UNCANCELLED_TYPE },
		{ Q_RETRY_FAILED, Q_RETRY_FAILED_TYPE },
	};
	struct db_arg arg = DB_STR(c->cli.type);
	unsigned typed = c->cli.type != NULL;
	int all = c->cli.include_cancelled, stop = 0;
	struct failed_counts fc = { 0, 0 };
	uint64_t n = 0, left = 0;
	char err[1024];
	enum db_status st;

	st = queue_select(&c->q, typed ? Q_FAILED_COUNTS_TYPE :
	    Q_FAILED_COUNTS, &arg, typed, 2, on_failed_counts, &fc, err,
	    sizeof err);
	if (!all)
		left = fc.cancelled;
	if (st == DB_OK && c->cli.dry_run)
		n = all ? fc.failed : fc.failed - fc.cancelled;
	else if (st == DB_OK)
		st = in_batches(c, retry[all][typed], &arg, typed, &n, &stop,
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
cmd_retry(struct ctx *c)
{
	if (!c->cli.failed)
		return each_id(c, "retry", c->cli.force ? Q_RETRY_ID_FORCE :
		    Q_RETRY_ID, c->cli.force ? "failed or pending" : "failed");
	return retry_failed(c);
}

int
cmd_cancel(struct ctx *c)
{
	return each_id(c, "cancel", Q_CANCEL, "pending");
}

struct counted {
	uint64_t n;
};

static int
on_count(void *arg, char **cols, unsigned ncols)
{
	unsigned long v = 0;

	(void)ncols;
	if (cols[0] != NULL)
		parse_ulong(cols[0], 0, ULONG_MAX, &v);
	((struct counted *)arg)->n = v;
	return 1;
}

int
cmd_purge(struct ctx *c)
{
	struct db_arg args[] = { DB_STR(c->cli.status),
	    DB_NUM(c->cli.older_than), DB_NUM(c->cli.older_than),
	    DB_STR(c->cli.type) };
	unsigned nargs = c->cli.type != NULL ? 4 : 3;
	struct counted count = { 0 };
	char err[1024];
	enum db_status st;
	int stop = 0;

	if (c->cli.dry_run)
		st = queue_select(&c->q, c->cli.type != NULL ?
		    Q_PURGE_COUNT_TYPE : Q_PURGE_COUNT, args, nargs, 1,
		    on_count, &count, err, sizeof err);
	else
		st = in_batches(c, c->cli.type != NULL ? Q_PURGE_TYPE :
		    Q_PURGE, args, nargs, &count.n, &stop, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		/* A count that was not made is no count. */
		if (c->cli.dry_run)
			return cmd_exit_for(st);
	}
	if (stop != 0)
		say_stopped(c, "purge", stop);
	/* Batches already deleted stay deleted: say how many, even then. */
	print_purged(c, count.n, c->cli.dry_run, stop);
	return st != DB_OK ? cmd_exit_for(st) : stop != 0 ? stop : EX_OK;
}
