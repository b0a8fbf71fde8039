/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * uprobe_multi links (Linux 6.6+) through the raw bpf() syscall: Debian's
 * libbpf 1.1.2 predates them.  This is the only place kcsand calls bpf()
 * directly.
 */
#ifndef KCSAND_UPROBE_MULTI_H
#define KCSAND_UPROBE_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

/* The kernel's enum bpf_attach_type value, absent from libbpf 1.1.2's headers. */
#define KCSAND_BPF_TRACE_UPROBE_MULTI 48

/* Does the running kernel know uprobe_multi links?  Decided from its BTF. */
bool uprobe_multi__supported(void);

/*
 * Attach prog_fd (loaded with expected_attach_type UPROBE_MULTI) at cnt file
 * offsets of path, cookie i for offset i.  pid 0 means every process.
 * Returns the link fd or a negative errno.  cnt must be > 0: the kernel
 * refuses an empty link with EINVAL.
 */
int uprobe_multi__attach(int prog_fd, const char *path, const __u64 *offsets,
			const __u64 *cookies, size_t cnt, int pid);
/* The same with the link's flags: KCSAND_UPROBE_MULTI_RETURN probes the functions' returns. */
#define KCSAND_UPROBE_MULTI_RETURN 1
int uprobe_multi__attach_flags(int prog_fd, const char *path, const __u64 *offsets,
			       const __u64 *cookies, size_t cnt, int pid, __u32 flags);

#endif
