/*
 * queue.h - the job table, as named operations.
 *
 * Every SQL statement on the table lives behind these functions (their
 * text in queue.c; the operators' changes in queue_admin.c; what is read
 * for people in queue_info.c).  Each returns a db_status and fills err
 * with "<what> in <table>: <cause>"; rows come back as structs with named
 * fields.  Statements are prepared on first use and kept for the run, so
 * an invocation that finds nothing due prepares only what it ran.
 */
#ifndef JOBRUN_QUEUE_H
#define JOBRUN_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "handler.h"

#define QUEUE_KEY_MAX 128	/* polling_jobs.business_key VARCHAR(128) */
#define QUEUE_TYPE_MAX CFG_TYPE_MAX	/* config.h (via db.h) owns it */
#define QUEUE_TOKEN_MAX 100	/* polling_jobs.locked_by VARCHAR(100) */

/* A deadlock or lock wait timeout is run again this many times before
 * the error is reported. */
#define QUEUE_CONFLICT_RETRIES 5
#define QUEUE_CLAIM_RETRIES 10

/* Jobs one statement may read back or mark success at once. */
#define QUEUE_GROUP_MAX 16

struct queue;

/* The table called table, reached through db (which must outlive it). */
struct queue *queue_open(struct db *db, const char *table);
/* The configuration whose [type.NAME] priority the jobs jobrun creates
 * take when no --priority says otherwise (kept, not copied). */
void queue_set_types(struct queue *q, const struct cfg *cfg);
void queue_close(struct queue *q);

/* The table's name as configured, and quoted as an identifier. */
const char *queue_name(const struct queue *q);
const char *queue_quoted(const struct queue *q);

/* What the connection went through in this invocation. */
struct queue_counters {
	uint64_t conflicts;	/* deadlocks and lock waits run again */
	uint64_t reconnects;	/* connections lost and made again */
	uint64_t by_priority;	/* claims made in priority order */
};
void queue_counters(const struct queue *q, struct queue_counters *out);

/* One write of a transaction, by which the outcome of a COMMIT whose
 * answer was lost is read: a fenced mark of job id under token, or with
 * id 0 a claim made with token; token NULL when the transaction wrote
 * nothing. */
struct queue_witness {
	uint64_t id;
	const char *token;
};

/* --- the statements of the modules beside the queue (queue.c) ---------- */

/* The job table in a module's statement text and table names. */
#define QUEUE_JOBS_TABLE "%1$s"
/* The module's own table (queue_stmts_open's other) in its text. */
#define QUEUE_OTHER_TABLE "%2$s"

/* The server's clock in Unix seconds and microseconds, whatever the
 * session's time zone: UNIX_TIMESTAMP(NOW(6)) would go through the zone
 * (and be an hour off when a local time is ambiguous), and
 * UNIX_TIMESTAMP(6) reads 6 as a date (NULL).  Both parts are of the
 * statement's one start time, and no zone moves the microseconds. */
#define QUEUE_NOW_EPOCH "(UNIX_TIMESTAMP() + MICROSECOND(NOW(6)) / 1000000)"

/* The job table as the server tells tables apart: in lower case where it
 * folds table names (lower_case_table_names 1 or 2), else as configured.
 * What the tables that name a job table (schedules, fan-ins, start
 * latency, retention's turns) store and look up, so that two
 * configurations spelling one table in two cases share their rows (args:
 * table, table). */
#define QUEUE_TABLE_ID "IF(@@lower_case_table_names = 0, ?, LOWER(?))"
/* Its arguments, for q (the same two for QUEUE_DB_TABLE_ID) */
#define QUEUE_TABLE_ID_ARGS(q) DB_STR(queue_name(q)), DB_STR(queue_name(q))
/* ... among the names a row may have: that, and the name as configured,
 * as earlier versions of jobrun kept it (args: table, table, table) */
#define QUEUE_TABLE_IDS "IN (" QUEUE_TABLE_ID ", ?)"
#define QUEUE_TABLE_IDS_ARGS(q) QUEUE_TABLE_ID_ARGS(q), DB_STR(queue_name(q))
/* ... with its database, "DATABASE.TABLE", for the server's named locks
 * (args: table, table) */
#define QUEUE_DB_TABLE_ID "IF(@@lower_case_table_names = 0," \
	" CONCAT(DATABASE(), '.', ?), LOWER(CONCAT(DATABASE(), '.', ?)))"

/* The job table in a statement of fan-in's that joins it to its members
 * (alias the job table's, id_expr the member's job id): the job table's
 * columns are named here, by the queue, not in the module. */
#define QUEUE_JOIN_JOBS(alias, id_expr) " JOIN " QUEUE_JOBS_TABLE " AS " \
	alias " ON " alias ".id = " id_expr
/* ... whose job has this status (a QUEUE_* word of queue_schema.h) */
#define QUEUE_STATUS_IS(alias, status) " " alias ".status = '" status "'"
/* ... the jobs whose keys are among a list of parameters; the list and
 * ")" follow.  Compared under business_key's own collation. */
