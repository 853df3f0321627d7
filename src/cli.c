/*
 * cli.c - the command line.
 *
 * "jobrun [COMMAND] [OPTIONS] [OPERANDS]": the command is the first
 * argument that is not an option (before or after the options), "run" when
 * there is none.  One option table serves every command; each command's
 * row in commands.c says which options it takes, so "jobrun run
 * --payload=x" is a usage error rather than silently ignored.
 *
 * An option is one row of rows[] below, as in git's struct option: its
 * names, its kind, where its value goes in struct cli and the bounds it
 * is checked against, its help line.  getopt_long's table, the help text
 * and the completion helper are all built from the rows, so a new option
 * is a row and a bit in enum cli_option, and nothing is written twice.
 */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "defs.h"
#include "queue.h"
#include "utf8.h"
#include "util.h"

/* What an option's value is, and so how apply() stores it. */
enum cli_kind {
	CK_FLAG,	/* no value: the int is set to 1 */
	CK_COUNT,	/* no value: the int counts (-vv) */
	CK_TEXT,	/* the value itself, as a const char * */
	CK_NUMBER,	/* an unsigned long in min..max */
	CK_DURATION,	/* seconds, from 90s, 90m, 12h, ... (cli_duration),
			 * the unit required, at least min */
	CK_OWN,		/* a rule of its own, in apply_own() */
};

struct cli_row {
	enum cli_option id;
	const char *name;	/* the long name, without "--" */
	char letter;		/* the short name; 0 when there is none */
	enum cli_kind kind;
	size_t field;		/* offsetof the value in struct cli */
	size_t has;		/* offsetof its has_X flag, or NO_HAS */
	unsigned long min, max;	/* CK_NUMBER's bounds; CK_DURATION's min */
	const char *value;	/* the value's name in the help, NULL: none */
	const char *help;	/* '\n' continues on an indented line; NULL
				 * hides the option from help and completion */
};

#define NO_HAS ((size_t)-1)

/* offsetof f in struct cli, refused at compile time unless f is a T:
 * the comparison of distinct pointer types is an error under -Werror,
 * and sizeof does not evaluate it. */
#define FIELD(f, T) (offsetof(struct cli, f) + \
    0 * sizeof(&((struct cli *)0)->f == (T *)0))

/* The kind, field, has_X flag and bounds of a row, by kind. */
#define FLAG(f)		CK_FLAG, FIELD(f, int), NO_HAS, 0, 0
#define COUNT(f)	CK_COUNT, FIELD(f, int), NO_HAS, 0, 0
#define TEXT(f)		CK_TEXT, FIELD(f, const char *), NO_HAS, 0, 0
#define NUMBER(f, lo, hi) \
	CK_NUMBER, FIELD(f, unsigned long), NO_HAS, lo, hi
#define NUMBER_HAS(f, has, lo, hi) \
	CK_NUMBER, FIELD(f, unsigned long), FIELD(has, int), lo, hi
#define DURATION_HAS(f, has, lo) \
	CK_DURATION, FIELD(f, unsigned long), FIELD(has, int), lo, 0
#define OWN(has)	CK_OWN, 0, has, 0, 0

/* In the order --help lists them.  The bounds are the ones the messages
 * quote ("--max: not a number in 1..1000000"). */
