/*
 * config.c - parse jobrun.conf with inih and check every value.
 *
 * A runner started by cron has nobody watching it, so a typo must stop it
 * at once with the file, line and key, rather than run with a default the
 * operator did not mean: unknown sections and keys are errors, a key given
 * twice is an error, numbers are checked against their ranges.
 *
 * inih is driven through ini_parse_stream with a reader of our own so that
 * we know the line of every key (Debian's inih does not pass it), and so
 * that a line longer than inih's buffer is an error instead of being split
 * silently into two.  Keys of [type.NAME] sections are collected first and
 * applied once the section's handler kind is known, since "command" may
 * come before "handler".
 */
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config.h"
#include "util.h"

#define CFG_MAX_BYTES (1024 * 1024)

/* A key of a [type.NAME] section, kept until the handler kind is known. */
struct entry {
	char *key, *value;
	int line;
	int continued;		/* an indented line, continuing the key */
};

struct pending_type {
	char *name;
	int line;		/* of the first key, for section-wide errors */
	int keyed;
	int handler_line;
	const struct handler_kind *kind;
	struct entry *entries;
	size_t nentries;
};

/* State shared by the reader and the handler during one parse. */
struct parser {
	struct cfg *cfg;
	const char *text, *pos;
	int line;
	int indented;		/* the line read last starts with a blank */
	int keyed;		/* a key was read since the last header */
	int line_db[32], line_run[32];	/* where each key was given, or 0 */
	struct pending_type *types;
	size_t ntypes;
	char *err;
	size_t errlen;
	int failed;
	int fail_line;
	char section[128];	/* ours: inih cuts section names at 49 */
};

static const char *const db_keys[] = {
	"host", "port", "socket", "user", "password", "password_file",
	"database", "table", "connect_timeout", "time_zone", "read_timeout",
	"write_timeout", NULL,
};

static const char *const run_keys[] = {
	"max_seconds", "batch_size", "lock_seconds", "recover_limit",
	"backoff_base", "backoff_cap", "single", "max_snoozes", "log",
	"metrics_file", NULL,
};

_Static_assert(sizeof db_keys / sizeof *db_keys <= 32 &&
    sizeof run_keys / sizeof *run_keys <= 32, "parser.line_db, line_run");

/* Record the first error only: later ones are usually its echo. */
static int
fail(struct parser *p, int line, const char *section, const char *key,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
fail(struct parser *p, int line, const char *section, const char *key,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->failed)
		return 0;
	p->failed = 1;
	p->fail_line = line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line == 0)
		snprintf(p->err, p->errlen, "%s: [%s] %s: %s", p->cfg->path,
		    section, key, msg);
	else if (key != NULL && section != NULL)
		snprintf(p->err, p->errlen, "%s:%d: [%s] %s: %s", p->cfg->path,
		    line, section, key, msg);
	else if (section != NULL)
		snprintf(p->err, p->errlen, "%s:%d: [%s]: %s", p->cfg->path,
		    line, section, msg);
	else if (key != NULL)
		snprintf(p->err, p->errlen, "%s:%d: %s: %s", p->cfg->path,
		    line, key, msg);
	else
		snprintf(p->err, p->errlen, "%s:%d: %s", p->cfg->path, line,
		    msg);
	return 0;
}

static struct pending_type *find_pending(struct parser *p, const char *name);
static int valid_chars(const char *s, const char *extra);

/* Track section headers ourselves: inih truncates their names and does not
 * report a section without keys. */
static void
see_header(struct parser *p, const char *line)
{
	const char *end;
	size_t n;

	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '[' || (end = strchr(line + 1, ']')) == NULL)
		return;
	n = (size_t)(end - line - 1);
	if (n >= sizeof p->section) {
		fail(p, p->line, NULL, NULL, "section name too long");
		return;
	}
	memcpy(p->section, line + 1, n);
	p->section[n] = '\0';
	p->keyed = 0;	/* inih continues no key across a header */
	if (strncmp(p->section, "type.", 5) == 0 &&
	    strlen(p->section + 5) >= 1 && strlen(p->section + 5) <= CFG_TYPE_MAX
	    && valid_chars(p->section + 5, "_.:-"))
		find_pending(p, p->section + 5);
}

