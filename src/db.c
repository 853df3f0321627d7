/*
 * db.c - libmariadb connection and prepared-statement plumbing.
 *
 * The queue module says what to run; this file knows how: binding, the
 * two-step fetch of columns of unknown length, and sorting errors into the
 * few kinds the runner must tell apart (server gone: exit 69; schema
 * missing: exit 78; deadlock: try again; the rest: exit 70).
 */
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "util.h"

#define DB_MAX_ARGS 64
/* MySQL 8.0.24+ says this before it closes an idle connection. */
#define ER_CLIENT_INTERACTION_TIMEOUT 4031
#define DB_MAX_COLS 32
#define DB_FIRST_FETCH 256

enum db_status
db_classify(unsigned int errnum)
{
	switch (errnum) {
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_UNKNOWN_HOST:
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_SERVER_LOST_EXTENDED:
	case ER_ACCESS_DENIED_ERROR:
	case ER_DBACCESS_DENIED_ERROR:
	case ER_TABLEACCESS_DENIED_ERROR:
	case ER_COLUMNACCESS_DENIED_ERROR:
	case ER_HOST_NOT_PRIVILEGED:
	case ER_HOST_IS_BLOCKED:
	case ER_CON_COUNT_ERROR:
	case ER_TOO_MANY_USER_CONNECTIONS:
	case ER_SERVER_SHUTDOWN:
	case ER_CONNECTION_KILLED:
	case ER_CLIENT_INTERACTION_TIMEOUT:
		return DB_UNREACHABLE;
	case ER_BAD_DB_ERROR:
	case ER_NO_SUCH_TABLE:
	case ER_BAD_FIELD_ERROR:
	case ER_KEY_DOES_NOT_EXISTS:
	case ER_UNKNOWN_TIME_ZONE:
		return DB_SCHEMA;
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
		return DB_CONFLICT;
	/* The value, not the server, is at fault: a payload its JSON check
	 * refuses (nested too deep), text too long or not in the charset. */
	case ER_CONSTRAINT_FAILED:
	case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:
	case ER_TRUNCATED_WRONG_VALUE:
	case ER_DATA_TOO_LONG:
	case ER_WARN_DATA_OUT_OF_RANGE:
	case ER_BAD_NULL_ERROR:
		return DB_BAD_INPUT;
	default:
		return DB_ERROR;
	}
}

void
db_quote_ident(const char *name, char *out, size_t outlen)
{
	size_t o = 0;

	if (outlen < 3) {
		if (outlen > 0)
			out[0] = '\0';
		return;
	}
	out[o++] = '`';
	for (; *name != '\0' && o + 3 < outlen; name++) {
		if (*name == '`')
			out[o++] = '`';	/* a backquote is doubled */
		out[o++] = *name;
	}
	out[o++] = '`';
	out[o] = '\0';
}

static void
describe_target(struct db *db, const struct cfg_db *cfg)
{
	if (cfg->socket != NULL)
		snprintf(db->where, sizeof db->where, "%s", cfg->socket);
	else if (cfg->host == NULL || strcmp(cfg->host, "localhost") == 0)
		snprintf(db->where, sizeof db->where,
		    "localhost (default socket)");
	else
		snprintf(db->where, sizeof db->where, "%s:%lu", cfg->host,
		    cfg->port);
}

static enum db_status
set_time_zone(struct db *db, const char *tz, char *err, size_t errlen)
{
	MYSQL_STMT *stmt = NULL;
	struct db_arg arg = DB_STR(tz);
	enum db_status st;

	st = db_prepare(db, "SET time_zone = ?", &stmt, err, errlen);
	if (st == DB_OK)
		st = db_execute(db, stmt, &arg, 1, err, errlen);
	if (stmt != NULL)
		mysql_stmt_close(stmt);
	if (st != DB_OK) {
		char cause[256];

		snprintf(cause, sizeof cause, "%s", err);
		errf(err, errlen, "set time_zone '%s' on %s: %s", tz,
		    db->where, cause);
	}
	return st;
}

