/*
 * flow_state.c - what flow control's state is made of, apart from the
 * control table: which line of the config needs it, a rate limit's token
 * bucket (a pure function of the saved tokens and the server's clock),
 * and the list of types' states that status shows, each filled in from
 * the config and the job table.
 */
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "flow_key.h"
#include "util.h"

/* The first type of cfg with a limit, and the key that sets it. */
static const char *
limited(const struct cfg *cfg, const char **key)
{
	size_t i;

	for (i = 0; i < cfg->ntypes; i++) {
		*key = cfg->types[i].flow.concurrency ? "concurrency" :
		    cfg->types[i].flow.rate ? "rate" :
		    cfg->types[i].flow.key ? "concurrency_key" : NULL;
		if (*key != NULL)
			return cfg->types[i].name;
	}
	return NULL;
}

int
flow_needs(const struct cfg *cfg, char *who, size_t len)
{
	const char *type, *key = NULL;

	if ((type = limited(cfg, &key)) == NULL)
		return 0;
	errf(who, len, "%s: [type.%s] %s", cfg->path, type, key);
	return 1;
}

double
flow_bucket(const struct cfg_flow *l, double tokens, double refilled_at,
    double now, int64_t *wait_ms)
{
	double per_s;

	*wait_ms = 0;
	if (!l->rate)
		return tokens;
	per_s = (double)l->rate / (double)l->period;
	/* A clock that went back refills nothing. */
	if (now > refilled_at)
		tokens += (now - refilled_at) * per_s;
	if (tokens > (double)l->burst)
		tokens = (double)l->burst;
	if (tokens < 1)	/* whole ms, rounded up: never early */
		*wait_ms = (int64_t)((1 - tokens) / per_s * 1000) + 1;
	return tokens;
}

struct flow_state *
flow_state_of(struct flow_states *s, const char *type)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->rows[i].type, type) == 0)
			return &s->rows[i];
	s->rows = xrealloc(s->rows, (s->n + 1) * sizeof *s->rows);
	memset(&s->rows[s->n], 0, sizeof s->rows[s->n]);
	s->rows[s->n].type = xstrdup(type);
	return &s->rows[s->n++];
}

void
flow_states_free(struct flow_states *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->rows[i].type);
	free(s->rows);
	memset(s, 0, sizeof *s);
}

const char *
flow_unit(unsigned long period)
{
	return period == 3600 ? "h" : period == 60 ? "min" : "s";
}

enum db_status
flow_state_fill(const struct cfg *cfg, struct queue *q, struct flow_keys *keys,
    struct flow_state *s, char *err, size_t errlen)
{
	const struct cfg_type *t = cfg_find_type(cfg, s->type);
	uint64_t running, full = 0, waiting = 0;
	enum db_status st;
	int due;

	if (t != NULL) {
		s->concurrency = t->flow.concurrency;
		s->rate = t->flow.rate;
		s->period = t->flow.period;
		s->burst = t->flow.burst;
		s->key = t->flow.key;
		s->key_concurrency = t->flow.key_concurrency;
	}
	st = queue_type_load(q, s->type, &running, &due, err, errlen);
	if (st == DB_OK && s->key != NULL)
		st = flow_keys_load(keys, s->type, &full, &waiting, err,
		    errlen);
	s->keys_full = (unsigned long)full;
	s->key_waiting = (unsigned long)waiting;
	s->in_use = (unsigned long)running;
	s->full = s->concurrency && s->in_use >= s->concurrency;
	s->throttled = s->rate && s->tokens < 1;
	return st;
}
