/*
 * idle.c - a run that waits for work (--wait, [run] wait): what its slots
 * do when a claim finds nothing due, until its time budget ends.
 *
 * One slot at a time watches: it asks the table, in one statement of
 * plain reads that lock nothing (queue_probe), how soon the claim's
 * first job is due and whether a lock has expired, and sleeps until
 * then, or for the interval, whichever is sooner.  The interval is 10 ms
 * just after the run last saw work and grows by a tenth of the time
 * since, to 100 ms: a run that has just had work notices the next job
 * within milliseconds, and an idle one costs the server ten reads a
 * second, whatever its --jobs (the other slots sleep on a condition
 * variable, and send nothing).  A job inserted by any program, with
 * jobrun enqueue or a plain INSERT, a backoff that ended and a fan-in's
 * job are all a pending row that becomes due: the probe sees each the
 * same way.  An expired lock is recovered at once; the schedules are
 * looked at each time the server's clock enters a new minute (every cron
 * slot falls on a whole minute), and with them the fan-ins a killed
 * runner left complete.
 *
 * When the watcher sees work it leaves to claim it; each claim that
 * takes a job wakes one sleeping slot to claim too, so a burst puts
 * every slot to work within a claim's time each, and a single job wakes
 * one slot too many at most.
 */
#include <pthread.h>

#include "runner_int.h"
#include "schedule.h"
#include "util.h"

#define IDLE_WARM_MS	10	/* the interval just after work */
#define IDLE_COLD_MS	100	/* the interval of an idle run */
#define IDLE_TYPES_MS	1000	/* paused types read again after this */
#define IDLE_SHARE	250	/* an idle run's looks: 1/250 of its time */
#define IDLE_MAX_MS	10000	/* however slow its last look */

/* idle_mu held.  An idle run's interval is IDLE_COLD_MS, or IDLE_SHARE
 * times its last look's time when that is longer.  While a long
 * transaction holds purge back, the claims' delete-marked index entries
 * stay, and a look meets them: 3 to 7 ms of the server's time each in
 * bench/WAIT.md, against 0.5 ms.  Such looks are made less often, so
 * that they cost the server a share of its time, not more.  On a table
 * purge keeps up with, the interval stays. */
static int64_t
idle_interval(const struct cycle *cy, int64_t took_us)
{
	int64_t ms = IDLE_WARM_MS + (now_ms() - cy->idle_work_ms) / 10;
	int64_t cold = took_us * IDLE_SHARE / 1000;

	/* A look slowed by a moment's stall (a server stopped for a second)
	 * must not leave the run deaf for minutes: 10 s at most, as for the
	 * look from the head. */
	if (cold < IDLE_COLD_MS)
		cold = IDLE_COLD_MS;
	if (cold > IDLE_MAX_MS)
		cold = IDLE_MAX_MS;
	return ms < cold ? ms : cold;
}

/* The run's housekeeping, before its first claim (run_cycle) and again
 * while it waits. */
enum db_status
run_recover(struct cycle *cy, uint64_t *n, char *err, size_t errlen)
{
	enum db_status st;

	st = cy->history ? attempts_recover(cy->attempts,
	    cy->cfg->run.recover_limit, n, err, errlen) :
	    queue_recover(cy->q, cy->cfg->run.recover_limit, n, err, errlen);
	if (st == DB_OK && *n > 0) {
		cy->stats->recovered += *n;
		log_msg(cy->lg, LV_WARN, "recovered %llu job(s) whose runner's "
		    "lock expired", (unsigned long long)*n);
	}
	return st;
}

enum db_status
run_schedules(struct cycle *cy, uint64_t *created, char *err, size_t errlen)
{
	enum db_status st;

	st = sched_enqueue_due(cy->cfg, cy->q, cy->lg, created, err, errlen);
	if (st == DB_OK)
		st = fanin_sweep(cy->fanin, err, errlen);
	return st;
}

/* flow control hook: the types a claim takes now, the run's less the
 * paused ones (into claim_types), read again at most once a second, so
 * that a paused type's due job is not looked for ten times a second;
 * a pause or a resume is seen within the second.  The connection held. */
static enum db_status
idle_types(struct cycle *cy, char *err, size_t errlen)
{
	int64_t now = now_ms();

	if (cy->opts->flow == NULL || (cy->idle_types_ms != 0 &&
	    now - cy->idle_types_ms < IDLE_TYPES_MS))
		return DB_OK;
	cy->idle_types_ms = now;
	return flow_unpaused(cy->opts->flow, cy->types, cy->ntypes,
	    cy->claim_types, &cy->nclaim, err, errlen);
}

