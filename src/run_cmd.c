/*
 * run_cmd.c - "jobrun run": check the types, take the --single lock, run
 * the cycle (runner.c), and report it: exit status, log, --json and the
 * metrics file.
 */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "command.h"
#include "latency.h"
#include "metrics.h"
#include "report.h"
#include "runner.h"
#include "util.h"

/* Jobs claimed with no outcome counted: the error came while they were
 * in hand, and they stay processing under this run's locks. */
static uint64_t
jobs_in_hand(const struct run_stats *s)
{
	uint64_t done = s->succeeded + s->retried + s->failed + s->lost +
	    s->snoozed;

	return s->claimed > done ? s->claimed - done : 0;
}

/* The types this run may claim (--type's, or every configured one),
 * their secrets read: a type whose secrets cannot be read (a header_env
 * variable unset under cron) is left out, said, and counted in
 * *unready, so that it stops that type only.  -1 when none is left. */
static int
prepare_types(const struct ctx *c, const char *only, const char **types,
    size_t *ntypes, size_t *unready)
{
	char err[1024];
	size_t i;

	*ntypes = *unready = 0;
	for (i = 0; i < c->cfg.ntypes; i++) {
		if (only != NULL && strcmp(only, c->cfg.types[i].name) != 0)
			continue;
		if (cmd_prepare_type(c, &c->cfg.types[i], err,
		    sizeof err) == 0)
			types[(*ntypes)++] = c->cfg.types[i].name;
		else {
			log_msg(&c->lg, LV_ERROR, "%s; its jobs wait", err);
			(*unready)++;
		}
	}
	return *ntypes > 0 ? 0 : -1;
}

/* A run's database error as its exit status.  A value the server
 * refuses in a run is jobrun's own (a last_error, a lock), so what is at
 * fault is the table or the server's settings (a column too narrow, a
 * CHECK constraint, max_allowed_packet): a configuration problem, not a
 * bad operand as for enqueue. */
static int
run_exit_for(enum db_status st)
{
	return st == DB_BAD_INPUT ? EX_CONFIG : cmd_exit_for(st);
}

/* The run's exit status: a type left out by prepare_types makes an
 * otherwise clean run (0, or 1 for jobs to look at) a configuration
 * problem, 78, so that cron mails it at every run until it is fixed. */
static int
run_status(const struct run_stats *stats, enum db_status st, size_t unready)
{
	int status = run_interrupted() ? run_interrupted() : st != DB_OK ?
	    run_exit_for(st) : stats->retried + stats->failed + stats->lost >
	    0 ? EXIT_ATTENTION : EX_OK;

	if (unready > 0 && (status == EX_OK || status == EXIT_ATTENTION))
		return EX_CONFIG;
	return status;
}

/* --single: the server-side named lock "jobrun:DB.TABLE[:TYPE]".  Another
 * runner holding it is not an error: this run has nothing to do.  Returns
 * an exit status to stop with, or -1 to go on. */
