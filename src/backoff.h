/*
 * backoff.h - how long a failed job waits before its next attempt.
 */
#ifndef JOBRUN_BACKOFF_H
#define JOBRUN_BACKOFF_H

/* Seconds to wait after a job's attempt number `attempts` failed:
 * min(cap, base * 2^min(attempts, 6)), the policy of seed 000.  Never
 * overflows: the exponent is capped before multiplying. */
unsigned long backoff_delay(unsigned long base, unsigned long cap,
                            unsigned long attempts);

#endif
