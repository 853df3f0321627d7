/*
 * sql.c - jobrun's own statement texts, for the benchmark's C helpers.
 *
 * The floor loop must run exactly the statements jobrun runs.  Rather than
 * a copy that would drift, this file hands out the text jobrun builds
 * (queue_stmt_text, src/queue.c) of any statement: its id ORed with its
 * flags (Q_CLAIM | Q_F_TYPE), as src/queue_sql.h has them.  It compiles
 * src/queue_cycle.c into itself for the claim's fragments (CLAIM_SET,
 * PAST_CURSOR are its own); the rest comes from jobrun's objects.
 */
#include "../src/queue_cycle.c"

#include "sql.h"

int
bench_statement(const char *table, int which, size_t ntypes, char *out,
    size_t outlen)
{
	struct queue q;
	char *text;
	int n;

	if (which < 0 || Q_ID((unsigned)which) >= Q_COUNT)
		return -1;
	memset(&q, 0, sizeof q);
	db_quote_ident(table, q.table, sizeof q.table);
	q.claim_types = ntypes;
	text = queue_stmt_text(&q, (unsigned)which);
	n = snprintf(out, outlen, "%s", text);
	free(text);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* "?, ?, ?" for n placeholders. */
static void
placeholders(char *out, size_t outlen, size_t n)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < n && o + 4 < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, i ? ", ?" : "?");
}

int
bench_skip_locked(const char *table, size_t ntypes, int cursor, char *sel,
    size_t sellen, char *upd, size_t updlen)
{
	char quoted[160], in[512];
	int n, m;

	db_quote_ident(table, quoted, sizeof quoted);
	placeholders(in, sizeof in, ntypes);
	n = snprintf(sel, sellen, "SELECT id FROM %s FORCE INDEX (idx_pick)"
	    " WHERE status = 'pending' AND next_run_at <= NOW()%s"
	    " AND CAST(type AS BINARY) IN (%s) ORDER BY next_run_at, id"
	    " LIMIT 1 FOR UPDATE SKIP LOCKED", quoted,
	    cursor ? PAST_CURSOR : "", in);
	m = snprintf(upd, updlen, "UPDATE %s" CLAIM_SET " WHERE id = ?",
	    quoted);
	return n < 0 || (size_t)n >= sellen || m < 0 || (size_t)m >= updlen ?
	    -1 : 0;
}
