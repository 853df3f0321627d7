/*
 * cli.c - the command line.
 *
 * "jobrun [COMMAND] [OPTIONS] [OPERANDS]": the command is the first
 * argument that is not an option (before or after the options), "run" when
 * there is none.  One option table serves every command; each option says
 * which commands take it, so "jobrun run --payload=x" is a usage error
 * rather than silently ignored.
 */
#include <getopt.h>
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "utf8.h"
#include "util.h"

#define ON(c) (1u << (c))
#define FOR_ALL (ON(CMD_RUN) | ON(CMD_ENQUEUE) | ON(CMD_STATUS) | \
    ON(CMD_LIST) | ON(CMD_SHOW) | ON(CMD_RETRY) | ON(CMD_CANCEL) | \
    ON(CMD_PURGE) | ON(CMD_CHECK))
#define TYPED (ON(CMD_RUN) | ON(CMD_ENQUEUE) | ON(CMD_STATUS) | \
    ON(CMD_LIST) | ON(CMD_RETRY) | ON(CMD_PURGE))

enum opt_id {
	OPT_CONFIG = 'c', OPT_HELP = 'h', OPT_MAX = 'n', OPT_QUIET = 'q',
	OPT_TYPE = 't', OPT_VERBOSE = 'v', OPT_VERSION = 'V',
	OPT_JSON = 256, OPT_MAX_SECONDS, OPT_KEY, OPT_PAYLOAD,
	OPT_PAYLOAD_FILE, OPT_DELAY, OPT_MAX_ATTEMPTS, OPT_AT,
	OPT_KEY_PREFIX, OPT_RANGE, OPT_CHUNK, OPT_PAYLOAD_TEMPLATE,
	OPT_STATUS, OPT_LIMIT, OPT_BEFORE_ID, OPT_FAILED, OPT_FORCE,
	OPT_OLDER_THAN, OPT_DRY_RUN, OPT_SINGLE, OPT_LOG, OPT_METRICS_FILE,
	OPT_INCLUDE_CANCELLED,
};

struct opt {
	struct option lo;
	unsigned commands;
};

