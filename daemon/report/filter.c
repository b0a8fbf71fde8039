// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "filter.h"
#include "util/array.h"

void filter__init(struct filter *f)
{
	memset(f, 0, sizeof(*f));
}

void filter__free(struct filter *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->funcs[i]);
	free(f->funcs);
	filter__init(f);
}

int filter__copy(struct filter *dst, const struct filter *src)
{
	filter__init(dst);
	dst->whitelist = src->whitelist;
	if (!src->n)
		return 0;
	dst->funcs = calloc(src->n, sizeof(*dst->funcs));
	if (!dst->funcs)
		return -ENOMEM;
	dst->cap = src->n;
	for (size_t i = 0; i < src->n; i++) {
		dst->funcs[i] = strdup(src->funcs[i]);
		if (!dst->funcs[i]) {
			filter__free(dst);
			return -ENOMEM;
		}
		dst->n++;
	}
	return 0;
}

bool filter__valid_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > FILTER_MAX_NAME)
		return false;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

/* Index of func, or of where it would go, in *pos; true when found. */
static bool find(const struct filter *f, const char *func, size_t *pos)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(f->funcs[mid], func);

		if (!c) {
			*pos = mid;
			return true;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return false;
}

int filter__add(struct filter *f, const char *func)
{
	size_t pos;
	char *dup;

	if (!filter__valid_name(func))
		return -EINVAL;
	if (find(f, func, &pos))
		return 0;
	if (f->n == FILTER_MAX_FUNCS)
		return -ENOSPC;
	if (ARRAY_RESERVE(f->funcs, f->cap, f->n, 16))
		return -ENOMEM;
	dup = strdup(func);
	if (!dup)
		return -ENOMEM;
	memmove(&f->funcs[pos + 1], &f->funcs[pos], (f->n - pos) * sizeof(*f->funcs));
	f->funcs[pos] = dup;
	f->n++;
	return 0;
}

int filter__remove(struct filter *f, const char *func)
{
	size_t pos;

	if (!find(f, func, &pos))
		return -ENOENT;
	free(f->funcs[pos]);
	memmove(&f->funcs[pos], &f->funcs[pos + 1], (f->n - pos - 1) * sizeof(*f->funcs));
	f->n--;
	return 0;
}

bool filter__contains(const struct filter *f, const char *func)
{
	size_t pos;

	return func && find(f, func, &pos);
}

bool filter__drops(const struct filter *f, const char *a, const char *b)
{
	bool listed;

	if (!f->n)
		return false;
	listed = filter__contains(f, a) || filter__contains(f, b);
	return f->whitelist ? !listed : listed;
}

int filter__load_text(struct filter *f, const char *text, size_t len, const char *name,
		      char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	int lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;
		const char *s = p, *e;
		char func[FILTER_MAX_NAME + 1];
		int ret;

		lineno++;
		p = nl ? nl + 1 : end;
		while (s < eol && (*s == ' ' || *s == '\t'))
			s++;
		e = s;
		while (e < eol && *e != '#' && *e != ' ' && *e != '\t' && *e != '\r')
			e++;
		if (e == s) {
			if (s < eol && *s != '#' && *s != '\r') {
				snprintf(err, errlen, "%s:%d: unexpected character", name, lineno);
				return -EINVAL;
			}
			continue;
		}
		/* Only white space or a comment may follow the name. */
		for (const char *t = e; t < eol && *t != '#'; t++) {
			if (*t != ' ' && *t != '\t' && *t != '\r') {
				snprintf(err, errlen, "%s:%d: one function per line", name, lineno);
				return -EINVAL;
			}
		}
		if ((size_t)(e - s) > FILTER_MAX_NAME) {
			snprintf(err, errlen, "%s:%d: function name longer than %d bytes", name,
				 lineno, FILTER_MAX_NAME);
			return -EINVAL;
		}
		memcpy(func, s, e - s);
		func[e - s] = '\0';
		ret = filter__add(f, func);
		if (ret) {
			snprintf(err, errlen, "%s:%d: %s", name, lineno,
				 ret == -ENOSPC ? "too many functions (at most 4096)" :
				 ret == -EINVAL ? "not a function name" : strerror(-ret));
			return ret;
		}
	}
	return 0;
}
