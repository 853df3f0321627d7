/*
 * cli.h - the command line, parsed into a struct.
 *
 * This file knows the options, one row each in cli.c: the row drives the
 * parsing, the option's help line and its completion.  Which command
 * takes which, and what each command makes of its operands, is the
 * commands table's (commands.c).
 */
#ifndef JOBRUN_CLI_H
#define JOBRUN_CLI_H

#include <stddef.h>
#include <stdio.h>

/* The options, a bit each: a command's row says which it takes. */
enum cli_option {
	CO_CONFIG, CO_HELP, CO_VERSION, CO_JSON, CO_QUIET, CO_VERBOSE,
	CO_LOG, CO_TYPE, CO_MAX, CO_MAX_SECONDS, CO_JOBS, CO_SINGLE,
	CO_WAIT, CO_METRICS_FILE,
	CO_KEY, CO_PAYLOAD, CO_PAYLOAD_FILE, CO_DELAY, CO_AT,
	CO_MAX_ATTEMPTS, CO_KEY_PREFIX, CO_RANGE, CO_CHUNK,
	CO_PAYLOAD_TEMPLATE, CO_STATUS, CO_LIMIT, CO_BEFORE_ID, CO_FAILED,
	CO_FORCE, CO_INCLUDE_CANCELLED, CO_OLDER_THAN, CO_DRY_RUN,
	CO_HTML, CO_AGAIN, CO_SINCE, CO_THEN, CO_KEYS_FROM, CO_DEADLINE,
	CO_PRIORITY,
	CO_COMPLETION_HELPER,
	CO_COUNT
};

#define CLI_OPT(o) (1ULL << (o))
/* Every command takes these (--completion-helper is hidden). */
#define CLI_COMMON (CLI_OPT(CO_CONFIG) | CLI_OPT(CO_HELP) | \
    CLI_OPT(CO_VERSION) | CLI_OPT(CO_JSON) | CLI_OPT(CO_QUIET) | \
    CLI_OPT(CO_VERBOSE) | CLI_OPT(CO_LOG) | CLI_OPT(CO_COMPLETION_HELPER))

/* Everything the command line can say; NULL or 0 when not given. */
struct cli {
	const char *command;		/* the command word; "run" if none */
	int command_named;		/* command came from argv, not the
					 * default */
	int help, version;		/* --help, --version */
	int completion_helper;		/* --completion-helper, for the bash
					 * completion */
	unsigned long long given;	/* CLI_OPT bits of the options given */
	const char *config;
	const char *type;
	const char *key;
	const char *payload;
	const char *payload_file;	/* "-" for stdin */
	const char *at;			/* enqueue --at, "YYYY-MM-DD HH:MM:SS" */
	const char *deadline;		/* enqueue --deadline, as written */
	const char *priority;		/* enqueue --priority, as written */
	const char *key_prefix;		/* enqueue fan-out */
	const char *payload_template;
	const char *status;		/* list, purge */
	unsigned long range_from, range_to, chunk;
	int has_range;
	unsigned long max, max_seconds, delay, max_attempts, jobs;
	int has_max, has_max_seconds, has_delay, has_jobs;
	unsigned long limit, before_id, older_than, since;
	int has_older_than, has_since;
	int failed;			/* retry --failed */
	int force;			/* retry, pause, resume --force */
	int again;			/* enqueue --again */
	const char *then_type;		/* enqueue --then */
	const char *keys_from;		/* enqueue --keys-from, "-": stdin */
	int dry_run;			/* purge, retry --failed --dry-run */
	int include_cancelled;		/* retry --failed --include-cancelled */
	int single;			/* run --single */
	int wait;			/* run --wait */
	const char *metrics_file;	/* run --metrics-file */
	const char *html;		/* report --html, "-" for stdout */
	const char *log;		/* "stderr" or "syslog" */
	int json;
	int verbose;			/* -v count */
	int quiet;			/* -q count */
	char **args;			/* operands: job ids */
	int nargs;
};

/* Parse argv's options and find the command word (not checked against
 * the commands).  0 on success; -1 with err for a usage error.  Resets
 * getopt, so it can be called more than once. */
int cli_parse(int argc, char **argv, struct cli *cli, char *err,
              size_t errlen);

/* The long name of option o ("max-seconds"). */
const char *cli_option_name(enum cli_option o);

/* Checks that hold for every command: -q with -v, a --type that fits
 * its column. */
int cli_check_common(const struct cli *cli, char *err, size_t errlen);

/* --OPTION's value s: 1..max characters of UTF-8 the utf8mb4 column
 * accepts. */
int cli_check_text(const char *option, const char *s, size_t max,
                   char *err, size_t errlen);

/* Every operand a job id. */
int cli_check_ids(const struct cli *cli, char *err, size_t errlen);

/* Whether s reads "YYYY-MM-DD HH:MM[:SS]" (or with a T). */
int cli_valid_datetime(const char *s);

/* Whether s is one of the NULL-ended set. */
int cli_one_of(const char *s, const char *const *set);

/* Parse a duration such as 3600, 90s, 45m, 12h, 30d or 2w into seconds;
 * -1 when it is not one. */
int cli_duration(const char *s, unsigned long *seconds);

/* The help lines of the options in the CLI_OPT bits, in the table's
 * order, hidden ones left out. */
void cli_usage_options(FILE *out, unsigned long long options);

/* The long names of the options in the CLI_OPT bits, one a line, with a
 * trailing "=" when the option takes a value (git's completion helper
 * format), hidden ones left out; then "-X=" for each short name that
 * takes a value. */
void cli_complete_options(FILE *out, unsigned long long options);

/* argv[0..argc-1] (as given, before cli_parse reorders it) joined by
 * blanks, the values of the options that carry jobs' data (--payload,
 * --payload-template) written "[redacted]"; malloc'ed. */
char *cli_command_line(int argc, char *const *argv);

#endif
