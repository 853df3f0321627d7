/*
 * config.c - parse jobrun.conf with inih and check every value.
 *
 * A runner started by cron has nobody watching it, so a typo must stop it
 * at once with the file, line and key, rather than run with a default the
 * operator did not mean: unknown sections and keys are errors, a key given
 * twice is an error, numbers are checked against their ranges.
 *
 * The keys of [database] and [run] are rows of one table, keys[] below,
 * as redis's static_configs[]: section, key, kind, range, default and the
 * field's offset in struct cfg.  Finding a key, setting it, its default,
 * "given twice", its error messages and freeing it all go through the
 * row, so a key is written once and an unknown one cannot land anywhere.
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

#include "cli.h"
#include "config.h"
#include "util.h"

/* The keys of a [schedule.NAME] section, in the order of the example
 * file. */
static const char *const sched_keys[] = { "type", "cron", "payload",
	"time_zone", "catch_up" };
#define SCHED_NKEYS (sizeof sched_keys / sizeof sched_keys[0])

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

static int check_table(const char *value, char *msg, size_t msglen);
static int check_time_zone(const char *value, char *msg, size_t msglen);

/* The field of struct cfg at f, which must have the type t: the offset
 * alone would not notice a row that writes an int as a string. */
#define FIELD(f, t) \
	_Generic(((struct cfg *)0)->f, t: offsetof(struct cfg, f))
#define NUMBER(s, k, f, lo, hi, d) \
	{ s, k, CFG_NUMBER, FIELD(f, unsigned long), lo, hi, NULL, d, NULL, 0 }
#define STRING(s, k, f, d, check) \
	{ s, k, CFG_STRING, FIELD(f, char *), 0, 0, NULL, d, check, 0 }
#define SECRET(s, k, f) \
	{ s, k, CFG_STRING, FIELD(f, char *), 0, 0, NULL, NULL, NULL, 1 }
#define BOOL(s, k, f, d) \
	{ s, k, CFG_BOOL, FIELD(f, int), 0, 0, NULL, d, NULL, 0 }
#define ENUM(s, k, f, names, d) \
	{ s, k, CFG_ENUM, FIELD(f, int), 0, 0, names, d, NULL, 0 }

static const char *const log_names[] = { "stderr", "syslog", NULL };
/* enum cfg_tls, in its order. */
static const char *const tls_names[] = { "off", "on", "verify", NULL };

/* Every key of [database] and [run], in the order of etc/jobrun.conf. */
static const struct cfg_key keys[] = {
	STRING("database", "host", db.host, NULL, NULL),
	NUMBER("database", "port", db.port, 1, 65535, "3306"),
	STRING("database", "socket", db.socket, NULL, NULL),
	STRING("database", "user", db.user, NULL, NULL),
	SECRET("database", "password", db.password),
	STRING("database", "password_file", db.password_file, NULL, NULL),
	STRING("database", "database", db.database, NULL, NULL),
	STRING("database", "table", db.table, "polling_jobs", check_table),
	NUMBER("database", "connect_timeout", db.connect_timeout, 1, 3600,
	    "10"),
	NUMBER("database", "read_timeout", db.read_timeout, 1, 3600, "60"),
	NUMBER("database", "write_timeout", db.write_timeout, 1, 3600, "60"),
	STRING("database", "time_zone", db.time_zone, NULL, check_time_zone),
	ENUM("database", "tls", db.tls, tls_names, "off"),
	STRING("database", "tls_ca_file", db.tls_ca_file, NULL, NULL),
	STRING("database", "tls_cert_file", db.tls_cert_file, NULL, NULL),
	STRING("database", "tls_key_file", db.tls_key_file, NULL, NULL),

	NUMBER("run", "max_seconds", run.max_seconds, 1, 86400, "45"),
	NUMBER("run", "batch_size", run.batch_size, 1, 1000000, "20"),
	NUMBER("run", "jobs", run.jobs, 1, CFG_JOBS_MAX, "1"),
	NUMBER("run", "lock_seconds", run.lock_seconds, 3, 86400, "300"),
	NUMBER("run", "recover_limit", run.recover_limit, 0, 100000, "100"),
	NUMBER("run", "backoff_base", run.backoff_base, 0, 86400, "60"),
	NUMBER("run", "backoff_cap", run.backoff_cap, 0, 604800, "3600"),
	NUMBER("run", "max_snoozes", run.max_snoozes, 0, 1000000, "100"),
	BOOL("run", "single", run.single, "no"),
	ENUM("run", "log", run.syslog, log_names, "stderr"),
	STRING("run", "metrics_file", run.metrics_file, NULL, NULL),
};

