/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine: probed objects and their sites, the loaded BPF object and
 * its links, and the report pipeline (ring buffer -> queue -> symbolize ->
 * filter -> print).  Used by kcsand and by `kcsanctl run`.
 */
#ifndef KCSAND_ENGINE_H
#define KCSAND_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "kcsand.h"
#include "sites/decode.h"
#include "params.h"

/* Site-table capacity: 24 bytes a site in BPF; objects added later share it. */
#define DEFAULT_MAX_SITES		65536u

struct report_view;

struct engine_opts {
	struct param_values params;	/* initial values, by enum param_id (params.h) */
	bool json;
	int verbose;
	FILE *out;			/* where reports go */
	const char *functions;		/* comma-separated globs, NULL = all */
	struct decode_opts decode;
	size_t max_sites;		/* site-table capacity, for objects added after load */
	bool force_per_site_links;	/* the < 6.6 fallback, on any kernel */
	bool kernel;			/* kernel mode: kprobes on kernel functions */
	/*
	 * Trace every process that hits a probe, not only the added pids (not a
	 * parameter: kernel mode always does, the service sets it per target).
	 */
	bool trace_all;
	unsigned long max_reports;	/* stop reporting after this many (halt_on_error: 1); 0: no limit */
	const char *const *kernel_debug; /* kernel mode: vmlinux / NAME.ko files with DWARF */
	size_t nr_kernel_debug;
	const char *source_dir;		/* marking: sources looked up here first (mark.h) */
	const char *marks_file;		/* marking: FUNC / FUNC+0xOFF / FILE:LINE entries */
	/*
	 * Report hooks for the service; NULL: print to out.  filter runs
	 * after the value-change check and before dedup, as KCSAN checks its
	 * filter list before rate limiting; true drops the report.  sink
	 * gets every report that passed dedup instead of printing it.
	 */
	bool (*filter)(void *ctx, const struct report_view *v);
	void (*sink)(void *ctx, const struct report_view *v);
	void *hook_ctx;
	bool no_marking;		/* only lock prefixes and xchg mark accesses */
	/*
	 * The history detector (daemon/history/) for the processes added
	 * with engine__add_pid() while it is set: user mode only.
	 */
	bool history;
	/*
	 * Kernel mode: the run watches variables from its start (--watch), so
	 * the hardware watchpoints' program loads with the others even without
	 * a site (engine.c, select_kernel_programs()).
	 */
	bool watch;
	/*
	 * Kernel mode: a kprobe on every site, or code breakpoints sampling
	 * them a few at a time (daemon/sampler/kbp.h); AUTO takes breakpoints
	 * from KBP_AUTO_MIN_SITES sites on.
	 */
	enum engine_sample { ENGINE_SAMPLE_AUTO, ENGINE_SAMPLE_KPROBES,
			     ENGINE_SAMPLE_BREAKPOINTS } sample;
	unsigned int kbp_regs;		/* debug registers per CPU for sampling */
	unsigned int free_regs;		/* kernel mode: debug registers left to a debugger */
	bool kcsan_exempt;		/* kernel mode: probe what KCSAN leaves uninstrumented too */
	unsigned int kbp_period_us;	/* how long a set of sites stays sampled: the first */
	bool kbp_period_fixed;		/* --sample-period: kept, not set by the budget */
	/*
	 * Kernel mode, code breakpoints: comma-separated globs of the functions
	 * whose sites are pinned, in a cycle of their own (kbp.h); sites are
	 * sampled by breakpoints then, also below KBP_AUTO_MIN_SITES.
	 */
	const char *pin;
	/*
	 * User mode: the watchpoints' trap program (kcsand_hwbp) is left out
	 * of the start, for engine__load_traps() or the first watchpoint.  The
	 * service starts its user engine before it has a target, and one with
	 * kernel targets only never arms a user watchpoint: on 6.1 the program
	 * was 407,486 instructions to verify when this was added, 24,968 after
	 * the ninth pass (docs/test-kernel.md): work a kernel-only service
	 * never uses.
	 */
	bool traps_later;
};

/* Kernel sites from which AUTO samples with code breakpoints rather than kprobes. */
#define KBP_AUTO_MIN_SITES	2000u
/*
 * Debug registers: --watch takes them first, one stays free for the
 * escalation of a race of unknown origin, sampling gets the rest.
 */
#define KBP_DEFAULT_REGS	3
#define KBP_DEFAULT_PERIOD_US	10000u

struct engine;

/* Options of an engine of mode, every parameter at that mode's default (params.h). */
void engine_opts__init(struct engine_opts *o, enum param_mode mode);
/* Set parameter p to v (a value param__parse() accepted) in o. */
void engine_opts__set(struct engine_opts *o, const struct param_desc *p, unsigned int v);
/* The value of parameter p in o (its mode's default, right after engine_opts__init). */
unsigned int engine_opts__get(const struct engine_opts *o, const struct param_desc *p);