#define QUEUE_JOBS_KEYED_IN(alias) " " QUEUE_JOBS_TABLE " AS " alias \
	" WHERE " alias ".business_key IN ("

/* ... whether expr, a key kept in another table (a fan-in's callback
 * key), is one the job table takes for the parameter that follows, the
 * server comparing under business_key's own collation: the parameter
 * takes the column's type in a derived table (as in queue_key_among),
 * and expr goes through JSON_QUOTE and back, a value then as a parameter
 * is (coercible), so the column's collation decides over that of expr's
 * table (utf8mb4_bin would win over a column of utf8mb4_general_ci). */
#define QUEUE_KEY_IS(expr) " EXISTS (SELECT 1 FROM (SELECT business_key" \
	" AS k FROM " QUEUE_JOBS_TABLE " WHERE FALSE UNION ALL SELECT ?)" \
	" AS x WHERE x.k = JSON_UNQUOTE(JSON_QUOTE(" expr ")))"

/* A type's jobs in processing, as a subquery of the job table with two
 * parameters (name, name): idx_type_status (type, status) covers the
 * count, so no row is read, and the binary comparison keeps a type that
 * the collation takes for equal out of it.  Flow control's statement
 * that locks a type's control row embeds it, so that the count is read
 * after the lock was granted; queue_type_load runs it on its own. */
#define QUEUE_RUNNING_SQL "(SELECT COUNT(*) FROM " QUEUE_JOBS_TABLE \
	" FORCE INDEX (idx_type_status) WHERE type = ?" \
	" AND CAST(type AS BINARY) = CAST(? AS BINARY)" \
	" AND status = 'processing')"

/* A module's statements (flow control, fan-in, schedules) on the queue's
 * connection, run by the queue's one runner: prepared on first use,
 * forgotten when the connection is made again, run again after a
 * deadlock or a lost connection outside a transaction and never inside
 * one (queue_trx runs the whole transaction again).  texts[i] holds
 * QUEUE_JOBS_TABLE and QUEUE_OTHER_TABLE (other, quoted) for the tables;
 * errors read "<purposes[i]> in <tables[i]>: <cause>", tables[i] NULL
 * for a statement on no table; tables NULL: every one is on other. */
struct queue_stmts;
struct queue_stmts *queue_stmts_open(struct queue *q,
                                     const char *const *texts,
                                     const char *const *purposes,
                                     const char *const *tables, size_t n,
                                     const char *other);
void queue_stmts_close(struct queue_stmts *s);
/* head, then n placeholders "?, ?, ...", then tail (malloc'ed): the text
 * of a statement on a list built for the call. */
char *queue_list_text(const char *head, size_t n, const char *tail);
/* A set of one statement of one use, text built for the call (a list of
 * n keys), which does purpose on table (as tables[i] above). */
struct queue_stmts *queue_stmts_once(struct queue *q, const char *text,
                                     const char *purpose, const char *table);

/* Prepare statement which (whether the tables it names exist). */
enum db_status queue_stmts_prepare(struct queue_stmts *s, size_t which,
                                   char *err, size_t errlen);
/* Run statement which; its rows, if any, are left for queue_stmts_fetch. */
enum db_status queue_stmts_run(struct queue_stmts *s, size_t which,
                               const struct db_arg *args, unsigned nargs,
                               char *err, size_t errlen);
/* Run a select of at most one row of ncols columns (malloc'ed, NULL for
 * SQL NULL); *found says whether it gave one. */
enum db_status queue_stmts_one(struct queue_stmts *s, size_t which,
                               const struct db_arg *args, unsigned nargs,
                               char **cols, unsigned ncols, int *found,
                               char *err, size_t errlen);
/* The next row of which's result: 1, 0 at the end, -1 on error; _len
 * also gives each column's length (text that may hold NUL bytes). */
int queue_stmts_fetch(struct queue_stmts *s, size_t which, char **cols,
                      unsigned ncols, char *err, size_t errlen);
int queue_stmts_fetch_len(struct queue_stmts *s, size_t which, char **cols,
                          size_t *lens, unsigned ncols, char *err,
                          size_t errlen);
/* The warnings of the last statement s ran: a value the server changed
 * to fit (a non-strict sql_mode truncates where a strict one fails). */
unsigned queue_stmts_warnings(const struct queue_stmts *s);
/* Rows the last run of which changed, and the id it inserted. */
uint64_t queue_stmts_changed(const struct queue_stmts *s, size_t which);
uint64_t queue_stmts_insert_id(const struct queue_stmts *s, size_t which);
/* An unsigned number column, 0 when NULL or not a number; a signed one
 * into *out (0), -1 when NULL or not a number. */
unsigned long queue_number(const char *s);
int queue_int64(const char *s, int64_t *out);
/* The server's error number of the connection's last statement that
 * failed (a statement that succeeds leaves it). */
unsigned queue_last_errno(const struct queue *q);
/* Whether the last statement that failed gave up waiting for a row's
 * lock (1205): it undid that statement alone, and the transaction it was
 * in, if any, goes on (unless innodb_rollback_on_timeout; queue_trx_open
 * tells). */
