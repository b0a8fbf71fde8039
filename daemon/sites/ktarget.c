// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kcore.h"
#include "kernel_spec.h"
#include "ksize.h"
#include "ktarget.h"
#include "util/print.h"
#include "util/array.h"

/* Longest function read from kcore: larger ones are cut (and say so with -v). */
#define KFUNC_MAX_LEN (256 * 1024)

/* Functions kprobes refuse, from the kernel's own list (debugfs). */
struct blacklist {
	uint64_t (*r)[2];
	size_t n, cap;
};

static void load_blacklist(struct blacklist *bl)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	unsigned long long a, b;
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "0x%llx-0x%llx", &a, &b) != 2)
			continue;
		if (ARRAY_RESERVE(bl->r, bl->cap, bl->n, 256))
			break;
		bl->r[bl->n][0] = a;
		bl->r[bl->n][1] = b;
		bl->n++;
	}
	fclose(f);
}

static bool blacklist_has(const struct blacklist *bl, uint64_t addr)
{
	for (size_t i = 0; i < bl->n; i++)
		if (addr >= bl->r[i][0] && addr < bl->r[i][1])
			return true;
	return false;
}

/* A parsed spec. */
struct kernel_spec {
	const char *module;	/* module:NAME */
	const char *src;	/* src:PATH */
	char func[256];		/* FUNC+0xOFF */
	uint64_t off;
	bool exact;
	bool exclude;		/* !GLOB: leave matching functions out */
	const char *glob;
};

static int parse_spec(const char *s, struct kernel_spec *sp)
{
	const char *why = kernel_spec__invalid(s), *plus;

	memset(sp, 0, sizeof(*sp));
	if (why) {
		pr_warn("bad kernel probe spec '%s': %s (expected GLOB, "
				"module:NAME, src:PATH, FUNC+0xOFF or !GLOB)\n", s, why);
		return -EINVAL;
	}
	if (*s == '!') {
		sp->exclude = true;
		sp->glob = s + 1;
		return 0;
	}
	if (!strncmp(s, "module:", 7)) {
		sp->module = s + 7;
		return 0;
	}
	if (!strncmp(s, "src:", 4)) {
		sp->src = s + 4;
		return 0;
	}
	plus = strchr(s, '+');
	if (plus) {
		snprintf(sp->func, sizeof(sp->func), "%.*s", (int)(plus - s), s);
		sp->off = strtoull(plus + 1, NULL, 0);
		sp->exact = true;
		return 0;
	}
	sp->glob = s;
	return 0;
}

static bool spec_matches(const struct kernel_spec *sp, const struct ksym *k,
			 const struct ktarget_skip *skip)
{
	if (sp->src)
		return skip && skip->in_source && skip->in_source(skip->ctx, sp->src, k);
	if (sp->module)
		return k->module && !strcmp(k->module, sp->module);
	if (sp->exact)
		return !strcmp(k->name, sp->func);
	return !fnmatch(sp->glob, k->name, 0);
}

static int push_func(struct target_obj *obj, size_t *cap, const struct ksym *k)
{
	char name[384];

	if (ARRAY_RESERVE(obj->funcs, *cap, obj->nr_funcs, 64))
		return -ENOMEM;
	/* Module functions keep their module, as KCSAN prints it: "func [mod]". */
	snprintf(name, sizeof(name), "%s", k->name);
	obj->funcs[obj->nr_funcs] = (struct elf_func){ .name = strdup(name), .vaddr = k->addr,
						       .size = k->size, .bounded = true };
	if (!obj->funcs[obj->nr_funcs].name)
		return -ENOMEM;
	obj->nr_funcs++;
	return 0;
}

/*
 * vmlinux's init section, [__init_begin, __init_end): freed after boot,
 * though kallsyms still lists its functions.  Its pages hold whatever was
 * put there since, which would decode as garbage, differently from run to
 * run.  It holds more than the init text [_sinittext, _einittext): the
 * __exit functions of built-in code too (.exit.text: pstore_exit_fs,
 * exit_elf_binfmt), freed with it.  Without the section's bounds in
 * kallsyms, the init text is what is left out.
 */
static void init_text(const struct ksyms *ks, uint64_t range[2])
{
	ksyms__init_range(ks, &range[0], &range[1]);
	if (range[0] && range[1] > range[0])
		return;
	range[0] = range[1] = 0;
	for (size_t i = 0; i < ksyms__count(ks); i++) {
		const struct ksym *k = ksyms__at(ks, i);

		if (k->module)
			continue;
		if (!strcmp(k->name, "_sinittext"))
			range[0] = k->addr;
		else if (!strcmp(k->name, "_einittext"))
			range[1] = k->addr;
	}
}

