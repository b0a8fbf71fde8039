/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Marking kernel sites (docs/marking.md, "Kernel modules and vmlinux"): a
 * kernel target's sites sit at runtime addresses, their DWARF in a vmlinux
 * or NAME.ko on disk.  Each site's address is carried into its debug file
 * (vmlinux: minus the KASLR offset, from _text; a module: the function found
 * by name plus the site's offset, a static target through the variable
 * kallsyms names there), then mark.c's rules judge it there.
 */
#ifndef KCSAND_KMARK_H
#define KCSAND_KMARK_H

#include "sites/ksyms.h"
#include "mark.h"

/* The debug file for a module (NULL: vmlinux), or NULL when there is none. */
typedef const char *(*kmark_debug_file_fn)(void *ctx, const char *module);

struct kmark_stats {
	size_t debug_files;		/* debug files opened with DWARF */
	size_t no_debug;		/* sites with no debug file (or one without DWARF) */
	size_t not_found;		/* sites whose function the debug file does not have */
	size_t module_nowatch;		/* plain module sites without debug info: never watched */
	uint64_t no_source;		/* sites whose source file could not be read */
	bool kaslr;			/* vmlinux addresses mapped through _text */
	uint64_t cached;		/* sites whose verdict came from the cache (kcache.h) */
	char cache_path[256];		/* the vmlinux's cache file, or "" */
	int cache_err;			/* it could not be written: -errno */
};

/*
 * Mark the sites of a kernel target (ktarget__build's "[kernel]" object):
 * reset them to the instructions' reasons, then apply the rules of opts
 * with each site's debug file from debug_file().  A module's static
 * targets are found through the variables of kallsyms (NULL:
 * /proc/kallsyms), read when first needed.  Returns 0 or -errno.
 */
int kmark__apply(struct target_obj *obj, const struct ksyms *ks, const char *kallsyms,
		 kmark_debug_file_fn debug_file, void *ctx, const struct mark_opts *opts,
		 struct kmark_stats *stats);

#endif
