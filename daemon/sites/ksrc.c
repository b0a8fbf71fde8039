// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <sys/stat.h>
#include "debuginfo.h"
#include "elf_symbols.h"
#include "ksrc.h"
#include "util/array.h"
#include "util/file.h"
#include "util/print.h"

/*
 * A vmlinux's site sets are the same on every run over the same build, and
 * reading them walks every unit's first DIE of a 633 MB file: 6 to 7 s of
 * each kernel start in the test guest over 9p, even for a few functions
 * (KCSAN's exemptions are read every time).  So the functions found for a
 * list of prefixes are kept in the cache directory (util/file.h), in
 * ksrc-BUILDID-HASH.vN (HASH: of the prefixes), and read back by the next
 * run over the same build.  The file: this header, then n names, each
 * ending in a NUL.  Change the format whenever what a unit gives changes.
 */
#define KSRC_CACHE_MAGIC	"KCSANDSF"
#define KSRC_CACHE_FORMAT	1

struct ksrc_cache_header {
	char magic[8];
	uint32_t format;
	uint32_t pad;
	uint64_t units;
	uint64_t n;
};

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

/* The cache file of path's units under prefixes; NULL when path has no build-id. */
static char *cache_path(const char *path, const char *const *prefixes, size_t nr)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char id[128], *out;

	if (elf_file__build_id_hex(path, id, sizeof(id)))
		return NULL;
	for (size_t i = 0; i < nr; i++)
		for (const char *p = prefixes[i];; p++) {
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
			if (!*p)
				break;
		}
	if (asprintf(&out, "%s/ksrc-%s-%016llx.v%d", file__cache_dir(), id,
		     (unsigned long long)h, KSRC_CACHE_FORMAT) < 0)
		return NULL;
	return out;
}

/* The names after the header, pushed to f; -EIO when the file is cut short. */
static int cache_names(FILE *fp, const struct ksrc_cache_header *h, struct ksrc_funcs *f,
		       size_t *cap)
{
	char name[4096];
	int err = 0;

	for (uint64_t i = 0; !err && i < h->n; i++) {
		size_t len = 0;
		int c;

		while ((c = getc(fp)) > 0 && len < sizeof(name) - 1)
			name[len++] = c;
		if (c != 0)
			return -EIO;
		name[len] = '\0';
		err = push(f, cap, name);
	}
	return err;
}

/* f's functions and units from the cache file; false (f as it was) when it has none. */
static bool cache_read(const char *file, struct ksrc_funcs *f, size_t *cap)
{
	FILE *fp = fopen(file, "rbe");
	struct ksrc_cache_header h;
	size_t n0 = f->n;
	bool ok = false;

	if (!fp)
		return false;
	if (fread(&h, sizeof(h), 1, fp) == 1 && !memcmp(h.magic, KSRC_CACHE_MAGIC, 8) &&
	    h.format == KSRC_CACHE_FORMAT && h.n < (1u << 24))
		ok = !cache_names(fp, &h, f, cap);
	fclose(fp);
	if (ok) {
		f->units += h.units;
		return true;
	}
	while (f->n > n0)
		free(f->names[--f->n]);
	return false;
}

/* Keep f's names from n0 on, and units, for the next run: a new file renamed over the old. */
static void cache_write(const char *file, const struct ksrc_funcs *f, size_t n0, size_t units)
{
	struct ksrc_cache_header h = { .format = KSRC_CACHE_FORMAT, .units = units,
				       .n = f->n - n0 };
	char tmp[4200];
	FILE *fp;
	int err = 0;

	memcpy(h.magic, KSRC_CACHE_MAGIC, 8);
	mkdir(file__cache_dir(), 0755);
	snprintf(tmp, sizeof(tmp), "%s.%d", file, (int)getpid());
	fp = fopen(tmp, "wbe");
	if (!fp) {
		err = -errno;
	} else {
		if (fwrite(&h, sizeof(h), 1, fp) != 1)
			err = -EIO;
		for (size_t i = n0; !err && i < f->n; i++)
			if (fwrite(f->names[i], 1, strlen(f->names[i]) + 1, fp) !=
			    strlen(f->names[i]) + 1)
				err = -EIO;
		if (fclose(fp) && !err)
			err = -errno;
		if (!err && rename(tmp, file))
			err = -errno;
		if (err)
			unlink(tmp);
	}
	if (err)
		pr_info("cannot keep the site sets in %s: %s (the next run reads the DWARF "
			"again)\n", file, strerror(-err));
}

/* The functions of path's units under prefixes, from its DWARF. */
static int units_load(const char *path, const char *const *prefixes, size_t nr,
		      struct ksrc_funcs *f, size_t *cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
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
			err = unit_functions(&cu, f, cap);
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return err;
}

int ksrc__load_any(const char *path, const char *const *prefixes, size_t nr,
		  struct ksrc_funcs *f)
{
	size_t n0 = f->n, cap = n0, units0 = f->units;
	char *cache = cache_path(path, prefixes, nr);
	int err = 0;

	if (!cache || !cache_read(cache, f, &cap)) {
		err = units_load(path, prefixes, nr, f, &cap);
		if (!err && cache)
			cache_write(cache, f, n0, f->units - units0);
	}
	free(cache);
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
