/*
 * queue_sql.h - what the queue's files (queue*.c) share, and nobody
 * else: the statements, the queue's state, and running them.
 */
#ifndef JOBRUN_QUEUE_SQL_H
#define JOBRUN_QUEUE_SQL_H

#include "queue.h"

/* Every statement on the table, one id each.  A statement's text lives
 * in the file whose operations run it, in that file's queue_*_sql[]
 * (below); the variants of one statement (by type, by status, past the
 * cursor, with sql/002's columns...) are its flags, not ids of their
 * own.  Run as the id ORed with its flags: Q_CLAIM | Q_F_TYPE. */
enum queue_stmt {
	/* the run's cycle (queue_cycle.c) */
	Q_CLAIM, Q_READ, Q_SUCCESS, Q_RETRY, Q_FAIL, Q_EXTEND,
	Q_READ_MANY, Q_SUCCESS_MANY, Q_READ_TOKENS, Q_OWNER, Q_CLAIMED_ID,
	Q_RELEASE, Q_CHECKPOINT, Q_CHECKPOINT_CHECK, Q_SNOOZE, Q_WSREP,
	Q_LOCK_WAIT,
	Q_SCHEMA, Q_CANCEL_DONE, Q_CLAIM_JOB,
	/* a waiting run's look, whether a job is due (queue_probe.c) */
	Q_PROBE, Q_DUE,
	/* the queue's life and adding jobs (queue.c) */
	Q_RECOVER, Q_GET_LOCK, Q_TAKE_SINGLE, Q_READ_REPLY, Q_ENQUEUE, Q_VALID_AT,
	Q_VALID_JSON, Q_JSON_OBJECT,
	/* the runner's own question (queue_run.c) */
	Q_MAX_PACKET,
	/* operators' changes, a job's status, flow control's reads
	 * (queue_admin.c) */
	Q_JOB_STATUS, Q_TYPE_DUE, Q_TYPE_LOAD, Q_TYPE_ANY, Q_RETRY_ID,
	Q_CANCEL, Q_CANCEL_RUNNING, Q_CANCEL_ASKED, Q_REQUEUE, Q_FAILED_COUNTS, Q_PURGE, Q_PURGE_COUNT,
	/* what people read (queue_info.c) */
	Q_TYPES, Q_TYPE_COUNTS, Q_CANCELLED_COUNT, Q_SUCCESS_UPTO,
	Q_SUCCESS_ESTIMATE, Q_LAG, Q_EXPIRED,
	Q_LIST, Q_SHOW, Q_COLUMNS, Q_UNFILLED_COLUMNS, Q_INDEXES,
	Q_VERSION, Q_SETTINGS, Q_FUTURE_CREATED, Q_ACCOUNT, Q_CASCADES,
	/* the report (queue_report.c) */
	Q_REPORT_CLOCK, Q_REPORT_HOURS, Q_REPORT_FAILURES,
	/* claims in priority order (queue_priority.c) */
	Q_CLAIM_PRIORITY, Q_DUE_PRIORITY, Q_LEVEL, Q_LEVEL_DUE, Q_LEVEL_COUNTS,
	Q_COUNT
};

/* The flags that pick a statement's variant, above its id's bits. */
enum queue_flag {
	Q_F_TYPE = 1 << 8,		/* one exact type, bound twice */
	Q_F_STATUS = 1 << 9,		/* one status */
	Q_F_SPREAD = 1 << 10,		/* the claim's id MOD ? = ? */
	Q_F_AFTER = 1 << 11,		/* past the claim's cursor */
	Q_F_RESUMABLE = 1 << 12,	/* sql/002's checkpoint, snoozes */
	Q_F_AGAIN = 1 << 13,		/* enqueue --again */
	Q_F_FORCE = 1 << 14,		/* retry a pending job too */
	Q_F_UNCANCELLED = 1 << 15,	/* not the operator's cancelled */
	Q_F_KEY = 1 << 16,		/* by business key, not id */
	Q_F_LOCKED = 1 << 17,		/* LOCK IN SHARE MODE */
	Q_F_PICK = 1 << 18,		/* idx_pick, without idx_finished */
	Q_F_REFUSED = 1 << 19,		/* the payload's JSON_VALID as 0 */
	Q_F_DEADLINE = 1 << 20,		/* sql/009's deadline */
	Q_F_PRIORITY = 1 << 21		/* sql/013's priority */
};
#define Q_ID(stmt) ((stmt) & 0xffu)
_Static_assert(Q_COUNT <= 0x100, "the ids fit below the flags");

