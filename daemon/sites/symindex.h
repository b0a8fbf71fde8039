/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A by-name index of a libdwfl module's symbol table.  libdwfl looks
 * symbols up by address only; finding one by name means a scan of the
 * whole table, some 130,000 symbols for a vmlinux.  Lookups by name happen
 * for every kernel frame of a report (symbolize.c) and for every function
 * and data target of a kernel module being marked (mark/dwarf.c), so the
 * table is sorted by name once per file and searched with bsearch.
 */
#ifndef KCSAND_SYMINDEX_H
#define KCSAND_SYMINDEX_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct sym_index;

/* Index mod's symbols (dwfl_module_getsymtab order); NULL when out of memory. */
struct sym_index *sym_index__build(Dwfl_Module *mod);
void sym_index__free(struct sym_index *ix);

/*
 * The first symbol in symbol-table order named name, as a scan from index
 * 0 would find it: func, only STT_FUNC; defined, only st_shndx !=
 * SHN_UNDEF.  *addr gets its address as dwfl_module_getsym_info() gives it
 * (the module address), *size (may be NULL) its st_size.  0 or -ENOENT.
 */
int sym_index__find(const struct sym_index *ix, const char *name, bool func, bool defined,
		    uint64_t *addr, uint64_t *size);

#endif
