/*
 * http.h - what the http handler shows of itself beyond its kind.
 */
#ifndef JOBRUN_HTTP_H
#define JOBRUN_HTTP_H

#include <stddef.h>

/* The Idempotency-Key value for a business key of len bytes (malloc'ed):
 * letters, digits and "-._~:" as they are, every other byte (NUL and "%"
 * included) as %XX in capitals.  Distinct keys give distinct values. */
char *http_idempotency_value(const char *key, size_t len);

#endif
