// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the engine tells of a run: the counters, the sites and their marks,
 * the summary at exit (-v: every counter) and its brief form, the warnings
 * that go before it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "report/dedup.h"
#include "mark/mark.h"
#include "hw/hwbp.h"
#include "history/history.h"
#include "sampler/kbp.h"
#include "hw/pair.h"
#include "sampler/sampler.h"
#include "report/unwind.h"
#include "util/json.h"
#include "engine_int.h"
#include "kcsand.skel.h"

unsigned long engine__nr_reports(const struct engine *e)
{
	return e->nr_reports;
}

size_t engine__nr_sites(const struct engine *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->nr_objs; i++)
		if (!e->objs[i].removed)
			n += e->objs[i].obj->sites.n;
	return n;
}

void engine__print_mark_counts(const struct engine *e, FILE *out)
{
	uint64_t counts[MARK_REASON_COUNT] = {}, data_race = 0;

	for (size_t i = 0; i < e->nr_objs; i++)
		mark__count(e->objs[i].obj->sites.v, e->objs[i].obj->sites.n, counts, &data_race);
	fprintf(out, "kcsand: marked sites:");
	for (uint32_t r = MARK_NONE + 1; r < MARK_REASON_COUNT; r++)
		fprintf(out, "%s %llu %s", r == MARK_NONE + 1 ? "" : ",",
			(unsigned long long)counts[r], mark_reason__name(r));
	fprintf(out, "; %llu of them data_race; %llu plain\n", (unsigned long long)data_race,
		(unsigned long long)counts[MARK_NONE]);
}

/*
 * A kernel target's functions, their sizes and how many bytes of each were
 * decoded: all of st_size from a debug file ("symbol table"), or of
 * kallsyms' upper bound up to padding no branch passes ("kallsyms bound").
 */
static void print_kernel_funcs(const struct target_obj *o, FILE *out)
{
	for (size_t i = 0; i < o->nr_funcs; i++) {
		const struct elf_func *f = &o->funcs[i];

		fprintf(out, "kcsand: func %s 0x%llx %s size 0x%llx decoded 0x%llx (%s)\n",
			o->path, (unsigned long long)f->vaddr, f->name,
			(unsigned long long)f->size, (unsigned long long)f->decoded,
			f->bounded ? "kallsyms bound" : "symbol table");
	}
}

void engine__print_sites(const struct engine *e, FILE *out)
{
	for (size_t oi = 0; oi < e->nr_objs; oi++) {
		const struct target_obj *o = e->objs[oi].obj;

		if (e->opts.kernel)
			print_kernel_funcs(o, out);

		for (size_t i = 0; i < o->sites.n; i++) {
			const struct site *s = &o->sites.v[i];
			const struct elf_func *f = target_obj__site_func(o, s);
			unsigned int fl = s->desc.flags;
			const char *acc = !(fl & KCSAND_SITE_WRITE) ? "read" :
					  (fl & KCSAND_SITE_READ) ? "read-write" : "write";

			fprintf(out, "kcsand: site %s 0x%llx %s+0x%llx %s %u %s", o->path,
				(unsigned long long)s->vaddr, f ? f->name : "?",
				(unsigned long long)(f ? s->vaddr - f->vaddr : 0), acc,
				s->desc.size, (fl & KCSAND_SITE_DATA_RACE) ? "data_race" :
				(fl & KCSAND_SITE_MARKED) ? "marked" : "plain");
			if (s->reason != MARK_NONE)
				fprintf(out, " (%s)", mark_reason__name(s->reason));
			fputc('\n', out);
		}
	}
	engine__print_mark_counts(e, out);
}

void engine__counters(const struct engine *e, uint64_t out[KCSAND_CTR_COUNT])
{
	for (int i = 0; i < KCSAND_CTR_COUNT; i++)
		out[i] = e->skel ? e->skel->bss->counters[i] : 0;
	/* What the decoder could not encode never reaches BPF. */
	for (size_t i = 0; i < e->nr_objs; i++)
		out[KCSAND_CTR_UNENCODABLE_ACCESSES] += e->objs[i].obj->stats.unencodable;
	/* Two atomic accesses, known since the consumer counted them (pipeline.c): no race. */
	out[KCSAND_CTR_DATA_RACES] -= e->learned_late_wp;
}

