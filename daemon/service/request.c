// SPDX-License-Identifier: GPL-2.0-only
/*
 * Executing the control socket's requests against the service, and the
 * replies' text and JSON: stats in KCSAN's debugfs layout, the filter
 * list, parameters, probes, kept reports.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "control.h"
#include "engine/engine.h"
#include "engine/params.h"
#include "history/history.h"
#include "kmsg.h"
#include "report/report.h"
#include "sampler/sampler.h"
#include "service.h"
#include "service_int.h"
#include "sink.h"
#include "util/json.h"

/* A JSON array of strings. */
static struct json_object *json_strings(const char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json__string(v[i]));
	return a;
}

static struct json_object *filter_json(const struct filter *f)
{
	struct json_object *o = json_object_new_object();

	json__add(o, "mode", json__string(f->whitelist ? "whitelist" : "blacklist"));
	json__add(o, "functions", json_strings((const char *const *)f->funcs, f->n));
	return o;
}

static void print_filter(const struct service *s, FILE *out, bool json)
{
	const struct filter *f = &s->filter;

	if (json) {
		json__print(out, filter_json(f));
		return;
	}
	/* Byte for byte what KCSAN's debugfs file prints, trailing space included. */
	fprintf(out, "%s functions: %s\n", f->whitelist ? "whitelisted" : "blacklisted",
		f->n ? "" : "none");
	for (size_t i = 0; i < f->n; i++)
		fprintf(out, " %s\n", f->funcs[i]);
}

/* kcsand's own figures, after KCSAN's: prefix + name, prefix "kernel_" or none (NULL). */
struct own_stat {
	const char *name;
	unsigned long long v;
	const char *prefix;
};

/*
 * e's sampler figures (sampler.h's SAMPLER_FIGURES), by the summary's names
 * after prefix; how many, 0 with no engine or no sampler.
 */
static size_t sampler_stats(const struct engine *e, const char *prefix, struct own_stat *o)
{
	struct sampler_stats ss;
	uint64_t v[SAMPLER_FIG_COUNT];
	size_t n = 0;

	if (!e || engine__sampler_stats(e, &ss))
		return 0;
	sampler_stats__figures(&ss, v);
	for (int i = 0; i < SAMPLER_FIG_COUNT; i++)
		if (sampler_figure__shown(i, &ss))
			o[n++] = (struct own_stat){ sampler_figure__name(i), v[i], prefix };
	return n;
}

static size_t own_stats(const struct service *s, const struct service_totals *t,
			struct own_stat *o)
{
	struct history_stats hb;
	struct kmsg_stats ks;
	size_t n = 0;

	for (int i = KCSAND_CTR_NR_KCSAN; i < KCSAND_CTR_COUNT; i++)
		o[n++] = (struct own_stat){ counter__name(i), t->c[i] };
	for (int i = 0; i < ENGINE_FIG_COUNT; i++)
		o[n++] = (struct own_stat){ engine_figure__name(i), t->fig[i] };
	/* Hardware watchpoints (watches and escalations), both engines. */
#define OWN_HW(field, name) o[n++] = (struct own_stat){ #name, t->hw.field };
	HWBP_STATS_SHOWN(OWN_HW)
#undef OWN_HW
	o[n++] = (struct own_stat){ "hw_slots_in_use", (unsigned long long)
				    engine__hw_slots_in_use(s->user.e) +
				    (s->kernel.e ? engine__hw_slots_in_use(s->kernel.e) : 0) };
	o[n++] = (struct own_stat){ "watches", s->nr_watches };
	/* The user engine's history: what it traced and checked, processes it let in. */
	if (!engine__history_stats(s->user.e, &hb)) {
#define OWN_HB(ID, name) o[n++] = (struct own_stat){ #name, hb.ctr[KCSAND_HB_CTR_##ID] };
		HISTORY_STATS_SHOWN(OWN_HB)
#undef OWN_HB
		o[n++] = (struct own_stat){ "history_processes_held", hb.held };
	}
	/* Each engine's site sampler, once attached: armed of all, and what it expects. */
	n += sampler_stats(s->user.e, NULL, o + n);
	n += sampler_stats(s->kernel.e, "kernel_", o + n);
	/* The kernel log sink, when on: what its rate limit dropped. */
	if (sinks__kmsg_stats(s->sinks, &ks)) {
		o[n++] = (struct own_stat){ "kmsg_reports", ks.reports };
		o[n++] = (struct own_stat){ "kmsg_dropped", ks.dropped };
		o[n++] = (struct own_stat){ "kmsg_lines_lost", ks.lines_lost };
	}
	return n;
}

