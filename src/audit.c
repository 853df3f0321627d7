/*
 * audit.c - a record of operators' changes (sql/011_audit.sql) and
 * "jobrun audit".
 *
 * A change made with jobrun (retry, cancel, purge, pause, resume,
 * enqueue --again, a fan-out) leaves one row: who (the OS account and
 * host, the database account by CURRENT_USER()), what (the command line,
 * the jobs' data and the database password redacted), how many rows and
 * when (NOW(6), the database's clock).  The row is written in the
 * change's own transaction, through the queue's one helper: a change
 * whose row cannot be written is rolled back, so the record never misses
 * a change that was made.  A change in batches (retry --failed, purge, a
 * fan-out) is one row too: inserted in the first batch's transaction and
 * counted up in each later one's, so after a crash or a signal between
 * two batches the row says exactly what was committed.
 *
 * The table is optional.  Without it (or with no privilege on it at
 * all, which the server does not tell from absent: queue.h) commands
 * change what they changed before, each statement its own, and check
 * says that nothing is recorded.  With it there but INSERT or UPDATE not
 * granted, a change is refused before anything is touched: an operator
 * who installed the record means it to be complete.
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "handler.h"
#include "report.h"
#include "utf8.h"
#include "util.h"

/* The command line kept, in bytes (the column is a TEXT). */
#define AUDIT_COMMAND_MAX 8000
/* "every row": a DURATION of a hundred years */
#define AUDIT_ALWAYS 3153600000UL

enum audit_stmt { A_LIST, A_INSERT, A_ADD, A_COUNT_STMTS };

#define A_COLUMNS "id, at, os_user, host, db_user, command, job_table, changed"
enum { C_ID, C_AT, C_OS_USER, C_HOST, C_DB_USER, C_COMMAND, C_TABLE,
    C_CHANGED, C_COUNT };

static const char *const texts[A_COUNT_STMTS] = {
	/* (seconds, limit) */
	[A_LIST] = "SELECT " A_COLUMNS " FROM " QUEUE_OTHER_TABLE
	    " WHERE at >= NOW(6) - INTERVAL ? SECOND ORDER BY id DESC LIMIT ?",
	/* (os user, host, command, table, changed) */
	[A_INSERT] = "INSERT INTO " QUEUE_OTHER_TABLE " (at, os_user, host,"
	    " db_user, command, job_table, changed) VALUES (NOW(6), ?, ?,"
	    " CURRENT_USER(), ?, ?, ?)",
	/* (changed, id) */
	[A_ADD] = "UPDATE " QUEUE_OTHER_TABLE " SET changed = changed + ?"
	    " WHERE id = ?",
};

static const char *const purposes[A_COUNT_STMTS] = {
	[A_LIST] = "read operators' changes",
	[A_INSERT] = "record an operator's change",
	[A_ADD] = "count an operator's change",
};

/* The statements whose privileges jobrun uses on the table, the look
 * first. */
static const size_t uses[] = { A_LIST, A_INSERT, A_ADD };

static const struct queue_feature feature = {
	{ AUDIT_TABLE, NULL }, AUDIT_PRIVILEGES, AUDIT_MIGRATION
};

static struct queue_stmts *
open_set(struct queue *q)
{
	return queue_stmts_open(q, texts, purposes, NULL, A_COUNT_STMTS,
	    AUDIT_TABLE);
}

enum db_status
audit_access(struct queue *q, struct queue_access *a, char *err,
    size_t errlen)
{
	struct queue_stmts *set = open_set(q);
	enum db_status st;

	st = queue_stmts_reach(set, uses, sizeof uses / sizeof uses[0],
	    &a->reach, err, errlen);
	if (st == DB_OK && a->reach != QUEUE_REACHED)
		queue_access_say(q, a->reach, &feature, a);
	queue_stmts_close(set);
	return st;
}

/* The OS account (the effective user's name, else its number) and the
 * host's name. */
static void
who(struct audit *a)
{
	struct passwd *pw = getpwuid(geteuid());
	char uid[32];

	if (pw != NULL && pw->pw_name != NULL)
		a->os_user = utf8_narrow(pw->pw_name, strlen(pw->pw_name), 4);
	else {
		snprintf(uid, sizeof uid, "%lu", (unsigned long)geteuid());
		a->os_user = xstrdup(uid);
	}
	if (gethostname(a->host, sizeof a->host) != 0)
		snprintf(a->host, sizeof a->host, "?");
	a->host[sizeof a->host - 1] = '\0';
	utf8_sanitize(a->host, strlen(a->host));
}

/* c's command line as the row keeps it: the database password redacted
 * wherever it appears (typed by mistake as a key, say), bytes that are
 * not UTF-8 as '?', at most AUDIT_COMMAND_MAX bytes. */
