/*
 * exec.c - the exec handler: run a program per job.
 *
 * The program is exec'd directly (argv from argv_split, no shell), in a
 * process group of its own so that a timeout or a lost lock can stop it and
 * everything it started with one kill.  The payload goes to its stdin, the
 * job's fields to its environment, and stdout and stderr share one pipe so
 * the captured tail keeps their interleaving.
 *
 * One poll loop drives everything: feeding stdin (a handler may never read
 * it, so the pipe is non-blocking and writing stops at EPIPE), draining
 * output into a fixed ring (a handler may write gigabytes; only the tail is
 * kept), noticing the exit through a pidfd (so a grandchild holding the
 * pipe open cannot hide it), the timeout, and the runner's watch tick.
 *
 * Exit status contract: 0 success, 75 (EX_TEMPFAIL) retry later, 65
 * (EX_DATAERR) permanent failure, 99 not yet (snooze), anything else, a
 * signal or a timeout: retry with backoff.
 *
 * A resumable job (sql/002_checkpoint.sql applied) also gets fd 3, one
 * end of a socket pair, on which each line of JSON the handler writes is
 * a checkpoint, stored in the row at once; the last one comes back in
 * JOBRUN_CHECKPOINT on the next attempt, so `echo '{"last_id":5000}' >&3`
 * is all a shell script needs to resume after a crash.  Each line is
 * answered on the same descriptor, "ok" once it is stored or "refused:
 * why", so a handler that must not redo more than one interval waits for
 * the answer; one that never reads them loses nothing (answers it leaves
 * unread beyond ACK_MAX bytes are dropped).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "argv.h"
#include "config.h"
#include "handler.h"
#include "lines.h"
#include "http.h"
#include "util.h"
#include "watchdog.h"

#define EXEC_KILL_GRACE_MS 2000
#define EXEC_TAIL_BYTES (64 * 1024)
#define EXEC_TICK_MS 1000
/* After the handler's main process exits, how long output still held open
 * by a leftover process may take to arrive before the group is killed. */
#define EXEC_DRAIN_MS 200
/* Exit status for "not yet": run again later without spending an
 * attempt (the last line of output may give the delay in seconds). */
#define EXEC_SNOOZE 99
/* Checkpoint answers waiting for the handler to read them, at most. */
#define ACK_MAX 65536

extern char **environ;

struct exec_state {
	char **argv;
	unsigned long timeout;
};

/* The last EXEC_TAIL_BYTES of output, in a ring.  buf is malloc'ed, not
 * calloc'ed: its pages cost memory only once output fills them (64 slots
 * of handlers that print little must not hold 64 zeroed rings). */
struct tail {
	char *buf;
	size_t start, len;
	int dropped;		/* earlier output was discarded */
};

/* Everything one running handler needs; one cleanup path frees it. */
struct child {
	pid_t pid;
	int in_fd;		/* write end of the handler's stdin, or -1 */
	int out_fd;		/* read end of stdout+stderr, or -1 */
	int pid_fd;		/* pidfd of the handler, or -1 */
	int cp_fd;		/* our end of the checkpoint socket (fd 3), or -1 */
	struct line_reader cp_lines;	/* fd 3's lines */
	const struct handler_watch *cp_watch;	/* where they are stored */
	int cp_lost;		/* storing one found the lock lost */
	char cp_refused[512];	/* why the first refused checkpoint was */
	char *ack;		/* answers not yet written to the handler */
	size_t ack_len;
	int ack_closed;		/* the handler will read no more answers */
	const char *input;
	size_t input_len, input_off;
	int exited, status;
	int exiting;		/* seen exiting by itself, not yet reaped */
	int status_lost;	/* reaped by someone else: status unknown */
	int exec_failed;	/* execve failed: the handler never ran */
	struct tail tail;
};

static void *
exec_create(void)
{
	return xcalloc(1, sizeof(struct exec_state));
}

/* command into argv, split as a shell would, without one. */
static int
parse_command(void *state, const char *value, char *msg, size_t msglen)
{
	struct exec_state *st = state;

	argv_free(st->argv);
	st->argv = NULL;
	return argv_split(value, &st->argv, msg, msglen) != 0 ? -1 : 0;
}

