/*
 * test_audit.c - the command line the record of operators' changes keeps
 * (cli_command_line): argv as typed, the jobs' data redacted in each
 * form getopt_long reads (--payload=V, --payload V, an abbreviation),
 * not after "--", words quoted as a shell reads them; and the same line
 * as the report shows it (audit_shown_command): "jobrun", without the
 * configuration file's option in any of its forms.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "audit.h"
#include "cli.h"

static void
expect_line(const char *want, int argc, char **argv)
{
	char *got = cli_command_line(argc, argv);

	assert_string_equal(got, want);
	free(got);
}

#define LINE(want, ...) do { \
	char *argv_[] = { __VA_ARGS__ }; \
	expect_line(want, (int)(sizeof argv_ / sizeof argv_[0]), argv_); \
} while (0)

static void
test_payload_redacted(void **state)
{
	(void)state;
	LINE("jobrun enqueue --type=t --key=k --payload=[redacted]",
	    "jobrun", "enqueue", "--type=t", "--key=k", "--payload={\"a\":1}");
	LINE("jobrun enqueue --payload [redacted] --key=k",
	    "jobrun", "enqueue", "--payload", "{\"a\":1}", "--key=k");
	LINE("jobrun enqueue --payload-t=[redacted]",
	    "jobrun", "enqueue", "--payload-t={}");
	LINE("jobrun enqueue --payload-template [redacted]",
	    "jobrun", "enqueue", "--payload-template", "{}");
	/* --payload-file names a file: kept. */
	LINE("jobrun enqueue --payload-file=/tmp/p.json",
	    "jobrun", "enqueue", "--payload-file=/tmp/p.json");
	/* A value that looks like an option is the value. */
	LINE("jobrun enqueue --key --payload=x",
	    "jobrun", "enqueue", "--key", "--payload=x");
	/* After "--", operands. */
	LINE("jobrun retry -- --payload=x", "jobrun", "retry", "--",
	    "--payload=x");
}

static void
test_words_quoted(void **state)
{
	(void)state;
	LINE("jobrun enqueue '--type=caf\xc3\xa9 o'\\''x' --key=\xc3\xa9",
	    "jobrun", "enqueue", "--type=caf\xc3\xa9 o'x", "--key=\xc3\xa9");
	LINE("jobrun enqueue --key=", "jobrun", "enqueue", "--key=");
	LINE("jobrun cancel ''", "jobrun", "cancel", "");
	LINE("jobrun enqueue '--key=a$b'", "jobrun", "enqueue", "--key=a$b");
}

static void
expect_shown(const char *command, const char *want)
{
	char *got = audit_shown_command(command);

	assert_string_equal(got, want);
	free(got);
}

static void
test_shown_without_config(void **state)
{
	(void)state;
	expect_shown("/usr/bin/jobrun retry --config=/etc/j.conf --failed",
	    "jobrun retry --failed");
	expect_shown("jobrun -c /etc/j.conf retry 7", "jobrun retry 7");
	expect_shown("jobrun --config /etc/j.conf pause t", "jobrun pause t");
	expect_shown("jobrun -c/etc/j.conf pause t", "jobrun pause t");
	expect_shown("jobrun '--config=/a b.conf' resume 'a b'",
	    "jobrun resume 'a b'");
	expect_shown("jobrun", "jobrun");
	expect_shown("", "jobrun");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload_redacted),
		cmocka_unit_test(test_words_quoted),
		cmocka_unit_test(test_shown_without_config),
	};

	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
