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
 * wherever the server's GROUP BY and IN say so, or (key_concurrency 1)
 * wherever a hash of their weights under it is one (flow_key_sql.h's
 * HASH_OF: MySQL's IN misses keys its = calls equal).
 *
 * A keyed type is a limited type: its claim runs in flow control's
 * transaction, after its control row was read under a lock.  With a cap or
 * a rate of its own, or on Galera, it locks that row, so its claimers on
 * one server take turns (on Galera the row's write makes claimers on two
 * nodes conflict).  Else it shares the row's lock (a pause waits for the
 * claims in flight) and takes the named lock of one of KEY_BUCKETS buckets
 * of keys, by a hash of the key's weight under its collation, to after its
 * COMMIT: a key's claims take turns, each seeing the one before, while
 * other buckets' claims run at once.  The bucket is the first due job's,
 * or the first free after it; a claim of many takes its others from its
 * bucket.
 * Under the lock one statement chooses the first due job, in the
 * claim's order, whose key has fewer than N jobs in processing (the keys
 * at N read once, from the type's processing rows by idx_type_status);
 * the due jobs of busy keys are passed over, not claimed and given back:
 * a job waiting for its key spends no attempt, and holds back no other key.
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
#include "flow_key_sql.h"
#include "util.h"

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

/* MySQL's ER_INVALID_JSON_PATH, which MariaDB's headers lack. */
#define MYSQL_INVALID_JSON_PATH 3143

/* A keyed type's statements in the set, KEY_STMTS of them: a choice of
 * one and of many, each from the head and past the cursor, status's
 * count, the look, the takes of a bucket, and a blank's weight. */
enum { PICK_HEAD, PICK_AFTER, MANY_HEAD, MANY_AFTER, LOAD, LOOK, TAKE_HEAD,
	TAKE_AFTER, SPACE, KEY_STMTS };
/* ... and after every type's, the set's own: */
enum { CHECK_PATH, LOCK_NAME, TAKE_AT, RELEASE_BUCKET, SET_STMTS };

/* Where a choice goes on from: the last job chosen and claimed
 * (next_run_at as the server wrote it, id), and when the choice last
 * started from the head.  A bucketed type has one for each bucket. */
struct cursor {
	char at[32];
	uint64_t id;
	int64_t head_ms;
};

struct keyed {
	const struct cfg_type *type;
	char *texts[KEY_STMTS];
	char lock[64];		/* its buckets' lock name, less the bucket */
	char blank[64];		/* the hex of a blank's weight (space_parts) */
	struct cursor cursors[KEY_BUCKETS];
	struct cursor first;	/* a bucketed type's, for its take */
	/* where the jobs it claimed last stood, for flow_keys_freed */
	struct claimed_at {
		uint64_t id;
		char at[32];
		unsigned bucket;
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
	/* the bucket lock this connection holds (holding), its name */
	int holding;
	char held[80];
};

/* What a claim is made with (queue_claim_job's). */
struct claim_of {
	unsigned long lock_seconds;
	const char *token;
	struct job *job;
	int *claimed;
};

/* The text of parts for keyed type t, its places filled (KEY, INDEX,
 * CURSOR: PAST_CURSOR when cursor, else nothing; ROOM). */
#define TEXT_FOR(q, t, parts, cursor) \
	text_for(q, t, parts, sizeof parts / sizeof parts[0], cursor)
static char *
text_for(struct queue *q, const struct cfg_type *t,
    const char *const *parts, size_t nparts, int cursor)
{
	char column[2 * CFG_KEY_COLUMN_MAX + 3], key[sizeof column + 32];
	const char *index = queue_type_index(q) ? "idx_type_pick" : "idx_pick";
	const char **part = xcalloc(nparts, sizeof *part);
	size_t i, len = 1;
	char *text, *room = NULL;

	if (CFG_KEY_IS_PATH(t->flow.key))
		snprintf(key, sizeof key, "%s", KEY_OF_PATH);
	else {
		db_quote_ident(t->flow.key, column, sizeof column);
		snprintf(key, sizeof key, KEY_OF_COLUMN, column);
	}
	for (i = 0; i < nparts; i++) {
		if (parts[i] == ROOM && room == NULL)
			room = ONE_AT_A_KEY(t) ?
			    TEXT_FOR(q, t, room_one_parts, 0) :
			    TEXT_FOR(q, t, room_parts, 0);
		part[i] = parts[i] == KEY ? key : parts[i] == INDEX ? index :
		    parts[i] == CURSOR ? (cursor ? PAST_CURSOR : "") :
		    parts[i] == ROOM ? room : parts[i] == LEVEL ?
		    (db_is_mysql(queue_db(q)) ? "" : " LEVEL 1") : parts[i];
		len += strlen(part[i]);
	}
	text = xcalloc(1, len);
	for (i = 0; i < nparts; i++)
		strcat(text, part[i]);
	free(part);
	free(room);
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
		[TAKE_HEAD] = "lock a bucket of keys",
		[TAKE_AFTER] = "lock a bucket of keys",
		[SPACE] = "weigh a blank under a key's collation",
	};
	struct keyed *kt = &k->types[k->n];
	size_t at = KEY_STMTS * k->n, i;
	int one = ONE_AT_A_KEY(t);

