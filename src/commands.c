/*
 * commands.c - the commands, one row each, as git.c's commands[].
 *
 * A row says what the command is called, what runs it, which options it
 * takes besides the common ones, what checks its operands, and its
 * synopsis; the usage text, each command's --help, the completion
 * helper's lists and "option --X is not for Y" come from here.  Adding a
 * command is adding a row (and the command's own file).
 */
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "util.h"

#define O(o) CLI_OPT(CO_##o)

static const struct command commands[] = {
	{ "run", cmd_run,
	  O(TYPE) | O(MAX) | O(MAX_SECONDS) | O(JOBS) | O(SINGLE) |
	  O(WAIT) | O(METRICS_FILE),
	  NULL,
	  "[run] [--config=FILE] [--type=NAME] [--max=N] [--jobs=N]\n"
	  "              [--max-seconds=S] [--single] [--wait]\n"
	  "              [--metrics-file=FILE] [--log=stderr|syslog] [--json]\n"
	  "              [-v] [-q]\n" },
	{ "enqueue", cmd_enqueue,
	  O(TYPE) | O(KEY) | O(PAYLOAD) | O(PAYLOAD_FILE) | O(DELAY) | O(AT) |
	  O(DEADLINE) | O(MAX_ATTEMPTS) | O(KEY_PREFIX) | O(RANGE) | O(CHUNK) |
	  O(PAYLOAD_TEMPLATE) | O(AGAIN) | O(THEN) | O(KEYS_FROM) | O(PRIORITY),
	  cmd_enqueue_check,
	  "enqueue --type=NAME --key=KEY [--payload=JSON |\n"
	  "              --payload-file=FILE | -] [--delay=SECONDS | "
	  "--at=DATETIME]\n"
	  "              [--deadline=WHEN] [--max-attempts=N] [--again]\n"
	  "              [--priority=N]\n"
	  "       jobrun enqueue --type=NAME --key-prefix=P --range=FROM-TO\n"
	  "              --chunk=N [--payload-template=JSON] [--then=NAME]\n"
	  "              [--deadline=WHEN] [--priority=N]\n"
	  "       jobrun enqueue --type=NAME --key-prefix=P --keys-from=FILE|-\n"
	  "              [--payload-template=JSON] [--then=NAME]\n"
	  "              [--priority=N]\n" },
	{ "status", cmd_status, O(TYPE), NULL,
	  "status [--type=NAME]\n" },
	{ "list", cmd_list, O(TYPE) | O(STATUS) | O(LIMIT) | O(BEFORE_ID),
	  cmd_list_check,
	  "list [--status=S] [--type=NAME] [--limit=N] [--before-id=ID]\n" },
	{ "show", cmd_show, O(KEY), cmd_show_check,
	  "show ID | --key=KEY\n" },
	{ "retry", cmd_retry,
	  O(TYPE) | O(FAILED) | O(FORCE) | O(INCLUDE_CANCELLED) | O(DRY_RUN),
	  cmd_retry_check,
	  "retry ID... [--force]\n"
	  "       jobrun retry --failed [--type=NAME] [--include-cancelled] "
	  "[--dry-run]\n" },
	{ "cancel", cmd_cancel, O(WAIT), cmd_cancel_check,
	  "cancel [--wait] ID...\n" },
	{ "purge", cmd_purge,
	  O(TYPE) | O(STATUS) | O(OLDER_THAN) | O(DRY_RUN),
	  cmd_purge_check,
	  "purge --status=success|failed --older-than=DURATION\n"
	  "              [--type=NAME] [--dry-run]\n" },
	{ "check", cmd_check, 0, NULL,
	  "check\n" },
	{ "schedules", cmd_schedules, 0, NULL,
	  "schedules\n" },
	{ "report", cmd_report, O(HTML), cmd_report_check,
	  "report --html=FILE | --json\n" },
	{ "pause", cmd_pause, O(FORCE), cmd_pause_check,
	  "pause [--force] TYPE\n" },
	{ "resume", cmd_resume, O(FORCE), cmd_pause_check,
	  "resume [--force] TYPE\n" },
	{ "audit", cmd_audit, O(SINCE) | O(LIMIT), cmd_audit_check,
	  "audit [--since=DURATION] [--limit=N]\n" },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct command *
find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* -1 with err naming the first option given that c does not take. */
static int
check_options(const struct cli *cli, const struct command *c, char *err,
    size_t errlen)
{
	unsigned long long extra = cli->given & ~(c->options | CLI_COMMON);
	int o;

	for (o = 0; extra != 0 && o < CO_COUNT; o++)
		if (extra & CLI_OPT(o))
			return errf(err, errlen, "option --%s is not for "
			    "\"%s\"", cli_option_name((enum cli_option)o),
			    c->name);
	return 0;
}

int
commands_parse(int argc, char **argv, struct cli *cli,
    const struct command **cmd, char *err, size_t errlen)
{
	const struct command *c;
	int asks;

	*cmd = NULL;
	if (cli_parse(argc, argv, cli, err, errlen) != 0)
		return -1;
	/* --help and the completion helper describe the command named, if
	 * any, and check nothing else; --version needs no command. */
	asks = cli->help || cli->completion_helper;
	if (!asks && cli->version)
		return 0;
	if (asks && !cli->command_named)
		return 0;
	if ((c = find(cli->command)) == NULL)
		return errf(err, errlen, "unknown command \"%s\"",
		    cli->command);
	if (asks) {
		*cmd = c;
		return 0;
	}
	if (check_options(cli, c, err, errlen) != 0 ||
	    cli_check_common(cli, err, errlen) != 0)
		return -1;
	if (c->check != NULL && c->check(cli, err, errlen) != 0)
		return -1;
	if (c->check == NULL && cli->nargs > 0)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[0]);
	*cmd = c;
	return 0;
}

