/*
 * main.c - jobrun: run due jobs from a MariaDB/MySQL table.
 *
 * main is the recipe: parse the command line, load the configuration,
 * connect, run the command, report, exit with a status that tells cron and
 * scripts how it went.  Commands share that set-up through one table.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "queue.h"
#include "report.h"
#include "runner.h"
#include "util.h"

#define EXIT_JOB_PROBLEM 1	/* a job was retried, failed or lost */
#define PAYLOAD_MAX (64 * 1024 * 1024)

/* What every command gets, set up once. */
struct ctx {
	struct cli cli;
	struct cfg cfg;
	struct db db;
	struct queue q;
	struct log lg;
};

struct command {
	enum cli_command id;
	int (*fn)(struct ctx *);
};

static int
exit_for(enum db_status st)
{
	switch (st) {
	case DB_OK: return EX_OK;
	case DB_UNREACHABLE: return EX_UNAVAILABLE;
	case DB_SCHEMA: return EX_CONFIG;
	case DB_CONFLICT:
	case DB_ERROR: break;
	}
	return EX_SOFTWARE;
}

static void
report_db_error(const struct ctx *c, enum db_status st, const char *err)
{
	if (st == DB_SCHEMA)
		log_msg(&c->lg, LV_ERROR, "%s (see sql/schema.sql and "
		    "[database] in %s)", err, c->cfg.path);
	else
		log_msg(&c->lg, LV_ERROR, "%s", err);
}

static int
cmd_run(struct ctx *c)
{
	struct run_opts opts = {
		.type = c->cli.type,
		.batch_size = c->cli.has_max ? c->cli.max :
		    c->cfg.run.batch_size,
		.max_seconds = c->cli.has_max_seconds ? c->cli.max_seconds :
		    c->cfg.run.max_seconds,
	};
	struct run_stats stats;
	char err[1024];
	enum db_status st;
	int status;

	if (opts.type != NULL && cfg_find_type(&c->cfg, opts.type) == NULL) {
		log_msg(&c->lg, LV_ERROR, "--type=%s: %s has no [type.%s] "
		    "section", opts.type, c->cfg.path, opts.type);
		return EX_CONFIG;
	}
	if (c->cfg.ntypes == 0) {
		log_msg(&c->lg, LV_ERROR, "%s: no [type.NAME] section: no "
		    "job type to run", c->cfg.path);
		return EX_CONFIG;
	}
	st = run_cycle(&c->cfg, &c->q, &opts, &c->lg, &stats, err,
	    sizeof err);
	if (st != DB_OK)
		report_db_error(c, st, err);
	status = st != DB_OK ? exit_for(st) : stats.retried + stats.failed +
	    stats.lost > 0 ? EXIT_JOB_PROBLEM : EX_OK;
	if (c->cli.verbose)
		report_run_text(stderr, &stats);
	if (c->cli.json)
		report_run_json(stdout, &stats, status == EX_OK,
		    st != DB_OK ? err : NULL);
	return status;
}

/* The payload file's contents, at most PAYLOAD_MAX bytes. */
static char *
read_payload(const char *path, char *err, size_t errlen)
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
	} else
		buf[len] = '\0';
	if (f != stdin)
		fclose(f);
	return buf;
}

static int
cmd_enqueue(struct ctx *c)
{
	char err[1024], *file_payload = NULL, *status = NULL;
	const char *payload = c->cli.payload;
	json_error_t jerr;
	json_t *doc;
	enum db_status st;
	uint64_t id = 0;
	int created = 0, rc = EX_OK;

	if (c->cli.payload_file != NULL) {
		file_payload = read_payload(c->cli.payload_file, err,
		    sizeof err);
		if (file_payload == NULL) {
			log_msg(&c->lg, LV_ERROR, "enqueue: %s", err);
			return EX_NOINPUT;
		}
		payload = file_payload;
	}
	if (payload != NULL) {
		doc = json_loads(payload, JSON_DECODE_ANY, &jerr);
		if (doc == NULL) {
			log_msg(&c->lg, LV_ERROR, "enqueue: payload is not "
			    "valid JSON: line %d column %d: %s", jerr.line,
			    jerr.column, jerr.text);
			rc = EX_DATAERR;
			goto out;
		}
		json_decref(doc);
	}
	st = queue_enqueue(&c->q, c->cli.type, c->cli.key, payload,
	    c->cli.delay, c->cli.max_attempts, &id, &created, &status, err,
	    sizeof err);
	if (st != DB_OK) {
		report_db_error(c, st, err);
		rc = exit_for(st);
		goto out;
	}
	report_enqueue(stdout, c->cli.json, id, created, status);
out:
	free(status);
	free(file_payload);
	return rc;
}

static const struct command commands[] = {
	{ CMD_RUN, cmd_run },
	{ CMD_ENQUEUE, cmd_enqueue },
};

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = run_request_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* A handler that stops reading its stdin must not kill us. */
	signal(SIGPIPE, SIG_IGN);
}

/* A full disk or a closed pipe on stdout is an error, not silence. */
static int
close_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "jobrun: write standard output: %s\n",
		    strerror(errno));
		return status == EX_OK ? EX_IOERR : status;
	}
	return status;
}

static int
setup(struct ctx *c)
{
	const char *path = c->cli.config;
	char err[1024];
	enum db_status st;

	if (path == NULL)
		path = getenv("JOBRUN_CONFIG");
	if (path == NULL || path[0] == '\0')
		path = CFG_DEFAULT_PATH;
	if (cfg_load(&c->cfg, path, err, sizeof err) != 0) {
		log_msg(&c->lg, LV_ERROR, "%s", err);
		return EX_CONFIG;
	}
	st = db_connect(&c->db, &c->cfg.db, err, sizeof err);
	if (st != DB_OK) {
		report_db_error(c, st, err);
		return exit_for(st);
	}
	queue_init(&c->q, &c->db, c->cfg.db.table);
	return EX_OK;
}

static void
teardown(struct ctx *c)
{
	queue_close(&c->q);
	db_close(&c->db);
	cfg_free(&c->cfg);
	mysql_library_end();
}

int
main(int argc, char **argv)
{
	struct ctx c;
	char err[512];
	size_t i;
	int status;

	memset(&c, 0, sizeof c);
	c.lg.level = LV_WARN;
	if (cli_parse(argc, argv, &c.cli, err, sizeof err) != 0) {
		fprintf(stderr, "jobrun: %s\nTry 'jobrun --help'.\n", err);
		return EX_USAGE;
	}
	if (c.cli.command == CMD_HELP) {
		cli_usage(stdout);
		return close_stdout(EX_OK);
	}
	if (c.cli.command == CMD_VERSION) {
		printf("jobrun %s\n", JOBRUN_VERSION);
		return close_stdout(EX_OK);
	}
	c.lg.level = c.cli.quiet ? LV_ERROR : c.cli.verbose > 1 ? LV_DEBUG :
	    c.cli.verbose ? LV_INFO : LV_WARN;
	install_signals();
	status = setup(&c);
	for (i = 0; status == EX_OK && i < sizeof commands /
	    sizeof commands[0]; i++)
		if (commands[i].id == c.cli.command) {
			status = commands[i].fn(&c);
			break;
		}
	teardown(&c);
	return close_stdout(status);
}
