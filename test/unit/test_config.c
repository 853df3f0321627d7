/*
 * test_config.c - jobrun.conf: defaults, a full file, and every mistake an
 * operator can make, with the exact message jobrun prints for it.
 *
 * cfg_parse is driven with text in memory; cfg_load with files in a
 * scratch directory, for what only it does (reading the file, the password
 * file and JOBRUN_DB_PASSWORD).  Every test ends in cfg_free, so a build
 * with -fsanitize=address reports any leak on the error paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "handler.h"

#define PATH "test.conf"
#define DB "[database]\ndatabase = app\n"

/* The scratch directory of the group, for cfg_load. */
struct scratch {
	char dir[64];
};

static int
group_setup(void **state)
{
	static struct scratch s;

	snprintf(s.dir, sizeof s.dir, "/tmp/jobrun-unit-config.XXXXXX");
	if (mkdtemp(s.dir) == NULL)
		return -1;
	/* cfg_load lets the environment win; start from none. */
	unsetenv("JOBRUN_DB_PASSWORD");
	*state = &s;
	return 0;
}

static int
group_teardown(void **state)
{
	struct scratch *s = *state;
	char cmd[128];

	unsetenv("JOBRUN_DB_PASSWORD");
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write text to DIR/name; the path goes to path. */
static void
write_file(const struct scratch *s, const char *name, const char *text,
    char *path, size_t pathlen)
{
	FILE *f;

	snprintf(path, pathlen, "%s/%s", s->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Parse text that must be valid; the caller frees cfg. */
static void
parse_ok(struct cfg *cfg, const char *text)
{
	char err[512] = "";

	if (cfg_parse(cfg, PATH, text, err, sizeof err) != 0)
		fail_msg("cfg_parse failed: %s\n--- text:\n%s", err, text);
}

/* Parse text that must fail with exactly the message want. */
static void
parse_err(const char *text, const char *want)
{
	struct cfg cfg;
	char err[512] = "";
	int rc;

	rc = cfg_parse(&cfg, PATH, text, err, sizeof err);
	cfg_free(&cfg);
	if (rc != -1)
		fail_msg("cfg_parse succeeded, want error: %s\n--- text:\n%s",
		    want, text);
	assert_string_equal(err, want);
	/* A failed parse leaves nothing behind. */
	assert_null(cfg.types);
	assert_int_equal(cfg.ntypes, 0);
	assert_null(cfg.schedules);
	assert_int_equal(cfg.nschedules, 0);
	assert_null(cfg.path);
}

static void
test_defaults(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, DB);
	assert_string_equal(cfg.path, PATH);
	assert_null(cfg.db.host);
	assert_int_equal(cfg.db.port, 3306);
	assert_null(cfg.db.socket);
	assert_null(cfg.db.user);
	assert_null(cfg.db.password);
	assert_null(cfg.db.password_file);
	assert_string_equal(cfg.db.database, "app");
	assert_string_equal(cfg.db.table, "polling_jobs");
	assert_int_equal(cfg.db.connect_timeout, 10);
	assert_null(cfg.db.time_zone);
	assert_int_equal(cfg.run.max_seconds, 45);
	assert_int_equal(cfg.run.batch_size, 20);
	assert_int_equal(cfg.run.lock_seconds, 300);
	assert_int_equal(cfg.run.recover_limit, 100);
	assert_int_equal(cfg.run.backoff_base, 60);
	assert_int_equal(cfg.run.backoff_cap, 3600);
	assert_int_equal(cfg.db.read_timeout, 60);
	assert_int_equal(cfg.db.write_timeout, 60);
	assert_int_equal(cfg.run.max_snoozes, 100);
	assert_int_equal(cfg.run.single, 0);
	assert_int_equal(cfg.run.syslog, 0);
	assert_null(cfg.run.metrics_file);
	assert_int_equal(cfg.ntypes, 0);
	assert_null(cfg_find_type(&cfg, "x"));
	cfg_free(&cfg);
}

static const char full[] =
    "# jobrun.conf for the tests\n"
    "; another comment\n"
    "\n"
    "[database]\n"
    "host = db.example.com\n"
    "port = 3307\n"
    "socket = /run/mysqld/mysqld.sock\n"
    "user = jobrun\n"
    "password = pa#ss\n"
    "database = app\n"
    "table = jobs_2$x\n"
    "connect_timeout = 5   ; seconds\n"
    "time_zone = Asia/Shanghai\n"
    "\n"
    "[run]\n"
    "max_seconds = 30\n"
    "batch_size = 1000000\n"
    "lock_seconds = 3\n"
    "recover_limit = 0\n"
    "backoff_base = 10\n"
    "backoff_cap = 604800\n"
    "\n"
    "[type.x]\n"
    "command = /bin/echo 'hello world' \"a \\\"b\\\"\" $HOME ; a comment\n"
    "handler = exec\n"
    "timeout = 7\n"
    "\n"
    "[type.y]\n"
    "handler = noop\n"
    "[type.order_sync:v2.a-b]\n"
    "handler=exec\n"
    "command=true\n";

static void
test_full_file(void **state)
{
	struct cfg cfg;
	const struct cfg_type *t;

	(void)state;
	parse_ok(&cfg, full);
	assert_string_equal(cfg.db.host, "db.example.com");
	assert_int_equal(cfg.db.port, 3307);
	assert_string_equal(cfg.db.socket, "/run/mysqld/mysqld.sock");
	assert_string_equal(cfg.db.user, "jobrun");
	assert_string_equal(cfg.db.password, "pa#ss");
	assert_null(cfg.db.password_file);
	assert_string_equal(cfg.db.database, "app");
	assert_string_equal(cfg.db.table, "jobs_2$x");
	assert_int_equal(cfg.db.connect_timeout, 5);
	assert_string_equal(cfg.db.time_zone, "Asia/Shanghai");
	assert_int_equal(cfg.run.max_seconds, 30);
	assert_int_equal(cfg.run.batch_size, 1000000);
	assert_int_equal(cfg.run.lock_seconds, 3);
	assert_int_equal(cfg.run.recover_limit, 0);
	assert_int_equal(cfg.run.backoff_base, 10);
	assert_int_equal(cfg.run.backoff_cap, 604800);
	assert_int_equal(cfg.ntypes, 3);

	t = cfg_find_type(&cfg, "x");
	assert_non_null(t);
	assert_string_equal(t->name, "x");
	assert_ptr_equal(t->kind, handler_find("exec"));
	assert_non_null(t->handler);

	t = cfg_find_type(&cfg, "y");
	assert_non_null(t);
	assert_string_equal(t->name, "y");
	assert_ptr_equal(t->kind, handler_find("noop"));
	assert_string_equal(t->kind->name, "noop");

	t = cfg_find_type(&cfg, "order_sync:v2.a-b");
	assert_non_null(t);
	assert_string_equal(t->kind->name, "exec");
	cfg_free(&cfg);
}

/* command before handler is applied once the kind is known: an exec type
 * without its command would fail to parse. */
static void
test_command_before_handler(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, DB "[type.a]\ncommand = /bin/true\nhandler = exec\n"
	    "[type.b]\ntimeout = 5\ncommand = /bin/true\nhandler = exec\n");
	assert_int_equal(cfg.ntypes, 2);
	assert_string_equal(cfg_find_type(&cfg, "a")->kind->name, "exec");
	assert_string_equal(cfg_find_type(&cfg, "b")->kind->name, "exec");
	cfg_free(&cfg);
}

/* A section may be split in two; its keys still belong together. */
static void
test_section_reopened(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, "[type.a]\nhandler = exec\n" DB
	    "[type.a]\ncommand = /bin/true\n[run]\nbatch_size = 7\n");
	assert_int_equal(cfg.ntypes, 1);
	assert_int_equal(cfg.run.batch_size, 7);
	cfg_free(&cfg);
}

/* Running the exec handler shows how command was split. */
static void
test_command_is_split_for_exec(void **state)
{
	struct cfg cfg;
	const struct cfg_type *t;
	struct job job = { .id = 1, .type = "x", .business_key = "k",
	    .payload = "{}", .payload_len = 2, .business_key_len = 1,
	    .attempt = 1, .max_attempts = 5 };
	struct result res = { 0 };

	(void)state;
	parse_ok(&cfg, DB "[type.x]\nhandler = exec\n"
	    "command = /bin/sh -c 'echo \"[$1|$2]\"; exit 3' sh 'a b' \"c\\\"d\"\n");
	t = cfg_find_type(&cfg, "x");
	assert_non_null(t);
	t->kind->run(t->handler, &job, NULL, &res);
	assert_int_equal(res.outcome, OUTCOME_RETRY);
	assert_string_equal(res.message, "exit status 3: [a b|c\"d]");
	cfg_free(&cfg);
}

static void
test_empty_values_mean_default(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, "[database]\nhost =\nsocket =\nuser = \npassword =\n"
	    "password_file =\ntime_zone =\ndatabase = app\n[run]\n"
	    "metrics_file =\n");
	assert_null(cfg.db.password_file);
	assert_null(cfg.run.metrics_file);
	cfg_free(&cfg);
	parse_ok(&cfg, "[database]\nhost =\nsocket =\nuser = \npassword =\n"
	    "time_zone =\ndatabase = app\n");
	assert_null(cfg.db.host);
	assert_null(cfg.db.socket);
	assert_null(cfg.db.user);
	assert_null(cfg.db.password);
	assert_null(cfg.db.time_zone);
	cfg_free(&cfg);
}

static void
test_find_type(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, DB "[type.ab]\nhandler = noop\n"
	    "[type.a]\nhandler = noop\n");
	assert_string_equal(cfg_find_type(&cfg, "a")->name, "a");
	assert_string_equal(cfg_find_type(&cfg, "ab")->name, "ab");
	assert_null(cfg_find_type(&cfg, "abc"));
	assert_null(cfg_find_type(&cfg, "A"));
	assert_null(cfg_find_type(&cfg, ""));
	assert_null(cfg_find_type(&cfg, "type.a"));
	cfg_free(&cfg);
}

