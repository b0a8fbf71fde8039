/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcsand's BPF/user-space ABI: the one header both sides include.
 *
 * Everything that crosses the boundary is defined here with fixed-width
 * fields and explicit padding, so that the BPF object (built against
 * vmlinux.h) and the daemon (built against the C library) agree on every
 * offset.  Ring-buffer records start with a __u32 type tag.
 */
#ifndef KCSAND_H
#define KCSAND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "kcsand_params.h"

#define KCSAND_VERSION		"0.1.0"

/* Frames kept per stack; KCSAN prints at most 64, 32 is plenty for reports. */
#define KCSAND_MAX_STACK	32
/* Widest access watched: a 256-bit vector move. */
#define KCSAND_MAX_ACCESS	32
#define KCSAND_TASK_COMM_LEN	16

/*
 * Registers as the decoder names them: 0 is "none", then the x86-64
 * encoding order (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15), so
 * that the BPF side can index a copy of pt_regs with (reg - 1).
 */
enum kcsand_reg {
	KCSAND_REG_NONE = 0,
	KCSAND_REG_RAX, KCSAND_REG_RCX, KCSAND_REG_RDX, KCSAND_REG_RBX,
	KCSAND_REG_RSP, KCSAND_REG_RBP, KCSAND_REG_RSI, KCSAND_REG_RDI,
	KCSAND_REG_R8, KCSAND_REG_R9, KCSAND_REG_R10, KCSAND_REG_R11,
	KCSAND_REG_R12, KCSAND_REG_R13, KCSAND_REG_R14, KCSAND_REG_R15,
	KCSAND_REG_RIP,		/* base only: address is ip + insn_len + disp */
	KCSAND_REG_COUNT,
};

/* Site flags (struct kcsand_site::flags). */
#define KCSAND_SITE_READ	(1u << 0)	/* the instruction reads memory */
#define KCSAND_SITE_WRITE	(1u << 1)	/* the instruction writes memory */
#define KCSAND_SITE_MARKED	(1u << 2)	/* atomic/marked: checks, never watches */
#define KCSAND_SITE_DATA_RACE	(1u << 3)	/* data_race(): never watched, never reported */
#define KCSAND_SITE_NOWATCH	(1u << 4)	/* filtered: check only, set no watchpoint */
/*
 * The instruction overwrites a register of its own address (mov (%rax),%rax):
 * after it ran, as a debug register traps, the address cannot be recomputed.
 */
#define KCSAND_SITE_ADDR_LOST	(1u << 5)
/*
 * A lock-prefixed or xchg instruction, or a store that a fence follows
 * (mov; mfence: a seq_cst store): its address holds an atomic object, so
 * the plain loads and stores that reach the same address at run time are
 * atomic accesses too (__sync_lock_release's mov, a seq_cst load).
 */
#define KCSAND_SITE_TEACHES	(1u << 6)
/*
 * The debug info names the plain, non-atomic static object this site
 * accesses: the source shows a plain access, which stays plain even where a
 * teaching site touches the same address (a plain read racing with an
 * atomic increment is a data race).
 */
#define KCSAND_SITE_SRC_PLAIN	(1u << 7)
/* Addresses of atomic objects learned per run (bpf/atomics.bpf.h), least recently used first out. */
#define KCSAND_ATOMICS_MAX	65536
/*
 * Their map's key: a tgid (0: taught in a shared mapping) and the exact
 * address.  The daemon reads it too, for a report held until the address
 * may have been learned (daemon/engine/pipeline.c).
 */
struct kcsand_atomic_key {
	__u32 tgid;
	__u32 __pad;
	__u64 addr;
};
/* Sites that took a plain access as atomic, kept armed with the sync sites (atomics.bpf.h). */
#define KCSAND_ATOMIC_SITES_MAX	4096
/*
 * The sites learned last, numbered, until the engine has armed them
 * (atomics.bpf.h, atomic_learn_publish()): a slot of that ring.
 */
#define KCSAND_LEARN_RING	16
struct kcsand_learn_slot {
	__u64 seq;		/* its number + 1; another: not written yet, or overwritten */
	__u64 obj;		/* the atomic's granule address */
};

/*
 * One probed memory-access instruction, indexed by the probe's BPF cookie.
 * The effective address is
 *	base + index * scale + disp	(+ ip + insn_len when base is RIP)
 * where ip is the instruction's own address.  ra_off >= 0 says that at
 * this instruction the function has no frame of its own yet (or never
 * sets one up): the return address is then at [rsp + ra_off] and the
 * frame-pointer walk would skip the caller.
 */
struct kcsand_site {
	__s64 disp;
	__u8 base;		/* enum kcsand_reg */
	__u8 index;		/* enum kcsand_reg */
	__u8 scale;		/* 1, 2, 4 or 8 */
	__u8 size;		/* bytes, 1..KCSAND_MAX_ACCESS */
	__u8 flags;		/* KCSAND_SITE_* */
	__u8 insn_len;
	__s16 ra_off;
	/*
	 * The probe sits this many bytes after the instruction: x86 uprobes
	 * refuse lock-prefixed instructions, so a locked read-modify-write is
	 * probed at the next instruction, where its address registers are
	 * unchanged (the decoder checks), and is reported at its own address.
	 */
	__u8 probe_delta;
	__u8 order;		/* KCSAND_ORDER_*: a marked access's memory order, as the source says */
	/*
	 * A user site's object (the daemon's number, < KCSAND_HB_OBJS, else
	 * none) and its probe's offset in that file (0: none), from which a hit
	 * tells where the object is mapped: the history's hb_release_probes.
	 */
	__u16 obj;
	__u32 probe_off;
	/*
	 * A spin-wait load whose loop calls functions on its way back to it
	 * (`while (!stop) work();`, daemon/sites/spinwait.c): the return
	 * addresses of those calls, as offsets from the load's end (0: none;
	 * a call never returns to the load's end), and where the loop's calls
	 * put them, loop_ra_slot bytes below the load's rsp (0: unknown).  A
	 * thread inside such a call read a value that kept it looping: the
	 * load's acquire waits until the thread is out (bpf/history_clock.bpf.h).
	 */
	__s16 loop_ret[2];
	__s16 loop_ra_slot;
	/* With loop_ret: the load's own return address is at [rsp + frame_ra]. */
	__s16 frame_ra;
};

