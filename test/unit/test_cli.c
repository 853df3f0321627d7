/*
 * test_cli.c - the command line: which command runs, which options it
 * takes, and the exact usage error for each mistake.
 *
 * cli_parse resets getopt itself, so every test parses several command
 * lines in a row, as a user retyping them would.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"

#define ERRLEN 256

/* Parse the NULL-terminated vector; argv[0] is "jobrun". */
static int
parse_vec(char **argv, struct cli *cli, char *err)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	const struct command *cmd;

	err[0] = '\0';
	return commands_parse(argc, argv, cli, &cmd, err, ERRLEN);
}

#define PARSE(cli, err, ...) \
	parse_vec((char *[]){ "jobrun", __VA_ARGS__, NULL }, (cli), (err))

/* The command line must be refused with exactly want. */
#define EXPECT_ERR(want, ...) do { \
	struct cli c_; \
	char e_[ERRLEN]; \
	assert_int_equal(PARSE(&c_, e_, __VA_ARGS__), -1); \
	assert_string_equal(e_, (want)); \
} while (0)

static void
test_default_is_run(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse_vec((char *[]){ "jobrun", NULL }, &cli, err), 0);
	assert_string_equal(cli.command, "run");
	assert_null(cli.config);
	assert_null(cli.type);
	assert_null(cli.key);
	assert_int_equal(cli.has_max, 0);
	assert_int_equal(cli.has_max_seconds, 0);
	assert_int_equal(cli.json, 0);
	assert_int_equal(cli.verbose, 0);
	assert_int_equal(cli.quiet, 0);

	assert_int_equal(PARSE(&cli, err, "run"), 0);
	assert_string_equal(cli.command, "run");
	assert_int_equal(PARSE(&cli, err, "--json"), 0);
	assert_string_equal(cli.command, "run");
	assert_int_equal(cli.json, 1);
}

static void
test_run_options(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "run", "--config=/etc/j.conf",
	    "--type=order_sync", "--max=5", "--max-seconds=30", "--json",
	    "-v"), 0);
	assert_string_equal(cli.command, "run");
	assert_string_equal(cli.config, "/etc/j.conf");
	assert_string_equal(cli.type, "order_sync");
	assert_int_equal(cli.has_max, 1);
	assert_int_equal(cli.max, 5);
	assert_int_equal(cli.has_max_seconds, 1);
	assert_int_equal(cli.max_seconds, 30);
	assert_int_equal(cli.json, 1);
	assert_int_equal(cli.verbose, 1);

	/* Separate values and short forms; the command may come last. */
	assert_int_equal(PARSE(&cli, err, "-c", "a.conf", "-t", "x", "-n",
	    "7", "--max-seconds", "9", "-q", "run"), 0);
	assert_string_equal(cli.command, "run");
	assert_string_equal(cli.config, "a.conf");
	assert_string_equal(cli.type, "x");
	assert_int_equal(cli.max, 7);
	assert_int_equal(cli.max_seconds, 9);
	assert_int_equal(cli.quiet, 1);

	assert_int_equal(PARSE(&cli, err, "-n3", "-cb.conf", "-ty"), 0);
	assert_int_equal(cli.max, 3);
	assert_string_equal(cli.config, "b.conf");
	assert_string_equal(cli.type, "y");
}

static void
test_enqueue_before_or_after_options(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "enqueue", "--type=t", "--key=k1",
	    "--payload={\"a\":1}", "--delay=60", "--max-attempts=3",
	    "--config=c.conf", "--json", "-q"), 0);
	assert_string_equal(cli.command, "enqueue");
	assert_string_equal(cli.type, "t");
	assert_string_equal(cli.key, "k1");
	assert_string_equal(cli.payload, "{\"a\":1}");
	assert_null(cli.payload_file);
	assert_int_equal(cli.delay, 60);
	assert_int_equal(cli.max_attempts, 3);
	assert_string_equal(cli.config, "c.conf");
	assert_int_equal(cli.json, 1);
	assert_int_equal(cli.quiet, 1);

	assert_int_equal(PARSE(&cli, err, "--type", "t", "--key", "k2",
	    "--payload-file=-", "enqueue"), 0);
	assert_string_equal(cli.command, "enqueue");
	assert_string_equal(cli.key, "k2");
	assert_string_equal(cli.payload_file, "-");
	assert_null(cli.payload);
	assert_int_equal(cli.delay, 0);
	assert_int_equal(cli.max_attempts, 0);

	assert_int_equal(PARSE(&cli, err, "-t", "t", "enqueue", "--key=k3"),
	    0);
	assert_string_equal(cli.command, "enqueue");
	assert_string_equal(cli.key, "k3");
}