static void
test_unknown_section(void **state)
{
	(void)state;
	parse_err(DB "[databse]\nport = 1\n",
	    "test.conf:4: [databse]: unknown section "
	    "(known: database, run, type.NAME, schedule.NAME); did you mean "
	    "[database]?");
	parse_err(DB "[types.x]\nhandler = noop\n",
	    "test.conf:4: [types.x]: unknown section "
	    "(known: database, run, type.NAME, schedule.NAME); did you mean "
	    "[type.x]?");
	parse_err(DB "[schedules.nightly]\ntype = x\n",
	    "test.conf:4: [schedules.nightly]: unknown section "
	    "(known: database, run, type.NAME, schedule.NAME); did you mean "
	    "[schedule.nightly]?");
	parse_err(DB "[type]\nhandler = noop\n",
	    "test.conf:4: [type]: unknown section "
	    "(known: database, run, type.NAME, schedule.NAME); did you mean "
	    "[type.NAME]?");
	parse_err(DB "[Run]\njobs = 2\n",
	    "test.conf:4: [Run]: unknown section "
	    "(known: database, run, type.NAME, schedule.NAME); did you mean "
	    "[run]?");
	/* Nothing close: no guess. */
	parse_err(DB "[nosuch]\nx = 1\n",
	    "test.conf:4: [nosuch]: unknown section "
	    "(known: database, run, type.NAME, schedule.NAME)");
}

static void
test_unknown_key(void **state)
{
	(void)state;
	parse_err(DB "hots = x\n", "test.conf:3: [database] hots: unknown key; "
	    "did you mean host?");
	parse_err(DB "[run]\nbatchsize = 3\n",
	    "test.conf:4: [run] batchsize: unknown key; did you mean "
	    "batch_size?");
	parse_err(DB "[type.x]\nhandler = exec\ncomand = /bin/true\n",
	    "test.conf:5: [type.x] comand: unknown key for handler exec; did "
	    "you mean command?");
	parse_err(DB "[type.y]\nhandler = noop\ncommand = /bin/true\n",
	    "test.conf:5: [type.y] command: unknown key for handler noop: "
	    "command");
}

/* An unknown name gets the known one it most likely meant: one edit
 * away (two past four characters: a swap of neighbours is one), case
 * aside, or one that begins with it; never one of two equally close. */
static void
test_did_you_mean(void **state)
{
	struct cfg_near near;
	char hint[160];

	(void)state;
	parse_err(DB "[schedule.a]\ntype = x\ncrn = @daily\n",
	    "test.conf:5: [schedule.a] crn: unknown key (known: type, cron, "
	    "payload, time_zone, catch_up); did you mean cron?");
	parse_err(DB "[type.x]\nhandler = noop\nconcurency = 2\n",
	    "test.conf:5: [type.x] concurency: unknown key for handler noop: "
	    "concurency; did you mean concurrency?");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = /bin/true\n"
	    "timout = 5\n",
	    "test.conf:6: [type.x] timout: unknown key for handler exec; did "
	    "you mean timeout?");
	parse_err(DB "[database]\npasword = x\n",
	    "test.conf:4: [database] pasword: unknown key; did you mean "
	    "password?");
	parse_err(DB "[run]\nbatch = 5\n",
	    "test.conf:4: [run] batch: unknown key; did you mean batch_size?");
	/* max_seconds or max_snoozes: no guess. */
	parse_err(DB "[run]\nmax = 5\n", "test.conf:4: [run] max: unknown key");
	/* The handler key misspelt: named where it is, not "missing". */
	parse_err(DB "[type.x]\nhander = exec\ncommand = /bin/true\n",
	    "test.conf:4: [type.x] hander: unknown key; did you mean "
	    "handler?");

	cfg_near_init(&near, "ab");
	cfg_near_offer(&near, "ab");
	cfg_near_offer(&near, "abcdef");
	assert_string_equal(cfg_near_hint(&near, "", "", hint, sizeof hint),
	    "");
	cfg_near_init(&near, "order_synk");
	cfg_near_offer(&near, "invoice");
	cfg_near_offer(&near, "order_sync");
	assert_string_equal(cfg_near_hint(&near, "[type.", "]", hint,
	    sizeof hint), "; did you mean [type.order_sync]?");
	cfg_near_init(&near, "sycn");
	cfg_near_offer(&near, "sync");
	cfg_near_offer(&near, "syn");
	assert_string_equal(cfg_near_hint(&near, "", "", hint, sizeof hint),
	    "");
}

/* A [run] key that is not in the table is an error naming it, whatever
 * it resembles: it never lands in another key's field. */
static void
test_unknown_run_key(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_err(DB "[run]\nbackoff = 10\n",
	    "test.conf:4: [run] backoff: unknown key");
	parse_err(DB "[run]\nbackoff_capx = 10\n",
	    "test.conf:4: [run] backoff_capx: unknown key; did you mean "
	    "backoff_cap?");
	parse_err(DB "[run]\nBackoff_Cap = 10\n",
	    "test.conf:4: [run] Backoff_Cap: unknown key; did you mean "
	    "backoff_cap?");
	parse_err(DB "[run]\nmax_attempts = 10\n",
	    "test.conf:4: [run] max_attempts: unknown key");
	/* A [database] key is not a [run] key, nor the other way round. */
	parse_err(DB "[run]\nport = 10\n",
	    "test.conf:4: [run] port: unknown key");
	parse_err(DB "max_seconds = 10\n",
	    "test.conf:3: [database] max_seconds: unknown key");
	/* And the key it resembles keeps its default. */
	parse_ok(&cfg, DB "[run]\nbackoff_cap = 10\nbackoff_base = 5\n");
	assert_int_equal(cfg.run.backoff_cap, 10);
	cfg_free(&cfg);
}

/* "[SECTION]\nKEY = VALUE\n" first (so the key is on line 2), then what
 * every file needs, with the backoff keys as wide apart as they go so
 * that their cross-check does not get in the way. */
static void
range_text(char *text, size_t len, const struct cfg_key *k,
    unsigned long value)
{
	snprintf(text, len, "[%s]\n%s = %lu\n" DB "[run]\n%s%s", k->section,
	    k->key, value,
	    strcmp(k->key, "backoff_base") != 0 ? "backoff_base = 0\n" : "",
	    strcmp(k->key, "backoff_cap") != 0 ? "backoff_cap = 604800\n" :
	    "");
}

static void
range_ok(const struct cfg_key *k, unsigned long value)
{
	struct cfg cfg;
	char text[256];
	unsigned long got;

	range_text(text, sizeof text, k, value);
	parse_ok(&cfg, text);
	got = *(unsigned long *)(void *)((char *)&cfg + k->offset);
	cfg_free(&cfg);
	if (got != value)
		fail_msg("[%s] %s = %lu reads as %lu", k->section, k->key,
		    value, got);
}

static void
range_err(const struct cfg_key *k, unsigned long value)
{
	char text[256], want[256];

	range_text(text, sizeof text, k, value);
	snprintf(want, sizeof want, "test.conf:2: [%s] %s: not a number in "
	    "%lu..%lu: \"%lu\"", k->section, k->key, k->min, k->max, value);
	parse_err(text, want);
}

/* Every number of the table takes its range's two ends and nothing past
 * them, with the message that names the range. */
static void
test_every_range_both_ends(void **state)
{
	const struct cfg_key *keys;
	size_t i, n, numbers = 0;

	(void)state;
	keys = cfg_keys(&n);
	for (i = 0; i < n; i++) {
		if (keys[i].kind != CFG_NUMBER)
			continue;
		numbers++;
		assert_true(keys[i].min <= keys[i].max);
		range_ok(&keys[i], keys[i].min);
		range_ok(&keys[i], keys[i].max);
		if (keys[i].min > 0)
			range_err(&keys[i], keys[i].min - 1);
		range_err(&keys[i], keys[i].max + 1);
	}
	assert_int_equal(numbers, 12);
}

/* Row by row, through the table: a key given twice is an error, wherever
 * it is in the table. */
static void
test_every_key_twice(void **state)
{
	const struct cfg_key *keys;
	char text[256], want[256];
	size_t i, n;

	(void)state;
	keys = cfg_keys(&n);
	for (i = 0; i < n; i++) {
		const char *v = keys[i].def != NULL ? keys[i].def : "x";

		if (strcmp(keys[i].key, "database") == 0)
			continue;	/* DB gives it */
		snprintf(text, sizeof text, DB "[%s]\n%s = %s\n%s = %s\n",
		    keys[i].section, keys[i].key, v, keys[i].key, v);
		snprintf(want, sizeof want, "test.conf:5: [%s] %s: given "
		    "twice: already given at line 4", keys[i].section,
		    keys[i].key);
		parse_err(text, want);
	}
}

/* A value row k takes, for the tests that walk every table. */
static const char *
sample(const struct cfg_key *k)
{
	static const char *const samples[][2] = { { "rate", "1/s" },
	    { "command", "true" }, { "url", "http://127.0.0.1/" },
	    { "header", "X-A: b" }, { "header_env", "X-A: HOME" },
	    { "cron", "@daily" }, { "time_zone", "+00:00" },
	    { "payload", "{}" }, { "catch_up", "0" }, { "deadline", "90m" },
	    { "keep_success", "7d" }, { "keep_failed", "30d" },
	    { "backoff_jitter", "0.5" }, { "priority", "-3" },
	    { "concurrency_key", "$.customer" }, { "key_concurrency", "2" },
	    { "order", "none" } };
	static char number[32];
	size_t i;

	if (k->def != NULL)
		return k->def;
	if (k->kind == CFG_NUMBER) {
		snprintf(number, sizeof number, "%lu", k->min);
		return number;
	}
	for (i = 0; i < sizeof samples / sizeof samples[0]; i++)
		if (strcmp(samples[i][0], k->key) == 0)
			return samples[i][1];
	return "t";
}

