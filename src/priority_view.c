/*
 * priority_view.c - priorities for people (status, report): the pending
 * jobs by level, read from idx_priority_pick alone (queue_level_counts),
 * highest level first, as the claims take them.  One claim in ten takes
 * the oldest job whatever its level: a level whose LAG keeps growing is
 * one that higher levels hold back.
 */
#include <stdio.h>

#include "priority_view.h"

enum db_status
priority_view_read(struct queue *q, const char *type, struct priority_view *v,
    char *err, size_t errlen)
{
	v->present = queue_has_priority(q);
	return queue_level_counts(q, type, v->rows, PRIORITY_VIEW_LEVELS,
	    &v->n, err, errlen);
}

int
priority_view_shown(const struct priority_view *v)
{
	return v->n > 1 || (v->n == 1 && v->rows[0].level != 0);
}

const char *
priority_lag_words(const struct queue_level_count *l, char *buf, size_t len)
{
	if (l->lag < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lds", l->lag);
	return buf;
}

void
priority_view_print(const struct priority_view *v)
{
	char lag[32];
	size_t i;

	if (!priority_view_shown(v))
		return;
	printf("\nPending jobs by priority (the highest due first; one claim in "
	    "ten the oldest):\n%-8s %8s %8s %8s\n", "PRIORITY", "PENDING",
	    "DUE", "LAG");
	for (i = 0; i < v->n; i++) {
		const struct queue_level_count *l = &v->rows[i];

		printf("%8ld %8llu %8llu %8s\n", l->level,
		    (unsigned long long)l->pending,
		    (unsigned long long)l->due,
		    priority_lag_words(l, lag, sizeof lag));
	}
	if (v->n == PRIORITY_VIEW_LEVELS)
		printf("(the highest %d levels)\n", PRIORITY_VIEW_LEVELS);
}

json_t *
priority_view_json(const struct priority_view *v)
{
	json_t *list;
	size_t i;

	if (!v->present)
		return NULL;
	list = json_array();
	for (i = 0; i < v->n; i++) {
		const struct queue_level_count *l = &v->rows[i];

		json_array_append_new(list, json_pack("{s:I,s:I,s:I,s:o}",
		    "priority", (json_int_t)l->level,
		    "pending", (json_int_t)l->pending,
		    "due", (json_int_t)l->due, "lag_seconds", l->lag < 0 ?
		    json_null() : json_integer(l->lag)));
	}
	return list;
}
