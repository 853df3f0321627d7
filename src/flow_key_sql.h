/*
 * flow_key_sql.h - the statements of N at a time per key (flow_key.c,
 * which alone includes this): the key's expression, its bucket, and the
 * texts text_for fills for each keyed type.
 */
#ifndef FLOW_KEY_SQL_H
#define FLOW_KEY_SQL_H

#include "queue.h"

/* A key is its first KEY_CHARS characters: GROUP BY compares a long text
 * by its first max_sort_length bytes (1024 by default), and 255
 * characters of four bytes fit. */
#define KEY_CHARS "255"

/* Past the cursor (time, time, id): the rows after the last job claimed,
 * in the claim's order. */
#define PAST_CURSOR " AND (next_run_at > ? OR (next_run_at = ? AND id > ?))"

/* The key of a row: (path) for a JSON path; %s the column, quoted. */
#define KEY_OF_PATH "LEFT(JSON_UNQUOTE(JSON_EXTRACT(payload, ?)), " \
	KEY_CHARS ")"
#define KEY_OF_COLUMN "LEFT(%s, " KEY_CHARS ")"

/* A key's bucket of KEY_BUCKETS (see the head): keys the collation calls
 * equal weigh the same (WEIGHT_STRING), but for what a PAD SPACE
 * collation pads: both servers keep trailing blanks in the weight, where
 * 'abc' = 'abc ', and a UCA collation weighs a no-break space as a blank,
 * and a blank followed by a zero-width character as one.  So RTRIM, then
 * TRIM of the trailing weights of a blank under the key's collation (its
 * hex the argument, read once: space_parts), of the primary weights alone
 * on MariaDB (LEVEL: a multi-level collation such as uca1400_as_cs puts
 * a blank's weight of each level apart; the same bytes for one of a
 * level, as most are; MySQL has no LEVEL, and its multi-level collations
 * pad nothing).  No key: bucket 0.  Every runner must use the same
 * count. */
#define KEY_BUCKETS 8
#define KEY_TEXT(n) #n	/* n's text, once n's macro is expanded: */
#define KEY_TEXT_OF(n) KEY_TEXT(n)
#define KEY_BUCKETS_TEXT KEY_TEXT_OF(KEY_BUCKETS)
#define HASH_OF "CRC32(TRIM(TRAILING UNHEX(?) FROM WEIGHT_STRING(RTRIM(", \
	KEY, ")", LEVEL, ")))"
#define BUCKET_OF "IFNULL(", HASH_OF, " % " KEY_BUCKETS_TEXT ", 0)"
/* ... the choice's rows in one bucket, or in any (args: bucket, blank,
 * [path], bucket; the bucket NULL for any) */
#define IN_BUCKET " AND (? IS NULL OR ", BUCKET_OF, " = ?)"

/* Whether t's keys take a job at a time: room_one_parts, many_one_parts */
#define ONE_AT_A_KEY(t) ((t)->flow.key_concurrency == 1)

/* Places in a statement's parts that text_for fills: the key's
 * expression, the index to read, the cursor's condition (or nothing),
 * the key's room (room_parts or room_one_parts), and WEIGHT_STRING's
 * level (MariaDB's primary, or nothing). */
static const char KEY[] = "key", INDEX[] = "index", CURSOR[] = "cursor",
    ROOM[] = "room", LEVEL[] = "level";

/* The type's due jobs, in the claim's order (args: type, type, [time,
 * time, id]) */
#define DUE_FROM_AT(past) " FROM " QUEUE_JOBS_TABLE " FORCE INDEX (", \
	INDEX, ") WHERE status = 'pending' AND type = ?" \
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)" \
	" AND next_run_at <= NOW()", past
#define DUE_FROM DUE_FROM_AT(CURSOR)
/* The type's jobs in processing (args: type, type), and by key: GROUP BY
 * the select list's first, the key (as "GROUP BY k" a column k of the
 * table, or the key column named k, would be taken for the alias) */
#define RUNNING_WHERE " FROM " QUEUE_JOBS_TABLE \
	" FORCE INDEX (idx_type_status) WHERE type = ?" \
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)" \
	" AND status = 'processing'"
#define RUNNING_FROM RUNNING_WHERE " GROUP BY 1"
/* ... whose key is not at its cap (ROOM, this when N > 1; args: [path,]
 * [path,] type, type, N): a NULL among the busy keys, or a job's, makes NOT
 * IN NULL, which IFNULL takes for room (no key, no cap). */
