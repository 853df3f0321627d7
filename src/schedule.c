/*
 * schedule.c - recurring jobs: every due slot of every [schedule.NAME]
 * becomes one job, once, whoever runs and however often.
 *
 * A slot is a wall-clock minute that the schedule's cron expression
 * matches, in the schedule's time zone; its job's business key is
 * "NAME@YYYY-MM-DDTHH:MM", that wall-clock minute.  The job table's UNIQUE
 * business_key makes the slot's job exist once whatever number of hosts
 * and overlapping runs enqueue it, and enqueue's insert (ON DUPLICATE KEY,
 * as "jobrun enqueue") says which run created it.  A key exists only
 * until purge deletes its finished job, though, so each schedule also has
 * a row in jobrun_schedules (sql/004_schedules.sql) with the latest slot
 * enqueued, in real time: a run enqueues only slots after it, so a purged
 * slot never comes back.  The row is locked (the insert that makes sure
 * it exists locks it) for the transaction that reads it, enqueues the
 * slots and moves it on, so runners that start together take turns, and
 * one stalled between reading and enqueuing cannot enqueue a slot whose
 * job another ran and purge deleted meanwhile.
 *
 * Real time is the server's: now is UNIX_TIMESTAMP() (or JOBRUN_TEST_NOW,
 * for tests), and a wall-clock slot becomes real time by the server's
 * CONVERT_TZ and time zone tables, the rules MariaDB applies to every
 * other time (the C library's TZ would need the process-wide TZ variable
 * and could disagree with the server's tables).  CONVERT_TZ maps a local
 * time that a DST change skips to the change's instant and one that
 * happens twice to its first occurrence, so real time never goes back as
 * wall-clock time goes on: walking the slots back from now, the first one
 * at or before the latest enqueued ends the walk.  A skipped slot (02:30
 * when clocks jump from 02:00 to 03:00) therefore runs at 03:00, and a
 * repeated one (02:30 when clocks go back from 03:00 to 02:00) runs
 * once, the first time; in both cases its key names the one wall-clock
 * minute.
 *
 * catch_up says how far back (real time) missed slots still run, a slot
 * exactly catch_up old included; the latest due slot always runs, and 0
 * (the default) means that slot alone, even at the very second of a DST
 * jump, where the skipped slots share its instant.  A schedule seen for the first time starts at the
 * moment it is seen, less catch_up: adding "@daily" at 14:00 does not run
 * today's midnight slot.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"
#include "util.h"

/* Slots looked at beyond those enqueued: a fold (an hour lived twice)
 * shows up to three hours of wall-clock slots that are not due yet. */
#define SCHED_MAX_STEPS (SCHED_MAX_SLOTS + 3 * 60 + 10)
/* How long (s) a runner waits for another's schedule row before skipping
 * the schedule in this run: the session's lock wait while it enqueues
 * schedules, the one before put back after. */
#define SCHED_LOCK_WAIT 5
/* Runs of a schedule's transaction after deadlocks and lost connections. */
#define SCHED_TRIES 5

enum sched_stmt {
	S_NOW, S_LOCK, S_LAST, S_LOCAL, S_UTC, S_PAYLOAD, S_SAVE, S_COUNT
};

/* The zone: the schedule's, or the session's ([database] time_zone or
 * the server's own). */
#define ZONE "IFNULL(?, @@session.time_zone)"