/* A part of a statement's text, there when its statement runs with
 * every flag of when and none of unless. */
struct queue_piece {
	unsigned when, unless;
	const char *text;	/* NULL ends the list */
};

/* A statement: the pieces its text is built of, in order (%1$s the
 * quoted table, %2$s the claim's "?" per type, %% a %), the flags it
 * takes (at most QUEUE_VARIANTS_LOG of them: each combination is
 * prepared and kept apart), and what it does, for messages: flagged
 * instead when it runs with flag; claim_scan: a claim's scan, which
 * waits for a row's lock one second at most (CLAIM_SCAN_PREFIX). */
struct queue_sql {
	const char *purpose;
	const struct queue_piece *pieces;
	unsigned flags;
	const char *flagged;
	unsigned flag;
	int claim_scan;
};
#define QUEUE_VARIANTS_LOG 4
#define QUEUE_VARIANTS (1 << QUEUE_VARIANTS_LOG)

/* A statement of one piece. */
#define Q_TEXT(text) ((const struct queue_piece[]){ { 0, 0, text }, \
	{ 0, 0, NULL } })

/* Each file's statements, by id (the others' places left empty). */
extern const struct queue_sql queue_base_sql[Q_COUNT];	/* queue.c */
extern const struct queue_sql queue_cycle_sql[Q_COUNT];
extern const struct queue_sql queue_run_sql[Q_COUNT];
extern const struct queue_sql queue_admin_sql[Q_COUNT];
extern const struct queue_sql queue_info_sql[Q_COUNT];
extern const struct queue_sql queue_report_sql[Q_COUNT];
extern const struct queue_sql queue_probe_sql[Q_COUNT];
extern const struct queue_sql queue_read_sql[Q_COUNT];
extern const struct queue_sql queue_priority_sql[Q_COUNT];
/* All of them, where queue_sql_of looks (queue.c). */
#define QUEUE_SQL_FILES 9
extern const struct queue_sql *const queue_sql_files[QUEUE_SQL_FILES];

/* Text fragments that statements of several files share. */

/* The token part of locked_by (before "@EPOCH"). */
#define TOKEN "SUBSTRING_INDEX(locked_by, '@', 1)"

/* The fenced tail every write after the claim ends with. */
#define FENCE " WHERE id = ? AND " TOKEN " = ? AND status = 'processing'"

/* Past the cursor (time, time, id): the rows after the last claimed job in
 * the claim's order, as two ranges of the index. */
#define PAST_CURSOR " AND (next_run_at > ? OR (next_run_at = ? AND id > ?))"

/* Several claimed rows, (id, token) pairs, at most QUEUE_GROUP_MAX: a token is
 * in locked_by only on the row its claim took, so a row whose id and token are
 * both in the lists is one of the pairs.  Unused places repeat a pair. */
#define GROUP_LIST "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define FENCE_MANY " WHERE id IN " GROUP_LIST " AND " TOKEN " IN " \
	GROUP_LIST " AND status = 'processing'"
_Static_assert(QUEUE_GROUP_MAX == 16, "GROUP_LIST has 16 places");

/* A lock that has run out: jobrun's by the Unix time in locked_by, any
 * other worker's by locked_until in the session zone.  A jobrun token is
 * HOST:PID:12 hex digits:SEQ, so another worker's id never passes for
 * one. */
