/*
 * test_db.c - how each server and client error counts, and the exit
 * status it gives.
 *
 * The expectations are written here by number, not taken from the
 * headers' names, so a row filed under the wrong constant fails.  Every
 * row of db.c's table must be listed here and every number listed here
 * must be in the table: a row added without a decision on its exit
 * status fails too.  Numbers jobrun does not know stay DB_ERROR, exit 70.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>
#include <sysexits.h>

#include "command.h"
#include "db.h"

static const struct {
	unsigned int number;
	enum db_status status;
	int exit;
} want[] = {
	/* conflicts: run again, then 75 */
	{ 1020, DB_CONFLICT, EX_TEMPFAIL },	/* record changed (snapshot) */
	{ 1205, DB_CONFLICT, EX_TEMPFAIL },	/* lock wait timeout */
	{ 1213, DB_CONFLICT, EX_TEMPFAIL },	/* deadlock, Galera certification */
	{ 1689, DB_CONFLICT, EX_TEMPFAIL },	/* lock wait aborted */
	/* the server stopped the statement: 75, not run again */
	{ 1317, DB_INTERRUPTED, EX_TEMPFAIL },	/* KILL QUERY */
	{ 1412, DB_INTERRUPTED, EX_TEMPFAIL },	/* table definition changed */
	{ 1615, DB_INTERRUPTED, EX_TEMPFAIL },	/* needs re-preparing */
	{ 1969, DB_INTERRUPTED, EX_TEMPFAIL },	/* max_statement_time */
	{ 3024, DB_INTERRUPTED, EX_TEMPFAIL },	/* MySQL max_execution_time */
	/* server down, gone, or out of resources: 69 */
	{ 1021, DB_UNREACHABLE, EX_UNAVAILABLE },	/* disk full */
	{ 1037, DB_UNREACHABLE, EX_UNAVAILABLE },	/* out of memory */
	{ 1041, DB_UNREACHABLE, EX_UNAVAILABLE },	/* out of resources */
	{ 1053, DB_UNREACHABLE, EX_UNAVAILABLE },	/* shutdown in progress */
	{ 1114, DB_UNREACHABLE, EX_UNAVAILABLE },	/* table full */
	{ 1158, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 1159, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 1160, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 1161, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 1184, DB_UNREACHABLE, EX_UNAVAILABLE },	/* aborted connection */
	{ 1927, DB_UNREACHABLE, EX_UNAVAILABLE },	/* connection killed */
	{ 4031, DB_UNREACHABLE, EX_UNAVAILABLE },	/* MySQL idle timeout */
	{ 2001, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 2002, DB_UNREACHABLE, EX_UNAVAILABLE },	/* no socket */
	{ 2003, DB_UNREACHABLE, EX_UNAVAILABLE },	/* no TCP server */
	{ 2004, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 2005, DB_UNREACHABLE, EX_UNAVAILABLE },	/* unknown host */
	{ 2006, DB_UNREACHABLE, EX_UNAVAILABLE },	/* gone away */
	{ 2012, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 2013, DB_UNREACHABLE, EX_UNAVAILABLE },	/* lost during a query */
	{ 2055, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 5013, DB_UNREACHABLE, EX_UNAVAILABLE },
	{ 5014, DB_UNREACHABLE, EX_UNAVAILABLE },
	/* login refused, account locked or expired: 69 */
	{ 1043, DB_UNREACHABLE, EX_UNAVAILABLE },	/* bad handshake */
	{ 1045, DB_UNREACHABLE, EX_UNAVAILABLE },	/* access denied */
	{ 1129, DB_UNREACHABLE, EX_UNAVAILABLE },	/* host blocked */
	{ 1130, DB_UNREACHABLE, EX_UNAVAILABLE },	/* host not allowed */
	{ 1251, DB_UNREACHABLE, EX_UNAVAILABLE },	/* auth protocol */
	{ 1698, DB_UNREACHABLE, EX_UNAVAILABLE },	/* unix_socket denied */
	{ 1820, DB_UNREACHABLE, EX_UNAVAILABLE },	/* password expired */
	{ 1862, DB_UNREACHABLE, EX_UNAVAILABLE },	/* expired, at login */
	{ 3118, DB_UNREACHABLE, EX_UNAVAILABLE },	/* MySQL account locked */
	{ 4151, DB_UNREACHABLE, EX_UNAVAILABLE },	/* account locked */
	{ 2059, DB_UNREACHABLE, EX_UNAVAILABLE },	/* auth plugin missing */
	{ 2061, DB_UNREACHABLE, EX_UNAVAILABLE },	/* auth plugin error */
	{ 2026, DB_UNREACHABLE, EX_UNAVAILABLE },	/* TLS refused */
	{ 5010, DB_UNREACHABLE, EX_UNAVAILABLE },	/* plugin not allowed */
	/* connection limits: 69 */
	{ 1040, DB_UNREACHABLE, EX_UNAVAILABLE },	/* max_connections */
	{ 1203, DB_UNREACHABLE, EX_UNAVAILABLE },	/* max_user_connections */
	{ 1226, DB_UNREACHABLE, EX_UNAVAILABLE },	/* the account's limit */
	/* read-only or not ready: 69 */
	{ 1047, DB_UNREACHABLE, EX_UNAVAILABLE },	/* wsrep not ready */
	{ 1290, DB_UNREACHABLE, EX_UNAVAILABLE },	/* --read-only */
	{ 1792, DB_UNREACHABLE, EX_UNAVAILABLE },	/* read-only transaction */
	{ 1836, DB_UNREACHABLE, EX_UNAVAILABLE },	/* innodb_read_only */
	/* privileges: 77 */
	{ 1044, DB_DENIED, EX_NOPERM },	/* database */
	{ 1142, DB_DENIED, EX_NOPERM },	/* table */
	{ 1143, DB_DENIED, EX_NOPERM },	/* column */
	{ 1227, DB_DENIED, EX_NOPERM },	/* SUPER and the like */
	{ 1370, DB_DENIED, EX_NOPERM },	/* routine */
	/* schema: 78 */
	{ 1049, DB_SCHEMA, EX_CONFIG },	/* unknown database */
	{ 1054, DB_SCHEMA, EX_CONFIG },	/* unknown column */
	{ 1146, DB_SCHEMA, EX_CONFIG },	/* no such table */
	{ 1176, DB_SCHEMA, EX_CONFIG },	/* no such index */
	{ 1217, DB_SCHEMA, EX_CONFIG },	/* row referenced */
	{ 1288, DB_SCHEMA, EX_CONFIG },	/* view not updatable */
	{ 1298, DB_SCHEMA, EX_CONFIG },	/* unknown time zone */
	{ 1305, DB_SCHEMA, EX_CONFIG },	/* no such function */
	{ 1356, DB_SCHEMA, EX_CONFIG },	/* invalid view */
	{ 1665, DB_SCHEMA, EX_CONFIG },	/* binlog by statement */
	{ 1364, DB_SCHEMA, EX_CONFIG },	/* NOT NULL without default */
	{ 1442, DB_SCHEMA, EX_CONFIG },	/* trigger on its own table */
	{ 1451, DB_SCHEMA, EX_CONFIG },	/* row referenced */
	{ 1471, DB_SCHEMA, EX_CONFIG },	/* view not insertable */
	/* the value: 65 */
	{ 1048, DB_BAD_INPUT, EX_DATAERR },	/* NULL in NOT NULL */
	{ 1062, DB_BAD_INPUT, EX_DATAERR },	/* duplicate in another key */
	{ 1153, DB_BAD_INPUT, EX_DATAERR },	/* max_allowed_packet */
	{ 1216, DB_BAD_INPUT, EX_DATAERR },	/* no referenced row */
	{ 1264, DB_BAD_INPUT, EX_DATAERR },	/* out of range */
	{ 1292, DB_BAD_INPUT, EX_DATAERR },	/* wrong value */
	{ 1300, DB_BAD_INPUT, EX_DATAERR },	/* invalid character */
	{ 1301, DB_BAD_INPUT, EX_DATAERR },	/* result over the packet */
	{ 1366, DB_BAD_INPUT, EX_DATAERR },	/* wrong value for a field */
	{ 1406, DB_BAD_INPUT, EX_DATAERR },	/* data too long */
	{ 1452, DB_BAD_INPUT, EX_DATAERR },	/* no referenced row */
	{ 1586, DB_BAD_INPUT, EX_DATAERR },	/* duplicate, key named */
	{ 2020, DB_BAD_INPUT, EX_DATAERR },	/* client packet too large */
	{ 3140, DB_BAD_INPUT, EX_DATAERR },	/* MySQL invalid JSON */
	{ 3141, DB_BAD_INPUT, EX_DATAERR },	/* MySQL: not JSON, in a parameter */
	{ 3157, DB_BAD_INPUT, EX_DATAERR },	/* MySQL: JSON nested too deep */
	{ 3819, DB_BAD_INPUT, EX_DATAERR },	/* MySQL CHECK violated */
	{ 3988, DB_BAD_INPUT, EX_DATAERR },	/* MySQL: cannot convert */
	{ 4025, DB_BAD_INPUT, EX_DATAERR },	/* CHECK (JSON_VALID) */
};