static const char *const texts[S_COUNT] = {
	[S_NOW] = "SELECT UNIX_TIMESTAMP()",
	/* Makes sure the row exists, and locks it either way: (table,
	 * table, name, where a new schedule starts). */
	[S_LOCK] = "INSERT INTO " SCHED_TABLE " (job_table, name,"
	    " last_slot_utc, last_slot, updated_at)"
	    " VALUES (" QUEUE_TABLE_ID ", ?, ?, NULL, NOW())"
	    " ON DUPLICATE KEY UPDATE name = name",
	/* (table, table, table, name): the latest, also of the row an
	 * earlier jobrun kept under the table's name as configured */
	[S_LAST] = "SELECT last_slot_utc, last_slot FROM " SCHED_TABLE
	    " WHERE job_table " QUEUE_TABLE_IDS " AND name = ?"
	    " ORDER BY last_slot_utc DESC LIMIT 1",
	/* Where the walk back starts: the wall-clock time now, or, in an
	 * hour lived twice, the latest wall-clock time already lived (three
	 * hours ago plus three hours, at the old offset).  (utc, zone, utc
	 * three hours ago, zone)  Formatted to the second: MySQL types a
	 * parameter of CONVERT_TZ as DATETIME(6), and its answer would end
	 * in ".000000". */
	[S_LOCAL] = "SELECT DATE_FORMAT(GREATEST(CONVERT_TZ(?, '+00:00', "
	    ZONE "), CONVERT_TZ(?, '+00:00', " ZONE ") + INTERVAL 3 HOUR),"
	    " '%%Y-%%m-%%d %%H:%%i:%%s')",
	/* A wall-clock minute in real time, as Unix seconds: (wall, zone) */
	[S_UTC] = "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00',"
	    " CONVERT_TZ(?, " ZONE ", '+00:00'))",
	/* The job's payload: the configured object with "slot" set by the
	 * server, the rest as written.  (payload, payload, slot) */
	[S_PAYLOAD] = "SELECT IF(JSON_TYPE(IFNULL(?, '{}')) = 'OBJECT',"
	    " JSON_SET(IFNULL(?, '{}'), '$.slot', ?), NULL)",
	/* (slot utc, slot wall, table, table, name) */
	[S_SAVE] = "UPDATE " SCHED_TABLE " SET last_slot_utc ="
	    " GREATEST(last_slot_utc, ?), last_slot = ?, updated_at = NOW()"
	    " WHERE job_table = " QUEUE_TABLE_ID " AND name = ?",
};

static const char *const purposes[S_COUNT] = {
	[S_NOW] = "read the server's clock",
	[S_LOCK] = "lock a schedule's row",
	[S_LAST] = "read a schedule's last slot",
	[S_LOCAL] = "convert the time now to the schedule's zone",
	[S_UTC] = "convert a slot to Unix time",
	[S_PAYLOAD] = "make a slot's payload",
	[S_SAVE] = "save a schedule's last slot",
};

/* The table each statement works on (NULL: none). */
static const char *const tables[S_COUNT] = {
	[S_LOCK] = SCHED_TABLE,
	[S_LAST] = SCHED_TABLE,
	[S_SAVE] = SCHED_TABLE,
};

/* The statements whose privileges jobrun uses on the table (SELECT,
 * INSERT, UPDATE), the look first. */
static const size_t uses[] = { S_LAST, S_LOCK, S_SAVE };

static const struct queue_feature feature = {
	{ SCHED_TABLE, NULL }, SCHED_PRIVILEGES, "sql/004_schedules.sql"
};

/* The statements of one pass over the schedules, on the queue's
 * connection. */
struct sched_db {
	struct queue *q;
	struct queue_stmts *set;
	int64_t now;		/* Unix seconds */
};

struct slot {
	int64_t wall;		/* cron.h's wall-clock minute */
	int64_t utc;		/* Unix seconds */
};

static enum db_status
run(struct sched_db *sd, enum sched_stmt w, const struct db_arg *args,
    unsigned nargs, char **cols, unsigned ncols, int *found, char *err,
    size_t errlen)
{
	if (ncols == 0)
		return queue_stmts_run(sd->set, w, args, nargs, err, errlen);
	return queue_stmts_one(sd->set, w, args, nargs, cols, ncols, found,
	    err, errlen);
}

