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

/* What this invocation does where the command line and the
 * configuration both have a say: the command line wins, settled once. */
struct settings {
	unsigned long batch_size;	/* --max, [run] batch_size */
	unsigned long max_seconds;	/* --max-seconds, [run] max_seconds */
	unsigned long jobs;		/* --jobs, [run] jobs */
	int single;			/* --single, [run] single */
	int wait;			/* --wait, [run] wait */
	int syslog;			/* --log, [run] log */
	const char *metrics_file;	/* --metrics-file, [run] metrics_file */
};

struct ctx {
	struct cli cli;
	struct cfg cfg;
	struct settings set;
	struct db db;
	struct queue *q;
	struct log lg;
	char *command_line;	/* argv as typed, data redacted (audit) */
};

/* Settle c->set from c->cli over c->cfg. */
void cmd_resolve(struct ctx *c);

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

/* A command: one row of the table in commands.c. */
struct command {
	const char *name;
	int (*run)(struct ctx *c);
	unsigned long long options;	/* CLI_OPT bits it takes, besides
					 * CLI_COMMON */
	/* Its operands and the options that go together, once parsed; NULL:
	 * it takes no operands. */
	int (*check)(const struct cli *cli, char *err, size_t errlen);
	const char *synopsis;		/* its usage lines */
};

/* The command cli names, its options and operands checked: 0 with *cmd
 * set, or -1 with err for a usage error.  With --help or
 * --completion-helper only the command word is checked, and *cmd is NULL
 * when there is none; with --version (alone) nothing is checked. */
int commands_parse(int argc, char **argv, struct cli *cli,
                   const struct command **cmd, char *err, size_t errlen);

/* What --help prints: the overview, or with a command, its usage; or
 * what --completion-helper prints: the commands, one a line, or with a
 * command, the options it takes (cli_complete_options).  From the
 * table and the option rows. */
void commands_help(FILE *out, const struct cli *cli,
                   const struct command *cmd);

/* The commands and their checks, each in the command's own file. */
int cmd_run(struct ctx *c);
int cmd_enqueue(struct ctx *c);
int cmd_enqueue_check(const struct cli *cli, char *err, size_t errlen);
int cmd_status(struct ctx *c);
int cmd_list(struct ctx *c);
int cmd_list_check(const struct cli *cli, char *err, size_t errlen);
int cmd_show(struct ctx *c);
int cmd_show_check(const struct cli *cli, char *err, size_t errlen);
int cmd_retry(struct ctx *c);
int cmd_retry_check(const struct cli *cli, char *err, size_t errlen);
int cmd_cancel(struct ctx *c);
int cmd_cancel_check(const struct cli *cli, char *err, size_t errlen);
int cmd_purge(struct ctx *c);
int cmd_purge_check(const struct cli *cli, char *err, size_t errlen);
int cmd_check(struct ctx *c);
int cmd_report(struct ctx *c);
int cmd_report_check(const struct cli *cli, char *err, size_t errlen);
int cmd_schedules(struct ctx *c);
int cmd_pause(struct ctx *c);
int cmd_resume(struct ctx *c);
int cmd_pause_check(const struct cli *cli, char *err, size_t errlen);
int cmd_audit(struct ctx *c);
int cmd_audit_check(const struct cli *cli, char *err, size_t errlen);

#endif
