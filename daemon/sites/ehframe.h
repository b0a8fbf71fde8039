/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Function bounds from .eh_frame, for objects without a symbol table:
 * decoding (target_obj.c) takes them as functions, and symbolization
 * (report/) names an address by the FDE that holds it, as decoding did.
 */
#ifndef KCSAND_EHFRAME_H
#define KCSAND_EHFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/*
 * Calls fn with the [start, start + size) of every FDE in elf's .eh_frame
 * (link-time addresses), in section order, until fn returns non-zero
 * (returned).  0 when the file has no .eh_frame; -ENOEXEC (said with
 * pr_warn) when it cannot be read.
 */
int ehframe__fdes(const char *path, Elf *elf,
		  int (*fn)(void *ctx, uint64_t start, uint64_t size), void *ctx);

#endif
