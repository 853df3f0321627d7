/*
 * queue_schema.h - the job table as jobrun expects it: its status words,
 * its columns and its indexes, each once.
 *
 * sql/schema.sql and the migrations sql/0*.sql create the table; this is
 * what the code knows of them ("jobrun check" compares a live table with
 * it), and test/unit/test_schema.c holds the two together.  Plain data,
 * no database: the unit test links it alone.
 */
#ifndef JOBRUN_QUEUE_SCHEMA_H
#define JOBRUN_QUEUE_SCHEMA_H

#include <stddef.h>

/* The statuses a job moves through (the status column).  An operator's
 * cancel is a failed job whose last_error says so, not a status. */
#define QUEUE_PENDING    "pending"
#define QUEUE_PROCESSING "processing"
#define QUEUE_SUCCESS    "success"
#define QUEUE_FAILED     "failed"

/* Every status, in the order a job goes through them; NULL-terminated. */
extern const char *const queue_statuses[];
/* The statuses a job ends in (what purge deletes); NULL-terminated. */
extern const char *const queue_finished_statuses[];

/* A column of the job table. */
struct queue_schema_column {
	const char *name;
	const char *definition;	/* as sql/ writes it, without COMMENT */
	const char *migration;	/* the file that adds it; NULL: schema.sql */
	const char *null_breaks;	/* NOT NULL ones check watches: what a
					 * NULL in it would break; else NULL */
};

/* The columns, in the order sql/ creates them; *n of them. */
const struct queue_schema_column *queue_schema_columns(size_t *n);
/* The column called name, or NULL. */
const struct queue_schema_column *queue_schema_column(const char *name);

/* An index jobrun relies on. */
struct queue_schema_index {
	const char *name;
	const char *columns;	/* "a,b,c", as queue_describe gives them */
	const char *definition;	/* the KEY clause, as sql/ writes it */
	int unique;
	const char *migration;	/* the file that adds it; NULL: schema.sql,
				 * and required */
	const char *without;	/* one a migration adds: what is missed
				 * without it */
};

/* The indexes, in the order sql/ creates them; *n of them. */
const struct queue_schema_index *queue_schema_indexes(size_t *n);

#endif
