/*
 * rawjson.c - splice stored JSON text into a document jansson prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawjson.h"
#include "util.h"

char *
rawjson_object(json_t *obj, const struct raw_member *m, size_t n,
    size_t *lenp)
{
	/* An object jansson built always prints: NULL is out of memory. */
	char *head = xcheck(json_dumps(obj, JSON_COMPACT |
	    JSON_PRESERVE_ORDER));
	size_t len, cap, i;
	char *out;

	len = strlen(head) - 1;		/* without the closing brace */
	cap = len + 2;
	for (i = 0; i < n; i++)
		cap += strlen(m[i].key) + 4 + (m[i].text != NULL ? m[i].len :
		    4);
	out = xmalloc(cap + 1);
	memcpy(out, head, len);
	free(head);
	for (i = 0; i < n; i++) {
		len += (size_t)sprintf(out + len, "%s\"%s\":", len > 1 ? "," :
		    "", m[i].key);
		if (m[i].text != NULL) {
			memcpy(out + len, m[i].text, m[i].len);
			len += m[i].len;
		} else {
			memcpy(out + len, "null", 4);
			len += 4;
		}
	}
	out[len++] = '}';
	out[len] = '\0';
	*lenp = len;
	return out;
}
