// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "mark.h"
#include "report.h"
#include "symbolize.h"
#include "uprobe_multi.h"
#include "kcsand.skel.h"

/* A report waiting to be symbolized: the ring-buffer callback only queues. */
struct queued {
	struct kcsand_report rec;
};

/* Global site index (the BPF cookie) -> where the site came from. */
struct site_ref {
	uint32_t obj;
	uint32_t idx;
};

/* report_once_in_ms: when each unordered pair of top frames was last printed. */
struct dedup_entry {
	char *key;
	uint64_t last_ms;
};

struct engine {
	struct engine_opts opts;
	struct kcsand_bpf *skel;
	bool multi;				/* uprobe_multi links, else per-site perf links */

	struct target_obj **objs;
	size_t nr_objs;
	struct site_ref *refs;
	size_t nr_sites;

	int *link_fds;				/* uprobe_multi links, one per object */
	size_t nr_link_fds;
	struct bpf_link **links;		/* per-site links and tracepoints */
	size_t nr_links;

	struct ring_buffer *rb;
	struct queued *queue;
	size_t nr_queued, cap_queued;

	struct symbolizer *sym;
	struct mark_rules *marks;		/* --marks, or NULL */
	struct dedup_entry *dedup;
	size_t nr_dedup;
	char system[160];

	double decode_ms;			/* time spent decoding, for -v and the bench */
	unsigned long nr_reports;
	unsigned long suppressed_dedup;
	unsigned long suppressed_no_change;
};

static const struct param_desc params_table[] = {
#define P(n, lo, hi, h) { #n, offsetof(struct kcsand_params, n), lo, hi, h }
	P(skip_watch, 0, 1000000000, "plain accesses per CPU to skip before a watchpoint"),
	P(skip_watch_randomize, 0, 1, "randomize skip_watch (KCSAN_SKIP_WATCH_RANDOMIZE)"),
	P(udelay_task, 0, 100000, "µs a task stalls with a watchpoint armed"),
	P(udelay_interrupt, 0, 100000, "µs an interrupt stalls with a watchpoint armed"),
	P(delay_randomize, 0, 1, "randomize the delays (KCSAN_DELAY_RANDOMIZE)"),
	P(assume_plain_writes_atomic, 0, 1, "aligned plain writes up to 8 bytes are atomic"),
	P(interrupt_watcher, 0, 1, "interrupts may set up watchpoints"),
	P(consumer_wait_us, 0, 100000, "µs a watcher waits for its consumer's side"),
	P(enabled, 0, 1, "on/off"),
#undef P
	{ "report_value_change_only", (size_t)-1, 0, 1,
	  "report a race only when the watched value changed" },
	{ "report_once_in_ms", (size_t)-2, 0, 3600000,
	  "print one report per pair of functions per interval" },
};

const struct param_desc *engine_params(size_t *n)
{
	*n = sizeof(params_table) / sizeof(params_table[0]);
	return params_table;
}

void engine_opts__init(struct engine_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->params = (struct kcsand_params){
		.enabled = 1,
		.skip_watch = USER_DEFAULT_SKIP_WATCH,
		.skip_watch_randomize = 1,
		.udelay_task = USER_DEFAULT_UDELAY_TASK,
		.udelay_interrupt = 20,
		.delay_randomize = 1,
		.assume_plain_writes_atomic = 1,
		.interrupt_watcher = 0,
		.consumer_wait_us = 200,
	};
	o->report_value_change_only = true;
	o->report_once_in_ms = DEFAULT_REPORT_ONCE_IN_MS;
	o->out = stderr;
}