/* Now, in Unix seconds: the server's clock, or JOBRUN_TEST_NOW. */
static enum db_status
sd_now(struct sched_db *sd, char *err, size_t errlen)
{
	const char *fixed = getenv("JOBRUN_TEST_NOW");
	char *col = NULL;
	enum db_status st;
	int found = 0;

	if (fixed != NULL) {
		if (queue_int64(fixed, &sd->now) == 0 && sd->now >= 86400)
			return DB_OK;
		errf(err, errlen, "JOBRUN_TEST_NOW: not Unix seconds: \"%s\"",
		    fixed);
		return DB_BAD_INPUT;
	}
	st = run(sd, S_NOW, NULL, 0, &col, 1, &found, err, errlen);
	if (st == DB_OK && (!found || queue_int64(col, &sd->now) != 0)) {
		errf(err, errlen, "read the server's clock: no answer");
		st = DB_ERROR;
	}
	free(col);
	return st;
}

/* Unix seconds as a UTC DATETIME text. */
static void
utc_text(int64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
}

static enum db_status
unknown_zone(const struct sched_db *sd, const struct cfg_schedule *s,
    char *err, size_t errlen)
{
	errf(err, errlen, "time zone %s unknown to the server (load its time "
	    "zone tables: %s)", s->time_zone != NULL ? s->time_zone :
	    "of the session", db_tzinfo_command(queue_db(sd->q)));
	return DB_SCHEMA;
}

/* Where to walk back from, in s's wall-clock minutes. */
static enum db_status
walk_start(struct sched_db *sd, const struct cfg_schedule *s, int64_t *wall,
    char *err, size_t errlen)
{
	char now[32], before[32], *col = NULL;
	struct db_arg args[4];
	enum db_status st;
	int found = 0;

	utc_text(sd->now, now, sizeof now);
	utc_text(sd->now - 3 * 3600, before, sizeof before);
	args[0] = DB_STR(now);
	args[1] = DB_STR(s->time_zone);
	args[2] = DB_STR(before);
	args[3] = DB_STR(s->time_zone);
	st = run(sd, S_LOCAL, args, 4, &col, 1, &found, err, errlen);
	if (st == DB_OK && (!found || col == NULL || cron_read(col, wall) != 0))
		st = unknown_zone(sd, s, err, errlen);
	free(col);
	return st;
}

/* Wall-clock minute wall of s in Unix seconds. */
static enum db_status
to_utc(struct sched_db *sd, const struct cfg_schedule *s, int64_t wall,
    int64_t *utc, char *err, size_t errlen)
{
	char text[32], *col = NULL;
	struct db_arg args[2];
	enum db_status st;
	int found = 0;

	cron_format_sql(wall, text, sizeof text);
	args[0] = DB_STR(text);
	args[1] = DB_STR(s->time_zone);
	st = run(sd, S_UTC, args, 2, &col, 1, &found, err, errlen);
	if (st == DB_OK && (!found || queue_int64(col, utc) != 0))
		st = unknown_zone(sd, s, err, errlen);
	free(col);
	return st;
}

/* The slots of s after last (Unix seconds) that are due now, latest
 * first: the latest due one, and those catch_up allows. */
static enum db_status
due_slots(struct sched_db *sd, const struct cfg_schedule *s, int64_t last,
    struct slot *out, size_t *n, char *err, size_t errlen)
{
	int64_t wall, c, utc, lower = sd->now - (int64_t)s->catch_up;
	enum db_status st;
	int steps;

	*n = 0;
	if ((st = walk_start(sd, s, &wall, err, errlen)) != DB_OK)
		return st;
	for (steps = 0; steps < SCHED_MAX_STEPS; steps++, wall = c - 1) {
		if (cron_prev(&s->cron, wall, &c) != 0)
			break;
		if ((st = to_utc(sd, s, c, &utc, err, errlen)) != DB_OK)
			return st;
		if (utc > sd->now)
			continue;	/* in a fold: not lived yet */
		/* catch_up 0 is the latest slot alone, even where a DST
		 * gap puts skipped slots at its very instant; otherwise a
		 * slot exactly catch_up old still runs. */
		if (utc <= last || (*n > 0 && (s->catch_up == 0 ||
		    utc < lower)))
			break;
		out[(*n)++] = (struct slot){ c, utc };
		if (*n == SCHED_MAX_SLOTS)
			break;
	}
	return DB_OK;
}