static void
synopsis(FILE *out, const struct command *c, const char *lead)
{
	fprintf(out, "%s jobrun %s", lead, c->synopsis);
}

/* jobrun --help: every synopsis, what jobrun does, the options every
 * command takes and run's, the exit statuses. */
static void
overview(FILE *out)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		synopsis(out, &commands[i], i == 0 ? "usage:" : "      ");
	fputs(
"       jobrun COMMAND --help\n"
"       jobrun --help | --version\n"
"\n"
"Runs due jobs from a MariaDB/MySQL table: recovers expired locks, claims\n"
"jobs one at a time, runs each type's handler and records the outcome.\n"
"\n"
"Options of every command:\n", out);
	cli_usage_options(out, CLI_COMMON);
	fputs("\nOptions of run, the default command (the others': jobrun "
	    "COMMAND --help):\n", out);
	cli_usage_options(out, commands[0].options);
	fputs(
"\n"
"Exit status: 0 success (run: all claimed jobs succeeded or none was due);\n"
"1 a job was retried, failed or lost, or an operand was not acted on;\n"
"64 usage; 65 invalid payload or value; 66 payload file unreadable;\n"
"69 database or account unavailable (unreachable, login refused,\n"
"read-only, not answering); 70 internal error; 74 output error (or\n"
"report's page not written);\n"
"75 try again later (deadlock, lock wait, statement stopped by the\n"
"server); 77 privilege missing; 78 configuration or schema problem;\n"
"128+N stopped by signal N.  See jobrun(1).\n", out);
}

/* jobrun COMMAND --help: c's synopsis and the options c takes. */
static void
command_usage(FILE *out, const struct command *c)
{
	synopsis(out, c, "usage:");
	if (c->options != 0) {
		fputs("\nOptions:\n", out);
		cli_usage_options(out, c->options);
	}
	fputs("\nOptions of every command:\n", out);
	cli_usage_options(out, CLI_COMMON);
	fprintf(out, "\nExit statuses and more: jobrun(1), under %s.\n",
	    c->name);
}

void
commands_help(FILE *out, const struct cli *cli, const struct command *cmd)
{
	size_t i;

	if (cli->help && cmd != NULL)
		command_usage(out, cmd);
	else if (cli->help)
		overview(out);
	else if (cmd != NULL)
		cli_complete_options(out, cmd->options | CLI_COMMON);
	else
		for (i = 0; i < NCOMMANDS; i++)
			fprintf(out, "%s\n", commands[i].name);
}