int queue_lock_wait_ended(const struct queue *q);

/* --- jobrun's other tables, as the account finds them -------------------- */

/* What jobrun uses on the job table. */
#define QUEUE_PRIVILEGES "SELECT, INSERT, UPDATE, DELETE"

/* How a module's tables (flow control's, schedules', fan-in's, start
 * latency's: each made by a migration) stand for the account.  MariaDB
 * answers a statement on a table the account has no privilege on with
 * "denied" (1142), whether the table exists or not, so as not to tell
 * an account what it may not see; "no such table" (1146) comes only to
 * an account whose privileges would reach the table (on the database,
 * say); and a GRANT on a table that does not exist is refused.  So
 * when the first look at the tables is denied, absent and not granted
 * cannot be told apart from this account. */
enum queue_reach {
	QUEUE_REACHED,		/* there; every statement tried prepared */
	QUEUE_ABSENT,		/* no such table */
	QUEUE_HIDDEN,		/* the first look denied: absent, or no
				 * privilege on it */
	QUEUE_UNGRANTED		/* there (a look prepared), but a privilege
				 * jobrun uses is not granted */
};

/* The one rule for those tables: whether a statement on them that
 * failed with st found them absent or not granted (1146 or 1142).
 * Either way the feature is off for this account, unless the
 * configuration needs it. */
int queue_unseen(const struct queue *q, enum db_status st);

/* Prepare statements which[0..n-1] of s in order (prepared, not run),
 * which[0] a look at the tables and the others each needing a privilege
 * jobrun uses on them: *reach says how they stand.  Another error (a
 * column missing) is returned, with err. */
enum db_status queue_stmts_reach(struct queue_stmts *s, const size_t *which,
                                 size_t n, enum queue_reach *reach,
                                 char *err, size_t errlen);

/* A feature's tables, as messages and GRANTs name them. */
struct queue_feature {
	const char *tables[2];	/* their names; the second NULL for one */
	const char *privileges;	/* what jobrun uses on each */
	const char *migration;	/* the file that makes them */
};

/* What a reach other than QUEUE_REACHED means for a feature's tables
 * (why) and the statements that put it right (fix): the migration, and
 * a GRANT per table on the connection's database to its account
 * (CURRENT_USER(), asked then). */
struct queue_access {
	enum queue_reach reach;
	enum db_status status;	/* DB_SCHEMA when absent, else DB_DENIED:
				 * how a run that needs the tables ends */
	char why[400];
	char fix[800];
};
void queue_access_say(struct queue *q, enum queue_reach reach,
                      const struct queue_feature *f,
                      struct queue_access *out);

/* For check: how the job table stands for the account, a statement
 * needing each of QUEUE_PRIVILEGES prepared (needs idx_pick). */
enum db_status queue_jobs_access(struct queue *q, struct queue_access *a,
                                 char *err, size_t errlen);

/* A transaction of the caller's statements, begun, committed, rolled
 * back and run again whole by one helper.  body runs its statements
 * (queue's operations and its module's); it may set *w to a write by
 * which a COMMIT whose answer was lost is judged.
 * An idempotent transaction (one that may be run twice: every write
 * conditional on the state it changes) needs none: after a lost COMMIT
 * it is run again.  Run again after a deadlock, a lost certification, a
 * lost connection before the COMMIT or a COMMIT the server did not keep,
 * up to tries runs, with a short random pause after a conflict; a lock
 * wait that timed out is another runner holding the row for that long:
 * not again unless lock_wait_again.  undo, when set, puts back what the
 * body changed in the caller's state after a run that failed (st its
 * error), before any run again.  alone, when set and true before a run,
 * has that run's statements each be their own (no transaction; an
 * error is final). */
struct queue_trx {
	enum db_status (*body)(void *arg, struct queue_witness *w, char *err,
	                       size_t errlen);
	void (*undo)(void *arg, enum db_status st);
	int (*alone)(void *arg);
	void *arg;
	unsigned tries;
	int idempotent;
	int lock_wait_again;
};
enum db_status queue_trx(struct queue *q, const struct queue_trx *t,
                         char *err, size_t errlen);

/* Whether the server says our transaction is still open.  On Galera a
 * replicated write can roll a local transaction back while it waits
 * between two statements, and a prepared statement sent after that
 * runs on its own, in autocommit, without an error: after a no, the
 * statements that follow are each their own (run again after a
 * deadlock), and the transaction ends in an error (DB_CONFLICT). */
int queue_trx_open(struct queue *q);

/* Whether a transaction of queue_trx is open (as jobrun knows, without
 * asking the server): a write made now commits with it, not on its own. */
int queue_in_trx(const struct queue *q);

/* The session's lock wait (innodb_lock_wait_timeout) for a while: seconds
 * long, or, with 0, as it was before.  While a wait of its own is set, a
 * statement whose lock wait times out is not run again on its own: it
 * fails (DB_CONFLICT), and its caller gives up. */
enum db_status queue_lock_wait(struct queue *q, unsigned seconds, char *err,
                               size_t errlen);