/* The slot's job: its payload (the server's JSON_SET) and its insert. */
static enum db_status
enqueue_slot(struct sched_db *sd, struct queue *q,
    const struct cfg_schedule *s, const struct slot *slot,
    const struct log *lg, uint64_t *created, char *err, size_t errlen)
{
	struct queue_when when = { NULL, 0, 0, NULL, 0, 0, 0 };
	char name[20], key[QUEUE_KEY_MAX + 1], *payload = NULL, *status = NULL;
	struct db_arg args[3];
	enum db_status st;
	uint64_t id = 0;
	int found = 0, made = 0;

	cron_format_slot(slot->wall, name, sizeof name);
	snprintf(key, sizeof key, "%s@%s", s->name, name);
	args[0] = DB_STR(s->payload);
	args[1] = DB_STR(s->payload);
	args[2] = DB_STR(name);
	st = run(sd, S_PAYLOAD, args, 3, &payload, 1, &found, err, errlen);
	if (st == DB_OK && (!found || payload == NULL)) {
		errf(err, errlen, "payload is not a JSON object (the server's "
		    "JSON_TYPE): %s", s->payload);
		st = DB_BAD_INPUT;
	}
	if (st == DB_OK)
		st = queue_enqueue(q, s->type, key, payload, strlen(payload),
		    &when, 0, &id, &made, &status, err, errlen);
	if (st == DB_OK) {
		*created += (uint64_t)made;
		log_msg(lg, LV_INFO, "schedule %s: slot %s %s job %llu",
		    s->name, name, made ? "enqueued as" : "already",
		    (unsigned long long)id);
	}
	free(payload);
	free(status);
	return st;
}

/* A schedule's transaction (enqueue_schedule). */
struct sched_trx {
	struct sched_db *sd;
	const struct cfg_schedule *s;
	const struct log *lg;
	uint64_t *created, created_before;
};

/* Lock the schedule's row, enqueue its due slots after the last one
 * enqueued, and move the row on. */
static enum db_status
schedule_body(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct sched_trx *t = arg;
	struct sched_db *sd = t->sd;
	struct queue *q = sd->q;
	const struct cfg_schedule *s = t->s;
	struct db_arg lock[4] = { QUEUE_TABLE_ID_ARGS(q),
	    DB_STR(s->name), DB_NUM(sd->now - (int64_t)s->catch_up - 1) };
	struct db_arg latest[4] = { QUEUE_TABLE_IDS_ARGS(q), DB_STR(s->name) };
	struct db_arg save[5];
	struct slot *slots = xcalloc(SCHED_MAX_SLOTS, sizeof *slots);
	char *cols[2] = { NULL, NULL }, wall[32];
	int64_t last = 0;
	enum db_status st;
	size_t n = 0, i;
	int found = 0;

	(void)w;	/* idempotent: a slot after the last one saved, once */
	st = run(sd, S_LOCK, lock, 4, NULL, 0, NULL, err, errlen);
	if (st == DB_OK)
		st = run(sd, S_LAST, latest, 4, cols, 2, &found, err, errlen);
	if (st == DB_OK && (!found || queue_int64(cols[0], &last) != 0)) {
		errf(err, errlen, "its row vanished");
		st = DB_ERROR;
	}
	if (st == DB_OK)
		st = due_slots(sd, s, last, slots, &n, err, errlen);
	/* Oldest first: the jobs' ids follow their slots. */
	for (i = n; st == DB_OK && i > 0; i--)
		st = enqueue_slot(sd, q, s, &slots[i - 1], t->lg, t->created,
		    err, errlen);
	if (st == DB_OK && n > 0) {
		cron_format_sql(slots[0].wall, wall, sizeof wall);
		save[0] = DB_NUM(slots[0].utc);
		save[1] = DB_STR(wall);
		save[2] = DB_STR(queue_name(q));
		save[3] = DB_STR(queue_name(q));
		save[4] = DB_STR(s->name);
		st = run(sd, S_SAVE, save, 5, NULL, 0, NULL, err, errlen);
	}
	free(cols[0]);
	free(cols[1]);
	free(slots);
	return st;
}