static const struct cli_row rows[] = {
	{ CO_CONFIG, "config", 'c', TEXT(config), "FILE",
	  "the configuration file (default $JOBRUN_CONFIG,\n"
	  "then " CFG_DEFAULT_PATH ")" },
	{ CO_JSON, "json", 0, FLAG(json), NULL,
	  "machine-readable output: one JSON document on stdout" },
	{ CO_LOG, "log", 0, OWN(NO_HAS), "stderr|syslog",
	  "where messages go ([run] log)" },
	{ CO_VERBOSE, "verbose", 'v', COUNT(verbose), NULL,
	  "a line per job on stderr (-vv: more)" },
	{ CO_QUIET, "quiet", 'q', COUNT(quiet), NULL,
	  "only jobs failed for good or lost, and fatal\n"
	  "errors, on stderr (-qq: fatal errors only)" },
	{ CO_HELP, "help", 'h', FLAG(help), NULL,
	  "the usage; after a command, that command's" },
	{ CO_VERSION, "version", 'V', FLAG(version), NULL,
	  "the version" },
	{ CO_COMPLETION_HELPER, "completion-helper", 0,
	  FLAG(completion_helper), NULL, NULL },
	{ CO_TYPE, "type", 't', TEXT(type), "NAME",
	  "only jobs of this type (enqueue: the new jobs' type)" },
	{ CO_MAX, "max", 'n', NUMBER_HAS(max, has_max, 1, CFG_BATCH_MAX), "N",
	  "claim at most N jobs ([run] batch_size)" },
	{ CO_MAX_SECONDS, "max-seconds", 0,
	  NUMBER_HAS(max_seconds, has_max_seconds, 1, 86400), "S",
	  "stop claiming after S seconds ([run] max_seconds)" },
	{ CO_JOBS, "jobs", 'j', NUMBER_HAS(jobs, has_jobs, 1, CFG_JOBS_MAX),
	  "N", "run up to N handlers at once ([run] jobs)" },
	{ CO_SINGLE, "single", 0, FLAG(single), NULL,
	  "exit at once if another runner of this table (and\n"
	  "--type) is running ([run] single)" },
	{ CO_WAIT, "wait", 'w', FLAG(wait), NULL,
	  "when nothing is due, wait for work until the time\n"
	  "budget ends ([run] wait)" },
	{ CO_METRICS_FILE, "metrics-file", 0, TEXT(metrics_file), "FILE",
	  "write Prometheus metrics of the run to FILE\n"
	  "([run] metrics_file)" },
	{ CO_KEY, "key", 0, TEXT(key), "KEY",
	  "the job's business key" },
	{ CO_PAYLOAD, "payload", 0, TEXT(payload), "JSON",
	  "the job's payload (default {})" },
	{ CO_PAYLOAD_FILE, "payload-file", 0, TEXT(payload_file), "FILE",
	  "the job's payload, read from FILE (- or a lone -:\n"
	  "standard input)" },
	{ CO_DELAY, "delay", 0, NUMBER_HAS(delay, has_delay, 0, 315360000),
	  "SECONDS", "due SECONDS from now" },
	{ CO_AT, "at", 0, TEXT(at), "DATETIME",
	  "due at YYYY-MM-DD HH:MM[:SS], the session's time zone" },
	{ CO_DEADLINE, "deadline", 0, TEXT(deadline), "WHEN",
	  "not started by then, not run: a DURATION from\n"
	  "now or a DATETIME as --at" },
	{ CO_PRIORITY, "priority", 0, TEXT(priority), "N",
	  "claimed before due jobs of lower N (default 0,\n"
	  "or [type.NAME] priority)" },
	{ CO_MAX_ATTEMPTS, "max-attempts", 0,
	  NUMBER(max_attempts, 1, 1000000), "N",
	  "fail the job after N attempts" },
	{ CO_AGAIN, "again", 0, FLAG(again), NULL,
	  "enqueue the key again once its job has finished" },
	{ CO_KEY_PREFIX, "key-prefix", 0, TEXT(key_prefix), "P",
	  "fan-out: the prefix of every chunk's key" },
	{ CO_RANGE, "range", 0, OWN(FIELD(has_range, int)), "FROM-TO",
	  "fan-out: the numbers FROM to TO, both included" },
	{ CO_CHUNK, "chunk", 0, NUMBER(chunk, 1, 100000000), "N",
	  "fan-out: N numbers of the range per job" },
	{ CO_KEYS_FROM, "keys-from", 0, TEXT(keys_from), "FILE",
	  "fan-out: a job per line of FILE (-: standard input)" },
	{ CO_PAYLOAD_TEMPLATE, "payload-template", 0, TEXT(payload_template),
	  "JSON", "fan-out: the payload every job starts from" },
	{ CO_THEN, "then", 0, TEXT(then_type), "NAME",
	  "fan-out: a job of type NAME once every job has\n"
	  "finished" },
	{ CO_STATUS, "status", 0, TEXT(status), "S",
	  "only jobs in status S" },
	{ CO_LIMIT, "limit", 0, NUMBER(limit, 1, 100000), "N",
	  "at most N jobs, or changes (default 20)" },
	{ CO_BEFORE_ID, "before-id", 0, NUMBER(before_id, 1, ULONG_MAX), "ID",
	  "only jobs whose id is below ID (the next page)" },
	{ CO_FAILED, "failed", 0, FLAG(failed), NULL,
	  "every failed job (of --type)" },
	{ CO_INCLUDE_CANCELLED, "include-cancelled", 0,
	  FLAG(include_cancelled), NULL,
	  "with --failed: cancelled jobs too" },
	{ CO_FORCE, "force", 0, FLAG(force), NULL,
	  "retry: pending jobs too, due now, attempts reset;\n"
	  "pause, resume: a type not known here" },
	{ CO_OLDER_THAN, "older-than", 0,
	  DURATION_HAS(older_than, has_older_than, 0), "DURATION",
	  "finished more than DURATION ago (90s, 90m, 12h,\n"
	  "30d, 2w)" },
	{ CO_SINCE, "since", 0, DURATION_HAS(since, has_since, 1), "DURATION",
	  "audit: only changes made less than DURATION ago" },
	{ CO_DRY_RUN, "dry-run", 0, FLAG(dry_run), NULL,
	  "count the jobs it would change, change nothing" },
	{ CO_HTML, "html", 0, TEXT(html), "FILE",
	  "write the queue's state as one HTML page to FILE\n"
	  "(- for standard output)" },
};