static void
test_max_ranges(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "--max=1"), 0);
	assert_int_equal(cli.max, 1);
	assert_int_equal(PARSE(&cli, err, "--max=1000000"), 0);
	assert_int_equal(cli.max, 1000000);
	assert_int_equal(PARSE(&cli, err, "--max-seconds=1"), 0);
	assert_int_equal(cli.max_seconds, 1);
	assert_int_equal(PARSE(&cli, err, "--max-seconds=86400"), 0);
	assert_int_equal(cli.max_seconds, 86400);

	EXPECT_ERR("--max: not a number in 1..1000000: \"0\"", "--max=0");
	EXPECT_ERR("--max: not a number in 1..1000000: \"1000001\"",
	    "--max=1000001");
	EXPECT_ERR("--max: not a number in 1..1000000: \"abc\"", "--max=abc");
	EXPECT_ERR("--max: not a number in 1..1000000: \"-1\"", "-n", "-1");
	EXPECT_ERR("--max: not a number in 1..1000000: \" 5\"", "--max= 5");
	EXPECT_ERR("--max: not a number in 1..1000000: \"5s\"", "--max=5s");
	EXPECT_ERR("--max: not a number in 1..1000000: \"\"", "--max=");
	EXPECT_ERR("--max: not a number in 1..1000000: "
	    "\"99999999999999999999999\"", "--max=99999999999999999999999");
	EXPECT_ERR("--max-seconds: not a number in 1..86400: \"0\"",
	    "--max-seconds=0");
	EXPECT_ERR("--max-seconds: not a number in 1..86400: \"86401\"",
	    "--max-seconds=86401");
	EXPECT_ERR("--max-seconds: not a number in 1..86400: \"1m\"",
	    "--max-seconds", "1m");
}

static void
test_enqueue_number_ranges(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "enqueue", "-tt", "--key=k",
	    "--delay=0", "--max-attempts=1"), 0);
	assert_int_equal(cli.delay, 0);
	assert_int_equal(cli.max_attempts, 1);
	EXPECT_ERR("--delay: not a number in 0..315360000: \"-5\"",
	    "enqueue", "-tt", "--key=k", "--delay=-5");
	EXPECT_ERR("--max-attempts: not a number in 1..1000000: \"0\"",
	    "enqueue", "-tt", "--key=k", "--max-attempts=0");
}

static void
test_type_length(void **state)
{
	char t64[80], t65[80];
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	memset(t64, 0, sizeof t64);
	memcpy(t64, "--type=", 7);
	memset(t64 + 7, 'a', 64);
	memcpy(t65, t64, sizeof t65);
	t65[7 + 64] = 'b';

	assert_int_equal(PARSE(&cli, err, t64), 0);
	assert_int_equal(strlen(cli.type), 64);
	assert_int_equal(PARSE(&cli, err, "enqueue", t64, "--key=k"), 0);
	assert_int_equal(strlen(cli.type), 64);

	EXPECT_ERR("--type: 1..64 characters, got 65", t65);
	EXPECT_ERR("--type: 1..64 characters, got 65", "enqueue", t65,
	    "--key=k");
	EXPECT_ERR("--type: 1..64 characters, got 0", "--type=");
	EXPECT_ERR("--type: 1..64 characters, got 0", "enqueue", "--type=",
	    "--key=k");
}

static void
test_key_length(void **state)
{
	char k128[160], k129[160];
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	memset(k128, 0, sizeof k128);
	memcpy(k128, "--key=", 6);
	memset(k128 + 6, 'k', 128);
	memcpy(k129, k128, sizeof k129);
	k129[6 + 128] = 'x';

	assert_int_equal(PARSE(&cli, err, "enqueue", "--type=t", k128), 0);
	assert_int_equal(strlen(cli.key), 128);
	EXPECT_ERR("--key: 1..128 characters, got 129", "enqueue", "--type=t",
	    k129);
	EXPECT_ERR("--key: 1..128 characters, got 0", "enqueue", "--type=t",
	    "--key=");
}

