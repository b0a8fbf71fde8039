// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine: open, load, start, poll, close; the BPF object and its links,
 * live parameters.  The probed objects and their sites are in
 * engine_objects.c, the summary and counters in engine_summary.c, the report
 * pipeline in pipeline.c, the site sampler's arming in arm.c, the shared
 * types in engine_int.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "report/dedup.h"
#include "sites/ksyms.h"
#include "mark/mark.h"
#include "report/report.h"
#include "hw/hwbp.h"
#include "history/history.h"
#include "sampler/kbp.h"
#include "hw/pair.h"
#include "sampler/sampler.h"
#include "report/symbolize.h"
#include "report/unwind.h"
#include "util/link_close.h"
#include "util/uprobe_multi.h"
#include "sampler/thread_turn.h"
#include "engine_int.h"
#include "late_load.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/clock.h"
#include "util/array.h"

void engine_opts__init(struct engine_opts *o, enum param_mode mode)
{
	memset(o, 0, sizeof(*o));
	param_values__init(&o->params, mode);
	o->kernel = mode == PARAM_MODE_KERNEL;
	o->max_sites = DEFAULT_MAX_SITES;
	o->out = stderr;
	o->kbp_regs = KBP_DEFAULT_REGS;
	o->kbp_period_us = KBP_DEFAULT_PERIOD_US;
}

void engine_opts__set(struct engine_opts *o, const struct param_desc *p, unsigned int v)
{
	o->params.v[p->id] = v;
}

unsigned int engine_opts__get(const struct engine_opts *o, const struct param_desc *p)
{
	return o->params.v[p->id];
}

/*
 * The parameters the BPF program reads, in its struct kcsand_params; NULL
 * for those only the daemon reads (report filtering, the site sampler).
 */
#define BPF_PARAM_SLOT_BPF(b, name)	(&(b)->name)
#define BPF_PARAM_SLOT_DAEMON(b, name)	NULL
#define BPF_PARAM_SLOT_LOAD(b, name)	NULL
#define BPF_PARAM_CASE(ID, name, lo, hi, user, kernel, kind, help)	\
	case PARAM_##ID: return BPF_PARAM_SLOT_##kind(b, name);
static __u32 *bpf_param(struct kcsand_params *b, enum param_id id)
{
	switch (id) {
	KCSAND_PARAMS(BPF_PARAM_CASE)
	default:
		return NULL;
	}
}
#undef BPF_PARAM_CASE

/* The BPF object's parameters for these options, before load. */
/*
 * Kernel mode: a value the BPF side cuts to its ceiling (include/kcsand.h),
 * whatever the parameter says, is said when set: a kernel stall has
 * interrupts off.
 */
static void say_kernel_ceiling(const struct engine_opts *o, int id, unsigned int v)
{
	const struct param_desc *p;
	size_t n;

	if (!o->kernel)
		return;
	p = param__table(&n);
	if ((id == PARAM_UDELAY_TASK || id == PARAM_UDELAY_INTERRUPT ||
	     id == PARAM_CONSUMER_WAIT_US) && v > KCSAND_KERNEL_WAIT_MAX_US)
		pr_warn("kernel mode: %s=%u is cut to %u µs in BPF (a kernel stall has interrupts "
			"off)\n", p[id].name, v, KCSAND_KERNEL_WAIT_MAX_US);
	else if (id == PARAM_STALL_BUDGET_US && (!v || v > KCSAND_KERNEL_STALL_BUDGET_MAX_US))
		pr_warn("kernel mode: stall_budget_us=%u is cut to %u in BPF (a kernel stall has "
			"interrupts off)\n", v, KCSAND_KERNEL_STALL_BUDGET_MAX_US);
}