#define NROWS (sizeof rows / sizeof rows[0])

/* getopt_long's val for a row: its letter, else a number past every
 * character. */
#define LONG_ONLY 256

static int
takes_value(const struct cli_row *r)
{
	return r->kind != CK_FLAG && r->kind != CK_COUNT;
}

static const struct cli_row *
row_of(enum cli_option o)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (rows[i].id == o)
			return &rows[i];
	return NULL;
}

/* The row getopt_long's return value c (or its optopt) stands for. */
static const struct cli_row *
row_for_val(int c)
{
	size_t i;

	if (c >= LONG_ONLY && (size_t)(c - LONG_ONLY) < NROWS)
		return &rows[c - LONG_ONLY];
	for (i = 0; c > 0 && i < NROWS; i++)
		if (rows[i].letter == c)
			return &rows[i];
	return NULL;
}

const char *
cli_option_name(enum cli_option o)
{
	const struct cli_row *r = row_of(o);

	return r != NULL ? r->name : "?";
}

/* The help column; a longer left side ("--log=stderr|syslog") puts its
 * help on the next line rather than pushing every line right. */
#define HELP_COLUMN 24

static void
usage_row(FILE *out, const struct cli_row *r)
{
	const char *line, *end;
	int width;

	if (r->letter != 0)
		width = fprintf(out, "  -%c, --%s", r->letter, r->name);
	else
		width = fprintf(out, "      --%s", r->name);
	if (r->value != NULL)
		width += fprintf(out, "=%s", r->value);
	if (width > HELP_COLUMN - 2) {
		fputc('\n', out);
		width = 0;
	}
	for (line = r->help; ; line = end + 1) {
		end = strchr(line, '\n');
		fprintf(out, "%*s%.*s\n", HELP_COLUMN - width, "",
		    (int)(end != NULL ? (size_t)(end - line) : strlen(line)),
		    line);
		width = 0;
		if (end == NULL)
			break;
	}
}

void
cli_usage_options(FILE *out, unsigned long long options)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if ((options & CLI_OPT(rows[i].id)) && rows[i].help != NULL)
			usage_row(out, &rows[i]);
}

void
cli_complete_options(FILE *out, unsigned long long options)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if ((options & CLI_OPT(rows[i].id)) && rows[i].help != NULL)
			fprintf(out, "--%s%s\n", rows[i].name,
			    takes_value(&rows[i]) ? "=" : "");
	/* The short names that take a value, so that the word after one
	 * is completed as its value, not as a command. */
	for (i = 0; i < NROWS; i++)
		if ((options & CLI_OPT(rows[i].id)) && rows[i].help != NULL &&
		    rows[i].letter != 0 && takes_value(&rows[i]))
			fprintf(out, "-%c=\n", rows[i].letter);
}

