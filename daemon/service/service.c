// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include "control.h"
#include "engine/engine.h"
#include "engine/params.h"
#include "report/report.h"
#include "service.h"
#include "service_int.h"
#include "sink.h"
#include "util/array.h"
#include "util/print.h"

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

/* Both engines' hooks; ctx is the service_engine of the report's engine. */
static bool on_filter(void *ctx, const struct report_view *v)
{
	const struct service *s = ((const struct service_engine *)ctx)->s;

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
		report__print_json(v, m);
	else
		report__print_text(v, m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void on_report(void *ctx, const struct report_view *v)
{
	const struct service_engine *se = ctx;
	struct service *s = se->s;
	const struct kcsand_report *r = v->raw;
	struct recent *slot = &s->recent[s->nr_recent % RECENT_MAX];
	char title[1024], *text = render(v, false), *json = render(v, true);
	struct sink_fields f = {
		.title = title,
		.func = { v->this.func, r->has_other ? v->other.func : NULL },
		.access = { report__access_type(r->this.type),
			    r->has_other ? report__access_type(r->other.type) : NULL },
		.addr = r->this.addr,
		.pid = { r->this.pid, r->has_other ? r->other.pid : 0 },
		.tid = { r->this.tid, r->has_other ? r->other.tid : 0 },
		.binary = engine__site_object(se->e, r->this.site),
	};

	if (!text || !json) {
		free(text);
		free(json);
		return;
	}
	report__title(v, title, sizeof(title));
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
 * Push the filter into both engines' site tables.  Only a blacklist can
 * be: its functions' reports are dropped whatever the other side, so their
 * watchpoints are wasted stalls.  A whitelisted function can race with
 * any other, whose watchpoint must stay armed to catch it.
 */
static int push_filter(struct service *s)
{
	struct service_engine *all[] = { &s->user, &s->kernel };
	int n, total = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!all[i]->e)
			continue;
		n = engine__set_nowatch(all[i]->e, s->filter.whitelist ? nowatch_none : nowatch, s);
		if (n < 0)
			return n;
		total += n;
	}
	/* An info line, with -v: the print level says, as for every other message. */
	if (total > 0 && kcsand__print_level_on(KCSAND_INFO))
		service_say(s, LOG_INFO, "%d sites of blacklisted functions set no watchpoints",
			    total);
	return 0;
}

int service_replace_filter(struct service *s, struct filter *nf)
{
	filter__free(&s->filter);
	s->filter = *nf;
	filter__init(nf);
	return push_filter(s);
}

/* ------------------------------------------------------------ probes */

bool service_pid_probed(const struct service *s, int pid)
{
	for (size_t i = 0; i < s->nr_probes; i++)
		if (!s->probes[i].t.kernel && s->probes[i].t.pid == pid)
			return true;
	return false;
}

size_t service_nr_probes(const struct service *s, bool kernel)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_probes; i++)
		n += s->probes[i].t.kernel == kernel;
	return n;
}

/*
 * trace_all while any user target wants every process running its binary.
 * (The kernel engine always traces every task: the kernel has no target.)
 */
static void update_trace_all(struct service *s)
{
	bool all = false;

	for (size_t i = 0; i < s->nr_probes; i++)
		all |= !s->probes[i].t.kernel && !s->probes[i].t.pid;
	engine__set_trace_all(s->user.e, all);
}

/*
 * The last complete warning printed, and the one being printed: only a
 * warning says why a call failed (a -v line in between is no reason).
 * why_lock: the kernel breakpoints' mover threads print too (sampler/kbp_mover.c,
 * with -v).
 */
static pthread_mutex_t why_lock = PTHREAD_MUTEX_INITIALIZER;
static char why_line[512], why_cur[512];
static size_t why_len;

int service_print(enum kcsand_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	va_list copy;
	int n;

	if (!kcsand__print_level_on(level))
		return 0;
	va_copy(copy, ap);
	n = vfprintf(stderr, fmt, ap);
	vsnprintf(buf, sizeof(buf), fmt, copy);
	va_end(copy);
	if (level != KCSAND_WARN)
		return n;
	pthread_mutex_lock(&why_lock);
	for (const char *p = buf; *p; p++) {
		if (*p != '\n') {
			if (why_len < sizeof(why_cur) - 1)
				why_cur[why_len++] = *p;
		} else if (why_len) {
			why_cur[why_len] = '\0';
			memcpy(why_line, why_cur, why_len + 1);
			why_len = 0;
		}
	}
	pthread_mutex_unlock(&why_lock);
	return n;
}

