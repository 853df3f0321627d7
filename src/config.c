/*
 * config.c - parse jobrun.conf with inih and check every value.
 *
 * A runner started by cron has nobody watching it, so a typo must stop it
 * at once with the file, line and key, rather than run with a default the
 * operator did not mean: unknown sections and keys are errors, a key given
 * twice is an error, numbers are checked against their ranges.
 *
 * Every key is a row (struct cfg_key), as redis's static_configs[]:
 * section, key, kind, range, default and the offset of its field in the
 * struct it fills: struct cfg for [database] and [run] (keys[]), cfg_type
 * for [type.NAME] (type_keys[]), cfg_schedule for [schedule.NAME]
 * (sched_keys[]), a handler kind's state for its keys (rows in its file).
 * Finding a key, setting it, its default, "given twice", its messages and
 * freeing it all go through the row, so a key is written once and an
 * unknown one cannot land anywhere.
 *
 * inih is driven through ini_parse_stream with a reader of our own so that
 * we know the line of every key (Debian's inih does not pass it), and so
 * that a line longer than inih's buffer is an error instead of being split
 * silently into two.  Keys of [type.NAME] sections are collected first and
 * applied once the section's handler kind is known, since "command" may
 * come before "handler".
 *
 * What a name may be, and the words that help fix a typo (the known
 * names, the closest one), are config_name.c's.
 */
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "config.h"
#include "util.h"

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
	struct cfg_type type;	/* its kind, once handler is read */
	struct entry *entries;
	size_t nentries;
};


#define FIELD(f, t) CFG_FIELD(struct cfg, f, t)
#define NUMBER(s, k, f, lo, hi, d) { .section = s, .key = k, \
	.kind = CFG_NUMBER, .offset = FIELD(f, unsigned long), .min = lo, \
	.max = hi, .def = d }
#define STRING(s, k, f, d, chk) { .section = s, .key = k, \
	.kind = CFG_STRING, .offset = FIELD(f, char *), .def = d, .check = chk }
/* A string that an empty value leaves unset. */
#define UNSETTABLE(s, k, f, chk) { .section = s, .key = k, \
	.kind = CFG_STRING, .offset = FIELD(f, char *), .check = chk, \
	.empty_unset = 1 }
#define SECRET(s, k, f) { .section = s, .key = k, .kind = CFG_STRING, \
	.offset = FIELD(f, char *), .secret = 1, .empty_unset = 1 }
#define BOOL(s, k, f, d) { .section = s, .key = k, .kind = CFG_BOOL, \
	.offset = FIELD(f, int), .def = d }
#define ENUM(s, k, f, n, d) { .section = s, .key = k, .kind = CFG_ENUM, \
	.offset = FIELD(f, int), .names = n, .def = d }

static const char *const log_names[] = { "stderr", "syslog", NULL };
/* enum cfg_tls, in its order. */
static const char *const tls_names[] = { "off", "on", "verify", NULL };

