// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code breakpoints started over the kernel's sites: which sites a debug
 * register may never be on, which --pin names, the pair watchers' register
 * (hw/pair.c), and the sampler of sampler/kbp.c given them all.
 * engine_objects.c calls it once every kernel object is added.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "sites/ksyms.h"
#include "hw/hwbp.h"
#include "hw/pair.h"
#include "sampler/kbp.h"
#include "engine_int.h"
#include "util/print.h"
#include "util/clock.h"

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

/* Does a glob of the comma-separated list globs match the function name? */
static bool pin_matches(const char *globs, const char *name)
{
	char glob[256];

	while (globs && *globs) {
		size_t len = strcspn(globs, ",");

		if (len && len < sizeof(glob)) {
			memcpy(glob, globs, len);
			glob[len] = '\0';
			if (!fnmatch(glob, name, 0))
				return true;
		}
		globs += len + !!globs[len];
	}
	return false;
}

/*
 * Both stacks: one of sampling's registers on each CPU goes to the data
 * breakpoints of the stalls (hw/pair.h).  A sampled access alone sees one
 * side of a race; a register more for sampling sees one more site.
 */
static void start_pairs(struct engine *e, struct kbp_opts *ko)
{
	uint64_t idle = 0;

	if (e->ksyms)
		ksyms__vmlinux_addr(e->ksyms, "__x64_sys_getppid", &idle);
	if (!idle || pairs__new(e->skel, idle, &e->pairs)) {
		pr_warn("breakpoints: no data breakpoints during the stalls: races show one stack\n");
		return;
	}
	ko->nregs--;
}

/*
 * Every kernel site a breakpoint may be on, its address, cookie, function
 * (evidence) and whether --pin names it, into addr[], site[], fn[] and pin[];
 * how many.
 */
static size_t kbp_sites(const struct engine *e, uint64_t *addr, uint32_t *site,
			struct kbp_fn *fn, bool *pin)
{
	size_t n = 0, nmi = 0, machinery = 0;

	for (size_t i = 0; i < e->nr_objs; i++) {
		const struct engine_object *eo = &e->objs[i];

		if (!eo->kernel || eo->removed)
			continue;
		for (size_t j = 0; j < eo->obj->sites.n; j++) {
			const struct site *st = &eo->obj->sites.v[j];
			const struct elf_func *f = &eo->obj->funcs[st->func];

			if (kbp_excluded(f->name, &nmi, &machinery))
				continue;
			fn[n] = (struct kbp_fn){ f->vaddr, f->vaddr + f->size };
			pin[n] = pin_matches(e->opts.pin, f->name);
			addr[n] = st->vaddr;
			site[n++] = eo->first + j;
		}
	}
	if (nmi)
		pr_warn("breakpoints: %zu sites in NMI functions (*nmi*) left out\n", nmi);
	if (machinery)
		pr_warn("breakpoints: %zu sites in the code that moves breakpoints "
			"(*hw_breakpoint*, *dr_addr_mask*, *debugreg*) left out\n", machinery);
	if (e->opts.pin && !memchr(pin, 1, n * sizeof(*pin)))
		pr_warn("breakpoints: --pin %s matches no site: none pinned\n", e->opts.pin);
	return n;
}

int engine_start_kbp(struct engine *e)
{
	struct kbp_opts ko = {
		.nregs = e->opts.kbp_regs, .period_us = e->opts.kbp_period_us,
		.budget = e->opts.kbp_period_fixed ? 0 :
			  e->opts.params.v[PARAM_OVERHEAD_BUDGET] / 100.0,
		.seed = (unsigned int)clock__now_ns() };
	size_t n, total = engine__nr_sites(e);
	struct kcsand_bpf *skel;
	uint64_t *addr;
	uint32_t *site;
	struct kbp_fn *fn;	/* a site's function: evidence */
	bool *pin;
	int err = engine_late_skel(e, "kcsand_kxbp", "code-breakpoint sampling", &skel);

	if (err)
		return err;
	addr = malloc(total * sizeof(*addr));
	site = malloc(total * sizeof(*site));
	fn = malloc(total * sizeof(*fn));
	pin = calloc(total, sizeof(*pin));
	err = -ENOMEM;
	ko.pin = pin;

	/* Where a trap is timed; without it the budget counts checks and moves only. */
	if (e->ksyms)
		ksyms__vmlinux_addr(e->ksyms, "__x64_sys_getppid", &ko.calib_addr);

	if (addr && site && fn && pin && ko.nregs >= 2 && e->opts.params.v[PARAM_PAIR_WAIT_US])
		start_pairs(e, &ko);
	if (addr && site && fn && pin) {
		n = kbp_sites(e, addr, site, fn, pin);
		err = n ? kbp__new(skel, addr, site, fn, n, &ko, &e->kbp) : -ENOENT;
	}
	if (!err) {
		struct kbp_stats st;

		/* What sampling got is not the escalations' or a debugger's. */
		kbp__stats(e->kbp, &st);
		hwbp__limit(e->hw, KCSAND_HW_SLOTS - e->opts.free_regs - st.nregs - !!e->pairs);
	}
	free(addr);
	free(site);
	free(fn);
	free(pin);
	return err;
}
