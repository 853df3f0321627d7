/*
 * test_schema.c - queue_schema.c against sql/: every column and index it
 * declares is created by sql/schema.sql or by the migration it names,
 * with the same definition, and every column and index those files give
 * the job table is declared.
 *
 * The files are read as they are, at test time: the CREATE TABLE of
 * polling_jobs in schema.sql, and each migration's ALTER TABLE
 * polling_jobs (other tables' statements are not the job table's).  A
 * migration that alters the job table in a way this reader does not
 * know (MODIFY, DROP) fails the test rather than pass unread.  The
 * primary key is not declared: "jobrun check" does not judge it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_schema.h"

#define JOB_TABLE "polling_jobs"
#define MAX_ITEMS 64

/* A column or index as sql/ has it: def without COMMENT, whitespace
 * squeezed; file "sql/..." for a migration, "" for schema.sql. */
struct item {
	char name[64], def[256], comment[256], file[64];
};

struct model {
	struct item cols[MAX_ITEMS], idx[MAX_ITEMS];
	size_t ncols, nidx;
};

/* The repository's root, from where this file was compiled: make
 * compiles it as test/unit/test_schema.c from the root, which then is
 * "" (the unit tests run there); an absolute path works too. */
static void
root_path(const char *rel, char *out, size_t outlen)
{
	static const char me[] = "test/unit/test_schema.c";
	size_t n = strlen(__FILE__) - strlen(me);

	assert_string_equal(__FILE__ + n, me);
	assert_true(snprintf(out, outlen, "%.*s%s", (int)n, __FILE__, rel) <
	    (int)outlen);
}

