/*
 * cli.c - the command line.
 *
 * "jobrun [COMMAND] [OPTIONS] [OPERANDS]": the command is the first
 * argument that is not an option (before or after the options), "run" when
 * there is none.  One option table serves every command; each command's
 * row in commands.c says which options it takes, so "jobrun run
 * --payload=x" is a usage error rather than silently ignored.
 */
#include <getopt.h>
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "utf8.h"
#include "util.h"

enum opt_id {
	OPT_CONFIG = 'c', OPT_HELP = 'h', OPT_JOBS = 'j', OPT_MAX = 'n',
	OPT_QUIET = 'q',
	OPT_TYPE = 't', OPT_VERBOSE = 'v', OPT_VERSION = 'V',
	OPT_JSON = 256, OPT_MAX_SECONDS, OPT_KEY, OPT_PAYLOAD,
	OPT_PAYLOAD_FILE, OPT_DELAY, OPT_MAX_ATTEMPTS, OPT_AT,
	OPT_KEY_PREFIX, OPT_RANGE, OPT_CHUNK, OPT_PAYLOAD_TEMPLATE,
	OPT_STATUS, OPT_LIMIT, OPT_BEFORE_ID, OPT_FAILED, OPT_FORCE,
	OPT_OLDER_THAN, OPT_DRY_RUN, OPT_SINGLE, OPT_LOG, OPT_METRICS_FILE,
	OPT_INCLUDE_CANCELLED, OPT_HTML, OPT_AGAIN, OPT_THEN, OPT_KEYS_FROM,
};

struct opt {
	struct option lo;
	enum cli_option bit;
};

static const struct opt opts[] = {
	{ { "config", required_argument, NULL, OPT_CONFIG }, CO_CONFIG },
	{ { "help", no_argument, NULL, OPT_HELP }, CO_HELP },
	{ { "version", no_argument, NULL, OPT_VERSION }, CO_VERSION },
	{ { "json", no_argument, NULL, OPT_JSON }, CO_JSON },
	{ { "quiet", no_argument, NULL, OPT_QUIET }, CO_QUIET },
	{ { "verbose", no_argument, NULL, OPT_VERBOSE }, CO_VERBOSE },
	{ { "log", required_argument, NULL, OPT_LOG }, CO_LOG },
	{ { "type", required_argument, NULL, OPT_TYPE }, CO_TYPE },
	{ { "max", required_argument, NULL, OPT_MAX }, CO_MAX },
	{ { "max-seconds", required_argument, NULL, OPT_MAX_SECONDS },
	  CO_MAX_SECONDS },
	{ { "jobs", required_argument, NULL, OPT_JOBS }, CO_JOBS },
	{ { "single", no_argument, NULL, OPT_SINGLE }, CO_SINGLE },
	{ { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	  CO_METRICS_FILE },
	{ { "key", required_argument, NULL, OPT_KEY }, CO_KEY },
	{ { "payload", required_argument, NULL, OPT_PAYLOAD }, CO_PAYLOAD },
	{ { "payload-file", required_argument, NULL, OPT_PAYLOAD_FILE },
	  CO_PAYLOAD_FILE },
	{ { "delay", required_argument, NULL, OPT_DELAY }, CO_DELAY },
	{ { "at", required_argument, NULL, OPT_AT }, CO_AT },
	{ { "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
	  CO_MAX_ATTEMPTS },
	{ { "key-prefix", required_argument, NULL, OPT_KEY_PREFIX },
	  CO_KEY_PREFIX },
	{ { "range", required_argument, NULL, OPT_RANGE }, CO_RANGE },
	{ { "chunk", required_argument, NULL, OPT_CHUNK }, CO_CHUNK },
	{ { "payload-template", required_argument, NULL,
	    OPT_PAYLOAD_TEMPLATE }, CO_PAYLOAD_TEMPLATE },
	{ { "status", required_argument, NULL, OPT_STATUS }, CO_STATUS },
	{ { "limit", required_argument, NULL, OPT_LIMIT }, CO_LIMIT },
	{ { "before-id", required_argument, NULL, OPT_BEFORE_ID },
	  CO_BEFORE_ID },
	{ { "failed", no_argument, NULL, OPT_FAILED }, CO_FAILED },
	{ { "force", no_argument, NULL, OPT_FORCE }, CO_FORCE },
	{ { "include-cancelled", no_argument, NULL, OPT_INCLUDE_CANCELLED },
	  CO_INCLUDE_CANCELLED },
	{ { "older-than", required_argument, NULL, OPT_OLDER_THAN },
	  CO_OLDER_THAN },
	{ { "dry-run", no_argument, NULL, OPT_DRY_RUN }, CO_DRY_RUN },
	{ { "html", required_argument, NULL, OPT_HTML }, CO_HTML },
	{ { "again", no_argument, NULL, OPT_AGAIN }, CO_AGAIN },
	{ { "then", required_argument, NULL, OPT_THEN }, CO_THEN },
	{ { "keys-from", required_argument, NULL, OPT_KEYS_FROM },
	  CO_KEYS_FROM },
};

#define NOPTS (sizeof opts / sizeof opts[0])

const char *
cli_option_name(enum cli_option o)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].bit == o)
			return opts[i].lo.name;
	return "?";
}

