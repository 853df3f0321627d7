/*
 * probe.c - where the time of an empty-queue invocation goes.
 *
 *   probe --socket=PATH --database=NAME [--reps=N] VARIANT
 *
 * Forks N children; each does, phase by phase and timed, what jobrun does
 * on an empty queue after its dynamic loading: the client library's start
 * (mysql_library_init, which starts the TLS library, OpenSSL here), the
 * connection (utf8mb4, READ COMMITTED init command), the recovery UPDATE
 * (prepare, execute), the claim (jobrun first tries to prepare the
 * idx_type_pick claim, which fails without sql/001_type_pick.sql:
 * typed_prepare; then it prepares and runs the idx_pick one: claim),
 * closing, and exit (exit handlers and process teardown, timed from the
 * child's last clock reading to wait4).
 *
 * VARIANT says what runs before mysql_library_init:
 *   default    nothing, as jobrun today
 *   noconfig   OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG): OpenSSL
 *              does not read and apply openssl.cnf
 *   lean       the same plus OPENSSL_INIT_NO_ATEXIT: no OpenSSL clean-up
 *              at exit
 *   parts      as default, but first times the two costly steps of
 *              mysql_library_init on their own: getservbyname("mysql")
 *              (libmariadb looks up the default TCP port even for a unix
 *              socket) and OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG)
 *              (ma_tls_start); tls_init is then what remains of it
 *
 * Prints VARIANT.PHASE_us=MEDIAN lines (phases: getservbyname openssl
 * tls_init connect recover typed_prepare claim close exit total).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>
#include <netdb.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "sql.h"

enum { P_GETSERV, P_OPENSSL, P_TLS, P_CONNECT, P_RECOVER, P_TYPED, P_CLAIM,
       P_CLOSE, P_EXIT, P_TOTAL, NPHASES };
static const char *const phase_names[NPHASES] = {
	"getservbyname", "openssl", "tls_init", "connect", "recover",
	"typed_prepare", "claim", "close", "exit", "total"
};

static const char *opt_socket, *opt_db;

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void
fail(const char *what, const char *why)
{
	fprintf(stderr, "probe: %s: %s\n", what, why);
	_exit(1);
}

static MYSQL_STMT *
prepare(MYSQL *m, int which, int must_work)
{
	char sql[4096];
	MYSQL_STMT *s = mysql_stmt_init(m);

	if (s == NULL || bench_statement("polling_jobs", which, 1, sql,
	    sizeof sql) != 0)
		fail("prepare", "no statement");
	if (mysql_stmt_prepare(s, sql, strlen(sql)) != 0) {
		if (must_work)
			fail("prepare", mysql_stmt_error(s));
		mysql_stmt_close(s);
		return NULL;
	}
	return s;
}

static void
execute(MYSQL_STMT *s, MYSQL_BIND *b)
{
	if ((b != NULL && mysql_stmt_bind_param(s, b) != 0) ||
	    mysql_stmt_execute(s) != 0)
		fail("execute", mysql_stmt_error(s));
}

/* One child: the phases, their end times written to fd. */
static void
child(const char *variant, int fd)
{
	double t[NPHASES + 1];
	MYSQL *m;
	MYSQL_STMT *rec, *typed, *claim;
	MYSQL_BIND b[5];
	unsigned long long limit = 100, lock = 300;
	unsigned long toklen, typelen;
	char token[] = "probe:1:000000000000:1", type[] = "work";
	unsigned int timeout = 10;

	t[0] = now_us();
	if (strcmp(variant, "parts") == 0)
		getservbyname("mysql", "tcp");
	t[1 + P_GETSERV] = now_us();
	if (strcmp(variant, "parts") == 0)
		OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
	else if (strcmp(variant, "noconfig") == 0)
		OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
	else if (strcmp(variant, "lean") == 0)
		OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
		    OPENSSL_INIT_NO_ATEXIT, NULL);
	t[1 + P_OPENSSL] = now_us();
	if (mysql_library_init(0, NULL, NULL) != 0)
		fail("mysql_library_init", "failed");
	t[1 + P_TLS] = now_us();

	m = mysql_init(NULL);
	mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(m, MYSQL_INIT_COMMAND,
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	if (mysql_real_connect(m, NULL, "root", NULL, opt_db, 0, opt_socket,
	    0) == NULL)
		fail("connect", mysql_error(m));
	t[1 + P_CONNECT] = now_us();

	memset(b, 0, sizeof b);
	b[0].buffer_type = MYSQL_TYPE_LONGLONG;
	b[0].buffer = &limit;
	b[0].is_unsigned = 1;
	rec = prepare(m, Q_RECOVER, 1);
	execute(rec, b);
	t[1 + P_RECOVER] = now_us();

	typed = prepare(m, Q_CLAIM | Q_F_TYPE, 0);
	t[1 + P_TYPED] = now_us();
	claim = typed != NULL ? typed : prepare(m, Q_CLAIM, 1);
	memset(b, 0, sizeof b);
	toklen = (unsigned long)strlen(token);
	typelen = (unsigned long)strlen(type);
	b[0].buffer_type = MYSQL_TYPE_STRING;
	b[0].buffer = token;
	b[0].buffer_length = toklen;
	b[0].length = &toklen;
	/* token, lock seconds twice, the type (twice for idx_type_pick). */
	b[1].buffer_type = MYSQL_TYPE_LONGLONG;
	b[1].buffer = &lock;
	b[1].is_unsigned = 1;
	b[2] = b[1];
	b[3].buffer_type = MYSQL_TYPE_STRING;
	b[3].buffer = type;
	b[3].buffer_length = typelen;
	b[3].length = &typelen;
	b[4] = b[3];
	execute(claim, b);
	if (mysql_stmt_affected_rows(claim) != 0)
		fail("claim", "the queue is not empty");
	t[1 + P_CLAIM] = now_us();

	mysql_stmt_close(rec);
	mysql_stmt_close(claim);
	mysql_close(m);
	mysql_library_end();
	t[1 + P_CLOSE] = now_us();
	if (write(fd, t, sizeof t) != (ssize_t)sizeof t)
		_exit(1);
	exit(0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	int reps = 50, i, r, p, fds[2], status;
	const char *variant = NULL;
	double t[NPHASES + 1], *v[NPHASES], reaped, start;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--socket=", 9) == 0)
			opt_socket = argv[i] + 9;
		else if (strncmp(argv[i], "--database=", 11) == 0)
			opt_db = argv[i] + 11;
		else if (strncmp(argv[i], "--reps=", 7) == 0)
			reps = atoi(argv[i] + 7);
		else
			variant = argv[i];
	}
	if (opt_socket == NULL || opt_db == NULL || variant == NULL ||
	    reps < 1 || (strcmp(variant, "default") != 0 &&
	    strcmp(variant, "noconfig") != 0 && strcmp(variant, "lean") != 0 &&
	    strcmp(variant, "parts") != 0)) {
		fprintf(stderr, "usage: probe --socket=PATH --database=NAME "
		    "[--reps=N] default|noconfig|lean|parts\n");
		return 64;
	}
	for (p = 0; p < NPHASES; p++)
		v[p] = calloc((size_t)reps, sizeof(double));
	for (r = 0; r < reps; r++) {
		if (pipe(fds) != 0) {
			perror("probe: pipe");
			return 1;
		}
		start = now_us();
		pid = fork();
		if (pid == 0) {
			close(fds[0]);
			child(variant, fds[1]);
		}
		close(fds[1]);
		if (read(fds[0], t, sizeof t) != (ssize_t)sizeof t) {
			fprintf(stderr, "probe: a child failed\n");
			return 1;
		}
		close(fds[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		reaped = now_us();
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "probe: a child failed\n");
			return 1;
		}
		for (p = 0; p < P_EXIT; p++)
			v[p][r] = t[1 + p] - t[p];
		v[P_EXIT][r] = reaped - t[1 + P_CLOSE];
		v[P_TOTAL][r] = reaped - start;
	}
	for (p = 0; p < NPHASES; p++) {
		qsort(v[p], (size_t)reps, sizeof(double), cmp_double);
		printf("%s.%s_us=%.0f\n", variant, phase_names[p],
		    v[p][reps / 2]);
	}
	return 0;
}
