/* SPDX-License-Identifier: GPL-2.0-only */
/* The functions an object's PLT stubs call (plt.c). */
#ifndef KCSAND_PLT_H
#define KCSAND_PLT_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct plt_stub {
	uint64_t addr;		/* the stub's link-time address */
	const char *name;	/* the function it calls: in the ELF's string table */
};

/* Sorted by addr; its names live as long as the Elf handle it was loaded from. */
struct plt_map {
	struct plt_stub *v;
	size_t n;
};

/* m, from elf's .rela.plt and .plt.sec (or .plt); empty for an object without them.  0 or -ENOMEM. */
int plt_map__load(Elf *elf, struct plt_map *m);
/* The function the stub at addr calls, or NULL. */
const char *plt_map__name(const struct plt_map *m, uint64_t addr);
void plt_map__free(struct plt_map *m);

#endif
