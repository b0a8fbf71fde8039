// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel functions' real sizes from a debug file's symbol table (ksize.h),
 * on stand-ins built next to this binary from tests/unit/fixtures/ksize_*.c:
 * a linked "vmlinux" and an ld -r "NAME.ko", in both of which a static
 * twin() has two definitions of different sizes.  A kallsyms file is
 * written from the fixture's own symbol table (read with libelf), the
 * vmlinux's addresses moved by a KASLR-like slide, the module's placed
 * anywhere: what a running kernel would list.
 */
#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elf_symtab.h"
#include "sites/ksize.h"
#include "sites/ksyms.h"
#include "test.h"

#define SLIDE 0xffffffff80000000ULL	/* the vmlinux's runtime - link-time address */
#define MOD_BASE 0xffffffffc0100000ULL	/* where the module's functions are listed */
#define MAX_FUNCS 16

struct fixture_func {
	char name[64];
	uint64_t value, size;
};

struct fixture {
	struct fixture_func f[MAX_FUNCS];
	size_t n;
	uint64_t text;
};

static int collect(const char *name, const GElf_Sym *sym, void *arg)
{
	struct fixture *fx = arg;

	if (!name || sym->st_shndx == SHN_UNDEF)
		return 0;
	if (!strcmp(name, "_text"))
		fx->text = sym->st_value;
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || fx->n == MAX_FUNCS)
		return 0;
	snprintf(fx->f[fx->n].name, sizeof(fx->f[fx->n].name), "%s", name);
	fx->f[fx->n].value = sym->st_value;
	fx->f[fx->n].size = sym->st_size;
	fx->n++;
	return 0;
}

/* The nth (from 1) twin() of the fixture's symbol table. */
static const struct fixture_func *twin(const struct fixture *fx, int nth)
{
	for (size_t i = 0; i < fx->n; i++)
		if (!strcmp(fx->f[i].name, "twin") && !--nth)
			return &fx->f[i];
	return NULL;
}

static const struct fixture_func *by_name(const struct fixture *fx, const char *name)
{
	for (size_t i = 0; i < fx->n; i++)
		if (!strcmp(fx->f[i].name, name))
			return &fx->f[i];
	return NULL;
}

/* The vmlinux's functions slid, the module's at MOD_BASE + 0x100 apart, and a stray one. */
static int write_kallsyms(const char *path, const struct fixture *vm, const struct fixture *ko)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	for (size_t i = 0; i < vm->n; i++)
		fprintf(f, "%016llx t %s\n", (unsigned long long)(vm->f[i].value + SLIDE),
			vm->f[i].name);
	for (size_t i = 0; i < ko->n; i++)
		fprintf(f, "%016llx t %s\t[ksize_mod]\n",
			(unsigned long long)(MOD_BASE + 0x100 * i), ko->f[i].name);
	fprintf(f, "%016llx t ksize_absent\t[ksize_mod]\n",
		(unsigned long long)(MOD_BASE + 0x100 * ko->n));
	return fclose(f) ? -errno : 0;
}

struct files {
	const char *vmlinux, *ko;
};

static const char *debug_file(void *ctx, const char *module)
{
	const struct files *fs = ctx;

	if (!module)
		return fs->vmlinux;
	return !strcmp(module, "ksize_mod") ? fs->ko : NULL;
}

