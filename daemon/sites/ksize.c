// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elf_symbols.h"
#include "ksize.h"
#include "util/array.h"
#include "util/print.h"

struct kfunc {
	const char *name;	/* in the file's string table: lives as long as its Elf */
	uint64_t addr;		/* st_value: link-time (vmlinux) or section-relative (.ko) */
	uint64_t size;
};

/*
 * One debug file's sized functions, sorted twice: by address for a vmlinux
 * (KASLR slides it whole), by name for a module (its sections are placed
 * apart at load time, so only names carry over).
 */
struct ksize_file {
	char *path;
	bool vmlinux;
	bool usable;		/* its symbol table was read */
	int fd;
	Elf *elf;
	struct kfunc *by_addr, *by_name;
	size_t n;
	bool has_slide;
	uint64_t slide;		/* runtime address - address in the file */
};

struct ksizes {
	const struct ksyms *ks;
	ksize_debug_file_fn debug_file;
	void *ctx;
	struct ksize_file *files;
	size_t nr_files, cap_files;
};

static int cmp_addr(const void *pa, const void *pb)
{
	const struct kfunc *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct kfunc *a = pa, *b = pb;

	return strcmp(a->name, b->name);
}

/* What read_funcs() finds in the symbol table, into f. */
struct funcs_walk {
	struct ksize_file *f;
	uint64_t *text;
};

static int add_func(const struct elf_symbol *s, void *arg)
{
	struct funcs_walk *w = arg;
	struct ksize_file *f = w->f;
	const GElf_Sym *sym = &s->sym;

	if (!f->by_addr) {
		f->by_addr = calloc(s->nr ? s->nr : 1, sizeof(*f->by_addr));
		if (!f->by_addr)
			return -ENOMEM;
	}
	if (!s->name || !*s->name)
		return 0;
	if (!strcmp(s->name, "_text") && sym->st_shndx != SHN_UNDEF)
		*w->text = sym->st_value;
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF || !sym->st_size)
		return 0;
	f->by_addr[f->n++] = (struct kfunc){ s->name, sym->st_value, sym->st_size };
	return 0;
}

/* The defined STT_FUNC symbols with a size, and the file's _text (0 if none). */
static int read_funcs(struct ksize_file *f, uint64_t *text)
{
	struct funcs_walk w = { f, text };
	int err;

	*text = 0;
	err = elf_symbols__each(f->elf, ELF_SYMTAB, add_func, &w);
	if (err == -ENOENT || err == -ENOEXEC)
		return -ENODATA;
	if (err)
		return err;
	if (!f->by_addr) {	/* an empty table */
		f->by_addr = calloc(1, sizeof(*f->by_addr));
		if (!f->by_addr)
			return -ENOMEM;
	}
	f->by_name = malloc((f->n ? f->n : 1) * sizeof(*f->by_name));
	if (!f->by_name)
		return -ENOMEM;
	memcpy(f->by_name, f->by_addr, f->n * sizeof(*f->by_name));
	qsort(f->by_addr, f->n, sizeof(*f->by_addr), cmp_addr);
	qsort(f->by_name, f->n, sizeof(*f->by_name), cmp_name);
	return 0;
}

static void file_open(struct ksizes *kz, struct ksize_file *f)
{
	uint64_t ft, rt;
	int err;

	elf_version(EV_CURRENT);
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		pr_warn("%s: cannot open: %s; kernel functions sized from kallsyms\n", f->path,
			strerror(errno));
		return;
	}
	/*
	 * Read, not mapped: the symbol and string tables are then read whole,
	 * one pread each, where page faults over the test guest's 9p fetched
	 * them a page at a time (bench/kernel/p15-kmark-cost.sh).
	 */
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf) {
		pr_warn("%s: not ELF: %s; kernel functions sized from kallsyms\n", f->path,
			elf_errmsg(-1));
		return;
	}
	err = read_funcs(f, &ft);
	if (err) {
		pr_warn("%s: %s; kernel functions sized from kallsyms\n", f->path,
			err == -ENODATA ? "no symbol table" : strerror(-err));
		return;
	}
	f->usable = true;
	if (f->vmlinux && ft && ksyms__vmlinux_addr(kz->ks, "_text", &rt)) {
		f->has_slide = true;
		f->slide = rt - ft;
	}
}

static struct ksize_file *file_get(struct ksizes *kz, const char *path, bool vmlinux)
{
	struct ksize_file *f;

	for (size_t i = 0; i < kz->nr_files; i++)
		if (!strcmp(kz->files[i].path, path))
			return &kz->files[i];
	if (ARRAY_RESERVE(kz->files, kz->cap_files, kz->nr_files, 4))
		return NULL;
	f = &kz->files[kz->nr_files];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	f->vmlinux = vmlinux;
	kz->nr_files++;
	file_open(kz, f);
	return f;
}

/* The first entry of v (sorted by key) whose key is not below the one of key. */
static size_t lower_bound(const struct kfunc *v, size_t n, const struct kfunc *key,
			  int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(&v[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* vmlinux: the symbol at the slid address that carries the name (aliases share addresses). */
static uint64_t size_by_addr(const struct ksize_file *f, const char *name, uint64_t addr)
{
	struct kfunc key = { "", addr - f->slide, 0 };

	for (size_t i = lower_bound(f->by_addr, f->n, &key, cmp_addr);
	     i < f->n && f->by_addr[i].addr == key.addr; i++)
		if (!strcmp(f->by_addr[i].name, name))
			return f->by_addr[i].size;
	return 0;
}

/* By name alone: a size only when every function of that name has the same. */
static uint64_t size_by_name(const struct ksize_file *f, const char *name)
{
	struct kfunc key = { name, 0, 0 };
	uint64_t size = 0;

	for (size_t i = lower_bound(f->by_name, f->n, &key, cmp_name);
	     i < f->n && !strcmp(f->by_name[i].name, name); i++) {
		if (size && f->by_name[i].size != size)
			return 0;
		size = f->by_name[i].size;
	}
	return size;
}

struct ksizes *ksizes__new(const struct ksyms *ks, ksize_debug_file_fn debug_file, void *ctx)
{
	struct ksizes *kz = calloc(1, sizeof(*kz));

	if (!kz)
		return NULL;
	kz->ks = ks;
	kz->debug_file = debug_file;
	kz->ctx = ctx;
	return kz;
}

uint64_t ksizes__size(struct ksizes *kz, const char *name, const char *module, uint64_t addr)
{
	const char *path = kz->debug_file ? kz->debug_file(kz->ctx, module) : NULL;
	struct ksize_file *f = path ? file_get(kz, path, !module) : NULL;

	if (!f || !f->usable)
		return 0;
	if (f->has_slide)
		return size_by_addr(f, name, addr);
	return size_by_name(f, name);
}

void ksizes__free(struct ksizes *kz)
{
	if (!kz)
		return;
	for (size_t i = 0; i < kz->nr_files; i++) {
		struct ksize_file *f = &kz->files[i];

		free(f->by_addr);
		free(f->by_name);
		if (f->elf)
			elf_end(f->elf);
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
	}
	free(kz->files);
	free(kz);
}