#define LOCK_EXPIRED "(CASE WHEN locked_by REGEXP" \
	" '^[^@]+:[0-9]+:[0-9a-f]{12}:[0-9]+@[0-9]+$'" \
	" THEN CAST(SUBSTRING_INDEX(locked_by, '@', -1) AS UNSIGNED)" \
	" < UNIX_TIMESTAMP() ELSE locked_until < NOW() END)"

/* What recovery writes in a row whose lock ran out (Q_RECOVER): a cancel
 * an operator asked for, else the attempt given back (or failed, when it
 * was the last), with why in last_error (RECOVER_WHY). */
#define RECOVER_WHY "IF(" CANCEL_ASKED ", 'cancelled by operator'," \
	" CONCAT('lock expired: runner '," \
	" IFNULL(" TOKEN ", '?'), ' did not finish attempt ', attempts," \
	" ' of ', max_attempts," \
	" IF(attempts >= max_attempts, '; no attempts left', '')))"
#define RECOVER_SET \
	" last_error = " RECOVER_WHY "," \
	" finished_at = IF(" CANCEL_ASKED " OR attempts >= max_attempts," \
	"  NOW(), NULL)," \
	" next_run_at = IF(" CANCEL_ASKED ", LEAST(next_run_at, NOW())," \
	"  next_run_at)," \
	" status = IF(" CANCEL_ASKED " OR attempts >= max_attempts," \
	"  'failed', 'pending')," \
	" locked_by = NULL, locked_until = NULL, updated_at = NOW()"

/* The local time before which a finished row is older than ? seconds of
 * real time: (age, age).  The columns are local DATETIMEs, so neither
 * reading of "? seconds ago" is right across a DST change on its own:
 * NOW() - INTERVAL counts wall-clock time, which runs an hour ahead of
 * real time across a spring-forward (a row 20 minutes old looks 80), and
 * FROM_UNIXTIME(UNIX_TIMESTAMP() - ?) is the real instant's local time,
 * which after a fall-back lies in the repeated hour's first pass, later
 * than rows of its second pass that are younger.  Each errs only the
 * other way, so the earlier of the two never deletes a row younger than
 * its age; a constant for the statement, it keeps the index range. */
#define PURGE_CUTOFF "LEAST(NOW() - INTERVAL ? SECOND," \
	" FROM_UNIXTIME(UNIX_TIMESTAMP() - ?))"

/* Finished rows older than the cutoff: (status, age x 4).  next_run_at is
 * never later than finished_at for a row jobrun finished (a job runs after
 * it is due; cancel moves next_run_at to now at the latest), so the extra
 * condition on it lets purge and retention walk idx_pick's (status,
 * next_run_at) range and stop at the cutoff instead of reading every
 * finished row. */
#define PURGE_WHERE " WHERE status = ?" \
	" AND next_run_at < " PURGE_CUTOFF \
	" AND finished_at < " PURGE_CUTOFF

/* The last_error Q_CANCEL writes, compared byte for byte: a failed job
 * with it was cancelled. */
#define CANCELLED "BINARY 'cancelled by operator'"
#define DEADLINE_PASSED "BINARY '" QUEUE_DEADLINE_PASSED "'"

/* An operator asked to stop a running job (jobrun cancel): its lock's
 * holder becomes "cancel " and the token it had, so the runner's next
 * fenced write (a lock extension, the outcome) finds the job no longer
 * its own and writes the cancel instead, and recovery cancels it when
 * the runner is gone.  The "@" and Unix time after the token stay, so
 * the lock still runs out when it did. */
#define CANCEL_PREFIX "cancel "
#define CANCEL_ASKED "(locked_by LIKE '" CANCEL_PREFIX "%%')"