/* The columns are utf8mb4 VARCHARs: their limits count characters, and
 * bytes MariaDB would refuse are refused here. */
static void
test_key_and_type_count_characters(void **state)
{
	char key[6 + 129 * 3 + 1], type[7 + 65 * 2 + 1];
	struct cli cli;
	char err[ERRLEN];
	size_t i;

	(void)state;
	memcpy(key, "--key=", 6);
	for (i = 0; i < 129; i++)
		memcpy(key + 6 + 3 * i, "\xE4\xB8\xAD", 3);	/* 中 */
	key[6 + 128 * 3] = '\0';
	memcpy(type, "--type=", 7);
	for (i = 0; i < 65; i++)
		memcpy(type + 7 + 2 * i, "\xC3\xA9", 2);	/* é */
	type[7 + 64 * 2] = '\0';

	assert_int_equal(PARSE(&cli, err, "enqueue", type, key), 0);
	assert_int_equal(strlen(cli.key), 128 * 3);
	assert_int_equal(strlen(cli.type), 64 * 2);

	key[6 + 128 * 3] = '\xE4';
	key[6 + 129 * 3] = '\0';
	EXPECT_ERR("--key: 1..128 characters, got 129", "enqueue", "--type=t",
	    key);
	type[7 + 64 * 2] = '\xC3';
	type[7 + 65 * 2] = '\0';
	EXPECT_ERR("--type: 1..64 characters, got 65", "enqueue", type,
	    "--key=k");
	EXPECT_ERR("--type: 1..64 characters, got 65", type);

	EXPECT_ERR("--key: not valid UTF-8", "enqueue", "--type=t",
	    "--key=ab\xFF");
	EXPECT_ERR("--key: not valid UTF-8", "enqueue", "--type=t",
	    "--key=\xC0\x80");
	EXPECT_ERR("--key: not valid UTF-8", "enqueue", "--type=t",
	    "--key=\xED\xA0\x80");
	EXPECT_ERR("--key: not valid UTF-8", "enqueue", "--type=t",
	    "--key=abc\xE4\xB8");
	EXPECT_ERR("--type: not valid UTF-8", "enqueue", "--type=\x80",
	    "--key=k");
	EXPECT_ERR("--type: not valid UTF-8", "--type=\xF5\x80\x80\x80");
}

static void
test_enqueue_needs_type_and_key(void **state)
{
	(void)state;
	EXPECT_ERR("enqueue needs --type", "enqueue");
	EXPECT_ERR("enqueue needs --key (or --key-prefix, --range and "
	    "--chunk)", "enqueue", "--type=t");
	EXPECT_ERR("enqueue needs --type", "enqueue", "--key=k");
	EXPECT_ERR("enqueue needs --type", "--payload={}",
	    "enqueue", "--key=k");
}

static void
test_payload_excludes_payload_file(void **state)
{
	(void)state;
	EXPECT_ERR("--payload, --payload-file and - exclude each other",
	    "enqueue", "--type=t", "--key=k", "--payload={}",
	    "--payload-file=p.json");
	EXPECT_ERR("--payload, --payload-file and - exclude each other",
	    "--payload-file=-", "--payload={}", "--type=t", "--key=k",
	    "enqueue");
}

static void
test_option_not_for_command(void **state)
{
	(void)state;
	EXPECT_ERR("option --key is not for \"run\"", "run", "--key=x");
	EXPECT_ERR("option --key is not for \"run\"", "--key=x");
	EXPECT_ERR("option --payload is not for \"run\"", "--payload={}");
	EXPECT_ERR("option --payload-file is not for \"run\"",
	    "--payload-file=-", "run");
	EXPECT_ERR("option --delay is not for \"run\"", "--delay=5");
	EXPECT_ERR("option --max-attempts is not for \"run\"",
	    "--max-attempts=5");
	EXPECT_ERR("option --max is not for \"enqueue\"", "enqueue",
	    "--type=t", "--key=k", "--max=5");
	EXPECT_ERR("option --max is not for \"enqueue\"", "-n", "5",
	    "enqueue", "--type=t", "--key=k");
	EXPECT_ERR("option --max-seconds is not for \"enqueue\"", "enqueue",
	    "--type=t", "--key=k", "--max-seconds=5");
}