static int
number(const struct cli_row *r, const char *value, unsigned long *out,
    char *err, size_t errlen)
{
	if (parse_ulong(value, r->min, r->max, out) != 0)
		return errf(err, errlen, "--%s: not a number in %lu..%lu: "
		    "\"%s\"", r->name, r->min, r->max, value);
	return 0;
}

/* FROM-TO, both inclusive, FROM <= TO. */
static int
range(const char *arg, struct cli *cli, char *err, size_t errlen)
{
	const char *dash = strchr(arg, '-');
	char from[32];

	if (dash != NULL && (size_t)(dash - arg) < sizeof from) {
		memcpy(from, arg, (size_t)(dash - arg));
		from[dash - arg] = '\0';
		if (parse_ulong(from, 0, ULONG_MAX / 2, &cli->range_from) == 0 &&
		    parse_ulong(dash + 1, 0, ULONG_MAX / 2, &cli->range_to) == 0 &&
		    cli->range_from <= cli->range_to)
			return 0;
	}
	return errf(err, errlen, "--range: not FROM-TO with FROM <= TO: "
	    "\"%s\"", arg);
}

int
cli_duration(const char *s, unsigned long *seconds)
{
	static const struct { char suffix; unsigned long factor; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
		{ 'w', 604800 },
	};
	char digits[32];
	size_t len = strlen(s), i;
	unsigned long n, factor = 1;

	if (len == 0 || len >= sizeof digits)
		return -1;
	memcpy(digits, s, len + 1);
	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (digits[len - 1] == units[i].suffix) {
			factor = units[i].factor;
			digits[--len] = '\0';
			break;
		}
	/* At most ten years: purge must never be handed a wrapped number. */
	if (parse_ulong(digits, 0, 315360000UL / factor, &n) != 0)
		return -1;
	*seconds = n * factor;
	return 0;
}

/* The options whose value follows a rule no kind has. */
static int
apply_own(struct cli *cli, enum cli_option o, const char *arg, char *err,
    size_t errlen)
{
	switch (o) {
	case CO_LOG:
		if (strcmp(arg, "stderr") != 0 && strcmp(arg, "syslog") != 0)
			return errf(err, errlen, "--log: stderr or syslog, not "
			    "\"%s\"", arg);
		cli->log = arg;
		return 0;
	case CO_RANGE:
		return range(arg, cli, err, errlen);
	default:
		return errf(err, errlen, "--%s: no rule for its value",
		    cli_option_name(o));
	}
}

/* Store row r's value (arg, NULL for a flag) where the row says. */
static int
apply(struct cli *cli, const struct cli_row *r, const char *arg, char *err,
    size_t errlen)
{
	char *base = (char *)cli;

	cli->given |= CLI_OPT(r->id);
	if (r->has != NO_HAS)
		*(int *)(base + r->has) = 1;
	switch (r->kind) {
	case CK_FLAG:
		*(int *)(base + r->field) = 1;
		return 0;
	case CK_COUNT:
		(*(int *)(base + r->field))++;
		return 0;
	case CK_TEXT:
		/* An empty FILE is none, most often an unset variable
		 * ("-c $CONF"), and --config's would fall back to the
		 * default configuration. */
		if (arg[0] == '\0' && r->value != NULL &&
		    strcmp(r->value, "FILE") == 0)
			return errf(err, errlen, "--%s: an empty FILE", r->name);
		*(const char **)(base + r->field) = arg;
		return 0;
	case CK_NUMBER:
		return number(r, arg, (unsigned long *)(base + r->field), err,
		    errlen);
	case CK_DURATION:
		if (cli_duration(arg, (unsigned long *)(base + r->field)) != 0)
			return errf(err, errlen, "--%s: not a duration such as "
			    "90s, 90m, 12h, 30d or 2w: \"%s\"", r->name, arg);
		/* Before the advice on units, which would otherwise
		 * suggest 0s to an option that refuses it. */
		if (*(unsigned long *)(base + r->field) < r->min)
			return errf(err, errlen, "--%s: a DURATION of %lus or "
			    "more: \"%s\"", r->name, r->min, arg);
		/* --older-than=30 meant days more often than seconds, and
		 * purged what it should have kept. */
		if (arg[strlen(arg) - 1] >= '0' && arg[strlen(arg) - 1] <= '9')
			return errf(err, errlen, "--%s: \"%s\" has no unit: "
			    "write %ss, %sm, %sh, %sd or %sw", r->name, arg, arg,
			    arg, arg, arg, arg);
		return 0;
	case CK_OWN:
		return apply_own(cli, r->id, arg, err, errlen);
	}
	return errf(err, errlen, "--%s: unknown kind", r->name);
}

