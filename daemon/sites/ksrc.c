// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "debuginfo.h"
#include "ksrc.h"
#include "util/array.h"
#include "util/print.h"

/*
 * The unit's source path from the source root.  kbuild names most units
 * relative to the root already ("fs/read_write.c", even in an O= build,
 * whose DW_AT_comp_dir is the object tree), but assembly units absolutely
 * ("/build/.../linux-6.1.192/arch/x86/kernel/head_64.S"): the root is
 * then the deepest directory the name shares with an absolute comp_dir.
 * A leading "./" goes too.  The path is never searched for PATH inside
 * it: src:kernel/ must not take arch/x86/kernel/, which KCSAN leaves
 * alone because instrumenting it hangs the boot.
 */
static const char *unit_path(Dwarf_Die *cu)
{
	const char *name = dwarf_diename(cu), *dir;
	Dwarf_Attribute a;
	size_t root = 0;

	if (!name)
		return NULL;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (name[0] == '/' && dir && dir[0] == '/') {
		size_t dl = strlen(dir);

		if (!strncmp(name, dir, dl) && name[dl] == '/')
			root = dl + 1;
		else
			for (size_t i = 0; name[i] && name[i] == dir[i]; i++)
				if (name[i] == '/')
					root = i + 1;
	}
	name += root;
	while (!strncmp(name, "./", 2))
		name += 2;
	return name;
}

static bool unit_matches(Dwarf_Die *cu, const char *const *prefixes, size_t nr)
{
	const char *path = unit_path(cu);

	for (size_t i = 0; path && i < nr; i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static int push(struct ksrc_funcs *f, size_t *cap, const char *name)
{
	if (ARRAY_RESERVE(f->names, *cap, f->n, 256))
		return -ENOMEM;
	f->names[f->n] = strdup(name);
	return f->names[f->n++] ? 0 : -ENOMEM;
}

/* The unit's functions with code (low_pc or ranges): not declarations, not inline-only ones. */
static int unit_functions(Dwarf_Die *cu, struct ksrc_funcs *f, size_t *cap)
{
	Dwarf_Die d;
	int err = 0;

	if (dwarf_child(cu, &d) != 0)
		return 0;
	do {
		const char *name;

		if (dwarf_tag(&d) != DW_TAG_subprogram || !(name = dwarf_diename(&d)))
			continue;
		if (!dwarf_hasattr(&d, DW_AT_low_pc) && !dwarf_hasattr(&d, DW_AT_ranges))
			continue;
		err = push(f, cap, name);
	} while (!err && dwarf_siblingof(&d, &d) == 0);
	return err;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ksrc__load_any(const char *path, const char *const *prefixes, size_t nr,
		  struct ksrc_funcs *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	Dwarf_Off off = 0, next;
	size_t hsize, cap = f->n;
	Dwarf *dw;

	if (fd < 0) {
		err = -errno;
		pr_warn("src:%s: cannot open %s: %s\n", prefixes[0], path, strerror(-err));
		return err;
	}
	/*
	 * Every unit's first DIE is read, and they are spread over the whole
	 * .debug_info: one sequential read costs less than a page fault for
	 * each over 9p (62 s against 6 s with the file cached, in the test
	 * guest), and marking reads the same file next.
	 */
	debuginfo__prefetch(path);
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		pr_warn("src:%s: %s has no DWARF: %s\n", prefixes[0], path, dwarf_errmsg(-1));
		close(fd);
		return -ENODATA;
	}
	while (!err && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu) && unit_matches(&cu, prefixes, nr)) {
			f->units++;
			err = unit_functions(&cu, f, &cap);
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	qsort(f->names, f->n, sizeof(*f->names), cmp);
	return err;
}

int ksrc__load(const char *path, const char *prefix, struct ksrc_funcs *f)
{
	return ksrc__load_any(path, &prefix, 1, f);
}

/*
 * What KCSAN's Makefiles leave uninstrumented (KCSAN_SANITIZE := n, Linux
 * 6.1), with their reasons: a directory ends in '/' and takes its subtree
 * (kcsand takes the whole of arch/x86/kernel/ and arch/x86/mm/, where KCSAN
 * excludes the top directories and cpu/common.c: the rest runs in the same
 * entry, interrupt and CPU bring-up paths), a file is one unit.
 */
const char *const ksrc_kcsan_exempt[] = {
	"arch/x86/kernel/",		/* "boot hangs during the first second" */
	"arch/x86/mm/",			/* references __initdata */
	"arch/x86/lib/delay.c",		/* KCSAN's own udelay: recursion */
	"arch/x86/boot/", "arch/x86/realmode/", "arch/x86/purgatory/",
	"arch/x86/entry/vdso/",		/* no runtime to call */
	"drivers/firmware/efi/libstub/",
	"kernel/kcsan/",		/* KCSAN itself */
	"kernel/sched/",		/* "excessive noise and performance degradation" */
	"kernel/trace/",		/* "recursion due to instrumentation" */
	"kernel/softirq.c",		/* CPU-local data, overhead in interrupts */
	"kernel/kcov.c", "kernel/stackleak.c",
	"kernel/locking/lockdep.c",	/* recursion lockdep -> KCSAN -> lockdep */
};
const size_t ksrc_nr_kcsan_exempt = sizeof(ksrc_kcsan_exempt) / sizeof(ksrc_kcsan_exempt[0]);

bool ksrc__has(const struct ksrc_funcs *f, const char *name)
{
	return f->n && bsearch(&name, f->names, f->n, sizeof(*f->names), cmp);
}

void ksrc__free(struct ksrc_funcs *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	memset(f, 0, sizeof(*f));
}
