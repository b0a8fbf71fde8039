/* SPDX-License-Identifier: GPL-2.0-only */
/* Private to daemon/history/: what its files share. */
#ifndef KCSAND_HISTORY_INT_H
#define KCSAND_HISTORY_INT_H

#include <stddef.h>

/*
 * The shared objects the dynamic linker maps for prog, as it resolves
 * them: prog's own interpreter run as `ld.so --list prog`, in this
 * process's environment, which the target inherits (LD_LIBRARY_PATH,
 * LD_PRELOAD).  So $ORIGIN, RUNPATH and RPATH, ld.so.cache and
 * glibc-hwcaps are resolved by the one that resolves them for the program.
 * Up to max (name, real path) pairs, malloc'ed, into names and paths;
 * *n set.  A library it cannot find is warned about, by name.  Returns 0,
 * or -errno when the linker could not be run (a static program has none:
 * -ENOENT); the caller then resolves the names itself.
 */
int history_ldso_list(const char *prog, char **names, char **paths, size_t max, size_t *n);

#endif
