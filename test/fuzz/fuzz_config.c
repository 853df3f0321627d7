/*
 * fuzz_config.c - libFuzzer target: the configuration parser must turn any
 * bytes into a configuration or an error message, never a crash, a leak
 * or a read out of bounds; and keep its contract (config.h): an error
 * names the file and leaves the configuration empty, no types; a success
 * has the required database and the path, and every type a name and a
 * handler kind.
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
	err[0] = '\0';
	if (cfg_parse(&cfg, "fuzz.conf", text, err, sizeof err) == 0) {
		size_t i;

		if (cfg.path == NULL || strcmp(cfg.path, "fuzz.conf") != 0 ||
		    cfg.db.database == NULL || cfg.db.database[0] == '\0' ||
		    (cfg.ntypes > 0 && cfg.types == NULL))
			abort();
		for (i = 0; i < cfg.ntypes; i++)
			if (cfg.types[i].name == NULL ||
			    cfg.types[i].name[0] == '\0' ||
			    cfg.types[i].kind == NULL)
				abort();
		cfg_free(&cfg);
	} else if (strncmp(err, "fuzz.conf", 9) != 0 || cfg.types != NULL ||
	    cfg.ntypes != 0 || cfg.path != NULL || cfg.db.database != NULL)
		abort();	/* documented: names the file; cfg empty */
	free(text);
	return 0;
}