/*
 * A probe's cookie is its site's index.  A locked read-modify-write's
 * release is also published by probes ahead of it, on the instructions that
 * run into it (the decoder's struct site::ahead): the probe after it runs
 * when other CPUs can already see what it wrote.  Their cookie has this bit
 * set, and in its upper 32 bits, signed, how far the locked instruction is
 * from the probe.
 */
#define KCSAND_COOKIE_AHEAD	(1u << 31)

/*
 * The memory order of a marked access, when its source line names one
 * (memory_order_relaxed, __ATOMIC_ACQUIRE ...): the history orders threads
 * by it.  Without one, a load acquires, a store releases, an RMW does both.
 */
enum kcsand_order {
	KCSAND_ORDER_DEFAULT = 0,
	KCSAND_ORDER_RELAXED,	/* orders nothing */
	KCSAND_ORDER_ACQUIRE,	/* acquire only (consume too) */
	KCSAND_ORDER_RELEASE,	/* release only */
};

/* Access types, with KCSAN's meaning (kernel/kcsan: KCSAN_ACCESS_*). */
#define KCSAND_ACCESS_WRITE	(1u << 0)
#define KCSAND_ACCESS_COMPOUND	(1u << 1)	/* read-modify-write */
#define KCSAND_ACCESS_ATOMIC	(1u << 2)	/* marked */

/* How the access was seen (struct kcsand_access::flags). */
#define KCSAND_ACC_HWBP		(1u << 0)	/* trapped by a hardware watchpoint, after the access */
/*
 * Seen by an escalation's write watchpoint after the race it follows, not in
 * the race's watch window: the next write to the address, not a partner
 * that ran concurrently (after_us says how much later).
 */
#define KCSAND_ACC_LATER	(1u << 1)
/*
 * KCSAND_ACC_HWBP, with its instruction decoded: ip, size and type are the
 * access's own (without it, ip is the next instruction's).
 */
#define KCSAND_ACC_DECODED	(1u << 2)
/*
 * KCSAND_ACC_HWBP, by the data breakpoint a sampled kernel watcher put on
 * the other CPUs for its stall (bpf/pair.bpf.h): a partner that ran during
 * the watch window, read or write, reported whether the value changed or not.
 */
#define KCSAND_ACC_PAIR		(1u << 3)
/*
 * Kernel mode: the address lies on a kernel stack: the accessing context's
 * own (within KCSAND_KERNEL_STACK_SPAN of its stack pointer: the task's
 * stack, or the CPU's interrupt stack) or another task's (its aligned base
 * holds the kernel's STACK_END_MAGIC).  No data breakpoint is put there,
 * neither a pair's nor an escalation's (docs/kernel-mode.md, "A teardown
 * that waits for ever on an idle CPU").
 */
#define KCSAND_ACC_STACK	(1u << 4)
/* x86-64's kernel stacks (a task's, a CPU's interrupt stack): 16 KiB each, a task's aligned. */
#define KCSAND_KERNEL_STACK_SPAN	(16 * 1024ULL)

/* Where the access ran. */
#define KCSAND_CTX_TASK		0
#define KCSAND_CTX_INTERRUPT	1

/* One side of a race, as captured in BPF. */
struct kcsand_access {
	__u64 addr;
	__u64 ip;		/* the access instruction's address */
	__u64 ra;		/* recovered return address for frameless sites, or 0 */
	__u32 tid;
	__u32 pid;		/* thread-group id */
	__u32 cpu;
	__u32 site;		/* index into the site table */
	__u32 size;
	__u8 type;		/* KCSAND_ACCESS_* */
	__u8 ctx;		/* KCSAND_CTX_* */
	__u8 flags;		/* KCSAND_ACC_* */
	__u8 __pad0;
	__s32 nr_frames;	/* entries in stack[], or a negative errno */
	__u32 after_us;		/* KCSAND_ACC_LATER: µs after the race's report was sent */
	char comm[KCSAND_TASK_COMM_LEN];
	/*
	 * The struct kcsand_ustack record (same pid) holding this side's
	 * registers and top of stack for the CFI unwind, sent before this
	 * record; 0: none (kernel, or the ring was full), stack[] only.
	 */
	__u64 ustack;
	__u64 stack[KCSAND_MAX_STACK];	/* frame-pointer walk: the fallback */
};

