/* SPDX-License-Identifier: GPL-2.0-only */
/* What tests/engine/engine_test.bpf.c and tests/engine/test_engine.c share. */
#ifndef KCSAND_ENGINE_TEST_H
#define KCSAND_ENGINE_TEST_H

struct test_access {
	__u64 addr;
	__u64 ip;
	__u32 size;
	__u32 type;		/* KCSAND_ACCESS_* */
	__u32 user;
	__u32 watcher;		/* which of watchers[] a watcher step plays */
	__u32 spin_us;
	__u32 pair;		/* a kernel code-breakpoint sample (struct hit's pair) */
	__u64 sp;		/* the user stack the sides' copies are taken from */
};

struct test_result {
	__s32 ret;
	__u32 slot;
	__u32 gen;
	__u32 __pad;
	__u64 wp;
};

#define TEST_WATCHERS	4

#endif
