/*
 * queue.c - the queue's life, adding jobs, and how the job table's
 * statements are built: each one's text is in the file whose operations
 * run it (queue_cycle.c the claims and outcomes, queue_admin.c the
 * operators' changes, queue_info.c what people read, queue_report.c the
 * report's, queue_probe.c a waiting run's look), as a base and the
 * pieces its flags add (queue_sql.h); queue.c finds a statement by its
 * id and builds the variant its flags ask for; fragments that several
 * files' statements use are in queue_sql.h.  Running statements and
 * transactions is queue_run.c's.
 * Why the claim is shaped so:
 *
 * The claim is one autocommit UPDATE ... LIMIT 1: whichever runner's UPDATE
 * changes the row owns it, with no window between a SELECT and an UPDATE.
 * It orders by (next_run_at, id) and forces idx_pick (status, next_run_at,
 * id): the optimizer otherwise walks the primary key and reads every
 * finished row in front of the first due one, which grows with the table.
 * "id = LAST_INSERT_ID(id)" hands back the claimed id with the UPDATE's own
 * reply, so reading the job is one primary-key lookup.
 *
 * Types match byte for byte.  The type column compares under its
 * collation (utf8mb4_general_ci: case, accents and trailing blanks do not
 * count), which is right for the index range but would let a runner for
 * order_sync claim ORDER_SYNC; every statement that picks rows by type
 * also compares CAST(type AS BINARY), which is exact, so those rows are
 * left alone (status lists them as unhandled).
 *
 * Two clocks.  next_run_at is the application's: a local DATETIME in the
 * session's time zone, compared with NOW() as the application meant it.
 * A lock is jobrun's own and must last real time whatever the zone does
 * (a DST jump or SET GLOBAL time_zone would otherwise make a live lock
 * look expired, or a dead runner's job stay stuck for an hour), so the
 * lock's true end is kept where no zone reaches it: locked_by holds
 * "TOKEN@EPOCH", the claim's token and the Unix time the lock ends, from
 * the server's UNIX_TIMESTAMP().  locked_until is still written, in the
 * session zone, for people and for other workers (the seed's PHP loop)
 * that read it; a lock whose locked_by is not jobrun's is judged by
 * locked_until, as its writer judges it.
 *
 * The cursor.  A claimed job leaves its ('pending', next_run_at, id) entry
 * in idx_pick, delete-marked, until InnoDB's purge removes it, and a claim
 * from the head of the range steps over every such entry: a busy run
 * keeps purge thousands of entries behind, and the claim then costs more
 * than the mark.  So a claim after the first starts its range just past
 * the last job this run claimed (the cursor, (next_run_at, id) > (t, i),
 * read back with the job), and the plain claim from the head runs when
 * that finds nothing.  The cursor only narrows the one atomic UPDATE, which
 * keeps all its other conditions, so it cannot claim a job twice.  What it
 * costs is order: a job that becomes due behind the cursor (recovered with
 * its old next_run_at, put back, inserted with an earlier time or
 * committed late by a slow transaction, or after the clock went back) is
 * not seen by such a claim.  So a claim that starts QUEUE_CURSOR_MS (1 s)
 * or more after the last claim from the head is itself one from the head:
 * such a job waits at most that long more than the plain claim would make
 * it wait, and from the head the claims take jobs in (next_run_at, id)
 * order again.
 * The interval is the client's monotonic clock: it bounds this runner's own
 * claims, it compares no job's time.
 *
 * Every later write carries "WHERE id = ? AND <token of locked_by> = ?":
 * a runner whose lock expired and whose job was recovered and claimed
 * again finds zero rows and must not write.  All times are the server's,
 * so runners on hosts with skewed clocks agree.
 */
#include <errno.h>
#include <limits.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "queue_sql.h"
#include "utf8.h"
#include "util.h"

#define BATCH_PARAMS	8	/* per row of a multi-row insert */

/* A new job: (key, type, payload..., max_attempts or NULL, at or NULL,
 * delay), one row per ROW_VALUES and its ")"; the fan-out makes its payload with the
 * server's JSON_SET. */
