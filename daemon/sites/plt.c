// SPDX-License-Identifier: GPL-2.0-only
/*
 * The functions an object's PLT stubs call: the decoder names a call's
 * target with it (a spin-wait loop that takes a lock each time round,
 * sites/spinwait.c).  Each R_X86_64_JUMP_SLOT relocation of .rela.plt names
 * a GOT slot's symbol; each 16-byte stub of .plt.sec (or of .plt, when the
 * object has no .plt.sec) jumps through one slot: `jmp *disp(%rip)`, after
 * an `endbr64` and with a `bnd` prefix where the object was built so, which
 * Zydis decodes.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "elf_symbols.h"
#include "plt.h"
#include "util/array.h"

#define PLT_ENTRY	16

/* GOT slot -> name, from .rela.plt. */
struct slot_name {
	uint64_t got;
	const char *name;
};

static int by_addr(const void *a, const void *b)
{
	const struct plt_stub *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The JUMP_SLOT relocations of section scn (.rela.plt), each slot with its symbol's name. */
static int slot_names(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct slot_name **out,
		      size_t *n)
{
	Elf_Scn *sym_scn = elf_getscn(elf, sh->sh_link);
	Elf_Data *rel = elf_getdata(scn, NULL), *syms;
	GElf_Shdr sym_sh;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!rel || !sym_scn || !gelf_getshdr(sym_scn, &sym_sh) ||
	    !(syms = elf_getdata(sym_scn, NULL)) || !sh->sh_entsize)
		return 0;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name;

		if (!gelf_getrela(rel, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(elf, sym_sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (ARRAY_RESERVE(*out, cap, *n, 64))
			return -ENOMEM;
		(*out)[(*n)++] = (struct slot_name){ .got = r.r_offset, .name = name };
	}
	return 0;
}

/* The GOT slot a stub at vaddr jumps through, or 0: `[endbr64] [bnd] jmp *disp(%rip)`. */
static uint64_t stub_slot(const ZydisDecoder *dec, const uint8_t *b, uint64_t vaddr)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZyanU64 slot;

	for (size_t off = 0; off < PLT_ENTRY; off += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, b + off, PLT_ENTRY - off, &in, ops)))
			return 0;
		if (in.mnemonic == ZYDIS_MNEMONIC_ENDBR64)
			continue;
		if (in.mnemonic != ZYDIS_MNEMONIC_JMP || ops[0].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    ops[0].mem.base != ZYDIS_REGISTER_RIP ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], vaddr + off, &slot)))
			return 0;
		return slot;
	}
	return 0;
}

/* The stubs of section scn, each with the name of the slot it jumps through. */
static int add_stubs(struct plt_map *m, Elf_Scn *scn, const GElf_Shdr *sh,
		     const struct slot_name *slots, size_t nslots)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t cap = m->n;
	ZydisDecoder dec;

	if (!d || !d->d_buf || d->d_size < PLT_ENTRY ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return 0;
	for (size_t off = 0; off + PLT_ENTRY <= d->d_size; off += PLT_ENTRY) {
		uint64_t got = stub_slot(&dec, (const uint8_t *)d->d_buf + off, sh->sh_addr + off);

		for (size_t i = 0; got && i < nslots; i++) {
			if (slots[i].got != got)
				continue;
			if (ARRAY_RESERVE(m->v, cap, m->n, 64))
				return -ENOMEM;
			m->v[m->n++] = (struct plt_stub){ .addr = sh->sh_addr + off,
							  .name = slots[i].name };
			break;
		}
	}
	return 0;
}

int plt_map__load(Elf *elf, struct plt_map *m)
{
	struct slot_name *slots;
	size_t nslots;
	GElf_Shdr sh;
	Elf_Scn *scn;
	int err;

	memset(m, 0, sizeof(*m));
	scn = elf_section_named(elf, ".rela.plt", &sh);
	if (!scn || sh.sh_type != SHT_RELA)
		return 0;
	err = slot_names(elf, scn, &sh, &slots, &nslots);
	if (!err) {
		scn = elf_section_named(elf, ".plt.sec", &sh);
		if (!scn)
			scn = elf_section_named(elf, ".plt", &sh);
		if (scn)
			err = add_stubs(m, scn, &sh, slots, nslots);
	}
	free(slots);
	if (m->n > 1)
		qsort(m->v, m->n, sizeof(*m->v), by_addr);
	return err;
}

const char *plt_map__name(const struct plt_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].addr == addr)
			return m->v[mid].name;
		if (m->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void plt_map__free(struct plt_map *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}