static int
take_single_lock(struct ctx *c, const char *type, char *name, size_t namelen)
{
	char err[1024];
	enum db_status st;
	int held = 0;

	st = queue_take_single(c->q, type, name, namelen, &held, err,
	    sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (held)
		return -1;
	log_msg(&c->lg, LV_INFO, "another runner holds %s; nothing to do",
	    name);
	if (c->cli.json)
		report_json(json_pack("{s:b,s:b}", "ok", 1, "skipped", 1));
	return EX_OK;
}

/* --metrics-file: the run's figures, and the backlog when the database
 * still answers.  A failure to write them is reported, not fatal: the
 * jobs were handled. */
static void
write_metrics(struct ctx *c, const struct run_stats *stats, int status,
    int db_ok, struct flow *flow)
{
	const char *path = c->set.metrics_file;
	struct queue_backlog backlog = { NULL, 0 };
	struct sched_view *sched = NULL;
	struct metrics_extra extra = { NULL, 0, NULL, 0, 0, NULL };
	struct fanin fi;
	struct flow_states states = { NULL, 0 };
	const char **known;
	char err[1024];

	if (path == NULL)
		return;
	fanin_open(&fi, c->q, &c->lg);
	if (db_ok && fanin_list(&fi, (struct fanin_view **)&extra.fanin,
	    &extra.nfanin, err, sizeof err) != DB_OK)
		log_msg(&c->lg, LV_WARN, "metrics without the fan-ins: %s",
		    err);
	extra.fanin_active = fi.active;
	if (db_ok && c->cfg.nschedules > 0) {
		sched = xcalloc(c->cfg.nschedules, sizeof *sched);
		if (sched_view(&c->cfg, c->q, sched, err,
		    sizeof err) != DB_OK) {
			log_msg(&c->lg, LV_WARN, "metrics without the "
			    "schedules: %s", err);
			free(sched);
			sched = NULL;
		}
	}
	known = cmd_type_names(c);
	/* The backlog of every type, whatever this run was limited to. */
	if (db_ok && queue_backlog(c->q, known, c->cfg.ntypes, NULL, 0,
	    &backlog, err, sizeof err) != DB_OK) {
		log_msg(&c->lg, LV_WARN, "metrics without the backlog: %s",
		    err);
		db_ok = 0;
	}
	/* flow control hook: the state of caps, rates and pauses */
	if (db_ok && flow != NULL && flow_read(flow, NULL, &states, err,
	    sizeof err) != DB_OK) {
		log_msg(&c->lg, LV_WARN, "metrics without flow control: %s",
		    err);
		flow = NULL;
	}
	/* Not fatal (the jobs were handled) but never silent, not even
	 * under -q: stale metrics are how monitoring would notice. */
	extra.sched = sched;
	extra.nsched = sched != NULL ? c->cfg.nschedules : 0;
	extra.flow = db_ok && flow != NULL ? &states : NULL;
	if (metrics_write(path, stats, status, db_ok ? &backlog : NULL,
	    &extra, err, sizeof err) != 0)
		log_msg(&c->lg, LV_ERROR, "%s", err);
	free(sched);
	fanin_list_free((struct fanin_view *)extra.fanin, extra.nfanin);
	fanin_close(&fi);
	queue_backlog_free(&backlog);
	flow_states_free(&states);
	free(known);
}

/* A run that a database error ended says what it could not write. */
static void
say_not_recorded(const struct ctx *c, const struct run_stats *stats)
{
	uint64_t n = jobs_in_hand(stats);

	if (n == 1)
		log_msg(&c->lg, LV_ERROR, "the outcome of the job in hand was "
		    "not recorded: it stays processing until its lock "
		    "expires and a later run recovers it (a server that "
		    "stopped answering may still apply a mark it had "
		    "received)");
	else if (n > 1)
		log_msg(&c->lg, LV_ERROR, "the outcomes of the %llu jobs in "
		    "hand were not recorded: they stay processing until "
		    "their locks expire and a later run recovers them (a "
		    "server that stopped answering may still apply a mark "
		    "it had received)", (unsigned long long)n);
}

/* What the connection went through, for -v and the log. */
static void
say_counters(const struct ctx *c)
{
	struct queue_counters counters;

	queue_counters(c->q, &counters);
	if (counters.reconnects > 0)
		log_msg(&c->lg, LV_INFO, "connection to the database lost and "
		    "made again %llu time(s)",
		    (unsigned long long)counters.reconnects);
	if (counters.conflicts > 0)
		log_msg(&c->lg, LV_INFO, "%llu statement(s) run again after a "
		    "deadlock or lock wait timeout",
		    (unsigned long long)counters.conflicts);
}

/* The run's start latencies into the table status and report read
 * (latency.c); a failure costs the figures, not the run's status. */
static void
record_latency(struct ctx *c, const struct run_stats *stats)
{
	char err[1024];

	if (stats->claimed > 0 &&
	    latency_record(c->q, stats, err, sizeof err) != DB_OK)
		log_msg(&c->lg, LV_WARN, "%s", err);
}

/* The types of this run (prepare_types) and what stops it before it
 * starts: -1 to go on, else an exit status. */
static int
run_types(const struct ctx *c, const char **types, size_t *ntypes,
    size_t *unready)
{
	const char *only = c->cli.type;

	if (only != NULL && cfg_find_type(&c->cfg, only) == NULL) {
		log_msg(&c->lg, LV_ERROR, "--type=%s: %s has no [type.%s] "
		    "section", only, c->cfg.path, only);
		return EX_CONFIG;
	}
	if (c->cfg.ntypes == 0) {
		log_msg(&c->lg, LV_ERROR, "%s: no [type.NAME] section: no "
		    "job type to run", c->cfg.path);
		return EX_CONFIG;
	}
	return prepare_types(c, only, types, ntypes, unready) != 0 ?
	    EX_CONFIG : -1;
}

int
cmd_run(struct ctx *c)
{
	const char **types = xcalloc(c->cfg.ntypes + 1, sizeof *types);
	struct run_opts opts = {
		.types = types,
		.batch_size = c->set.batch_size,
		.max_seconds = c->set.max_seconds,
		.jobs = c->set.jobs,
		.wait = c->set.wait,
	};
	char single[257];
	struct queue_counters counters;
	struct run_stats stats;
	char err[1024];
	enum db_status st;
	size_t unready;
	int status;

	status = run_types(c, types, &opts.ntypes, &unready);
	if (status < 0 && c->set.single) {
		status = take_single_lock(c, c->cli.type, single,
		    sizeof single);
		opts.single_lock = single;
	}
	if (status >= 0) {
		free(types);
		return status;
	}
	/* flow control hook: the control table, when there is one */
	st = flow_open(c->q, &c->cfg, NULL, &opts.flow, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		free(types);
		return cmd_exit_for(st);
	}
	st = run_cycle(&c->cfg, &c->db, c->q, &opts, &c->lg, &stats, err,
	    sizeof err);
	queue_counters(c->q, &counters);
	stats.by_priority = counters.by_priority;
	/* flow control hook: what a full cap's recovery gave back counts */
	if (flow_recovered(opts.flow) > 0) {
		stats.recovered += flow_recovered(opts.flow);
		log_msg(&c->lg, LV_WARN, "recovered %llu job(s) whose runner's "
		    "lock expired while a concurrency cap was full",
		    (unsigned long long)flow_recovered(opts.flow));
	}
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		say_not_recorded(c, &stats);
	}
	/* An operator who stopped the run hears so, whatever the database
	 * said meanwhile (a second signal gives up on a server that does
	 * not answer). */
	status = run_status(&stats, st, unready);
	if (st == DB_OK && !run_interrupted())
		record_latency(c, &stats);
	say_counters(c);
	if (c->cli.verbose)
		report_run_text(&c->lg, &stats);
	if (c->cli.json)
		report_run_json(stdout, &stats, status == EX_OK,
		    st != DB_OK ? err : NULL);
	write_metrics(c, &stats, status, st == DB_OK, opts.flow);
	flow_close(opts.flow);
	run_stats_free(&stats);
	free(types);
	return status;
}
