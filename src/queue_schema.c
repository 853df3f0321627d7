/*
 * queue_schema.c - the job table's columns and indexes, as sql/schema.sql
 * and the migrations make them.
 *
 * The queue owns its table, so what the code expects of it is written
 * here once, beside nothing else: "jobrun check" walks these tables to
 * judge a live table, and test/unit/test_schema.c reads sql/ to hold
 * each definition to the file that creates it (a column or index added
 * to sql/ and not here, or changed on one side only, fails the unit
 * tests rather than the operator's check).
 */
#include <string.h>

#include "queue_schema.h"

const char *const queue_statuses[] = {
	QUEUE_PENDING, QUEUE_PROCESSING, QUEUE_SUCCESS, QUEUE_FAILED, NULL,
};

const char *const queue_finished_statuses[] = {
	QUEUE_SUCCESS, QUEUE_FAILED, NULL,
};

/* null_breaks: jobrun reads a NULL in these without harm, but the row
 * then does not behave as the design says. */
static const struct queue_schema_column columns[] = {
	{ "id", "BIGINT UNSIGNED NOT NULL AUTO_INCREMENT", NULL, NULL },
	{ "business_key", "VARCHAR(128) NOT NULL", NULL,
	  "UNIQUE does not stop two jobs with a NULL key, and such a job "
	  "has no Idempotency-Key" },
	{ "type", "VARCHAR(64) NOT NULL", NULL,
	  "a job with a NULL type is never run" },
	{ "payload", "JSON NULL", NULL, NULL },
	{ "status", "VARCHAR(20) NOT NULL DEFAULT '" QUEUE_PENDING "'", NULL,
	  "a job with a NULL status is never run" },
	{ "attempts", "INT UNSIGNED NOT NULL DEFAULT 0", NULL,
	  "a NULL attempts count is never compared with max_attempts" },
	{ "max_attempts", "INT UNSIGNED NOT NULL DEFAULT 5", NULL,
	  "a NULL max_attempts fails the job at its first failure" },
	{ "next_run_at", "DATETIME NOT NULL", NULL,
	  "a job with a NULL next_run_at is never due" },
	{ "locked_by", "VARCHAR(100) DEFAULT NULL", NULL, NULL },
	{ "locked_until", "DATETIME DEFAULT NULL", NULL, NULL },
	{ "last_error", "TEXT NULL", NULL, NULL },
	{ "created_at", "DATETIME NOT NULL", NULL, NULL },
	{ "updated_at", "DATETIME NOT NULL", NULL, NULL },
	{ "finished_at", "DATETIME DEFAULT NULL", NULL, NULL },
	/* Optional: without them checkpoints and snooze are off. */
	{ "checkpoint", "JSON NULL", "sql/002_checkpoint.sql", NULL },
	{ "snoozes", "INT UNSIGNED NOT NULL DEFAULT 0",
	  "sql/002_checkpoint.sql", NULL },
	/* Optional: without it enqueue --deadline is refused. */
	{ "deadline", "DATETIME NULL DEFAULT NULL", "sql/009_deadline.sql",
	  NULL },
	/* Optional: without it (and its indexes) claims go by due time
	 * alone, and enqueue --priority is refused. */
	{ "priority", "SMALLINT NOT NULL DEFAULT 0", "sql/013_priority.sql",
	  NULL },
};

static const struct queue_schema_index indexes[] = {
	{ "uniq_business_key", "business_key",
	  "UNIQUE KEY uniq_business_key (business_key)", 1, NULL, NULL },
	{ "idx_pick", "status,next_run_at,id",
	  "KEY idx_pick (status, next_run_at, id)", 0, NULL, NULL },
	{ "idx_lock", "status,locked_until",
	  "KEY idx_lock (status, locked_until)", 0, NULL, NULL },
	{ "idx_type_status", "type,status",
	  "KEY idx_type_status (type, status)", 0, NULL, NULL },
	{ "idx_type_pick", "status,type,next_run_at,id",
	  "KEY idx_type_pick (status, type, next_run_at, id)", 0,
	  "sql/001_type_pick.sql", "claims of one type (--type, or a "
	  "configuration with one type) read past other types' due jobs" },
	{ "idx_finished", "status,finished_at,type",
	  "KEY idx_finished (status, finished_at, type)", 0,
	  "sql/005_finished.sql", "jobrun report leaves out the jobs "
	  "finished and failed per hour" },
	{ "idx_priority_pick", "status,priority DESC,next_run_at,id",
	  "KEY idx_priority_pick (status, priority DESC, next_run_at, id)", 0,
	  "sql/013_priority.sql", "claims take due jobs oldest first, "
	  "whatever their priority" },
	{ "idx_type_priority", "status,type,priority DESC,next_run_at,id",
	  "KEY idx_type_priority (status, type, priority DESC, next_run_at, "
	  "id)", 0, "sql/013_priority.sql", "claims take due jobs oldest "
	  "first, whatever their priority" },
};

const struct queue_schema_column *
queue_schema_columns(size_t *n)
{
	*n = sizeof columns / sizeof columns[0];
	return columns;
}

const struct queue_schema_column *
queue_schema_column(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof columns / sizeof columns[0]; i++)
		if (strcmp(columns[i].name, name) == 0)
			return &columns[i];
	return NULL;
}

const struct queue_schema_index *
queue_schema_indexes(size_t *n)
{
	*n = sizeof indexes / sizeof indexes[0];
	return indexes;
}