/* Every key of [database] and [run], in the order of etc/jobrun.conf. */
static const struct cfg_key keys[] = {
	UNSETTABLE("database", "host", db.host, NULL),
	NUMBER("database", "port", db.port, 1, 65535, "3306"),
	UNSETTABLE("database", "socket", db.socket, NULL),
	UNSETTABLE("database", "user", db.user, NULL),
	SECRET("database", "password", db.password),
	UNSETTABLE("database", "password_file", db.password_file, NULL),
	UNSETTABLE("database", "database", db.database, NULL),
	STRING("database", "table", db.table, "polling_jobs",
	    cfg_check_table),
	NUMBER("database", "connect_timeout", db.connect_timeout, 1, 3600,
	    "10"),
	NUMBER("database", "read_timeout", db.read_timeout, 1, 3600, "60"),
	NUMBER("database", "write_timeout", db.write_timeout, 1, 3600, "60"),
	UNSETTABLE("database", "time_zone", db.time_zone,
	    cfg_check_time_zone),
	ENUM("database", "tls", db.tls, tls_names, "off"),
	STRING("database", "tls_ca_file", db.tls_ca_file, NULL, NULL),
	STRING("database", "tls_cert_file", db.tls_cert_file, NULL, NULL),
	STRING("database", "tls_key_file", db.tls_key_file, NULL, NULL),

	NUMBER("run", "max_seconds", run.max_seconds, 1, 86400, "45"),
	NUMBER("run", "batch_size", run.batch_size, 1, CFG_BATCH_MAX, "20"),
	NUMBER("run", "jobs", run.jobs, 1, CFG_JOBS_MAX, "1"),
	NUMBER("run", "lock_seconds", run.lock_seconds, 3, 86400, "300"),
	NUMBER("run", "recover_limit", run.recover_limit, 0, 100000, "100"),
	NUMBER("run", "backoff_base", run.backoff_base, 0, 86400, "60"),
	NUMBER("run", "backoff_cap", run.backoff_cap, 0, 604800, "3600"),
	{ .section = "run", .key = "backoff_jitter", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_run_jitter, .def = "0.1" },
	NUMBER("run", "max_snoozes", run.max_snoozes, 0, 1000000, "100"),
	{ .section = "run", .key = "keep_success", .kind = CFG_DURATION,
	  .offset = CFG_FIELD(struct cfg, run.keep[CFG_KEEP_SUCCESS],
	  unsigned long), .def = "0" },
	{ .section = "run", .key = "keep_failed", .kind = CFG_DURATION,
	  .offset = CFG_FIELD(struct cfg, run.keep[CFG_KEEP_FAILED],
	  unsigned long), .def = "0" },
	{ .section = "run", .key = "keep_every", .kind = CFG_DURATION,
	  .offset = CFG_FIELD(struct cfg, run.keep_every, unsigned long),
	  .def = "10" },
	STRING("run", "archive_table", run.archive_table, NULL,
	    cfg_check_table),
	BOOL("run", "single", run.single, "no"),
	BOOL("run", "wait", run.wait, "no"),
	ENUM("run", "log", run.syslog, log_names, "stderr"),
	UNSETTABLE("run", "metrics_file", run.metrics_file, NULL),
};

#define NKEYS (sizeof keys / sizeof keys[0])


/* The keys of [type.NAME] besides its kind's: the flow control keys that
 * every kind takes (src/flow.c applies them), and handler, read as soon
 * as it is given so that the kind's keys may come before it.  The flow
 * messages leave out the value, as they always have. */
static const struct cfg_key type_keys[] = {
	{ .section = "type.NAME", .key = "concurrency", .kind = CFG_NUMBER,
	  .offset = CFG_FIELD(struct cfg_type, flow.concurrency,
	  unsigned long), .min = 1, .max = FLOW_MAX, .unit = "jobs",
	  .bare = 1 },
	{ .section = "type.NAME", .key = "rate", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_type_rate },
	{ .section = "type.NAME", .key = "burst", .kind = CFG_NUMBER,
	  .offset = CFG_FIELD(struct cfg_type, flow.burst, unsigned long),
	  .min = 1, .max = FLOW_MAX, .unit = "starts", .bare = 1 },
	{ .section = "type.NAME", .key = "backoff_jitter", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_type_jitter },
	{ .section = "type.NAME", .key = "deadline", .kind = CFG_DURATION,
	  .offset = CFG_FIELD(struct cfg_type, deadline, unsigned long) },
	{ .section = "type.NAME", .key = "keep_success", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_keep_success },
	{ .section = "type.NAME", .key = "keep_failed", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_keep_failed },
	{ .section = "type.NAME", .key = "priority", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_priority },
	{ .section = "type.NAME", .key = "concurrency_key", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_concurrency_key },
	{ .section = "type.NAME", .key = "key_concurrency", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_key_concurrency },
	{ .section = "type.NAME", .key = "order", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_order },
	{ .section = "type.NAME", .key = "handler", .kind = CFG_HANDLER,
	  .offset = CFG_FIELD(struct cfg_type, kind,
	  const struct handler_kind *) },
};

