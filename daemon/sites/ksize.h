/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel functions' real sizes, from the ELF symbol table of a vmlinux or
 * NAME.ko (--kernel-debug).  kallsyms has no sizes: a function's extent
 * there is only an upper bound, the next symbol's address, and the decoder
 * has to guess where its padding starts.  st_size says it exactly.
 *
 * A vmlinux is matched by address: KASLR moves it as a whole, so one slide
 * (runtime _text - the file's _text) maps every symbol, static functions
 * that share a name included; the name must agree too.  A module's .ko is
 * relocatable (st_value is section-relative), so it is matched by name;
 * where a static name repeats with different sizes, no size is given.
 */
#ifndef KCSAND_KSIZE_H
#define KCSAND_KSIZE_H

#include <stdint.h>
#include "ksyms.h"

/* The debug file for a module (NULL: vmlinux), or NULL when there is none. */
typedef const char *(*ksize_debug_file_fn)(void *ctx, const char *module);

struct ksizes;

/*
 * Sizes for the functions of ks, from the files debug_file names.  Each
 * file's symbol table is read once, on the first function it covers.
 * NULL when out of memory.
 */
struct ksizes *ksizes__new(const struct ksyms *ks, ksize_debug_file_fn debug_file, void *ctx);
/*
 * The st_size of the STT_FUNC symbol that is the function named name at
 * runtime address addr (of module, NULL: vmlinux), or 0 when no file covers
 * it, the file cannot be read (said once, pr_warn), or the match is unsure.
 */
uint64_t ksizes__size(struct ksizes *kz, const char *name, const char *module, uint64_t addr);
void ksizes__free(struct ksizes *kz);

#endif