int engine_opts__set(struct engine_opts *o, const char *name, const char *value)
{
	const struct param_desc *p = NULL;
	unsigned long v;
	char *end;

	for (size_t i = 0; i < sizeof(params_table) / sizeof(params_table[0]); i++)
		if (!strcmp(params_table[i].name, name))
			p = &params_table[i];
	if (!p) {
		fprintf(stderr, "kcsand: unknown parameter '%s'\n", name);
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(value, &end, 0);
	if (errno || end == value || *end || value[0] == '-' || v < p->min || v > p->max) {
		fprintf(stderr, "kcsand: %s: bad value '%s' (expected %u..%u)\n", name, value,
			p->min, p->max);
		return -EINVAL;
	}
	if (p->offset == (size_t)-1)
		o->report_value_change_only = v;
	else if (p->offset == (size_t)-2)
		o->report_once_in_ms = v;
	else
		*(__u32 *)((char *)&o->params + p->offset) = v;
	return 0;
}

int engine_opts__set_kv(struct engine_opts *o, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char name[64];

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(name)) {
		fprintf(stderr, "kcsand: parameter wants NAME=VALUE, got '%s'\n", kv);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - kv), kv);
	return engine_opts__set(o, name, eq + 1);
}

void engine_params__print(FILE *out)
{
	fprintf(out, "Parameters (NAME=VALUE):\n");
	for (size_t i = 0; i < sizeof(params_table) / sizeof(params_table[0]); i++)
		fprintf(out, "  %-28s %u..%u  %s\n", params_table[i].name, params_table[i].min,
			params_table[i].max, params_table[i].help);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	extern int kcsand_verbose;

	if (level == LIBBPF_DEBUG && kcsand_verbose < 2)
		return 0;
	if (level == LIBBPF_INFO && kcsand_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

int kcsand_verbose;

int engine__new(const struct engine_opts *o, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct utsname u;

	if (!e)
		return -ENOMEM;
	e->opts = *o;
	if (!e->opts.out)
		e->opts.out = stderr;
	kcsand_verbose = o->verbose;
	libbpf_set_print(libbpf_print);
	e->sym = symbolizer__new();
	if (!e->sym) {
		free(e);
		return -ENOMEM;
	}
	if (o->marks_file) {
		int err = mark_rules__load(o->marks_file, &e->marks);

		if (err) {
			symbolizer__free(e->sym);
			free(e);
			return err;
		}
	}
	uname(&u);
	snprintf(e->system, sizeof(e->system), "kcsand %s (user) %s", KCSAND_VERSION, u.release);
	*out = e;
	return 0;
}

/* Mark an object's decoded sites with the engine's rules (mark.h). */
static int mark_object(struct engine *e, struct target_obj *obj)
{
	struct mark_opts mo = {
		.source_dir = e->opts.source_dir,
		.rules = e->marks,
		.verbose = e->opts.verbose,
	};
	struct mark_stats ms;
	int err = mark__apply(obj, &mo, &ms);

	if (!err && e->opts.verbose && !ms.dwarf)
		fprintf(stderr, "kcsand: %s: no debug info: only lock prefixes and the marks file "
			"mark accesses\n", obj->path);
	if (!err && e->opts.verbose && ms.no_source)
		fprintf(stderr, "kcsand: %s: source not found for %llu sites (--source-dir)\n",
			obj->path, (unsigned long long)ms.no_source);
	return err;
}

int engine__add_object(struct engine *e, const char *path)
{
	struct target_obj *obj, **objs;
	struct site_ref *refs;
	size_t before = e->nr_sites;
	int err;

	if (e->skel) {
		fprintf(stderr, "kcsand: %s: objects must be added before the engine is loaded\n",
			path);
		return -EBUSY;
	}
	uint64_t t0 = now_ns();

	err = target_obj__open(path, &obj);
	if (err)
		return err;
	err = target_obj__decode(obj, e->opts.functions, &e->opts.decode);
	if (err >= 0)
		err = mark_object(e, obj);
	e->decode_ms += (now_ns() - t0) / 1e6;
	if (err < 0) {
		fprintf(stderr, "kcsand: cannot decode %s: %s\n", path, strerror(-err));
		target_obj__free(obj);
		return err;
	}
	objs = realloc(e->objs, (e->nr_objs + 1) * sizeof(*objs));
	refs = realloc(e->refs, (e->nr_sites + obj->sites.n) * sizeof(*refs));
	if (!objs || !refs) {
		if (objs)
			e->objs = objs;
		if (refs)
			e->refs = refs;
		target_obj__free(obj);
		return -ENOMEM;
	}
	e->objs = objs;
	e->refs = refs;
	for (size_t i = 0; i < obj->sites.n; i++)
		e->refs[e->nr_sites++] = (struct site_ref){ .obj = e->nr_objs, .idx = i };
	e->objs[e->nr_objs++] = obj;
	if (e->opts.verbose)
		fprintf(stderr,
			"kcsand: %s: %llu functions, %llu sites (%llu marked); skipped: %llu stack, "
			"%llu tls, %llu unencodable\n",
			path, (unsigned long long)obj->stats.funcs,
			(unsigned long long)obj->stats.sites, (unsigned long long)obj->stats.marked,
			(unsigned long long)obj->stats.skipped_stack,
			(unsigned long long)obj->stats.skipped_tls,
			(unsigned long long)obj->stats.unencodable);
	return (int)(e->nr_sites - before);
}

static const struct site *site_of(const struct engine *e, uint32_t idx, const struct target_obj **o)
{
	const struct site_ref *r;

	if (idx >= e->nr_sites)
		return NULL;
	r = &e->refs[idx];
	*o = e->objs[r->obj];
	return &e->objs[r->obj]->sites.v[r->idx];
}

int engine__set_marks(struct engine *e, const char *path)
{
	struct mark_rules *rules = NULL;
	int err = 0, fd;

	if (path) {
		err = mark_rules__load(path, &rules);
		if (err)
			return err;
	}
	mark_rules__free(e->marks);
	e->marks = rules;
	e->opts.marks_file = NULL;	/* the caller's string; the rules are what is kept */
	for (size_t i = 0; i < e->nr_objs && !err; i++)
		err = mark_object(e, e->objs[i]);
	if (err || !e->skel)
		return err;
	/* Live: rewrite the descriptors; only their flags changed, one byte each. */
	fd = bpf_map__fd(e->skel->maps.sites);
	for (size_t i = 0; i < e->nr_sites; i++) {
		const struct target_obj *o;
		__u32 key = i;

		if (bpf_map_update_elem(fd, &key, &site_of(e, i, &o)->desc, BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "kcsand: cannot update the site table: %s\n",
				strerror(-err));
			return err;
		}
	}
	return 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct engine *e = ctx;
	const struct kcsand_report *rec = data;

	if (len < sizeof(*rec) || rec->type != KCSAND_REC_REPORT)
		return 0;
	if (e->nr_queued == e->cap_queued) {
		size_t cap = e->cap_queued ? e->cap_queued * 2 : 16;
		struct queued *q = realloc(e->queue, cap * sizeof(*q));

		if (!q)
			return 0;	/* dropped; counted nowhere but this is OOM */
		e->queue = q;
		e->cap_queued = cap;
	}
	memcpy(&e->queue[e->nr_queued++].rec, rec, sizeof(*rec));
	return 0;
}

int engine__load(struct engine *e)
{
	struct kcsand_bpf *skel;
	struct kcsand_site *descs = NULL;
	__u32 *keys = NULL;
	int err;

	e->multi = !e->opts.force_per_site_links && kernel_has_uprobe_multi();
	skel = kcsand_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "kcsand: failed to open BPF object: %s\n", strerror(-err));
		return err;
	}
	e->skel = skel;
	bpf_map__set_max_entries(skel->maps.sites, e->nr_sites ? e->nr_sites : 1);
	skel->rodata->trace_all = e->opts.trace_all;
	skel->data->params = e->opts.params;
	if (e->multi) {
		bpf_program__set_expected_attach_type(skel->progs.kcsand_uprobe_multi,
						      KCSAND_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_autoload(skel->progs.kcsand_uprobe, false);
	} else {
		bpf_program__set_autoload(skel->progs.kcsand_uprobe_multi, false);
	}
	err = kcsand_bpf__load(skel);
	if (err) {
		fprintf(stderr, "kcsand: failed to load BPF object: %s\n", strerror(-err));
		return err;
	}
	if (!e->nr_sites)
		return 0;

	descs = calloc(e->nr_sites, sizeof(*descs));
	keys = calloc(e->nr_sites, sizeof(*keys));
	if (!descs || !keys) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < e->nr_sites; i++) {
		const struct target_obj *o;

		keys[i] = i;
		descs[i] = site_of(e, i, &o)->desc;
	}
	{
		__u32 count = e->nr_sites;

		err = bpf_map_update_batch(bpf_map__fd(skel->maps.sites), keys, descs, &count, NULL);
	}
	if (err) {
		/* Batch ops on arrays need 5.6; fall back to one update per site. */
		for (size_t i = 0; i < e->nr_sites; i++) {
			err = bpf_map_update_elem(bpf_map__fd(skel->maps.sites), &keys[i], &descs[i],
						  BPF_ANY);
			if (err) {
				err = -errno;
				fprintf(stderr, "kcsand: failed to fill the site table: %s\n",
					strerror(-err));
				goto out;
			}
		}
	}
out:
	free(descs);
	free(keys);
	return err;
}