static char *
command_text(const struct ctx *c)
{
	struct secrets s = { 0 };
	const char *line = c->command_line != NULL ? c->command_line : "";
	char *clean, *out;
	size_t len;

	secrets_add(&s, c->cfg.db.password);
	clean = secrets_redact(&s, line, strlen(line), &len);
	secrets_free(&s);
	len = utf8_head(clean, len, len, AUDIT_COMMAND_MAX);
	out = utf8_narrow(clean, len, 4);
	free(clean);
	return out;
}

enum db_status
audit_open(struct ctx *c, const char *table, struct audit *a, char *err,
    size_t errlen)
{
	struct queue_access acc;
	enum db_status st;

	memset(a, 0, sizeof *a);
	a->q = c->q;
	a->table = table;
	a->set = open_set(c->q);
	st = queue_stmts_reach(a->set, uses, sizeof uses / sizeof uses[0],
	    &acc.reach, err, errlen);
	if (st != DB_OK)
		return st;
	if (acc.reach == QUEUE_ABSENT || acc.reach == QUEUE_HIDDEN)
		return DB_OK;
	if (acc.reach == QUEUE_UNGRANTED) {
		queue_access_say(c->q, acc.reach, &feature, &acc);
		errf(err, errlen, "record the change in " AUDIT_TABLE ": %s; "
		    "nothing changed (%s)", acc.why, acc.fix);
		return DB_DENIED;
	}
	a->on = 1;
	a->command = command_text(c);
	who(a);
	return DB_OK;
}

void
audit_close(struct audit *a)
{
	queue_stmts_close(a->set);
	free(a->command);
	free(a->os_user);
	memset(a, 0, sizeof *a);
}

/* One run of audit_change's transaction. */
struct audit_trx {
	struct audit *a;
	enum db_status (*change)(void *, uint64_t *, char *, size_t);
	void (*undo)(void *);
	void *arg;
	uint64_t n;		/* what change said it changed */
	int inserted;		/* this run inserted the row */
};

static enum db_status
record(struct audit_trx *t, char *err, size_t errlen)
{
	struct audit *a = t->a;
	struct db_arg add[2] = { DB_NUM(t->n), DB_NUM(a->id) };
	struct db_arg row[5] = { DB_STR(a->os_user), DB_STR(a->host),
	    DB_STR(a->command), DB_STR(a->table), DB_NUM(t->n) };
	enum db_status st;

	if (a->id != 0)
		return t->n == 0 ? DB_OK : queue_stmts_run(a->set, A_ADD, add,
		    2, err, errlen);
	st = queue_stmts_run(a->set, A_INSERT, row, 5, err, errlen);
	if (st == DB_OK) {
		a->id = queue_stmts_insert_id(a->set, A_INSERT);
		t->inserted = 1;
	}
	return st;
}

static enum db_status
trx_body(void *arg, struct queue_witness *w, char *err, size_t errlen)
{
	struct audit_trx *t = arg;
	enum db_status st;

	/* No witness: as for every transaction without one, a COMMIT
	 * whose answer was lost is taken as kept, not run again (that
	 * would change, and record, twice). */
	(void)w;
	t->n = 0;
	t->inserted = 0;
	st = t->change(t->arg, &t->n, err, errlen);
	return st == DB_OK ? record(t, err, errlen) : st;
}

static void
trx_undo(void *arg, enum db_status st)
{
	struct audit_trx *t = arg;

	(void)st;
	if (t->inserted)
		t->a->id = 0;	/* rolled back with the change */
	t->inserted = 0;
	if (t->undo != NULL)
		t->undo(t->arg);
}

enum db_status
audit_change(struct audit *a, enum db_status (*change)(void *, uint64_t *,
    char *, size_t), void (*undo)(void *), void *arg, char *err,
    size_t errlen)
{
	struct audit_trx t = { a, change, undo, arg, 0, 0 };
	struct queue_trx trx = { trx_body, trx_undo, NULL, &t,
	    QUEUE_CONFLICT_RETRIES, 0, 0 };
	enum db_status st;

	if (!a->on)
		st = change(arg, &t.n, err, errlen);
	else
		st = queue_trx(a->q, &trx, err, errlen);
	if (st == DB_OK)
		a->changed += t.n;
	return st;
}

/* --- reading the record -------------------------------------------------- */