#define NTYPE_KEYS (sizeof type_keys / sizeof type_keys[0])

#define SCHED(k, f, chk) { .section = "schedule.NAME", .key = k, \
	.kind = CFG_STRING, .offset = CFG_FIELD(struct cfg_schedule, f, \
	char *), .check = chk }

/* The keys of [schedule.NAME], in the order of the example file. */
static const struct cfg_key sched_keys[] = {
	SCHED("type", type, cfg_check_type_name),
	{ .section = "schedule.NAME", .key = "cron", .kind = CFG_CUSTOM,
	  .parse = cfg_parse_cron },
	SCHED("payload", payload, NULL),	/* the server judges it */
	SCHED("time_zone", time_zone, cfg_check_time_zone),
	{ .section = "schedule.NAME", .key = "catch_up", .kind = CFG_DURATION,
	  .offset = CFG_FIELD(struct cfg_schedule, catch_up,
	  unsigned long) },
};

#define SCHED_NKEYS (sizeof sched_keys / sizeof sched_keys[0])

/* State shared by the reader and the handler during one parse. */
struct parser {
	struct cfg *cfg;
	const char *text, *pos;
	int line;
	int indented;		/* the line read last starts with a blank */
	int keyed;		/* a key was read since the last header */
	int given[NKEYS];	/* the line each key was given at, or 0 */
	struct pending_type *types;
	size_t ntypes;
	int (*sched_given)[SCHED_NKEYS];	/* per schedule, per key */
	char *err;
	size_t errlen;
	int failed;
	int fail_line;
	char section[128];	/* ours: inih cuts section names at 49 */
};

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
static int schedule_key(struct parser *p, const char *section,
    const char *key, const char *value);

/* Track section headers ourselves: inih truncates their names and does not
 * report a section without keys. */
static void
see_header(struct parser *p, const char *line)
{
	const char *end;
	size_t n;

	/* An indented line after a key is inih's continuation of that key,
	 * whatever it holds: "given twice" then says so, where switching
	 * section here would file the key under the next one. */
	if (p->indented && p->keyed)
		return;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '[' || (end = strchr(line + 1, ']')) == NULL)
		return;
	n = (size_t)(end - line - 1);
	if (n >= sizeof p->section) {
		fail(p, p->line, NULL, NULL, "section name too long");
		return;
	}
	/* inih ignores what follows the "]": "[type.a] handler = noop"
	 * would lose its key. */
	if (!cfg_header_tail_ok(end + 1)) {
		fail(p, p->line, NULL, NULL, "text after the section header "
		    "[%.*s]: a header stands alone on its line, and a comment "
		    "after it starts with \" ;\"", (int)n, line + 1);
		return;
	}
	memcpy(p->section, line + 1, n);
	p->section[n] = '\0';
	p->keyed = 0;	/* inih continues no key across a header */
	if (strncmp(p->section, "type.", 5) == 0 &&
	    strlen(p->section + 5) >= 1 && strlen(p->section + 5) <= CFG_TYPE_MAX
	    && cfg_valid_chars(p->section + 5, "_.:-"))
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

const struct cfg_key *
cfg_keys(size_t *n)
{
	*n = NKEYS;
	return keys;
}

const struct cfg_key *
cfg_type_keys(size_t *n)
{
	*n = NTYPE_KEYS;
	return type_keys;
}

const struct cfg_key *
cfg_schedule_keys(size_t *n)
{
	*n = SCHED_NKEYS;
	return sched_keys;
}

/* The row of key among the n rows at rows, or NULL. */
static const struct cfg_key *
find_row(const struct cfg_key *rows, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(rows[i].key, key) == 0)
			return &rows[i];
	return NULL;
}