uint64_t engine__hits(const struct engine *e)
{
	int ncpu = libbpf_num_possible_cpus();
	struct kcsand_cpu_state *v;
	__u32 zero = 0;
	uint64_t sum = 0;

	if (!e->skel || ncpu <= 0)
		return 0;
	/* A disarmed kernel site's hit ran no check: the sampler counted it. */
	if (e->sampler) {
		struct sampler_stats st;

		sampler__get_stats(e->sampler, &st);
		sum = st.unarmed_hits;
	}
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(e->skel->maps.cpu_state), &zero, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i].hits;
	free(v);
	return sum;
}

#define FIGURE_NAME(ID, name) [ENGINE_FIG_##ID] = #name,
static const char *const figure_names[] = {
	ENGINE_FIGURES(FIGURE_NAME)
};
#undef FIGURE_NAME

_Static_assert(sizeof(figure_names) / sizeof(figure_names[0]) == ENGINE_FIG_COUNT,
	       "a name for every figure");

const char *engine_figure__name(enum engine_figure f)
{
	return (unsigned int)f < ENGINE_FIG_COUNT ? figure_names[f] : "?";
}

void engine__figures(const struct engine *e, uint64_t out[ENGINE_FIG_COUNT])
{
	out[ENGINE_FIG_SITES] = engine__nr_sites(e);
	out[ENGINE_FIG_HITS] = engine__hits(e);
	out[ENGINE_FIG_REPORTS] = e->nr_reports;
	out[ENGINE_FIG_DEDUP] = e->suppressed_dedup;
	out[ENGINE_FIG_FILTER] = e->suppressed_filter;
	out[ENGINE_FIG_NO_CHANGE] = e->suppressed_no_change;
}

int engine__hw_stats(const struct engine *e, struct hwbp_stats *out)
{
	if (!e->hw)
		return -ENOENT;
	hwbp__get_stats(e->hw, out);
	return 0;
}

int engine__history_stats(const struct engine *e, struct history_stats *out)
{
	if (!e->hist)
		return -ENOENT;
	history__get_stats(e->hist, out);
	return 0;
}

size_t engine__nr_cookies(const struct engine *e)
{
	return e->nr_cookies;
}

int engine__sampler_stats(const struct engine *e, struct sampler_stats *out)
{
	if (!e->sampler)
		return -ENOENT;
	sampler__get_stats(e->sampler, out);
	return 0;
}

/*
 * Where the summary's figures go: " name: value" pairs on the line that
 * starts "kcsand: N reports" (-v, --stats), or the members of one JSON
 * object (--json).  Both come from the same calls, so the two name the same
 * figures; the warnings before the line are sentences, an array in JSON.
 */
struct summary_out {
	FILE *out;
	struct json_object *obj;	/* JSON when not NULL */
	struct json_object *warnings;
};

static void put_u64(struct summary_out *so, const char *name, unsigned long long v)
{
	if (so->obj)
		json__add(so->obj, name, json_object_new_uint64(v));
	else
		fprintf(so->out, " %s: %llu", name, v);
}

/* A figure with a fraction: the text rounds it as fmt says ("%.0f%%"), JSON keeps it. */
static void put_double(struct summary_out *so, const char *name, const char *fmt, double v)
{
	if (so->obj) {
		json__add(so->obj, name, json_object_new_double(v));
		return;
	}
	fprintf(so->out, " %s: ", name);
	fprintf(so->out, fmt, v);
}

/* Several numbers in one figure: "a/b/c" in the text (sep between them), an array in JSON. */
static void put_list(struct summary_out *so, const char *name, const char *sep,
		     const unsigned long long *v, int n)
{
	struct json_object *a = so->obj ? json_object_new_array() : NULL;

	if (!so->obj)
		fprintf(so->out, " %s: ", name);
	for (int i = 0; i < n; i++) {
		if (a)
			json_object_array_add(a, json_object_new_uint64(v[i]));
		else
			fprintf(so->out, "%s%llu", i ? sep : "", v[i]);
	}
	if (a)
		json__add(so->obj, name, a);
}