#define INSERT_COLS "INSERT INTO %1$s (business_key, type, payload, status," \
	" attempts, max_attempts, next_run_at, created_at, updated_at"
#define INSERT_JOBS INSERT_COLS ") VALUES "
#define ROW_VALUES(payload) "(?, ?, " payload ", 'pending', 0," \
	" IFNULL(?, DEFAULT(max_attempts))," \
	" IFNULL(CAST(? AS DATETIME), NOW() + INTERVAL ? SECOND), NOW(), NOW()"
/* sql/009's deadline: (at or NULL, seconds or NULL); both NULL, none. */
#define DEADLINE_VALUE ", IFNULL(CAST(? AS DATETIME), NOW() + INTERVAL ? SECOND)"
#define CHUNK_PAYLOAD "JSON_SET(?, '$.from', ?, '$.to', ?)"

/* enqueue --again: a finished job with the key starts over, as a new
 * job would, with the new payload and time; any other is left as it is.
 * The status is assigned last: ON DUPLICATE KEY UPDATE assigns left to
 * right, and every IF before it must still see the old status. */
#define FINISHED "status IN ('success', 'failed')"
#define AGAIN_SET " payload = IF(" FINISHED ", VALUES(payload), payload)," \
	" attempts = IF(" FINISHED ", 0, attempts)," \
	" max_attempts = IF(" FINISHED ", VALUES(max_attempts), max_attempts)," \
	" next_run_at = IF(" FINISHED ", VALUES(next_run_at), next_run_at)," \
	" last_error = IF(" FINISHED ", NULL, last_error)," \
	" finished_at = IF(" FINISHED ", NULL, finished_at)," \
	" locked_by = IF(" FINISHED ", NULL, locked_by)," \
	" locked_until = IF(" FINISHED ", NULL, locked_until)," \
	" updated_at = IF(" FINISHED ", NOW(), updated_at),"
#define AGAIN_RESUMABLE " checkpoint = IF(" FINISHED ", NULL, checkpoint)," \
	" snoozes = IF(" FINISHED ", 0, snoozes),"
#define AGAIN_DEADLINE " deadline = IF(" FINISHED ", VALUES(deadline)," \
	" deadline),"
#define AGAIN_PRIORITY " priority = IF(" FINISHED ", VALUES(priority)," \
	" priority),"
#define AGAIN_END " status = IF(" FINISHED ", 'pending', status)"

