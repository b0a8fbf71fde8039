/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tests' own reading of an ELF file's .symtab, with libelf alone: the
 * expected answers for code that reads symbols through libdwfl.
 */
#ifndef KCSAND_TEST_ELF_SYMTAB_H
#define KCSAND_TEST_ELF_SYMTAB_H

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

typedef int (*elf_symtab_fn)(const char *name, const GElf_Sym *sym, void *arg);

/*
 * Call fn on each .symtab entry in table order (name may be NULL) until it
 * returns non-zero.  Returns that value, -ENOENT when fn never did, or
 * -errno when the file cannot be opened.
 */
static inline int elf_symtab_each(const char *path, elf_symtab_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	int fd, ret = 0;
	Elf *elf;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && !ret && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym))
				ret = fn(elf_strptr(elf, sh.sh_link, sym.st_name), &sym, arg);
		}
	}
	elf_end(elf);
	close(fd);
	return ret ? ret : -ENOENT;
}

#endif
