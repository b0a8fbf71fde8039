// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <sys/stat.h>
#include "elf_symbols.h"

/* The extended section indices of symscn's entries (SHT_SYMTAB_SHNDX), or NULL if none. */
static Elf_Data *shndx_data(Elf *elf, Elf_Scn *symscn)
{
	size_t symidx = elf_ndxscn(symscn);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX && sh.sh_link == symidx)
			return elf_getdata(scn, NULL);
	return NULL;
}

static int each_of_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 int (*fn)(const struct elf_symbol *s, void *arg), void *arg)
{
	Elf_Data *data = elf_getdata(scn, NULL), *xdata;
	struct elf_symbol s = { .table = sh->sh_type };
	int ret = 0;

	if (!data || !sh->sh_entsize)
		return -ENOEXEC;
	xdata = shndx_data(elf, scn);
	s.nr = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < s.nr && !ret; i++) {
		Elf32_Word xndx = 0;

		if (!gelf_getsymshndx(data, xdata, (int)i, &s.sym, &xndx))
			continue;
		s.shndx = s.sym.st_shndx == SHN_XINDEX ? xndx : s.sym.st_shndx;
		s.name = elf_strptr(elf, sh->sh_link, s.sym.st_name);
		ret = fn(&s, arg);
	}
	return ret;
}

int elf_symbols__each(Elf *elf, enum elf_symtabs tables,
		      int (*fn)(const struct elf_symbol *s, void *arg), void *arg)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!(sh.sh_type == SHT_SYMTAB && (tables & ELF_SYMTAB)) &&
		    !(sh.sh_type == SHT_DYNSYM && (tables & ELF_DYNSYM)))
			continue;
		found = true;
		ret = each_of_table(elf, scn, &sh, fn, arg);
	}
	return ret ? ret : found ? 0 : -ENOENT;
}

int elf_file__open(const char *path, Elf_Cmd cmd, struct elf_file *f)
{
	struct stat st;
	int err;

	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f->fd < 0)
		return -errno;
	err = fstat(f->fd, &st) ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (!err) {
		elf_version(EV_CURRENT);
		f->elf = elf_begin(f->fd, cmd, NULL);
		err = f->elf ? 0 : -ENOEXEC;
	}
	if (err) {
		close(f->fd);
		f->fd = -1;
	}
	return err;
}

void elf_file__close(struct elf_file *f)
{
	if (f->fd < 0)
		return;
	elf_end(f->elf);
	close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

Elf_Scn *elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int elf_file__build_id_hex(const char *path, char *out, size_t len)
{
	const unsigned char *id;
	struct elf_file ef;
	ssize_t n;
	int err = elf_file__open(path, ELF_C_READ_MMAP, &ef);

	if (err)
		return err == -ENOEXEC ? -ENODATA : err;
	err = -ENODATA;
	n = dwelf_elf_gnu_build_id(ef.elf, (const void **)&id);
	if (n > 0 && (size_t)n * 2 < len) {
		for (ssize_t i = 0; i < n; i++)
			snprintf(out + 2 * i, 3, "%02x", id[i]);
		err = 0;
	}
	elf_file__close(&ef);
	return err;
}
