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

/* Places in a statement's parts that text_for fills: the key's
 * expression, the index to read, and the cursor's condition (or
 * nothing). */
static const char KEY[] = "key", INDEX[] = "index", CURSOR[] = "cursor";

/* The type's due jobs, in the claim's order (args: type, type, [time,
 * time, id]) */
#define DUE_FROM " FROM " QUEUE_JOBS_TABLE " FORCE INDEX (", INDEX, \
	") WHERE status = 'pending' AND type = ?" \
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)" \
	" AND next_run_at <= NOW()", CURSOR
/* The type's jobs in processing, by key (args: type, type) */
#define RUNNING_FROM " FROM " QUEUE_JOBS_TABLE " FORCE INDEX (idx_type_status)" \
	" WHERE type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)" \
	" AND status = 'processing' GROUP BY k"
/* ... whose key is not at its cap (args: [path,] [path,] type, type, N) */
#define KEY_HAS_ROOM " AND IFNULL(", KEY, " NOT IN (SELECT busy.k FROM" \
	" (SELECT ", KEY, " AS k" RUNNING_FROM " HAVING COUNT(*) >= ?" \
	" AND k IS NOT NULL) AS busy), TRUE)"

/* The first due job of the type whose key has room, in the claim's order,
 * and its next_run_at (args: type, type, [time, time, id,] [path,]
 * [path,] type, type, N).  A job without a key (NULL) has no key cap. */
static const char *const pick_parts[] = {
	"SELECT id, next_run_at" DUE_FROM, KEY_HAS_ROOM,
	" ORDER BY next_run_at, id LIMIT 1"
};
#define NPARTS (sizeof pick_parts / sizeof pick_parts[0])

/* A look while every due job's key was busy (flow.c's look_keys), in
 * one statement: the first due job whose key has room now, read from the
 * head, and a row (0, NULL) when the type has any due job at all, which
 * tells a wait from a type with nothing left due (args: type, type,
 * [path,] [path,] type, type, N, type, type). */
static const char *const look_parts[] = {
	"(SELECT id, next_run_at" DUE_FROM, KEY_HAS_ROOM,
	" ORDER BY next_run_at, id LIMIT 1) UNION ALL (SELECT 0, NULL"
	DUE_FROM, " LIMIT 1)"
};
#define NLOOK (sizeof look_parts / sizeof look_parts[0])

/* The first M due jobs, in the claim's order, that their keys have room
 * for, counting each key's jobs in processing and those before it among
 * the chosen: of the first L due jobs whose keys are not at their cap,
 * a key's first N less its running ones (args: [path,] type, type,
 * [time, time, id,] [path,] [path,] type, type, N, L, [path,] type, type,
 * N, M).  The server partitions and joins by key under the key's
 * collation, as it groups. */
static const char *const many_parts[] = {
	"SELECT c.id, c.next_run_at FROM (SELECT d.id, d.next_run_at, d.k,"
	" ROW_NUMBER() OVER (PARTITION BY d.k ORDER BY d.next_run_at, d.id)"
	" AS rn FROM (SELECT id, next_run_at, ", KEY, " AS k" DUE_FROM,
	KEY_HAS_ROOM, " ORDER BY next_run_at, id LIMIT ?) AS d) AS c"
	" LEFT JOIN (SELECT ", KEY, " AS k, COUNT(*) AS n" RUNNING_FROM
	") AS running ON running.k = c.k"
	" WHERE c.k IS NULL OR c.rn + IFNULL(running.n, 0) <= ?"
	" ORDER BY c.next_run_at, c.id LIMIT ?"
};
#define NMANY (sizeof many_parts / sizeof many_parts[0])

/* The same with key_concurrency = 1, the default: a key that has room has
 * no job in processing, so the chosen are each key's first, and the
 * type's processing rows are read once, not twice (args: [path,] type,
 * type, [time, time, id,] [path,] [path,] type, type, 1, L, M). */
static const char *const many_one_parts[] = {
	"SELECT c.id, c.next_run_at FROM (SELECT d.id, d.next_run_at, d.k,"
	" ROW_NUMBER() OVER (PARTITION BY d.k ORDER BY d.next_run_at, d.id)"
	" AS rn FROM (SELECT id, next_run_at, ", KEY, " AS k" DUE_FROM,
	KEY_HAS_ROOM, " ORDER BY next_run_at, id LIMIT ?) AS d) AS c"
	" WHERE c.k IS NULL OR c.rn = 1"
	" ORDER BY c.next_run_at, c.id LIMIT ?"
};
#define NMANY_ONE (sizeof many_one_parts / sizeof many_one_parts[0])

/* The type's keys at their cap, and its due jobs that wait for one of
 * them (args: [path,] type, type, N, [path,] type, type): what status
 * shows. */
