/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel targets: functions chosen by spec from kallsyms, their live code
 * read from /proc/kcore (it reflects alternatives, static keys and ftrace
 * patching), decoded into sites exactly as in user mode.
 *
 * Specs:  GLOB          kernel or module functions whose names match
 *         module:NAME   every function of a loaded module
 *         src:PATH      functions defined in source files under PATH (DWARF)
 *         FUNC+0xOFF    the one access instruction at that offset
 *         !GLOB         leave matching functions out (of the other specs)
 */
#ifndef KCSAND_KTARGET_H
#define KCSAND_KTARGET_H

#include <stdbool.h>
#include <stdint.h>
#include "decode.h"
#include "ksyms.h"

/*
 * Functions to leave out: those the caller already probes.  A kprobe's
 * int3 (or an optimized kprobe's jump) is in the live code that /proc/kcore
 * shows, so such a function cannot be decoded again, and probing a site
 * twice would count its hits twice.
 */
struct ktarget_skip {
	bool (*probed)(void *ctx, uint64_t func_addr);
	/* src:PATH specs: is k defined under PATH?  NULL: no src: spec may be given. */
	bool (*in_source)(void *ctx, const char *path, const struct ksym *k);
	/*
	 * The vmlinux or NAME.ko (module, NULL: vmlinux) whose symbol table
	 * gives the function's real size (ksize.h), or NULL: none, and the
	 * function ends where no branch reaches past its padding.  May be NULL.
	 */
	const char *(*debug_file)(void *ctx, const char *module);
	/* Is k in code KCSAN leaves uninstrumented (ksrc_kcsan_exempt)?  May be NULL. */
	bool (*exempt)(void *ctx, const struct ksym *k);
	void *ctx;
};

/* Matching functions that were left out, and why; how the others were sized. */
struct ktarget_stats {
	size_t blacklisted;	/* on the kernel's kprobe blacklist */
	size_t probed;		/* skip->probed() said so */
	size_t init_text;	/* __init functions, freed after boot */
	size_t exempt;		/* in code KCSAN leaves uninstrumented (skip->exempt) */
	size_t pseudo;		/* text of no module: BPF programs, trampolines, kprobe slots */
	size_t sized_elf;	/* decoded over st_size from a debug file's symbol table */
	size_t sized_reach;	/* decoded up to padding that no branch reaches past */
};

/*
 * Build a target object named "[kernel]" whose funcs are the matched
 * functions and whose sites' vaddr (and file_off) are kernel addresses.
 * Functions on the kprobe blacklist, and those skip (NULL: none) names,
 * are left out and counted in *stats, with how the others were sized:
 * over st_size where skip->debug_file gives a file that has it, else up to
 * padding.  Returns 0 or a negative errno with a message.
 */
int ktarget__build(struct ksyms *ks, const char *const *specs, size_t nr_specs,
		   const struct decode_opts *opts, const struct ktarget_skip *skip,
		   struct target_obj **out, struct ktarget_stats *stats);

#endif
