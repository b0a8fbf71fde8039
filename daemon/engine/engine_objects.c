// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's probed objects: adding one (decode, mark, cookies), its
 * probes attached and detached (uprobe_multi, per-site uprobes, kprobes,
 * code breakpoints, whose start is engine_kbp.c's), the kernel's site sets
 * (src: specs, exemptions) and the site flags --nowatch changes.  engine.c
 * loads the BPF object they attach to.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "sites/ksyms.h"
#include "mark/kmark.h"
#include "sites/ksrc.h"
#include "sites/ktarget.h"
#include "mark/mark.h"
#include "hw/hwbp.h"
#include "history/history.h"
#include "sampler/kbp.h"
#include "hw/pair.h"
#include "sampler/sampler.h"
#include "util/uprobe_multi.h"
#include "sampler/thread_turn.h"
#include "engine_int.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/clock.h"
#include "util/array.h"

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

uint32_t engine_site_flags_at(void *ctx, const char *path, uint64_t vaddr)
{
	const struct engine *e = ctx;
	struct stat st;

	if (stat(path, &st))
		return 0;
	for (size_t i = 0; i < e->nr_objs; i++) {
		const struct engine_object *eo = &e->objs[i];
		const struct site_vec *sv = &eo->obj->sites;
		dev_t dev;
		ino_t ino;

		if (eo->kernel || eo->removed || target_obj__file_id(eo->obj, &dev, &ino) ||
		    dev != st.st_dev || ino != st.st_ino)
			continue;
		for (size_t j = 0; j < sv->n; j++)
			if (sv->v[j].vaddr == vaddr)
				return sv->v[j].desc.flags;
	}
	return 0;
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
	struct kcsand_bpf *skel;
	size_t eilseq = 0;
	unsigned int held;
	int err = engine_late_skel(e, "kcsand_kprobe", "kprobes on kernel sites", &skel);

	if (err)
		return err;
	eo->links = calloc(o->sites.n, sizeof(*eo->links));
	if (!eo->links)
		return -ENOMEM;
	held = engine_kprobe_hold(o->sites.n, KPROBE_BATCH_ATTACH);
	for (size_t i = 0; i < o->sites.n; i++) {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .bpf_cookie = eo->first + i,
			    .offset = o->sites.v[i].vaddr);
		const struct elf_func *f = &o->funcs[o->sites.v[i].func];
		struct bpf_link *l;

		engine_libbpf_quiet(true);
		l = bpf_program__attach_kprobe_opts(skel->progs.kcsand_kprobe, NULL, &ko);
		engine_libbpf_quiet(false);
		if (!l) {
			int err = -errno;

			eo->refused++;
			if (err == -EILSEQ)
				eilseq++;
			/* A function's first as a warning, the rest with -v. */
			pr_at(err == -EILSEQ || o->sites.v[i].func != last_func ?
			      KCSAND_WARN : KCSAND_INFO,
			      "the kernel refuses a kprobe at %s+0x%llx: %s%s\n", f->name,
			      (unsigned long long)(o->sites.v[i].vaddr - f->vaddr), strerror(-err),
			      kprobe_refusal_why(err));
			last_func = o->sites.v[i].func;
			continue;
		}
		eo->links[eo->nr_links++] = l;
	}
	engine_kprobe_release(held);
	if (eo->refused)
		pr_warn("%zu of %zu kernel sites refused by the kernel (%zu not on an "
				"instruction boundary)%s\n",
			eo->refused, o->sites.n, eilseq,
			kcsand__print_level_on(KCSAND_INFO) ? "" : "; -v names them");
	if (!eo->nr_links) {
		pr_warn("no kernel site could be probed (does the kernel have "
				"CONFIG_KPROBES and CONFIG_BPF_EVENTS?)\n");
		return -ENOENT;
	}
	return 0;
}