static const char *const load_parts[] = {
	"SELECT COUNT(*), IFNULL(SUM(waiting.n), 0) FROM (SELECT ", KEY,
	" AS k" RUNNING_FROM " HAVING COUNT(*) >= ? AND k IS NOT NULL) AS busy"
	" LEFT JOIN (SELECT ", KEY, " AS k, COUNT(*) AS n FROM "
	QUEUE_JOBS_TABLE " WHERE status = 'pending' AND type = ?"
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND next_run_at <= NOW() GROUP BY k) AS waiting"
	" ON waiting.k = busy.k"
};
#define NLOAD (sizeof load_parts / sizeof load_parts[0])

/* Due jobs a choice of M reads at most past those of busy keys: M times
 * this (a key's further jobs among them are passed over). */
#define MANY_READ 4

/* MySQL's ER_INVALID_JSON_PATH, which MariaDB's headers lack. */
#define MYSQL_INVALID_JSON_PATH 3143

/* Whether the server takes a JSON path: 0 or 1 (whether "{}" has it: "$"
 * it has) for one it takes, NULL (with a warning, MariaDB) or an error
 * (MySQL) for one it does not. */
static const char path_text[] = "SELECT JSON_CONTAINS_PATH('{}', 'one', ?)";

/* A keyed type's statements in the set, KEY_STMTS of them: a choice of
 * one and of many, each from the head and past the cursor, status's
 * count, and the look. */
enum { PICK_HEAD, PICK_AFTER, MANY_HEAD, MANY_AFTER, LOAD, LOOK,
	KEY_STMTS };

