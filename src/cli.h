/*
 * cli.h - the command line, parsed into a struct.
 */
#ifndef JOBRUN_CLI_H
#define JOBRUN_CLI_H

#include <stddef.h>
#include <stdio.h>

enum cli_command { CMD_RUN, CMD_ENQUEUE, CMD_HELP, CMD_VERSION };

/* Everything the command line can say; NULL or 0 when not given. */
struct cli {
	enum cli_command command;
	const char *config;
	const char *type;
	const char *key;
	const char *payload;
	const char *payload_file;	/* "-" for stdin */
	unsigned long max, max_seconds, delay, max_attempts;
	int has_max, has_max_seconds;
	int json;
	int verbose;			/* -v count */
	int quiet;
};

/* Parse argv.  0 on success; -1 with err for a usage error.  Resets
 * getopt, so it can be called more than once. */
int cli_parse(int argc, char **argv, struct cli *cli, char *err,
              size_t errlen);

/* The usage text. */
void cli_usage(FILE *out);

#endif
