/*
 * handler.h - the interface every handler kind implements.
 *
 * A handler kind (exec, noop, later http) is one file that fills in a
 * struct handler_kind and one row in handler.c's table.  The runner never
 * knows which kind it is driving: it hands over a claimed job and a watch
 * callback, and gets back an outcome and a message.
 */
#ifndef JOBRUN_HANDLER_H
#define JOBRUN_HANDLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cfg_key;

/* last_error keeps at most this many characters (the seed's mb_substr). */
#define LAST_ERROR_CHARS 1000
#define LAST_ERROR_BYTES (LAST_ERROR_CHARS * 4 + 1)
/* An attempt's row (sql/010_attempts.sql) keeps at most this many bytes
 * of the handler's output, redacted as last_error is. */
#define ATTEMPT_OUTPUT_BYTES 4096

/* A claimed job as the runner read it back after the claim.  Keys,
 * payloads and checkpoints are the bytes the row holds, with their
 * lengths: they may contain NUL bytes. */
struct job {
	uint64_t id;
	char *type;
	char *business_key;		/* NULL when the row has NULL */
	size_t business_key_len;
	char *payload;			/* JSON text; "{}" when the row has NULL */
	size_t payload_len;
	int payload_valid;		/* the server's JSON_VALID says yes */
	unsigned long attempt;		/* this attempt, counting from 1 */
	unsigned long max_attempts;
	char *checkpoint;		/* JSON text saved earlier, or NULL */
	size_t checkpoint_len;
	unsigned long snoozes;		/* put off in a row without progress */
	int resumable;			/* the table can store checkpoints */
	int64_t start_latency_ms;	/* claim - max(next_run_at,
					 * created_at), the server's clock;
					 * -1 unknown */
	int64_t deadline_left_s;	/* seconds to its deadline when
					 * claimed (< 0: passed); INT64_MAX
					 * none */
	int64_t age_s;			/* since created_at, when claimed;
					 * -1 unknown */
};

/* A checkpoint is one line of JSON of at most this many bytes. */
#define CHECKPOINT_MAX 65536

enum outcome {
	OUTCOME_SUCCESS,	/* done: mark success */
	OUTCOME_RETRY,		/* try again after backoff, while attempts last */
	OUTCOME_FAIL,		/* permanent failure: mark failed now */
	OUTCOME_SNOOZE,		/* not yet: run again in retry_after seconds,
				 * without spending an attempt */
	OUTCOME_ABANDONED	/* stopped because the runner asked: no mark */
};

/* Values that must never be written anywhere (the database password, a
 * token from header_env or header_file): each is replaced by [redacted]
 * in every message before it is cut, stored or logged. */
struct secrets {
	char **values;
	size_t n;
	/* Environment variables that hold one (header_env's): handed to
	 * no exec handler. */
	char **env_names;
	size_t nenv;
};

/* Add value to s, unless it is too short to tell from ordinary text
 * (under 4 bytes) or already there. */
void secrets_add(struct secrets *s, const char *value);
/* Add the name of an environment variable that holds a secret. */
void secrets_add_env(struct secrets *s, const char *name);
void secrets_free(struct secrets *s);

/* text (len bytes) with every secret replaced, malloc'ed and NUL-ended;
 * *outlen is its length. */
char *secrets_redact(const struct secrets *s, const char *text, size_t len,
                     size_t *outlen);

/* What a handler reports; message becomes last_error on failure. */
struct result {
	enum outcome outcome;
	long retry_after;	/* seconds until a retry; -1: the backoff's */
	int setup;		/* the handler could not be started (a
				 * set-up mistake, not the job's) */
	char message[LAST_ERROR_BYTES];
	const struct secrets *secrets;	/* set by the runner, or NULL */
	/* For the attempt's row: what the handler ended with, where it
	 * says (-1: no exit status, 0: no signal, no HTTP status). */
	int exit_status;
	int signo;
	long http_status;
	int timed_out;
	/* The output's tail (a response body's head) as result_set saw
	 * it, redacted, valid UTF-8, at most ATTEMPT_OUTPUT_BYTES. */
	char output[ATTEMPT_OUTPUT_BYTES + 1];
	size_t output_len;	/* it may hold NUL bytes */
};

