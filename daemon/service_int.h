/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The service's state, shared by service.c (probes, filters, reports,
 * reload) and request.c (executing control requests).  Private to them.
 */
#ifndef KCSAND_SERVICE_INT_H
#define KCSAND_SERVICE_INT_H

#include <stdbool.h>
#include <time.h>
#include "config.h"
#include "filter.h"
#include "service.h"

struct engine;
struct sinks;
struct param_desc;

/* Reports kept for `reports` without follow. */
#define RECENT_MAX 32

/*
 * A probed target.  id is what `probe list` shows and `probe remove`
 * takes; obj is the engine's object id.  Targets of the configuration are
 * marked so that a reload touches only those, never the socket's.
 */
struct probe {
	unsigned int id;
	struct config_target t;
	int obj;
	long sites;
	bool from_config;
};

struct recent {
	char *text, *json;
};

struct service {
	struct service_opts o;
	struct config cfg;		/* as loaded: a reload diffs against it */
	struct engine *e;
	struct filter filter;		/* the live list: config, then socket changes */
	struct sinks *sinks;
	struct ctl_server *ctl;
	struct probe *probes;
	size_t nr_probes;
	unsigned int next_id;
	struct recent recent[RECENT_MAX];
	size_t nr_recent;		/* total pushed; the ring holds the last RECENT_MAX */
	time_t started;
};

__attribute__((format(printf, 3, 4)))
void service_say(const struct service *s, int prio, const char *fmt, ...);
/* Make nf (taken over) the live filter list and push it into the site table. */
int service_replace_filter(struct service *s, struct filter *nf);
/* Attach a target; its probe id, or -errno with the reason in err. */
int service_add_probe(struct service *s, const struct config_target *t, bool from_config,
		      char *err, size_t errlen);
struct probe *service_find_probe(struct service *s, unsigned int id);
void service_remove_probe(struct service *s, struct probe *p);
int service_set_param(struct service *s, const struct param_desc *p, unsigned int v);

#endif
