/*
 * db.c - libmariadb connection and prepared-statement plumbing.
 *
 * The queue module says what to run; this file knows how: binding, the
 * two-step fetch of columns of unknown length, and sorting errors into the
 * few kinds the exit status tells apart, by one table of error numbers
 * (server or account unavailable: exit 69; privilege missing: 77; schema:
 * 78; deadlock: try again, then 75; a bad value: 65; the rest: 70).
 */
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"
#include "db.h"
#include "util.h"

#define DB_MAX_ARGS 64
#define DB_MAX_COLS 32
#define DB_FIRST_FETCH 256

/* Numbers MySQL uses that MariaDB's headers do not name (MariaDB uses
 * 4031 for an error of CREATE TRIGGER, which jobrun never runs). */
#define ER_CLIENT_INTERACTION_TIMEOUT 4031

/* Hints shared by several rows. */
#define H_LOGIN "check user and password in [database] or " \
	"JOBRUN_DB_PASSWORD, and the hosts the account may connect from"
#define H_LOCKED "the account is locked: ALTER USER ... ACCOUNT UNLOCK"
#define H_EXPIRED "the account's password has expired: set a new one " \
	"with ALTER USER ... IDENTIFIED BY"
#define H_READ_ONLY "the server is read-only: a replica, or a primary " \
	"during failover; writes fail until it takes them again"
#define H_GRANT "the account lacks a privilege: jobrun check names the " \
	"GRANT"
#define H_PACKET "the statement, with its payload, is too large for the " \
	"server's max_allowed_packet"
#define H_DISK "the server is out of disk space"

#define ROW(name, status, hint) { name, #name, status, hint }

/*
 * Every server and client error jobrun can meet, by number, and what it
 * tells the operator.  The status decides the exit status (command.c):
 *
 *   DB_UNREACHABLE  69  the server or the account cannot serve jobrun now:
 *                       down, gone, refusing the login, locked, expired,
 *                       over a connection limit, read-only, out of disk;
 *                       the same run later, once a DBA or a failover has
 *                       acted, goes through unchanged
 *   DB_DENIED       77  logged in, but a privilege is missing: a GRANT is
 *                       needed before any run can work
 *   DB_SCHEMA       78  the table is not what jobrun needs
 *   DB_CONFLICT     75  rolled back by the server (deadlock, lock wait):
 *                       the statement is run again, then the run gives up
 *   DB_INTERRUPTED  75  stopped by the server (max_statement_time, KILL
 *                       QUERY): not run again, the next run may get through
 *   DB_BAD_INPUT    65  this value, not the server, is at fault
 *
 * An error that is not here is DB_ERROR, exit 70: jobrun does not know
 * what it means, so it must not guess "try again".  A SIGNAL from the
 * application's own trigger (1644) is such an error, on purpose.
 */
