// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine: probed objects and their sites, the BPF object and its links,
 * live parameters, the poll loop.  The report pipeline is in pipeline.c,
 * the site sampler's arming in arm.c, the shared types in engine_int.h.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "report/dedup.h"
#include "sites/ksyms.h"
#include "mark/kmark.h"
#include "sites/ksrc.h"
#include "sites/ktarget.h"
#include "mark/mark.h"
#include "report/report.h"
#include "hw/hwbp.h"
#include "history/history.h"
#include "sampler/kbp.h"
#include "sampler/sampler.h"
#include "report/symbolize.h"
#include "report/unwind.h"
#include "util/link_close.h"
#include "util/uprobe_multi.h"
#include "sampler/thread_turn.h"
#include "engine_int.h"
#include "late_load.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/clock.h"
#include "util/array.h"

void engine_opts__init(struct engine_opts *o, enum param_mode mode)
{
	memset(o, 0, sizeof(*o));
	param_values__init(&o->params, mode);
	o->kernel = mode == PARAM_MODE_KERNEL;
	o->max_sites = DEFAULT_MAX_SITES;
	o->out = stderr;
	o->kbp_regs = KBP_DEFAULT_REGS;
	o->kbp_period_us = KBP_DEFAULT_PERIOD_US;
}

void engine_opts__set(struct engine_opts *o, const struct param_desc *p, unsigned int v)
{
	o->params.v[p->id] = v;
}

unsigned int engine_opts__get(const struct engine_opts *o, const struct param_desc *p)
{
	return o->params.v[p->id];
}

/*
 * The parameters the BPF program reads, in its struct kcsand_params; NULL
 * for those only the daemon reads (report filtering, the site sampler).
 */
#define BPF_PARAM_SLOT_BPF(b, name)	(&(b)->name)
#define BPF_PARAM_SLOT_DAEMON(b, name)	NULL
#define BPF_PARAM_SLOT_LOAD(b, name)	NULL
#define BPF_PARAM_CASE(ID, name, lo, hi, user, kernel, kind, help)	\
	case PARAM_##ID: return BPF_PARAM_SLOT_##kind(b, name);
static __u32 *bpf_param(struct kcsand_params *b, enum param_id id)
{
	switch (id) {
	KCSAND_PARAMS(BPF_PARAM_CASE)
	default:
		return NULL;
	}
}
#undef BPF_PARAM_CASE

/* The BPF object's parameters for these options, before load. */
/*
 * Kernel mode: a value the BPF side cuts to its ceiling (include/kcsand.h),
 * whatever the parameter says, is said when set: a kernel stall has
 * interrupts off.
 */
static void say_kernel_ceiling(const struct engine_opts *o, int id, unsigned int v)
{
	const struct param_desc *p;
	size_t n;

	if (!o->kernel)
		return;
	p = param__table(&n);
	if ((id == PARAM_UDELAY_TASK || id == PARAM_UDELAY_INTERRUPT ||
	     id == PARAM_CONSUMER_WAIT_US) && v > KCSAND_KERNEL_WAIT_MAX_US)
		pr_warn("kernel mode: %s=%u is cut to %u µs in BPF (a kernel stall has interrupts "
			"off)\n", p[id].name, v, KCSAND_KERNEL_WAIT_MAX_US);
	else if (id == PARAM_STALL_BUDGET_US && (!v || v > KCSAND_KERNEL_STALL_BUDGET_MAX_US))
		pr_warn("kernel mode: stall_budget_us=%u is cut to %u in BPF (a kernel stall has "
			"interrupts off)\n", v, KCSAND_KERNEL_STALL_BUDGET_MAX_US);
}

static void bpf_params_fill(struct kcsand_params *b, const struct engine_opts *o)
{
	memset(b, 0, sizeof(*b));
	for (int id = 0; id < PARAM_COUNT; id++) {
		__u32 *slot = bpf_param(b, id);

		if (slot)
			*slot = o->params.v[id];
		say_kernel_ceiling(o, id, o->params.v[id]);
	}
	/* Kernel mode: every task that enters the probed code; the kernel has no "target". */
	b->trace_all = o->kernel || o->trace_all;
}

/* A ring buffer's size must be a power of two and whole pages: round kb up to one. */
static __u32 ring_bytes(unsigned int kb)
{
	__u32 page = sysconf(_SC_PAGESIZE), bytes = page;

	while (bytes < (__u64)kb * 1024 && bytes < (1U << 30))
		bytes <<= 1;
	return bytes;
}

void engine__set_param(struct engine *e, const struct param_desc *p, unsigned int v)
{
	__u32 *slot = e->skel ? bpf_param(&e->skel->data->params, p->id) : NULL;

	/* A loaded object keeps the size it was loaded with: `get` says what is in effect. */
	if (p->at_load && e->skel)
		return;
	e->opts.params.v[p->id] = v;
	if (e->skel)
		say_kernel_ceiling(&e->opts, p->id, v);
	/* The mmapped .data of the loaded object: the program sees it at its next hit. */
	if (slot)
		*(volatile __u32 *)slot = v;
}

int engine__get_param(const struct engine *e, const char *name, unsigned int *value)
{
	const struct param_desc *p = param__find(name);

	if (!p)
		return -ENOENT;
	*value = e->opts.params.v[p->id];
	return 0;
}

/*
 * While kprobes attach by address, libbpf's own warning for a refused one
 * names it "(null)+0xADDRESS": kcsand says which function and why instead.
 */
static bool libbpf_quiet_warnings;

/* libbpf's levels are kcsand's; the print function filters them as the rest. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	enum kcsand_print_level to = level == LIBBPF_WARN ? KCSAND_WARN :
				     level == LIBBPF_INFO ? KCSAND_INFO : KCSAND_DEBUG;

	if (level == LIBBPF_WARN && libbpf_quiet_warnings)
		to = KCSAND_DEBUG;
	kcsand__vprint(to, fmt, args);
	return 0;
}

/*
 * A per-site link holds a perf-event fd (kprobes, and uprobes without
 * uprobe_multi): a thousand sites pass the usual soft limit of 1024 open
 * files.  Raise it to the hard limit.
 */