/* A [type.x] section of kind around "KEY = VALUE" on line 4 (and line 5
 * when twice), with what the kind needs besides. */
static void
type_text(char *text, size_t len, const char *kind, const char *key,
    const char *value, int twice)
{
	snprintf(text, len, DB "[type.x]\n%s = %s\n%s%s%s%shandler = %s\n%s",
	    key, value, twice ? key : "", twice ? " = " : "",
	    twice ? value : "", twice ? "\n" : "", kind,
	    strcmp(kind, "exec") == 0 ? "command = true\n" :
	    strcmp(kind, "http") == 0 ? "url = http://127.0.0.1/\n" :
	    "rate = 1/s\n");
}

/* Every number row of [type.NAME] and of the handler kinds takes its
 * range's ends and nothing past them, with its row's message. */
static void
type_ranges(const char *kind, const struct cfg_key *rows, size_t n)
{
	struct cfg cfg;
	char text[512], value[32], want[256];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct cfg_key *k = &rows[i];

		if (k->kind != CFG_NUMBER)
			continue;
		snprintf(value, sizeof value, "%lu", k->min);
		type_text(text, sizeof text, kind, k->key, value, 0);
		parse_ok(&cfg, text);
		cfg_free(&cfg);
		snprintf(value, sizeof value, "%lu", k->max);
		type_text(text, sizeof text, kind, k->key, value, 0);
		parse_ok(&cfg, text);
		cfg_free(&cfg);
		snprintf(value, sizeof value, "%lu", k->max + 1);
		type_text(text, sizeof text, kind, k->key, value, 0);
		snprintf(want, sizeof want, "test.conf:4: [type.x] %s: not a "
		    "number of %s in %lu..%lu%s%s%s", k->key, k->unit, k->min,
		    k->max, k->bare ? "" : ": \"", k->bare ? "" : value,
		    k->bare ? "" : "\"");
		parse_err(text, want);
	}
}

/* Each row of [type.NAME], of each kind and of [schedule.NAME] given
 * twice is an error naming the first line, unless the row repeats. */
static void
type_twice(const char *kind, const struct cfg_key *rows, size_t n)
{
	struct cfg cfg;
	char text[512], want[256];
	size_t i;

	for (i = 0; i < n; i++) {
		if (rows[i].kind == CFG_HANDLER)
			continue;	/* test_key_twice has it */
		type_text(text, sizeof text, kind, rows[i].key,
		    sample(&rows[i]), 1);
		if (rows[i].repeatable) {
			parse_ok(&cfg, text);
			cfg_free(&cfg);
			continue;
		}
		snprintf(want, sizeof want, "test.conf:5: [type.x] %s: given "
		    "twice: already given at line 4", rows[i].key);
		parse_err(text, want);
	}
}

static void
test_every_type_key(void **state)
{
	const struct cfg_key *rows;
	const char *const kinds[] = { "exec", "http", "noop" };
	char text[256], want[256];
	size_t i, n;

	(void)state;
	rows = cfg_type_keys(&n);
	type_ranges("noop", rows, n);
	type_twice("noop", rows, n);
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		const struct handler_kind *kind = handler_find(kinds[i]);

		type_ranges(kinds[i], kind->keys, kind->nkeys);
		type_twice(kinds[i], kind->keys, kind->nkeys);
	}
	rows = cfg_schedule_keys(&n);
	for (i = 0; i < n; i++) {
		snprintf(text, sizeof text, DB "[schedule.s]\n%s = %s\n"
		    "%s = %s\n", rows[i].key, sample(&rows[i]), rows[i].key,
		    sample(&rows[i]));
		snprintf(want, sizeof want, "test.conf:5: [schedule.s] %s: "
		    "given twice: already given at line 4", rows[i].key);
		parse_err(text, want);
	}
}

/* [type.NAME] priority: a whole number a SMALLINT holds, sign and all,
 * nothing around it. */
static void
test_type_priority(void **state)
{
	static const char *const bad[] = { "", "1.5", "+1", "- 1", "1x",
	    "32768", "-32769", "--1", "0x10", "1e3", "-" };
	static const struct { const char *text; long level; } good[] = {
	    { "0", 0 }, { "-32768", -32768 }, { "32767", 32767 },
	    { "-5", -5 }, { "007", 7 } };
	char text[256], want[256];
	struct cfg cfg;
	size_t i;

	(void)state;
	parse_ok(&cfg, DB "[type.a]\nhandler = noop\n");
	assert_int_equal(cfg.types[0].priority_set, 0);
	cfg_free(&cfg);
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(text, sizeof text, DB "[type.a]\nhandler = noop\n"
		    "priority = %s\n", good[i].text);
		parse_ok(&cfg, text);
		assert_int_equal(cfg.types[0].priority_set, 1);
		assert_int_equal(cfg.types[0].priority, good[i].level);
		cfg_free(&cfg);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, DB "[type.a]\nhandler = noop\n"
		    "priority = %s\n", bad[i]);
		snprintf(want, sizeof want, "test.conf:5: [type.a] priority: "
		    "not a whole number in -32768..32767: \"%s\"", bad[i]);
		parse_err(text, want);
	}
}

/* backoff_jitter: a fraction with at most three decimals, in [run] and,
 * overriding it, in a [type.NAME]. */
static void
test_backoff_jitter(void **state)
{
	static const char *const bad[] = { "", "2", "1.001", "-0.1", ".5",
	    "0.", "0.1234", "0,5", "10%", "0.1 ", "1e-1", "01" };
	char text[256], want[256];
	struct cfg cfg;
	size_t i;

	(void)state;
	parse_ok(&cfg, DB "[type.a]\nhandler = noop\n");
	assert_int_equal(cfg.run.backoff_jitter, 100);	/* the default */
	assert_int_equal(cfg_find_type(&cfg, "a")->jitter_set, 0);
	cfg_free(&cfg);
	parse_ok(&cfg, DB "[run]\nbackoff_jitter = 0.25\n[type.a]\n"
	    "handler = noop\nbackoff_jitter = 0\n[type.b]\nhandler = noop\n"
	    "backoff_jitter = 1.0\n");
	assert_int_equal(cfg.run.backoff_jitter, 250);
	assert_int_equal(cfg_find_type(&cfg, "a")->jitter_set, 1);
	assert_int_equal(cfg_find_type(&cfg, "a")->backoff_jitter, 0);
	assert_int_equal(cfg_find_type(&cfg, "b")->backoff_jitter, 1000);
	cfg_free(&cfg);
	parse_ok(&cfg, DB "[run]\nbackoff_jitter = 0.005\n");
	assert_int_equal(cfg.run.backoff_jitter, 5);
	cfg_free(&cfg);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, DB "[run]\nbackoff_jitter = %s\n",
		    bad[i]);
		snprintf(want, sizeof want, "test.conf:4: [run] backoff_jitter: "
		    "not a fraction from 0 to 1 with at most three decimals, "
		    "such as 0.1: \"%s\"", bad[i]);
		/* inih strips blanks at the ends of a value. */
		if (strcmp(bad[i], "0.1 ") == 0 || bad[i][0] == '\0')
			continue;
		parse_err(text, want);
	}
}

/* log, single and metrics_file: the keys that are neither numbers nor
 * checked names. */
static void
test_other_kinds(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, DB "[run]\nlog = syslog\nsingle = yes\n"
	    "metrics_file = /tmp/jobrun.prom\n");
	assert_int_equal(cfg.run.syslog, 1);
	assert_int_equal(cfg.run.single, 1);
	assert_string_equal(cfg.run.metrics_file, "/tmp/jobrun.prom");
	cfg_free(&cfg);
	parse_ok(&cfg, DB "[run]\nlog = stderr\nsingle = Off\n"
	    "metrics_file =\n");
	assert_int_equal(cfg.run.syslog, 0);
	assert_int_equal(cfg.run.single, 0);
	assert_null(cfg.run.metrics_file);
	cfg_free(&cfg);
	parse_err(DB "[run]\nlog = Syslog\n",
	    "test.conf:4: [run] log: stderr or syslog, not \"Syslog\"");
	parse_err(DB "[run]\nlog =\n",
	    "test.conf:4: [run] log: stderr or syslog, not \"\"");
	parse_err(DB "[run]\nsingle = maybe\n",
	    "test.conf:4: [run] single: yes or no, not \"maybe\"");
	parse_err(DB "[run]\nsingle =\n",
	    "test.conf:4: [run] single: yes or no, not \"\"");
}

/* The whole of a file from the source tree (the tests run from its top),
 * NUL-ended. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	if (f == NULL)
		fail_msg("open %s (run the tests from the source tree's top)",
		    path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	text = malloc((size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = '\0';
	fclose(f);
	return text;
}

/* The line of text holding "KEY =" at its start, after prefix; NULL when
 * there is none (or, so that a key cannot be shown twice, more than
 * one) in the section. */
static const char *
example_line(const char *text, const char *section, const char *prefix,
    const char *key)
{
	char header[64], want[64];
	const char *line, *found = NULL, *next;
	int inside = 0;

	snprintf(header, sizeof header, "[%s]", section);
	snprintf(want, sizeof want, "%s%s =", prefix, key);
	for (line = text; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		next = next != NULL ? next + 1 : line + strlen(line);
		if (line[0] == '[')
			inside = strncmp(line, header, strlen(header)) == 0;
		else if (inside && strncmp(line, want, strlen(want)) == 0 &&
		    strchr(" \n", line[strlen(want)]) != NULL) {
			if (found != NULL)
				return NULL;
			found = line;
		}
	}
	return found;
}

/* The comment lines ("# ...") above line, joined.  Keys right above it,
 * set or commented out, share them (read_timeout and write_timeout), so
 * those are passed over first. */