static char *
slurp(const char *rel)
{
	char path[1024], *s;
	FILE *f;
	long n;

	root_path(rel, path, sizeof path);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("open %s: %m", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* Blank out "-- ..." comments (outside quotes: their apostrophes are
 * no quotes). */
static void
strip_comments(char *s)
{
	char quote = 0;

	for (; *s != '\0'; s++) {
		if (quote != 0) {
			quote = *s == quote ? 0 : quote;
			continue;
		}
		if (*s == '\'' || *s == '"' || *s == '`')
			quote = *s;
		else if (s[0] == '-' && s[1] == '-')
			while (*s != '\0' && *s != '\n')
				*s++ = ' ';
		if (*s == '\0')
			break;
	}
}

/* The next piece of *p up to sep at depth 0 outside quotes (cut there),
 * or NULL when nothing is left. */
static char *
next_part(char **p, char sep)
{
	char *start = *p, *s, quote = 0;
	int depth = 0;

	if (*start == '\0')
		return NULL;
	for (s = start; *s != '\0'; s++) {
		if (quote != 0)
			quote = *s == quote ? 0 : quote;
		else if (*s == '\'' || *s == '"' || *s == '`')
			quote = *s;
		else if (*s == '(')
			depth++;
		else if (*s == ')')
			depth--;
		else if (*s == sep && depth == 0)
			break;
	}
	*p = *s == '\0' ? s : s + 1;
	*s = '\0';
	return start;
}

/* Whitespace runs to one space, none at the ends, in place. */
static void
squeeze(char *s)
{
	char *out = s, *in;
	int space = 0;

	for (in = s; *in != '\0'; in++) {
		if (*in == ' ' || *in == '\t' || *in == '\n' || *in == '\r') {
			space = out != s;
			continue;
		}
		if (space)
			*out++ = ' ';
		space = 0;
		*out++ = *in;
	}
	*out = '\0';
}

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void
copy(char *dst, size_t len, const char *src)
{
	assert_true(snprintf(dst, len, "%s", src) < (int)len);
}

static struct item *
find(struct item *items, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(items[i].name, name) == 0)
			return &items[i];
	return NULL;
}

static struct item *
add(struct item *items, size_t *n, const char *name, const char *file)
{
	if (find(items, *n, name) != NULL)
		fail_msg("%s: %s created twice", file, name);
	assert_true(*n < MAX_ITEMS);
	memset(&items[*n], 0, sizeof items[*n]);
	copy(items[*n].name, sizeof items[*n].name, name);
	copy(items[*n].file, sizeof items[*n].file, file);
	return &items[(*n)++];
}

/* One clause of a CREATE TABLE (or what follows ADD): a column, a key,
 * or the primary key. */
static void
add_clause(struct model *m, char *text, const char *file)
{
	char name[64], *comment;
	struct item *it;

	squeeze(text);
	if (starts(text, "PRIMARY KEY ")) {
		assert_string_equal(text, "PRIMARY KEY (id)");
		return;
	}
	if (starts(text, "KEY ") || starts(text, "UNIQUE KEY ")) {
		assert_int_equal(sscanf(strstr(text, "KEY ") + 4, "%63s", name),
		    1);
		copy(add(m->idx, &m->nidx, name, file)->def,
		    sizeof m->idx[0].def, text);
		return;
	}
	assert_int_equal(sscanf(text, "%63s", name), 1);
	it = add(m->cols, &m->ncols, name, file);
	comment = strstr(text, " COMMENT ");
	if (comment != NULL) {
		*comment = '\0';
		copy(it->comment, sizeof it->comment, comment + 9);
	}
	copy(it->def, sizeof it->def, text + strlen(name) + 1);
}

/* The clauses of schema.sql's CREATE TABLE polling_jobs (...). */
static void
read_schema(struct model *m)
{
	char *text = slurp("sql/schema.sql"), *body, *end, *part;
	int depth = 1;

	strip_comments(text);
	body = strstr(text, "CREATE TABLE " JOB_TABLE " (");
	assert_non_null(body);
	body = strchr(body, '(') + 1;
	for (end = body; *end != '\0' && depth > 0; end++)
		depth += (*end == '(') - (*end == ')');
	assert_int_equal(depth, 0);
	end[-1] = '\0';
	while ((part = next_part(&body, ',')) != NULL)
		add_clause(m, part, "");
	free(text);
}

/* The ADD clauses of one migration's ALTER TABLE polling_jobs. */
static void
read_migration(struct model *m, const char *file)
{
	char *text = slurp(file), *p = text, *stmt, *part;

	strip_comments(text);
	while ((stmt = next_part(&p, ';')) != NULL) {
		squeeze(stmt);
		if (!starts(stmt, "ALTER TABLE " JOB_TABLE " "))
			continue;
		stmt += strlen("ALTER TABLE " JOB_TABLE " ");
		while ((part = next_part(&stmt, ',')) != NULL) {
			squeeze(part);
			if (starts(part, "ADD COLUMN "))
				add_clause(m, part + 11, file);
			else if (starts(part, "ADD KEY ") ||
			    starts(part, "ADD UNIQUE KEY "))
				add_clause(m, part + 4, file);
			else if (starts(part, "ALGORITHM="))
				continue;	/* how, not what */
			else
				fail_msg("%s: alteration of %s not understood "
				    "here: %s", file, JOB_TABLE, part);
		}
	}
	free(text);
}

static int
setup(void **state)
{
	struct model *m = calloc(1, sizeof *m);
	char dir[1024], file[300];
	struct dirent *e;
	DIR *d;

	read_schema(m);
	root_path("sql", dir, sizeof dir);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);

		if (e->d_name[0] != '0' || n < 4 ||
		    strcmp(e->d_name + n - 4, ".sql") != 0)
			continue;
		snprintf(file, sizeof file, "sql/%s", e->d_name);
		read_migration(m, file);
	}
	closedir(d);
	*state = m;
	return 0;
}

static int
teardown(void **state)
{
	free(*state);
	return 0;
}

static const char *
file_of(const char *migration)
{
	return migration != NULL ? migration : "";
}

