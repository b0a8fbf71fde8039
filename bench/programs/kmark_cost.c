// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cold marking of a kernel site set on the host, without a guest: the sites
 * of the functions under the given source paths (ksrc, as src: selects
 * them) decoded from the vmlinux file itself, marked from its own DWARF
 * through kmark__apply() with a System.map as kallsyms (no KASLR).  Prints
 * the sites and the seconds each step took (marking's CPU seconds too),
 * and writes every site's verdict (address, flags, reason) to OUT, so that
 * two builds can be compared: bench/kernel/p15-kmark-cost.sh.
 *
 * Usage: kmark_cost VMLINUX SYSTEM.MAP OUT PREFIX...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mark/kmark.h"
#include "sites/ksrc.h"
#include "util/print.h"

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *vmlinux_path;

static const char *debug_file(void *ctx, const char *module)
{
	return module ? NULL : vmlinux_path;
}

/* Keep the sites whose function the source paths selected. */
static void keep_selected(struct target_obj *o, const struct ksrc_funcs *f)
{
	size_t n = 0;

	for (size_t i = 0; i < o->sites.n; i++) {
		const struct elf_func *fn = target_obj__site_func(o, &o->sites.v[i]);

		if (fn && ksrc__has(f, fn->name))
			o->sites.v[n++] = o->sites.v[i];
	}
	o->sites.n = n;
}

static int write_verdicts(const struct target_obj *o, const char *path)
{
	FILE *out = fopen(path, "w");

	if (!out) {
		perror(path);
		return -1;
	}
	for (size_t i = 0; i < o->sites.n; i++)
		fprintf(out, "%llx %x %u\n", (unsigned long long)o->sites.v[i].vaddr,
			o->sites.v[i].desc.flags, o->sites.v[i].reason);
	return fclose(out);
}

int main(int argc, char **argv)
{
	struct ksrc_funcs f = {};
	struct target_obj *o = NULL;
	struct kmark_stats ks;
	struct ksyms *k;
	double t0, t1, t2, c1, c2;

	if (argc < 5) {
		fprintf(stderr, "usage: %s VMLINUX SYSTEM.MAP OUT PREFIX...\n", argv[0]);
		return 2;
	}
	vmlinux_path = argv[1];
	t0 = now(CLOCK_MONOTONIC);
	if (ksrc__load_any(argv[1], (const char *const *)argv + 4, argc - 4, &f) ||
	    target_obj__open(argv[1], &o) || target_obj__decode(o, NULL, NULL) < 0)
		return 1;
	keep_selected(o, &f);
	k = ksyms__load_file(argv[2]);
	if (!k)
		return 1;
	t1 = now(CLOCK_MONOTONIC);
	c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	if (kmark__apply(o, k, argv[2], debug_file, NULL, NULL, &ks))
		return 1;
	t2 = now(CLOCK_MONOTONIC);
	c2 = now(CLOCK_PROCESS_CPUTIME_ID);
	printf("sites %zu functions %zu select_s %.1f mark_s %.1f mark_cpu_s %.1f marked %zu "
	       "cached %llu no_debug %zu not_found %zu\n", o->sites.n, f.n, t1 - t0, t2 - t1, c2 - c1,
	       (size_t)o->stats.marked, (unsigned long long)ks.cached, ks.no_debug, ks.not_found);
	if (write_verdicts(o, argv[3]))
		return 1;
	ksyms__free(k);
	ksrc__free(&f);
	target_obj__free(o);
	return 0;
}
