/*
 * report.h - what each command prints on stdout, as text or JSON.
 */
#ifndef JOBRUN_REPORT_H
#define JOBRUN_REPORT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"
#include "runner.h"

/* doc (NULL: a message instead) on stdout, compact, on one line; released. */
void report_json(json_t *doc);

/* A column's bytes (len of them, NUL included; NULL: JSON null) as a JSON
 * string, as they are when they are UTF-8; bytes that are not (an encoded
 * surrogate, which utf8mb4 stores) cannot be in a JSON string and become
 * "?" rather than losing the row. */
json_t *report_text(const char *s, size_t len);
/* An attempt's row (attempts_each's columns and lengths, but its job
 * id) as one object: numbers as numbers, NULL as null, text as
 * report_text. */
json_t *report_attempt(char *const *cols, const size_t *lens);

/* The run summary as one JSON object (--json); error is NULL when the run
 * was not cut short. */
void report_run_json(FILE *out, const struct run_stats *stats, int ok,
                     const char *error);

/* The run summary as one log line, for -v. */
void report_run_text(const struct log *lg, const struct run_stats *stats);

/* The result of an enqueue. */
void report_enqueue(FILE *out, int json, uint64_t id, int created,
                    const char *status);

#endif
