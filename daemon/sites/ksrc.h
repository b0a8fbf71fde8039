/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel site sets by source path: `--probe src:fs/ext4/` selects the
 * functions defined in the compile units of a vmlinux or NAME.ko with
 * DWARF (--kernel-debug) whose source file is under that path.
 */
#ifndef KCSAND_KSRC_H
#define KCSAND_KSRC_H

#include <stdbool.h>
#include <stddef.h>

/* The names of the functions defined (with code) in the matching compile units, sorted. */
struct ksrc_funcs {
	char **names;
	size_t n;
	size_t units;		/* compile units that matched */
};

/*
 * Add to f the functions of the compile units of the ELF file path whose
 * source path from the source root starts with prefix (src:kernel/ takes
 * kernel/sched/core.c, not arch/x86/kernel/nmi.c).  0, or a negative errno
 * with a message naming the file.
 */
int ksrc__load(const char *path, const char *prefix, struct ksrc_funcs *f);
/* The same for the units under any of prefixes[0..nr): one pass over the DWARF. */
int ksrc__load_any(const char *path, const char *const *prefixes, size_t nr,
		  struct ksrc_funcs *f);

/*
 * The source paths KCSAN's Makefiles leave uninstrumented (KCSAN_SANITIZE
 * := n), which kernel mode leaves out of every target unless told
 * otherwise: a path ending in '/' is a subtree, any other one file.
 */
extern const char *const ksrc_kcsan_exempt[];
extern const size_t ksrc_nr_kcsan_exempt;
bool ksrc__has(const struct ksrc_funcs *f, const char *name);
void ksrc__free(struct ksrc_funcs *f);

#endif