/* The keys of an exec section, which config.c reads into exec_state. */
static const struct cfg_key exec_keys[] = {
	{ .section = "exec", .key = "command", .kind = CFG_CUSTOM,
	  .parse = parse_command },
	{ .section = "exec", .key = "timeout", .kind = CFG_NUMBER,
	  .offset = CFG_FIELD(struct exec_state, timeout, unsigned long),
	  .min = 1, .max = 86400, .unit = "seconds", .def = "60" },
};

static int
exec_ready(void *state, char *err, size_t errlen)
{
	struct exec_state *st = state;

	if (st->argv == NULL)
		return errf(err, errlen, "handler exec needs a command");
	return 0;
}

static void
exec_destroy(void *state)
{
	struct exec_state *st = state;

	if (st == NULL)
		return;
	argv_free(st->argv);
	free(st);
}

static void
tail_append(struct tail *t, const char *data, size_t n)
{
	size_t end, chunk;

	while (n > 0) {
		end = (t->start + t->len) % EXEC_TAIL_BYTES;
		chunk = EXEC_TAIL_BYTES - end < n ? EXEC_TAIL_BYTES - end : n;
		memcpy(t->buf + end, data, chunk);
		data += chunk;
		n -= chunk;
		t->len += chunk;
		if (t->len > EXEC_TAIL_BYTES) {
			/* Overwrote the oldest bytes: the ring starts later. */
			t->start = (t->start + t->len - EXEC_TAIL_BYTES) %
			    EXEC_TAIL_BYTES;
			t->len = EXEC_TAIL_BYTES;
			t->dropped = 1;
		}
	}
}

/* The tail as one contiguous, malloc'ed string. */
static char *
tail_string(const struct tail *t, size_t *lenp)
{
	char *s = xmalloc(t->len + 1);
	size_t first = EXEC_TAIL_BYTES - t->start < t->len ?
	    EXEC_TAIL_BYTES - t->start : t->len;

	memcpy(s, t->buf + t->start, first);
	memcpy(s + first, t->buf, t->len - first);
	s[t->len] = '\0';
	*lenp = t->len;
	return s;
}

/* "NAME=value" (malloc'ed). */
static char *
env_pair(const char *name, const char *value)
{
	char *pair = xmalloc(strlen(name) + strlen(value) + 2);

	sprintf(pair, "%s=%s", name, value);
	return pair;
}

/* 1 when environ entry e ("NAME=value") is one of secrets' variables. */
static int
secret_var(const struct secrets *secrets, const char *e)
{
	size_t i, n;

	for (i = 0; secrets != NULL && i < secrets->nenv; i++) {
		n = strlen(secrets->env_names[i]);
		if (strncmp(e, secrets->env_names[i], n) == 0 && e[n] == '=')
			return 1;
	}
	return 0;
}

/* environ without any JOB_* we set, without the database password and
 * without the variables header_env reads (the http handler has copied
 * them; no program needs them), plus the job's fields.  A key that is NULL, or holds a NUL byte no
 * environment variable can carry, leaves JOB_BUSINESS_KEY unset;
 * JOB_IDEMPOTENCY_KEY, the key as the http handler's Idempotency-Key
 * writes it, stands for any key. */
static char **
build_env(const struct job *job, const struct secrets *secrets)
{
	static const char *const drop[] = {
		"JOB_ID=", "JOB_TYPE=", "JOB_BUSINESS_KEY=", "JOB_ATTEMPT=",
		"JOB_MAX_ATTEMPTS=", "JOB_IDEMPOTENCY_KEY=",
		"JOBRUN_DB_PASSWORD=", "MYSQL_PWD=", "JOBRUN_CHECKPOINT_FD=",
		"JOBRUN_CHECKPOINT=",
	};
	size_t n = 0, i, k, j;
	char **env, *value;
	char buf[64];

	while (environ[n] != NULL)
		n++;
	env = xcalloc(n + 9, sizeof *env);
	for (i = 0, k = 0; i < n; i++) {
		for (j = 0; j < sizeof drop / sizeof drop[0]; j++)
			if (strncmp(environ[i], drop[j], strlen(drop[j])) == 0)
				break;
		if (j == sizeof drop / sizeof drop[0] &&
		    !secret_var(secrets, environ[i]))
			env[k++] = xstrdup(environ[i]);
	}
	snprintf(buf, sizeof buf, "JOB_ID=%llu", (unsigned long long)job->id);
	env[k++] = xstrdup(buf);
	env[k++] = env_pair("JOB_TYPE", job->type);
	if (job->business_key != NULL) {
		if (memchr(job->business_key, '\0', job->business_key_len) ==
		    NULL)
			env[k++] = env_pair("JOB_BUSINESS_KEY",
			    job->business_key);
		value = http_idempotency_value(job->business_key,
		    job->business_key_len);
		env[k++] = env_pair("JOB_IDEMPOTENCY_KEY", value);
		free(value);
	}
	snprintf(buf, sizeof buf, "JOB_ATTEMPT=%lu", job->attempt);
	env[k++] = xstrdup(buf);
	snprintf(buf, sizeof buf, "JOB_MAX_ATTEMPTS=%lu", job->max_attempts);
	env[k++] = xstrdup(buf);
	if (job->resumable) {
		env[k++] = xstrdup("JOBRUN_CHECKPOINT_FD=3");
		if (job->checkpoint != NULL)
			env[k++] = env_pair("JOBRUN_CHECKPOINT",
			    job->checkpoint);
	}
	env[k] = NULL;
	return env;
}

