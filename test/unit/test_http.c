/*
 * test_http.c - the Idempotency-Key encoding (http_idempotency_value).
 *
 * A receiver drops a repeated delivery by this header, so the mapping from
 * business key (any bytes, NUL included) to header value must be
 * injective: two keys that differ in any byte must never give one value,
 * or one job's work is skipped as "already done".  Besides exact examples,
 * a property test over many random byte strings (fixed seed) checks that
 * the output uses only letters, digits and "-._~:%", that a decoder
 * written here independently gives back the key exactly, and that
 * distinct keys, including ones built to collide under a sloppier
 * encoding, give distinct values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define KEYS 4000
#define KEY_MAX 64

/* The value for key (len bytes), checked against want. */
static void
check_value(const char *key, size_t len, const char *want)
{
	char *got = http_idempotency_value(key, len);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

#define EXPECT(lit, want) check_value(lit, sizeof lit - 1, want)

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;	/* lower-case hex is not what the encoding writes */
}

/* Decode value into out (room for strlen(value) bytes); returns the
 * length, or -1 when value is not a well-formed encoding: a byte outside
 * [A-Za-z0-9-._~:%], a "%" not followed by two capital hex digits, or a
 * %XX that stands for a byte the encoding keeps as it is (the encoding is
 * canonical: each key has exactly one value). */
static long
decode(const char *value, unsigned char *out)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-._~:";
	size_t i = 0, o = 0, n = strlen(value);
	int hi, lo;

	while (i < n) {
		if (value[i] != '%') {
			if (strchr(plain, value[i]) == NULL)
				return -1;
			out[o++] = (unsigned char)value[i++];
			continue;
		}
		if (n - i < 3 || (hi = hexval(value[i + 1])) < 0 ||
		    (lo = hexval(value[i + 2])) < 0)
			return -1;
		out[o] = (unsigned char)(hi * 16 + lo);
		if (out[o] != '\0' && strchr(plain, out[o]) != NULL)
			return -1;
		o++;
		i += 3;
	}
	return (long)o;
}

/* xorshift64*: the same keys on every machine and every run. */
static uint64_t rng_state = 0x6a6f6272756e3132ULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* A random key of 0..KEY_MAX bytes, biased towards the bytes that
 * matter: NUL, "%", blanks, hex digits, the kept punctuation, and high
 * bytes (UTF-8 and invalid). */
static size_t
random_key(unsigned char *k)
{
	static const char tricky[] = "%% \t\r\n:~._-/+=09AFaf";
	size_t len = (size_t)(rng() % (KEY_MAX + 1)), i;

	for (i = 0; i < len; i++) {
		uint64_t r = rng();

		switch (r % 4) {
		case 0:
			k[i] = 0;
			break;
		case 1:
			k[i] = (unsigned char)tricky[(r >> 8) %
			    (sizeof tricky - 1)];
			break;
		default:
			k[i] = (unsigned char)(r >> 8);
		}
	}
	return len;
}

struct pair {
	unsigned char key[KEY_MAX * 3 + 2];
	size_t len;
	char *value;
};

static int
by_value(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->value,
	    ((const struct pair *)b)->value);
}

static int
same_key(const struct pair *a, const struct pair *b)
{
	return a->len == b->len && memcmp(a->key, b->key, a->len) == 0;
}