static const char *const room_parts[] = {
	" AND IFNULL(", KEY, " NOT IN (SELECT busy.k FROM (SELECT ", KEY,
	" AS k" RUNNING_FROM " HAVING COUNT(*) >= ?) AS busy), TRUE)"
};
/* ... with N = 1 every key in processing is at its cap: their keys' hashes
 * (HASH_OF) go to the set as read, no GROUP BY's temporary table.  Hashes,
 * not the keys: MySQL 9 finds 'acme' followed by a no-break space NOT IN a
 * set of 'acme' that its = and DISTINCT call equal under
 * utf8mb4_unicode_ci (its materialized set hashes the text without the
 * collation's padding), and two jobs of one key ran at once (test 103).
 * Keys that differ and hash alike wait for each other (args: blank,
 * [path,] blank, [path,] type, type). */
static const char *const room_one_parts[] = {
	" AND IFNULL(", HASH_OF, " NOT IN (SELECT ", HASH_OF, RUNNING_WHERE
	"), TRUE)"
};

/* The first due job of the type whose key has room, in the claim's order,
 * and its next_run_at (args: type, type, [time, time, id,] bucket, blank,
 * [path,] bucket, ROOM's).  A job without a key (NULL) has no key cap. */
static const char *const pick_parts[] = {
	"SELECT id, next_run_at" DUE_FROM, IN_BUCKET, ROOM,
	" ORDER BY next_run_at, id LIMIT 1"
};

/* A look while every due job's key was busy (flow.c's look_keys), in
 * one statement: the first due job whose key has room now, read from the
 * head, and its key's bucket, and a row (0, NULL, 0) when the type has any
 * due job at all, which tells a wait from a type with nothing left due
 * (args: blank, [path,] type, type, ROOM's, type, type). */
static const char *const look_parts[] = {
	"(SELECT id, next_run_at, ", BUCKET_OF, DUE_FROM, ROOM,
	" ORDER BY next_run_at, id LIMIT 1) UNION ALL (SELECT 0, NULL, 0"
	DUE_FROM, " LIMIT 1)"
};

/* A bucketed type's claim first locks the bucket of its first due job
 * (read without a lock, past the type's cursor and else from the head:
 * TAKE_AFTER; or from the head: TAKE_HEAD), else the first free after
 * it (a TRY_BUCKET each), else that one after KEY_BUCKET_WAIT s (COALESCE
 * stops at the first not NULL: one lock at most).  Its key's room is not
 * judged (claim_bucketed looks further).  It gives the job's bucket, NULL
 * when none is due (no lock taken), and the bucket locked, NULL for none
 * (args: the lock name 9 times, blank, [path,] type, type, [time, time,
 * id,] and for TAKE_AFTER blank, [path,] type, type again). */
#define KEY_BUCKET_WAIT "1"
#define TRY_BUCKET(j) "IF(GET_LOCK(CONCAT(?, '.', (h.b + " #j ") % " \
	KEY_BUCKETS_TEXT "), 0), (h.b + " #j ") % " KEY_BUCKETS_TEXT ", NULL), "
#define TAKE_LOCK "SELECT h.b, IF(h.b IS NULL, NULL, COALESCE(" \
	TRY_BUCKET(0) TRY_BUCKET(1) TRY_BUCKET(2) TRY_BUCKET(3) TRY_BUCKET(4) \
	TRY_BUCKET(5) TRY_BUCKET(6) TRY_BUCKET(7) "IF(GET_LOCK(CONCAT(?, '.'," \
	" h.b), " KEY_BUCKET_WAIT "), h.b, NULL))) FROM (SELECT "
#define FIRST_BUCKET(past) "(SELECT ", BUCKET_OF, DUE_FROM_AT(past), \
	" ORDER BY next_run_at, id LIMIT 1)"
static const char *const take_head_parts[] = {
	TAKE_LOCK, FIRST_BUCKET(""), " AS b LIMIT 1) AS h"
};
/* ... and the bucket given first (args: the lock name, 9 times, the
 * bucket) */
static const char take_at_text[] = TAKE_LOCK "CAST(? AS UNSIGNED) AS b"
    " LIMIT 1) AS h";
