// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "report/filter.h"
#include "sites/kernel_spec.h"
#include "engine/params.h"
#include "protocol.h"

#define CTL_HELP_LINE(OP, word, access, exec, help) help
const char ctl_help_text[] =
	CTL_REQUESTS(CTL_HELP_LINE)
	"(-j before any request: reply in JSON)\n";
#undef CTL_HELP_LINE

/* Requests of one fixed word, by op. */
#define CTL_WORD(OP, word, access, exec, help) [CTL_##OP] = word,
static const char *const op_words[CTL_NR_OPS] = {
	CTL_REQUESTS(CTL_WORD)
};
#undef CTL_WORD

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* One --functions GLOB or --pid PID of a user target, at w[0], w[1]. */
static int parse_user_option(const char *const *w, struct user_target_args *a, char *why,
			     size_t whylen)
{
	bool functions = !strcmp(w[0], "--functions");
	unsigned long pid;

	if (!functions && strcmp(w[0], "--pid"))
		return fail(why, whylen, "unknown option '%.32s' (expected --functions or --pid)",
			    w[0]);
	if (functions ? a->functions != NULL : a->pid != 0)
		return fail(why, whylen, "%s given twice", w[0]);
	if (functions) {
		if (strlen(w[1]) >= CONFIG_MAX_LINE)
			return fail(why, whylen, "too long");
		a->functions = w[1];
	} else {
		if (uint__parse(w[1], 1, INT_MAX, &pid))
			return fail(why, whylen, "bad pid '%.32s'", w[1]);
		a->pid = pid;
	}
	return 0;
}

int user_target_args__parse(const char *const *w, int n, bool absolute,
			    struct user_target_args *a, char *why, size_t whylen)
{
	memset(a, 0, sizeof(*a));
	if (n < 1)
		return fail(why, whylen, "missing the binary's path");
	if (absolute && w[0][0] != '/')
		return fail(why, whylen, "'%.64s' is not an absolute path", w[0]);
	if (strlen(w[0]) >= PATH_MAX)
		return fail(why, whylen, "too long");
	a->binary = w[0];
	for (int i = 1; i < n; i += 2) {
		if (i + 1 >= n)
			return fail(why, whylen, "%.32s needs a value", w[i]);
		if (parse_user_option(w + i, a, why, whylen))
			return -EINVAL;
	}
	return 0;
}

static int check_funcs(const char **w, int n, char *err, size_t errlen)
{
	if (!n)
		return fail(err, errlen, "expected one or more function names");
	for (int i = 0; i < n; i++)
		if (!filter__valid_name(w[i]))
			return fail(err, errlen, "'%.64s' is not a function name", w[i]);
	return 0;
}

/*
 * "NOUN list" and "NOUN remove ID", alike for probes and watches: 0 or
 * -EINVAL when w is one of them, 1 when it is something else.
 */
static int parse_list_remove(struct ctl_request *r, const char *noun, enum ctl_op list,
			     enum ctl_op remove, const char **w, int n, char *err, size_t errlen)
{
	unsigned long v;

	if (n >= 1 && !strcmp(w[0], "list")) {
		if (n != 1)
			return fail(err, errlen, "%s list takes no argument", noun);
		r->op = list;
		return 0;
	}
	if (n >= 1 && !strcmp(w[0], "remove")) {
		if (n != 2 || uint__parse(w[1], 0, INT_MAX, &v))
			return fail(err, errlen, "expected '%s remove ID'", noun);
		r->op = remove;
		r->id = v;
		return 0;
	}
	return 1;
}

static int parse_probe(struct ctl_request *r, const char **w, int n, char *err, size_t errlen)
{
	int ret = parse_list_remove(r, "probe", CTL_PROBE_LIST, CTL_PROBE_REMOVE, w, n, err,
				    errlen);
	struct user_target_args a;
	char why[160];

	if (ret <= 0)
		return ret;
	if (n < 2 || strcmp(w[0], "add"))
		return fail(err, errlen, "expected 'probe add|remove|list'");
	if (!strcmp(w[1], "kernel")) {
		if (n < 3)
			return fail(err, errlen, "expected 'probe add kernel SPEC...'");
		if (n - 2 > CONFIG_MAX_SPECS)
			return fail(err, errlen, "probe add kernel: more than %d specs",
				    CONFIG_MAX_SPECS);
		for (int i = 2; i < n; i++) {
			const char *why = kernel_spec__invalid(w[i]);

			if (why)
				return fail(err, errlen, "probe add kernel: bad spec '%.64s': %s",
					    w[i], why);
			r->argv[r->argc++] = w[i];
		}
		if (!kernel_specs__select(r->argv, r->argc))
			return fail(err, errlen, "probe add kernel: only exclusions ('!GLOB'): "
						 "nothing to probe");
		r->op = CTL_PROBE_ADD_KERNEL;
		return 0;
	}
	if (strcmp(w[1], "user"))
		return fail(err, errlen, "probe add: unknown kind '%.32s' (user or kernel)", w[1]);
	if (n < 3)
		return fail(err, errlen, "expected 'probe add user BINARY [--functions GLOB] "
					 "[--pid PID]'");
	if (user_target_args__parse(w + 2, n - 2, true, &a, why, sizeof(why)))
		return fail(err, errlen, "probe add user: %s", why);
	r->op = CTL_PROBE_ADD_USER;
	r->binary = a.binary;
	r->functions = a.functions;
	r->pid = a.pid;
	return 0;
}