static int push_link(struct engine *e, struct bpf_link *l)
{
	struct bpf_link **v = realloc(e->links, (e->nr_links + 1) * sizeof(*v));

	if (!v) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	e->links = v;
	e->links[e->nr_links++] = l;
	return 0;
}

/* Where the probe goes: the instruction, or past it for a locked one. */
static uint64_t probe_off(const struct site *s)
{
	return s->file_off + s->desc.probe_delta;
}

static int attach_object(struct engine *e, size_t oi, size_t first)
{
	struct target_obj *o = e->objs[oi];
	size_t n = o->sites.n;
	__u64 *offs, *cookies;
	int fd, err = 0;

	/* An object whose selected functions have no site gets no link: an empty one is EINVAL. */
	if (!n)
		return 0;
	if (!e->multi) {
		for (size_t i = 0; i < n; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = first + i);
			struct bpf_link *l;

			l = bpf_program__attach_uprobe_opts(e->skel->progs.kcsand_uprobe, -1, o->path,
							    probe_off(&o->sites.v[i]), &uo);
			if (!l) {
				err = -errno;
				fprintf(stderr, "kcsand: cannot attach uprobe at %s+0x%llx: %s\n",
					o->path, (unsigned long long)probe_off(&o->sites.v[i]),
					strerror(-err));
				return err;
			}
			err = push_link(e, l);
			if (err)
				return err;
		}
		return 0;
	}

	offs = calloc(n, sizeof(*offs));
	cookies = calloc(n, sizeof(*cookies));
	if (!offs || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		offs[i] = probe_off(&o->sites.v[i]);
		cookies[i] = first + i;
	}
	fd = uprobe_multi_attach(bpf_program__fd(e->skel->progs.kcsand_uprobe_multi), o->path,
				 offs, cookies, n, 0);
	if (fd < 0) {
		err = fd;
		fprintf(stderr, "kcsand: cannot attach %zu uprobes to %s: %s\n", n, o->path,
			strerror(-err));
		goto out;
	}
	{
		int *v = realloc(e->link_fds, (e->nr_link_fds + 1) * sizeof(*v));

		if (!v) {
			close(fd);
			err = -ENOMEM;
			goto out;
		}
		e->link_fds = v;
		e->link_fds[e->nr_link_fds++] = fd;
	}
