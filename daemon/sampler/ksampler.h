/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the site sampler does differently in kernel mode (daemon/sampler/ksampler.c):
 * where its CPU time comes from (the machine's, there is no target
 * process), how a site is armed (a bit of the BPF side's bitmap, since a
 * kprobe cannot be unregistered within a sampler period), and what a trap
 * costs (a kprobe of our own, calibrated at start).  The policy and the
 * loop are sampler.c's, shared with user mode.
 */
#ifndef KCSAND_KSAMPLER_H
#define KCSAND_KSAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kcsand_bpf;

/*
 * The machine's busy CPU time (/proc/stat: user, nice, system, irq and
 * softirq of every CPU) less this process's own (/proc/self/stat): what
 * the probed kernel code and everything else ran for, probes included.
 */
struct kcpu {
	uint64_t busy, self;		/* clock ticks at the last call */
	bool primed;
};

/* CPU-ns since the last call (the first call primes and returns 0); < 0: cannot read. */
double kcpu__delta_ns(struct kcpu *c);

/* The BPF side's disarmed_bitmap, mmapped: a set bit disarms a site. */
struct kbitmap;

/* Sites [0, capacity) are armed now (the bitmap is zero after load). */
/* A BPF map's mmapped data, bytes rounded up to pages: 0, or -errno with what failed said. */
int map_region__open(int fd, size_t bytes, int prot, const char *what, size_t *len, void **out);
int kbitmap__open(struct kcsand_bpf *skel, size_t capacity, struct kbitmap **out);
/*
 * Arm the sites below n set in armed[] or in turn[] (NULL: none) and
 * disarm the others below n; sites from n on stay armed.  Writes only the
 * words that change.
 */
void kbitmap__write(struct kbitmap *b, const uint8_t *armed, const uint8_t *turn, size_t n);
/* Word w of the bitmap that write stores: bit i set disarms site w * 64 + i. */
uint64_t kbitmap__word(const uint8_t *armed, const uint8_t *turn, size_t n, size_t w);
/* Disarms every site: for the end of the run, before the kprobes go. */
void kbitmap__free(struct kbitmap *b);

/*
 * ns per getppid(2): the lowest mean over 3 rounds of 2000 calls, after one
 * round not counted (under TCG the first calls through code just probed also
 * pay for translating it).  The base of each trap calibration.
 */
double kcpu__getppid_ns(void);

/*
 * The cost of one kprobe trap that finds its site disarmed, in ns: calls of
 * getppid(2) with a kprobe inside __x64_sys_getppid, whose cookie names no
 * site, against calls without.  0, with a message, when it cannot be
 * measured.
 */
double kcpu__trap_ns(struct kcsand_bpf *skel);

#endif