/* inih's fgets: one line per call, counting lines as it goes. */
static char *
read_line(char *str, int num, void *stream)
{
	struct parser *p = stream;
	size_t room = (size_t)num - 1, n = 0;

	if (*p->pos == '\0' || p->failed)
		return NULL;
	while (p->pos[n] != '\0' && p->pos[n] != '\n' && n < room)
		n++;
	p->line++;
	if (n == room && p->pos[n] != '\n' && p->pos[n] != '\0') {
		fail(p, p->line, NULL, NULL, "line longer than %zu bytes",
		    room);
		return NULL;
	}
	/* inih strips the newline anyway, so it is consumed, not copied:
	 * a line of exactly `room` bytes then still fits. */
	memcpy(str, p->pos, n);
	str[n] = '\0';
	p->indented = str[0] == ' ' || str[0] == '\t';
	see_header(p, str);
	p->pos += n;
	if (*p->pos == '\n')
		p->pos++;
	return str;
}

static int
key_index(const char *const *keys, const char *key)
{
	int i;

	for (i = 0; keys[i] != NULL; i++)
		if (strcmp(keys[i], key) == 0)
			return i;
	return -1;
}

static int
set_number(struct parser *p, const char *section, const char *key,
    const char *value, unsigned long min, unsigned long max,
    unsigned long *out)
{
	if (parse_ulong(value, min, max, out) != 0)
		return fail(p, p->line, section, key,
		    "not a number in %lu..%lu: \"%s\"", min, max, value);
	return 1;
}

/* Empty means unset, so "socket =" in the example file is harmless. */
static void
set_string(char **field, const char *value)
{
	free(*field);
	*field = value[0] != '\0' ? xstrdup(value) : NULL;
}

static int
valid_chars(const char *s, const char *extra)
{
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(extra, *s) != NULL))
			return 0;
	return 1;
}

static int
set_db(struct parser *p, const char *key, const char *value)
{
	struct cfg_db *db = &p->cfg->db;

	if (strcmp(key, "port") == 0)
		return set_number(p, "database", key, value, 1, 65535,
		    &db->port);
	if (strcmp(key, "connect_timeout") == 0)
		return set_number(p, "database", key, value, 1, 3600,
		    &db->connect_timeout);
	if (strcmp(key, "read_timeout") == 0)
		return set_number(p, "database", key, value, 1, 3600,
		    &db->read_timeout);
	if (strcmp(key, "write_timeout") == 0)
		return set_number(p, "database", key, value, 1, 3600,
		    &db->write_timeout);
	if (strcmp(key, "table") == 0) {
		if (strlen(value) < 1 || strlen(value) > 64 ||
		    !valid_chars(value, "_$"))
			return fail(p, p->line, "database", key,
			    "not a table name (1..64 letters, digits, _ or $)"
			    ": \"%s\"", value);
		set_string(&db->table, value);
		return 1;
	}
	if (strcmp(key, "time_zone") == 0 && (strlen(value) > 64 ||
	    !valid_chars(value, "+-:/_")))
		return fail(p, p->line, "database", key,
		    "not a time zone (e.g. +00:00 or Europe/Berlin): \"%s\"",
		    value);
	if (strcmp(key, "host") == 0)
		set_string(&db->host, value);
	else if (strcmp(key, "socket") == 0)
		set_string(&db->socket, value);
	else if (strcmp(key, "user") == 0)
		set_string(&db->user, value);
	else if (strcmp(key, "password") == 0)
		set_string(&db->password, value);
	else if (strcmp(key, "password_file") == 0) {
		set_string(&db->password_file, value);	/* read by cfg_load */
		db->password_file_line = p->line;
	}
	else if (strcmp(key, "database") == 0)
		set_string(&db->database, value);
	else if (strcmp(key, "time_zone") == 0)
		set_string(&db->time_zone, value);
	return 1;
}

