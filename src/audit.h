/*
 * audit.h - a record of operators' changes (sql/011_audit.sql): who
 * changed what, how many rows and when, one row per command, written in
 * the change's own transaction.
 */
#ifndef JOBRUN_AUDIT_H
#define JOBRUN_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "command.h"

#define AUDIT_TABLE "jobrun_audit"
#define AUDIT_MIGRATION "sql/011_audit.sql"
/* What jobrun uses on the table. */
#define AUDIT_PRIVILEGES "SELECT, INSERT, UPDATE"
/* The rows the report shows. */
#define AUDIT_REPORT_ROWS 20

/* One command's record. */
struct audit {
	struct queue *q;
	struct queue_stmts *set;
	int on;			/* the table is there: changes are recorded */
	const char *table;	/* what the command changes */
	char *command;		/* the command line, secrets redacted */
	char *os_user;
	char host[256];
	uint64_t id;		/* the command's row once committed, or 0 */
	uint64_t changed;	/* the rows changed, as committed */
};

/* Start the record of c's command, which changes table (a name that
 * outlives a).  No table, or one the account cannot see at all: a->on 0
 * and the changes are made as without the feature.  The table there
 * but not every privilege jobrun uses granted: DB_DENIED, err saying
 * what and the GRANT; the command must then change nothing.  Close a
 * once, whatever it returned. */
enum db_status audit_open(struct ctx *c, const char *table, struct audit *a,
                          char *err, size_t errlen);
void audit_close(struct audit *a);

/* The change change(arg, &n, ...) makes (n: the rows it changed) and the
 * command's row, in one transaction of the queue's helper: the first
 * call inserts the row, each later one (a later batch) adds its n to it,
 * so that the row always says what was committed.  Run again whole after
 * a conflict or a lost connection: undo, when set, first puts back what
 * change did to the caller's state.  Without the table, change alone, as
 * before.  a->changed adds up what was committed, either way. */
enum db_status audit_change(struct audit *a,
                            enum db_status (*change)(void *arg,
                                                     uint64_t *n,
                                                     char *err,
                                                     size_t errlen),
                            void (*undo)(void *arg), void *arg, char *err,
                            size_t errlen);

/* A row as audit and the report show it (valid during the call). */
struct audit_row {
	uint64_t id;
	const char *at;		/* DATETIME(6) as the server writes it */
	const char *os_user, *host, *db_user, *command, *table;
	uint64_t changed;
};

/* The rows made less than since seconds ago (since 0: every one),
 * newest first, at most limit; fn sees each.  *present says whether the
 * table is there (without it: no row, DB_OK). */
enum db_status audit_list(struct queue *q, unsigned long since,
                          unsigned long limit,
                          void (*fn)(void *arg, const struct audit_row *r),
                          void *arg, int *present, char *err,
                          size_t errlen);

/* A row as audit --json gives it. */
json_t *audit_row_json(const struct audit_row *r);

/* A row as the report gives it, which names no database user, host,
 * table or configuration path: {"id", "at", "os_user", "changed",
 * "command"} with the command as audit_shown_command makes it. */
json_t *audit_report_json(const struct audit_row *r);
/* command as the report shows it (malloc'ed): "jobrun" and the words
 * after argv[0], without the configuration file's option. */
char *audit_shown_command(const char *command);

/* For check: how the table stands for the account (a->why and a->fix
 * said when not reached). */
enum db_status audit_access(struct queue *q, struct queue_access *a,
                            char *err, size_t errlen);

#endif