/* queue.c's statements (the others' are in their files). */
const struct queue_sql queue_base_sql[Q_COUNT] = {
	[Q_RECOVER] = { "recover expired locks", Q_TEXT(
	    "UPDATE %1$s SET" RECOVER_SET
	    " WHERE status = 'processing' AND " LOCK_EXPIRED
	    " LIMIT ?"), 0, NULL, 0 },
	/* The --single lock taken again after a lost connection (name) */
	[Q_GET_LOCK] = { "take the --single lock again",
	    Q_TEXT("SELECT GET_LOCK(?, 0)"), 0, NULL, 0 },
	/* ... and first, named and taken in one: "jobrun:DATABASE.TABLE" and the
	 * scope's ":TYPE", in the 64 characters a lock's name may have
	 * (MySQL): cut, two scopes could only share one lock.  No database:
	 * no name, no lock.  (table, table, scope) */
	[Q_TAKE_SINGLE] = { "take the --single lock", Q_TEXT(
	    "SELECT n.name, IF(n.name IS NULL, NULL, GET_LOCK(n.name, 0))"
	    " FROM (SELECT LEFT(CONCAT('jobrun:', " QUEUE_DB_TABLE_ID ", ?),"
	    " 64) AS name) AS n"), 0, NULL, 0 },
	/* Changed rows: 1 inserted; with Q_F_AGAIN 2 re-armed, 0 left as it
	 * was; without, a duplicate changes nothing, so affected rows is 0
	 * and LAST_INSERT_ID is the existing job's id.  Q_F_RESUMABLE (with
	 * Q_F_AGAIN): a re-armed job must not resume an earlier run's
	 * checkpoint. */
	[Q_ENQUEUE] = { "enqueue job", (const struct queue_piece[]){
		{ 0, 0, INSERT_COLS }, { Q_F_DEADLINE, 0, ", deadline" },
		{ Q_F_PRIORITY, 0, ", priority" },
		{ 0, 0, ") VALUES " ROW_VALUES("?") },
		{ Q_F_DEADLINE, 0, DEADLINE_VALUE },
		{ Q_F_PRIORITY, 0, ", ?" },
		{ 0, 0, ") ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)" },
		{ Q_F_AGAIN, 0, "," AGAIN_SET },
		{ Q_F_AGAIN | Q_F_RESUMABLE, 0, AGAIN_RESUMABLE },
		{ Q_F_AGAIN | Q_F_DEADLINE, 0, AGAIN_DEADLINE },
		{ Q_F_AGAIN | Q_F_PRIORITY, 0, AGAIN_PRIORITY },
		{ Q_F_AGAIN, 0, AGAIN_END },
		{ 0, 0, NULL } },
	    Q_F_AGAIN | Q_F_RESUMABLE | Q_F_DEADLINE | Q_F_PRIORITY,
	    "enqueue job again",
	    Q_F_AGAIN },
	[Q_VALID_AT] = { "check --at",
	    /* Cast to text first: MySQL types a bare ? as DATETIME and
	     * takes '2031-02-30' there.  The cast itself passes a zero
	     * date or a zero month or day ('0000-00-00'), which is no
	     * time at all: a deadline of it never passed.  Date
	     * arithmetic is NULL for those, the same on both servers. */
	    Q_TEXT("SELECT CAST(CAST(? AS CHAR) AS DATETIME)"
	    " + INTERVAL 0 SECOND IS NOT NULL"), 0, NULL, 0 },
	/* Each takes the text once: a payload may be nearly
	 * max_allowed_packet.  (Through a derived table the server would
	 * no longer check that the text is utf8mb4.) */
	[Q_VALID_JSON] = { "check the payload",
	    Q_TEXT("SELECT JSON_VALID(?)"), 0, NULL, 0 },
	[Q_JSON_OBJECT] = { "check the payload",
	    Q_TEXT("SELECT JSON_TYPE(?) = 'OBJECT'"), 0, NULL, 0 },
	/* What a handler's reply says, read by the server's JSON functions:
	 * members come back as written (numbers and strings untouched). */
	/* Only valid JSON is read further: MySQL's JSON functions fail the
	 * statement on text that is not, where MariaDB's answer NULL. */
	[Q_READ_REPLY] = { "read the handler's reply", Q_TEXT(
	    "SELECT v, IF(v, JSON_TYPE(b), NULL),"
	    " IF(v, JSON_EXTRACT(b, '$.checkpoint'), NULL),"
	    " IF(v, JSON_EXTRACT(b, '$.snooze'), NULL)"
	    " FROM (SELECT b, JSON_VALID(b) AS v FROM (SELECT ? AS b) AS r)"
	    " AS reply"), 0, NULL, 0 },
};

const struct queue_sql *const queue_sql_files[QUEUE_SQL_FILES] = {
	queue_base_sql, queue_cycle_sql, queue_run_sql, queue_admin_sql,
	queue_info_sql, queue_report_sql, queue_probe_sql, queue_read_sql,
	queue_priority_sql };

const struct queue_sql *
queue_sql_of(unsigned which)
{
	unsigned id = Q_ID(which);
	size_t i;

	for (i = 0; id < Q_COUNT && i < QUEUE_SQL_FILES; i++)
		if (queue_sql_files[i][id].pieces != NULL)
			return &queue_sql_files[i][id];
	abort();		/* an id with no text: a programming error */
}

const char *
queue_purpose(unsigned which)
{
	const struct queue_sql *sql = queue_sql_of(which);

	return sql->flag != 0 && (which & sql->flag) != 0 ? sql->flagged :
	    sql->purpose;
}

/* The variant's place among its statement's: its flags, packed. */
static unsigned
variant_of(const struct queue_sql *sql, unsigned which)
{
	unsigned bit, v = 0, k = 0;

	for (bit = 1u << 8; bit != 0; bit <<= 1) {
		if ((sql->flags & bit) == 0)
			continue;
		if ((which & bit) != 0)
			v |= 1u << k;
		k++;
	}
	return v;
}