#define NKEYS (sizeof keys / sizeof keys[0])

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
valid_chars(const char *s, const char *extra)
{
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(extra, *s) != NULL))
			return 0;
	return 1;
}

/* It is put into SQL text as `name`, so only plain identifiers. */
static int
check_table(const char *value, char *msg, size_t msglen)
{
	size_t n = strlen(value);

	if (n >= 1 && n <= CFG_NAME_MAX && valid_chars(value, "_$"))
		return 0;
	return errf(msg, msglen, "not a table name (1..%d letters, digits, _ "
	    "or $): \"%s\"", CFG_NAME_MAX, value);
}

/* Empty is unset; the server judges the zone itself when it is set. */
static int
check_time_zone(const char *value, char *msg, size_t msglen)
{
	if (strlen(value) <= CFG_NAME_MAX && valid_chars(value, "+-:/_"))
		return 0;
	return errf(msg, msglen, "not a time zone (e.g. +00:00 or "
	    "Europe/Berlin): \"%s\"", value);
}

const struct cfg_key *
cfg_keys(size_t *n)
{
	*n = NKEYS;
	return keys;
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

/* "a, b or c": the values of an enum, for its error message. */
static void
enum_names(const struct cfg_key *k, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; k->names[i] != NULL && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i == 0 ? "" :
		    k->names[i + 1] == NULL ? " or " : ", ", k->names[i]);
}

/* Where row k's value lives in cfg. */
static void *
field_of(struct cfg *cfg, const struct cfg_key *k)
{
	return (char *)cfg + k->offset;
}

/* Set the field of row k from value: 1, or 0 after fail(). */
static int
set_key(struct parser *p, const struct cfg_key *k, const char *value)
{
	void *field = field_of(p->cfg, k);
	unsigned long *number = field;
	int *flag = field, i;
	char **string = field, msg[512];

	switch (k->kind) {
	case CFG_NUMBER:
		if (parse_ulong(value, k->min, k->max, number) != 0)
			return fail(p, p->line, k->section, k->key,
			    "not a number in %lu..%lu: \"%s\"", k->min, k->max,
			    value);
		return 1;
	case CFG_BOOL:
		if (parse_bool(value, flag) != 0)
			return fail(p, p->line, k->section, k->key,
			    "yes or no, not \"%s\"", value);
		return 1;
	case CFG_ENUM:
		for (i = 0; k->names[i] != NULL; i++)
			if (strcmp(k->names[i], value) == 0) {
				*flag = i;
				return 1;
			}
		enum_names(k, msg, sizeof msg);
		return fail(p, p->line, k->section, k->key, "%s, not \"%s\"",
		    msg, value);
	case CFG_STRING:
		if (k->check != NULL && k->check(value, msg, sizeof msg) != 0)
			return fail(p, p->line, k->section, k->key, "%s", msg);
		/* Empty means unset, so "socket =" in the example file is
		 * harmless. */
		free(*string);
		*string = value[0] != '\0' ? xstrdup(value) : NULL;
		return 1;
	}
	return fail(p, p->line, k->section, k->key, "no kind");
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
	int *given;

	if (k == NULL)
		return fail(p, p->line, section, key, "unknown key");
	given = &p->given[k - keys];
	if (*given != 0)
		return fail_twice(p, p->line, section, key, *given,
		    continuation(p));
	*given = p->line;
	return set_key(p, k, value);
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
	char names[128];

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
			    handler_names(names, sizeof names));
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
	return &cfg->schedules[cfg->nschedules++];
}

