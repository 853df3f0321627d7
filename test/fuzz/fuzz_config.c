/*
 * fuzz_config.c - libFuzzer target: the configuration parser must turn any
 * bytes into a configuration or an error message, never a crash, a leak
 * or a read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg cfg;
	char err[1024];
	char *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';	/* cfg_load refuses NUL bytes before parsing */
	if (cfg_parse(&cfg, "fuzz.conf", text, err, sizeof err) == 0)
		cfg_free(&cfg);
	free(text);
	return 0;
}