static void put_pair(struct summary_out *so, const char *name, const char *sep,
		     unsigned long long a, unsigned long long b)
{
	const unsigned long long v[2] = { a, b };

	put_list(so, name, sep, v, 2);
}

__attribute__((format(printf, 2, 3)))
static void put_warning(struct summary_out *so, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (so->obj)
		json_object_array_add(so->warnings, json__string(line));
	else
		fprintf(so->out, "kcsand: %s\n", line);
}

static void put_sampler(struct engine *e, struct summary_out *so)
{
	struct sampler_stats st;
	uint64_t f[SAMPLER_FIG_COUNT];

	sampler__get_stats(e->sampler, &st);
	/* What `stats` shows too, by its names (sampler.h). */
	sampler_stats__figures(&st, f);
	for (int i = 0; i < SAMPLER_FIG_COUNT; i++)
		if (sampler_figure__shown(i, &st))
			put_u64(so, sampler_figure__name(i), f[i]);
	if (st.kernel)
		put_u64(so, "unarmed_hits", st.unarmed_hits);
	else
		put_u64(so, "hot_turns_one_thread", st.xbp_turns);
	put_double(so, "trap_ns", "%.0f", st.trap_ns);
	/* Sites at each backoff level, 100% / 10% / 1% / 0.1% (sampler.h). */
	put_list(so, "site_levels", "/", (const unsigned long long[]){ st.levels[0],
		 st.levels[1], st.levels[2], st.levels[3] }, 4);
	/* What the warm-up and level 0 took, and how often their credit ran out. */
	if (!st.kernel) {
		put_double(so, "cold_start_ms", "%.0f", st.cold_ms);
		put_u64(so, "cold_credit_outs", st.cold_outs);
	}
	put_double(so, "cpu_ms", "%.0f", st.cpu_ns / 1e6);
	put_double(so, "native_cpu_ms", "%.0f", st.native_ns / 1e6);
}

static void put_kbp(struct engine *e, struct summary_out *so)
{
	struct kbp_stats ks;

	kbp__stats(e->kbp, &ks);
	put_pair(so, "breakpoint_sites_sampled", "/", ks.sampled, ks.sites);
	put_u64(so, "breakpoint_cycles", ks.cycles);
	put_pair(so, "breakpoint_regs", "x", ks.nregs, ks.ncpus);
	put_u64(so, "breakpoint_traps", ks.hits);
	put_u64(so, "breakpoint_checks", ks.checked);
	put_u64(so, "breakpoint_refused", ks.refused);
	put_double(so, "breakpoint_move_us", "%.0f",
		   ks.retargets ? ks.retarget_ns / 1e3 / ks.retargets : 0.0);
	put_u64(so, "breakpoint_period_us", ks.period_us);
	put_pair(so, "breakpoint_period_range_us", "-", ks.min_period_us, ks.max_period_us);
	put_u64(so, "breakpoint_min_regs", ks.min_regs);
	put_double(so, "breakpoint_trap_ns", "%.0f", ks.trap_ns);
	put_double(so, "breakpoint_overhead", "%.1f%%", ks.overhead * 100);
	put_double(so, "breakpoint_movers_cpu", "%.1f%%", ks.elapsed_ns && ks.ncpus ?
		   100.0 * ks.movers_cpu_ns / ks.elapsed_ns / ks.ncpus : 0.0);
	/* Coverage: sites that ran in a placement, and that a check ran at. */
	put_pair(so, "breakpoint_sites_ran", "/", ks.ran, ks.sites);
	put_pair(so, "breakpoint_sites_checked", "/", ks.checked_sites, ks.sites);
	put_u64(so, "breakpoint_placements", ks.placements);
	put_u64(so, "breakpoint_fired", ks.fired);
	put_u64(so, "breakpoint_timeouts", ks.timeouts);
	put_u64(so, "breakpoint_linger_capped", ks.capped);
}