/* Ring-buffer record types. */
enum kcsand_rec_type {
	KCSAND_REC_REPORT = 1,
	KCSAND_REC_HW_ACCESS = 2,	/* struct kcsand_hw_access */
	KCSAND_REC_HW_DECODE = 3,	/* struct kcsand_hw_decode */
	KCSAND_REC_USTACK = 4,		/* struct kcsand_ustack */
	/* A process held by the history (bpf/history.bpf.h): only wakes the daemon up. */
	KCSAND_REC_HB_HELD = 5,		/* struct kcsand_hb_held */
	/* The history asks for a watch, or says one was spent (bpf/history_watch.bpf.h). */
	KCSAND_REC_HB_WATCH = 6,	/* struct kcsand_hb_watch */
};

/*
 * A plain read of a granule the history had nothing of (no thread's access
 * remembered there): the next write of another thread may be at a site the
 * sampler has backed off, so a write breakpoint in the other threads checks
 * it against the history (daemon/hw/hwbp.c, hwbp__hb_watch()).  With spent
 * set, the slot's breakpoint trapped once and may be closed.
 */
struct kcsand_hb_watch {
	__u32 type;		/* KCSAND_REC_HB_WATCH */
	__u32 tgid;
	__u32 tid;		/* the reader: its own writes are ordered after its read */
	__u32 size;
	__u64 addr;
	__u32 spent;		/* 1: slot's watch trapped (gen), close it */
	__u32 slot;
	__u32 gen;
	__u32 __pad;
};

struct kcsand_hb_held {
	__u32 type;		/* KCSAND_REC_HB_HELD */
	__u32 tgid;
};

/*
 * A user stack to unwind by CFI in the daemon (docs/stacks.md), as perf's
 * --call-graph dwarf: the registers at the access and the stack from sp
 * up.  The copy is taken in KCSAND_USTACK_CHUNK pieces from sp rounded
 * down to a chunk, each all there or not (bpf_probe_read_user reads all or
 * nothing), so it ends where the stack's mapping does; size says how much.
 * A report's sides name theirs by id (struct kcsand_access::ustack): a
 * sequence number with the top bit set, or, for the history's remembered
 * accesses, the key of their frame-pointer stack (top bit clear).
 */
#define KCSAND_USTACK_SIZE	8192
#define KCSAND_USTACK_CHUNK	512
#define KCSAND_USTACK_SEQ	(1ULL << 63)
/* DWARF's x86-64 numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then the ip (16). */
#define KCSAND_USTACK_REGS	17

struct kcsand_ustack {
	__u32 type;		/* KCSAND_REC_USTACK */
	__u32 pid;		/* thread-group id */
	__u64 id;
	__u64 regs[KCSAND_USTACK_REGS];
	__u64 base;		/* user address of data[0] */
	__u32 size;		/* bytes of data[] copied */
	__u32 __pad;
	__u8 data[KCSAND_USTACK_SIZE];
};

/* How a report was found (struct kcsand_report::origin). */
enum kcsand_report_origin {
	KCSAND_ORIGIN_WATCHPOINT = 0,	/* KCSAN's protocol: the accesses overlapped a stall */
	KCSAND_ORIGIN_HISTORY = 1,	/* the access history: not ordered by any sync seen */
};

/*
 * Outcome of a watchpoint, as KCSAN's enum kcsan_value_change: MAYBE means
 * a conflicting access was seen but the value did not change.
 */
enum kcsand_value_change {
	KCSAND_VALUE_CHANGE_MAYBE = 0,
	KCSAND_VALUE_CHANGE_TRUE = 1,
};

/* A report: the watcher (this) and, for a known origin, the consumer (other). */
struct kcsand_report {
	__u32 type;		/* KCSAND_REC_REPORT */
	__u32 value_change;	/* enum kcsand_value_change */
	__u32 has_other;	/* 0: race of unknown origin */
	__u32 value_valid;	/* old/new were both read */
	__u32 origin;		/* enum kcsand_report_origin */
	__u32 __pad;
	__u64 age_ns;		/* history: how long before `this` the `other` access ran */
	__u64 old_value[KCSAND_MAX_ACCESS / 8];
	__u64 new_value[KCSAND_MAX_ACCESS / 8];
	struct kcsand_access this;
	struct kcsand_access other;
	__u64 time_ns;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) when it was sent */
};

/*
 * Counters: KCSAN's debugfs names, in its order, then kcsand's own.  Kept in
 * the BPF object's .bss (u64 counters[]), read through the mmap.  One list
 * each, X(ID, name): the enum, the names `stats` and the summary print
 * (daemon/engine/params.c) and the BPF side all come from it.
 */
#define KCSAND_KCSAN_COUNTERS(X)					\
	X(USED_WATCHPOINTS, used_watchpoints)				\
	X(SETUP_WATCHPOINTS, setup_watchpoints)				\
	X(DATA_RACES, data_races)					\
	X(ASSERT_FAILURES, assert_failures)				\
	X(NO_CAPACITY, no_capacity)					\
	X(REPORT_RACES, report_races)					\
	X(RACES_UNKNOWN_ORIGIN, races_unknown_origin)			\
	X(UNENCODABLE_ACCESSES, unencodable_accesses)			\
	X(ENCODING_FALSE_POSITIVES, encoding_false_positives)

