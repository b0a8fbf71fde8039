// SPDX-License-Identifier: GPL-2.0-only
/*
 * SIGHUP: re-read the configuration and apply only what changed, or
 * nothing at all when something of it cannot be applied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include "engine/engine.h"
#include "engine/params.h"
#include "service.h"
#include "service_int.h"
#include "sink.h"

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
		if (config__target_eq(&c->targets[i], t))
			return true;
	return false;
}

static bool has_watch(const struct config *c, const struct config_watch *w)
{
	for (size_t i = 0; i < c->nr_watches; i++)
		if (config__watch_eq(&c->watches[i], w))
			return true;
	return false;
}

static bool kernel_debug_equal(const struct config *a, const struct config *b)
{
	if (a->nr_kernel_debug != b->nr_kernel_debug)
		return false;
	for (size_t i = 0; i < a->nr_kernel_debug; i++)
		if (strcmp(a->kernel_debug[i], b->kernel_debug[i]))
			return false;
	return true;
}

/* Parameters whose line changed, mode by mode: a value set through the socket stays otherwise. */
static void reload_params(struct service *s, const struct config *nc)
{
	const struct param_desc *all;
	size_t n;

	all = param__table(&n);
	for (size_t i = 0; i < n && i < CONFIG_MAX_PARAMS; i++) {
		for (int kernel = 0; kernel < 2; kernel++) {
			unsigned int def = service_param_default(&all[i], kernel);
			unsigned int was = s->cfg.set[i] ? s->cfg.values[i] : def;
			unsigned int now = nc->set[i] ? nc->values[i] : def;

			if (was != now)
				service_set_param_in(s, kernel, &all[i], now);
		}
	}
}

/* A kernel target of the configuration detached by a reload, to attach again on failure. */
struct detached {
	unsigned int id;
	struct config_target t;
};

/* What a reload changed so far, to undo when a later step fails. */
struct reload_undo {
	unsigned int added[CONFIG_MAX_TARGETS];
	struct detached gone[CONFIG_MAX_TARGETS];
	unsigned int watched[CONFIG_MAX_WATCHES];
	size_t nr_added, nr_gone, nr_watched;
};

/* Attach nc's targets of one mode that the running configuration lacks. */
static int add_targets(struct service *s, const struct config *nc, bool kernel,
		       struct reload_undo *u, char *err, size_t errlen)
{
	for (size_t i = 0; i < nc->nr_targets; i++) {
		int ret;

		if (nc->targets[i].kernel != kernel || has_target(&s->cfg, &nc->targets[i]))
			continue;
		ret = service_add_probe(s, &nc->targets[i], true, 0, err, errlen);
		if (ret < 0)
			return ret;
		u->added[u->nr_added++] = ret;
	}
	return 0;
}

/*
 * Detach the kernel targets that left the file before the new ones are
 * decoded: a new one may share functions with them, and their int3s would
 * be in the code (ktarget.h).  Kept in u, to attach again on failure.
 */
static int detach_gone_kernel(struct service *s, const struct config *nc, struct reload_undo *u,
			      char *err, size_t errlen)
{
	for (size_t i = 0; i < s->nr_probes;) {
		struct probe *p = &s->probes[i];
		char *specs;

		if (!p->from_config || !p->t.kernel || has_target(nc, &p->t)) {
			i++;
			continue;
		}
		specs = strdup(p->t.specs);
		if (!specs) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		u->gone[u->nr_gone++] = (struct detached){ p->id, { .kernel = true, .specs = specs } };
		service_remove_probe(s, p);	/* moves the last probe here */
	}
	return 0;
}

/* New watches after the targets: a watch may need a new target's process or engine. */
static int add_watches(struct service *s, const struct config *nc, struct reload_undo *u,
		       char *err, size_t errlen)
{
	for (size_t i = 0; i < nc->nr_watches; i++) {
		int ret;

		if (has_watch(&s->cfg, &nc->watches[i]))
			continue;
		ret = service_add_watch(s, &nc->watches[i], 0, true, err, errlen);
		if (ret < 0)
			return ret;
		u->watched[u->nr_watched++] = ret;
	}
	return 0;
}

