/*
 * flow_key.h - N at a time per key ([type.NAME] concurrency_key,
 * key_concurrency): which due job of a keyed type may be claimed.
 */
#ifndef JOBRUN_FLOW_KEY_H
#define JOBRUN_FLOW_KEY_H

#include <stdint.h>

#include "config.h"
#include "flow.h"
#include "queue.h"

struct flow_keys;

/* The keyed types of cfg on q's connection; NULL when none is keyed.
 * Nothing is prepared until flow_keys_check. */
struct flow_keys *flow_keys_open(struct queue *q, const struct cfg *cfg);
void flow_keys_close(struct flow_keys *k);

/* Prepare every keyed type's choice, and have the server judge each JSON
 * path: a column the table lacks or a path the server refuses is
 * DB_SCHEMA, err naming the type and its concurrency_key. */
enum db_status flow_keys_check(struct flow_keys *k, char *err,
                               size_t errlen);

/* Whether type is keyed. */
int flow_keys_has(const struct flow_keys *k, const char *type);

/* Whether keyed type is claimed under its keys' bucket locks (no cap or
 * rate of its own, not on Galera), known after flow_keys_check: its
 * control row is then read under a shared lock (flow.c), and claims of
 * keys in different buckets are made at once. */
int flow_keys_bucketed(const struct flow_keys *k, const char *type);

/* The first due job of type, in the claim's order from its head, whose
 * key has fewer than key_concurrency jobs in processing: *id, 0 for
 * none; *due, whether type has due jobs at all.  One statement, without
 * a lock: a look before the claim's transaction (flow.c). */
enum db_status flow_keys_pick(struct flow_keys *k, const char *type,
                              uint64_t *id, int *due, char *err,
                              size_t errlen);

/* Job id of type, which this run claimed, has ended: its key may have
 * room, and the next choice starts no later than where it stood. */
void flow_keys_freed(struct flow_keys *k, const char *type, uint64_t id);

/* Claim the job flow_keys_pick chooses (queue_claim_job), in the
 * caller's transaction; none claimed, *due says whether type has due jobs
 * all the same (every one's key busy).  A type with no cap or rate of its
 * own also takes up to extra->want more (extra may be NULL), each with
 * room left for its key, in one choice and one claim. */
enum db_status flow_keys_claim(struct flow_keys *k, const char *type,
                               unsigned long lock_seconds, const char *token,
                               struct job *job, int *claimed, int *due,
                               struct flow_extra *extra, char *err,
                               size_t errlen);

/* Unlock the bucket a claim locked (flow_keys_claim holds it to after
 * the claim's transaction); nothing when none is held. */
enum db_status flow_keys_release(struct flow_keys *k, char *err,
                                 size_t errlen);

/* For status: type's keys at their key_concurrency (*full), and its due
 * jobs whose key is one of them (*waiting); 0 and 0 for a type not
 * keyed. */
enum db_status flow_keys_load(struct flow_keys *k, const char *type,
                              uint64_t *full, uint64_t *waiting, char *err,
                              size_t errlen);

#endif