/* The row of [section] key, or NULL. */
static const struct cfg_key *
find_key(const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].section, section) == 0 &&
		    (key == NULL || strcmp(keys[i].key, key) == 0))
			return &keys[i];
	return NULL;
}

/* Read value into the field of row k in the struct at base: 0, or -1
 * with msg saying what is wrong. */
static int
key_set(const struct cfg_key *k, void *base, const char *value, char *msg,
    size_t msglen)
{
	void *field = (char *)base + k->offset;
	unsigned long *number = field;
	int *flag = field, i;
	char **string = field, names[256];
	const struct handler_kind **kind = field;

	/* A password may hold " #"; jobrun.conf(5) says how others may. */
	if (!k->secret && cfg_comment_in(value) != NULL)
		return errf(msg, msglen, "the value holds \" #\", which is not "
		    "a comment here: a comment after a value starts with \" ;\"");
	switch (k->kind) {
	case CFG_NUMBER:
		if (parse_ulong(value, k->min, k->max, number) == 0)
			return 0;
		return errf(msg, msglen, "not a number%s%s in %lu..%lu%s%s%s",
		    k->unit != NULL ? " of " : "", k->unit != NULL ? k->unit :
		    "", k->min, k->max, k->bare ? "" : ": \"", k->bare ? "" :
		    value, k->bare ? "" : "\"");
	case CFG_BOOL:
		if (parse_bool(value, flag) == 0)
			return 0;
		return errf(msg, msglen, "yes or no, not \"%s\"", value);
	case CFG_ENUM:
		for (i = 0; k->names[i] != NULL; i++)
			if (strcmp(k->names[i], value) == 0) {
				*flag = i;
				return 0;
			}
		cfg_enum_names(k, names, sizeof names);
		return errf(msg, msglen, "%s, not \"%s\"", names, value);
	case CFG_STRING:
		/* Empty means unset only where jobrun.conf(5) says so. */
		if (k->check != NULL && k->check(value, msg, msglen) != 0)
			return -1;
		if (value[0] == '\0' && !k->empty_unset)
			return errf(msg, msglen, "an empty value (give one, or "
			    "leave the key out)");
		free(*string);
		*string = value[0] != '\0' ? xstrdup(value) : NULL;
		return 0;
	case CFG_DURATION:
		if (cli_duration(value, number) == 0)
			return 0;
		return errf(msg, msglen, "not a duration such as 3600, 90m, "
		    "12h, 30d or 2w (at most 10 years): \"%s\"", value);
	case CFG_HANDLER:
		if ((*kind = handler_find(value)) != NULL)
			return 0;
		return errf(msg, msglen, "unknown handler \"%s\" (known: %s)",
		    value, handler_names(names, sizeof names));
	case CFG_CUSTOM:
		return k->parse(base, value, msg, msglen);
	}
	return errf(msg, msglen, "no kind");
}

/* Every default of the n rows at rows into base, through the same checks
 * as a value in the file: 1, or 0 after fail() (in section, or the
 * row's when NULL). */
static int
set_defaults(struct parser *p, const struct cfg_key *rows, size_t n,
    void *base, const char *section)
{
	char msg[512];
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].def != NULL && key_set(&rows[i], base,
		    rows[i].def, msg, sizeof msg) != 0)
			return fail(p, 0, section != NULL ? section :
			    rows[i].section, rows[i].key, "default: %s", msg);
	return 1;
}

/* Free the strings the n rows at rows put into base. */
static void
free_strings(const struct cfg_key *rows, size_t n, void *base)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char **field = (void *)((char *)base + rows[i].offset);

		if (rows[i].kind != CFG_STRING || *field == NULL)
			continue;
		if (rows[i].secret)
			explicit_bzero(*field, strlen(*field));
		free(*field);
		*field = NULL;
	}
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