/* A run that was rolled back created nothing. */
static void
schedule_undo(void *arg, enum db_status st)
{
	struct sched_trx *t = arg;

	(void)st;
	*t->created = t->created_before;
}

/* One schedule, in one transaction that holds its row: run again whole
 * after a deadlock, a lost connection or a lost COMMIT; a lock wait
 * that timed out is another runner enqueuing it: not again. */
static enum db_status
enqueue_schedule(struct sched_db *sd, const struct cfg_schedule *s,
    const struct log *lg, uint64_t *created, char *err, size_t errlen)
{
	struct sched_trx arg = { sd, s, lg, created, *created };
	struct queue_trx t = { schedule_body, schedule_undo, NULL, &arg,
	    SCHED_TRIES, 1, 0 };

	return queue_trx(sd->q, &t, err, errlen);
}

/* Every privilege jobrun uses on the table tried, on sd's statements:
 * how it stands into *a (said when not reached). */
static enum db_status
access_of(struct sched_db *sd, struct queue_access *a, char *err,
    size_t errlen)
{
	enum db_status st;

	st = queue_stmts_reach(sd->set, uses, sizeof uses / sizeof uses[0],
	    &a->reach, err, errlen);
	if (st == DB_OK && a->reach != QUEUE_REACHED)
		queue_access_say(sd->q, a->reach, &feature, a);
	return st;
}

enum db_status
sched_access(struct queue *q, struct queue_access *a, char *err,
    size_t errlen)
{
	struct sched_db sd = { q, NULL, 0 };
	enum db_status st;

	sd.set = queue_stmts_open(q, texts, purposes, tables, S_COUNT, NULL);
	st = access_of(&sd, a, err, errlen);
	queue_stmts_close(sd.set);
	return st;
}

/* Open the statements of a pass over the schedules, make sure the table
 * is there for the account (schedules need it), read now and set the
 * lock wait. */
static enum db_status
sd_open(struct sched_db *sd, struct queue *q, char *err, size_t errlen)
{
	struct queue_access a;
	enum db_status st;

	sd->q = q;
	sd->set = queue_stmts_open(q, texts, purposes, tables, S_COUNT,
	    NULL);
	st = access_of(sd, &a, err, errlen);
	if (st == DB_OK && a.reach != QUEUE_REACHED) {
		errf(err, errlen, "%s; %s", a.why, a.fix);
		return a.status;
	}
	if (st == DB_OK)
		st = sd_now(sd, err, errlen);
	if (st == DB_OK)
		st = queue_lock_wait(q, SCHED_LOCK_WAIT, err, errlen);
	return st;
}

/* Put the lock wait back, unless an error ended the pass already. */
static enum db_status
sd_close(struct sched_db *sd, enum db_status st, char *err, size_t errlen)
{
	if (st == DB_OK)
		st = queue_lock_wait(sd->q, 0, err, errlen);
	queue_stmts_close(sd->set);
	return st;
}

enum db_status
sched_enqueue_due(const struct cfg *cfg, struct queue *q,
    const struct log *lg, uint64_t *created, char *err, size_t errlen)
{
	struct sched_db sd;
	char cause[768];
	enum db_status st;
	size_t i;

	*created = 0;
	if (cfg->nschedules == 0)
		return DB_OK;
	st = sd_open(&sd, q, cause, sizeof cause);
	for (i = 0; st == DB_OK && i < cfg->nschedules; i++) {
		const struct cfg_schedule *s = &cfg->schedules[i];

		st = enqueue_schedule(&sd, s, lg, created, cause,
		    sizeof cause);
		/* Another runner holds the row (and is enqueuing it): its
		 * slots are in hand; the next run looks again. */
		if (st == DB_CONFLICT) {
			log_msg(lg, LV_WARN, "schedule %s: skipped in this "
			    "run: %s", s->name, cause);
			st = DB_OK;
		} else if (st != DB_OK)
			errf(err, errlen, "enqueue schedule %s: %s", s->name,
			    cause);
	}
	if (st != DB_OK && i == 0)
		errf(err, errlen, "enqueue schedules: %s", cause);
	if (st == DB_OK && (st = sd_close(&sd, st, cause, sizeof cause)) !=
	    DB_OK)
		errf(err, errlen, "enqueue schedules: %s", cause);
	else if (st != DB_OK)
		sd_close(&sd, st, cause, sizeof cause);
	return st;
}

