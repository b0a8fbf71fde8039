/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The words of a watch, as `kcsanctl watch add`, the socket's `watch add`
 * and the configuration's `watch` line give them:
 *
 *	SPEC [--pid PID | --kernel] [--duration S]
 *
 * SPEC is SYMBOL[:LEN] or ADDRESS[:LEN], LEN 1, 2, 4 or 8 (what one debug
 * register covers).  A pure check, so that the request and configuration
 * parsers (and their fuzzers) refuse bad words before anything looks at a
 * process or the kernel; hwbp.c parses SPEC with the same rules.
 */
#ifndef KCSAND_WATCH_ARGS_H
#define KCSAND_WATCH_ARGS_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A symbol of at most 128 bytes, or an address, and :LEN. */
#define WATCH_SPEC_MAX_LEN	255
#define WATCH_MAX_DURATION	(7 * 24 * 3600u)	/* a week: longer is "until removed" */

struct watch_args {
	const char *spec;
	int pid;			/* 0: the one process running a probed user target */
	bool kernel;			/* a kernel or module variable (kallsyms) */
	unsigned int duration_s;	/* 0: until removed */
};

/* A number of at most max, all of w: 0, or -EINVAL. */
static inline int watch_args__parse_uint(const char *w, unsigned long max, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)w[0]) || strlen(w) > 20)
		return -EINVAL;
	errno = 0;
	*out = strtoul(w, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

/* Why spec is not SYMBOL[:LEN] / ADDRESS[:LEN], or NULL when it is one. */
static inline const char *watch_spec__invalid(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	char buf[WATCH_SPEC_MAX_LEN + 1], *end;

	if (!n)
		return "empty";
	if (strlen(spec) > WATCH_SPEC_MAX_LEN)
		return "too long";
	if (colon && (strcmp(colon + 1, "1") && strcmp(colon + 1, "2") && strcmp(colon + 1, "4") &&
		      strcmp(colon + 1, "8")))
		return "LEN must be 1, 2, 4 or 8 (bytes a debug register covers)";
	memcpy(buf, spec, n);
	buf[n] = '\0';
	if (isdigit((unsigned char)buf[0])) {
		unsigned long long a;

		errno = 0;
		a = strtoull(buf, &end, 0);
		if (errno || *end || !a)
			return "not an ADDRESS (a non-zero number, 0x for hex)";
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)buf[i]) && buf[i] != '_' && buf[i] != '.' &&
		    buf[i] != '$')
			return "not a SYMBOL (letters, digits, '_', '.', '$')";
	return NULL;
}

/*
 * Parse w[0..n) into a; words point into w.  duration: whether --duration
 * is allowed (not in the configuration, where a watch lasts as long as its
 * line).  0, or -EINVAL with why set.
 */
static inline int watch_args__parse(const char *const *w, int n, bool duration,
				    struct watch_args *a, char *why, size_t whylen)
{
	unsigned long v;
	int i;

	memset(a, 0, sizeof(*a));
	if (n < 1) {
		snprintf(why, whylen, "expected SYMBOL[:LEN] or ADDRESS[:LEN]");
		return -EINVAL;
	}
	if (watch_spec__invalid(w[0])) {
		snprintf(why, whylen, "bad '%.64s': %s", w[0], watch_spec__invalid(w[0]));
		return -EINVAL;
	}
	a->spec = w[0];
	for (i = 1; i < n; i++) {
		if (!strcmp(w[i], "--kernel") && !a->kernel && !a->pid) {
			a->kernel = true;
			continue;
		}
		if (i + 1 >= n)
			break;
		if (!strcmp(w[i], "--pid") && !a->pid && !a->kernel) {
			if (watch_args__parse_uint(w[i + 1], INT_MAX, &v) || !v) {
				snprintf(why, whylen, "bad pid '%.32s'", w[i + 1]);
				return -EINVAL;
			}
			a->pid = v;
		} else if (!strcmp(w[i], "--duration") && duration && !a->duration_s) {
			if (watch_args__parse_uint(w[i + 1], WATCH_MAX_DURATION, &v) || !v) {
				snprintf(why, whylen, "bad duration '%.32s' (1..%u seconds)", w[i + 1],
					 WATCH_MAX_DURATION);
				return -EINVAL;
			}
			a->duration_s = v;
		} else {
			break;
		}
		i++;
	}
	if (i < n) {
		snprintf(why, whylen, "unexpected '%.32s' (--pid PID or --kernel, once%s)", w[i],
			 duration ? "; --duration S" : "");
		return -EINVAL;
	}
	return 0;
}

#endif
