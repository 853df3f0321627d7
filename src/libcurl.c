/*
 * libcurl.c - dlopen(3) libcurl and look up the functions jobrun calls.
 *
 * The soname is the one the -dev package's headers are for (libcurl.so.4,
 * the ABI since 2006); a missing symbol means an older libcurl than the
 * headers, which is reported rather than crashed on.
 */
#include <dlfcn.h>
#include <string.h>

#include "libcurl.h"
#include "util.h"

#define LIBCURL_SONAME "libcurl.so.4"

/* dlsym returns void *; the function pointer it stands for is the type
 * the table declares (POSIX guarantees the conversion works). */
#define LOAD(field, name) \
	do { \
		void *sym = dlsym(lc->handle, name); \
		if (sym == NULL) \
			goto missing; \
		memcpy(&lc->field, &sym, sizeof sym); \
	} while (0)

int
libcurl_open(struct libcurl *lc, char *err, size_t errlen)
{
	const char *name = NULL;

	memset(lc, 0, sizeof *lc);
	lc->handle = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (lc->handle == NULL)
		return errf(err, errlen, "load %s: %s (install libcurl4)",
		    LIBCURL_SONAME, dlerror());
	name = "curl_global_init"; LOAD(global_init, name);
	name = "curl_global_cleanup"; LOAD(global_cleanup, name);
	name = "curl_easy_init"; LOAD(easy_init, name);
	name = "curl_easy_setopt"; LOAD(easy_setopt, name);
	name = "curl_easy_perform"; LOAD(easy_perform, name);
	name = "curl_easy_getinfo"; LOAD(easy_getinfo, name);
	name = "curl_easy_cleanup"; LOAD(easy_cleanup, name);
	name = "curl_easy_strerror"; LOAD(easy_strerror, name);
	name = "curl_slist_append"; LOAD(slist_append, name);
	name = "curl_slist_free_all"; LOAD(slist_free_all, name);
	name = "curl_getdate"; LOAD(getdate, name);
	name = "curl_url"; LOAD(url, name);
	name = "curl_url_set"; LOAD(url_set, name);
	name = "curl_url_get"; LOAD(url_get, name);
	name = "curl_url_cleanup"; LOAD(url_cleanup, name);
	name = "curl_free"; LOAD(free, name);
	name = "curl_version_info"; LOAD(version_info, name);
	return 0;
missing:
	errf(err, errlen, "load %s: no %s (libcurl older than 7.62?)",
	    LIBCURL_SONAME, name);
	libcurl_close(lc);
	return -1;
}

void
libcurl_close(struct libcurl *lc)
{
	if (lc->handle != NULL)
		dlclose(lc->handle);
	memset(lc, 0, sizeof *lc);
}
