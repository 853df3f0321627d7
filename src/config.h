/*
 * config.h - the configuration file: [database], [run], one [type.NAME]
 * section per job type and one [schedule.NAME] per recurring job.
 */
#ifndef JOBRUN_CONFIG_H
#define JOBRUN_CONFIG_H

#include <stddef.h>
#include <string.h>

#include "cron.h"
#include "handler.h"

/* CFG_DEFAULT_PATH, like JOBRUN_VERSION, is in build/defs.h, which the
 * Makefile writes (SYSCONFDIR). */
#define CFG_TYPE_MAX 64		/* polling_jobs.type is VARCHAR(64) */
/* The server's longest name (NAME_CHAR_LEN): a table, a GET_LOCK lock, a
 * time zone (mysql.time_zone_name.Name is CHAR(64)). */
#define CFG_NAME_MAX 64
/* Handlers at once in one run (--jobs): each is a thread and, for http, a
 * connection of its own. */
#define CFG_JOBS_MAX 256
/* The most jobs one run may claim (--max, [run] batch_size). */
#define CFG_BATCH_MAX 1000000

/* [database] tls: the rows of tls_names in config.c, in this order. */
enum cfg_tls {
	CFG_TLS_OFF,		/* in clear (TCP) or over the unix socket */
	CFG_TLS_ON,		/* encrypted, the server not verified */
	CFG_TLS_VERIFY		/* encrypted, certificate and name verified */
};

/* Where and as whom to connect.  NULL strings mean "not set". */
struct cfg_db {
	char *host;
	unsigned long port;
	char *socket;
	char *user;
	char *password;		/* from password, password_file or env */
	char *password_file;
	int password_file_line;
	char *database;
	char *table;
	unsigned long connect_timeout;
	unsigned long read_timeout;	/* a statement's answer, at most */
	unsigned long write_timeout;
	char *time_zone;
	int tls;		/* enum cfg_tls */
	char *tls_ca_file;	/* or NULL: the system's CAs (verify) */
	char *tls_cert_file;	/* the client's certificate, or NULL */
	char *tls_key_file;
};

/* Whether cfg connects over TCP (host, not localhost, and no socket), as
 * libmariadb decides: TLS and the refusal of clear-text logins are for
 * TCP only.  Inline: db.c asks it, and a program linked with db.o alone
 * (bench/floor.c) must not pull in the configuration parser. */
static inline int
cfg_db_tcp(const struct cfg_db *cfg)
{
	return cfg->socket == NULL && cfg->host != NULL &&
	    strcmp(cfg->host, "localhost") != 0;
}

/* The budgets and policies of one run. */
struct cfg_run {
	unsigned long max_seconds;
	unsigned long batch_size;
	unsigned long jobs;	/* handlers at once */
	unsigned long lock_seconds;
	unsigned long recover_limit;
	unsigned long backoff_base;
	unsigned long backoff_cap;
	unsigned long backoff_jitter;	/* permille of a backoff taken off */
	int single;		/* take the GET_LOCK overlap guard */
	int wait;		/* wait for work until max_seconds */
	unsigned long max_snoozes;	/* put-offs in a row without progress */
	/* keep_success, keep_failed: seconds finished rows are kept, 0 for
	 * ever (retention.c) */
	unsigned long keep[2];
	/* keep_every: seconds between two runs' batches on one job table,
	 * with sql/014_retention_pace.sql (retention.c); 0: every run's */
	unsigned long keep_every;
	/* archive_table: where retention moves those rows instead of
	 * deleting them (queue_archive.c), or NULL */
	char *archive_table;
	int syslog;		/* log: 0 stderr, 1 syslog (in that order) */
	char *metrics_file;	/* Prometheus textfile, or NULL */
};

/* Flow control of one type (src/flow.c), across every runner on every
 * host: 0 for a limit not set. */
struct cfg_flow {
	unsigned long concurrency;	/* jobs in processing at once */
	unsigned long rate;		/* handler starts per period */
	unsigned long period;		/* seconds: 1, 60 or 3600 */
	unsigned long burst;		/* starts saved up, at most */
	/* concurrency_key: a JSON path into the payload ("$..."), else a
	 * column of the job table; NULL: no key cap (flow_key.c) */
	char *key;
	unsigned long key_concurrency;	/* jobs of one key at once */
	int key_set;			/* key_concurrency was given */
	int key_order;			/* order = key */
};

/* One [type.NAME] section: the handler that runs jobs of that type. */
struct cfg_type {
	char *name;
	const struct handler_kind *kind;
	void *handler;		/* the kind's state, from kind->create */
	struct cfg_flow flow;	/* concurrency, rate, burst */
	/* [type.NAME] backoff_jitter (permille), when jitter_set */
	unsigned long backoff_jitter;
	int jitter_set;
	/* [type.NAME] deadline: seconds from created_at; 0 none */
	unsigned long deadline;
	/* [type.NAME] keep_success, keep_failed, when keep_set: the run's
	 * keep[] for this type's rows */
	unsigned long keep[2];
	int keep_set[2];
	/* [type.NAME] priority, when priority_set */
	long priority;
	int priority_set;
};