enum db_status
db_connect(struct db *db, const struct cfg_db *cfg, char *err, size_t errlen)
{
	unsigned int timeout = (unsigned int)cfg->connect_timeout;
	enum db_status st;

	describe_target(db, cfg);
	db->cfg = cfg;
	db->conn = mysql_init(NULL);
	if (db->conn == NULL) {
		errf(err, errlen, "connect to %s: out of memory", db->where);
		return DB_ERROR;
	}
	mysql_options(db->conn, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(db->conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	/* Every statement jobrun runs is its own transaction; READ COMMITTED
	 * keeps the claim's scan from taking gap locks, which otherwise make
	 * concurrent claims and marks deadlock far more often. */
	mysql_options(db->conn, MYSQL_INIT_COMMAND,
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	if (mysql_real_connect(db->conn, cfg->socket != NULL ? NULL :
	    cfg->host, cfg->user, cfg->password, cfg->database,
	    (unsigned int)cfg->port, cfg->socket, 0) == NULL) {
		db->last_errno = mysql_errno(db->conn);
		st = db_classify(db->last_errno);
		errf(err, errlen, "connect to %s: %s", db->where,
		    mysql_error(db->conn));
		db_close(db);
		return st == DB_OK || st == DB_CONFLICT ? DB_UNREACHABLE : st;
	}
	if (cfg->time_zone != NULL) {
		st = set_time_zone(db, cfg->time_zone, err, errlen);
		if (st != DB_OK) {
			db_close(db);
			return st;
		}
	}
	return DB_OK;
}

void
db_close(struct db *db)
{
	if (db->conn != NULL)
		mysql_close(db->conn);
	db->conn = NULL;
}

int
db_connection_lost(unsigned int errnum)
{
	return errnum == CR_SERVER_GONE_ERROR || errnum == CR_SERVER_LOST ||
	    errnum == CR_SERVER_LOST_EXTENDED || errnum == ER_CONNECTION_KILLED ||
	    errnum == ER_SERVER_SHUTDOWN ||
	    errnum == ER_CLIENT_INTERACTION_TIMEOUT;
}

enum db_status
db_reconnect(struct db *db, char *err, size_t errlen)
{
	db_close(db);
	return db_connect(db, db->cfg, err, errlen);
}

static enum db_status
stmt_failure(MYSQL_STMT *stmt, const char *what, char *err, size_t errlen)
{
	errf(err, errlen, "%s: %s", what, mysql_stmt_error(stmt));
	return db_classify(mysql_stmt_errno(stmt));
}

enum db_status
db_prepare(struct db *db, const char *sql, MYSQL_STMT **out, char *err,
    size_t errlen)
{
	MYSQL_STMT *stmt = mysql_stmt_init(db->conn);
	enum db_status st;

	*out = NULL;
	if (stmt == NULL) {
		errf(err, errlen, "prepare: %s", mysql_error(db->conn));
		db->last_errno = mysql_errno(db->conn);
		return db_classify(db->last_errno);
	}
	if (mysql_stmt_prepare(stmt, sql, strlen(sql)) != 0) {
		db->last_errno = mysql_stmt_errno(stmt);
		st = stmt_failure(stmt, "prepare", err, errlen);
		mysql_stmt_close(stmt);
		return st;
	}
	*out = stmt;
	return DB_OK;
}

enum db_status
db_execute(struct db *db, MYSQL_STMT *stmt, const struct db_arg *args,
    unsigned nargs, char *err, size_t errlen)
{
	MYSQL_BIND small_bind[DB_MAX_ARGS], *bind = small_bind;
	unsigned long small_lengths[DB_MAX_ARGS], *lengths = small_lengths;
	enum db_status st = DB_OK;
	unsigned i;

	if (nargs != mysql_stmt_param_count(stmt)) {
		errf(err, errlen, "execute: %u arguments for %lu parameters",
		    nargs, mysql_stmt_param_count(stmt));
		return DB_ERROR;
	}
	/* Multi-row inserts bind thousands; most statements a few. */
	if (nargs > DB_MAX_ARGS) {
		bind = xcalloc(nargs, sizeof *bind);
		lengths = xcalloc(nargs, sizeof *lengths);
	} else
		memset(bind, 0, sizeof small_bind);
	for (i = 0; i < nargs; i++) {
		if (args[i].is_str && args[i].str == NULL) {
			bind[i].buffer_type = MYSQL_TYPE_NULL;
		} else if (args[i].is_str) {
			lengths[i] = args[i].len != DB_STRLEN ? args[i].len :
			    strlen(args[i].str);
			bind[i].buffer_type = MYSQL_TYPE_STRING;
			bind[i].buffer = (void *)(uintptr_t)args[i].str;
			bind[i].buffer_length = lengths[i];
			bind[i].length = &lengths[i];
		} else {
			bind[i].buffer_type = MYSQL_TYPE_LONGLONG;
			bind[i].buffer = (void *)(uintptr_t)&args[i].num;
			bind[i].is_unsigned = 1;
		}
	}
	if (nargs > 0 && mysql_stmt_bind_param(stmt, bind) != 0)
		st = stmt_failure(stmt, "bind", err, errlen);
	else if (mysql_stmt_execute(stmt) != 0)
		st = stmt_failure(stmt, "execute", err, errlen);
	if (st != DB_OK)
		db->last_errno = mysql_stmt_errno(stmt);
	if (bind != small_bind) {
		free(bind);
		free(lengths);
	}
	return st;
}

static void
free_cols(char **cols, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		free(cols[i]);
		cols[i] = NULL;
	}
}

size_t
db_args_size(const struct db_arg *args, unsigned nargs)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < nargs; i++)
		if (args[i].is_str && args[i].str != NULL)
			n += args[i].len != DB_STRLEN ? args[i].len :
			    strlen(args[i].str);
		else
			n += 8;
	return n;
}

