// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kcache.h"
#include "kmark.h"
#include "sites/debuginfo.h"
#include "util/array.h"
#include "util/print.h"

/*
 * From this many vmlinux sites to mark from the DWARF, its debug sections
 * are read ahead in one sequential pass (debuginfo__prefetch()): in the
 * test guest, over 9p, 130,309 sites of fs/ mm/ kernel/ took 114 s to mark
 * with page faults fetching the DWARF, 31 s from a copy in memory, and
 * reading the 215 MB costs about 14 s.  A few functions' sites touch a few
 * pages: for them the whole read would be the larger cost.
 */
#define KMARK_PREFETCH_SITES 10000

/* A debug file opened for this run, shared by every site of its module (or vmlinux). */
struct kdebug {
	char *path;
	struct mark_debug *dbg;		/* NULL: unusable */
	bool vmlinux;
	bool has_kaslr;
	uint64_t kaslr;			/* runtime address - address in the file */
	struct kcache *cache;		/* vmlinux: verdicts of earlier runs, or NULL */
	bool lazy;			/* dbg not opened yet: the cache may do without */
};

struct kmark_ctx {
	const struct target_obj *obj;	/* the sites being marked */
	struct kdebug *files;
	size_t nr_files, cap_files;
	const struct ksyms *ks;
	const struct mark_opts *opts;
	const char *kallsyms;		/* where the data symbols are read from */
	bool use_cache;			/* the rules are the built-in ones: kcache.h */
	bool read_cache;		/* and no -vv, which says how each site is decided */
	const char *source_dir;		/* the cache's source tree, or NULL */
	struct ksyms *data;		/* kallsyms' variables, read on first need */
	bool data_tried;
};

/*
 * A module's static target in its .ko: the variable kallsyms places there,
 * found by name in the .ko's symbol table (the module's data sections are
 * placed apart from its code, so no one offset maps them).  0 when unknown.
 */
static uint64_t module_target(struct kmark_ctx *c, struct kdebug *f, const char *module,
			      uint64_t target)
{
	const struct ksym *d;
	uint64_t addr, size;

	if (!c->data_tried) {
		c->data_tried = true;
		c->data = ksyms__load_data_file(c->kallsyms);
	}
	d = c->data ? ksyms__map_addr(c->data, target) : NULL;
	if (!d || !d->module || !module || strcmp(d->module, module) ||
	    mark_debug__sym(f->dbg, d->name, false, &addr, &size))
		return 0;
	if (target - d->addr >= (size ? size : 1))
		return 0;
	return addr + (target - d->addr);
}

/* The vmlinux sites whose verdict is not in f's cache: those its DWARF must decide. */
static size_t dwarf_sites(const struct kmark_ctx *c, const struct kdebug *f)
{
	size_t n = 0;

	for (size_t i = 0; i < c->obj->sites.n; i++) {
		const struct site *s = &c->obj->sites.v[i];
		const struct ksym *k = ksyms__map_addr(c->ks, s->vaddr);

		if (k && k->module)
			continue;
		if (f->cache && f->has_kaslr && kcache__has(f->cache, s->vaddr - f->kaslr))
			continue;
		n++;
	}
	return n;
}

/* Open f's DWARF, and for a vmlinux learn its KASLR offset; -1 when unusable. */
static int kdebug_open(struct kmark_ctx *c, struct kdebug *f)
{
	uint64_t rt, ft;

	f->lazy = false;
	if (f->vmlinux && dwarf_sites(c, f) >= KMARK_PREFETCH_SITES)
		debuginfo__prefetch(f->path);
	if (mark_debug__open(f->path, c->opts, &f->dbg)) {
		f->dbg = NULL;
		return -1;
	}
	/*
	 * vmlinux is one image moved as a whole by KASLR: one offset maps
	 * code and data, static functions that share a name included.
	 */
	if (f->vmlinux && ksyms__vmlinux_addr(c->ks, "_text", &rt) &&
	    !mark_debug__sym(f->dbg, "_text", false, &ft, NULL)) {
		f->has_kaslr = true;
		f->kaslr = rt - ft;
		if (f->cache)
			kcache__set_text(f->cache, ft);
	}
	return 0;
}

