/*
 * watchdog.h - what must happen on time while the runner waits on the
 * database.
 */
#ifndef JOBRUN_WATCHDOG_H
#define JOBRUN_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "db.h"

/* What the watchdog did to a guarded handler. */
#define WATCHDOG_TIMEOUT 1	/* its timeout passed: SIGTERM, then SIGKILL */
#define WATCHDOG_STOPPED 2	/* the second signal: stopped at once */

/* One handler slot's guard: written by the slot, read and acted on by
 * the thread, all under mu, so that the thread never pairs one handler's
 * group with another's deadline, nor marks the next handler with what it
 * did to the last. */
struct watchdog_guard {
	pthread_mutex_t mu;
	int pgid;			/* the guarded handler's group, or 0 */
	int64_t deadline;		/* now_ms() its timeout ends, or 0 */
	int64_t kill_at;		/* when SIGKILL follows SIGTERM */
	int fired;			/* WATCHDOG_* bits */
};

struct watchdog {
	pthread_t thread;
	pthread_mutex_t lock;		/* with wake: stop it without delay */
	pthread_cond_t wake;
	int started;
	struct db *db;
	int (*interrupted)(void);	/* nonzero after the second signal */
	_Atomic int quit;
	struct watchdog_guard *guards;	/* one per handler slot */
	size_t nguards;
	_Atomic int_least64_t stop_seen; /* when the second signal was seen */
};

/* Start the watchdog's thread over db, guarding nslots handler slots;
 * interrupted says when the operator insists on stopping.  0, or -1 with
 * errno. */
int watchdog_start(struct watchdog *w, struct db *db, size_t nslots,
                   int (*interrupted)(void));

/* Stop the thread (nothing is guarded afterwards). */
void watchdog_stop(struct watchdog *w);

/* Guard slot's handler process group: when a database call blocks past
 * deadline (now_ms()), or past the second signal, the watchdog stops the
 * group itself.  pgid 0 ends the guard.  Resets what it fired. */
void watchdog_guard(struct watchdog *w, size_t slot, pid_t pgid,
                    int64_t deadline);

/* WATCHDOG_* bits for what it did to slot's guarded handler. */
int watchdog_fired(struct watchdog *w, size_t slot);

#endif