static void bpf_params_fill(struct kcsand_params *b, const struct engine_opts *o)
{
	memset(b, 0, sizeof(*b));
	for (int id = 0; id < PARAM_COUNT; id++) {
		__u32 *slot = bpf_param(b, id);

		if (slot)
			*slot = o->params.v[id];
		say_kernel_ceiling(o, id, o->params.v[id]);
	}
	/* Kernel mode: every task that enters the probed code; the kernel has no "target". */
	b->trace_all = o->kernel || o->trace_all;
}

/* A ring buffer's size must be a power of two and whole pages: round kb up to one. */
static __u32 ring_bytes(unsigned int kb)
{
	__u32 page = sysconf(_SC_PAGESIZE), bytes = page;

	while (bytes < (__u64)kb * 1024 && bytes < (1U << 30))
		bytes <<= 1;
	return bytes;
}

void engine__set_param(struct engine *e, const struct param_desc *p, unsigned int v)
{
	__u32 *slot = e->skel ? bpf_param(&e->skel->data->params, p->id) : NULL;

	/* A loaded object keeps the size it was loaded with: `get` says what is in effect. */
	if (p->at_load && e->skel)
		return;
	e->opts.params.v[p->id] = v;
	if (e->skel)
		say_kernel_ceiling(&e->opts, p->id, v);
	/* The mmapped .data of the loaded object: the program sees it at its next hit. */
	if (slot)
		*(volatile __u32 *)slot = v;
}

int engine__get_param(const struct engine *e, const char *name, unsigned int *value)
{
	const struct param_desc *p = param__find(name);

	if (!p)
		return -ENOENT;
	*value = e->opts.params.v[p->id];
	return 0;
}

/*
 * While kprobes attach by address, libbpf's own warning for a refused one
 * names it "(null)+0xADDRESS": kcsand says which function and why instead.
 */
static bool libbpf_quiet_warnings;

void engine_libbpf_quiet(bool on)
{
	libbpf_quiet_warnings = on;
}

/* libbpf's levels are kcsand's; the print function filters them as the rest. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	enum kcsand_print_level to = level == LIBBPF_WARN ? KCSAND_WARN :
				     level == LIBBPF_INFO ? KCSAND_INFO : KCSAND_DEBUG;

	if (level == LIBBPF_WARN && libbpf_quiet_warnings)
		to = KCSAND_DEBUG;
	kcsand__vprint(to, fmt, args);
	return 0;
}

/*
 * A per-site link holds a perf-event fd (kprobes, and uprobes without
 * uprobe_multi): a thousand sites pass the usual soft limit of 1024 open
 * files.  Raise it to the hard limit.
 */