out:
	free(offs);
	free(cookies);
	return err;
}

int engine__attach(struct engine *e)
{
	uint64_t t0 = now_ns();
	struct bpf_link *l;
	size_t first = 0;
	int err;

	l = bpf_program__attach(e->skel->progs.kcsand_fork);
	if (!l || push_link(e, l)) {
		err = -errno;
		fprintf(stderr, "kcsand: cannot attach sched_process_fork tracepoint: %s\n",
			strerror(-err));
		return err ? err : -ENOMEM;
	}
	l = bpf_program__attach(e->skel->progs.kcsand_exit);
	if (!l || push_link(e, l)) {
		err = -errno;
		fprintf(stderr, "kcsand: cannot attach sched_process_exit tracepoint: %s\n",
			strerror(-err));
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < e->nr_objs; i++) {
		err = attach_object(e, i, first);
		if (err)
			return err;
		first += e->objs[i]->sites.n;
	}
	e->rb = ring_buffer__new(bpf_map__fd(e->skel->maps.events), on_event, e, NULL);
	if (!e->rb) {
		err = -errno;
		fprintf(stderr, "kcsand: cannot open the ring buffer: %s\n", strerror(-err));
		return err;
	}
	if (e->opts.verbose)
		fprintf(stderr, "kcsand: decoded %zu sites in %.1f ms, attached them in %.1f ms (%s)\n",
			e->nr_sites, e->decode_ms, (now_ns() - t0) / 1e6,
			e->multi ? "uprobe_multi" : "per-site uprobes");
	return 0;
}

