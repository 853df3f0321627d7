/*
 * replace.c - write a file whole, or not at all.
 *
 * Files that other programs read while jobrun rewrites them (the metrics
 * node_exporter collects, the report a web server serves) are written to
 * a temporary name in the same directory and renamed over the old one:
 * rename(2) within a file system is atomic, so a reader never sees half a
 * file, and a full disk leaves the previous file in place.
 *
 * That is for a regular file, or a name not taken yet.  A rename would
 * put a regular file in place of whatever else the name is: a device
 * (/dev/stdout, /dev/full), a FIFO a reader waits on, a symbolic link an
 * operator made.  So a symbolic link is followed and its target written
 * as a path of its own (the link stays), anything but a regular file or
 * a directory is written through, as any program writes to it, and a
 * directory is an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace.h"
#include "util.h"

/* path is not a regular file: write to it as it is. */
static int
write_through(const char *path, const char *what,
    void (*fill)(FILE *f, void *arg), void *arg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return errf(err, errlen, "write %s %s: %s", what, path,
		    strerror(errno));
	fill(f, arg);
	if (fflush(f) != 0 || ferror(f)) {
		errf(err, errlen, "write %s %s: %s", what, path,
		    strerror(errno));
		fclose(f);
		return -1;
	}
	if (fclose(f) != 0)
		return errf(err, errlen, "write %s %s: %s", what, path,
		    strerror(errno));
	return 0;
}

static int replace_regular(const char *path, const char *what, mode_t mode,
    void (*fill)(FILE *f, void *arg), void *arg, char *err, size_t errlen);

int
replace_file(const char *path, const char *what, mode_t mode,
    void (*fill)(FILE *f, void *arg), void *arg, char *err, size_t errlen)
{
	struct stat sb;
	char *target;
	int rc;

	if (lstat(path, &sb) != 0) {
		if (errno != ENOENT)
			return errf(err, errlen, "write %s %s: %s", what,
			    path, strerror(errno));
		/* "DIR/" of a missing DIR, or a new file: the temporary
		 * file's creation says which. */
		return replace_regular(path, what, mode, fill, arg, err,
		    errlen);
	}
	if (S_ISLNK(sb.st_mode)) {
		if ((target = realpath(path, NULL)) == NULL)
			return errf(err, errlen, "write %s %s: a symbolic "
			    "link whose target cannot be followed: %s",
			    what, path, strerror(errno));
		rc = stat(target, &sb) == 0 && !S_ISREG(sb.st_mode) ?
		    write_through(target, what, fill, arg, err, errlen) :
		    replace_regular(target, what, mode, fill, arg, err,
		    errlen);
		free(target);
		return rc;
	}
	if (S_ISDIR(sb.st_mode))
		return errf(err, errlen, "write %s %s: %s", what, path,
		    strerror(EISDIR));
	if (!S_ISREG(sb.st_mode))
		return write_through(path, what, fill, arg, err, errlen);
	return replace_regular(path, what, mode, fill, arg, err, errlen);
}

static int
replace_regular(const char *path, const char *what, mode_t mode,
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
