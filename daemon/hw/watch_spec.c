// SPDX-License-Identifier: GPL-2.0-only
/*
 * The watch grammar (watch_spec.h).  strtoul() alone would take " 4", "+4",
 * "04" and "0x4" as a LEN, and any text as a SYMBOL: the grammar is spelled
 * out here instead, so that a SPEC the configuration or the socket accepts
 * is one the engine arms, and the reverse.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watch_spec.h"

static bool is_symbol(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '$')
			return false;
	return true;
}

const char *watch_spec__parse(const char *spec, struct watch_spec *out)
{
	const char *colon = strrchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	char *end;

	memset(out, 0, sizeof(*out));
	if (!n)
		return "empty";
	if (strlen(spec) > WATCH_SPEC_MAX_LEN)
		return "too long";
	if (colon) {
		const char *l = colon + 1;

		if (strlen(l) != 1 || (l[0] != '1' && l[0] != '2' && l[0] != '4' && l[0] != '8'))
			return "LEN must be 1, 2, 4 or 8 (bytes a debug register covers)";
		out->len = l[0] - '0';
	}
	memcpy(out->symbol, spec, n);
	out->symbol[n] = '\0';
	if (isdigit((unsigned char)spec[0])) {
		errno = 0;
		out->addr = strtoull(out->symbol, &end, 0);
		out->symbol[0] = '\0';
		if (errno || *end || !out->addr)
			return "not an ADDRESS (a non-zero number, 0x for hex)";
		return NULL;
	}
	if (!is_symbol(out->symbol, n))
		return "not a SYMBOL (letters, digits, '_', '.', '$')";
	return NULL;
}

/* A number of at most max, all of w: 0, or -EINVAL. */
static int parse_uint(const char *w, unsigned long max, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)w[0]) || strlen(w) > 20)
		return -EINVAL;
	errno = 0;
	*out = strtoul(w, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

/* --pid PID or --duration S at w[0], w[1]: 1 taken, 0 not such an option, -EINVAL. */
static int parse_option(const char *const *w, bool duration, struct watch_args *a, char *why,
			size_t whylen)
{
	unsigned long v;

	if (!strcmp(w[0], "--pid") && !a->pid && !a->kernel) {
		if (parse_uint(w[1], INT_MAX, &v) || !v) {
			snprintf(why, whylen, "bad pid '%.32s'", w[1]);
			return -EINVAL;
		}
		a->pid = v;
		return 1;
	}
	if (!strcmp(w[0], "--duration") && duration && !a->duration_s) {
		if (parse_uint(w[1], WATCH_MAX_DURATION, &v) || !v) {
			snprintf(why, whylen, "bad duration '%.32s' (1..%u seconds)", w[1],
				 WATCH_MAX_DURATION);
			return -EINVAL;
		}
		a->duration_s = v;
		return 1;
	}
	return 0;
}

int watch_args__parse(const char *const *w, int n, bool duration, struct watch_args *a,
		      char *why, size_t whylen)
{
	struct watch_spec ws;
	const char *bad;
	int i, ret;

	memset(a, 0, sizeof(*a));
	if (n < 1) {
		snprintf(why, whylen, "expected SYMBOL[:LEN] or ADDRESS[:LEN]");
		return -EINVAL;
	}
	bad = watch_spec__parse(w[0], &ws);
	if (bad) {
		snprintf(why, whylen, "bad '%.64s': %s", w[0], bad);
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
		ret = parse_option(w + i, duration, a, why, whylen);
		if (ret < 0)
			return ret;
		if (!ret)
			break;
		i++;
	}
	if (i < n) {
		snprintf(why, whylen, "unexpected '%.32s' (--pid PID or --kernel, once%s)", w[i],
			 duration ? "; --duration S" : "");
		return -EINVAL;
	}
	return 0;
}
