/*
 * arrive.c - jobs arriving while jobrun --wait waits (bench/run, "wait").
 *
 *   arrive [options] insert
 *   arrive [options] exec -- CMD [ARG...]
 *   arrive [options] spawn -- CMD [ARG...]
 *   arrive [options] drained
 *
 * insert: --n jobs of --type, keyed PREFIX:1 ... PREFIX:N, each one plain
 *   INSERT (a prepared statement, autocommit) over one connection that
 *   stays open, as an application would; the arrivals are a Poisson
 *   process of --rate per second (exponential gaps drawn from --seed,
 *   each arrival at its planned time on CLOCK_MONOTONIC: an arrival that
 *   finds the previous one still running goes as soon as it returns).
 * exec: the same arrivals, each a run of CMD ARG... --key=PREFIX:I (say
 *   jobrun enqueue --type=T), waited for; stdout to /dev/null.
 * For both, one line per job to --out: "KEY T0 T1", CLOCK_REALTIME in
 *   nanoseconds just before the INSERT (the spawn) and just after its
 *   reply (the exit).
 * spawn: --n runs of CMD one after the other, each with JOB_BUSINESS_KEY
 *   =PREFIX:I in its environment, a line "KEY T0 T1" each (just before
 *   fork, after wait): with bench/stamp as CMD, what stamp itself costs
 *   from fork to its clock read.
 * drained: with --insert=N, first N due jobs of --type in one INSERT ...
 *   SELECT (a burst); then, every --interval-ms, one plain read of
 *   whether a job is pending or processing, until none is; prints
 *   t0_ns= (before the INSERT, or at start), insert_us=, done_ns= (the
 *   read that found none) and polls= (the statements it sent).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mysql.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *opt_socket, *opt_db, *opt_out;
static const char *opt_table = "polling_jobs", *opt_type = "work";
static const char *opt_prefix = "job";
static double opt_rate = 20;
static unsigned long opt_n = 100, opt_seed = 1, opt_insert;
static unsigned long opt_interval_ms = 5, opt_max_seconds = 600;

static void
die(const char *fmt, ...)
{
	va_list ap;

	fputs("arrive: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int64_t
clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
sleep_until(int64_t mono_ns)
{
	struct timespec ts = { (time_t)(mono_ns / 1000000000),
	    (long)(mono_ns % 1000000000) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
}

static MYSQL *
connect_db(void)
{
	MYSQL *m = mysql_init(NULL);

	if (m == NULL)
		die("mysql_init failed");
	mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (mysql_real_connect(m, NULL, "root", NULL, opt_db, 0, opt_socket,
	    0) == NULL)
		die("connect to %s: %s", opt_socket, mysql_error(m));
	return m;
}

/* Runs argv (stdin and stdout on /dev/null) to its end; its status. */
static int
run(char **argv)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, e;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0)
		die("%s: %s", argv[0], strerror(e));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	return st;
}