static void raise_nofile_limit(void)
{
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

int engine__open(const struct engine_opts *o, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct utsname u;

	if (!e)
		return -ENOMEM;
	raise_nofile_limit();
	e->opts = *o;
	if (!e->opts.out)
		e->opts.out = stderr;
	/* -v: info, -vv: debug, libbpf's too. */
	kcsand__set_verbose(o->verbose);
	libbpf_set_print(libbpf_print);
	e->sym = symbolizer__new();
	e->dedup = dedup__new();
	e->unwind = o->kernel ? NULL : unwinder__new();
	if (!e->sym || !e->dedup || (!o->kernel && !e->unwind)) {
		engine__close(e);
		return -ENOMEM;
	}
	if (o->marks_file) {
		int err = mark_rules__load(o->marks_file, &e->marks);

		if (err) {
			engine__close(e);
			return err;
		}
	}
	uname(&u);
	snprintf(e->system, sizeof(e->system), "kcsand %s (%s) %s", KCSAND_VERSION,
		 o->kernel ? "kernel" : "user", u.release);
	*out = e;
	return 0;
}

const struct site *engine_site_of(const struct engine *e, uint32_t cookie,
				  const struct target_obj **o)
{
	const struct engine_object *eo;

	if (cookie >= e->nr_cookies)
		return NULL;
	eo = &e->objs[e->site_obj[cookie]];
	*o = eo->obj;
	return &eo->obj->sites.v[cookie - eo->first];
}

static int fill_sites(struct engine *e, const struct engine_object *eo)
{
	const struct site_vec *sv = &eo->obj->sites;
	int fd = bpf_map__fd(e->skel->maps.sites);
	struct kcsand_site *descs;
	__u32 *keys, count = sv->n;
	int err = 0;

	if (!sv->n)
		return 0;
	descs = calloc(sv->n, sizeof(*descs));
	keys = calloc(sv->n, sizeof(*keys));
	if (!descs || !keys) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < sv->n; i++) {
		keys[i] = eo->first + i;
		descs[i] = sv->v[i].desc;
	}
	if (bpf_map_update_batch(fd, keys, descs, &count, NULL)) {
		/* Batch updates of arrays need Linux 5.6: one at a time then. */
		for (size_t i = 0; i < sv->n; i++) {
			if (bpf_map_update_elem(fd, &keys[i], &descs[i], BPF_ANY)) {
				err = -errno;
				pr_warn("failed to fill the site table: %s\n",
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

/*
 * One kprobe per site, by address (no name: static functions share names).
 * kprobe_multi would be faster to attach but only probes function entries.
 */
/* What a kprobe refusal means, after its errno. */
static const char *kprobe_refusal_why(int err)
{
	switch (err) {
	case -EILSEQ:
		return " (not an instruction boundary: a decoding bug)";
	case -EINVAL:
		return " (code kprobes may not probe: the kprobe blacklist, notrace/noinstr "
		       "or non-text code)";
	case -EBUSY:
		return " (another tracer holds this address)";
	case -ENOENT:
		return " (not kernel text)";
	default:
		return "";
	}
}

static int attach_kprobes(struct engine *e, struct engine_object *eo)
{
	const struct target_obj *o = eo->obj;
	uint32_t last_func = UINT32_MAX;
	size_t eilseq = 0;

	eo->links = calloc(o->sites.n, sizeof(*eo->links));
	if (!eo->links)
		return -ENOMEM;
	for (size_t i = 0; i < o->sites.n; i++) {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .bpf_cookie = eo->first + i,
			    .offset = o->sites.v[i].vaddr);
		const struct elf_func *f = &o->funcs[o->sites.v[i].func];
		struct bpf_link *l;

		libbpf_quiet_warnings = true;
		l = bpf_program__attach_kprobe_opts(e->skel->progs.kcsand_kprobe, NULL, &ko);
		libbpf_quiet_warnings = false;
		if (!l) {
			int err = -errno;

			eo->refused++;
			if (err == -EILSEQ)
				eilseq++;
			/* Every site with -v, else a function's first. */
			if (e->opts.verbose || err == -EILSEQ || o->sites.v[i].func != last_func)
				pr_warn("the kernel refuses a kprobe at %s+0x%llx: %s%s\n",
					f->name,
					(unsigned long long)(o->sites.v[i].vaddr - f->vaddr),
					strerror(-err), kprobe_refusal_why(err));
			last_func = o->sites.v[i].func;
			continue;
		}
		eo->links[eo->nr_links++] = l;
	}
	if (eo->refused)
		pr_warn("%zu of %zu kernel sites refused by the kernel (%zu not on an "
				"instruction boundary)%s\n",
			eo->refused, o->sites.n, eilseq, e->opts.verbose ? "" : "; -v names them");
	if (!eo->nr_links) {
		pr_warn("no kernel site could be probed (does the kernel have "
				"CONFIG_KPROBES and CONFIG_BPF_EVENTS?)\n");
		return -ENOENT;
	}
	return 0;
}

static void detach_object(struct engine_object *eo)
{
	if (eo->link_fd >= 0)
		close(eo->link_fd);
	eo->link_fd = -1;
	if (eo->turn_fd >= 0)
		close(eo->turn_fd);
	eo->turn_fd = -1;
	for (size_t i = 0; i < eo->nr_links; i++)
		bpf_link__destroy(eo->links[i]);
	free(eo->links);
	eo->links = NULL;
	eo->nr_links = 0;
	eo->attached = false;
}

void engine_drop_changed(struct engine *e)
{
	for (size_t i = 0; i < e->nr_objs; i++) {
		struct engine_object *eo = &e->objs[i];

		if (eo->kernel || eo->removed || !target_obj__changed(eo->obj))
			continue;
		detach_object(eo);
		eo->removed = true;
		target_obj__release(eo->obj);
	}
}

static int attach_object(struct engine *e, struct engine_object *eo)
{
	int err;

	/* An object whose selected functions have no site gets no link: an empty one is EINVAL. */
	if (!eo->obj->sites.n)
		return 0;
	err = fill_sites(e, eo);
	if (!err && eo->kernel && e->kbp_mode)
		;	/* code breakpoints sample the sites: engine__attach() */
	else if (!err && eo->kernel)
		err = attach_kprobes(e, eo);
	else if (!err)
		err = e->multi ? engine_link_multi(e, eo, NULL, &eo->link_fd) :
				 engine_link_per_site(e, eo, NULL);
	if (err) {
		detach_object(eo);
		return err;
	}
	eo->attached = true;
	return 0;
}

/* Give a decoded object its cookie range and, once loaded, its probes. */
static int register_object(struct engine *e, struct target_obj *obj, bool kernel)
{
	const char *path = obj->path;
	struct engine_object *eo;
	uint32_t *site_obj;
	size_t need;
	int err;

	need = e->nr_cookies + obj->sites.n;
	if (e->skel && need > e->capacity) {
		pr_warn("%s: %zu more sites do not fit the site table "
				"(%zu of %zu used; raise max_sites)\n",
			path, obj->sites.n, e->nr_cookies, e->capacity);
		target_obj__free(obj);
		return -ENOSPC;
	}
	err = ARRAY_RESERVE(e->objs, e->cap_objs, e->nr_objs, 4);
	/* One entry per cookie: it grows by a whole object's sites at once. */
	site_obj = realloc(e->site_obj, (need ? need : 1) * sizeof(*site_obj));
	if (site_obj)
		e->site_obj = site_obj;
	if (err || !site_obj) {
		target_obj__free(obj);
		return -ENOMEM;
	}
	eo = &e->objs[e->nr_objs];
	*eo = (struct engine_object){ .obj = obj, .first = e->nr_cookies, .link_fd = -1,
				      .turn_fd = -1, .kernel = kernel };
	for (size_t i = e->nr_cookies; i < need; i++)
		e->site_obj[i] = e->nr_objs;
	e->nr_cookies = need;
	e->nr_objs++;

	if (e->opts.verbose)
		pr_info(
			"%s: %llu functions, %llu sites (%llu marked, %llu of them cas loop "
			"reads); skipped: %llu stack, %llu tls, %llu unencodable, %llu locked before "
			"a branch target, %llu vector insns the kernel's probes misread\n",
			path, (unsigned long long)obj->stats.funcs,
			(unsigned long long)obj->stats.sites, (unsigned long long)obj->stats.marked,
			(unsigned long long)obj->stats.cas_loop_reads,
			(unsigned long long)obj->stats.skipped_stack,
			(unsigned long long)obj->stats.skipped_tls,
			(unsigned long long)obj->stats.unencodable,
			(unsigned long long)obj->stats.lock_at_target,
			(unsigned long long)obj->stats.misemulated);
	if (e->skel && e->rb) {
		err = attach_object(e, eo);
		if (err) {
			eo->removed = true;
			return err;
		}
	}
	return (int)(e->nr_objs - 1);
}


static const char *kernel_debug_cb(void *ctx, const char *module)
{
	return engine_kernel_debug_file(ctx, module);
}

/* Kernel sites: DWARF from the vmlinux / NAME.ko that engine_kernel_debug_file() finds (kmark.h). */
static int mark_kernel_object(struct engine *e, struct target_obj *obj, const struct mark_opts *mo)
{
	struct kmark_stats ks;
	int err = kmark__apply(obj, e->ksyms, NULL, kernel_debug_cb, e, mo, &ks);

	/* Said always: the next run would read the DWARF again (minutes for a subsystem). */
	if (!err && ks.cache_err)
		pr_warn("[kernel]: cannot write the marking cache %s: %s (the next run marks "
			"from the DWARF again; KCSAND_CACHE_DIR names a writable directory)\n",
			ks.cache_path, strerror(-ks.cache_err));
	if (err || !e->opts.verbose)
		return err;
	pr_info("[kernel]: marking from %zu debug file%s%s\n", ks.debug_files,
		ks.debug_files == 1 ? "" : "s", ks.kaslr ? " (vmlinux through _text)" : "");
	if (ks.cache_path[0])
		pr_info("[kernel]: %llu of %zu sites' verdicts from the cache %s%s%s\n",
			(unsigned long long)ks.cached, obj->sites.n, ks.cache_path,
			ks.cache_err ? ", which cannot be written: " : "",
			ks.cache_err ? strerror(-ks.cache_err) : "");
	if (ks.no_debug)
		pr_info("[kernel]: %zu sites without debug info (--kernel-debug "
				"NAME.ko or a vmlinux): only lock prefixes and the marks file mark "
				"them\n", ks.no_debug);
	if (ks.module_nowatch)
		pr_info("[kernel]: %zu plain sites of modules without debug info "
				"are never watched: any may be a device register (readl), whose "
				"value kcsand must not read again\n", ks.module_nowatch);
	if (ks.not_found)
		pr_info("[kernel]: %zu sites in functions the debug file does "
				"not have (another build?)\n", ks.not_found);
	if (ks.no_source)
		pr_info("[kernel]: source not found for %llu sites (--source-dir)\n",
			(unsigned long long)ks.no_source);
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
	int err;

	if (e->opts.no_marking) {
		mark__reset(obj);
		mark__update_stats(obj);
		return 0;
	}
	if (e->opts.kernel)
		return mark_kernel_object(e, obj, &mo);
	err = mark__apply(obj, &mo, &ms);

	if (!err && e->opts.verbose && !ms.dwarf)
		pr_info("%s: no debug info: only lock prefixes and the marks file "
				"mark accesses\n", obj->path);
	if (!err && e->opts.verbose && ms.no_source)
		pr_info("%s: source not found for %llu sites (--source-dir)\n",
			obj->path, (unsigned long long)ms.no_source);
	return err;
}

int engine__add_object(struct engine *e, const char *path, const char *globs)
{
	struct target_obj *obj;
	uint64_t t0 = clock__now_ns();
	int err;

	if (e->opts.kernel) {
		pr_warn("%s: user objects need a user-mode engine\n", path);
		return -EINVAL;
	}
	err = target_obj__open(path, &obj);
	if (err)
		return err;
	err = target_obj__decode(obj, globs ? globs : e->opts.functions, &e->opts.decode);
	if (err < 0) {
		pr_warn("cannot decode %s: %s\n", path, strerror(-err));
		target_obj__free(obj);
		return err;
	}
	if (!obj->nr_funcs) {
		pr_warn("%s has no functions: no symbol table, no debug file and no .eh_frame "
			"bounds any\n", path);
		target_obj__free(obj);
		return -ENOENT;
	}
	pr_info("%s: %zu functions from %s\n", path, obj->nr_funcs, obj->funcs_from);
	err = mark_object(e, obj);
	e->decode_ms += (clock__now_ns() - t0) / 1e6;
	if (err < 0) {
		pr_warn("cannot mark the sites of %s: %s\n", path, strerror(-err));
		target_obj__free(obj);
		return err;
	}
	return register_object(e, obj, false);
}

/* Kernel text symbols: the probed functions, and every kernel frame of a report. */
static int load_ksyms(struct engine *e)
{
	int err;

	if (e->ksyms)
		return 0;
	e->ksyms = ksyms__load();
	if (!e->ksyms) {
		err = -errno;
		pr_warn("cannot read /proc/kallsyms: %s\n",
			err == -EPERM ? "addresses are hidden (kptr_restrict)" : strerror(-err));
		return err;
	}
	return 0;
}

/* Is the kernel function at addr in an object this engine probes (attached or about to be)? */
static bool kernel_func_probed(void *ctx, uint64_t addr)
{
	const struct engine *e = ctx;

	for (size_t i = 0; i < e->nr_objs; i++) {
		const struct engine_object *eo = &e->objs[i];

		if (!eo->kernel || eo->removed)
			continue;
		for (size_t f = 0; f < eo->obj->nr_funcs; f++)
			if (eo->obj->funcs[f].vaddr == addr)
				return true;
	}
	return false;
}

/* src:PATH specs: the functions of each --kernel-debug file's compile units under PATH. */
struct src_set {
	const char *path;
	char module[64];	/* the .ko's module, "" for a vmlinux */
	struct ksrc_funcs f;
};

struct src_sets {
	struct engine *e;
	struct src_set *v;
	size_t n;
	struct ksrc_funcs exempt;	/* vmlinux's functions KCSAN leaves uninstrumented */
};

static bool kernel_func_exempt(void *ctx, const struct ksym *k)
{
	return ksrc__has(&((struct src_sets *)ctx)->exempt, k->name);
}

/*
 * What KCSAN's Makefiles leave uninstrumented, from the vmlinux's DWARF:
 * left out of every target unless --kcsan-exempt.  KCSAN's reasons (boot
 * hangs in arch/x86/kernel/, recursion in its own udelay, the tracer and
 * lockdep, noise in kernel/sched/) hold for a debug register as much: the
 * debug exception runs there too.  Without the vmlinux's DWARF the units
 * are unknown: said for a large set, where it matters.
 */
static int exempt_load(struct engine *e, struct src_sets *ss)
{
	const char *vmlinux = engine_kernel_debug_file(e, NULL);
	int err;

	if (e->opts.kcsan_exempt || !vmlinux)
		return 0;
	err = ksrc__load_any(vmlinux, ksrc_kcsan_exempt, ksrc_nr_kcsan_exempt, &ss->exempt);
	if (e->opts.verbose && !err)
		pr_info("KCSAN leaves %zu compile units of %s uninstrumented (%zu functions): "
			"not probed\n", ss->exempt.units, vmlinux, ss->exempt.n);
	return err;
}

static bool kernel_func_in_source(void *ctx, const char *path, const struct ksym *k)
{
	const struct src_sets *ss = ctx;

	for (size_t i = 0; i < ss->n; i++) {
		const struct src_set *s = &ss->v[i];

		if (!strcmp(s->path, path) && !strcmp(s->module, k->module ? k->module : "") &&
		    ksrc__has(&s->f, k->name))
			return true;
	}
	return false;
}

static bool kernel_func_probed_ss(void *ctx, uint64_t addr)
{
	return kernel_func_probed(((struct src_sets *)ctx)->e, addr);
}

/* The --kernel-debug file whose symbol table sizes a module's (NULL: vmlinux's) functions. */
static const char *kernel_debug_ss(void *ctx, const char *module)
{
	return engine_kernel_debug_file(((struct src_sets *)ctx)->e, module);
}

/* A NAME.ko's module as kallsyms names it ('-' becomes '_'); "" for a vmlinux. */
static void debug_file_module(const char *file, char *mod, size_t len)
{
	const char *b = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	size_t n = strlen(b);

	mod[0] = 0;
	if (n < 4 || strcmp(b + n - 3, ".ko"))
		return;
	snprintf(mod, len, "%.*s", (int)(n - 3), b);
	for (char *c = mod; *c; c++)
		if (*c == '-')
			*c = '_';
}

static void src_sets_free(struct src_sets *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		ksrc__free(&ss->v[i].f);
	free(ss->v);
	ksrc__free(&ss->exempt);
}

static int src_sets_load(struct engine *e, const char *const *specs, size_t nr,
			 struct src_sets *ss)
{
	size_t nd = e->opts.nr_kernel_debug;

	for (size_t i = 0; i < nr; i++) {
		const char *path = specs[i] + 4;
		size_t units = 0, funcs = 0;

		if (strncmp(specs[i], "src:", 4))
			continue;
		if (!nd) {
			pr_warn("%s needs --kernel-debug (a vmlinux or NAME.ko with DWARF: its "
				"compile units say which functions are in %s)\n", specs[i], path);
			return -EINVAL;
		}
		for (size_t d = 0; d < nd; d++) {
			struct src_set *s;
			void *v = realloc(ss->v, (ss->n + 1) * sizeof(*ss->v));
			int err;

			if (!v)
				return -ENOMEM;
			ss->v = v;
			s = &ss->v[ss->n++];
			memset(s, 0, sizeof(*s));
			s->path = path;
			debug_file_module(e->opts.kernel_debug[d], s->module, sizeof(s->module));
			err = ksrc__load(e->opts.kernel_debug[d], path, &s->f);
			if (err)
				return err;
			units += s->f.units;
			funcs += s->f.n;
		}
		/* Said without -v too: the user checks what a path chose (docs/kernel-mode.md). */
		pr_warn("%s: %zu compile unit%s, %zu functions with code\n",
			specs[i], units, units == 1 ? "" : "s", funcs);
	}
	return 0;
}

/* The matching functions left out of a kernel target, and why; how the others were sized. */
static void print_kernel_stats(const struct engine *e, const struct ktarget_stats *skipped,
			       size_t nr_sites)
{
	if (!e->opts.kcsan_exempt && !engine_kernel_debug_file(e, NULL) &&
	    nr_sites >= KBP_AUTO_MIN_SITES)
		pr_warn("without the vmlinux's DWARF (--kernel-debug), what KCSAN leaves "
			"uninstrumented (arch/x86/kernel/, kernel/sched/, ...) cannot be told by "
			"its source: the %zu sites may include it\n", nr_sites);
	if (e->opts.verbose)
		pr_info("[kernel]: %zu functions sized from the debug files' symbol tables, %zu by "
			"reachability (up to padding no branch passes)\n", skipped->sized_elf,
			skipped->sized_reach);
	if (skipped->blacklisted && e->opts.verbose)
		pr_info("%zu matching functions are on the kprobe blacklist\n",
			skipped->blacklisted);
	if (skipped->exempt)
		pr_warn("%zu matching functions are in code KCSAN leaves uninstrumented "
			"(arch/x86/kernel/, kernel/sched/, ...): left out (--kcsan-exempt probes "
			"them)\n", skipped->exempt);
	if (skipped->pseudo && e->opts.verbose)
		pr_warn("%zu matching symbols are generated code (BPF programs, ftrace and "
			"kprobe trampolines): left out\n", skipped->pseudo);
	if (skipped->init_text && e->opts.verbose)
		pr_info("%zu matching functions are __init or __exit code, freed after boot\n",
			skipped->init_text);
	if (skipped->probed)
		pr_warn("%zu matching functions are already probed by another "
				"kernel target: left out of this one\n", skipped->probed);
}
/* libbpf creates kprobes through the kprobe PMU: without it nothing can attach. */
static int check_kprobes(void)
{
	struct utsname u;

	if (!access("/sys/bus/event_source/devices/kprobe/type", R_OK))
		return 0;
	uname(&u);
	pr_warn("this kernel (%s) has no kprobes: kernel mode needs "
		"CONFIG_KPROBES and CONFIG_KPROBE_EVENTS\n", u.release);
	return -EOPNOTSUPP;
}

int engine__add_kernel(struct engine *e, const char *const *specs, size_t nr_specs)
{
	struct src_sets ss = { .e = e };
	struct ktarget_skip skip = { .probed = kernel_func_probed_ss,
				     .in_source = kernel_func_in_source,
				     .debug_file = kernel_debug_ss, .exempt = kernel_func_exempt,
				     .ctx = &ss };
	struct ktarget_stats skipped;
	struct target_obj *obj;
	struct ksyms *ks;
	uint64_t t0 = clock__now_ns(), t1, t2;
	int err;

	if (!e->opts.kernel) {
		pr_warn("kernel targets need a kernel-mode engine\n");
		return -EINVAL;
	}
	err = check_kprobes();
	if (err)
		return err;
	/*
	 * kallsyms afresh for every target: a module loaded since the last one
	 * (kcsand, the service, lives long) is in it.  Reports of the earlier
	 * targets are symbolized with the new table too.
	 */
	ks = ksyms__load();
	if (!ks) {
		err = -errno;
		pr_warn("cannot read /proc/kallsyms: %s\n",
			err == -EPERM ? "addresses are hidden (kptr_restrict)" : strerror(-err));
		return err;
	}
	ksyms__free(e->ksyms);
	e->ksyms = ks;
	err = src_sets_load(e, specs, nr_specs, &ss);
	if (!err)
		err = exempt_load(e, &ss);
	t1 = clock__now_ns();
	if (!err)
		err = ktarget__build(e->ksyms, specs, nr_specs, &e->opts.decode, &skip, &obj,
				     &skipped);
	src_sets_free(&ss);
	t2 = clock__now_ns();
	e->decode_ms += (t2 - t0) / 1e6;
	if (err)
		return err;
	err = mark_object(e, obj);
	e->decode_ms += (clock__now_ns() - t2) / 1e6;
	/* Where the time of a large set goes (docs/kernel-mode.md measures it). */
	if (e->opts.verbose)
		pr_info("[kernel]: site sets read in %.1f ms, %zu sites decoded from /proc/kcore "
			"in %.1f ms, marked in %.1f ms\n", (t1 - t0) / 1e6, obj ? obj->sites.n : 0,
			(t2 - t1) / 1e6, (clock__now_ns() - t2) / 1e6);
	if (err) {
		pr_warn("cannot mark the kernel sites: %s\n", strerror(-err));
		target_obj__free(obj);
		return err;
	}
	print_kernel_stats(e, &skipped, obj->sites.n);
	return register_object(e, obj, true);
}

int engine__remove_object(struct engine *e, int id)
{
	if (id < 0 || (size_t)id >= e->nr_objs || e->objs[id].removed)
		return -ENOENT;
	detach_object(&e->objs[id]);
	e->objs[id].removed = true;
	return 0;
}

/*
 * Reports taken from the ring buffer in one poll.  libbpf's consumer goes
 * on while the producers keep adding, and a racy target adds hundreds a
 * second: without a bound, one poll could run for as long as the races
 * went on, the queue grew with it, and the control socket went unanswered.
 * Past the bound the rest waits in the ring buffer, and what does not fit
 * there is counted as dropped (records_dropped), as KCSAN drops a report
 * it has no room for.
 */
#define ENGINE_BATCH		256
#define ENGINE_BATCH_FULL	(-EAGAIN)	/* on_event's stop, not an error */

/* A stack copy, kept for engine_process_ustacks(): unwinding is no work for the callback. */
static int queue_ustack(struct engine *e, const struct kcsand_ustack *rec)
{
	if (!e->unwind)
		return 0;
	if (e->nr_ustacks == e->cap_ustacks) {
		size_t cap = e->cap_ustacks ? e->cap_ustacks * 2 : 16;
		struct kcsand_ustack *q = realloc(e->ustacks, cap * sizeof(*q));

		if (!q)
			return 0;
		e->ustacks = q;
		e->cap_ustacks = cap;
	}
	memcpy(&e->ustacks[e->nr_ustacks++], rec, sizeof(*rec));
	return e->nr_ustacks >= ENGINE_BATCH ? ENGINE_BATCH_FULL : 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct engine *e = ctx;
	const struct kcsand_report *rec = data;
	struct kcsand_report paired;

	/* A hardware watchpoint's trap: a report once paired with its escalation. */
	if (len >= sizeof(struct kcsand_hw_decode) && rec->type == KCSAND_REC_HW_DECODE) {
		hwbp__decode(e->hw, e->sym, data);
		return 0;
	}
	if (len >= sizeof(struct kcsand_ustack) && rec->type == KCSAND_REC_USTACK)
		return queue_ustack(e, data);
	if (len >= sizeof(struct kcsand_hw_access) && rec->type == KCSAND_REC_HW_ACCESS) {
		if (!hwbp__pair(e->hw, data, &paired))
			return 0;
		rec = &paired;
	} else if (len < sizeof(*rec) || rec->type != KCSAND_REC_REPORT) {
		return 0;
	}
	if (ARRAY_RESERVE(e->queue, e->cap_queued, e->nr_queued, 16))
		return 0;
	memcpy(&e->queue[e->nr_queued++], rec, sizeof(*rec));
	/* libbpf has consumed this record: stopping here loses nothing. */
	return e->nr_queued >= ENGINE_BATCH ? ENGINE_BATCH_FULL : 0;
}

/*
 * The programs of the mode (and of the kernel's uprobe flavour); the others
 * stay unloaded: verifying a program costs 10 to 200 ms, which a run of a
 * short program pays in full.
 */
static void select_programs(struct engine *e, struct kcsand_bpf *skel)
{
	struct bpf_program *hb[] = { skel->progs.kcsand_hb_entry, skel->progs.kcsand_hb_return,
				     skel->progs.kcsand_hb_fork, skel->progs.kcsand_hb_exit };

	if (e->opts.kernel || !e->opts.history)
		for (size_t i = 0; i < sizeof(hb) / sizeof(hb[0]); i++)
			bpf_program__set_autoload(hb[i], false);
	if (e->opts.kernel) {
		bpf_program__set_autoload(skel->progs.kcsand_uprobe, false);
		bpf_program__set_autoload(skel->progs.kcsand_uprobe_multi, false);
		bpf_program__set_autoload(skel->progs.kcsand_hwbp, false);
		/* User mode's hot turns: kernel mode samples by kcsand_kxbp. */
		bpf_program__set_autoload(skel->progs.kcsand_xbp, false);
		return;
	}
	/*
	 * Where debug registers do not trap, hot turns and escalations never
	 * use them; where they do, the hot turns' program loads later, while
	 * the target starts (late_load.h).
	 */
	bpf_program__set_autoload(skel->progs.kcsand_xbp, false);
	if (hwbp__no_traps_why())
		bpf_program__set_autoload(skel->progs.kcsand_hwbp, false);
	if (e->multi) {
		bpf_program__set_expected_attach_type(skel->progs.kcsand_uprobe_multi,
						      KCSAND_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_autoload(skel->progs.kcsand_uprobe, false);
	} else {
		bpf_program__set_autoload(skel->progs.kcsand_uprobe_multi, false);
	}
	bpf_program__set_autoload(skel->progs.kcsand_kprobe, false);
	bpf_program__set_autoload(skel->progs.kcsand_hwbp_kernel, false);
	bpf_program__set_autoload(skel->progs.kcsand_kxbp, false);
}

/* With the object loaded: process tracking, kernel symbols, watches, history, reports. */
static int start_loaded(struct engine *e)
{
	struct kcsand_bpf *skel = e->skel;
	int err;

	e->tp_links[0] = bpf_program__attach(skel->progs.kcsand_fork);
	e->tp_links[1] = bpf_program__attach(skel->progs.kcsand_exit);
	if (!e->tp_links[0] || !e->tp_links[1]) {
		err = -errno;
		pr_warn("cannot attach the sched_process_fork/exit tracepoints: %s\n",
			strerror(-err));
		return err;
	}
	/* Kernel mode with only --watch probes nothing, but its reports have kernel frames. */
	if (e->opts.kernel) {
		err = engine_heartbeat_start(skel, &e->heartbeat);
		if (!err)
			err = load_ksyms(e);
		if (err)
			return err;
	}
	err = hwbp__new(skel, e->opts.kernel, &e->hw);
	if (err)
		return err;
	if (e->opts.kernel)
		hwbp__limit(e->hw, KCSAND_HW_SLOTS - e->opts.free_regs);
	if (e->opts.history && !e->opts.kernel) {
		err = history__new(skel, e->multi, e->opts.verbose, &e->hist);
		hb_pace__init(&e->hb_pace);
		if (err)
			return err;
	}
	e->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, e, NULL);
	if (!e->rb) {
		err = -errno;
		pr_warn("cannot open the ring buffer: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/* Load the BPF object and attach the process-tracking tracepoints. */
static int load(struct engine *e)
{
	struct kcsand_bpf *skel;
	int err;

	e->multi = !e->opts.force_per_site_links && uprobe_multi__supported();
	skel = kcsand_bpf__open();
	if (!skel) {
		err = -errno;
		pr_warn("failed to open BPF object: %s\n", strerror(-err));
		return err;
	}
	e->skel = skel;
	e->capacity = e->opts.max_sites > e->nr_cookies ? e->opts.max_sites : e->nr_cookies;
	if (!e->capacity)
		e->capacity = 1;
	bpf_map__set_max_entries(skel->maps.sites, e->capacity);
	bpf_map__set_max_entries(skel->maps.events,
				 ring_bytes(e->opts.params.v[PARAM_RING_BUFFER_KB]));
	bpf_params_fill(&skel->data->params, &e->opts);
	/* Kernel mode: kprobes stay registered, the sampler flips a bitmap the probes test. */
	err = sampler__prepare(skel, e->capacity, e->opts.kernel);
	if (err) {
		pr_warn("cannot size the site statistics: %s\n", strerror(-err));
		return err;
	}
	select_programs(e, skel);
	if (e->opts.history && !e->opts.kernel)
		history__before_load(skel, e->multi);
	err = kcsand_bpf__load(skel);
	if (err) {
		pr_warn("failed to load BPF object: %s\n", strerror(-err));
		return err;
	}
	if (!e->opts.kernel && !hwbp__no_traps_why() && late_load__start(skel, &e->late))
		pr_warn("hot turns use uprobes on every thread: no thread to load their program\n");
	return start_loaded(e);
}

/*
 * Code an execute breakpoint must never be on: the code that moves one.
 * x86's arch_uninstall_hw_breakpoint() clears its slot (bp_per_reg) before
 * it clears DR7, so when a mover moves a register off a site in that window,
 * the uninstall itself traps on it, the #DB handler finds no event for the
 * register, returns without setting RF, and the instruction traps again, for
 * ever, with interrupts off: a silent wedge (issue 21; its src:kernel/ took
 * arch/x86/kernel/).  The window calls set_dr_addr_mask() on AMD.  By name,
 * so that --kcsan-exempt and sets without DWARF are safe too.
 */
static const char *const kbp_never[] = { "*hw_breakpoint*", "*dr_addr_mask*", "*debugreg*" };

static bool kbp_excluded(const char *name, size_t *nmi, size_t *machinery)
{
	/*
	 * A kprobe refuses NMI code by itself; a debug register does not:
	 * leave out the functions named for it too (the BPF side also skips
	 * any hit under an NMI, and the kprobe blacklist, noinstr and entry
	 * code are out already: ktarget.c).
	 */
	if (strstr(name, "nmi")) {
		(*nmi)++;
		return true;
	}
	for (size_t i = 0; i < sizeof(kbp_never) / sizeof(kbp_never[0]); i++) {
		if (!fnmatch(kbp_never[i], name, 0)) {
			(*machinery)++;
			return true;
		}
	}
	return false;
}

/* Every kernel site, addresses and cookies, into the code-breakpoint sampler's cycle. */
static int start_kbp(struct engine *e)
{
	struct kbp_opts ko = {
		.nregs = e->opts.kbp_regs, .period_us = e->opts.kbp_period_us,
		.budget = e->opts.kbp_period_fixed ? 0 :
			  e->opts.params.v[PARAM_OVERHEAD_BUDGET] / 100.0,
		.seed = (unsigned int)clock__now_ns(), .verbose = e->opts.verbose };
	size_t n = 0, nmi = 0, machinery = 0, total = engine__nr_sites(e);
	uint64_t *addr = malloc(total * sizeof(*addr));
	uint32_t *site = malloc(total * sizeof(*site));
	int err = -ENOMEM;

	/* Where a trap is timed; without it the budget counts checks and moves only. */
	if (e->ksyms)
		ksyms__vmlinux_addr(e->ksyms, "__x64_sys_getppid", &ko.calib_addr);

	if (addr && site) {
		for (size_t i = 0; i < e->nr_objs; i++) {
			const struct engine_object *eo = &e->objs[i];

			if (!eo->kernel || eo->removed)
				continue;
			for (size_t j = 0; j < eo->obj->sites.n; j++) {
				const struct site *st = &eo->obj->sites.v[j];

				if (kbp_excluded(eo->obj->funcs[st->func].name, &nmi, &machinery))
					continue;
				addr[n] = st->vaddr;
				site[n++] = eo->first + j;
			}
		}
		if (nmi)
			pr_warn("breakpoints: %zu sites in NMI functions (*nmi*) left out\n", nmi);
		if (machinery)
			pr_warn("breakpoints: %zu sites in the code that moves breakpoints "
				"(*hw_breakpoint*, *dr_addr_mask*, *debugreg*) left out\n", machinery);
		err = n ? kbp__new(e->skel, addr, site, n, &ko, &e->kbp) : -ENOENT;
	}
	if (!err) {
		struct kbp_stats st;

		/* What sampling got is not the escalations' or a debugger's. */
		kbp__stats(e->kbp, &st);
		hwbp__limit(e->hw, KCSAND_HW_SLOTS - e->opts.free_regs - st.nregs);
	}
	free(addr);
	free(site);
	return err;
}

/*
 * Kernel sites: a kprobe each, or code breakpoints sampling them a few at a
 * time.  AUTO takes breakpoints for a large set, where kprobes would take
 * minutes to attach and trap on every hit (docs/kernel-mode.md), if a
 * debug register is left for sampling.
 */
static bool use_breakpoints(const struct engine *e)
{
	switch (e->opts.sample) {
	case ENGINE_SAMPLE_BREAKPOINTS:
		return true;
	case ENGINE_SAMPLE_KPROBES:
		return false;
	default:
		return e->opts.kbp_regs && e->nr_cookies >= KBP_AUTO_MIN_SITES;
	}
}

/* Probe every object added before load. */
static int attach_added(struct engine *e)
{
	uint64_t t0 = clock__now_ns();

	if (!e->rb)
		return -EINVAL;
	e->kbp_mode = e->opts.kernel && e->nr_cookies && !e->kbp && use_breakpoints(e);
	for (size_t i = 0; i < e->nr_objs; i++) {
		struct engine_object *eo = &e->objs[i];
		int err;

		if (eo->attached || eo->removed)
			continue;
		err = attach_object(e, eo);
		if (err)
			return err;
	}
	if (e->kbp_mode) {
		int err = start_kbp(e);

		if (err)
			return err;
	}
	if (e->opts.verbose)
		pr_info("decoded %zu sites in %.1f ms, attached them in %.1f ms (%s)\n",
			engine__nr_sites(e), e->decode_ms, (clock__now_ns() - t0) / 1e6,
			e->kbp_mode ? "code breakpoints" : e->opts.kernel ? "kprobes" :
			e->multi ? "uprobe_multi" : "per-site uprobes");
	/* Code breakpoints are the sampler: nothing to arm or disarm. */
	if (e->kbp_mode)
		return 0;
	/*
	 * The sampler re-attaches uprobe_multi links in user mode; in kernel
	 * mode it flips bits, since kprobes detach far too slowly for that
	 * (daemon/sampler/ksampler.c).  Kernel mode with only --watch has nothing to
	 * sample.
	 */
	if (!e->sampler && (!e->opts.kernel || e->nr_cookies)) {
		if (!e->tt && !e->opts.kernel)
			thread_turn__new(e->skel, &e->tt);	/* without it, turns use uprobe links */
		if (sampler__new(&engine_sampler_ops, e, e->skel, e->capacity, e->opts.kernel,
				 &e->sampler))
			pr_warn("sampler: off, every site stays armed\n");
	}
	return 0;
}

void engine__settle(struct engine *e)
{
	link_close__join(&e->calib_close);
}

int engine__start(struct engine *e)
{
	int err = load(e);

	return err ? err : attach_added(e);
}

int engine__add_pid(struct engine *e, pid_t pid)
{
	__u32 key = pid, one = 1;

	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.targets), &key, &one, BPF_ANY)) {
		int err = -errno;

		pr_warn("cannot trace pid %d: %s\n", pid, strerror(-err));
		return err;
	}
	/* The executable is the first object: its libraries hold the sync functions. */
	if (e->hist && e->nr_objs)
		return history__add_process(e->hist, pid, e->objs[0].obj->path);
	return 0;
}

int engine__remove_pid(struct engine *e, pid_t pid)
{
	__u32 key = pid;

	return bpf_map_delete_elem(bpf_map__fd(e->skel->maps.targets), &key) ? -errno : 0;
}

double engine_sync_cost_ns(const struct engine *e)
{
	struct sampler_stats st;

	if (!e->hist || !e->sampler)
		return 0;
	sampler__get_stats(e->sampler, &st);
	return history__cost_ns(e->hist, st.trap_ns);
}

/*
 * The sync probes on or off, from their cost against the budget (history.h,
 * pace.c), at every poll: their cost is read from counters at once, the
 * targets' own time as the sampler last measured it.
 */
static void pace_history(struct engine *e)
{
	double budget = engine_share_pct(e) / 100.0;
	struct sampler_stats st;

	if (!e->hist || !e->sampler)
		return;
	sampler__get_stats(e->sampler, &st);
	switch (hb_pace__step(&e->hb_pace, st.native_ns, history__cost_ns(e->hist, st.trap_ns),
			      budget)) {
	case HB_PACE_PAUSE:
		history__pause(e->hist);
		engine_rearm_sync(e, false);	/* its sync sites go back to the sampler */
		if (e->opts.verbose > 1)
			pr_debug("history: sync probes off: over their share of the budget\n");
		break;
	case HB_PACE_RESUME:
		/* Its sync sites armed first: the new generation must see all of them. */
		if (engine_rearm_sync(e, true) || history__resume(e->hist))
			engine_rearm_sync(e, false);
		else if (e->opts.verbose > 1)
			pr_debug("history: sync probes on, history restarted\n");
		break;
	case HB_PACE_KEEP:
		break;
	}
}

/* The hot turns' program, once loaded: turns on one thread from then on. */
static void take_late_program(struct engine *e)
{
	struct bpf_program *prog;
	double trap_ns;

	if (!late_load__take(e->late, &prog, &trap_ns))
		return;
	if (prog && e->tt)
		thread_turn__set_prog(e->tt, prog);
	sampler__set_xbp_trap_ns(e->sampler, trap_ns);
}

/* One batch of reports; true when the batch filled and more may be waiting. */
static bool take_reports(struct engine *e, int timeout_ms, int *err)
{
	int ret;

	*err = 0;
	if (!e->rb)
		return false;
	ret = ring_buffer__poll(e->rb, timeout_ms);
	if (ret == ENGINE_BATCH_FULL)
		return true;
	if (ret < 0 && ret != -EINTR)
		*err = ret;
	return false;
}

int engine__poll(struct engine *e, int timeout_ms)
{
	int err, due = engine__timeout_ms(e);
	uint64_t t0;
	bool more;

	if (due >= 0 && (timeout_ms < 0 || due < timeout_ms))
		timeout_ms = due;
	t0 = clock__now_ns();
	more = take_reports(e, timeout_ms, &err);
	engine_process_ustacks(e);
	for (size_t i = 0; i < e->nr_queued; i++)
		engine_process_report(e, &e->queue[i]);
	e->nr_queued = 0;
	/* The ring emptied after t0: what processes that exited before t0 sent is out. */
	if (!more)
		unwinder__release(e->unwind, t0);
	engine_release_held(e, false);
	engine_drop_changed(e);
	/* After the reports queued so far: their processes' maps were needed until now. */
	if (clock__now_ns() - e->swept_ns >= SYM_SWEEP_NS) {
		symbolizer__forget_exited(e->sym);
		unwinder__forget_exited(e->unwind);
		e->swept_ns = clock__now_ns();
	}
	take_late_program(e);
	if (e->sampler)
		sampler__tick(e->sampler);
	pace_history(e);
	hwbp__tick(e->hw);
	return err < 0 ? err : 0;
}

int engine__timeout_ms(const struct engine *e)
{
	/* Code breakpoints keep their own time (kbp.c's movers). */
	int t = e->sampler ? sampler__timeout_ms(e->sampler) : -1;
	int h = engine_held_next_ms(e);

	return h >= 0 && (t < 0 || h < t) ? h : t;
}

void engine__flush(struct engine *e)
{
	int err;

	/* Everything the ring buffer holds, a batch at a time. */
	while (take_reports(e, 0, &err)) {
		engine_process_ustacks(e);
		for (size_t i = 0; i < e->nr_queued; i++)
			engine_process_report(e, &e->queue[i]);
		e->nr_queued = 0;
	}
	engine__poll(e, 0);
	engine_release_held(e, true);
}

unsigned long engine__nr_reports(const struct engine *e)
{
	return e->nr_reports;
}

size_t engine__nr_sites(const struct engine *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->nr_objs; i++)
		if (!e->objs[i].removed)
			n += e->objs[i].obj->sites.n;
	return n;
}

void engine__print_mark_counts(const struct engine *e, FILE *out)
{
	uint64_t counts[MARK_REASON_COUNT] = {}, data_race = 0;

	for (size_t i = 0; i < e->nr_objs; i++)
		mark__count(e->objs[i].obj->sites.v, e->objs[i].obj->sites.n, counts, &data_race);
	fprintf(out, "kcsand: marked sites:");
	for (uint32_t r = MARK_NONE + 1; r < MARK_REASON_COUNT; r++)
		fprintf(out, "%s %llu %s", r == MARK_NONE + 1 ? "" : ",",
			(unsigned long long)counts[r], mark_reason__name(r));
	fprintf(out, "; %llu of them data_race; %llu plain\n", (unsigned long long)data_race,
		(unsigned long long)counts[MARK_NONE]);
}

/*
 * A kernel target's functions, their sizes and how many bytes of each were
 * decoded: all of st_size from a debug file ("symbol table"), or of
 * kallsyms' upper bound up to padding no branch passes ("kallsyms bound").
 */
static void print_kernel_funcs(const struct target_obj *o, FILE *out)
{
	for (size_t i = 0; i < o->nr_funcs; i++) {
		const struct elf_func *f = &o->funcs[i];

		fprintf(out, "kcsand: func %s 0x%llx %s size 0x%llx decoded 0x%llx (%s)\n",
			o->path, (unsigned long long)f->vaddr, f->name,
			(unsigned long long)f->size, (unsigned long long)f->decoded,
			f->bounded ? "kallsyms bound" : "symbol table");
	}
}

void engine__print_sites(const struct engine *e, FILE *out)
{
	for (size_t oi = 0; oi < e->nr_objs; oi++) {
		const struct target_obj *o = e->objs[oi].obj;

		if (e->opts.kernel)
			print_kernel_funcs(o, out);

		for (size_t i = 0; i < o->sites.n; i++) {
			const struct site *s = &o->sites.v[i];
			const struct elf_func *f = target_obj__site_func(o, s);
			unsigned int fl = s->desc.flags;
			const char *acc = !(fl & KCSAND_SITE_WRITE) ? "read" :
					  (fl & KCSAND_SITE_READ) ? "read-write" : "write";

			fprintf(out, "kcsand: site %s 0x%llx %s+0x%llx %s %u %s", o->path,
				(unsigned long long)s->vaddr, f ? f->name : "?",
				(unsigned long long)(f ? s->vaddr - f->vaddr : 0), acc,
				s->desc.size, (fl & KCSAND_SITE_DATA_RACE) ? "data_race" :
				(fl & KCSAND_SITE_MARKED) ? "marked" : "plain");
			if (s->reason != MARK_NONE)
				fprintf(out, " (%s)", mark_reason__name(s->reason));
			fputc('\n', out);
		}
	}
	engine__print_mark_counts(e, out);
}

void engine__counters(const struct engine *e, uint64_t out[KCSAND_CTR_COUNT])
{
	for (int i = 0; i < KCSAND_CTR_COUNT; i++)
		out[i] = e->skel ? e->skel->bss->counters[i] : 0;
	/* What the decoder could not encode never reaches BPF. */
	for (size_t i = 0; i < e->nr_objs; i++)
		out[KCSAND_CTR_UNENCODABLE_ACCESSES] += e->objs[i].obj->stats.unencodable;
}

uint64_t engine__hits(const struct engine *e)
{
	int ncpu = libbpf_num_possible_cpus();
	struct kcsand_cpu_state *v;
	__u32 zero = 0;
	uint64_t sum = 0;

	if (!e->skel || ncpu <= 0)
		return 0;
	/* A disarmed kernel site's hit ran no check: the sampler counted it. */
	if (e->sampler) {
		struct sampler_stats st;

		sampler__get_stats(e->sampler, &st);
		sum = st.unarmed_hits;
	}
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.cpu_state), &zero, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i].hits;
	free(v);
	return sum;
}

int engine__watch(struct engine *e, pid_t pid, const char *path, const char *spec)
{
	return e->hw ? hwbp__watch(e->hw, pid, path, spec) : -EINVAL;
}

int engine__unwatch(struct engine *e, int slot)
{
	return hwbp__unwatch(e->hw, slot);
}

int engine__watch_info(const struct engine *e, int slot, struct hwbp_slot_info *out)
{
	return hwbp__slot_info(e->hw, slot, out);
}

int engine__hw_slots_in_use(const struct engine *e)
{
	return hwbp__slots_in_use(e->hw);
}

int engine__hw_stats(const struct engine *e, struct hwbp_stats *out)
{
	if (!e->hw)
		return -ENOENT;
	hwbp__get_stats(e->hw, out);
	return 0;
}

bool engine__pid_traced(const struct engine *e, pid_t pid)
{
	__u32 key = pid, v;

	return e->skel && !bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.targets), &key, &v);
}