void
cli_usage_options(FILE *out)
{
	fputs(
"       jobrun --help | --version\n"
"\n"
"Runs due jobs from a MariaDB/MySQL table: recovers expired locks, claims\n"
"jobs one at a time, runs each type's handler and records the outcome.\n"
"Every command takes --config=FILE (default $JOBRUN_CONFIG or\n"
"/etc/jobrun.conf) and --json (machine-readable output on stdout).\n"
"\n"
"  -t, --type=NAME       only jobs of this type\n"
"  -n, --max=N           claim at most N jobs ([run] batch_size)\n"
"      --max-seconds=S   stop claiming after S seconds ([run] max_seconds)\n"
"  -j, --jobs=N          run up to N handlers at once ([run] jobs)\n"
"      --single          exit at once if another runner of this table (and\n"
"                        --type) is running ([run] single)\n"
"      --metrics-file=F  write Prometheus metrics of the run to F\n"
"                        ([run] metrics_file)\n"
"      --html=FILE       report: write the queue's state as one HTML page to\n"
"                        FILE (- for standard output)\n"
"      --log=stderr|syslog  where messages go, for every command\n"
"                        ([run] log)\n"
"  -v, --verbose         a line per job on stderr (-vv: more)\n"
"  -q, --quiet           only fatal errors on stderr\n"
"\n"
"Exit status: 0 success (run: all claimed jobs succeeded or none was due);\n"
"1 a job was retried, failed or lost, or an operand was not acted on;\n"
"64 usage; 65 invalid payload or value; 66 payload file unreadable;\n"
"69 database or account unavailable (unreachable, login refused,\n"
"read-only, not answering); 70 internal error; 74 output error (or\n"
"report's page not written);\n"
"75 try again later (deadlock, lock wait, statement stopped by the\n"
"server); 77 privilege missing; 78 configuration or schema problem;\n"
"128+N stopped by signal N.  See jobrun(1).\n", out);
}

static const struct opt *
find_opt(int id)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].lo.val == id)
			return &opts[i];
	return NULL;
}