	kt->type = t;
	kt->texts[PICK_HEAD] = TEXT_FOR(k->q, t, pick_parts, 0);
	kt->texts[PICK_AFTER] = TEXT_FOR(k->q, t, pick_parts, 1);
	kt->texts[MANY_HEAD] = one ? TEXT_FOR(k->q, t, many_one_parts, 0) :
	    TEXT_FOR(k->q, t, many_parts, 0);
	kt->texts[MANY_AFTER] = one ? TEXT_FOR(k->q, t, many_one_parts, 1) :
	    TEXT_FOR(k->q, t, many_parts, 1);
	kt->texts[LOAD] = TEXT_FOR(k->q, t, load_parts, 0);
	kt->texts[LOOK] = TEXT_FOR(k->q, t, look_parts, 0);
	kt->texts[TAKE_HEAD] = TEXT_FOR(k->q, t, take_head_parts, 0);
	kt->texts[TAKE_AFTER] = TEXT_FOR(k->q, t, take_after_parts, 0);
	kt->texts[SPACE] = TEXT_FOR(k->q, t, space_parts, 0);
	for (i = 0; i < KEY_STMTS; i++) {
		k->texts[at + i] = kt->texts[i];
		k->purposes[at + i] = purpose[i];
		k->tables[at + i] = queue_name(k->q);
	}
	k->n++;
}

/* The set's own statements, at at. */
static void
add_own(struct flow_keys *k, size_t at)
{
	static const char *const text[SET_STMTS] = {
		[CHECK_PATH] = path_text, [LOCK_NAME] = name_text,
		[TAKE_AT] = take_at_text, [RELEASE_BUCKET] = release_text,
	};
	static const char *const purpose[SET_STMTS] = {
		[CHECK_PATH] = "check a concurrency_key",
		[LOCK_NAME] = "name a keyed type's locks",
		[TAKE_AT] = "lock a bucket of keys",
		[RELEASE_BUCKET] = "unlock a bucket of keys",
	};
	size_t i;

	for (i = 0; i < SET_STMTS; i++) {
		k->texts[at + i] = text[i];
		k->purposes[at + i] = purpose[i];
		k->tables[at + i] = NULL;
	}
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
	k->texts = xcalloc(KEY_STMTS * n + SET_STMTS, sizeof *k->texts);
	k->purposes = xcalloc(KEY_STMTS * n + SET_STMTS, sizeof *k->purposes);
	k->tables = xcalloc(KEY_STMTS * n + SET_STMTS, sizeof *k->tables);
	for (i = 0; i < cfg->ntypes; i++)
		if (cfg->types[i].flow.key != NULL)
			add_type(k, &cfg->types[i]);
	add_own(k, KEY_STMTS * n);
	k->set = queue_stmts_open(q, k->texts, k->purposes, k->tables,
	    KEY_STMTS * n + SET_STMTS, NULL);
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

	st = queue_stmts_one(k->set, KEY_STMTS * k->n + CHECK_PATH, args, 1,
	    &col, 1, &found, err, errlen);
	if (st == DB_OK && (!found || col == NULL)) {
		errf(err, errlen, "the server takes it for no JSON path");
		st = DB_SCHEMA;
	}
	free(col);
	return st;
}