int engine__add_pid(struct engine *e, pid_t pid)
{
	__u32 key = pid, one = 1;

	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.targets), &key, &one, BPF_ANY)) {
		int err = -errno;

		fprintf(stderr, "kcsand: cannot trace pid %d: %s\n", pid, strerror(-err));
		return err;
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* Build one side's frames: the site first, the recovered caller of a frameless site next. */
static void symbolize_side(struct engine *e, const struct kcsand_access *a, struct report_side *s)
{
	const struct target_obj *o;
	const struct site *site = site_of(e, a->site, &o);
	uint64_t addrs[REPORT_MAX_FRAMES];
	int n = 0;

	s->acc = a;
	s->nr_frames = 0;
	snprintf(s->func, sizeof(s->func), "0x%llx", (unsigned long long)a->ip);
	snprintf(s->top, sizeof(s->top), "0x%llx", (unsigned long long)a->ip);

	/* The site tells where this object is loaded: no /proc needed for it. */
	if (site)
		symbolizer__proc_add_bias(e->sym, a->pid, o->path, a->ip - site->vaddr);

	addrs[n++] = a->ip;
	if (a->ra)
		addrs[n++] = a->ra;
	for (int i = 1; i < a->nr_frames && i < KCSAND_MAX_STACK && n < REPORT_MAX_FRAMES; i++)
		addrs[n++] = a->stack[i];

	for (int i = 0; i < n; i++) {
		struct sym_info si;

		if (symbolizer__proc_lookup(e->sym, a->pid, addrs[i], i > 0, &si))
			memset(&si, 0, sizeof(si));
		sym_format(&si, addrs[i], true, s->frames[i], sizeof(s->frames[i]));
		if (i == 0 && si.func) {
			snprintf(s->func, sizeof(s->func), "%s", si.func);
			sym_format(&si, addrs[i], false, s->top, sizeof(s->top));
		}
		s->nr_frames++;
	}
}

/* KCSAN exempts RCU from the value-change-only filter at its maintainers' request. */
static bool rcu_exempt(const char *func)
{
	return strstr(func, "rcu_") || strstr(func, "_rcu") || strstr(func, "_srcu");
}

static bool dedup_hit(struct engine *e, const struct report_view *v)
{
	const char *a = v->this.top, *b = v->raw->has_other ? v->other.top : "";
	uint64_t now = now_ms();
	char key[2 * REPORT_FRAME_LEN + 2];

	if (!e->opts.report_once_in_ms)
		return false;
	if (strcmp(a, b) > 0) {
		const char *t = a;

		a = b;
		b = t;
	}
	snprintf(key, sizeof(key), "%s|%s", a, b);
	/*
	 * A probe runs before its instruction, so a writer that checked the
	 * slots just before a watcher armed one lands its write inside the
	 * stall unseen: the same race then also shows as "unknown origin".
	 * Once the pair is known, that report says nothing new.
	 */
	if (!v->raw->has_other) {
		size_t len = strlen(v->this.top);

		for (size_t i = 0; i < e->nr_dedup; i++) {
			const char *k = e->dedup[i].key, *bar = strchr(k, '|');

			if (!bar || !bar[1] || now - e->dedup[i].last_ms >= e->opts.report_once_in_ms)
				continue;
			if ((!strncmp(k, v->this.top, len) && k[len] == '|') || !strcmp(bar + 1, v->this.top))
				return true;
		}
	}
	for (size_t i = 0; i < e->nr_dedup; i++) {
		if (strcmp(e->dedup[i].key, key))
			continue;
		if (now - e->dedup[i].last_ms < e->opts.report_once_in_ms)
			return true;
		e->dedup[i].last_ms = now;
		return false;
	}
	{
		struct dedup_entry *d = realloc(e->dedup, (e->nr_dedup + 1) * sizeof(*d));

		if (d) {
			e->dedup = d;
			e->dedup[e->nr_dedup].key = strdup(key);
			e->dedup[e->nr_dedup].last_ms = now;
			if (e->dedup[e->nr_dedup].key)
				e->nr_dedup++;
		}
	}
	return false;
}

static void process_report(struct engine *e, const struct kcsand_report *r)
{
	static struct report_view v;	/* large: keep it off the stack */

	memset(&v, 0, sizeof(v));
	v.raw = r;
	v.system = e->system;
	symbolize_side(e, &r->this, &v.this);
	if (r->has_other)
		symbolize_side(e, &r->other, &v.other);

	if (r->has_other && r->value_change == KCSAND_VALUE_CHANGE_MAYBE &&
	    e->opts.report_value_change_only && !rcu_exempt(v.this.func)) {
		e->suppressed_no_change++;
		return;
	}
	if (dedup_hit(e, &v)) {
		e->suppressed_dedup++;
		return;
	}
	if (e->opts.json)
		report_print_json(&v, e->opts.out);
	else
		report_print_text(&v, e->opts.out);
	fflush(e->opts.out);
	e->nr_reports++;
}

int engine__poll(struct engine *e, int timeout_ms)
{
	int err = 0;

	if (e->rb) {
		err = ring_buffer__poll(e->rb, timeout_ms);
		if (err == -EINTR)
			err = 0;
	}
	for (size_t i = 0; i < e->nr_queued; i++)
		process_report(e, &e->queue[i].rec);
	e->nr_queued = 0;
	return err < 0 ? err : 0;
}

unsigned long engine__nr_reports(const struct engine *e)
{
	return e->nr_reports;
}

size_t engine__nr_sites(const struct engine *e)
{
	return e->nr_sites;
}

void engine__print_mark_counts(const struct engine *e, FILE *out)
{
	uint64_t counts[MARK_REASON_COUNT] = {}, data_race = 0;

	for (size_t i = 0; i < e->nr_objs; i++)
		mark__count(e->objs[i]->sites.v, e->objs[i]->sites.n, counts, &data_race);
	fprintf(out, "kcsand: marked sites:");
	for (uint32_t r = MARK_NONE + 1; r < MARK_REASON_COUNT; r++)
		fprintf(out, "%s %llu %s", r == MARK_NONE + 1 ? "" : ",",
			(unsigned long long)counts[r], mark_reason_name(r));
	fprintf(out, "; %llu of them data_race; %llu plain\n", (unsigned long long)data_race,
		(unsigned long long)counts[MARK_NONE]);
}

void engine__print_sites(const struct engine *e, FILE *out)
{
	for (size_t oi = 0; oi < e->nr_objs; oi++) {
		const struct target_obj *o = e->objs[oi];

		for (size_t i = 0; i < o->sites.n; i++) {
			const struct site *s = &o->sites.v[i];
			const struct elf_func *f = s->func < o->nr_funcs ? &o->funcs[s->func] : NULL;
			unsigned int fl = s->desc.flags;
			const char *acc = !(fl & KCSAND_SITE_WRITE) ? "read" :
					  (fl & KCSAND_SITE_READ) ? "read-write" : "write";

			fprintf(out, "kcsand: site %s 0x%llx %s+0x%llx %s %u %s", o->path,
				(unsigned long long)s->vaddr, f ? f->name : "?",
				(unsigned long long)(f ? s->vaddr - f->vaddr : 0), acc,
				s->desc.size, (fl & KCSAND_SITE_DATA_RACE) ? "data_race" :
				(fl & KCSAND_SITE_MARKED) ? "marked" : "plain");
			if (s->reason != MARK_NONE)
				fprintf(out, " (%s)", mark_reason_name(s->reason));
			fputc('\n', out);
		}
	}
	engine__print_mark_counts(e, out);
}

static const char *const counter_names[KCSAND_CTR_COUNT] = {
	[KCSAND_CTR_USED_WATCHPOINTS] = "used_watchpoints",
	[KCSAND_CTR_SETUP_WATCHPOINTS] = "setup_watchpoints",
	[KCSAND_CTR_DATA_RACES] = "data_races",
	[KCSAND_CTR_ASSERT_FAILURES] = "assert_failures",
	[KCSAND_CTR_NO_CAPACITY] = "no_capacity",
	[KCSAND_CTR_REPORT_RACES] = "report_races",
	[KCSAND_CTR_RACES_UNKNOWN_ORIGIN] = "races_unknown_origin",
	[KCSAND_CTR_UNENCODABLE_ACCESSES] = "unencodable_accesses",
	[KCSAND_CTR_ENCODING_FALSE_POSITIVES] = "encoding_false_positives",
	[KCSAND_CTR_RECORDS_DROPPED] = "records_dropped",
	[KCSAND_CTR_READ_FAULTS] = "read_faults",
	[KCSAND_CTR_LOST_OTHER] = "lost_other",
};

_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == KCSAND_CTR_COUNT,
	       "a name for every counter");

