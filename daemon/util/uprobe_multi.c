// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
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

/*
 * Asked of the kernel rather than read from its BTF, which takes 0.1 s to
 * parse, paid again by libbpf's CO-RE: a link on "/" is refused with EBADF
 * (not a regular file) only by a kernel that got that far into a
 * uprobe_multi attach; an older one refuses the attach type with EINVAL.
 */
bool uprobe_multi__supported(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = KCSAND_BPF_TRACE_UPROBE_MULTI);
	__u64 off = 0;
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o);
	if (prog < 0)
		return false;
	link = uprobe_multi__attach(prog, "/", &off, NULL, 1, 0);
	if (link >= 0)
		close(link);
	close(prog);
	return link == -EBADF;
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