static void
comment_above(const char *text, const char *line, char *out, size_t len)
{
	const char *start = line, *prev;
	int comments = 0;
	size_t n;

	while (start > text) {
		prev = start - 1;
		while (prev > text && prev[-1] != '\n')
			prev--;
		if (prev[0] == '#' && (prev[1] == ' ' || prev[1] == '\n'))
			comments = 1;
		else if (comments || prev[0] == '[' || prev[0] == '\n')
			break;
		start = prev;
	}
	n = (size_t)(line - start);
	if (n >= len)
		n = len - 1;
	memcpy(out, start, n);
	out[n] = '\0';
}

/* etc/jobrun.conf shows every key of the table in its section: with its
 * default when it has one, commented out when it has none, and with the
 * range or the values it takes in the comment above it. */
static void
test_example_file_agrees(void **state)
{
	const struct cfg_key *keys;
	char *text, value[128], comment[4096], range[64];
	const char *line, *end;
	struct cfg cfg;
	size_t i, j, n, len;

	(void)state;
	text = slurp("etc/jobrun.conf");
	keys = cfg_keys(&n);
	for (i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];

		line = example_line(text, k->section, "", k->key);
		if (k->def == NULL) {
			if (line != NULL)
				fail_msg("etc/jobrun.conf sets [%s] %s, which "
				    "has no default", k->section, k->key);
			line = example_line(text, k->section, "#", k->key);
			if (line == NULL)
				fail_msg("etc/jobrun.conf: no \"#%s =\" (once) "
				    "in [%s]", k->key, k->section);
		} else {
			if (line == NULL)
				fail_msg("etc/jobrun.conf: no \"%s =\" (once) "
				    "in [%s]", k->key, k->section);
			line += strlen(k->key) + 3;
			end = strchr(line, '\n');
			len = end != NULL ? (size_t)(end - line) : strlen(line);
			assert_true(len < sizeof value);
			memcpy(value, line, len);
			value[len] = '\0';
			if (strcmp(value, k->def) != 0)
				fail_msg("etc/jobrun.conf: [%s] %s = %s, but "
				    "the default is %s", k->section, k->key,
				    value, k->def);
			line -= strlen(k->key) + 3;
		}
		comment_above(text, line, comment, sizeof comment);
		if (k->kind == CFG_NUMBER) {
			snprintf(range, sizeof range, "%lu..%lu", k->min,
			    k->max);
			if (strstr(comment, range) == NULL)
				fail_msg("etc/jobrun.conf: the comment on [%s] "
				    "%s does not say %s:\n%s", k->section,
				    k->key, range, comment);
		}
		for (j = 0; k->kind == CFG_ENUM && k->names[j] != NULL; j++)
			if (strstr(comment, k->names[j]) == NULL)
				fail_msg("etc/jobrun.conf: the comment on [%s] "
				    "%s does not name %s", k->section, k->key,
				    k->names[j]);
	}
	/* And it is a file jobrun reads, once it names its database. */
	len = strlen(text) + sizeof DB;
	{
		char *whole = malloc(len);

		assert_non_null(whole);
		snprintf(whole, len, DB "%s", text);
		parse_ok(&cfg, whole);
		free(whole);
	}
	cfg_free(&cfg);
	free(text);
}

/* The paragraph of ".It Cm KEY" in the part of the man page that starts
 * at head and ends at stop (its section, or its list), and the .It lines
 * right after it, which share it, joined into out with blanks for
 * newlines; 0, or -1 when the key is not there. */
static int
man_paragraph(const char *text, const char *head, const char *stop,
    const char *key, char *out, size_t len)
{
	char item[64];
	const char *start, *end, *p;
	size_t n;

	snprintf(item, sizeof item, "\n.It Cm %s ", key);
	if ((start = strstr(text, head)) == NULL)
		return -1;
	start += strlen(head);
	end = strstr(start, stop);
	if ((p = strstr(start, item)) == NULL || (end != NULL && p > end))
		return -1;
	p++;
	/* Its own .It line and any that follow at once. */
	while (strncmp(p, ".It ", 4) == 0 && strchr(p, '\n') != NULL)
		p = strchr(p, '\n') + 1;
	start = p - 1;
	while (start > text && strncmp(start, item + 1, strlen(item) - 1) != 0)
		start--;
	for (end = p; *end != '\0' && strncmp(end, "\n.It ", 5) != 0 &&
	    strncmp(end, "\n.El", 4) != 0; end++)
		;
	n = (size_t)(end - start);
	if (n >= len)
		n = len - 1;
	memcpy(out, start, n);
	out[n] = '\0';
	for (; *out != '\0'; out++)
		if (*out == '\n')
			*out = ' ';
	return 0;
}

/* ".It Cm KEY No = Cm a | b | c": the values of an enum row, or for
 * handler the kinds of handler.c's table. */
static void
man_values(const struct cfg_key *k, char *want, size_t len)
{
	char names[128];
	const char *p;
	size_t j, n;

	n = (size_t)snprintf(want, len, ".It Cm %s No = Cm ", k->key);
	if (k->kind == CFG_ENUM) {
		for (j = 0; k->names[j] != NULL; j++)
			snprintf(want + strlen(want), len - strlen(want),
			    "%s%s", j > 0 ? " | " : "", k->names[j]);
		return;
	}
	handler_names(names, sizeof names);
	for (p = names; *p != '\0' && n + 4 < len; p++)
		if (strncmp(p, ", ", 2) == 0) {
			memcpy(want + n, " | ", 3);
			n += 3;
			p++;
		} else
			want[n++] = *p;
	want[n] = '\0';
}

/* Row k has its item between head and stop in jobrun.conf(5), which says
 * its range ("1 to 3600"), its values and its default as k has them. */
static void
man_row_agrees(const char *text, const struct cfg_key *k, const char *head,
    const char *stop)
{
	char para[8192], want[256];
	const char *p;

	if (man_paragraph(text, head, stop, k->key, para, sizeof para) != 0)
		fail_msg("jobrun.conf(5): no \".It Cm %s\" under %s", k->key,
		    k->section);
	if (k->kind == CFG_NUMBER) {
		snprintf(want, sizeof want, "%lu to %lu", k->min, k->max);
		if (strstr(para, want) == NULL)
			fail_msg("jobrun.conf(5): %s %s does not say %s",
			    k->section, k->key, want);
	}
	if (k->kind == CFG_ENUM || k->kind == CFG_HANDLER) {
		man_values(k, want, sizeof want);
		if (strncmp(para, want, strlen(want)) != 0 ||
		    strchr(" ", para[strlen(want)]) == NULL)
			fail_msg("jobrun.conf(5): want \"%s\"", want);
	}
	if (k->def == NULL)
		return;
	if ((p = strstr(para, "Default:")) == NULL)
		fail_msg("jobrun.conf(5): %s %s has no Default:", k->section,
		    k->key);
	p += strlen("Default:");
	while (*p == ' ')
		p++;
	if (strncmp(p, ".Li ", 4) == 0 || strncmp(p, ".Cm ", 4) == 0)
		p += 4;
	if (strncmp(p, k->def, strlen(k->def)) != 0 ||
	    strchr(" .,;", p[strlen(k->def)]) == NULL)
		fail_msg("jobrun.conf(5): %s %s: want \"Default: %s\", have "
		    "\"Default: %.20s\"", k->section, k->key, k->def, p);
}

/* jobrun.conf(5) has an item for every row of every table: [database]
 * and [run] in their sections, [type.NAME]'s own keys in the section's
 * first list, each handler kind's in the list that names the kind, and
 * [schedule.NAME]'s in its section. */
static void
test_man_page_agrees(void **state)
{
	const struct cfg_key *keys;
	const struct handler_kind *kind;
	char *text, head[128], names[128], *name, *save = NULL;
	size_t i, n;

	(void)state;
	text = slurp("man/jobrun.conf.5");
	keys = cfg_keys(&n);
	for (i = 0; i < n; i++) {
		snprintf(head, sizeof head, "\n.Ss Section \\&[%s]\\&\n",
		    keys[i].section);
		man_row_agrees(text, &keys[i], head, "\n.Ss ");
	}
	keys = cfg_type_keys(&n);
	for (i = 0; i < n; i++)
		man_row_agrees(text, &keys[i], "\n.Ss Section \\&[type. Ns "
		    "Ar NAME Ns \\&]\\&\n", "\n.El\n");
	keys = cfg_schedule_keys(&n);
	for (i = 0; i < n; i++)
		man_row_agrees(text, &keys[i], "\n.Ss Section \\&[schedule. "
		    "Ns Ar NAME Ns \\&]\\&\n", "\n.Ss ");
	handler_names(names, sizeof names);
	for (name = strtok_r(names, ", ", &save); name != NULL;
	    name = strtok_r(NULL, ", ", &save)) {
		kind = handler_find(name);
		assert_non_null(kind);
		snprintf(head, sizeof head, "\n.Cm %s\nsection", name);
		for (i = 0; i < kind->nkeys; i++) {
			assert_string_equal(kind->keys[i].section, name);
			man_row_agrees(text, &kind->keys[i], head, "\n.El\n");
		}
	}
	free(text);
}

/* A repeated key names the line it was first given at; only an indented
 * line, which inih reads as the key above it again, gets the hint about
 * blanks. */