static struct kdebug *kdebug_get(struct kmark_ctx *c, const char *path, bool vmlinux)
{
	struct kdebug *f;
	uint64_t rt, ft;

	for (size_t i = 0; i < c->nr_files; i++)
		if (!strcmp(c->files[i].path, path))
			return &c->files[i];
	if (ARRAY_RESERVE(c->files, c->cap_files, c->nr_files, 4))
		return NULL;
	f = &c->files[c->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	c->nr_files++;
	f->vmlinux = vmlinux;
	if (vmlinux && c->use_cache)
		f->cache = kcache__open(path, c->source_dir);
	/* With _text from the cache, the DWARF waits for a site the cache lacks. */
	if (f->cache && c->read_cache && kcache__text(f->cache, &ft) && ksyms__vmlinux_addr(c->ks, "_text", &rt)) {
		f->has_kaslr = true;
		f->kaslr = rt - ft;
		f->lazy = true;
		return f;
	}
	kdebug_open(c, f);
	return f;
}

/* The site's verdict from the cache, applied; false when it has none. */
static bool from_cache(struct kdebug *f, struct site *s, uint64_t pc, struct mark_stats *ms)
{
	struct kcache_verdict v;

	if (!f->cache || !kcache__get(f->cache, pc, &v))
		return false;
	s->desc.flags = (s->desc.flags & ~v.clear) | v.set;
	s->reason = v.reason;
	ms->no_source += v.no_source;
	return true;
}

/* What mark__site() did to s, from its flags before, kept for the next run. */
static void to_cache(struct kdebug *f, const struct site *s, uint64_t pc, uint32_t before,
		     bool no_source)
{
	struct kcache_verdict v = { .set = s->desc.flags & ~before,
				    .clear = before & ~s->desc.flags,
				    .reason = s->reason, .no_source = no_source };

	if (f->cache)
		kcache__put(f->cache, pc, &v);
}

static void cache_source(void *ctx, const struct mark_src *src)
{
	kcache__add_source(ctx, src->path, src->size, src->mtime_ns);
}

/* Write back the verdicts the caches learned, and the sources they read; -v says where. */
static void caches_save(struct kmark_ctx *c, struct kmark_stats *stats)
{
	for (size_t i = 0; i < c->nr_files; i++) {
		struct kcache *kc = c->files[i].cache;
		int err;

		if (!kc)
			continue;
		if (c->files[i].dbg)
			mark_debug__sources(c->files[i].dbg, cache_source, kc);
		stats->cached += kcache__hits(kc);
		err = kcache__save(kc);
		if (err)
			stats->cache_err = err;
		snprintf(stats->cache_path, sizeof(stats->cache_path), "%s", kcache__path(kc));
	}
}

/* What kmark__apply() knows about the function whose sites it marks. */
struct kmark_func {
	const char *module;	/* NULL: vmlinux */
	struct kdebug *f;	/* its debug file, or NULL */
	bool found;		/* the function is in it, at base */
	uint64_t base;
};

/* Sites come function by function: look each function up once. */
static int enter_func(struct kmark_ctx *c, const struct elf_func *fn,
		      kmark_debug_file_fn debug_file, void *ctx, struct kmark_func *kf)
{
	const struct ksym *k = ksyms__map_addr(c->ks, fn->vaddr);
	const char *path;

	kf->module = k ? k->module : NULL;
	path = debug_file(ctx, kf->module);
	kf->f = path ? kdebug_get(c, path, !kf->module) : NULL;
	if (path && !kf->f)
		return -ENOMEM;
	kf->found = false;
	if (kf->f && (kf->f->dbg || kf->f->lazy) && kf->f->has_kaslr) {
		kf->base = fn->vaddr - kf->f->kaslr;
		kf->found = true;
	} else if (kf->f && kf->f->dbg) {
		kf->found = !mark_debug__sym(kf->f->dbg, fn->name, true, &kf->base, NULL);
	}
	return 0;
}

/* Where site s is in the function's debug information, if it has any. */
static void site_where(struct kmark_ctx *c, const struct kmark_func *kf, const struct site *s,
		       struct mark_where *w, struct kmark_stats *stats)
{
	uint64_t target;