/* A handler's JSON reply as the server's JSON functions read it: members
 * come back as written (malloc'ed, NULL when absent). */
struct reply {
	int valid;		/* JSON at all */
	int object;		/* a JSON object */
	char *checkpoint;	/* the "checkpoint" member's JSON text */
	size_t checkpoint_len;
	char *snooze;		/* the "snooze" member's JSON text */
};

void reply_free(struct reply *reply);

/* Set result to outcome (retry_after -1) with message "<what>: <detail>",
 * where detail (any bytes, e.g. captured output) has its secrets
 * redacted, is made valid UTF-8 and is cut to its tail so the whole
 * message fits in LAST_ERROR_CHARS characters. */
void result_set(struct result *res, enum outcome outcome, const char *what,
                const char *detail, size_t detail_len);

/* The same, keeping the start of detail instead (a response body). */
void result_set_head(struct result *res, enum outcome outcome,
                     const char *what, const char *detail,
                     size_t detail_len);

/* Called by a running handler at least once a second.  tick returns
 * nonzero when the handler must stop at once (the job's lock was lost or
 * the operator insists on stopping); the handler then ends its work and
 * reports OUTCOME_ABANDONED.  checkpoint stores a handler's progress (the
 * bytes it wrote, not yet validated; over CHECKPOINT_MAX bytes it is
 * refused): 0 stored, -1 refused (err says why; the handler goes on), 1
 * the lock is lost and the handler must stop.  read_reply reads a JSON
 * reply by the server's rules: 0, or -1 with err. */
struct handler_watch {
	int (*tick)(void *arg);
	int (*checkpoint)(void *arg, const char *json, size_t len, char *err,
	                  size_t errlen);
	int (*read_reply)(void *arg, const char *text, size_t len,
	                  struct reply *out, char *err, size_t errlen);
	/* Put a process group (0: none) whose timeout ends at deadline
	 * (now_ms()) in the care of the runner's watchdog, which stops it on
	 * time even while the runner waits on the database; guarded says
	 * what it did (WATCHDOG_* bits, watchdog.h).  May be NULL. */
	void (*guard)(void *arg, pid_t pgid, int64_t deadline);
	int (*guarded)(void *arg);
	/* Tell the operator what the handler does about a stop (a warning
	 * naming the job).  May be NULL. */
	void (*say)(void *arg, const char *what);
	void *arg;
};

/* What a probe found (handler_kind.probe). */
struct probe_note {
	char msg[1024];
	char fix[512];
};

struct handler_kind {
	const char *name;
	/* Its keys in a [type.NAME] section: rows that config.c reads into
	 * the state (struct cfg_key, config.h), defaults included. */
	const struct cfg_key *keys;
	size_t nkeys;
	/* Allocate the per-type state. */
	void *(*create)(void);
	/* All keys are in: check that the required ones were given. */
	int (*ready)(void *state, char *err, size_t errlen);
	/* Before the first job of a run: read what the configuration only
	 * names (secrets from files or the environment), so that commands
	 * which never run this type do not depend on them.  -1 with err for a
	 * configuration problem.  May be NULL. */
	int (*prepare)(void *state, char *err, size_t errlen);
	/* A warning the operator must see at every run, or NULL (may be a
	 * NULL pointer for kinds that never warn). */
	const char *(*warning)(void *state);
	/* After prepare: add the values no message may show (may be
	 * NULL). */
	void (*secrets)(void *state, struct secrets *out);
	/* For check, after prepare: whether a job could be handed over,
	 * without running one (an exec command found and executable, an
	 * http URL that answers).  0 with what it found in msg; 1 with a
	 * doubt in msg and its fix; -1 with why not and its fix.  May be
	 * NULL. */
	int (*probe)(void *state, struct probe_note *out);
	/* Run one job to its outcome. */
	void (*run)(void *state, const struct job *job,
	            const struct handler_watch *watch, struct result *res);
	void (*destroy)(void *state);
};

/* The kind called name, or NULL. */
const struct handler_kind *handler_find(const char *name);

/* "exec, http, noop": the names handler_find knows, from its table, for
 * error messages; written to buf (cut to len), which is returned. */
const char *handler_names(char *buf, size_t len);

#endif
