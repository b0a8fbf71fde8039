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
		if (config_target_eq(&c->targets[i], t))
			return true;
	return false;
}

static bool has_watch(const struct config *c, const struct config_watch *w)
{
	for (size_t i = 0; i < c->nr_watches; i++)
		if (config_watch_eq(&c->watches[i], w))
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

	all = params_all(&n);
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

/*
 * Re-read the configuration and apply what changed.  Every new target is
 * attached first, so that a failure changes nothing: user targets, then
 * kernel ones, then new watches; watches that left the file go with the
 * targets that did, once nothing can fail.  A kernel target that goes is detached before the new
 * kernel targets are decoded, because a new one may share functions with
 * it and its int3s would be in the code (ktarget.h); on failure it is
 * attached again under its id.
 */
int service__reload(struct service *s, char *err, size_t errlen)
{
	struct config *nc = malloc(sizeof(*nc));	/* large: off the stack */
	struct sink_opts so;
	unsigned int added[CONFIG_MAX_TARGETS];
	struct detached gone[CONFIG_MAX_TARGETS];
	unsigned int watched[CONFIG_MAX_WATCHES];
	size_t nr_added = 0, nr_gone = 0, nr_watched = 0;
	int ret;

	if (!nc) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	config_init(nc);
	ret = config_load(s->o.config_path, nc, err, errlen);
	if (ret)
		goto out;
	s->loading = nc;
	for (size_t i = 0; i < nc->nr_targets; i++) {
		if (nc->targets[i].kernel || has_target(&s->cfg, &nc->targets[i]))
			continue;
		ret = service_add_probe(s, &nc->targets[i], true, 0, err, errlen);
		if (ret < 0)
			goto rollback;
		added[nr_added++] = ret;
	}
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
			ret = -ENOMEM;
			goto rollback;
		}
		gone[nr_gone++] = (struct detached){ p->id, { .kernel = true, .specs = specs } };
		service_remove_probe(s, p);	/* moves the last probe here */
	}
	for (size_t i = 0; i < nc->nr_targets; i++) {
		if (!nc->targets[i].kernel || has_target(&s->cfg, &nc->targets[i]))
			continue;
		ret = service_add_probe(s, &nc->targets[i], true, 0, err, errlen);
		if (ret < 0)
			goto rollback;
		added[nr_added++] = ret;
	}
	/* New watches after the targets: a watch may need a new target's process or engine. */
	for (size_t i = 0; i < nc->nr_watches; i++) {
		if (has_watch(&s->cfg, &nc->watches[i]))
			continue;
		ret = service_add_watch(s, &nc->watches[i], 0, true, err, errlen);
		if (ret < 0)
			goto rollback;
		watched[nr_watched++] = ret;
	}
	service_sink_opts(s, nc, &so);
	ret = sinks__reconfigure(s->sinks, &so);
	if (ret) {
		snprintf(err, errlen, "cannot open log %s: %s", so.log, strerror(-ret));
		goto rollback;
	}

	/* Committed from here on. */
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
	config_free(&s->cfg);
	s->cfg = *nc;
	config_init(nc);
	service_kernel_gc(s);
	service_say(s, LOG_INFO, "reloaded %s: %zu probes (%zu kernel), %zu watches, %zu sites",
		    s->o.config_path, s->nr_probes, service_nr_probes(s, true), s->nr_watches,
		    engine__nr_sites(s->user.e) + (s->kernel.e ? engine__nr_sites(s->kernel.e) : 0));
	ret = 0;
	goto out;
rollback:
	s->loading = NULL;	/* a kernel engine made again takes the running configuration's files */
	for (size_t i = 0; i < nr_watched; i++) {
		struct watch *w = service_find_watch(s, watched[i]);

		if (w)
			service_remove_watch(s, w);
	}
	for (size_t i = 0; i < nr_added; i++) {
		struct probe *p = service_find_probe(s, added[i]);

		if (p)
			service_remove_probe(s, p);
	}
	for (size_t i = 0; i < nr_gone; i++) {
		char why[256];

		if (service_add_probe(s, &gone[i].t, true, gone[i].id, why, sizeof(why)) < 0)
			service_say(s, LOG_ERR, "reload: cannot attach probe %u (kernel %s) again: "
						"%s", gone[i].id, gone[i].t.specs, why);
	}
	service_kernel_gc(s);
out:
	for (size_t i = 0; i < nr_gone; i++)
		free(gone[i].t.specs);
	s->loading = NULL;
	config_free(nc);
	free(nc);
	return ret;
}