/* A type or key must fit its column, counted in characters as MariaDB
 * counts them, and be UTF-8 the utf8mb4 column accepts. */
int
cli_check_text(const char *option, const char *s, size_t max, char *err,
    size_t errlen)
{
	size_t len = strlen(s);

	if (!utf8_valid(s, len))
		return errf(err, errlen, "--%s: not valid UTF-8", option);
	if (len == 0 || utf8_count(s, len) > max)
		return errf(err, errlen, "--%s: 1..%zu characters, got %zu",
		    option, max, utf8_count(s, len));
	return 0;
}

/* "YYYY-MM-DD HH:MM[:SS]" (or with T): the server reads it in the
 * session time zone, like next_run_at values the application writes. */
int
cli_valid_datetime(const char *s)
{
	static const char shape[] = "dddd-dd-dd dd:dd:dd";
	size_t i, len = strlen(s);

	if (len != 16 && len != 19)
		return 0;
	for (i = 0; i < len; i++) {
		if (shape[i] == 'd' && (s[i] < '0' || s[i] > '9'))
			return 0;
		if (shape[i] == ' ' && s[i] != ' ' && s[i] != 'T')
			return 0;
		if ((shape[i] == '-' || shape[i] == ':') && s[i] != shape[i])
			return 0;
	}
	return 1;
}

int
cli_check_ids(const struct cli *cli, char *err, size_t errlen)
{
	unsigned long id;
	int i;

	for (i = 0; i < cli->nargs; i++)
		if (parse_ulong(cli->args[i], 1, ULONG_MAX, &id) != 0)
			return errf(err, errlen, "not a job id: \"%s\"",
			    cli->args[i]);
	return 0;
}

int
cli_one_of(const char *s, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

int
cli_check_common(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->quiet && cli->verbose)
		return errf(err, errlen, "-q and -v contradict each other");
	if (cli->type != NULL && cli_check_text("type", cli->type,
	    QUEUE_TYPE_MAX, err, errlen) != 0)
		return -1;
	return 0;
}

/* getopt_long's long options and short option string, from the rows. */
static void
getopt_tables(struct option *lo, char *shorts)
{
	size_t i;

	for (i = 0; i < NROWS; i++) {
		lo[i].name = rows[i].name;
		lo[i].has_arg = takes_value(&rows[i]) ? required_argument :
		    no_argument;
		lo[i].flag = NULL;
		lo[i].val = rows[i].letter != 0 ? rows[i].letter :
		    LONG_ONLY + (int)i;
		if (rows[i].letter != 0) {
			*shorts++ = rows[i].letter;
			if (takes_value(&rows[i]))
				*shorts++ = ':';
		}
	}
	memset(&lo[NROWS], 0, sizeof lo[NROWS]);
	*shorts = '\0';
}

/* The message for getopt_long's '?' or ':' at argv[optind - 1]. */
static int
getopt_error(char **argv, char *err, size_t errlen)
{
	const struct cli_row *r = optopt != 0 ? row_for_val(optopt) : NULL;

	if (r != NULL && !takes_value(r))
		return errf(err, errlen, "option --%s takes no value",
		    r->name);
	if (r != NULL)
		return errf(err, errlen, "option %s needs a value",
		    argv[optind - 1]);
	return errf(err, errlen, "unknown option %s", argv[optind - 1]);
}

