/*
 * flow_key.c - N at a time per key: [type.NAME] concurrency_key and
 * key_concurrency (jobrun.conf(5)).
 *
 * A key's places, like a type's (flow.c), ARE its jobs in processing:
 * nothing is taken or freed but by the claim, the mark and recovery, so
 * no place leaks when a runner dies; its jobs hold their key until their
 * locks expire and recovery gives them back.  The key is read where it
 * lives, a JSON path into the payload (JSON_EXTRACT, the path bound as a
 * parameter) or a column (quoted; config_name.c lets only letters,
 * digits and "_" through), its first KEY_CHARS characters, and compared
 * by the server under that expression's collation: two keys are one
 * wherever the server's GROUP BY and IN say so.
 *
 * A keyed type is a limited type: its claim runs in flow control's
 * transaction, after its control row was locked, so every claimer of the
 * type on one server waits for the one before (and on Galera the write
 * of the row makes two claimers on two nodes conflict, one runs again).
 * Under that lock one statement chooses the first due job, in the
 * claim's order, whose key has fewer than N jobs in processing: the keys
 * at N are read once (a derived table over the type's processing rows,
 * idx_type_status, as many rows as the type has running), and the due
 * jobs of busy keys are passed over, not claimed and given back: a job
 * waiting for its key spends no attempt, and holds back no other key.
 * The job chosen is claimed by its id (queue_claim_job), an UPDATE that
 * checks again that it is pending and due.
 *
 * Priorities (sql/013) do not order a keyed type's claims: the choice is
 * in (next_run_at, id) order, read on from the job chosen last (a cursor,
 * KEY_HEAD_MS); with order = key always from the head, so that a key's
 * jobs run one after another in that order, whenever each was enqueued.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_key.h"
#include "util.h"

/* A key is its first KEY_CHARS characters: GROUP BY compares a long text
 * by its first max_sort_length bytes (1024 by default), and 255
 * characters of four bytes fit. */
#define KEY_CHARS "255"

/* Past the cursor (time, time, id): the rows after the last job claimed,
 * in the claim's order. */
#define PAST_CURSOR " AND (next_run_at > ? OR (next_run_at = ? AND id > ?))"

/* The choice starts from the head of the type's due jobs at least this
 * often (ms), else past the job it chose last: the due jobs of a busy key
 * before it are not read again at every claim.  A job before the cursor
 * whose key became free meanwhile waits at most this long more, unless
 * a job of the type that this run ran ends first (flow_keys_freed). */
#define KEY_HEAD_MS 1000

/* How many of its last claims a keyed type remembers the place of (a run
 * has at most CFG_JOBS_MAX in hand); a job ended that is not among them
 * sends the next choice to the head. */
#define KEY_CLAIMS_KEPT 256

/* The key of a row: (path) for a JSON path; %s the column, quoted. */
#define KEY_OF_PATH "LEFT(JSON_UNQUOTE(JSON_EXTRACT(payload, ?)), " \
	KEY_CHARS ")"
#define KEY_OF_COLUMN "LEFT(%s, " KEY_CHARS ")"

/* The first due job of the type whose key has room, in the claim's order,
 * and its next_run_at (the index for it, the cursor's condition or
 * nothing, and the key's expression between the parts; args: type, type,
 * [time, time, id,] [path,] [path,] type, type, N).  A job without a key
 * (NULL) has no key cap. */
static const char *const pick_parts[] = {
	"SELECT id, next_run_at FROM " QUEUE_JOBS_TABLE " FORCE INDEX (", NULL,
	") WHERE status = 'pending' AND type = ?"
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND next_run_at <= NOW()", NULL, " AND IFNULL(", NULL,
	" NOT IN (SELECT busy.k FROM (SELECT ", NULL,
	" AS k FROM " QUEUE_JOBS_TABLE " FORCE INDEX (idx_type_status)"
	" WHERE type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND status = 'processing' GROUP BY k"
	" HAVING COUNT(*) >= ? AND k IS NOT NULL) AS busy), TRUE)"
	" ORDER BY next_run_at, id LIMIT 1"
};
#define NPARTS (sizeof pick_parts / sizeof pick_parts[0])

/* The type's keys at their cap, and its due jobs that wait for one of
 * them (the key's expression between the parts; args: [path,] type, type,
 * N, [path,] type, type): what status shows. */
static const char *const load_parts[] = {
	"SELECT COUNT(*), IFNULL(SUM(waiting.n), 0) FROM (SELECT ", NULL,
	" AS k FROM " QUEUE_JOBS_TABLE " FORCE INDEX (idx_type_status)"
	" WHERE type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND status = 'processing' GROUP BY k"
	" HAVING COUNT(*) >= ? AND k IS NOT NULL) AS busy"
	" LEFT JOIN (SELECT ", NULL, " AS k, COUNT(*) AS n FROM "
	QUEUE_JOBS_TABLE " WHERE status = 'pending' AND type = ?"
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND next_run_at <= NOW() GROUP BY k) AS waiting"
	" ON waiting.k = busy.k"
};