/* --- the run's cycle (queue.c) ------------------------------------------ */

/* Before a run's first claim: prepare the claim over ntypes types and the
 * recovery, and check that the table has every column and index the
 * cycle uses, so that a table that lacks one is found (DB_SCHEMA) before
 * any row is touched. */
enum db_status queue_prepare_run(struct queue *q, size_t ntypes, char *err,
                                 size_t errlen);

/* Give back jobs whose runner's lock expired: to pending, or to failed when
 * they have used all their attempts.  At most limit rows; *count says how
 * many. */
enum db_status queue_recover(struct queue *q, unsigned long limit,
                             uint64_t *count, char *err, size_t errlen);

/* What a waiting run (--wait) looks for: the server's clock in Unix
 * seconds; in how many milliseconds the first pending job of types (as
 * the claim takes them) is due, 0 when it is, -1 when none is within a
 * second; and whether a runner's lock has expired.  One statement of
 * plain reads: it locks no row and waits for none. */
struct queue_probe {
	int64_t server_s;
	int64_t due_ms;
	int expired;
	int64_t took_us;	/* the statement's round trip */
};
enum db_status queue_probe(struct queue *q, const char *const *types,
                           size_t ntypes, struct queue_probe *out,
                           char *err, size_t errlen);

/* Claim the oldest due pending job whose type is one of types (byte for
 * byte), holding it with token for lock_seconds of real time.  *claimed is
 * 0 when nothing is due; otherwise job is filled (free with
 * queue_job_free).  Oldest in (next_run_at, id) order from where the
 * queue's last claim got to (its cursor), so a job that becomes due
 * behind that point is claimed up to a second later than from the head
 * (queue.c).  Claims on one queue must not overlap. */
enum db_status queue_claim(struct queue *q, const char *const *types,
                           size_t ntypes, unsigned long lock_seconds,
                           const char *token, struct job *job, int *claimed,
                           char *err, size_t errlen);
void queue_job_free(struct job *job);

/* The fenced writes: each touches the job only while it is still ours
 * (id and token match); *owned is 0 when the lock was lost and nothing was
 * written. */
enum db_status queue_mark_success(struct queue *q, const struct job *job,
                                  const char *token, int *owned,
                                  char *err, size_t errlen);
enum db_status queue_mark_retry(struct queue *q, const struct job *job,
                                const char *token, unsigned long delay,
                                const char *last_error, int *owned,
                                char *err, size_t errlen);
enum db_status queue_mark_failed(struct queue *q, const struct job *job,
                                 const char *token, const char *last_error,
                                 int *owned, char *err, size_t errlen);
/* Put the job off for delay seconds without spending this attempt.
 * progress says whether it saved a new checkpoint; without progress the
 * row's snooze count goes up, with it the count starts again. */
enum db_status queue_snooze(struct queue *q, const struct job *job,
                            const char *token, unsigned long delay,
                            int progress, const char *note, int *owned,
                            char *err, size_t errlen);
/* Give the job back, due now, without counting this attempt. */
/* After a fenced write found the job no longer ours: if an operator
 * asked to stop it (queue_cancel_running), write the cancel; *done says
 * whether it was so. */
enum db_status queue_cancel_done(struct queue *q, const struct job *job,
                                 const char *token, int *done, char *err,
                                 size_t errlen);
enum db_status queue_release(struct queue *q, const struct job *job,
                             const char *token, int *owned, char *err,
                             size_t errlen);
/* Renew the job's lock for lock_seconds. */
enum db_status queue_extend(struct queue *q, const struct job *job,
                            const char *token, unsigned long lock_seconds,
                            int *owned, char *err, size_t errlen);
/* Store the handler's progress, json (len bytes) as it was written, in
 * the job's row and renew its lock, if the server's JSON_VALID takes it:
 * *valid 0 means it was refused and nothing changed. */
enum db_status queue_checkpoint(struct queue *q, const struct job *job,
                                const char *token, const char *json,
                                size_t len, unsigned long lock_seconds,
                                int *owned, int *valid, char *err,
                                size_t errlen);
/* Whether the table has the checkpoint columns (sql/002_checkpoint.sql);
 * asked once, by preparing the statement that reads them. */
int queue_resumable(struct queue *q);
/* Whether the table has the deadline column (sql/009_deadline.sql); asked
 * once, the same way. */
int queue_has_deadline(struct queue *q);

/* Read a handler's JSON reply (struct reply, handler.h) with the
 * server's JSON functions. */
enum db_status queue_read_reply(struct queue *q, const char *text,
                                size_t len, struct reply *reply,
                                char *err, size_t errlen);

/* --single: take the server's named lock for the table, or (type not
 * NULL) for its type, without waiting: its name into name, as the server
 * made it (QUEUE_DB_TABLE_ID); *held says whether we got it.  It dies
 * with the connection; queue_single_lost says when a reconnect could not
 * take it back (another runner has it). */
enum db_status queue_take_single(struct queue *q, const char *type,
                                 char *name, size_t namelen, int *held,
                                 char *err, size_t errlen);