void engine_detach_object(struct engine_object *eo)
{
	struct link_close lc = { .n = 0 };
	unsigned int held = 0;

	for (size_t c = 0; c < eo->nr_chunks && eo->chunk_fd; c++)
		link_close__add(&lc, &eo->chunk_fd[c]);
	link_close__all(&lc);
	free(eo->chunk_fd);
	free(eo->linked);
	eo->chunk_fd = NULL;
	eo->linked = NULL;
	eo->nr_chunks = 0;
	if (eo->turn_fd >= 0)
		close(eo->turn_fd);
	eo->turn_fd = -1;
	/*
	 * Kprobes close one grace period or more each: from several threads at
	 * once, with the optimizer out of the way and the grace periods
	 * expedited (kprobe_opt.c).
	 */
	if (eo->kernel)
		held = engine_kprobe_hold(eo->nr_links, KPROBE_BATCH_DETACH);
	link_close__destroy(eo->links, eo->nr_links);
	engine_kprobe_release(held);
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
		engine_forget_release_probes(e, eo);
		engine_detach_object(eo);
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
	if (!err)
		engine_note_release_probes(e, eo);
	if (!err && eo->kernel && e->kbp_mode)
		;	/* code breakpoints sample the sites: engine_start_kbp(), engine_kbp.c */
	else if (!err && eo->kernel)
		err = attach_kprobes(e, eo);
	else if (!err)
		err = e->multi ? engine_link_chunks(e, eo, NULL) :
				 engine_link_per_site(e, eo, NULL);
	if (err) {
		engine_forget_release_probes(e, eo);
		engine_detach_object(eo);
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
	/* One entry per cookie: room for a whole object's sites at once. */
	if (!err)
		err = ARRAY_RESERVE_MORE(e->site_obj, e->cap_site_obj, e->nr_cookies,
					 obj->sites.n, need);
	if (err) {
		target_obj__free(obj);
		return -ENOMEM;
	}
	eo = &e->objs[e->nr_objs];
	*eo = (struct engine_object){ .obj = obj, .first = e->nr_cookies, .turn_fd = -1,
				      .kernel = kernel };
	for (size_t i = e->nr_cookies; i < need; i++)
		e->site_obj[i] = e->nr_objs;
	e->nr_cookies = need;
	e->nr_objs++;
	engine_place_sites(e, eo);

	pr_info("%s: %llu functions, %llu sites (%llu marked, %llu of them cas loop "
		"reads, %llu spin-wait reads, %llu of them around calls; %llu polled under a lock, left "
		"plain; %llu locked with no probe ahead, released late; "
		"%llu on escaped stack slots); skipped: %llu stack, %llu tls, %llu "
		"unencodable, %llu locked before a branch target, %llu misread by the kernel's "
		"probes (or before one), %llu insns the kernel's uprobes refuse\n",
		path, (unsigned long long)obj->stats.funcs,
		(unsigned long long)obj->stats.sites, (unsigned long long)obj->stats.marked,
		(unsigned long long)obj->stats.cas_loop_reads,
		(unsigned long long)obj->stats.spin_wait_reads,
		(unsigned long long)obj->stats.spin_wait_calls,
		(unsigned long long)obj->stats.spin_wait_locked,
		(unsigned long long)obj->stats.locked_late,
		(unsigned long long)obj->stats.stack_sites,
		(unsigned long long)obj->stats.skipped_stack,
		(unsigned long long)obj->stats.skipped_tls,
		(unsigned long long)obj->stats.unencodable,
		(unsigned long long)obj->stats.lock_at_target,
		(unsigned long long)obj->stats.misemulated,
		(unsigned long long)obj->stats.refused);
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
	if (err)
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

	if (!err && !ms.dwarf)
		pr_info("%s: no debug info: only lock prefixes and the marks file "
				"mark accesses\n", obj->path);
	if (!err && ms.no_source)
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
	/* Up to a tenth of a large object's decoding, for probes only the history attaches. */
	e->opts.decode.entry_aheads = e->opts.history;
	/* The spin-wait rule's calls that take a lock: the history's table names them. */
	e->opts.decode.returns_locked = history__returns_locked;
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
	size_t n, cap;
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
	if (!err)
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
			int err;

			if (ARRAY_RESERVE(ss->v, ss->cap, ss->n, 4))
				return -ENOMEM;
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
	pr_info("[kernel]: %zu functions sized from the debug files' symbol tables, %zu by "
		"reachability (up to padding no branch passes)\n", skipped->sized_elf,
		skipped->sized_reach);
	if (skipped->blacklisted)
		pr_info("%zu matching functions are on the kprobe blacklist\n",
			skipped->blacklisted);
	if (skipped->exempt)
		pr_warn("%zu matching functions are in code KCSAN leaves uninstrumented "
			"(arch/x86/kernel/, kernel/sched/, ...): left out (--kcsan-exempt probes "
			"them)\n", skipped->exempt);
	if (skipped->pseudo)
		pr_info("%zu matching symbols are generated code (BPF programs, ftrace and "
			"kprobe trampolines): left out\n", skipped->pseudo);
	if (skipped->init_text)
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
	engine_forget_release_probes(e, &e->objs[id]);
	engine_detach_object(&e->objs[id]);
	e->objs[id].removed = true;
	return 0;
}

/*
 * Kernel sites: a kprobe each, or code breakpoints sampling them a few at a
 * time.  AUTO takes breakpoints for a large set, where kprobes would take
 * minutes to attach and trap on every hit (docs/kernel-mode.md), if a
 * debug register is left for sampling.
 */
bool engine_use_breakpoints(const struct engine *e)
{
	switch (e->opts.sample) {
	case ENGINE_SAMPLE_BREAKPOINTS:
		return true;
	case ENGINE_SAMPLE_KPROBES:
		return false;
	default:
		/* Pinning is the breakpoints' (a kprobe is on every site anyway). */
		return e->opts.kbp_regs && (e->nr_cookies >= KBP_AUTO_MIN_SITES || e->opts.pin);
	}
}

/* The site sampler; kernel mode's times a kprobe's trap with kcsand_kprobe. */
static void start_sampler(struct engine *e)
{
	struct kcsand_bpf *skel = e->skel;

	if (!e->tt && !e->opts.kernel)
		thread_turn__new(e->skel, &e->tt);	/* without it, turns use uprobe links */
	if (e->opts.kernel && engine_late_skel(e, "kcsand_kprobe", "timing a kprobe", &skel))
		skel = e->skel;
	if (sampler__new(&engine_sampler_ops, e, skel, e->capacity, e->opts.kernel, &e->sampler))
		pr_warn("sampler: off, every site stays armed\n");
}

/* Probe every object added before load. */
int engine_attach_added(struct engine *e)
{
	uint64_t t0 = clock__now_ns();

	if (!e->rb)
		return -EINVAL;
	e->kbp_mode = e->opts.kernel && e->nr_cookies && !e->kbp && engine_use_breakpoints(e);
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
		int err = engine_start_kbp(e);

		if (err)
			return err;
	}
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
	if (!e->sampler && (!e->opts.kernel || e->nr_cookies))
		start_sampler(e);
	return 0;
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