/* MySQL's ER_INVALID_JSON_PATH, which MariaDB's headers lack. */
#define MYSQL_INVALID_JSON_PATH 3143

/* Whether the server takes a JSON path: 0 or 1 (whether "{}" has it: "$"
 * it has) for one it takes, NULL (with a warning, MariaDB) or an error
 * (MySQL) for one it does not. */
static const char path_text[] = "SELECT JSON_CONTAINS_PATH('{}', 'one', ?)";

struct keyed {
	const struct cfg_type *type;
	char *text, *after, *load;
	/* the last job chosen and claimed: next_run_at as the server wrote
	 * it, id; when the choice last started from the head */
	char at[32];
	uint64_t id;
	int64_t head_ms;
	/* where the jobs it claimed last stood, for flow_keys_freed */
	struct claimed_at {
		uint64_t id;
		char at[32];
	} claims[KEY_CLAIMS_KEPT];
	size_t next_claim;
};

enum { PICK_HEAD, PICK_AFTER, LOAD, KEY_STMTS };

struct flow_keys {
	struct queue *q;
	struct keyed *types;
	size_t n;
	/* the set's texts, purposes and tables: per type a choice from the
	 * head, one past the cursor and status's count (KEY_STMTS), then
	 * the path check */
	const char **texts, **purposes, **tables;
	struct queue_stmts *set;
};

/* The text of parts, its NULL places filled: the index to read and the
 * cursor's condition (cursor: PAST_CURSOR, else nothing) first when
 * pick, then t's key's expression in the others. */
static char *
text_for(struct queue *q, const struct cfg_type *t,
    const char *const *parts, size_t nparts, int pick, int cursor)
{
	char column[2 * CFG_KEY_COLUMN_MAX + 3], key[sizeof column + 32];
	const char *fill[4] = { key, key, key, key }, *part;
	size_t i, f = 0, len = 1;
	char *text;

	if (pick) {
		fill[0] = queue_type_index(q) ? "idx_type_pick" : "idx_pick";
		fill[1] = cursor ? PAST_CURSOR : "";
	}
	if (CFG_KEY_IS_PATH(t->flow.key))
		snprintf(key, sizeof key, "%s", KEY_OF_PATH);
	else {
		db_quote_ident(t->flow.key, column, sizeof column);
		snprintf(key, sizeof key, KEY_OF_COLUMN, column);
	}
	for (i = 0; i < nparts; i++)
		len += strlen(parts[i] != NULL ? parts[i] : fill[f++]);
	text = xcalloc(1, len);
	for (i = 0, f = 0; i < nparts; i++) {
		part = parts[i] != NULL ? parts[i] : fill[f++];
		strcat(text, part);
	}
	return text;
}

/* Type t's statements in k's set, at KEY_STMTS * j. */
static void
add_type(struct flow_keys *k, const struct cfg_type *t)
{
	struct keyed *kt = &k->types[k->n];
	size_t at = KEY_STMTS * k->n;

	kt->type = t;
	kt->text = text_for(k->q, t, pick_parts, NPARTS, 1, 0);
	kt->after = text_for(k->q, t, pick_parts, NPARTS, 1, 1);
	kt->load = text_for(k->q, t, load_parts, sizeof load_parts /
	    sizeof load_parts[0], 0, 0);
	k->texts[at + PICK_HEAD] = kt->text;
	k->texts[at + PICK_AFTER] = kt->after;
	k->texts[at + LOAD] = kt->load;
	k->purposes[at + PICK_HEAD] = "choose a job whose key has room";
	k->purposes[at + PICK_AFTER] = "choose a job whose key has room";
	k->purposes[at + LOAD] = "count the jobs waiting for a key";
	k->tables[at + PICK_HEAD] = k->tables[at + PICK_AFTER] =
	    k->tables[at + LOAD] = queue_name(k->q);
	k->n++;
}

