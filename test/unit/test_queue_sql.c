/*
 * test_queue_sql.c - the job table's statements as queue_sql.h lays them
 * out: every id has its text in exactly one file's table, takes few
 * enough flags for its variants to be kept apart, and each variant (a
 * set of its flags) is prepared and kept in a place of its own, so no
 * variant is prepared over another's and none more often than once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "queue_sql.h"

#define files queue_sql_files
#define NFILES QUEUE_SQL_FILES

static unsigned
bits(unsigned v)
{
	unsigned n = 0;

	for (; v != 0; v &= v - 1)
		n++;
	return n;
}

/* Each id is one file's, and its pieces ask only for its own flags. */
static void
test_one_owner(void **state)
{
	const struct queue_piece *p;
	unsigned id, owners;
	size_t f;

	(void)state;
	for (id = 0; id < Q_COUNT; id++) {
		owners = 0;
		for (f = 0; f < NFILES; f++)
			if (files[f][id].pieces != NULL)
				owners++;
		assert_int_equal(owners, 1);
		const struct queue_sql *sql = queue_sql_of(id);
		assert_non_null(sql->purpose);
		assert_int_equal(Q_ID(sql->flags), 0);
		assert_true(bits(sql->flags) <= QUEUE_VARIANTS_LOG);
		assert_int_equal(sql->flag & ~sql->flags, 0);
		for (p = sql->pieces; p->text != NULL; p++)
			assert_int_equal((p->when | p->unless) & ~sql->flags,
			    0);
	}
}

/* Every set of a statement's flags has its own place, and its text. */
static void
test_variants_apart(void **state)
{
	struct queue *q = calloc(1, sizeof *q);
	MYSQL_STMT **seen[QUEUE_VARIANTS];
	unsigned id, sub, flags, n, i;
	char *text;

	(void)state;
	strcpy(q->table, "`jobs`");
	for (id = 0; id < Q_COUNT; id++) {
		flags = queue_sql_of(id)->flags;
		n = 0;
		/* every subset of flags, as Knuth's (sub - flags) & flags */
		sub = 0;
		do {
			seen[n] = queue_slot(q, id | sub);
			for (i = 0; i < n; i++)
				assert_ptr_not_equal(seen[i], seen[n]);
			text = queue_stmt_text(q, id | sub);
			assert_true(text[0] != '\0');
			assert_null(strstr(text, "$s"));
			free(text);
			n++;
			sub = (sub - flags) & flags;
		} while (sub != 0);
		assert_int_equal(n, 1u << bits(flags));
	}
	free(q);
}

/* The typed claim, piece by piece, is the text the plan tests know. */
static void
test_claim_text(void **state)
{
	struct queue *q = calloc(1, sizeof *q);
	char *text;

	(void)state;
	strcpy(q->table, "`j`");
	text = queue_stmt_text(q, Q_CLAIM | Q_F_TYPE | Q_F_AFTER);
	assert_string_equal(text, "UPDATE `j` FORCE INDEX (idx_type_pick)"
	    " SET status = 'processing', locked_by = CONCAT(?, '@',"
	    " UNIX_TIMESTAMP() + ?), locked_until = NOW() + INTERVAL ? SECOND,"
	    " attempts = attempts + 1, updated_at = NOW(),"
	    " id = LAST_INSERT_ID(id) WHERE status = 'pending' AND type = ?"
	    " AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	    " AND next_run_at <= NOW() AND (next_run_at > ? OR"
	    " (next_run_at = ? AND id > ?)) ORDER BY next_run_at, id LIMIT 1");
	free(text);
	q->claim_types = 2;
	text = queue_stmt_text(q, Q_LIST | Q_F_STATUS);
	assert_string_equal(text, "SELECT id, type, business_key, status,"
	    " attempts, max_attempts, next_run_at, updated_at, last_error,"
	    " TIMESTAMPDIFF(SECOND, NOW(), next_run_at)"
	    " FROM `j` WHERE id < ? AND status = ? ORDER BY id DESC LIMIT ?");
	free(text);
	assert_string_equal(queue_purpose(Q_OWNER | Q_F_LOCKED),
	    "read what a lost commit kept");
	assert_string_equal(queue_purpose(Q_ENQUEUE | Q_F_AGAIN),
	    "enqueue job again");
	assert_string_equal(queue_purpose(Q_ENQUEUE), "enqueue job");
	free(q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_owner),
		cmocka_unit_test(test_variants_apart),
		cmocka_unit_test(test_claim_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
