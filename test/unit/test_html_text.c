/*
 * test_html_text.c - what last_error keeps of an HTML error page
 * (html_text.h): which bodies are pages, the title then the visible
 * text, blanks collapsed, what is hidden (head, script, style,
 * comments), markup cut off at the end, and a summary that fills its
 * buffer exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "html_text.h"

static const char *
summary(const char *page, size_t cap)
{
	static char out[512];

	html_summary(page, strlen(page), out, cap);
	return out;
}

static void
test_is_page(void **state)
{
	(void)state;
	assert_true(html_is_page("text/html; charset=UTF-8", "x", 1));
	assert_true(html_is_page("TEXT/HTML", "", 0));
	assert_true(html_is_page("", " \n<!DOCTYPE html><p>", 20));
	assert_true(html_is_page(NULL, "<html lang=en>", 14));
	assert_false(html_is_page("application/json", "{\"a\":1}", 7));
	assert_false(html_is_page("", "<htmlish>", 9));
	assert_false(html_is_page("text/plain", "Internal error", 14));
	assert_false(html_is_page("", "", 0));
}

static void
test_title_then_text(void **state)
{
	(void)state;
	assert_string_equal(summary(
	    "<!DOCTYPE html>\n<html><head><meta charset=utf-8>\n"
	    "<title>  500 | Server\n Error </title>\n"
	    "<style>body { color: red }</style></head>\n"
	    "<body><!-- debug: secret --><h1>Whoops</h1>\n\n"
	    "<p>SQLSTATE[HY000] [2002]\tConnection refused</p>"
	    "<script>var t = \"<p>not text</p>\";</script>"
	    "</body></html>", 512),
	    "500 | Server Error: Whoops SQLSTATE[HY000] [2002] Connection "
	    "refused");
}

static void
test_no_title(void **state)
{
	(void)state;
	assert_string_equal(summary("<html><body><p>Bad <b>gateway</b></p>",
	    512), "Bad gateway");
	assert_string_equal(summary("<TITLE>Only</TITLE>", 512), "Only:");
}

static void
test_cut_markup(void **state)
{
	(void)state;
	/* A page cut off inside a tag, a comment or a script: what came
	 * before is kept, nothing after. */
	assert_string_equal(summary("<p>kept</p><a href=\"x", 512), "kept");
	assert_string_equal(summary("<p>kept</p><!-- open", 512), "kept");
	assert_string_equal(summary("<p>kept</p><script>x = 1", 512), "kept");
	assert_string_equal(summary("<title>cut", 512), "cut:");
	assert_string_equal(summary("<", 512), "");
	assert_string_equal(summary("", 512), "");
}

static void
test_fills_exactly(void **state)
{
	char out[8];

	(void)state;
	/* 7 bytes and the NUL, never more */
	memset(out, 'Z', sizeof out);
	assert_int_equal(html_summary("<p>abcdefghij</p>", 17, out,
	    sizeof out), 7);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(html_summary("<p>x</p>", 8, out, 0), 0);
	assert_int_equal(html_summary("<p>a b</p>", 10, out, 2), 1);
	assert_string_equal(out, "a");
}

static void
test_nul_bytes(void **state)
{
	static const char page[] = "<p>a\0b</p><scr\0ipt>c";
	char out[32];

	(void)state;
	/* NUL is a blank; a tag name broken by NUL is no script */
	html_summary(page, sizeof page - 1, out, sizeof out);
	assert_string_equal(out, "a b c");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_page),
		cmocka_unit_test(test_title_then_text),
		cmocka_unit_test(test_no_title),
		cmocka_unit_test(test_cut_markup),
		cmocka_unit_test(test_fills_exactly),
		cmocka_unit_test(test_nul_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
