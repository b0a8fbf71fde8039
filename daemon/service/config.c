// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "protocol.h"
#include "sites/kernel_spec.h"
#include "hw/watch_spec.h"
#include "engine/params.h"
#include "util/file.h"

#define MAX_WORDS 64

void config__init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	filter__init(&c->filter);
	c->to_stderr = c->to_syslog = c->to_kmsg = c->json = c->history = CONFIG_UNSET;
}

void config__free(struct config *c)
{
	for (size_t i = 0; i < c->nr_targets; i++) {
		free(c->targets[i].binary);
		free(c->targets[i].functions);
		free(c->targets[i].specs);
	}
	for (size_t i = 0; i < c->nr_watches; i++)
		free(c->watches[i].spec);
	for (size_t i = 0; i < c->nr_filter_files; i++)
		free(c->filter_files[i]);
	for (size_t i = 0; i < c->nr_kernel_debug; i++)
		free(c->kernel_debug[i]);
	filter__free(&c->filter);
	free(c->log);
	free(c->socket);
	free(c->socket_group);
	config__init(c);
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

bool config__target_eq(const struct config_target *t, const struct config_target *u)
{
	return t->kernel == u->kernel && str_eq(t->binary, u->binary) &&
	       str_eq(t->functions, u->functions) && t->pid == u->pid && str_eq(t->specs, u->specs);
}

bool config__watch_eq(const struct config_watch *w, const struct config_watch *v)
{
	return w->kernel == v->kernel && w->pid == v->pid && str_eq(w->spec, v->spec);
}

int config__split_specs(const char *specs, char *buf, size_t buflen, const char **out,
			size_t max)
{
	size_t n = 0;
	char *s;

	if (strlen(specs) >= buflen)
		return -E2BIG;
	strcpy(buf, specs);
	for (s = buf;;) {
		s += strspn(s, " ");
		if (!*s)
			break;
		if (n == max)
			return -E2BIG;
		out[n++] = s;
		s += strcspn(s, " ");
		if (*s)
			*s++ = '\0';
	}
	return (int)n;
}

/* Where a parse error is reported from. */
struct parse_ctx {
	const char *name;
	int line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static int fail(struct parse_ctx *pc, const char *fmt, ...)
{
	int n = snprintf(pc->err, pc->errlen, "%s:%d: ", pc->name, pc->line);
	va_list ap;

	if (n >= 0 && (size_t)n < pc->errlen) {
		va_start(ap, fmt);
		vsnprintf(pc->err + n, pc->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A path or a name: printable, no white space (already split on it). */
static int dup_word(struct parse_ctx *pc, const char *what, const char *w, char **out)
{
	if (strlen(w) >= PATH_MAX)
		return fail(pc, "%s too long", what);
	free(*out);
	*out = strdup(w);
	return *out ? 0 : -ENOMEM;
}

static int parse_bool(struct parse_ctx *pc, const char *key, const char *w, enum config_bool *out)
{
	if (!strcmp(w, "yes") || !strcmp(w, "on") || !strcmp(w, "1")) {
		*out = CONFIG_YES;
		return 0;
	}
	if (!strcmp(w, "no") || !strcmp(w, "off") || !strcmp(w, "0")) {
		*out = CONFIG_NO;
		return 0;
	}
	return fail(pc, "%s: bad value '%s' (expected yes or no)", key, w);
}

static int add_target(struct parse_ctx *pc, struct config *c, const struct config_target *t,
		      const char *what)
{
	struct config_target n = *t;

	for (size_t i = 0; i < c->nr_targets; i++)
		if (config__target_eq(&c->targets[i], t))
			return fail(pc, "target %s: %s given twice", t->kernel ? "kernel" : "user",
				    what);
	if (c->nr_targets == CONFIG_MAX_TARGETS)
		return fail(pc, "too many targets (at most %d)", CONFIG_MAX_TARGETS);
	n.binary = t->binary ? strdup(t->binary) : NULL;
	n.functions = t->functions ? strdup(t->functions) : NULL;
	n.specs = t->specs ? strdup(t->specs) : NULL;
	if ((t->binary && !n.binary) || (t->functions && !n.functions) || (t->specs && !n.specs)) {
		free(n.binary);
		free(n.functions);
		free(n.specs);
		return -ENOMEM;
	}
	c->targets[c->nr_targets++] = n;
	return 0;
}

/* target kernel SPEC...: the specs of one engine__add_kernel() call. */
static int parse_kernel_target(struct parse_ctx *pc, struct config *c, char **w, int n)
{
	char specs[CONFIG_MAX_LINE];
	struct config_target t = { .kernel = true, .specs = specs };
	size_t len = 0;

	if (n < 3)
		return fail(pc, "target kernel: expected one or more SPECs (GLOB, module:NAME, "
				"FUNC+0xOFF, !GLOB)");
	if (n - 2 > CONFIG_MAX_SPECS)
		return fail(pc, "target kernel: more than %d specs", CONFIG_MAX_SPECS);
	for (int i = 2; i < n; i++) {
		const char *why = kernel_spec__invalid(w[i]);

		if (why)
			return fail(pc, "target kernel: bad spec '%.64s': %s", w[i], why);
		len += snprintf(specs + len, sizeof(specs) - len, "%s%s", i > 2 ? " " : "", w[i]);
	}
	if (!kernel_specs__select((const char *const *)w + 2, n - 2))
		return fail(pc, "target kernel: only exclusions ('!GLOB'): nothing to probe");
	return add_target(pc, c, &t, specs);
}

static int parse_target(struct parse_ctx *pc, struct config *c, char **w, int n)
{
	struct config_target t = { 0 };
	struct user_target_args a;
	char why[160];

	if (n < 2)
		return fail(pc, "target: expected 'target user PATH [--functions GLOB] "
				"[--pid PID]' or 'target kernel SPEC...'");
	if (!strcmp(w[1], "kernel"))
		return parse_kernel_target(pc, c, w, n);
	if (strcmp(w[1], "user"))
		return fail(pc, "target: unknown kind '%s' (expected user or kernel)", w[1]);
	if (user_target_args__parse((const char *const *)w + 2, n - 2, true, &a, why,
				    sizeof(why)))
		return fail(pc, "target user: %s", why);
	t.binary = (char *)a.binary;
	t.functions = (char *)a.functions;
	t.pid = a.pid;
	return add_target(pc, c, &t, a.binary);
}

/* watch SPEC [--pid PID | --kernel]: a watch for as long as its line is there. */
static int parse_watch(struct parse_ctx *pc, struct config *c, char **w, int n)
{
	struct watch_args a;
	struct config_watch cw;
	char why[160];

	if (watch_args__parse((const char *const *)w + 1, n - 1, false, &a, why, sizeof(why)))
		return fail(pc, "watch: %s", why);
	cw = (struct config_watch){ (char *)a.spec, a.pid, a.kernel };
	for (size_t i = 0; i < c->nr_watches; i++)
		if (config__watch_eq(&c->watches[i], &cw))
			return fail(pc, "watch: %s given twice", a.spec);
	if (c->nr_watches == CONFIG_MAX_WATCHES)
		return fail(pc, "too many watches (at most %d: four debug registers for user "
				"targets, four for the kernel)", CONFIG_MAX_WATCHES);
	cw.spec = strdup(a.spec);
	if (!cw.spec)
		return -ENOMEM;
	c->watches[c->nr_watches++] = cw;
	return 0;
}

static int parse_filter(struct parse_ctx *pc, struct config *c, char **w, int n)
{
	if (n < 2)
		return fail(pc, "filter: expected one or more function names");
	for (int i = 1; i < n; i++) {
		int err = filter__add(&c->filter, w[i]);

		if (err == -ENOSPC)
			return fail(pc, "filter: too many functions (at most %d)", FILTER_MAX_FUNCS);
		if (err == -EINVAL)
			return fail(pc, "filter: '%.64s' is not a function name", w[i]);
		if (err)
			return err;
	}
	return 0;
}

/* KEY /PATH, repeatable up to max times (kernel_debug, filter_file). */
static int parse_path_list(struct parse_ctx *pc, const char *key, const char *path,
			   char **list, size_t *nr, size_t max)
{
	int err;

	if (*nr == max)
		return fail(pc, "%s: at most %zu", key, max);
	if (path[0] != '/')
		return fail(pc, "%s: '%s' is not an absolute path", key, path);
	list[*nr] = NULL;
	err = dup_word(pc, key, path, &list[*nr]);
	if (!err)
		(*nr)++;
	return err;
}

/* Where reports and the socket go: 1 when key is not one of these. */
static int parse_output(struct parse_ctx *pc, struct config *c, const char *key, const char *v)
{
	if (!strcmp(key, "stderr"))
		return parse_bool(pc, key, v, &c->to_stderr);
	if (!strcmp(key, "syslog"))
		return parse_bool(pc, key, v, &c->to_syslog);
	if (!strcmp(key, "kmsg"))
		return parse_bool(pc, key, v, &c->to_kmsg);
	if (!strcmp(key, "json"))
		return parse_bool(pc, key, v, &c->json);
	if (!strcmp(key, "history"))
		return parse_bool(pc, key, v, &c->history);
	if (!strcmp(key, "log") || !strcmp(key, "socket")) {
		if (v[0] != '/')
			return fail(pc, "%s: '%s' is not an absolute path", key, v);
		return dup_word(pc, key, v, !strcmp(key, "log") ? &c->log : &c->socket);
	}
	if (!strcmp(key, "socket_group"))
		return dup_word(pc, key, v, &c->socket_group);
	return 1;
}

/* A parameter of params.c's table (or max_sites), by index in param__table(). */
static int parse_param(struct parse_ctx *pc, struct config *c, const char *key, const char *v)
{
	const struct param_desc *p;
	size_t nr_params, idx;
	unsigned long max_sites;
	unsigned int pv;
	char msg[256];

	if (!strcmp(key, "max_sites")) {
		if (uint__parse(v, 1, 1 << 24, &max_sites))
			return fail(pc, "max_sites: bad value '%s' (expected 1..%d)", v, 1 << 24);
		c->max_sites = max_sites;
		return 0;
	}
	p = param__find(key);
	if (!p)
		return fail(pc, "unknown key '%.64s'", key);
	if (param__parse(p, v, &pv, msg, sizeof(msg)))
		return fail(pc, "%s", msg);
	idx = p - param__table(&nr_params);
	if (idx >= CONFIG_MAX_PARAMS)
		return fail(pc, "%s: too many parameters for this build", key);
	c->values[idx] = pv;
	c->set[idx] = true;
	return 0;
}

static int parse_words(struct parse_ctx *pc, struct config *c, char **w, int n)
{
	const char *key = w[0];
	int ret;

	if (!strcmp(key, "target"))
		return parse_target(pc, c, w, n);
	if (!strcmp(key, "watch"))
		return parse_watch(pc, c, w, n);
	if (!strcmp(key, "filter"))
		return parse_filter(pc, c, w, n);
	if (n != 2)
		return fail(pc, "%s: expected one value, got %d", key, n - 1);
	if (!strcmp(key, "filter_mode")) {
		if (strcmp(w[1], "blacklist") && strcmp(w[1], "whitelist"))
			return fail(pc, "filter_mode: bad value '%s' (expected blacklist or "
					"whitelist)", w[1]);
		c->filter.whitelist = !strcmp(w[1], "whitelist");
		return 0;
	}
	if (!strcmp(key, "kernel_debug"))
		return parse_path_list(pc, key, w[1], c->kernel_debug, &c->nr_kernel_debug,
				       CONFIG_MAX_KERNEL_DEBUG);
	if (!strcmp(key, "filter_file"))
		return parse_path_list(pc, key, w[1], c->filter_files, &c->nr_filter_files,
				       CONFIG_MAX_FILTER_FILES);
	ret = parse_output(pc, c, key, w[1]);
	return ret <= 0 ? ret : parse_param(pc, c, key, w[1]);
}

int config__parse(const char *text, size_t len, const char *name, struct config *c, char *err,
		  size_t errlen)
{
	struct parse_ctx pc = { .name = name, .err = err, .errlen = errlen };
	const char *p = text, *end = text + len;
	char line[CONFIG_MAX_LINE + 1];

	if (errlen)
		err[0] = '\0';
	if (len > CONFIG_MAX_SIZE) {
		pc.line = 0;
		return fail(&pc, "larger than %d bytes", CONFIG_MAX_SIZE);
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;
		size_t n = eol - p;
		char *words[MAX_WORDS], *s;
		int nw = 0, ret;

		pc.line++;
		if (n > CONFIG_MAX_LINE)
			return fail(&pc, "line longer than %d bytes", CONFIG_MAX_LINE);
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl ? nl + 1 : end;
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = line[i];

			if ((ch < ' ' && ch != '\t') || ch == 0x7f)
				return fail(&pc, "control character 0x%02x", ch);
		}
		for (s = line;;) {
			s += strspn(s, " \t");
			if (!*s || *s == '#')
				break;
			if (nw == MAX_WORDS)
				return fail(&pc, "more than %d words", MAX_WORDS);
			words[nw++] = s;
			s += strcspn(s, " \t");
			if (*s)
				*s++ = '\0';
		}
		if (!nw)
			continue;
		ret = parse_words(&pc, c, words, nw);
		if (ret == -ENOMEM)
			return fail(&pc, "out of memory");
		if (ret)
			return ret;
	}
	return 0;
}

/* A whole file of at most CONFIG_MAX_SIZE bytes, as text (util/file.h). */
static int read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = file__read_text(fd, CONFIG_MAX_SIZE, out, len);
	close(fd);
	return err;
}

/* Why read_file() failed, for the error line; buf: room for the size limit's words. */
static const char *read_why(int err, char *buf, size_t len)
{
	if (err == -EINVAL)
		return "contains a NUL byte";
	if (err != -EFBIG)
		return strerror(-err);
	snprintf(buf, len, "larger than %d bytes", CONFIG_MAX_SIZE);
	return buf;
}

int config__load(const char *path, struct config *c, char *err, size_t errlen)
{
	char *text, why[48];
	size_t len;
	int ret;

	ret = read_file(path, &text, &len);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, read_why(ret, why, sizeof(why)));
		return ret;
	}
	ret = config__parse(text, len, path, c, err, errlen);
	free(text);
	/* Checked here, not when a kernel target first needs them: --check and reload see it. */
	for (size_t i = 0; !ret && i < c->nr_kernel_debug; i++) {
		if (access(c->kernel_debug[i], R_OK)) {
			ret = -errno;
			snprintf(err, errlen, "%s: kernel_debug %s: %s", path, c->kernel_debug[i],
				 strerror(-ret));
		}
	}
	for (size_t i = 0; !ret && i < c->nr_filter_files; i++) {
		const char *f = c->filter_files[i];

		ret = read_file(f, &text, &len);
		if (ret) {
			snprintf(err, errlen, "%s: filter_file %s: %s", path, f,
				 read_why(ret, why, sizeof(why)));
			return ret;
		}
		ret = filter__load_text(&c->filter, text, len, f, err, errlen);
		free(text);
	}
	return ret;
}
