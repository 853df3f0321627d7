/*
 * rawjson.h - JSON documents that carry a member exactly as stored.
 *
 * A job's payload and checkpoint are the application's bytes, valid by the
 * server's JSON_VALID; parsing them with jansson and printing them again
 * would change them (0.1 becomes 0.10000000000000001, numbers past 2^63
 * are refused, duplicate keys vanish).  So the document around them is
 * built with jansson, which escapes our own strings properly, and they
 * are spliced in as they are.
 */
#ifndef JOBRUN_RAWJSON_H
#define JOBRUN_RAWJSON_H

#include <jansson.h>
#include <stddef.h>

/* A member to add as it is: key (plain ASCII, no escaping needed) and
 * text, len bytes of JSON; NULL text adds null. */
struct raw_member {
	const char *key;
	const char *text;
	size_t len;
};

/* obj (an object; not released) printed compactly, followed by the n raw
 * members, as one malloc'ed NUL-ended document; *lenp its length. */
char *rawjson_object(json_t *obj, const struct raw_member *m, size_t n,
                     size_t *lenp);

#endif