static void
test_key_twice(void **state)
{
	(void)state;
	parse_err(DB "port = 1\nport = 2\n",
	    "test.conf:4: [database] port: given twice: already given at "
	    "line 3");
	/* A section opened again: the key of its first opening. */
	parse_err("[run]\nbatch_size = 1\n" DB "[run]\nbatch_size = 2\n",
	    "test.conf:6: [run] batch_size: given twice: already given at "
	    "line 2");
	parse_err("[run]\nbatch_size = 1\n" DB "[run]\n  batch_size = 2\n",
	    "test.conf:6: [run] batch_size: given twice: already given at "
	    "line 2");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = a\ncommand = b\n",
	    "test.conf:6: [type.x] command: given twice: already given at "
	    "line 5");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = a\n[run]\n"
	    "[type.x]\ncommand = b\n",
	    "test.conf:8: [type.x] command: given twice: already given at "
	    "line 5");
	parse_err(DB "[type.x]\nhandler = exec\nhandler = noop\n",
	    "test.conf:5: [type.x] handler: given twice: already given at "
	    "line 4");
	/* An indented line repeats the key above it. */
	parse_err("[database]\ndatabase = app\n  other\n",
	    "test.conf:3: [database] database: given twice: the line starts "
	    "with a blank, which continues the key of line 2 (keys start in "
	    "column 1, a value fits on one line)");
	parse_err(DB "[type.x]\ncommand = a\n  b\nhandler = exec\n",
	    "test.conf:5: [type.x] command: given twice: the line starts "
	    "with a blank, which continues the key of line 4 (keys start in "
	    "column 1, a value fits on one line)");
}

/* An indented "[section]" line after a key is inih's continuation of
 * that key, not a header: the key given again, under the section it was
 * in, as jobrun.conf(5) says of a line that begins with a blank. */
static void
test_indented_header_continues_key(void **state)
{
	(void)state;
	parse_err(DB "[type.a]\nhandler = exec\ncommand = /bin/true\n"
	    " [type.b]\nhandler = exec\n",
	    "test.conf:6: [type.a] command: given twice: the line starts "
	    "with a blank, which continues the key of line 5 (keys start in "
	    "column 1, a value fits on one line)");
	/* Even a key that may repeat: the line is not another header. */
	parse_err(DB "[type.h]\nhandler = http\nurl = http://127.0.0.1/\n"
	    "header = X-A: b\n X-B: c\n",
	    "test.conf:7: [type.h] header: given twice: the line starts "
	    "with a blank, which continues the key of line 6 (keys start in "
	    "column 1, a value fits on one line)");
	parse_err(DB "\t[run]\nbatch_size = 2\n",
	    "test.conf:3: [database] database: given twice: the line starts "
	    "with a blank, which continues the key of line 2 (keys start in "
	    "column 1, a value fits on one line)");
}

/* An empty value leaves the key unset only for the keys jobrun.conf(5)
 * lists (test_empty_values_mean_default); for any other it is an error
 * naming the key. */
static void
test_empty_value_is_an_error(void **state)
{
	static const char *const cases[][2] = {
	    { DB "tls_ca_file =\n", "3: [database] tls_ca_file" },
	    { DB "tls = verify\nhost = db\ntls_cert_file =\n",
	      "5: [database] tls_cert_file" },
	    { DB "tls = verify\nhost = db\ntls_key_file =\n",
	      "5: [database] tls_key_file" },
	    { DB "[schedule.s]\ntype = t\ncron = @daily\npayload =\n",
	      "6: [schedule.s] payload" },
	    { DB "[schedule.s]\ntype = t\ncron = @daily\ntime_zone =\n",
	      "6: [schedule.s] time_zone" },
	    { DB "[type.h]\nhandler = http\nurl = http://127.0.0.1/\n"
	      "ca_file =\n", "6: [type.h] ca_file" },
	    { DB "[type.h]\nhandler = http\nurl = http://127.0.0.1/\n"
	      "ca_path =\n", "6: [type.h] ca_path" },
	    { DB "[type.h]\nhandler = http\nurl = http://127.0.0.1/\n"
	      "header_file =\n", "6: [type.h] header_file" },
	};
	char want[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(want, sizeof want, PATH ":%s: an empty value (give "
		    "one, or leave the key out)", cases[i][1]);
		parse_err(cases[i][0], want);
	}
}

/* A UTF-8 byte order mark before the first line is not part of it. */
static void
test_byte_order_mark(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, "\xEF\xBB\xBF" DB "[run]\nbatch_size = 7\n");
	assert_string_equal(cfg.db.database, "app");
	assert_int_equal(cfg.run.batch_size, 7);
	cfg_free(&cfg);
	parse_ok(&cfg, "\xEF\xBB\xBF# a comment first\n" DB);
	cfg_free(&cfg);
	/* Line numbers are unchanged by it; only a leading one is skipped. */
	parse_err("\xEF\xBB\xBF" DB "hots = x\n",
	    "test.conf:3: [database] hots: unknown key; did you mean host?");
	parse_err(DB "\xEF\xBB\xBF[run]\n",
	    "test.conf:3: syntax error (expected [section] or key = value)");
}

static void
test_bad_number(void **state)
{
	(void)state;
	parse_err(DB "port = abc\n",
	    "test.conf:3: [database] port: not a number in 1..65535: \"abc\"");
	parse_err(DB "[run]\nbatch_size = 10x\n",
	    "test.conf:4: [run] batch_size: not a number in 1..1000000: "
	    "\"10x\"");
	parse_err(DB "[run]\nmax_seconds = -5\n",
	    "test.conf:4: [run] max_seconds: not a number in 1..86400: "
	    "\"-5\"");
	parse_err(DB "[run]\nlock_seconds = 1.5\n",
	    "test.conf:4: [run] lock_seconds: not a number in 3..86400: "
	    "\"1.5\"");
	parse_err(DB "[run]\nrecover_limit = +1\n",
	    "test.conf:4: [run] recover_limit: not a number in 0..100000: "
	    "\"+1\"");
	parse_err(DB "[run]\nbackoff_base =\n",
	    "test.conf:4: [run] backoff_base: not a number in 0..86400: \"\"");
	parse_err(DB "[run]\nbackoff_cap = 99999999999999999999999\n",
	    "test.conf:4: [run] backoff_cap: not a number in 0..604800: "
	    "\"99999999999999999999999\"");
	parse_err(DB "connect_timeout = ten\n",
	    "test.conf:3: [database] connect_timeout: not a number in 1..3600: "
	    "\"ten\"");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = true\ntimeout = 0\n",
	    "test.conf:6: [type.x] timeout: not a number of seconds in "
	    "1..86400: \"0\"");
}

static void
test_out_of_range(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_err(DB "port = 0\n",
	    "test.conf:3: [database] port: not a number in 1..65535: \"0\"");
	parse_err(DB "port = 65536\n",
	    "test.conf:3: [database] port: not a number in 1..65535: "
	    "\"65536\"");
	parse_err(DB "connect_timeout = 3601\n",
	    "test.conf:3: [database] connect_timeout: not a number in "
	    "1..3600: \"3601\"");
	parse_err(DB "[run]\nmax_seconds = 86401\n",
	    "test.conf:4: [run] max_seconds: not a number in 1..86400: "
	    "\"86401\"");
	parse_err(DB "[run]\nbatch_size = 0\n",
	    "test.conf:4: [run] batch_size: not a number in 1..1000000: "
	    "\"0\"");
	parse_err(DB "[run]\nbatch_size = 1000001\n",
	    "test.conf:4: [run] batch_size: not a number in 1..1000000: "
	    "\"1000001\"");
	parse_err(DB "[run]\nlock_seconds = 2\n",
	    "test.conf:4: [run] lock_seconds: not a number in 3..86400: "
	    "\"2\"");
	parse_err(DB "[run]\nrecover_limit = 100001\n",
	    "test.conf:4: [run] recover_limit: not a number in 0..100000: "
	    "\"100001\"");
	parse_err(DB "[run]\nbackoff_base = 86401\nbackoff_cap = 604800\n",
	    "test.conf:4: [run] backoff_base: not a number in 0..86400: "
	    "\"86401\"");
	parse_err(DB "[run]\nbackoff_cap = 604801\n",
	    "test.conf:4: [run] backoff_cap: not a number in 0..604800: "
	    "\"604801\"");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = true\n"
	    "timeout = 86401\n",
	    "test.conf:6: [type.x] timeout: not a number of seconds in "
	    "1..86400: \"86401\"");

	/* The edges themselves are fine. */
	parse_ok(&cfg, DB "port = 65535\nconnect_timeout = 3600\n[run]\n"
	    "max_seconds = 86400\nbatch_size = 1\nlock_seconds = 86400\n"
	    "recover_limit = 100000\nbackoff_base = 86400\n"
	    "backoff_cap = 86400\n");
	assert_int_equal(cfg.db.port, 65535);
	assert_int_equal(cfg.db.connect_timeout, 3600);
	assert_int_equal(cfg.run.max_seconds, 86400);
	assert_int_equal(cfg.run.batch_size, 1);
	assert_int_equal(cfg.run.lock_seconds, 86400);
	assert_int_equal(cfg.run.recover_limit, 100000);
	assert_int_equal(cfg.run.backoff_base, 86400);
	assert_int_equal(cfg.run.backoff_cap, 86400);
	cfg_free(&cfg);

	parse_ok(&cfg, DB "port = 1\nconnect_timeout = 1\n[run]\n"
	    "backoff_base = 0\nbackoff_cap = 0\n");
	assert_int_equal(cfg.run.backoff_base, 0);
	assert_int_equal(cfg.run.backoff_cap, 0);
	cfg_free(&cfg);
}

static void
test_backoff_cap_below_base(void **state)
{
	(void)state;
	parse_err(DB "[run]\nbackoff_base = 100\nbackoff_cap = 99\n",
	    "test.conf: [run] backoff_cap: must be at least backoff_base "
	    "(100)");
	/* Against the default cap of 3600. */
	parse_err(DB "[run]\nbackoff_base = 3601\n",
	    "test.conf: [run] backoff_cap: must be at least backoff_base "
	    "(3601)");
}

static void
test_missing_database(void **state)
{
	(void)state;
	parse_err("", "test.conf: [database] database: missing: name the "
	    "database that holds the job table");
	parse_err("[database]\nhost = h\ndatabase =\n",
	    "test.conf: [database] database: missing: name the database that "
	    "holds the job table");
	parse_err("[run]\nbatch_size = 5\n",
	    "test.conf: [database] database: missing: name the database that "
	    "holds the job table");
}

