/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Both stacks in kernel breakpoint mode: the debug register per CPU that a
 * sampled watcher's data breakpoint takes during its stall, and the thread
 * per CPU (the armer) that programs it.  The BPF side and the request word
 * are in bpf/pair.bpf.h, bpf/pair_trap.bpf.h and include/kcsand.h.
 *
 * Per online CPU: a breakpoint event opened disabled (it holds its debug
 * register for the run, so that nothing else takes it between two
 * watchers), with kcsand_pair_trap attached; a cpu-clock event every
 * KCSAND_PAIR_POLL_NS with kcsand_pair_poll attached, whose sample wakes
 * the armer; and the armer, pinned to the CPU and real-time, so that its
 * re-target (PERF_EVENT_IOC_MODIFY_ATTRIBUTES) is a local call and comes
 * before the workload's threads.
 */
#ifndef KCSAND_PAIR_H
#define KCSAND_PAIR_H

#include <stdint.h>
#include "kcsand.h"

struct kcsand_bpf;
struct pairs;

struct pairs_stats {
	unsigned int cpus;		/* with an armer */
	uint64_t counters[KCSAND_PAIR_CTR_COUNT];	/* the BPF side's */
	uint64_t retargets;		/* register moves by the armers */
	uint64_t retarget_ns;		/* their time */
	uint64_t refused;		/* addresses the kernel would not watch */
};

/*
 * Open the pair register on every online CPU and start the armers.  idle
 * is a kernel address the disabled events point at until the first request
 * (any aligned kernel address: they never trap there).  -errno, said, when
 * a CPU has no debug register free or a thread cannot start.
 */
int pairs__new(struct kcsand_bpf *skel, uint64_t idle, struct pairs **out);
void pairs__stats(const struct pairs *p, struct pairs_stats *st);
/* The BPF side stops asking first, then the armers stop and the events close. */
void pairs__free(struct pairs *p);

#endif