/* A new lock of ? seconds for token ?: (token, seconds, seconds). */
#define LOCK_SET " locked_by = CONCAT(?, '@', UNIX_TIMESTAMP() + ?)," \
	" locked_until = NOW() + INTERVAL ? SECOND"

/* What a claim writes (queue_cycle.c's, queue_priority.c's): (token,
 * seconds, seconds). */
#define CLAIM_SET " SET status = 'processing'," LOCK_SET "," \
	" attempts = attempts + 1, updated_at = NOW()," \
	" id = LAST_INSERT_ID(id)"

/* A claim's scan (queue_sql's claim_scan) waits for a row's lock one
 * second at most on MariaDB (SET STATEMENT; MySQL has no way for one
 * statement, and its claims keep the session's wait).  Another claim's
 * write holds a row for microseconds; what holds one longer is another
 * program: a due job in its open transaction, or, when no job is due,
 * the first row past the due range, which InnoDB's UPDATE locks to see
 * that the range has ended (an UPDATE pushes no index condition down):
 * an operator's open SELECT ... FOR UPDATE of the oldest finished job
 * held every claim that found nothing for innodb_lock_wait_timeout (50 s
 * by default), and its ten tries for ten of them.  A claim that gives up
 * asks by a plain read, which waits for no lock, whether a job is due
 * at all (Q_DUE, queue_cycle.c). */
#define CLAIM_SCAN_PREFIX "SET STATEMENT innodb_lock_wait_timeout = 1 FOR "

/* Exactly type ?, bound twice: the first compare uses the index, the
 * second makes it exact. */
#define TYPE_IS " type = ? AND CAST(type AS BINARY) = CAST(? AS BINARY)"

/* What the table supports, probed once, by preparing a statement that
 * needs it. */
struct queue_caps {
	int type_index_probed, type_index;	/* sql/001_type_pick.sql */
	int checkpoint_probed, checkpoint;	/* sql/002_checkpoint.sql */
	int deadline_probed, deadline;		/* sql/009_deadline.sql */
	int finished_index_probed, finished_index; /* sql/005_finished.sql */
	int galera_probed, galera;		/* wsrep_on (not the table's) */
	int wsrep;				/* and it said on */
	/* innodb_lock_wait_timeout (s), the session's: read again on a
	 * connection made again (reconnects then), which has the server's
	 * global value of that time. */
	int lock_wait_probed;
	uint64_t lock_wait_conn;
	unsigned long lock_wait;
	int priority_probed, priority;		/* sql/013_priority.sql */
	int priority_column_probed, priority_column;	/* its column */
};

/* Priorities (queue_priority.c): a claim names at most PRIORITY_LEVELS
 * levels, the highest of the pending rows'; one claim in PRIORITY_SHARE
 * is the plain one, oldest first (man/jobrun.7). */
#define PRIORITY_LEVELS	8
#define PRIORITY_SHARE	10
#define PRIORITY_SCAN	32	/* levels a type looked at, at most */

/* The levels that have due jobs of a run's types, highest first, as
 * last read. */
struct queue_levels {
	int read;
	int64_t read_ms;
	uint64_t types;		/* a hash of the run's types */
	unsigned n;
	long long level[PRIORITY_LEVELS];
	unsigned first;		/* the levels before it found no due job
				 * since they were read */
};

/* A claim this long after the last one from the head of the range is
 * one from the head again: how much longer than the plain claim would
 * make it wait a job due behind the cursor may wait (man/jobrun.7). */
#define QUEUE_CURSOR_MS 1000

/* A waiting run's look from the head of the range (queue_probe) that
 * took d ms is the next after PROBE_HEAD_SHARE × d, within
 * QUEUE_CURSOR_MS and PROBE_HEAD_MAX_MS (man/jobrun.7).  Purge held back
 * for long (a long read view) leaves that look thousands of entries to
 * step over, and it then costs a fixed share of the server's time, not
 * more; on a table purge keeps up with, it takes about 0.3 ms at 10 M
 * finished rows and comes every second.  d is the round trip's time,
 * which a loaded server or link lengthens too: all the more reason to
 * look less often. */