static int
set_run(struct parser *p, const char *key, const char *value)
{
	struct cfg_run *r = &p->cfg->run;

	if (strcmp(key, "max_seconds") == 0)
		return set_number(p, "run", key, value, 1, 86400,
		    &r->max_seconds);
	if (strcmp(key, "batch_size") == 0)
		return set_number(p, "run", key, value, 1, 1000000,
		    &r->batch_size);
	if (strcmp(key, "lock_seconds") == 0)
		return set_number(p, "run", key, value, 3, 86400,
		    &r->lock_seconds);
	if (strcmp(key, "recover_limit") == 0)
		return set_number(p, "run", key, value, 0, 100000,
		    &r->recover_limit);
	if (strcmp(key, "backoff_base") == 0)
		return set_number(p, "run", key, value, 0, 86400,
		    &r->backoff_base);
	if (strcmp(key, "log") == 0) {
		if (strcmp(value, "stderr") != 0 && strcmp(value, "syslog") != 0)
			return fail(p, p->line, "run", key,
			    "stderr or syslog, not \"%s\"", value);
		r->syslog = strcmp(value, "syslog") == 0;
		return 1;
	}
	if (strcmp(key, "metrics_file") == 0) {
		set_string(&r->metrics_file, value);
		return 1;
	}
	if (strcmp(key, "max_snoozes") == 0)
		return set_number(p, "run", key, value, 0, 1000000,
		    &r->max_snoozes);
	if (strcmp(key, "single") == 0) {
		if (cfg_bool(value, &r->single) != 0)
			return fail(p, p->line, "run", key,
			    "yes or no, not \"%s\"", value);
		return 1;
	}
	return set_number(p, "run", key, value, 0, 604800, &r->backoff_cap);
}

/* A key given again at the current line, first at line first: inih
 * hands an indented line under a key to us as that key again. */
static int
fail_twice(struct parser *p, int line, const char *section, const char *key,
    int first, int continued)
{
	if (continued)
		return fail(p, line, section, key, "given twice: the line "
		    "starts with a blank, which continues the key of line %d "
		    "(keys start in column 1, a value fits on one line)",
		    first);
	return fail(p, line, section, key, "given twice: already given at "
	    "line %d", first);
}

/* Whether the key being read comes from a continuation line. */
static int
continuation(const struct parser *p)
{
	return p->indented && p->keyed;
}

/* A known key of [database] or [run], once. */
static int
fixed_section_key(struct parser *p, const char *section,
    const char *const *keys, int *lines, const char *key,
    const char *value)
{
	int i = key_index(keys, key);

	if (i < 0)
		return fail(p, p->line, section, key, "unknown key");
	if (lines[i] != 0)
		return fail_twice(p, p->line, section, key, lines[i],
		    continuation(p));
	lines[i] = p->line;
	return strcmp(section, "database") == 0 ? set_db(p, key, value) :
	    set_run(p, key, value);
}

static struct pending_type *
find_pending(struct parser *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ntypes; i++)
		if (strcmp(p->types[i].name, name) == 0)
			return &p->types[i];
	p->types = xrealloc(p->types, (p->ntypes + 1) * sizeof *p->types);
	p->types[p->ntypes] = (struct pending_type){ .name = xstrdup(name),
	    .line = p->line };
	return &p->types[p->ntypes++];
}

static int
type_key(struct parser *p, const char *section, const char *key,
    const char *value)
{
	const char *name = section + strlen("type.");
	struct pending_type *t;
	struct entry *e;

	if (strlen(name) < 1 || strlen(name) > CFG_TYPE_MAX ||
	    !valid_chars(name, "_.:-"))
		return fail(p, p->line, section, NULL,
		    "not a type name (1..%d letters, digits, _ . : or -)",
		    CFG_TYPE_MAX);
	t = find_pending(p, name);
	if (!t->keyed) {
		t->keyed = 1;
		t->line = p->line;
	}
	if (strcmp(key, "handler") == 0) {
		if (t->kind != NULL)
			return fail_twice(p, p->line, section, key,
			    t->handler_line, continuation(p));
		t->kind = handler_find(value);
		t->handler_line = p->line;
		if (t->kind == NULL)
			return fail(p, p->line, section, key,
			    "unknown handler \"%s\" (known: %s)", value,
			    handler_names());
		return 1;
	}
	t->entries = xrealloc(t->entries, (t->nentries + 1) *
	    sizeof *t->entries);
	e = &t->entries[t->nentries++];
	e->key = xstrdup(key);
	e->value = xstrdup(value);
	e->line = p->line;
	e->continued = continuation(p);
	return 1;
}