struct flow_keys *
flow_keys_open(struct queue *q, const struct cfg *cfg)
{
	struct flow_keys *k;
	size_t i, n = 0;

	for (i = 0; i < cfg->ntypes; i++)
		n += cfg->types[i].flow.key != NULL;
	if (n == 0)
		return NULL;
	k = xcalloc(1, sizeof *k);
	k->q = q;
	k->types = xcalloc(n, sizeof *k->types);
	k->texts = xcalloc(KEY_STMTS * n + 1, sizeof *k->texts);
	k->purposes = xcalloc(KEY_STMTS * n + 1, sizeof *k->purposes);
	k->tables = xcalloc(KEY_STMTS * n + 1, sizeof *k->tables);
	for (i = 0; i < cfg->ntypes; i++)
		if (cfg->types[i].flow.key != NULL)
			add_type(k, &cfg->types[i]);
	k->texts[KEY_STMTS * n] = path_text;
	k->purposes[KEY_STMTS * n] = "check a concurrency_key";
	k->tables[KEY_STMTS * n] = NULL;
	k->set = queue_stmts_open(q, k->texts, k->purposes, k->tables,
	    KEY_STMTS * n + 1, NULL);
	return k;
}

void
flow_keys_close(struct flow_keys *k)
{
	size_t i;

	if (k == NULL)
		return;
	queue_stmts_close(k->set);
	for (i = 0; i < k->n; i++) {
		free(k->types[i].text);
		free(k->types[i].after);
		free(k->types[i].load);
	}
	free(k->types);
	free(k->texts);
	free(k->purposes);
	free(k->tables);
	free(k);
}

/* Whether the server takes t's JSON path. */
static enum db_status
check_path(struct flow_keys *k, const struct cfg_type *t, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(t->flow.key) };
	char *col = NULL;
	enum db_status st;
	int found;

	st = queue_stmts_one(k->set, KEY_STMTS * k->n, args, 1, &col, 1,
	    &found, err,
	    errlen);
	if (st == DB_OK && (!found || col == NULL)) {
		errf(err, errlen, "the server takes it for no JSON path");
		st = DB_SCHEMA;
	}
	free(col);
	return st;
}

enum db_status
flow_keys_check(struct flow_keys *k, char *err, size_t errlen)
{
	const struct cfg_type *t;
	enum db_status st = DB_OK;
	char cause[512];
	size_t i;

	for (i = 0; st == DB_OK && k != NULL && i < k->n; i++) {
		t = k->types[i].type;
		st = CFG_KEY_IS_PATH(t->flow.key) ? check_path(k, t, cause,
		    sizeof cause) : DB_OK;
		if (st == DB_OK)
			st = queue_stmts_prepare(k->set, KEY_STMTS * i,
			    cause, sizeof cause);
		/* An unknown column, or a path MySQL refuses (MariaDB
		 * answers NULL): the configuration's to fix. */
		if (st != DB_OK && (queue_last_errno(k->q) ==
		    ER_BAD_FIELD_ERROR || queue_last_errno(k->q) ==
		    MYSQL_INVALID_JSON_PATH))
			st = DB_SCHEMA;
		if (st != DB_OK)
			errf(err, errlen, "[type.%s] concurrency_key = %s: %s",
			    t->name, t->flow.key, cause);
	}
	return st;
}

/* The place of type among the keyed, or k->n. */
static size_t
index_of(const struct flow_keys *k, const char *type)
{
	size_t i;

	for (i = 0; k != NULL && i < k->n; i++)
		if (strcmp(k->types[i].type->name, type) == 0)
			return i;
	return k != NULL ? k->n : 0;
}

int
flow_keys_has(const struct flow_keys *k, const char *type)
{
	return k != NULL && index_of(k, type) < k->n;
}

/* The key's path (when it is one), then the type twice, into args. */
static unsigned
key_args(const struct cfg_type *t, struct db_arg *args)
{
	unsigned n = 0;

	if (CFG_KEY_IS_PATH(t->flow.key))
		args[n++] = DB_STR(t->flow.key);
	args[n++] = DB_STR(t->name);
	args[n++] = DB_STR(t->name);
	return n;
}

/* Run choice which (PICK_HEAD, PICK_AFTER) of keyed type kt, the i-th:
 * *id and *at (its next_run_at) the job chosen, *id 0 for none. */
static enum db_status
pick_run(struct flow_keys *k, size_t i, unsigned which, uint64_t *id,
    char *at, size_t atlen, char *err, size_t errlen)
{
	const struct keyed *kt = &k->types[i];
	const struct cfg_type *t = kt->type;
	char *cols[2] = { NULL, NULL };
	struct db_arg args[10];
	enum db_status st;
	unsigned n = 0;
	int found;

	args[n++] = DB_STR(t->name);
	args[n++] = DB_STR(t->name);
	if (which == PICK_AFTER) {
		args[n++] = DB_STR(kt->at);
		args[n++] = DB_STR(kt->at);
		args[n++] = DB_NUM(kt->id);
	}
	if (CFG_KEY_IS_PATH(t->flow.key))
		args[n++] = DB_STR(t->flow.key);
	n += key_args(t, args + n);
	args[n++] = DB_NUM(t->flow.key_concurrency);
	*id = 0;
	st = queue_stmts_one(k->set, KEY_STMTS * i + which, args, n, cols, 2,
	    &found, err, errlen);
	if (st == DB_OK && found && cols[1] != NULL) {
		*id = queue_number(cols[0]);
		snprintf(at, atlen, "%s", cols[1]);
	}
	db_free_cols(cols, 2);
	return st;
}