/*
 * kallsyms names code that belongs to no module as if it did: BPF
 * programs' JIT images ("[bpf]"), ftrace's trampolines and kprobes'
 * instruction slots ("[__builtin__ftrace]", "[__builtin__kprobes]").  It is
 * generated, comes and goes at run time (a breakpoint on a freed JIT image
 * would land on the next program there), and ours is among it: never a
 * site, whatever a glob says.
 */
static bool pseudo_module(const struct ksym *k)
{
	return k->module && (!strcmp(k->module, "bpf") || !strncmp(k->module, "__builtin__", 11));
}

/* The functions the specs select, less the blacklisted and those already probed. */
static int select_funcs(struct ksyms *ks, const struct kernel_spec *sp, size_t nr_specs,
			const struct ktarget_skip *skip, const struct blacklist *bl,
			struct target_obj *obj, struct ktarget_stats *skipped)
{
	uint64_t init[2];
	size_t cap = 0;

	init_text(ks, init);
	for (size_t i = 0; i < ksyms__count(ks); i++) {
		const struct ksym *k = ksyms__at(ks, i);
		bool match = false;
		int err;

		/* One function per address: aliases would give duplicate probes. */
		if (i && ksyms__at(ks, i - 1)->addr == k->addr)
			continue;
		for (size_t j = 0; j < nr_specs && !match; j++)
			match = !sp[j].exclude && spec_matches(&sp[j], k, skip);
		for (size_t j = 0; j < nr_specs && match; j++)
			match = !(sp[j].exclude && spec_matches(&sp[j], k, skip));
		if (!match)
			continue;
		if (pseudo_module(k)) {
			skipped->pseudo++;
			continue;
		}
		if (blacklist_has(bl, k->addr)) {
			skipped->blacklisted++;
			continue;
		}
		if (!k->module && skip && skip->exempt && skip->exempt(skip->ctx, k)) {
			skipped->exempt++;
			continue;
		}
		if (k->addr >= init[0] && k->addr < init[1]) {
			skipped->init_text++;
			continue;
		}
		/* Its code has our int3s in it: decoding it again would read them. */
		if (skip && skip->probed(skip->ctx, k->addr)) {
			skipped->probed++;
			continue;
		}
		err = push_func(obj, &cap, k);
		if (err)
			return err;
	}
	return 0;
}

static void warn_no_match(const char *const *specs, size_t nr_specs,
			  const struct ktarget_stats *skipped)
{
	pr_warn("no probe-able kernel function matches the spec%s", nr_specs > 1 ? "s" : "");
	for (size_t j = 0; j < nr_specs; j++)
		pr_cont(" '%s'", specs[j]);
	if (skipped->probed)
		pr_cont(" (%zu already probed by another kernel target%s)",
			skipped->probed, skipped->blacklisted ? ", the others on the kprobe "
							       "blacklist" : "");
	else if (skipped->blacklisted)
		pr_cont(" (all matches are on the kprobe blacklist)");
	else if (skipped->init_text)
		pr_cont(" (all matches are __init or __exit code, freed after boot)");
	pr_cont("\n");
}

/* FUNC+0xOFF keeps exactly that instruction of fn's sites (from before on). */
static int keep_exact(struct target_obj *obj, const struct elf_func *fn, size_t before,
		      const struct kernel_spec *sp, const char *const *specs, size_t nr_specs)
{
	for (size_t j = 0; j < nr_specs; j++) {
		size_t keep = before;

		if (!sp[j].exact || strcmp(sp[j].func, fn->name))
			continue;
		for (size_t s = before; s < obj->sites.n; s++)
			if (obj->sites.v[s].vaddr == fn->vaddr + sp[j].off)
				obj->sites.v[keep++] = obj->sites.v[s];
		if (keep == before) {
			pr_warn("%s: no probe-able memory access at that offset\n", specs[j]);
			return -ENOENT;
		}
		obj->sites.n = keep;
	}
	return 0;
}

static const char *debug_file_cb(void *ctx, const char *module)
{
	const struct ktarget_skip *skip = ctx;

	return skip->debug_file(skip->ctx, module);
}

/*
 * Each function's real size where a debug file has it, else its kallsyms
 * extent stays an upper bound.  st_size is kept within that extent: a
 * symbol kallsyms lists inside the function (an asm entry point) is where
 * its own decoding starts.
 */
