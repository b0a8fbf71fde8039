// SPDX-License-Identifier: GPL-2.0-only
/*
 * sites/omp_spawn.h on tests/unit/fixtures/omp_spawn.c (every way gcc
 * hands libgomp a function, a target region's included), built PIE and
 * non-PIE: on the stripped copy of each, the functions found by the calls
 * that run them are exactly the outlined functions the unstripped build's
 * .symtab names (stripping moves no code), not the `.cold` part gcc -O2
 * splits off one of them (history__is_outlined(), checked here too); and
 * this test's own executable, which calls no libgomp function, has none.
 */
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "sites/elf_symbols.h"
#include "sites/omp_spawn.h"
#include "history/history.h"

#define MAX_FNS	32

struct fns {
	uint64_t v[MAX_FNS];
	size_t n;
};

static void add(struct fns *f, uint64_t a)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i] == a)
			return;
	if (f->n < MAX_FNS)
		f->v[f->n++] = a;
}

/* An outlined function's own symbol, as the history takes it: not its .cold part. */
static int named(const struct elf_symbol *sym, void *arg)
{
	if (sym->name && history__is_outlined(sym->name) &&
	    GELF_ST_TYPE(sym->sym.st_info) == STT_FUNC)
		add(arg, sym->sym.st_value);
	return 0;
}

static int found(void *arg, uint64_t vaddr)
{
	add(arg, vaddr);
	return 0;
}

static bool has(const struct fns *f, uint64_t a)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i] == a)
			return true;
	return false;
}

/* The outlined functions of path by symbol (symtab) or by spawn call. */
static int fns_of(const char *path, bool symtab, struct fns *f)
{
	struct elf_file ef;
	int err = elf_file__open(path, ELF_C_READ, &ef);

	memset(f, 0, sizeof(*f));
	if (err)
		return err;
	if (symtab)
		elf_symbols__each(ef.elf, ELF_SYMTAB, named, f);
	else
		err = omp_spawn__fns(path, ef.elf, found, f);
	elf_file__close(&ef);
	return err;
}

static void check_build(const char *dir, const char *name)
{
	char plain[4096], stripped[4096];
	struct fns want, got;

	snprintf(plain, sizeof(plain), "%s/%s", dir, name);
	snprintf(stripped, sizeof(stripped), "%s/%s.stripped", dir, name);
	ASSERT_OK(fns_of(plain, true, &want), plain);
	ASSERT_OK(fns_of(stripped, false, &got), stripped);
	/* parallel for, parallel, task, sections, taskloop, teams, target. */
	ASSERT_TRUE(want.n >= 7, "the fixture's outlined functions by name");
	ASSERT_EQ(got.n, want.n, "as many found by their calls as named");
	for (size_t i = 0; i < want.n; i++)
		ASSERT_TRUE(has(&got, want.v[i]), "a named outlined function found by its call");
}

int main(int argc, char **argv)
{
	/* The fixtures are built beside this test. */
	char self[4096];
	const char *dir;
	struct fns none;

	snprintf(self, sizeof(self), "%s", argc > 0 ? argv[0] : ".");
	dir = dirname(self);

	elf_version(EV_CURRENT);
	TEST(pie_outlined_functions_found_by_their_calls)
	check_build(dir, "omp_spawn_fixture");
	TEST(non_pie_outlined_functions_found_by_their_calls)
	check_build(dir, "omp_spawn_fixture_nopie");
	TEST(cold_part_is_not_an_outlined_function)
	{
		ASSERT_TRUE(history__is_outlined("main._omp_fn.12"), "main._omp_fn.12");
		ASSERT_FALSE(history__is_outlined("main._omp_fn.3.cold"), "main._omp_fn.3.cold");
		ASSERT_FALSE(history__is_outlined("main._omp_fn."), "main._omp_fn.");
		ASSERT_FALSE(history__is_outlined("main"), "main");
	}
	TEST(no_libgomp_call_no_function)
	{
		ASSERT_OK(fns_of("/proc/self/exe", false, &none), "this test's executable");
		ASSERT_EQ(none.n, (size_t)0, "functions found");
	}
	return test_summary();
}
