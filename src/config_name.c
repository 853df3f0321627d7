/*
 * config_name.c - names in jobrun.conf, and the words of config.c's
 * messages that help someone fix a typo: whether a value is a well-formed
 * table, time zone or type name, what a rate and a jitter are, the names a
 * key may take, the known name closest to an unknown one, a " #" that was
 * meant as a comment, and what may follow a section header.
 *
 * A message that only says "unknown key" leaves the reader to find the
 * right spelling in a manual page; "did you mean batch_size?" ends the
 * search.  A name is close when it is at most one edit away (two for
 * names over four characters), counting a swap of two neighbours as one
 * edit and ignoring case, or when one name begins the other; of two
 * names equally close neither is offered (a guess is worse than none).
 * These are pure functions of strings, so enqueue's warning about a type
 * no section names uses them too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "config.h"
#include "util.h"

int
cfg_valid_chars(const char *s, const char *extra)
{
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(extra, *s) != NULL))
			return 0;
	return 1;
}

/* It is put into SQL text as `name`, so only plain identifiers. */
int
cfg_check_table(const char *value, char *msg, size_t msglen)
{
	size_t n = strlen(value);

	if (n >= 1 && n <= CFG_NAME_MAX && cfg_valid_chars(value, "_$"))
		return 0;
	return errf(msg, msglen, "not a table name (1..%d letters, digits, _ "
	    "or $): \"%s\"", CFG_NAME_MAX, value);
}

/* Empty is unset; the server judges the zone itself when it is set. */
int
cfg_check_time_zone(const char *value, char *msg, size_t msglen)
{
	if (strlen(value) <= CFG_NAME_MAX && cfg_valid_chars(value, "+-:/_"))
		return 0;
	return errf(msg, msglen, "not a time zone (e.g. +00:00 or "
	    "Europe/Berlin): \"%s\"", value);
}

/* A type's name as a schedule names it: the type column's values. */
int
cfg_check_type_name(const char *value, char *msg, size_t msglen)
{
	if (strlen(value) >= 1 && strlen(value) <= CFG_TYPE_MAX &&
	    cfg_valid_chars(value, "_.:-"))
		return 0;
	return errf(msg, msglen, "not a type name (1..%d letters, digits, _ "
	    ". : or -): \"%s\"", CFG_TYPE_MAX, value);
}


/* The longest name compared; longer ones are nobody's typo. */
#define NEAR_MAX (sizeof ((struct cfg_near *)0)->best - 1)

static int
fold(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static size_t
min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Edits from a to b (insert, delete, replace, swap two neighbours),
 * case ignored; both at most NEAR_MAX bytes.  Three rows of the table:
 * a swap looks two rows back. */
static size_t
distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[3][NEAR_MAX + 1], *cur, *up, i, j;

	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		cur = d[i % 3], up = d[(i - 1) % 3];
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			cur[j] = min3(up[j] + 1, cur[j - 1] + 1, up[j - 1] +
			    (fold(a[i - 1]) != fold(b[j - 1])));
			if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
			    fold(a[i - 2]) == fold(b[j - 1]) &&
			    d[(i - 2) % 3][j - 2] + 1 < cur[j])
				cur[j] = d[(i - 2) % 3][j - 2] + 1;
		}
	}
	return d[la % 3][lb];
}

void
cfg_near_init(struct cfg_near *n, const char *word)
{
	memset(n, 0, sizeof *n);
	n->word = word;
}

void
cfg_near_offer(struct cfg_near *n, const char *name)
{
	size_t lw = strlen(n->word), ln = strlen(name), d, limit, score;
	size_t shorter = lw < ln ? lw : ln;

	if (lw > NEAR_MAX || ln > NEAR_MAX || strcmp(n->word, name) == 0)
		return;
	d = distance(n->word, lw, name, ln);
	limit = lw > 4 ? 2 : 1;
	if (d <= limit)
		score = d + 1;
	else if (shorter >= 3 && strncasecmp(n->word, name, shorter) == 0)
		score = limit + 2;	/* after every close one */
	else
		return;
	if (n->score != 0 && score == n->score)
		n->ambiguous = 1;	/* "backoff": _base or _cap? */
	if (n->score != 0 && score >= n->score)
		return;
	n->score = score;
	n->ambiguous = 0;
	memcpy(n->best, name, ln + 1);
}

