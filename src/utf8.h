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

/* Byte length of the longest head of s (len bytes) that holds at most
 * chars characters and at most bytes bytes and ends on a character
 * boundary.  Both bounds hold whatever s holds, valid or not. */
size_t utf8_head(const char *s, size_t len, size_t chars, size_t bytes);

/* Byte offset of the longest tail of s with at most chars characters and
 * at most bytes bytes that starts on a character boundary. */
size_t utf8_tail(const char *s, size_t len, size_t chars, size_t bytes);

/* s (len bytes) with each character of more than max_bytes bytes, each
 * byte that is not part of well-formed UTF-8 and each NUL as one '?',
 * malloc'ed and NUL-ended: max_bytes 3 is what utf8mb3 holds (the Basic
 * Multilingual Plane), 1 what every ASCII-based character set holds. */
char *utf8_narrow(const char *s, size_t len, size_t max_bytes);

/* utf8_escape flags. */
#define UTF8_ESC_QUOTED 1	/* also " and \ as \" and \\: a quoted value */
#define UTF8_ESC_KEEP_NL 2	/* line feeds as they are: a block of lines */

/* Text from the table or a handler made safe to write to a terminal or a
 * log: every control character as an escape - \t \n \r, other C0
 * controls and DEL as \xNN, C1 controls (U+0080..U+009F) as \u00NN,
 * bidirectional controls and line separators (U+200E, U+200F,
 * U+2028..U+202E, U+2066..U+2069) as \uNNNN -
 * and every byte that is not part of well-formed UTF-8 as \xNN; the rest
 * as it is.  Writes into out (outlen bytes, always NUL-terminated when
 * outlen > 0, never ending in part of an escape or a character) and
 * returns the length of the whole result, as snprintf(3) does: out may
 * be NULL when outlen is 0, and the result equals len exactly when
 * nothing needed an escape. */
size_t utf8_escape(char *out, size_t outlen, const char *s, size_t len,
                   int flags);

/* The same for a NUL-terminated s, malloc'ed. */
char *utf8_escape_dup(const char *s, int flags);

#endif
