/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one grammar of a watch, for every way one is given: `kcsanctl run
 * --watch`, `kcsanctl watch add`, the socket's `watch add`, the
 * configuration's `watch` line, and hwbp__watch(), which arms it:
 *
 *	SPEC [--pid PID | --kernel] [--duration S]
 *
 *	SPEC	SYMBOL[:LEN] | ADDRESS[:LEN]
 *	SYMBOL	a name that does not start with a digit: letters, digits, '_',
 *		'.', '$' (C, mangled C++ and Rust names, gcc's "var.0" locals)
 *	ADDRESS	a non-zero number that starts with a digit, as C writes it
 *		(0x hex, decimal, or octal after a leading 0)
 *	LEN	1, 2, 4 or 8 (what one debug register covers); without it,
 *		the variable's size up to 8, and 8 for an address
 *
 * Pure parsing, with no process or kernel looked at, so that the request
 * and configuration parsers (and their fuzzers) refuse bad words before
 * anything is armed.
 */
#ifndef KCSAND_WATCH_SPEC_H
#define KCSAND_WATCH_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest SPEC, symbol and :LEN together. */
#define WATCH_SPEC_MAX_LEN	255
#define WATCH_MAX_DURATION	(7 * 24 * 3600u)	/* a week: longer is "until removed" */

struct watch_spec {
	char symbol[WATCH_SPEC_MAX_LEN + 1];	/* "" for an ADDRESS */
	uint64_t addr;				/* the ADDRESS, or 0 for a SYMBOL */
	unsigned int len;			/* LEN, or 0 when not given */
};

/* Parse SPEC into out: NULL, or why it is not SYMBOL[:LEN] / ADDRESS[:LEN]. */
const char *watch_spec__parse(const char *spec, struct watch_spec *out);

struct watch_args {
	const char *spec;
	int pid;			/* 0: the one process running a probed user target */
	bool kernel;			/* a kernel or module variable (kallsyms) */
	unsigned int duration_s;	/* 0: until removed */
};

/*
 * Parse w[0..n) into a; words point into w.  duration: whether --duration
 * is allowed (not in the configuration, where a watch lasts as long as its
 * line).  0, or -EINVAL with why set.
 */
int watch_args__parse(const char *const *w, int n, bool duration, struct watch_args *a,
		      char *why, size_t whylen);

#endif
