// SPDX-License-Identifier: GPL-2.0-only
/*
 * The marks file (--marks, mark.h): "SPEC KIND" entries that mark or
 * exempt (data_race) accesses by function, function offset or source line.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mark.h"
#include "util/print.h"
#include "util/array.h"
#include "util/file.h"

/* A marks file past this is no list written or generated for one program: refused. */
#define MARKS_MAX_SIZE	(64u << 20)

enum entry_type { ENT_FUNC, ENT_FUNC_OFF, ENT_FILE_LINE };

struct mark_entry {
	enum entry_type type;
	char *name;		/* function or file */
	uint64_t off;
	int line;
	enum mark_kind kind;
};

struct mark_rules {
	struct mark_entry *v;
	size_t n;
};

void mark_rules__free(struct mark_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	free(r);
}

size_t mark_rules__count(const struct mark_rules *r)
{
	return r ? r->n : 0;
}

/* Parse SPEC into e; a message for the caller in *why when bad. */
static int parse_spec(const char *spec, struct mark_entry *e, const char **why)
{
	const char *plus = strchr(spec, '+'), *colon = strrchr(spec, ':');
	char *end;

	if (plus && plus != spec) {
		errno = 0;
		e->off = strtoull(plus + 1, &end, 0);
		if (errno || end == plus + 1 || *end || plus[1] == '-') {
			*why = "bad offset after '+' (expected FUNC+0xOFF)";
			return -EINVAL;
		}
		e->type = ENT_FUNC_OFF;
		e->name = strndup(spec, plus - spec);
		return e->name ? 0 : -ENOMEM;
	}
	if (plus) {
		*why = "no function before '+'";
		return -EINVAL;
	}
	/* FILE:LINE, but not a C++ name's "::" */
	if (colon && colon[1] && colon > spec && colon[-1] != ':' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		long line = strtol(colon + 1, NULL, 10);

		if (line <= 0 || line > 10000000) {
			*why = "bad line number (expected FILE:LINE, LINE from 1)";
			return -EINVAL;
		}
		e->type = ENT_FILE_LINE;
		e->line = (int)line;
		e->name = strndup(spec, colon - spec);
		return e->name ? 0 : -ENOMEM;
	}
	if (colon && colon[1] != '\0' && isdigit((unsigned char)colon[1])) {
		*why = "bad line number (expected FILE:LINE)";
		return -EINVAL;
	}
	if (colon && !colon[1]) {
		*why = "no line number after ':' (expected FILE:LINE)";
		return -EINVAL;
	}
	e->type = ENT_FUNC;
	e->name = strdup(spec);
	return e->name ? 0 : -ENOMEM;
}

static int parse_line(char *s, struct mark_entry *e, const char **why)
{
	char *spec, *kind, *extra, *save = NULL;
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	spec = strtok_r(s, " \t\r\v\f", &save);
	if (!spec)
		return 1;	/* blank or comment */
	kind = strtok_r(NULL, " \t\r\v\f", &save);
	extra = strtok_r(NULL, " \t\r\v\f", &save);
	if (!kind) {
		*why = "no kind (expected 'SPEC marked' or 'SPEC data_race')";
		return -EINVAL;
	}
	if (extra) {
		*why = "trailing text (expected 'SPEC KIND')";
		return -EINVAL;
	}
	if (!strcmp(kind, "marked")) {
		e->kind = MARK_KIND_MARKED;
	} else if (!strcmp(kind, "data_race")) {
		e->kind = MARK_KIND_DATA_RACE;
	} else {
		*why = "unknown kind (expected marked or data_race)";
		return -EINVAL;
	}
	return parse_spec(spec, e, why);
}

int mark_rules__parse(const char *name, const char *text, struct mark_rules **out)
{
	struct mark_rules *r = calloc(1, sizeof(*r));
	char *copy = strdup(text), *p;
	size_t cap = 0;
	int lineno = 0, err = 0;

	*out = NULL;
	if (!r || !copy) {
		free(copy);
		free(r);
		return -ENOMEM;
	}
	/* strsep keeps empty lines, so that the line numbers are right */
	p = copy;
	while (p) {
		char *line = strsep(&p, "\n");
		struct mark_entry e = {};
		const char *why = NULL;
		int rc;

		lineno++;
		rc = parse_line(line, &e, &why);
		if (rc == 1)
			continue;
		if (rc) {
			if (why)
				pr_warn("%s:%d: %s\n", name, lineno, why);
			err = rc;
			free(e.name);
			break;
		}
		if (ARRAY_RESERVE(r->v, cap, r->n, 16)) {
			free(e.name);
			err = -ENOMEM;
			break;
		}
		r->v[r->n++] = e;
	}
	free(copy);
	if (err) {
		mark_rules__free(r);
		return err;
	}
	*out = r;
	return 0;
}

int mark_rules__load(const char *path, struct mark_rules **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	char *text;
	size_t len;

	*out = NULL;
	if (fd < 0) {
		err = -errno;
		pr_warn("%s: cannot open the marks file: %s\n", path,
			strerror(-err));
		return err;
	}
	err = file__read_text(fd, MARKS_MAX_SIZE, &text, &len);
	close(fd);
	if (err == -EINVAL)
		pr_warn("%s: not a text file\n", path);
	else if (err)
		pr_warn("%s: cannot read the marks file: %s\n", path, strerror(-err));
	if (err)
		return err;
	err = mark_rules__parse(path, text, out);
	free(text);
	return err;
}

/* Does the DWARF path end in the marks file's FILE, on a path-component boundary? */
static bool file_matches(const char *path, const char *file)
{
	size_t lp = strlen(path), lf = strlen(file);

	if (lf > lp)
		return false;
	if (strcmp(path + lp - lf, file))
		return false;
	return lp == lf || path[lp - lf - 1] == '/' || file[0] == '/';
}

enum mark_kind mark_rules__match(const struct mark_rules *r, const char *func, uint64_t off,
				 const char *file, int line)
{
	enum mark_kind kind = MARK_KIND_PLAIN;

	if (!r)
		return kind;
	for (size_t i = 0; i < r->n; i++) {
		const struct mark_entry *e = &r->v[i];
		bool hit = false;

		switch (e->type) {
		case ENT_FUNC:
			hit = func && !strcmp(func, e->name);
			break;
		case ENT_FUNC_OFF:
			hit = func && off == e->off && !strcmp(func, e->name);
			break;
		case ENT_FILE_LINE:
			hit = file && line == e->line && file_matches(file, e->name);
			break;
		}
		if (hit && e->kind > kind)
			kind = e->kind;
	}
	return kind;
}
