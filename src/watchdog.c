/*
 * watchdog.c - what must happen on time while the runner waits on the
 * database.
 *
 * The runner handles its jobs (one per slot, --jobs) and talks to the
 * server over one connection, one call at a time.  A server that stops
 * answering (SIGSTOP, a stuck disk, a network black hole) holds a call
 * for up to read_timeout, and in that time, in every slot waiting for the
 * connection, a handler's timeout would pass unenforced and a second
 * signal would go unheeded.  So one more thread, for the length of a run,
 * looks ten times a second at what the slots cannot: when a call has been
 * blocked past a guarded handler's deadline, it stops the handler's group
 * (SIGTERM, SIGKILL after the same grace as exec.c's); when the operator
 * has signalled twice and a call has been blocked for half a second, it
 * stops every handler and gives up on the server (db_abandon: the blocked
 * call returns, no new connection is made), so the run ends at once and
 * leaves what it could not record to recovery.
 *
 * It never touches the connection otherwise, never calls libmariadb, and
 * acts only when the runner is blocked in a call; the runner's own loop
 * does the same work whenever it is not.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "watchdog.h"

#define WATCHDOG_TICK_MS 100
#define WATCHDOG_GRACE_MS 2000	/* SIGTERM to SIGKILL, as exec.c */
#define WATCHDOG_STUCK_MS 500	/* a call blocked this long is stuck */

/* (g->mu held) */
static void
stop_group(struct watchdog_guard *g, int bit, int64_t now)
{
	if (g->pgid <= 0 || (g->fired & bit))
		return;
	/* A handler that finished by itself keeps its outcome: its slot has
	 * not reaped it yet, but there is nothing left to stop. */
	if (proc_exiting(g->pgid))
		return;
	kill(-g->pgid, SIGTERM);
	g->fired |= bit;
	if (g->kill_at == 0)
		g->kill_at = now + WATCHDOG_GRACE_MS;
}

/* A slot's timeout, kept while the database holds the runner. */
static void
look_at_guard(struct watchdog_guard *g, int64_t now, int64_t busy)
{
	pthread_mutex_lock(&g->mu);
	if (busy != 0 && g->deadline != 0 && now >= g->deadline)
		stop_group(g, WATCHDOG_TIMEOUT, now);
	if (g->pgid > 0 && g->kill_at != 0 && now >= g->kill_at &&
	    busy != 0) {
		kill(-g->pgid, SIGKILL);
		g->kill_at = now + WATCHDOG_GRACE_MS;
	}
	pthread_mutex_unlock(&g->mu);
}

static void
look(struct watchdog *w)
{
	int64_t now = now_ms(), busy = atomic_load(&w->db->busy_since), seen;
	size_t i;

	for (i = 0; i < w->nguards; i++)
		look_at_guard(&w->guards[i], now, busy);
	if (!w->interrupted())
		return;
	seen = atomic_load(&w->stop_seen);
	if (seen == 0)
		atomic_store(&w->stop_seen, seen = now);
	if (busy != 0 && now - (busy > seen ? busy : seen) >= WATCHDOG_STUCK_MS) {
		for (i = 0; i < w->nguards; i++) {
			pthread_mutex_lock(&w->guards[i].mu);
			stop_group(&w->guards[i], WATCHDOG_STOPPED, now);
			pthread_mutex_unlock(&w->guards[i].mu);
		}
		db_abandon(w->db);
	}
}

/* The time WATCHDOG_TICK_MS from now on the condition's clock. */
static void
next_tick(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += WATCHDOG_TICK_MS * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *
watch(void *arg)
{
	struct watchdog *w = arg;
	struct timespec ts;

	pthread_mutex_lock(&w->lock);
	while (!atomic_load(&w->quit)) {
		look(w);
		next_tick(&ts);
		/* Woken at once by watchdog_stop: a run must not wait a tick
		 * to end. */
		pthread_cond_timedwait(&w->wake, &w->lock, &ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int
watchdog_start(struct watchdog *w, struct db *db, size_t nslots,
    int (*interrupted)(void))
{
	pthread_condattr_t attr;
	sigset_t all, saved;
	size_t i;
	int rc;

	memset(w, 0, sizeof *w);
	w->db = db;
	w->interrupted = interrupted;
	w->guards = xcalloc(nslots, sizeof *w->guards);
	w->nguards = nslots;
	for (i = 0; i < nslots; i++)
		pthread_mutex_init(&w->guards[i].mu, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* Created with every signal blocked, so that none is ever delivered
	 * to it: they are the main thread's to take. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	rc = pthread_create(&w->thread, NULL, watch, w);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		for (i = 0; i < nslots; i++)
			pthread_mutex_destroy(&w->guards[i].mu);
		free(w->guards);
		w->guards = NULL;
		errno = rc;
		return -1;
	}
	w->started = 1;
	return 0;
}

void
watchdog_stop(struct watchdog *w)
{
	size_t i;

	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->quit, 1);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	for (i = 0; i < w->nguards; i++)
		pthread_mutex_destroy(&w->guards[i].mu);
	free(w->guards);
	w->guards = NULL;
	w->nguards = 0;
	w->started = 0;
}

void
watchdog_guard(struct watchdog *w, size_t slot, pid_t pgid, int64_t deadline)
{
	struct watchdog_guard *g = &w->guards[slot];

	pthread_mutex_lock(&g->mu);
	g->pgid = pgid > 0 ? (int)pgid : 0;
	g->deadline = pgid > 0 ? deadline : 0;
	g->kill_at = 0;
	g->fired = 0;
	pthread_mutex_unlock(&g->mu);
}

int
watchdog_fired(struct watchdog *w, size_t slot)
{
	struct watchdog_guard *g = &w->guards[slot];
	int fired;

	pthread_mutex_lock(&g->mu);
	fired = g->fired;
	pthread_mutex_unlock(&g->mu);
	return fired;
}