MYSQL_STMT **
queue_slot(struct queue *q, unsigned which)
{
	const struct queue_sql *sql = queue_sql_of(which);

	return &q->stmt[Q_ID(which)][variant_of(sql, which)];
}

MYSQL_STMT *
queue_handle(const struct queue *q, unsigned which)
{
	return q->stmt[Q_ID(which)][variant_of(queue_sql_of(which), which)];
}

void
queue_set_types(struct queue *q, const struct cfg *cfg)
{
	q->cfg = cfg;
}

struct queue *
queue_open(struct db *db, const char *table)
{
	struct queue *q = xcalloc(1, sizeof *q);

	q->db = db;
	snprintf(q->name, sizeof q->name, "%s", table);
	q->random = (uint64_t)getpid() << 32 ^ (uint64_t)now_ms();
	db_quote_ident(table, q->table, sizeof q->table);
	return q;
}

const char *
queue_name(const struct queue *q)
{
	return q->name;
}

const char *
queue_quoted(const struct queue *q)
{
	return q->table;
}

void
queue_counters(const struct queue *q, struct queue_counters *out)
{
	*out = q->counters;
}

void
queue_close(struct queue *q)
{
	if (q == NULL)
		return;
	queue_forget(q);
	free(q);
}

/* The pieces of statement which that its flags ask for, joined
 * (malloc'ed). */
static char *
template_of(unsigned which)
{
	const struct queue_piece *p, *pieces = queue_sql_of(which)->pieces;
	size_t len = 1, at = 0;
	char *t;

	for (p = pieces; p->text != NULL; p++)
		len += strlen(p->text);
	t = xmalloc(len);
	for (p = pieces; p->text != NULL; p++)
		if ((which & p->when) == p->when && (which & p->unless) == 0) {
			memcpy(t + at, p->text, strlen(p->text));
			at += strlen(p->text);
		}
	t[at] = '\0';
	return t;
}

/* The text of statement which (malloc'ed): its pieces, with the quoted
 * table name and, for the claims, one "?" per type; nothing else is ever
 * formatted in. */
char *
queue_stmt_text(const struct queue *q, unsigned which)
{
	char *in, *sql, *template = template_of(which);
	size_t n = q->claim_types > 0 ? q->claim_types : 1;
	int len;

	in = queue_list_text("", n, "");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	len = snprintf(NULL, 0, template, q->table, in);
	sql = xmalloc((size_t)len + 1);
	snprintf(sql, (size_t)len + 1, template, q->table, in);
#pragma GCC diagnostic pop
	free(template);
	free(in);
	return sql;
}

enum db_status
queue_recover(struct queue *q, unsigned long limit, uint64_t *count,
    char *err, size_t errlen)
{
	struct db_arg args[] = { DB_NUM(limit) };
	enum db_status st;

	*count = 0;
	if (limit == 0)
		return DB_OK;
	st = queue_stmt_run(q, Q_RECOVER, args, 1, err, errlen);
	if (st == DB_OK)
		*count = queue_stmt_changed(q, Q_RECOVER);
	return st;
}

void
queue_job_free(struct job *job)
{
	free(job->type);
	free(job->business_key);
	free(job->payload);
	free(job->checkpoint);
	memset(job, 0, sizeof *job);
}

/* What the table supports, known by preparing a statement that needs
 * it, once: *probed says it was tried, *has the answer. */
int
queue_supports(struct queue *q, unsigned which, int *probed, int *has)
{
	char cause[512];

	if (!*probed) {
		*has = queue_prepare(q, which, cause, sizeof cause) == DB_OK;
		*probed = 1;
	}
	return *has;
}

int
queue_resumable(struct queue *q)
{
	return queue_supports(q, Q_READ | Q_F_RESUMABLE,
	    &q->caps.checkpoint_probed, &q->caps.checkpoint);
}

int
queue_has_deadline(struct queue *q)
{
	return queue_supports(q, Q_READ | Q_F_DEADLINE,
	    &q->caps.deadline_probed, &q->caps.deadline);
}

unsigned
queue_read_flags(struct queue *q)
{
	return (queue_resumable(q) ? Q_F_RESUMABLE : 0) |
	    (queue_has_deadline(q) ? Q_F_DEADLINE : 0);
}

