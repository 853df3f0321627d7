/*
 * sql.h - jobrun's statement texts (see sql.c).
 */
#ifndef BENCH_SQL_H
#define BENCH_SQL_H

#include <stddef.h>

#include "../src/queue_sql.h"	/* the Q_* statement numbers */

/* The text of statement which (Q_*) on table, with ntypes placeholders in
 * the claim's type list; 0, or -1 when it does not fit in out. */
int bench_statement(const char *table, int which, size_t ntypes, char *out,
                    size_t outlen);

/* Prototypes of changes to jobrun's claim, not jobrun's statements (see
 * floor.c).  bench_cursor_claim: Q_CLAIM (the same SET) with a cursor,
 * "AND (next_run_at > ? OR (next_run_at = ? AND id > ?))"; parameters:
 * token, lock seconds (twice), cursor time, cursor time, cursor id, the
 * types.  bench_skip_locked: "SELECT id ... FOR UPDATE SKIP LOCKED" on
 * idx_pick (parameters: [cursor time, cursor time, cursor id,] the types),
 * and "UPDATE ... SET <jobrun's claim> WHERE id = ?" (token, lock seconds
 * twice, id). */
int bench_cursor_claim(const char *table, size_t ntypes, char *out,
                       size_t outlen);
int bench_skip_locked(const char *table, size_t ntypes, int cursor,
                      char *sel, size_t sellen, char *upd, size_t updlen);

#endif