static const char *own_name(const struct own_stat *o, char *buf, size_t len)
{
	if (!o->prefix)
		return o->name;
	snprintf(buf, len, "%s%s", o->prefix, o->name);
	return buf;
}

/* on/off reaches both engines together: the user engine's value is the service's. */
static unsigned int enabled(const struct service *s)
{
	unsigned int v = 0;

	engine__get_param(s->user.e, "enabled", &v);
	return v;
}

/*
 * One set of counters, as KCSAN has one for the whole kernel: each is the
 * sum over the user engine, the kernel engine and the kernel engines freed
 * before (service_totals()).
 */
static void print_stats(struct service *s, FILE *out, bool json)
{
	struct service_totals t;
	struct own_stat own[48];
	char name[64];
	size_t n;

	service_totals(s, &t);
	n = own_stats(s, &t, own);
	if (json) {
		struct json_object *o = json_object_new_object();
		struct json_object *c = json_object_new_object(), *k = json_object_new_object();

		json__add(o, "enabled", json_object_new_int64(enabled(s)));
		for (int i = 0; i < KCSAND_CTR_NR_KCSAN; i++)
			json__add(c, counter__name(i), json_object_new_uint64(t.c[i]));
		json__add(o, "counters", c);
		json__add(o, "filter", filter_json(&s->filter));
		for (size_t i = 0; i < n; i++)
			json__add(k, own_name(&own[i], name, sizeof(name)),
				  json_object_new_uint64(own[i].v));
		json__add(o, "kcsand", k);
		json__print(out, o);
		fputc('\n', out);
		return;
	}
	/* KCSAN's show_info(): enabled, the nine counters, a blank line, the filter list. */
	fprintf(out, "enabled: %u\n", enabled(s));
	for (int i = 0; i < KCSAND_CTR_NR_KCSAN; i++)
		fprintf(out, "%s: %llu\n", counter__name(i), (unsigned long long)t.c[i]);
	fprintf(out, "\n");
	print_filter(s, out, false);
	fprintf(out, "\n");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s: %llu\n", own_name(&own[i], name, sizeof(name)), own[i].v);
}

/*
 * What the daemon's allocations hold now, in kB: live blocks, not the pages
 * malloc keeps after a burst (RSS), so that a service's growth over weeks is
 * seen for what it is.
 */
static unsigned long heap_in_use_kb(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (mi.uordblks + mi.hblkhd) / 1024;
}

static void print_status(struct service *s, FILE *out, bool json)
{
	struct service_totals t;
	long up = time(NULL) - s->started;
	size_t nk = service_nr_probes(s, true);
	size_t ksites = s->kernel.e ? engine__nr_sites(s->kernel.e) : 0;

	service_totals(s, &t);
	if (json) {
		struct json_object *o = json_object_new_object();

		json__add(o, "version", json__string(KCSAND_VERSION));
		json__add(o, "pid", json_object_new_int64(getpid()));
		json__add(o, "uptime_s", json_object_new_int64(up));
		json__add(o, "config", json__string(s->o.config_path));
		json__add(o, "socket", json__string(service__socket_path(s)));
		json__add(o, "enabled", json_object_new_int64(enabled(s)));
		json__add(o, "filter_mode", json__string(s->filter.whitelist ? "whitelist" :
									  "blacklist"));
		json__add(o, "filter_functions", json_object_new_uint64(s->filter.n));
		json__add(o, "probes", json_object_new_uint64(s->nr_probes));
		json__add(o, "sites", json_object_new_uint64(t.fig[ENGINE_FIG_SITES]));
		json__add(o, "kernel_probes", json_object_new_uint64(nk));
		json__add(o, "kernel_sites", json_object_new_uint64(ksites));
		json__add(o, "reports", json_object_new_uint64(t.fig[ENGINE_FIG_REPORTS]));
		json__add(o, "heap_in_use_kb", json_object_new_uint64(heap_in_use_kb()));
		json__print(out, o);
		fputc('\n', out);
		return;
	}
	fprintf(out, "kcsand %s, pid %d, up %ld s\n", KCSAND_VERSION, getpid(), up);
	fprintf(out, "config: %s\nsocket: %s\n", s->o.config_path, service__socket_path(s));
	fprintf(out, "enabled: %u\n", enabled(s));
	fprintf(out, "filter: %s, %zu function%s\n", s->filter.whitelist ? "whitelist" :
		"blacklist", s->filter.n, s->filter.n == 1 ? "" : "s");
	fprintf(out, "probes: %zu, %zu sites\n", s->nr_probes,
		(size_t)t.fig[ENGINE_FIG_SITES]);
	if (s->kernel.e)
		fprintf(out, "kernel: %zu probe%s, %zu sites\n", nk, nk == 1 ? "" : "s", ksites);
	fprintf(out, "reports: %llu\n", (unsigned long long)t.fig[ENGINE_FIG_REPORTS]);
	fprintf(out, "heap in use: %lu kB\n", heap_in_use_kb());
}

