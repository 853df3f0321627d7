/*
 * tls-lean.c - linked into the benchmark's jobrun-lean build: before
 * main, tell OpenSSL not to read openssl.cnf and not to clean up at exit.
 * libmariadb starts OpenSSL in mysql_library_init (ma_tls_start:
 * OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG)) whether or not the
 * connection uses TLS; OpenSSL's init steps run once, so this first call
 * decides them.  jobrun configures no TLS for its database connection, so
 * nothing it does depends on either.  The suggested change makes the same
 * call in src/ (when no http type is configured, since libcurl's https
 * does honour openssl.cnf); this file only measures it.
 */
#include <openssl/crypto.h>

__attribute__((constructor)) static void
tls_lean(void)
{
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
	    OPENSSL_INIT_NO_ATEXIT, NULL);
}
