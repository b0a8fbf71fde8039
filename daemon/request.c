// SPDX-License-Identifier: GPL-2.0-only
/*
 * Executing the control socket's requests against the service, and the
 * replies' text and JSON: stats in KCSAN's debugfs layout, the filter
 * list, parameters, probes, kept reports.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "control.h"
#include "engine.h"
#include "params.h"
#include "report.h"
#include "sampler.h"
#include "service.h"
#include "service_int.h"

static void json_str(FILE *out, const char *s)
{
	json_print_string(out, s);
}

static void print_filter(const struct service *s, FILE *out, bool json)
{
	const struct filter *f = &s->filter;

	if (json) {
		fprintf(out, "{\"mode\":\"%s\",\"functions\":[", f->whitelist ? "whitelist" :
			"blacklist");
		for (size_t i = 0; i < f->n; i++) {
			if (i)
				fputc(',', out);
			json_str(out, f->funcs[i]);
		}
		fprintf(out, "]}");
		return;
	}
	/* Byte for byte what KCSAN's debugfs file prints, trailing space included. */
	fprintf(out, "%s functions: %s\n", f->whitelist ? "whitelisted" : "blacklisted",
		f->n ? "" : "none");
	for (size_t i = 0; i < f->n; i++)
		fprintf(out, " %s\n", f->funcs[i]);
}

/* kcsand's own figures, after KCSAN's. */
struct own_stat {
	const char *name;
	unsigned long long v;
};

static size_t own_stats(struct service *s, const uint64_t *c, struct own_stat *o)
{
	unsigned long filt, dedup, nochange;
	struct sampler_stats ss;
	size_t n = 0;

	engine__suppressed(s->e, &filt, &dedup, &nochange);
	o[n++] = (struct own_stat){ "records_dropped", c[KCSAND_CTR_RECORDS_DROPPED] };
	o[n++] = (struct own_stat){ "read_faults", c[KCSAND_CTR_READ_FAULTS] };
	o[n++] = (struct own_stat){ "lost_other", c[KCSAND_CTR_LOST_OTHER] };
	o[n++] = (struct own_stat){ "sites_attached", engine__nr_sites(s->e) };
	o[n++] = (struct own_stat){ "probe_hits", engine__hits(s->e) };
	o[n++] = (struct own_stat){ "reports", engine__nr_reports(s->e) };
	o[n++] = (struct own_stat){ "suppressed_by_dedup", dedup };
	o[n++] = (struct own_stat){ "suppressed_by_filter", filt };
	o[n++] = (struct own_stat){ "suppressed_no_value_change", nochange };
	/* The site sampler (once attached): armed of all, and what it expects. */
	if (!engine__sampler_stats(s->e, &ss)) {
		o[n++] = (struct own_stat){ "sampler_armed_sites", ss.armed };
		o[n++] = (struct own_stat){ "sampler_total_sites", ss.total };
		o[n++] = (struct own_stat){ "sampler_hot_turns", ss.turns };
		o[n++] = (struct own_stat){ "sampler_estimated_overhead_pct",
					    isfinite(ss.est_overhead) ?
					    (unsigned long long)(ss.est_overhead * 100 + 0.5) : 100 };
		/* Kernel mode: what the traps of every site cost, armed or not. */
		if (ss.kernel)
			o[n++] = (struct own_stat){ "sampler_trap_floor_pct",
						    (unsigned long long)(ss.floor_overhead * 100 + 0.5) };
	}
	return n;
}

static void print_stats(struct service *s, FILE *out, bool json)
{
	uint64_t c[KCSAND_CTR_COUNT];
	struct own_stat own[16];
	unsigned int enabled = 0;
	size_t n;

	engine__counters(s->e, c);
	engine__get_param(s->e, "enabled", &enabled);
	n = own_stats(s, c, own);
	if (json) {
		fprintf(out, "{\"enabled\":%u,\"counters\":{", enabled);
		for (int i = 0; i <= KCSAND_CTR_ENCODING_FALSE_POSITIVES; i++)
			fprintf(out, "%s\"%s\":%llu", i ? "," : "", counter_name(i),
				(unsigned long long)c[i]);
		fprintf(out, "},\"filter\":");
		print_filter(s, out, true);
		fprintf(out, ",\"kcsand\":{");
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s\"%s\":%llu", i ? "," : "", own[i].name, own[i].v);
		fprintf(out, "}}\n");
		return;
	}
	/* KCSAN's show_info(): enabled, the nine counters, a blank line, the filter list. */
	fprintf(out, "enabled: %u\n", enabled);
	for (int i = 0; i <= KCSAND_CTR_ENCODING_FALSE_POSITIVES; i++)
		fprintf(out, "%s: %llu\n", counter_name(i), (unsigned long long)c[i]);
	fprintf(out, "\n");
	print_filter(s, out, false);
	fprintf(out, "\n");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s: %llu\n", own[i].name, own[i].v);
}

