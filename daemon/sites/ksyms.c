// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"
#include "util/array.h"

/*
 * One array sorted by address; names and module names live in one string
 * pool (module names repeat: each is stored once per run of equal names).
 */
struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint64_t init_begin, init_end;	/* vmlinux's freed init section, when listed */
};

static ssize_t pool_add(struct ksyms *ks, const char *s)
{
	size_t len = strlen(s) + 1;
	ssize_t off;

	if (ARRAY_RESERVE_MORE(ks->pool, ks->pool_cap, ks->pool_len, len, 1 << 20))
		return -1;
	off = ks->pool_len;
	memcpy(ks->pool + off, s, len);
	ks->pool_len += len;
	return off;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Names sit in the pool in kallsyms order: keep it among aliases. */
	return x->name < y->name ? -1 : x->name > y->name;
}

static struct ksyms *load(const char *path, bool data);

struct ksyms *ksyms__load_file(const char *path)
{
	return load(path, false);
}

struct ksyms *ksyms__load_data_file(const char *path)
{
	return load(path, true);
}

static bool wanted(char type, bool data)
{
	if (data)
		return strchr("dDbBrR", type) != NULL;
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int push_sym(struct ksyms *ks, unsigned long long addr, ssize_t name_off, ssize_t mod_off)
{
	if (ARRAY_RESERVE(ks->syms, ks->cap, ks->n, 65536))
		return -ENOMEM;
	/* Offsets now, pointers once the pool stops moving. */
	ks->syms[ks->n++] = (struct ksym){ .name = (const char *)(uintptr_t)name_off,
					   .module = (const char *)(uintptr_t)(mod_off + 1),
					   .addr = addr };
	return 0;
}

/* The pool has stopped moving: its offsets become pointers. */
static void set_pointers(struct ksyms *ks)
{
	for (size_t i = 0; i < ks->n; i++) {
		uintptr_t m = (uintptr_t)ks->syms[i].module;

		ks->syms[i].name = ks->pool + (uintptr_t)ks->syms[i].name;
		ks->syms[i].module = m ? ks->pool + (m - 1) : NULL;
	}
}

/*
 * Size: up to the next symbol at a higher address (aliases share
 * theirs); the last one before another module's text, or the end,
 * gets a page at most.
 */
static void set_sizes(struct ksyms *ks)
{
	for (size_t i = ks->n; i-- > 0;) {
		size_t j = i + 1;

		while (j < ks->n && ks->syms[j].addr == ks->syms[i].addr)
			j++;
		if (j < ks->n && ks->syms[j].module == ks->syms[i].module)
			ks->syms[i].size = ks->syms[j].addr - ks->syms[i].addr;
		else if (j < ks->n && ks->syms[j].addr - ks->syms[i].addr < 4096)
			ks->syms[i].size = ks->syms[j].addr - ks->syms[i].addr;
		else
			ks->syms[i].size = 4096;
	}
}

static struct ksyms *load(const char *path, bool data)
{
	FILE *f = fopen(path, "r");
	struct ksyms *ks;
	char line[512], name[256], mod[128], last_mod[128] = "";
	ssize_t last_mod_off = -1;
	bool any_nonzero = false;

	if (!f)
		return NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		goto fail;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type;
		int n;
		ssize_t name_off, mod_off = -1;

		mod[0] = '\0';
		n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod);
		if (n < 3)
			continue;
		/* Data symbols, kept for the one range they bound (ksyms__init_range). */
		if (n == 3 && !strcmp(name, "__init_begin"))
			ks->init_begin = addr;
		else if (n == 3 && !strcmp(name, "__init_end"))
			ks->init_end = addr;
		if (!wanted(type, data))
			continue;
		if (addr)
			any_nonzero = true;
		name_off = pool_add(ks, name);
		if (name_off < 0)
			goto fail;
		if (n == 4) {
			if (strcmp(mod, last_mod)) {
				last_mod_off = pool_add(ks, mod);
				if (last_mod_off < 0)
					goto fail;
				snprintf(last_mod, sizeof(last_mod), "%s", mod);
			}
			mod_off = last_mod_off;
		}
		if (push_sym(ks, addr, name_off, mod_off))
			goto fail;
	}
	fclose(f);
	f = NULL;
	if (!any_nonzero) {
		errno = EPERM;	/* kptr_restrict: addresses read as 0 */
		goto fail;
	}
	set_pointers(ks);
	qsort(ks->syms, ks->n, sizeof(*ks->syms), cmp_addr);
	set_sizes(ks);
	return ks;
fail:
	if (f)
		fclose(f);
	ksyms__free(ks);
	return NULL;
}

struct ksyms *ksyms__load(void)
{
	return ksyms__load_file("/proc/kallsyms");
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks);
}

const struct ksym *ksyms__map_addr(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = ARRAY_COUNT_LE(ks->syms, ks->n, addr, addr);

	if (!lo)
		return NULL;
	lo--;
	/* Aliases share an address: prefer the first name at it. */
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[lo].addr)
		lo--;
	return addr - ks->syms[lo].addr < ks->syms[lo].size ? &ks->syms[lo] : NULL;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->n;
}

const struct ksym *ksyms__at(const struct ksyms *ks, size_t i)
{
	return i < ks->n ? &ks->syms[i] : NULL;
}

void ksyms__init_range(const struct ksyms *ks, uint64_t *begin, uint64_t *end)
{
	*begin = ks->init_begin;
	*end = ks->init_end;
}

bool ksyms__vmlinux_addr(const struct ksyms *ks, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < ks->n; i++) {
		if (!ks->syms[i].module && !strcmp(ks->syms[i].name, name)) {
			*addr = ks->syms[i].addr;
			return true;
		}
	}
	return false;
}
