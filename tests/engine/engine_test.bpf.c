// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's watchpoint protocol (bpf/engine.bpf.h), cut at the points
 * where two CPUs can interleave, one BPF_PROG_TEST_RUN per step, so that
 * tests/engine/test_engine.c can replay any interleaving of watchers and
 * consumers in one process, or in a forked child for another address space.
 *
 * Each program reads the access it plays from `in` and leaves what it did
 * in `out`.  Watchers are kept between steps in `watchers` (bpf/engine.bpf.h's
 * struct watch, without its map pointer, which a program cannot keep across runs).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kcsand.h"
#include "engine.bpf.h"
#include "tests/engine/engine_test.h"

char LICENSE[] SEC("license") = "GPL";

struct test_access in;
struct test_result out;
struct watch watchers[TEST_WATCHERS];
/* A claim not yet published: a consumer "preempted" between its two halves. */
struct test_result pending;
static struct pt_regs test_regs;
static const struct kcsand_site test_site = { .ra_off = -1, .scale = 1 };

static __always_inline int test_hit(struct hit *hit, void *ctx)
{
	__u32 zero = 0;

	hit->percpu = bpf_map_lookup_elem(&cpu_state, &zero);
	if (!hit->percpu)
		return -1;
	hit->ctx = ctx;
	test_regs.sp = in.sp;
	test_regs.ip = in.ip;
	hit->regs = &test_regs;
	hit->site = &test_site;
	hit->site_idx = 0;
	hit->addr = in.addr;
	hit->ip = in.ip;
	hit->size = in.size;
	hit->type = in.type;
	hit->in_interrupt = 0;
	hit->user = in.user;
	hit->every = 1;
	hit->pair = in.pair;
	hit->acc_flags = 0;
	return 0;
}

static __always_inline struct watch *saved(void)
{
	return &watchers[in.watcher & (TEST_WATCHERS - 1)];
}

/* A map pointer cannot be kept across runs: everything before info is. */
static __always_inline void save_watch(const struct watch *w)
{
	__builtin_memcpy(saved(), w, __builtin_offsetof(struct watch, info));
}

static __always_inline int restore_watch(struct watch *w)
{
	__builtin_memcpy(w, saved(), __builtin_offsetof(struct watch, info));
	w->info = bpf_map_lookup_elem(&slot_infos, &w->slot);
	return w->info ? 0 : -1;
}

/* A watcher arms (wp_arm) and samples the old value. */
SEC("raw_tp")
int watch_arm(void *ctx)
{
	struct watch w = {};
	struct hit hit;

	if (test_hit(&hit, ctx))
		return 1;
	out.ret = wp_arm(&hit, &w);
	out.slot = w.slot;
	out.gen = w.gen;
	out.wp = w.wp;
	if (!out.ret)
		save_watch(&w);
	return 0;
}

/* It stalls (udelay_task from params) and looks at the value again. */
SEC("raw_tp")
int watch_stall(void *ctx)
{
	struct watch w = {};
	struct hit hit;

	if (test_hit(&hit, ctx) || restore_watch(&w))
		return 1;
	wp_stall(&hit, &w);
	save_watch(&w);
	return 0;
}

/* It disarms and reports. */
SEC("raw_tp")
int watch_disarm(void *ctx)
{
	struct watch w = {};
	struct hit hit;

	if (test_hit(&hit, ctx) || restore_watch(&w))
		return 1;
	wp_disarm(&hit, &w);
	return 0;
}

/* A whole access's fast path: find a watchpoint and consume it (out.ret = found). */
SEC("raw_tp")
int access(void *ctx)
{
	struct hit hit;

	if (test_hit(&hit, ctx))
		return 1;
	out.ret = find_watchpoint(&hit, &out.slot, &out.wp, &out.gen);
	if (out.ret)
		found_watchpoint(&hit, out.slot, out.wp, out.gen);
	return 0;
}

/* The first half of a consumer: claim, then stop (out.ret = claimed). */
SEC("raw_tp")
int claim(void *ctx)
{
	struct hit hit;

	if (test_hit(&hit, ctx))
		return 1;
	out.ret = find_watchpoint(&hit, &pending.slot, &pending.wp, &pending.gen) &&
		  wp_claim(pending.slot, pending.wp);
	return 0;
}

/* The second half, later: publish the pending claim's record. */
SEC("raw_tp")
int publish(void *ctx)
{
	struct hit hit;

	if (test_hit(&hit, ctx))
		return 1;
	wp_publish(&hit, pending.slot, pending.gen);
	return 0;
}

/* spin_us(in.spin_us): out.ret = 0 when the deadline passed. */
SEC("raw_tp")
int spin(void *ctx)
{
	__u64 t0 = bpf_ktime_get_ns();

	out.ret = spin_us(in.spin_us);
	out.wp = bpf_ktime_get_ns() - t0;
	return 0;
}

/* Does the access set a watchpoint (should_watch)?  out.ret = 1: it watches. */
SEC("raw_tp")
int watches(void *ctx)
{
	struct hit hit;

	if (test_hit(&hit, ctx))
		return 1;
	out.ret = should_watch(&hit, hit.percpu);
	return 0;
}

/*
 * A sampled watcher's data breakpoints (bpf/pair.bpf.h): ask, wait for the
 * other CPUs, let go.  out.ret = 1: it held them; out.wp: the word it asked with.
 */
SEC("raw_tp")
int pair_request_run(void *ctx)
{
	struct hit hit;

	if (test_hit(&hit, ctx))
		return 1;
	out.ret = pair_arm(&hit);
	out.wp = pair_request;
	if (out.ret)
		pair_release();
	return 0;
}

/*
 * Kernel memory with a 16 KiB-aligned stretch in it, for a task stack's
 * base (kernel_stack_addr() in bpf/engine.bpf.h); out.wp = its address.
 */
char fake_stack[2 * KCSAND_KERNEL_STACK_SPAN];

SEC("raw_tp")
int fake_stack_addr(void *ctx)
{
	out.wp = (__u64)(unsigned long)fake_stack;
	out.ret = 0;
	return 0;
}