static void
test_bad_table_name(void **state)
{
	char text[256];
	struct cfg cfg;

	(void)state;
	parse_err(DB "table = jobs;drop\n",
	    "test.conf:3: [database] table: not a table name (1..64 letters, "
	    "digits, _ or $): \"jobs;drop\"");
	parse_err(DB "table = my-jobs\n",
	    "test.conf:3: [database] table: not a table name (1..64 letters, "
	    "digits, _ or $): \"my-jobs\"");
	parse_err(DB "table = `jobs`\n",
	    "test.conf:3: [database] table: not a table name (1..64 letters, "
	    "digits, _ or $): \"`jobs`\"");
	parse_err(DB "table = app.jobs\n",
	    "test.conf:3: [database] table: not a table name (1..64 letters, "
	    "digits, _ or $): \"app.jobs\"");
	parse_err(DB "table =\n",
	    "test.conf:3: [database] table: not a table name (1..64 letters, "
	    "digits, _ or $): \"\"");

	/* 64 characters fit, 65 do not. */
	snprintf(text, sizeof text, DB "table = %s\n",
	    "t234567890123456789012345678901234567890123456789012345678901234");
	parse_ok(&cfg, text);
	assert_int_equal(strlen(cfg.db.table), 64);
	cfg_free(&cfg);
	parse_err(DB "table = "
	    "t2345678901234567890123456789012345678901234567890123456789012345"
	    "\n",
	    "test.conf:3: [database] table: not a table name (1..64 letters, "
	    "digits, _ or $): "
	    "\"t2345678901234567890123456789012345678901234567890123456789012345"
	    "\"");
}

static void
test_bad_time_zone(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_err(DB "time_zone = '+08:00'\n",
	    "test.conf:3: [database] time_zone: not a time zone (e.g. +00:00 "
	    "or Europe/Berlin): \"'+08:00'\"");
	parse_ok(&cfg, DB "time_zone = +08:00\n");
	assert_string_equal(cfg.db.time_zone, "+08:00");
	cfg_free(&cfg);
}

static void
test_bad_type_name(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_err(DB "[type.a b]\nhandler = noop\n",
	    "test.conf:4: [type.a b]: not a type name (1..64 letters, digits, "
	    "_ . : or -)");
	parse_err(DB "[type.]\nhandler = noop\n",
	    "test.conf:4: [type.]: not a type name (1..64 letters, digits, "
	    "_ . : or -)");
	parse_ok(&cfg, DB "[type.a_b.c:d-E9]\nhandler = noop\n");
	assert_string_equal(cfg.types[0].name, "a_b.c:d-E9");
	cfg_free(&cfg);
}

/* polling_jobs.type holds 64 characters, and so may a section's NAME: all
 * of them must be kept, or jobs of that type are never claimed. */
static void
test_long_type_name(void **state)
{
	struct cfg cfg;
	char name[CFG_TYPE_MAX + 1] = "";
	size_t n;

	(void)state;
	/* Copied out first so a failed check leaks nothing. */
	parse_ok(&cfg, DB "[type."
	    "t234567890123456789012345678901234567890123456789012345678901234"
	    "]\nhandler = noop\n");
	n = cfg.ntypes;
	if (n == 1)
		snprintf(name, sizeof name, "%s", cfg.types[0].name);
	cfg_free(&cfg);
	assert_int_equal(n, 1);
	assert_string_equal(name,
	    "t234567890123456789012345678901234567890123456789012345678901234");

	/* Two names that differ only after character 44 stay two types. */
	parse_ok(&cfg, DB
	    "[type.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaXX]\n"
	    "handler = noop\n"
	    "[type.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaYY]\n"
	    "handler = noop\n");
	n = cfg.ntypes;
	cfg_free(&cfg);
	assert_int_equal(n, 2);

	parse_err(DB "[type."
	    "t2345678901234567890123456789012345678901234567890123456789012345"
	    "]\nhandler = noop\n",
	    "test.conf:4: [type."
	    "t2345678901234567890123456789012345678901234567890123456789012345"
	    "]: not a type name (1..64 letters, digits, _ . : or -)");
}

static void
test_unknown_handler(void **state)
{
	(void)state;
	parse_err(DB "[type.x]\nhandler = ftp\n",
	    "test.conf:4: [type.x] handler: unknown handler \"ftp\" "
	    "(known: exec, http, noop)");
	parse_err(DB "[type.x]\nhandler =\n",
	    "test.conf:4: [type.x] handler: unknown handler \"\" "
	    "(known: exec, http, noop)");
}

static void
test_missing_handler(void **state)
{
	(void)state;
	parse_err(DB "[type.x]\ncommand = /bin/true\ntimeout = 5\n",
	    "test.conf:4: [type.x] handler: missing (known: exec, http, noop)");
}

/* The man page says handler is required; a [type.NAME] section without
 * any key is an operator's mistake like one with keys but no handler. */
static void
test_empty_type_section_is_missing_handler(void **state)
{
	(void)state;
	parse_err(DB "[type.x]\n",
	    "test.conf:3: [type.x] handler: missing (known: exec, http, noop)");
}

static void
test_exec_without_command(void **state)
{
	(void)state;
	parse_err(DB "[type.x]\ntimeout = 5\nhandler = exec\n",
	    "test.conf:5: [type.x]: handler exec needs a command");
	parse_err(DB "[type.x]\nhandler = exec\ncommand =\n",
	    "test.conf:5: [type.x] command: empty command");
}

static void
test_bad_command(void **state)
{
	(void)state;
	parse_err(DB "[type.x]\nhandler = exec\ncommand = echo 'abc\n",
	    "test.conf:5: [type.x] command: unterminated single quote");
	parse_err(DB "[type.x]\ncommand = echo \"abc\nhandler = exec\n",
	    "test.conf:4: [type.x] command: unterminated double quote");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = echo abc\\\n",
	    "test.conf:5: [type.x] command: trailing backslash");
}

static void
test_key_outside_section(void **state)
{
	struct cfg cfg;
	char err[512] = "";
	int rc;

	(void)state;
	rc = cfg_parse(&cfg, PATH, "database = app\n" DB, err, sizeof err);
	cfg_free(&cfg);
	assert_int_equal(rc, -1);
	/* "FILE:LINE: key: ..." - there is no section to name. */
	if (strncmp(err, "test.conf:1: ", 13) != 0 ||
	    strstr(err, "database") == NULL ||
	    strstr(err, "key outside any section") == NULL ||
	    strstr(err, "(null)") != NULL)
		fail_msg("unexpected message: %s", err);
}

/* A line of "command = /bin/echo xxx..." of exactly len bytes. */
static char *
long_line_text(size_t len, const char *end)
{
	static const char head[] = DB "[type.x]\nhandler = exec\n";
	static const char key[] = "command = /bin/echo ";
	char *text = malloc(sizeof head + len + 2);
	size_t n = sizeof head - 1;

	assert_non_null(text);
	memcpy(text, head, n);
	memcpy(text + n, key, sizeof key - 1);
	memset(text + n + sizeof key - 1, 'x', len - (sizeof key - 1));
	strcpy(text + n + len, end);
	return text;
}

static void
test_line_length(void **state)
{
	struct cfg cfg;
	char *text;

	(void)state;
	text = long_line_text(199, "\n");
	parse_ok(&cfg, text);
	cfg_free(&cfg);
	free(text);

	/* The last line, without a newline. */
	text = long_line_text(199, "");
	parse_ok(&cfg, text);
	cfg_free(&cfg);
	free(text);

	text = long_line_text(200, "\n");
	parse_err(text, "test.conf:5: line longer than 199 bytes");
	free(text);

	text = long_line_text(200, "");
	parse_err(text, "test.conf:5: line longer than 199 bytes");
	free(text);

	text = long_line_text(1000, "\n");
	parse_err(text, "test.conf:5: line longer than 199 bytes");
	free(text);
}

static void
test_syntax_error(void **state)
{
	(void)state;
	parse_err(DB "batch_size 20\n",
	    "test.conf:3: syntax error (expected [section] or key = value)");
	parse_err(DB "[run\n",
	    "test.conf:3: syntax error (expected [section] or key = value)");
}

/* The first mistake is the one reported, even when the lines after it
 * hold another one: "[database" on line 1 must not turn into "key outside
 * any section" on line 2. */
static void
test_syntax_error_reported_first(void **state)
{
	(void)state;
	parse_err("[database\ndatabase = app\n",
	    "test.conf:1: syntax error (expected [section] or key = value)");
	parse_err(DB "[run]\nbatch_size 20\nbatch_sise = 20\n",
	    "test.conf:4: syntax error (expected [section] or key = value)");
}

static void
test_comments_and_crlf(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, "; comment\r\n# comment\r\n[database]\r\n"
	    "database = app ; inline\r\nuser = a;b\r\n\r\n[run]\r\n"
	    "batch_size = 7\r\n");
	assert_string_equal(cfg.db.database, "app");
	assert_string_equal(cfg.db.user, "a;b");
	assert_int_equal(cfg.run.batch_size, 7);
	cfg_free(&cfg);
}

/* inih ends a value at " ;" only: "user = jobrun # db user" would log
 * in as "jobrun # db user" and blame the password, and a command would
 * get "#" and "db" as arguments.  A blank and # is refused in any value
 * but the password's. */
