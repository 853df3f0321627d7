/*
 * replace.c - write a file whole, or not at all.
 *
 * Files that other programs read while jobrun rewrites them (the metrics
 * node_exporter collects, the report a web server serves) are written to
 * a temporary name in the same directory and renamed over the old one:
 * rename(2) within a file system is atomic, so a reader never sees half a
 * file, and a full disk leaves the previous file in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace.h"
#include "util.h"

int
replace_file(const char *path, const char *what, mode_t mode,
    void (*fill)(FILE *f, void *arg), void *arg, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f;
	int fd;

	if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp)
		return errf(err, errlen, "write %s %s: path too long", what,
		    path);
	fd = mkstemp(tmp);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		errf(err, errlen, "write %s %s: %s", what, tmp,
		    strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	/* mkstemp makes it 0600; its readers run as other users, and a
	 * file they cannot read is as bad as none. */
	fill(f, arg);
	if (fchmod(fd, mode) != 0 || fflush(f) != 0 || ferror(f) ||
	    fsync(fd) != 0) {
		errf(err, errlen, "write %s %s: %s", what, tmp,
		    strerror(errno));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		errf(err, errlen, "write %s %s: %s", what, path,
		    strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