int queue_single_lost(const struct queue *q);

/* The connection's server, as db_server_name and db_tzinfo_command say. */
const struct db *queue_db(const struct queue *q);

/* Whether the table has idx_type_pick (sql/001_type_pick.sql). */
int queue_type_index(struct queue *q);

/* Claim job id, chosen by the caller, if it is still pending and due
 * (*claimed 0 when it is not); read into job as queue_claim does.  The
 * cursor is left alone: the choice was not the claim's order. */
enum db_status queue_claim_job(struct queue *q, uint64_t id,
                               unsigned long lock_seconds, const char *token,
                               struct job *job, int *claimed, char *err,
                               size_t errlen);

/* Claim jobs ids[0..n-1] (1..QUEUE_GROUP_MAX), chosen by the caller, in
 * its transaction, with tokens[i], and read each into *jobs[i] (zeroed
 * before): one round trip where the server runs bulks.  DB_CONFLICT when
 * one of them was no longer pending and due (the caller's transaction
 * is run again whole). */
enum db_status queue_claim_jobs(struct queue *q, const uint64_t *ids,
                                size_t n, unsigned long lock_seconds,
                                const char *const *tokens,
                                struct job *const *jobs, char *err,
                                size_t errlen);

/* Whether the server is a Galera node (wsrep_on), asked once: so when it
 * says on, or when asking fails but for want of the variable (MySQL has
 * none: not Galera). */
int queue_galera(struct queue *q);

/* The session's innodb_lock_wait_timeout in seconds, asked once a
 * connection (the longest a statement waits for a row; one made again
 * has the server's global value of then); ULONG_MAX when the server
 * cannot say. */
unsigned long queue_lock_wait_seconds(struct queue *q);

/* Whether a transaction may claim several chosen jobs (queue_claim_jobs):
 * not on Galera, where the bulk claims are not made either. */
int queue_many_claims(struct queue *q);

/* A group's claim (in a transaction): the job is not read, and the
 * cursor not moved, until queue_read_claimed; *id is 0 when none was
 * due. */
enum db_status queue_claim_id(struct queue *q, const char *const *types,
                              size_t ntypes, unsigned long lock_seconds,
                              const char *token, uint64_t *id, char *err,
                              size_t errlen);

/* A group's claims in one round trip (in a transaction): the claim past
 * the cursor run for each of tokens[0..n-1] (2..QUEUE_GROUP_MAX) by
 * MariaDB's bulk execution, each still one UPDATE ... LIMIT 1 taking one
 * job, and the jobs taken read into *jobs[i] (zeroed before) by their
 * tokens, the cursor moved past them.  In priority order (sql/013, more
 * than one level due) the same past the top level's cursor, less the
 * plain claim's turns among the n (queue_claim_priority_bulk).  *claimed
 * is how many were taken (jobs[i]->id set); 0 also when the bulk claim
 * does not apply (no cursor, a spread claim, a server without bulk
 * execution): the caller claims the rest one by one, with queue_claim_id. */
enum db_status queue_claim_bulk(struct queue *q, const char *const *types,
                                size_t ntypes, unsigned long lock_seconds,
                                const char *const *tokens,
                                struct job *const *jobs, size_t n,
                                size_t *claimed, char *err, size_t errlen);

/* Read back n (1..QUEUE_GROUP_MAX) jobs claimed with queue_claim_id, ids[i]
 * with tokens[i] into *jobs[i] (zeroed before), in one statement. */
enum db_status queue_read_claimed(struct queue *q, const uint64_t *ids,
                                  const char *const *tokens,
                                  struct job *const *jobs, size_t n,
                                  char *err, size_t errlen);

/* Mark n (1..QUEUE_GROUP_MAX) jobs success in one fenced write; *changed
 * is how many were still ours (if not all, which ones is not known: run
 * it in a transaction and roll back). */
enum db_status queue_mark_success_many(struct queue *q, const uint64_t *ids,
                                       const char *const *tokens, size_t n,
                                       uint64_t *changed, char *err,
                                       size_t errlen);

/* --- priorities (queue_priority.c) -------------------------------------- */

/* The pending jobs of one level of sql/013_priority.sql's priority: how
 * many, how many due, and the oldest due one's wait in seconds (-1: none
 * due). */
struct queue_level_count {
	long level;
	uint64_t pending, due;
	long lag;
};

/* Whether the table has the migration's column and indexes (probed once). */
int queue_has_priority(struct queue *q);
/* The levels of the pending jobs (of type, or of all types when NULL),
 * highest first, at most max of them; *n is 0 on a table without the
 * migration. */
enum db_status queue_level_counts(struct queue *q, const char *type,
                                  struct queue_level_count *out, size_t max,
                                  size_t *n, char *err, size_t errlen);

/* --- adding jobs (queue.c) ------------------------------------------------ */

/* When a job should first run: at a DATETIME in the session time zone
 * (at non-NULL) or delay seconds from now; and, with has_deadline, the
 * last moment it may start: at deadline_at (a DATETIME, the same way)
 * or deadline_in seconds from now (sql/009_deadline.sql); and its priority. */
