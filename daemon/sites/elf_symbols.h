/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An ELF file opened one way, and the entries of its symbol tables
 * (.symtab, .dynsym) walked one way with libelf, and its sections found by
 * name one way: the decoder's functions,
 * the kernel functions' sizes, the history's sync functions, the marking's
 * guard variables and the watches' variables all come from it.
 */
#ifndef KCSAND_ELF_SYMBOLS_H
#define KCSAND_ELF_SYMBOLS_H

#include <stddef.h>
#include <gelf.h>

/* Which tables to walk: one of them, or both (.symtab's entries first if it comes first). */
enum elf_symtabs {
	ELF_SYMTAB = 1 << 0,
	ELF_DYNSYM = 1 << 1,
};

/* One entry, as elf_symbols__each() passes it. */
struct elf_symbol {
	GElf_Sym sym;
	const char *name;	/* NULL when the string table does not hold it */
	/* The entry's section: sym.st_shndx, or its extended index (SHN_XINDEX). */
	Elf32_Word shndx;
	Elf64_Word table;	/* SHT_SYMTAB or SHT_DYNSYM */
	size_t nr;		/* the table's entries, for an array sized at its first one */
};

/*
 * Calls fn(s, arg) on each entry of elf's tables of the kinds asked, in the
 * file's order, until fn returns non-zero, and returns that.  0 once every
 * entry was given, -ENOENT when elf has no such table, -ENOEXEC when one
 * cannot be read (what libelf said: elf_errmsg(-1)).
 */
int elf_symbols__each(Elf *elf, enum elf_symtabs tables,
		      int (*fn)(const struct elf_symbol *s, void *arg), void *arg);

/*
 * elf's first section named name, with its header in *sh, or NULL (none, or
 * the section names cannot be read).
 */
Elf_Scn *elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh);

/* An ELF file open for reading: its descriptor and libelf's handle on it. */
struct elf_file {
	int fd;
	Elf *elf;
};

/*
 * Opens path, a regular file (never waiting on a FIFO a user named), with
 * libelf's version set, as cmd says (ELF_C_READ, or ELF_C_READ_MMAP for a
 * file that is not replaced in place under us).  0; -errno when it cannot be
 * opened, -EINVAL when it is no regular file, -ENOEXEC when libelf refuses
 * it (elf_errmsg(-1)); nothing is left open then, and f->fd is -1.
 */
int elf_file__open(const char *path, Elf_Cmd cmd, struct elf_file *f);
/* Closes what elf_file__open() opened (nothing when f->fd is -1). */
void elf_file__close(struct elf_file *f);
/*
 * path's GNU build-id in hex in out[len]: 0, -ENODATA when it has none (or
 * out is too small), or elf_file__open()'s error.  Caches are named by it.
 */
int elf_file__build_id_hex(const char *path, char *out, size_t len);

#endif
