// SPDX-License-Identifier: GPL-2.0-only
/*
 * sites/elf_symbols.h on this test's own executable: every .symtab entry in
 * the order tests/unit/elf_symtab.h (libelf read by hand) gives them, main
 * found as a function of .text, .dynsym alone, both tables, a walk stopped
 * by its callback, and an ELF with no symbol table; elf_file__open() on
 * this executable, a missing path and a FIFO (refused, not waited on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "test.h"
#include "elf_symtab.h"
#include "sites/elf_symbols.h"

#define MAX_SYMS	8192

struct seen {
	const char *name[MAX_SYMS];
	size_t n, nr;
	unsigned int tables;	/* bit 0: SHT_SYMTAB seen, bit 1: SHT_DYNSYM */
	GElf_Sym main_sym;
	Elf32_Word main_shndx;
};

static int by_hand(const char *name, const GElf_Sym *sym, void *arg)
{
	struct seen *s = arg;

	if (s->n < MAX_SYMS)
		s->name[s->n] = name ? strdup(name) : NULL;
	s->n++;
	return 0;
}

static int walked(const struct elf_symbol *sym, void *arg)
{
	struct seen *s = arg;

	if (s->n < MAX_SYMS)
		s->name[s->n] = sym->name;
	s->n++;
	s->nr = sym->nr;
	s->tables |= sym->table == SHT_SYMTAB ? 1 : sym->table == SHT_DYNSYM ? 2 : 4;
	if (sym->name && !strcmp(sym->name, "main") && GELF_ST_TYPE(sym->sym.st_info) == STT_FUNC) {
		s->main_sym = sym->sym;
		s->main_shndx = sym->shndx;
	}
	return 0;
}

static int stop_at_main(const struct elf_symbol *sym, void *arg)
{
	(*(int *)arg)++;
	return sym->name && !strcmp(sym->name, "main") ? 5 : 0;
}

static const char *section_name(Elf *elf, Elf32_Word idx)
{
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, idx);

	if (!scn || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	return elf_strptr(elf, shstrndx, sh.sh_name);
}

static struct seen hand, walk;

int main(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!ASSERT_TRUE(elf != NULL, "this test's own ELF"))
		return test_summary();
	TEST(symtab_in_table_order) {
		elf_symtab_each("/proc/self/exe", by_hand, &hand);
		ASSERT_EQ(elf_symbols__each(elf, ELF_SYMTAB, walked, &walk), 0, "a full walk");
		ASSERT_TRUE(hand.n > 10 && hand.n < MAX_SYMS, "the test has a .symtab");
		ASSERT_EQ(walk.n, hand.n, "as many entries as by hand");
		ASSERT_EQ(walk.nr, hand.n, "nr: the table's entries");
		for (size_t i = 0; i < hand.n && i < walk.n && i < MAX_SYMS; i++)
			if (!ASSERT_TRUE((!hand.name[i] && !walk.name[i]) ||
					 (hand.name[i] && walk.name[i] &&
					  !strcmp(hand.name[i], walk.name[i])), "the same name in place"))
				break;
		ASSERT_EQ(walk.tables, 1, ".symtab alone");
	}
	TEST(main_is_a_function_of_text) {
		uint64_t bias = (uint64_t)(uintptr_t)main - walk.main_sym.st_value;

		ASSERT_TRUE(walk.main_sym.st_value != 0, "found");
		ASSERT_EQ(bias % (uint64_t)sysconf(_SC_PAGESIZE), 0,
			  "its address, where it runs, a whole number of pages away");
		ASSERT_TRUE(walk.main_sym.st_size > 0, "main has a size");
		ASSERT_STREQ(section_name(elf, walk.main_shndx), ".text", "main's section");
	}
	TEST(dynsym_alone_and_both) {
		struct seen dyn = { 0 }, both = { 0 };

		ASSERT_EQ(elf_symbols__each(elf, ELF_DYNSYM, walked, &dyn), 0, ".dynsym");
		ASSERT_EQ(dyn.tables, 2, ".dynsym alone");
		ASSERT_TRUE(dyn.n > 0 && dyn.n < walk.n, "fewer entries than .symtab");
		ASSERT_EQ(elf_symbols__each(elf, ELF_SYMTAB | ELF_DYNSYM, walked, &both), 0, "both");
		ASSERT_EQ(both.tables, 3, "both tables");
		ASSERT_EQ(both.n, walk.n + dyn.n, "every entry of each");
	}
	TEST(callback_stops_the_walk) {
		size_t at = 0;
		int calls = 0;

		while (at < walk.n && at < MAX_SYMS && !(walk.name[at] && !strcmp(walk.name[at], "main")))
			at++;
		ASSERT_EQ(elf_symbols__each(elf, ELF_SYMTAB, stop_at_main, &calls), 5,
			  "the callback's value back");
		ASSERT_EQ(calls, at + 1, "no entry after main's");
	}
	TEST(no_symbol_table) {
		Elf64_Ehdr eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				     EV_CURRENT },
			.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			.e_ehsize = sizeof(eh),
		};
		Elf *bare = elf_memory((char *)&eh, sizeof(eh));
		int calls = 0;

		ASSERT_TRUE(bare != NULL, "an ELF header alone");
		ASSERT_EQ(elf_symbols__each(bare, ELF_SYMTAB | ELF_DYNSYM, stop_at_main, &calls),
			  -ENOENT, "no table");
		ASSERT_EQ(calls, 0, "no callback");
		elf_end(bare);
	}
	TEST(elf_file_open) {
		char fifo[] = "/tmp/kcsand-test-fifo-XXXXXX";
		struct elf_file ef = { .fd = 7 };

		ASSERT_EQ(elf_file__open("/proc/self/exe", ELF_C_READ, &ef), 0, "this executable");
		ASSERT_EQ(elf_kind(ef.elf), ELF_K_ELF, "an ELF handle on it");
		elf_file__close(&ef);
		ASSERT_EQ(ef.fd, -1, "closed");
		ASSERT_EQ(elf_file__open("/nonexistent/kcsand", ELF_C_READ, &ef), -ENOENT,
			  "a missing path: open's errno");
		ASSERT_EQ(ef.fd, -1, "nothing open");
		/* A FIFO with no writer: a blocking open would hang here. */
		if (ASSERT_TRUE(mkdtemp(fifo) != NULL, "a directory for the FIFO")) {
			char path[sizeof(fifo) + 8];

			snprintf(path, sizeof(path), "%s/f", fifo);
			ASSERT_EQ(mkfifo(path, 0600), 0, "mkfifo");
			ASSERT_EQ(elf_file__open(path, ELF_C_READ, &ef), -EINVAL, "a FIFO refused");
			ASSERT_EQ(ef.fd, -1, "nothing open");
			unlink(path);
			rmdir(fifo);
		}
		elf_file__close(&ef);	/* fd -1: nothing to do */
	}
	elf_end(elf);
	close(fd);
	return test_summary();
}