struct queue_when {
	const char *at;
	unsigned long delay;
	int has_deadline;
	const char *deadline_at;
	unsigned long deadline_in;
	/* enqueue --priority (sql/013_priority.sql), when has_priority;
	 * else the type's [type.NAME] priority, else the column's default */
	int has_priority;
	long priority;
};

/* What the server's JSON functions make of a text. */
enum queue_json {
	QUEUE_JSON_INVALID,	/* JSON_VALID says no */
	QUEUE_JSON_OBJECT,
	QUEUE_JSON_OTHER	/* valid, but not an object */
};

/* Ask the server whether text (len bytes) is JSON, and, when object is
 * set, whether it is an object: the one rule, the same as a JSON
 * column's.  Without object, a valid text is QUEUE_JSON_OTHER. */
enum db_status queue_json_kind(struct queue *q, const char *text, size_t len,
                               int object, enum queue_json *kind, char *err,
                               size_t errlen);

/* Insert a pending job, unless one with that key exists.  max_attempts 0
 * keeps the column default.  *created says which; *id is the new or
 * existing job and *status (malloc'ed) its status.  An `at` the server
 * cannot read as a DATETIME is DB_BAD_INPUT with err saying so, and so is
 * a statement larger than the server's max_allowed_packet. */
enum db_status queue_enqueue(struct queue *q, const char *type,
                             const char *key, const char *payload,
                             size_t payload_len,
                             const struct queue_when *when,
                             unsigned long max_attempts, uint64_t *id,
                             int *created, char **status, char *err,
                             size_t errlen);

/* What enqueue --again did. */
enum queue_again {
	QUEUE_CREATED,		/* no job had the key: a new one */
	QUEUE_REARMED,		/* a finished one (success or failed) is pending
				 * again, attempts 0, with the new payload and
				 * time */
	QUEUE_LEFT		/* one in another status, left as it was */
};

/* The same as queue_enqueue, but a finished job with the key is put back
 * to pending as a new job would be (in the same one statement, so of
 * several callers at once exactly one re-arms it); *status is the job's
 * status now. */
enum db_status queue_enqueue_again(struct queue *q, const char *type,
                                   const char *key, const char *payload,
                                   size_t payload_len,
                                   const struct queue_when *when,
                                   unsigned long max_attempts, uint64_t *id,
                                   enum queue_again *outcome, char **status,
                                   char *err, size_t errlen);

/* Which of keys[0..n-1] the table takes for key: the business_key
 * column's collation compares them (under utf8mb4_general_ci case,
 * accents and trailing blanks do not count), as its UNIQUE key does.
 * *index is the first such key's position plus 1, or 0 for none. */
enum db_status queue_key_among(struct queue *q, const char *key,
                               const char *const *keys, size_t n,
                               size_t *index, char *err, size_t errlen);

/* One chunk of a fan-out: its key and its range. */
struct queue_new_job {
	const char *key;
	unsigned long from, to;
};

/* Insert n chunk jobs of one type in one statement (one short
 * transaction), skipping keys that exist; each payload is template (a JSON
 * object; NULL for {}) with "from" and "to" set by the server.  *created
 * counts the rows inserted. */
enum db_status queue_enqueue_batch(struct queue *q, const char *type,
                                   const char *template,
                                   const struct queue_new_job *jobs,
                                   size_t n, const struct queue_when *when,
                                   unsigned long max_attempts,
                                   uint64_t *created, char *err,
                                   size_t errlen);

/* --- operators' changes (queue_admin.c) ---------------------------------- */

/* A job's status (malloc'ed), or NULL when there is no such job. */
enum db_status queue_job_status(struct queue *q, uint64_t id, char **status,
                                char *err, size_t errlen);

/* The spelling under which the table holds a job whose key its
 * collation takes for equal to key (*stored, malloc'ed), or NULL when
 * there is none. */
enum db_status queue_key_spelling(struct queue *q, const char *key,
                                  char **stored, char *err, size_t errlen);

/* What flow control reads of a type's jobs, without a lock: whether one
 * is due (*due), and with queue_type_load its jobs in processing too
 * (QUEUE_RUNNING_SQL).  The type is compared byte for byte. */
enum db_status queue_type_due(struct queue *q, const char *type, int *due,
                              char *err, size_t errlen);
enum db_status queue_type_load(struct queue *q, const char *type,
                               uint64_t *running, int *due, char *err,
                               size_t errlen);

/* Whether the table has a job of type, in any status (*found), the type
 * compared byte for byte. */
enum db_status queue_type_known(struct queue *q, const char *type,
                                int *found, char *err, size_t errlen);

/* A failed job (with force also a pending one) back to pending, due now,
 * attempts 0; *changed says whether it was. */
enum db_status queue_retry_job(struct queue *q, uint64_t id, int force,
                               int *changed, char *err, size_t errlen);

/* The last_error of a job claimed past its deadline, not run. */
#define QUEUE_DEADLINE_PASSED "deadline passed"

