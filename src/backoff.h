/*
 * backoff.h - how long a failed job waits before its next attempt.
 */
#ifndef JOBRUN_BACKOFF_H
#define JOBRUN_BACKOFF_H

#include <stdint.h>

/* Seconds to wait after a job's attempt number `attempts` failed:
 * min(cap, base * 2^min(attempts, 6)), the policy of seed 000.  Never
 * overflows: the exponent is capped before multiplying. */
unsigned long backoff_delay(unsigned long base, unsigned long cap,
                            unsigned long attempts);

/* delay less a random share of it, at most permille/1000 of it, draw
 * being uniform over 0..2^32-1: a delay in (delay * (1 - permille/1000),
 * delay], never longer; permille 0 gives delay. */
unsigned long backoff_jitter(unsigned long delay, unsigned long permille,
                             uint32_t draw);

#endif