/* Name keyed type i's bucket locks, when it is claimed under them. */
static enum db_status
name_locks(struct flow_keys *k, size_t i, char *err, size_t errlen)
{
	struct keyed *kt = &k->types[i];
	struct db_arg args[] = { QUEUE_TABLE_ID_ARGS(k->q),
	    DB_STR(kt->type->name) };
	char *col = NULL;
	enum db_status st;
	int found;

	kt->lock[0] = '\0';
	/* Not beside a cap or a rate of its own (counted under the control
	 * row's lock), nor on Galera, whose nodes share no named lock. */
	if (kt->type->flow.concurrency || kt->type->flow.rate ||
	    queue_galera(k->q))
		return DB_OK;
	st = queue_stmts_one(k->set, KEY_STMTS * k->n + LOCK_NAME, args, 3,
	    &col, 1, &found, err, errlen);
	if (st == DB_OK && found && col != NULL)
		snprintf(kt->lock, sizeof kt->lock, "%s", col);
	free(col);
	col = NULL;
	args[0] = DB_STR(kt->type->flow.key);
	if (st == DB_OK)
		st = queue_stmts_one(k->set, KEY_STMTS * i + SPACE, args,
		    CFG_KEY_IS_PATH(kt->type->flow.key) ? 1 : 0, &col, 1,
		    &found, err, errlen);
	/* Longer than kept (none known): blanks trimmed as RTRIM does. */
	if (st == DB_OK && found && col != NULL &&
	    strlen(col) < sizeof kt->blank)
		snprintf(kt->blank, sizeof kt->blank, "%s", col);
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
		if (st == DB_OK)
			st = name_locks(k, i, cause, sizeof cause);
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

int
flow_keys_bucketed(const struct flow_keys *k, const char *type)
{
	size_t i = index_of(k, type);

	return k != NULL && i < k->n && k->types[i].lock[0] != '\0';
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
	unsigned bucket;	/* its key's (LOOK) */
};

/* The arguments of keyed type i's ROOM into args: how many. */
static unsigned
room_args(const struct flow_keys *k, size_t i, struct db_arg *args)
{
	const struct cfg_type *t = k->types[i].type;
	unsigned n = 0;

	if (ONE_AT_A_KEY(t))	/* room_one_parts's HASH_OF */
		args[n++] = DB_STR(k->types[i].blank);
	if (CFG_KEY_IS_PATH(t->flow.key))
		args[n++] = DB_STR(t->flow.key);
	if (ONE_AT_A_KEY(t))
		args[n++] = DB_STR(k->types[i].blank);
	n += key_args(t, args + n);
	if (!ONE_AT_A_KEY(t))	/* room_parts's cap */
		args[n++] = DB_NUM(t->flow.key_concurrency);
	return n;
}

/* The choice's bucket, as an argument: "0" to "7", or NULL for any. */
static const char *
bucket_arg(int bucket, char *buf, size_t len)
{
	if (bucket < 0)
		return NULL;
	snprintf(buf, len, "%d", bucket);
	return buf;
}

/* Whether a choice of many with one job a key gives its rows' key
 * hashes (many_one_parts), which the client takes the first of. */
#define BY_HASH(t, which) (ONE_AT_A_KEY(t) && \
	((which) == MANY_HEAD || (which) == MANY_AFTER))

/* Whether hash, a row's key hash (NULL: no key), is among the first n of
 * hashes; else it goes there. */
static int
hash_seen(uint32_t *hashes, size_t *n, const char *hash)
{
	uint32_t h;
	size_t i;

	if (hash == NULL)
		return 0;
	h = (uint32_t)queue_number(hash);
	for (i = 0; i < *n; i++)
		if (hashes[i] == h)
			return 1;
	hashes[(*n)++] = h;
	return 0;
}

/* The arguments of choice which of keyed type i in bucket, from cursor
 * cur, for up to want, into args (b the bucket's text): how many. */
static unsigned
choice_args(struct flow_keys *k, size_t i, unsigned which, int bucket,
    const struct cursor *cur, size_t want, char *b, size_t blen,
    struct db_arg *args)
{
	const struct cfg_type *t = k->types[i].type;
	int many = which == MANY_HEAD || which == MANY_AFTER;
	int path = CFG_KEY_IS_PATH(t->flow.key);
	unsigned nargs = 0;