static int parse_watch(struct ctl_request *r, const char **w, int n, char *err, size_t errlen)
{
	int ret = parse_list_remove(r, "watch", CTL_WATCH_LIST, CTL_WATCH_REMOVE, w, n, err,
				    errlen);
	char why[160];

	if (ret <= 0)
		return ret;
	if (n < 1 || strcmp(w[0], "add"))
		return fail(err, errlen, "expected 'watch add|remove|list'");
	if (watch_args__parse(w + 1, n - 1, true, &r->watch, why, sizeof(why)))
		return fail(err, errlen, "watch add: %s", why);
	r->op = CTL_WATCH_ADD;
	return 0;
}

/* filter list | filter add|remove FUNC... (w: the words after "filter") */
static int parse_filter(struct ctl_request *r, const char **w, int n, char *err, size_t errlen)
{
	if (n == 1 && !strcmp(w[0], "list")) {
		r->op = CTL_FILTER_LIST;
		return 0;
	}
	if (n >= 1 && (!strcmp(w[0], "add") || !strcmp(w[0], "remove"))) {
		r->op = w[0][0] == 'a' ? CTL_FILTER_ADD : CTL_FILTER_REMOVE;
		r->argc = n - 1;
		for (int i = 1; i < n; i++)
			r->argv[i - 1] = w[i];
		return check_funcs(r->argv, r->argc, err, errlen);
	}
	return fail(err, errlen, "expected 'filter add|remove FUNC...' or 'filter list'");
}

/* get [PARAM] | set PARAM VALUE */
static int parse_param(struct ctl_request *r, const char **w, int n, char *err, size_t errlen)
{
	if (!strcmp(w[0], "get")) {
		if (n > 2)
			return fail(err, errlen, "expected 'get [PARAM]'");
		r->op = CTL_GET;
		if (n == 2) {
			r->param = param__find(w[1]);
			if (!r->param)
				return fail(err, errlen, "unknown parameter '%.64s'", w[1]);
		}
		return 0;
	}
	if (n != 3)
		return fail(err, errlen, "expected 'set PARAM VALUE'");
	r->op = CTL_SET;
	r->param = param__find(w[1]);
	if (!r->param)
		return fail(err, errlen, "unknown parameter '%.64s'", w[1]);
	if (r->param->at_load)
		return fail(err, errlen, "%s is set when kcsand starts (configuration "
			    "file), not while it runs", r->param->name);
	return param__parse(r->param, w[2], &r->value, err, errlen);
}

static int parse_words(struct ctl_request *r, const char **w, int n, char *err, size_t errlen)
{
	if (w[0][0] == '!') {
		if (n != 1)
			return fail(err, errlen, "expected '!FUNC'");
		r->op = CTL_FILTER_ADD;
		r->argv[0] = w[0] + 1;
		r->argc = 1;
		return check_funcs(r->argv, 1, err, errlen);
	}
	for (int op = 0; op < CTL_NR_OPS; op++) {
		if (!op_words[op] || strcmp(w[0], op_words[op]))
			continue;
		if (n != 1)
			return fail(err, errlen, "%s takes no argument", w[0]);
		r->op = op;
		return 0;
	}
	if (!strcmp(w[0], "filter"))
		return parse_filter(r, w + 1, n - 1, err, errlen);
	if (!strcmp(w[0], "get") || !strcmp(w[0], "set"))
		return parse_param(r, w, n, err, errlen);
	if (!strcmp(w[0], "probe"))
		return parse_probe(r, w + 1, n - 1, err, errlen);
	if (!strcmp(w[0], "watch"))
		return parse_watch(r, w + 1, n - 1, err, errlen);
	if (!strcmp(w[0], "reports")) {
		if (n > 2 || (n == 2 && strcmp(w[1], "follow")))
			return fail(err, errlen, "expected 'reports [follow]'");
		r->op = CTL_REPORTS;
		r->follow = n == 2;
		return 0;
	}
	return fail(err, errlen, "unknown request '%.64s' (try help)", w[0]);
}

int ctl_request__parse(const char *line, size_t len, struct ctl_request *r, char *err,
		       size_t errlen)
{
	const char *w[CTL_MAX_ARGS + 2];
	int n = 0, skip = 0;
	char *s;

	memset(r, 0, offsetof(struct ctl_request, buf));
	if (len && line[len - 1] == '\r')
		len--;
	if (len > CTL_MAX_LINE)
		return fail(err, errlen, "request longer than %d bytes", CTL_MAX_LINE);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = line[i];

		if ((c < ' ' && c != '\t') || c == 0x7f)
			return fail(err, errlen, "control character 0x%02x in request", c);
	}
	memcpy(r->buf, line, len);
	r->buf[len] = '\0';
	for (s = r->buf;;) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		if (n == (int)(sizeof(w) / sizeof(w[0])))
			return fail(err, errlen, "more than %d words", CTL_MAX_ARGS);
		w[n++] = s;
		s += strcspn(s, " \t");
		if (*s)
			*s++ = '\0';
	}
	if (n && !strcmp(w[0], "-j")) {
		r->json = true;
		skip = 1;
	}
	if (n == skip)
		return fail(err, errlen, "empty request");
	return parse_words(r, w + skip, n - skip, err, errlen);
}