	if (kf->f && kf->f->lazy)
		kdebug_open(c, kf->f);
	if (!kf->f || !kf->f->dbg) {
		stats->no_debug++;
		return;
	}
	if (!kf->found) {
		stats->not_found++;
		return;
	}
	target = mark__static_target(s);
	w->dbg = kf->f->dbg;
	w->has_pc = true;
	w->pc = kf->base + w->off;
	if (target && kf->f->has_kaslr)
		w->target = target - kf->f->kaslr;
	else if (target && !kf->f->vmlinux)
		w->target = module_target(c, kf->f, kf->module, target);
}

static void close_files(struct kmark_ctx *c, struct kmark_stats *stats)
{
	for (size_t i = 0; i < c->nr_files; i++) {
		if (c->files[i].dbg || (c->files[i].cache && kcache__hits(c->files[i].cache)))
			stats->debug_files++;
		if (c->files[i].has_kaslr)
			stats->kaslr = true;
		mark_debug__close(c->files[i].dbg);
		kcache__free(c->files[i].cache);
		free(c->files[i].path);
	}
	free(c->files);
	ksyms__free(c->data);
}

int kmark__apply(struct target_obj *obj, const struct ksyms *ks, const char *kallsyms,
		 kmark_debug_file_fn debug_file, void *ctx, const struct mark_opts *opts,
		 struct kmark_stats *stats)
{
	static const struct mark_opts no_opts;
	struct kmark_ctx c = { .obj = obj, .ks = ks, .opts = opts ? opts : &no_opts,
			       .kallsyms = kallsyms ? kallsyms : "/proc/kallsyms" };
	struct kmark_func kf = {};
	struct mark_stats ms = {};
	uint32_t last_func = UINT32_MAX;
	int err = 0;

	memset(stats, 0, sizeof(*stats));
	/*
	 * A marks file can change under the same kernel: decide afresh then.
	 * -vv says why each site was decided: afresh, but kept for the next run.
	 * A source tree's cache keeps the sources it read, and checks them.
	 */
	c.use_cache = !c.opts->rules;
	c.read_cache = !kcsand__print_level_on(KCSAND_DEBUG);
	c.source_dir = c.opts->source_dir;
	mark__reset(obj);
	for (size_t i = 0; i < obj->sites.n; i++) {
		struct site *s = &obj->sites.v[i];
		const struct elf_func *fn = target_obj__site_func(obj, s);
		struct mark_where w = {};
		uint64_t no_source;
		uint32_t before;

		if (!fn)
			continue;
		if (s->func != last_func) {
			last_func = s->func;
			err = enter_func(&c, fn, debug_file, ctx, &kf);
			if (err)
				break;
		}
		w.func = fn->name;
		w.off = s->vaddr - fn->vaddr;
		if (c.read_cache && kf.f && kf.found && kf.f->has_kaslr &&
		    from_cache(kf.f, s, kf.base + w.off, &ms))
			continue;
		site_where(&c, &kf, s, &w, stats);
		before = s->desc.flags;
		no_source = ms.no_source;
		mark__site(s, &w, c.opts, &ms);
		if (kf.f && w.has_pc && kf.f->has_kaslr)
			to_cache(kf.f, s, w.pc, before, ms.no_source != no_source);
		/*
		 * A driver's access kcsand cannot classify may be a readl() of
		 * a device register: check it against watchpoints, but never
		 * watch it, which would read the register again.
		 */
		if (kf.module && !w.has_pc && !(s->desc.flags & KCSAND_SITE_MARKED)) {
			s->desc.flags |= KCSAND_SITE_NOWATCH;
			stats->module_nowatch++;
		}
	}
	mark__update_stats(obj);
	caches_save(&c, stats);
	stats->no_source = ms.no_source;
	close_files(&c, stats);
	return err;
}
