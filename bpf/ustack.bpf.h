/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User stacks for the daemon's CFI unwind (docs/stacks.md).
 *
 * bpf_get_stack() walks frame pointers, and Debian's libraries have none
 * (glibc's start_thread among them): a walk ends at the first frame
 * without one, or reads data as frames.  So, as perf's --call-graph dwarf
 * does, a report's side also sends a struct kcsand_ustack: the registers
 * and the top of the stack, which the daemon unwinds with the CFI of
 * .eh_frame/.debug_frame through libdw.  The frame-pointer walk is still
 * taken: it is what a side falls back to without a copy, and what the
 * history keys its remembered stacks by.
 *
 * The record is reserved in the ring buffer and filled there: 8 KiB does
 * not fit the 512-byte BPF stack, and a ring-buffer record needs no
 * per-CPU scratch that a preempted uprobe program could share.
 */
#ifndef KCSAND_USTACK_BPF_H
#define KCSAND_USTACK_BPF_H

#include <bpf/bpf_core_read.h>

/* Report sides' copies: numbered, with KCSAND_USTACK_SEQ set. */
__u64 ustack_seq;

#define USTACK_CHUNKS	(KCSAND_USTACK_SIZE / KCSAND_USTACK_CHUNK)

/* The longest x86 instruction, and so the longest copy in a uprobe's slot (MAX_UINSN_BYTES). */
#define USTACK_XOL_INSN_MAX	16

/*
 * A uprobe runs the instruction it replaced as a copy in its thread's slot
 * of the [uprobes] page, with one single step; a debug register that traps
 * the copy's access reports the copy's ip, which names no function and
 * starts no unwind.  While the thread steps, its uprobe_task keeps the
 * slot (xol_vaddr, cleared when the step ends) and the probed address
 * (vaddr): the copy is as long as the original (x86 rewrites a
 * rip-relative operand to a register in place), so an ip at an offset into
 * the slot is the program's at the same offset from vaddr.  Any other ip
 * is returned as it is.  For debug-register traps only: a uprobe's own
 * registers already hold the program's ip.
 */
static __always_inline __u64 ustack_program_ip(__u64 ip)
{
	struct uprobe_task *ut = BPF_CORE_READ(bpf_get_current_task_btf(), utask);
	__u64 xol;

	if (!ut)
		return ip;
	xol = BPF_CORE_READ(ut, xol_vaddr);
	if (!xol || ip - xol >= USTACK_XOL_INSN_MAX)
		return ip;
	return BPF_CORE_READ(ut, vaddr) + (ip - xol);
}

static __always_inline void ustack_regs(struct kcsand_ustack *rec, struct pt_regs *regs,
					int trapped)
{
	rec->regs[0] = regs->ax;
	rec->regs[1] = regs->dx;
	rec->regs[2] = regs->cx;
	rec->regs[3] = regs->bx;
	rec->regs[4] = regs->si;
	rec->regs[5] = regs->di;
	rec->regs[6] = regs->bp;
	rec->regs[7] = regs->sp;
	rec->regs[8] = regs->r8;
	rec->regs[9] = regs->r9;
	rec->regs[10] = regs->r10;
	rec->regs[11] = regs->r11;
	rec->regs[12] = regs->r12;
	rec->regs[13] = regs->r13;
	rec->regs[14] = regs->r14;
	rec->regs[15] = regs->r15;
	rec->regs[16] = trapped ? ustack_program_ip(regs->ip) : regs->ip;
}

/* Pending uretprobes fixed per copy: the sync calls the thread is inside of. */
#define USTACK_URETPROBES	16

struct ustack_fix {
	struct kcsand_ustack *rec;
	struct return_instance *ri;
	__u64 base;
	__u32 size;
};

/*
 * A pending uretprobe (the history probes the returns of sync functions,
 * and of OpenMP's outlined functions) has replaced its function's return
 * address on the stack with the [uprobes] trampoline's: put the real one
 * back in the copy, as the kernel does for bpf_get_stack() since 6.12.
 * ri->stack is where the return address was: sp at the function's entry.
 * A bpf_loop() callback: the verifier walks it once, not once per instance.
 */
static long ustack_fix_cb(__u64 i, void *data)
{
	struct ustack_fix *fix = data;
	struct return_instance *ri = fix->ri;
	__u64 slot, off;

	if (!ri || !fix->rec)
		return 1;
	slot = BPF_CORE_READ(ri, stack);
	off = slot - fix->base;
	if (slot >= fix->base && off + 8 <= fix->size)
		*(__u64 *)(fix->rec->data + (off & (KCSAND_USTACK_SIZE - 8))) =
			BPF_CORE_READ(ri, orig_ret_vaddr);
	fix->ri = BPF_CORE_READ(ri, next);
	return 0;
}

static __always_inline void ustack_fix_uretprobes(struct kcsand_ustack *rec, __u64 base,
						  __u32 size)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct ustack_fix fix = {
		.rec = rec,
		.ri = BPF_CORE_READ(task, utask, return_instances),
		.base = base,
		.size = size,
	};

	bpf_loop(USTACK_URETPROBES, ustack_fix_cb, &fix, 0);
}