static const struct db_error errors[] = {
	ROW(ER_CHECKREAD, DB_CONFLICT, NULL),	/* 1020 */
	ROW(ER_DISK_FULL, DB_UNREACHABLE, H_DISK),	/* 1021 */
	ROW(ER_OUTOFMEMORY, DB_UNREACHABLE,
	    "the server is out of memory"),	/* 1037 */
	ROW(ER_CON_COUNT_ERROR, DB_UNREACHABLE,
	    "the server has max_connections clients already"),	/* 1040 */
	ROW(ER_OUT_OF_RESOURCES, DB_UNREACHABLE,
	    "the server is out of memory"),	/* 1041 */
	ROW(ER_HANDSHAKE_ERROR, DB_UNREACHABLE, NULL),	/* 1043 */
	ROW(ER_DBACCESS_DENIED_ERROR, DB_DENIED,
	    "the account has no privilege on the database, or it does "
	    "not exist"),	/* 1044 */
	ROW(ER_ACCESS_DENIED_ERROR, DB_UNREACHABLE, H_LOGIN),	/* 1045 */
	/* Galera's "WSREP has not yet prepared node for application use";
	 * elsewhere a command the server does not know. */
	ROW(ER_UNKNOWN_COM_ERROR, DB_UNREACHABLE,
	    "a Galera node that is not ready: not in the primary "
	    "component, or still joining"),	/* 1047 */
	ROW(ER_BAD_NULL_ERROR, DB_BAD_INPUT, NULL),	/* 1048 */
	ROW(ER_BAD_DB_ERROR, DB_SCHEMA, NULL),	/* 1049 */
	ROW(ER_SERVER_SHUTDOWN, DB_UNREACHABLE, NULL),	/* 1053 */
	ROW(ER_BAD_FIELD_ERROR, DB_SCHEMA, NULL),	/* 1054 */
	/* business_key duplicates are no error (ON DUPLICATE KEY); this is
	 * another unique key the application added. */
	ROW(ER_DUP_ENTRY, DB_BAD_INPUT,
	    "another job has this value in a unique key"),	/* 1062 */
	ROW(ER_RECORD_FILE_FULL, DB_UNREACHABLE,
	    "the table is full: the server is out of disk space or the "
	    "table at its size limit"),	/* 1114 */
	ROW(ER_HOST_IS_BLOCKED, DB_UNREACHABLE,
	    "the server blocks this host after too many failed connections: "
	    "FLUSH HOSTS"),	/* 1129 */
	ROW(ER_HOST_NOT_PRIVILEGED, DB_UNREACHABLE,
	    "no account may connect from this host"),	/* 1130 */
	ROW(ER_TABLEACCESS_DENIED_ERROR, DB_DENIED, H_GRANT),	/* 1142 */
	ROW(ER_COLUMNACCESS_DENIED_ERROR, DB_DENIED, H_GRANT),	/* 1143 */
	ROW(ER_NO_SUCH_TABLE, DB_SCHEMA, NULL),	/* 1146 */
	ROW(ER_NET_PACKET_TOO_LARGE, DB_BAD_INPUT, H_PACKET),	/* 1153 */
	ROW(ER_NET_READ_ERROR, DB_UNREACHABLE, NULL),	/* 1158 */
	ROW(ER_NET_READ_INTERRUPTED, DB_UNREACHABLE, NULL),	/* 1159 */
	ROW(ER_NET_ERROR_ON_WRITE, DB_UNREACHABLE, NULL),	/* 1160 */
	ROW(ER_NET_WRITE_INTERRUPTED, DB_UNREACHABLE, NULL),	/* 1161 */
	ROW(ER_KEY_DOES_NOT_EXISTS, DB_SCHEMA, NULL),	/* 1176 */
	ROW(ER_NEW_ABORTING_CONNECTION, DB_UNREACHABLE, NULL),	/* 1184 */
	ROW(ER_TOO_MANY_USER_CONNECTIONS, DB_UNREACHABLE,
	    "the account has max_user_connections connections "
	    "already"),	/* 1203 */
	ROW(ER_LOCK_WAIT_TIMEOUT, DB_CONFLICT, NULL),	/* 1205 */
	ROW(ER_LOCK_DEADLOCK, DB_CONFLICT, NULL),	/* 1213 */
	ROW(ER_NO_REFERENCED_ROW, DB_BAD_INPUT, NULL),	/* 1216 */
	ROW(ER_ROW_IS_REFERENCED, DB_SCHEMA,
	    "another table's foreign key refers to the job"),	/* 1217 */
	ROW(ER_USER_LIMIT_REACHED, DB_UNREACHABLE,
	    "the account is at a limit of its own, such as "
	    "MAX_USER_CONNECTIONS"),	/* 1226 */
	ROW(ER_SPECIFIC_ACCESS_DENIED_ERROR, DB_DENIED, NULL),	/* 1227 */
	ROW(ER_NOT_SUPPORTED_AUTH_MODE, DB_UNREACHABLE,
	    "the account's authentication plugin is not one the client "
	    "supports"),	/* 1251 */
	ROW(ER_WARN_DATA_OUT_OF_RANGE, DB_BAD_INPUT, NULL),	/* 1264 */
	ROW(ER_NON_UPDATABLE_TABLE, DB_SCHEMA,
	    "the table is a view that cannot be updated"),	/* 1288 */
	/* "running with the --read-only option"; the other options it
	 * names guard statements jobrun never runs. */
	ROW(ER_OPTION_PREVENTS_STATEMENT, DB_UNREACHABLE,
	    H_READ_ONLY),	/* 1290 */
	ROW(ER_TRUNCATED_WRONG_VALUE, DB_BAD_INPUT, NULL),	/* 1292 */
	ROW(ER_UNKNOWN_TIME_ZONE, DB_SCHEMA,
	    "load the server's time zone tables, or give time_zone as an "
	    "offset such as +00:00"),	/* 1298 */
	ROW(ER_INVALID_CHARACTER_STRING, DB_BAD_INPUT, NULL),	/* 1300 */
	ROW(ER_WARN_ALLOWED_PACKET_OVERFLOWED, DB_BAD_INPUT,
	    H_PACKET),	/* 1301 */
	ROW(ER_SP_DOES_NOT_EXIST, DB_SCHEMA,
	    "a function a statement, a check or a trigger calls does not "
	    "exist: an older server?"),	/* 1305 */
	ROW(ER_QUERY_INTERRUPTED, DB_INTERRUPTED, NULL),	/* 1317 */
	ROW(ER_VIEW_INVALID, DB_SCHEMA, NULL),	/* 1356 */
	ROW(ER_NO_DEFAULT_FOR_FIELD, DB_SCHEMA,
	    "the table has a NOT NULL column without a default that jobrun "
	    "does not fill: give it a DEFAULT or allow NULL"),	/* 1364 */
	ROW(ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, DB_BAD_INPUT, NULL),	/* 1366 */
	ROW(ER_PROCACCESS_DENIED_ERROR, DB_DENIED, NULL),	/* 1370 */
	ROW(ER_DATA_TOO_LONG, DB_BAD_INPUT, NULL),	/* 1406 */
	ROW(ER_TABLE_DEF_CHANGED, DB_INTERRUPTED, NULL),	/* 1412 */
	ROW(ER_CANT_UPDATE_USED_TABLE_IN_SF_OR_TRG, DB_SCHEMA,
	    "a trigger on the table writes to the table itself"),	/* 1442 */
	ROW(ER_ROW_IS_REFERENCED_2, DB_SCHEMA,
	    "another table's foreign key refers to the job"),	/* 1451 */
	ROW(ER_NO_REFERENCED_ROW_2, DB_BAD_INPUT, NULL),	/* 1452 */
	ROW(ER_NON_INSERTABLE_TABLE, DB_SCHEMA,
	    "the table is a view that cannot take inserts"),	/* 1471 */
	ROW(ER_DUP_ENTRY_WITH_KEY_NAME, DB_BAD_INPUT,
	    "another job has this value in a unique key"),	/* 1586 */
	ROW(ER_NEED_REPREPARE, DB_INTERRUPTED, NULL),	/* 1615 */
	/* InnoDB logs a READ COMMITTED session's writes by row only. */
	ROW(ER_BINLOG_STMT_MODE_AND_ROW_ENGINE, DB_SCHEMA,
	    "the server's binlog_format is STATEMENT, under which jobrun's "
	    "READ COMMITTED sessions cannot write: set MIXED or ROW"),
	    /* 1665 */
	ROW(ER_LOCK_ABORTED, DB_CONFLICT, NULL),	/* 1689 */
	ROW(ER_ACCESS_DENIED_NO_PASSWORD_ERROR, DB_UNREACHABLE,
	    H_LOGIN),	/* 1698 */
	ROW(ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, DB_UNREACHABLE,
	    H_READ_ONLY),	/* 1792 */
	ROW(ER_MUST_CHANGE_PASSWORD, DB_UNREACHABLE, H_EXPIRED),	/* 1820 */
	ROW(ER_READ_ONLY_MODE, DB_UNREACHABLE,
	    "the server runs with innodb_read_only"),	/* 1836 */
	ROW(ER_MUST_CHANGE_PASSWORD_LOGIN, DB_UNREACHABLE,
	    H_EXPIRED),	/* 1862 */
	ROW(ER_CONNECTION_KILLED, DB_UNREACHABLE, NULL),	/* 1927 */
	ROW(ER_STATEMENT_TIMEOUT, DB_INTERRUPTED,
	    "the statement ran longer than max_statement_time"),	/* 1969 */
	ROW(CR_SOCKET_CREATE_ERROR, DB_UNREACHABLE, NULL),	/* 2001 */
	ROW(CR_CONNECTION_ERROR, DB_UNREACHABLE, NULL),	/* 2002 */
	ROW(CR_CONN_HOST_ERROR, DB_UNREACHABLE, NULL),	/* 2003 */
	ROW(CR_IPSOCK_ERROR, DB_UNREACHABLE, NULL),	/* 2004 */
	ROW(CR_UNKNOWN_HOST, DB_UNREACHABLE, NULL),	/* 2005 */
	ROW(CR_SERVER_GONE_ERROR, DB_UNREACHABLE, NULL),	/* 2006 */
	ROW(CR_SERVER_HANDSHAKE_ERR, DB_UNREACHABLE, NULL),	/* 2012 */
	ROW(CR_SERVER_LOST, DB_UNREACHABLE, NULL),	/* 2013 */
	ROW(CR_NET_PACKET_TOO_LARGE, DB_BAD_INPUT, H_PACKET),	/* 2020 */
	ROW(CR_SSL_CONNECTION_ERROR, DB_UNREACHABLE,
	    "[database] tls: the server must offer TLS and, for tls = "
	    "verify, a certificate for host signed by the CA"),	/* 2026 */
	ROW(CR_SERVER_LOST_EXTENDED, DB_UNREACHABLE, NULL),	/* 2055 */
	ROW(CR_AUTH_PLUGIN_CANNOT_LOAD, DB_UNREACHABLE,
	    "the client cannot load the account's authentication "
	    "plugin"),	/* 2059 */
	ROW(CR_AUTH_PLUGIN_ERR, DB_UNREACHABLE, NULL),	/* 2061 */
	/* MySQL's numbers; MariaDB has none of these. */
	{ 3024, "ER_QUERY_TIMEOUT (MySQL)", DB_INTERRUPTED,
	    "the statement ran longer than max_execution_time" },
	{ 3118, "ER_ACCOUNT_HAS_BEEN_LOCKED (MySQL)", DB_UNREACHABLE,
	    H_LOCKED },
	{ 3140, "ER_INVALID_JSON_TEXT (MySQL)", DB_BAD_INPUT, NULL },
	/* MySQL types the parameter of JSON_VALID(?) as JSON, and text
	 * that is not JSON fails the cast instead of giving 0. */
	{ 3141, "ER_INVALID_JSON_TEXT_IN_PARAM (MySQL)", DB_BAD_INPUT,
	    NULL },
	{ 3157, "ER_JSON_DOCUMENT_TOO_DEEP (MySQL)", DB_BAD_INPUT, NULL },
	{ 3819, "ER_CHECK_CONSTRAINT_VIOLATED (MySQL)", DB_BAD_INPUT, NULL },
	/* A parameter in utf8mb4 for a column in utf8mb3 or latin1 that
	 * cannot hold one of its characters. */
	{ 3988, "ER_IMPOSSIBLE_STRING_CONVERSION (MySQL)", DB_BAD_INPUT,
	    NULL },
	/* The payload's CHECK (JSON_VALID): nested too deep, for one. */
	ROW(ER_CONSTRAINT_FAILED, DB_BAD_INPUT, NULL),	/* 4025 */
	{ ER_CLIENT_INTERACTION_TIMEOUT, "ER_CLIENT_INTERACTION_TIMEOUT (MySQL)",
	    DB_UNREACHABLE, NULL },	/* 4031 */
	ROW(ER_ACCOUNT_HAS_BEEN_LOCKED, DB_UNREACHABLE, H_LOCKED),	/* 4151 */
	ROW(CR_PLUGIN_NOT_ALLOWED, DB_UNREACHABLE,
	    "that plugin sends the password in clear or under a key the "
	    "server sends: over TCP, only with tls = verify"),	/* 5010 */
	ROW(CR_ERR_NET_READ, DB_UNREACHABLE, NULL),	/* 5013 */
	ROW(CR_ERR_NET_WRITE, DB_UNREACHABLE, NULL),	/* 5014 */
};