void service_why_begin(void)
{
	pthread_mutex_lock(&why_lock);
	why_line[0] = '\0';
	why_len = 0;
	pthread_mutex_unlock(&why_lock);
}

int service_why(int ret, char *err, size_t errlen)
{
	const char *why = why_line;

	if (ret >= 0)
		return ret;
	pthread_mutex_lock(&why_lock);
	if (!strncmp(why, "kcsand: ", 8))
		why += 8;
	snprintf(err, errlen, "%s", *why ? why : strerror(-ret));
	pthread_mutex_unlock(&why_lock);
	return ret;
}

/* A user target: its object id in the user engine, or -errno with the reason in err. */
static int add_user(struct service *s, const struct config_target *t, char *err, size_t errlen)
{
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
	/*
	 * The trap program the start left out (open_user_engine()), before the
	 * target's first escalation; a failure was said, and costs the target
	 * its escalations and watches only, as a failed late load does.
	 */
	engine__load_traps(s->user.e);
	service_why_begin();
	obj = service_why(engine__add_object(s->user.e, t->binary, t->functions), err, errlen);
	if (obj < 0)
		return obj;
	if (engine__object_sites(s->user.e, obj) <= 0) {
		engine__remove_object(s->user.e, obj);
		snprintf(err, errlen, "%s: no memory-access instruction to probe%s%s", t->binary,
			 t->functions ? " in functions matching " : "",
			 t->functions ? t->functions : "");
		return -ENOENT;
	}
	if (t->pid) {
		ret = engine__add_pid(s->user.e, t->pid);
		if (ret) {
			engine__remove_object(s->user.e, obj);
			snprintf(err, errlen, "cannot trace pid %d: %s", t->pid, strerror(-ret));
			return ret;
		}
	}
	return obj;
}

static struct engine *engine_of(const struct service *s, const struct probe *p)
{
	return p->t.kernel ? s->kernel.e : s->user.e;
}

/* Undo add_user() or service_kernel_add(). */
static void detach(struct service *s, const struct probe *p)
{
	engine__remove_object(engine_of(s, p), p->obj);
	if (!p->t.kernel && p->t.pid && !service_pid_probed(s, p->t.pid) &&
	    !service_watch_keeps_pid(s, p->t.pid))
		engine__remove_pid(s->user.e, p->t.pid);
}