/*
 * `set` gives both modes one value, but until then each mode has its own
 * default (udelay_task: 400 µs for user targets, 80 for kernel ones): a
 * parameter whose values differ is printed per mode,
 *	udelay_task: 400 (user), 80 (kernel)
 * and in JSON as {"user":400,"kernel":80}.  Without a kernel engine,
 * only the user engine's values.
 */
static void print_params(struct service *s, const struct param_desc *only, FILE *out, bool json)
{
	struct json_object *o = json ? json_object_new_object() : NULL;
	const struct param_desc *all;
	size_t n;

	all = param__table(&n);
	for (size_t i = 0; i < n; i++) {
		struct json_object *modes;
		unsigned int v, kv;

		if ((only && only != &all[i]) || engine__get_param(s->user.e, all[i].name, &v))
			continue;
		if (!s->kernel.e || engine__get_param(s->kernel.e, all[i].name, &kv))
			kv = v;
		if (json && kv != v) {
			modes = json_object_new_object();
			json__add(modes, "user", json_object_new_int64(v));
			json__add(modes, "kernel", json_object_new_int64(kv));
			json__add(o, all[i].name, modes);
		} else if (json) {
			json__add(o, all[i].name, json_object_new_int64(v));
		} else if (kv != v) {
			fprintf(out, "%s: %u (user), %u (kernel)\n", all[i].name, v, kv);
		} else {
			fprintf(out, "%s: %u\n", all[i].name, v);
		}
	}
	if (json) {
		json__print(out, o);
		fputc('\n', out);
	}
}

static struct json_object *probe_json(const struct probe *p)
{
	struct json_object *o = json_object_new_object();

	json__add(o, "id", json_object_new_int64(p->id));
	json__add(o, "kind", json__string(p->t.kernel ? "kernel" : "user"));
	if (p->t.kernel) {
		const char *specs[CONFIG_MAX_SPECS];
		char buf[CONFIG_MAX_LINE];
		int n = config__split_specs(p->t.specs, buf, sizeof(buf), specs, CONFIG_MAX_SPECS);

		json__add(o, "specs", json_strings(specs, n > 0 ? n : 0));
	} else {
		json__add(o, "binary", json__string(p->t.binary));
		json__add(o, "functions", json__string_or_null(p->t.functions));
		json__add(o, "pid", json_object_new_int64(p->t.pid));
	}
	json__add(o, "sites", json_object_new_int64(p->sites));
	json__add(o, "from_config", json_object_new_boolean(p->from_config));
	return o;
}

