/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hardware watchpoints (bpf/hwbp.bpf.h is the BPF half): four debug
 * registers, managed as KCSAND_HW_SLOTS slots shared by escalation (a race
 * of unknown origin arms one on its address to catch the writer) and by
 * --watch (a variable watched for the whole run).
 *
 * User mode arms a perf breakpoint event on every thread of the target
 * (pid = tid), and on threads created later at the next poll.  Kernel
 * mode arms one per online CPU (pid = -1, exclude_user) on a kernel
 * address, all of them or none; its traps run kcsand_hwbp_kernel.
 */
#ifndef KCSAND_HWBP_H
#define KCSAND_HWBP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "kcsand.h"

struct hwbp;
struct kcsand_bpf;

/* CPUs a kernel-mode slot can cover; the lowest kernel address on x86-64. */
#define HWBP_MAX_CPUS		1024
#define HWBP_KERNEL_START	0xffff800000000000ULL

struct hwbp_stats {
	unsigned long armed;		/* slots armed over the run */
	unsigned long no_slot;		/* escalations dropped: every slot busy */
	unsigned long unarmable;	/* address or size no debug register can cover, or a kernel stack's */
	unsigned long open_failed;	/* perf_event_open refused (e.g. ENOSPC) */
	unsigned long pairs;		/* reports paired from an escalation */
	uint64_t traps;			/* BPF side: traps in target threads (or the kernel) */
	uint64_t consumed;		/* traps that consumed a soft watchpoint */
	uint64_t watchers;		/* watch traps that set one */
	uint64_t probed;		/* kernel traps of a kprobed access, left to its probe */
	uint64_t outside;		/* decoded accesses outside the variable, dropped */
	uint64_t undecoded;		/* traps before their instruction was decoded */
	unsigned long decoded;		/* instructions decoded for traps */
	unsigned long hb_watches;	/* the history's watches armed */
	unsigned long hb_spent;		/* of them, trapped by a write and closed */
	unsigned long hb_no_slot;	/* watches asked for when no slot was free */
	unsigned long long hb_switches;	/* context switches of threads a watch was armed in */
	unsigned long hb_paused;	/* times the watches were closed: the history paused */
};

/*
 * The figures of struct hwbp_stats that `stats` and the summary both show,
 * X(field, name), in their order: each named once, so that the two agree.
 */
#define HWBP_STATS_SHOWN(X)			\
	X(armed, hw_watchpoints_armed)		\
	X(traps, hw_traps)			\
	X(consumed, hw_consumed)		\
	X(watchers, hw_watchers)		\
	X(pairs, hw_pairs)			\
	X(no_slot, hw_no_slot)			\
	X(unarmable, hw_unarmable)		\
	X(open_failed, hw_open_failed)

/*
 * Whether a user-mode debug register traps on this machine: 1 yes, 0 no (the
 * event opens but never counts: a hypervisor that does not pass debug
 * exceptions through), or a negative errno when no breakpoint could be
 * opened.  Checked once per process (daemon/hw/traps.c).  hwbp__no_traps_why()
 * is NULL when they trap, else the reason to print.
 */
int hwbp__user_traps(void);
const char *hwbp__no_traps_why(void);
/*
 * Start that check on a thread of its own, for the calls above to find done
 * (or wait for).  Its breakpoint is the first per-thread perf event of a
 * process on a machine that has none open: the kernel then turns its
 * context-switch hooks on and waits for an RCU grace period (account_event()),
 * 20 ms of a `kcsanctl run` start here, spent asleep while the start goes on.
 */
void hwbp__user_traps_start(void);

/* kernel: kernel addresses, one breakpoint per CPU (kcsanctl run --kernel). */
int hwbp__new(struct kcsand_bpf *skel, bool kernel, struct hwbp **out);
void hwbp__free(struct hwbp *hw);
/*
 * Where skel's trap program (kcsand_hwbp, kcsand_hwbp_kernel) was left
 * unloaded: load(ctx, &prog) loads it when the first watchpoint is armed,
 * 0 or -errno with the reason printed.
 */