static int size_funcs(const struct ksyms *ks, const struct ktarget_skip *skip,
		      struct target_obj *obj, struct ktarget_stats *stats)
{
	struct ksizes *kz = NULL;

	if (skip && skip->debug_file) {
		kz = ksizes__new(ks, debug_file_cb, (void *)skip);
		if (!kz)
			return -ENOMEM;
	}
	for (size_t f = 0; f < obj->nr_funcs; f++) {
		struct elf_func *fn = &obj->funcs[f];
		const struct ksym *k = ksyms__map_addr(ks, fn->vaddr);
		uint64_t size = kz && k ? ksizes__size(kz, fn->name, k->module, fn->vaddr) : 0;

		fn->bounded = !size;
		if (size) {
			fn->size = size < fn->size ? size : fn->size;
			stats->sized_elf++;
		} else {
			stats->sized_reach++;
		}
	}
	ksizes__free(kz);
	return 0;
}

/*
 * Each selected function's code, read from /proc/kcore, into sites.  With
 * its exact size, all of it is decoded: the int3s of a patched `ret; int3`
 * are inside, not after it.  Without, padding ends it (decode.h).
 */
static int decode_funcs(struct target_obj *obj, const struct decode_opts *kopts,
			const struct kernel_spec *sp, const char *const *specs, size_t nr_specs)
{
	struct decode_opts sized = *kopts;
	struct kcore kc = { .fd = -1 };
	uint8_t *code = NULL;
	int err;

	sized.stop_at_padding = false;
	err = kcore__open(&kc);
	if (err)
		goto out;
	code = malloc(KFUNC_MAX_LEN);
	if (!code) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t f = 0; f < obj->nr_funcs; f++) {
		struct elf_func *fn = &obj->funcs[f];
		size_t len = fn->size < KFUNC_MAX_LEN ? fn->size : KFUNC_MAX_LEN;
		size_t before = obj->sites.n;
		uint64_t bytes = obj->stats.bytes;

		err = kcore__read(&kc, fn->vaddr, code, len);
		if (err) {
			pr_warn("cannot read %s at 0x%" PRIx64 " from /proc/kcore: %s\n",
				fn->name, fn->vaddr, strerror(-err));
			goto out;
		}
		err = decode__function(code, len, fn->vaddr, f, fn->bounded ? kopts : &sized,
				       &obj->sites, &obj->stats);
		fn->decoded = obj->stats.bytes - bytes;
		if (!err)
			err = keep_exact(obj, fn, before, sp, specs, nr_specs);
		if (err)
			goto out;
	}
out:
	free(code);
	kcore__close(&kc);
	return err;
}

int ktarget__build(struct ksyms *ks, const char *const *specs, size_t nr_specs,
		   const struct decode_opts *opts, const struct ktarget_skip *skip,
		   struct target_obj **out, struct ktarget_stats *stats)
{
	struct kernel_spec *sp = calloc(nr_specs ? nr_specs : 1, sizeof(*sp));
	struct target_obj *obj = calloc(1, sizeof(*obj));
	struct blacklist bl = {};
	struct decode_opts kopts = opts ? *opts : (struct decode_opts){};
	int err = 0;

	memset(stats, 0, sizeof(*stats));
	if (!sp || !obj || !(obj->path = strdup("[kernel]"))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr_specs; i++) {
		err = parse_spec(specs[i], &sp[i]);
		if (err)
			goto out;
	}
	/* gs is per-CPU data in the kernel; kprobes take lock prefixes where they are. */
	kopts.skip_gs = true;
	kopts.probe_locked = true;
	kopts.stop_at_padding = true;
	load_blacklist(&bl);

	err = select_funcs(ks, sp, nr_specs, skip, &bl, obj, stats);
	if (err)
		goto out;
	if (!obj->nr_funcs) {
		warn_no_match(specs, nr_specs, stats);
		err = -ENOENT;
		goto out;
	}
	err = size_funcs(ks, skip, obj, stats);
	if (!err)
		err = decode_funcs(obj, &kopts, sp, specs, nr_specs);
	if (err)
		goto out;
	for (size_t s = 0; s < obj->sites.n; s++)
		obj->sites.v[s].file_off = obj->sites.v[s].vaddr;
	obj->stats.sites = obj->sites.n;
out:
	free(bl.r);
	free(sp);
	if (err) {
		target_obj__free(obj);
		obj = NULL;
	}
	*out = obj;
	return err;
}
