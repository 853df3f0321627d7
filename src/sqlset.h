/*
 * sqlset.h - the statements of a module beside queue.c (schedules,
 * fan-in) on the queue's connection: prepared on first use, forgotten
 * when the queue has made the connection again, and the transaction
 * statements those modules need.
 */
#ifndef JOBRUN_SQLSET_H
#define JOBRUN_SQLSET_H

#include <stdint.h>

#include "db.h"
#include "queue.h"

/* A statement's table in sqlset_open's tables: the queue's job table. */
#define SQLSET_JOBS "%1$s"

struct sqlset {
	struct db *db;
	struct queue *q;
	const char *const *texts;	/* "%1$s": the job table, quoted */
	const char *const *purposes;	/* what each does, for messages */
	const char *const *tables;	/* the table each works on, or NULL */
	size_t n;
	MYSQL_STMT **stmt;		/* n of them, NULL until prepared */
	uint64_t reconnects;		/* the queue's, when prepared */
};

/* n statements: texts, what each does and the table it works on
 * (SQLSET_JOBS: the job table; NULL: none, such as a read of the
 * server's clock).  Their errors read "<purpose> in <table>: <cause>",
 * as queue.c's and flow.c's do. */
void sqlset_open(struct sqlset *s, struct db *db, struct queue *q,
                 const char *const *texts, const char *const *purposes,
                 const char *const *tables, size_t n);
void sqlset_close(struct sqlset *s);

/* Prepare fmt ("%1$s": the job table) into *out, a statement of the
 * caller's own, which does what on table (as sqlset_open's). */
enum db_status sqlset_prepare(struct sqlset *s, const char *fmt,
                              const char *what, const char *table,
                              MYSQL_STMT **out, char *err, size_t errlen);

/* err, a cause, becomes "<what> in <table>: <cause>" (table as
 * sqlset_open's). */
void sqlset_say_what(const struct sqlset *s, const char *what,
                     const char *table, char *err, size_t errlen);

/* Run statement w; with ncols, read its one row into cols (malloc'ed,
 * NULL for SQL NULL; *found 0 when there is none).  With ncols 0 its
 * rows, if any, are left for sqlset_fetch. */
enum db_status sqlset_run(struct sqlset *s, size_t w,
                          const struct db_arg *args, unsigned nargs,
                          char **cols, unsigned ncols, int *found,
                          char *err, size_t errlen);

/* The next row of statement w's result (db_fetch). */
int sqlset_fetch(struct sqlset *s, size_t w, char **cols, unsigned ncols,
                 char *err, size_t errlen);

/* Rows the last run of statement w changed. */
uint64_t sqlset_changed(const struct sqlset *s, size_t w);

/* START TRANSACTION, COMMIT or ROLLBACK. */
enum db_status sqlset_plain(struct sqlset *s, const char *sql, char *err,
                            size_t errlen);

/* A whole decimal (signed) number; -1 when s is not one. */
int sqlset_int64(const char *s, int64_t *out);

#endif