/* retry --failed: --include-cancelled and --dry-run go with it only. */
static void
test_retry_failed_options(void **state)
{
	struct cli c;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&c, err, "retry", "--failed",
	    "--include-cancelled", "--dry-run", "-t", "x"), 0);
	assert_string_equal(c.command, "retry");
	assert_true(c.failed && c.include_cancelled && c.dry_run);
	assert_string_equal(c.type, "x");
	assert_int_equal(PARSE(&c, err, "retry", "--failed"), 0);
	assert_false(c.include_cancelled || c.dry_run);
	EXPECT_ERR("--include-cancelled goes with --failed", "retry", "7",
	    "--include-cancelled");
	EXPECT_ERR("--dry-run goes with --failed", "retry", "7",
	    "--dry-run");
	EXPECT_ERR("option --include-cancelled is not for \"purge\"",
	    "purge", "--status=failed", "--older-than=1d",
	    "--include-cancelled");
	EXPECT_ERR("option --dry-run is not for \"cancel\"", "cancel", "7",
	    "--dry-run");
}

/* However many options come first, each one is still checked. */
static void
test_option_not_for_command_after_many(void **state)
{
	(void)state;
	EXPECT_ERR("option --key is not for \"run\"", "-vvvvvvvvvvvvvvvv",
	    "--key=x");
	EXPECT_ERR("option --key is not for \"run\"", "--json", "--json",
	    "--json", "--json", "--json", "--json", "--json", "--json",
	    "--json", "--json", "--json", "--json", "--json", "--json",
	    "--json", "--key=x");
}

static void
test_unknown_option(void **state)
{
	(void)state;
	EXPECT_ERR("unknown option --bogus", "--bogus");
	EXPECT_ERR("unknown option --bogus=1", "run", "--bogus=1");
	EXPECT_ERR("unknown option -x", "-x");
	EXPECT_ERR("unknown option -x", "enqueue", "-x", "--type=t",
	    "--key=k");
}

static void
test_option_needs_value(void **state)
{
	(void)state;
	EXPECT_ERR("option --max needs a value", "--max");
	EXPECT_ERR("option --config needs a value", "run", "--config");
	EXPECT_ERR("option -c needs a value", "-c");
	EXPECT_ERR("option -t needs a value", "-t");
}

/* "--json=1" gives a value to an option that takes none: the message must
 * not say the opposite. */
static void
test_option_takes_no_value(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "--json=1"), -1);
	if (strstr(err, "--json") == NULL ||
	    strstr(err, "needs a value") != NULL)
		fail_msg("misleading message: %s", err);
	assert_int_equal(PARSE(&cli, err, "--quiet=yes"), -1);
	if (strstr(err, "--quiet") == NULL ||
	    strstr(err, "needs a value") != NULL)
		fail_msg("misleading message: %s", err);
}

static void
test_unknown_command(void **state)
{
	(void)state;
	EXPECT_ERR("unknown command \"runn\"", "runn");
	EXPECT_ERR("unknown command \"help\"", "help");
	EXPECT_ERR("unknown command \"stats\"", "--json", "stats");
	EXPECT_ERR("unknown command \"Run\"", "Run");
}

static void
test_unexpected_argument(void **state)
{
	(void)state;
	EXPECT_ERR("unexpected argument \"extra\"", "run", "extra");
	EXPECT_ERR("unexpected argument \"run\"", "run", "run");
	EXPECT_ERR("unexpected argument \"run\"", "enqueue", "--type=t",
	    "--key=k", "run");
	EXPECT_ERR("unexpected argument \"x\"", "--json", "run", "-v", "x");
}

static void
test_quiet_and_verbose(void **state)
{
	(void)state;
	EXPECT_ERR("-q and -v contradict each other", "-q", "-v");
	EXPECT_ERR("-q and -v contradict each other", "-vq");
	EXPECT_ERR("-q and -v contradict each other", "--verbose", "run",
	    "--quiet");
	EXPECT_ERR("-q and -v contradict each other", "enqueue", "--type=t",
	    "--key=k", "-q", "-v");
}

static void
test_verbose_counts(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "-vv"), 0);
	assert_int_equal(cli.verbose, 2);
	assert_int_equal(PARSE(&cli, err, "-v", "run", "--verbose"), 0);
	assert_int_equal(cli.verbose, 2);
	assert_int_equal(PARSE(&cli, err, "-v"), 0);
	assert_int_equal(cli.verbose, 1);
	assert_int_equal(PARSE(&cli, err, "-vvv"), 0);
	assert_int_equal(cli.verbose, 3);
}