#define KCSAND_OWN_COUNTERS(X)						\
	X(RECORDS_DROPPED, records_dropped)	/* ring buffer full */	\
	X(READ_FAULTS, read_faults)		/* value could not be sampled */ \
	X(LOST_OTHER, lost_other)		/* consumer did not publish in time */ \
	/* watchpoints not set: the CPU's stall budget was spent */	\
	X(STALL_BUDGET, stall_budget_exhausted)				\
	/* kernel stalls cut to KCSAND_KERNEL_WAIT_MAX_US */		\
	X(STALLS_CLAMPED, stalls_clamped)				\
	/* kernel watchpoints not set: the CPU was resting from its last stall */ \
	X(STALL_RESTS, stall_rests)					\
	/* µs kernel watchers stalled, interrupts off */		\
	X(KERNEL_STALL_US, kernel_stall_us)				\
	/* kernel hits left alone: the daemon's heartbeat was stale */	\
	X(HEARTBEAT_MISSED, heartbeat_missed)				\
	/* kernel hits left alone: they came under an NMI */		\
	X(NMI_SKIPPED, nmi_skipped)					\
	/* user stack copies the ring buffer had no room for */		\
	X(STACK_COPIES_DROPPED, stack_copies_dropped)

#define KCSAND_CTR_ENUM(ID, name) KCSAND_CTR_##ID,
enum kcsand_counter {
	KCSAND_KCSAN_COUNTERS(KCSAND_CTR_ENUM)
	KCSAND_OWN_COUNTERS(KCSAND_CTR_ENUM)
	KCSAND_CTR_COUNT,
};
#undef KCSAND_CTR_ENUM

/* KCSAN's counters come first, these many: what `stats` shows as KCSAN's debugfs does. */
#define KCSAND_CTR_ONE(ID, name) + 1
#define KCSAND_CTR_NR_KCSAN (0 KCSAND_KCSAN_COUNTERS(KCSAND_CTR_ONE))

/*
 * Per-CPU engine state (a per-CPU array of one): KCSAN's kcsan_skip, the
 * hit count the daemon sums for statistics, the stall budget's window, and
 * in kernel mode the end of the rest after the last stall.
 */
struct kcsand_cpu_state {
	__s64 skip;
	__u64 hits;
	__u64 window_start_ns;
	__u64 stalled_ns;
	__u64 rest_until_ns;
};

/*
 * Live parameters: the BPF object's .data, changed by the daemon through the
 * skeleton's mmap without reloading.  Names and meaning follow KCSAN's; the
 * fields are the BPF lines of kcsand_params.h, in its order.
 */
#define KCSAND_PARAM_FIELD_BPF(name)	__u32 name;
#define KCSAND_PARAM_FIELD_DAEMON(name)
#define KCSAND_PARAM_FIELD_LOAD(name)
#define KCSAND_PARAM_FIELD(ID, name, lo, hi, user, kernel, kind, help)	\
	KCSAND_PARAM_FIELD_##kind(name)
struct kcsand_params {
	KCSAND_PARAMS(KCSAND_PARAM_FIELD)
	__u32 trace_all;		/* every process hitting a probe, not just the targets */
	__u32 __pad;
};
#undef KCSAND_PARAM_FIELD

/*
 * Kernel mode's hard ceilings, applied by the BPF side whatever the
 * parameters say: a kernel watcher waits with interrupts off, in int3 or
 * #DB context, where params.c's 100 ms delay or an unlimited stall budget
 * (stall_budget_us=0) would starve the CPU.  Each wait of one stall (the
 * delay, the wait for a consumer's value change, for its record) is at most
 * KCSAND_KERNEL_WAIT_MAX_US, and a CPU stalls at most
 * KCSAND_KERNEL_STALL_BUDGET_MAX_US per second.
 *
 * The per-second budget alone lets a CPU stall back to back, its interrupts
 * off for half a second, while its tick, its timers and the other CPUs'
 * IPIs wait (issue 21: at scale, with placements on hot timer and perf
 * code, the test guest's RCU stall detector saw a CPU take no tick for
 * 21 s).  So after a stall of d, a CPU rests KCSAND_KERNEL_STALL_REST * d
 * before its next watchpoint: its interrupts are on at least three quarters
 * of any stretch of time (up to the last stall), and no stall follows
 * another closer than three times its length, so a tick (4 ms at HZ=250)
 * is never held more than one stall's length.  The rest is breakpoint
 * mode's (a code-breakpoint sample, struct hit's pair), where every trap
 * may stall: in kprobe mode, where skip_watch spreads the stalls, it cut
 * the tests' dense watchpoints (skip_watch 10) about tenfold, and two
 * kprobe-mode guest cases then missed their races (ci-G, ci-I).
 */
#define KCSAND_KERNEL_WAIT_MAX_US		1000
#define KCSAND_KERNEL_STALL_BUDGET_MAX_US	500000
#define KCSAND_KERNEL_STALL_REST		3

/*
 * The daemon's heartbeat: kernel mode's engine writes CLOCK_MONOTONIC
 * (bpf_ktime_get_ns()'s clock) into the BPF object's .bss every
 * KCSAND_HEARTBEAT_PERIOD_MS from a thread of its own.  A kernel program
 * that finds it older than KCSAND_HEARTBEAT_TIMEOUT_NS (a daemon stopped,
 * starved, or killed with its probes left behind) checks nothing and stalls
 * nothing.
 */
#define KCSAND_HEARTBEAT_PERIOD_MS	100
#define KCSAND_HEARTBEAT_TIMEOUT_NS	(1000ULL * 1000 * 1000)

/*
 * Per-site statistics for the site sampler, one per (CPU, site): a CPU only
 * ever writes its own entries (index cpu * capacity + site), atomically
 * since tasks sharing a CPU may preempt each other in a uprobe program
 * (bpf/sampler.bpf.h), and the daemon reads them through an mmap.
 * In kernel mode a disarmed site's kprobe still traps: its hits are counted
 * too (the daemon knows which periods the site was armed in), ns is not.
 */