static int
number(const char *name, const char *value, unsigned long min,
    unsigned long max, unsigned long *out, char *err, size_t errlen)
{
	if (parse_ulong(value, min, max, out) != 0)
		return errf(err, errlen, "--%s: not a number in %lu..%lu: "
		    "\"%s\"", name, min, max, value);
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

static int
apply(struct cli *cli, int id, const char *arg, char *err, size_t errlen)
{
	switch (id) {
	case OPT_CONFIG: cli->config = arg; return 0;
	case OPT_HELP: cli->help = 1; return 0;
	case OPT_VERSION: cli->version = 1; return 0;
	case OPT_JSON: cli->json = 1; return 0;
	case OPT_QUIET: cli->quiet = 1; return 0;
	case OPT_VERBOSE: cli->verbose++; return 0;
	case OPT_KEY: cli->key = arg; return 0;
	case OPT_PAYLOAD: cli->payload = arg; return 0;
	case OPT_PAYLOAD_FILE: cli->payload_file = arg; return 0;
	case OPT_TYPE: cli->type = arg; return 0;
	case OPT_MAX:
		cli->has_max = 1;
		return number("max", arg, 1, 1000000, &cli->max, err, errlen);
	case OPT_MAX_SECONDS:
		cli->has_max_seconds = 1;
		return number("max-seconds", arg, 1, 86400, &cli->max_seconds,
		    err, errlen);
	case OPT_JOBS:
		cli->has_jobs = 1;
		return number("jobs", arg, 1, CFG_JOBS_MAX, &cli->jobs, err,
		    errlen);
	case OPT_DELAY:
		cli->has_delay = 1;
		return number("delay", arg, 0, 315360000, &cli->delay, err,
		    errlen);
	case OPT_MAX_ATTEMPTS:
		return number("max-attempts", arg, 1, 1000000,
		    &cli->max_attempts, err, errlen);
	case OPT_AT: cli->at = arg; return 0;
	case OPT_KEY_PREFIX: cli->key_prefix = arg; return 0;
	case OPT_PAYLOAD_TEMPLATE: cli->payload_template = arg; return 0;
	case OPT_STATUS: cli->status = arg; return 0;
	case OPT_FAILED: cli->failed = 1; return 0;
	case OPT_FORCE: cli->force = 1; return 0;
	case OPT_AGAIN: cli->again = 1; return 0;
	case OPT_THEN: cli->then_type = arg; return 0;
	case OPT_KEYS_FROM: cli->keys_from = arg; return 0;
	case OPT_DRY_RUN: cli->dry_run = 1; return 0;
	case OPT_INCLUDE_CANCELLED: cli->include_cancelled = 1; return 0;
	case OPT_SINGLE: cli->single = 1; return 0;
	case OPT_METRICS_FILE: cli->metrics_file = arg; return 0;
	case OPT_HTML: cli->html = arg; return 0;
	case OPT_LOG:
		if (strcmp(arg, "stderr") != 0 && strcmp(arg, "syslog") != 0)
			return errf(err, errlen, "--log: stderr or syslog, not "
			    "\"%s\"", arg);
		cli->log = arg;
		return 0;
	case OPT_RANGE:
		cli->has_range = 1;
		return range(arg, cli, err, errlen);
	case OPT_CHUNK:
		return number("chunk", arg, 1, 100000000, &cli->chunk, err,
		    errlen);
	case OPT_LIMIT:
		return number("limit", arg, 1, 100000, &cli->limit, err,
		    errlen);
	case OPT_BEFORE_ID:
		return number("before-id", arg, 1, ULONG_MAX, &cli->before_id,
		    err, errlen);
	case OPT_OLDER_THAN:
		cli->has_older_than = 1;
		if (cli_duration(arg, &cli->older_than) != 0)
			return errf(err, errlen, "--older-than: not a "
			    "duration such as 3600, 90m, 12h, 30d or 2w: "
			    "\"%s\"", arg);
		return 0;
	default:
		return errf(err, errlen, "unknown option");
	}
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

int
cli_parse(int argc, char **argv, struct cli *cli, char *err, size_t errlen)
{
	struct option lo[NOPTS + 1];
	const struct opt *o;
	size_t i;
	int c;

	memset(cli, 0, sizeof *cli);
	for (i = 0; i < NOPTS; i++)
		lo[i] = opts[i].lo;
	memset(&lo[NOPTS], 0, sizeof lo[NOPTS]);
	optind = 0;	/* glibc: reinitialise fully */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:hj:n:qt:vV", lo, NULL)) != -1) {
		if (c == '?' || c == ':') {
			o = optopt != 0 ? find_opt(optopt) : NULL;
			if (o != NULL && o->lo.has_arg == no_argument)
				return errf(err, errlen, "option --%s takes "
				    "no value", o->lo.name);
			if (o != NULL)
				return errf(err, errlen, "option %s needs a "
				    "value", argv[optind - 1]);
			return errf(err, errlen, "unknown option %s",
			    argv[optind - 1]);
		}
		if (apply(cli, c, optarg, err, errlen) != 0)
			return -1;
		if ((o = find_opt(c)) != NULL)
			cli->given |= CLI_OPT(o->bit);
	}
	/* getopt moved the words to the end: the first is the command. */
	cli->command = "run";
	if (optind < argc)
		cli->command = argv[optind++];
	cli->args = argv + optind;
	cli->nargs = argc - optind;
	if (cli->limit == 0)
		cli->limit = 20;
	return 0;
}
