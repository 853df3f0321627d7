/*
 * argv.h - split a configured command into an argument vector, the way a
 * shell would quote, without running a shell.
 */
#ifndef JOBRUN_ARGV_H
#define JOBRUN_ARGV_H

#include <stddef.h>

/* Split line into words separated by blanks.  '...' is literal; "..." is
 * literal except \" and \\; outside quotes a backslash takes the next
 * character literally.  No globbing, no variables, no redirection: $, *, >
 * and the rest are ordinary characters.  On success *argvp is a
 * NULL-terminated vector (free with argv_free) with at least one word and
 * 0 is returned; otherwise -1 and err says why. */
int argv_split(const char *line, char ***argvp, char *err, size_t errlen);

void argv_free(char **argv);

#endif