/* insert and exec: the Poisson arrivals. */
static int
cmd_arrive(int exec, char **cmd, int ncmd)
{
	char key[200], keyarg[220], sql[512];
	char **argv = NULL;
	unsigned long i;
	unsigned long keylen;
	int64_t at, t0, t1;
	MYSQL *m = NULL;
	MYSQL_STMT *st = NULL;
	MYSQL_BIND b[2];
	FILE *out;

	if (opt_out == NULL || (out = fopen(opt_out, "w")) == NULL)
		die("--out: %s", opt_out ? strerror(errno) : "missing");
	if (exec) {
		argv = calloc((size_t)ncmd + 2, sizeof *argv);
		if (argv == NULL)
			die("out of memory");
		memcpy(argv, cmd, (size_t)ncmd * sizeof *argv);
		argv[ncmd] = keyarg;
	} else {
		m = connect_db();
		snprintf(sql, sizeof sql, "INSERT INTO %s (business_key, type, "
		    "payload, next_run_at, created_at, updated_at) VALUES (?, "
		    "?, '{}', NOW(), NOW(), NOW())", opt_table);
		if ((st = mysql_stmt_init(m)) == NULL ||
		    mysql_stmt_prepare(st, sql, strlen(sql)) != 0)
			die("prepare: %s", mysql_error(m));
		memset(b, 0, sizeof b);
		b[0].buffer_type = MYSQL_TYPE_STRING;
		b[0].buffer = key;
		b[0].length = &keylen;
		b[1].buffer_type = MYSQL_TYPE_STRING;
		b[1].buffer = (char *)opt_type;
		b[1].buffer_length = strlen(opt_type);
		if (mysql_stmt_bind_param(st, b) != 0)
			die("bind: %s", mysql_stmt_error(st));
	}
	srand48((long)opt_seed);
	at = clock_ns(CLOCK_MONOTONIC);
	for (i = 1; i <= opt_n; i++) {
		at += (int64_t)(-log(1.0 - drand48()) / opt_rate * 1e9);
		snprintf(key, sizeof key, "%s:%lu", opt_prefix, i);
		keylen = strlen(key);
		snprintf(keyarg, sizeof keyarg, "--key=%s", key);
		sleep_until(at);
		t0 = clock_ns(CLOCK_REALTIME);
		if (exec) {
			int s = run(argv);

			if (!WIFEXITED(s) || WEXITSTATUS(s) != 0)
				die("%s for %s: status %d", argv[0], key, s);
		} else if (mysql_stmt_execute(st) != 0)
			die("insert %s: %s", key, mysql_stmt_error(st));
		t1 = clock_ns(CLOCK_REALTIME);
		fprintf(out, "%s %lld %lld\n", key, (long long)t0,
		    (long long)t1);
	}
	if (fclose(out) != 0)
		die("%s: %s", opt_out, strerror(errno));
	if (st != NULL)
		mysql_stmt_close(st);
	if (m != NULL)
		mysql_close(m);
	free(argv);
	return 0;
}

/* spawn: CMD --n times, JOB_BUSINESS_KEY set. */
static int
cmd_spawn(char **cmd)
{
	char key[200];
	unsigned long i;
	int64_t t0, t1;
	FILE *out;
	int s;

	if (opt_out == NULL || (out = fopen(opt_out, "w")) == NULL)
		die("--out: %s", opt_out ? strerror(errno) : "missing");
	for (i = 1; i <= opt_n; i++) {
		snprintf(key, sizeof key, "%s:%lu", opt_prefix, i);
		setenv("JOB_BUSINESS_KEY", key, 1);
		t0 = clock_ns(CLOCK_REALTIME);
		s = run(cmd);
		t1 = clock_ns(CLOCK_REALTIME);
		if (!WIFEXITED(s) || WEXITSTATUS(s) != 0)
			die("%s: status %d", cmd[0], s);
		fprintf(out, "%s %lld %lld\n", key, (long long)t0,
		    (long long)t1);
	}
	return fclose(out) == 0 ? 0 : 1;
}