size_t engine__nr_cookies(const struct engine *e)
{
	return e->nr_cookies;
}

int engine__sampler_stats(const struct engine *e, struct sampler_stats *out)
{
	if (!e->sampler)
		return -ENOENT;
	sampler__get_stats(e->sampler, out);
	return 0;
}

static void print_sampler_summary(struct engine *e, FILE *out)
{
	struct sampler_stats st;

	sampler__get_stats(e->sampler, &st);
	fprintf(out, " armed_sites: %zu/%zu estimated_overhead: %.0f%% hot_turns: %lu",
		st.armed, st.total, st.est_overhead * 100, st.turns);
	if (st.kernel)
		fprintf(out, " unarmed_hits: %llu trap_floor: %.0f%% trap_ns: %.0f",
			st.unarmed_hits, st.floor_overhead * 100, st.trap_ns);
	else
		fprintf(out, " hot_turns_one_thread: %lu", st.xbp_turns);
	/* Sites at each backoff level, 100% / 10% / 1% / 0.1% (sampler.h). */
	fprintf(out, " site_levels: %zu/%zu/%zu/%zu", st.levels[0], st.levels[1],
		st.levels[2], st.levels[3]);
	/* What the warm-up and level 0 took, and how often their credit ran out. */
	if (!st.kernel)
		fprintf(out, " cold_start_ms: %.0f cold_credit_outs: %lu", st.cold_ms,
			st.cold_outs);
	fprintf(out, " cpu_ms: %.0f native_cpu_ms: %.0f", st.cpu_ns / 1e6, st.native_ns / 1e6);
}

