/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcsand's parameters: the one list, as TSan describes its flags in one
 * .inc file.  A parameter is one line here; the rest is generated from it:
 * enum param_id, the table that `kcsanctl run --param`, the configuration
 * file and the control socket read (daemon/engine/params.c), the BPF
 * program's struct kcsand_params (kcsand.h) and the engine's copy of a
 * value into it.  Adding a parameter is adding a line.
 *
 *	X(ID, name, min, max, user default, kernel default, kind, help)
 *
 * kind says who reads it and when:
 *	BPF	the BPF program, live: a field of struct kcsand_params, written
 *		through the skeleton's mmap without reloading
 *	DAEMON	the daemon only (report filtering, the site sampler), live
 *	LOAD	the daemon, when an engine loads (it sizes the BPF object);
 *		never changed while it runs
 *
 * The order is `get`'s and `--param help`'s.  The defaults and why they
 * are what they are: docs/parameters.md.  In short: a uprobe hit costs
 * tens of µs, so user mode stalls longer than KCSAN (400 µs) to catch the
 * other thread; kernel mode keeps KCSAN's 80 µs, since a kprobe handler
 * stalls with interrupts off.  Kernel mode's sampler warm-up counts the
 * machine's busy time, not a target's, and is shorter
 * (daemon/sampler/ksampler.c).
 *
 * The BPF side includes this file too (through kcsand.h): it only ever
 * expands the BPF lines, into struct kcsand_params.
 */
#ifndef KCSAND_PARAMS_LIST_H
#define KCSAND_PARAMS_LIST_H

