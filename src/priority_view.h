/*
 * priority_view.h - what status and report say of priorities: the pending
 * jobs by level (sql/013_priority.sql), how many are due, and how long
 * the oldest due one of each level has waited.
 */
#ifndef JOBRUN_PRIORITY_VIEW_H
#define JOBRUN_PRIORITY_VIEW_H

#include <jansson.h>
#include <stdio.h>

#include "queue.h"

/* The levels shown at most, highest first. */
#define PRIORITY_VIEW_LEVELS 20

struct priority_view {
	int present;			/* the table has sql/013 */
	struct queue_level_count rows[PRIORITY_VIEW_LEVELS];
	size_t n;
};

/* The levels of type's pending jobs (NULL: every type's). */
enum db_status priority_view_read(struct queue *q, const char *type,
                                  struct priority_view *v, char *err,
                                  size_t errlen);
/* Whether people are shown it: the pending jobs have a level but 0 (a
 * table whose jobs all have the default reads as before). */
int priority_view_shown(const struct priority_view *v);
/* status's lines, when shown. */
void priority_view_print(const struct priority_view *v);
/* [{"priority", "pending", "due", "lag_seconds"}], or NULL without the
 * migration (documents of tables without it keep their keys). */
json_t *priority_view_json(const struct priority_view *v);
/* A lag in words: "12s", "-" for none due. */
const char *priority_lag_words(const struct queue_level_count *l, char *buf,
                               size_t len);

#endif
