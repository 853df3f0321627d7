/*
 * backoff.c - exponential retry delay.
 *
 * Doubling per attempt keeps a failing API from being hammered by its own
 * retries; capping the exponent at 6 and the result at `cap` keeps a job
 * that failed many times from sleeping for days.  With the defaults (60 s,
 * 3600 s) the waits are 120, 240, 480, 960, 1920, 3600, 3600... seconds.
 *
 * Jobs that failed together (an API down for a minute) would all come
 * back in the same second, and again at each doubling, and hammer the API
 * as it recovers: backoff_jitter takes a random share of the delay off,
 * never adding any, so the cap and the seed's formula stay upper bounds.
 */
#include <stdint.h>

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

unsigned long
backoff_jitter(unsigned long delay, unsigned long permille, uint32_t draw)
{
	uint64_t off;

	if (permille > 1000)
		permille = 1000;
	/* delay <= 604800 by configuration; up to 4e6 the product is below
	 * 2^64, and a caller passing more gets no jitter, not a wrapped one. */
	if (delay > 4000000UL)
		return delay;
	off = ((uint64_t)delay * permille * draw) / (1000ULL << 32);
	return delay - (unsigned long)off;
}
