/*
 * retention_view.h - what status, report and check say of retention: each
 * rule of keep_success and keep_failed and how many finished rows are past
 * it, counted by index up to a cap so that a look stays cheap.
 */
#ifndef JOBRUN_RETENTION_VIEW_H
#define JOBRUN_RETENTION_VIEW_H

#include <jansson.h>
#include <stdint.h>

#include "config.h"
#include "queue.h"

/* Rows a run removes at most per status and rule (retention.c). */
#define RETENTION_BATCH 1000
/* The table of retention's turns (sql/014_retention_pace.sql). */
#define RETENTION_PACE_TABLE "jobrun_retention"
#define RETENTION_PACE_MIGRATION "sql/014_retention_pace.sql"
#define RETENTION_PACE_PRIVILEGES "SELECT, INSERT, UPDATE"

/* Whether the configuration deletes anything: a keep of the run's or a
 * type's that is not for ever (retention.c). */
int retention_on(const struct cfg *cfg);

/* For check: how the table of retention's turns stands for the account,
 * and, when there, *next_in the seconds to the next turn (< 0: due; 0
 * when no run took one yet) (retention.c). */
enum db_status retention_pace_access(struct queue *q, struct queue_access *a,
                                     double *next_in, char *err,
                                     size_t errlen);

/* Rows past a rule counted at most; more shows as "1000+". */
#define RETENTION_VIEW_CAP 1000

/* One rule: [run]'s (every type without its own) or a type's. */
struct retention_rule {
	char rule[CFG_TYPE_MAX + 16];	/* "[run]", "[type.NAME]" */
	const char *type;		/* NULL for [run]'s */
	const char *status;		/* success or failed */
	const char *key;		/* keep_success or keep_failed */
	unsigned long keep;		/* seconds; 0: for ever */
	uint64_t past;			/* rows past it, at most the cap */
	int capped;			/* more than RETENTION_VIEW_CAP */
};

struct retention_view {
	struct retention_rule *rules;	/* none when nothing is kept */
	size_t n;
	const char *archive;		/* [run] archive_table, or NULL */
	/* with the rows counted, rules and the table of turns
	 * (sql/014_retention_pace.sql): keep_every, else 0; the seconds to
	 * the next turn (<= 0: due) */
	unsigned long turn_every;
	double next_turn_in;
};

/* The rules of cfg and, unless count is 0, the rows past each. */
enum db_status retention_view_read(const struct cfg *cfg, struct queue *q,
                                   int count, struct retention_view *v,
                                   char *err, size_t errlen);
void retention_view_free(struct retention_view *v);
/* status's lines (none when no rule is set). */
void retention_view_print(const struct retention_view *v);
/* {"archive_table": ..., "past_cap": 1000, "rules": [...]}, or NULL when
 * retention is off (documents of configurations without it keep their
 * keys). */
json_t *retention_view_json(const struct retention_view *v);
/* check's line: the rules and where their rows go. */
void retention_view_summary(const struct retention_view *v, char *buf,
                            size_t len);
/* A rule's keep in words ("7d", "90m", "for ever") into buf. */
const char *retention_keep_words(unsigned long keep, char *buf, size_t len);
/* A rule's past count in words ("12", "1000+", "-" for ever). */
const char *retention_past_words(const struct retention_rule *r, char *buf,
                                 size_t len);

#endif