/* A pending job to failed, "cancelled by operator". */
enum db_status queue_cancel_job(struct queue *q, uint64_t id, int *changed,
                                char *err, size_t errlen);
/* A processing job asked to stop: its runner stops the handler at its
 * next lock extension or outcome and writes the cancel
 * (queue_cancel_done); recovery does, if the runner is gone. */
enum db_status queue_cancel_running(struct queue *q, uint64_t id,
                                    int *changed, char *err, size_t errlen);
/* Whether a processing job has been asked to stop. */
enum db_status queue_cancel_asked(struct queue *q, uint64_t id, int *asked,
                                  char *err, size_t errlen);

/* Which finished or failed jobs a bulk change takes: all types, or only
 * type (byte for byte). */
struct queue_scope {
	const char *type;		/* NULL: every type */
	const char *status;		/* purge: success or failed */
	unsigned long older_than;	/* purge: finished this many s ago */
	int include_cancelled;		/* requeue: also operators' cancels */
};

/* Failed jobs of scope, and how many of them an operator cancelled. */
enum db_status queue_count_failed(struct queue *q,
                                  const struct queue_scope *scope,
                                  uint64_t *failed, uint64_t *cancelled,
                                  char *err, size_t errlen);

/* Up to limit failed jobs of scope back to pending (one statement, one
 * transaction); *changed says how many.  The caller loops while a batch
 * comes back full. */
enum db_status queue_requeue_failed(struct queue *q,
                                    const struct queue_scope *scope,
                                    unsigned long limit, uint64_t *changed,
                                    char *err, size_t errlen);

/* Up to limit finished jobs of scope deleted / counted. */
enum db_status queue_purge(struct queue *q, const struct queue_scope *scope,
                           unsigned long limit, uint64_t *deleted,
                           char *err, size_t errlen);
/* The same for every type but except[0..n-1] (n > 0), byte for byte. */
enum db_status queue_purge_except(struct queue *q,
                                  const struct queue_scope *scope,
                                  const char *const *except, size_t n,
                                  unsigned long limit, uint64_t *deleted,
                                  char *err, size_t errlen);
/* Up to limit finished jobs of scope (but the types except[0..n-1] when
 * scope has no type) moved into the table archive, one transaction
 * (queue_archive.c): *moved says how many; on an error none is. */
enum db_status queue_archive(struct queue *q, const char *archive,
                             const struct queue_scope *scope,
                             const char *const *except, size_t n,
                             unsigned long limit, uint64_t *moved,
                             char *err, size_t errlen);
/* Whether the archive takes the job table's rows: not the job table
 * itself, and its insert of no row executed (it inserts nothing). */
enum db_status queue_archive_probe(struct queue *q, const char *archive,
                                   char *err, size_t errlen);
/* The rows of scope (as queue_archive's) past their keep, counted up to
 * cap at most: reads no more than cap index entries. */
enum db_status queue_count_past(struct queue *q,
                                const struct queue_scope *scope,
                                const char *const *except, size_t n,
                                unsigned long cap, uint64_t *count,
                                char *err, size_t errlen);
enum db_status queue_count_purgeable(struct queue *q,
                                     const struct queue_scope *scope,
                                     uint64_t *count, char *err,
                                     size_t errlen);

/* --- what people read (queue_info.c) ------------------------------------ */

/* The backlog of one exact type.  Never counts finished rows: success is
 * the optimizer's estimate. */
struct queue_backlog_row {
	char *type;		/* type_len bytes (NUL ones too), NUL-ended */
	size_t type_len;
	unsigned long pending, due, processing, expired;
	unsigned long failed;	/* with estimate, cancelled ones apart */
	unsigned long cancelled;	/* failed, "cancelled by operator" */
	unsigned long success;
	int success_exact;	/* else the optimizer's estimate */
	long lag;		/* seconds the oldest due job waited, or -1 */
};

/* Success rows up to this many are counted, not estimated. */
#define QUEUE_SUCCESS_EXACT 100

struct queue_backlog {
	struct queue_backlog_row *rows;
	size_t n;
};

/* The backlog of every type in the table (types that differ only in case
 * or accents apart), with a row for each of known[] even when it has no
 * job; or, with only, of that type alone.  estimate: also the success
 * rows, and cancelled jobs apart from failed ones. */
enum db_status queue_backlog(struct queue *q, const char *const *known,
                             size_t nknown, const char *only, int estimate,
                             struct queue_backlog *out, char *err,
                             size_t errlen);
void queue_backlog_free(struct queue_backlog *b);

/* A string column as it is stored: bytes and length; NULL for SQL NULL. */
struct queue_text {
	const char *s;
	size_t len;
};

/* A job as list shows it. */
struct queue_listed {
	uint64_t id;
	struct queue_text type, business_key, status, last_error;
	const char *attempts, *max_attempts;	/* as the server writes them */
	const char *next_run_at, *updated_at;
	const char *due_in;	/* next_run_at - NOW() in seconds, or NULL */
};