/* The latest slot of s at or before now (*due, 0 for none) and the first
 * after it (*next). */
static enum db_status
around_now(struct sched_db *sd, const struct cfg_schedule *s,
    struct slot *due, struct slot *next, char *err, size_t errlen)
{
	int64_t wall, c, utc;
	enum db_status st;
	int steps;

	memset(due, 0, sizeof *due);
	memset(next, 0, sizeof *next);
	if ((st = walk_start(sd, s, &wall, err, errlen)) != DB_OK)
		return st;
	for (steps = 0; steps < SCHED_MAX_STEPS; steps++, wall = c - 1) {
		if (cron_prev(&s->cron, wall, &c) != 0)
			break;
		if ((st = to_utc(sd, s, c, &utc, err, errlen)) != DB_OK)
			return st;
		if (utc <= sd->now) {
			*due = (struct slot){ c, utc };
			break;
		}
	}
	wall = due->utc != 0 ? due->wall + 1 : wall;
	for (steps = 0; steps < SCHED_MAX_STEPS; steps++, wall = c + 1) {
		if (cron_next(&s->cron, wall, &c) != 0)
			break;
		if ((st = to_utc(sd, s, c, &utc, err, errlen)) != DB_OK)
			return st;
		if (utc > sd->now) {
			*next = (struct slot){ c, utc };
			break;
		}
	}
	return DB_OK;
}

static enum db_status
view_one(struct sched_db *sd, const char *table, struct sched_view *v,
    char *err, size_t errlen)
{
	struct db_arg args[4] = { DB_STR(table), DB_STR(table), DB_STR(table),
	    DB_STR(v->s->name) };
	char *cols[2] = { NULL, NULL };
	struct slot due, next;
	int64_t last = INT64_MIN, wall;
	enum db_status st;
	int found = 0;

	st = run(sd, S_LAST, args, 4, cols, 2, &found, err, errlen);
	if (st == DB_OK && found) {
		queue_int64(cols[0], &last);
		if (cols[1] != NULL)
			v->last_utc = last;
		if (cols[1] != NULL && cron_read(cols[1], &wall) == 0)
			cron_format_slot(wall, v->last, sizeof v->last);
	}
	if (st == DB_OK)
		st = around_now(sd, v->s, &due, &next, err, errlen);
	if (st == DB_OK && due.utc != 0) {
		cron_format_slot(due.wall, v->due, sizeof v->due);
		/* Not enqueued yet: it has waited since its time.  A
		 * schedule never seen starts when first seen. */
		v->lag = found && due.utc > last ? (long)(sd->now - due.utc) :
		    0;
	}
	if (st == DB_OK && next.utc != 0)
		cron_format_slot(next.wall, v->next, sizeof v->next);
	free(cols[0]);
	free(cols[1]);
	return st;
}

enum db_status
sched_view(const struct cfg *cfg, struct queue *q, struct sched_view *out,
    char *err, size_t errlen)
{
	struct sched_db sd;
	const char *table = queue_name(q);
	char cause[768];
	enum db_status st;
	size_t i;

	memset(out, 0, cfg->nschedules * sizeof *out);
	st = sd_open(&sd, q, cause, sizeof cause);
	for (i = 0; st == DB_OK && i < cfg->nschedules; i++) {
		out[i].s = &cfg->schedules[i];
		st = view_one(&sd, table, &out[i], cause, sizeof cause);
	}
	st = sd_close(&sd, st, cause, sizeof cause);
	if (st != DB_OK)
		errf(err, errlen, "read schedules: %s", cause);
	return st;
}