/* keep[] and keep_set[]'s places. */
enum { CFG_KEEP_SUCCESS, CFG_KEEP_FAILED };

/* One [schedule.NAME] section: a job of type enqueued at every slot of
 * cron, in time_zone (schedule.c). */
struct cfg_schedule {
	char *name;
	char *type;
	char *cron_text;	/* as written, for people */
	struct cron cron;
	char *payload;		/* a JSON object's text, or NULL for {} */
	char *time_zone;	/* or NULL: the session's */
	unsigned long catch_up;	/* seconds back a missed slot still runs */
	int line;		/* of the section's first key */
};

#define CFG_WARNINGS_MAX 4

struct cfg {
	char *path;
	/* For the operator, e.g. a readable secret, one line each. */
	char warnings[CFG_WARNINGS_MAX][512];
	size_t nwarnings;
	struct cfg_db db;
	struct cfg_run run;
	struct cfg_type *types;
	size_t ntypes;
	struct cfg_schedule *schedules;
	size_t nschedules;
};

/* How the value of a key is read into its field. */
enum cfg_kind {
	CFG_NUMBER,	/* unsigned long, decimal, in min..max */
	CFG_STRING,	/* char *, malloc'ed; empty means unset (NULL) */
	CFG_BOOL,	/* int 0 or 1: yes/no, true/false, on/off, 1/0 */
	CFG_ENUM,	/* int: the index of the value in names */
	CFG_DURATION,	/* unsigned long seconds: 3600, 90m, 12h, 30d, 2w */
	CFG_HANDLER,	/* const struct handler_kind *, by name (handlers.c) */
	CFG_CUSTOM	/* read by the row's parse */
};

/* One key of a section: the one place that says it exists, what it takes
 * and where it goes.  [database] and [run] fill struct cfg, [type.NAME]
 * struct cfg_type, [schedule.NAME] struct cfg_schedule, and a handler
 * kind's keys (its handler_kind's keys) the kind's own state.  Parsing,
 * defaults, "given twice", the messages, cfg_free and the unit test that
 * holds etc/jobrun.conf and jobrun.conf(5) to the code all read these. */
struct cfg_key {
	/* database, run, type.NAME, schedule.NAME, or a handler kind's
	 * name (its keys are [type.NAME] keys once handler names it) */
	const char *section;
	const char *key;
	enum cfg_kind kind;
	size_t offset;		/* of the field in the struct it fills */
	unsigned long min, max;	/* CFG_NUMBER */
	const char *unit;	/* CFG_NUMBER: "not a number of UNIT in" */
	int bare;		/* CFG_NUMBER: the message omits the value */
	const char *const *names;	/* CFG_ENUM, NULL-ended */
	const char *def;	/* the default as the file writes it, or NULL */
	/* A further check of a CFG_STRING value, empty ones included (NULL:
	 * none): 0, or -1 with msg saying what is wrong. */
	int (*check)(const char *value, char *msg, size_t msglen);
	/* CFG_CUSTOM: read value into the struct at base (offset unused):
	 * 0, or -1 with msg. */
	int (*parse)(void *base, const char *value, char *msg, size_t msglen);
	int secret;		/* wiped before it is freed */
	/* CFG_STRING: an empty value leaves the key unset (NULL), as
	 * jobrun.conf(5) lists; for any other row it is an error. */
	int empty_unset;
	int repeatable;		/* may be given more than once */
};

/* The offset of field f of struct s, which must have the type t: the
 * offset alone would not notice a row that writes an int as a string. */
#define CFG_FIELD(s, f, t) _Generic(((s *)0)->f, t: offsetof(s, f))

/* The keys of [database] and [run], in the order of the example file;
 * *n its length. */
const struct cfg_key *cfg_keys(size_t *n);
/* The keys of [type.NAME] that are not the handler kind's own. */
const struct cfg_key *cfg_type_keys(size_t *n);
/* The keys of [schedule.NAME]. */
const struct cfg_key *cfg_schedule_keys(size_t *n);

/* Read and check the file at path.  On error returns -1 and err reads
 * "FILE:LINE: [section] key: what is wrong"; cfg is then empty. */
int cfg_load(struct cfg *cfg, const char *path, char *err, size_t errlen);

/* The same for text already in memory; path is only for messages.  Does
 * not read password_file or the environment. */
int cfg_parse(struct cfg *cfg, const char *path, const char *text,
              char *err, size_t errlen);

void cfg_free(struct cfg *cfg);

/* The longest cap and rate a type may have: far beyond what one table
 * can serve, small enough that no arithmetic on them overflows. */
#define FLOW_MAX 1000000UL

/* A job's priority (sql/013_priority.sql's SMALLINT): higher is claimed
 * first. */
#define PRIORITY_LOW (-32768)
#define PRIORITY_HIGH 32767