static void print_status(struct service *s, FILE *out, bool json)
{
	unsigned int enabled = 0;
	long up = time(NULL) - s->started;

	engine__get_param(s->e, "enabled", &enabled);
	if (json) {
		fprintf(out, "{\"version\":\"%s\",\"pid\":%d,\"uptime_s\":%ld,\"config\":",
			KCSAND_VERSION, getpid(), up);
		json_str(out, s->o.config_path);
		fprintf(out, ",\"socket\":");
		json_str(out, service__socket_path(s));
		fprintf(out, ",\"enabled\":%u,\"filter_mode\":\"%s\",\"filter_functions\":%zu,"
			"\"probes\":%zu,\"sites\":%zu,\"reports\":%lu}\n",
			enabled, s->filter.whitelist ? "whitelist" : "blacklist", s->filter.n,
			s->nr_probes, engine__nr_sites(s->e), engine__nr_reports(s->e));
		return;
	}
	fprintf(out, "kcsand %s, pid %d, up %ld s\n", KCSAND_VERSION, getpid(), up);
	fprintf(out, "config: %s\nsocket: %s\n", s->o.config_path, service__socket_path(s));
	fprintf(out, "enabled: %u\n", enabled);
	fprintf(out, "filter: %s, %zu function%s\n", s->filter.whitelist ? "whitelist" :
		"blacklist", s->filter.n, s->filter.n == 1 ? "" : "s");
	fprintf(out, "probes: %zu, %zu sites\n", s->nr_probes, engine__nr_sites(s->e));
	fprintf(out, "reports: %lu\n", engine__nr_reports(s->e));
}

static void print_params(struct service *s, const struct param_desc *only, FILE *out, bool json)
{
	const struct param_desc *all;
	size_t n;
	bool first = true;

	all = params_all(&n);
	if (json)
		fputc('{', out);
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if ((only && only != &all[i]) || engine__get_param(s->e, all[i].name, &v))
			continue;
		if (json)
			fprintf(out, "%s\"%s\":%u", first ? "" : ",", all[i].name, v);
		else
			fprintf(out, "%s: %u\n", all[i].name, v);
		first = false;
	}
	if (json)
		fprintf(out, "}\n");
}

static void print_probes(struct service *s, FILE *out, bool json)
{
	if (json)
		fputc('[', out);
	for (size_t i = 0; i < s->nr_probes; i++) {
		const struct probe *p = &s->probes[i];

		if (json) {
			fprintf(out, "%s{\"id\":%u,\"kind\":\"user\",\"binary\":", i ? "," : "",
				p->id);
			json_str(out, p->t.binary);
			fprintf(out, ",\"functions\":");
			if (p->t.functions)
				json_str(out, p->t.functions);
			else
				fputs("null", out);
			fprintf(out, ",\"pid\":%d,\"sites\":%ld,\"from_config\":%s}", p->t.pid,
				p->sites, p->from_config ? "true" : "false");
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
	if (json)
		fprintf(out, "]\n");
}

static void print_recent(struct service *s, FILE *out, bool json)
{
	size_t first = s->nr_recent > RECENT_MAX ? s->nr_recent - RECENT_MAX : 0;

	for (size_t i = first; i < s->nr_recent; i++) {
		const struct recent *r = &s->recent[i % RECENT_MAX];

		fputs(json ? r->json : r->text, out);
	}
}

/* Apply a change to a copy of the list, so that a failure changes nothing. */
static int change_filter(struct service *s, const struct ctl_request *r, char *err,
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

int service__exec(void *ctx, const struct ctl_request *r, FILE *out, char *err, size_t errlen)
{
	struct service *s = ctx;
	struct config_target t;
	struct probe *p;
	int ret;

	switch (r->op) {
	case CTL_ON:
	case CTL_OFF:
		return engine__set_param(s->e, "enabled", r->op == CTL_ON ? "1" : "0");
	case CTL_STATUS:
		print_status(s, out, r->json);
		return 0;
	case CTL_STATS:
		print_stats(s, out, r->json);
		return 0;
	case CTL_FILTER_ADD:
	case CTL_FILTER_REMOVE:
	case CTL_BLACKLIST:
	case CTL_WHITELIST:
		return change_filter(s, r, err, errlen);
	case CTL_FILTER_LIST:
		print_filter(s, out, r->json);
		if (r->json)
			fputc('\n', out);
		return 0;
	case CTL_GET:
		print_params(s, r->param, out, r->json);
		return 0;
	case CTL_SET:
		return service_set_param(s, r->param, r->value);
	case CTL_PROBE_ADD_USER:
		t = (struct config_target){ (char *)r->binary, (char *)r->functions, r->pid };
		ret = service_add_probe(s, &t, false, err, errlen);
		if (ret < 0)
			return ret;
		p = service_find_probe(s, ret);
		if (r->json)
			fprintf(out, "{\"id\":%d,\"sites\":%ld}\n", ret, p ? p->sites : 0);
		else
			fprintf(out, "probe %d: %ld sites\n", ret, p ? p->sites : 0);
		return 0;
	case CTL_PROBE_ADD_KERNEL:
		snprintf(err, errlen, "kernel targets need kernel mode, which this build of kcsand "
				      "does not have yet");
		return -EOPNOTSUPP;
	case CTL_PROBE_REMOVE:
		p = service_find_probe(s, r->id);
		if (!p) {
			snprintf(err, errlen, "no probe %u", r->id);
			return -ENOENT;
		}
		service_remove_probe(s, p);
		return 0;
	case CTL_PROBE_LIST:
		print_probes(s, out, r->json);
		return 0;
	case CTL_REPORTS:
		print_recent(s, out, r->json);
		return r->follow ? CTL_EXEC_FOLLOW : 0;
	case CTL_HELP:
		fputs(ctl_help_text, out);
		return 0;
	}
	snprintf(err, errlen, "request not implemented");
	return -ENOSYS;
}
