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

/* A prototype of a change to jobrun's claim, not jobrun's statement (see
 * floor.c): "SELECT id ... FOR UPDATE SKIP LOCKED" on idx_pick, with
 * cursor past jobrun's cursor (src/queue_cycle.c PAST_CURSOR; parameters:
 * [cursor time, cursor time, cursor id,] the types), and "UPDATE ... SET
 * <jobrun's claim> WHERE id = ?" (token, lock seconds twice, id). */
int bench_skip_locked(const char *table, size_t ntypes, int cursor,
                      char *sel, size_t sellen, char *upd, size_t updlen);

#endif
