/*
 * config_file.c - read jobrun.conf (and a password_file) from disk for
 * config.c's parser, and warn about files others may read or write.
 *
 * The file is read whole into a buffer that is wiped after parsing, since
 * it may hold a password; a file over CFG_MAX_BYTES is refused rather
 * than cut.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "util.h"

#define CFG_MAX_BYTES (1024 * 1024)

/* A warning for the operator, one line; the first CFG_WARNINGS_MAX. */
static void
add_warning(struct cfg *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
add_warning(struct cfg *cfg, const char *fmt, ...)
{
	va_list ap;

	if (cfg->nwarnings >= CFG_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(cfg->warnings[cfg->nwarnings++], sizeof cfg->warnings[0],
	    fmt, ap);
	va_end(ap);
}

/* The first line of the password file, without its newline.  The line,
 * and the stdio buffer that held the file, are wiped; a line longer than
 * the buffer is refused rather than cut (a cut password would fail as a
 * wrong one, far from its cause). */
static int
read_password_file(struct cfg *cfg, char *err, size_t errlen)
{
	struct cfg_db *db = &cfg->db;
	char line[1024], iobuf[BUFSIZ];
	struct stat sb;
	size_t len;
	FILE *f;
	int rc = -1, c;

	f = fopen(db->password_file, "r");
	if (f == NULL)
		return errf(err, errlen, "%s:%d: [database] password_file: "
		    "open %s: %s", cfg->path, db->password_file_line,
		    db->password_file, strerror(errno));
	setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
	if (fgets(line, sizeof line, f) == NULL)
		line[0] = '\0';
	len = strlen(line);
	/* A full buffer is the whole line only if its end (LF, CR LF or
	 * the end of the file) comes next. */
	if (!ferror(f) && len == sizeof line - 1 && line[len - 1] != '\n' &&
	    ((c = getc(f)) == '\r' ? (c = getc(f)) : c) != EOF &&
	    c != '\n') {
		errf(err, errlen, "%s:%d: [database] password_file: %s: the "
		    "password line is longer than %zu bytes", cfg->path,
		    db->password_file_line, db->password_file,
		    sizeof line - 1);
		goto out;
	}
	if (ferror(f)) {
		errf(err, errlen, "%s:%d: [database] password_file: read %s: "
		    "%s", cfg->path, db->password_file_line,
		    db->password_file, strerror(errno));
		goto out;
	}
	line[strcspn(line, "\r\n")] = '\0';
	free(db->password);
	db->password = xstrdup(line);
	/* Whoever can read the file has the password. */
	if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & S_IROTH))
		add_warning(cfg, "password_file %s is readable by others "
		    "(chmod o-r %s)", db->password_file, db->password_file);
	rc = 0;
out:
	fclose(f);
	explicit_bzero(line, sizeof line);
	explicit_bzero(iobuf, sizeof iobuf);
	return rc;
}

/* The whole file, NUL-terminated; *lenp is its length.  The stdio
 * buffer is wiped (the file may hold a password); the caller wipes the
 * text. */
static char *
read_file(const char *path, size_t *lenp, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL, iobuf[BUFSIZ];
	size_t len = 0;

	if (f == NULL) {
		errf(err, errlen, "open %s: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
	text = xmalloc(CFG_MAX_BYTES + 1);
	len = fread(text, 1, CFG_MAX_BYTES + 1, f);
	if (ferror(f)) {
		errf(err, errlen, "read %s: %s", path, strerror(errno));
		goto fail;
	}
	if (len > CFG_MAX_BYTES) {
		errf(err, errlen, "read %s: larger than %d bytes", path,
		    CFG_MAX_BYTES);
		goto fail;
	}
	if (memchr(text, '\0', len) != NULL) {
		errf(err, errlen, "read %s: contains a NUL byte", path);
		goto fail;
	}
	text[len] = '\0';
	fclose(f);
	explicit_bzero(iobuf, sizeof iobuf);
	*lenp = len;
	return text;
fail:
	explicit_bzero(text, len < CFG_MAX_BYTES + 1 ? len :
	    CFG_MAX_BYTES + 1);
	free(text);
	fclose(f);
	explicit_bzero(iobuf, sizeof iobuf);
	return NULL;
}

/* A password in a file everyone can read is everyone's password, and
 * whoever can write the file chooses the commands jobrun runs. */
static void
warn_if_exposed(struct cfg *cfg)
{
	struct stat sb;

	if (stat(cfg->path, &sb) != 0)
		return;
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		add_warning(cfg, "%s is writable by %s, who can choose the "
		    "commands jobrun runs (chmod go-w %s)", cfg->path,
		    (sb.st_mode & S_IWOTH) ? "others" : "its group",
		    cfg->path);
	if (cfg->db.password != NULL && cfg->db.password_file == NULL &&
	    (sb.st_mode & S_IROTH))
		add_warning(cfg, "%s holds a password and is readable by "
		    "others (chmod o-r %s, or use password_file or "
		    "JOBRUN_DB_PASSWORD)", cfg->path, cfg->path);
}

int
cfg_load(struct cfg *cfg, const char *path, char *err, size_t errlen)
{
	size_t len = 0;
	char *text = read_file(path, &len, err, errlen);
	const char *env;
	int rc;

	memset(cfg, 0, sizeof *cfg);
	if (text == NULL)
		return -1;
	rc = cfg_parse(cfg, path, text, err, errlen);
	/* The text may hold a password. */
	explicit_bzero(text, len);
	free(text);
	if (rc != 0)
		return -1;
	if (cfg->db.password_file != NULL &&
	    read_password_file(cfg, err, errlen) != 0) {
		cfg_free(cfg);
		return -1;
	}
	warn_if_exposed(cfg);
	/* The environment wins: it is how a service manager hands over a
	 * secret without a file. */
	env = getenv("JOBRUN_DB_PASSWORD");
	if (env != NULL) {
		free(cfg->db.password);
		cfg->db.password = xstrdup(env);
	}
	/* libmariadb would read MYSQL_PWD by itself when we give it no
	 * password; taken here, it is ours to redact and to keep from the
	 * handlers' environment, like JOBRUN_DB_PASSWORD. */
	env = getenv("MYSQL_PWD");
	if (env != NULL && cfg->db.password == NULL)
		cfg->db.password = xstrdup(env);
	return 0;
}