struct kcsand_site_stat {
	__u64 hits;
	__u64 ns;		/* time spent in the BPF program, stalls included */
};

/* Hardware watchpoints: x86 has four debug registers. */
#define KCSAND_HW_SLOTS		4
/* struct kcsand_access::site of a trapped access: slot i is KCSAND_HW_SITE_BASE + i. */
#define KCSAND_HW_SITE_BASE	0xfffffff0u

/*
 * Code-breakpoint sampling in kernel mode (daemon/sampler/kbp.c): debug
 * register r of each CPU executes-breaks on one site at a time, kept in
 * kxbp_slots[cpu * KCSAND_KXBP_SLOTS + r] (the perf link's cookie is r).
 * A trap whose ip is not the slot's site came from before a re-target and
 * is dropped.
 */
#define KCSAND_KXBP_SLOTS	KCSAND_HW_SLOTS
#define KCSAND_KXBP_MAX_CPUS	256
/*
 * Checks (each a watchpoint and its stall) per placement of a register,
 * at least gap_ns apart: a hot site's further traps in the same placement
 * only count, so that its checks are spread over the placement rather than
 * its first hits, and what a placement costs is bounded.
 */
#define KCSAND_KXBP_CHECKS	16

/*
 * Both stacks in breakpoint mode (bpf/pair.bpf.h, daemon/hw/pair.c): when
 * a code-breakpoint sample arms a watchpoint, a data breakpoint on its
 * address goes live on every other CPU for the stall.  BPF cannot program
 * a debug register, so the watcher publishes a request word and a pinned
 * thread per CPU (the armer) re-targets that CPU's pre-opened breakpoint
 * event and acknowledges by writing the word into pair_ack[cpu]; the
 * watcher waits, bounded, for every other CPU's acknowledgement.
 *
 *   63    59 58      51 50  49 48 47                        0
 *  +--------+----------+----+-----+--------------------------+
 *  |  seq   | watcher  | RW | len |       address[47:0]       |
 *  |        |   CPU    |    | log2|  (0: no breakpoint)       |
 *  +--------+----------+----+-----+--------------------------+
 *
 * RW: a read-write breakpoint (the watcher writes: a read conflicts);
 * else write-only.  The watcher's own CPU never arms (its own access would
 * trap after the stall).  seq changes every request, so an ack of the
 * same word is an ack of this request or of one that left the register
 * exactly where this one wants it.
 */
#define KCSAND_PAIR_MAX_CPUS		KCSAND_KXBP_MAX_CPUS
#define KCSAND_PAIR_ADDR_MASK		((1ULL << 48) - 1)
#define KCSAND_PAIR_LEN_SHIFT		48
#define KCSAND_PAIR_RW			(1ULL << 50)
#define KCSAND_PAIR_CPU_SHIFT		51
#define KCSAND_PAIR_SEQ_SHIFT		59
/*
 * How often each CPU's poll (a cpu-clock perf event with a BPF program)
 * looks for a request and wakes its armer: the mean arm latency is about
 * half of it plus the wake-up and the re-target (docs/kernel-mode.md).
 */
#define KCSAND_PAIR_POLL_NS		(200 * 1000ULL)

/* What the pairs did (pair_counters[] in .bss, read by daemon/hw/pair.c). */
#define KCSAND_PAIR_COUNTERS(X)						\
	X(REQUESTS, pair_requests)	/* watchers that asked */		\
	X(ARMED, pair_armed)		/* every other CPU acknowledged in time */ \
	X(ARM_NS, pair_arm_ns)		/* their summed wait */			\
	X(TIMEOUTS, pair_timeouts)	/* the stall went on without them */	\
	X(BUSY, pair_busy)		/* another watcher held the registers */ \
	X(TRAPS, pair_traps)		/* data-breakpoint traps */		\
	X(CAUGHT, pair_caught)		/* of them, partners of a watcher */	\
	X(PROBED, pair_probed)		/* left to the code breakpoint that checked them */ \
	X(STACK, pair_on_stack)		/* watched addresses on a kernel stack: none asked */

#define KCSAND_PAIR_CTR_ENUM(ID, name) KCSAND_PAIR_CTR_##ID,
enum kcsand_pair_counter {
	KCSAND_PAIR_COUNTERS(KCSAND_PAIR_CTR_ENUM)
	KCSAND_PAIR_CTR_COUNT,
};
#undef KCSAND_PAIR_CTR_ENUM

struct kcsand_kxbp_slot {
	__u64 ip;		/* the site's address; 0: none */
	__u32 site;		/* its index in the site table */
	__u32 checks;		/* run in this placement (BPF, on the slot's own CPU) */
	__u64 hits;		/* traps at the site (BPF adds, the daemon reads) */
	__u64 ns;		/* BPF time of the checks, stalls included */
	__u64 gap_ns;		/* between two checks of this placement (the daemon sets) */
	__u64 last_ns;		/* the last check's time (BPF) */
};

/* What a hardware watchpoint slot is for (struct kcsand_hw_slot::mode). */
enum kcsand_hw_mode {
	KCSAND_HW_OFF = 0,
	KCSAND_HW_ESCALATION = 1,	/* after a race of unknown origin: find the writer */
	KCSAND_HW_WATCH = 2,		/* kcsanctl watch: every conflicting pair */
	KCSAND_HW_HISTORY = 3,		/* the history's watch of a read: the next write checked */
};

