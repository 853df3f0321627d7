/*
 * test_utf8_escape.c - utf8_escape, which stands between text from the
 * job table or a handler and a terminal or a log.
 *
 * What must never come out raw: C0 controls (ESC, BEL, BS, CR, LF...),
 * DEL, C1 controls (U+0080..U+009F, CSI among them) and bytes that are not
 * UTF-8 (a lone 0x9B is CSI to an 8-bit terminal).  What must come out as
 * it is: printable ASCII and every other character, CJK and emoji
 * included.  Each case is checked for the exact output, and a sweep over
 * every byte and every two-byte sequence checks that no control byte
 * survives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* utf8_escape of the whole of s (len bytes) with flags, checked against
 * want, and its returned length against strlen(want). */
static void
expect_n(const char *s, size_t len, int flags, const char *want)
{
	char out[256];
	size_t n = utf8_escape(out, sizeof out, s, len, flags);

	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
	assert_int_equal(utf8_escape(NULL, 0, s, len, flags), n);
}

#define EXPECT(s, flags, want) expect_n((s), sizeof(s) - 1, (flags), (want))

static void
test_plain_text_unchanged(void **state)
{
	(void)state;
	EXPECT("", 0, "");
	EXPECT("order_sync:10001 -> exit status 3: boom", 0,
	    "order_sync:10001 -> exit status 3: boom");
	/* 中, é, 😀, U+00A0 (the first character after C1) */
	EXPECT("\xE4\xB8\xAD \xC3\xA9 \xF0\x9F\x98\x80 \xC2\xA0", 0,
	    "\xE4\xB8\xAD \xC3\xA9 \xF0\x9F\x98\x80 \xC2\xA0");
	EXPECT("a \"quoted\" back\\slash", 0, "a \"quoted\" back\\slash");
}

static void
test_terminal_sequences(void **state)
{
	(void)state;
	EXPECT("\x1b[2J\x1b[H", 0, "\\x1b[2J\\x1b[H");	/* clear screen */
	EXPECT("\x1b]0;pwned\x07", 0, "\\x1b]0;pwned\\x07");	/* retitle */
	EXPECT("ok\x08\x08no", 0, "ok\\x08\\x08no");		/* backspace */
	EXPECT("del\x7f", 0, "del\\x7f");
	EXPECT("\x01\x1f", 0, "\\x01\\x1f");
}

static void
test_line_breaks(void **state)
{
	(void)state;
	EXPECT("boom\nlevel=error msg=forged", 0,
	    "boom\\nlevel=error msg=forged");
	EXPECT("a\r\nb\tc", 0, "a\\r\\nb\\tc");
	/* A block of lines keeps its line feeds, and only those. */
	EXPECT("{\n  \"a\": 1\r\x1b\n}", UTF8_ESC_KEEP_NL,
	    "{\n  \"a\": 1\\r\\x1b\n}");
}

static void
test_c1_controls(void **state)
{
	(void)state;
	/* U+009B CSI, U+0085 NEL, U+0080, U+009F: as code points. */
	EXPECT("\xC2\x9B" "2J", 0, "\\u009b2J");
	EXPECT("a\xC2\x85" "b", 0, "a\\u0085b");
	EXPECT("\xC2\x80\xC2\x9F", 0, "\\u0080\\u009f");
}

static void
test_bidi_controls(void **state)
{
	(void)state;
	/* U+202E RIGHT-TO-LEFT OVERRIDE: "txt.exe" would show as "exe.txt" */
	EXPECT("a\xE2\x80\xAE" "exe.txt", 0, "a\\u202eexe.txt");
	EXPECT("\xE2\x80\x8E\xE2\x80\x8F\xE2\x80\xAA\xE2\x80\xAD", 0,
	    "\\u200e\\u200f\\u202a\\u202d");
	EXPECT("\xE2\x81\xA6x\xE2\x81\xA9", 0, "\\u2066x\\u2069");
	EXPECT("\xE2\x80\xA8\xE2\x80\xA9", 0, "\\u2028\\u2029");
	/* Their neighbours stay as they are: U+2027, U+202F, U+2065, U+206A
	 * and the dash U+2014. */
	EXPECT("\xE2\x80\xA7\xE2\x80\xAF\xE2\x81\xA5\xE2\x81\xAA\xE2\x80\x94",
	    0, "\xE2\x80\xA7\xE2\x80\xAF\xE2\x81\xA5\xE2\x81\xAA\xE2\x80\x94");
}