/* "KEY x (a, b)" -> "a,b", as queue_describe lists an index's columns. */
static void
key_columns(const char *def, char *out, size_t outlen)
{
	const char *s = strchr(def, '(');
	size_t n = 0;

	assert_non_null(s);
	/* "a, b DESC" as "a,b DESC": a blank only between two words. */
	for (s++; *s != '\0' && *s != ')' && n + 1 < outlen; s++)
		if (*s != ' ' || (n > 0 && out[n - 1] != ',' &&
		    out[n - 1] != ' ' && s[1] != ',' && s[1] != ' ' &&
		    s[1] != ')'))
			out[n++] = *s;
	out[n] = '\0';
	assert_string_equal(s, ")");
}

static void
declared_columns_exist(void **state)
{
	struct model *m = *state;
	size_t i, n;
	const struct queue_schema_column *c = queue_schema_columns(&n);
	struct item *it;

	for (i = 0; i < n; i++) {
		it = find(m->cols, m->ncols, c[i].name);
		if (it == NULL)
			fail_msg("column %s: not in sql/", c[i].name);
		assert_string_equal(c[i].definition, it->def);
		assert_string_equal(file_of(c[i].migration), it->file);
		/* What a NULL breaks only matters where sql/ forbids one. */
		if (c[i].null_breaks != NULL)
			assert_non_null(strstr(it->def, "NOT NULL"));
	}
}

static void
sql_columns_declared(void **state)
{
	struct model *m = *state;
	size_t i;

	assert_true(m->ncols > 0);
	for (i = 0; i < m->ncols; i++)
		if (queue_schema_column(m->cols[i].name) == NULL)
			fail_msg("column %s (%s): not in queue_schema.c",
			    m->cols[i].name, m->cols[i].file[0] != '\0' ?
			    m->cols[i].file : "sql/schema.sql");
}

static void
declared_indexes_exist(void **state)
{
	struct model *m = *state;
	size_t i, n;
	const struct queue_schema_index *x = queue_schema_indexes(&n);
	char columns[256];
	struct item *it;

	for (i = 0; i < n; i++) {
		it = find(m->idx, m->nidx, x[i].name);
		if (it == NULL)
			fail_msg("index %s: not in sql/", x[i].name);
		assert_string_equal(x[i].definition, it->def);
		key_columns(it->def, columns, sizeof columns);
		assert_string_equal(x[i].columns, columns);
		assert_int_equal(x[i].unique, starts(it->def, "UNIQUE "));
		assert_string_equal(file_of(x[i].migration), it->file);
		/* check's advice for an optional one says what is missed. */
		assert_int_equal(x[i].migration != NULL, x[i].without != NULL);
	}
}

static void
sql_indexes_declared(void **state)
{
	struct model *m = *state;
	size_t i, j, n;
	const struct queue_schema_index *x = queue_schema_indexes(&n);

	assert_true(m->nidx > 0);
	for (i = 0; i < m->nidx; i++) {
		for (j = 0; j < n; j++)
			if (strcmp(x[j].name, m->idx[i].name) == 0)
				break;
		if (j == n)
			fail_msg("index %s (%s): not in queue_schema.c",
			    m->idx[i].name, m->idx[i].file[0] != '\0' ?
			    m->idx[i].file : "sql/schema.sql");
	}
}

/* schema.sql's status column lists the statuses in its COMMENT. */
static void
statuses_as_in_schema(void **state)
{
	struct model *m = *state;
	struct item *status = find(m->cols, m->ncols, "status");
	char list[256] = "'";
	size_t i;

	assert_non_null(status);
	for (i = 0; queue_statuses[i] != NULL; i++) {
		strcat(list, queue_statuses[i]);
		strcat(list, queue_statuses[i + 1] != NULL ? ", " : "'");
	}
	assert_string_equal(status->comment, list);
	for (i = 0; queue_finished_statuses[i] != NULL; i++)
		assert_true(strcmp(queue_finished_statuses[i], QUEUE_PENDING) &&
		    strcmp(queue_finished_statuses[i], QUEUE_PROCESSING));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(declared_columns_exist),
		cmocka_unit_test(sql_columns_declared),
		cmocka_unit_test(declared_indexes_exist),
		cmocka_unit_test(sql_indexes_declared),
		cmocka_unit_test(statuses_as_in_schema),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
