/*
 * pause.c - "jobrun pause TYPE" and "jobrun resume TYPE".
 *
 * The flag lives in the control table (sql/003_flow.sql), which every run
 * on every host reads before each claim: no restart, no config edit.  A
 * type need not be in this host's configuration (another host may run
 * it), so the operand is only checked as a type name.  Running jobs
 * finish; a claim already under way when the flag is set may still start
 * its job (src/flow.c).
 */
#include <stdio.h>
#include <sysexits.h>

#include "command.h"
#include "flow.h"
#include "report.h"
#include "util.h"

int
cmd_pause_check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->nargs != 1)
		return errf(err, errlen, "%s needs one type name",
		    cli->command);
	return cli_check_text("type", cli->args[0], QUEUE_TYPE_MAX, err,
	    errlen);
}

static int
set_paused(struct ctx *c, int paused)
{
	const char *type = c->cli.args[0];
	struct flow *f = NULL;
	enum db_status st;
	char err[2048], who[320];

	errf(who, sizeof who, "%s %s", c->cli.command, type);
	st = flow_open(c->q, &c->cfg, who, &f, err, sizeof err);
	if (st == DB_OK)
		st = flow_set_paused(f, type, paused, err, sizeof err);
	flow_close(f);
	if (st != DB_OK) {
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (c->cli.json)
		report_json(json_pack("{s:s,s:b}", "type", type, "paused",
		    paused));
	else
		printf("%s: %s\n", type, paused ? "paused" : "resumed");
	return EX_OK;
}

int
cmd_pause(struct ctx *c)
{
	return set_paused(c, 1);
}

int
cmd_resume(struct ctx *c)
{
	return set_paused(c, 0);
}