	if (which == LOOK || BY_HASH(t, which))	/* BUCKET_OF, HASH_OF */
		args[nargs++] = DB_STR(k->types[i].blank);
	if ((many || which == LOOK) && path)
		args[nargs++] = DB_STR(t->flow.key);
	args[nargs++] = DB_STR(t->name);
	args[nargs++] = DB_STR(t->name);
	if (which == PICK_AFTER || which == MANY_AFTER) {
		args[nargs++] = DB_STR(cur->at);
		args[nargs++] = DB_STR(cur->at);
		args[nargs++] = DB_NUM(cur->id);
	}
	if (which != LOOK) {
		args[nargs++] = DB_STR(bucket_arg(bucket, b, blen));
		args[nargs++] = DB_STR(k->types[i].blank);
		if (path)
			args[nargs++] = DB_STR(t->flow.key);
		args[nargs++] = DB_STR(bucket_arg(bucket, b, blen));
	}
	nargs += room_args(k, i, args + nargs);
	/* As many due jobs with room as are wanted: a key's further jobs
	 * among them are passed over, and the slots they leave claim again
	 * next time.  Reading past them cost every choice about KEY_BUCKETS
	 * rows for each job read (a bucket's jobs are one in KEY_BUCKETS of
	 * the type's): bench/KEYS.md, 80 rows a job at four times as many. */
	if (many)
		args[nargs++] = DB_NUM(want);
	if (many && !ONE_AT_A_KEY(t)) {	/* many_parts */
		nargs += key_args(t, args + nargs);
		args[nargs++] = DB_NUM(t->flow.key_concurrency);
		args[nargs++] = DB_NUM(want);
	}
	if (which == LOOK) {
		args[nargs++] = DB_STR(t->name);
		args[nargs++] = DB_STR(t->name);
	}
	return nargs;
}

/* Run choice which of keyed type i (PICK_* and LOOK for one, MANY_* for
 * up to want) in bucket (-1: any), from cursor cur: the jobs chosen into
 * out, *n of them, of *rows read (rows may be NULL). */
static enum db_status
choose_run(struct flow_keys *k, size_t i, unsigned which, int bucket,
    const struct cursor *cur, struct chosen *out, size_t want, size_t *n,
    size_t *rows, char *err, size_t errlen)
{
	const struct cfg_type *t = k->types[i].type;
	int by_hash = BY_HASH(t, which);
	char *cols[3] = { NULL, NULL, NULL }, b[16];
	unsigned nargs, ncols = which == LOOK || by_hash ? 3 : 2;
	uint32_t hashes[1 + FLOW_EXTRA_MAX];
	size_t nhashes = 0;
	struct db_arg args[24];
	enum db_status st;
	int rc;

	nargs = choice_args(k, i, which, bucket, cur, want, b, sizeof b, args);
	*n = 0;
	if (rows != NULL)
		*rows = 0;
	st = queue_stmts_run(k->set, KEY_STMTS * i + which, args, nargs, err,
	    errlen);
	while (st == DB_OK && (rc = queue_stmts_fetch(k->set,
	    KEY_STMTS * i + which, cols, ncols, err, errlen)) != 0) {
		if (rc < 0)
			st = DB_ERROR;
		else if (rows != NULL)
			(*rows)++;
		if (rc > 0 && *n < want && cols[1] != NULL &&
		    !(by_hash && hash_seen(hashes, &nhashes, cols[2]))) {
			out[*n].id = queue_number(cols[0]);
			snprintf(out[*n].at, sizeof out[*n].at, "%s", cols[1]);
			out[*n].bucket = which == LOOK ? (unsigned)(
			    queue_number(cols[2]) % KEY_BUCKETS) : 0;
			(*n)++;
		}
		db_free_cols(cols, ncols);
	}
	return st;
}

/* The choice for keyed type i in bucket (-1: any, cursor 0), of one (want
 * 1) or of many: past the bucket's cursor while it is young, and from the
 * head when that finds none. */
