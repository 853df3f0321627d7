/*
 * client.c - connect the way jobrun's link does (libmariadb.a, OpenSSL
 * through src/libssl.c), with or without TLS, and say what came of it.
 *
 *   tls-client HOST PORT USER plain|tls [CA]
 *
 * Prints key=value lines: before= and after= (is libssl.so.3 loaded
 * before the connection and after it), cipher= (the connection's, or
 * none), server_tls= (the server's Ssl_version for the session), library=
 * (libmariadb's TLS library), or error= when the connection failed (exit
 * 1).  tls verifies the server's certificate against CA and its name.
 * This is the client library's TLS by itself; jobrun's [database] tls
 * keys are checked with jobrun (test/tls/check).
 */
#include <dlfcn.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
loaded(void)
{
	void *h = dlopen("libssl.so.3", RTLD_LAZY | RTLD_NOLOAD);

	if (h == NULL)
		return 0;
	dlclose(h);
	return 1;
}

int
main(int argc, char **argv)
{
	MYSQL *m;
	MYSQL_RES *res;
	MYSQL_ROW row;
	const char *cipher, *lib = NULL;
	my_bool verify = 1;
	int tls;

	if (argc < 5 || (strcmp(argv[4], "plain") != 0 &&
	    strcmp(argv[4], "tls") != 0) || (strcmp(argv[4], "tls") == 0 &&
	    argc < 6)) {
		fprintf(stderr, "usage: tls-client HOST PORT USER plain|tls "
		    "[CA]\n");
		return 64;
	}
	tls = strcmp(argv[4], "tls") == 0;
	printf("before=%d\n", loaded());
	if ((m = mysql_init(NULL)) == NULL)
		return 70;
	if (tls) {
		mysql_optionsv(m, MYSQL_OPT_SSL_CA, argv[5]);
		mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
	}
	if (mysql_real_connect(m, argv[1], argv[3], NULL, NULL,
	    (unsigned int)atoi(argv[2]), NULL, 0) == NULL) {
		printf("after=%d\nerror=%s\n", loaded(), mysql_error(m));
		mysql_close(m);
		mysql_library_end();
		return 1;
	}
	cipher = mysql_get_ssl_cipher(m);
	printf("after=%d\ncipher=%s\n", loaded(), cipher ? cipher : "none");
	if (mysql_query(m, "SHOW SESSION STATUS LIKE 'Ssl_version'") == 0 &&
	    (res = mysql_store_result(m)) != NULL) {
		if ((row = mysql_fetch_row(res)) != NULL)
			printf("server_tls=%s\n", row[1] && *row[1] ? row[1] :
			    "none");
		mysql_free_result(res);
	}
	if (mariadb_get_infov(m, MARIADB_TLS_LIBRARY, &lib) == 0 && lib)
		printf("library=%s\n", lib);
	mysql_close(m);
	mysql_library_end();
	return 0;
}