/* A key of [database] or [run]: a row of the table, given once. */
static int
fixed_section_key(struct parser *p, const char *section, const char *key,
    const char *value)
{
	const struct cfg_key *k = find_key(section, key);
	struct cfg_near near;
	char msg[512];
	int *given;

	if (k == NULL) {
		cfg_near_init(&near, key);
		for (k = find_key(section, NULL); k < keys + NKEYS &&
		    strcmp(k->section, section) == 0; k++)
			cfg_near_offer(&near, k->key);
		return fail(p, p->line, section, key, "unknown key%s",
		    cfg_near_hint(&near, "", "", msg, sizeof msg));
	}
	given = &p->given[k - keys];
	if (*given != 0)
		return fail_twice(p, p->line, section, key, *given,
		    continuation(p));
	*given = p->line;
	if (key_set(k, p->cfg, value, msg, sizeof msg) != 0)
		return fail(p, p->line, section, key, "%s", msg);
	return 1;
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
	const struct cfg_key *k = find_row(type_keys, NTYPE_KEYS, key);
	struct pending_type *t;
	struct entry *e;
	char msg[512];

	if (strlen(name) < 1 || strlen(name) > CFG_TYPE_MAX ||
	    !cfg_valid_chars(name, "_.:-"))
		return fail(p, p->line, section, NULL,
		    "not a type name (1..%d letters, digits, _ . : or -)",
		    CFG_TYPE_MAX);
	t = find_pending(p, name);
	if (!t->keyed) {
		t->keyed = 1;
		t->line = p->line;
	}
	if (k != NULL && k->kind == CFG_HANDLER) {
		if (t->handler_line != 0)
			return fail_twice(p, p->line, section, key,
			    t->handler_line, continuation(p));
		t->handler_line = p->line;
		if (key_set(k, &t->type, value, msg, sizeof msg) != 0)
			return fail(p, p->line, section, key, "%s", msg);
		return 1;
	}
	/* A continuation gives the key above again: say so at this line,
	 * before a later key (handler) is found given twice, and whether or
	 * not the key may repeat (a header would take the line as another). */
	if (continuation(p))
		for (e = t->entries + t->nentries; e > t->entries; e--)
			if (strcmp(e[-1].key, key) == 0)
				return fail_twice(p, p->line, section, key,
				    e[-1].line, 1);
	t->entries = xrealloc(t->entries, (t->nentries + 1) *
	    sizeof *t->entries);
	e = &t->entries[t->nentries++];
	e->key = xstrdup(key);
	e->value = xstrdup(value);
	e->line = p->line;
	e->continued = continuation(p);
	return 1;
}

static struct cfg_schedule *
find_schedule(struct parser *p, const char *name)
{
	struct cfg *cfg = p->cfg;
	size_t i;

	for (i = 0; i < cfg->nschedules; i++)
		if (strcmp(cfg->schedules[i].name, name) == 0)
			return &cfg->schedules[i];
	cfg->schedules = xrealloc(cfg->schedules, (cfg->nschedules + 1) *
	    sizeof *cfg->schedules);
	p->sched_given = xrealloc(p->sched_given, (cfg->nschedules + 1) *
	    sizeof *p->sched_given);
	memset(p->sched_given[cfg->nschedules], 0, sizeof *p->sched_given);
	cfg->schedules[cfg->nschedules] = (struct cfg_schedule){
	    .name = xstrdup(name), .line = p->line };
	set_defaults(p, sched_keys, SCHED_NKEYS,
	    &cfg->schedules[cfg->nschedules], p->section);
	return &cfg->schedules[cfg->nschedules++];
}

/* Whether name is another schedule's under the job table's collation
 * (fail()ed if so).  Both go into the business keys "NAME@..." of one
 * table, whose collation (utf8mb4_general_ci, any _ci one) ignores case:
 * [schedule.Rep] and [schedule.rep] would enqueue the same slot keys, and
 * one of them would never run.  A name is ASCII letters, digits and
 * _ . : - (no blanks, no accents), so ignoring case is what the
 * collations ignore. */
