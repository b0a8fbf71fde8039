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
#include "hw/watch_spec.h"

#define CTL_MAX_LINE	4096	/* bytes of a request, newline excluded */
#define CTL_MAX_ARGS	64

/*
 * The requests, one line each: X(OP, word, access, exec, help).  From it
 * come enum ctl_op, the one-word requests' grammar (protocol.c), what a
 * socket_group member may send (control.c), which function of request.c
 * runs each, and the `help` reply.
 *	word	the request when it is one fixed word; NULL when it has more
 *		words (protocol.c's parse_words() reads those)
 *	access	READ: any peer the socket lets in; ROOT: root only
 *	exec	request.c's function for it
 *	help	its family's line of `help`, on the family's first request
 */
#define CTL_REQUESTS(X)								\
	X(ON, "on", ROOT, exec_onoff, "on | off\n")				\
	X(OFF, "off", ROOT, exec_onoff, "")					\
	X(STATUS, "status", READ, exec_status, "stats | status\n")		\
	X(STATS, "stats", READ, exec_stats, "")					\
	/* argv: functions; also "!FUNC" */					\
	X(FILTER_ADD, NULL, ROOT, exec_filter,					\
	  "!FUNC | filter add FUNC... | filter remove FUNC... | filter list\n")	\
	X(FILTER_REMOVE, NULL, ROOT, exec_filter, "")	/* argv: functions */	\
	X(FILTER_LIST, NULL, READ, exec_filter_list, "")				\
	X(BLACKLIST, "blacklist", ROOT, exec_filter, "blacklist | whitelist\n")	\
	X(WHITELIST, "whitelist", ROOT, exec_filter, "")				\
	/* param: the parameter, or NULL for all */				\
	X(GET, NULL, READ, exec_get, "get [PARAM] | set PARAM VALUE\n")		\
	X(SET, NULL, ROOT, exec_set, "")		/* param, value */	\
	/* binary, functions, pid */						\
	X(PROBE_ADD_USER, NULL, ROOT, exec_probe,				\
	  "probe add user BINARY [--functions GLOB[,GLOB...]] [--pid PID]\n")	\
	/* argv: specs (kernel_spec.h) */					\
	X(PROBE_ADD_KERNEL, NULL, ROOT, exec_probe,				\
	  "probe add kernel SPEC... | probe remove ID | probe list\n")		\
	X(PROBE_REMOVE, NULL, ROOT, exec_probe, "")	/* id */		\
	X(PROBE_LIST, NULL, READ, exec_probe, "")				\
	X(WATCH_ADD, NULL, ROOT, exec_watch,	/* watch */			\
	  "watch add SPEC [--pid PID | --kernel] [--duration S] | watch remove ID | " \
	  "watch list\n")							\
	X(WATCH_REMOVE, NULL, ROOT, exec_watch, "")	/* id */		\
	X(WATCH_LIST, NULL, READ, exec_watch, "")				\
	X(REPORTS, NULL, READ, exec_reports, "reports [follow]\n")	/* follow */	\
	X(HELP, "help", READ, exec_help, "help\n")

#define CTL_OP_ENUM(OP, word, access, exec, help) CTL_##OP,
enum ctl_op {
	CTL_REQUESTS(CTL_OP_ENUM)
	CTL_NR_OPS,
};
#undef CTL_OP_ENUM

/*
 * The words of a user target, PATH [--functions GLOB[,GLOB...]] [--pid PID],
 * as the configuration's `target user`, the socket's `probe add user` and
 * `kcsanctl probe add user` give them (w[0] is PATH), each option at most
 * once.  absolute: PATH must be an absolute path (kcsanctl makes it one
 * itself before it sends the line).
 */
struct user_target_args {
	const char *binary;
	const char *functions;	/* comma-separated globs, or NULL for every function */
	int pid;		/* 0: every process running binary */
};
/* Parse w[0..n) into a, pointing into w: 0, or -EINVAL with why set. */
int user_target_args__parse(const char *const *w, int n, bool absolute,
			    struct user_target_args *a, char *why, size_t whylen);

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
