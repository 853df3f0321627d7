/*
 * main.c - jobrun: run due jobs from a MariaDB/MySQL table.
 *
 * main is the recipe: parse the command line, load the configuration,
 * connect, run the command, exit with a status that tells cron and scripts
 * how it went.  Commands share that set-up through one table.
 *
 * Handlers run as our user, and a process of the same user may read
 * /proc/<pid>/environ, where JOBRUN_DB_PASSWORD stays for as long as the
 * process lives: the kernel shows the block the process started with,
 * whatever unsetenv does to environ.  So jobrun makes itself non-dumpable
 * first (its /proc files, memory and core dumps are then root's only),
 * and once the configuration has copied the password, wipes the
 * variable's bytes and removes it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sysexits.h>

#include "command.h"
#include "defs.h"
#include "runner.h"
#include "util.h"


static void
install_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	/* A parent may start us with signals blocked: the stop signals
	 * must reach us, and a handler inherits our mask, so start from
	 * none. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = run_request_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	/* A handler that stops reading its stdin must not kill us, nor a
	 * closed terminal or a stray signal a run in progress: every signal
	 * that would end jobrun without its cleanup leaves a job stranded
	 * in processing until its lock expires. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	signal(SIGALRM, SIG_IGN);
	/* Ignored SIGCHLD survives exec, and some supervisors and scripts
	 * leave it so: the kernel would then reap our handlers itself and
	 * their exit statuses would be lost. */
	signal(SIGCHLD, SIG_DFL);
}

/* The passwords in our environment, once copied: gone from environ and
 * from the block /proc/<pid>/environ shows.  MYSQL_PWD is libmariadb's
 * own variable: used or not, it is a password no handler may see. */
static void
drop_password_env(void)
{
	static const char *const names[] = { "JOBRUN_DB_PASSWORD",
	    "MYSQL_PWD" };
	size_t i;
	char *v;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if ((v = getenv(names[i])) == NULL)
			continue;
		explicit_bzero(v, strlen(v));
		unsetenv(names[i]);
	}
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
	size_t i;

	if (path == NULL)
		path = getenv("JOBRUN_CONFIG");
	if (path == NULL || path[0] == '\0')
		path = CFG_DEFAULT_PATH;
	if (cfg_load(&c->cfg, path, err, sizeof err) != 0) {
		log_msg(&c->lg, LV_ERROR, "%s", err);
		return EX_CONFIG;
	}
	cmd_resolve(c);
	if (c->set.syslog)
		log_open(&c->lg, c->lg.level, 1);
	for (i = 0; i < c->cfg.nwarnings; i++)
		log_msg(&c->lg, LV_WARN, "%s", c->cfg.warnings[i]);
	st = db_connect(&c->db, &c->cfg.db, err, sizeof err);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	c->q = queue_open(&c->db, c->cfg.db.table);
	queue_set_types(c->q, &c->cfg);
	return EX_OK;
}

static void
teardown(struct ctx *c)
{
	queue_close(c->q);
	db_close(&c->db);
	cfg_free(&c->cfg);
	free(c->command_line);
	mysql_library_end();
}

/* -qq: fatal errors; -q: and the jobs a person must look at (cron mails
 * them); none: and what needs attention; -v: a line per job; -vv: more. */
static enum log_level
log_level_for(int quiet, int verbose)
{
	if (quiet > 1)
		return LV_ERROR;
	if (quiet)
		return LV_FAILURE;
	return verbose > 1 ? LV_DEBUG : verbose ? LV_INFO : LV_WARN;
}

int
main(int argc, char **argv)
{
	const struct command *cmd;
	struct ctx c;
	char err[512];
	int status;

	/* Before anything is read: the environment holds the password. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	json_set_alloc_funcs(xmalloc, free);	/* out of memory: one way */
	memset(&c, 0, sizeof c);
	/* As typed: the parse reorders argv. */
	c.command_line = cli_command_line(argc, argv);
	if (commands_parse(argc, argv, &c.cli, &cmd, err, sizeof err) != 0) {
		fprintf(stderr, "jobrun: %s\nTry 'jobrun --help'.\n", err);
		free(c.command_line);
		return EX_USAGE;
	}
	if (c.cli.help || c.cli.completion_helper || c.cli.version) {
		free(c.command_line);
		if (c.cli.help || c.cli.completion_helper)
			commands_help(stdout, &c.cli, cmd);
		else
			printf("jobrun %s\n", JOBRUN_VERSION);
		return close_stdout(EX_OK);
	}
	log_open(&c.lg, log_level_for(c.cli.quiet, c.cli.verbose), 0);
	install_signals();
	status = setup(&c);
	drop_password_env();
	if (status == EX_OK)
		status = cmd->run(&c);
	teardown(&c);
	log_close(&c.lg);
	return close_stdout(status);
}