static int
same_schedule(struct parser *p, const char *section, const char *name)
{
	const struct cfg *cfg = p->cfg;
	size_t i;

	for (i = 0; i < cfg->nschedules; i++)
		if (strcmp(cfg->schedules[i].name, name) != 0 &&
		    strcasecmp(cfg->schedules[i].name, name) == 0) {
			fail(p, p->line, section, NULL, "the same name as "
			    "[schedule.%s] (line %d) for the job table, whose "
			    "collation ignores case: both would enqueue the "
			    "slot keys %s@...", cfg->schedules[i].name,
			    cfg->schedules[i].line, name);
			return -1;
		}
	return 0;
}

static int
schedule_key(struct parser *p, const char *section, const char *key,
    const char *value)
{
	const char *name = section + strlen("schedule.");
	const struct cfg_key *k = find_row(sched_keys, SCHED_NKEYS, key);
	struct cfg_schedule *s;
	struct cfg_near near;
	char msg[512], hint[160];
	int *given;

	/* The name goes into business keys "NAME@YYYY-MM-DDTHH:MM". */
	if (strlen(name) < 1 || strlen(name) > CFG_TYPE_MAX ||
	    !cfg_valid_chars(name, "_.:-"))
		return fail(p, p->line, section, NULL,
		    "not a schedule name (1..%d letters, digits, _ . : or -)",
		    CFG_TYPE_MAX);
	if (k == NULL) {
		cfg_key_names(sched_keys, SCHED_NKEYS, msg, sizeof msg);
		cfg_near_init(&near, key);
		cfg_near_rows(&near, sched_keys, SCHED_NKEYS);
		return fail(p, p->line, section, key, "unknown key (known: "
		    "%s)%s", msg, cfg_near_hint(&near, "", "", hint,
		    sizeof hint));
	}
	if (same_schedule(p, section, name) != 0)
		return 0;
	s = find_schedule(p, name);
	given = &p->sched_given[s - p->cfg->schedules][k - sched_keys];
	if (*given != 0)
		return fail_twice(p, p->line, section, key, *given,
		    continuation(p));
	*given = p->line;
	if (key_set(k, s, value, msg, sizeof msg) != 0)
		return fail(p, p->line, section, key, "%s", msg);
	return 1;
}

/* A schedule needs a type and a cron expression. */
static int
finish_schedule(struct parser *p, const struct cfg_schedule *s)
{
	char section[CFG_TYPE_MAX + 16];

	snprintf(section, sizeof section, "schedule.%s", s->name);
	if (s->type == NULL)
		return fail(p, s->line, section, "type", "missing: the type "
		    "of the jobs it enqueues");
	if (s->cron_text == NULL)
		return fail(p, s->line, section, "cron", "missing: when it "
		    "runs, e.g. \"0 3 * * *\" or @daily");
	return 1;
}

/* The sections the table has rows for, then type.NAME. */
static int
unknown_section(struct parser *p, const char *section)
{
	char known[256] = "", hint[160];
	struct cfg_near near;
	size_t i, n = 0;

	cfg_near_init(&near, section);
	for (i = 0; i < NKEYS && n < sizeof known; i++)
		if (find_key(keys[i].section, NULL) == &keys[i]) {
			n += (size_t)snprintf(known + n, sizeof known - n,
			    "%s, ", keys[i].section);
			cfg_near_section(&near, keys[i].section);
		}
	cfg_near_section(&near, type_keys[0].section);
	cfg_near_section(&near, sched_keys[0].section);
	return fail(p, p->line, section, NULL, "unknown section (known: "
	    "%s%s, %s)%s", known, type_keys[0].section, sched_keys[0].section,
	    cfg_near_hint(&near, "[", "]", hint, sizeof hint));
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
	if (find_key(section, NULL) != NULL)
		rc = fixed_section_key(p, section, key, value);
	else if (strncmp(section, "type.", 5) == 0)
		rc = type_key(p, section, key, value);
	else if (strncmp(section, "schedule.", 9) == 0)
		rc = schedule_key(p, section, key, value);
	else if (section[0] == '\0')
		return fail(p, p->line, NULL, key,
		    "key outside any section");
	else
		return unknown_section(p, section);
	p->keyed = 1;
	return rc;
}