#define NWANT (sizeof want / sizeof want[0])

static int
wanted(unsigned int number)
{
	size_t i;

	for (i = 0; i < NWANT; i++)
		if (want[i].number == number)
			return 1;
	return 0;
}

/* Every number listed above is in the table, with that status, and
 * gives that exit status. */
static void
test_every_row(void **state)
{
	const struct db_error *e;
	size_t i;

	(void)state;
	for (i = 0; i < NWANT; i++) {
		e = db_error_info(want[i].number);
		if (e == NULL)
			fail_msg("error %u is not in the table", want[i].number);
		assert_int_equal(e->number, want[i].number);
		if (e->status != want[i].status)
			fail_msg("error %u (%s): status %d, want %d",
			    want[i].number, e->name, e->status,
			    want[i].status);
		assert_int_equal(db_classify(want[i].number), want[i].status);
		if (cmd_exit_for(db_classify(want[i].number)) != want[i].exit)
			fail_msg("error %u (%s): exit %d, want %d",
			    want[i].number, e->name,
			    cmd_exit_for(db_classify(want[i].number)),
			    want[i].exit);
	}
}

/* Nothing is in the table that is not listed above: each row is a
 * decision the tests record. */
static void
test_no_row_unlisted(void **state)
{
	const struct db_error *e;
	unsigned int n;

	(void)state;
	for (n = 0; n < 70000; n++) {
		e = db_error_info(n);
		if (e != NULL && !wanted(n))
			fail_msg("error %u (%s) is in the table but not in "
			    "test_db.c", n, e->name);
	}
}

