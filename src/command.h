/*
 * command.h - what every subcommand gets, and the subcommands.
 *
 * main() parses the command line, loads the configuration and connects
 * once; each command then works through the queue module and prints its
 * own result, as text or, with --json, as one JSON document on stdout.
 */
#ifndef JOBRUN_COMMAND_H
#define JOBRUN_COMMAND_H

#include <jansson.h>

#include "cli.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "queue.h"

/* Exit status: a job or an operand needs attention (sysexits has none). */
#define EXIT_ATTENTION 1

struct ctx {
	struct cli cli;
	struct cfg cfg;
	struct db db;
	struct queue *q;
	struct log lg;
};

/* The exit status for a database error. */
int cmd_exit_for(enum db_status st);

/* Print a database error, with a hint where one helps. */
void cmd_db_error(const struct ctx *c, enum db_status st, const char *err);

/* Run t's handler preparation (secrets); -1 with err naming the file and
 * section when it fails. */
int cmd_prepare_type(const struct ctx *c, const struct cfg_type *t,
                     char *err, size_t errlen);

/* The configured types' names, in the configuration's order (a malloc'ed
 * array of the configuration's strings). */
const char **cmd_type_names(const struct ctx *c);

/* Print a JSON value on stdout, compact, and release it. */
void cmd_print_json(json_t *value);

int cmd_run(struct ctx *c);
int cmd_enqueue(struct ctx *c);
int cmd_status(struct ctx *c);
int cmd_list(struct ctx *c);
int cmd_show(struct ctx *c);
int cmd_retry(struct ctx *c);
int cmd_cancel(struct ctx *c);
int cmd_purge(struct ctx *c);
int cmd_check(struct ctx *c);

#endif
