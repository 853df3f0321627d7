/*
 * stamp.c - an exec handler that says when it started.
 *
 *   stamp FILE
 *
 * Reads CLOCK_REALTIME first thing in main, then appends one line
 * "KEY NS" to FILE ($JOB_BUSINESS_KEY, the time in nanoseconds) in one
 * O_APPEND write, so that handlers of several runners can share FILE.
 * It does not read its standard input.  bench/run links it statically
 * when it can (no dynamic loading before main) and measures its own cost,
 * fork to the clock read, with `arrive spawn`.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec ts;
	const char *key;
	char line[320];
	int fd, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (argc != 2) {
		fputs("usage: stamp FILE\n", stderr);
		return 64;
	}
	key = getenv("JOB_BUSINESS_KEY");
	n = snprintf(line, sizeof line, "%s %lld\n", key != NULL ? key : "-",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	if (n < 0 || (size_t)n >= sizeof line)
		return 1;
	fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		perror(argv[1]);
		return 1;
	}
	return close(fd) == 0 ? 0 : 1;
}