int
queue_finished_index(struct queue *q)
{
	return queue_supports(q, Q_REPORT_HOURS, &q->caps.finished_index_probed,
	    &q->caps.finished_index);
}

int
queue_single_lost(const struct queue *q)
{
	return q->lock_lost;
}

const struct db *
queue_db(const struct queue *q)
{
	return q->db;
}

enum db_status
queue_take_single(struct queue *q, const char *type, char *name,
    size_t namelen, int *held, char *err, size_t errlen)
{
	char scope[CFG_TYPE_MAX * 4 + 2];
	struct db_arg args[] = { QUEUE_TABLE_ID_ARGS(q), DB_STR(scope) };
	enum db_status st;
	char *cols[2] = { NULL, NULL };
	int found;

	*held = 0;
	snprintf(scope, sizeof scope, "%s%s", type != NULL ? ":" : "",
	    type != NULL ? type : "");
	st = queue_stmt_one(q, Q_TAKE_SINGLE, args, 3, cols, 2, &found, err,
	    errlen);
	snprintf(name, namelen, "%s", st == DB_OK && found && cols[0] != NULL ?
	    cols[0] : "");
	if (st == DB_OK && name[0] == '\0') {	/* no database (NULL) */
		errf(err, errlen, "name the --single lock: the server gave none");
		st = DB_ERROR;
	}
	*held = st == DB_OK && cols[1] != NULL && strcmp(cols[1], "1") == 0;
	if (*held)
		snprintf(q->lock_name, sizeof q->lock_name, "%s", name);
	db_free_cols(cols, 2);
	return st;
}

/* Ask the server whether it reads at as a DATETIME; CAST would
 * otherwise turn a typo into NULL, and NULL into "due now". */
static enum db_status
check_at(struct queue *q, const char *option, const char *at, char *err,
    size_t errlen)
{
	struct db_arg args[] = { DB_STR(at) };
	char *ok = NULL;
	enum db_status st;
	int found, valid;

	st = queue_stmt_one(q, Q_VALID_AT, args, 1, &ok, 1, &found, err, errlen);
	valid = found && ok != NULL && strcmp(ok, "1") == 0;
	free(ok);
	if (st == DB_OK && !valid) {
		errf(err, errlen, "%s: the server does not read \"%s\" as "
		    "a date and time", option, at);
		return DB_BAD_INPUT;
	}
	return st;
}

/* Ask which, a one-column yes or no, about text. */
static enum db_status
ask_json(struct queue *q, unsigned which, const char *text,
    size_t len, int *yes, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(text, len) };
	char *col = NULL;
	enum db_status st;
	int found;

	st = queue_stmt_one(q, which, args, 1, &col, 1, &found, err, errlen);
	*yes = found && col != NULL && strcmp(col, "1") == 0;
	free(col);
	return st;
}

enum db_status
queue_json_kind(struct queue *q, const char *text, size_t len, int object,
    enum queue_json *kind, char *err, size_t errlen)
{
	enum db_status st;
	int yes;

	*kind = QUEUE_JSON_INVALID;
	st = ask_json(q, Q_VALID_JSON, text, len, &yes, err, errlen);
	/* MySQL types JSON_VALID's parameter as JSON: text that is not JSON
	 * fails the statement where MariaDB answers 0.  JSON_VALID(CAST(?
	 * AS CHAR)) would answer 0 on both, but MariaDB then no longer
	 * refuses bytes that are not utf8mb4 (test 26's invalid UTF-8). */
	if (st == DB_BAD_INPUT && db_json_refused(q->db->last_errno))
		return DB_OK;
	if (st != DB_OK || !yes)
		return st;
	*kind = QUEUE_JSON_OTHER;
	if (!object)
		return DB_OK;
	st = ask_json(q, Q_JSON_OBJECT, text, len, &yes, err, errlen);
	if (st == DB_OK && yes)
		*kind = QUEUE_JSON_OBJECT;
	return st;
}