static void
test_help_and_version(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "--help"), 0);
	assert_true(cli.help);
	assert_int_equal(PARSE(&cli, err, "-h"), 0);
	assert_true(cli.help);
	assert_int_equal(PARSE(&cli, err, "--version"), 0);
	assert_true(cli.version);
	assert_int_equal(PARSE(&cli, err, "-V"), 0);
	assert_true(cli.version);

	/* With a command and options, even ones that would be errors. */
	assert_int_equal(PARSE(&cli, err, "run", "--max=5", "--help"), 0);
	assert_true(cli.help);
	assert_int_equal(PARSE(&cli, err, "enqueue", "--help"), 0);
	assert_true(cli.help);
	assert_int_equal(PARSE(&cli, err, "--help", "enqueue", "--type=t"), 0);
	assert_true(cli.help);
	assert_int_equal(PARSE(&cli, err, "run", "--key=x", "-h"), 0);
	assert_true(cli.help);
	assert_int_equal(PARSE(&cli, err, "--version", "enqueue"), 0);
	assert_true(cli.version);
	assert_int_equal(PARSE(&cli, err, "-q", "-v", "-V"), 0);
	assert_true(cli.version);
	assert_int_equal(PARSE(&cli, err, "--type=t", "--payload={}",
	    "--version"), 0);
	assert_true(cli.version);
}

/* What commands_help prints for the command line argv, NUL-ended. */
static void
help_text(char **argv, char *buf, size_t size)
{
	const struct command *cmd;
	struct cli cli;
	char err[ERRLEN];
	FILE *f;
	int argc = 0;
	size_t n;

	while (argv[argc] != NULL)
		argc++;
	assert_int_equal(commands_parse(argc, argv, &cli, &cmd, err, ERRLEN),
	    0);
	f = fmemopen(buf, size - 1, "w");
	assert_non_null(f);
	commands_help(f, &cli, cmd);
	n = (size_t)ftell(f);
	assert_int_equal(fclose(f), 0);
	buf[n] = '\0';
}

#define HELP(buf, ...) \
	help_text((char *[]){ "jobrun", __VA_ARGS__, NULL }, (buf), sizeof (buf))

static void
test_usage_text(void **state)
{
	char buf[8192];

	(void)state;
	HELP(buf, "--help");
	assert_true(strncmp(buf, "usage: jobrun [run]", 19) == 0);
	assert_non_null(strstr(buf, "jobrun enqueue --type=NAME --key=KEY"));
	assert_non_null(strstr(buf, "jobrun --help | --version"));
	assert_non_null(strstr(buf, "  -n, --max=N "));
	assert_null(strstr(buf, "completion-helper"));
}

/* The statuses --help lists, in the order given: after "Exit status:",
 * each piece between semicolons begins with one (a number, or 128+N). */
static void
statuses_in_help(const char *help, char *out, size_t len)
{
	const char *p = strstr(help, "Exit status:");
	size_t n = 0;

	assert_non_null(p);
	p += strlen("Exit status:");
	out[n++] = '|';
	for (; p != NULL; p = strchr(p, ';')) {
		p += *p == ';';
		while (*p == ' ' || *p == '\n')
			p++;
		while (((*p >= '0' && *p <= '9') || *p == '+' || *p == 'N') &&
		    n < len - 2)
			out[n++] = *p++;
		out[n++] = '|';
	}
	out[n] = '\0';
}

static char *
read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 1 << 17);
	size_t n;

	if (f == NULL)
		fail_msg("open %s (run the tests from the source tree's top)",
		    path);
	assert_non_null(text);
	n = fread(text, 1, (1 << 17) - 1, f);
	assert_true(n > 0 && n < (1 << 17) - 1);
	fclose(f);
	return text;
}

/* --help's short list of exit statuses is jobrun(1)'s EXIT STATUS list:
 * the same statuses, in the same order (a new status added to one and
 * not the other fails here). */