void
cfg_near_rows(struct cfg_near *n, const struct cfg_key *rows, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		cfg_near_offer(n, rows[i].key);
}

void
cfg_near_section(struct cfg_near *n, const char *pattern)
{
	const char *dot = strchr(n->word, '.'), *name = strchr(pattern, '.');
	char section[NEAR_MAX + 1];

	if (name == NULL)
		cfg_near_offer(n, pattern);
	else if (snprintf(section, sizeof section, "%.*s.%s",
	    (int)(name - pattern), pattern, dot != NULL && dot[1] != '\0' ?
	    dot + 1 : name + 1) < (int)sizeof section)
		cfg_near_offer(n, section);
}

const char *
cfg_near_hint(const struct cfg_near *n, const char *open, const char *close,
    char *buf, size_t len)
{
	if (n->score == 0 || n->ambiguous)
		return "";
	snprintf(buf, len, "; did you mean %s%s%s?", open, n->best, close);
	return buf;
}

void
cfg_key_names(const struct cfg_key *rows, size_t n, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i == 0 ? "" : ", ", rows[i].key);
}

void
cfg_enum_names(const struct cfg_key *k, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; k->names[i] != NULL && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i == 0 ? "" :
		    k->names[i + 1] == NULL ? " or " : ", ", k->names[i]);
}

const char *
cfg_comment_in(const char *value)
{
	const char *hash;

	for (hash = strchr(value, '#'); hash != NULL;
	    hash = strchr(hash + 1, '#'))
		if (hash > value && (hash[-1] == ' ' || hash[-1] == '\t'))
			return hash - 1;
	return NULL;
}

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

/* A [type.NAME] keep_success or keep_failed: its own retention. */
static int
keep_parsed(struct cfg_type *t, int which, const char *value, char *msg,
    size_t msglen)
{
	t->keep_set[which] = 1;
	if (cli_duration(value, &t->keep[which]) == 0)
		return 0;
	return errf(msg, msglen, "not a duration such as 3600, 90m, 12h, 30d "
	    "or 2w (at most 10 years): \"%s\"", value);
}

int
cfg_parse_keep_success(void *base, const char *value, char *msg,
    size_t msglen)
{
	return keep_parsed(base, CFG_KEEP_SUCCESS, value, msg, msglen);
}

int
cfg_parse_priority(void *base, const char *value, char *msg, size_t msglen)
{
	struct cfg_type *t = base;

	t->priority_set = 1;
	if (parse_long(value, PRIORITY_LOW, PRIORITY_HIGH, &t->priority) == 0)
		return 0;
	return errf(msg, msglen, "not a whole number in %d..%d: \"%s\"",
	    PRIORITY_LOW, PRIORITY_HIGH, value);
}

int
cfg_parse_keep_failed(void *base, const char *value, char *msg,
    size_t msglen)
{
	return keep_parsed(base, CFG_KEEP_FAILED, value, msg, msglen);
}

/* A column name as concurrency_key takes it: letters, digits and "_", not
 * beginning with a digit (so that it is quoted without escaping). */
static int
column_name(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	return n > 0 && n <= CFG_KEY_COLUMN_MAX && s[n] == '\0' &&
	    !(s[0] >= '0' && s[0] <= '9');
}

