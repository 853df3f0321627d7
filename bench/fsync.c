/*
 * fsync.c - how long a durable commit's log flush takes on this disk.
 *
 *   fsync DIR [COUNT]
 *
 * Rewrites 512 bytes of a file in DIR and fdatasync()s it COUNT times
 * (default 200), as InnoDB's log does at each commit with
 * innodb_flush_log_at_trx_commit = 1.  Prints fsync_median_us=..
 * fsync_p90_us=..; a job needs two such commits (claim, mark).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	char path[4096], block[512];
	int fd, i, n = argc > 2 ? atoi(argv[2]) : 200;
	double *v, t0;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: fsync DIR [COUNT]\n");
		return 64;
	}
	snprintf(path, sizeof path, "%s/fsync.probe", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	v = calloc((size_t)n, sizeof *v);
	if (fd < 0 || v == NULL) {
		perror(path);
		return 1;
	}
	memset(block, 'x', sizeof block);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		if (pwrite(fd, block, sizeof block, (off_t)(i % 8) * 512) < 0 ||
		    fdatasync(fd) != 0) {
			perror(path);
			return 1;
		}
		v[i] = now_us() - t0;
	}
	close(fd);
	unlink(path);
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	printf("fsync_median_us=%.0f\nfsync_p90_us=%.0f\n", v[n / 2],
	    v[(n * 9) / 10]);
	return 0;
}
