/*
 * retention_view.c - retention's state for people (status, report,
 * check): the rules of keep_success and keep_failed, [run]'s and each
 * type's own, and the finished rows past each.
 *
 * The count walks the same index range retention deletes from (idx_pick,
 * or idx_type_pick for a type's rule) and stops at RETENTION_VIEW_CAP: a
 * table of millions of old rows costs status a thousand index entries per
 * rule, not a scan.  "1000+" says retention is behind; a count that goes
 * down run after run says it is catching up.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "queue_schema.h"
#include "retention_view.h"
#include "util.h"

static const char *const statuses[2] = {
	[CFG_KEEP_SUCCESS] = QUEUE_SUCCESS, [CFG_KEEP_FAILED] = QUEUE_FAILED,
};
static const char *const keys[2] = {
	[CFG_KEEP_SUCCESS] = "keep_success", [CFG_KEEP_FAILED] = "keep_failed",
};

static struct retention_rule *
add_rule(struct retention_view *v, const char *type, int which,
    unsigned long keep)
{
	struct retention_rule *r = &v->rules[v->n++];

	if (type != NULL)
		snprintf(r->rule, sizeof r->rule, "[type.%s]", type);
	else
		snprintf(r->rule, sizeof r->rule, "[run]");
	r->type = type;
	r->status = statuses[which];
	r->key = keys[which];
	r->keep = keep;
	return r;
}

/* The rows past r; the types with a rule of their own for its status
 * (own[0..nown-1]) left out of [run]'s. */
static enum db_status
count_rule(struct queue *q, struct retention_rule *r, const char **own,
    size_t nown, char *err, size_t errlen)
{
	struct queue_scope scope = { r->type, r->status, r->keep, 0 };
	enum db_status st;

	if (r->keep == 0)
		return DB_OK;
	st = queue_count_past(q, &scope, own, nown, RETENTION_VIEW_CAP + 1,
	    &r->past, err, errlen);
	r->capped = r->past > RETENTION_VIEW_CAP;
	if (r->capped)
		r->past = RETENTION_VIEW_CAP;
	return st;
}

/* The rules of one status: the types' own, then [run]'s when any rule is
 * set. */
static enum db_status
read_status(const struct cfg *cfg, struct queue *q, int which, int count,
    struct retention_view *v, const char **own, char *err, size_t errlen)
{
	enum db_status st = DB_OK;
	size_t i, nown = 0;
	struct retention_rule *r;

	for (i = 0; st == DB_OK && i < cfg->ntypes; i++) {
		const struct cfg_type *t = &cfg->types[i];

		if (!t->keep_set[which])
			continue;
		own[nown++] = t->name;
		r = add_rule(v, t->name, which, t->keep[which]);
		if (count)
			st = count_rule(q, r, NULL, 0, err, errlen);
	}
	if (st != DB_OK || (nown == 0 && cfg->run.keep[which] == 0))
		return st;
	r = add_rule(v, NULL, which, cfg->run.keep[which]);
	return count ? count_rule(q, r, own, nown, err, errlen) : DB_OK;
}

/* Whether the runs take turns, and when the next is (an account that
 * cannot see the table: no turns, as its runs delete). */
static enum db_status
read_turns(const struct cfg *cfg, struct queue *q, struct retention_view *v,
    char *err, size_t errlen)
{
	struct queue_access a;
	enum db_status st;

	st = retention_pace_access(q, &a, &v->next_turn_in, err, errlen);
	if (st == DB_OK && a.reach == QUEUE_REACHED)
		v->turn_every = cfg->run.keep_every;
	return st;
}

enum db_status
retention_view_read(const struct cfg *cfg, struct queue *q, int count,
    struct retention_view *v, char *err, size_t errlen)
{
	const char **own = xcalloc(cfg->ntypes + 1, sizeof *own);
	enum db_status st = DB_OK;
	int which;

	v->rules = xcalloc(2 * (cfg->ntypes + 1), sizeof *v->rules);
	v->n = 0;
	v->archive = cfg->run.archive_table;
	v->turn_every = 0;
	v->next_turn_in = 0;
	for (which = 0; st == DB_OK && which < 2; which++)
		st = read_status(cfg, q, which, count, v, own, err, errlen);
	free(own);
	if (st == DB_OK && count && retention_on(cfg) &&
	    cfg->run.keep_every > 0)
		st = read_turns(cfg, q, v, err, errlen);
	return st;
}