/* The probe, over the types a claim would take; with every type paused,
 * over the run's for the clock and the locks alone. */
static enum db_status
idle_probe(struct cycle *cy, struct queue_probe *p, char *err, size_t errlen)
{
	enum db_status st;

	if ((st = idle_types(cy, err, errlen)) != DB_OK)
		return st;
	if (cy->nclaim > 0)
		return queue_probe(cy->q, cy->claim_types, cy->nclaim, p, err,
		    errlen);
	st = queue_probe(cy->q, cy->types, cy->ntypes, p, err, errlen);
	p->due_ms = -1;
	return st;
}

/* Look once (the connection held): 0 when there is work to claim now,
 * else how long to sleep before looking again; -1 after a database
 * error, which ends the run. */
static int64_t
idle_look(struct cycle *cy)
{
	struct queue_probe p;
	enum db_status st;
	uint64_t made = 0;
	int64_t ms;
	char err[1024];
	int found;

	st = idle_probe(cy, &p, err, sizeof err);
	if (st == DB_OK && p.expired)
		st = run_recover(cy, &made, err, sizeof err);
	if (st == DB_OK && made == 0 && cy->cfg->nschedules > 0 &&
	    p.server_s / 60 != cy->idle_minute) {
		cy->idle_minute = p.server_s / 60;
		st = run_schedules(cy, &made, err, sizeof err);
	}
	if (st != DB_OK) {
		run_failed(cy, st, err);
		return -1;
	}
	found = made > 0;
	/* A job the probe saw due that the claim then did not take (its
	 * type paused, another runner's claim first) is looked for again
	 * after the interval, not at once. */
	pthread_mutex_lock(&cy->idle_mu);
	if (found || (p.due_ms == 0 && !cy->idle_false_due)) {
		cy->idle_false_due = 1;
		ms = 0;
	} else {
		cy->idle_false_due = 0;
		ms = idle_interval(cy, p.took_us);
		if (p.due_ms > 0 && p.due_ms < ms)
			ms = p.due_ms;
	}
	pthread_mutex_unlock(&cy->idle_mu);
	return ms;
}

/* The watching slot: look, and sleep, until there is work (1) or the run
 * ends (0). */
static int
idle_watch(struct cycle *cy)
{
	int64_t ms;

	for (;;) {
		if (connection_take(cy, 0) != 0)
			return 0;
		ms = run_may_go_on(cy) ? idle_look(cy) : -1;
		if (ms == 0)
			cy->drained = 0;
		connection_give(cy);
		if (ms <= 0)
			return ms == 0;
		run_pause(cy, ms);
	}
}

int
run_idle(struct cycle *cy)
{
	int again = 0;

	if (!cy->opts->wait)
		return 0;
	pthread_mutex_lock(&cy->idle_mu);
	while (!cy->idle_over && !run_wait_over(cy)) {
		if (cy->idle_wakes > 0) {
			cy->idle_wakes--;
			again = 1;
			break;
		}
		if (!cy->idle_watching) {
			if (!cy->idle_said)
				log_msg(cy->lg, LV_INFO, "nothing due: waiting "
				    "for work until the time budget ends");
			cy->idle_said = cy->idle_watching = 1;
			pthread_mutex_unlock(&cy->idle_mu);
			again = idle_watch(cy);
			pthread_mutex_lock(&cy->idle_mu);
			cy->idle_watching = 0;
			if (!again) {
				cy->idle_over = 1;
				pthread_cond_broadcast(&cy->idle_wake);
			}
			break;
		}
		cy->idle_sleepers++;
		cond_wait_ms(&cy->idle_wake, &cy->idle_mu, 100);
		cy->idle_sleepers--;
	}
	pthread_mutex_unlock(&cy->idle_mu);
	return again;
}

void
run_idle_claimed(struct cycle *cy)
{
	if (!cy->opts->wait)
		return;
	pthread_mutex_lock(&cy->idle_mu);
	cy->idle_work_ms = now_ms();
	cy->idle_false_due = 0;
	if (cy->idle_sleepers > cy->idle_wakes) {
		cy->idle_wakes++;
		pthread_cond_signal(&cy->idle_wake);
	}
	pthread_mutex_unlock(&cy->idle_mu);
}