struct bpf_program;
typedef int hwbp_load_fn(void *ctx, struct bpf_program **prog);
void hwbp__set_loader(struct hwbp *hw, hwbp_load_fn *load, void *ctx);
/* The loader's program, now rather than at the first watchpoint (0 where none traps). */
int hwbp__load_trap(struct hwbp *hw);
/*
 * The flags of the probed site at vaddr in the object at path, or 0: a
 * trap's instruction is decoded from its bytes alone, and marked only when
 * they show it (a lock prefix, xchg).  A site the debug info or the source
 * marked (an `_Atomic` through a pointer, a relaxed atomic's plain mov) is
 * marked as its probe is (trap_decode.c).
 */
typedef uint32_t hwbp_site_flags_fn(void *ctx, const char *path, uint64_t vaddr);
void hwbp__set_site_flags(struct hwbp *hw, hwbp_site_flags_fn *fn, void *ctx);
/*
 * A watch's spec checked before anything loads: its grammar, and in kernel
 * mode the variable (kallsyms) or address and its length.  0, or -errno with
 * the reason printed, as hwbp__watch() would give it.
 */
int hwbp__check_watch(bool kernel, const char *spec);

/*
 * A race of unknown origin was found: arm a write watchpoint on its address
 * in its process, unless one is armed there already.  0, or a negative
 * errno (counted; never fatal).
 */
int hwbp__escalate(struct hwbp *hw, const struct kcsand_report *r);
/*
 * Watch [addr, addr + len) in pid's threads for the whole run (read and
 * write).  spec is SYMBOL[:LEN] or ADDRESS[:LEN] (watch_spec.h); a symbol
 * is looked up in the ELF file path and relocated with pid's mapping of it.  Kernel
 * mode ignores pid and path: a symbol is a kallsyms variable, an address
 * must be a kernel one, and every CPU is watched.  The slot (>= 0), or a
 * negative errno with the reason through pr_warn (-ENOSPC: every slot taken).
 */
int hwbp__watch(struct hwbp *hw, pid_t pid, const char *path, const char *spec);
/* Disarm a slot hwbp__watch() returned: -ENOENT when it is no watch. */
int hwbp__unwatch(struct hwbp *hw, int slot);

/* What a slot holds, for `kcsanctl watch list`. */
struct hwbp_slot_info {
	enum kcsand_hw_mode mode;
	pid_t pid;			/* -1: kernel */
	uint64_t addr;			/* what the debug register covers */
	unsigned int len;
	size_t events;			/* perf events: one per thread, or per CPU */
};
/* -ENOENT when the slot is free. */
int hwbp__slot_info(const struct hwbp *hw, int slot, struct hwbp_slot_info *out);
/* Slots armed now, by watches and escalations. */
int hwbp__slots_in_use(const struct hwbp *hw);
/*
 * The address and size of variable name of the ELF file path as mapped in
 * pid.  shared: path is an object the process maps (a library), not its
 * executable, which must otherwise be /proc/PID/exe (-EAGAIN until then).
 * -ENOENT when path has no such variable, silently.
 */
int hwbp__resolve_symbol(pid_t pid, const char *path, bool shared, const char *name,
			uint64_t *addr, uint64_t *size);
/*
 * An escalation trap's record: if it follows the race the slot was armed
 * for (another thread's write), fill out with the later-write report
 * (hwbp__later_write) and return 1; 0 when there is nothing to report.
 */
int hwbp__pair(struct hwbp *hw, const struct kcsand_hw_access *a, struct kcsand_report *out);
/* The report of write a, trapped after the race of unknown origin race. */
void hwbp__later_write(const struct kcsand_report *race, const struct kcsand_hw_access *a,
		       struct kcsand_report *out);