#define PROBE_HEAD_SHARE	250
#define PROBE_HEAD_MAX_MS	10000

/* Where this run's claims have got to in the claim's (next_run_at, id)
 * order: the next claim starts its scan just past it (queue.c; read and
 * written by queue_claim alone, so a caller that serialises its claims
 * needs no more). */
struct queue_cursor {
	int set;		/* at and id hold the last claimed job */
	unsigned claim;		/* the plain claim they go with */
	uint64_t types;		/* and a hash of its types */
	char at[40];		/* that job's next_run_at, as the server wrote it */
	uint64_t id;
	int64_t head_ms;	/* when a claim last scanned from the head */
	/* A claim of a group (queue_claim_id) leaves the cursor where it
	 * is; queue_read_claimed moves it to this job, the group's last
	 * claimed in the claim's order (0: none). */
	uint64_t next_id;
	unsigned next_claim;
	uint64_t next_types;
};

/* A due job whose row a claim gave up waiting for (queue_cycle.c): the
 * next claim of the same types starts past it.  Kept apart from the
 * cursor, which a transaction rolled back puts back as it was. */
struct queue_held {
	uint64_t id;		/* 0: none */
	char at[40];		/* its next_run_at */
	unsigned claim;
	uint64_t types;
	int64_t ms;		/* when the claim gave up */
	int applied;		/* the cursor was put past it */
};

struct queue {
	struct db *db;
	char name[65];		/* the table name as configured */
	char table[160];	/* the same, quoted as an identifier */
	struct queue_caps caps;
	size_t claim_types;	/* placeholders in the prepared claim */
	MYSQL_STMT *stmt[Q_COUNT][QUEUE_VARIANTS];	/* by id and flags */
	struct queue_stmts *batch;	/* the multi-row insert of a fan-out */
	size_t batch_rows;
	int batch_priority;	/* and whether it writes a priority */
	struct queue_counters counters;
	char lock_name[257];	/* the --single lock we hold, or "" */
	int lock_lost;		/* a reconnect could not take it back */
	uint64_t random;	/* state of the pauses' and spread's generator */
	int no_retry;		/* a statement meets a conflict once */
	int spread;		/* a claim has met a conflict in this run */
	struct queue_cursor cursor;
	struct queue_cursor cursor_spare;	/* another list of types' */
	struct queue_held held;
	struct queue_levels levels_all, levels_one;	/* queue_priority.c */
	const struct cfg *cfg;	/* the types' priorities (queue_set_types) */
	uint64_t priority_claims;	/* claims that could go by priority */
	/* A group's bulk in priority order counts all its slots' claims
	 * in priority_claims; the claims one by one after it make the
	 * plain claim's turns among them first, then the ones it counted
	 * and did not make (its level ran out). */
	unsigned share_turns, counted_ahead;
	int64_t probe_head_ms;	/* when a waiting run's probe last read
				 * from the head (queue_probe) */
	int64_t probe_head_gap_ms;	/* and how long until the next */
	/* A transaction of several statements is open (queue_trx): a
	 * deadlock or a lost connection ends it whole, so no statement in
	 * it is run again on its own; trx_lost says the connection was lost
	 * (and made again) before the COMMIT, so its caller may run the
	 * whole transaction again; the cursor goes back to trx_cursor when
	 * it is rolled back. */
	int in_trx, trx_lost;
	int commit_lost;	/* the COMMIT's answer was lost; reconnected */
	uint64_t lock_wait_at;	/* reconnects when queue_lock_wait set it */
	int lock_wait_short;	/* and whether it set a wait of its own */
	struct queue_cursor trx_cursor;
};

/* Statement which of s, as prepared (its result's metadata). */
MYSQL_STMT *queue_stmts_handle(const struct queue_stmts *s, size_t which);

