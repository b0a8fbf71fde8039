/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Both stacks in kernel breakpoint mode, after DataCollider (OSDI 2010):
 * when a code-breakpoint sample arms a soft watchpoint, a data breakpoint
 * on the watched address goes live on every other CPU before the stall
 * ends, so that the conflicting access traps (x86: just after it ran),
 * consumes the watchpoint and is reported with its own stack, read or
 * write, whether it changed the value or not.  Without it the other side
 * is seen only if it runs at one of the few sampled sites: a race shows
 * as a value change with one stack ("unknown origin"), or not at all.
 *
 * The watcher side is here; the trap side is bpf/pair_trap.bpf.h; the
 * request word's layout and the armer threads that program the debug
 * registers are in include/kcsand.h and daemon/hw/pair.c.
 *
 * One watcher at a time holds the data breakpoints (pair_owner): each CPU
 * has one register for them.  The wait for the acknowledgements is part
 * of the stall, with the soft watchpoint already armed, so it costs the
 * watcher nothing it would not spend stalling, and it is bounded by
 * pair_wait_us, itself under the kernel's 1 ms ceiling: an armer whose CPU
 * has interrupts off (another watcher's stall, a spinlock) arms late or
 * not at all, and the stall goes on without that CPU.
 */
#ifndef KCSAND_PAIR_BPF_H
#define KCSAND_PAIR_BPF_H

/* The current request (include/kcsand.h), written by its owner only. */
__u64 pair_request;
/* The word each CPU's armer last put in its register, written by the daemon. */
__u64 pair_ack[KCSAND_PAIR_MAX_CPUS];
/* 1 for a CPU whose armer runs (the daemon's), so that the watcher waits for it. */
__u8 pair_live[KCSAND_PAIR_MAX_CPUS];
/* The highest CPU number with an armer + 1; 0: no data breakpoints (kprobes, user mode). */
__u32 pair_cpus;
/* The CPU + 1 of the watcher holding the registers, 0: free. */
__u32 pair_owner;
/* The request's sequence, bumped by the owner. */
__u32 pair_seq;
__u64 pair_counters[KCSAND_PAIR_CTR_COUNT];

static __always_inline void pair_count(enum kcsand_pair_counter c, __u64 v)
{
	if (c < KCSAND_PAIR_CTR_COUNT)
		__sync_fetch_and_add(&pair_counters[c], v);
}

/*
 * The debug register for an access: x86 wants a length of 1, 2, 4 or 8 at
 * an address aligned to it.  The smallest aligned range that covers the
 * access, or its first 8-byte block for one that crosses a block (the
 * trap side then drops a neighbour's access once it is decoded).
 */
static __always_inline __u64 pair_word(const struct hit *hit, __u32 cpu, __u32 seq)
{
	__u32 lg = 3;

	for (__u32 l = 0; l < 3; l++) {
		__u64 len = 1ULL << l, a = hit->addr & ~(len - 1);

		if (len >= hit->size && a + len >= hit->addr + hit->size) {
			lg = l;
			break;
		}
	}
	return ((hit->addr & ~((1ULL << lg) - 1)) & KCSAND_PAIR_ADDR_MASK) |
	       (__u64)lg << KCSAND_PAIR_LEN_SHIFT |
	       ((hit->type & KCSAND_ACCESS_WRITE) ? KCSAND_PAIR_RW : 0) |
	       (__u64)(cpu & 0xff) << KCSAND_PAIR_CPU_SHIFT |
	       (__u64)(seq & 0x1f) << KCSAND_PAIR_SEQ_SHIFT;
}

struct pair_wait {
	__u64 deadline;
	__u64 word;
	__u32 self;
	__u32 ncpus;
	__u32 next;	/* the first CPU not yet seen to acknowledge */
	int acked;
};

/*
 * Has every other live CPU acknowledged the word?  One CPU a call, in
 * order: the watcher holds the registers, so an acknowledgement stays
 * until it releases them, and a CPU seen once needs no second look.  A
 * loop over the CPUs inside the callback was walked 256 turns deep at
 * every state of its caller (35,977 of kcsand_kxbp's 80,705 instructions
 * on the guest's 6.1).
 */
static long pair_ack_cb(__u64 i, void *data)
{
	struct pair_wait *pw = data;
	__u32 c = pw->next;
	__u64 ack;

	if (c >= pw->ncpus || c >= KCSAND_PAIR_MAX_CPUS) {
		pw->acked = 1;
		return 1;
	}
	/* ~word: the CPU's armer could not have it (the kernel refused the address). */
	ack = *(volatile __u64 *)&pair_ack[c];
	if (c == pw->self || !*(volatile __u8 *)&pair_live[c] || ack == pw->word ||
	    ack == ~pw->word) {
		pw->next = c + 1;
		return 0;
	}
	return bpf_ktime_get_ns() >= pw->deadline;
}

/*
 * After the soft watchpoint is armed: take the data breakpoints, publish
 * the request and wait, bounded, until every other CPU has it.  1: this
 * watcher holds them (pair_release() after the stall).
 */
static __always_inline int pair_arm(const struct hit *hit)
{
	__u32 cpu = bpf_get_smp_processor_id(), wait;
	struct pair_wait pw = {};
	__u64 t0;

	if (!hit->pair || hit->user || !*(volatile __u32 *)&pair_cpus)
		return 0;
	/*
	 * Not on a kernel stack (the watcher's own, an escaped local; or a
	 * sleeper's).  Another CPU's register there outlives the frame
	 * whenever its armer is late (it turns it off only when it next
	 * runs), and traps on whatever reuses the slot once its task runs on
	 * that CPU.  Under QEMU's TCG (the test guest) it is worse: an
	 * interrupt whose frame push hits a watchpoint is dropped with its
	 * vector left in service in the local APIC, and the CPU never takes
	 * an interrupt again (docs/kernel-mode.md, P19).
	 */
	if (kernel_stack_addr(hit)) {
		pair_count(KCSAND_PAIR_CTR_STACK, 1);
		return 0;
	}
	wait = wait_us(hit, PARAM(pair_wait_us));
	if (!wait)
		return 0;
	if (__sync_val_compare_and_swap(&pair_owner, 0, cpu + 1) != 0) {
		pair_count(KCSAND_PAIR_CTR_BUSY, 1);
		return 0;
	}
	pair_count(KCSAND_PAIR_CTR_REQUESTS, 1);
	t0 = bpf_ktime_get_ns();
	pw.word = pair_word(hit, cpu, ++pair_seq);
	pw.self = cpu;
	pw.ncpus = *(volatile __u32 *)&pair_cpus;
	pw.deadline = t0 + (__u64)wait * 1000;
	__sync_lock_test_and_set(&pair_request, pw.word);
	bpf_loop(1 << 20, pair_ack_cb, &pw, 0);
	if (pw.acked) {
		pair_count(KCSAND_PAIR_CTR_ARMED, 1);
		pair_count(KCSAND_PAIR_CTR_ARM_NS, bpf_ktime_get_ns() - t0);
	} else {
		pair_count(KCSAND_PAIR_CTR_TIMEOUTS, 1);
	}
	return 1;
}

/*
 * After the stall and the disarm: the breakpoints come off (a trap that
 * comes before the armers are done finds no watchpoint and does nothing),
 * and the next watcher may take them.
 */
static __always_inline void pair_release(void)
{
	__u64 word = (__u64)bpf_get_smp_processor_id() << KCSAND_PAIR_CPU_SHIFT |
		     (__u64)(++pair_seq & 0x1f) << KCSAND_PAIR_SEQ_SHIFT;

	__sync_lock_test_and_set(&pair_request, word);
	__sync_lock_test_and_set(&pair_owner, 0);
}

#endif