int main(void)
{
	char exe[PATH_MAX], vmlinux[PATH_MAX + 32], ko[PATH_MAX + 32], kallsyms[PATH_MAX + 32];
	struct fixture vm = {}, mod = {};
	struct files fs = { vmlinux, ko };
	struct ksyms *ks = NULL;
	struct ksizes *kz = NULL;
	const char *dir;

	if (!realpath("/proc/self/exe", exe))
		return 1;
	dir = dirname(exe);
	snprintf(vmlinux, sizeof(vmlinux), "%s/ksize_vmlinux", dir);
	snprintf(ko, sizeof(ko), "%s/ksize_mod.ko", dir);
	snprintf(kallsyms, sizeof(kallsyms), "%s/ksize_kallsyms", dir);

	TEST(fixtures_read)
	{
		ASSERT_EQ(elf_symtab_each(vmlinux, collect, &vm), -ENOENT,
			  "ksize_vmlinux next to the test (make unit builds it)");
		ASSERT_EQ(elf_symtab_each(ko, collect, &mod), -ENOENT,
			  "ksize_mod.ko next to the test (make unit builds it)");
		ASSERT_TRUE(vm.text && twin(&vm, 2) && by_name(&vm, "ksize_unique"),
			    "the vmlinux has _text, two twin()s and ksize_unique");
		ASSERT_TRUE(twin(&mod, 2) && twin(&mod, 1)->size != twin(&mod, 2)->size,
			    "the module's two twin()s differ in size");
		ASSERT_OK(write_kallsyms(kallsyms, &vm, &mod), "write the kallsyms file");
		ks = ksyms__load_file(kallsyms);
		ASSERT_TRUE(ks, "ksyms__load_file");
		kz = ks ? ksizes__new(ks, debug_file, &fs) : NULL;
		ASSERT_TRUE(kz, "ksizes__new");
	}
	if (!kz)
		return test_summary();

	TEST(vmlinux_by_slid_address)
	{
		/* Each static twin() has its own size: the address tells them apart. */
		for (int nth = 1; nth <= 2; nth++) {
			const struct fixture_func *t = twin(&vm, nth);

			ASSERT_EQ(ksizes__size(kz, "twin", NULL, t->value + SLIDE), t->size,
				  nth == 1 ? "first twin()" : "second twin()");
		}
		ASSERT_EQ(ksizes__size(kz, "ksize_unique", NULL,
				       by_name(&vm, "ksize_unique")->value + SLIDE),
			  by_name(&vm, "ksize_unique")->size, "ksize_unique");
	}

	TEST(vmlinux_name_must_agree)
	{
		/* Another build would put another function there: no size, the kallsyms rule. */
		ASSERT_EQ(ksizes__size(kz, "ksize_unique", NULL, twin(&vm, 1)->value + SLIDE), 0,
			  "ksize_unique at twin()'s address");
		ASSERT_EQ(ksizes__size(kz, "twin", NULL, twin(&vm, 1)->value), 0,
			  "twin() at its unslid address");
	}

	TEST(module_by_name)
	{
		ASSERT_EQ(ksizes__size(kz, "ksize_unique", "ksize_mod", MOD_BASE),
			  by_name(&mod, "ksize_unique")->size, "a name of its own");
		/* Section-relative values cannot tell the twins apart: no size, not a guess. */
		ASSERT_EQ(ksizes__size(kz, "twin", "ksize_mod", MOD_BASE), 0,
			  "a static name with two sizes");
		ASSERT_EQ(ksizes__size(kz, "ksize_absent", "ksize_mod", MOD_BASE), 0,
			  "a name the .ko lacks");
	}

	TEST(no_debug_file)
	{
		struct files none = { "/nonexistent/vmlinux", NULL };
		struct ksizes *kn = ksizes__new(ks, debug_file, &none);

		ASSERT_EQ(ksizes__size(kz, "ksize_unique", "other_mod", MOD_BASE), 0,
			  "a module without a debug file");
		ASSERT_TRUE(kn, "ksizes__new");
		if (kn) {
			ASSERT_EQ(ksizes__size(kn, "twin", NULL, twin(&vm, 1)->value + SLIDE), 0,
				  "a vmlinux that cannot be opened");
			ksizes__free(kn);
		}
	}

	TEST(init_section_bounds_from_kallsyms)
	{
		/* 6.1's layout: .exit.text (exit_elf_binfmt) lies past _einittext, inside the section. */
		static const char text[] =
			"ffffffff83044000 D __init_begin\n"
			"ffffffff83079000 T _sinittext\n"
			"ffffffff830e7c04 T _einittext\n"
			"ffffffff833046ba t exit_elf_binfmt\n"
			"ffffffff83306000 R __init_end\n"
			"ffffffff83400000 T after_init\n"
			"ffffffffc0000000 t __init_begin\t[some_mod]\n";
		char path[PATH_MAX];
		struct ksyms *k;
		uint64_t b = 0, e = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s.init", kallsyms);
		f = fopen(path, "w");
		ASSERT_TRUE(f && fputs(text, f) >= 0 && !fclose(f), "write the kallsyms file");
		k = ksyms__load_file(path);
		ASSERT_TRUE(k, "ksyms__load_file");
		if (k) {
			ksyms__init_range(k, &b, &e);
			ASSERT_EQ(b, 0xffffffff83044000ull, "__init_begin, a data symbol, kept for the range");
			ASSERT_EQ(e, 0xffffffff83306000ull, "__init_end; a module's symbol of that name is not it");
			ASSERT_EQ(ksyms__count(k), 5, "still only the text symbols are listed (the module's too)");
			ksyms__free(k);
		}
		unlink(path);
	}

	ksizes__free(kz);
	ksyms__free(ks);
	unlink(kallsyms);
	return test_summary();
}