static void
test_help_exit_statuses(void **state)
{
	char buf[8192], in_help[256], in_man[256];
	char *man = read_text("man/jobrun.1"), *p, *end;
	size_t n = 0;

	(void)state;
	HELP(buf, "--help");
	statuses_in_help(buf, in_help, sizeof in_help);
	p = strstr(man, "\n.Sh EXIT STATUS\n");
	assert_non_null(p);
	end = strstr(p + 1, "\n.Sh ");
	assert_non_null(end);
	*end = '\0';
	in_man[n++] = '|';
	while ((p = strstr(p, "\n.It ")) != NULL) {
		p += strlen("\n.It ");
		if (*p < '0' || *p > '9')
			continue;
		while (*p != '\n' && *p != ' ' && n < sizeof in_man - 3)
			in_man[n++] = *p++;
		/* ".It 128+ Ns Ar N" */
		if (in_man[n - 1] == '+')
			in_man[n++] = 'N';
		in_man[n++] = '|';
	}
	in_man[n] = '\0';
	free(man);
	assert_string_equal(in_help, in_man);
}

/* jobrun(1)'s SYNOPSIS names the commands of the commands table, each
 * once, in its order (".Nm" then ".Cm NAME", or ".Op Cm run"), as the
 * completion helper lists them from the table. */
static void
test_synopsis_commands(void **state)
{
	char buf[8192], in_man[1024], last[64] = "";
	char *man = read_text("man/jobrun.1"), *p, *end, *w;
	size_t n = 0, len;

	(void)state;
	HELP(buf, "--completion-helper");
	p = strstr(man, "\n.Sh SYNOPSIS\n");
	assert_non_null(p);
	end = strstr(p + 1, "\n.Sh ");
	assert_non_null(end);
	*end = '\0';
	while ((p = strstr(p, "\n.Nm\n")) != NULL) {
		p += strlen("\n.Nm\n");
		w = strncmp(p, ".Cm ", 4) == 0 ? p + 4 :
		    strncmp(p, ".Op Cm ", 7) == 0 ? p + 7 : NULL;
		if (w == NULL)
			continue;	/* jobrun --help | --version */
		len = strcspn(w, " \n");
		assert_true(len < sizeof last && n + len + 2 < sizeof in_man);
		if (strlen(last) == len && strncmp(last, w, len) == 0)
			continue;	/* a second form of the same command */
		memcpy(last, w, len);
		last[len] = '\0';
		memcpy(in_man + n, w, len);
		n += len;
		in_man[n++] = '\n';
	}
	in_man[n] = '\0';
	free(man);
	assert_string_equal(in_man, buf);
}

/* jobrun COMMAND --help: that command's synopsis and options only. */
static void
test_command_usage(void **state)
{
	char buf[8192];

	(void)state;
	HELP(buf, "purge", "--help");
	assert_true(strncmp(buf, "usage: jobrun purge --status=success|failed",
	    43) == 0);
	assert_non_null(strstr(buf, "\n      --older-than=DURATION\n"));
	assert_non_null(strstr(buf, "\n      --dry-run "));
	assert_non_null(strstr(buf, "\n  -c, --config=FILE "));
	assert_null(strstr(buf, "--keys-from"));
	assert_null(strstr(buf, "jobrun enqueue"));
	assert_null(strstr(buf, "completion-helper"));

	/* Whatever else the line holds, and wherever --help is. */
	HELP(buf, "-h", "enqueue", "--max=5");
	assert_true(strncmp(buf, "usage: jobrun enqueue ", 22) == 0);
	assert_non_null(strstr(buf, "--keys-from=FILE"));
	assert_null(strstr(buf, "--older-than"));

	EXPECT_ERR("unknown command \"frob\"", "frob", "--help");
}

/* The completion helper: the commands, or a command's long options with
 * "=" for a value. */
static void
test_completion_helper(void **state)
{
	char buf[8192];

	(void)state;
	HELP(buf, "--completion-helper");
	assert_string_equal(buf, "run\nenqueue\nstatus\nlist\nshow\nretry\n"
	    "cancel\npurge\ncheck\nschedules\nreport\npause\nresume\naudit\n");
	HELP(buf, "--completion-helper", "purge");
	assert_string_equal(buf, "--config=\n--json\n--log=\n--verbose\n"
	    "--quiet\n--help\n--version\n--type=\n--status=\n"
	    "--older-than=\n--dry-run\n-c=\n-t=\n");
	EXPECT_ERR("unknown command \"frob\"", "--completion-helper",
	    "frob");
}

