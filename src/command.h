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
	struct queue q;
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

/* The backlog of one type, as status shows it. */
struct type_status {
	char *type;
	const char *handler;	/* NULL: no [type.NAME] section */
	unsigned long pending, due, processing, expired, failed, success;
	long lag;		/* seconds, -1 when nothing is due */
};

struct status {
	struct type_status *rows;
	size_t n;
};

/* The backlog of every type (or only c->cli.type), from indexes only;
 * with estimate, the optimizer's estimate of success rows too. */
enum db_status cmd_collect_status(struct ctx *c, int estimate,
                                  struct status *s, char *err,
                                  size_t errlen);
void cmd_free_status(struct status *s);

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