/* Statement which (an id and its flags): what it is built of, what it
 * does (for messages), where its prepared handle is kept (queue.c). */
const struct queue_sql *queue_sql_of(unsigned which);
const char *queue_purpose(unsigned which);
MYSQL_STMT **queue_slot(struct queue *q, unsigned which);
MYSQL_STMT *queue_handle(const struct queue *q, unsigned which);

/* --- queue_run.c: the runner's parts the claims use ---------------------- */

/* Prepare statement which, unless it is. */
enum db_status queue_prepare(struct queue *q, unsigned which,
                             char *cause, size_t len);
/* Prepare (if need be) and execute which once, again after a deadlock
 * outside a transaction; cause is the bare cause. */
enum db_status queue_attempt(struct queue *q, unsigned which,
                             const struct db_arg *args, unsigned nargs,
                             char *cause, size_t len);
/* queue_stmt_run for nrows rows of arguments at once when nrows > 0 (a
 * bulk execution, made only inside a transaction); s NULL. */
struct queue_stmts;
enum db_status queue_run_rows(struct queue *q, struct queue_stmts *s,
                              size_t which, const struct db_arg *args,
                              unsigned nargs, unsigned nrows, char *err,
                              size_t errlen);
/* Lost the connection: make it again.  DB_OK when the statement that met
 * it (values of size bytes) may be run again; DB_BAD_INPUT when they were
 * too large for the server's max_allowed_packet. */
enum db_status queue_reconnect(struct queue *q, size_t size, char *cause,
                               size_t len);
/* Close every prepared statement of the queue's (they die with their
 * connection). */
void queue_forget(struct queue *q);
/* The next number of the queue's own generator (xorshift). */
uint64_t queue_random(struct queue *q);
/* Sleep 2..10 ms, doubled per earlier attempt. */
void queue_conflict_pause(struct queue *q, unsigned attempt);

/* --- queue.c and queue_cycle.c ------------------------------------------- */

/* The cursor of the claim which over the types whose hash is hash (a
 * claim in priority order's: its level's), taken out of the spare if it
 * is there, and not used when QUEUE_CURSOR_MS old (queue_cycle.c). */
void queue_cursor_for(struct queue *q, unsigned which, uint64_t hash,
                      int64_t start);

/* Whether the table supports which (prepared once to see). */
int queue_supports(struct queue *q, unsigned which, int *probed,
                   int *has);

/* Priorities (queue_priority.c).  queue_claim_priority runs the claim in
 * priority order when the table has sql/013 and its pending rows more
 * than one level, and it is not the plain claim's turn: *tried says
 * whether it ran, *id the row it took (0: none, or not tried). */
/* Whether the server says wsrep_on (queue_cycle.c); queue_galera is in
 * queue.h. */
int queue_wsrep_on(struct queue *q);
enum db_status queue_claim_priority(struct queue *q, unsigned which,
    const char *const *types, size_t ntypes, unsigned long lock_seconds,
    const char *token, uint64_t hash, int *tried, uint64_t *id, char *err,
    size_t errlen);
/* A group's claims in priority order in one round trip (queue_claim_bulk
 * says when): *tried as above, *claimed the jobs taken, read into jobs[]
 * by their tokens; the plain claim's turns among the n are left to the
 * claims one by one after it (share_turns). */
enum db_status queue_claim_priority_bulk(struct queue *q,
    const char *const *types, size_t ntypes, unsigned long lock_seconds,
    const char *const *tokens, struct job *const *jobs, size_t n,
    uint64_t hash, int *tried, size_t *claimed, char *err, size_t errlen);
/* A purge's variant (queue_admin.c): Q_F_TYPE for one type, on
 * idx_type_pick when the table has it (else Q_F_PICK too, idx_pick). */
unsigned queue_purge_flags(struct queue *q, const struct queue_scope *scope);
/* A purge's arguments into args: (status, age x 4, [type, type]); how
 * many, at most QUEUE_PURGE_ARGS. */