static void print_probes(struct service *s, FILE *out, bool json)
{
	if (json) {
		struct json_object *a = json_object_new_array();

		for (size_t i = 0; i < s->nr_probes; i++)
			json_object_array_add(a, probe_json(&s->probes[i]));
		json__print(out, a);
		fputc('\n', out);
		return;
	}
	for (size_t i = 0; i < s->nr_probes; i++) {
		const struct probe *p = &s->probes[i];

		if (p->t.kernel) {
			fprintf(out, "%u: kernel %s sites=%ld%s\n", p->id, p->t.specs, p->sites,
				p->from_config ? " (config)" : "");
			continue;
		}
		fprintf(out, "%u: user %s functions=%s pid=", p->id, p->t.binary,
			p->t.functions ? p->t.functions : "*");
		if (p->t.pid)
			fprintf(out, "%d", p->t.pid);
		else
			fprintf(out, "all");
		fprintf(out, " sites=%ld%s\n", p->sites, p->from_config ? " (config)" : "");
	}
}

static void print_recent(struct service *s, FILE *out, bool json)
{
	size_t first = s->nr_recent > RECENT_MAX ? s->nr_recent - RECENT_MAX : 0;

	for (size_t i = first; i < s->nr_recent; i++) {
		const struct recent *r = &s->recent[i % RECENT_MAX];

		fputs(json ? r->json : r->text, out);
	}
}

/*
 * filter add|remove, blacklist, whitelist: applied to a copy of the list,
 * so that a failure changes nothing.
 */
static int exec_filter(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		       size_t errlen)
{
	struct filter nf;
	int ret;

	ret = filter__copy(&nf, &s->filter);
	if (ret)
		return ret;
	for (int i = 0; i < r->argc && !ret; i++) {
		switch (r->op) {
		case CTL_FILTER_ADD:
			ret = filter__add(&nf, r->argv[i]);
			if (ret == -ENOSPC)
				snprintf(err, errlen, "the filter list is full (%d functions)",
					 FILTER_MAX_FUNCS);
			break;
		case CTL_FILTER_REMOVE:
			ret = filter__remove(&nf, r->argv[i]);
			if (ret == -ENOENT)
				snprintf(err, errlen, "%s is not in the filter list", r->argv[i]);
			break;
		case CTL_BLACKLIST:
		case CTL_WHITELIST:
			break;
		default:
			ret = -EINVAL;
		}
	}
	if (r->op == CTL_BLACKLIST || r->op == CTL_WHITELIST)
		nf.whitelist = r->op == CTL_WHITELIST;
	if (ret) {
		filter__free(&nf);
		return ret;
	}
	return service_replace_filter(s, &nf);
}

/* probe add: attach, then the new probe's id and sites. */
static int add_probe(struct service *s, const struct config_target *t, FILE *out, bool json,
		     char *err, size_t errlen)
{
	int ret = service_add_probe(s, t, false, 0, err, errlen);
	struct probe *p;

	if (ret < 0)
		return ret;
	p = service_find_probe(s, ret);
	if (json) {
		struct json_object *o = json_object_new_object();

		json__add(o, "id", json_object_new_int64(ret));
		json__add(o, "sites", json_object_new_int64(p ? p->sites : 0));
		json__print(out, o);
		fputc('\n', out);
	} else {
		fprintf(out, "probe %d: %ld sites\n", ret, p ? p->sites : 0);
	}
	return 0;
}

/* A kernel target's specs, as the configuration keeps them: one string. */
static int kernel_target(const struct ctl_request *r, char *buf, size_t len,
			 struct config_target *t)
{
	size_t n = 0;

	for (int i = 0; i < r->argc; i++) {
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "", r->argv[i]);
		if (n >= len)
			return -E2BIG;
	}
	*t = (struct config_target){ .kernel = true, .specs = buf };
	return 0;
}

/* watch add: arm, then the new watch's id and slot. */
static int add_watch(struct service *s, const struct watch_args *a, FILE *out, bool json,
		     char *err, size_t errlen)
{
	struct config_watch cw = { (char *)a->spec, a->pid, a->kernel };
	int ret = service_add_watch(s, &cw, a->duration_s, false, err, errlen);
	struct watch *w;

	if (ret < 0)
		return ret;
	w = service_find_watch(s, ret);
	if (json) {
		struct json_object *o = json_object_new_object();

		json__add(o, "id", json_object_new_int64(ret));
		json__add(o, "pid", json_object_new_int64(w && !a->kernel ? w->pid : 0));
		json__add(o, "slot", json_object_new_int64(w ? w->slot : -1));
		json__print(out, o);
		fputc('\n', out);
	} else if (a->kernel) {
		fprintf(out, "watch %d: kernel %s, slot %d\n", ret, a->spec, w ? w->slot : -1);
	} else {
		fprintf(out, "watch %d: %s in process %d, slot %d\n", ret, a->spec,
			w ? w->pid : 0, w ? w->slot : -1);
	}
	return 0;
}