/*
 * A slot as the daemon arms it (BPF array hw_slots, indexed by the perf link's
 * cookie).  The debug register covers [addr, addr + len), which a variable of
 * an odd size or alignment only part of fills: a decoded access outside
 * [var_addr, var_addr + var_len) is a neighbour's, and is dropped.
 */
struct kcsand_hw_slot {
	__u64 addr;
	__u32 len;		/* 1, 2, 4 or 8 */
	__u32 mode;		/* enum kcsand_hw_mode */
	__u32 gen;		/* bumped at every re-arm: stale traps are dropped */
	__u32 var_len;
	__u64 var_addr;
};

/*
 * The instruction before a user-mode trap's ip (the access: a debug register
 * traps after it), decoded by the daemon on request (KCSAND_REC_HW_DECODE)
 * into the BPF hash hw_insns; a value of size 0 says it could not be.
 */
struct kcsand_hw_insn_key {
	__u32 pid;		/* thread-group id */
	__u32 __pad;
	__u64 next_ip;		/* the trap's ip */
};

struct kcsand_hw_decode {
	__u32 type;		/* KCSAND_REC_HW_DECODE */
	__u32 pid;
	__u64 next_ip;
};

/*
 * A trap on an escalation slot that found no soft watchpoint to consume:
 * the accessor's side, paired by the daemon with the watcher side of the
 * race of unknown origin that armed the slot.
 */
struct kcsand_hw_access {
	__u32 type;		/* KCSAND_REC_HW_ACCESS */
	__u32 slot;
	__u32 gen;
	__u32 value_valid;
	__u64 time_ns;				/* bpf_ktime_get_ns() at the trap */
	__u64 value[KCSAND_MAX_ACCESS / 8];	/* after the access */
	struct kcsand_access acc;
};

/*
 * The history detector (bpf/history.bpf.h, daemon/history/): happens-before
 * over the sampled accesses, from the synchronization the target does.
 *
 * A sync probe's BPF cookie is one of these operations; the daemon picks
 * it per function from what the function does (daemon/history/table.c).
 * "acquire" joins the object's clock into the thread's, "release" joins
 * the thread's into the object's and starts a new epoch of the thread.
 */
enum kcsand_hb_op {
	KCSAND_HB_NONE = 0,
	KCSAND_HB_LOCK,		/* return: acquire arg0 if the result is 0 */
	KCSAND_HB_LOCK_NZ,	/* return: acquire arg0 if the result is not 0 (omp_test_lock) */
	KCSAND_HB_LOCK_VOID,	/* return: acquire arg0 (void omp_set_lock) */
	KCSAND_HB_UNLOCK,	/* entry: release arg0 */
	KCSAND_HB_COND_WAIT,	/* entry: release arg1; return: acquire arg1 and arg0 */
	KCSAND_HB_COND_SIGNAL,	/* entry: release arg0 */
	KCSAND_HB_BARRIER,	/* entry: release arg0; return: acquire arg0 */
	KCSAND_HB_ONCE,		/* entry: release arg0, same epoch until the return's acquire */
	KCSAND_HB_CREATE,	/* return: remember which thread *arg0 names */
	KCSAND_HB_JOIN,		/* return: acquire the clock of thread arg0 if the result is 0 */
	KCSAND_HB_OMP_PARALLEL,	/* entry: release fn arg0 (a team); return: acquire the ends */
	KCSAND_HB_OMP_TASK,	/* entry: a task's creation (bpf/tasks.bpf.h); return: if(0) */
	KCSAND_HB_OMP_TASKLOOP,	/* entry: release fn arg0; return: acquire finished tasks */
	KCSAND_HB_OMP_FN,	/* an outlined function: entry acquires its spawn, return releases */
	KCSAND_HB_OMP_BARRIER,	/* entry: release the team barrier; return: acquire it, and tasks */
	KCSAND_HB_OMP_TASKWAIT,	/* return: acquire the current task's children */
	KCSAND_HB_OMP_CRIT_START, /* return: acquire the unnamed critical section */
	KCSAND_HB_OMP_CRIT_END,	/* entry: release it */
	KCSAND_HB_OMP_ATOMIC_START,
	KCSAND_HB_OMP_ATOMIC_END,
	KCSAND_HB_OMP_ORDERED_START,
	KCSAND_HB_OMP_ORDERED_END,
	KCSAND_HB_OMP_TASKGROUP_START,	/* entry: a new taskgroup of the current task */
	KCSAND_HB_OMP_TASKGROUP_END,	/* return: acquire the group's tasks and descendants */
	KCSAND_HB_OMP_SECTION,	/* return: end the thread's section, start the next (the result) */
	/* entry: release the team barrier; return: acquire it if the result is not NULL */
	KCSAND_HB_OMP_SINGLE_COPY,
	/*
	 * A lock whose first instruction carries a lock prefix, which uprobes
	 * refuse (glibc's pthread_spin_lock): probed at its return only,
	 * where rdi still holds arg0 in these few-instruction functions.
	 */
	KCSAND_HB_LOCK_RDI,
	/*
	 * Memory changing owner (bpf/history_shadow.bpf.h, hb_forget): the range's
	 * remembered accesses are forgotten at entry, as TSan's allocator
	 * hooks do; a later allocation of it then starts with none.
	 */
	KCSAND_HB_FREE,		/* entry: forget the heap block arg0 (free, realloc's old block) */
	KCSAND_HB_UNMAP,	/* entry: forget [arg0, arg0 + arg1) (munmap, mremap) */
	KCSAND_HB_MAP,		/* entry: the same if MAP_FIXED replaces what was mapped (mmap) */
	/*
	 * Data through a file descriptor: the kernel orders a write before
	 * the read that returns its bytes.  The object is what both ends
	 * share (bpf/history_sync.bpf.h, hb_fd_object): a pipe, a connection.
	 */
	KCSAND_HB_FD_WRITE,	/* entry: release the file of fd arg0 (write, send, ...) */
	KCSAND_HB_FD_READ,	/* return: acquire it if the result is > 0 (read, recv, ...) */
	/*
	 * A descriptor's number handed on: the kernel gives a number out
	 * again only after close() took it back, so whoever gets it next is
	 * ordered after all that the closing thread did (a connection object
	 * indexed by the number, reused by the next accept()).
	 */
	KCSAND_HB_FD_CLOSE,	/* entry: release number arg0 (close) */
	KCSAND_HB_FD_NEW,	/* return: acquire the number returned, if >= 0 (accept, open, ...) */
	KCSAND_HB_FD_NEW_PAIR,	/* return: acquire the two numbers at arg0 if 0 (pipe, pipe2) */
	/*
	 * return: objects were mapped (dlopen) whose sync functions may be
	 * unprobed: the process is held (hb_tgids) until the daemon probed them.
	 */
	KCSAND_HB_MAPPED,
	KCSAND_HB_OMP_TEAMS,	/* return: end the thread's host team, start the next (the result) */
	/* entry: fn arg0 runs each team of a host `teams`; return: the teams' ends */
	KCSAND_HB_OMP_TEAMS_REG,
	/* entry: the detached task of event arg0 completes: release into what waits for it */
	KCSAND_HB_OMP_FULFILL,
	KCSAND_HB_OP_COUNT,
};