static void print_kbp_summary(struct engine *e, FILE *out)
{
	struct kbp_stats ks;

	kbp__stats(e->kbp, &ks);
	fprintf(out, " breakpoint_sites_sampled: %zu/%zu breakpoint_cycles: %llu "
		"breakpoint_regs: %ux%u breakpoint_traps: %llu breakpoint_checks: %llu "
		"breakpoint_refused: %zu breakpoint_move_us: %.0f breakpoint_period_us: %u "
		"breakpoint_period_range_us: %u-%u breakpoint_min_regs: %u breakpoint_trap_ns: %.0f "
		"breakpoint_overhead: %.1f%%", ks.sampled, ks.sites,
		(unsigned long long)ks.cycles, ks.nregs, ks.ncpus,
		(unsigned long long)ks.hits, (unsigned long long)ks.checked, ks.refused,
		ks.retargets ? ks.retarget_ns / 1e3 / ks.retargets : 0.0, ks.period_us,
		ks.min_period_us, ks.max_period_us, ks.min_regs, ks.trap_ns, ks.overhead * 100);
}

static void print_hw_summary(struct engine *e, FILE *out)
{
	struct hwbp_stats hw_st;

	hwbp__get_stats(e->hw, &hw_st);
	fprintf(out, " hw_watchpoints_armed: %lu hw_traps: %llu hw_consumed: %llu "
		"hw_watchers: %llu hw_pairs: %lu hw_no_slot: %lu hw_unarmable: %lu "
		"hw_open_failed: %lu", hw_st.armed, (unsigned long long)hw_st.traps,
		(unsigned long long)hw_st.consumed, (unsigned long long)hw_st.watchers, hw_st.pairs,
		hw_st.no_slot, hw_st.unarmable, hw_st.open_failed);
	if (e->opts.kernel)
		fprintf(out, " hw_probed: %llu", (unsigned long long)hw_st.probed);
	else
		fprintf(out, " hw_decoded: %lu hw_undecoded: %llu hw_outside: %llu",
			hw_st.decoded, (unsigned long long)hw_st.undecoded,
			(unsigned long long)hw_st.outside);
}

