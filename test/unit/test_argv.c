/*
 * test_argv.c - splitting a configured command into words without a shell.
 *
 * What an operator writes after "command =" is what runs, so each quoting
 * rule of jobrun.conf(5) is pinned to exact words, and everything a shell
 * would expand ($VAR, *, >) must come through literally.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "argv.h"

/* Split line and check the words against the NULL-terminated list. */
static void
expect_words(const char *line, ...)
{
	char **argv = NULL, err[256] = "";
	const char *want;
	va_list ap;
	size_t i = 0;

	if (argv_split(line, &argv, err, sizeof err) != 0)
		fail_msg("argv_split(\"%s\") failed: %s", line, err);
	assert_non_null(argv);
	va_start(ap, line);
	while ((want = va_arg(ap, const char *)) != NULL) {
		if (argv[i] == NULL) {
			va_end(ap);
			argv_free(argv);
			fail_msg("\"%s\": word %zu missing, want \"%s\"", line,
			    i, want);
		}
		if (strcmp(argv[i], want) != 0) {
			char got[256];

			snprintf(got, sizeof got, "%s", argv[i]);
			va_end(ap);
			argv_free(argv);
			fail_msg("\"%s\": word %zu is \"%s\", want \"%s\"", line,
			    i, got, want);
		}
		i++;
	}
	va_end(ap);
	if (argv[i] != NULL) {
		char got[256];

		snprintf(got, sizeof got, "%s", argv[i]);
		argv_free(argv);
		fail_msg("\"%s\": extra word %zu \"%s\"", line, i, got);
	}
	argv_free(argv);
}

/* Split line, expect failure with exactly the message want. */
static void
expect_error(const char *line, const char *want)
{
	char **argv = NULL, err[256] = "";

	assert_int_equal(argv_split(line, &argv, err, sizeof err), -1);
	assert_null(argv);
	assert_string_equal(err, want);
}

static void
test_plain_words(void **state)
{
	(void)state;
	expect_words("/bin/true", "/bin/true", NULL);
	expect_words("/usr/local/bin/sync-order --verbose",
	    "/usr/local/bin/sync-order", "--verbose", NULL);
	expect_words("a b c d", "a", "b", "c", "d", NULL);
}

static void
test_blanks_and_tabs(void **state)
{
	(void)state;
	expect_words("  a   b\t\tc \t d  ", "a", "b", "c", "d", NULL);
	expect_words("\ta\n", "a", NULL);
	expect_words("a\r\nb", "a", "b", NULL);
}

static void
test_single_quotes_literal(void **state)
{
	(void)state;
	expect_words("echo 'hello world'", "echo", "hello world", NULL);
	expect_words("echo 'a\\b'", "echo", "a\\b", NULL);
	expect_words("echo '$HOME *.txt > out'", "echo", "$HOME *.txt > out",
	    NULL);
	expect_words("echo 'say \"hi\"'", "echo", "say \"hi\"", NULL);
	expect_words("echo 'a\\'", "echo", "a\\", NULL);
}

static void
test_double_quotes_escapes(void **state)
{
	(void)state;
	expect_words("echo \"hello world\"", "echo", "hello world", NULL);
	expect_words("echo \"say \\\"hi\\\"\"", "echo", "say \"hi\"", NULL);
	expect_words("echo \"back\\\\slash\"", "echo", "back\\slash", NULL);
	/* Other backslashes stay, as in sh. */
	expect_words("echo \"a\\nb\\$c\"", "echo", "a\\nb\\$c", NULL);
	expect_words("echo \"it's\"", "echo", "it's", NULL);
	expect_words("echo \"$HOME\"", "echo", "$HOME", NULL);
}