/* Every option id has its row: a name, and a parse that accepts it. */
static void
test_every_option_has_a_row(void **state)
{
	int o;

	(void)state;
	for (o = 0; o < CO_COUNT; o++)
		if (strcmp(cli_option_name((enum cli_option)o), "?") == 0)
			fail_msg("option %d has no row", o);
}

/* --older-than and --range, whose values have rules of their own. */
static void
test_duration_and_range(void **state)
{
	struct cli cli;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(PARSE(&cli, err, "purge", "--status=failed",
	    "--older-than=2w"), 0);
	assert_int_equal(cli.has_older_than, 1);
	assert_int_equal(cli.older_than, 1209600);
	EXPECT_ERR("--older-than: not a duration such as 90s, 90m, 12h, 30d "
	    "or 2w: \"2y\"", "purge", "--status=failed", "--older-than=2y");
	/* A bare number would be seconds, which is seldom what was meant. */
	EXPECT_ERR("--older-than: \"30\" has no unit: write 30s, 30m, 30h, "
	    "30d or 30w", "purge", "--status=failed", "--older-than=30");
	EXPECT_ERR("--older-than: \"0\" has no unit: write 0s, 0m, 0h, 0d or "
	    "0w", "purge", "--status=failed", "--older-than=0");
	/* --since refuses 0s: no advice to write it. */
	EXPECT_ERR("--since: a DURATION of 1s or more: \"0\"", "audit",
	    "--since=0");
	EXPECT_ERR("--since: a DURATION of 1s or more: \"0s\"", "audit",
	    "--since=0s");
	EXPECT_ERR("--since: a DURATION of 1s or more: \"0\"", "purge",
	    "--since=0");
	EXPECT_ERR("--since: \"5\" has no unit: write 5s, 5m, 5h, 5d or 5w",
	    "audit", "--since=5");
	assert_int_equal(PARSE(&cli, err, "audit", "--since=1s"), 0);
	assert_int_equal(cli.since, 1);
	assert_int_equal(PARSE(&cli, err, "purge", "--status=failed",
	    "--older-than=0s"), 0);
	assert_int_equal(cli.older_than, 0);
	assert_int_equal(PARSE(&cli, err, "purge", "--status=failed",
	    "--older-than=3600s"), 0);
	assert_int_equal(cli.older_than, 3600);
	assert_int_equal(PARSE(&cli, err, "enqueue", "-tt", "--key-prefix=p",
	    "--range=3-9", "--chunk=2"), 0);
	assert_int_equal(cli.has_range, 1);
	assert_int_equal(cli.range_from, 3);
	assert_int_equal(cli.range_to, 9);
	assert_int_equal(cli.chunk, 2);
	EXPECT_ERR("--range: not FROM-TO with FROM <= TO: \"9-3\"", "enqueue",
	    "-tt", "--key-prefix=p", "--range=9-3", "--chunk=2");
	EXPECT_ERR("--log: stderr or syslog, not \"file\"", "--log=file");
	assert_int_equal(PARSE(&cli, err, "--log=syslog"), 0);
	assert_string_equal(cli.log, "syslog");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_run),
		cmocka_unit_test(test_run_options),
		cmocka_unit_test(test_enqueue_before_or_after_options),
		cmocka_unit_test(test_max_ranges),
		cmocka_unit_test(test_enqueue_number_ranges),
		cmocka_unit_test(test_type_length),
		cmocka_unit_test(test_key_length),
		cmocka_unit_test(test_key_and_type_count_characters),
		cmocka_unit_test(test_enqueue_needs_type_and_key),
		cmocka_unit_test(test_payload_excludes_payload_file),
		cmocka_unit_test(test_option_not_for_command),
		cmocka_unit_test(test_option_not_for_command_after_many),
		cmocka_unit_test(test_retry_failed_options),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_option_needs_value),
		cmocka_unit_test(test_option_takes_no_value),
		cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_unexpected_argument),
		cmocka_unit_test(test_quiet_and_verbose),
		cmocka_unit_test(test_verbose_counts),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_usage_text),
		cmocka_unit_test(test_help_exit_statuses),
		cmocka_unit_test(test_synopsis_commands),
		cmocka_unit_test(test_command_usage),
		cmocka_unit_test(test_completion_helper),
		cmocka_unit_test(test_every_option_has_a_row),
		cmocka_unit_test(test_duration_and_range),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