/* Every step that can fail, in order; 0, or -errno with the reason in err. */
static int reload_attach(struct service *s, const struct config *nc, struct reload_undo *u,
			 char *err, size_t errlen)
{
	struct sink_opts so;
	int ret;

	ret = add_targets(s, nc, false, u, err, errlen);
	if (!ret)
		ret = detach_gone_kernel(s, nc, u, err, errlen);
	if (!ret)
		ret = add_targets(s, nc, true, u, err, errlen);
	if (!ret)
		ret = add_watches(s, nc, u, err, errlen);
	if (ret)
		return ret;
	service_sink_opts(s, nc, &so);
	ret = sinks__reconfigure(s->sinks, &so);
	if (ret)
		snprintf(err, errlen, "cannot open log %s: %s", so.log, strerror(-ret));
	return ret;
}

/* Nothing can fail from here: what left the file goes, nc becomes the configuration. */
static void reload_commit(struct service *s, struct config *nc)
{
	for (size_t i = 0; i < s->nr_watches;) {
		struct watch *w = &s->watches[i];

		if (w->from_config && !has_watch(nc, &w->cw))
			service_remove_watch(s, w);	/* moves the last watch here */
		else
			i++;
	}
	for (size_t i = 0; i < s->nr_probes;) {
		struct probe *p = &s->probes[i];

		if (p->from_config && !has_target(nc, &p->t))
			service_remove_probe(s, p);	/* moves the last probe here */
		else
			i++;
	}
	reload_params(s, nc);
	if (!filters_equal(&s->cfg.filter, &nc->filter)) {
		struct filter nf;

		if (!filter__copy(&nf, &nc->filter))
			service_replace_filter(s, &nf);
	}
	if ((nc->socket || s->cfg.socket) && !s->o.socket &&
	    (!nc->socket || !s->cfg.socket || strcmp(nc->socket, s->cfg.socket)))
		service_say(s, LOG_WARNING, "reload: a new socket path takes a restart");
	if (s->kernel.e && !kernel_debug_equal(&s->cfg, nc))
		service_say(s, LOG_WARNING, "reload: the kernel_debug files apply once every kernel "
					    "target is gone and one is added again (or after a restart)");
	config__free(&s->cfg);
	s->cfg = *nc;
	config__init(nc);
	service_kernel_gc(s);
	service_say(s, LOG_INFO, "reloaded %s: %zu probes (%zu kernel), %zu watches, %zu sites",
		    s->o.config_path, s->nr_probes, service_nr_probes(s, true), s->nr_watches,
		    engine__nr_sites(s->user.e) + (s->kernel.e ? engine__nr_sites(s->kernel.e) : 0));
}

/* Undo reload_attach(): new watches and targets go, detached kernel targets come back. */
static void reload_rollback(struct service *s, const struct reload_undo *u)
{
	s->loading = NULL;	/* a kernel engine made again takes the running configuration's files */
	for (size_t i = 0; i < u->nr_watched; i++) {
		struct watch *w = service_find_watch(s, u->watched[i]);

		if (w)
			service_remove_watch(s, w);
	}
	for (size_t i = 0; i < u->nr_added; i++) {
		struct probe *p = service_find_probe(s, u->added[i]);

		if (p)
			service_remove_probe(s, p);
	}
	for (size_t i = 0; i < u->nr_gone; i++) {
		char why[256];

		if (service_add_probe(s, &u->gone[i].t, true, u->gone[i].id, why, sizeof(why)) < 0)
			service_say(s, LOG_ERR, "reload: cannot attach probe %u (kernel %s) again: "
						"%s", u->gone[i].id, u->gone[i].t.specs, why);
	}
	service_kernel_gc(s);
}

/*
 * Re-read the configuration and apply what changed.  Every new target is
 * attached first, so that a failure changes nothing: user targets, then
 * kernel ones, then new watches; watches that left the file go with the
 * targets that did, once nothing can fail.  A kernel target that goes is
 * detached before the new kernel targets are decoded; on failure it is
 * attached again under its id.
 */
int service__reload(struct service *s, char *err, size_t errlen)
{
	/* Both large: off the stack. */
	struct config *nc = malloc(sizeof(*nc));
	struct reload_undo *u = calloc(1, sizeof(*u));
	int ret = -ENOMEM;

	if (!nc || !u) {
		snprintf(err, errlen, "out of memory");
		free(nc);
		free(u);
		return ret;
	}
	config__init(nc);
	ret = config__load(s->o.config_path, nc, err, errlen);
	if (!ret) {
		s->loading = nc;
		ret = reload_attach(s, nc, u, err, errlen);
		if (ret)
			reload_rollback(s, u);
		else
			reload_commit(s, nc);
	}
	for (size_t i = 0; i < u->nr_gone; i++)
		free(u->gone[i].t.specs);
	s->loading = NULL;
	config__free(nc);
	free(nc);
	free(u);
	return ret;
}