int service_add_probe(struct service *s, const struct config_target *t, bool from_config,
		      unsigned int id, char *err, size_t errlen)
{
	struct probe p = {
		.id = id ? id : s->next_id,
		.from_config = from_config,
		.t = { .pid = t->pid, .kernel = t->kernel },
	};

	if (ARRAY_RESERVE(s->probes, s->cap_probes, s->nr_probes, 8)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p.obj = t->kernel ? service_kernel_add(s, t, err, errlen) : add_user(s, t, err, errlen);
	if (p.obj < 0)
		return p.obj;
	p.sites = engine__object_sites(engine_of(s, &p), p.obj);
	p.t.binary = t->binary ? strdup(t->binary) : NULL;
	p.t.functions = t->functions ? strdup(t->functions) : NULL;
	p.t.specs = t->specs ? strdup(t->specs) : NULL;
	if ((t->binary && !p.t.binary) || (t->functions && !p.t.functions) ||
	    (t->specs && !p.t.specs)) {
		detach(s, &p);
		free(p.t.binary);
		free(p.t.functions);
		free(p.t.specs);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (p.id >= s->next_id)
		s->next_id = p.id + 1;
	s->probes[s->nr_probes++] = p;
	update_trace_all(s);
	/* The new sites take the blacklist like the others. */
	push_filter(s);
	if (t->kernel)
		service_say(s, LOG_INFO, "probe %u: kernel %s, %ld sites", p.id, t->specs,
			    p.sites);
	else
		service_say(s, LOG_INFO, "probe %u: %s%s%s, %ld sites, %s", p.id, t->binary,
			    t->functions ? " functions " : "", t->functions ? t->functions : "",
			    p.sites, t->pid ? "one process" : "every process running it");
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
	struct probe gone = *p;

	*p = s->probes[--s->nr_probes];
	detach(s, &gone);
	service_say(s, LOG_INFO, "probe %u: %s%s detached", gone.id,
		    gone.t.kernel ? "kernel " : "", gone.t.kernel ? gone.t.specs : gone.t.binary);
	free(gone.t.binary);
	free(gone.t.functions);
	free(gone.t.specs);
	update_trace_all(s);
}

/* ------------------------------------------------------------ parameters */

unsigned int service_param_default(const struct param_desc *p, bool kernel)
{
	return p->def[param__mode(kernel)];
}

void service_mode_opts(const struct config *c, bool kernel, struct engine_opts *o)
{
	const struct param_desc *all;
	size_t n;

	engine_opts__init(o, param__mode(kernel));
	all = param__table(&n);
	/* A parameter's line applies to both modes; without one, each has its default. */
	for (size_t i = 0; i < n && i < CONFIG_MAX_PARAMS; i++)
		if (c->set[i])
			engine_opts__set(o, &all[i], c->values[i]);
	if (c->max_sites)
		o->max_sites = c->max_sites;
	/*
	 * The service's kernel targets keep a kprobe per site: its watches
	 * (watch add kernel) take debug registers at any time, which code
	 * breakpoints would hold for the whole run.
	 */
	o->sample = ENGINE_SAMPLE_KPROBES;
}

void service_set_param_in(struct service *s, bool kernel, const struct param_desc *p,
			  unsigned int v)
{
	struct engine *e = kernel ? s->kernel.e : s->user.e;

	/* The kernel engine is made on demand, from kopts: it starts with the value too. */
	if (kernel)
		engine_opts__set(&s->kopts, p, v);
	if (e)
		engine__set_param(e, p, v);
}

/*
 * `set` and `on`/`off` apply to both modes alike, as KCSAN's debugfs
 * file applies to the whole kernel: one value, whatever the mode's
 * default was.
 */
void service_set_param(struct service *s, const struct param_desc *p, unsigned int v)
{
	service_set_param_in(s, false, p, v);
	service_set_param_in(s, true, p, v);
}

/* ------------------------------------------------------------ setup */

void service_sink_opts(const struct service *s, const struct config *c, struct sink_opts *so)
{
	so->to_syslog = c->to_syslog == CONFIG_YES;
	so->to_kmsg = c->to_kmsg == CONFIG_YES;
	/* In the foreground stderr is the sink, unless syslog would print the same reports. */
	so->to_stderr = c->to_stderr != CONFIG_UNSET ? c->to_stderr == CONFIG_YES :
			s->o.foreground && !so->to_syslog;
	so->json = s->o.json || c->json == CONFIG_YES;
	so->log = s->o.log ? s->o.log : c->log;
}

/* Hooks and what the service's engines share; kernel_debug is set when the engine is made. */
static void set_hooks(struct service *s, struct engine_opts *o, struct service_engine *se)
{
	o->verbose = s->o.verbose;
	o->filter = on_filter;
	o->sink = on_report;
	o->hook_ctx = se;
}

/* The configuration's targets, then its watches (a watch may need a target's process). */
static int add_config_targets(struct service *s, const struct config *c)
{
	char err[512];
	int ret;

	for (size_t i = 0; i < c->nr_targets; i++) {
		ret = service_add_probe(s, &c->targets[i], true, 0, err, sizeof(err));
		if (ret < 0)
			goto fail;
	}
	for (size_t i = 0; i < c->nr_watches; i++) {
		ret = service_add_watch(s, &c->watches[i], 0, true, err, sizeof(err));
		if (ret < 0)
			goto fail;
	}
	return 0;
fail:
	pr_warn("%s: %s\n", s->o.config_path, err);
	return ret;
}

/* The user-mode engine, loaded at start; its ring buffer joins the service's epoll set. */
static int open_user_engine(struct service *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct engine_opts eo;
	int ret;

	service_mode_opts(&s->cfg, false, &eo);
	set_hooks(s, &eo, &s->user);
	/*
	 * The history for its targets' processes, as kcsanctl run has it: a
	 * process that ran before is let in with its threads' clocks joined
	 * (history.h), one found under trace_all is held until its sync
	 * functions are probed.
	 */
	eo.history = s->cfg.history != CONFIG_NO;
	/* Verified with the first user target (add_user()): a kernel-only service never needs it. */
	eo.traps_later = true;
	ret = engine__open(&eo, &s->user.e);
	if (!ret)
		ret = engine__start(s->user.e);
	if (!ret)
		engine__settle(s->user.e);
	if (!ret && epoll_ctl(s->epfd, EPOLL_CTL_ADD, engine__epoll_fd(s->user.e), &ev)) {
		ret = -errno;
		pr_warn("cannot poll the ring buffer: %s\n", strerror(-ret));
	}
	return ret;
}

/* The state before anything is opened; c is taken over. */
static struct service *service_alloc(const struct service_opts *o, struct config *c)
{
	struct service *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->next_id = 1;
	s->next_watch_id = 1;
	s->started = time(NULL);
	s->epfd = -1;
	s->user = (struct service_engine){ .s = s };
	s->kernel = (struct service_engine){ .s = s, .kernel = true };
	filter__init(&s->filter);
	s->cfg = *c;
	config__init(c);
	return s;
}

int service__new(const struct service_opts *o, struct config *c, struct service **out)
{
	struct service *s = service_alloc(o, c);
	struct sink_opts so;
	int ret;

	if (!s)
		return -ENOMEM;
	kcsand__set_print(service_print);
	/* Before any engine opens: what the service says on its own is filtered alike. */
	kcsand__set_verbose(o->verbose);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		pr_warn("cannot create an epoll fd: %s\n", strerror(-ret));
		goto fail;
	}
	/* The kernel engine is made with its first target, from kopts. */
	service_mode_opts(&s->cfg, true, &s->kopts);
	set_hooks(s, &s->kopts, &s->kernel);
	service_sink_opts(s, &s->cfg, &so);
	ret = sinks__open(&so, &s->sinks);
	if (!ret)
		ret = filter__copy(&s->filter, &s->cfg.filter);
	if (!ret)
		ret = open_user_engine(s);
	if (!ret)
		ret = add_config_targets(s, &s->cfg);
	if (!ret)
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

/*
 * One fd for main.c's poll: an epoll set holding each engine's ring-buffer
 * epoll fd (kernel.c adds and removes the kernel one).  Whichever
 * is ready, service__poll() drains both.
 */
int service__epoll_fd(const struct service *s)
{
	return s->epfd;
}

void service__poll(struct service *s)
{
	engine__poll(s->user.e, 0);
	if (s->kernel.e)
		engine__poll(s->kernel.e, 0);
	service_watch_tick(s);
}

int service__timeout_ms(const struct service *s)
{
	int t = engine__timeout_ms(s->user.e), k = s->kernel.e ? engine__timeout_ms(s->kernel.e) : -1;

	if (k >= 0 && (t < 0 || k < t))
		t = k;
	return t < 0 || t > 1000 ? 1000 : t;
}

void service__at_exit(struct service *s)
{
	struct service_totals t;

	if (s->o.foreground) {
		engine__print_summary(s->user.e, stderr);
		if (s->kernel.e)
			engine__print_summary(s->kernel.e, stderr);
	}
	service_totals(s, &t);
	if (t.c[KCSAND_CTR_RECORDS_DROPPED])
		service_say(s, LOG_WARNING, "%llu reports were lost to a full ring buffer",
			    (unsigned long long)t.c[KCSAND_CTR_RECORDS_DROPPED]);
}

void service__free(struct service *s)
{
	if (!s)
		return;
	service_free_watches(s);
	/* Kernel first: its kprobes take the longest to go (an RCU grace period each). */
	engine__close(s->kernel.e);
	engine__close(s->user.e);
	for (size_t i = 0; i < s->nr_probes; i++) {
		free(s->probes[i].t.binary);
		free(s->probes[i].t.functions);
		free(s->probes[i].t.specs);
	}
	for (size_t i = 0; i < s->nr_kdebug; i++)
		free(s->kdebug[i]);
	free(s->probes);
	for (size_t i = 0; i < RECENT_MAX; i++) {
		free(s->recent[i].text);
		free(s->recent[i].json);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	sinks__free(s->sinks);
	filter__free(&s->filter);
	config__free(&s->cfg);
	free(s);
	kcsand__set_print(NULL);
}