/*
 * The history's watches (bpf/history_watch.bpf.h, hw/hb_watch.c): max, the
 * slots they may hold at once (never taken from escalations or watches; an
 * escalation may take theirs), from the start; prog, the trap's program
 * (kcsand_xbp), once loaded: what was asked for before is armed then.
 */
void hwbp__hb_init(struct hwbp *hw, unsigned int max);
void hwbp__hb_enable(struct hwbp *hw, struct bpf_program *prog);
/* A watch no write trapped gives way after this; a newer read of its reader's, after the hold. */
#define HB_WATCH_MS	10000
#define HB_MIN_HOLD_MS	20
/*
 * Where a read of thread reader goes among n watches (the time each was
 * taken at[], 0 for a free one, its reader tid[]), at now: a free one, else
 * the oldest of the same reader's held HB_MIN_HOLD_MS, else the oldest held
 * HB_WATCH_MS; -1 for none.
 */
int hwbp__hb_place(const uint64_t *at, const pid_t *tid, int n, pid_t reader, uint64_t now);
/*
 * What the watches cost so far: the context switches of the threads they
 * were armed in.  The history's pacing prices them (history_switch_us) and
 * adds that to its sync probes' cost (engine.c).
 */
unsigned long long hwbp__hb_switches(const struct hwbp *hw);
/*
 * pause: the history's share of the budget is spent (its sync probes are
 * off, so a watch's check would find nothing): close every watch, offer
 * none.  !pause: watches again.
 */
void hwbp__hb_pause(struct hwbp *hw, bool pause);
/* A KCSAND_REC_HB_WATCH record: arm the watch it asks for, or close the one it spent. */
void hwbp__hb_watch(struct hwbp *hw, const struct kcsand_hb_watch *rq);
/* Retire escalations that found nothing in time; from the poll loop. */
void hwbp__tick(struct hwbp *hw);
/*
 * Kernel mode: the slots (debug registers of every CPU) escalations and
 * watches may hold at once, so that sampling's and a debugger's stay free.
 */
void hwbp__limit(struct hwbp *hw, unsigned int slots);
void hwbp__get_stats(const struct hwbp *hw, struct hwbp_stats *out);

/*
 * The memory access of the instruction of the ELF file path that ends at its
 * link-time address next (daemon/hw/insn.c), with KCSAND_SITE_ADDR_LOST when
 * the instruction overwrites a register of its address.  -ENOENT: no memory
 * access the decoder can describe ends there.
 */
int hwbp__insn_before(const char *path, uint64_t next, struct kcsand_site *out);
struct kcore;
struct ksyms;
/* The same in the running kernel: the function from ks, its code from kc. */
int hwbp__kinsn_before(const struct kcore *kc, const struct ksyms *ks, uint64_t next,
		       struct kcsand_site *out);
struct symbolizer;
/*
 * A trap's request (KCSAND_REC_HW_DECODE): decode its instruction in the
 * process and put it in the BPF hash hw_insns (size 0 when it cannot be).
 */
void hwbp__decode(struct hwbp *hw, struct symbolizer *sym, const struct kcsand_hw_decode *rq);
/*
 * A side trapped before its instruction was decoded in BPF (the first trap
 * at an ip): decode it now, so that its frame and type are the access's.
 */
void hwbp__fix_access(struct hwbp *hw, struct symbolizer *sym, struct kcsand_access *a);

/*
 * A CPU list as in /sys/devices/system/cpu/online ("0-3,5"): online[c] set
 * for each, max entries.  The number of CPUs, or -EINVAL / -ERANGE.
 */
int hwbp__parse_cpus(const char *list, bool *online, int max);
/* The debug-register range covering [addr, addr + size): len 1/2/4/8, aligned; -1 if none. */
int hwbp__cover(uint64_t addr, unsigned int size, uint64_t *bp_addr, unsigned int *bp_len);

#endif