static uint64_t total_hits(struct engine *e)
{
	int ncpu = libbpf_num_possible_cpus();
	struct { __s64 skip; __u64 hits; } *v;
	__u32 zero = 0;
	uint64_t sum = 0;

	if (!e->skel || ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.cpu_state), &zero, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i].hits;
	free(v);
	return sum;
}

void engine__print_summary(struct engine *e, FILE *out)
{
	uint64_t unencodable = 0;

	for (size_t i = 0; i < e->nr_objs; i++)
		unencodable += e->objs[i]->stats.unencodable;
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits;", e->nr_reports,
		e->nr_reports == 1 ? "" : "s", e->nr_sites, (unsigned long long)total_hits(e));
	for (int i = 0; i < KCSAND_CTR_COUNT; i++) {
		uint64_t v = e->skel ? e->skel->bss->counters[i] : 0;

		if (i == KCSAND_CTR_UNENCODABLE_ACCESSES)
			v += unencodable;
		fprintf(out, " %s: %llu", counter_names[i], (unsigned long long)v);
	}
	fprintf(out, " suppressed_duplicates: %lu suppressed_no_value_change: %lu\n",
		e->suppressed_dedup, e->suppressed_no_change);
}

void engine__free(struct engine *e)
{
	if (!e)
		return;
	ring_buffer__free(e->rb);
	for (size_t i = 0; i < e->nr_link_fds; i++)
		close(e->link_fds[i]);
	for (size_t i = 0; i < e->nr_links; i++)
		bpf_link__destroy(e->links[i]);
	kcsand_bpf__destroy(e->skel);
	for (size_t i = 0; i < e->nr_objs; i++)
		target_obj__free(e->objs[i]);
	for (size_t i = 0; i < e->nr_dedup; i++)
		free(e->dedup[i].key);
	symbolizer__free(e->sym);
	mark_rules__free(e->marks);
	free(e->dedup);
	free(e->objs);
	free(e->refs);
	free(e->link_fds);
	free(e->links);
	free(e->queue);
	free(e);
}
