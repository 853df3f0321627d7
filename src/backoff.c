/*
 * backoff.c - exponential retry delay.
 *
 * Doubling per attempt keeps a failing API from being hammered by its own
 * retries; capping the exponent at 6 and the result at `cap` keeps a job
 * that failed many times from sleeping for days.  With the defaults (60 s,
 * 3600 s) the waits are 120, 240, 480, 960, 1920, 3600, 3600... seconds.
 */
#include "backoff.h"

#define BACKOFF_MAX_EXPONENT 6

unsigned long
backoff_delay(unsigned long base, unsigned long cap, unsigned long attempts)
{
	unsigned long exponent = attempts < BACKOFF_MAX_EXPONENT ?
	    attempts : BACKOFF_MAX_EXPONENT;
	unsigned long delay = base << exponent;

	/* base is at most 86400 by configuration, so base << 6 fits, but a
	 * caller passing more must still get a capped answer. */
	if (base != 0 && (delay >> exponent) != base)
		return cap;
	return delay < cap ? delay : cap;
}
