/*
 * util.h - small helpers every module needs: checked allocation, strict
 * number parsing, monotonic time and bounded string formatting.
 */
#ifndef JOBRUN_UTIL_H
#define JOBRUN_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Allocation that cannot fail: out of memory ends the process (exit 70). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* n bytes of s, NUL ones too (unlike strndup(3)), and a NUL after */
char *xstrndup(const char *s, size_t n);

/* p, from an allocator that is not ours (libmariadb, libcurl): NULL means
 * out of memory and ends the process as xmalloc does.  jansson allocates
 * through xmalloc itself (json_set_alloc_funcs in main). */
void *xcheck(void *p);

/* Parse a whole decimal string into [min, max]; 0 on success, -1 otherwise. */
/* yes/no, true/false, on/off, 1/0 (any case) into *out; -1 otherwise
 * (a configuration's flags, in jobrun.conf and in a handler's keys). */
int parse_bool(const char *value, int *out);

/* The same for a signed number, "-" allowed before the digits. */
int parse_long(const char *s, long min, long max, long *out);
int parse_ulong(const char *s, unsigned long min, unsigned long max,
                unsigned long *out);

/* A fraction from 0 to 1 with at most three decimals ("0", "0.25", "1",
 * "1.0") into *permille; -1 for anything else. */
int parse_fraction(const char *s, unsigned long *permille);

/* Milliseconds on a clock that never jumps; for budgets and timeouts only,
 * never compared with database times. */
int64_t now_ms(void);
/* The same clock in microseconds, for timing a statement. */
int64_t now_us(void);

/* 1 when process pid, our child, has exited or is exiting (the kernel's
 * PF_EXITING, or a zombie not yet reaped): a signal can no longer stop it,
 * and what it did is its outcome.  0 when it runs, or when /proc cannot
 * tell. */
int proc_exiting(pid_t pid);

/* snprintf into err that never overflows; always returns -1 so callers can
 * write "return errf(err, n, ...)". */
int errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