void
retention_view_free(struct retention_view *v)
{
	free(v->rules);
	v->rules = NULL;
	v->n = 0;
}

const char *
retention_keep_words(unsigned long keep, char *buf, size_t len)
{
	if (keep == 0)
		snprintf(buf, len, "for ever");
	else if (keep % 86400 == 0)
		snprintf(buf, len, "%lud", keep / 86400);
	else if (keep % 3600 == 0)
		snprintf(buf, len, "%luh", keep / 3600);
	else if (keep % 60 == 0)
		snprintf(buf, len, "%lum", keep / 60);
	else
		snprintf(buf, len, "%lus", keep);
	return buf;
}

const char *
retention_past_words(const struct retention_rule *r, char *buf, size_t len)
{
	if (r->keep == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)r->past,
		    r->capped ? "+" : "");
	return buf;
}

void
retention_view_print(const struct retention_view *v)
{
	char keep[32], past[32];
	size_t i;

	if (v->n == 0)
		return;
	printf("\nRetention: finished jobs past their keep are %s%s, %d ",
	    v->archive != NULL ? "moved to " : "deleted",
	    v->archive != NULL ? v->archive : "", RETENTION_BATCH);
	if (v->turn_every > 0)
		printf("per rule a turn, one turn in %lus for all runs (the "
		    "next in %.0fs):\n", v->turn_every, v->next_turn_in > 0 ?
		    ceil(v->next_turn_in) : 0.0);
	else
		printf("a run per rule:\n");
	printf("%-32s %-8s %8s %8s\n", "RULE", "STATUS", "KEEP", "PAST");
	for (i = 0; i < v->n; i++) {
		const struct retention_rule *r = &v->rules[i];

		printf("%-32s %-8s %8s %8s\n", r->rule, r->status,
		    retention_keep_words(r->keep, keep, sizeof keep),
		    retention_past_words(r, past, sizeof past));
	}
}

json_t *
retention_view_json(const struct retention_view *v)
{
	json_t *rules, *out;
	size_t i;

	if (v->n == 0 && v->archive == NULL)
		return NULL;
	rules = json_array();
	for (i = 0; i < v->n; i++) {
		const struct retention_rule *r = &v->rules[i];

		json_array_append_new(rules, json_pack(
		    "{s:s?,s:s,s:I,s:o,s:b}", "type", r->type,
		    "status", r->status, "keep_seconds", (json_int_t)r->keep,
		    "past", r->keep == 0 ? json_null() :
		    json_integer((json_int_t)r->past), "past_capped",
		    r->capped));
	}
	out = json_pack("{s:s?,s:i,s:o}", "archive_table", v->archive,
	    "past_cap", RETENTION_VIEW_CAP, "rules", rules);
	/* Only with turns: without them the object is as it was. */
	if (v->turn_every > 0)
		json_object_set_new(out, "turns", json_pack("{s:I,s:f}",
		    "keep_every_seconds", (json_int_t)v->turn_every,
		    "next_in_seconds", v->next_turn_in > 0 ?
		    v->next_turn_in : 0.0));
	return out;
}

void
retention_view_summary(const struct retention_view *v, char *buf,
    size_t len)
{
	char keep[32];
	size_t at = 0, i;

	if (v->n == 0) {
		snprintf(buf, len, "retention is off: finished jobs are kept "
		    "for ever (no keep_success, keep_failed)");
		return;
	}
	at = (size_t)snprintf(buf, len, "retention:");
	for (i = 0; i < v->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s %s %s %s",
		    i > 0 ? "," : "", v->rules[i].rule, v->rules[i].key,
		    retention_keep_words(v->rules[i].keep, keep, sizeof keep));
	if (at < len)
		snprintf(buf + at, len - at, "; past it, jobs are %s%s",
		    v->archive != NULL ? "moved to archive_table " :
		    "deleted", v->archive != NULL ? v->archive : "");
}