/* A value of [schedule.NAME] into s: 1, or 0 after fail(). */
static int
set_schedule(struct parser *p, struct cfg_schedule *s, const char *section,
    size_t k, const char *value)
{
	char msg[512];

	switch (k) {
	case 0:
		if (strlen(value) < 1 || strlen(value) > CFG_TYPE_MAX ||
		    !valid_chars(value, "_.:-"))
			return fail(p, p->line, section, sched_keys[k],
			    "not a type name (1..%d letters, digits, _ . : "
			    "or -): \"%s\"", CFG_TYPE_MAX, value);
		s->type = xstrdup(value);
		return 1;
	case 1:
		if (cron_parse(value, &s->cron, msg, sizeof msg) != 0)
			return fail(p, p->line, section, sched_keys[k], "%s",
			    msg);
		s->cron_text = xstrdup(value);
		return 1;
	case 2:
		/* The server judges it, as it judges enqueue's. */
		s->payload = value[0] != '\0' ? xstrdup(value) : NULL;
		return 1;
	case 3:
		if (check_time_zone(value, msg, sizeof msg) != 0)
			return fail(p, p->line, section, sched_keys[k], "%s",
			    msg);
		s->time_zone = value[0] != '\0' ? xstrdup(value) : NULL;
		return 1;
	default:
		if (cli_duration(value, &s->catch_up) != 0)
			return fail(p, p->line, section, sched_keys[k],
			    "not a duration such as 3600, 90m, 12h, 30d or 2w "
			    "(at most 10 years): \"%s\"", value);
		return 1;
	}
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
	struct cfg_schedule *s;
	int *given;
	size_t k;

	/* The name goes into business keys "NAME@YYYY-MM-DDTHH:MM". */
	if (strlen(name) < 1 || strlen(name) > CFG_TYPE_MAX ||
	    !valid_chars(name, "_.:-"))
		return fail(p, p->line, section, NULL,
		    "not a schedule name (1..%d letters, digits, _ . : or -)",
		    CFG_TYPE_MAX);
	for (k = 0; k < SCHED_NKEYS; k++)
		if (strcmp(sched_keys[k], key) == 0)
			break;
	if (k == SCHED_NKEYS)
		return fail(p, p->line, section, key, "unknown key (known: "
		    "type, cron, payload, time_zone, catch_up)");
	if (same_schedule(p, section, name) != 0)
		return 0;
	s = find_schedule(p, name);
	given = &p->sched_given[s - p->cfg->schedules][k];
	if (*given != 0)
		return fail_twice(p, p->line, section, key, *given,
		    continuation(p));
	*given = p->line;
	return set_schedule(p, s, section, k, value);
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
	char known[256] = "";
	size_t i, n = 0;

	for (i = 0; i < NKEYS && n < sizeof known; i++)
		if (find_key(keys[i].section, NULL) == &keys[i])
			n += (size_t)snprintf(known + n, sizeof known - n,
			    "%s, ", keys[i].section);
	return fail(p, p->line, section, NULL, "unknown section (known: "
	    "%stype.NAME, schedule.NAME)", known);
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

static int
is_repeatable(const struct handler_kind *kind, const char *key)
{
	const char *const *k;

	for (k = kind->repeatable; k != NULL && *k != NULL; k++)
		if (strcmp(*k, key) == 0)
			return 1;
	return 0;
}

/* The longest cap and rate a type may have: far beyond what one table
 * can serve, small enough that no arithmetic on them overflows. */
#define FLOW_MAX 1000000UL

/* The periods a rate may be counted in. */
static const struct {
	const char *unit;
	unsigned long seconds;
} periods[] = { { "s", 1 }, { "min", 60 }, { "h", 3600 } };

int
cfg_parse_rate(const char *value, unsigned long *rate, unsigned long *period)
{
	char num[32];
	const char *slash = strchr(value, '/');
	size_t i, n;

	if (slash == NULL || (n = (size_t)(slash - value)) == 0 ||
	    n >= sizeof num)
		return -1;
	memcpy(num, value, n);
	num[n] = '\0';
	if (parse_ulong(num, 1, FLOW_MAX, rate) != 0)
		return -1;
	for (i = 0; i < sizeof periods / sizeof periods[0]; i++)
		if (strcmp(slash + 1, periods[i].unit) == 0) {
			*period = periods[i].seconds;
			return 0;
		}
	return -1;
}

/* The flow control keys every kind of type takes (src/flow.c applies
 * them): 1 when key is not one, 0 when set, -1 with msg. */
static int
flow_key(struct cfg_flow *f, const char *key, const char *value, char *msg,
    size_t msglen)
{
	if (strcmp(key, "concurrency") == 0) {
		if (parse_ulong(value, 1, FLOW_MAX, &f->concurrency) == 0)
			return 0;
		snprintf(msg, msglen, "not a number of jobs in 1..%lu",
		    FLOW_MAX);
		return -1;
	}
	if (strcmp(key, "rate") == 0) {
		if (cfg_parse_rate(value, &f->rate, &f->period) == 0)
			return 0;
		snprintf(msg, msglen, "not a rate: N/s, N/min or N/h with N "
		    "in 1..%lu", FLOW_MAX);
		return -1;
	}
	if (strcmp(key, "burst") == 0) {
		if (parse_ulong(value, 1, FLOW_MAX, &f->burst) == 0)
			return 0;
		snprintf(msg, msglen, "not a number of starts in 1..%lu",
		    FLOW_MAX);
		return -1;
	}
	return 1;
}

/* Hand a collected [type.NAME] section to its handler kind. */
static int
finish_type(struct parser *p, struct pending_type *t, struct cfg_type *out)
{
	char section[CFG_TYPE_MAX + 8], msg[256], names[128];
	int rc, burst_line = 0;
	size_t i, j;

	snprintf(section, sizeof section, "type.%s", t->name);
	if (t->kind == NULL)
		return fail(p, t->line, section, "handler",
		    "missing (known: %s)", handler_names(names, sizeof names));
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
		rc = flow_key(&out->flow, e->key, e->value, msg, sizeof msg);
		if (rc < 0 || (rc > 0 && t->kind->set(out->handler, e->key,
		    e->value, msg, sizeof msg) != 0))
			return fail(p, e->line, section, e->key, "%s", msg);
		if (strcmp(e->key, "burst") == 0)
			burst_line = e->line;
	}
	if (burst_line != 0 && out->flow.rate == 0)
		return fail(p, burst_line, section, "burst", "without rate");
	if (out->flow.rate != 0 && out->flow.burst == 0)
		out->flow.burst = 1;
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

/* Every row's default, through the same checks as a value in the file. */
static void
set_defaults(struct parser *p)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (keys[i].def != NULL)
			set_key(p, &keys[i], keys[i].def);
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
	set_defaults(&p);
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
	}
	free(cfg->types);
	for (i = 0; i < cfg->nschedules; i++) {
		free(cfg->schedules[i].name);
		free(cfg->schedules[i].type);
		free(cfg->schedules[i].cron_text);
		free(cfg->schedules[i].payload);
		free(cfg->schedules[i].time_zone);
	}
	free(cfg->schedules);
	for (i = 0; i < NKEYS; i++) {
		char **field = field_of(cfg, &keys[i]);

		if (keys[i].kind != CFG_STRING || *field == NULL)
			continue;
		if (keys[i].secret)
			explicit_bzero(*field, strlen(*field));
		free(*field);
	}
	free(cfg->path);
	memset(cfg, 0, sizeof *cfg);
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