int
db_fetch(MYSQL_STMT *stmt, char **cols, unsigned ncols, char *err,
    size_t errlen)
{
	return db_fetch_len(stmt, cols, NULL, ncols, err, errlen);
}

int
db_fetch_len(MYSQL_STMT *stmt, char **cols, size_t *lens, unsigned ncols,
    char *err, size_t errlen)
{
	MYSQL_BIND bind[DB_MAX_COLS];
	unsigned long lengths[DB_MAX_COLS];
	my_bool nulls[DB_MAX_COLS];
	unsigned i;
	int rc;

	if (ncols > DB_MAX_COLS || ncols != mysql_stmt_field_count(stmt)) {
		errf(err, errlen, "fetch: %u columns asked, %u returned",
		    ncols, mysql_stmt_field_count(stmt));
		return -1;
	}
	memset(bind, 0, sizeof bind);
	for (i = 0; i < ncols; i++) {
		cols[i] = xmalloc(DB_FIRST_FETCH);
		bind[i].buffer_type = MYSQL_TYPE_STRING;
		bind[i].buffer = cols[i];
		bind[i].buffer_length = DB_FIRST_FETCH;
		bind[i].length = &lengths[i];
		bind[i].is_null = &nulls[i];
	}
	if (mysql_stmt_bind_result(stmt, bind) != 0) {
		stmt_failure(stmt, "bind result", err, errlen);
		free_cols(cols, ncols);
		return -1;
	}
	rc = mysql_stmt_fetch(stmt);
	if (rc == MYSQL_NO_DATA) {
		free_cols(cols, ncols);
		mysql_stmt_free_result(stmt);
		return 0;
	}
	if (rc == 1) {
		stmt_failure(stmt, "fetch", err, errlen);
		free_cols(cols, ncols);
		return -1;
	}
	for (i = 0; i < ncols; i++) {
		if (lens != NULL)
			lens[i] = nulls[i] ? 0 : lengths[i];
		if (nulls[i]) {
			free(cols[i]);
			cols[i] = NULL;
			continue;
		}
		if (lengths[i] >= DB_FIRST_FETCH) {
			/* Longer than the first buffer: fetch it again whole. */
			cols[i] = xrealloc(cols[i], lengths[i] + 1);
			bind[i].buffer = cols[i];
			bind[i].buffer_length = lengths[i] + 1;
			if (mysql_stmt_fetch_column(stmt, &bind[i], i, 0)) {
				stmt_failure(stmt, "fetch column", err,
				    errlen);
				free_cols(cols, ncols);
				return -1;
			}
		}
		cols[i][lengths[i]] = '\0';
	}
	return 1;
}

void
db_done(MYSQL_STMT *stmt)
{
	mysql_stmt_free_result(stmt);
}
