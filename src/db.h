/*
 * db.h - a connection to MariaDB/MySQL and prepared statements over it.
 *
 * Every statement jobrun runs is prepared and bound: no value from a job, a
 * command line or a configuration file is ever pasted into SQL text.
 */
#ifndef JOBRUN_DB_H
#define JOBRUN_DB_H

#include <mysql.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* What went wrong, in the terms the exit status needs. */
enum db_status {
	DB_OK = 0,
	DB_UNREACHABLE,		/* the server or the account is not available
				 * now: no server, connection lost, login
				 * refused, account locked or over a limit,
				 * server read-only */
	DB_SCHEMA,		/* table, column, index or time zone missing */
	DB_CONFLICT,		/* deadlock or lock wait timeout: try again */
	DB_BAD_INPUT,		/* a value the server will not take */
	DB_DENIED,		/* logged in, but a privilege is missing */
	DB_INTERRUPTED,		/* the server stopped the statement (a
				 * statement timeout, KILL QUERY): nothing
				 * changed, the next run may get through */
	DB_ERROR		/* anything else */
};

struct db {
	MYSQL *conn;
	const struct cfg_db *cfg;	/* kept to reconnect */
	unsigned int last_errno;	/* of the last failed call */
	int timed_out;		/* it was read_timeout or write_timeout */
	char where[300];	/* "socket /run/mysqld/mysqld.sock" etc. */
	/* Read by the watchdog thread (watchdog.c) while a call blocks. */
	_Atomic int_least64_t busy_since;	/* now_ms() a call began, or 0 */
	_Atomic int fd;		/* the connection's socket, or -1 */
	_Atomic int abandoned;	/* given up on: no new connection */
};

/* Connect as the configuration says, in utf8mb4, in the configured session
 * time zone. */
enum db_status db_connect(struct db *db, const struct cfg_db *cfg,
                          char *err, size_t errlen);

void db_close(struct db *db);

/* The connection's TLS as "TLSv1.3, TLS_AES_256_GCM_SHA384" in buf: 1,
 * or 0 for a connection in clear. */
int db_tls(const struct db *db, char *buf, size_t len);

/* Whether errnum means the connection is gone (server restarted, killed
 * the session, or closed it after wait_timeout) rather than refused. */
int db_connection_lost(unsigned int errnum);

/* Connect again as db_connect did.  Prepared statements of the old
 * connection must be closed first.  An abandoned connection is not made
 * again (DB_UNREACHABLE). */
enum db_status db_reconnect(struct db *db, char *err, size_t errlen);

/* Give up on the server from another thread, at once: a call blocked on
 * the connection returns (connection lost), and no new one is made.
 * Async-signal-safe. */
void db_abandon(struct db *db);

/* One bound parameter: a string (NULL for SQL NULL) or a number, unsigned
 * unless is_signed (then num holds a long long's bits: DB_SNUM).
 * A string's length is len bytes, or strlen(str) when len is DB_STRLEN;
 * values that may hold NUL bytes (keys, payloads) pass their length. */
struct db_arg {
	int is_str;
	const char *str;
	size_t len;
	unsigned long long num;
	int is_signed;
};

#define DB_STRLEN ((size_t)-1)
#define DB_STR(s) ((struct db_arg){ .is_str = 1, .str = (s), .len = DB_STRLEN })
#define DB_STRN(s, n) ((struct db_arg){ .is_str = 1, .str = (s), .len = (n) })
#define DB_NUM(n) ((struct db_arg){ .num = (unsigned long long)(n) })
#define DB_SNUM(n) ((struct db_arg){ .num = (unsigned long long)(long long)(n), \
	.is_signed = 1 })

/* The total bytes of the values in args, for size checks. */
size_t db_args_size(const struct db_arg *args, unsigned nargs);

/* Prepare sql; err says what failed ("prepare: ..."). */
enum db_status db_prepare(struct db *db, const char *sql, MYSQL_STMT **out,
                          char *err, size_t errlen);

/* Bind args and execute; for a statement with a result, the result is
 * ready for db_fetch afterwards. */
enum db_status db_execute(struct db *db, MYSQL_STMT *stmt,
                          const struct db_arg *args, unsigned nargs,
                          char *err, size_t errlen);

/* Execute a write once for each of nrows rows of nargs arguments (args
 * row after row) in one round trip: MariaDB's bulk execution, which
 * db_bulk_supported says the server has.  No argument may be NULL.
 * Affected rows are the sum over the rows. */
enum db_status db_execute_bulk(struct db *db, MYSQL_STMT *stmt,
                               const struct db_arg *args, unsigned nargs,
                               unsigned nrows, char *err, size_t errlen);
int db_bulk_supported(const struct db *db);

/* Whether the server is MySQL, not MariaDB (MariaDB clears the MySQL
 * capability bit of its greeting); 0 when not connected. */
int db_is_mysql(const struct db *db);

/* Whether errnum is MySQL's refusal of a text as JSON (not JSON, or
 * nested too deep), where MariaDB's JSON_VALID answers 0. */
int db_json_refused(unsigned int errnum);
/* The error number of stmt's last call (a fetch's, which db_fetch_len
 * leaves in its message only). */
unsigned int db_stmt_errno(MYSQL_STMT *stmt);

/* "MySQL" or "MariaDB", and the command that loads the server's time
 * zone tables from the system's zoneinfo, as that server's tools name
 * it. */
const char *db_server_name(const struct db *db);
const char *db_tzinfo_command(const struct db *db);

/* Run sql, a statement without arguments or result (START TRANSACTION,
 * COMMIT, ROLLBACK), as its text; err says what failed. */
enum db_status db_query(struct db *db, const char *sql, char *err,
                        size_t errlen);

/* Fetch the next row of the last execution as ncols malloc'ed strings
 * (NULL for SQL NULL).  Returns 1 for a row, 0 when there are no more
 * (the result is then released), -1 on error. */
int db_fetch(MYSQL_STMT *stmt, char **cols, unsigned ncols, char *err,
             size_t errlen);

/* The same, with each column's length in lens (0 for NULL): columns may
 * hold NUL bytes. */
int db_fetch_len(MYSQL_STMT *stmt, char **cols, size_t *lens, unsigned ncols,
                 char *err, size_t errlen);

/* Free n columns as db_fetch gives them, and set them to NULL. */
void db_free_cols(char **cols, unsigned n);

/* Release what is left of a result. */
void db_done(MYSQL_STMT *stmt);

/* One server or client error jobrun knows: how it counts and what an
 * operator can do about it. */
struct db_error {
	unsigned int number;
	const char *name;	/* "ER_ACCOUNT_HAS_BEEN_LOCKED" */
	enum db_status status;
	const char *hint;	/* for the operator, or NULL */
};

/* The row for errnum, or NULL when jobrun does not know it. */
const struct db_error *db_error_info(unsigned int errnum);

/* How a server or client error number counts: its row's status, DB_ERROR
 * for an error jobrun does not know. */
enum db_status db_classify(unsigned int errnum);

/* `name` quoted as an SQL identifier into out. */
void db_quote_ident(const char *name, char *out, size_t outlen);

#endif