static void
test_backslash_outside_quotes(void **state)
{
	(void)state;
	expect_words("echo a\\ b", "echo", "a b", NULL);
	expect_words("echo \\'x\\'", "echo", "'x'", NULL);
	expect_words("echo \\\"", "echo", "\"", NULL);
	expect_words("echo \\\\", "echo", "\\", NULL);
	expect_words("echo \\n", "echo", "n", NULL);
	expect_words("echo \\$HOME", "echo", "$HOME", NULL);
}

static void
test_adjacent_parts_join(void **state)
{
	(void)state;
	expect_words("a'b c'\"d\"", "ab cd", NULL);
	expect_words("x --name='John Smith'", "x", "--name=John Smith", NULL);
	expect_words("'a'\"b\"c\\ d", "abc d", NULL);
}

static void
test_empty_quoted_word(void **state)
{
	(void)state;
	expect_words("prog '' x", "prog", "", "x", NULL);
	expect_words("prog \"\"", "prog", "", NULL);
	expect_words("prog ''\"\" end", "prog", "", "end", NULL);
}

static void
test_shell_syntax_is_literal(void **state)
{
	(void)state;
	expect_words("echo $VAR * > out | cat; rm -rf ~ && `id` $(id)",
	    "echo", "$VAR", "*", ">", "out", "|", "cat;", "rm", "-rf", "~",
	    "&&", "`id`", "$(id)", NULL);
	expect_words("echo #notacomment", "echo", "#notacomment", NULL);
}

static void
test_utf8_words(void **state)
{
	(void)state;
	expect_words("echo '中文 😀' é", "echo", "中文 😀", "é", NULL);
}

static void
test_errors(void **state)
{
	(void)state;
	expect_error("echo 'abc", "unterminated single quote");
	expect_error("echo \"abc", "unterminated double quote");
	expect_error("echo \"abc\\\"", "unterminated double quote");
	expect_error("echo \"abc\\", "unterminated double quote");
	expect_error("'", "unterminated single quote");
	expect_error("echo abc\\", "trailing backslash");
	expect_error("\\", "trailing backslash");
	expect_error("", "empty command");
	expect_error("   ", "empty command");
	expect_error(" \t \t ", "empty command");
}

static void
test_error_truncated_safely(void **state)
{
	char **argv = NULL, err[8];

	(void)state;
	memset(err, 'x', sizeof err);
	assert_int_equal(argv_split("'", &argv, err, sizeof err), -1);
	assert_string_equal(err, "untermi");
	/* No buffer at all is allowed. */
	assert_int_equal(argv_split("", &argv, NULL, 0), -1);
	assert_null(argv);
}

static void
test_free_null(void **state)
{
	(void)state;
	argv_free(NULL);
}

static void
test_long_command(void **state)
{
	char line[4096], **argv = NULL, err[64];
	size_t i, n;

	(void)state;
	/* 1000 one-letter words. */
	for (i = 0, n = 0; i < 1000; i++) {
		line[n++] = (char)('a' + (char)(i % 26));
		line[n++] = ' ';
	}
	line[n] = '\0';
	assert_int_equal(argv_split(line, &argv, err, sizeof err), 0);
	for (i = 0; i < 1000; i++) {
		assert_non_null(argv[i]);
		assert_int_equal(strlen(argv[i]), 1);
		assert_int_equal(argv[i][0], 'a' + (int)(i % 26));
	}
	assert_null(argv[1000]);
	argv_free(argv);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_words),
		cmocka_unit_test(test_blanks_and_tabs),
		cmocka_unit_test(test_single_quotes_literal),
		cmocka_unit_test(test_double_quotes_escapes),
		cmocka_unit_test(test_backslash_outside_quotes),
		cmocka_unit_test(test_adjacent_parts_join),
		cmocka_unit_test(test_empty_quoted_word),
		cmocka_unit_test(test_shell_syntax_is_literal),
		cmocka_unit_test(test_utf8_words),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_truncated_safely),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_long_command),
	};

	return cmocka_run_group_tests_name("argv", tests, NULL, NULL);
}
