/*
 * report.c - stdout output of the commands.
 *
 * JSON goes through jansson so that keys and strings are always escaped
 * correctly; scripts parse it, so its keys are part of the interface
 * documented in jobrun(1).  Every JSON document a command prints goes
 * through print_json, here.
 */
#include <jansson.h>
#include <stdlib.h>

#include "attempts.h"
#include "report.h"
#include "utf8.h"
#include "util.h"

static void
print_json(FILE *out, json_t *doc)
{
	/* jansson allocates through xmalloc, so NULL is a value it refused:
	 * a string that is not UTF-8. */
	if (doc == NULL) {
		fputs("jobrun: the result cannot be printed as JSON (a value "
		    "that is not UTF-8)\n", stderr);
		return;
	}
	json_dumpf(doc, out, JSON_COMPACT);
	fputc('\n', out);
	json_decref(doc);
}

void
report_json(json_t *doc)
{
	print_json(stdout, doc);
}

json_t *
report_attempt(char *const *cols, const size_t *lens)
{
	json_t *row = json_object(), *v;
	const char *s;
	int k;

	for (k = 0; k < ATTEMPT_COLS; k++) {
		if (k == AC_JOB)
			continue;
		s = cols[k];
		if (s == NULL)
			v = json_null();
		else if (k == AC_RUNNER || k == AC_STARTED ||
		    k == AC_FINISHED || k == AC_OUTCOME || k == AC_OUTPUT)
			v = report_text(s, lens[k]);
		else
			v = json_integer(strtoll(s, NULL, 10));
		json_object_set_new(row, attempt_column_names[k], v);
	}
	return row;
}

json_t *
report_text(const char *s, size_t len)
{
	json_t *v;
	char *copy;

	if (s == NULL)
		return json_null();
	if ((v = json_stringn(s, len)) != NULL)
		return v;
	copy = xstrndup(s, len);
	utf8_sanitize(copy, len);
	v = json_stringn(copy, len);
	free(copy);
	return v != NULL ? v : json_string("?");
}

void
report_run_json(FILE *out, const struct run_stats *s, int ok,
    const char *error)
{
	json_t *obj = json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
	    "s:I}",
	    "ok", ok,
	    "recovered", (json_int_t)s->recovered,
	    "claimed", (json_int_t)s->claimed,
	    "succeeded", (json_int_t)s->succeeded,
	    "retried", (json_int_t)s->retried,
	    "failed", (json_int_t)s->failed,
	    "lost", (json_int_t)s->lost,
	    "snoozed", (json_int_t)s->snoozed,
	    "deadline_passed", (json_int_t)s->deadline_passed,
	    "deleted", (json_int_t)s->deleted,
	    "by_priority", (json_int_t)s->by_priority,
	    "elapsed_ms", (json_int_t)s->elapsed_ms);

	if (obj != NULL && error != NULL)
		json_object_set_new(obj, "error", json_string(error));
	print_json(out, obj);
}

void
report_run_text(const struct log *lg, const struct run_stats *s)
{
	char late[64] = "";

	/* Said only when some were, so the usual line stays as it was. */
	if (s->deadline_passed > 0)
		snprintf(late, sizeof late, " (%llu past their deadline)",
		    (unsigned long long)s->deadline_passed);
	log_msg(lg, LV_INFO, "%llu claimed, %llu succeeded, %llu retried, "
	    "%llu failed%s, %llu lost, %llu snoozed, %llu recovered in %lld "
	    "ms", (unsigned long long)s->claimed,
	    (unsigned long long)s->succeeded, (unsigned long long)s->retried,
	    (unsigned long long)s->failed, late, (unsigned long long)s->lost,
	    (unsigned long long)s->snoozed, (unsigned long long)s->recovered,
	    (long long)s->elapsed_ms);
}

void
report_enqueue(FILE *out, int json, uint64_t id, int created,
    const char *status)
{
	char *shown;

	if (json) {
		print_json(out, json_pack("{s:I,s:b,s:s}", "id",
		    (json_int_t)id, "created", created, "status", status));
		return;
	}
	if (created) {
		fprintf(out, "job %llu created\n", (unsigned long long)id);
		return;
	}
	/* The status is the row's, whatever an application wrote there. */
	shown = utf8_escape_dup(status != NULL ? status : "NULL", 0);
	fprintf(out, "job %llu exists (status %s), not created\n",
	    (unsigned long long)id, shown);
	free(shown);
}
