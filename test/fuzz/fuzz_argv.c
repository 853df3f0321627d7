/*
 * fuzz_argv.c - libFuzzer target: argv_split must split any command line
 * or refuse it with a message, and a successful split must be a
 * NULL-terminated vector of at least one word.  Its contract (argv.h) is
 * checked too: a line without quotes or backslashes splits into exactly
 * its blank-separated fields, byte for byte.
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
	err[0] = '\0';
	if (argv_split(line, &argv, err, sizeof err) == 0) {
		int plain = strpbrk(line, "'\"\\") == NULL;
		char *copy, *word, *save = NULL;
		size_t i = 0;

		while (argv[n] != NULL)
			n++;
		if (n == 0)
			abort();	/* documented: at least one word */
		/* Without quotes or backslashes, the words are the line's
		 * blank-separated fields, byte for byte. */
		if (plain && strlen(line) == size) {
			copy = strdup(line);
			if (copy != NULL) {
				for (word = strtok_r(copy, " \t\n\r", &save);
				    word != NULL;
				    word = strtok_r(NULL, " \t\n\r", &save))
					if (i >= n || strcmp(argv[i++], word) != 0)
						abort();
				if (i != n)
					abort();
				free(copy);
			}
		}
		argv_free(argv);
	} else if (err[0] == '\0')
		abort();		/* documented: an error says why */
	free(line);
	return 0;
}
