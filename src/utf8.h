/*
 * utf8.h - make arbitrary handler output safe to store in a utf8mb4 column
 * and cut it by characters, not bytes.
 */
#ifndef JOBRUN_UTF8_H
#define JOBRUN_UTF8_H

#include <stddef.h>

/* Replace, in place, every byte that is not part of a well-formed UTF-8
 * sequence (and every NUL) with '?'.  The length does not change. */
void utf8_sanitize(char *s, size_t len);

/* 1 when s (len bytes) is well-formed UTF-8 without NUL, else 0. */
int utf8_valid(const char *s, size_t len);

/* Number of characters in well-formed UTF-8 s of len bytes. */
size_t utf8_count(const char *s, size_t len);

/* Byte length of the first n characters of well-formed UTF-8 s. */
size_t utf8_prefix(const char *s, size_t len, size_t n);

/* Byte offset where the last n characters of well-formed UTF-8 s begin. */
size_t utf8_suffix(const char *s, size_t len, size_t n);

#endif
