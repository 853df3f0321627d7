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
 * in (next_run_at, id) order, so with key_concurrency 1 a key's jobs run
 * one after another in that order, which is what order = key promises.
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

/* The key of a row: (path) for a JSON path; %s the column, quoted. */
#define KEY_OF_PATH "LEFT(JSON_UNQUOTE(JSON_EXTRACT(payload, ?)), " \
	KEY_CHARS ")"
#define KEY_OF_COLUMN "LEFT(%s, " KEY_CHARS ")"

/* The first due job of the type whose key has room, in the claim's order
 * (the index for it and the key's expression between the parts; args:
 * type, type, [path,] [path,] type, type, N).  A job without a key (NULL)
 * has no key cap. */
static const char *const pick_parts[] = {
	"SELECT id FROM " QUEUE_JOBS_TABLE " FORCE INDEX (", NULL,
	") WHERE status = 'pending' AND type = ?"
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND next_run_at <= NOW() AND IFNULL(", NULL,
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

/* Whether the server takes a JSON path: 0 for one it takes, NULL (with a
 * warning, MariaDB) or an error (MySQL) for one it does not. */
static const char path_text[] = "SELECT JSON_CONTAINS_PATH('{}', 'one', ?)";

struct keyed {
	const struct cfg_type *type;
	char *text, *load;
};

struct flow_keys {
	struct queue *q;
	struct keyed *types;
	size_t n;
	/* the set's texts, purposes and tables: a pick per type, then the
	 * path check */
	const char **texts, **purposes, **tables;
	struct queue_stmts *set;
};

/* The text of parts, t's key's expression (and first the index for it,
 * when index) in the NULL places. */
static char *
text_for(struct queue *q, const struct cfg_type *t,
    const char *const *parts, size_t nparts, int index)
{
	char column[2 * CFG_KEY_COLUMN_MAX + 3], key[sizeof column + 32];
	const char *fill[3] = { key, key, key }, *part;
	size_t i, f = 0, len = 1;
	char *text;

	if (index)
		fill[0] = queue_type_index(q) ? "idx_type_pick" : "idx_pick";
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
	k->texts = xcalloc(2 * n + 1, sizeof *k->texts);
	k->purposes = xcalloc(2 * n + 1, sizeof *k->purposes);
	k->tables = xcalloc(2 * n + 1, sizeof *k->tables);
	for (i = 0; i < cfg->ntypes; i++) {
		if (cfg->types[i].flow.key == NULL)
			continue;
		k->types[k->n].type = &cfg->types[i];
		k->types[k->n].text = text_for(q, &cfg->types[i],
		    pick_parts, NPARTS, 1);
		k->types[k->n].load = text_for(q, &cfg->types[i],
		    load_parts, sizeof load_parts / sizeof load_parts[0], 0);
		k->texts[k->n] = k->types[k->n].text;
		k->purposes[k->n] = "choose a job whose key has room";
		k->tables[k->n] = queue_name(q);
		k->texts[n + k->n] = k->types[k->n].load;
		k->purposes[n + k->n] = "count the jobs waiting for a key";
		k->tables[n + k->n] = queue_name(q);
		k->n++;
	}
	k->texts[2 * n] = path_text;
	k->purposes[2 * n] = "check a concurrency_key";
	k->tables[2 * n] = NULL;
	k->set = queue_stmts_open(q, k->texts, k->purposes, k->tables,
	    2 * n + 1, NULL);
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

	st = queue_stmts_one(k->set, 2 * k->n, args, 1, &col, 1, &found, err,
	    errlen);
	if (st == DB_OK && (!found || col == NULL || strcmp(col, "0") != 0)) {
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
			st = queue_stmts_prepare(k->set, i, cause,
			    sizeof cause);
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

enum db_status
flow_keys_pick(struct flow_keys *k, const char *type, uint64_t *id,
    char *err, size_t errlen)
{
	size_t i = index_of(k, type);
	const struct cfg_type *t;
	struct db_arg args[7];
	char *col = NULL;
	enum db_status st;
	unsigned n = 0;
	int found;

	*id = 0;
	if (k == NULL || i >= k->n)
		return DB_OK;
	t = k->types[i].type;
	args[n++] = DB_STR(t->name);
	args[n++] = DB_STR(t->name);
	if (CFG_KEY_IS_PATH(t->flow.key))
		args[n++] = DB_STR(t->flow.key);
	n += key_args(t, args + n);
	args[n++] = DB_NUM(t->flow.key_concurrency);
	st = queue_stmts_one(k->set, i, args, n, &col, 1, &found, err,
	    errlen);
	if (st == DB_OK && found)
		*id = queue_number(col);
	free(col);
	return st;
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
	st = queue_stmts_one(k->set, k->n + i, args, n, cols, 2, &found, err,
	    errlen);
	*full = queue_number(cols[0]);
	*waiting = queue_number(cols[1]);
	db_free_cols(cols, 2);
	return st;
}

enum db_status
flow_keys_claim(struct flow_keys *k, const char *type,
    unsigned long lock_seconds, const char *token, struct job *job,
    int *claimed, int *due, char *err, size_t errlen)
{
	enum db_status st;
	uint64_t id;
	int tries = 0;

	*claimed = *due = 0;
	do {	/* taken by someone else between the choice and the claim */
		st = flow_keys_pick(k, type, &id, err, errlen);
		if (st == DB_OK && id != 0)
			st = queue_claim_job(k->q, id, lock_seconds, token, job,
			    claimed, err, errlen);
	} while (st == DB_OK && id != 0 && !*claimed && ++tries < 3);
	if (st == DB_OK && !*claimed)
		st = queue_type_due(k->q, type, due, err, errlen);
	return st;
}