/* -v: what the CFI unwind of the stack copies cost, and how often a side had its frames. */
static void print_unwind_summary(const struct engine *e, FILE *out)
{
	struct unwind_stats st;

	unwinder__stats(e->unwind, &st);
	fprintf(out, "kcsand: stacks: %lu copies unwound by CFI (%.1f KiB each, %.1f frames, "
		     "%.0f us each; %lu with one frame only); %lu report sides had their CFI "
		     "frames, %lu had none and kept their frame-pointer walk\n",
		st.copies, st.copies ? st.bytes / 1024.0 / st.copies : 0.0,
		st.copies ? (double)st.frames / st.copies : 0.0,
		st.copies ? st.ns / 1e3 / st.copies : 0.0, st.failed, st.found, st.missed);
}

/* A warning, not a counter: it goes before the summary line, brief or not. */
static void print_unclocked(struct engine *e, FILE *out)
{
	if (e->hist && history__unclocked_hits(e->hist))
		fprintf(out, "kcsand: history: more than %d threads of the process were alive at "
			     "once: %llu hits by threads without a clock were not checked, and %lu "
			     "races the history found were dropped, as sync of those threads went "
			     "unseen\n", KCSAND_HB_MAX_THREADS,
			(unsigned long long)history__unclocked_hits(e->hist), e->history_unsound);
}

