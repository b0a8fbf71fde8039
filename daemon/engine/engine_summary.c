// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the engine tells of a run: the counters, the sites and their marks,
 * the summary at exit (-v: every counter) and its brief form, the warnings
 * that go before it.
 */
#include <errno.h>
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

int engine__hw_stats(const struct engine *e, struct hwbp_stats *out)
{
	if (!e->hw)
		return -ENOENT;
	hwbp__get_stats(e->hw, out);
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

static void print_sampler_summary(struct engine *e, FILE *out)
{
	struct sampler_stats st;

	sampler__get_stats(e->sampler, &st);
	fprintf(out, " armed_sites: %zu/%zu estimated_overhead: %.0f%% hot_turns: %lu",
		st.armed, st.total, st.est_overhead * 100, st.turns);
	if (st.kernel)
		fprintf(out, " unarmed_hits: %llu trap_floor: %.0f%% trap_ns: %.0f",
			st.unarmed_hits, st.floor_overhead * 100, st.trap_ns);
	else
		fprintf(out, " hot_turns_one_thread: %lu", st.xbp_turns);
	/* Sites at each backoff level, 100% / 10% / 1% / 0.1% (sampler.h). */
	fprintf(out, " site_levels: %zu/%zu/%zu/%zu", st.levels[0], st.levels[1],
		st.levels[2], st.levels[3]);
	/* What the warm-up and level 0 took, and how often their credit ran out. */
	if (!st.kernel)
		fprintf(out, " cold_start_ms: %.0f cold_credit_outs: %lu", st.cold_ms,
			st.cold_outs);
	fprintf(out, " cpu_ms: %.0f native_cpu_ms: %.0f", st.cpu_ns / 1e6, st.native_ns / 1e6);
}

static void print_kbp_summary(struct engine *e, FILE *out)
{
	struct kbp_stats ks;

	kbp__stats(e->kbp, &ks);
	fprintf(out, " breakpoint_sites_sampled: %zu/%zu breakpoint_cycles: %llu "
		"breakpoint_regs: %ux%u breakpoint_traps: %llu breakpoint_checks: %llu "
		"breakpoint_refused: %zu breakpoint_move_us: %.0f breakpoint_period_us: %u "
		"breakpoint_period_range_us: %u-%u breakpoint_min_regs: %u breakpoint_trap_ns: %.0f "
		"breakpoint_overhead: %.1f%%", ks.sampled, ks.sites,
		(unsigned long long)ks.cycles, ks.nregs, ks.ncpus,
		(unsigned long long)ks.hits, (unsigned long long)ks.checked, ks.refused,
		ks.retargets ? ks.retarget_ns / 1e3 / ks.retargets : 0.0, ks.period_us,
		ks.min_period_us, ks.max_period_us, ks.min_regs, ks.trap_ns, ks.overhead * 100);
}

static void print_hw_summary(struct engine *e, FILE *out)
{
	struct hwbp_stats hw_st;

	hwbp__get_stats(e->hw, &hw_st);
	fprintf(out, " hw_watchpoints_armed: %lu hw_traps: %llu hw_consumed: %llu "
		"hw_watchers: %llu hw_pairs: %lu hw_no_slot: %lu hw_unarmable: %lu "
		"hw_open_failed: %lu", hw_st.armed, (unsigned long long)hw_st.traps,
		(unsigned long long)hw_st.consumed, (unsigned long long)hw_st.watchers, hw_st.pairs,
		hw_st.no_slot, hw_st.unarmable, hw_st.open_failed);
	if (e->opts.kernel)
		fprintf(out, " hw_probed: %llu", (unsigned long long)hw_st.probed);
	else
		fprintf(out, " hw_decoded: %lu hw_undecoded: %llu hw_outside: %llu",
			hw_st.decoded, (unsigned long long)hw_st.undecoded,
			(unsigned long long)hw_st.outside);
}

/* -v: what the CFI unwind of the stack copies cost, and how often a side had its frames. */
static void print_unwind_summary(const struct engine *e, FILE *out)
{
	struct unwind_stats st;

	unwinder__stats(e->unwind, &st);
	fprintf(out, "kcsand: stacks: %lu copies unwound by CFI (%.1f KiB each, %.1f frames, "
		     "%.0f us each; %lu with one frame only); %lu report sides had their CFI "
		     "frames, %lu had none and kept their frame-pointer walk\n",
		st.copies, st.copies ? st.bytes / 1024.0 / st.copies : 0.0,
		st.copies ? (double)st.frames / st.copies : 0.0,
		st.copies ? st.ns / 1e3 / st.copies : 0.0, st.failed, st.found, st.missed);
}

/* A warning, not a counter: it goes before the summary line, brief or not. */
static void print_unclocked(struct engine *e, FILE *out)
{
	if (e->hist && history__unclocked_hits(e->hist))
		fprintf(out, "kcsand: history: more than %d threads of the process were alive at "
			     "once: %llu hits by threads without a clock were not checked, and %lu "
			     "races the history found were dropped, as sync of those threads went "
			     "unseen\n", KCSAND_HB_MAX_THREADS,
			(unsigned long long)history__unclocked_hits(e->hist), e->history_unsound);
}

static double cpu_factor(struct engine *e);

/* A program whose CPU time under the probes is this many times its own: see print_warnings(). */
#define SLOW_FACTOR	3.0

/*
 * Warnings, not counters: they go before the summary line, brief or not.
 * A program that ran SLOW_FACTOR times its native CPU time is said to: the
 * timeouts and watchdogs of a program under test start to fire around there.
 */
static void print_warnings(struct engine *e, FILE *out, bool slow)
{
	double factor = cpu_factor(e);

	if (slow && factor >= SLOW_FACTOR)
		fprintf(out, "kcsand: the program ran %.0fx its native CPU time under the probes "
			     "(--overhead-budget)\n", factor);
	print_unclocked(e, out);
	if (e->hist && history__lost_edges(e->hist))
		fprintf(out, "kcsand: history: %llu releases could not raise an object's clock (other "
			     "threads kept changing it): %lu races the history found were dropped\n",
			(unsigned long long)history__lost_edges(e->hist), e->history_unsound);
}

void engine__print_summary(struct engine *e, FILE *out)
{
	uint64_t c[KCSAND_CTR_COUNT];

	if (e->hist && e->opts.verbose)
		history__print(e->hist, out);
	if (e->unwind && e->opts.verbose)
		print_unwind_summary(e, out);
	print_warnings(e, out, true);
	engine__counters(e, c);
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits;", e->nr_reports,
		e->nr_reports == 1 ? "" : "s", engine__nr_sites(e),
		(unsigned long long)engine__hits(e));
	for (int i = 0; i < KCSAND_CTR_COUNT; i++)
		fprintf(out, " %s: %llu", counter__name(i), (unsigned long long)c[i]);
	fprintf(out, " suppressed_by_dedup: %lu suppressed_no_value_change: %lu",
		e->suppressed_dedup, e->suppressed_no_change);
	fprintf(out, " reports_watchpoint: %lu reports_history: %lu",
		e->nr_reports - e->nr_reports_history, e->nr_reports_history);
	if (e->hist) {
		struct history_stats hb_st;

		history__get_stats(e->hist, &hb_st);
		fprintf(out, " history_sync_ops: %llu history_checked: %llu history_shadow_live: %llu"
			     " history_sync_pauses: %lu history_unclocked_hits: %llu"
			     " history_reports_dropped: %lu history_forgotten: %llu",
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_SYNC_OPS],
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_CHECKED],
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_SHADOW_LIVE], hb_st.pauses,
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_NO_SLOT], e->history_unsound,
			(unsigned long long)hb_st.ctr[KCSAND_HB_CTR_FORGET_OPS]);
	}
	if (e->kbp_mode)
		fprintf(out, " unknown_origin_held: %lu unknown_origin_folded: %lu",
			e->unknown_held, e->unknown_folded);
	if (e->sampler)
		print_sampler_summary(e, out);
	if (e->kbp)
		print_kbp_summary(e, out);
	if (e->pairs)
		pairs__print_summary(e->pairs, out);
	if (e->hw)
		print_hw_summary(e, out);
	fputc('\n', out);
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
	print_warnings(e, out, false);
	fprintf(out, "kcsand: %lu report%s, %zu sites, %llu hits; %lu by watchpoints",
		e->nr_reports, e->nr_reports == 1 ? "" : "s", engine__nr_sites(e),
		(unsigned long long)engine__hits(e), e->nr_reports - e->nr_reports_history);
	if (e->hist)
		fprintf(out, ", %lu by the history", e->nr_reports_history);
	if (e->sampler)
		print_brief_sampler(e, out);
	fputs(" (-v: every counter)\n", out);
}

void engine__suppressed(const struct engine *e, unsigned long *filter, unsigned long *dedup,
			unsigned long *no_change)
{
	*filter = e->suppressed_filter;
	*dedup = e->suppressed_dedup;
	*no_change = e->suppressed_no_change;
}
