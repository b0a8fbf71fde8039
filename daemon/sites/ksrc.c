// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "ksrc.h"
#include "util/array.h"
#include "util/print.h"

static bool unit_matches(Dwarf_Die *cu, const char *prefix)
{
	const char *name = dwarf_diename(cu), *dir;
	Dwarf_Attribute a;
	size_t dlen, plen = strlen(prefix);
	char slashed[512];

	if (!name)
		return false;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (dir && !strncmp(name, dir, dlen = strlen(dir)) && name[dlen] == '/')
		name += dlen + 1;
	if (!strncmp(name, prefix, plen))
		return true;
	snprintf(slashed, sizeof(slashed), "/%s", prefix);
	return strstr(name, slashed) != NULL;
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

int ksrc__load(const char *path, const char *prefix, struct ksrc_funcs *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	Dwarf_Off off = 0, next;
	size_t hsize, cap = f->n;
	Dwarf *dw;

	if (fd < 0) {
		err = -errno;
		pr_warn("src:%s: cannot open %s: %s\n", prefix, path, strerror(-err));
		return err;
	}
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		pr_warn("src:%s: %s has no DWARF: %s\n", prefix, path, dwarf_errmsg(-1));
		close(fd);
		return -ENODATA;
	}
	while (!err && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu) && unit_matches(&cu, prefix)) {
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