const struct db_error *
db_error_info(unsigned int errnum)
{
	size_t lo = 0, hi = sizeof errors / sizeof errors[0], mid;

	/* The table is sorted by number: test_db finds every row. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (errors[mid].number == errnum)
			return &errors[mid];
		if (errors[mid].number < errnum)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

enum db_status
db_classify(unsigned int errnum)
{
	const struct db_error *e = db_error_info(errnum);

	return e != NULL ? e->status : DB_ERROR;
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

/* Over TCP without a verified server, only the authentication plugins
 * whose exchange never gives the password away to whoever answers: a
 * challenge and its hash (mysql_native_password), a signature
 * (client_ed25519), Kerberos (auth_gssapi_client).  Refused:
 * mysql_clear_password and dialog (PAM), which send it in clear, and
 * sha256_password and caching_sha2_password, which send it in clear or
 * encrypted under a public key the server (or a host in the middle)
 * hands over.  libmariadb matches a plugin's name in this list as a
 * substring; none of the refused names is one. */
#define DB_AUTH_UNVERIFIED \
	"mysql_native_password,client_ed25519,auth_gssapi_client"

/* TLS as [database] tls asks, and the plugins allowed to log in: NULL,
 * or the option the client library refused (an older libmariadb.so.3
 * may not know one: then no connection, rather than one without the
 * protection asked for). */
static const char *
set_tls(MYSQL *conn, const struct cfg_db *cfg)
{
	my_bool yes = 1, verify = cfg->tls == CFG_TLS_VERIFY;

	/* A unix socket is local: PAM's clear text over it reaches no one
	 * else, so every plugin stays allowed there. */
	if (cfg_db_tcp(cfg) && cfg->tls != CFG_TLS_VERIFY &&
	    mysql_optionsv(conn, MARIADB_OPT_RESTRICTED_AUTH,
	    DB_AUTH_UNVERIFIED) != 0)
		return "MARIADB_OPT_RESTRICTED_AUTH";
	if (cfg->tls == CFG_TLS_OFF)
		return NULL;
	/* With verification, libmariadb refuses a server that does not
	 * offer TLS; without, db_connect does, once connected. */
	if (mysql_optionsv(conn, MYSQL_OPT_SSL_ENFORCE, &yes) != 0)
		return "MYSQL_OPT_SSL_ENFORCE";
	if (mysql_optionsv(conn, MYSQL_OPT_SSL_VERIFY_SERVER_CERT,
	    &verify) != 0)
		return "MYSQL_OPT_SSL_VERIFY_SERVER_CERT";
	if (cfg->tls_ca_file != NULL &&
	    mysql_optionsv(conn, MYSQL_OPT_SSL_CA, cfg->tls_ca_file) != 0)
		return "MYSQL_OPT_SSL_CA";
	if (cfg->tls_cert_file != NULL && (mysql_optionsv(conn,
	    MYSQL_OPT_SSL_CERT, cfg->tls_cert_file) != 0 ||
	    mysql_optionsv(conn, MYSQL_OPT_SSL_KEY, cfg->tls_key_file) != 0))
		return "MYSQL_OPT_SSL_CERT";
	return NULL;
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

/* A call to the server is under way: the watchdog may give up on it. */
static void
busy(struct db *db)
{
	atomic_store(&db->busy_since, now_ms());
}

/* The call that started at start is over; *failed says whether it failed
 * because the server did not answer within read_timeout or
 * write_timeout, which the client reports as a lost connection. */
static void
idle(struct db *db, int64_t start, unsigned int errnum)
{
	unsigned long limit = db->cfg->read_timeout < db->cfg->write_timeout ?
	    db->cfg->read_timeout : db->cfg->write_timeout;

	atomic_store(&db->busy_since, 0);
	db->timed_out = errnum == CR_SERVER_LOST &&
	    now_ms() - start >= (int64_t)limit * 1000 - 50;
}

/* err, a lost connection's message, saying what it was. */
static void
explain_timeout(const struct db *db, char *err, size_t errlen)
{
	size_t n = strlen(err);

	if (db->timed_out)
		snprintf(err + n, errlen - n, " (no answer within read_timeout "
		    "%lu s / write_timeout %lu s: is the server frozen or "
		    "overloaded?)", db->cfg->read_timeout,
		    db->cfg->write_timeout);
}

enum db_status
db_connect(struct db *db, const struct cfg_db *cfg, char *err, size_t errlen)
{
	unsigned int timeout = (unsigned int)cfg->connect_timeout;
	unsigned int rtimeout = (unsigned int)cfg->read_timeout;
	unsigned int wtimeout = (unsigned int)cfg->write_timeout;
	const char *refused;
	enum db_status st;
	int64_t start;

	atomic_store(&db->fd, -1);
	describe_target(db, cfg);
	db->cfg = cfg;
	db->conn = xcheck(mysql_init(NULL));
	mysql_options(db->conn, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	/* A server that stops answering (SIGSTOP, a stuck disk, a network
	 * black hole) must not hold a run forever: each read and write
	 * waits at most this long. */
	mysql_options(db->conn, MYSQL_OPT_READ_TIMEOUT, &rtimeout);
	mysql_options(db->conn, MYSQL_OPT_WRITE_TIMEOUT, &wtimeout);
	mysql_options(db->conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	/* Every statement jobrun runs is its own transaction; READ COMMITTED
	 * keeps the claim's scan from taking gap locks, which otherwise make
	 * concurrent claims and marks deadlock far more often. */
	mysql_options(db->conn, MYSQL_INIT_COMMAND,
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	if ((refused = set_tls(db->conn, cfg)) != NULL) {
		errf(err, errlen, "connect to %s: the client library refuses "
		    "%s, which [database] tls needs", db->where, refused);
		db_close(db);
		return DB_ERROR;
	}
	start = now_ms();
	busy(db);
	if (mysql_real_connect(db->conn, cfg->socket != NULL ? NULL :
	    cfg->host, cfg->user, cfg->password, cfg->database,
	    (unsigned int)cfg->port, cfg->socket, 0) == NULL) {
		db->last_errno = mysql_errno(db->conn);
		idle(db, start, 0);
		st = db_classify(db->last_errno);
		/* libmariadb 3.3's own text names the plugin cut short
		 * ("'e_password' couldn't be found"). */
		if (db->last_errno == CR_PLUGIN_NOT_ALLOWED)
			errf(err, errlen, "connect to %s: refused the "
			    "authentication plugin the server asked for: not "
			    "one of %s", db->where, DB_AUTH_UNVERIFIED);
		else
			errf(err, errlen, "connect to %s: %s", db->where,
			    mysql_error(db->conn));
		db_close(db);
		return st == DB_OK || st == DB_CONFLICT ? DB_UNREACHABLE : st;
	}
	idle(db, start, 0);
	/* libmariadb refuses a server without TLS only when it verifies:
	 * with tls = on it would go on in clear. */
	if (cfg->tls != CFG_TLS_OFF && mysql_get_ssl_cipher(db->conn) == NULL) {
		db->last_errno = CR_SSL_CONNECTION_ERROR;
		errf(err, errlen, "connect to %s: TLS is required, but the "
		    "server does not support it", db->where);
		db_close(db);
		return DB_UNREACHABLE;
	}
	atomic_store(&db->fd, (int)mysql_get_socket(db->conn));
	if (cfg->time_zone != NULL) {
		st = set_time_zone(db, cfg->time_zone, err, errlen);
		if (st != DB_OK) {
			db_close(db);
			return st;
		}
	}
	return DB_OK;
}

int
db_tls(const struct db *db, char *buf, size_t len)
{
	const char *cipher, *version = NULL;

	if (db->conn == NULL ||
	    (cipher = mysql_get_ssl_cipher(db->conn)) == NULL)
		return 0;
	if (mariadb_get_infov(db->conn, MARIADB_CONNECTION_TLS_VERSION,
	    &version) != 0 || version == NULL)
		version = "TLS";
	snprintf(buf, len, "%s, %s", version, cipher);
	return 1;
}

void
db_close(struct db *db)
{
	atomic_store(&db->fd, -1);
	if (db->conn != NULL)
		mysql_close(db->conn);
	db->conn = NULL;
}

void
db_abandon(struct db *db)
{
	int fd = atomic_load(&db->fd);

	atomic_store(&db->abandoned, 1);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
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
	if (atomic_load(&db->abandoned)) {
		errf(err, errlen, "connect to %s: not again: the run was "
		    "stopped", db->where);
		return DB_UNREACHABLE;
	}
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
	MYSQL_STMT *stmt;
	enum db_status st;
	int64_t start;
	int rc;

	*out = NULL;
	if (db->conn == NULL) {
		errf(err, errlen, "prepare: not connected to %s", db->where);
		db->last_errno = CR_SERVER_GONE_ERROR;
		return DB_UNREACHABLE;
	}
	stmt = mysql_stmt_init(db->conn);
	if (stmt == NULL) {
		errf(err, errlen, "prepare: %s", mysql_error(db->conn));
		db->last_errno = mysql_errno(db->conn);
		return db_classify(db->last_errno);
	}
	start = now_ms();
	busy(db);
	rc = mysql_stmt_prepare(stmt, sql, strlen(sql));
	idle(db, start, rc != 0 ? mysql_stmt_errno(stmt) : 0);
	if (rc != 0) {
		db->last_errno = mysql_stmt_errno(stmt);
		st = stmt_failure(stmt, "prepare", err, errlen);
		explain_timeout(db, err, errlen);
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
	int64_t start;
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
			bind[i].is_unsigned = !args[i].is_signed;
		}
	}
	start = now_ms();
	busy(db);
	/* A result is read whole here, while the watchdog can see the call:
	 * fetching rows later then never waits on the server. */
	if (nargs > 0 && mysql_stmt_bind_param(stmt, bind) != 0)
		st = stmt_failure(stmt, "bind", err, errlen);
	else if (mysql_stmt_execute(stmt) != 0 ||
	    (mysql_stmt_field_count(stmt) > 0 &&
	    mysql_stmt_store_result(stmt) != 0))
		st = stmt_failure(stmt, "execute", err, errlen);
	idle(db, start, st != DB_OK ? mysql_stmt_errno(stmt) : 0);
	if (st != DB_OK) {
		db->last_errno = mysql_stmt_errno(stmt);
		explain_timeout(db, err, errlen);
	}
	if (bind != small_bind) {
		free(bind);
		free(lengths);
	}
	return st;
}

int
db_is_mysql(const struct db *db)
{
	return db->conn != NULL &&
	    (db->conn->server_capabilities & CLIENT_MYSQL) != 0;
}

int
db_json_refused(unsigned int errnum)
{
	return errnum == 3140 || errnum == 3141 || errnum == 3157;
}

unsigned int
db_stmt_errno(MYSQL_STMT *stmt)
{
	return mysql_stmt_errno(stmt);
}

const char *
db_server_name(const struct db *db)
{
	return db_is_mysql(db) ? "MySQL" : "MariaDB";
}

const char *
db_tzinfo_command(const struct db *db)
{
	return db_is_mysql(db) ?
	    "mysql_tzinfo_to_sql /usr/share/zoneinfo | mysql mysql" :
	    "mariadb-tzinfo-to-sql /usr/share/zoneinfo | mariadb mysql";
}

int
db_bulk_supported(const struct db *db)
{
	unsigned long ext = 0;

	if (db->conn == NULL || db_is_mysql(db))
		return 0;
	mariadb_get_infov(db->conn,
	    MARIADB_CONNECTION_EXTENDED_SERVER_CAPABILITIES, &ext);
	return (ext & (MARIADB_CLIENT_STMT_BULK_OPERATIONS >> 32)) != 0;
}

/* Bulk arguments are bound column by column: each parameter's buffer is
 * an array of nrows values (of pointers, for strings). */
struct bulk_column {
	const char **strs;
	unsigned long *lens;
	unsigned long long *nums;
};

enum db_status
db_execute_bulk(struct db *db, MYSQL_STMT *stmt, const struct db_arg *args,
    unsigned nargs, unsigned nrows, char *err, size_t errlen)
{
	MYSQL_BIND *bind = xcalloc(nargs, sizeof *bind);
	struct bulk_column *col = xcalloc(nargs, sizeof *col);
	unsigned int size = nrows, none = 0;
	enum db_status st = DB_OK;
	const struct db_arg *a;
	unsigned i, r;
	int64_t start;

	if (nargs != mysql_stmt_param_count(stmt) || nrows == 0) {
		errf(err, errlen, "execute: %u arguments for %lu parameters",
		    nargs, mysql_stmt_param_count(stmt));
		st = DB_ERROR;
	}
	for (i = 0; i < nargs && st == DB_OK; i++) {
		col[i].strs = xcalloc(nrows, sizeof *col[i].strs);
		col[i].lens = xcalloc(nrows, sizeof *col[i].lens);
		col[i].nums = xcalloc(nrows, sizeof *col[i].nums);
		for (r = 0; r < nrows; r++) {
			a = &args[(size_t)r * nargs + i];
			if (a->is_str && a->str == NULL) {
				errf(err, errlen, "execute: a NULL in a bulk "
				    "execution");
				st = DB_ERROR;
				break;
			}
			col[i].strs[r] = a->str;
			col[i].lens[r] = !a->is_str ? 0 : a->len != DB_STRLEN ?
			    a->len : strlen(a->str);
			col[i].nums[r] = a->num;
		}
		if (args[i].is_str) {
			bind[i].buffer_type = MYSQL_TYPE_STRING;
			bind[i].buffer = (void *)col[i].strs;
			bind[i].length = col[i].lens;
		} else {
			bind[i].buffer_type = MYSQL_TYPE_LONGLONG;
			bind[i].buffer = col[i].nums;
			bind[i].is_unsigned = !args[i].is_signed;
		}
	}
	if (st == DB_OK) {
		start = now_ms();
		busy(db);
		if (mysql_stmt_attr_set(stmt, STMT_ATTR_ARRAY_SIZE, &size) ||
		    mysql_stmt_bind_param(stmt, bind) != 0)
			st = stmt_failure(stmt, "bind", err, errlen);
		else if (mysql_stmt_execute(stmt) != 0)
			st = stmt_failure(stmt, "execute", err, errlen);
		idle(db, start, st != DB_OK ? mysql_stmt_errno(stmt) : 0);
		if (st != DB_OK) {
			db->last_errno = mysql_stmt_errno(stmt);
			explain_timeout(db, err, errlen);
		}
		/* The statement's next executions are single again. */
		mysql_stmt_attr_set(stmt, STMT_ATTR_ARRAY_SIZE, &none);
	}
	for (i = 0; i < nargs; i++) {
		free(col[i].strs);
		free(col[i].lens);
		free(col[i].nums);
	}
	free(col);
	free(bind);
	return st;
}

enum db_status
db_query(struct db *db, const char *sql, char *err, size_t errlen)
{
	int64_t start;
	int rc;

	if (db->conn == NULL) {
		errf(err, errlen, "%s: not connected to %s", sql, db->where);
		db->last_errno = CR_SERVER_GONE_ERROR;
		return DB_UNREACHABLE;
	}
	start = now_ms();
	busy(db);
	rc = mysql_real_query(db->conn, sql, strlen(sql));
	idle(db, start, rc != 0 ? mysql_errno(db->conn) : 0);
	if (rc == 0)
		return DB_OK;
	db->last_errno = mysql_errno(db->conn);
	errf(err, errlen, "%s: %s", sql, mysql_error(db->conn));
	explain_timeout(db, err, errlen);
	return db_classify(db->last_errno);
}

void
db_free_cols(char **cols, unsigned n)
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
		db_free_cols(cols, ncols);
		return -1;
	}
	rc = mysql_stmt_fetch(stmt);
	if (rc == MYSQL_NO_DATA) {
		db_free_cols(cols, ncols);
		mysql_stmt_free_result(stmt);
		return 0;
	}
	if (rc == 1) {
		stmt_failure(stmt, "fetch", err, errlen);
		db_free_cols(cols, ncols);
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
				db_free_cols(cols, ncols);
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