/* A row's name is the server's (ER_) or the client library's (CR_) for
 * that number, and a hint, when there is one, is one short line. */
static void
test_names_and_hints(void **state)
{
	const struct db_error *e;
	size_t i;
	int client;

	(void)state;
	for (i = 0; i < NWANT; i++) {
		e = db_error_info(want[i].number);
		assert_non_null(e);
		assert_non_null(e->name);
		client = (e->number >= 2000 && e->number < 3000) ||
		    e->number >= 5000;
		if (strncmp(e->name, client ? "CR_" : "ER_", 3) != 0)
			fail_msg("error %u: name %s", e->number, e->name);
		if (e->hint != NULL && (e->hint[0] == '\0' ||
		    strlen(e->hint) > 120 || strchr(e->hint, '\n') != NULL ||
		    strchr(e->hint, '(') != NULL))
			fail_msg("error %u: hint \"%s\"", e->number, e->hint);
	}
	assert_string_equal(db_error_info(4151)->name,
	    "ER_ACCOUNT_HAS_BEEN_LOCKED");
	assert_string_equal(db_error_info(1290)->name,
	    "ER_OPTION_PREVENTS_STATEMENT");
	assert_string_equal(db_error_info(1226)->name,
	    "ER_USER_LIMIT_REACHED");
	assert_string_equal(db_error_info(2020)->name,
	    "CR_NET_PACKET_TOO_LARGE");
}