struct keyed {
	const struct cfg_type *type;
	char *texts[KEY_STMTS];
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

struct flow_keys {
	struct queue *q;
	struct keyed *types;
	size_t n;
	/* the set's texts, purposes and tables: per type KEY_STMTS, then
	 * the path check */
	const char **texts, **purposes, **tables;
	struct queue_stmts *set;
	int one_at_a_time;	/* the server refused the choice of many */
};

/* The text of parts for keyed type t, its places filled (KEY, INDEX,
 * CURSOR: PAST_CURSOR when cursor, else nothing). */
static char *
text_for(struct queue *q, const struct cfg_type *t,
    const char *const *parts, size_t nparts, int cursor)
{
	char column[2 * CFG_KEY_COLUMN_MAX + 3], key[sizeof column + 32];
	const char *index = queue_type_index(q) ? "idx_type_pick" : "idx_pick";
	const char *part[16];
	size_t i, len = 1;
	char *text;

	if (CFG_KEY_IS_PATH(t->flow.key))
		snprintf(key, sizeof key, "%s", KEY_OF_PATH);
	else {
		db_quote_ident(t->flow.key, column, sizeof column);
		snprintf(key, sizeof key, KEY_OF_COLUMN, column);
	}
	for (i = 0; i < nparts && i < 16; i++) {
		part[i] = parts[i] == KEY ? key : parts[i] == INDEX ? index :
		    parts[i] == CURSOR ? (cursor ? PAST_CURSOR : "") : parts[i];
		len += strlen(part[i]);
	}
	text = xcalloc(1, len);
	for (i = 0; i < nparts && i < 16; i++)
		strcat(text, part[i]);
	return text;
}

/* Type t's statements in k's set, at KEY_STMTS * j. */
static void
add_type(struct flow_keys *k, const struct cfg_type *t)
{
	static const char *const purpose[KEY_STMTS] = {
		[PICK_HEAD] = "choose a job whose key has room",
		[PICK_AFTER] = "choose a job whose key has room",
		[MANY_HEAD] = "choose jobs whose keys have room",
		[MANY_AFTER] = "choose jobs whose keys have room",
		[LOAD] = "count the jobs waiting for a key",
		[LOOK] = "look for a job whose key has room",
	};
	struct keyed *kt = &k->types[k->n];
	size_t at = KEY_STMTS * k->n, i;

	kt->type = t;
	kt->texts[PICK_HEAD] = text_for(k->q, t, pick_parts, NPARTS, 0);
	kt->texts[PICK_AFTER] = text_for(k->q, t, pick_parts, NPARTS, 1);
	if (t->flow.key_concurrency == 1) {
		kt->texts[MANY_HEAD] = text_for(k->q, t, many_one_parts,
		    NMANY_ONE, 0);
		kt->texts[MANY_AFTER] = text_for(k->q, t, many_one_parts,
		    NMANY_ONE, 1);
	} else {
		kt->texts[MANY_HEAD] = text_for(k->q, t, many_parts, NMANY,
		    0);
		kt->texts[MANY_AFTER] = text_for(k->q, t, many_parts, NMANY,
		    1);
	}
	kt->texts[LOAD] = text_for(k->q, t, load_parts, NLOAD, 0);
	kt->texts[LOOK] = text_for(k->q, t, look_parts, NLOOK, 0);
	for (i = 0; i < KEY_STMTS; i++) {
		k->texts[at + i] = kt->texts[i];
		k->purposes[at + i] = purpose[i];
		k->tables[at + i] = queue_name(k->q);
	}
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
	size_t i, j;

	if (k == NULL)
		return;
	queue_stmts_close(k->set);
	for (i = 0; i < k->n; i++)
		for (j = 0; j < KEY_STMTS; j++)
			free(k->types[i].texts[j]);
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
		/* A server without window functions chooses one at a time. */
		if (st == DB_OK && queue_stmts_prepare(k->set, KEY_STMTS * i +
		    MANY_HEAD, cause, sizeof cause) != DB_OK)
			k->one_at_a_time = 1;
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

/* A choice's place in the claim's order. */
struct chosen {
	uint64_t id;
	char at[32];	/* next_run_at, as the server wrote it */
};

/* Run choice which of keyed type i (PICK_* and LOOK for one, MANY_* for
 * up to want): the jobs chosen into out, *n of them, of *rows read
 * (rows may be NULL). */
static enum db_status
choose_run(struct flow_keys *k, size_t i, unsigned which,
    struct chosen *out, size_t want, size_t *n, size_t *rows, char *err,
    size_t errlen)
{
	const struct keyed *kt = &k->types[i];
	const struct cfg_type *t = kt->type;
	int many = which == MANY_HEAD || which == MANY_AFTER;
	char *cols[2] = { NULL, NULL };
	struct db_arg args[20];
	enum db_status st;
	unsigned nargs = 0;
	int rc;

	if (many && CFG_KEY_IS_PATH(t->flow.key))
		args[nargs++] = DB_STR(t->flow.key);
	args[nargs++] = DB_STR(t->name);
	args[nargs++] = DB_STR(t->name);
	if (which == PICK_AFTER || which == MANY_AFTER) {
		args[nargs++] = DB_STR(kt->at);
		args[nargs++] = DB_STR(kt->at);
		args[nargs++] = DB_NUM(kt->id);
	}
	if (CFG_KEY_IS_PATH(t->flow.key))
		args[nargs++] = DB_STR(t->flow.key);
	nargs += key_args(t, args + nargs);
	args[nargs++] = DB_NUM(t->flow.key_concurrency);
	if (many)
		args[nargs++] = DB_NUM(want * MANY_READ);
	if (many && t->flow.key_concurrency != 1) {	/* many_parts */
		nargs += key_args(t, args + nargs);
		args[nargs++] = DB_NUM(t->flow.key_concurrency);
	}
	if (many)
		args[nargs++] = DB_NUM(want);
	if (which == LOOK) {
		args[nargs++] = DB_STR(t->name);
		args[nargs++] = DB_STR(t->name);
	}
	*n = 0;
	if (rows != NULL)
		*rows = 0;
	st = queue_stmts_run(k->set, KEY_STMTS * i + which, args, nargs, err,
	    errlen);
	while (st == DB_OK && (rc = queue_stmts_fetch(k->set,
	    KEY_STMTS * i + which, cols, 2, err, errlen)) != 0) {
		if (rc < 0)
			st = DB_ERROR;
		else if (rows != NULL)
			(*rows)++;
		if (rc > 0 && *n < want && cols[1] != NULL) {
			out[*n].id = queue_number(cols[0]);
			snprintf(out[*n].at, sizeof out[*n].at, "%s", cols[1]);
			(*n)++;
		}
		db_free_cols(cols, 2);
	}
	return st;
}

/* The choice for keyed type i, of one (want 1) or of many: past the
 * cursor while it is young, and from the head when that finds none. */
static enum db_status
choose(struct flow_keys *k, size_t i, struct chosen *out, size_t want,
    size_t *n, char *err, size_t errlen)
{
	struct keyed *kt = &k->types[i];
	unsigned head = want > 1 ? MANY_HEAD : PICK_HEAD;
	enum db_status st;

	/* order = key: from the head every time, so that a job of a key
	 * due before the cursor (enqueued since, or its key freed) comes
	 * first. */
	if (kt->id != 0 && !kt->type->flow.key_order &&
	    now_ms() - kt->head_ms < KEY_HEAD_MS) {
		st = choose_run(k, i, head + 1, out, want, n, NULL, err,
		    errlen);
		if (st != DB_OK || *n != 0)
			return st;
	}
	kt->head_ms = now_ms();
	return choose_run(k, i, head, out, want, n, NULL, err, errlen);
}

enum db_status
flow_keys_pick(struct flow_keys *k, const char *type, uint64_t *id,
    int *due, char *err, size_t errlen)
{
	size_t i = index_of(k, type), n = 0, rows = 0;
	struct chosen c = { 0, "" };
	enum db_status st;

	*id = 0;
	*due = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	st = choose_run(k, i, LOOK, &c, 1, &n, &rows, err, errlen);
	*id = n > 0 ? c.id : 0;
	*due = rows > 0;
	return st;
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

/* kt claimed job c: the cursor moves to it. */
static void
moved(struct keyed *kt, const struct chosen *c)
{
	struct claimed_at *to = &kt->claims[kt->next_claim];

	kt->next_claim = (kt->next_claim + 1) % KEY_CLAIMS_KEPT;
	to->id = c->id;
	snprintf(to->at, sizeof to->at, "%s", c->at);
	snprintf(kt->at, sizeof kt->at, "%s", c->at);
	kt->id = c->id;
}

/* Claim up to 1 + extra->want jobs of keyed type i: one choice, then
 * one claim of them all (queue_claim_jobs). */
static enum db_status
claim_many(struct flow_keys *k, size_t i, unsigned long lock_seconds,
    const char *token, struct job *job, int *claimed,
    struct flow_extra *extra, char *err, size_t errlen)
{
	struct chosen c[1 + FLOW_EXTRA_MAX];
	const char *tokens[1 + FLOW_EXTRA_MAX];
	struct job *jobs[1 + FLOW_EXTRA_MAX];
	uint64_t ids[1 + FLOW_EXTRA_MAX];
	enum db_status st;
	size_t n = 0, j;

	st = choose(k, i, c, 1 + extra->want, &n, err, errlen);
	if (st != DB_OK || n == 0)
		return st;
	for (j = 0; j < n; j++) {
		ids[j] = c[j].id;
		tokens[j] = j == 0 ? token : extra->tokens[j - 1];
		jobs[j] = j == 0 ? job : &extra->jobs[j - 1];
		memset(jobs[j], 0, sizeof *jobs[j]);
	}
	st = queue_claim_jobs(k->q, ids, n, lock_seconds, tokens, jobs, err,
	    errlen);
	if (st != DB_OK) {
		/* What was read is freed with the rest (flow_extra_drop). */
		extra->got = n - 1;
		*claimed = jobs[0]->type != NULL;
		return st;
	}
	*claimed = 1;
	extra->got = n - 1;
	for (j = 0; j < n; j++)
		moved(&k->types[i], &c[j]);
	return st;
}

/* Whether a claim of t may take more than one job: not beside a cap or a
 * rate of its own (flow.c counts one start a claim), nor on Galera. */
static int
claims_many(struct flow_keys *k, const struct cfg_type *t,
    const struct flow_extra *extra)
{
	return extra != NULL && extra->want > 0 && !k->one_at_a_time &&
	    !t->flow.concurrency && !t->flow.rate && queue_many_claims(k->q);
}

enum db_status
flow_keys_claim(struct flow_keys *k, const char *type,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, int *due, struct flow_extra *extra, char *err,
    size_t errlen)
{
	size_t i = index_of(k, type), n = 0;
	enum db_status st = DB_OK;
	struct chosen c;
	int tries = 0;

	*claimed = *due = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	if (claims_many(k, k->types[i].type, extra))
		st = claim_many(k, i, lock_seconds, token, job, claimed, extra,
		    err, errlen);
	else
		do {	/* taken by someone else between choice and claim */
			st = choose(k, i, &c, 1, &n, err, errlen);
			if (st == DB_OK && n != 0)
				st = queue_claim_job(k->q, c.id, lock_seconds,
				    token, job, claimed, err, errlen);
			if (st == DB_OK && *claimed)
				moved(&k->types[i], &c);
		} while (st == DB_OK && n != 0 && !*claimed && ++tries < 3);
	if (st == DB_OK && !*claimed)
		st = queue_type_due(k->q, type, due, err, errlen);
	return st;
}

void
flow_extra_drop(struct flow_extra *extra)
{
	size_t j;

	for (j = 0; extra != NULL && j < extra->got; j++)
		queue_job_free(&extra->jobs[j]);
	if (extra != NULL)
		extra->got = 0;
}

enum db_status
flow_extra_release(struct queue *q, struct flow_extra *extra, char *err,
    size_t errlen)
{
	enum db_status st = DB_OK;
	size_t j;
	int owned;

	for (j = 0; extra != NULL && st == DB_OK && j < extra->got; j++)
		st = queue_release(q, &extra->jobs[j], extra->tokens[j],
		    &owned, err, errlen);
	flow_extra_drop(extra);
	return st;
}