enum db_status
queue_read_reply(struct queue *q, const char *text, size_t len,
    struct reply *reply, char *err, size_t errlen)
{
	struct db_arg args[] = { DB_STRN(text, len) };
	char *cols[4] = { NULL, NULL, NULL, NULL };
	size_t lens[4] = { 0 };
	enum db_status st;
	int rc;

	memset(reply, 0, sizeof *reply);
	st = queue_stmt_run(q, Q_READ_REPLY, args, 1, err, errlen);
	if (st != DB_OK)
		return st;
	rc = db_fetch_len(queue_handle(q, Q_READ_REPLY), cols, lens, 4, err,
	    errlen);
	if (rc < 0)
		return DB_ERROR;
	if (rc == 1)
		db_done(queue_handle(q, Q_READ_REPLY));
	reply->valid = cols[0] != NULL && strcmp(cols[0], "1") == 0;
	reply->object = cols[1] != NULL && strcmp(cols[1], "OBJECT") == 0;
	reply->checkpoint = cols[2];
	reply->checkpoint_len = lens[2];
	reply->snooze = cols[3];
	free(cols[0]);
	free(cols[1]);
	return DB_OK;
}

/* The level a new job of type takes: --priority, else its [type.NAME]
 * priority; none (the column's default, 0) when neither says. */
static int
priority_of(const struct queue *q, const char *type,
    const struct queue_when *when, long *level)
{
	const struct cfg_type *t;

	if (when->has_priority) {
		*level = when->priority;
		return 1;
	}
	t = q->cfg != NULL ? cfg_find_type(q->cfg, type) : NULL;
	if (t == NULL || !t->priority_set)
		return 0;
	*level = t->priority;
	return 1;
}

/* --at and --deadline, as the server reads them; a deadline and a
 * priority need their columns. */
static enum db_status
check_when(struct queue *q, const char *type, const struct queue_when *when,
    char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	long level;

	if (priority_of(q, type, when, &level) && !queue_has_priority(q)) {
		if (when->has_priority)
			errf(err, errlen, "--priority: %s has no priority "
			    "column and indexes: apply sql/013_priority.sql",
			    q->table);
		else
			errf(err, errlen, "[type.%s] priority: %s has no "
			    "priority column and indexes: apply "
			    "sql/013_priority.sql", type, q->table);
		return DB_SCHEMA;
	}
	if (when->at != NULL)
		st = check_at(q, "--at", when->at, err, errlen);
	if (st != DB_OK || !when->has_deadline)
		return st;
	if (!queue_has_deadline(q)) {
		errf(err, errlen, "--deadline: %s has no deadline column: "
		    "apply sql/009_deadline.sql", q->table);
		return DB_SCHEMA;
	}
	if (when->deadline_at != NULL)
		st = check_at(q, "--deadline", when->deadline_at, err, errlen);
	return st;
}

#define ENQUEUE_ARGS_MAX 9

/* The arguments of Q_ENQUEUE, and its deadline variant into *which when
 * the table has the column (no --deadline: NULL, which also clears a
 * re-armed job's old one); returns how many. */
static unsigned
enqueue_args(struct queue *q, struct db_arg *args, const char *key,
    const char *type, const char *payload, size_t payload_len,
    unsigned long max_attempts, const struct queue_when *when,
    unsigned *which)
{
	unsigned n = 0;
	long level;

	args[n++] = DB_STR(key);
	args[n++] = DB_STR(type);
	args[n++] = DB_STRN(payload, payload_len);
	args[n++] = max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL);
	args[n++] = DB_STR(when->at);
	args[n++] = DB_NUM(when->delay);
	if (queue_has_deadline(q)) {
		*which |= Q_F_DEADLINE;
		args[n++] = DB_STR(when->has_deadline ? when->deadline_at :
		    NULL);
		args[n++] = when->has_deadline && when->deadline_at == NULL ?
		    DB_NUM(when->deadline_in) : DB_STR(NULL);
	}
	/* With the column, always: --again re-arms a job as a new one
	 * would be, at its type's level or 0, not its old one. */
	if (queue_has_priority(q)) {
		*which |= Q_F_PRIORITY;
		args[n++] = DB_SNUM(priority_of(q, type, when, &level) ?
		    level : 0);
	}
	return n;
}