/* The program argv[0] names, as execvp would find it but resolved here,
 * before fork: a name without a slash is looked up in PATH (the
 * handler's, which is the runner's), each candidate an executable regular
 * file.  Malloc'ed; NULL with errno ENOENT, or EACCES when a candidate
 * was there but not executable.  The child then calls execve, which never
 * falls back to /bin/sh: a script without #! fails with ENOEXEC. */
static char *
resolve(const char *name)
{
	const char *path = getenv("PATH"), *dir, *end;
	struct stat sb;
	char *cand;
	size_t n;
	int saw_eacces = 0;

	if (strchr(name, '/') != NULL)
		return xstrdup(name);
	if (*name == '\0') {
		errno = ENOENT;
		return NULL;
	}
	if (path == NULL)
		path = "/bin:/usr/bin";
	for (dir = path;; dir = end + 1) {
		end = strchr(dir, ':');
		if (end == NULL)
			end = dir + strlen(dir);
		n = (size_t)(end - dir);
		/* An empty entry is the current directory. */
		cand = xmalloc(n + strlen(name) + 3);
		if (n == 0)
			sprintf(cand, "./%s", name);
		else
			sprintf(cand, "%.*s/%s", (int)n, dir, name);
		if (stat(cand, &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			saw_eacces = 1;
		} else if (errno == EACCES)
			saw_eacces = 1;
		free(cand);
		if (*end == '\0')
			break;
	}
	errno = saw_eacces ? EACCES : ENOENT;
	return NULL;
}

/* In the child between fork and exec: only async-signal-safe calls.  A
 * failure is reported as its errno, an int written to err_fd (a
 * close-on-exec pipe: the parent reads EOF when execve succeeds), and
 * the parent writes the message; strerror is not async-signal-safe. */
static void
child_exec(const char *path, int path_errno, char **argv, char **env,
    int in_fd, int out_fd, int cp_fd, int err_fd, pid_t runner)
{
	sigset_t none;
	int sig, e;

	setpgid(0, 0);
	/* If the runner dies (SIGKILL, OOM), the handler is told to stop
	 * rather than run on beside the next attempt of its own job. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != runner)
		_exit(127);
	/* Dispositions jobrun ignores would survive exec; give the handler
	 * the defaults a program started from a shell has. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* A slot thread (--jobs) blocks every signal: the handler must not
	 * inherit that mask, or SIGTERM would never reach it. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		goto fail;
	/* fd 3 is the checkpoint socket; dup2 clears its close-on-exec. */
	if (cp_fd >= 0 && dup2(cp_fd, 3) < 0)
		goto fail;
	/* Nothing else of jobrun's (the database socket above all) leaks
	 * into the handler; pipes are O_CLOEXEC, this catches the rest but
	 * err_fd (above 3: made after four other descriptors), which exec
	 * closes. */
	close_range(cp_fd >= 0 ? 4 : 3, (unsigned)err_fd - 1, 0);
	close_range((unsigned)err_fd + 1, ~0U, 0);
	if (path == NULL) {
		errno = path_errno;
		goto fail;
	}
	execve(path, argv, env);
fail:
	e = errno;
	(void)!write(err_fd, &e, sizeof e);
	_exit(127);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int
spawn(struct child *c, char **argv, const struct job *job,
    const struct secrets *secrets, char *err, size_t errlen)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, cp[2] = { -1, -1 };
	int ep[2] = { -1, -1 };
	char **env = NULL, *path = NULL, msg[512];
	pid_t runner;
	ssize_t got;
	int rc = -1, path_errno, child_errno;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    (job->resumable && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
	    0, cp) != 0) || pipe2(ep, O_CLOEXEC) != 0) {
		errf(err, errlen, "create pipe: %s", strerror(errno));
		goto out;
	}
	env = build_env(job, secrets);
	path = resolve(argv[0]);
	path_errno = errno;
	runner = getpid();
	c->pid = fork();
	if (c->pid < 0) {
		errf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	if (c->pid == 0)
		child_exec(path, path_errno, argv, env, in[0], out[1], cp[1],
		    ep[1], runner);
	/* Also from the parent, so the group exists before we might kill it. */
	setpgid(c->pid, c->pid);
	/* EOF: the program runs; an int: why it could not.  The message
	 * goes where the child's own would have: its output. */
	close_fd(&ep[1]);
	do
		got = read(ep[0], &child_errno, sizeof child_errno);
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof child_errno) {
		snprintf(msg, sizeof msg, "jobrun: cannot execute handler: "
		    "%s: %s\n", argv[0], strerror(child_errno));
		tail_append(&c->tail, msg, strlen(msg));
		c->exec_failed = 1;
	}
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->cp_fd = cp[0];
	in[1] = out[0] = cp[0] = -1;
	fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	if (c->cp_fd >= 0)
		fcntl(c->cp_fd, F_SETFL, O_NONBLOCK);
	c->pid_fd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	rc = 0;
out:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&cp[0]);
	close_fd(&cp[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	free(path);
	argv_free(env);
	return rc;
}

static void
feed_input(struct child *c)
{
	ssize_t n;

	while (c->input_off < c->input_len) {
		n = write(c->in_fd, c->input + c->input_off,
		    c->input_len - c->input_off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			break;	/* EPIPE: the handler does not want it */
		}
		c->input_off += (size_t)n;
	}
	close_fd(&c->in_fd);
}

static void
drain_output(struct child *c)
{
	char buf[16384];
	ssize_t n;

	for (;;) {
		n = read(c->out_fd, buf, sizeof buf);
		if (n > 0) {
			tail_append(&c->tail, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close_fd(&c->out_fd);	/* EOF or error */
		return;
	}
}

/* Queue an answer for the handler; written as fd 3 takes it. */
static void
answer(struct child *c, const char *text)
{
	size_t n = strlen(text);

	if (c->ack_closed || c->ack_len + n + 1 > ACK_MAX)
		return;		/* nobody reads them: drop */
	c->ack = xrealloc(c->ack, c->ack_len + n + 1);
	memcpy(c->ack + c->ack_len, text, n);
	c->ack[c->ack_len + n] = '\n';
	c->ack_len += n + 1;
}

static void
flush_answers(struct child *c)
{
	ssize_t n;

	while (c->ack_len > 0 && c->cp_fd >= 0 && !c->ack_closed) {
		n = send(c->cp_fd, c->ack, c->ack_len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			c->ack_closed = 1;	/* EPIPE: the handler is gone */
			c->ack_len = 0;
			return;
		}
		memmove(c->ack, c->ack + n, c->ack_len - (size_t)n);
		c->ack_len -= (size_t)n;
	}
}

/* One complete line from fd 3: hand it to the runner to store, and
 * answer.  A refusal is the handler's mistake and goes into its output,
 * where last_error will show it; the job's row is not touched. */
static void
checkpoint_line(void *arg, const char *line, size_t len, int overflow)
{
	struct child *c = arg;
	const struct handler_watch *w = c->cp_watch;
	char err[512], ack[600];
	int rc;

	if (w == NULL)
		rc = 0;
	else if (len == 0 && !overflow)
		rc = errf(err, sizeof err, "an empty line");
	else
		/* Over the limit, the runner refuses it by its length
		 * alone, and says so where the operator looks. */
		rc = w->checkpoint(w->arg, line, overflow ?
		    CHECKPOINT_MAX + 1 : len, err, sizeof err);
	if (rc == 0)
		answer(c, "ok");
	else {
		snprintf(ack, sizeof ack, "refused: %s", rc > 0 ?
		    "the job's lock was lost" : err);
		answer(c, ack);
	}
	/* Kept apart from the output, whose last line may be a snooze
	 * delay; it goes into last_error's opening words. */
	if (rc < 0 && len > 0 && c->cp_refused[0] == '\0')
		snprintf(c->cp_refused, sizeof c->cp_refused, "%s", err);
	else if (rc > 0)
		c->cp_lost = 1;
	flush_answers(c);
}

static void
drain_checkpoints(struct child *c, const struct handler_watch *w)
{
	char buf[8192];
	ssize_t n;

	c->cp_watch = w;
	for (;;) {
		n = read(c->cp_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		/* A reset is the handler going with answers unread. */
		if (n <= 0) {
			line_reader_end(&c->cp_lines, checkpoint_line, c);
			close_fd(&c->cp_fd);
			return;
		}
		line_reader_feed(&c->cp_lines, buf, (size_t)n,
		    checkpoint_line, c);
	}
}

static void
reap(struct child *c, int flags)
{
	pid_t r;

	if (c->exited)
		return;
	do
		r = waitpid(c->pid, &c->status, flags);
	while (r < 0 && errno == EINTR);
	/* ECHILD: the child is gone and its status with it (SIGCHLD
	 * ignored reaps children in the kernel; main resets it, but be
	 * sure).  An unknown status is never a success. */
	if (r == c->pid || (r < 0 && errno == ECHILD)) {
		c->exited = 1;
		c->status_lost = r < 0;
		close_fd(&c->pid_fd);
	}
}

enum stop_reason { STOP_NONE, STOP_TIMEOUT, STOP_ABANDON };

/* Whether the handler has ended by itself: reaped, or past the point where
 * a signal could stop it.  Asked before it is stopped (a second signal, a
 * lost lock, its timeout): its output pipe ends before the kernel makes it
 * a zombie, and a handler that exited 0 in that moment has finished, so
 * its outcome is written, not undone as a stop. */
static int
finished(struct child *c)
{
	reap(c, WNOHANG);
	if (!c->exited && !c->exiting)
		c->exiting = proc_exiting(c->pid);
	return c->exited || c->exiting;
}

/* Wait until the handler's pipes or its exit need us, or until wake
 * (now_ms); then feed its input, drain its output and checkpoints, and
 * reap it if it has exited.  -1 when poll fails. */
static int
wait_child(struct child *c, int64_t now, int64_t wake,
    const struct handler_watch *w)
{
	struct pollfd pfd[4];
	nfds_t n = 0;
	int wait_ms;

	if (c->in_fd >= 0)
		pfd[n++] = (struct pollfd){ c->in_fd, POLLOUT, 0 };
	if (c->out_fd >= 0)
		pfd[n++] = (struct pollfd){ c->out_fd, POLLIN, 0 };
	if (c->pid_fd >= 0)
		pfd[n++] = (struct pollfd){ c->pid_fd, POLLIN, 0 };
	if (c->cp_fd >= 0)
		pfd[n++] = (struct pollfd){ c->cp_fd, (short)(POLLIN |
		    (c->ack_len > 0 && !c->ack_closed ? POLLOUT : 0)), 0 };
	/* Without a pidfd (old kernels) poll the exit every 10 ms. */
	if (c->pid_fd < 0 && !c->exited && wake > now + 10)
		wake = now + 10;
	wait_ms = wake > now ? (int)(wake - now) : 0;
	if (poll(pfd, n, wait_ms) < 0 && errno != EINTR)
		return -1;
	if (c->in_fd >= 0)
		feed_input(c);
	if (c->out_fd >= 0)
		drain_output(c);
	if (c->cp_fd >= 0) {
		flush_answers(c);
		drain_checkpoints(c, w);
	}
	reap(c, WNOHANG);
	return 0;
}

/* Wait for the handler to finish, feeding and draining as it goes. */
static enum stop_reason
supervise(struct child *c, unsigned long timeout, const struct handler_watch *w)
{
	int64_t start = now_ms(), now, next_tick = start + EXEC_TICK_MS;
	int64_t deadline = start + (int64_t)timeout * 1000, kill_at = 0;
	int64_t exited_at = 0, wake;
	enum stop_reason stop = STOP_NONE;
	int fired;

	/* While this loop waits on the database (a lock extension, a
	 * checkpoint), the runner's watchdog keeps the timeout. */
	if (w != NULL && w->guard != NULL)
		w->guard(w->arg, c->pid, deadline);
	feed_input(c);
	for (;;) {
		now = now_ms();
		if (c->exited && exited_at == 0)
			exited_at = now;
		if (c->exited && (c->out_fd < 0 || now >= exited_at +
		    EXEC_DRAIN_MS))
			break;
		if (!c->exited && !c->exiting && stop == STOP_NONE &&
		    now >= deadline && !finished(c))
			stop = STOP_TIMEOUT;
		/* Cheap when nothing is due; called on every wake-up so a
		 * signal (which interrupts poll) is acted on at once. */
		if (!c->exited && !c->exiting && stop == STOP_NONE &&
		    w != NULL && (c->cp_lost || w->tick(w->arg) != 0) &&
		    !finished(c))
			stop = STOP_ABANDON;
		if (now >= next_tick)
			next_tick = now + EXEC_TICK_MS;
		if (!c->exited && stop != STOP_NONE && kill_at == 0) {
			kill(-c->pid, SIGTERM);
			kill_at = now + EXEC_KILL_GRACE_MS;
		}
		if (!c->exited && kill_at != 0 && now >= kill_at) {
			kill(-c->pid, SIGKILL);
			kill_at = now + EXEC_TICK_MS;
		}

		/* An exiting handler is waited for: its pidfd wakes us. */
		wake = c->exited ? exited_at + EXEC_DRAIN_MS :
		    c->exiting ? now + EXEC_TICK_MS :
		    stop != STOP_NONE ? kill_at : deadline < next_tick ?
		    deadline : next_tick;
		if (wait_child(c, now, wake, w) != 0)
			break;
	}
	/* Progress written just before the exit still counts. */
	if (c->cp_fd >= 0)
		drain_checkpoints(c, w);
	/* Whatever the handler left behind in its group goes with it. */
	kill(-c->pid, SIGKILL);
	reap(c, 0);
	/* What the watchdog did while we waited is why the handler ended. */
	fired = w != NULL && w->guarded != NULL ? w->guarded(w->arg) : 0;
	if (w != NULL && w->guard != NULL)
		w->guard(w->arg, 0, 0);
	if (fired & WATCHDOG_STOPPED)
		stop = STOP_ABANDON;
	else if ((fired & WATCHDOG_TIMEOUT) && stop == STOP_NONE)
		stop = STOP_TIMEOUT;
	return stop;
}

/* The delay a snoozing handler asks for: its last line of output, when
 * that is a whole number of seconds; -1 otherwise. */
static long
last_line_seconds(const char *out, size_t len)
{
	char line[32];
	size_t end = len, start;
	unsigned long secs;

	while (end > 0 && (out[end - 1] == '\n' || out[end - 1] == '\r'))
		end--;
	start = end;
	while (start > 0 && out[start - 1] != '\n')
		start--;
	if (end - start == 0 || end - start >= sizeof line)
		return -1;
	memcpy(line, out + start, end - start);
	line[end - start] = '\0';
	if (parse_ulong(line, 0, 0x7fffffffUL, &secs) != 0)
		return -1;
	return (long)secs;
}

static void
describe(const struct child *c, enum stop_reason stop, unsigned long timeout,
    struct result *res)
{
	char what[768];
	char *out;
	size_t len, n;
	enum outcome outcome = OUTCOME_RETRY;
	int code;

	/* A stop that met a handler already on its way out of exit(0) did
	 * not stop it: the work is done, and its outcome is final (running
	 * it again would do it twice).  Stopped, it dies of the signal or
	 * exits with another status. */
	if (stop == STOP_ABANDON && c->exited && !c->status_lost &&
	    WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0)
		stop = STOP_NONE;
	if (stop == STOP_ABANDON) {
		snprintf(what, sizeof what, "stopped by the runner");
		outcome = OUTCOME_ABANDONED;
	} else if (stop == STOP_TIMEOUT)
		snprintf(what, sizeof what, "timed out after %lu s", timeout);
	else if (c->status_lost)
		snprintf(what, sizeof what, "exit status unknown: the handler "
		    "was reaped by another (is SIGCHLD ignored?)");
	else if (WIFSIGNALED(c->status))
		snprintf(what, sizeof what, "killed by signal %d (%s)",
		    WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
	else {
		code = WEXITSTATUS(c->status);
		if (code == 0) {
			outcome = OUTCOME_SUCCESS;
			snprintf(what, sizeof what, "exit 0");
		} else if (code == EX_TEMPFAIL)
			snprintf(what, sizeof what, "exit 75 (retry later)");
		else if (code == EXEC_SNOOZE) {
			outcome = OUTCOME_SNOOZE;
			snprintf(what, sizeof what, "exit 99 (not yet)");
		}
		else if (code == EX_DATAERR) {
			outcome = OUTCOME_FAIL;
			snprintf(what, sizeof what,
			    "exit 65 (permanent failure)");
		} else
			snprintf(what, sizeof what, "exit status %d", code);
	}
	if (c->cp_refused[0] != '\0') {
		n = strlen(what);
		snprintf(what + n, sizeof what - n, " (checkpoint refused: %s)",
		    c->cp_refused);
	}
	out = tail_string(&c->tail, &len);
	result_set(res, outcome, what, out, len);
	res->setup = c->exec_failed;
	res->timed_out = stop == STOP_TIMEOUT;
	if (c->exited && !c->status_lost && WIFSIGNALED(c->status))
		res->signo = WTERMSIG(c->status);
	else if (c->exited && !c->status_lost)
		res->exit_status = WEXITSTATUS(c->status);
	if (outcome == OUTCOME_SNOOZE)
		res->retry_after = last_line_seconds(out, len);
	free(out);
}

static void
exec_run(void *state, const struct job *job, const struct handler_watch *w,
    struct result *res)
{
	struct exec_state *st = state;
	struct child *c = xcalloc(1, sizeof *c);
	struct sigaction ignore;
	char err[256];
	enum stop_reason stop;

	c->in_fd = c->out_fd = c->pid_fd = c->cp_fd = -1;
	line_reader_init(&c->cp_lines, CHECKPOINT_MAX);
	c->tail.buf = xmalloc(EXEC_TAIL_BYTES);
	c->input = job->payload;
	c->input_len = job->payload_len;
	/* A handler that exits without reading its stdin must cost an EPIPE,
	 * not our life, whatever the caller did with SIGPIPE.  Not put back
	 * afterwards: other slots' handlers may be running (--jobs). */
	memset(&ignore, 0, sizeof ignore);
	ignore.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ignore, NULL);
	if (spawn(c, st->argv, job, res->secrets, err, sizeof err) != 0) {
		result_set(res, OUTCOME_RETRY, err, NULL, 0);
		goto out;
	}
	stop = supervise(c, st->timeout, w);
	describe(c, stop, st->timeout, res);
out:
	close_fd(&c->in_fd);
	close_fd(&c->out_fd);
	close_fd(&c->pid_fd);
	close_fd(&c->cp_fd);
	line_reader_free(&c->cp_lines);
	free(c->tail.buf);
	free(c->ack);
	free(c);
}

/* A problem (-1) or a doubt (1) in n, with its fix. */
static int
noted(struct probe_note *n, int rc, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
noted(struct probe_note *n, int rc, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(n->msg, sizeof n->msg, fmt, ap);
	va_end(ap);
	snprintf(n->fix, sizeof n->fix, "%s", fix != NULL ? fix : "");
	return rc;
}

/* What execve would meet in the file at path: an interpreter named by a
 * "#!" line must be there and executable too, and a name that env(1)
 * would look up must be in PATH; a file with neither "#!" nor an ELF
 * header fails with ENOEXEC, which a run records as exit status 127. */
static int
probe_interpreter(const char *path, struct probe_note *out)
{
	char head[256], *interp, *arg, *found, fix[400];
	const char *base;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)	/* executable but unreadable: execve may work */
		return noted(out, 0, NULL, "%s", path);
	n = read(fd, head, sizeof head - 1);
	close(fd);
	head[n > 0 ? n : 0] = '\0';
	if (n >= 4 && memcmp(head, "\177ELF", 4) == 0)
		return noted(out, 0, NULL, "%s", path);
	snprintf(fix, sizeof fix, "add a #! line to %s (#!/usr/bin/php, "
	    "say), or name its interpreter first in command", path);
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return noted(out, -1, fix, "%s has no #! line: execve refuses "
		    "it (exit status 127, Exec format error, at every attempt)",
		    path);
	head[strcspn(head, "\r\n")] = '\0';
	interp = head + 2 + strspn(head + 2, " \t");
	arg = interp + strcspn(interp, " \t");
	if (*arg != '\0')
		*arg++ = '\0';
	arg += strspn(arg, " \t");
	arg[strcspn(arg, " \t")] = '\0';
	snprintf(fix, sizeof fix, "install it, or correct the #! line of %s",
	    path);
	if (access(interp, X_OK) != 0)
		return noted(out, -1, fix, "%s: its interpreter %s: %s", path,
		    interp, strerror(errno));
	base = strrchr(interp, '/') != NULL ? strrchr(interp, '/') + 1 :
	    interp;
	if (strcmp(base, "env") != 0 || *arg == '\0' || *arg == '-')
		return noted(out, 0, NULL, "%s (#!%s)", path, interp);
	found = resolve(arg);
	if (found == NULL)
		return noted(out, -1, "give the #! line a full path, or set PATH "
		    "where the run starts (a PATH= line in the crontab)",
		    "%s: #!%s %s: %s is not in PATH", path, interp, arg, arg);
	noted(out, 0, NULL, "%s (#!%s %s: %s)", path, interp, arg, found);
	free(found);
	return 0;
}

/* cron's PATH when the crontab sets none (Debian's cron). */
#define CRON_PATH "/usr/bin:/bin"

/* Whether dir is one of CRON_PATH's directories. */
static int
in_cron_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL ? (size_t)(slash - path) : 0;

	return (n == 8 && strncmp(path, "/usr/bin", 8) == 0) ||
	    (n == 4 && strncmp(path, "/bin", 4) == 0);
}

/* Doubts a run may meet that check's own environment hides: a program
 * found in PATH outside cron's default, an absolute path among the
 * arguments (the script after its interpreter) that is not there. */
static int
probe_doubts(const struct exec_state *st, const char *path,
    struct probe_note *out)
{
	struct stat sb;
	size_t i;

	if (strchr(st->argv[0], '/') == NULL && !in_cron_path(path))
		return noted(out, 1, "a PATH= line in the crontab, or a full "
		    "path in command", "%s is %s, in a directory that cron's "
		    "PATH (" CRON_PATH ", unless the crontab sets one) lacks",
		    st->argv[0], path);
	for (i = 1; st->argv[i] != NULL; i++)
		if (st->argv[i][0] == '/' && stat(st->argv[i], &sb) != 0)
			return noted(out, 1, "check the paths in command",
			    "%s: argument %s: %s", path, st->argv[i],
			    strerror(errno));
	return 0;
}

/* The command as a run would start it: argv[0] found in PATH (this
 * process's, which a run started the same way has), executable, and
 * what its "#!" line names there too; then what cron's PATH and the
 * arguments may change. */
static int
exec_probe(void *state, struct probe_note *out)
{
	struct exec_state *st = state;
	const char *name = st->argv[0];
	char *path, fix[400];
	int rc, e;

	path = resolve(name);
	if (path == NULL)
		return errno == EACCES ? noted(out, -1, "chmod +x it", "%s: "
		    "found in PATH, not executable", name) : noted(out, -1,
		    "give command a full path, or set PATH where the run starts "
		    "(a PATH= line in the crontab; cron's is " CRON_PATH ")",
		    "%s: not found in PATH", name);
	if (access(path, X_OK) != 0) {
		e = errno;
		snprintf(fix, sizeof fix, e == EACCES ? "chmod +x %s" :
		    "check the path in command (%s)", path);
		rc = noted(out, -1, fix, "%s: %s", path, strerror(e));
	} else
		rc = probe_interpreter(path, out);
	if (rc == 0 && probe_doubts(st, path, out) != 0)
		rc = 1;
	free(path);
	return rc;
}

const struct handler_kind exec_kind = {
	.name = "exec",
	.create = exec_create,
	.keys = exec_keys,
	.nkeys = sizeof exec_keys / sizeof exec_keys[0],
	.ready = exec_ready,
	.probe = exec_probe,
	.run = exec_run,
	.destroy = exec_destroy,
};