static void
test_examples(void **state)
{
	(void)state;
	EXPECT("", "");
	EXPECT("order:7", "order:7");
	EXPECT(" order:7", "%20order:7");
	EXPECT("order:7 ", "order:7%20");
	EXPECT("pay:1\nX", "pay:1%0AX");
	EXPECT("pay:1%0AX", "pay:1%250AX");
	EXPECT("a/b", "a%2Fb");
	EXPECT("a%2Fb", "a%252Fb");
	EXPECT("k\0tail", "k%00tail");
	EXPECT("k", "k");
	EXPECT("\0", "%00");
	EXPECT("\xC3\xA9", "%C3%A9");			/* é */
	EXPECT("\xE4\xB8\xAD", "%E4%B8%AD");		/* 中 */
	EXPECT("\xFF\xFE", "%FF%FE");			/* not UTF-8 */
	EXPECT("ctl:a\tb\r\nX-Injected: 1", "ctl:a%09b%0D%0AX-Injected:%201");
	EXPECT("Az09-._~:", "Az09-._~:");
	EXPECT("!\"#$&'()*+,;<=>?@[\\]^`{|}\x7F",
	    "%21%22%23%24%26%27%28%29%2A%2B%2C%3B%3C%3D%3E%3F%40%5B%5C%5D"
	    "%5E%60%7B%7C%7D%7F");
}

/* Every single byte: kept exactly when it is a letter, digit or one of
 * "-._~:", else %XX with capital hex. */
static void
test_every_byte(void **state)
{
	static const char hex[] = "0123456789ABCDEF";
	char key[1], want[4];
	int c;

	(void)state;
	for (c = 0; c < 256; c++) {
		key[0] = (char)c;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') ||
		    (c != 0 && strchr("-._~:", c) != NULL)) {
			want[0] = (char)c;
			want[1] = '\0';
		} else {
			want[0] = '%';
			want[1] = hex[c >> 4];
			want[2] = hex[c & 15];
			want[3] = '\0';
		}
		check_value(key, 1, want);
	}
}

/* Output alphabet, exact round trip, and injectivity over KEYS random
 * keys plus, for each, keys made to collide with it under the mistakes
 * an encoding can make: a byte replaced by its own %XX text, a blank
 * added at either end, the key cut at a NUL, "%" doubled. */
static void
test_random_keys(void **state)
{
	struct pair *p = calloc(KEYS * 5, sizeof *p);
	unsigned char decoded[KEY_MAX * 3 + 2];
	size_t n = 0, i, j;
	char pct[4];
	long dlen;

	(void)state;
	assert_non_null(p);
	for (i = 0; i < KEYS; i++) {
		struct pair *k = &p[n++];

		k->len = random_key(k->key);
		/* Its near-twins. */
		if (k->len > 0) {
			struct pair *t = &p[n++];

			j = (size_t)(rng() % k->len);
			snprintf(pct, sizeof pct, "%%%02X", k->key[j]);
			memcpy(t->key, k->key, j);
			memcpy(t->key + j, pct, 3);
			memcpy(t->key + j + 3, k->key + j + 1, k->len - j - 1);
			t->len = k->len + 2;
		}
		p[n].key[0] = ' ';
		memcpy(p[n].key + 1, k->key, k->len);
		p[n].len = k->len + 1;
		n++;
		memcpy(p[n].key, k->key, k->len);
		p[n].key[k->len] = ' ';
		p[n].len = k->len + 1;
		n++;
		if (memchr(k->key, 0, k->len) != NULL) {
			memcpy(p[n].key, k->key, k->len);
			p[n].len = (size_t)((unsigned char *)memchr(k->key, 0,
			    k->len) - k->key);
			n++;
		}
	}
	for (i = 0; i < n; i++) {
		p[i].value = http_idempotency_value((const char *)p[i].key,
		    p[i].len);
		assert_non_null(p[i].value);
		assert_true(strspn(p[i].value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-._~:%") ==
		    strlen(p[i].value));
		dlen = decode(p[i].value, decoded);
		assert_true(dlen >= 0);
		assert_int_equal((size_t)dlen, p[i].len);
		assert_memory_equal(decoded, p[i].key, p[i].len);
	}
	/* Sorted by value, equal values sit side by side: they must come
	 * from equal keys. */
	qsort(p, n, sizeof *p, by_value);
	for (i = 1; i < n; i++)
		if (strcmp(p[i - 1].value, p[i].value) == 0)
			assert_true(same_key(&p[i - 1], &p[i]));
	for (i = 0; i < n; i++)
		free(p[i].value);
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_random_keys),
	};

	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