static void
test_hash_after_blank(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_err(DB "user = jobrun # db user\n",
	    "test.conf:3: [database] user: the value holds \" #\", which is "
	    "not a comment here: a comment after a value starts with \" ;\"");
	parse_err(DB "[type.x]\nhandler = exec\ncommand = /bin/true\t# main\n",
	    "test.conf:5: [type.x] command: the value holds \" #\", which is "
	    "not a comment here: a comment after a value starts with \" ;\"");
	parse_err(DB "[run]\nbatch_size = 5 # at most\n",
	    "test.conf:4: [run] batch_size: the value holds \" #\", which is "
	    "not a comment here: a comment after a value starts with \" ;\"");
	parse_err(DB "[type.x]\nhandler = noop # for now\n",
	    "test.conf:4: [type.x] handler: the value holds \" #\", which is "
	    "not a comment here: a comment after a value starts with \" ;\"");
	parse_err(DB "[schedule.s]\ntype = x\ncron = @daily\n"
	    "payload = {\"note\": \"run #2\"}\n",
	    "test.conf:6: [schedule.s] payload: the value holds \" #\", which "
	    "is not a comment here: a comment after a value starts with "
	    "\" ;\"");
	/* What may hold a #: the password, and a # after anything but a
	 * blank (a quote in a command, \u0023 in JSON, a URL's fragment). */
	parse_ok(&cfg, DB "user = jobrun ; db user\npassword = pa #ss\n"
	    "[type.x]\nhandler = exec\ncommand = /bin/echo \"#1\" a#b\n"
	    "[schedule.s]\ntype = x\ncron = @daily\n"
	    "payload = {\"note\": \"run \\u00232\"}\n");
	assert_string_equal(cfg.db.user, "jobrun");
	assert_string_equal(cfg.db.password, "pa #ss");
	assert_string_equal(cfg.schedules[0].payload,
	    "{\"note\": \"run \\u00232\"}");
	cfg_free(&cfg);
	assert_null(cfg_comment_in("a#b"));
	assert_null(cfg_comment_in("#a"));
	assert_string_equal(cfg_comment_in("a\t#b"), "\t#b");
}

static void
test_parse_ignores_password_env(void **state)
{
	struct cfg cfg;

	(void)state;
	setenv("JOBRUN_DB_PASSWORD", "from-env", 1);
	parse_ok(&cfg, DB "password = from-file\n"
	    "password_file = /nonexistent/jobrun-password\n");
	unsetenv("JOBRUN_DB_PASSWORD");
	assert_string_equal(cfg.db.password, "from-file");
	assert_string_equal(cfg.db.password_file,
	    "/nonexistent/jobrun-password");
	assert_int_equal(cfg.db.password_file_line, 4);
	cfg_free(&cfg);
}

static void
test_load_file(void **state)
{
	struct cfg cfg;
	char path[256], err[512] = "";

	write_file(*state, "full.conf", full, path, sizeof path);
	if (cfg_load(&cfg, path, err, sizeof err) != 0)
		fail_msg("cfg_load: %s", err);
	assert_string_equal(cfg.path, path);
	assert_string_equal(cfg.db.password, "pa#ss");
	assert_int_equal(cfg.ntypes, 3);
	cfg_free(&cfg);
}

static void
test_load_password_file(void **state)
{
	struct cfg cfg;
	char conf[256], pw[256], text[512], err[512] = "";

	write_file(*state, "password", "s3cret ;#x\nsecond line\n", pw,
	    sizeof pw);
	snprintf(text, sizeof text, DB "password_file = %s\n", pw);
	write_file(*state, "pw.conf", text, conf, sizeof conf);
	if (cfg_load(&cfg, conf, err, sizeof err) != 0)
		fail_msg("cfg_load: %s", err);
	assert_string_equal(cfg.db.password, "s3cret ;#x");
	cfg_free(&cfg);

	/* CRLF, and no newline at all. */
	write_file(*state, "password", "dos\r\n", pw, sizeof pw);
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), 0);
	assert_string_equal(cfg.db.password, "dos");
	cfg_free(&cfg);
	write_file(*state, "password", "bare", pw, sizeof pw);
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), 0);
	assert_string_equal(cfg.db.password, "bare");
	cfg_free(&cfg);
}

static void
test_load_password_env_overrides(void **state)
{
	struct cfg cfg;
	char conf[256], pw[256], text[512], err[512] = "";

	write_file(*state, "password2", "from-file\n", pw, sizeof pw);
	snprintf(text, sizeof text, DB "password_file = %s\n", pw);
	write_file(*state, "env.conf", text, conf, sizeof conf);

	setenv("JOBRUN_DB_PASSWORD", "from-env", 1);
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), 0);
	unsetenv("JOBRUN_DB_PASSWORD");
	assert_string_equal(cfg.db.password, "from-env");
	cfg_free(&cfg);

	/* Without the variable the file counts again. */
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), 0);
	assert_string_equal(cfg.db.password, "from-file");
	cfg_free(&cfg);

	/* Over a password key too, and with no password anywhere. */
	write_file(*state, "env2.conf", DB "password = p\n", conf, sizeof conf);
	setenv("JOBRUN_DB_PASSWORD", "from-env", 1);
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), 0);
	assert_string_equal(cfg.db.password, "from-env");
	cfg_free(&cfg);
	write_file(*state, "env3.conf", DB, conf, sizeof conf);
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), 0);
	unsetenv("JOBRUN_DB_PASSWORD");
	assert_string_equal(cfg.db.password, "from-env");
	cfg_free(&cfg);
}

static void
test_load_password_file_missing(void **state)
{
	const struct scratch *s = *state;
	struct cfg cfg;
	char conf[256], text[512], err[1024] = "", want[1024];

	snprintf(text, sizeof text, DB "user = u\npassword_file = %s/nope\n",
	    s->dir);
	write_file(*state, "nopw.conf", text, conf, sizeof conf);
	assert_int_equal(cfg_load(&cfg, conf, err, sizeof err), -1);
	cfg_free(&cfg);
	snprintf(want, sizeof want, "%s:4: [database] password_file: open "
	    "%s/nope: No such file or directory", conf, s->dir);
	assert_string_equal(err, want);
	assert_null(cfg.path);
}

static void
test_load_missing_file(void **state)
{
	const struct scratch *s = *state;
	struct cfg cfg;
	char path[256], err[512] = "", want[512];

	snprintf(path, sizeof path, "%s/missing.conf", s->dir);
	assert_int_equal(cfg_load(&cfg, path, err, sizeof err), -1);
	cfg_free(&cfg);
	snprintf(want, sizeof want, "open %s: No such file or directory",
	    path);
	assert_string_equal(err, want);
}

static void
test_load_error_names_file(void **state)
{
	struct cfg cfg;
	char path[256], err[512] = "", want[512];

	write_file(*state, "bad.conf", DB "[run]\nbatch_size = lots\n", path,
	    sizeof path);
	assert_int_equal(cfg_load(&cfg, path, err, sizeof err), -1);
	cfg_free(&cfg);
	snprintf(want, sizeof want, "%s:4: [run] batch_size: not a number in "
	    "1..1000000: \"lots\"", path);
	assert_string_equal(err, want);
}

static void
test_load_nul_byte(void **state)
{
	const struct scratch *s = *state;
	struct cfg cfg;
	char path[256], err[512] = "", want[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/nul.conf", s->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(DB "\0x\n", 1, sizeof DB + 2, f),
	    sizeof DB + 2);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(cfg_load(&cfg, path, err, sizeof err), -1);
	cfg_free(&cfg);
	snprintf(want, sizeof want, "read %s: contains a NUL byte", path);
	assert_string_equal(err, want);
}

static void
test_small_error_buffer(void **state)
{
	struct cfg cfg;
	char err[16];

	(void)state;
	memset(err, 'x', sizeof err);
	assert_int_equal(cfg_parse(&cfg, PATH, "[nope]\na = 1\n", err,
	    sizeof err), -1);
	cfg_free(&cfg);
	assert_string_equal(err, "test.conf:2: [n");
}

/* [schedule.NAME]: every key read, the defaults, and each error with
 * its file, line and key. */
static void
test_schedules(void **state)
{
	const struct cfg_schedule *s;
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, DB "[schedule.nightly]\ntype = report\n"
	    "cron = 30 2 * * *\npayload = {\"x\": 1}\n"
	    "time_zone = Europe/Berlin\ncatch_up = 2h\n"
	    "[schedule.tick]\ncron = @hourly\ntype = t\n");
	assert_int_equal(cfg.nschedules, 2);
	s = &cfg.schedules[0];
	assert_string_equal(s->name, "nightly");
	assert_string_equal(s->type, "report");
	assert_string_equal(s->cron_text, "30 2 * * *");
	assert_int_equal(s->cron.hours, 1 << 2);
	assert_string_equal(s->payload, "{\"x\": 1}");
	assert_string_equal(s->time_zone, "Europe/Berlin");
	assert_int_equal(s->catch_up, 7200);
	s = &cfg.schedules[1];
	assert_null(s->payload);
	assert_null(s->time_zone);
	assert_int_equal(s->catch_up, 0);
	cfg_free(&cfg);

	parse_err(DB "[schedule.a]\ncron = @daily\n",
	    "test.conf:4: [schedule.a] type: missing: the type of the jobs it "
	    "enqueues");
	parse_err(DB "[schedule.a]\ntype = t\n",
	    "test.conf:4: [schedule.a] cron: missing: when it runs, e.g. "
	    "\"0 3 * * *\" or @daily");
	parse_err(DB "[schedule.a]\ntype = t\ncron = */0 * * * *\n",
	    "test.conf:5: [schedule.a] cron: minute: not 0..59, a list, a "
	    "range or a step of 1 to 60: \"*/0\"");
	parse_err(DB "[schedule.a]\ntype = t\ncron = @daily\ncron = @daily\n",
	    "test.conf:6: [schedule.a] cron: given twice: already given at "
	    "line 5");
	parse_err(DB "[schedule.a]\ntype = t\ncron = @daily\ncatch_up = 1y\n",
	    "test.conf:6: [schedule.a] catch_up: not a duration such as 3600, "
	    "90m, 12h, 30d or 2w (at most 10 years): \"1y\"");
	parse_err(DB "[schedule.a]\ntype = t\ncron = @daily\nhandler = x\n",
	    "test.conf:6: [schedule.a] handler: unknown key (known: type, "
	    "cron, payload, time_zone, catch_up)");
	parse_err(DB "[schedule.a]\ntype = a b\ncron = @daily\n",
	    "test.conf:4: [schedule.a] type: not a type name (1..64 letters, "
	    "digits, _ . : or -): \"a b\"");
	parse_err(DB "[schedule.a@b]\ntype = t\ncron = @daily\n",
	    "test.conf:4: [schedule.a@b]: not a schedule name (1..64 "
	    "letters, digits, _ . : or -)");
	parse_err(DB "[schedule.a]\ntype = t\ncron = @daily\n"
	    "time_zone = Europe/Berlin'\n",
	    "test.conf:6: [schedule.a] time_zone: not a time zone (e.g. "
	    "+00:00 or Europe/Berlin): \"Europe/Berlin'\"");
}