/* "R/s", "R/min" or "R/h" into R and the period's seconds; -1 when value
 * is none of those. */
/* [schedule.NAME] cron into the struct cfg_schedule at base
 * (config_name.c). */
int cfg_parse_cron(void *base, const char *value, char *msg,
                   size_t msglen);
/* [type.NAME] keep_success / keep_failed into the struct cfg_type at
 * base: a duration, 0 for ever (config_name.c). */
int cfg_parse_keep_success(void *base, const char *value, char *msg,
                           size_t msglen);
int cfg_parse_keep_failed(void *base, const char *value, char *msg,
                          size_t msglen);
/* [type.NAME] priority, into the struct cfg_type at base: the level of
 * the jobs jobrun creates of the type (config_name.c). */
/* [type.NAME] concurrency_key, key_concurrency and order into the struct
 * cfg_type at base; cfg_check_key_cap the rules between them, *key the
 * one that breaks them (config_name.c). */
/* [type.NAME] rate, into the struct cfg_type at base. */
int cfg_parse_type_rate(void *base, const char *value, char *msg,
                        size_t msglen);
int cfg_parse_concurrency_key(void *base, const char *value, char *msg,
                              size_t msglen);
int cfg_parse_key_concurrency(void *base, const char *value, char *msg,
                              size_t msglen);
int cfg_parse_order(void *base, const char *value, char *msg,
                    size_t msglen);
int cfg_check_key_cap(const struct cfg_type *t, const char **key, char *msg,
                      size_t msglen);
/* Whether a concurrency_key names a JSON path (else a column). */
#define CFG_KEY_IS_PATH(key) ((key)[0] == '$')
/* A key's longest column name, and JSON path. */
#define CFG_KEY_COLUMN_MAX 64
#define CFG_KEY_PATH_MAX 160

int cfg_parse_priority(void *base, const char *value, char *msg,
                       size_t msglen);
int cfg_parse_rate(const char *value, unsigned long *rate,
                   unsigned long *period);

/* The [type.NAME] section for name, or NULL. */
const struct cfg_type *cfg_find_type(const struct cfg *cfg, const char *name);
/* The same for a type as the table holds it (len bytes, NUL ones too:
 * "ab\0c" is not "ab"). */
const struct cfg_type *cfg_find_type_n(const struct cfg *cfg,
                                       const char *name, size_t len);

/* --- names, and the words of the messages (config_name.c) ------------- */

/* Whether s holds only ASCII letters, digits and the bytes of extra. */
int cfg_valid_chars(const char *s, const char *extra);
/* Checks of a CFG_STRING row (struct cfg_key's check): a table name (put
 * into SQL as `name`), a time zone's (empty: unset), a type's. */
int cfg_check_table(const char *value, char *msg, size_t msglen);
int cfg_check_time_zone(const char *value, char *msg, size_t msglen);
int cfg_check_type_name(const char *value, char *msg, size_t msglen);

/* The known name closest to word among those offered so far: close is
 * at most one edit away (two past four characters), case ignored, or the
 * start of the other name; none when two are equally close. */
struct cfg_near {
	const char *word;	/* the unknown name */
	char best[128];		/* the closest offered, when score != 0 */
	size_t score;		/* 0: none is close */
	int ambiguous;		/* another was as close as best */
};

void cfg_near_init(struct cfg_near *n, const char *word);
void cfg_near_offer(struct cfg_near *n, const char *name);
/* Offer the keys of the count rows at rows. */
void cfg_near_rows(struct cfg_near *n, const struct cfg_key *rows,
                   size_t count);
/* Offer a section: "database", or "type.NAME" as "type." followed by
 * what follows the first dot of the unknown name. */
void cfg_near_section(struct cfg_near *n, const char *pattern);
/* "; did you mean OPEN NAME CLOSE?", made in buf, or "" when none is
 * close or two are. */
const char *cfg_near_hint(const struct cfg_near *n, const char *open,
                          const char *close, char *buf, size_t len);

/* "a, b, c": the keys of the n rows at rows. */
void cfg_key_names(const struct cfg_key *rows, size_t n, char *buf,
                   size_t len);
/* "a, b or c": the values of enum row k. */
void cfg_enum_names(const struct cfg_key *k, char *buf, size_t len);

/* Where value has a blank followed by # (a comment meant with the wrong
 * character, which inih leaves in the value), or NULL. */
const char *cfg_comment_in(const char *value);

/* backoff_jitter's value, into [run] (base: the struct cfg) or a
 * [type.NAME] (base: its struct cfg_type, which then has its own). */
int cfg_parse_run_jitter(void *base, const char *value, char *msg,
                         size_t msglen);
int cfg_parse_type_jitter(void *base, const char *value, char *msg,
                          size_t msglen);

/* Whether what follows a section header's "]" is nothing, blanks, or
 * blanks and a " ;" comment. */
int cfg_header_tail_ok(const char *tail);

#endif