/* The data breakpoints of kernel breakpoint mode's pairs (hw/pair.h). */
/*
 * Kernel breakpoint mode's data breakpoints: pair_cpus, the counters by their
 * names (pair_arm_ns is the armed requests' summed wait), pair_arm_us (its
 * mean), pair_retarget_us (one register's move) and pair_refused.
 */
static void put_pairs(struct engine *e, struct summary_out *so)
{
	struct pairs_stats st;
	const uint64_t *v = st.counters;

	pairs__stats(e->pairs, &st);
	put_u64(so, "pair_cpus", st.cpus);
#define PUT_ONE(ID, name) put_u64(so, #name, v[KCSAND_PAIR_CTR_##ID]);
	KCSAND_PAIR_COUNTERS(PUT_ONE)
#undef PUT_ONE
	put_double(so, "pair_arm_us", "%.0f", v[KCSAND_PAIR_CTR_ARMED] ?
		   v[KCSAND_PAIR_CTR_ARM_NS] / 1e3 / v[KCSAND_PAIR_CTR_ARMED] : 0.0);
	put_double(so, "pair_retarget_us", "%.0f",
		   st.retargets ? st.retarget_ns / 1e3 / st.retargets : 0.0);
	put_u64(so, "pair_refused", st.refused);
}

static void put_hw(struct engine *e, struct summary_out *so)
{
	struct hwbp_stats hw_st;

	hwbp__get_stats(e->hw, &hw_st);
#define PUT_HW(field, name) put_u64(so, #name, hw_st.field);
	HWBP_STATS_SHOWN(PUT_HW)
#undef PUT_HW
	if (e->opts.kernel) {
		put_u64(so, "hw_probed", hw_st.probed);
	} else {
		put_u64(so, "hw_decoded", hw_st.decoded);
		put_u64(so, "hw_undecoded", hw_st.undecoded);
		put_u64(so, "hw_outside", hw_st.outside);
		put_u64(so, "hw_history_watches", hw_st.hb_watches);
		put_u64(so, "hw_history_spent", hw_st.hb_spent);
		put_u64(so, "hw_history_no_slot", hw_st.hb_no_slot);
		put_u64(so, "hw_history_switches", hw_st.hb_switches);
		put_u64(so, "hw_history_closed", hw_st.hb_paused);
		put_u64(so, "hw_history_marked", e->history_watch_marked);
		put_u64(so, "hw_history_undecoded", e->history_watch_undecoded);
	}
}

/* -v: what the CFI unwind of the stack copies cost, and how often a side had its frames. */
static void print_unwind_summary(const struct engine *e, FILE *out)
{
	struct unwind_stats st;

	uint64_t c[KCSAND_CTR_COUNT];

	unwinder__stats(e->unwind, &st);
	engine__counters(e, c);
	fprintf(out, "kcsand: stacks: %lu copies unwound by CFI (%.1f KiB each, %.1f frames, "
		     "%.0f us each; %lu with one frame only, %lu cut where the %d KiB copy ended); "
		     "%llu copies found no room in the ring buffer; %lu report sides had their "
		     "CFI frames, %lu had none and kept their frame-pointer walk\n",
		st.copies, st.copies ? st.bytes / 1024.0 / st.copies : 0.0,
		st.copies ? (double)st.frames / st.copies : 0.0,
		st.copies ? st.ns / 1e3 / st.copies : 0.0, st.failed, st.cut,
		KCSAND_USTACK_SIZE / 1024, (unsigned long long)c[KCSAND_CTR_STACK_COPIES_DROPPED],
		st.found, st.missed);
}