static double cpu_factor(struct engine *e);

/* A program whose CPU time under the probes is this many times its own: see print_warnings(). */
#define SLOW_FACTOR	3.0

/*
 * Warnings, not counters: they go before the summary line, brief or not.
 * A program that ran SLOW_FACTOR times its native CPU time is said to: the
 * timeouts and watchdogs of a program under test start to fire around there.
 */
static void print_warnings(struct engine *e, FILE *out, bool slow)
{
	double factor = cpu_factor(e);

	if (slow && factor >= SLOW_FACTOR)
		fprintf(out, "kcsand: the program ran %.0fx its native CPU time under the probes "
			     "(--overhead-budget)\n", factor);
	print_unclocked(e, out);
	if (e->hist && history__lost_edges(e->hist))
		fprintf(out, "kcsand: history: %llu releases could not raise an object's clock (other "
			     "threads kept changing it): %lu races the history found were dropped\n",
			(unsigned long long)history__lost_edges(e->hist), e->history_unsound);
}

void engine__print_summary(struct engine *e, FILE *out)
{
	uint64_t c[KCSAND_CTR_COUNT];

	if (e->hist && e->opts.verbose)
		history__print(e->hist, out);
	if (e->unwind && e->opts.verbose)
		print_unwind_summary(e, out);
	print_warnings(e, out, true);
	engine__counters(e, c);
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits;", e->nr_reports,
		e->nr_reports == 1 ? "" : "s", engine__nr_sites(e),
		(unsigned long long)engine__hits(e));
	for (int i = 0; i < KCSAND_CTR_COUNT; i++)
		fprintf(out, " %s: %llu", counter__name(i), (unsigned long long)c[i]);
	fprintf(out, " suppressed_by_dedup: %lu suppressed_no_value_change: %lu",
		e->suppressed_dedup, e->suppressed_no_change);
	fprintf(out, " reports_watchpoint: %lu reports_history: %lu",
		e->nr_reports - e->nr_reports_history, e->nr_reports_history);
	if (e->hist) {
		struct history_stats hb_st;

		history__get_stats(e->hist, &hb_st);
		fprintf(out, " history_sync_ops: %llu history_checked: %llu history_shadow_live: %llu"
			     " history_sync_pauses: %lu history_unclocked_hits: %llu"
			     " history_reports_dropped: %lu history_forgotten: %llu",
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_SYNC_OPS],
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_CHECKED],
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_SHADOW_LIVE], hb_st.pauses,
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_NO_SLOT], e->history_unsound,
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_FORGET_OPS]);
	}
	if (e->kbp_mode)
		fprintf(out, " unknown_origin_held: %lu unknown_origin_folded: %lu",
			e->unknown_held, e->unknown_folded);
	if (e->sampler)
		print_sampler_summary(e, out);
	if (e->kbp)
		print_kbp_summary(e, out);
	if (e->hw)
		print_hw_summary(e, out);
	fputc('\n', out);
}

