// SPDX-License-Identifier: GPL-2.0-only
/*
 * Call chains for `tests/lint-bpf-stack.py --self-test` (make lint): built,
 * never loaded.  A program named over_* must be counted over 6.1's 512 bytes
 * of stack, one named within_* not.  Each buffer is only handed to a helper:
 * its frame is named by r10 plus a constant, never by an access of its own.
 * Each program calls first, so the call's relocation sits at a small offset,
 * whose hex digits are all decimal ones: read as an instruction, such a line
 * hid the call (the chain 6.1 refused and the lint passed, last session).
 * This host's verifier agrees with the names: it refuses both over_* programs
 * ("combined stack size of 2 calls is 544") and loads both within_* ones.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define FRAME(bytes)								\
	({									\
		char buf[bytes];						\
		bpf_probe_read_kernel(buf, sizeof(buf), (void *)src);		\
	})

__noinline long frame_288(long src)
{
	return FRAME(288);
}

__noinline long frame_224(long src)
{
	return FRAME(224);
}

static long loop_cb_224(__u64 i, void *src)
{
	FRAME(224);
	return 1;
}

/* 256 + 288: over. */
SEC("kprobe")
long over_call(struct pt_regs *ctx)
{
	long src = frame_288(0);

	return FRAME(256) + src;
}

/* 256 + 224: within. */
SEC("kprobe")
long within_call(struct pt_regs *ctx)
{
	long src = frame_224(0);

	return FRAME(256) + src;
}

/* 320 + a callback's 224: over. */
SEC("kprobe")
long over_callback(struct pt_regs *ctx)
{
	long src = bpf_loop(1, loop_cb_224, NULL, 0);

	return FRAME(320) + src;
}

/* 256 + a callback's 224: within. */
SEC("kprobe")
long within_callback(struct pt_regs *ctx)
{
	long src = bpf_loop(1, loop_cb_224, NULL, 0);

	return FRAME(256) + src;
}

char LICENSE[] SEC("license") = "GPL";
