/*
 * autocommit-probe.c - does wsrep_retry_autocommit cover prepared
 * statements?  A measurement for bench/GALERA.md, not part of the test.
 *
 * Runs jobrun's claim (one autocommit UPDATE ... ORDER BY next_run_at, id
 * LIMIT 1) and a fenced success mark in a loop until the queue is empty,
 * either as text queries (COM_QUERY) or as a prepared statement
 * (COM_STMT_EXECUTE, as jobrun does), and counts the 1213 errors the
 * client sees.  Started two per node on all three nodes of a cluster from
 * test/galera/cluster, it shows how many conflicts the server's own
 * retries (wsrep_retry_autocommit) absorb in each protocol.
 *
 *   cc -O2 -o probe test/galera/autocommit-probe.c \
 *       $(pkg-config --cflags --libs libmariadb)
 *   probe SOCKET DATABASE text|ps      (on a polling_jobs table full of
 *                                       due pending jobs)
 *
 * Prints "MODE claims=N deadlocks=N other=N".
 */
#define _DEFAULT_SOURCE
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char claim[] =
    "UPDATE polling_jobs FORCE INDEX (idx_pick) SET status = 'processing',"
    " locked_by = '%s', locked_until = NOW() + INTERVAL 60 SECOND,"
    " attempts = attempts + 1, updated_at = NOW(), id = LAST_INSERT_ID(id)"
    " WHERE status = 'pending' AND next_run_at <= NOW()"
    " ORDER BY next_run_at, id LIMIT 1";

int
main(int argc, char **argv)
{
	MYSQL *m = mysql_init(NULL);
	MYSQL_STMT *st;
	char token[64], q[1024], mark[256];
	long claims = 0, deadlocks = 0, other = 0;
	int ps;

	if (argc != 4 || m == NULL) {
		fprintf(stderr, "usage: probe SOCKET DATABASE text|ps\n");
		return 64;
	}
	ps = strcmp(argv[3], "ps") == 0;
	snprintf(token, sizeof token, "probe-%d", (int)getpid());
	if (mysql_real_connect(m, NULL, "root", NULL, argv[2], 0, argv[1],
	    0) == NULL) {
		fprintf(stderr, "%s\n", mysql_error(m));
		return 69;
	}
	mysql_query(m, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	snprintf(q, sizeof q, claim, token);
	st = mysql_stmt_init(m);
	if (ps && mysql_stmt_prepare(st, q, strlen(q)) != 0) {
		fprintf(stderr, "%s\n", mysql_stmt_error(st));
		return 70;
	}
	for (;;) {
		unsigned long long changed, id;
		unsigned err;
		int rc;

		if (ps) {
			rc = mysql_stmt_execute(st);
			err = mysql_stmt_errno(st);
			changed = mysql_stmt_affected_rows(st);
			id = mysql_stmt_insert_id(st);
		} else {
			rc = mysql_query(m, q);
			err = mysql_errno(m);
			changed = mysql_affected_rows(m);
			id = mysql_insert_id(m);
		}
		if (rc != 0) {
			if (err == 1213)
				deadlocks++;
			else
				other++;
			if (other > 100)
				break;
			usleep(2000);
			continue;
		}
		if (changed == 0)
			break;
		claims++;
		snprintf(mark, sizeof mark, "UPDATE polling_jobs SET"
		    " status = 'success', locked_by = NULL WHERE id = %llu"
		    " AND locked_by = '%s'", id, token);
		while (mysql_query(m, mark) != 0 && mysql_errno(m) == 1213)
			;
	}
	printf("%s claims=%ld deadlocks=%ld other=%ld\n", argv[3], claims,
	    deadlocks, other);
	mysql_stmt_close(st);
	mysql_close(m);
	return 0;
}