/*
 * The targets' CPU time with the probes per CPU time of their own over
 * the whole run, from the sampler; 0 when not measured (kernel mode: the
 * machine's time, not a program's).
 */
static double cpu_factor(struct engine *e)
{
	struct sampler_stats st;

	if (!e->sampler)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	double tick_ns = hz > 0 ? 1e9 / hz : 1e7, native;

	sampler__get_stats(e->sampler, &st);
	if (st.kernel || st.cpu_ns <= 0)
		return 0;
	/*
	 * CPU time is counted in clock ticks: a program whose own time is
	 * under one tick is taken to have run one, so the factor is a floor.
	 */
	native = st.native_ns > tick_ns ? st.native_ns : tick_ns;
	return st.cpu_ns > native ? st.cpu_ns / native : 1;
}

/* Sites armed and the whole run's overhead, from the sampler (user mode). */
static void print_brief_sampler(struct engine *e, FILE *out)
{
	struct sampler_stats st;
	double factor = cpu_factor(e);

	sampler__get_stats(e->sampler, &st);
	fprintf(out, "; %zu sites armed", st.armed);
	if (factor > 0)
		fprintf(out, ", overhead %.0f%%", (factor - 1) * 100);
	if (factor >= SLOW_FACTOR)
		fprintf(out, "; the program ran %.0fx its native CPU time (--overhead-budget)",
			factor);
}