/* The history's figures (user mode with the history on). */
static void put_history(struct engine *e, struct summary_out *so)
{
	struct history_stats hb_st;

	history__get_stats(e->hist, &hb_st);
#define PUT_HB(ID, name) put_u64(so, #name, hb_st.ctr[KCSAND_HB_CTR_##ID]);
	HISTORY_STATS_SHOWN(PUT_HB)
#undef PUT_HB
	put_u64(so, "history_shadow_live", hb_st.ctr[KCSAND_HB_CTR_SHADOW_LIVE]);
	put_u64(so, "history_sync_pauses", hb_st.pauses);
	put_u64(so, "history_unclocked_hits", hb_st.ctr[KCSAND_HB_CTR_NO_SLOT]);
	put_u64(so, "history_slots_shared", hb_st.ctr[KCSAND_HB_CTR_SLOT_SHARED]);
	put_u64(so, "history_reports_dropped", e->history_unsound);
	put_u64(so, "history_forgotten", hb_st.ctr[KCSAND_HB_CTR_FORGET_OPS]);
}

/* The CFI unwind's figures: stacks cut where their copy ended, and how many. */
static void put_stacks(struct engine *e, struct summary_out *so)
{
	struct unwind_stats st;

	unwinder__stats(e->unwind, &st);
	put_u64(so, "stacks_unwound", st.copies);
	put_u64(so, "stacks_cut", st.cut);
}

static double cpu_factor(struct engine *e);

/* A program whose CPU time under the probes is this many times its own: see put_warnings(). */
#define SLOW_FACTOR	3.0

/*
 * Warnings, not counters: they go before the summary line, brief or not.
 * A program that ran SLOW_FACTOR times its native CPU time is said to: the
 * timeouts and watchdogs of a program under test start to fire around there.
 */
static void put_warnings(struct engine *e, struct summary_out *so, bool slow)
{
	double factor = cpu_factor(e);

	if (slow && factor >= SLOW_FACTOR)
		put_warning(so, "the program ran %.0fx its native CPU time under the probes "
			    "(--overhead-budget)", factor);
	if (e->hist && history__unclocked_hits(e->hist))
		put_warning(so, "history: threads got no clock (no slot could be joined, or the "
			    "thread table was full): %llu hits by them were not checked, and %lu "
			    "races the history found were dropped, as sync of those threads went unseen",
			    (unsigned long long)history__unclocked_hits(e->hist),
			    e->history_unsound);
	if (e->hist && history__lost_edges(e->hist))
		put_warning(so, "history: %llu releases could not raise an object's clock (other "
			    "threads kept changing it): %lu races the history found were dropped",
			    (unsigned long long)history__lost_edges(e->hist), e->history_unsound);
}

/* Every figure, in one order, to the text line or the JSON object. */
static void put_figures(struct engine *e, struct summary_out *so)
{
	uint64_t c[KCSAND_CTR_COUNT], f[ENGINE_FIG_COUNT];

	engine__counters(e, c);
	for (int i = 0; i < KCSAND_CTR_COUNT; i++)
		put_u64(so, counter__name(i), c[i]);
	/* Hits and reports begin the line (engine__print_summary()): the drops here. */
	engine__figures(e, f);
	for (int i = ENGINE_FIG_DEDUP; i < ENGINE_FIG_COUNT; i++)
		put_u64(so, engine_figure__name(i), f[i]);
	put_u64(so, "reports_watchpoint", e->nr_reports - e->nr_reports_history);
	put_u64(so, "reports_history", e->nr_reports_history);
	if (!e->opts.kernel)
		put_u64(so, "pairs_learned_atomic", e->learned_late);
	if (e->hist)
		put_history(e, so);
	if (e->kbp_mode) {
		put_u64(so, "unknown_origin_held", e->unknown_held);
		put_u64(so, "unknown_origin_folded", e->unknown_folded);
	}
	if (e->sampler)
		put_sampler(e, so);
	if (e->kbp)
		put_kbp(e, so);
	if (e->pairs)
		put_pairs(e, so);
	if (e->hw)
		put_hw(e, so);
	if (e->unwind)
		put_stacks(e, so);
}

/* -v's lines on the history and the stacks, before the summary, text or JSON. */
static void print_verbose_lines(struct engine *e, FILE *out)
{
	if (e->hist && e->opts.verbose)
		history__print(e->hist, out);
	if (e->unwind && e->opts.verbose)
		print_unwind_summary(e, out);
}

