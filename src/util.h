/*
 * util.h - small helpers every module needs: checked allocation, strict
 * number parsing, monotonic time and bounded string formatting.
 */
#ifndef JOBRUN_UTIL_H
#define JOBRUN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Allocation that cannot fail: out of memory ends the process (exit 70). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* p, from an allocator that is not ours (libmariadb, libcurl): NULL means
 * out of memory and ends the process as xmalloc does.  jansson allocates
 * through xmalloc itself (json_set_alloc_funcs in main). */
void *xcheck(void *p);

/* Parse a whole decimal string into [min, max]; 0 on success, -1 otherwise. */
int parse_ulong(const char *s, unsigned long min, unsigned long max,
                unsigned long *out);

/* Milliseconds on a clock that never jumps; for budgets and timeouts only,
 * never compared with database times. */
int64_t now_ms(void);

/* snprintf into err that never overflows; always returns -1 so callers can
 * write "return errf(err, n, ...)". */
int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
