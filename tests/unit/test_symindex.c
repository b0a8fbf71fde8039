// SPDX-License-Identifier: GPL-2.0-only
/*
 * The by-name symbol index (symindex.h) on a shared object whose names
 * repeat (tests/unit/fixtures, built next to this binary).  The reference
 * is the scan the index replaces: from the first symbol, the first name
 * that passes the filters; and the symbol table itself, read with libelf.
 * Then the symbolizer's lookup by name, which kernel frames go through.
 */
#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "elf_symtab.h"
#include "report/symbolize.h"
#include "sites/symindex.h"
#include "test.h"

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The linear scan sym_index__find() stands in for. */
static int scan(Dwfl_Module *mod, const char *name, bool func, bool defined, uint64_t *addr,
		uint64_t *size)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 0; i < n; i++) {
		GElf_Addr a;
		GElf_Sym sym;
		const char *sn = dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL);

		if (!sn || strcmp(sn, name))
			continue;
		if ((func && GELF_ST_TYPE(sym.st_info) != STT_FUNC) ||
		    (defined && sym.st_shndx == SHN_UNDEF))
			continue;
		*addr = a;
		*size = sym.st_size;
		return 0;
	}
	return -ENOENT;
}

struct elf_nth_q {
	const char *name;
	int nth, type;
	GElf_Sym *out;
	char *file;
	size_t len;
};

static int elf_nth_cb(const char *name, const GElf_Sym *sym, void *arg)
{
	struct elf_nth_q *q = arg;

	if (GELF_ST_TYPE(sym->st_info) == STT_FILE)
		snprintf(q->file, q->len, "%s", name ? name : "");
	if (!name || strcmp(name, q->name) ||
	    (q->type != STT_NOTYPE && GELF_ST_TYPE(sym->st_info) != q->type) || --q->nth)
		return 0;
	*q->out = *sym;
	return 1;
}

/*
 * The nth (from 1) .symtab entry named name, read with libelf, of type
 * (STT_NOTYPE: any), and in file the name of the STT_FILE entry before it.
 */