/* The hints an operator reads for the conditions the issue names. */
static void
test_hints_say_what_happened(void **state)
{
	static const struct {
		unsigned int number;
		const char *says;
	} hints[] = {
		{ 1290, "read-only" },
		{ 1792, "read-only" },
		{ 1836, "innodb_read_only" },
		{ 4151, "locked" },
		{ 3118, "locked" },
		{ 1820, "expired" },
		{ 1862, "expired" },
		{ 1226, "MAX_USER_CONNECTIONS" },
		{ 1203, "max_user_connections" },
		{ 1040, "max_connections" },
		{ 1129, "FLUSH HOSTS" },
		{ 1142, "privilege" },
		{ 1143, "privilege" },
		{ 1044, "privilege" },
		{ 1153, "too large" },
		{ 2020, "too large" },
		{ 1364, "NOT NULL column without a default" },
		{ 1047, "Galera" },
		{ 1969, "max_statement_time" },
	};
	const struct db_error *e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof hints / sizeof hints[0]; i++) {
		e = db_error_info(hints[i].number);
		assert_non_null(e);
		if (e->hint == NULL || strstr(e->hint, hints[i].says) == NULL)
			fail_msg("error %u: hint \"%s\" does not say \"%s\"",
			    hints[i].number, e->hint ? e->hint : "(none)",
			    hints[i].says);
	}
}

/* Numbers jobrun does not know, or knows to mean "something unforeseen",
 * are DB_ERROR and exit 70: never a guess that trying again helps. */
static void
test_unknown_numbers(void **state)
{
	static const unsigned int unknown[] = {
		0, 1, 999, 1000, 1064,	/* syntax: a bug or a server too old */
		1105,			/* ER_UNKNOWN_ERROR */
		1644,			/* a trigger's SIGNAL */
		2000, 2008, 2014,	/* client: unknown, no memory, sync */
		2030, 2031, 2034, 2036, 2050, 2999, 3000, 4000, 4030, 4032,
		4150, 4152, 4999, 5000, 5012, 5015, 65535, 70000, UINT_MAX,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		if (db_error_info(unknown[i]) != NULL)
			fail_msg("error %u is in the table", unknown[i]);
		assert_int_equal(db_classify(unknown[i]), DB_ERROR);
	}
	assert_int_equal(cmd_exit_for(DB_ERROR), EX_SOFTWARE);
}

/* One exit status per kind, as jobrun(1) EXIT STATUS lists them. */
static void
test_exit_per_status(void **state)
{
	(void)state;
	assert_int_equal(cmd_exit_for(DB_OK), EX_OK);
	assert_int_equal(cmd_exit_for(DB_UNREACHABLE), 69);
	assert_int_equal(cmd_exit_for(DB_DENIED), 77);
	assert_int_equal(cmd_exit_for(DB_SCHEMA), 78);
	assert_int_equal(cmd_exit_for(DB_CONFLICT), 75);
	assert_int_equal(cmd_exit_for(DB_INTERRUPTED), 75);
	assert_int_equal(cmd_exit_for(DB_BAD_INPUT), 65);
	assert_int_equal(cmd_exit_for(DB_ERROR), 70);
}

/* queue.c reconnects after these, and only these, once. */
static void
test_connection_lost(void **state)
{
	static const unsigned int lost[] = { 2006, 2013, 2055, 1927, 1053,
	    4031 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof lost / sizeof lost[0]; i++) {
		assert_true(db_connection_lost(lost[i]));
		assert_int_equal(db_classify(lost[i]), DB_UNREACHABLE);
	}
	assert_false(db_connection_lost(2002));
	assert_false(db_connection_lost(1045));
	assert_false(db_connection_lost(1290));
	assert_false(db_connection_lost(1153));
	assert_false(db_connection_lost(2020));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row),
		cmocka_unit_test(test_no_row_unlisted),
		cmocka_unit_test(test_names_and_hints),
		cmocka_unit_test(test_hints_say_what_happened),
		cmocka_unit_test(test_unknown_numbers),
		cmocka_unit_test(test_exit_per_status),
		cmocka_unit_test(test_connection_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