enum db_status
queue_enqueue(struct queue *q, const char *type, const char *key,
    const char *payload, size_t payload_len, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *id, int *created, char **status,
    char *err, size_t errlen)
{
	struct db_arg args[ENQUEUE_ARGS_MAX];
	unsigned which = Q_ENQUEUE, n;
	struct db_arg status_args[1];
	enum db_status st;
	int found;

	*status = NULL;
	if ((st = check_when(q, type, when, err, errlen)) != DB_OK)
		return st;
	n = enqueue_args(q, args, key, type, payload, payload_len,
	    max_attempts, when, &which);
	st = queue_stmt_run(q, which, args, n, err, errlen);
	if (st != DB_OK)
		return st;
	*created = queue_stmt_changed(q, which) == 1;
	*id = (uint64_t)mysql_stmt_insert_id(queue_handle(q, which));
	if (*created) {
		*status = xstrdup("pending");
		return DB_OK;
	}
	status_args[0] = DB_NUM(*id);
	st = queue_stmt_one(q, Q_JOB_STATUS, status_args, 1, status, 1, &found, err,
	    errlen);
	if (st == DB_OK && !found) {
		errf(err, errlen, "read job status in %s: job %llu vanished",
		    q->table, (unsigned long long)*id);
		return DB_ERROR;
	}
	return st;
}

enum db_status
queue_enqueue_again(struct queue *q, const char *type, const char *key,
    const char *payload, size_t payload_len, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *id, enum queue_again *outcome,
    char **status, char *err, size_t errlen)
{
	struct db_arg args[ENQUEUE_ARGS_MAX];
	/* A re-armed job must not resume an earlier run's checkpoint. */
	unsigned which = Q_ENQUEUE | Q_F_AGAIN |
	    (queue_resumable(q) ? Q_F_RESUMABLE : 0), n;
	struct db_arg status_args[1];
	enum db_status st;
	uint64_t changed;
	int found;

	*status = NULL;
	if ((st = check_when(q, type, when, err, errlen)) != DB_OK)
		return st;
	n = enqueue_args(q, args, key, type, payload, payload_len,
	    max_attempts, when, &which);
	st = queue_stmt_run(q, which, args, n, err, errlen);
	if (st != DB_OK)
		return st;
	changed = queue_stmt_changed(q, which);
	*id = (uint64_t)mysql_stmt_insert_id(queue_handle(q, which));
	*outcome = changed == 1 ? QUEUE_CREATED : changed == 2 ?
	    QUEUE_REARMED : QUEUE_LEFT;
	if (*outcome != QUEUE_LEFT) {
		*status = xstrdup("pending");
		return DB_OK;
	}
	status_args[0] = DB_NUM(*id);
	st = queue_stmt_one(q, Q_JOB_STATUS, status_args, 1, status, 1, &found,
	    err, errlen);
	if (st == DB_OK && !found) {
		errf(err, errlen, "read job status in %s: job %llu vanished",
		    q->table, (unsigned long long)*id);
		return DB_ERROR;
	}
	return st;
}

/* The multi-row insert for n rows, prepared once per batch size.  Each
 * row's payload is the template with "from" and "to" set by the server's
 * JSON_SET, so the template's own numbers and strings stay as written. */
static void
prepare_batch(struct queue *q, size_t n, int priority)
{
	static const char row[] = ROW_VALUES(CHUNK_PAYLOAD),
	    deadline[] = DEADLINE_VALUE, level[] = ", ?";
	int has_deadline = queue_has_deadline(q);
	char *sql;
	size_t i, len, at;

	if (q->batch != NULL && q->batch_rows == n &&
	    q->batch_priority == priority)
		return;
	queue_stmts_close(q->batch);
	len = sizeof INSERT_JOBS + 40 + n * (sizeof row + sizeof deadline +
	    sizeof level + 3) + 60;
	sql = xmalloc(len);
	at = (size_t)snprintf(sql, len, "%s%s%s) VALUES ", INSERT_COLS,
	    has_deadline ? ", deadline" : "", priority ? ", priority" : "");
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(sql + at, len - at, "%s%s%s)%s", row,
		    has_deadline ? deadline : "", priority ? level : "",
		    i + 1 < n ? ", " : "");
	/* An existing key is left as it is and not counted as changed. */
	snprintf(sql + at, len - at, " ON DUPLICATE KEY UPDATE id = id");
	q->batch = queue_stmts_once(q, sql, "enqueue jobs", QUEUE_JOBS_TABLE);
	q->batch_rows = n;
	q->batch_priority = priority;
	free(sql);
}