/* The row of a [type.NAME] key, flow or the kind's, and the struct it
 * fills; NULL after fail() for a key neither has. */
static const struct cfg_key *
type_row(struct parser *p, const char *section, struct cfg_type *t,
    const struct entry *e, void **base)
{
	const struct handler_kind *kind = t->kind;
	const struct cfg_key *k;
	struct cfg_near near;
	char hint[160];

	*base = t;
	if ((k = find_row(type_keys, NTYPE_KEYS, e->key)) != NULL)
		return k;
	*base = t->handler;
	if ((k = find_row(kind->keys, kind->nkeys, e->key)) != NULL)
		return k;
	cfg_near_init(&near, e->key);
	cfg_near_rows(&near, type_keys, NTYPE_KEYS);
	cfg_near_rows(&near, kind->keys, kind->nkeys);
	/* noop, which has no key of its own, names the one it was given. */
	fail(p, e->line, section, e->key, "unknown key for handler %s%s%s%s",
	    kind->name, kind->nkeys == 0 ? ": " : "", kind->nkeys == 0 ?
	    e->key : "", cfg_near_hint(&near, "", "", hint, sizeof hint));
	return NULL;
}

/* A [type.NAME] section without handler: a key close to it was meant
 * as it ("hander = exec"), else it is missing. */
static int
no_handler(struct parser *p, const struct pending_type *t,
    const char *section)
{
	char names[128], hint[160];
	struct cfg_near near;
	size_t i;

	for (i = 0; i < t->nentries; i++) {
		cfg_near_init(&near, t->entries[i].key);
		cfg_near_offer(&near, "handler");
		if (near.score != 0)
			return fail(p, t->entries[i].line, section,
			    t->entries[i].key, "unknown key%s", cfg_near_hint(
			    &near, "", "", hint, sizeof hint));
	}
	return fail(p, t->line, section, "handler", "missing (known: %s)",
	    handler_names(names, sizeof names));
}

/* The line a [type.NAME] section gave key on (0: not given). */
static int
entry_line(const struct pending_type *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->nentries; i++)
		if (strcmp(t->entries[i].key, key) == 0)
			return t->entries[i].line;
	return 0;
}