static void
row_of(char **cols, struct audit_row *r)
{
	r->id = queue_number(cols[C_ID]);
	r->at = cols[C_AT] != NULL ? cols[C_AT] : "";
	r->os_user = cols[C_OS_USER] != NULL ? cols[C_OS_USER] : "";
	r->host = cols[C_HOST] != NULL ? cols[C_HOST] : "";
	r->db_user = cols[C_DB_USER] != NULL ? cols[C_DB_USER] : "";
	r->command = cols[C_COMMAND] != NULL ? cols[C_COMMAND] : "";
	r->table = cols[C_TABLE] != NULL ? cols[C_TABLE] : "";
	r->changed = queue_number(cols[C_CHANGED]);
}

enum db_status
audit_list(struct queue *q, unsigned long since, unsigned long limit,
    void (*fn)(void *, const struct audit_row *), void *arg, int *present,
    char *err, size_t errlen)
{
	struct db_arg args[2] = { DB_NUM(since != 0 ? since : AUDIT_ALWAYS),
	    DB_NUM(limit) };
	char *cols[C_COUNT] = { NULL };
	struct queue_stmts *set = open_set(q);
	struct audit_row r;
	enum db_status st;
	int rc;

	st = queue_stmts_run(set, A_LIST, args, 2, err, errlen);
	*present = st == DB_OK;
	while (st == DB_OK && (rc = queue_stmts_fetch(set, A_LIST, cols,
	    C_COUNT, err, errlen)) != 0) {
		if (rc < 0) {
			st = DB_ERROR;
			break;
		}
		row_of(cols, &r);
		fn(arg, &r);
		db_free_cols(cols, C_COUNT);
	}
	db_free_cols(cols, C_COUNT);
	queue_stmts_close(set);
	if (st != DB_OK && queue_unseen(q, st))
		st = DB_OK;
	return st;
}

json_t *
audit_row_json(const struct audit_row *r)
{
	json_t *doc = json_pack("{s:I,s:s,s:o,s:o,s:o,s:o,s:o,s:I}", "id",
	    (json_int_t)r->id, "at", r->at, "os_user",
	    report_text(r->os_user, strlen(r->os_user)), "host",
	    report_text(r->host, strlen(r->host)), "db_user",
	    report_text(r->db_user, strlen(r->db_user)), "command",
	    report_text(r->command, strlen(r->command)), "table",
	    report_text(r->table, strlen(r->table)), "changed",
	    (json_int_t)r->changed);

	return doc;
}

/* The end of the word of command that starts at s: a blank outside
 * single quotes (cli_command_line's quoting), or the end. */
static const char *
word_end(const char *s)
{
	int quoted = 0;

	for (; *s != '\0' && (quoted || *s != ' '); s++)
		if (*s == '\'')
			quoted = !quoted;
	return s;
}

/* The option that "--" name (n bytes) gives, as getopt_long reads it:
 * the one of that exact name, else the one only whose name starts so;
 * -1 for none or several. */
static int
long_option(const char *name, size_t n)
{
	int found = -1, i, matches = 0;

	for (i = 0; i < CO_COUNT; i++) {
		const char *full = cli_option_name((enum cli_option)i);

		if (strncmp(full, name, n) != 0)
			continue;
		if (full[n] == '\0')
			return i;
		found = i;
		matches++;
	}
	return n > 0 && matches == 1 ? found : -1;
}

/* Whether list (cli_complete_options' lines after a newline) has the
 * line "<dashes><name>=": the option takes a value. */
static int
takes_value(const char *list, const char *dashes, const char *name)
{
	char line[64];

	snprintf(line, sizeof line, "\n%s%s=\n", dashes, name);
	return strstr(list, line) != NULL;
}

/* The options that take a value, as "\n--name=\n" and "\n-X=\n" lines
 * (cli_complete_options, every option, hidden ones aside: none of them
 * takes a value); "\n" if they cannot be listed. */
static char *
value_options(void)
{
	char *list = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&list, &size);

	if (f == NULL)
		return xstrdup("\n");
	fputc('\n', f);
	cli_complete_options(f, ~0ULL);
	if (fclose(f) != 0 || list == NULL) {
		free(list);
		return xstrdup("\n");
	}
	return list;
}

/* How the option word w (n bytes, a leading quote of cli_command_line's
 * aside) reads as getopt_long would take it: *keep the bytes shown from
 * *from (the whole word, none, or a bundle's short options before -c:
 * letters, shown unquoted), *next
 * whether the next word is an option's value and *config whether that
 * value is the configuration file's. */