static void
test_invalid_bytes(void **state)
{
	(void)state;
	/* A lone CSI byte, a stray continuation, a cut sequence, an
	 * overlong ESC (C0 9B would be one) and a NUL inside the length. */
	EXPECT("\x9B" "2J", 0, "\\x9b2J");
	EXPECT("a\x80z", 0, "a\\x80z");
	EXPECT("\xE4\xB8", 0, "\\xe4\\xb8");
	EXPECT("\xC0\x9B", 0, "\\xc0\\x9b");
	EXPECT("a\0b", 0, "a\\x00b");
}

static void
test_quoted(void **state)
{
	(void)state;
	EXPECT("say \"hi\" \\o/\n", UTF8_ESC_QUOTED,
	    "say \\\"hi\\\" \\\\o/\\n");
	EXPECT("\x1b", UTF8_ESC_QUOTED, "\\x1b");
}

/* A buffer too small keeps whole units: no cut escape, no cut character,
 * and the return value is still the length of the whole. */
static void
test_cut_whole_units(void **state)
{
	char out[8];
	size_t n;

	(void)state;
	n = utf8_escape(out, sizeof out, "ab\x1b[2J", 6, 0);
	assert_int_equal(n, 9);
	assert_string_equal(out, "ab\\x1b[");
	n = utf8_escape(out, 6, "ab\x1b", 3, 0);
	assert_string_equal(out, "ab");		/* not "ab\x1" */
	n = utf8_escape(out, 5, "ab\xE4\xB8\xAD", 5, 0);
	assert_int_equal(n, 5);
	assert_string_equal(out, "ab");		/* not half of 中 */
	n = utf8_escape(out, 1, "abc", 3, 0);
	assert_string_equal(out, "");
	n = utf8_escape(out, 0, "abc", 3, 0);	/* out left alone */
	assert_int_equal(n, 3);
}

static void
test_dup(void **state)
{
	char *s;

	(void)state;
	s = utf8_escape_dup("key\x1b]0;x\x07:1", 0);
	assert_string_equal(s, "key\\x1b]0;x\\x07:1");
	free(s);
	s = utf8_escape_dup("", UTF8_ESC_QUOTED);
	assert_string_equal(s, "");
	free(s);
}

/* No C0 control, DEL, C1 byte pair or 0x80..0xFF byte that does not
 * belong to a well-formed character comes out, for every byte and every
 * pair of bytes. */
static int
safe(const char *out)
{
	const unsigned char *p = (const unsigned char *)out;
	size_t i;

	for (i = 0; p[i] != '\0'; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return 0;
		if (p[i] == 0xC2 && p[i + 1] >= 0x80 && p[i + 1] < 0xA0)
			return 0;
		if (p[i] >= 0x80 && p[i] < 0xC2)	/* no lead byte */
			return 0;
		if (p[i] >= 0xC2) {	/* a lead: skip its continuations */
			size_t n = p[i] < 0xE0 ? 2 : p[i] < 0xF0 ? 3 : 4, k;

			for (k = 1; k < n; k++)
				if (p[i + k] < 0x80 || p[i + k] > 0xBF)
					return 0;
			i += n - 1;
		}
	}
	return 1;
}

static void
test_sweep(void **state)
{
	char in[3], out[64];
	unsigned a, b;

	(void)state;
	for (a = 0; a < 256; a++) {
		in[0] = (char)a;
		utf8_escape(out, sizeof out, in, 1, 0);
		if (!safe(out))
			fail_msg("byte 0x%02x came out raw", a);
		for (b = 0; b < 256; b++) {
			in[1] = (char)b;
			utf8_escape(out, sizeof out, in, 2, 0);
			if (!safe(out))
				fail_msg("bytes 0x%02x 0x%02x came out raw",
				    a, b);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_terminal_sequences),
		cmocka_unit_test(test_line_breaks),
		cmocka_unit_test(test_c1_controls),
		cmocka_unit_test(test_bidi_controls),
		cmocka_unit_test(test_invalid_bytes),
		cmocka_unit_test(test_quoted),
		cmocka_unit_test(test_cut_whole_units),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests_name("utf8_escape", tests, NULL, NULL);
}