/* The path itself is the server's to judge (flow_key.c asks it). */
int
cfg_parse_concurrency_key(void *base, const char *value, char *msg,
    size_t msglen)
{
	struct cfg_type *t = base;

	if (CFG_KEY_IS_PATH(value) ? strlen(value) > CFG_KEY_PATH_MAX :
	    !column_name(value))
		return errf(msg, msglen, "not a JSON path into the payload "
		    "($.customer, at most %d bytes) nor a column name "
		    "(letters, digits, _): \"%s\"", CFG_KEY_PATH_MAX, value);
	free(t->flow.key);
	t->flow.key = xstrdup(value);
	return 0;
}

int
cfg_parse_key_concurrency(void *base, const char *value, char *msg,
    size_t msglen)
{
	struct cfg_type *t = base;

	t->flow.key_set = 1;
	if (parse_ulong(value, 1, FLOW_MAX, &t->flow.key_concurrency) == 0)
		return 0;
	return errf(msg, msglen, "not a whole number of jobs in 1..%lu: "
	    "\"%s\"", FLOW_MAX, value);
}

int
cfg_parse_order(void *base, const char *value, char *msg, size_t msglen)
{
	struct cfg_type *t = base;

	if (strcmp(value, "key") == 0 || strcmp(value, "none") == 0) {
		t->flow.key_order = strcmp(value, "key") == 0;
		return 0;
	}
	return errf(msg, msglen, "not key or none: \"%s\"", value);
}

int
cfg_check_key_cap(const struct cfg_type *t, const char **key, char *msg,
    size_t msglen)
{
	const struct cfg_flow *l = &t->flow;

	*key = l->key_set ? "key_concurrency" : "order";
	if (l->key == NULL && (l->key_set || l->key_order))
		return errf(msg, msglen, "without concurrency_key");
	*key = "order";
	if (l->key_order && l->key_concurrency > 1)
		return errf(msg, msglen, "key runs one job of a key at a "
		    "time: key_concurrency must be 1, not %lu",
		    l->key_concurrency);
	return 0;
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

const struct cfg_type *
cfg_find_type_n(const struct cfg *cfg, const char *name, size_t len)
{
	return memchr(name, '\0', len) == NULL ? cfg_find_type(cfg, name) :
	    NULL;
}

/* rate into a struct cfg_type: the count and the period's seconds. */
int
cfg_parse_type_rate(void *base, const char *value, char *msg, size_t msglen)
{
	struct cfg_flow *f = &((struct cfg_type *)base)->flow;

	if (cfg_parse_rate(value, &f->rate, &f->period) == 0)
		return 0;
	return errf(msg, msglen, "not a rate: N/s, N/min or N/h with N in "
	    "1..%lu", FLOW_MAX);
}

/* cron into a struct cfg_schedule: the parsed form and the text. */
int
cfg_parse_cron(void *base, const char *value, char *msg, size_t msglen)
{
	struct cfg_schedule *s = base;

	if (cron_parse(value, &s->cron, msg, msglen) != 0)
		return -1;
	s->cron_text = xstrdup(value);
	return 0;
}

/* backoff_jitter, in [run] and in [type.NAME] (which then has its own). */
static int
jitter_parsed(const char *value, unsigned long *permille, char *msg,
    size_t msglen)
{
	if (parse_fraction(value, permille) == 0)
		return 0;
	return errf(msg, msglen, "not a fraction from 0 to 1 with at most "
	    "three decimals, such as 0.1: \"%s\"", value);
}

int
cfg_parse_run_jitter(void *base, const char *value, char *msg, size_t msglen)
{
	return jitter_parsed(value, &((struct cfg *)base)->run.backoff_jitter,
	    msg, msglen);
}

int
cfg_parse_type_jitter(void *base, const char *value, char *msg, size_t msglen)
{
	struct cfg_type *t = base;

	t->jitter_set = 1;
	return jitter_parsed(value, &t->backoff_jitter, msg, msglen);
}

/* Whether what follows a header's "]" is nothing, blanks, or blanks and a
 * " ;" comment. */
int
cfg_header_tail_ok(const char *tail)
{
	const char *t = tail + strspn(tail, " \t\r");

	return *t == '\0' || (*t == ';' && t > tail);
}
