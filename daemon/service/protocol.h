/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket's request language: one line of words per request,
 * KCSAN's debugfs words where they exist (on, off, !FUNC, blacklist,
 * whitelist) and kcsand's own beside them.  A leading "-j" asks for the
 * reply in JSON.  Every reply ends with a line "ok" or "error: REASON".
 *
 * ctl_request__parse() is a pure function (a line in, a request out) so that the
 * fuzzer calls it directly; executing a request is control.c's business.
 */
#ifndef KCSAND_PROTOCOL_H
#define KCSAND_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include "hw/watch_args.h"

#define CTL_MAX_LINE	4096	/* bytes of a request, newline excluded */
#define CTL_MAX_ARGS	64

enum ctl_op {
	CTL_ON,
	CTL_OFF,
	CTL_STATUS,
	CTL_STATS,
	CTL_FILTER_ADD,		/* argv: functions; also "!FUNC" */
	CTL_FILTER_REMOVE,	/* argv: functions */
	CTL_FILTER_LIST,
	CTL_BLACKLIST,
	CTL_WHITELIST,
	CTL_GET,		/* argv[0]: parameter, or none for all */
	CTL_SET,		/* param, value */
	CTL_PROBE_ADD_USER,	/* binary, functions, pid */
	CTL_PROBE_ADD_KERNEL,	/* argv: specs (kernel_spec.h) */
	CTL_PROBE_REMOVE,	/* id */
	CTL_PROBE_LIST,
	CTL_WATCH_ADD,		/* watch */
	CTL_WATCH_REMOVE,	/* id */
	CTL_WATCH_LIST,
	CTL_REPORTS,		/* follow */
	CTL_HELP,
};

struct param_desc;

struct ctl_request {
	enum ctl_op op;
	bool json;
	bool follow;
	int argc;
	const char *argv[CTL_MAX_ARGS];		/* point into buf */
	const struct param_desc *param;		/* CTL_GET (NULL: all), CTL_SET */
	unsigned int value;			/* CTL_SET */
	const char *binary, *functions;		/* CTL_PROBE_ADD_USER */
	int pid;				/* CTL_PROBE_ADD_USER, 0: every process */
	unsigned int id;			/* CTL_PROBE_REMOVE, CTL_WATCH_REMOVE */
	struct watch_args watch;		/* CTL_WATCH_ADD */
	char buf[CTL_MAX_LINE + 1];
};

/*
 * Parse one request line of len bytes (no newline; a trailing '\r' is
 * ignored).  Returns 0, or -EINVAL with a reason in err (without the
 * "error: " prefix).
 */
int ctl_request__parse(const char *line, size_t len, struct ctl_request *req, char *err,
		       size_t errlen);
/* The request words, one line each, for "help". */
extern const char ctl_help_text[];

#endif