static int
on_key(void *user, const char *inih_section, const char *key,
    const char *value)
{
	struct parser *p = user;
	const char *section = p->section;
	int rc;

	(void)inih_section;

	if (p->failed)
		return 0;
	if (strcmp(section, "database") == 0)
		rc = fixed_section_key(p, section, db_keys, p->line_db, key,
		    value);
	else if (strcmp(section, "run") == 0)
		rc = fixed_section_key(p, section, run_keys, p->line_run, key,
		    value);
	else if (strncmp(section, "type.", 5) == 0)
		rc = type_key(p, section, key, value);
	else if (section[0] == '\0')
		return fail(p, p->line, NULL, key,
		    "key outside any section");
	else
		return fail(p, p->line, section, NULL,
		    "unknown section (known: database, run, type.NAME)");
	p->keyed = 1;
	return rc;
}

static int
is_repeatable(const struct handler_kind *kind, const char *key)
{
	const char *const *k;

	for (k = kind->repeatable; k != NULL && *k != NULL; k++)
		if (strcmp(*k, key) == 0)
			return 1;
	return 0;
}

/* Hand a collected [type.NAME] section to its handler kind. */
static int
finish_type(struct parser *p, struct pending_type *t, struct cfg_type *out)
{
	char section[CFG_TYPE_MAX + 8], msg[256];
	size_t i, j;

	snprintf(section, sizeof section, "type.%s", t->name);
	if (t->kind == NULL)
		return fail(p, t->line, section, "handler",
		    "missing (known: %s)", handler_names());
	out->name = xstrdup(t->name);
	out->kind = t->kind;
	out->handler = t->kind->create();
	for (i = 0; i < t->nentries; i++) {
		const struct entry *e = &t->entries[i];

		for (j = 0; j < i; j++)
			if (strcmp(t->entries[j].key, e->key) == 0 &&
			    !is_repeatable(t->kind, e->key))
				return fail_twice(p, e->line, section, e->key,
				    t->entries[j].line, e->continued);
		if (t->kind->set(out->handler, e->key, e->value, msg,
		    sizeof msg) != 0)
			return fail(p, e->line, section, e->key, "%s", msg);
	}
	if (t->kind->ready(out->handler, msg, sizeof msg) != 0)
		return fail(p, t->handler_line, section, NULL, "%s", msg);
	return 1;
}

static void
free_pending(struct parser *p)
{
	size_t i, j;

	for (i = 0; i < p->ntypes; i++) {
		for (j = 0; j < p->types[i].nentries; j++) {
			free(p->types[i].entries[j].key);
			free(p->types[i].entries[j].value);
		}
		free(p->types[i].entries);
		free(p->types[i].name);
	}
	free(p->types);
}

static void
set_defaults(struct cfg *cfg)
{
	cfg->db.port = 3306;
	cfg->db.connect_timeout = 10;
	cfg->db.read_timeout = 60;
	cfg->db.write_timeout = 60;
	cfg->db.table = xstrdup("polling_jobs");
	cfg->run.max_seconds = 45;
	cfg->run.batch_size = 20;
	cfg->run.lock_seconds = 300;
	cfg->run.recover_limit = 100;
	cfg->run.backoff_base = 60;
	cfg->run.backoff_cap = 3600;
	cfg->run.max_snoozes = 100;
}

/* Checks that span keys, once everything is read. */
static int
check_whole(struct parser *p)
{
	struct cfg *cfg = p->cfg;

	if (cfg->run.backoff_cap < cfg->run.backoff_base)
		return fail(p, 0, "run", "backoff_cap",
		    "must be at least backoff_base (%lu)",
		    cfg->run.backoff_base);
	if (cfg->db.database == NULL)
		return fail(p, 0, "database", "database",
		    "missing: name the database that holds the job table");
	return 1;
}