struct queue_list_filter {
	const char *status;	/* or NULL */
	const char *type;	/* byte for byte, or NULL */
	uint64_t before_id;	/* 0: from the newest */
	unsigned long limit;
};

/* Jobs newest first; fn sees each (valid only during the call). */
enum db_status queue_list(struct queue *q, const struct queue_list_filter *f,
                          void (*fn)(void *arg, const struct queue_listed *),
                          void *arg, char *err, size_t errlen);

/* Every column of one job, as show prints them. */
enum queue_column {
	QC_ID, QC_BUSINESS_KEY, QC_TYPE, QC_PAYLOAD, QC_STATUS, QC_ATTEMPTS,
	QC_MAX_ATTEMPTS, QC_NEXT_RUN_AT, QC_LOCKED_BY, QC_LOCKED_UNTIL,
	QC_LAST_ERROR, QC_CREATED_AT, QC_UPDATED_AT, QC_FINISHED_AT,
	QC_COUNT
};
extern const char *const queue_column_names[QC_COUNT];

struct queue_shown {
	struct queue_text col[QC_COUNT];
	int payload_valid;	/* the server's JSON_VALID takes it */
	const char *due_in;	/* next_run_at - NOW() in seconds, or NULL */
	int has_deadline;	/* the table has sql/009's deadline */
	const char *deadline;	/* and the job's, or NULL for none */
};

/* The job with id (key NULL) or with business_key key (byte for byte);
 * fn sees it (valid only during the call); *found says whether there was
 * one. */
enum db_status queue_show(struct queue *q, uint64_t id, const char *key,
                          void (*fn)(void *arg, const struct queue_shown *),
                          void *arg, int *found, char *err, size_t errlen);

/* The table's columns and indexes, for check. */
struct queue_column_info {
	char *name;
	int nullable;
	int unfilled;		/* NOT NULL, no default, not one jobrun fills */
};
struct queue_index_info {
	char *name;
	int unique;
	char *columns;		/* "a,b,c" */
};
struct queue_table {
	struct queue_column_info *columns;
	size_t ncolumns;
	struct queue_index_info *indexes;
	size_t nindexes;
};
/* *cascades: whether table from has a foreign key to the job table that
 * deletes its rows with their job's. */
enum db_status queue_cascades(struct queue *q, const char *from,
                              int *cascades, char *err, size_t errlen);
enum db_status queue_describe(struct queue *q, struct queue_table *out,
                              char *err, size_t errlen);
void queue_table_free(struct queue_table *t);

/* How many pending jobs were created over a minute "in the future" by
 * the server's clock, and the most by how many seconds (check). */
enum db_status queue_future_created(struct queue *q, uint64_t *jobs,
                                    int64_t *ahead_s, char *err,
                                    size_t errlen);

/* The server's version (malloc'ed), and fn with each setting check
 * reports. */
enum db_status queue_server(struct queue *q, char **version,
                            void (*fn)(void *arg, const char *name,
                                       const char *value),
                            void *arg, char *err, size_t errlen);

/* EXPLAIN the claim statement a run over types would use: the index it
 * picks (malloc'ed, NULL for none) and the rows the server expects to
 * read. */
enum db_status queue_explain_claim(struct queue *q, const char *const *types,
                                   size_t ntypes, char **index,
                                   unsigned long *rows, char *err,
                                   size_t errlen);

/* --- the report (queue_report.c) ---------------------------------------- */

/* The database's NOW() and the first of the 24 hours the report's charts
 * cover ("YYYY-MM-DD HH:00:00", the current hour the last), both
 * malloc'ed. */
enum db_status queue_report_clock(struct queue *q, char **now, char **from,
                                  char *err, size_t errlen);

/* Whether the table has idx_finished (sql/005_finished.sql), without
 * which the jobs finished per hour are not counted (it would read every
 * finished row); asked once, by preparing the statement that uses it. */
int queue_finished_index(struct queue *q);

/* The jobs that ended (success or failed) since from, by exact type,
 * outcome and hour (0 = from's hour): fn sees each group.  Reads as many
 * index entries as jobs ended since from; needs queue_finished_index. */
struct queue_hour_count {
	struct queue_text type;
	int failed;		/* status failed, else success */
	int deadline;		/* of failed: QUEUE_DEADLINE_PASSED */
	long hour;		/* hours since from */
	unsigned long count;
};
enum db_status queue_finished_hours(struct queue *q, const char *from,
                                    void (*fn)(void *arg,
                                               const struct queue_hour_count *),
                                    void *arg, char *err, size_t errlen);

/* A failed job as the report lists it. */
struct queue_failure {
	uint64_t id;
	struct queue_text type, business_key, last_error;
	unsigned long attempts, max_attempts;
	const char *finished_at;	/* as the server writes it, or NULL */
};

/* The limit latest failed jobs, latest first (by finished_at with
 * idx_finished, else by next_run_at); fn sees each (valid only during the
 * call). */
enum db_status queue_last_failures(struct queue *q, unsigned long limit,
                                   void (*fn)(void *arg,
                                              const struct queue_failure *),
                                   void *arg, char *err, size_t errlen);

#endif