static void print_summary(struct engine *e, FILE *out)
{
	struct summary_out so = { .out = out };

	print_verbose_lines(e, out);
	put_warnings(e, &so, true);
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits;", e->nr_reports,
		e->nr_reports == 1 ? "" : "s", engine__nr_sites(e),
		(unsigned long long)engine__hits(e));
	put_figures(e, &so);
	fputc('\n', out);
}

static void print_summary_json(struct engine *e, FILE *out)
{
	struct json_object *root = json_object_new_object();
	struct summary_out so = {
		.out = out,
		.obj = json_object_new_object(),
		.warnings = json_object_new_array(),
	};

	print_verbose_lines(e, out);
	put_u64(&so, engine_figure__name(ENGINE_FIG_REPORTS), e->nr_reports);
	put_u64(&so, engine_figure__name(ENGINE_FIG_SITES), engine__nr_sites(e));
	put_u64(&so, engine_figure__name(ENGINE_FIG_HITS), engine__hits(e));
	put_figures(e, &so);
	put_double(&so, "cpu_factor", "%.1f", cpu_factor(e));
	put_warnings(e, &so, true);
	json__add(so.obj, "warnings", so.warnings);
	json__add(root, "summary", so.obj);
	json__print(out, root);
	fputc('\n', out);
}

/*
 * The summary in one write.  Written field by field to an unbuffered
 * stderr, it was a write a field, and a thread still running (kernel mode's
 * breakpoint movers, their -v lines) put a line of its own inside one: the
 * guest's kernel-sampler read "kcsand:" for breakpoint_sites_checked.
 */
static void print_at_once(struct engine *e, FILE *out, void (*print)(struct engine *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		print(e, out);
		return;
	}
	print(e, m);
	if (fclose(m) == 0)
		fwrite(buf, 1, len, out);
	else
		print(e, out);
	fflush(out);
	free(buf);
}

void engine__print_summary(struct engine *e, FILE *out)
{
	print_at_once(e, out, print_summary);
}

void engine__print_summary_json(struct engine *e, FILE *out)
{
	print_at_once(e, out, print_summary_json);
}

/*
 * The targets' CPU time with the probes per CPU time of their own over
 * the whole run, from the sampler; 0 when not measured (kernel mode: the
 * machine's time, not a program's).
 */
static double cpu_factor(struct engine *e)
{
	struct sampler_stats st;

	if (!e->sampler)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	double tick_ns = hz > 0 ? 1e9 / hz : 1e7, native;

	sampler__get_stats(e->sampler, &st);
	if (st.kernel || st.cpu_ns <= 0)
		return 0;
	/*
	 * CPU time is counted in clock ticks: a program whose own time is
	 * under one tick is taken to have run one, so the factor is a floor.
	 */
	native = st.native_ns > tick_ns ? st.native_ns : tick_ns;
	return st.cpu_ns > native ? st.cpu_ns / native : 1;
}

/* Sites armed and the whole run's overhead, from the sampler (user mode). */
static void print_brief_sampler(struct engine *e, FILE *out)
{
	struct sampler_stats st;
	double factor = cpu_factor(e);

	sampler__get_stats(e->sampler, &st);
	fprintf(out, "; %zu sites armed", st.armed);
	if (factor > 0)
		fprintf(out, ", overhead %.0f%%", (factor - 1) * 100);
	if (factor >= SLOW_FACTOR)
		fprintf(out, "; the program ran %.0fx its native CPU time (--overhead-budget)",
			factor);
}

void engine__print_brief(struct engine *e, FILE *out)
{
	struct summary_out so = { .out = out };

	put_warnings(e, &so, false);
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits; %lu by watchpoints",
		e->nr_reports, e->nr_reports == 1 ? "" : "s", engine__nr_sites(e),
		(unsigned long long)engine__hits(e), e->nr_reports - e->nr_reports_history);
	if (e->hist)
		fprintf(out, ", %lu by the history", e->nr_reports_history);
	if (e->sampler)
		print_brief_sampler(e, out);
	fputs(" (-v: every counter)\n", out);
}
