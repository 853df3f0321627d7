/*
 * test_dash_html.c - dash_html_text, which stands between any bytes in
 * the job table and the HTML page "jobrun report --html" writes.
 *
 * No value may open an element, an attribute or an entity: &, <, >, "
 * and ' always come out as entities.  Bytes a browser would show as
 * U+FFFD or not at all (invalid UTF-8, NUL, control characters) come out
 * as the visible escapes status and list use.  Long values are cut at a
 * whole character or escape, with an ellipsis.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dash.h"

/* dash_html_text of s (len bytes), checked against want. */
static void
expect_n(const char *s, size_t len, size_t max, int nl, const char *want)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	dash_html_text(f, s, len, max, nl);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, want);
	free(buf);
}

#define EXPECT(s, want) expect_n((s), sizeof(s) - 1, 200, 0, (want))

static void
test_plain_text_unchanged(void **state)
{
	(void)state;
	EXPECT("order_sync", "order_sync");
	EXPECT("", "");
	EXPECT("注文 \xf0\x9f\x93\xa6 caf\xc3\xa9", "注文 \xf0\x9f\x93\xa6 caf\xc3\xa9");
}

static void
test_markup_is_text(void **state)
{
	(void)state;
	EXPECT("<script>alert(1)</script>",
	    "&lt;script&gt;alert(1)&lt;/script&gt;");
	EXPECT("<img src=x onerror=alert(1)>",
	    "&lt;img src=x onerror=alert(1)&gt;");
	EXPECT("\" onmouseover=\"x", "&quot; onmouseover=&quot;x");
	EXPECT("' onfocus='x", "&#39; onfocus=&#39;x");
	EXPECT("&lt; &amp; &#60;", "&amp;lt; &amp;amp; &amp;#60;");
	EXPECT("]]><!--", "]]&gt;&lt;!--");
}

static void
test_bytes_made_visible(void **state)
{
	(void)state;
	EXPECT("a\0b", "a\\x00b");
	EXPECT("\xff\xfe", "\\xff\\xfe");
	EXPECT("\xed\xa0\x80", "\\xed\\xa0\\x80");	/* a surrogate */
	EXPECT("\x1b[2J\a", "\\x1b[2J\\x07");
	EXPECT("\xc2\x9b", "\\u009b");	/* C1 CSI */
	EXPECT("a\tb\r\nc", "a\\tb\\r\\nc");
}

static void
test_newlines_kept_for_errors(void **state)
{
	(void)state;
	expect_n("line 1\nline <2>", 15, 200, 1, "line 1\nline &lt;2&gt;");
	expect_n("a\r\n\x1b", 4, 200, 1, "a\\r\n\\x1b");
}

static void
test_cut_with_ellipsis(void **state)
{
	(void)state;
	expect_n("abcdef", 6, 4, 0, "abcd\xe2\x80\xa6");
	expect_n("abcd", 4, 4, 0, "abcd");
	/* never half an escape or half a character */
	expect_n("ab\x01", 3, 4, 0, "ab\xe2\x80\xa6");
	expect_n("a\xc3\xa9\xc3\xa9", 5, 4, 0, "a\xc3\xa9\xe2\x80\xa6");
	/* entities come after the cut: < counts one byte */
	expect_n("<<<<<<", 6, 2, 0, "&lt;&lt;\xe2\x80\xa6");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_markup_is_text),
		cmocka_unit_test(test_bytes_made_visible),
		cmocka_unit_test(test_newlines_kept_for_errors),
		cmocka_unit_test(test_cut_with_ellipsis),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
