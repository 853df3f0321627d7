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

/* Whether a slot that found nothing goes on waiting: --wait, and the
 * run may still claim but for having found nothing (the connection
 * held). */
static int
idle_may_wait(const struct cycle *cy)
{
	return cy->st == DB_OK && !run_stop_requested() &&
	    !queue_single_lost(cy->q) &&
	    cy->stats->claimed < cy->opts->batch_size &&
	    now_ms() < cy->deadline;
}

/* idle_mu held. */
static int64_t
idle_interval(const struct cycle *cy)
{
	int64_t ms = IDLE_WARM_MS + (now_ms() - cy->idle_work_ms) / 10;

	return ms < IDLE_COLD_MS ? ms : IDLE_COLD_MS;
}

/* Give back jobs whose lock expired (the probe saw one); *found says
 * whether any was. */
static enum db_status
idle_recover(struct cycle *cy, int *found, char *err, size_t errlen)
{
	enum db_status st;
	uint64_t n = 0;

	st = queue_recover(cy->q, cy->cfg->run.recover_limit, &n, err,
	    errlen);
	if (st == DB_OK && n > 0) {
		cy->stats->recovered += n;
		log_msg(cy->lg, LV_WARN, "recovered %llu job(s) whose "
		    "runner's lock expired", (unsigned long long)n);
	}
	*found = n > 0;
	return st;
}

/* A new minute on the server's clock: the schedules' due slots and the
 * fan-ins a killed runner left; *found says whether a job was made. */
static enum db_status
idle_minute(struct cycle *cy, int *found, char *err, size_t errlen)
{
	uint64_t created = 0;
	enum db_status st;

	st = sched_enqueue_due(cy->cfg, cy->q, cy->lg, &created, err,
	    errlen);
	if (st == DB_OK)
		st = fanin_sweep(cy->fanin, err, errlen);
	*found = created > 0;
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
	int64_t ms;
	char err[1024];
	int found = 0;

	st = queue_probe(cy->q, cy->claim_types, cy->nclaim > 0 ?
	    cy->nclaim : cy->ntypes, &p, err, sizeof err);
	if (st == DB_OK && p.expired)
		st = idle_recover(cy, &found, err, sizeof err);
	if (st == DB_OK && !found && cy->cfg->nschedules > 0 &&
	    p.server_s / 60 != cy->idle_minute) {
		cy->idle_minute = p.server_s / 60;
		st = idle_minute(cy, &found, err, sizeof err);
	}
	if (st != DB_OK) {
		run_failed(cy, st, err);
		return -1;
	}
	/* A job the probe saw due that the claim then did not take (its
	 * type paused, another runner's claim first) is looked for again
	 * after the interval, not at once. */
	pthread_mutex_lock(&cy->idle_mu);
	if (found || (p.due_ms == 0 && !cy->idle_false_due)) {
		cy->idle_false_due = 1;
		ms = 0;
	} else {
		cy->idle_false_due = 0;
		ms = idle_interval(cy);
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
		ms = idle_may_wait(cy) ? idle_look(cy) : -1;
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