/* Hand a collected [type.NAME] section to its handler kind. */
static int
finish_type(struct parser *p, struct pending_type *t, struct cfg_type *out)
{
	char section[CFG_TYPE_MAX + 8], msg[512];
	const struct cfg_key *k;
	int burst_line = 0;
	const char *bad;
	size_t i, j;
	void *base;

	snprintf(section, sizeof section, "type.%s", t->name);
	if (t->type.kind == NULL)
		return no_handler(p, t, section);
	out->name = xstrdup(t->name);
	out->kind = t->type.kind;
	out->handler = out->kind->create();
	if (!set_defaults(p, type_keys, NTYPE_KEYS, out, section) ||
	    !set_defaults(p, out->kind->keys, out->kind->nkeys, out->handler,
	    section))
		return 0;
	for (i = 0; i < t->nentries; i++) {
		const struct entry *e = &t->entries[i];

		if ((k = type_row(p, section, out, e, &base)) == NULL)
			return 0;
		for (j = 0; j < i; j++)
			if (strcmp(t->entries[j].key, e->key) == 0 &&
			    !k->repeatable)
				return fail_twice(p, e->line, section, e->key,
				    t->entries[j].line, e->continued);
		if (key_set(k, base, e->value, msg, sizeof msg) != 0)
			return fail(p, e->line, section, e->key, "%s", msg);
		if (strcmp(e->key, "burst") == 0)
			burst_line = e->line;
	}
	if (burst_line != 0 && out->flow.rate == 0)
		return fail(p, burst_line, section, "burst", "without rate");
	if (out->flow.rate != 0 && out->flow.burst == 0)
		out->flow.burst = 1;
	if (!out->flow.key_set)
		out->flow.key_concurrency = 1;
	if (cfg_check_key_cap(out, &bad, msg, sizeof msg) != 0)
		return fail(p, entry_line(t, bad), section, bad, "%s", msg);
	if (out->kind->ready(out->handler, msg, sizeof msg) != 0)
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

/* The line row (section, key) was given at, or 0. */
static int
given_at(const struct parser *p, const char *section, const char *key)
{
	return p->given[find_key(section, key) - keys];
}

/* The TLS keys of [database] agree with each other and with the target:
 * a key that would be ignored is an error, as a typo is. */
static int
check_tls(struct parser *p)
{
	const struct cfg_db *db = &p->cfg->db;
	const char *const files[][2] = { { "tls_ca_file", db->tls_ca_file },
	    { "tls_cert_file", db->tls_cert_file },
	    { "tls_key_file", db->tls_key_file } };
	size_t i;

	if (db->tls == CFG_TLS_OFF) {
		for (i = 0; i < sizeof files / sizeof files[0]; i++)
			if (files[i][1] != NULL)
				return fail(p, given_at(p, "database",
				    files[i][0]), "database", files[i][0],
				    "needs tls = on or verify (tls is off)");
		return 1;
	}
	if (!cfg_db_tcp(db))
		return fail(p, given_at(p, "database", "tls"), "database",
		    "tls", "the connection is the unix socket (%s), which "
		    "TLS does not cover: set host to the server's name or "
		    "address, or tls = off", db->socket != NULL ?
		    "socket is set" : "host is localhost or not set");
	if (db->tls == CFG_TLS_ON && db->tls_ca_file != NULL)
		return fail(p, given_at(p, "database", "tls_ca_file"),
		    "database", "tls_ca_file", "a CA is to verify the "
		    "server with, which tls = on does not do: set tls = "
		    "verify");
	if ((db->tls_cert_file == NULL) != (db->tls_key_file == NULL))
		return fail(p, given_at(p, "database", db->tls_cert_file ?
		    "tls_cert_file" : "tls_key_file"), "database",
		    db->tls_cert_file ? "tls_cert_file" : "tls_key_file",
		    "needs %s too", db->tls_cert_file ? "tls_key_file" :
		    "tls_cert_file");
	return 1;
}

/* Checks that span keys, once everything is read. */
static int
check_whole(struct parser *p)
{
	struct cfg *cfg = p->cfg;

	if (!check_tls(p))
		return 0;

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
	set_defaults(&p, keys, NKEYS, cfg, NULL);
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
	for (i = 0; i < cfg->nschedules && !p.failed; i++)
		finish_schedule(&p, &cfg->schedules[i]);
	if (!p.failed)
		check_whole(&p);
	/* For the error messages of cfg_load, which reads the file. */
	cfg->db.password_file_line =
	    p.given[find_key("database", "password_file") - keys];
	free_pending(&p);
	free(p.sched_given);
	if (p.failed) {
		cfg_free(cfg);
		return -1;
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
		free(cfg->types[i].flow.key);
	}
	free(cfg->types);
	for (i = 0; i < cfg->nschedules; i++) {
		free(cfg->schedules[i].name);
		free(cfg->schedules[i].cron_text);
		free_strings(sched_keys, SCHED_NKEYS, &cfg->schedules[i]);
	}
	free(cfg->schedules);
	free_strings(keys, NKEYS, cfg);
	free(cfg->path);
	memset(cfg, 0, sizeof *cfg);
}