/* The choice for keyed type i: past the cursor while it is young, and
 * from the head when that finds none. */
static enum db_status
pick(struct flow_keys *k, size_t i, uint64_t *id, char *at, size_t atlen,
    char *err, size_t errlen)
{
	struct keyed *kt = &k->types[i];
	enum db_status st;

	/* order = key: from the head every time, so that a job of a key
	 * due before the cursor (enqueued since, or its key freed) comes
	 * first. */
	if (kt->id != 0 && !kt->type->flow.key_order &&
	    now_ms() - kt->head_ms < KEY_HEAD_MS) {
		st = pick_run(k, i, PICK_AFTER, id, at, atlen, err, errlen);
		if (st != DB_OK || *id != 0)
			return st;
	}
	kt->head_ms = now_ms();
	return pick_run(k, i, PICK_HEAD, id, at, atlen, err, errlen);
}

enum db_status
flow_keys_pick(struct flow_keys *k, const char *type, uint64_t *id,
    char *err, size_t errlen)
{
	size_t i = index_of(k, type);
	char at[32];

	*id = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	return pick(k, i, id, at, sizeof at, err, errlen);
}

/* Whether (at, id) comes before kt's cursor in the claim's order (the
 * server's DATETIME text sorts as its time). */
static int
before_cursor(const struct keyed *kt, const char *at, uint64_t id)
{
	int c = strcmp(at, kt->at);

	return c < 0 || (c == 0 && id < kt->id);
}

/* The key of the job that ended may have room now: its key's next job
 * comes after it, so the cursor moves back to it, not to the head (whose
 * rows may be another busy key's, many of them). */
void
flow_keys_freed(struct flow_keys *k, const char *type, uint64_t id)
{
	size_t i = index_of(k, type), j;
	struct keyed *kt;

	if (k == NULL || i >= k->n || k->types[i].id == 0)
		return;
	kt = &k->types[i];
	for (j = 0; j < KEY_CLAIMS_KEPT; j++)
		if (kt->claims[j].id == id && kt->claims[j].id != 0)
			break;
	if (j == KEY_CLAIMS_KEPT)
		kt->id = 0;
	else if (before_cursor(kt, kt->claims[j].at, id)) {
		memcpy(kt->at, kt->claims[j].at, sizeof kt->at);
		kt->id = id;
	}
}

enum db_status
flow_keys_load(struct flow_keys *k, const char *type, uint64_t *full,
    uint64_t *waiting, char *err, size_t errlen)
{
	size_t i = index_of(k, type);
	const struct cfg_type *t;
	struct db_arg args[7];
	char *cols[2] = { NULL, NULL };
	enum db_status st;
	unsigned n;
	int found;

	*full = *waiting = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	t = k->types[i].type;
	n = key_args(t, args);
	args[n++] = DB_NUM(t->flow.key_concurrency);
	n += key_args(t, args + n);
	st = queue_stmts_one(k->set, KEY_STMTS * i + LOAD, args, n, cols, 2,
	    &found, err,
	    errlen);
	*full = queue_number(cols[0]);
	*waiting = queue_number(cols[1]);
	db_free_cols(cols, 2);
	return st;
}

/* kt claimed job id, which stood at at: the cursor moves to it. */
static void
moved(struct keyed *kt, uint64_t id, const char *at)
{
	struct claimed_at *c = &kt->claims[kt->next_claim];

	kt->next_claim = (kt->next_claim + 1) % KEY_CLAIMS_KEPT;
	c->id = id;
	snprintf(c->at, sizeof c->at, "%s", at);
	snprintf(kt->at, sizeof kt->at, "%s", at);
	kt->id = id;
}

enum db_status
flow_keys_claim(struct flow_keys *k, const char *type,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, int *due, char *err, size_t errlen)
{
	size_t i = index_of(k, type);
	enum db_status st = DB_OK;
	int tries = 0;
	char at[32];
	uint64_t id;

	*claimed = *due = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	do {	/* taken by someone else between the choice and the claim */
		st = pick(k, i, &id, at, sizeof at, err, errlen);
		if (st == DB_OK && id != 0)
			st = queue_claim_job(k->q, id, lock_seconds, token, job,
			    claimed, err, errlen);
	} while (st == DB_OK && id != 0 && !*claimed && ++tries < 3);
	if (st == DB_OK && *claimed)
		moved(&k->types[i], id, at);
	else if (st == DB_OK)
		st = queue_type_due(k->q, type, due, err, errlen);
	return st;
}