/* Every sync function is probed at its entry; these also at their return. */
#define KCSAND_HB_RET_OPS						\
	((1u << KCSAND_HB_LOCK) | (1u << KCSAND_HB_LOCK_NZ) |		\
	 (1u << KCSAND_HB_LOCK_VOID) | (1u << KCSAND_HB_COND_WAIT) |	\
	 (1u << KCSAND_HB_BARRIER) | (1u << KCSAND_HB_ONCE) |		\
	 (1u << KCSAND_HB_CREATE) | (1u << KCSAND_HB_JOIN) |		\
	 (1u << KCSAND_HB_OMP_PARALLEL) | (1u << KCSAND_HB_OMP_TASKLOOP) |	\
	 (1u << KCSAND_HB_OMP_FN) | (1u << KCSAND_HB_OMP_BARRIER) |	\
	 (1u << KCSAND_HB_OMP_TASKWAIT) | (1u << KCSAND_HB_OMP_CRIT_START) |	\
	 (1u << KCSAND_HB_OMP_ATOMIC_START) | (1u << KCSAND_HB_OMP_ORDERED_START) |	\
	 (1u << KCSAND_HB_LOCK_RDI) | (1ull << KCSAND_HB_FD_READ) |	\
	 (1ull << KCSAND_HB_FD_NEW) | (1ull << KCSAND_HB_FD_NEW_PAIR) |	\
	 (1ull << KCSAND_HB_MAPPED) | (1ull << KCSAND_HB_OMP_TASK) |		\
	 (1ull << KCSAND_HB_OMP_TASKGROUP_END) | (1ull << KCSAND_HB_OMP_SECTION) |	\
	 (1ull << KCSAND_HB_OMP_SINGLE_COPY) | (1ull << KCSAND_HB_OMP_TEAMS) |	\
	 (1ull << KCSAND_HB_OMP_TEAMS_REG))
#define KCSAND_HB_HAS_RETURN(op) ((op) < 64 && (KCSAND_HB_RET_OPS >> (op)) & 1)