static enum db_status
choose(struct flow_keys *k, size_t i, int bucket, struct chosen *out,
    size_t want, size_t *n, char *err, size_t errlen)
{
	struct keyed *kt = &k->types[i];
	struct cursor *cur = &kt->cursors[bucket < 0 ? 0 : bucket];
	unsigned head = want > 1 ? MANY_HEAD : PICK_HEAD;
	enum db_status st;

	/* order = key: from the head every time, so that a key's job due
	 * before the cursor (enqueued since, or its key freed) comes first. */
	if (cur->id != 0 && !kt->type->flow.key_order &&
	    now_ms() - cur->head_ms < KEY_HEAD_MS) {
		st = choose_run(k, i, head + 1, bucket, cur, out, want, n,
		    NULL, err, errlen);
		if (st != DB_OK || *n != 0)
			return st;
	}
	cur->head_ms = now_ms();
	return choose_run(k, i, head, bucket, cur, out, want, n, NULL, err,
	    errlen);
}

enum db_status
flow_keys_pick(struct flow_keys *k, const char *type, uint64_t *id,
    int *due, char *err, size_t errlen)
{
	size_t i = index_of(k, type), n = 0, rows = 0;
	struct chosen c = { 0, "", 0 };
	enum db_status st = DB_OK;

	if (k != NULL && i < k->n)
		st = choose_run(k, i, LOOK, -1, &k->types[i].cursors[0], &c, 1,
		    &n, &rows, err, errlen);
	*id = n > 0 ? c.id : 0;
	*due = rows > 0;
	return st;
}

/* Whether (at, id) comes before cursor cur in the claim's order (the
 * server's DATETIME text sorts as its time). */
static int
before_cursor(const struct cursor *cur, const char *at, uint64_t id)
{
	int c = strcmp(at, cur->at);

	return c < 0 || (c == 0 && id < cur->id);
}

/* Cursor cur goes back to (at, id) if it is past it. */
static void
move_back(struct cursor *cur, const char *at, uint64_t id)
{
	if (cur->id != 0 && before_cursor(cur, at, id)) {
		snprintf(cur->at, sizeof cur->at, "%s", at);
		cur->id = id;
	}
}

/* The key of the job that ended may have room now: its key's next job
 * comes after it, so its bucket's cursor moves back to it, not to the
 * head (whose rows may be another busy key's, many of them). */
void
flow_keys_freed(struct flow_keys *k, const char *type, uint64_t id)
{
	size_t i = index_of(k, type), j;
	struct keyed *kt;

	if (k == NULL || i >= k->n)
		return;
	kt = &k->types[i];
	for (j = 0; j < KEY_CLAIMS_KEPT; j++)
		if (kt->claims[j].id == id && kt->claims[j].id != 0)
			break;
	if (j == KEY_CLAIMS_KEPT) {
		for (j = 0; j < KEY_BUCKETS; j++)
			kt->cursors[j].id = 0;
		kt->first.id = 0;
		return;
	}
	move_back(&kt->cursors[kt->claims[j].bucket], kt->claims[j].at, id);
	move_back(&kt->first, kt->claims[j].at, id);
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
	    &found, err, errlen);
	*full = queue_number(cols[0]);
	*waiting = queue_number(cols[1]);
	db_free_cols(cols, 2);
	return st;
}

/* kt claimed job c in bucket (-1: any): its cursor moves to it. */
static void
moved(struct keyed *kt, int bucket, const struct chosen *c)
{
	struct claimed_at *to = &kt->claims[kt->next_claim];
	struct cursor *cur = &kt->cursors[bucket < 0 ? 0 : bucket];

	kt->next_claim = (kt->next_claim + 1) % KEY_CLAIMS_KEPT;
	to->id = c->id;
	snprintf(to->at, sizeof to->at, "%s", c->at);
	to->bucket = bucket < 0 ? 0 : (unsigned)bucket;
	snprintf(cur->at, sizeof cur->at, "%s", c->at);
	cur->id = c->id;
	kt->first.id = c->id;
	snprintf(kt->first.at, sizeof kt->first.at, "%s", c->at);
}

/* Claim up to 1 + extra->want jobs of keyed type i in bucket: one
 * choice, then one claim of them all (queue_claim_jobs). */
