/*
 * cli.h - the command line, parsed into a struct.
 */
#ifndef JOBRUN_CLI_H
#define JOBRUN_CLI_H

#include <stddef.h>
#include <stdio.h>

enum cli_command {
	CMD_RUN, CMD_ENQUEUE, CMD_STATUS, CMD_LIST, CMD_SHOW, CMD_RETRY,
	CMD_CANCEL, CMD_PURGE, CMD_CHECK, CMD_HELP, CMD_VERSION
};

/* Everything the command line can say; NULL or 0 when not given. */
struct cli {
	enum cli_command command;
	const char *config;
	const char *type;
	const char *key;
	const char *payload;
	const char *payload_file;	/* "-" for stdin */
	const char *at;			/* enqueue --at, "YYYY-MM-DD HH:MM:SS" */
	const char *key_prefix;		/* enqueue fan-out */
	const char *payload_template;
	const char *status;		/* list, purge */
	unsigned long range_from, range_to, chunk;
	int has_range;
	unsigned long max, max_seconds, delay, max_attempts;
	int has_max, has_max_seconds, has_delay;
	unsigned long limit, before_id, older_than;
	int has_older_than;
	int failed;			/* retry --failed */
	int force;			/* retry --force */
	int dry_run;			/* purge, retry --failed --dry-run */
	int include_cancelled;		/* retry --failed --include-cancelled */
	int single;			/* run --single */
	const char *metrics_file;	/* run --metrics-file */
	const char *log;		/* "stderr" or "syslog" */
	int json;
	int verbose;			/* -v count */
	int quiet;
	char **args;			/* operands: job ids */
	int nargs;
};

/* Parse argv.  0 on success; -1 with err for a usage error.  Resets
 * getopt, so it can be called more than once. */
int cli_parse(int argc, char **argv, struct cli *cli, char *err,
              size_t errlen);

/* Parse a duration such as 3600, 90s, 45m, 12h, 30d or 2w into seconds;
 * -1 when it is not one. */
int cli_duration(const char *s, unsigned long *seconds);

/* The usage text. */
void cli_usage(FILE *out);

#endif
