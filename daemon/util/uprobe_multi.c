// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/btf.h>
#include <linux/bpf.h>
#include "uprobe_multi.h"

/*
 * The head of union bpf_attr's link_create member with the uprobe_multi
 * variant, as the kernel UAPI lays it out.  The tail is zeroed: the kernel
 * checks that bytes it does not know are zero.
 */
union uprobe_multi_attr {
	struct {
		__u32 prog_fd;
		__u32 target_fd;
		__u32 attach_type;
		__u32 flags;
		__u64 path;
		__u64 offsets;
		__u64 ref_ctr_offsets;
		__u64 cookies;
		__u32 cnt;
		__u32 um_flags;
		__u32 pid;
	} link_create;
	char bytes[128];
};

_Static_assert(__builtin_offsetof(union uprobe_multi_attr, link_create.path) == 16,
	       "uprobe_multi.path offset");
_Static_assert(__builtin_offsetof(union uprobe_multi_attr, link_create.cnt) == 48,
	       "uprobe_multi.cnt offset");

bool uprobe_multi__supported(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	if (!btf)
		return false;
	ok = btf__find_by_name_kind(btf, "bpf_uprobe_multi_link", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	return ok;
}

int uprobe_multi__attach(int prog_fd, const char *path, const __u64 *offsets,
			const __u64 *cookies, size_t cnt, int pid)
{
	return uprobe_multi__attach_flags(prog_fd, path, offsets, cookies, cnt, pid, 0);
}

int uprobe_multi__attach_flags(int prog_fd, const char *path, const __u64 *offsets,
			       const __u64 *cookies, size_t cnt, int pid, __u32 flags)
{
	union uprobe_multi_attr attr;
	long fd;

	if (!cnt)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.attach_type = KCSAND_BPF_TRACE_UPROBE_MULTI;
	attr.link_create.path = (__u64)(unsigned long)path;
	attr.link_create.offsets = (__u64)(unsigned long)offsets;
	attr.link_create.cookies = (__u64)(unsigned long)cookies;
	attr.link_create.cnt = cnt;
	attr.link_create.pid = pid;
	attr.link_create.um_flags = flags;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}
