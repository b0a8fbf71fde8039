// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl summarize: the summary script of KCSAN's users, built in,
 *
 *	grep "BUG: KCSAN: " LOG | sed -e 's/^\[[^]]*] //' | sort | uniq -c | sort -k1nr
 *
 * over one or more console logs (kcsand's or a kernel's): the report
 * titles counted, most frequent first, equal counts in byte order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kcsanctl.h"
#include "report/report.h"
#include "util/json.h"
#include "util/array.h"

struct title_count {
	char *title;
	unsigned long n;
};

struct titles {
	struct title_count *v;
	size_t n, cap;
};

void summarize_help(FILE *out)
{
	fprintf(out,
		"Usage: kcsanctl summarize LOG...\n"
		"\n"
		"Count the \"BUG: KCSAN: \" lines of console logs (kcsand's, or a kernel's with\n"
		"its \"[ timestamp] \" prefix), most frequent first, as\n"
		"  grep \"BUG: KCSAN: \" LOG | sed -e 's/^\\[[^]]*] //' |\n"
		"    sort | uniq -c | sort -k1nr\n"
		"prints them.  LOG - reads stdin.  -j: a JSON array of {count, title}.\n");
}

static int add_title(struct titles *t, const char *s)
{
	/* Linear, with a move-to-front: logs repeat a few titles many times. */
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].title, s))
			continue;
		t->v[i].n++;
		if (i) {
			struct title_count tmp = t->v[i];

			t->v[i] = t->v[0];
			t->v[0] = tmp;
		}
		return 0;
	}
	if (ARRAY_RESERVE(t->v, t->cap, t->n, 64))
		return -ENOMEM;
	t->v[t->n].title = strdup(s);
	if (!t->v[t->n].title)
		return -ENOMEM;
	t->v[t->n++].n = 1;
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct title_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->title, y->title);
}

/* sed -e 's/^\[[^]]*] //' */
static const char *strip_timestamp(const char *line)
{
	const char *close;

	if (line[0] != '[')
		return line;
	close = strchr(line + 1, ']');
	return close && close[1] == ' ' ? close + 2 : line;
}

static int read_log(struct titles *t, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (!f) {
		fprintf(stderr, "kcsanctl: summarize: cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (!err && (len = getline(&line, &cap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (memmem(line, len, "BUG: KCSAN: ", 12))
			err = add_title(t, strip_timestamp(line));
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return err;
}

/* [{"count":N,"title":"..."},...], most frequent first. */
static void print_json(const struct titles *t)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < t->n; i++) {
		struct json_object *o = json_object_new_object();

		json__add(o, "count", json_object_new_uint64(t->v[i].n));
		json__add(o, "title", json__string(t->v[i].title));
		json_object_array_add(a, o);
	}
	json__print(stdout, a);
	putchar('\n');
}

int do_summarize(int argc, char **argv)
{
	struct titles t = { 0 };
	int ret = 0;

	if (argc < 2) {
		summarize_help(stderr);
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc && !ret; i++)
		ret = read_log(&t, argv[i]);
	if (!ret) {
		qsort(t.v, t.n, sizeof(*t.v), by_count);
		if (json_output)
			print_json(&t);
		for (size_t i = 0; !json_output && i < t.n; i++)
			printf("%7lu %s\n", t.v[i].n, t.v[i].title);
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.v[i].title);
	free(t.v);
	return ret ? 1 : 0;
}
