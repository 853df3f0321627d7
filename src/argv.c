/*
 * argv.c - shell-like word splitting without a shell.
 *
 * A handler command comes from the configuration file and job data never
 * reaches it, but running it through /bin/sh would still make every space,
 * quote and dollar sign in a path a hazard.  jobrun execs the program
 * directly; this file only gives operators the quoting they expect for
 * arguments with spaces.  Anything a shell would expand is kept literally,
 * so what is written is what runs.
 */
#include <stdlib.h>
#include <string.h>

#include "argv.h"
#include "util.h"

enum quote { NONE, SINGLE, DOUBLE };

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void
push_word(char ***argvp, size_t *n, const char *word, size_t len)
{
	*argvp = xrealloc(*argvp, (*n + 2) * sizeof **argvp);
	(*argvp)[(*n)++] = xstrndup(word, len);
	(*argvp)[*n] = NULL;
}

int
argv_split(const char *line, char ***argvp, char *err, size_t errlen)
{
	char **argv = NULL;
	size_t n = 0, len = 0;
	char *word = xmalloc(strlen(line) + 1);
	enum quote q = NONE;
	int in_word = 0;
	const char *p;
	int rc = -1;

	for (p = line; *p != '\0'; p++) {
		if (q == SINGLE) {
			if (*p == '\'')
				q = NONE;
			else
				word[len++] = *p;
		} else if (q == DOUBLE) {
			if (*p == '"')
				q = NONE;
			else if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				word[len++] = *++p;
			else
				word[len++] = *p;
		} else if (is_blank(*p)) {
			if (in_word)
				push_word(&argv, &n, word, len);
			in_word = 0;
			len = 0;
		} else {
			in_word = 1;
			if (*p == '\'')
				q = SINGLE;
			else if (*p == '"')
				q = DOUBLE;
			else if (*p == '\\') {
				if (p[1] == '\0') {
					errf(err, errlen, "trailing backslash");
					goto out;
				}
				word[len++] = *++p;
			} else
				word[len++] = *p;
		}
	}
	if (q != NONE) {
		errf(err, errlen, "unterminated %s quote",
		    q == SINGLE ? "single" : "double");
		goto out;
	}
	if (in_word)
		push_word(&argv, &n, word, len);
	if (n == 0) {
		errf(err, errlen, "empty command");
		goto out;
	}
	*argvp = argv;
	argv = NULL;
	rc = 0;
out:
	free(word);
	argv_free(argv);
	return rc;
}

void
argv_free(char **argv)
{
	char **p;

	if (argv == NULL)
		return;
	for (p = argv; *p != NULL; p++)
		free(*p);
	free(argv);
}
