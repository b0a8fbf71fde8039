/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Live kernel memory through /proc/kcore: its PT_LOAD table maps kernel
 * virtual addresses to file offsets.  Kernel code is read through it
 * (ktarget.c: alternatives and ftrace patching as they are), and so is the
 * value under a kernel hardware watchpoint when it is armed (hwbp.c).
 */
#ifndef KCSAND_KCORE_H
#define KCSAND_KCORE_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct kcore {
	int fd;
	GElf_Phdr *ph;
	size_t n;
};

/* 0, or a negative errno with a message naming /proc/kcore. */
int kcore__open(struct kcore *kc);
/* len bytes at kernel address addr; -ERANGE when no segment holds them. */
int kcore__read(const struct kcore *kc, uint64_t addr, void *buf, size_t len);
/* Safe on a zeroed kcore with fd -1, and twice. */
void kcore__close(struct kcore *kc);

#endif