static const char *const take_after_parts[] = {
	TAKE_LOCK "IFNULL(", FIRST_BUCKET(PAST_CURSOR), ", ",
	FIRST_BUCKET(""), ") AS b LIMIT 1) AS h"
};

/* The first M due jobs, in the claim's order, that their keys have room
 * for, counting each key's jobs in processing and those before it among
 * the chosen: of the first L due jobs whose keys are not at their cap,
 * a key's first N less its running ones (args: [path,] type, type,
 * [time, time, id,] bucket, blank, [path,] bucket, ROOM's, L, [path,]
 * type, type, N, M).  The server partitions and joins by
 * key under the key's collation, as it groups. */
static const char *const many_parts[] = {
	"SELECT c.id, c.next_run_at FROM (SELECT d.id, d.next_run_at, d.k,"
	" ROW_NUMBER() OVER (PARTITION BY d.k ORDER BY d.next_run_at, d.id)"
	" AS rn FROM (SELECT id, next_run_at, ", KEY, " AS k" DUE_FROM,
	IN_BUCKET, ROOM, " ORDER BY next_run_at, id LIMIT ?) AS d) AS c"
	" LEFT JOIN (SELECT ", KEY, " AS k, COUNT(*) AS n" RUNNING_FROM
	") AS running ON running.k = c.k"
	" WHERE c.k IS NULL OR c.rn + IFNULL(running.n, 0) <= ?"
	" ORDER BY c.next_run_at, c.id LIMIT ?"
};

/* The same with key_concurrency = 1, where a key with room has no job in
 * processing: the first L due jobs whose keys have room, each with its
 * key's hash (HASH_OF, NULL for no key), of which choose_run takes the
 * first of each hash.  Keys the collation calls equal hash alike, so two
 * are never chosen together; two keys that differ and hash alike wait for
 * the next claim.  No window, no derived table: the server sorts nothing
 * (args: blank, [path,] type, type, [time, time, id,] bucket, blank,
 * [path,] bucket, ROOM's, L). */
static const char *const many_one_parts[] = {
	"SELECT id, next_run_at, ", HASH_OF, DUE_FROM, IN_BUCKET, ROOM,
	" ORDER BY next_run_at, id LIMIT ?"
};

/* The type's keys at their cap, and its due jobs that wait for one of
 * them (args: [path,] type, type, N, [path,] type, type): what status
 * shows. */
static const char *const load_parts[] = {
	"SELECT COUNT(*), IFNULL(SUM(waiting.n), 0) FROM (SELECT ", KEY,
	" AS k" RUNNING_FROM " HAVING COUNT(*) >= ?) AS busy"
	" LEFT JOIN (SELECT ", KEY, " AS k, COUNT(*) AS n FROM "
	QUEUE_JOBS_TABLE " WHERE status = 'pending' AND type = ?"
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)"
	" AND next_run_at <= NOW() GROUP BY 1) AS waiting"
	" ON waiting.k = busy.k WHERE busy.k IS NOT NULL"
};

/* The hex of a blank's weight under the key's collation, the collation
 * of the key's expression over a NULL row of the table (args: [path]) */
static const char *const space_parts[] = {
	"SELECT HEX(WEIGHT_STRING(CONCAT(IFNULL(LEFT(", KEY, ", 0), ''), ' ')",
	LEVEL, "))"
	" FROM (SELECT 1) AS one LEFT JOIN " QUEUE_JOBS_TABLE " ON FALSE"
};

/* Whether the server takes a JSON path: 0 or 1 (whether "{}" has it: "$"
 * it has) for one it takes, NULL (with a warning, MariaDB) or an error
 * (MySQL) for one it does not. */
static const char path_text[] = "SELECT JSON_CONTAINS_PATH('{}', 'one', ?)";

/* A bucket's lock name, less the bucket: the database and job table as
 * the server tells them apart and the type, hashed as by earlier runs (a
 * name is server-wide, 64 characters at most on MySQL; args: table, table,
 * type). */
static const char name_text[] = "SELECT CONCAT('jobrun.', LEFT(SHA2("
    "CONCAT_WS('/', IF(@@lower_case_table_names = 0, DATABASE(),"
    " LOWER(DATABASE())), " QUEUE_TABLE_ID ", ?), 256), 40))";

static const char release_text[] = "DO RELEASE_LOCK(?)";

#endif