void engine__print_brief(struct engine *e, FILE *out)
{
	print_warnings(e, out, false);
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits; %lu by watchpoints",
		e->nr_reports, e->nr_reports == 1 ? "" : "s", engine__nr_sites(e),
		(unsigned long long)engine__hits(e), e->nr_reports - e->nr_reports_history);
	if (e->hist)
		fprintf(out, ", %lu by the history", e->nr_reports_history);
	if (e->sampler)
		print_brief_sampler(e, out);
	fputs(" (-v: every counter)\n", out);
}

void engine__close(struct engine *e)
{
	struct link_close lc = { .n = 0 };

	if (!e)
		return;
	sampler__free(e->sampler);
	kbp__free(e->kbp);
	thread_turn__free(e->tt);
	engine__settle(e);
	/* Kernel probes check nothing from here: their detach takes a grace period each. */
	engine_heartbeat_stop(e->heartbeat);
	/*
	 * Every uprobe_multi link at once, sync probes and access probes, so
	 * that their grace periods overlap (util/link_close.h); the history
	 * stops remembering first.
	 */
	history__hand_links(e->hist, &lc);
	for (size_t i = 0; i < e->nr_objs; i++) {
		link_close__add(&lc, &e->objs[i].link_fd);
		link_close__add(&lc, &e->objs[i].turn_fd);
	}
	link_close__all(&lc);
	/* After the closes: a short run ends while the hot turns' program may still load. */
	late_load__free(e->late);
	history__free(e->hist);
	free(e->sampled);
	hwbp__free(e->hw);
	ring_buffer__free(e->rb);
	for (size_t i = 0; i < e->nr_objs; i++) {
		detach_object(&e->objs[i]);
		target_obj__free(e->objs[i].obj);
		free(e->objs[i].orig_flags);
	}
	bpf_link__destroy(e->tp_links[0]);
	bpf_link__destroy(e->tp_links[1]);
	kcsand_bpf__destroy(e->skel);
	symbolizer__free(e->sym);
	unwinder__free(e->unwind);
	free(e->ustacks);
	ksyms__free(e->ksyms);
	mark_rules__free(e->marks);
	dedup__free(e->dedup);
	free(e->objs);
	free(e->site_obj);
	free(e->queue);
	free(e->held);
	free(e);
}

int engine__epoll_fd(const struct engine *e)
{
	return e->rb ? ring_buffer__epoll_fd(e->rb) : -1;
}

void engine__set_trace_all(struct engine *e, bool on)
{
	e->opts.trace_all = on;
	if (e->skel)
		*(volatile __u32 *)&e->skel->data->params.trace_all = on;
}

int engine__set_nowatch(struct engine *e, bool (*nowatch)(void *ctx, const char *func),
			void *ctx)
{
	int fd = e->skel ? bpf_map__fd(e->skel->maps.sites) : -1, nr = 0;

	for (size_t i = 0; i < e->nr_objs; i++) {
		struct engine_object *eo = &e->objs[i];
		struct target_obj *o = eo->obj;

		if (eo->removed)
			continue;
		if (!eo->orig_flags) {
			eo->orig_flags = malloc(o->sites.n ? o->sites.n : 1);
			if (!eo->orig_flags)
				return -ENOMEM;
			for (size_t j = 0; j < o->sites.n; j++)
				eo->orig_flags[j] = o->sites.v[j].desc.flags;
		}
		for (size_t j = 0; j < o->sites.n; j++) {
			struct site *s = &o->sites.v[j];
			uint8_t want = eo->orig_flags[j];
			__u32 key = eo->first + j;

			if (s->func < o->nr_funcs && nowatch(ctx, o->funcs[s->func].name))
				want |= KCSAND_SITE_NOWATCH;
			if (want & KCSAND_SITE_NOWATCH)
				nr++;
			if (want == s->desc.flags)
				continue;
			s->desc.flags = want;
			if (eo->attached && bpf_map_update_elem(fd, &key, &s->desc, BPF_ANY)) {
				int err = -errno;

				pr_warn("cannot update site %u of %s: %s\n", key,
					o->path, strerror(-err));
				return err;
			}
		}
	}
	return nr;
}

void engine__suppressed(const struct engine *e, unsigned long *filter, unsigned long *dedup,
			unsigned long *no_change)
{
	*filter = e->suppressed_filter;
	*dedup = e->suppressed_dedup;
	*no_change = e->suppressed_no_change;
}

long engine__object_sites(const struct engine *e, int id)
{
	if (id < 0 || (size_t)id >= e->nr_objs || e->objs[id].removed)
		return -ENOENT;
	return e->objs[id].obj->sites.n;
}

const char *engine__site_object(const struct engine *e, uint32_t site)
{
	const struct target_obj *o = NULL;

	return engine_site_of(e, site, &o) ? o->path : NULL;
}