/* concurrency, rate and burst: for every handler, read into the type's
 * limits; rates in three units; burst only with rate. */
/* [database] tls and its files: off by default; every combination that
 * would leave a key unused, or TLS on the unix socket, is an error. */
static void
test_tls_keys(void **state)
{
	struct cfg cfg;

	(void)state;
	parse_ok(&cfg, DB);
	assert_int_equal(cfg.db.tls, CFG_TLS_OFF);
	assert_null(cfg.db.tls_ca_file);
	assert_null(cfg.db.tls_cert_file);
	assert_null(cfg.db.tls_key_file);
	assert_int_equal(cfg_db_tcp(&cfg.db), 0);
	cfg_free(&cfg);

	parse_ok(&cfg, DB "host = db.example\ntls = verify\n"
	    "tls_ca_file = /etc/ssl/db-ca.pem\n"
	    "tls_cert_file = /etc/jobrun/client.pem\n"
	    "tls_key_file = /etc/jobrun/client.key\n");
	assert_int_equal(cfg.db.tls, CFG_TLS_VERIFY);
	assert_string_equal(cfg.db.tls_ca_file, "/etc/ssl/db-ca.pem");
	assert_string_equal(cfg.db.tls_cert_file, "/etc/jobrun/client.pem");
	assert_string_equal(cfg.db.tls_key_file, "/etc/jobrun/client.key");
	assert_int_equal(cfg_db_tcp(&cfg.db), 1);
	cfg_free(&cfg);

	/* verify without a CA file: the system's CAs. */
	parse_ok(&cfg, DB "host = 10.0.0.5\ntls = verify\n");
	assert_int_equal(cfg.db.tls, CFG_TLS_VERIFY);
	assert_null(cfg.db.tls_ca_file);
	cfg_free(&cfg);

	parse_ok(&cfg, DB "host = 10.0.0.5\ntls = on\n");
	assert_int_equal(cfg.db.tls, CFG_TLS_ON);
	cfg_free(&cfg);

	/* Empty is an error: jobrun.conf(5) lets it mean unset only for
	 * host, socket, user, password, password_file, database, time_zone
	 * and metrics_file (test_empty_value_is_an_error has the rest). */
	parse_err(DB "tls_ca_file =\ntls = off\n", PATH ":3: [database] "
	    "tls_ca_file: an empty value (give one, or leave the key out)");

	parse_ok(&cfg, DB "host = db\nsocket = /run/mysqld/mysqld.sock\n");
	assert_int_equal(cfg_db_tcp(&cfg.db), 0);
	cfg_free(&cfg);

	parse_err(DB "host = db\ntls = yes\n", PATH ":4: [database] tls: "
	    "off, on or verify, not \"yes\"");
	parse_err(DB "host = db\ntls = on\ntls = verify\n", PATH ":5: "
	    "[database] tls: given twice: already given at line 4");
	parse_err(DB "host = db\ntls_ca_file = /ca.pem\n", PATH ":4: "
	    "[database] tls_ca_file: needs tls = on or verify (tls is off)");
	parse_err(DB "host = db\ntls = off\ntls_cert_file = /c.pem\n"
	    "tls_key_file = /c.key\n", PATH ":5: [database] tls_cert_file: "
	    "needs tls = on or verify (tls is off)");
	parse_err(DB "host = db\ntls = on\ntls_ca_file = /ca.pem\n",
	    PATH ":5: [database] tls_ca_file: a CA is to verify the server "
	    "with, which tls = on does not do: set tls = verify");
	parse_err(DB "host = db\ntls = verify\ntls_cert_file = /c.pem\n",
	    PATH ":5: [database] tls_cert_file: needs tls_key_file too");
	parse_err(DB "host = db\ntls = verify\ntls_key_file = /c.key\n",
	    PATH ":5: [database] tls_key_file: needs tls_cert_file too");
	parse_err(DB "tls = verify\n", PATH ":3: [database] tls: the "
	    "connection is the unix socket (host is localhost or not set), "
	    "which TLS does not cover: set host to the server's name or "
	    "address, or tls = off");
	parse_err(DB "host = localhost\ntls = on\n", PATH ":4: [database] "
	    "tls: the connection is the unix socket (host is localhost or "
	    "not set), which TLS does not cover: set host to the server's "
	    "name or address, or tls = off");
	parse_err(DB "host = db\nsocket = /s.sock\ntls = verify\n", PATH
	    ":5: [database] tls: the connection is the unix socket (socket "
	    "is set), which TLS does not cover: set host to the server's "
	    "name or address, or tls = off");
}

static void
test_flow_keys(void **state)
{
	struct cfg cfg;
	const struct cfg_type *t;
	unsigned long rate = 0, period = 0;

	(void)state;
	parse_ok(&cfg, DB "[type.a]\nhandler = noop\nconcurrency = 3\n"
	    "rate = 20/min\nburst = 5\n[type.b]\nhandler = noop\n"
	    "rate = 7/s\n");
	t = cfg_find_type(&cfg, "a");
	assert_int_equal(t->flow.concurrency, 3);
	assert_int_equal(t->flow.rate, 20);
	assert_int_equal(t->flow.period, 60);
	assert_int_equal(t->flow.burst, 5);
	t = cfg_find_type(&cfg, "b");
	assert_int_equal(t->flow.concurrency, 0);
	assert_int_equal(t->flow.burst, 1);	/* the default */
	cfg_free(&cfg);
	assert_int_equal(cfg_parse_rate("1/h", &rate, &period), 0);
	assert_int_equal(rate, 1);
	assert_int_equal(period, 3600);
	assert_int_equal(cfg_parse_rate("1000000/s", &rate, &period), 0);
	assert_int_equal(cfg_parse_rate("1000001/s", &rate, &period), -1);
	assert_int_equal(cfg_parse_rate("0/s", &rate, &period), -1);
	assert_int_equal(cfg_parse_rate("20", &rate, &period), -1);
	assert_int_equal(cfg_parse_rate("/s", &rate, &period), -1);
	assert_int_equal(cfg_parse_rate("20/d", &rate, &period), -1);
	assert_int_equal(cfg_parse_rate("20/s ", &rate, &period), -1);
	parse_err(DB "[type.a]\nhandler = noop\nrate = 20/d\n",
	    "test.conf:5: [type.a] rate: not a rate: N/s, N/min or N/h with "
	    "N in 1..1000000");
	parse_err(DB "[type.a]\nhandler = noop\nconcurrency = 0\n",
	    "test.conf:5: [type.a] concurrency: not a number of jobs in "
	    "1..1000000");
	parse_err(DB "[type.a]\nhandler = noop\nburst = 2\n",
	    "test.conf:5: [type.a] burst: without rate");
	parse_err(DB "[type.a]\nhandler = noop\nrate = 1/s\nrate = 2/s\n",
	    "test.conf:6: [type.a] rate: given twice: already given at "
	    "line 5");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_command_before_handler),
		cmocka_unit_test(test_section_reopened),
		cmocka_unit_test(test_command_is_split_for_exec),
		cmocka_unit_test(test_empty_values_mean_default),
		cmocka_unit_test(test_find_type),
		cmocka_unit_test(test_unknown_section),
		cmocka_unit_test(test_schedules),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_unknown_run_key),
		cmocka_unit_test(test_every_range_both_ends),
		cmocka_unit_test(test_every_key_twice),
		cmocka_unit_test(test_every_type_key),
		cmocka_unit_test(test_other_kinds),
		cmocka_unit_test(test_backoff_jitter),
		cmocka_unit_test(test_type_priority),
		cmocka_unit_test(test_example_file_agrees),
		cmocka_unit_test(test_man_page_agrees),
		cmocka_unit_test(test_key_twice),
		cmocka_unit_test(test_indented_header_continues_key),
		cmocka_unit_test(test_empty_value_is_an_error),
		cmocka_unit_test(test_byte_order_mark),
		cmocka_unit_test(test_bad_number),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_backoff_cap_below_base),
		cmocka_unit_test(test_missing_database),
		cmocka_unit_test(test_bad_table_name),
		cmocka_unit_test(test_bad_time_zone),
		cmocka_unit_test(test_bad_type_name),
		cmocka_unit_test(test_long_type_name),
		cmocka_unit_test(test_unknown_handler),
		cmocka_unit_test(test_missing_handler),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_empty_type_section_is_missing_handler),
		cmocka_unit_test(test_exec_without_command),
		cmocka_unit_test(test_bad_command),
		cmocka_unit_test(test_key_outside_section),
		cmocka_unit_test(test_line_length),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_syntax_error_reported_first),
		cmocka_unit_test(test_comments_and_crlf),
		cmocka_unit_test(test_hash_after_blank),
		cmocka_unit_test(test_parse_ignores_password_env),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_password_file),
		cmocka_unit_test(test_load_password_env_overrides),
		cmocka_unit_test(test_load_password_file_missing),
		cmocka_unit_test(test_load_missing_file),
		cmocka_unit_test(test_load_error_names_file),
		cmocka_unit_test(test_load_nul_byte),
		cmocka_unit_test(test_small_error_buffer),
		cmocka_unit_test(test_tls_keys),
		cmocka_unit_test(test_flow_keys),
	};

	return cmocka_run_group_tests_name("config", tests, group_setup,
	    group_teardown);
}