/* probe add user|kernel, probe remove, probe list. */
static int exec_probe(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		      size_t errlen)
{
	char specs[CTL_MAX_LINE + 1];
	struct config_target t;
	struct probe *p;

	switch (r->op) {
	case CTL_PROBE_ADD_USER:
		t = (struct config_target){ (char *)r->binary, (char *)r->functions, r->pid };
		return add_probe(s, &t, out, r->json, err, errlen);
	case CTL_PROBE_ADD_KERNEL:
		if (kernel_target(r, specs, sizeof(specs), &t)) {
			snprintf(err, errlen, "probe add kernel: specs too long");
			return -E2BIG;
		}
		return add_probe(s, &t, out, r->json, err, errlen);
	case CTL_PROBE_REMOVE:
		p = service_find_probe(s, r->id);
		if (!p) {
			snprintf(err, errlen, "no probe %u", r->id);
			return -ENOENT;
		}
		service_remove_probe(s, p);
		return 0;
	default:
		print_probes(s, out, r->json);
		return 0;
	}
}

/* watch add, watch remove, watch list. */
static int exec_watch(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		      size_t errlen)
{
	struct watch *w;

	switch (r->op) {
	case CTL_WATCH_ADD:
		return add_watch(s, &r->watch, out, r->json, err, errlen);
	case CTL_WATCH_REMOVE:
		w = service_find_watch(s, r->id);
		if (!w) {
			snprintf(err, errlen, "no watch %u", r->id);
			return -ENOENT;
		}
		service_remove_watch(s, w);
		return 0;
	default:
		service_print_watches(s, out, r->json);
		return 0;
	}
}

static int exec_onoff(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		      size_t errlen)
{
	service_set_param(s, param__find("enabled"), r->op == CTL_ON);
	return 0;
}

static int exec_status(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		       size_t errlen)
{
	print_status(s, out, r->json);
	return 0;
}

static int exec_stats(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		      size_t errlen)
{
	print_stats(s, out, r->json);
	return 0;
}

static int exec_filter_list(struct service *s, const struct ctl_request *r, FILE *out,
			    char *err, size_t errlen)
{
	print_filter(s, out, r->json);
	if (r->json)
		fputc('\n', out);
	return 0;
}

static int exec_get(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		    size_t errlen)
{
	print_params(s, r->param, out, r->json);
	return 0;
}

static int exec_set(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		    size_t errlen)
{
	service_set_param(s, r->param, r->value);
	return 0;
}

static int exec_reports(struct service *s, const struct ctl_request *r, FILE *out, char *err,
			size_t errlen)
{
	print_recent(s, out, r->json);
	return r->follow ? CTL_EXEC_FOLLOW : 0;
}

static int exec_help(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		     size_t errlen)
{
	fputs(ctl_help_text, out);
	return 0;
}

/* Each request's function, from protocol.h's CTL_REQUESTS. */
typedef int (*exec_fn)(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		       size_t errlen);
#define EXEC_FN(OP, word, access, fn, help) [CTL_##OP] = fn,
static const exec_fn exec_fns[CTL_NR_OPS] = {
	CTL_REQUESTS(EXEC_FN)
};
#undef EXEC_FN

static int exec(struct service *s, const struct ctl_request *r, FILE *out, char *err,
		size_t errlen)
{
	if ((unsigned int)r->op >= CTL_NR_OPS || !exec_fns[r->op]) {
		snprintf(err, errlen, "request not implemented");
		return -ENOSYS;
	}
	return exec_fns[r->op](s, r, out, err, errlen);
}

int service__exec(void *ctx, const struct ctl_request *r, FILE *out, char *err, size_t errlen)
{
	struct service *s = ctx;
	int ret = exec(s, r, out, err, errlen);

	/* A kernel engine left without targets (probe remove, a failed add) goes. */
	service_kernel_gc(s);
	return ret;
}
