/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the kernel runs: a software cpu-clock event per CPU, kernel only,
 * sampling the instruction pointer into its ring (perf_event_open(2),
 * PERF_SAMPLE_IP).  The code-breakpoint sampler (kbp_evidence.c) takes a sampled IP
 * as evidence that its function runs, and places that function's sites
 * before code that shows no sign of running.  No BPF, no debug register: a
 * timer interrupt the kernel already has, a few hundred times a second.
 */
#ifndef KCSAND_KIP_H
#define KCSAND_KIP_H

#include <stddef.h>
#include <stdint.h>

struct kip_ring {
	int fd;			/* -1: closed */
	void *base;		/* the mmapped control page and data pages */
	size_t len;
};

/* Open CPU cpu's sampler at hz samples a second; -errno (the ring stays closed). */
int kip__open(struct kip_ring *r, int cpu, unsigned int hz);

/* Each IP sampled since the last call, to fn; how many. */
uint64_t kip__drain(struct kip_ring *r, void (*fn)(void *ctx, uint64_t ip), void *ctx);

void kip__close(struct kip_ring *r);

#endif
