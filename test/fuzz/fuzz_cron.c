/*
 * fuzz_cron.c - libFuzzer target: cron_parse must parse any text or
 * refuse it with a message, and what it takes must keep cron.h's
 * contract: some slot exists (one is found from any start), the slot
 * found matches, and the walks back and forward agree on it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 2026-12-01 00:00 and a start before 1970. */
	static const int64_t starts[] = { 29408160, -1000003 };
	char *text = malloc(size + 1), err[512];
	struct cron c;
	int64_t n, p;
	size_t i;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (cron_parse(text, &c, err, sizeof err) != 0) {
		if (err[0] == '\0')
			abort();	/* a refusal says why */
		free(text);
		return 0;
	}
	for (i = 0; i < sizeof starts / sizeof starts[0]; i++) {
		if (cron_next(&c, starts[i], &n) != 0 || n < starts[i] ||
		    !cron_matches(&c, n))
			abort();
		if (cron_prev(&c, n, &p) != 0 || p != n)
			abort();
		if (cron_prev(&c, n - 1, &p) == 0 &&
		    (p >= n || !cron_matches(&c, p)))
			abort();
		if (cron_next(&c, p + 1, &p) != 0 || p != n)
			abort();
	}
	free(text);
	return 0;
}
