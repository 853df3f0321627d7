/*
 * libssl.c - OpenSSL for the static client library, loaded on first use.
 *
 * jobrun links libmariadb statically (Makefile): the shared libmariadb.so.3
 * needs libssl.so.3 and libcrypto.so.3, and every run paid for mapping and
 * relocating them and for OpenSSL's start-up (reading openssl.cnf) and
 * exit handlers, about half of an empty-queue run (bench/RESULTS.md,
 * section 4), though the database connection uses no TLS unless asked to.
 * In libmariadb.a only the TLS backend (openssl.c.o) calls OpenSSL; it
 * links against the functions below instead, which dlopen(3) libssl.so.3
 * (and with it libcrypto.so.3) the first time one is called, and then call
 * the real ones.  mysql_library_init's OPENSSL_init_ssl is the exception:
 * its options are kept and handed to OpenSSL when it is loaded, so a run
 * without TLS never loads it.  libcurl, loaded at run time for an http
 * type, brings its own reference to the same libssl.so.3.
 *
 * The list is exactly what libmariadb.a's openssl.c.o needs: a client
 * library that needs one more fails to link (undefined reference), it does
 * not fall back on anything.  The functions are hidden, so that libcurl's
 * OpenSSL, when it is loaded, never binds to them.  When libssl.so.3
 * cannot be loaded, the functions fail as OpenSSL's do (NULL, 0), so a TLS
 * connection fails (libmariadb calls that, as any failure to make a TLS
 * context, a lost connection), and the error queue holds one error whose
 * text says why.  make tls-check (test/tls/check) tests all this.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Overridden only by make tls-check, to see a failed load. */
#ifndef LIBSSL_SONAME
#define LIBSSL_SONAME "libssl.so.3"
#endif

/* What ERR_get_error and ERR_peek_error return when libssl.so.3 could not
 * be loaded; ERR_reason_error_string gives its text. */
#define LOAD_FAILED 1UL

#define HIDDEN __attribute__((visibility("hidden")))

/* Every function but the two written out below: F for a value, with what
 * it returns when OpenSSL cannot be loaded; V for a void one. */
#define FUNCTIONS(F, V) \
	F(unsigned long, ERR_get_error, (void), (), LOAD_FAILED) \
	F(unsigned long, ERR_peek_error, (void), (), LOAD_FAILED) \
	F(const char *, ERR_reason_error_string, (unsigned long e), (e), \
	    load_error) \
	V(EVP_PKEY_free, (EVP_PKEY *pkey), (pkey)) \
	F(EVP_PKEY *, EVP_PKEY_new, (void), (), NULL) \
	F(const EVP_MD *, EVP_sha1, (void), (), NULL) \
	F(EVP_PKEY *, PEM_read_PrivateKey, (FILE *fp, EVP_PKEY **x, \
	    pem_password_cb *cb, void *u), (fp, x, cb, u), NULL) \
	F(const char *, SSL_CIPHER_get_name, (const SSL_CIPHER *c), (c), NULL) \
	F(int, SSL_CTX_check_private_key, (const SSL_CTX *ctx), (ctx), 0) \
	V(SSL_CTX_free, (SSL_CTX *ctx), (ctx)) \
	F(X509_STORE *, SSL_CTX_get_cert_store, (const SSL_CTX *ctx), (ctx), \
	    NULL) \
	F(int, SSL_CTX_load_verify_locations, (SSL_CTX *ctx, \
	    const char *file, const char *path), (ctx, file, path), 0) \
	F(SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *meth), (meth), NULL) \
	F(int, SSL_CTX_set_cipher_list, (SSL_CTX *ctx, const char *str), \
	    (ctx, str), 0) \
	F(int, SSL_CTX_set_ciphersuites, (SSL_CTX *ctx, const char *str), \
	    (ctx, str), 0) \
	F(int, SSL_CTX_set_default_verify_paths, (SSL_CTX *ctx), (ctx), 0) \
	F(uint64_t, SSL_CTX_set_options, (SSL_CTX *ctx, uint64_t op), \
	    (ctx, op), 0) \
	V(SSL_CTX_set_verify, (SSL_CTX *ctx, int mode, SSL_verify_cb cb), \
	    (ctx, mode, cb)) \
	F(int, SSL_CTX_use_PrivateKey, (SSL_CTX *ctx, EVP_PKEY *pkey), \
	    (ctx, pkey), 0) \
	F(int, SSL_CTX_use_certificate_chain_file, (SSL_CTX *ctx, \
	    const char *file), (ctx, file), 0) \
	F(int, SSL_clear, (SSL *s), (s), 0) \
	F(int, SSL_connect, (SSL *s), (s), -1) \
	V(SSL_free, (SSL *s), (s)) \
	F(X509 *, SSL_get1_peer_certificate, (const SSL *s), (s), NULL) \
	F(SSL_CTX *, SSL_get_SSL_CTX, (const SSL *s), (s), NULL) \
	F(const SSL_CIPHER *, SSL_get_current_cipher, (const SSL *s), (s), \
	    NULL) \
	F(int, SSL_get_error, (const SSL *s, int ret), (s, ret), SSL_ERROR_SSL) \
	F(void *, SSL_get_ex_data, (const SSL *s, int idx), (s, idx), NULL) \
	F(long, SSL_get_verify_result, (const SSL *s), (s), \
	    X509_V_ERR_UNSPECIFIED) \
	F(SSL *, SSL_new, (SSL_CTX *ctx), (ctx), NULL) \
	F(int, SSL_read, (SSL *s, void *buf, int num), (s, buf, num), -1) \
	F(int, SSL_set_ex_data, (SSL *s, int idx, void *data), \
	    (s, idx, data), 0) \
	F(int, SSL_set_fd, (SSL *s, int fd), (s, fd), 0) \
	V(SSL_set_quiet_shutdown, (SSL *s, int mode), (s, mode)) \
	F(int, SSL_shutdown, (SSL *s), (s), -1) \
	F(int, SSL_version, (const SSL *s), (s), 0) \
	F(int, SSL_write, (SSL *s, const void *buf, int num), (s, buf, num), \
	    -1) \
	F(const SSL_METHOD *, TLS_client_method, (void), (), NULL) \
	F(int, X509_STORE_load_locations, (X509_STORE *st, const char *file, \
	    const char *dir), (st, file, dir), 0) \
	F(int, X509_STORE_set_flags, (X509_STORE *st, unsigned long flags), \
	    (st, flags), 0) \
	F(int, X509_check_host, (X509 *x, const char *chk, size_t len, \
	    unsigned int flags, char **peer), (x, chk, len, flags, peer), 0) \
	F(int, X509_check_ip_asc, (X509 *x, const char *ip, \
	    unsigned int flags), (x, ip, flags), 0) \
	F(int, X509_digest, (const X509 *x, const EVP_MD *md, \
	    unsigned char *out, unsigned int *len), (x, md, out, len), 0) \
	V(X509_free, (X509 *x), (x)) \
	F(const char *, X509_verify_cert_error_string, (long n), (n), \
	    load_error)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int loaded;		/* 1 once every pointer below is set */
