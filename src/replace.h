/*
 * replace.h - write a file whole, or not at all.
 */
#ifndef JOBRUN_REPLACE_H
#define JOBRUN_REPLACE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Replace path with what fill (called once with a stream and arg) puts
 * out: written to a temporary file beside it with the given mode,
 * flushed to disk, then renamed over path, so a reader sees the old file
 * or the new one, never half of one.  A symbolic link is followed (the
 * link stays); a path that is neither a regular file nor a directory
 * (a device, a FIFO) is written through; a directory is an error.  0,
 * or -1 with err saying "write WHAT PATH: cause" (what: "metrics",
 * "report"). */
/* Whether replace_file writes path through rather than replacing it: a
 * name under /dev or /proc (/dev/stdout), or anything but a regular file
 * or a directory (a FIFO, a device).  Such a path is not read back. */
int replace_through(const char *path);

int replace_file(const char *path, const char *what, mode_t mode,
                 void (*fill)(FILE *f, void *arg), void *arg, char *err,
                 size_t errlen);

#endif