static int elf_nth(const char *path, const char *name, int nth, int type, GElf_Sym *out,
		   char *file, size_t len)
{
	struct elf_nth_q q = { name, nth, type, out, file, len };
	int ret = elf_symtab_each(path, elf_nth_cb, &q);

	return ret == 1 ? 0 : ret;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

int main(void)
{
	char exe[PATH_MAX], so[PATH_MAX + 32], file[256], file2[256];
	struct sym_index *ix = NULL;
	Dwfl_Module *mod = NULL;
	struct symbolizer *s;
	GElf_Addr bias = 0;
	struct sym_info si;
	GElf_Sym sym, sym2;
	uint64_t addr, size;
	Dwfl *dwfl;

	if (!realpath("/proc/self/exe", exe))
		return 1;
	snprintf(so, sizeof(so), "%s/symindex_fixture.so", dirname(exe));
	dwfl = dwfl_begin(&offline);

	TEST(fixture_indexed)
	{
		ASSERT_OK(access(so, R_OK), "symindex_fixture.so next to the test (make unit builds it)");
		dwfl_report_begin(dwfl);
		mod = dwfl_report_offline(dwfl, so, so, -1);
		dwfl_report_end(dwfl, NULL, NULL);
		ASSERT_TRUE(mod && dwfl_module_getelf(mod, &bias), "libdwfl opens the fixture");
		ix = mod ? sym_index__build(mod) : NULL;
		ASSERT_TRUE(ix != NULL, "index built");
	}
	if (!ix)
		return test_summary();

	TEST(every_name_as_a_scan_finds_it)
	{
		int n = dwfl_module_getsymtab(mod), compared = 0, bad = 0;

		for (int i = 0; i < n && !bad; i++) {
			GElf_Addr a;
			const char *name = dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL,
								   NULL);

			for (int k = 0; name && k < 4 && !bad; k++) {
				uint64_t a1 = 0, s1 = 0, a2 = 0, s2 = 0;
				int r1 = sym_index__find(ix, name, k & 1, k & 2, &a1, &s1);
				int r2 = scan(mod, name, k & 1, k & 2, &a2, &s2);

				compared++;
				bad = !ASSERT_EQ(r1, r2, name) || !ASSERT_EQ(a1, a2, name) ||
				      !ASSERT_EQ(s1, s2, name);
				if (bad)
					printf("  filters: func %d, defined %d\n", k & 1, !!(k & 2));
			}
		}
		ASSERT_TRUE(compared > 40, "the fixture has symbols to compare");
	}

	TEST(repeated_name_gives_the_first_in_the_table)
	{
		ASSERT_OK(elf_nth(so, "twin", 2, STT_FUNC, &sym2, file2, sizeof(file2)),
			  "a second twin in .symtab");
		ASSERT_OK(elf_nth(so, "twin", 1, STT_FUNC, &sym, file, sizeof(file)), "first twin");
		ASSERT_STREQ(file, "symindex_a.c", "first twin's unit (link order)");
		ASSERT_OK(sym_index__find(ix, "twin", true, true, &addr, &size), "find twin");
		ASSERT_EQ(addr, sym.st_value + bias, "address of the first twin");
		ASSERT_TRUE(addr != sym2.st_value + bias, "not the second twin");
	}

	TEST(func_filter_skips_a_variable_of_the_same_name)
	{
		ASSERT_OK(elf_nth(so, "mixed", 1, STT_NOTYPE, &sym, file, sizeof(file)), "mixed");
		ASSERT_EQ(GELF_ST_TYPE(sym.st_info), STT_OBJECT, "first mixed is the variable");
		ASSERT_OK(elf_nth(so, "mixed", 1, STT_FUNC, &sym2, file2, sizeof(file2)),
			  "mixed()");
		ASSERT_OK(sym_index__find(ix, "mixed", false, true, &addr, &size), "any type");
		ASSERT_EQ(addr, sym.st_value + bias, "any type: the variable");
		ASSERT_EQ(size, sym.st_size, "any type: its size");
		ASSERT_OK(sym_index__find(ix, "mixed", true, true, &addr, &size), "func");
		ASSERT_EQ(addr, sym2.st_value + bias, "func: the function");
	}

	TEST(undefined_only_when_asked)
	{
		ASSERT_EQ(sym_index__find(ix, "symindex_missing", false, true, &addr, NULL), -ENOENT,
			  "defined only");
		ASSERT_OK(sym_index__find(ix, "symindex_missing", false, false, &addr, NULL),
			  "undefined allowed");
	}

	TEST(unknown_names)
	{
		ASSERT_EQ(sym_index__find(ix, "no_such_symbol", false, false, &addr, NULL), -ENOENT,
			  "absent");
		ASSERT_EQ(sym_index__find(ix, "twi", false, false, &addr, NULL), -ENOENT, "prefix");
		ASSERT_EQ(sym_index__find(ix, "twins", false, false, &addr, NULL), -ENOENT,
			  "longer");
	}

	sym_index__free(ix);
	dwfl_end(dwfl);

	s = symbolizer__new();
	TEST(func_line_by_name)
	{
		ASSERT_OK(symbolizer__lookup_func_line(s, so, "twin", 0, false, &si), "twin");
		ASSERT_TRUE(ends_with(si.file, "symindex_a.c"), "twin: the first one's file");
		ASSERT_TRUE(si.line > 0, "twin: a line");
		ASSERT_OK(symbolizer__lookup_func_line(s, so, "mixed", 0, false, &si), "mixed");
		ASSERT_TRUE(ends_with(si.file, "symindex_b.c"), "mixed: the function, not the variable");
		ASSERT_EQ(symbolizer__lookup_func_line(s, so, "symindex_missing", 0, false, &si),
			  -ENOENT, "undefined function");
		ASSERT_EQ(symbolizer__lookup_func_line(s, so, "no_such_function", 0, false, &si),
			  -ENOENT, "unknown function");
	}
	symbolizer__free(s);
	return test_summary();
}
