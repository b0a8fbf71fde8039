// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "control.h"
#include "engine.h"
#include "params.h"
#include "report.h"
#include "service.h"
#include "service_int.h"
#include "sink.h"

__attribute__((format(printf, 3, 4)))
void service_say(const struct service *s, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (s->o.foreground) {
		fputs("kcsand: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}

/* ------------------------------------------------------------ reports */

static bool on_filter(void *ctx, const struct report_view *v)
{
	struct service *s = ctx;

	return filter__drops(&s->filter, v->this.func, v->raw->has_other ? v->other.func : NULL);
}

static char *render(const struct report_view *v, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	if (json)
		report_print_json(v, m);
	else
		report_print_text(v, m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void on_report(void *ctx, const struct report_view *v)
{
	struct service *s = ctx;
	const struct kcsand_report *r = v->raw;
	struct recent *slot = &s->recent[s->nr_recent % RECENT_MAX];
	char title[1024], *text = render(v, false), *json = render(v, true);
	struct sink_fields f = {
		.title = title,
		.func = { v->this.func, r->has_other ? v->other.func : NULL },
		.access = { report_access_type(r->this.type),
			    r->has_other ? report_access_type(r->other.type) : NULL },
		.addr = r->this.addr,
		.pid = { r->this.pid, r->has_other ? r->other.pid : 0 },
		.tid = { r->this.tid, r->has_other ? r->other.tid : 0 },
		.binary = engine__site_object(s->e, r->this.site),
	};

	if (!text || !json) {
		free(text);
		free(json);
		return;
	}
	report_title(v, title, sizeof(title));
	sinks__emit(s->sinks, &f, text, json);
	if (s->ctl)
		ctl_server__broadcast(s->ctl, text, json);
	free(slot->text);
	free(slot->json);
	slot->text = text;
	slot->json = json;
	s->nr_recent++;
}

/* ------------------------------------------------------------ filters */

static bool nowatch(void *ctx, const char *func)
{
	const struct service *s = ctx;

	return filter__contains(&s->filter, func);
}

static bool nowatch_none(void *ctx, const char *func)
{
	return false;
}

/*
 * Push the filter into the site table.  Only a blacklist can be: its
 * functions' reports are dropped whatever the other side, so their
 * watchpoints are wasted stalls.  A whitelisted function can race with
 * any other, whose watchpoint must stay armed to catch it.
 */
static int push_filter(struct service *s)
{
	int n;

	n = engine__set_nowatch(s->e, s->filter.whitelist ? nowatch_none : nowatch, s);
	if (n > 0 && s->o.verbose)
		service_say(s, LOG_INFO, "%d sites of blacklisted functions set no watchpoints",
			    n);
	return n < 0 ? n : 0;
}

int service_replace_filter(struct service *s, struct filter *nf)
{
	filter__free(&s->filter);
	s->filter = *nf;
	filter__init(nf);
	return push_filter(s);
}

/* ------------------------------------------------------------ probes */

static bool pid_in_use(const struct service *s, int pid)
{
	for (size_t i = 0; i < s->nr_probes; i++)
		if (s->probes[i].t.pid == pid)
			return true;
	return false;
}

/* trace_all while any target wants every process running its binary. */
static void update_trace_all(struct service *s)
{
	bool all = false;

	for (size_t i = 0; i < s->nr_probes; i++)
		all |= !s->probes[i].t.pid;
	engine__set_trace_all(s->e, all);
}

/*
 * engine__add_object(), with the engine's own message as the reason: the
 * engine writes to stderr, which a client never sees and a background
 * daemon does not have, so stderr points to a buffer for the call.
 */
static int add_object_why(struct service *s, const struct config_target *t, char *err,
			  size_t errlen)
{
	FILE *saved = stderr, *m;
	char *buf = NULL, *nl;
	size_t len = 0;
	int obj;

	fflush(stderr);
	m = open_memstream(&buf, &len);
	if (m)
		stderr = m;
	obj = engine__add_object(s->e, t->binary, t->functions);
	stderr = saved;
	if (m)
		fclose(m);
	if (buf && len)
		fputs(buf, stderr);	/* the daemon's own log keeps all of it */
	if (obj < 0) {
		nl = buf ? strchr(buf, '\n') : NULL;
		if (nl)
			*nl = '\0';
		if (buf && !strncmp(buf, "kcsand: ", 8))
			snprintf(err, errlen, "%s", buf + 8);
		else
			snprintf(err, errlen, "cannot probe %s: %s", t->binary, strerror(-obj));
	}
	free(buf);
	return obj;
}

int service_add_probe(struct service *s, const struct config_target *t, bool from_config,
		      char *err, size_t errlen)
{
	struct probe *v, p = { .from_config = from_config };
	int obj, ret;

	if (t->pid && kill(t->pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "%s: no process %d", t->binary, t->pid);
		return -ESRCH;
	}
	if (access(t->binary, R_OK)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", t->binary, strerror(-ret));
		return ret;
	}
	obj = add_object_why(s, t, err, errlen);
	if (obj < 0)
		return obj;
	p.obj = obj;
	p.sites = engine__object_sites(s->e, obj);
	if (p.sites <= 0) {
		engine__remove_object(s->e, obj);
		snprintf(err, errlen, "%s: no memory-access instruction to probe%s%s", t->binary,
			 t->functions ? " in functions matching " : "",
			 t->functions ? t->functions : "");
		return -ENOENT;
	}
	p.t.binary = strdup(t->binary);
	p.t.functions = t->functions ? strdup(t->functions) : NULL;
	p.t.pid = t->pid;
	v = realloc(s->probes, (s->nr_probes + 1) * sizeof(*v));
	if (!v || !p.t.binary || (t->functions && !p.t.functions)) {
		if (v)
			s->probes = v;
		free(p.t.binary);
		free(p.t.functions);
		engine__remove_object(s->e, obj);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->probes = v;
	if (t->pid) {
		ret = engine__add_pid(s->e, t->pid);
		if (ret) {
			free(p.t.binary);
			free(p.t.functions);
			engine__remove_object(s->e, obj);
			snprintf(err, errlen, "cannot trace pid %d: %s", t->pid, strerror(-ret));
			return ret;
		}
	}
	p.id = s->next_id++;
	s->probes[s->nr_probes++] = p;
	update_trace_all(s);
	/* The new sites take the blacklist like the others. */
	push_filter(s);
	service_say(s, LOG_INFO, "probe %u: %s%s%s, %ld sites, %s", p.id, t->binary,
		    t->functions ? " functions " : "", t->functions ? t->functions : "", p.sites,
		    t->pid ? "one process" : "every process running it");
	return (int)p.id;
}

struct probe *service_find_probe(struct service *s, unsigned int id)
{
	for (size_t i = 0; i < s->nr_probes; i++)
		if (s->probes[i].id == id)
			return &s->probes[i];
	return NULL;
}

void service_remove_probe(struct service *s, struct probe *p)
{
	int pid = p->t.pid;

	engine__remove_object(s->e, p->obj);
	service_say(s, LOG_INFO, "probe %u: %s detached", p->id, p->t.binary);
	free(p->t.binary);
	free(p->t.functions);
	*p = s->probes[--s->nr_probes];
	if (pid && !pid_in_use(s, pid))
		engine__remove_pid(s->e, pid);
	update_trace_all(s);
}

/* ------------------------------------------------------------ setup */

static void sink_opts_of(const struct service *s, const struct config *c, struct sink_opts *so)
{
	so->to_syslog = c->to_syslog == CONFIG_YES;
	/* In the foreground stderr is the sink, unless syslog would print the same reports. */
	so->to_stderr = c->to_stderr != CONFIG_UNSET ? c->to_stderr == CONFIG_YES :
			s->o.foreground && !so->to_syslog;
	so->json = s->o.json || c->json == CONFIG_YES;
	so->log = s->o.log ? s->o.log : c->log;
}

static unsigned int default_value(const struct param_desc *p)
{
	struct engine_opts d;

	engine_opts__init(&d);
	return engine_opts__get(&d, p);
}

int service_set_param(struct service *s, const struct param_desc *p, unsigned int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", v);
	return engine__set_param(s->e, p->name, buf);
}

static int add_config_targets(struct service *s, const struct config *c, char *err,
			      size_t errlen)
{
	for (size_t i = 0; i < c->nr_targets; i++) {
		int ret = service_add_probe(s, &c->targets[i], true, err, errlen);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int service__new(const struct service_opts *o, struct config *c, struct service **out)
{
	struct service *s = calloc(1, sizeof(*s));
	struct engine_opts eo;
	struct sink_opts so;
	const struct param_desc *all;
	char err[512];
	size_t n;
	int ret;

	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->next_id = 1;
	s->started = time(NULL);
	filter__init(&s->filter);
	s->cfg = *c;
	config_init(c);

	engine_opts__init(&eo);
	all = params_all(&n);
	for (size_t i = 0; i < n && i < CONFIG_MAX_PARAMS; i++) {
		char buf[16];

		if (!s->cfg.set[i])
			continue;
		snprintf(buf, sizeof(buf), "%u", s->cfg.values[i]);
		ret = engine_opts__set(&eo, all[i].name, buf);
		if (ret)
			goto fail;
	}
	if (s->cfg.max_sites)
		eo.max_sites = s->cfg.max_sites;
	eo.verbose = o->verbose;
	eo.filter = on_filter;
	eo.sink = on_report;
	eo.hook_ctx = s;

	sink_opts_of(s, &s->cfg, &so);
	ret = sinks__open(&so, &s->sinks);
	if (ret)
		goto fail;
	ret = filter__copy(&s->filter, &s->cfg.filter);
	if (ret)
		goto fail;
	ret = engine__new(&eo, &s->e);
	if (!ret)
		ret = engine__load(s->e);
	if (!ret)
		ret = engine__attach(s->e);
	if (ret)
		goto fail;
	ret = add_config_targets(s, &s->cfg, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "kcsand: %s: %s\n", o->config_path, err);
		goto fail;
	}
	ret = push_filter(s);
	if (ret)
		goto fail;
	*out = s;
	return 0;
fail:
	service__free(s);
	return ret;
}

void service__set_server(struct service *s, struct ctl_server *ctl)
{
	s->ctl = ctl;
}

const char *service__socket_path(const struct service *s)
{
	return s->o.socket ? s->o.socket : s->cfg.socket ? s->cfg.socket : CTL_DEFAULT_SOCKET;
}

const char *service__socket_group(const struct service *s)
{
	return s->cfg.socket_group;
}

int service__epoll_fd(const struct service *s)
{
	return engine__epoll_fd(s->e);
}

void service__poll(struct service *s)
{
	engine__poll(s->e, 0);
}

int service__timeout_ms(const struct service *s)
{
	int t = engine__timeout_ms(s->e);

	return t < 0 || t > 1000 ? 1000 : t;
}

static bool filters_equal(const struct filter *a, const struct filter *b)
{
	if (a->whitelist != b->whitelist || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->funcs[i], b->funcs[i]))
			return false;
	return true;
}

static bool has_target(const struct config *c, const struct config_target *t)
{
	for (size_t i = 0; i < c->nr_targets; i++)
		if (config_target_eq(&c->targets[i], t))
			return true;
	return false;
}

int service__reload(struct service *s, char *err, size_t errlen)
{
	struct config nc;
	struct sink_opts so;
	const struct param_desc *all;
	unsigned int added[CONFIG_MAX_TARGETS];
	size_t nr_added = 0, n;
	int ret;

	config_init(&nc);
	ret = config_load(s->o.config_path, &nc, err, errlen);
	if (ret)
		goto out;
	/* Every new target first: if one cannot be attached, nothing has changed yet. */
	for (size_t i = 0; i < nc.nr_targets; i++) {
		if (has_target(&s->cfg, &nc.targets[i]))
			continue;
		ret = service_add_probe(s, &nc.targets[i], true, err, errlen);
		if (ret < 0)
			goto rollback;
		added[nr_added++] = ret;
	}
	sink_opts_of(s, &nc, &so);
	ret = sinks__reconfigure(s->sinks, &so);
	if (ret) {
		snprintf(err, errlen, "cannot open log %s: %s", so.log, strerror(-ret));
		goto rollback;
	}

	/* Committed from here on. */
	for (size_t i = 0; i < s->nr_probes;) {
		struct probe *p = &s->probes[i];

		if (p->from_config && !has_target(&nc, &p->t))
			service_remove_probe(s, p);	/* moves the last probe here */
					     else
					     i++;
	}
	all = params_all(&n);
	for (size_t i = 0; i < n && i < CONFIG_MAX_PARAMS; i++) {
		unsigned int was = s->cfg.set[i] ? s->cfg.values[i] : default_value(&all[i]);
		unsigned int now = nc.set[i] ? nc.values[i] : default_value(&all[i]);

		/* Only what the file changed: a value set through the socket stays otherwise. */
		if (was != now)
			service_set_param(s, &all[i], now);
	}
	if (!filters_equal(&s->cfg.filter, &nc.filter)) {
		struct filter nf;

		if (!filter__copy(&nf, &nc.filter))
			service_replace_filter(s, &nf);
	}
	if ((nc.socket || s->cfg.socket) && !s->o.socket &&
	    (!nc.socket || !s->cfg.socket || strcmp(nc.socket, s->cfg.socket)))
		service_say(s, LOG_WARNING, "reload: a new socket path takes a restart");
	config_free(&s->cfg);
	s->cfg = nc;
	config_init(&nc);
	service_say(s, LOG_INFO, "reloaded %s: %zu probes, %zu sites", s->o.config_path,
		    s->nr_probes, engine__nr_sites(s->e));
	ret = 0;
	goto out;
rollback:
	for (size_t i = 0; i < nr_added; i++) {
		struct probe *p = service_find_probe(s, added[i]);

		if (p)
			service_remove_probe(s, p);
	}
out:
	config_free(&nc);
	return ret;
}

void service__at_exit(struct service *s)
{
	uint64_t c[KCSAND_CTR_COUNT];

	if (s->o.foreground)
		engine__print_summary(s->e, stderr);
	engine__counters(s->e, c);
	if (c[KCSAND_CTR_RECORDS_DROPPED])
		service_say(s, LOG_WARNING, "%llu reports were lost to a full ring buffer",
			    (unsigned long long)c[KCSAND_CTR_RECORDS_DROPPED]);
}

void service__free(struct service *s)
{
	if (!s)
		return;
	engine__free(s->e);
	for (size_t i = 0; i < s->nr_probes; i++) {
		free(s->probes[i].t.binary);
		free(s->probes[i].t.functions);
	}
	free(s->probes);
	for (size_t i = 0; i < RECENT_MAX; i++) {
		free(s->recent[i].text);
		free(s->recent[i].json);
	}
	sinks__free(s->sinks);
	filter__free(&s->filter);
	config_free(&s->cfg);
	free(s);
}
