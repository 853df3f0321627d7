/*
 * cli.c - the command line.
 *
 * "jobrun [COMMAND] [OPTIONS]": the command is the first argument that is
 * not an option (before or after the options), "run" when there is none.  One option table serves every
 * command; each option says which commands take it, so "jobrun run
 * --payload=x" is a usage error rather than silently ignored.
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "utf8.h"
#include "util.h"

#define FOR_RUN (1u << CMD_RUN)
#define FOR_ENQUEUE (1u << CMD_ENQUEUE)
#define FOR_ALL (FOR_RUN | FOR_ENQUEUE)

enum opt_id {
	OPT_CONFIG = 'c', OPT_HELP = 'h', OPT_MAX = 'n', OPT_QUIET = 'q',
	OPT_TYPE = 't', OPT_VERBOSE = 'v', OPT_VERSION = 'V',
	OPT_JSON = 256, OPT_MAX_SECONDS, OPT_KEY, OPT_PAYLOAD,
	OPT_PAYLOAD_FILE, OPT_DELAY, OPT_MAX_ATTEMPTS,
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
	{ { "type", required_argument, NULL, OPT_TYPE }, FOR_ALL },
	{ { "max", required_argument, NULL, OPT_MAX }, FOR_RUN },
	{ { "max-seconds", required_argument, NULL, OPT_MAX_SECONDS },
	  FOR_RUN },
	{ { "key", required_argument, NULL, OPT_KEY }, FOR_ENQUEUE },
	{ { "payload", required_argument, NULL, OPT_PAYLOAD }, FOR_ENQUEUE },
	{ { "payload-file", required_argument, NULL, OPT_PAYLOAD_FILE },
	  FOR_ENQUEUE },
	{ { "delay", required_argument, NULL, OPT_DELAY }, FOR_ENQUEUE },
	{ { "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
	  FOR_ENQUEUE },
};

#define NOPTS (sizeof opts / sizeof opts[0])

static const char *const command_names[] = {
	[CMD_RUN] = "run", [CMD_ENQUEUE] = "enqueue",
};

void
cli_usage(FILE *out)
{
	fputs(
"usage: jobrun [run] [--config=FILE] [--type=NAME] [--max=N]\n"
"              [--max-seconds=S] [--json] [-v] [-q]\n"
"       jobrun enqueue --type=NAME --key=KEY [--payload=JSON |\n"
"              --payload-file=FILE] [--delay=SECONDS] [--max-attempts=N]\n"
"              [--config=FILE] [--json]\n"
"       jobrun --help | --version\n"
"\n"
"Runs due jobs from a MariaDB/MySQL table: recovers expired locks, claims\n"
"jobs one at a time, runs each type's handler and records the outcome.\n"
"\n"
"  -c, --config=FILE     configuration (default $JOBRUN_CONFIG or\n"
"                        /etc/jobrun.conf)\n"
"  -t, --type=NAME       only jobs of this type\n"
"  -n, --max=N           claim at most N jobs ([run] batch_size)\n"
"      --max-seconds=S   stop claiming after S seconds ([run] max_seconds)\n"
"      --json            print a JSON summary on stdout\n"
"  -v, --verbose         a line per job on stderr (-vv: more)\n"
"  -q, --quiet           only fatal errors on stderr\n"
"\n"
"Exit status: 0 all claimed jobs succeeded or none was due; 1 a job was\n"
"retried, failed or lost; 64 usage; 65 invalid payload; 66 payload file\n"
"unreadable; 69 database unreachable or refused; 70 internal error;\n"
"78 configuration error.  See jobrun(1).\n", out);
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
		return number("delay", arg, 0, 315360000, &cli->delay, err,
		    errlen);
	case OPT_MAX_ATTEMPTS:
		return number("max-attempts", arg, 1, 1000000,
		    &cli->max_attempts, err, errlen);
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

/* Checks that need the whole command line. */
static int
check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->quiet && cli->verbose)
		return errf(err, errlen, "-q and -v contradict each other");
	if (cli->type != NULL &&
	    check_text("type", cli->type, QUEUE_TYPE_MAX, err, errlen) != 0)
		return -1;
	if (cli->command != CMD_ENQUEUE)
		return 0;
	if (cli->type == NULL || cli->key == NULL)
		return errf(err, errlen, "enqueue needs --type and --key");
	if (check_text("key", cli->key, QUEUE_KEY_MAX, err, errlen) != 0)
		return -1;
	if (cli->payload != NULL && cli->payload_file != NULL)
		return errf(err, errlen,
		    "--payload and --payload-file exclude each other");
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
	if (optind < argc)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    argv[optind]);
	if (cli->command == CMD_HELP || cli->command == CMD_VERSION)
		return 0;
	for (i = 0; i < NOPTS; i++)
		if (given[i] && !(opts[i].commands & (1u << cmd)))
			return errf(err, errlen, "option --%s is not for "
			    "\"%s\"", opts[i].lo.name, command_names[cmd]);
	cli->command = (enum cli_command)cmd;
	return check(cli, err, errlen);
}