/*
 * The stack from base into rec, chunk by chunk, and the fix-up; returns
 * the bytes copied.  Chunks start at sp rounded down to a chunk, so that
 * one never straddles the end of the stack's mapping (a page boundary):
 * the copy stops at the first chunk that cannot be read.  A global
 * function, verified once: in ustack_send(), a static function walked
 * at each of its callers' states, the chunk loop was walked with it
 * (10,123 of kcsand_uprobe's instructions on 6.1).  It takes no
 * registers: a perf event's are not a context pointer a global function
 * may take.
 */
__noinline int ustack_copy_g(struct kcsand_ustack *rec, __u64 base)
{
	__u32 size = 0;

	if (!rec)
		return 0;
	for (int i = 0; i < USTACK_CHUNKS; i++) {
		if (bpf_probe_read_user(rec->data + i * KCSAND_USTACK_CHUNK, KCSAND_USTACK_CHUNK,
					(void *)(base + i * KCSAND_USTACK_CHUNK)))
			break;
		size += KCSAND_USTACK_CHUNK;
	}
	/*
	 * The loop leaves by one of 17 exits, each with size a constant of its
	 * own, and the verifier walked the fix-up's callback under each (7,616
	 * of kcsand_uprobe_multi's 63,310 instructions on 6.18).  Read back
	 * from the record, size is one unknown value to it.
	 */
	rec->size = size;
	ustack_fix_uretprobes(rec, base, *(volatile __u32 *)&rec->size);
	return 0;
}

/*
 * Send the registers and stack of the current user task under id; returns
 * id, or 0 when the ring buffer had no room (the side keeps its
 * frame-pointer walk).  A function of its own: inlined, its locals and
 * its bpf_loop() frame went over the 512 bytes of stack that the
 * history's chain may use; called from the programs' own frames only.
 */
static __noinline __u64 ustack_send(struct pt_regs *regs, __u64 id, int trapped)
{
	struct kcsand_ustack *rec;
	__u64 base;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		/* The side prints its frame-pointer walk: say how often (stack_copies_dropped). */
		counter_add(KCSAND_CTR_STACK_COPIES_DROPPED, 1);
		return 0;
	}
	rec->type = KCSAND_REC_USTACK;
	rec->pid = bpf_get_current_pid_tgid() >> 32;
	rec->id = id;
	ustack_regs(rec, regs, trapped);
	base = regs->sp & ~(__u64)(KCSAND_USTACK_CHUNK - 1);
	rec->base = base;
	rec->size = 0;
	ustack_copy_g(rec, base);
	rec->__pad = 0;
	bpf_ringbuf_submit(rec, 0);
	return id;
}

/* A report side's copy: user mode only (a kernel stack is walked by the kernel, exactly). */
static __always_inline __u64 ustack_send_seq(struct pt_regs *regs, int user, int trapped)
{
	if (!user)
		return 0;
	return ustack_send(regs, KCSAND_USTACK_SEQ | __sync_fetch_and_add(&ustack_seq, 1),
			   trapped);
}

/*
 * Copies taken ahead of any report (the history's remembered accesses)
 * give way to reports: they are taken only while the ring buffer is less
 * than half full, and tried again at the next access with the same stack.
 */
static __always_inline int ustack_room(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) <
	       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2;
}

#endif
