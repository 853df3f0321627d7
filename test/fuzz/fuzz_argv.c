/*
 * fuzz_argv.c - libFuzzer target: argv_split must split any command line
 * or refuse it with a message, and a successful split must be a
 * NULL-terminated vector of at least one word.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **argv = NULL, err[256];
	char *line = malloc(size + 1);
	size_t n = 0;

	if (line == NULL)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (argv_split(line, &argv, err, sizeof err) == 0) {
		while (argv[n] != NULL)
			n++;
		if (n == 0)
			abort();	/* documented: at least one word */
		argv_free(argv);
	} else if (err[0] == '\0')
		abort();		/* documented: an error says why */
	free(line);
	return 0;
}