/* An engine with options o (copied), nothing loaded yet: add targets, then engine__start(). */
int engine__open(const struct engine_opts *o, struct engine **out);
/*
 * Load the BPF object, attach the process-tracking tracepoints and probe
 * every object added so far; the site sampler starts.  0, or -errno with
 * the reason printed (util/print.h).
 */
int engine__start(struct engine *e);
/*
 * Wait for what engine__start() left running in the background: the close
 * of the trap calibration's link, a link of kcsand's own until then.
 * kcsanctl run calls it once the program runs, so the wait overlaps its
 * start; the service at once, before it answers (its links are listed).
 */
void engine__settle(struct engine *e);
/*
 * Load what traps_later left out, now, so that a target's escalations do
 * not wait for the verifier.  0 where debug registers do not trap or it is
 * loaded, else -errno with the reason printed (the first watchpoint would
 * not try again).
 */
int engine__load_traps(struct engine *e);
/*
 * Decode the functions of an ELF object matching globs (NULL: the engine's
 * --functions) and probe them.  Before engine__start(), the object is only
 * decoded (engine__print_sites() lists it) and start probes it; after, it
 * is probed at once.
 * Returns an object id >= 0, or a negative errno with a message.
 */
int engine__add_object(struct engine *e, const char *path, const char *globs);
/*
 * Kernel mode: probe the kernel functions chosen by specs (ktarget.h:
 * GLOB, module:NAME, FUNC+0xOFF, !GLOB), one kprobe per site.  A site the
 * kernel refuses is named and counted, and the rest stay attached.  A
 * function an earlier kernel object of this engine probes is left out
 * (and said so): its live code holds that object's int3s.  Returns an
 * object id >= 0, or a negative errno with a message.
 */
int engine__add_kernel(struct engine *e, const char *const *specs, size_t nr_specs);
/* Detach an object's probes; its sites stay known for reports in flight. */
int engine__remove_object(struct engine *e, int id);
/* Trace this process (and, through the fork tracepoint, its descendants). */
int engine__add_pid(struct engine *e, pid_t pid);
int engine__remove_pid(struct engine *e, pid_t pid);

/*
 * One line per decoded site (address, function+offset, access, size, plain or
 * marked and why), then how many sites each rule marked.
 */
void engine__print_sites(const struct engine *e, FILE *out);
/* Only the per-rule counts line: "kcsand: marked sites: 3 lock prefix, ..." */
void engine__print_mark_counts(const struct engine *e, FILE *out);

/*
 * Live parameters: changed in the loaded BPF object without reloading.  v
 * is a value param__parse() accepted.  get: -ENOENT for an unknown name.
 */
void engine__set_param(struct engine *e, const struct param_desc *p, unsigned int v);
int engine__get_param(const struct engine *e, const char *name, unsigned int *value);

/*
 * Consume the ring buffer for up to timeout_ms (less when the site sampler
 * is due sooner) and print what is due.
 */
int engine__poll(struct engine *e, int timeout_ms);
/* Milliseconds a caller's own poll loop may wait before engine__poll() has work; -1: no limit. */
int engine__timeout_ms(const struct engine *e);
/* The last poll, at the end of a run: also print what is still held back (kernel mode). */
void engine__flush(struct engine *e);
/* Reports printed so far. */
unsigned long engine__nr_reports(const struct engine *e);
/* Counters: KCSAN's and kcsand's own, summed over CPUs where per-CPU. */
void engine__counters(const struct engine *e, uint64_t out[KCSAND_CTR_COUNT]);
uint64_t engine__hits(const struct engine *e);
/*
 * What an engine tells of its sites, probe hits and reports, X(ID, name):
 * the one name `stats` (the service's engines summed) and the summary give
 * each.  sites: engine__nr_sites(); hits: engine__hits(); reports:
 * engine__nr_reports(); then the reports the pipeline dropped, by why:
 * dedup, the filter hook, an unchanged value.
 */
#define ENGINE_FIGURES(X)					\
	X(SITES, sites)						\
	X(HITS, hits)						\
	X(REPORTS, reports)					\
	X(DEDUP, suppressed_by_dedup)				\
	X(FILTER, suppressed_by_filter)				\
	X(NO_CHANGE, suppressed_no_value_change)

#define ENGINE_FIG_ENUM(ID, name) ENGINE_FIG_##ID,
enum engine_figure {
	ENGINE_FIGURES(ENGINE_FIG_ENUM)
	ENGINE_FIG_COUNT,
};
#undef ENGINE_FIG_ENUM