enum db_status
queue_enqueue_batch(struct queue *q, const char *type, const char *template,
    const struct queue_new_job *jobs, size_t n, const struct queue_when *when,
    unsigned long max_attempts, uint64_t *created, char *err, size_t errlen)
{
	int deadline = queue_has_deadline(q), priority;
	struct db_arg *args;
	enum db_status st;
	size_t i, per;
	long level;

	*created = 0;
	if (n == 0)
		return DB_OK;
	if ((st = check_when(q, type, when, err, errlen)) != DB_OK)
		return st;
	priority = priority_of(q, type, when, &level);
	prepare_batch(q, n, priority);
	per = BATCH_PARAMS + (deadline ? 2u : 0u) + (priority ? 1u : 0u);
	args = xcalloc(n * per, sizeof *args);
	for (i = 0; i < n; i++) {
		struct db_arg *a = &args[per * i];

		a[0] = DB_STR(jobs[i].key);
		a[1] = DB_STR(type);
		a[2] = DB_STR(template != NULL ? template : "{}");
		a[3] = DB_NUM(jobs[i].from);
		a[4] = DB_NUM(jobs[i].to);
		a[5] = max_attempts ? DB_NUM(max_attempts) : DB_STR(NULL);
		a[6] = DB_STR(when->at);
		a[7] = DB_NUM(when->delay);
		if (deadline) {
			a[8] = DB_STR(when->has_deadline ? when->deadline_at :
			    NULL);
			a[9] = when->has_deadline && when->deadline_at == NULL ?
			    DB_NUM(when->deadline_in) : DB_STR(NULL);
		}
		if (priority)
			a[per - 1] = DB_SNUM(level);
	}
	/* Too big for the server: the runner says so, rather than "gone
	 * away", and does not send it again. */
	st = queue_stmts_run(q->batch, 0, args, (unsigned)(n * per),
	    err, errlen);
	free(args);
	if (st != DB_OK)
		return st;
	*created = queue_stmts_changed(q->batch, 0);
	return DB_OK;
}

/* The keys go into a derived table under a column of business_key's own
 * type (the UNION takes the column's charset and collation over the
 * parameters'), so "x.k = ?" compares as the table's UNIQUE key does,
 * whatever collation an application gave the column; no row is read. */
enum db_status
queue_key_among(struct queue *q, const char *key, const char *const *keys,
    size_t n, size_t *index, char *err, size_t errlen)
{
	static const char head[] = "SELECT MIN(x.n) FROM (SELECT business_key"
	    " AS k, 0 AS n FROM %1$s WHERE FALSE",
	    tail[] = ") AS x WHERE x.k = ?";
	struct queue_stmts *once;
	struct db_arg *args;
	char *sql, *col = NULL;
	enum db_status st;
	size_t i, len, at;
	int found;

	*index = 0;
	if (n == 0)
		return DB_OK;
	len = sizeof head + n * 40 + sizeof tail;
	sql = xmalloc(len);
	at = (size_t)snprintf(sql, len, "%s", head);
	for (i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(sql + at, len - at,
		    " UNION ALL SELECT ?, %zu", i + 1);
	snprintf(sql + at, len - at, "%s", tail);
	args = xcalloc(n + 1, sizeof *args);
	for (i = 0; i < n; i++)
		args[i] = DB_STR(keys[i]);
	args[n] = DB_STR(key);
	once = queue_stmts_once(q, sql, "compare keys", QUEUE_JOBS_TABLE);
	st = queue_stmts_one(once, 0, args, (unsigned)(n + 1), &col, 1,
	    &found, err, errlen);
	if (st == DB_OK && found && col != NULL)
		*index = (size_t)strtoull(col, NULL, 10);
	queue_stmts_close(once);
	free(col);
	free(args);
	free(sql);
	return st;
}
