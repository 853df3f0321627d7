/*
 * schedule.h - recurring jobs: the [schedule.NAME] sections' slots turned
 * into jobs, once each, across hosts and overlapping runs.
 */
#ifndef JOBRUN_SCHEDULE_H
#define JOBRUN_SCHEDULE_H

#include <stdint.h>

#include "config.h"
#include "db.h"
#include "log.h"
#include "queue.h"

/* The table of sql/004_schedules.sql. */
#define SCHED_TABLE "jobrun_schedules"
/* What jobrun uses on it. */
#define SCHED_PRIVILEGES "SELECT, INSERT, UPDATE"
/* A run enqueues at most this many slots of one schedule (the latest). */
#define SCHED_MAX_SLOTS 1000

/* Before a run's first claim: enqueue every due slot of every schedule
 * of cfg into q's table (on q's connection), in one transaction per
 * schedule.  *created counts the jobs created.  A schedule whose row
 * another runner holds past the lock wait is skipped with a warning. */
enum db_status sched_enqueue_due(const struct cfg *cfg, struct queue *q,
                                 const struct log *lg, uint64_t *created,
                                 char *err, size_t errlen);

/* What `jobrun schedules` and `jobrun status` show of one schedule; slot
 * names are "YYYY-MM-DDTHH:MM" in its zone, "" for none. */
struct sched_view {
	const struct cfg_schedule *s;
	char last[20];		/* the latest slot enqueued */
	char due[20];		/* the latest slot at or before now */
	char next[20];		/* the first slot after now */
	long lag;		/* seconds due has waited, 0 once enqueued */
	int64_t last_utc;	/* last in Unix seconds, 0 for none */
};

/* For check: how the table stands for the account, every privilege
 * jobrun uses on it tried (a->why and a->fix said when not reached).
 * A configuration with schedules needs it: without it a run stops
 * before it claims, with the same words. */
enum db_status sched_access(struct queue *q, struct queue_access *a,
                            char *err, size_t errlen);

/* A view of each of cfg's schedules (out: cfg->nschedules of them). */
enum db_status sched_view(const struct cfg *cfg, struct queue *q,
                          struct sched_view *out, char *err, size_t errlen);

#endif
