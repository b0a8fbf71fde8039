/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The note a kprobe leaves for the trap of its own instruction's copy
 * (kernel mode): written by hw_note_probed() and taken by
 * hw_take_probed() in hwbp.bpf.h; read here by fill_access()
 * (engine.bpf.h), which includes this file, for the frames the probe took.
 */
#ifndef KCSAND_PROBED_NOTE_BPF_H
#define KCSAND_PROBED_NOTE_BPF_H

/*
 * Kernel mode: the access a kprobe just checked on this CPU, not yet
 * executed.  A kprobed instruction runs out of line right after its probe,
 * as a copy in the kprobe's instruction slot or, once the kprobe is
 * jump-optimized, in its detour buffer; a trap of that copy is the same
 * access, already checked, and its ip (the copy's) means nothing in a
 * report.  The trap that matches the note takes it and does nothing else,
 * unless the site sampler had the site disarmed (not checked): the trap is
 * then the only look at the access, and goes on as a trap of an unprobed
 * instruction, with the ip after the site's own instruction in place of
 * the copy's.  The kernel's unwinder cannot start from the copy (ORC has
 * no entry for a kprobe slot, and the stack ends there), so a disarmed
 * probe whose access falls under an armed slot takes the stack itself, from
 * its own registers, for the trap to use.  A note whose access traps
 * nothing is overwritten by the next hit.  (Not
 * covered: a hit whose program did not run, as a kprobe missed inside
 * another's handler, and a task moved to another CPU between an optimized
 * kprobe's handler and its copy.)
 */
struct hw_probed_note {
	__u64 addr;
	__u64 next_ip;		/* after the site's instruction: where its trap would report */
	__u32 size;
	__u8 write;
	__u8 checked;		/* the probe ran the check (the site was armed) */
	/*
	 * The trap running now on this CPU took stack[] (hw_probed_stack()).
	 * Here, not in struct hit: a pointer or a flag there split the
	 * verifier's states of the whole trap in two (kcsand_hwbp_kernel).
	 */
	__u8 taken;
	__u8 __pad;
	__s32 nr_frames;	/* of stack[], taken when not checked and under a slot; or 0 */
	__u32 __pad1;
	__u64 stack[KCSAND_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hw_probed_note);
} hw_probed SEC(".maps");

/* The frames the running trap took from the note, into acc: 1 if any, 0 to unwind from ctx. */
static __always_inline int hw_probed_stack(struct kcsand_access *acc)
{
	struct hw_probed_note *n;
	__u32 zero = 0;

	n = bpf_map_lookup_elem(&hw_probed, &zero);
	if (!n || !n->taken)
		return 0;
	/* A helper's copy: the verifier walks one call, not 64 loads and stores. */
	bpf_probe_read_kernel(acc->stack, sizeof(acc->stack), n->stack);
	acc->nr_frames = n->nr_frames;
	return 1;
}

/* A trap that does not take the note (pair_trap()): frames a trap before took are not its. */
static __always_inline void hw_probed_untake(void)
{
	struct hw_probed_note *n;
	__u32 zero = 0;

	n = bpf_map_lookup_elem(&hw_probed, &zero);
	if (n)
		n->taken = 0;
}

#endif