/* The figures now, in ENGINE_FIGURES' order, and one's name. */
void engine__figures(const struct engine *e, uint64_t out[ENGINE_FIG_COUNT]);
const char *engine_figure__name(enum engine_figure f);
/* Sites currently probed. */
size_t engine__nr_sites(const struct engine *e);
/*
 * Watch a variable of pid with a hardware watchpoint for the rest of the run
 * and report every conflicting pair of accesses to it, probed or not.  spec
 * is SYMBOL[:LEN] (an object in the ELF file path) or ADDRESS[:LEN].
 * -EAGAIN: path is not mapped in pid yet (call again after its exec).
 * Kernel mode: pid and path are ignored, SYMBOL is a kernel or module
 * variable (kallsyms), and the watchpoint is armed on every CPU.  Returns
 * the hardware slot (>= 0) or a negative errno (-ENOSPC: no slot free).
 */
int engine__watch(struct engine *e, pid_t pid, const char *path, const char *spec);
/*
 * What engine__watch() can refuse before anything loads: spec's grammar,
 * and in kernel mode its variable or address.  0, or -errno with the reason
 * printed (a start verifies the BPF programs first: seconds on an old kernel).
 */
int engine__check_watch(const struct engine *e, const char *spec);
/*
 * engine__watch() returns the watch's hardware slot (>= 0); these undo it
 * and describe it (hwbp.h), count the slots in use (watches and
 * escalations) and give the hardware-watchpoint counters.
 */
struct hwbp_slot_info;
struct hwbp_stats;
int engine__unwatch(struct engine *e, int slot);
int engine__watch_info(const struct engine *e, int slot, struct hwbp_slot_info *out);
int engine__hw_slots_in_use(const struct engine *e);
int engine__hw_stats(const struct engine *e, struct hwbp_stats *out);
/* Is pid in the set of traced processes (engine__add_pid, or a traced parent's fork)? */
bool engine__pid_traced(const struct engine *e, pid_t pid);
/* Cookies handed out so far: the site index space, removed objects included. */
size_t engine__nr_cookies(const struct engine *e);
/*
 * Attach only the sites whose armed[cookie] is set (the site sampler), with
 * the same cookies; the new links are in place before the old ones go.
 */
int engine__rearm(struct engine *e, const uint8_t *armed);
/*
 * The site sampler's hot turn: arm the sites of turn[] (NULL: end the turn)
 * on top of the armed[] set.  In one thread of each target process by
 * execute breakpoints (thread_turn.h), returning 1; else as a uprobe link of
 * their own, so that a turn neither waits for nor disturbs the link of the
 * armed set, returning 0.  A negative errno when neither worked.
 */
int engine__turn(struct engine *e, const uint8_t *armed, const uint8_t *turn);
struct sampler_stats;
/* The site sampler's armed/total sites and overhead estimate; -ENOENT before attach. */
int engine__sampler_stats(const struct engine *e, struct sampler_stats *out);
struct history_stats;
/* The history detector's counters (history.h); -ENOENT when it is off. */
int engine__history_stats(const struct engine *e, struct history_stats *out);
/* One line of counters, for the end of a run: every counter, "name: value" each. */
void engine__print_summary(struct engine *e, FILE *out);
/*
 * The same figures as one JSON object, {"summary":{"reports":N,...,"warnings":[...]}},
 * on a line of its own: lists ("a/b" in the text) are arrays, percentages numbers.
 */
void engine__print_summary_json(struct engine *e, FILE *out);
/*
 * The same line with the few numbers a user reads: reports and which
 * detector found them, sites armed, the probes' overhead, and a warning
 * when the program ran many times its native CPU time.
 */
void engine__print_brief(struct engine *e, FILE *out);
/* The ring buffer's epoll fd, for a caller's own poll loop; -1 before load. */
int engine__epoll_fd(const struct engine *e);
/* Trace every process that hits a probe (true) or only the added pids. */
void engine__set_trace_all(struct engine *e, bool on);
/*
 * Set or clear KCSAND_SITE_NOWATCH on every site of every object by its
 * function's name, in the loaded site table too: a blacklisted function
 * then checks for watchpoints but sets none.  Returns the number of sites
 * now NOWATCH, or a negative errno.
 */
int engine__set_nowatch(struct engine *e, bool (*nowatch)(void *ctx, const char *func),
			void *ctx);
/* Sites of one object, or -ENOENT. */
long engine__object_sites(const struct engine *e, int id);
/* The path of the object a site (a report's acc.site) belongs to, or NULL. */
const char *engine__site_object(const struct engine *e, uint32_t site);
/* Detach everything and free. */
void engine__close(struct engine *e);

#endif
