// SPDX-License-Identifier: GPL-2.0-only
/*
 * The service's kernel-mode engine: made when the first kernel target
 * comes (`target kernel`, `probe add kernel`) or the first kernel watch
 * (with no kprobe then), freed when the last of them goes.
 * It is an engine of its own because the kernel flag changes the
 * defaults (skip_watch, udelay_task), turns the site sampler off, arms
 * its hardware watchpoints on every CPU, symbolizes through kallsyms and
 * the kernel_debug files, and reads the context from preempt_count.
 *
 * What it shares with the user engine is decided in the service: the
 * filter list (pushed into both site tables), the sinks, the dedup
 * interval, the probe ids (one counter), and the live parameters (`set`
 * changes both, service.c).  Its counters survive it in s->retired, so
 * that stats never go back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/epoll.h>
#include "engine/engine.h"
#include "service_int.h"

struct add_kernel_args {
	struct engine *e;
	const char *specs[CONFIG_MAX_SPECS];
	size_t nr_specs;
};

/* Load and attach a fresh engine; -errno with the reason in err. */
static int start_engine(struct engine *e, char *err, size_t errlen)
{
	service_why_begin();
	return service_why(engine__start(e), err, errlen);
}

static int add_kernel(const struct add_kernel_args *a, char *err, size_t errlen)
{
	service_why_begin();
	return service_why(engine__add_kernel(a->e, a->specs, a->nr_specs), err, errlen);
}

static void free_kdebug(struct service *s)
{
	for (size_t i = 0; i < s->nr_kdebug; i++)
		free(s->kdebug[i]);
	s->nr_kdebug = 0;
	s->kopts.kernel_debug = NULL;
	s->kopts.nr_kernel_debug = 0;
}

/*
 * The engine keeps kopts' kernel_debug pointers: it gets copies of the
 * configuration's files, which a reload frees.  During a reload the new
 * configuration's files are the ones to use.
 */
static int take_kdebug(struct service *s)
{
	const struct config *c = s->loading ? s->loading : &s->cfg;

	free_kdebug(s);
	for (size_t i = 0; i < c->nr_kernel_debug; i++) {
		s->kdebug[i] = strdup(c->kernel_debug[i]);
		if (!s->kdebug[i]) {
			free_kdebug(s);
			return -ENOMEM;
		}
		s->nr_kdebug++;
	}
	s->kopts.kernel_debug = (const char *const *)s->kdebug;
	s->kopts.nr_kernel_debug = s->nr_kdebug;
	return 0;
}

/* A fresh engine: decode the first target before loading, so a failure loads nothing. */
static int new_engine(struct service *s, struct add_kernel_args *a, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int obj, ret;

	ret = take_kdebug(s);
	if (!ret)
		ret = engine__open(&s->kopts, &a->e);
	if (ret) {
		snprintf(err, errlen, "cannot make the kernel-mode engine: %s", strerror(-ret));
		return ret;
	}
	obj = add_kernel(a, err, errlen);
	if (obj >= 0) {
		ret = start_engine(a->e, err, errlen);
		if (!ret && epoll_ctl(s->epfd, EPOLL_CTL_ADD, engine__epoll_fd(a->e), &ev)) {
			ret = -errno;
			snprintf(err, errlen, "cannot poll the kernel ring buffer: %s",
				 strerror(-ret));
		}
		if (ret)
			obj = ret;
	}
	if (obj < 0) {
		engine__close(a->e);	/* detaches whatever attached */
		return obj;
	}
	s->kernel.e = a->e;
	service_say(s, LOG_INFO, "kernel-mode engine loaded (skip_watch %u, udelay_task %u)",
		    s->kopts.params.v[PARAM_SKIP_WATCH],
		    s->kopts.params.v[PARAM_UDELAY_TASK]);
	return obj;
}

int service_kernel_engine(struct service *s, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct engine *e;
	int ret;

	if (s->kernel.e)
		return 0;
	ret = take_kdebug(s);
	if (!ret)
		ret = engine__open(&s->kopts, &e);
	if (ret) {
		snprintf(err, errlen, "cannot make the kernel-mode engine: %s", strerror(-ret));
		return ret;
	}
	ret = start_engine(e, err, errlen);
	if (!ret && epoll_ctl(s->epfd, EPOLL_CTL_ADD, engine__epoll_fd(e), &ev)) {
		ret = -errno;
		snprintf(err, errlen, "cannot poll the kernel ring buffer: %s", strerror(-ret));
	}
	if (ret) {
		engine__close(e);
		return ret;
	}
	s->kernel.e = e;
	service_say(s, LOG_INFO, "kernel-mode engine loaded for a watch, no kprobe (skip_watch %u, "
		    "udelay_task %u)", s->kopts.params.v[PARAM_SKIP_WATCH],
		    s->kopts.params.v[PARAM_UDELAY_TASK]);
	return 0;
}

int service_kernel_add(struct service *s, const struct config_target *t, char *err,
		       size_t errlen)
{
	struct add_kernel_args a = { .e = s->kernel.e };
	char buf[CONFIG_MAX_LINE];
	int n;

	n = config__split_specs(t->specs, buf, sizeof(buf), a.specs, CONFIG_MAX_SPECS);
	if (n <= 0) {
		snprintf(err, errlen, "kernel target: %s", n ? "too many specs" : "no spec");
		return n ? n : -EINVAL;
	}
	a.nr_specs = n;
	if (!a.e)
		return new_engine(s, &a, err, errlen);
	return add_kernel(&a, err, errlen);
}

static void totals_add(struct service_totals *t, struct engine *e)
{
	uint64_t c[KCSAND_CTR_COUNT], f[ENGINE_FIG_COUNT];
	struct hwbp_stats hw_st;

	engine__counters(e, c);
	for (int i = 0; i < KCSAND_CTR_COUNT; i++)
		t->c[i] += c[i];
	engine__figures(e, f);
	for (int i = 0; i < ENGINE_FIG_COUNT; i++)
		t->fig[i] += f[i];
	if (!engine__hw_stats(e, &hw_st)) {
		/* What stats shows of them (request.c), from the same list. */
#define ADD_HW(field, name) t->hw.field += hw_st.field;
		HWBP_STATS_SHOWN(ADD_HW)
#undef ADD_HW
	}
}

void service_kernel_gc(struct service *s)
{
	struct engine *e = s->kernel.e;

	if (!e || service_nr_probes(s, true) || service_nr_watches(s, true))
		return;
	/* Reports still in its ring buffer go out first. */
	engine__poll(e, 0);
	totals_add(&s->retired, e);
	s->retired.fig[ENGINE_FIG_SITES] = 0;	/* nothing of it is attached any more */
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, engine__epoll_fd(e), NULL);
	s->kernel.e = NULL;
	engine__close(e);
	free_kdebug(s);
	service_say(s, LOG_INFO, "kernel-mode engine freed: no kernel target or watch left");
}

void service_totals(const struct service *s, struct service_totals *t)
{
	*t = s->retired;
	totals_add(t, s->user.e);
	if (s->kernel.e)
		totals_add(t, s->kernel.e);
}