static enum db_status
claim_many(struct flow_keys *k, size_t i, int bucket,
    const struct claim_of *by, struct flow_extra *extra, char *err,
    size_t errlen)
{
	struct chosen c[1 + FLOW_EXTRA_MAX];
	const char *tokens[1 + FLOW_EXTRA_MAX];
	struct job *jobs[1 + FLOW_EXTRA_MAX];
	uint64_t ids[1 + FLOW_EXTRA_MAX];
	enum db_status st;
	size_t n = 0, j;

	st = choose(k, i, bucket, c, 1 + extra->want, &n, err, errlen);
	if (st != DB_OK || n == 0)
		return st;
	for (j = 0; j < n; j++) {
		ids[j] = c[j].id;
		tokens[j] = j == 0 ? by->token : extra->tokens[j - 1];
		jobs[j] = j == 0 ? by->job : &extra->jobs[j - 1];
		memset(jobs[j], 0, sizeof *jobs[j]);
	}
	st = queue_claim_jobs(k->q, ids, n, by->lock_seconds, tokens, jobs,
	    err, errlen);
	if (st != DB_OK) {
		/* What was read is freed with the rest (flow_extra_drop). */
		extra->got = n - 1;
		*by->claimed = jobs[0]->type != NULL;
		return st;
	}
	*by->claimed = 1;
	extra->got = n - 1;
	for (j = 0; j < n; j++)
		moved(&k->types[i], bucket, &c[j]);
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

/* Claim a due job of keyed type i in bucket (-1: any), with extras
 * when it may: none claimed, *found says whether the choice had one. */
static enum db_status
claim_in(struct flow_keys *k, size_t i, int bucket, const struct claim_of *by,
    struct flow_extra *extra, int *found, char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	struct chosen c;
	size_t n = 0;
	int tries = 0;

	*found = 0;
	if (claims_many(k, k->types[i].type, extra)) {
		st = claim_many(k, i, bucket, by, extra, err, errlen);
		*found = *by->claimed;
		return st;
	}
	do {	/* taken by someone else between choice and claim */
		st = choose(k, i, bucket, &c, 1, &n, err, errlen);
		*found |= n != 0;
		if (st == DB_OK && n != 0)
			st = queue_claim_job(k->q, c.id, by->lock_seconds,
			    by->token, by->job, by->claimed, err, errlen);
		if (st == DB_OK && *by->claimed)
			moved(&k->types[i], bucket, &c);
	} while (st == DB_OK && n != 0 && !*by->claimed && ++tries < 3);
	return st;
}

/* The arguments of keyed type kt's FIRST_BUCKET, past cursor cur or
 * (NULL) from the head, into args: how many. */
static unsigned
first_args(const struct keyed *kt, const struct cursor *cur,
    struct db_arg *args)
{
	const struct cfg_type *t = kt->type;
	unsigned n = 0;

	args[n++] = DB_STR(kt->blank);
	if (CFG_KEY_IS_PATH(t->flow.key))
		args[n++] = DB_STR(t->flow.key);
	args[n++] = DB_STR(t->name);
	args[n++] = DB_STR(t->name);
	if (cur != NULL) {
		args[n++] = DB_STR(cur->at);
		args[n++] = DB_STR(cur->at);
		args[n++] = DB_NUM(cur->id);
	}
	return n;
}

/* Take the lock of a bucket of keyed type i's: the first due job's
 * bucket first (at -1; TAKE_HEAD, TAKE_AFTER), or bucket at (TAKE_AT).
 * *bucket, -1 when none is free; *head 0 when no job is due (then no
 * lock is taken). */
static enum db_status
take_bucket(struct flow_keys *k, size_t i, int at, int *bucket, int *head,
    char *err, size_t errlen)
{
	struct keyed *kt = &k->types[i];
	struct db_arg args[KEY_BUCKETS + 1 + 7 + 4];	/* first_args: 7, 4 */
	char *cols[2] = { NULL, NULL }, first[16];
	size_t which = KEY_STMTS * i + TAKE_HEAD;
	enum db_status st;
	unsigned n = 0;
	int found;

	while (n < KEY_BUCKETS + 1)
		args[n++] = DB_STR(kt->lock);
	if (at >= 0) {
		which = KEY_STMTS * k->n + TAKE_AT;
		args[n++] = DB_STR(bucket_arg(at, first, sizeof first));
	} else if (kt->first.id != 0 && !kt->type->flow.key_order &&
	    now_ms() - kt->first.head_ms < KEY_HEAD_MS) {
		/* Past the cursor while it is young (choose's rule). */
		which = KEY_STMTS * i + TAKE_AFTER;
		n += first_args(kt, &kt->first, args + n);
		n += first_args(kt, NULL, args + n);
	} else {
		kt->first.head_ms = now_ms();
		n += first_args(kt, NULL, args + n);
	}
	st = queue_stmts_one(k->set, which, args, n, cols, 2, &found, err,
	    errlen);
	*head = st == DB_OK && found && cols[0] != NULL;
	*bucket = -1;
	if (*head && cols[1] != NULL) {
		*bucket = (int)(queue_number(cols[1]) % KEY_BUCKETS);
		snprintf(k->held, sizeof k->held, "%s.%d", kt->lock, *bucket);
		k->holding = 1;
	}
	db_free_cols(cols, 2);
	return st;
}

enum db_status
flow_keys_release(struct flow_keys *k, char *err, size_t errlen)
{
	struct db_arg args[1];
	enum db_status st;

	if (k == NULL || !k->holding)
		return DB_OK;
	args[0] = DB_STR(k->held);
	st = queue_stmts_run(k->set, KEY_STMTS * k->n + RELEASE_BUCKET, args,
	    1, err, errlen);
	/* A connection lost holds no lock; one that failed to say is
	 * released again before the next claim takes one. */
	if (st == DB_OK || st == DB_UNREACHABLE)
		k->holding = 0;
	return st == DB_UNREACHABLE ? DB_OK : st;
}

/* Claim in keyed type i's bucket at (-1: the first due job's), its lock
 * held when it claimed: *due, whether a job was due; *full, whether every
 * bucket was taken. */
static enum db_status
claim_at(struct flow_keys *k, size_t i, int at, const struct claim_of *by,
    int *due, int *full, struct flow_extra *extra, char *err,
    size_t errlen)
{
	enum db_status st;
	int bucket, found;

	st = take_bucket(k, i, at, &bucket, due, err, errlen);
	*full = *due && bucket < 0;
	if (st != DB_OK || bucket < 0)
		return st;
	st = claim_in(k, i, bucket, by, extra, &found, err, errlen);
	if (st == DB_OK && !*by->claimed)
		st = flow_keys_release(k, err, errlen);
	return st;
}

/* The claim of bucketed type i in its first due job's bucket, else in
 * that of the first whose key has room (LOOK).  The lock is held to after
 * the transaction (flow_keys_release): a key's claims, in its bucket, are
 * chosen each after the one before it committed. */
static enum db_status
claim_bucketed(struct flow_keys *k, size_t i, const struct claim_of *by,
    int *due, struct flow_extra *extra, char *err, size_t errlen)
{
	struct chosen c = { 0, "", 0 };
	size_t n = 0, rows = 0;
	enum db_status st;
	int full = 0;

	/* The transaction run again: the lock of its first run goes. */
	st = flow_keys_release(k, err, errlen);
	if (st == DB_OK)
		st = claim_at(k, i, -1, by, due, &full, extra, err, errlen);
	/* Claimed, none due, or every bucket taken (after a wait): done. */
	if (st != DB_OK || *by->claimed || !*due || full)
		return st;
	st = choose_run(k, i, LOOK, -1, &k->types[i].first, &c, 1, &n, &rows,
	    err, errlen);
	if (st == DB_OK && n > 0)
		st = claim_at(k, i, (int)c.bucket, by, due, &full, extra, err,
		    errlen);
	*due = rows > 0;
	return st;
}

enum db_status
flow_keys_claim(struct flow_keys *k, const char *type,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, int *due, struct flow_extra *extra, char *err,
    size_t errlen)
{
	size_t i = index_of(k, type);
	struct claim_of by = { lock_seconds, token, job, claimed };
	enum db_status st;
	int found;

	*claimed = *due = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	if (k->types[i].lock[0] != '\0')
		return claim_bucketed(k, i, &by, due, extra, err, errlen);
	st = claim_in(k, i, -1, &by, extra, &found, err, errlen);
	if (st == DB_OK && !*claimed)
		st = queue_type_due(k->q, type, due, err, errlen);
	return st;
}
