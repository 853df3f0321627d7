/*
 * pause.c - "jobrun pause TYPE" and "jobrun resume TYPE".
 *
 * The flag lives in the control table (sql/003_flow.sql), which every run
 * on every host reads before each claim: no restart, no config edit.  A
 * type need not be in this host's configuration (another host may run
 * it), but a type that neither the configuration, nor the job table, nor
 * the control table knows is most likely a typo, and pausing it would
 * say "paused" and hold nothing back: it is refused unless --force.
 * Types compare byte for byte, as claims and the control table do.
 * Running jobs finish; a claim already under way when the flag is set
 * may still start its job (src/flow.c).  The change leaves its row in
 * the record of operators' changes (audit.c), in its transaction.
 */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "audit.h"
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

/* Whether type is known here: a section, a job or a control row; *known
 * says.  A database error is returned as it is. */
static enum db_status
known_type(struct ctx *c, struct flow *f, const char *type, int *known,
    char *err, size_t errlen)
{
	struct flow_states rows;
	enum db_status st;

	*known = cfg_find_type(&c->cfg, type) != NULL;
	if (*known)
		return DB_OK;
	if ((st = queue_type_known(c->q, type, known, err, errlen)) != DB_OK ||
	    *known)
		return st;
	st = flow_read(f, type, &rows, err, errlen);
	*known = rows.n > 0;
	flow_states_free(&rows);
	return st;
}

/* The refusal of a type nobody knows, with the configured one it most
 * likely meant. */
static int
unknown_type(struct ctx *c, struct flow *f, const char *type)
{
	struct cfg_near near;
	char hint[200];
	size_t i;

	cfg_near_init(&near, type);
	for (i = 0; i < c->cfg.ntypes; i++)
		cfg_near_offer(&near, c->cfg.types[i].name);
	log_msg(&c->lg, LV_ERROR, "%s %s: unknown type: no [type.%s] section "
	    "in %s, no job of it in %s, no row in %s%s (--force: %s it all "
	    "the same)", c->cli.command, type, type, c->cfg.path,
	    queue_name(c->q), flow_table(f), cfg_near_hint(&near, "", "", hint,
	    sizeof hint), c->cli.command);
	return EXIT_ATTENTION;
}

/* The flag set, as audit_change runs it. */
struct pause_change {
	struct flow *f;
	const char *type;
	int paused;
};

static enum db_status
change_flag(void *arg, uint64_t *n, char *err, size_t errlen)
{
	struct pause_change *p = arg;
	enum db_status st;
	int changed;

	st = flow_set_paused(p->f, p->type, p->paused, &changed, err, errlen);
	*n = (uint64_t)changed;
	return st;
}

/* Set the flag and record it, in one transaction. */
static enum db_status
set_flag(struct ctx *c, struct flow *f, const char *type, int paused,
    char *err, size_t errlen)
{
	struct pause_change p = { f, type, paused };
	enum db_status st;
	struct audit a;

	st = audit_open(c, flow_table(f), &a, err, errlen);
	if (st == DB_OK)
		st = audit_change(&a, change_flag, NULL, &p, err, errlen);
	audit_close(&a);
	return st;
}

static int
set_paused(struct ctx *c, int paused)
{
	const char *type = c->cli.args[0];
	struct flow *f = NULL;
	enum db_status st;
	char err[2048], who[320];
	int known = 1, rc;

	errf(who, sizeof who, "%s %s", c->cli.command, type);
	st = flow_open(c->q, &c->cfg, who, &f, err, sizeof err);
	if (st == DB_OK && !c->cli.force)
		st = known_type(c, f, type, &known, err, sizeof err);
	if (st == DB_OK && !known) {
		rc = unknown_type(c, f, type);
		flow_close(f);
		return rc;
	}
	if (st == DB_OK)
		st = set_flag(c, f, type, paused, err, sizeof err);
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