int
cfg_parse(struct cfg *cfg, const char *path, const char *text, char *err,
    size_t errlen)
{
	struct parser p = { .cfg = cfg, .text = text, .pos = text,
	    .err = err, .errlen = errlen };
	size_t i;
	int rc;

	/* Editors on some systems start a UTF-8 file with a byte order
	 * mark; it is not part of the first line. */
	if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
		p.pos = text + 3;
	memset(cfg, 0, sizeof *cfg);
	cfg->path = xstrdup(path);
	set_defaults(cfg);
	rc = ini_parse_stream(read_line, &p, on_key, &p);
	if (rc > 0 && (!p.failed || rc < p.fail_line)) {
		p.failed = 0;
		fail(&p, rc, NULL, NULL,
		    "syntax error (expected [section] or key = value)");
	}
	if (!p.failed) {
		cfg->types = xcalloc(p.ntypes, sizeof *cfg->types);
		for (i = 0; i < p.ntypes && !p.failed; i++) {
			cfg->ntypes++;
			finish_type(&p, &p.types[i], &cfg->types[i]);
		}
	}
	if (!p.failed)
		check_whole(&p);
	free_pending(&p);
	if (p.failed) {
		cfg_free(cfg);
		return -1;
	}
	return 0;
}

/* The first line of the password file, without its newline. */
static int
read_password_file(struct cfg *cfg, char *err, size_t errlen)
{
	struct cfg_db *db = &cfg->db;
	char line[1024];
	FILE *f;
	int rc = -1;

	f = fopen(db->password_file, "r");
	if (f == NULL)
		return errf(err, errlen, "%s:%d: [database] password_file: "
		    "open %s: %s", cfg->path, db->password_file_line,
		    db->password_file, strerror(errno));
	if (fgets(line, sizeof line, f) == NULL)
		line[0] = '\0';
	if (ferror(f)) {
		errf(err, errlen, "%s:%d: [database] password_file: read %s: "
		    "%s", cfg->path, db->password_file_line,
		    db->password_file, strerror(errno));
		goto out;
	}
	line[strcspn(line, "\r\n")] = '\0';
	free(db->password);
	db->password = xstrdup(line);
	rc = 0;
out:
	fclose(f);
	return rc;
}

static char *
read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len;

	if (f == NULL) {
		errf(err, errlen, "open %s: %s", path, strerror(errno));
		return NULL;
	}
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
	return text;
fail:
	free(text);
	fclose(f);
	return NULL;
}

/* A password in a file everyone can read is everyone's password. */
static void
warn_if_exposed(struct cfg *cfg)
{
	struct stat sb;

	if (cfg->db.password == NULL || cfg->db.password_file != NULL)
		return;
	if (stat(cfg->path, &sb) == 0 && (sb.st_mode & S_IROTH))
		snprintf(cfg->warning, sizeof cfg->warning, "%s holds a "
		    "password and is readable by others (chmod o-r %s, or use "
		    "password_file or JOBRUN_DB_PASSWORD)", cfg->path,
		    cfg->path);
}

int
cfg_load(struct cfg *cfg, const char *path, char *err, size_t errlen)
{
	char *text = read_file(path, err, errlen);
	const char *env;

	memset(cfg, 0, sizeof *cfg);
	if (text == NULL)
		return -1;
	if (cfg_parse(cfg, path, text, err, errlen) != 0) {
		free(text);
		return -1;
	}
	free(text);
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
	return 0;
}

void
cfg_free(struct cfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ntypes; i++) {
		if (cfg->types[i].kind != NULL)
			cfg->types[i].kind->destroy(cfg->types[i].handler);
		free(cfg->types[i].name);
	}
	free(cfg->types);
	free(cfg->db.host);
	free(cfg->db.socket);
	free(cfg->db.user);
	if (cfg->db.password != NULL)
		explicit_bzero(cfg->db.password, strlen(cfg->db.password));
	free(cfg->db.password);
	free(cfg->db.password_file);
	free(cfg->db.database);
	free(cfg->db.table);
	free(cfg->db.time_zone);
	free(cfg->run.metrics_file);
	free(cfg->path);
	memset(cfg, 0, sizeof *cfg);
}

int
cfg_bool(const char *value, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	int i;

	for (i = 0; yes[i] != NULL; i++)
		if (strcasecmp(value, yes[i]) == 0)
			return *out = 1, 0;
	for (i = 0; no[i] != NULL; i++)
		if (strcasecmp(value, no[i]) == 0)
			return *out = 0, 0;
	return -1;
}

const struct cfg_type *
cfg_find_type(const struct cfg *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->ntypes; i++)
		if (strcmp(cfg->types[i].name, name) == 0)
			return &cfg->types[i];
	return NULL;
}
