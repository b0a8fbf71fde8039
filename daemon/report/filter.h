/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KCSAN's report filter list (kernel/kcsan/debugfs.c): a set of function
 * names and a mode.  A report matches when either of its two top
 * functions is listed; blacklist mode drops matching reports, whitelist
 * mode keeps only them.  An empty list filters nothing in either mode,
 * as in KCSAN.  Pure data: no I/O, so the parsers' fuzzers can link it.
 */
#ifndef KCSAND_FILTER_H
#define KCSAND_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#define FILTER_MAX_FUNCS	4096
#define FILTER_MAX_NAME		255

/* Sorted, so that lookups are a binary search and listings come out as KCSAN's. */
struct filter {
	char **funcs;
	size_t n, cap;
	bool whitelist;
};

void filter__init(struct filter *f);
void filter__free(struct filter *f);
/* A deep copy; -ENOMEM. */
int filter__copy(struct filter *dst, const struct filter *src);
/* Is name acceptable as a function name (printable, no space, not too long)? */
bool filter__valid_name(const char *name);
/* 0, or -EINVAL for a bad name, -ENOSPC when full, -ENOMEM; adding a listed name is a no-op. */
int filter__add(struct filter *f, const char *func);
/* 0, or -ENOENT when not listed. */
int filter__remove(struct filter *f, const char *func);
bool filter__contains(const struct filter *f, const char *func);
/* Should a report whose top functions are a and b (b NULL: unknown origin) be dropped? */
bool filter__drops(const struct filter *f, const char *a, const char *b);
/*
 * Add the functions of a suppressions-style text: one function per line,
 * '#' starts a comment, blank lines are skipped.  On error, err says
 * "NAME:LINE: why" and f holds the lines before it.
 */
int filter__load_text(struct filter *f, const char *text, size_t len, const char *name,
		      char *err, size_t errlen);

#endif
