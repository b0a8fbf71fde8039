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
 * source is under prefix: the unit's name relative to its compilation
 * directory starts with prefix, or its name has "/prefix" in it.  0, or a
 * negative errno with a message naming the file.
 */
int ksrc__load(const char *path, const char *prefix, struct ksrc_funcs *f);
bool ksrc__has(const struct ksrc_funcs *f, const char *name);
void ksrc__free(struct ksrc_funcs *f);

#endif
