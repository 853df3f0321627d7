/*
 * enqueue_check.c - what "jobrun enqueue" accepts on its command line,
 * checked before any connection: one job or a fan-out, never both, and
 * each option's value.
 */
#include <string.h>

#include "command.h"
#include "queue.h"
#include "util.h"

/* A key prefix names every key of a fan-out, and with --then the fan-in
 * that status and metrics print: besides cli_check_text's rules it holds
 * no control character (C0, DEL, C1), which a terminal would act on. */
static int
check_key_prefix(const char *prefix, size_t max, char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)prefix;
	size_t i;

	if (cli_check_text("key-prefix", prefix, max, err, errlen) != 0)
		return -1;
	for (i = 0; p[i] != '\0'; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return errf(err, errlen, "--key-prefix: control "
			    "character \\x%02x at byte %zu", p[i], i + 1);
		if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			return errf(err, errlen, "--key-prefix: control "
			    "character \\u%04x at byte %zu", p[i + 1], i + 1);
	}
	return 0;
}

/* --deadline: a duration, not shorter than --delay, or a DATETIME. */
static int
check_deadline(const struct cli *cli, char *err, size_t errlen)
{
	unsigned long secs;

	size_t len = strlen(cli->deadline);

	if (cli_valid_datetime(cli->deadline))
		return 0;
	/* A bare number is refused, as --older-than's: 30 may mean days. */
	if (cli_duration(cli->deadline, &secs) != 0 || len == 0 ||
	    (cli->deadline[len - 1] >= '0' && cli->deadline[len - 1] <= '9'))
		return errf(err, errlen, "--deadline: not a duration with its "
		    "unit (90s, 90m, 12h, 30d, 2w) or \"YYYY-MM-DD "
		    "HH:MM:SS\": \"%s\"", cli->deadline);
	if (cli->at == NULL && secs < cli->delay)
		return errf(err, errlen, "--deadline: %lu s from now is before "
		    "the job is due (--delay=%lu): it would never run", secs,
		    cli->delay);
	return 0;
}

/* --priority: a whole number the column (a SMALLINT) holds. */
static int
check_priority(const char *text, char *err, size_t errlen)
{
	long v;

	if (parse_long(text, PRIORITY_LOW, PRIORITY_HIGH, &v) != 0)
		return errf(err, errlen, "--priority: not a whole number in "
		    "%d..%d: \"%s\"", PRIORITY_LOW, PRIORITY_HIGH, text);
	return 0;
}

/* enqueue: one job (--key, a payload from one place) or a fan-out
 * (--key-prefix, --range, --chunk), never both. */
int
cmd_enqueue_check(const struct cli *cli, char *err, size_t errlen)
{
	int fan_out = cli->key_prefix != NULL || cli->has_range ||
	    cli->chunk != 0 || cli->payload_template != NULL ||
	    cli->keys_from != NULL;
	int from_stdin = cli->nargs == 1 && strcmp(cli->args[0], "-") == 0;

	if (cli->nargs > 1 || (cli->nargs == 1 && !from_stdin))
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[cli->nargs > 1 && from_stdin ? 1 : 0]);
	if (cli->type == NULL)
		return errf(err, errlen, "enqueue needs --type");
	if (cli->at != NULL && cli->has_delay)
		return errf(err, errlen, "--at and --delay exclude each other");
	if (cli->at != NULL && !cli_valid_datetime(cli->at))
		return errf(err, errlen, "--at: not \"YYYY-MM-DD HH:MM:SS\": "
		    "\"%s\"", cli->at);
	if (cli->deadline != NULL && check_deadline(cli, err, errlen) != 0)
		return -1;
	if (cli->priority != NULL && check_priority(cli->priority, err,
	    errlen) != 0)
		return -1;
	if (fan_out) {
		if (cli->key != NULL || cli->payload != NULL ||
		    cli->payload_file != NULL || from_stdin)
			return errf(err, errlen, "--key-prefix/--range/--chunk "
			    "exclude --key and --payload*");
		if (cli->again)
			return errf(err, errlen, "--again is for one job "
			    "(--key), not a fan-out");
		if (cli->then_type != NULL && cli_check_text("then",
		    cli->then_type, QUEUE_TYPE_MAX, err, errlen) != 0)
			return -1;
		if (cli->keys_from != NULL && (cli->has_range ||
		    cli->chunk != 0))
			return errf(err, errlen, "--keys-from excludes --range "
			    "and --chunk");
		if (cli->keys_from != NULL && cli->key_prefix == NULL)
			return errf(err, errlen, "--keys-from needs "
			    "--key-prefix");
		if (cli->keys_from != NULL)
			return check_key_prefix(cli->key_prefix,
			    QUEUE_KEY_MAX - 2, err, errlen);
		if (cli->key_prefix == NULL || !cli->has_range ||
		    cli->chunk == 0)
			return errf(err, errlen, "a fan-out needs --key-prefix, "
			    "--range and --chunk");
		/* The longest key is "P:<to>-<to>". */
		return check_key_prefix(cli->key_prefix, QUEUE_KEY_MAX - 42,
		    err, errlen);
	}
	if (cli->then_type != NULL)
		return errf(err, errlen, "--then is for a fan-out "
		    "(--key-prefix, --range, --chunk)");
	if (cli->key == NULL)
		return errf(err, errlen, "enqueue needs --key (or "
		    "--key-prefix, --range and --chunk)");
	if (cli_check_text("key", cli->key, QUEUE_KEY_MAX, err, errlen) != 0)
		return -1;
	if ((cli->payload != NULL) + (cli->payload_file != NULL) +
	    from_stdin > 1)
		return errf(err, errlen,
		    "--payload, --payload-file and - exclude each other");
	return 0;
}