static void raise_nofile_limit(void)
{
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

int engine__open(const struct engine_opts *o, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct utsname u;

	if (!e)
		return -ENOMEM;
	raise_nofile_limit();
	e->opts = *o;
	if (!e->opts.out)
		e->opts.out = stderr;
	/* Asleep for most of it: done by the time the load asks (hwbp.h). */
	if (!o->kernel)
		hwbp__user_traps_start();
	/* -v: info, -vv: debug, libbpf's too. */
	kcsand__set_verbose(o->verbose);
	libbpf_set_print(libbpf_print);
	e->sym = symbolizer__new();
	e->dedup = dedup__new();
	e->unwind = o->kernel ? NULL : unwinder__new();
	if (!e->sym || !e->dedup || (!o->kernel && !e->unwind)) {
		engine__close(e);
		return -ENOMEM;
	}
	if (o->marks_file) {
		int err = mark_rules__load(o->marks_file, &e->marks);

		if (err) {
			engine__close(e);
			return err;
		}
	}
	uname(&u);
	snprintf(e->system, sizeof(e->system), "kcsand %s (%s) %s", KCSAND_VERSION,
		 o->kernel ? "kernel" : "user", u.release);
	*out = e;
	return 0;
}

/* Kernel text symbols: the probed functions, and every kernel frame of a report. */
static int load_ksyms(struct engine *e)
{
	int err;

	if (e->ksyms)
		return 0;
	e->ksyms = ksyms__load();
	if (!e->ksyms) {
		err = -errno;
		pr_warn("cannot read /proc/kallsyms: %s\n",
			err == -EPERM ? "addresses are hidden (kptr_restrict)" : strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Reports taken from the ring buffer in one poll.  libbpf's consumer goes
 * on while the producers keep adding, and a racy target adds hundreds a
 * second: without a bound, one poll could run for as long as the races
 * went on, the queue grew with it, and the control socket went unanswered.
 * Past the bound the rest waits in the ring buffer, and what does not fit
 * there is counted as dropped (records_dropped), as KCSAN drops a report
 * it has no room for.
 */
#define ENGINE_BATCH		256
#define ENGINE_BATCH_FULL	(-EAGAIN)	/* on_event's stop, not an error */

/* A stack copy, kept for engine_process_ustacks(): unwinding is no work for the callback. */
static int queue_ustack(struct engine *e, const struct kcsand_ustack *rec)
{
	if (!e->unwind)
		return 0;
	if (ARRAY_RESERVE(e->ustacks, e->cap_ustacks, e->nr_ustacks, 16))
		return 0;
	memcpy(&e->ustacks[e->nr_ustacks++], rec, sizeof(*rec));
	return e->nr_ustacks >= ENGINE_BATCH ? ENGINE_BATCH_FULL : 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct engine *e = ctx;
	const struct kcsand_report *rec = data;
	struct kcsand_report paired;

	/* A hardware watchpoint's trap: a report once paired with its escalation. */
	if (len >= sizeof(struct kcsand_hw_decode) && rec->type == KCSAND_REC_HW_DECODE) {
		hwbp__decode(e->hw, e->sym, data);
		return 0;
	}
	if (len >= sizeof(struct kcsand_ustack) && rec->type == KCSAND_REC_USTACK)
		return queue_ustack(e, data);
	if (len >= sizeof(struct kcsand_hb_watch) && rec->type == KCSAND_REC_HB_WATCH) {
		/* The watches' program, at the first read offered (late_load.h). */
		late_load__start_watch(e->late);
		hwbp__hb_watch(e->hw, data);
		return 0;
	}
	if (len >= sizeof(struct kcsand_hw_access) && rec->type == KCSAND_REC_HW_ACCESS) {
		if (!hwbp__pair(e->hw, data, &paired))
			return 0;
		rec = &paired;
	} else if (len < sizeof(*rec) || rec->type != KCSAND_REC_REPORT) {
		return 0;
	}
	if (ARRAY_RESERVE(e->queue, e->cap_queued, e->nr_queued, 16))
		return 0;
	memcpy(&e->queue[e->nr_queued++], rec, sizeof(*rec));
	/* libbpf has consumed this record: stopping here loses nothing. */
	return e->nr_queued >= ENGINE_BATCH ? ENGINE_BATCH_FULL : 0;
}

/*
 * Kernel mode: the sites' program of the way they are sampled (kprobes or
 * code breakpoints), when the start knows of sites; without any (a service
 * given kernel targets later, --watch alone) neither.  What a run needs
 * later is loaded then (engine_late_skel()): on the 6.1 kernel of the test
 * guest kcsand_kxbp alone took 11 s of a start that probed by kprobes.
 */
static void select_kernel_programs(struct engine *e, struct kcsand_bpf *skel)
{
	bool breakpoints = e->nr_cookies && engine_use_breakpoints(e);

	bpf_program__set_autoload(skel->progs.kcsand_uprobe, false);
	bpf_program__set_autoload(skel->progs.kcsand_uprobe_multi, false);
	bpf_program__set_autoload(skel->progs.kcsand_hwbp, false);
	/* User mode's hot turns: kernel mode samples by kcsand_kxbp. */
	bpf_program__set_autoload(skel->progs.kcsand_xbp, false);
	bpf_program__set_autoload(skel->progs.kcsand_hb_watch, false);
	bpf_program__set_autoload(skel->progs.kcsand_kprobe, e->nr_cookies && !breakpoints);
	bpf_program__set_autoload(skel->progs.kcsand_kxbp, breakpoints);
	/*
	 * A watch's or an escalation's: with the others when the run has sites
	 * (a race of unknown origin escalates at once: loaded then, the
	 * verification's seconds would let the writer go) or watches from its
	 * start; else at the first one (trap_program()).
	 */
	bpf_program__set_autoload(skel->progs.kcsand_hwbp_kernel, e->nr_cookies || e->opts.watch);
}

/*
 * The programs of the mode (and of the kernel's uprobe flavour); the others
 * stay unloaded: verifying a program costs 10 to 200 ms, which a run of a
 * short program pays in full.
 */
static void select_programs(struct engine *e, struct kcsand_bpf *skel)
{
#define TP_PROG(prog, tp) skel->progs.prog,
	struct bpf_program *hb[] = { skel->progs.kcsand_hb_entry, skel->progs.kcsand_hb_return,
				     HISTORY_TRACEPOINTS(TP_PROG) };
#undef TP_PROG

	if (e->opts.kernel || !e->opts.history)
		for (size_t i = 0; i < sizeof(hb) / sizeof(hb[0]); i++)
			bpf_program__set_autoload(hb[i], false);
	if (e->opts.kernel) {
		select_kernel_programs(e, skel);
		return;
	}
	/*
	 * The hot turns' program loads once the targets have run a while, or
	 * at the first turn (late_load.h, take_late_program()).  The
	 * watchpoints' loads now: loaded at the first escalation, its
	 * verification (36 s in the test guest at load 20) outlasted the races
	 * it was to catch.  It loads even where debug registers turn out not
	 * to trap (a rare hypervisor; nothing then arms it): whether they do
	 * is checked beside the load (hwbp__user_traps_start()), not before.
	 */
	bpf_program__set_autoload(skel->progs.kcsand_xbp, false);
	bpf_program__set_autoload(skel->progs.kcsand_hb_watch, false);
	if (e->opts.traps_later)
		bpf_program__set_autoload(skel->progs.kcsand_hwbp, false);
	if (e->multi) {
		bpf_program__set_expected_attach_type(skel->progs.kcsand_uprobe_multi,
						      KCSAND_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_autoload(skel->progs.kcsand_uprobe, false);
	} else {
		bpf_program__set_autoload(skel->progs.kcsand_uprobe_multi, false);
	}
	bpf_program__set_autoload(skel->progs.kcsand_kprobe, false);
	bpf_program__set_autoload(skel->progs.kcsand_pair_poll, false);
	bpf_program__set_autoload(skel->progs.kcsand_pair_trap, false);
	bpf_program__set_autoload(skel->progs.kcsand_hwbp_kernel, false);
	bpf_program__set_autoload(skel->progs.kcsand_kxbp, false);
}

/* The watchpoints' trap program, at the first watch or escalation (hwbp__set_loader). */
static int trap_program(void *ctx, struct bpf_program **prog)
{
	struct engine *e = ctx;
	struct kcsand_bpf *skel;
	int err = engine_late_skel(e, e->opts.kernel ? "kcsand_hwbp_kernel" : "kcsand_hwbp",
				   "hardware watchpoints", &skel);

	if (!err)
		*prog = e->opts.kernel ? skel->progs.kcsand_hwbp_kernel : skel->progs.kcsand_hwbp;
	return err;
}

/* With the object loaded: process tracking, kernel symbols, watches, history, reports. */
static int start_loaded(struct engine *e)
{
	struct kcsand_bpf *skel = e->skel;
	int err;

	e->tp_links[0] = bpf_program__attach(skel->progs.kcsand_fork);
	e->tp_links[1] = bpf_program__attach(skel->progs.kcsand_exit);
	if (!e->tp_links[0] || !e->tp_links[1]) {
		err = -errno;
		pr_warn("cannot attach the sched_process_fork/exit tracepoints: %s\n",
			strerror(-err));
		return err;
	}
	/* Kernel mode with only --watch probes nothing, but its reports have kernel frames. */
	if (e->opts.kernel) {
		err = engine_heartbeat_start(skel, &e->heartbeat);
		if (!err)
			err = load_ksyms(e);
		if (err)
			return err;
	}
	err = hwbp__new(skel, e->opts.kernel, &e->hw);
	if (err)
		return err;
	hwbp__set_loader(e->hw, trap_program, e);
	hwbp__set_site_flags(e->hw, engine_site_flags_at, e);
	if (e->opts.kernel)
		hwbp__limit(e->hw, KCSAND_HW_SLOTS - e->opts.free_regs);
	if (e->opts.history && !e->opts.kernel) {
		err = history__new(skel, e->multi, &e->hist);
		hb_pace__init(&e->hb_pace);
		hb_pace__init(&e->hb_watch_pace);
		if (err)
			return err;
		hwbp__hb_init(e->hw, e->opts.params.v[PARAM_HISTORY_WATCHES]);
	}
	e->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, e, NULL);
	if (!e->rb) {
		err = -errno;
		pr_warn("cannot open the ring buffer: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/*
 * kcsand_bpf__load(), and with -v which programs it verified and how long
 * that took: most of a start on an older kernel's verifier.
 */
static int load_selected(struct kcsand_bpf *skel)
{
	uint64_t t0 = clock__now_ns();
	char names[512] = "";
	size_t len = 0;
	struct bpf_program *p;
	int err = kcsand_bpf__load(skel);

	if (err) {
		pr_warn("failed to load BPF object: %s\n", strerror(-err));
		return err;
	}
	bpf_object__for_each_program(p, skel->obj)
		if (bpf_program__autoload(p) && len < sizeof(names))
			len += snprintf(names + len, sizeof(names) - len, " %s",
					bpf_program__name(p));
	pr_info("loaded the BPF object in %.1f ms, programs:%s\n",
		(clock__now_ns() - t0) / 1e6, names);
	return 0;
}

/* Load the BPF object and attach the process-tracking tracepoints. */
static int load(struct engine *e)
{
	struct kcsand_bpf *skel;
	int err;

	e->multi = !e->opts.force_per_site_links && uprobe_multi__supported();
	skel = kcsand_bpf__open();
	if (!skel) {
		err = -errno;
		pr_warn("failed to open BPF object: %s\n", strerror(-err));
		return err;
	}
	e->skel = skel;
	e->capacity = e->opts.max_sites > e->nr_cookies ? e->opts.max_sites : e->nr_cookies;
	if (!e->capacity)
		e->capacity = 1;
	bpf_map__set_max_entries(skel->maps.sites, e->capacity);
	bpf_map__set_max_entries(skel->maps.events,
				 ring_bytes(e->opts.params.v[PARAM_RING_BUFFER_KB]));
	bpf_params_fill(&skel->data->params, &e->opts);
	/* Kernel mode: kprobes stay registered, the sampler flips a bitmap the probes test. */
	err = sampler__prepare(skel, e->capacity, e->opts.kernel);
	if (err) {
		pr_warn("cannot size the site statistics: %s\n", strerror(-err));
		return err;
	}
	select_programs(e, skel);
	if (e->opts.history && !e->opts.kernel)
		history__before_load(skel, e->multi);
	err = load_selected(skel);
	if (err)
		return err;
	if (!e->opts.kernel && !hwbp__no_traps_why() && late_load__new(skel, &e->late))
		pr_warn("hot turns use uprobes on every thread: no memory to load their program\n");
	return start_loaded(e);
}

void engine__settle(struct engine *e)
{
	link_close__join(&e->calib_close);
}

int engine__load_traps(struct engine *e)
{
	return e->hw ? hwbp__load_trap(e->hw) : 0;
}

int engine__start(struct engine *e)
{
	int err = load(e);

	return err ? err : engine_attach_added(e);
}

int engine__add_pid(struct engine *e, pid_t pid)
{
	__u32 key = pid, one = 1;

	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.targets), &key, &one, BPF_ANY)) {
		int err = -errno;

		pr_warn("cannot trace pid %d: %s\n", pid, strerror(-err));
		return err;
	}
	/* The executable is the first object: its libraries hold the sync functions. */
	if (e->hist && e->nr_objs)
		return history__add_process(e->hist, pid, e->objs[0].obj->path);
	return 0;
}

int engine__remove_pid(struct engine *e, pid_t pid)
{
	__u32 key = pid;

	return bpf_map_delete_elem(bpf_map__fd(e->skel->maps.targets), &key) ? -errno : 0;
}

double engine_sync_cost_ns(const struct engine *e)
{
	struct sampler_stats st;

	if (!e->hist || !e->sampler)
		return 0;
	sampler__get_stats(e->sampler, &st);
	return history__cost_ns(e->hist, st.trap_ns);
}

/*
 * The history's watches (hw/hb_watch.c) spend the history's share with its
 * sync probes, and go first: a pacer of their own (pace.c) is charged the
 * two costs together, so its credit runs out before the sync probes' own,
 * and it closes the watches alone; it opens them again as the sync probes'
 * opens those.  Paced as one, the history paused with them: a thread that
 * polled with sched_yield() under a watch spent the whole share, and
 * free_atomic_ptr_late's history checked nothing at all in every run.
 */
static void pace_watches(struct engine *e, double native_ns, double sync_ns, double budget)
{
	unsigned long long sw = hwbp__hb_switches(e->hw);
	double cost;

	/* Each switch at the price of when it was counted: `set` changes the next ones'. */
	e->hb_switch_ns += (double)(sw - e->hb_switches) *
			   e->opts.params.v[PARAM_HISTORY_SWITCH_US] * 1e3;
	e->hb_switches = sw;
	cost = sync_ns + e->hb_switch_ns;

	switch (hb_pace__step(&e->hb_watch_pace, native_ns, cost, budget)) {
	case HB_PACE_PAUSE:
		e->hb_watches_shed = true;
		hwbp__hb_pause(e->hw, true);
		pr_debug("history: watches off: over the history's share with its sync probes\n");
		break;
	case HB_PACE_RESUME:
		e->hb_watches_shed = false;
		if (!e->sync_sites_off)
			hwbp__hb_pause(e->hw, false);
		pr_debug("history: watches on again\n");
		break;
	case HB_PACE_KEEP:
		break;
	}
}

/*
 * The sync probes on or off, from their cost against the budget (history.h,
 * pace.c), at every poll: their cost is read from counters at once, the
 * targets' own time as the sampler last measured it.
 */
static void pace_history(struct engine *e)
{
	double budget = engine_share_pct(e) / 100.0, sync_ns;
	struct sampler_stats st;

	if (!e->hist || !e->sampler)
		return;
	sampler__get_stats(e->sampler, &st);
	sync_ns = history__cost_ns(e->hist, st.trap_ns);
	pace_watches(e, st.native_ns, sync_ns, budget);
	switch (hb_pace__step(&e->hb_pace, st.native_ns, sync_ns, budget)) {
	case HB_PACE_PAUSE:
		history__pause(e->hist);
		hwbp__hb_pause(e->hw, true);	/* a paused history checks nothing they catch */
		engine_rearm_sync(e, false);	/* its sync sites go back to the sampler */
		pr_debug("history: sync probes and watches off: over their share of the budget\n");
		break;
	case HB_PACE_RESUME:
		/* Its sync sites armed first: the new generation must see all of them. */
		if (engine_rearm_sync(e, true) || history__resume(e->hist)) {
			engine_rearm_sync(e, false);
			break;
		}
		if (!e->hb_watches_shed)
			hwbp__hb_pause(e->hw, false);
		pr_debug("history: sync probes on, history restarted\n");
		break;
	case HB_PACE_KEEP:
		break;
	}
}

/*
 * The targets' CPU time (probes included) after which the hot turns'
 * program starts to load, if no turn asked for it before: a third of the
 * cold start's credit (sampler_start_credit_ms), so that it is in by the
 * first turns of a run long enough to take them, while a run shorter than
 * that (kcsanctl run -- true, most test programs) never verifies it.
 */
#define XBP_LOAD_AFTER_CPU_MS	100

/* The hot turns' program: its load started in time, then taken once loaded. */
static void take_late_program(struct engine *e)
{
	struct sampler_stats st;
	struct bpf_program *prog;
	double trap_ns;

	if (e->sampler && !late_load__xbp_started(e->late)) {
		sampler__get_stats(e->sampler, &st);
		if (st.cpu_ns >= XBP_LOAD_AFTER_CPU_MS * 1e6)
			late_load__start_xbp(e->late);
	}

	/* The history's watches' program comes after (bpf/history_watch.bpf.h). */
	if (late_load__take_watch(e->late, &prog) && prog && e->hist)
		hwbp__hb_enable(e->hw, prog);
	if (!late_load__take(e->late, &prog, &trap_ns))
		return;
	if (prog && e->tt)
		thread_turn__set_prog(e->tt, prog);
	sampler__set_xbp_trap_ns(e->sampler, trap_ns);
}

/* One batch of reports; true when the batch filled and more may be waiting. */
static bool take_reports(struct engine *e, int timeout_ms, int *err)
{
	int ret;

	*err = 0;
	if (!e->rb)
		return false;
	ret = ring_buffer__poll(e->rb, timeout_ms);
	if (ret == ENGINE_BATCH_FULL)
		return true;
	if (ret < 0 && ret != -EINTR)
		*err = ret;
	return false;
}

int engine__poll(struct engine *e, int timeout_ms)
{
	int err, due = engine__timeout_ms(e);
	uint64_t t0;
	bool more;

	if (due >= 0 && (timeout_ms < 0 || due < timeout_ms))
		timeout_ms = due;
	t0 = clock__now_ns();
	more = take_reports(e, timeout_ms, &err);
	engine_process_ustacks(e);
	for (size_t i = 0; i < e->nr_queued; i++)
		engine_process_report(e, &e->queue[i]);
	e->nr_queued = 0;
	/* The ring emptied after t0: what processes that exited before t0 sent is out. */
	if (!more)
		unwinder__release(e->unwind, t0);
	engine_release_held(e, false);
	engine_drop_changed(e);
	/* After the reports queued so far: their processes' maps were needed until now. */
	if (clock__now_ns() - e->swept_ns >= SYM_SWEEP_NS) {
		symbolizer__forget_exited(e->sym);
		unwinder__forget_exited(e->unwind);
		e->swept_ns = clock__now_ns();
	}
	take_late_program(e);
	if (e->sampler)
		sampler__tick(e->sampler);
	engine_arm_learned(e);
	/*
	 * A new process (a target's next run, a child) starts with a start's
	 * credit; under trace_all (a service target's runs) its sites start
	 * cold too.
	 */
	if (e->hist && history__poll(e->hist) > 0) {
		uint64_t now = clock__now_ns();
		bool fresh = hb_pace__new_run(&e->hb_pace, now);

		hb_pace__new_run(&e->hb_watch_pace, now);
		if (fresh && e->sampler && e->opts.trace_all)
			sampler__new_run(e->sampler);
	}
	pace_history(e);
	hwbp__tick(e->hw);
	return err < 0 ? err : 0;
}

int engine__timeout_ms(const struct engine *e)
{
	/* Code breakpoints keep their own time (kbp_mover.c's movers). */
	int t = e->sampler ? sampler__timeout_ms(e->sampler) : -1;
	int h = engine_held_next_ms(e);

	return h >= 0 && (t < 0 || h < t) ? h : t;
}

void engine__flush(struct engine *e)
{
	int err;

	/* Everything the ring buffer holds, a batch at a time. */
	while (take_reports(e, 0, &err)) {
		engine_process_ustacks(e);
		for (size_t i = 0; i < e->nr_queued; i++)
			engine_process_report(e, &e->queue[i]);
		e->nr_queued = 0;
	}
	engine__poll(e, 0);
	engine_release_held(e, true);
}

int engine__watch(struct engine *e, pid_t pid, const char *path, const char *spec)
{
	return e->hw ? hwbp__watch(e->hw, pid, path, spec) : -EINVAL;
}

int engine__check_watch(const struct engine *e, const char *spec)
{
	return hwbp__check_watch(e->opts.kernel, spec);
}

int engine__unwatch(struct engine *e, int slot)
{
	return hwbp__unwatch(e->hw, slot);
}

int engine__watch_info(const struct engine *e, int slot, struct hwbp_slot_info *out)
{
	return hwbp__slot_info(e->hw, slot, out);
}

int engine__hw_slots_in_use(const struct engine *e)
{
	return hwbp__slots_in_use(e->hw);
}

bool engine__pid_traced(const struct engine *e, pid_t pid)
{
	__u32 key = pid, v;

	return e->skel && !bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.targets), &key, &v);
}

void engine__close(struct engine *e)
{
	struct link_close lc = { .n = 0 };

	if (!e)
		return;
	sampler__free(e->sampler);
	pairs__free(e->pairs);
	kbp__free(e->kbp);
	thread_turn__free(e->tt);
	engine__settle(e);
	/* Kernel probes check nothing from here: their detach takes a grace period each. */
	engine_heartbeat_stop(e->heartbeat);
	/*
	 * Every uprobe_multi link at once, sync probes and access probes, so
	 * that their grace periods overlap (util/link_close.h); the history
	 * stops remembering first.
	 */
	history__hand_links(e->hist, &lc);
	for (size_t i = 0; i < e->nr_objs; i++) {
		struct engine_object *eo = &e->objs[i];

		for (size_t c = 0; c < eo->nr_chunks && eo->chunk_fd; c++)
			link_close__add(&lc, &eo->chunk_fd[c]);
		link_close__add(&lc, &eo->turn_fd);
	}
	link_close__all(&lc);
	/* After the closes: a short run ends while the hot turns' program may still load. */
	late_load__free(e->late);
	history__free(e->hist);
	free(e->sampled);
	hwbp__free(e->hw);
	ring_buffer__free(e->rb);
	for (size_t i = 0; i < e->nr_objs; i++) {
		engine_detach_object(&e->objs[i]);
		target_obj__free(e->objs[i].obj);
		free(e->objs[i].orig_flags);
		free(e->objs[i].probe_refused);
	}
	bpf_link__destroy(e->tp_links[0]);
	bpf_link__destroy(e->tp_links[1]);
	engine_late_free(e);
	kcsand_bpf__destroy(e->skel);
	symbolizer__free(e->sym);
	unwinder__free(e->unwind);
	free(e->ustacks);
	ksyms__free(e->ksyms);
	mark_rules__free(e->marks);
	dedup__free(e->dedup);
	free(e->objs);
	free(e->site_obj);
	free(e->queue);
	free(e->held);
	free(e->learn_held);
	free(e);
}

int engine__epoll_fd(const struct engine *e)
{
	return e->rb ? ring_buffer__epoll_fd(e->rb) : -1;
}

void engine__set_trace_all(struct engine *e, bool on)
{
	e->opts.trace_all = on;
	if (e->skel)
		*(volatile __u32 *)&e->skel->data->params.trace_all = on;
}
