/*
 * queue_probe.c - a waiting run's look at the table (--wait, idle.c):
 * the server's clock, how soon the claim's first job is due, and whether
 * a lock has expired, in one statement of plain reads that lock nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"
#include "util.h"

/* The claim's pending jobs, by its index (after "FORCE INDEX (idx_") and
 * its types, as Q_CLAIM binds them. */
#define PENDING_OF_CLAIM \
	{ 0, Q_F_TYPE, "pick) WHERE status = 'pending' AND" \
	    " CAST(type AS BINARY) IN (%2$s)" }, \
	{ Q_F_TYPE, 0, "type_pick) WHERE status = 'pending' AND" TYPE_IS }

const struct queue_sql queue_probe_sql[Q_COUNT] = {
	/* --wait: the server's clock, how soon the claim's first job is
	 * due (within a second, else NULL), and whether a lock has expired;
	 * plain reads of the pending and processing ranges of the claim's
	 * and the recovery's indexes, which lock nothing and wait for no
	 * lock.  The claim's types, as the claim binds them. */
	[Q_PROBE] = { "look for due work", (const struct queue_piece[]){
		{ 0, 0, "SELECT UNIX_TIMESTAMP(),"
		    " (SELECT CEILING(TIMESTAMPDIFF(MICROSECOND, NOW(6),"
		    " next_run_at) / 1000) FROM %1$s FORCE INDEX (idx_" },
		PENDING_OF_CLAIM,
		/* Due lately: past older claims' entries (queue_probe). */
		{ Q_F_AFTER, 0,
		    " AND next_run_at >= NOW() - INTERVAL 2 SECOND" },
		{ 0, 0, " AND next_run_at <= NOW() + INTERVAL 1 SECOND"
		    " ORDER BY next_run_at, id LIMIT 1)," },
		/* Every processing row's lock is read (locked_by is not in
		 * idx_lock), and each delete-marked one's too: from the head
		 * only. */
		{ 0, Q_F_AFTER, " EXISTS (SELECT 1 FROM %1$s FORCE INDEX"
		    " (idx_lock) WHERE status = 'processing' AND "
		    LOCK_EXPIRED ")" },
		{ Q_F_AFTER, 0, " 0" },
		{ 0, 0, NULL } }, Q_F_TYPE | Q_F_AFTER, NULL, 0 },
	/* Whether any of the claim's jobs is due, by a plain read that
	 * waits for no lock (queue_due): the claim's, in its messages.  The
	 * claim's types, as it binds them. */
	[Q_DUE] = { "claim a job", (const struct queue_piece[]){
		{ 0, 0, "SELECT id, next_run_at FROM %1$s FORCE INDEX (idx_" },
		PENDING_OF_CLAIM,
		{ 0, 0, " AND next_run_at <= NOW()"
		    " ORDER BY next_run_at, id LIMIT 1" },
		{ 0, 0, NULL } }, Q_F_TYPE, NULL, 0, 0 },
};

/* The first due job of the claim's (which, Q_CLAIM's variant), its id
 * (0: none) and next_run_at as the server wrote it: a plain read, asked
 * when a claim gave up waiting for a row's lock (queue_cycle.c).  A job
 * in a transaction not yet committed is not due to it, nor to a claim. */
enum db_status
queue_due(struct queue *q, unsigned which, const char *const *types,
    size_t ntypes, uint64_t *id, char *at, size_t atlen, char *err,
    size_t errlen)
{
	unsigned look = (which & Q_F_TYPE) | Q_DUE, n;
	char *cols[2] = { NULL, NULL };
	struct db_arg *args;
	enum db_status st;
	int found = 0;

	*id = 0;
	at[0] = '\0';
	args = queue_claim_args(which & (Q_F_TYPE | 0xffu), types, ntypes, 0,
	    "", &n);
	st = queue_stmt_one(q, look, args + 3, n - 3, cols, 2, &found, err,
	    errlen);
	free(args);
	if (st == DB_OK && found)
		*id = queue_number(cols[0]);
	if (st == DB_OK && found && (*id == 0 || cols[1] == NULL ||
	    strlen(cols[1]) >= atlen)) {
		errf(err, errlen, "%s in %s: no id or time", queue_purpose(look),
		    q->table);
		st = DB_ERROR;
	}
	if (st == DB_OK && found)
		memcpy(at, cols[1], strlen(cols[1]) + 1);
	free(cols[0]);
	free(cols[1]);
	return st;
}

/* When to look from the head next, after one that took took_us:
 * PROBE_HEAD_SHARE (queue_sql.h). */
static void
probe_head_gap(struct queue *q, int64_t took_us)
{
	int64_t gap = took_us * PROBE_HEAD_SHARE / 1000;

	q->probe_head_ms = now_ms();
	q->probe_head_gap_ms = gap < QUEUE_CURSOR_MS ? QUEUE_CURSOR_MS :
	    gap > PROBE_HEAD_MAX_MS ? PROBE_HEAD_MAX_MS : gap;
}

enum db_status
queue_probe(struct queue *q, const char *const *types, size_t ntypes,
    struct queue_probe *out, char *err, size_t errlen)
{
	struct db_arg *args;
	char *cols[3] = { NULL, NULL, NULL };
	unsigned which, spread, n;
	enum db_status st;
	int64_t start;
	int found = 0;

	memset(out, 0, sizeof *out);
	out->due_ms = -1;
	which = queue_claim_stmt(q, ntypes, &spread) == Q_CLAIM ? Q_PROBE :
	    Q_PROBE | Q_F_TYPE;
	/* A waiting run probes ten times a second.  Every job claimed leaves
	 * delete-marked entries at the head of the pending range and in the
	 * processing range until purge removes them, and while purge lags (a
	 * long read view holds it back) a probe from the head steps over them
	 * all.  So a probe reads only the jobs due in the last two seconds (a
	 * job enqueued or put back now, a delay that ended), and one from the
	 * head, every QUEUE_CURSOR_MS or more, finds a job due long ago
	 * (inserted with an earlier time, committed late) and an expired lock:
	 * as the claim does with its cursor (the top of queue.c). */
	if (now_ms() - q->probe_head_ms < q->probe_head_gap_ms)
		which |= Q_F_AFTER;
	/* The claim's arguments but the lock's three. */
	args = queue_claim_args(which, types, ntypes, 0, "", &n);
	start = now_us();
	st = queue_stmt_one(q, which, args + 3, n - 3, cols, 3, &found, err,
	    errlen);
	free(args);
	out->took_us = now_us() - start;
	if (!(which & Q_F_AFTER))
		probe_head_gap(q, out->took_us);
	if (st == DB_OK && (!found || cols[0] == NULL ||
	    queue_int64(cols[0], &out->server_s) != 0)) {
		errf(err, errlen, "%s in %s: no answer", queue_purpose(which),
		    q->table);
		st = DB_ERROR;
	}
	if (st == DB_OK && cols[1] != NULL && queue_int64(cols[1],
	    &out->due_ms) == 0 && out->due_ms < 0)
		out->due_ms = 0;
	out->expired = st == DB_OK && cols[2] != NULL &&
	    strcmp(cols[2], "0") != 0;
	free(cols[0]);
	free(cols[1]);
	free(cols[2]);
	return st;
}