static const struct opt opts[] = {
	{ { "config", required_argument, NULL, OPT_CONFIG }, FOR_ALL },
	{ { "help", no_argument, NULL, OPT_HELP }, FOR_ALL },
	{ { "version", no_argument, NULL, OPT_VERSION }, FOR_ALL },
	{ { "json", no_argument, NULL, OPT_JSON }, FOR_ALL },
	{ { "quiet", no_argument, NULL, OPT_QUIET }, FOR_ALL },
	{ { "verbose", no_argument, NULL, OPT_VERBOSE }, FOR_ALL },
	{ { "type", required_argument, NULL, OPT_TYPE }, TYPED },
	{ { "max", required_argument, NULL, OPT_MAX }, ON(CMD_RUN) },
	{ { "max-seconds", required_argument, NULL, OPT_MAX_SECONDS },
	  ON(CMD_RUN) },
	{ { "single", no_argument, NULL, OPT_SINGLE }, ON(CMD_RUN) },
	{ { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	  ON(CMD_RUN) },
	{ { "log", required_argument, NULL, OPT_LOG }, FOR_ALL },
	{ { "key", required_argument, NULL, OPT_KEY },
	  ON(CMD_ENQUEUE) | ON(CMD_SHOW) },
	{ { "payload", required_argument, NULL, OPT_PAYLOAD },
	  ON(CMD_ENQUEUE) },
	{ { "payload-file", required_argument, NULL, OPT_PAYLOAD_FILE },
	  ON(CMD_ENQUEUE) },
	{ { "delay", required_argument, NULL, OPT_DELAY }, ON(CMD_ENQUEUE) },
	{ { "at", required_argument, NULL, OPT_AT }, ON(CMD_ENQUEUE) },
	{ { "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
	  ON(CMD_ENQUEUE) },
	{ { "key-prefix", required_argument, NULL, OPT_KEY_PREFIX },
	  ON(CMD_ENQUEUE) },
	{ { "range", required_argument, NULL, OPT_RANGE }, ON(CMD_ENQUEUE) },
	{ { "chunk", required_argument, NULL, OPT_CHUNK }, ON(CMD_ENQUEUE) },
	{ { "payload-template", required_argument, NULL,
	    OPT_PAYLOAD_TEMPLATE }, ON(CMD_ENQUEUE) },
	{ { "status", required_argument, NULL, OPT_STATUS },
	  ON(CMD_LIST) | ON(CMD_PURGE) },
	{ { "limit", required_argument, NULL, OPT_LIMIT }, ON(CMD_LIST) },
	{ { "before-id", required_argument, NULL, OPT_BEFORE_ID },
	  ON(CMD_LIST) },
	{ { "failed", no_argument, NULL, OPT_FAILED }, ON(CMD_RETRY) },
	{ { "force", no_argument, NULL, OPT_FORCE }, ON(CMD_RETRY) },
	{ { "include-cancelled", no_argument, NULL, OPT_INCLUDE_CANCELLED },
	  ON(CMD_RETRY) },
	{ { "older-than", required_argument, NULL, OPT_OLDER_THAN },
	  ON(CMD_PURGE) },
	{ { "dry-run", no_argument, NULL, OPT_DRY_RUN },
	  ON(CMD_PURGE) | ON(CMD_RETRY) },
};

#define NOPTS (sizeof opts / sizeof opts[0])

static const char *const command_names[] = {
	[CMD_RUN] = "run", [CMD_ENQUEUE] = "enqueue", [CMD_STATUS] = "status",
	[CMD_LIST] = "list", [CMD_SHOW] = "show", [CMD_RETRY] = "retry",
	[CMD_CANCEL] = "cancel", [CMD_PURGE] = "purge", [CMD_CHECK] = "check",
};

void
cli_usage(FILE *out)
{
	fputs(
"usage: jobrun [run] [--config=FILE] [--type=NAME] [--max=N]\n"
"              [--max-seconds=S] [--single] [--metrics-file=FILE]\n"
"              [--log=stderr|syslog] [--json] [-v] [-q]\n"
"       jobrun enqueue --type=NAME --key=KEY [--payload=JSON |\n"
"              --payload-file=FILE | -] [--delay=SECONDS | --at=DATETIME]\n"
"              [--max-attempts=N]\n"
"       jobrun enqueue --type=NAME --key-prefix=P --range=FROM-TO\n"
"              --chunk=N [--payload-template=JSON]\n"
"       jobrun status [--type=NAME]\n"
"       jobrun list [--status=S] [--type=NAME] [--limit=N] [--before-id=ID]\n"
"       jobrun show ID | --key=KEY\n"
"       jobrun retry ID... [--force]\n"
"       jobrun retry --failed [--type=NAME] [--include-cancelled] [--dry-run]\n"
"       jobrun cancel ID...\n"
"       jobrun purge --status=success|failed --older-than=DURATION\n"
"              [--type=NAME] [--dry-run]\n"
"       jobrun check\n"
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
"      --single          exit at once if another runner of this table (and\n"
"                        --type) is running ([run] single)\n"
"      --metrics-file=F  write Prometheus metrics of the run to F\n"
"                        ([run] metrics_file)\n"
"      --log=stderr|syslog  where messages go, for every command\n"
"                        ([run] log)\n"
"  -v, --verbose         a line per job on stderr (-vv: more)\n"
"  -q, --quiet           only fatal errors on stderr\n"
"\n"
"Exit status: 0 success (run: all claimed jobs succeeded or none was due);\n"
"1 a job was retried, failed or lost, or an operand was not acted on;\n"
"64 usage; 65 invalid payload or value; 66 payload file unreadable;\n"
"69 database or account unavailable (unreachable, login refused,\n"
"read-only, not answering); 70 internal error; 74 output error;\n"
"75 try again later (deadlock, lock wait, statement stopped by the\n"
"server); 77 privilege missing; 78 configuration or schema problem;\n"
"128+N stopped by signal N.  See jobrun(1).\n", out);
}

static int
find_command(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof command_names / sizeof command_names[0]; i++)
		if (command_names[i] != NULL &&
		    strcmp(command_names[i], word) == 0)
			return (int)i;
	return -1;
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
	case OPT_HELP: cli->command = CMD_HELP; return 0;
	case OPT_VERSION: cli->command = CMD_VERSION; return 0;
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
	case OPT_DRY_RUN: cli->dry_run = 1; return 0;
	case OPT_INCLUDE_CANCELLED: cli->include_cancelled = 1; return 0;
	case OPT_SINGLE: cli->single = 1; return 0;
	case OPT_METRICS_FILE: cli->metrics_file = arg; return 0;
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
static int
check_text(const char *option, const char *s, size_t max, char *err,
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
static int
valid_datetime(const char *s)
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

static int
check_ids(const struct cli *cli, char *err, size_t errlen)
{
	unsigned long id;
	int i;

	for (i = 0; i < cli->nargs; i++)
		if (parse_ulong(cli->args[i], 1, ULONG_MAX, &id) != 0)
			return errf(err, errlen, "not a job id: \"%s\"",
			    cli->args[i]);
	return 0;
}

static int
check_enqueue(const struct cli *cli, char *err, size_t errlen)
{
	int fan_out = cli->key_prefix != NULL || cli->has_range ||
	    cli->chunk != 0 || cli->payload_template != NULL;
	int from_stdin = cli->nargs == 1 && strcmp(cli->args[0], "-") == 0;

	if (cli->nargs > 1 || (cli->nargs == 1 && !from_stdin))
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[cli->nargs > 1 && from_stdin ? 1 : 0]);
	if (cli->type == NULL)
		return errf(err, errlen, "enqueue needs --type");
	if (cli->at != NULL && cli->has_delay)
		return errf(err, errlen, "--at and --delay exclude each other");
	if (cli->at != NULL && !valid_datetime(cli->at))
		return errf(err, errlen, "--at: not \"YYYY-MM-DD HH:MM:SS\": "
		    "\"%s\"", cli->at);
	if (fan_out) {
		if (cli->key != NULL || cli->payload != NULL ||
		    cli->payload_file != NULL || from_stdin)
			return errf(err, errlen, "--key-prefix/--range/--chunk "
			    "exclude --key and --payload*");
		if (cli->key_prefix == NULL || !cli->has_range ||
		    cli->chunk == 0)
			return errf(err, errlen, "a fan-out needs --key-prefix, "
			    "--range and --chunk");
		/* The longest key is "P:<to>-<to>". */
		return check_text("key-prefix", cli->key_prefix,
		    QUEUE_KEY_MAX - 42, err, errlen);
	}
	if (cli->key == NULL)
		return errf(err, errlen, "enqueue needs --key (or "
		    "--key-prefix, --range and --chunk)");
	if (check_text("key", cli->key, QUEUE_KEY_MAX, err, errlen) != 0)
		return -1;
	if ((cli->payload != NULL) + (cli->payload_file != NULL) +
	    from_stdin > 1)
		return errf(err, errlen,
		    "--payload, --payload-file and - exclude each other");
	return 0;
}

static int
one_of(const char *s, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

/* Checks that need the whole command line. */
static int
check(const struct cli *cli, char *err, size_t errlen)
{
	static const char *const statuses[] = { "pending", "processing",
	    "success", "failed", NULL };
	static const char *const finished[] = { "success", "failed", NULL };

	if (cli->quiet && cli->verbose)
		return errf(err, errlen, "-q and -v contradict each other");
	if (cli->type != NULL &&
	    check_text("type", cli->type, QUEUE_TYPE_MAX, err, errlen) != 0)
		return -1;
	switch (cli->command) {
	case CMD_ENQUEUE:
		return check_enqueue(cli, err, errlen);
	case CMD_LIST:
		if (cli->status != NULL && !one_of(cli->status, statuses))
			return errf(err, errlen, "--status: pending, "
			    "processing, success or failed, not \"%s\"",
			    cli->status);
		break;
	case CMD_SHOW:
		if ((cli->nargs == 1) == (cli->key != NULL) || cli->nargs > 1)
			return errf(err, errlen, "show needs one job id or "
			    "--key");
		if (cli->key != NULL)
			return check_text("key", cli->key, QUEUE_KEY_MAX, err,
			    errlen);
		return check_ids(cli, err, errlen);
	case CMD_RETRY:
		if ((cli->nargs > 0) == cli->failed)
			return errf(err, errlen, "retry needs job ids or "
			    "--failed");
		if (cli->type != NULL && !cli->failed)
			return errf(err, errlen, "--type goes with --failed");
		if (cli->force && cli->failed)
			return errf(err, errlen, "--force goes with job ids");
		if ((cli->include_cancelled || cli->dry_run) && !cli->failed)
			return errf(err, errlen, "%s goes with --failed",
			    cli->dry_run ? "--dry-run" : "--include-cancelled");
		return check_ids(cli, err, errlen);
	case CMD_CANCEL:
		if (cli->nargs == 0)
			return errf(err, errlen, "cancel needs job ids");
		return check_ids(cli, err, errlen);
	case CMD_PURGE:
		if (cli->status == NULL || !one_of(cli->status, finished))
			return errf(err, errlen, "purge needs --status=success "
			    "or --status=failed");
		if (!cli->has_older_than)
			return errf(err, errlen, "purge needs --older-than");
		break;
	default:
		break;
	}
	if (cli->nargs > 0)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[0]);
	return 0;
}

int
cli_parse(int argc, char **argv, struct cli *cli, char *err, size_t errlen)
{
	struct option lo[NOPTS + 1];
	unsigned char given[NOPTS] = { 0 };
	const struct opt *o;
	size_t i;
	int c, cmd = CMD_RUN;

	memset(cli, 0, sizeof *cli);
	for (i = 0; i < NOPTS; i++)
		lo[i] = opts[i].lo;
	memset(&lo[NOPTS], 0, sizeof lo[NOPTS]);
	optind = 0;	/* glibc: reinitialise fully */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:hn:qt:vV", lo, NULL)) != -1) {
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
			given[o - opts] = 1;
	}
	/* getopt moved the words to the end: the first is the command. */
	if (optind < argc) {
		cmd = find_command(argv[optind]);
		if (cmd < 0)
			return errf(err, errlen, "unknown command \"%s\"",
			    argv[optind]);
		optind++;
	}
	cli->args = argv + optind;
	cli->nargs = argc - optind;
	if (cli->command == CMD_HELP || cli->command == CMD_VERSION)
		return 0;
	for (i = 0; i < NOPTS; i++)
		if (given[i] && !(opts[i].commands & (1u << cmd)))
			return errf(err, errlen, "option --%s is not for "
			    "\"%s\"", opts[i].lo.name, command_names[cmd]);
	cli->command = (enum cli_command)cmd;
	if (cli->limit == 0)
		cli->limit = 20;
	return check(cli, err, errlen);
}
