// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "symindex.h"

/*
 * One named symbol.  name points into the module's string table, which
 * lives as long as its Dwfl session: the index must be freed before it.
 */
struct sym_entry {
	const char *name;
	uint64_t addr;
	uint64_t size;
	uint32_t idx;		/* position in the symbol table: orders equal names */
	bool func;		/* STT_FUNC */
	bool defined;		/* st_shndx != SHN_UNDEF */
};

/* Sorted by name, then by symbol-table position; built once, then read only. */
struct sym_index {
	struct sym_entry *v;
	size_t n;
};

static int entry_cmp(const void *pa, const void *pb)
{
	const struct sym_entry *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

struct sym_index *sym_index__build(Dwfl_Module *mod)
{
	struct sym_index *ix = calloc(1, sizeof(*ix));
	int n = dwfl_module_getsymtab(mod);

	if (!ix)
		return NULL;
	if (n <= 0)
		return ix;	/* no symbols: every lookup fails, as a scan would */
	ix->v = calloc((size_t)n, sizeof(*ix->v));
	if (!ix->v) {
		free(ix);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name)
			continue;
		ix->v[ix->n++] = (struct sym_entry){
			.name = name, .addr = addr, .size = sym.st_size, .idx = (uint32_t)i,
			.func = GELF_ST_TYPE(sym.st_info) == STT_FUNC,
			.defined = sym.st_shndx != SHN_UNDEF,
		};
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), entry_cmp);
	return ix;
}

void sym_index__free(struct sym_index *ix)
{
	if (!ix)
		return;
	free(ix->v);
	free(ix);
}

int sym_index__find(const struct sym_index *ix, const char *name, bool func, bool defined,
		    uint64_t *addr, uint64_t *size)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {	/* the first entry named name or above */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ix->n && !strcmp(ix->v[lo].name, name); lo++) {
		const struct sym_entry *e = &ix->v[lo];

		if ((func && !e->func) || (defined && !e->defined))
			continue;
		*addr = e->addr;
		if (size)
			*size = e->size;
		return 0;
	}
	return -ENOENT;
}
