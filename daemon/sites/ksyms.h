/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel symbols from /proc/kallsyms, modules included: what kernel-mode
 * targets are chosen from and what kernel stacks are symbolized with.
 */
#ifndef KCSAND_KSYMS_H
#define KCSAND_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	const char *name;
	const char *module;	/* NULL for vmlinux */
	uint64_t addr;
	uint64_t size;		/* up to the next text symbol: kallsyms has no sizes */
};

struct ksyms;

/* Text symbols of the running kernel; NULL with errno set (EPERM: addresses hidden). */
struct ksyms *ksyms__load(void);
/* The same from a file in kallsyms format (tests). */
struct ksyms *ksyms__load_file(const char *path);
/*
 * Data symbols (d, b, r: variables) instead, from a file in kallsyms format:
 * kallsyms lists a module's variables, static ones included.
 */
struct ksyms *ksyms__load_data_file(const char *path);
void ksyms__free(struct ksyms *ks);
/* The function containing addr, or NULL. */
const struct ksym *ksyms__map_addr(const struct ksyms *ks, uint64_t addr);
size_t ksyms__count(const struct ksyms *ks);
/* A vmlinux (not module) text symbol's address by name; false when kallsyms lacks it. */
bool ksyms__vmlinux_addr(const struct ksyms *ks, const char *name, uint64_t *addr);
/* vmlinux's init section, [__init_begin, __init_end), freed after boot; 0, 0 if not listed. */
void ksyms__init_range(const struct ksyms *ks, uint64_t *begin, uint64_t *end);
const struct ksym *ksyms__at(const struct ksyms *ks, size_t i);

#endif