static void
option_word(const char *list, const char *w, size_t n, const char **from,
    size_t *keep, int *next, int *config)
{
	const char *s = w;
	size_t len = n, i;
	int o;

	*from = w;
	*keep = n;
	*next = *config = 0;
	if (len > 0 && *s == '\'')
		s++, len--;
	if (len >= 2 && s[0] == '-' && s[1] == '-') {
		size_t name = strcspn(s + 2, "=");
		int eq;

		if (name > len - 2)
			name = len - 2;
		eq = name < len - 2;
		if ((o = long_option(s + 2, name)) < 0)
			return;
		if (o == CO_CONFIG)
			*keep = 0;
		if (!eq && takes_value(list, "--", cli_option_name(
		    (enum cli_option)o))) {
			*next = 1;
			*config = o == CO_CONFIG;
		}
		return;
	}
	if (len < 2 || s[0] != '-')
		return;
	for (i = 1; i < len; i++) {
		char letter[2] = { s[i], '\0' };

		if (!takes_value(list, "-", letter))
			continue;
		if (s[i] == 'c') {	/* the rest, or the next word */
			*from = s;
			*keep = i == 1 ? 0 : i;
		}
		*next = i + 1 == len;
		*config = *next && s[i] == 'c';
		return;
	}
}

char *
audit_shown_command(const char *command)
{
	const char *w = word_end(command), *end, *from;
	char *out = xmalloc(strlen(command) + sizeof "jobrun");
	char *list = value_options();
	size_t len = strlen("jobrun"), n, keep;
	int value = 0, skip = 0, options = 1, next, config;

	memcpy(out, "jobrun", len);
	for (; *w == ' '; w = end) {
		end = word_end(++w);
		n = (size_t)(end - w);
		from = w;
		keep = n;
		if (value) {		/* an option's value */
			keep = skip ? 0 : n;
			value = skip = 0;
		} else if (n == 2 && memcmp(w, "--", 2) == 0) {
			options = 0;
		} else if (options) {
			option_word(list, w, n, &from, &keep, &next, &config);
			value = next;
			skip = config;
		}
		if (keep == 0)
			continue;
		out[len++] = ' ';
		memcpy(out + len, from, keep);
		len += keep;
	}
	out[len] = '\0';
	free(list);
	return out;
}

json_t *
audit_report_json(const struct audit_row *r)
{
	char *shown = audit_shown_command(r->command);
	json_t *doc = json_pack("{s:I,s:s,s:o,s:o,s:I}", "id",
	    (json_int_t)r->id, "at", r->at, "os_user",
	    report_text(r->os_user, strlen(r->os_user)), "command",
	    report_text(shown, strlen(shown)), "changed",
	    (json_int_t)r->changed);

	free(shown);
	return doc;
}

/* --- jobrun audit ---------------------------------------------------------- */

struct audit_listing {
	json_t *rows;		/* --json */
	unsigned long n;
};

static void
on_row(void *arg, const struct audit_row *r)
{
	struct audit_listing *l = arg;
	char *user, *host, *db_user, *command;

	l->n++;
	if (l->rows != NULL) {
		json_array_append_new(l->rows, audit_row_json(r));
		return;
	}
	user = utf8_escape_dup(r->os_user, 0);
	host = utf8_escape_dup(r->host, 0);
	db_user = utf8_escape_dup(r->db_user, 0);
	command = utf8_escape_dup(r->command, 0);
	printf("%llu  %s  %s@%s (%s)  %s: %llu row%s  %s\n",
	    (unsigned long long)r->id, r->at, user, host, db_user, r->table,
	    (unsigned long long)r->changed, r->changed == 1 ? "" : "s",
	    command);
	free(user);
	free(host);
	free(db_user);
	free(command);
}

int
cmd_audit_check(const struct cli *cli, char *err, size_t errlen)
{
	if (cli->nargs > 0)
		return errf(err, errlen, "unexpected argument \"%s\"",
		    cli->args[0]);
	return 0;
}

int
cmd_audit(struct ctx *c)
{
	/* --since alone: every row since; else the last --limit. */
	unsigned long limit = c->cli.has_since &&
	    !(c->cli.given & CLI_OPT(CO_LIMIT)) ? ULONG_MAX : c->cli.limit;
	struct audit_listing l = { c->cli.json ? json_array() : NULL, 0 };
	char err[1024];
	enum db_status st;
	int present = 0;

	st = audit_list(c->q, c->cli.since, limit, on_row, &l, &present, err,
	    sizeof err);
	if (st != DB_OK) {
		json_decref(l.rows);
		cmd_db_error(c, st, err);
		return cmd_exit_for(st);
	}
	if (!present) {
		json_decref(l.rows);
		log_msg(&c->lg, LV_ERROR, "audit: no table " AUDIT_TABLE
		    " (or no privilege on it): apply " AUDIT_MIGRATION
		    " and grant " AUDIT_PRIVILEGES " on it");
		return EX_CONFIG;
	}
	if (l.rows != NULL)
		report_json(json_pack("{s:o}", "changes", l.rows));
	else if (l.n == 0)
		printf("no changes\n");
	return EX_OK;
}
