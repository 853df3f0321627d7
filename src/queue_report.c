/*
 * queue_report.c - what "jobrun report" reads from the job table.
 *
 * The report is refreshed every minute by cron, so its cost must not grow
 * with the history: finished rows are never counted.  The backlog is
 * queue_backlog's (queue_info.c: ranges of the backlog, not the history).
 * The jobs finished per hour come from idx_finished (status, finished_at,
 * type), a migration (sql/005_finished.sql): its success and failed
 * ranges since the first charted hour hold exactly the last day's jobs,
 * read from the index alone, so the cost follows the jobs of the last 24
 * hours and not the rows behind them.  Without the index the hours are
 * left out rather than counted by a scan.  The latest failures are the
 * tail of a failed range: 20 rows whatever the table holds.
 *
 * Nothing here is written by the runner: the report needs no call in the
 * claim or mark path, only the index, which the server keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"
#include "util.h"

const struct queue_sql queue_report_sql[Q_COUNT] = {
	/* The report's clock: now, and the first of the 24 hours its
	 * charts cover (the current hour is the last). */
	[Q_REPORT_CLOCK] = { "read the database clock", Q_TEXT(
	    "SELECT NOW(), DATE_FORMAT(NOW() - INTERVAL 23 HOUR,"
	    " '%%Y-%%m-%%d %%H:00:00')"), 0, NULL, 0 },
	/* Jobs that ended since ? (bound four times), by exact type,
	 * outcome and hour: two ranges of idx_finished
	 * (sql/005_finished.sql), as long as the last day's jobs, whatever
	 * the history before it.  The success range is read from the index
	 * alone; the failed one's rows too, to tell the cancelled and those
	 * past their deadline apart. */
	[Q_REPORT_HOURS] = { "count finished jobs by hour", Q_TEXT(
	    "SELECT CAST(type AS BINARY), status,"
	    " TIMESTAMPDIFF(HOUR, ?, finished_at), COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_finished)"
	    " WHERE status = 'success' AND finished_at >= ? GROUP BY 1, 2, 3"
	    " UNION ALL SELECT CAST(type AS BINARY),"
	    " IF(last_error <=> " CANCELLED ", 'cancelled',"
	    " IF(last_error <=> " DEADLINE_PASSED ", 'deadline', status)),"
	    " TIMESTAMPDIFF(HOUR, ?, finished_at), COUNT(*)"
	    " FROM %1$s FORCE INDEX (idx_finished)"
	    " WHERE status = 'failed' AND finished_at >= ? GROUP BY 1, 2, 3"),
	    0, NULL, 0 },
	/* The ? latest failures: the tail of idx_finished's failed range,
	 * or, without it (Q_F_PICK), of idx_pick's (in the order they were
	 * due). */
	[Q_REPORT_FAILURES] = { "list the latest failures",
	    (const struct queue_piece[]){
		{ 0, 0, "SELECT id, type, business_key, attempts, max_attempts,"
		    " finished_at, last_error FROM %1$s FORCE INDEX (idx_" },
		{ 0, Q_F_PICK, "finished) WHERE status = 'failed'"
		    " AND NOT (last_error <=> " CANCELLED ")"
		    " ORDER BY finished_at DESC LIMIT ?" },
		{ Q_F_PICK, 0, "pick) WHERE status = 'failed'"
		    " AND NOT (last_error <=> " CANCELLED ")"
		    " ORDER BY next_run_at DESC, id DESC LIMIT ?" },
		{ 0, 0, NULL } }, Q_F_PICK, NULL, 0 },
};

enum db_status
queue_report_clock(struct queue *q, char **now, char **from, char *err,
    size_t errlen)
{
	char *cols[2] = { NULL, NULL };
	enum db_status st;
	int found = 0;

	st = queue_stmt_one(q, Q_REPORT_CLOCK, NULL, 0, cols, 2, &found, err,
	    errlen);
	if (st == DB_OK && (!found || cols[0] == NULL || cols[1] == NULL)) {
		errf(err, errlen, "read the database clock: no answer");
		st = DB_ERROR;
	}
	if (st != DB_OK) {
		free(cols[0]);
		free(cols[1]);
		cols[0] = cols[1] = NULL;
	}
	*now = cols[0];
	*from = cols[1];
	return st;
}

struct hours_walk {
	void (*fn)(void *arg, const struct queue_hour_count *);
	void *arg;
};

static int
on_hour(void *arg, char **cols, const size_t *lens)
{
	struct hours_walk *w = arg;
	struct queue_hour_count h;

	/* an operator's cancel is not a failure to chart */
	if (cols[0] == NULL || cols[1] == NULL || cols[2] == NULL ||
	    strcmp(cols[1], "cancelled") == 0)
		return 0;
	h.type.s = cols[0];
	h.type.len = lens[0];
	h.deadline = strcmp(cols[1], "deadline") == 0;
	h.failed = h.deadline || strcmp(cols[1], "failed") == 0;
	/* A job finished "in the future" (the clock went back) has no
	 * hour on the chart; strtol reads the negative ones too. */
	h.hour = strtol(cols[2], NULL, 10);
	h.count = queue_number(cols[3]);
	w->fn(w->arg, &h);
	return 0;
}

enum db_status
queue_finished_hours(struct queue *q, const char *from,
    void (*fn)(void *arg, const struct queue_hour_count *), void *arg,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STR(from), DB_STR(from), DB_STR(from),
	    DB_STR(from) };
	struct hours_walk w = { fn, arg };

	return queue_stmt_walk(q, Q_REPORT_HOURS, args, 4, 4, on_hour, &w,
	    err, errlen);
}

struct failures_walk {
	void (*fn)(void *arg, const struct queue_failure *);
	void *arg;
};

static int
on_failure(void *arg, char **cols, const size_t *lens)
{
	struct failures_walk *w = arg;
	struct queue_failure f;

	f.id = queue_number(cols[0]);
	f.type.s = cols[1];
	f.type.len = lens[1];
	f.business_key.s = cols[2];
	f.business_key.len = lens[2];
	f.attempts = queue_number(cols[3]);
	f.max_attempts = queue_number(cols[4]);
	f.finished_at = cols[5];
	f.last_error.s = cols[6];
	f.last_error.len = lens[6];
	w->fn(w->arg, &f);
	return 0;
}

enum db_status
queue_last_failures(struct queue *q, unsigned long limit,
    void (*fn)(void *arg, const struct queue_failure *), void *arg,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(limit) };
	struct failures_walk w = { fn, arg };

	return queue_stmt_walk(q, Q_REPORT_FAILURES | (queue_finished_index(q) ?
	    0 : Q_F_PICK), args, 1, 7, on_failure, &w, err, errlen);
}
