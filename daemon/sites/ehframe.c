// SPDX-License-Identifier: GPL-2.0-only
/*
 * Function bounds from .eh_frame: every x86-64 object has one, even
 * stripped, and its FDEs bound each function (and each cold part) that a
 * compiler emitted.  libdw walks the entries (dwarf_next_cfi); what it
 * leaves to the caller is an FDE's initial location and range, encoded as
 * its CIE's 'R' augmentation says (GCC and clang: pc-relative sdata4).
 */
#include <dwarf.h>
#include <errno.h>
#include <string.h>
#include <elfutils/libdw.h>

#include "ehframe.h"
#include "elf_symbols.h"
#include "util/print.h"

/* Bytes of a value in the encoding's format; 0 for the variable-length or unknown ones. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/* A value in the encoding's format at p (little-endian: x86-64 only). */
static uint64_t enc_read(const uint8_t *p, uint8_t enc)
{
	uint64_t v = 0;
	size_t n = enc_size(enc);

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	if ((enc & DW_EH_PE_signed) && n < 8 && (v >> (n * 8 - 1)) & 1)
		v |= ~0ull << (n * 8);
	return v;
}

/* The FDE pointer encoding of cie ('R'), or DW_EH_PE_omit when it cannot be told. */
static uint8_t cie_fde_encoding(const Dwarf_CIE *cie)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;

	if (cie->augmentation[0] != 'z')
		return cie->augmentation[0] ? DW_EH_PE_omit : DW_EH_PE_absptr;
	for (const char *a = cie->augmentation + 1; *a; a++) {
		if (*a == 'S' || *a == 'B')
			continue;
		if (!p || p >= end)
			return DW_EH_PE_omit;
		if (*a == 'R')
			return *p;
		if (*a == 'L') {
			p++;
		} else if (*a == 'P' && enc_size(*p)) {
			p += 1 + enc_size(*p);	/* the personality routine's pointer */
		} else {
			return DW_EH_PE_omit;
		}
	}
	return DW_EH_PE_absptr;
}

static Elf_Scn *find_eh_frame(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_section_named(elf, ".eh_frame", sh);

	return scn && sh->sh_type != SHT_NOBITS ? scn : NULL;
}

/* The bounds of one FDE: 0, or -ENOENT for an encoding it does not know (skipped). */
static int fde_bounds(const unsigned char *ident, Elf_Data *data, const GElf_Shdr *sh,
		      const Dwarf_FDE *fde, uint64_t *start, uint64_t *size)
{
	Dwarf_CFI_Entry cie;
	Dwarf_Off next;
	uint8_t enc;
	size_t n;

	if (dwarf_next_cfi(ident, data, true, fde->CIE_pointer, &next, &cie) ||
	    !dwarf_cfi_cie_p(&cie))
		enc = DW_EH_PE_omit;
	else
		enc = cie_fde_encoding(&cie.cie);
	n = enc_size(enc);
	/* Only absolute and pc-relative locations, read directly: what compilers emit. */
	if (!n || (enc & 0x70 & ~DW_EH_PE_pcrel) || (enc & DW_EH_PE_indirect) ||
	    fde->end - fde->start < (ptrdiff_t)(2 * n))
		return -ENOENT;
	*start = enc_read(fde->start, enc);
	if (enc & DW_EH_PE_pcrel)
		*start += sh->sh_addr + (uint64_t)(fde->start - (const uint8_t *)data->d_buf);
	*size = enc_read(fde->start + n, enc & 0x0f);
	return 0;
}

int ehframe__fdes(const char *path, Elf *elf,
		  int (*fn)(void *ctx, uint64_t start, uint64_t size), void *ctx)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	GElf_Shdr sh;
	Elf_Scn *scn = find_eh_frame(elf, &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	Dwarf_Off off = 0, next;

	if (!scn)
		return 0;
	if (!data || !ident) {
		pr_warn("%s: cannot read .eh_frame: %s\n", path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	for (;;) {
		Dwarf_CFI_Entry entry;
		uint64_t start, size;
		int rc = dwarf_next_cfi(ident, data, true, off, &next, &entry);

		if (rc == 1)
			return 0;
		if (rc) {
			pr_warn("%s: .eh_frame at 0x%llx: %s\n", path, (unsigned long long)off,
				dwarf_errmsg(-1));
			return -ENOEXEC;
		}
		off = next;
		if (dwarf_cfi_cie_p(&entry) ||
		    fde_bounds(ident, data, &sh, &entry.fde, &start, &size) || !size)
			continue;
		rc = fn(ctx, start, size);
		if (rc)
			return rc;
	}
}