/* drained: [a burst, then] poll until nothing is pending or processing. */
static int
cmd_drained(void)
{
	char sql[1024];
	unsigned long polls = 0;
	int64_t t0, ti, next, end;
	MYSQL_RES *res;
	MYSQL_ROW row;
	MYSQL *m = connect_db();
	int done = 0;

	t0 = clock_ns(CLOCK_REALTIME);
	if (opt_insert > 0) {
		snprintf(sql, sizeof sql, "INSERT INTO %s (business_key, type, "
		    "payload, next_run_at, created_at, updated_at) SELECT "
		    "CONCAT('%s:', seq), '%s', JSON_OBJECT('n', seq), NOW(), "
		    "NOW(), NOW() FROM seq_1_to_%lu", opt_table, opt_prefix,
		    opt_type, opt_insert);
		if (mysql_query(m, sql) != 0)
			die("insert: %s", mysql_error(m));
	}
	ti = clock_ns(CLOCK_REALTIME);
	snprintf(sql, sizeof sql, "SELECT NOT EXISTS (SELECT 1 FROM %1$s "
	    "FORCE INDEX (idx_pick) WHERE status = 'pending') AND NOT EXISTS "
	    "(SELECT 1 FROM %1$s FORCE INDEX (idx_lock) WHERE status = "
	    "'processing')", opt_table);
	next = clock_ns(CLOCK_MONOTONIC);
	end = next + (int64_t)opt_max_seconds * 1000000000;
	while (!done) {
		if (mysql_query(m, sql) != 0 ||
		    (res = mysql_store_result(m)) == NULL)
			die("poll: %s", mysql_error(m));
		polls++;
		row = mysql_fetch_row(res);
		done = row != NULL && row[0] != NULL && strcmp(row[0], "1") == 0;
		mysql_free_result(res);
		if (done)
			break;
		next += (int64_t)opt_interval_ms * 1000000;
		if (next > end)
			die("still not drained after %lu s", opt_max_seconds);
		sleep_until(next);
	}
	printf("t0_ns=%lld\ninsert_us=%lld\ndone_ns=%lld\npolls=%lu\n",
	    (long long)t0, (long long)(ti - t0) / 1000,
	    (long long)clock_ns(CLOCK_REALTIME), polls);
	mysql_close(m);
	return 0;
}

static unsigned long
number(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0')
		die("%s: not a number: %s", what, s);
	return v;
}

int
main(int argc, char **argv)
{
	const char *cmd;
	int i, rc;

	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0 &&
	    argv[i][2] != '\0'; i++) {
		char *a = argv[i], *v = strchr(a, '=');

		if (v == NULL)
			die("unknown option %s", a);
		v++;
		if (strncmp(a, "--socket=", 9) == 0)
			opt_socket = v;
		else if (strncmp(a, "--database=", 11) == 0)
			opt_db = v;
		else if (strncmp(a, "--table=", 8) == 0)
			opt_table = v;
		else if (strncmp(a, "--type=", 7) == 0)
			opt_type = v;
		else if (strncmp(a, "--prefix=", 9) == 0)
			opt_prefix = v;
		else if (strncmp(a, "--out=", 6) == 0)
			opt_out = v;
		else if (strncmp(a, "--rate=", 7) == 0 &&
		    (opt_rate = atof(v)) > 0)
			;
		else if (strncmp(a, "--n=", 4) == 0)
			opt_n = number(v, "--n");
		else if (strncmp(a, "--seed=", 7) == 0)
			opt_seed = number(v, "--seed");
		else if (strncmp(a, "--insert=", 9) == 0)
			opt_insert = number(v, "--insert");
		else if (strncmp(a, "--interval-ms=", 14) == 0)
			opt_interval_ms = number(v, "--interval-ms");
		else if (strncmp(a, "--max-seconds=", 14) == 0)
			opt_max_seconds = number(v, "--max-seconds");
		else
			die("unknown option %s", a);
	}
	if (i >= argc)
		die("usage: arrive [options] insert | exec -- CMD... | "
		    "spawn -- CMD... | drained");
	cmd = argv[i++];
	if (strcmp(cmd, "exec") == 0 || strcmp(cmd, "spawn") == 0) {
		if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc)
			die("%s: -- CMD [ARG...] expected", cmd);
		i++;
	}
	if (strcmp(cmd, "insert") == 0 || strcmp(cmd, "drained") == 0) {
		if (opt_socket == NULL || opt_db == NULL)
			die("%s: --socket and --database are needed", cmd);
	}
	if (strcmp(cmd, "insert") == 0)
		rc = cmd_arrive(0, NULL, 0);
	else if (strcmp(cmd, "exec") == 0)
		rc = cmd_arrive(1, argv + i, argc - i);
	else if (strcmp(cmd, "spawn") == 0)
		rc = cmd_spawn(argv + i);
	else if (strcmp(cmd, "drained") == 0)
		rc = cmd_drained();
	else
		die("unknown command %s", cmd);
	mysql_library_end();
	return rc;
}