/* Counters of the history detector (.bss hb_counters[]). */
enum kcsand_hb_counter {
	KCSAND_HB_CTR_SYNC_OPS,		/* sync operations traced (probe hits) */
	KCSAND_HB_CTR_CHECKED,		/* sampled accesses checked against the shadow */
	KCSAND_HB_CTR_MARKED,		/* marked accesses taken as acquire/release */
	KCSAND_HB_CTR_SHADOW_LIVE,	/* shadow entries claimed (never freed during a run) */
	KCSAND_HB_CTR_SHADOW_EVICTED,	/* entries taken over by another granule */
	KCSAND_HB_CTR_RACES,		/* conflicting pairs found, before the rate limit */
	KCSAND_HB_CTR_REPORTS,		/* records sent */
	KCSAND_HB_CTR_NO_SLOT,		/* hits by threads that got no clock: unchecked */
	KCSAND_HB_CTR_NO_STACK,		/* remembered accesses whose stack was not kept */
	KCSAND_HB_CTR_SYNC_FULL,	/* releases into the process's overflow object: the map was full */
	KCSAND_HB_CTR_CONTENDED,	/* samples skipped: their shadow entry was busy */
	KCSAND_HB_CTR_ACCESS_NS,	/* time in the BPF check of sampled accesses (traps excluded) */
	KCSAND_HB_CTR_SYNC_NS,		/* time in the BPF programs of sync probes (traps excluded) */
	KCSAND_HB_CTR_FORGET_OPS,	/* ranges forgotten: freed, unmapped, a new thread's stack */
	KCSAND_HB_CTR_FORGET_WIDE,	/* of them, too wide to clear: kept as a range (hb_forget) */
	KCSAND_HB_CTR_FORGET_ALL,	/* a wide range pushed out: every older access forgotten */
	KCSAND_HB_CTR_RETURN_LOST,	/* returns of calls not remembered: taken to acquire all */
	KCSAND_HB_CTR_CAS_LOST,		/* clock entries a release could not raise: reports dropped */
	KCSAND_HB_CTR_TASKS,		/* OpenMP tasks run on a clock of their own (bpf/tasks.bpf.h) */
	KCSAND_HB_CTR_TASK_SLOT_SHARED,	/* of them, in a slot whose last task it had not joined */
	KCSAND_HB_CTR_TASK_NO_CLOCK,	/* tasks run on their thread's clock: no slot, nested deep */
	KCSAND_HB_CTR_TASK_VAGUE,	/* tasks started after every finished one: creation unclear */
	KCSAND_HB_CTR_MARKED_CHECKED,	/* of the checked, marked ones (two never race) */
	KCSAND_HB_CTR_SYNC_FREED,	/* sync objects forgotten with their memory (hb_forget_syncs) */
	KCSAND_HB_CTR_SECTIONS,		/* OpenMP sections run on a clock of their own */
	KCSAND_HB_CTR_AHEAD,		/* locked RMWs' releases published ahead of them */
	KCSAND_HB_CTR_LATE,		/* locked RMWs' releases with no probe ahead: kept */
	KCSAND_HB_CTR_INFLIGHT,		/* races ordered by a release in flight: not reported */
	KCSAND_HB_CTR_TEAMS,		/* OpenMP host teams run on a clock of their own */
	KCSAND_HB_CTR_FULFILLED,	/* omp_fulfill_event()s: a detached task's completion */
	KCSAND_HB_CTR_SPIN_WAITED,	/* events inside a spin-wait loop's calls: its acquire waits */
	KCSAND_HB_CTR_ACQ_SPILLED,	/* acquires pushed out of a thread's last ones: hb_acq_spill */
	KCSAND_HB_CTR_WATCH_ASKED,	/* reads of granules it had nothing of, sent to be watched */
	KCSAND_HB_CTR_WATCH_TRAPS,	/* writes those watches caught, checked (history_watch_trap) */
	KCSAND_HB_CTR_WATCH_STALE,	/* traps of watches spent, their events not closed yet */
	KCSAND_HB_CTR_WATCH_FORGOTTEN,	/* watches spent unchecked: their memory changed owner */
	KCSAND_HB_CTR_SLOT_SHARED,	/* threads that shared a slot: more than 64 alive at once */
	KCSAND_HB_CTR_KEPT,		/* accesses not remembered: their entry kept another's read */
	KCSAND_HB_CTR_COUNT,
};

/*
 * Threads of one process with a clock entry of their own; more alive at
 * once share entries (bpf/history_clock.bpf.h, hb_share_slot).
 */
#define KCSAND_HB_MAX_THREADS	64
/*
 * A process's value in hb_tgids (bpf/history.bpf.h).  HELD: objects it
 * maps are being probed by the daemon (a forked child, an exec, a dlopen,
 * a process first seen under trace_all): its sync is not all seen yet, so
 * nothing is remembered or checked for it.  Bits from GEN on are its
 * generation, which the daemon moves on when it lets the process go: each of
 * its threads then starts afresh, as after a pause of the sync probes.
 */
#define KCSAND_HB_TGID_HELD	1u
/*
 * Added before its exec (kcsanctl run's child): its next exec is of the
 * program the daemon probed, and holds nothing.
 */
#define KCSAND_HB_TGID_FRESH	2u
#define KCSAND_HB_TGID_GEN	4u
/* Wide ranges forgotten (freed, unmapped, stacks) that a process keeps before forgetting all. */
#define KCSAND_HB_RANGES	32
/*
 * The probe after a locked release (hb_release_probes, bpf/history.bpf.h),
 * by the file it is in (its inode number, as the daemon's stat() gives it)
 * and its offset there, as a uprobe is placed: known from the decode,
 * before any thread has run into it.  Two files of two devices with one
 * number and a release at the same offset only add order.
 */
struct kcsand_probe_key {
	__u64 ino;
	__u64 off;
};
#define KCSAND_HB_RELEASE_PROBES	16384
/* Acquires pushed out of a thread's last ones, by thread and object (bpf/history.bpf.h). */
#define KCSAND_HB_ACQ_SPILL		65536
/* Objects whose file hb_obj_ino names, by struct kcsand_site's obj. */
#define KCSAND_HB_OBJS			4096

#ifndef __VMLINUX_H__
/* Sizes the BPF side was built with: a mismatch is a build error, not a silent misread. */
_Static_assert(sizeof(struct kcsand_site) == 32, "struct kcsand_site layout");
_Static_assert(sizeof(struct kcsand_access) == 80 + 8 * KCSAND_MAX_STACK, "struct kcsand_access layout");
_Static_assert(sizeof(struct kcsand_ustack) == 168 + KCSAND_USTACK_SIZE, "struct kcsand_ustack layout");
_Static_assert(sizeof(struct kcsand_report) == 104 + 2 * sizeof(struct kcsand_access),
	       "struct kcsand_report layout");
_Static_assert(sizeof(struct kcsand_params) == 56, "struct kcsand_params layout");
_Static_assert(sizeof(struct kcsand_cpu_state) == 40, "struct kcsand_cpu_state layout");
#endif

#endif /* KCSAND_H */
