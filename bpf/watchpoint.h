/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Soft-watchpoint encoding, shared by the BPF engine and the unit tests
 * (plain C on __u64, no BPF helpers).
 *
 * A watchpoint is one u64 in a slot; 0 means the slot is free.
 *
 *   63    62   61     55  54   53    48 47                              0
 *  +-----+----+---------+----+--------+--------------------------------+
 *  |CONS | ON |   gen   | WR |  size  |          address[47:0]         |
 *  +-----+----+---------+----+--------+--------------------------------+
 *
 *  ON    set while the watchpoint is armed, so an encoding is never 0.
 *  CONS  set by the one conflicting access that consumed the watchpoint
 *        (cmpxchg of the exact armed value, so at most one consumer wins).
 *  gen   low bits of the watcher's generation, so that a late consumer of
 *        an older watchpoint in the same slot cannot publish into the
 *        current one.
 *  WR    the watcher's access writes.
 *  size  access size in bytes (up to 32; 6 bits leave room).
 *
 * x86-64 user addresses fit in 47 bits and kernel addresses are
 * sign-extended from bit 47, so 48 address bits lose nothing within one
 * address space: unlike KCSAN's encoding there are no false positives from
 * truncation (encoding_false_positives stays 0 unless a kernel-mode access
 * touches user memory that aliases a kernel watchpoint; the consumer
 * re-checks the full address and counts those).
 *
 * One slot table serves every traced process, and the same address means
 * different memory in two of them (a forked child, another instance of the
 * binary): the address space is not in the encoding but in the slot's side
 * table (bpf/engine.bpf.h, struct slot_info), which a consumer checks
 * before it consumes.
 *
 * Slots are indexed by cache line, not by page as in KCSAN: a user
 * program's globals share a handful of pages, so page indexing makes every
 * watcher fight over one slot (no_capacity) while a line index spreads
 * them.  An access of up to 32 bytes touches at most two lines, and a
 * watchpoint can start in the line before the access, so a check looks at
 * the slots of line - 1, line and line + 1; a watcher only ever arms the
 * slot of its own line.
 */
#ifndef KCSAND_WATCHPOINT_H
#define KCSAND_WATCHPOINT_H

#define WP_ADDR_BITS	48
#define WP_ADDR_MASK	((1ULL << WP_ADDR_BITS) - 1)
#define WP_SIZE_SHIFT	48
#define WP_SIZE_MASK	0x3fULL
#define WP_WRITE	(1ULL << 54)
#define WP_GEN_SHIFT	55
#define WP_GEN_MASK	0x7fULL
#define WP_ON		(1ULL << 62)
#define WP_CONSUMED	(1ULL << 63)
/* CONS without ON: a slot its watcher is still setting up; it matches nothing. */
#define WP_RESERVED	WP_CONSUMED

#define WP_NUM_SLOTS	1024	/* power of two */
#define WP_LINE_SHIFT	6

static inline __u64 wp_encode(__u64 addr, __u32 size, int is_write, __u32 gen)
{
	return WP_ON | ((__u64)(gen & WP_GEN_MASK) << WP_GEN_SHIFT) | (is_write ? WP_WRITE : 0) |
	       (((__u64)size & WP_SIZE_MASK) << WP_SIZE_SHIFT) | (addr & WP_ADDR_MASK);
}

static inline __u64 wp_addr(__u64 wp)
{
	return wp & WP_ADDR_MASK;
}

static inline __u32 wp_size(__u64 wp)
{
	return (wp >> WP_SIZE_SHIFT) & WP_SIZE_MASK;
}

static inline __u32 wp_gen(__u64 wp)
{
	return (wp >> WP_GEN_SHIFT) & WP_GEN_MASK;
}

static inline __u32 wp_slot(__u64 addr)
{
	return (addr >> WP_LINE_SHIFT) & (WP_NUM_SLOTS - 1);
}

/*
 * Does the armed watchpoint wp conflict with an access [addr, addr+size)?
 * Ranges must overlap and at least one side must write.
 */
static inline int wp_matches(__u64 wp, __u64 addr, __u32 size, int is_write)
{
	__u64 a = addr & WP_ADDR_MASK, w = wp_addr(wp);

	if (!(wp & WP_ON) || (wp & WP_CONSUMED))
		return 0;
	if (!is_write && !(wp & WP_WRITE))
		return 0;
	return a < w + wp_size(wp) && w < a + size;
}

/*
 * One watcher's watchpoint, from arming to report (bpf/engine.bpf.h); here,
 * where user space sees it too, for tests/engine's skeleton.
 */
struct slot_info;

struct watch {
	__u64 wp;
	__u64 t_start;
	__u64 old[4];
	__u64 cur[4];
	__u32 slot;
	__u32 gen;
	int old_ok;
	int cur_ok;
	int value_change;
	/* Last: tests/engine keeps what comes before it between two runs. */
	struct slot_info *info;
};

#endif