static _Atomic uint64_t init_opts;	/* OPENSSL_init_ssl's, until loaded */
static char load_error[256];

static int (*real_OPENSSL_init_ssl)(uint64_t, const OPENSSL_INIT_SETTINGS *);
static const char *(*real_OpenSSL_version)(int);

#define POINTER(ret, name, params, args, failed) \
	static ret (*real_##name) params;
#define VPOINTER(name, params, args) static void (*real_##name) params;
FUNCTIONS(POINTER, VPOINTER)

#define ROW(name) { #name, (void *)&real_##name },
#define FROW(ret, name, params, args, failed) ROW(name)
#define VROW(name, params, args) ROW(name)
static const struct {
	const char *name;
	void *slot;		/* a function pointer's address */
} symbols[] = {
	ROW(OPENSSL_init_ssl)
	ROW(OpenSSL_version)
	FUNCTIONS(FROW, VROW)
};

static void
load(void)
{
	void *handle, *sym;
	size_t i;

	handle = dlopen(LIBSSL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		snprintf(load_error, sizeof load_error, "load %s: %s",
		    LIBSSL_SONAME, dlerror());
		return;
	}
	for (i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		sym = dlsym(handle, symbols[i].name);
		if (sym == NULL) {
			snprintf(load_error, sizeof load_error, "load %s: "
			    "no %s", LIBSSL_SONAME, symbols[i].name);
			return;
		}
		/* POSIX: a function's address fits in a void *. */
		memcpy(symbols[i].slot, &sym, sizeof sym);
	}
	if (real_OPENSSL_init_ssl(atomic_load(&init_opts), NULL) != 1) {
		snprintf(load_error, sizeof load_error, "load %s: "
		    "OPENSSL_init_ssl failed", LIBSSL_SONAME);
		return;
	}
	atomic_store(&loaded, 1);
}

static int
ready(void)
{
	pthread_once(&once, load);
	return atomic_load(&loaded);
}

#define SHIM(ret, name, params, args, failed) \
	HIDDEN ret \
	name params \
	{ \
		if (!ready()) \
			return failed; \
		return real_##name args; \
	}
#define VSHIM(name, params, args) \
	HIDDEN void \
	name params \
	{ \
		if (ready()) \
			real_##name args; \
	}
FUNCTIONS(SHIM, VSHIM)

/* mysql_library_init's call: kept for later, unless OpenSSL is loaded. */
HIDDEN int
OPENSSL_init_ssl(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings)
{
	if (settings == NULL && !atomic_load(&loaded)) {
		atomic_fetch_or(&init_opts, opts);
		return 1;
	}
	if (!ready())
		return 0;
	return real_OPENSSL_init_ssl(opts, settings);
}

/* mysql_library_init keeps the version as the TLS library's name: the
 * headers' until OpenSSL is loaded (the same package's, on Debian). */
HIDDEN const char *
OpenSSL_version(int type)
{
	if (type == OPENSSL_VERSION && !atomic_load(&loaded))
		return OPENSSL_VERSION_TEXT;
	if (!ready())
		return "OpenSSL (not loaded)";
	return real_OpenSSL_version(type);
}
