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

/* Every spelling getopt_long takes as --config: its abbreviations (with
 * "=" or the value the next word), -c anywhere in a bundle of short
 * options; and none that it does not. */
static void
test_shown_config_spellings(void **state)
{
	(void)state;
	expect_shown("jobrun --conf=S.conf pause --force p3",
	    "jobrun pause --force p3");
	expect_shown("jobrun --conf S.conf resume --force p5",
	    "jobrun resume --force p5");
	expect_shown("jobrun --con=S.conf pause t", "jobrun pause t");
	expect_shown("jobrun pause --confi S.conf t", "jobrun pause t");
	expect_shown("jobrun -qc S.conf pause --force p5",
	    "jobrun -q pause --force p5");
	expect_shown("jobrun -qcS.conf pause t", "jobrun -q pause t");
	expect_shown("jobrun -vqc S.conf pause t", "jobrun -vq pause t");
	expect_shown("jobrun '-qcS b.conf' pause t", "jobrun -q pause t");
	/* --c and --co are ambiguous (--chunk, --completion-helper) */
	expect_shown("jobrun --co=x pause t", "jobrun --co=x pause t");
	/* -c inside another option's value is that value */
	expect_shown("jobrun -tc pause", "jobrun -tc pause");
	expect_shown("jobrun retry -t -c 7", "jobrun retry -t -c 7");
	expect_shown("jobrun enqueue --type -c", "jobrun enqueue --type -c");
	expect_shown("jobrun enqueue --ty -c", "jobrun enqueue --ty -c");
	/* after --, no option */
	expect_shown("jobrun retry -- -c 7", "jobrun retry -- -c 7");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload_redacted),
		cmocka_unit_test(test_words_quoted),
		cmocka_unit_test(test_shown_without_config),
		cmocka_unit_test(test_shown_config_spellings),
	};

	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
