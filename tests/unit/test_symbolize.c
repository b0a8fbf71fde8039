/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Symbolizer tests against this very binary and the C library it runs
 * with: the expected answers come from the ELF symbol table read with
 * libelf directly, from __LINE__, and from the dynamic loader.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include "elf_symtab.h"
#include "report/symbolize.h"
#include "test.h"

/* Above pid_max's ceiling (4194304): never a live process. */
#define FAKE_PID 4194305

/*
 * gcc 12 at -O2 gives sym_target no prologue and emits rows for both "{"
 * and the return statement at its entry; libdw, like addr2line, answers
 * with the last of them, the first body line.
 */
enum { TARGET_LINE = __LINE__ + 3 };
__attribute__((noipa)) int sym_target(int x)
{
	return x * 3 + 1;
}

/* Called through volatile pointers so that the calls and their targets stay. */
static int (*volatile target_ptr)(int) = sym_target;

static void *volatile ra_seen;

__attribute__((noipa)) void sym_record_ra(void)
{
	ra_seen = __builtin_return_address(0);
}

static void (*volatile record_ra_ptr)(void) = sym_record_ra;

/*
 * The callee stores the return address itself, so the instruction after
 * the call already belongs to the next line: only is_ra finds the call.
 */
enum { CALL_LINE = __LINE__ + 4 };
__attribute__((noipa)) int sym_caller(void)
{
	ra_seen = NULL;
	record_ra_ptr();
	return ra_seen != NULL;
}

struct elf_symbol_q {
	const char *name;
	GElf_Sym sym;
};

static int elf_symbol_cb(const char *name, const GElf_Sym *sym, void *arg)
{
	struct elf_symbol_q *q = arg;

	if (!name || strcmp(name, q->name))
		return 0;
	q->sym = *sym;
	return 1;
}

/* st_value and st_size of name in the file's .symtab, read without libdwfl. */
static int elf_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	struct elf_symbol_q q = { .name = name };

	if (elf_symtab_each(path, elf_symbol_cb, &q) != 1)
		return -1;
	*value = q.sym.st_value;
	*size = q.sym.st_size;
	return 0;
}

static int main_bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	/* The first object the loader lists is the executable. */
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

