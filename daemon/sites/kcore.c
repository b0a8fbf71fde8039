// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kcore.h"
#include "util/print.h"

int kcore__open(struct kcore *kc)
{
	Elf *elf;
	size_t n;

	kc->ph = NULL;
	kc->n = 0;
	kc->fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (kc->fd < 0) {
		int err = -errno;

		pr_warn("cannot open /proc/kcore: %s (kernel mode reads the live "
				"code through it; CONFIG_PROC_KCORE)\n", strerror(-err));
		return err;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(kc->fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &n)) {
		pr_warn("/proc/kcore: not a readable ELF core: %s\n",
			elf_errmsg(-1));
		if (elf)
			elf_end(elf);
		return -EINVAL;
	}
	kc->ph = calloc(n ? n : 1, sizeof(*kc->ph));
	if (!kc->ph) {
		elf_end(elf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &kc->ph[kc->n]) && kc->ph[kc->n].p_type == PT_LOAD)
			kc->n++;
	elf_end(elf);
	return 0;
}

int kcore__read(const struct kcore *kc, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; i < kc->n; i++) {
		const GElf_Phdr *p = &kc->ph[i];

		if (addr < p->p_vaddr || addr + len > p->p_vaddr + p->p_filesz)
			continue;
		errno = 0;
		if (pread(kc->fd, buf, len, p->p_offset + (addr - p->p_vaddr)) != (ssize_t)len)
			return errno ? -errno : -EIO;
		return 0;
	}
	return -ERANGE;
}

void kcore__close(struct kcore *kc)
{
	if (kc->fd >= 0)
		close(kc->fd);
	kc->fd = -1;
	free(kc->ph);
	kc->ph = NULL;
	kc->n = 0;
}
