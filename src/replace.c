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
 * directory is an error.  A name under /dev or /proc is written through
 * whatever it leads to (replace_through).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace.h"
#include "util.h"

/* The descriptor a name of the process's own opens again (/dev/stdout,
 * /dev/fd/N, /proc/self/fd/N), or -1. */
static int
own_fd(const char *path)
{
	const char *n = NULL;
	char *end;
	long fd;

	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		n = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		n = path + 14;
	if (n == NULL || *n < '0' || *n > '9')
		return -1;
	fd = strtol(n, &end, 10);
	return *end == '\0' && fd <= 1024 ? (int)fd : -1;
}

/* path is not a regular file: write to it as it is, appending.  One of
 * the process's own descriptors is written through a copy of it, which
 * shares its offset: the run's standard output, to a file, keeps what
 * was written before and after, in order. */
static FILE *
open_through(const char *path)
{
	int fd = own_fd(path), copy;
	FILE *f;

	if (fd < 0)
		return fopen(path, "a");
	fflush(fd == 1 ? stdout : fd == 2 ? stderr : NULL);
	if ((copy = dup(fd)) < 0)
		return NULL;
	if ((f = fdopen(copy, "a")) == NULL)
		close(copy);
	return f;
}

static int
write_through(const char *path, const char *what,
    void (*fill)(FILE *f, void *arg), void *arg, char *err, size_t errlen)
{
	FILE *f = open_through(path);

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

int
replace_through(const char *path)
{
	struct stat sb;

	/* /dev/stdout is a link to /proc/self/fd/1, which names the pipe or
	 * the file the shell opened: a file put in its place would take the
	 * output the run writes to its standard output. */
	if (strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0)
		return 1;
	return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
	    !S_ISDIR(sb.st_mode);
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

	if (replace_through(path))
		return write_through(path, what, fill, arg, err, errlen);
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