int main(void)
{
	uint64_t target = (uint64_t)(uintptr_t)target_ptr;
	uint64_t sym_value = 0, sym_size = 0, bias = 0;
	char exe[PATH_MAX], buf[512], want[512];
	struct symbolizer *s;
	struct sym_info si;

	if (!realpath("/proc/self/exe", exe))
		return 1;
	dl_iterate_phdr(main_bias_cb, &bias);
	s = symbolizer__new();

	TEST(elf_symbol_of_target)
	{
		ASSERT_EQ(elf_symbol(exe, "sym_target", &sym_value, &sym_size), 0, "libelf lookup");
		ASSERT_TRUE(sym_size > 4, "sym_target has a size");
		ASSERT_EQ(sym_value + bias, target, "st_value + load bias");
		ASSERT_EQ(target_ptr(2), 7, "sym_target runs");
	}

	TEST(proc_lookup_function_entry)
	{
		ASSERT_EQ(symbolizer__proc_lookup(s, getpid(), target, false, &si), 0, "lookup");
		ASSERT_STREQ(si.func, "sym_target", "func");
		ASSERT_EQ(si.off, 0, "off");
		ASSERT_EQ(si.size, sym_size, "size");
		ASSERT_STREQ(si.module, exe, "module");
		ASSERT_TRUE(ends_with(si.file, "test_symbolize.c"), "file");
		ASSERT_EQ(si.line, TARGET_LINE, "line");
	}

	TEST(lookup_func_line_by_name)
	{
		/* What kernel frames use: KASLR and module placement do not matter. */
		ASSERT_EQ(symbolizer__lookup_func_line(s, exe, "sym_target", 0, false, &si), 0,
			  "lookup");
		ASSERT_TRUE(ends_with(si.file, "test_symbolize.c"), "file");
		ASSERT_EQ(si.line, TARGET_LINE, "line");
		ASSERT_EQ(symbolizer__lookup_func_line(s, exe, "no_such_function", 0, false, &si),
			  -ENOENT, "unknown function");
	}

	TEST(lookup_file_link_time_vaddr)
	{
		ASSERT_EQ(symbolizer__lookup_file(s, exe, sym_value, false, &si), 0, "lookup");
		ASSERT_STREQ(si.func, "sym_target", "func");
		ASSERT_EQ(si.off, 0, "off");
		ASSERT_EQ(si.size, sym_size, "size");
		ASSERT_EQ(si.line, TARGET_LINE, "line");
	}

	TEST(format_inside_function)
	{
		ASSERT_EQ(symbolizer__proc_lookup(s, getpid(), target + 3, false, &si), 0,
			  "lookup");
		ASSERT_EQ(si.off, 3, "off");
		sym_info__format(&si, target + 3, false, buf, sizeof(buf));
		snprintf(want, sizeof(want), "sym_target+0x3/0x%" PRIx64, sym_size);
		ASSERT_STREQ(buf, want, "format");
		ASSERT_EQ(sym_info__format(&si, target + 3, false, NULL, 0), strlen(want), "length only");
		ASSERT_EQ(sym_info__format(&si, target + 3, false, buf, 4), strlen(want), "truncated");
		ASSERT_STREQ(buf, "sym", "truncated text");
		sym_info__format(&si, target + 3, true, buf, sizeof(buf));
		ASSERT_TRUE(!strncmp(buf, want, strlen(want)) && strstr(buf, "test_symbolize.c:"),
			    "format with line");
	}

	TEST(libc_through_maps)
	{
		void *fopen_addr = dlsym(RTLD_DEFAULT, "fopen");

		ASSERT_TRUE(fopen_addr != NULL, "dlsym fopen");
		ASSERT_EQ(symbolizer__proc_lookup(s, getpid(), (uint64_t)(uintptr_t)fopen_addr,
						  false, &si), 0, "lookup");
		ASSERT_TRUE(si.func != NULL, "libc symbol");
		ASSERT_TRUE(si.func && strstr(si.func, "fopen"), si.func ? si.func : "fopen");
		ASSERT_EQ(si.off, 0, "off");
		ASSERT_TRUE(si.module && strstr(si.module, "libc"), "module is libc");
	}

	TEST(add_bias_without_proc)
	{
		snprintf(buf, sizeof(buf), "/proc/%d", FAKE_PID);
		ASSERT_TRUE(access(buf, F_OK) != 0, "fake pid does not exist");
		ASSERT_EQ(symbolizer__proc_add_bias(s, FAKE_PID, exe, bias), 0, "add_bias");
		ASSERT_EQ(symbolizer__proc_lookup(s, FAKE_PID, target + 1, false, &si), 0,
			  "lookup");
		ASSERT_STREQ(si.func, "sym_target", "func");
		ASSERT_EQ(si.off, 1, "off");
		ASSERT_EQ(si.size, sym_size, "size");
		ASSERT_STREQ(si.module, exe, "module");

		/* Not covered by the registration, and no /proc to fall back on. */
		ASSERT_EQ(symbolizer__proc_lookup(s, FAKE_PID, 0x1000, false, &si), 0, "uncovered");
		ASSERT_TRUE(si.func == NULL, "uncovered func");
		ASSERT_TRUE(si.module == NULL, "uncovered module");

		symbolizer__proc_forget(s, FAKE_PID);
		ASSERT_EQ(symbolizer__proc_lookup(s, FAKE_PID, target, false, &si), 0, "forgotten");
		ASSERT_TRUE(si.func == NULL, "forgotten func");
	}

	TEST(return_address_line)
	{
		uint64_t ra;

		ASSERT_TRUE(sym_caller(), "caller ran");
		ra = (uint64_t)(uintptr_t)ra_seen;
		ASSERT_EQ(symbolizer__proc_lookup(s, getpid(), ra, true, &si), 0, "lookup");
		ASSERT_STREQ(si.func, "sym_caller", "func of the return address");
		ASSERT_EQ(si.line, CALL_LINE, "line of the call");
		ASSERT_EQ(symbolizer__proc_lookup(s, getpid(), ra, false, &si), 0, "lookup");
		ASSERT_STREQ(si.func, "sym_caller", "func of the address");
		ASSERT_EQ(si.line, CALL_LINE + 1, "line after the call without is_ra");
	}

	TEST(repeated_lookups_same_answers)
	{
		/*
		 * Answers are remembered per file (a racy target reports the same
		 * addresses hundreds of times a second): a repeat, and a repeat after
		 * 40,000 other addresses have filled the memory and emptied it, give
		 * what the first lookup gave.
		 */
		struct sym_info first[16][2], again;
		int same = 0, total = 0;

		for (int i = 0; i < 16; i++)
			for (int ra = 0; ra < 2; ra++)
				ASSERT_EQ(symbolizer__lookup_file(s, exe, sym_value + i, ra,
								  &first[i][ra]), 0, "first");
		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < 16; i++) {
				for (int ra = 0; ra < 2; ra++) {
					const struct sym_info *f = &first[i][ra];

					symbolizer__lookup_file(s, exe, sym_value + i, ra, &again);
					total++;
					same += again.func == f->func && again.off == f->off &&
						again.size == f->size && again.file == f->file &&
						again.line == f->line && again.module == f->module &&
						again.mod_vaddr == f->mod_vaddr;
				}
			}
			for (uint64_t a = 0; a < 40000; a++)
				symbolizer__lookup_file(s, exe, sym_value + 64 + a, false, &again);
		}
		ASSERT_EQ(same, total, "answers equal to the first");
		ASSERT_STREQ(first[3][0].func, "sym_target", "func");
		ASSERT_EQ(first[3][0].off, 3, "off");
	}

	TEST(unknown_symbol)
	{
		memset(&si, 0, sizeof(si));
		ASSERT_EQ(sym_info__format(&si, 0xdeadbeef, true, buf, sizeof(buf)), 10, "length");
		ASSERT_STREQ(buf, "0xdeadbeef", "format");
		ASSERT_TRUE(symbolizer__lookup_file(s, "/nonexistent/file", 0x1000, false, &si) ==
				    -ENOENT, "missing file is -ENOENT");
	}

	symbolizer__free(s);
	return test_summary();
}