int
cli_parse(int argc, char **argv, struct cli *cli, char *err, size_t errlen)
{
	struct option lo[NROWS + 1];
	char shorts[2 * NROWS + 1];
	const struct cli_row *r;
	int c;

	memset(cli, 0, sizeof *cli);
	getopt_tables(lo, shorts);
	optind = 0;	/* glibc: reinitialise fully */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == '?' || c == ':')
			return getopt_error(argv, err, errlen);
		if ((r = row_for_val(c)) == NULL)
			return errf(err, errlen, "unknown option");
		if (apply(cli, r, optarg, err, errlen) != 0)
			return -1;
	}
	/* getopt moved the words to the end: the first is the command. */
	cli->command = "run";
	if (optind < argc) {
		cli->command = argv[optind++];
		cli->command_named = 1;
	}
	cli->args = argv + optind;
	cli->nargs = argc - optind;
	if (cli->limit == 0)
		cli->limit = 20;
	return 0;
}

/* Options whose values are the jobs' data, which may hold credentials:
 * the audit record (src/audit.c) writes them [redacted]. */
static const enum cli_option data_options[] = { CO_PAYLOAD,
    CO_PAYLOAD_TEMPLATE };

/* The row "--name" (len bytes) stands for as getopt_long reads it: the
 * exact name, else the one row it is a prefix of; NULL for none. */
static const struct cli_row *
row_named(const char *name, size_t len)
{
	const struct cli_row *found = NULL;
	size_t i, n = 0;

	for (i = 0; i < NROWS; i++) {
		if (strncmp(rows[i].name, name, len) != 0)
			continue;
		if (rows[i].name[len] == '\0')
			return &rows[i];
		found = &rows[i];
		n++;
	}
	return n == 1 ? found : NULL;
}

static int
data_option(const struct cli_row *r)
{
	size_t i;

	for (i = 0; r != NULL && i < sizeof data_options /
	    sizeof data_options[0]; i++)
		if (r->id == data_options[i])
			return 1;
	return 0;
}

/* Word w onto *s after a blank: as it is when the shell would read it
 * so, else in single quotes (' as '\''), so that the line reads back
 * as the words it was; with redact, its first keep bytes and the mark. */
static void
put_word(char **s, size_t *len, const char *w, size_t keep, int redact)
{
	static const char mark[] = "[redacted]";
	size_t n = redact ? keep : strlen(w), i;
	int quote = n == 0 && !redact;

	for (i = 0; i < n; i++)
		quote |= (unsigned char)w[i] < 0x80 && !isalnum((unsigned char)
		    w[i]) && strchr("-_./:=,@%+", w[i]) == NULL;
	*s = xrealloc(*s, *len + 4 * n + sizeof mark + 4);
	if (*len > 0)
		(*s)[(*len)++] = ' ';
	if (quote)
		(*s)[(*len)++] = '\'';
	for (i = 0; i < n; i++) {
		if (quote && w[i] == '\'') {
			memcpy(*s + *len, "'\\''", 4);
			*len += 4;
		} else
			(*s)[(*len)++] = w[i];
	}
	if (quote)
		(*s)[(*len)++] = '\'';
	if (redact) {
		memcpy(*s + *len, mark, sizeof mark - 1);
		*len += sizeof mark - 1;
	}
	(*s)[*len] = '\0';
}

char *
cli_command_line(int argc, char *const *argv)
{
	const struct cli_row *r;
	char *s = xstrdup("");
	size_t len = 0, name;
	int i, options = 1, next_is = 0;
	const char *eq;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (next_is) {	/* the value of the word before */
			put_word(&s, &len, w, 0, next_is > 1);
			next_is = 0;
			continue;
		}
		if (!options || strncmp(w, "--", 2) != 0 || i == 0) {
			put_word(&s, &len, w, 0, 0);
			continue;
		}
		if (w[2] == '\0') {
			options = 0;
			put_word(&s, &len, w, 0, 0);
			continue;
		}
		eq = strchr(w, '=');
		name = eq != NULL ? (size_t)(eq - w) - 2 : strlen(w) - 2;
		r = row_named(w + 2, name);
		put_word(&s, &len, w, eq != NULL ? (size_t)(eq - w) + 1 : 0,
		    eq != NULL && data_option(r));
		if (eq == NULL && r != NULL && takes_value(r))
			next_is = data_option(r) ? 2 : 1;
	}
	return s;
}