#define QUEUE_PURGE_ARGS 7
unsigned queue_purge_args(struct db_arg *args,
                          const struct queue_scope *scope);
/* The job claimed with token: its id, 0 for none. */
enum db_status queue_claimed_by_token(struct queue *q, const char *token,
                                      uint64_t *id, char *err,
                                      size_t errlen);

/* Run statement which with args (preparing it first if need be, running
 * it again after a deadlock or a lost connection); err reads "<purpose>
 * in <table>: <cause>". */
enum db_status queue_stmt_run(struct queue *q, unsigned which,
                              const struct db_arg *args, unsigned nargs,
                              char *err, size_t errlen);

/* Rows the last run of which changed. */
uint64_t queue_stmt_changed(const struct queue *q, unsigned which);

/* Run a select that gives at most one row of ncols columns (malloc'ed,
 * NULL for SQL NULL); *found says whether it did. */
enum db_status queue_stmt_one(struct queue *q, unsigned which,
                              const struct db_arg *args, unsigned nargs,
                              char **cols, unsigned ncols, int *found,
                              char *err, size_t errlen);

/* Run a select and hand each row (columns and their lengths) to fn, until
 * fn returns nonzero. */
enum db_status queue_stmt_walk(struct queue *q, unsigned which,
                               const struct db_arg *args, unsigned nargs,
                               unsigned ncols,
                               int (*fn)(void *arg, char **cols,
                                         const size_t *lens),
                               void *arg, char *err, size_t errlen);

/* The text of which (malloc'ed). */
char *queue_stmt_text(const struct queue *q, unsigned which);

/* queue_read.c's, for the claims and marks of queue_cycle.c: the
 * arguments of FENCE_MANY (n ids, then their tokens, unused places
 * repeating the first); the cursor moved to a job just read (id, and its
 * next_run_at at); the jobs a bulk claim took, by token. */
void queue_group_args(struct db_arg *args, const uint64_t *ids,
                      const char *const *tokens, size_t n);
void queue_cursor_move(struct queue *q, uint64_t id, const char *at);
/* The row just claimed (id, token) into job, its next_run_at into at. */
enum db_status queue_read_job(struct queue *q, uint64_t id,
                              const char *token, struct job *job, char *at,
                              size_t atlen, char *err, size_t errlen);
enum db_status queue_read_tokens(struct queue *q, const char *const *tokens,
                                 struct job *const *jobs, size_t n,
                                 size_t *found, char *err, size_t errlen);

/* The flags of a read of claimed rows: the optional columns the table
 * has (Q_F_RESUMABLE, Q_F_DEADLINE). */
unsigned queue_read_flags(struct queue *q);

/* The claim a run over ntypes types uses, and its arguments (malloc'ed,
 * with room for the spread's two more or the cursor's three). */
unsigned queue_claim_stmt(struct queue *q, size_t ntypes, unsigned *spread);
struct db_arg *queue_claim_args(unsigned which,
                                const char *const *types, size_t ntypes,
                                unsigned long lock_seconds,
                                const char *token, unsigned *nargs);

/* Whether the claim which (hash, its types; a level's, for a claim in
 * priority order) gave up waiting for a due job's row less than a second
 * ago: its cursor is put past that job, once, and from the head it would
 * wait for it again.  A second after, from the head, to try it again.
 * keep: the record stays for the second (a level, which claims from its
 * head in that time only at a cost); else this claim uses it up. */
int queue_past_held(struct queue *q, unsigned which, uint64_t hash,
    int keep);
/* The first job due of those the claim which takes: *id (0: none) and
 * its next_run_at (queue_probe.c) */
enum db_status queue_due(struct queue *q, unsigned which,
                         const char *const *types, size_t ntypes,
                         uint64_t *id, char *at, size_t atlen, char *err,
                         size_t errlen);

#endif