#define KCSAND_PARAMS(X)							\
	X(SKIP_WATCH, skip_watch, 0, 1000000000, 100, 100, BPF,			\
	  "plain accesses per CPU to skip before a watchpoint")			\
	X(SKIP_WATCH_RANDOMIZE, skip_watch_randomize, 0, 1, 1, 1, BPF,		\
	  "randomize skip_watch (KCSAN_SKIP_WATCH_RANDOMIZE)")			\
	X(UDELAY_TASK, udelay_task, 0, 100000, 400, 80, BPF,			\
	  "µs a task stalls with a watchpoint armed")				\
	X(UDELAY_INTERRUPT, udelay_interrupt, 0, 100000, 20, 20, BPF,		\
	  "µs an interrupt stalls with a watchpoint armed")			\
	X(DELAY_RANDOMIZE, delay_randomize, 0, 1, 1, 1, BPF,			\
	  "randomize the delays (KCSAN_DELAY_RANDOMIZE)")			\
	X(ASSUME_PLAIN_WRITES_ATOMIC, assume_plain_writes_atomic, 0, 1, 1, 1, BPF, \
	  "aligned plain writes up to 8 bytes are atomic")			\
	/*									\
	 * KCSAN's interrupt_watcher=1 lets an interrupt that arrives during a	\
	 * watcher's stall set watchpoints of its own, so that it can race with	\
	 * the task it interrupted.  A kprobe handler stalls in int3 context	\
	 * with interrupts off; a uprobe program stalls in the task with	\
	 * interrupts on, but no interrupt handler runs a uprobed instruction.	\
	 * Either way nothing can watch from inside the stall: only 0.		\
	 */									\
	X(INTERRUPT_WATCHER, interrupt_watcher, 0, 0, 0, 0, BPF,		\
	  "stalls interruptible by probed code (never, in probe handlers)")	\
	X(CONSUMER_WAIT_US, consumer_wait_us, 0, 100000, 200, 200, BPF,		\
	  "µs a watcher waits for its consumer's side")				\
	X(ENABLED, enabled, 0, 1, 1, 1, BPF, "on/off")				\
	/*									\
	 * At most half of each CPU-second stalled: nothing starves the	\
	 * watchdogs, RCU or the target.					\
	 */									\
	X(STALL_BUDGET_US, stall_budget_us, 0, 1000000, 500000, 500000, BPF,	\
	  "µs a CPU may stall per second (0: unlimited; kernel: 500000 at most)") \
	/*									\
	 * Kernel breakpoint mode: how long a sampled watcher waits for the	\
	 * data breakpoint on its address to be live on every other CPU	\
	 * (bpf/pair.bpf.h); part of the stall, so at most the 1 ms ceiling.	\
	 * 0: no data breakpoints, one side's stack only.  No effect in user	\
	 * mode and with kprobes.						\
	 */									\
	X(PAIR_WAIT_US, pair_wait_us, 0, 1000, 1000, 1000, BPF,		\
	  "kernel breakpoint mode: µs a watcher waits for its data breakpoint on the other CPUs (0: none)") \
	X(REPORT_VALUE_CHANGE_ONLY, report_value_change_only, 0, 1, 1, 1, DAEMON, \
	  "report a race only when the watched value changed")			\
	X(REPORT_ONCE_IN_MS, report_once_in_ms, 0, 3600000, 3000, 3000, DAEMON,	\
	  "print one report per pair of functions per interval")		\
	X(OVERHEAD_BUDGET, overhead_budget, 1, 100, 10, 10, DAEMON,		\
	  "site sampler: % of native time probes may add (100: arm all)")	\
	/*									\
	 * The soft watchpoints need the two racing accesses to overlap, so a	\
	 * short test program is only caught while its racing sites trap	\
	 * (docs/PERFORMANCE.md, "Figures behind the code": the warm-up).	\
	 */									\
	X(SAMPLER_WARMUP_CPU_MS, sampler_warmup_cpu_ms, 0, 3600000, 2000, 2000, DAEMON, \
	  "site sampler: CPU ms the targets (kernel: the machine) run with all sites armed") \
	X(SAMPLER_PERIOD_MS, sampler_period_ms, 50, 60000, 100, 100, DAEMON,	\
	  "site sampler: ms between two readjustments")				\
	/* A hot turn: long enough for a few watchpoints of each armed hot site (bench/p2). */ \
	X(SAMPLER_TURN_MS, sampler_turn_ms, 5, 60000, 20, 20, DAEMON,		\
	  "site sampler: ms a hot site stays armed in its turn")		\
	/*									\
	 * Per-site backoff (daemon/sampler/sampler.h): a site stays armed for	\
	 * its first sampler_backoff_hits hits, or sampler_level0_cpu_ms of the	\
	 * targets' CPU time after its first hit, whichever comes first, so	\
	 * that code first run after the warm-up				\
	 * (tests/scenarios/serial_init_then_race) gets what the warm-up gave	\
	 * the code before it.  docs/PERFORMANCE.md, "Per-site backoff", has	\
	 * how both were chosen.						\
	 */									\
	X(SAMPLER_BACKOFF_HITS, sampler_backoff_hits, 1, 1000000000, 30000, 30000, DAEMON, \
	  "site sampler: hits a site takes armed before it backs off a level (100/10/1/0.1%)") \
	X(SAMPLER_LEVEL0_CPU_MS, sampler_level0_cpu_ms, 1, 3600000, 2000, 2000, DAEMON, \
	  "site sampler: targets' CPU ms after its first hit that a site stays armed at most") \
	/*									\
	 * User mode: the cold start (warm-up and level 0) spends a credit of	\
	 * this much CPU time, an advance on the budget: a program of a few	\
	 * seconds pays about the larger of it and the budget, not 2		\
	 * CPU-seconds of traps (docs/PERFORMANCE.md, "The cold start's		\
	 * credit, one budget, and start-up").  300 ms covers about 10,000	\
	 * traps at the 22-35 us of this project's VMs: the whole run of a	\
	 * test program of a few ms natively.  tests/history/racy_omp_nowait	\
	 * takes 8,191 hits, up to 300 CPU-ms of them; at 200 its last		\
	 * iteration, the racy read, came after the advance ran out (4 runs	\
	 * of 4 missed it).  400 made P2 at 2 s slower in 5 pairs of 5; 300	\
	 * did not, within the noise ("The cold start's credit, sized for a	\
	 * test program").  Kernel mode keeps its warm-up unbounded (0), as	\
	 * its guest suites were measured with it.				\
	 */									\
	X(SAMPLER_START_CREDIT_MS, sampler_start_credit_ms, 0, 3600000, 300, 0, DAEMON, \
	  "site sampler (user mode): CPU ms of probe time the cold start may spend " \
	  "ahead of the budget (0: unbounded)")					\
	/*									\
	 * The reports' ring buffer.  A report takes 768 bytes of it, so 1 MiB	\
	 * holds about 1,360 reports the daemon has not read yet; a full ring	\
	 * drops records and counts them (records_dropped).  Small values are	\
	 * for tests that fill it (tests/daemon-faults.sh).			\
	 */									\
	X(RING_BUFFER_KB, ring_buffer_kb, 4, 262144, 1024, 1024, LOAD,		\
	  "KiB of the reports' ring buffer (rounded up to a power of two; "	\
	  "at start only)")							\
	/*									\
	 * The history's watches of reads (docs/history.md): 2, since their	\
	 * cost, the context switches of the threads they are armed in, is	\
	 * paid from the history's share of the budget (hw/hb_watch.c; armed	\
	 * unpaced, they made P2 run 2 to 3 times longer on the KVM guests),	\
	 * and libgomp's copy of a task's data, which a watch sees, is ordered	\
	 * before the task (bpf/tasks.bpf.h; it was reported before).		\
	 */									\
	X(HISTORY_WATCHES, history_watches, 0, 2, 2, 0, LOAD,			\
	  "history (user mode): debug registers its watches of reads may hold " \
	  "(0: none; at start only)")						\
	/*									\
	 * What one context switch of a thread a watch is armed in costs: the	\
	 * price the watches' pacing charges (engine.c, pace_watches()).	\
	 * 100 us is the low end of what it cost on this project's KVM guests	\
	 * (100 to 390 us; a few us on bare metal, where a lower price keeps	\
	 * the watches on longer).  A CPU-bound thread on a loaded machine is	\
	 * preempted a few hundred times a second, and at this price its	\
	 * watches close within seconds: 0 prices switches at nothing.		\
	 */									\
	X(HISTORY_SWITCH_US, history_switch_us, 0, 100000, 100, 100, DAEMON,	\
	  "history (user mode): µs one context switch of a watched thread "	\
	  "costs, as its watches' pacing charges it (0: free)")		\
	/*									\
	 * The clock slots a process's threads may take (64, the table's	\
	 * size).  Fewer, and a thread past them gets no clock, as one that	\
	 * lost every race for a slot does: the way a test reaches what the	\
	 * daemon then does (drops the history's reports, and says so).	\
	 */									\
	X(HISTORY_SLOTS, history_slots, 1, 64, 64, 64, BPF,			\
	  "history (user mode): clock slots a process's threads may take; "	\
	  "a thread past them gets none (fewer than 64: for tests)")

#endif /* KCSAND_PARAMS_LIST_H */
