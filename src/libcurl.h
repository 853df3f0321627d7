/*
 * libcurl.h - libcurl, loaded at run time by the types that use it.
 *
 * libcurl and what it links (TLS, Kerberos, LDAP, SSH, ...) are two dozen
 * shared objects that cost a cron-started runner about 10 ms at every
 * start, although most configurations have no http type.  jobrun is not
 * linked against it; an http type opens it with dlopen(3) and calls it
 * through this table.
 */
#ifndef JOBRUN_LIBCURL_H
#define JOBRUN_LIBCURL_H

#include <curl/curl.h>
#include <stddef.h>
#include <time.h>

struct libcurl {
	void *handle;
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list,
	                                   const char *string);
	void (*slist_free_all)(struct curl_slist *list);
	time_t (*getdate)(const char *date, const time_t *unused);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *url, CURLUPart part, const char *content,
	                     unsigned int flags);
	CURLUcode (*url_get)(const CURLU *url, CURLUPart part, char **content,
	                     unsigned int flags);
	void (*url_cleanup)(CURLU *url);
	void (*free)(void *p);
	curl_version_info_data *(*version_info)(CURLversion age);
};

/* Open libcurl and fill lc; -1 with err when it cannot be loaded. */
int libcurl_open(struct libcurl *lc, char *err, size_t errlen);

/* Close it again (libcurl stays loaded while another user holds it). */
void libcurl_close(struct libcurl *lc);

#endif
