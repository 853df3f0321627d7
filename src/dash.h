/*
 * dash.h - "jobrun report": the state of the queue on one page.
 *
 * dash.c gathers it (through queue_report.c and queue_info.c) and prints
 * it as JSON; dash_html.c renders the same struct as one self-contained
 * HTML page.
 */
#ifndef JOBRUN_DASH_H
#define JOBRUN_DASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "attempts.h"
#include "latency.h"
#include "priority_view.h"
#include "retention_view.h"

#define DASH_HOURS 24		/* the charts' hours, the current one last */
#define DASH_FAILURES 20	/* the latest failures listed */

/* One exact type, or the total of them all. */
struct dash_type {
	char *type;			/* NULL for the total */
	size_t type_len;		/* its bytes, NUL ones too */
	const char *handler;		/* "exec", "http", ...; NULL: none */
	unsigned long pending, due, processing, expired, failed;
	long lag;			/* seconds the oldest due job waited, -1 */
	unsigned long done_day, failed_day;	/* ended in the charted hours */
	unsigned long deadline_day;	/* of failed_day, past their deadline */
};

/* A job that failed for good, its values as stored (any bytes). */
/* An attempt of a failed job (sql/010_attempts.sql): its columns as
 * attempts_each gives them (AC_*, attempts.h). */
struct dash_attempt {
	char *cols[ATTEMPT_COLS];
	size_t lens[ATTEMPT_COLS];
};

struct dash_failure {
	uint64_t id;
	char *type, *business_key, *last_error;	/* NULL for SQL NULL */
	size_t type_len, business_key_len, last_error_len;
	unsigned long attempts, max_attempts;
	char *finished_at;
	struct dash_attempt *history;	/* oldest first */
	size_t nhistory;
};

struct dash {
	char written_at[32];	/* this host's clock, UTC */
	char *db_now;		/* the database's NOW() */
	char *hours_from;	/* the first charted hour, the database's */
	int has_hours;		/* idx_finished is there: the hours counted */
	unsigned long done[DASH_HOURS], failures[DASH_HOURS];
	struct dash_type total;
	struct dash_type *types;
	size_t ntypes;
	struct dash_failure *last;
	size_t nlast;
	int has_history;	/* the table has sql/010's attempts */
	struct latency_view latency;	/* with sql/008_start_latency.sql */
	struct retention_view retention;	/* keep_* rules, rows past */
	struct priority_view priorities;	/* pending jobs by level */
	json_t *changes;	/* with sql/011_audit.sql: the last
				 * AUDIT_REPORT_ROWS operators' changes, as
				 * audit_report_json gives them; else NULL */
	/* Flow control (caps, rates, pauses) and schedules and fan-ins
	 * come from later issues: their figures go here, gathered in
	 * dash.c's dash_gather, and each gets a section in dash_html.c's
	 * sections[] and a member in dash_json. */
};

void dash_free(struct dash *d);

/* The page (dash_html.c). */
void dash_html(FILE *f, const struct dash *d);

/* s (len bytes, any bytes) as HTML text: every byte that is not
 * well-formed UTF-8 and every control character shown as an escape
 * (utf8_escape), then &, <, >, " and ' as entities, so that it can go in
 * an element or a quoted attribute and reads as text.  At most max bytes
 * of the escaped text, then an ellipsis. */
void dash_html_text(FILE *f, const char *s, size_t len, size_t max,
                    int keep_newlines);

#endif
