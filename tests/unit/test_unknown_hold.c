// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling holds a race of unknown origin back for a moment
 * (daemon/engine/pipeline.c): the sampled pair that explains it folds it
 * away, since KCSAN would print only the pair; anything else lets it out,
 * late but before whatever is about it, and it is never lost.
 *
 * Crafted records go through engine_process_report(), the ring buffer's
 * consumer, on an engine holding only what that path reads: kernel symbols
 * from a kallsyms file, dedup, and a sink that records what was reported.
 * The hold time is the real one (UNKNOWN_HOLD_MS), so one subtest sleeps.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "test.h"
#include "engine/engine_int.h"
#include "engine/params.h"
#include "hw/hwbp.h"
#include "report/dedup.h"
#include "report/report.h"
#include "sites/ksyms.h"

/* pipeline.c's bound on held reports, restated: the test says which number it expects. */
#define HOLD_MAX 16

/* A kernel with three functions; fix_end only gives fix_bystander its size. */
static const char kallsyms[] = "ffffffff81000000 T fix_reader\n"
			       "ffffffff81000100 T fix_writer\n"
			       "ffffffff81000200 T fix_bystander\n"
			       "ffffffff81000300 T fix_end\n";
#define READER		0xffffffff81000000ull
#define WRITER		0xffffffff81000100ull
#define BYSTANDER	0xffffffff81000200ull
#define VAR		0xffff888004001000ull	/* an 8-byte variable; VAR + 8 is its neighbour */

/* What the engine reported, in order: "this top" or "this top / other top". */
static char seen[2 * HOLD_MAX][2 * REPORT_FRAME_LEN + 4];
static int nr_seen;

static void sink(void *ctx, const struct report_view *v)
{
	if (nr_seen < (int)(sizeof(seen) / sizeof(seen[0])))
		snprintf(seen[nr_seen], sizeof(seen[0]), "%s%s%s", v->this.top,
			 v->raw->has_other ? " / " : "", v->raw->has_other ? v->other.top : "");
	nr_seen++;
}

static struct ksyms *load_kallsyms(void)
{
	char path[] = "/tmp/kcsand-test-kallsyms.XXXXXX";
	int fd = mkstemp(path);
	struct ksyms *ks = NULL;

	if (fd < 0)
		return NULL;
	if (write(fd, kallsyms, sizeof(kallsyms) - 1) == (ssize_t)sizeof(kallsyms) - 1)
		ks = ksyms__load_file(path);
	close(fd);
	unlink(path);
	return ks;
}

/* A kernel-mode engine as the pipeline sees it; kbp: sampling by code breakpoints. */
static void engine_up(struct engine *e, struct ksyms *ks, bool kbp)
{
	memset(e, 0, sizeof(*e));
	engine_opts__init(&e->opts, PARAM_MODE_KERNEL);
	e->opts.sink = sink;
	e->ksyms = ks;
	e->kbp_mode = kbp;
	e->dedup = dedup__new();
	nr_seen = 0;
}

static void engine_down(struct engine *e)
{
	free(e->held);
	dedup__free(e->dedup);
}

static void access_at(struct kcsand_access *a, uint64_t ip, uint64_t addr, uint32_t size,
		      uint8_t type)
{
	memset(a, 0, sizeof(*a));
	a->ip = ip;
	a->addr = addr;
	a->size = size;
	a->type = type;
	a->tid = a->pid = ip == WRITER ? 2 : 1;
}

/* A race of unknown origin: the read at ip saw the value change under its watchpoint. */
static const struct kcsand_report *unknown_at(struct kcsand_report *r, uint64_t ip, uint64_t addr)
{
	memset(r, 0, sizeof(*r));
	r->type = KCSAND_REC_REPORT;
	r->value_change = KCSAND_VALUE_CHANGE_TRUE;
	access_at(&r->this, ip, addr, 8, 0);
	return r;
}

/* A sampled pair: the reader's watchpoint consumed by a write that changed the value. */
static const struct kcsand_report *pair_of(struct kcsand_report *r, uint64_t rip, uint64_t raddr,
					   uint32_t rsize, uint64_t wip, uint64_t waddr)
{
	memset(r, 0, sizeof(*r));
	r->type = KCSAND_REC_REPORT;
	r->value_change = KCSAND_VALUE_CHANGE_TRUE;
	r->has_other = 1;
	access_at(&r->this, rip, raddr, rsize, 0);
	access_at(&r->other, wip, waddr, 8, KCSAND_ACCESS_WRITE);
	return r;
}

int main(void)
{
	static struct kcsand_report u, p, q;
	static struct engine e;
	struct ksyms *ks = load_kallsyms();

	if (!ASSERT_TRUE(ks, "kallsyms fixture"))
		return test_summary();

	TEST(unknown_origin_held_only_when_sampling_breakpoints) {
		/* kprobes on every site: the pair would have been seen, nothing to wait for. */
		engine_up(&e, ks, false);
		engine_process_report(&e, unknown_at(&u, READER + 0x10, VAR));
		ASSERT_EQ(nr_seen, 1, "kprobes: printed at once");
		engine_down(&e);

		engine_up(&e, ks, true);
		engine_process_report(&e, unknown_at(&u, READER + 0x10, VAR));
		ASSERT_EQ(nr_seen, 0, "breakpoints: not printed at once");
		ASSERT_EQ(e.unknown_held, 1, "unknown_held");
		ASSERT_TRUE(engine_held_next_ms(&e) > 0 && engine_held_next_ms(&e) <= 1000,
			    "due within the hold time, not yet");
		engine_release_held(&e, false);
		ASSERT_EQ(nr_seen, 0, "not released before its time");
		engine_release_held(&e, true);
		if (ASSERT_EQ(nr_seen, 1, "the end of the run prints it"))
			ASSERT_STREQ(seen[0], "fix_reader+0x10/0x100", "the held report");
		engine_down(&e);
	}

	TEST(pair_in_time_folds_unknown_origin) {
		engine_up(&e, ks, true);
		engine_process_report(&e, unknown_at(&u, READER + 0x10, VAR));
		/* Another access of the same function, on 4 of the same 8 bytes. */
		engine_process_report(&e,
				      pair_of(&p, READER + 0x30, VAR + 4, 4, WRITER + 0x20, VAR));
		ASSERT_EQ(e.unknown_folded, 1, "unknown_folded");
		ASSERT_EQ(engine_held_next_ms(&e), -1, "nothing held any more");
		engine_release_held(&e, true);
		ASSERT_EQ(nr_seen, 1, "only the pair, even at the end of the run");
		ASSERT_STREQ(seen[0], "fix_reader+0x30/0x100 / fix_writer+0x20/0x100", "the pair");
		engine_down(&e);
	}

	TEST(pair_elsewhere_does_not_fold_and_hold_time_releases) {
		struct timespec nap = { 0, 20 * 1000000 };

		engine_up(&e, ks, true);
		engine_process_report(&e, unknown_at(&u, READER + 0x10, VAR));
		/* The same function, on the neighbouring bytes. */
		engine_process_report(
			&e, pair_of(&p, READER + 0x10, VAR + 8, 8, WRITER + 0x20, VAR + 8));
		/* The same bytes, neither side in fix_reader. */
		engine_process_report(&e, pair_of(&q, BYSTANDER + 0x8, VAR, 8, WRITER + 0x28, VAR));
		ASSERT_EQ(e.unknown_folded, 0, "unknown_folded");
		ASSERT_EQ(nr_seen, 2, "both pairs printed, the unknown origin still held");
		engine_release_held(&e, false);
		ASSERT_EQ(nr_seen, 2, "still held before its time");
		/* The real hold time: wait until the engine says it is due (bounded). */
		for (int i = 0; i < 100 && engine_held_next_ms(&e) > 0; i++)
			nanosleep(&nap, NULL);
		ASSERT_EQ(engine_held_next_ms(&e), 0, "due after the hold time");
		engine_release_held(&e, false);
		if (ASSERT_EQ(nr_seen, 3, "released after the hold time")) {
			ASSERT_STREQ(seen[0], "fix_reader+0x10/0x100 / fix_writer+0x20/0x100",
				     "first pair");
			ASSERT_STREQ(seen[1], "fix_bystander+0x8/0x100 / fix_writer+0x28/0x100",
				     "second pair");
			ASSERT_STREQ(seen[2], "fix_reader+0x10/0x100", "then the unknown origin");
		}
		ASSERT_EQ(engine_held_next_ms(&e), -1, "nothing held any more");
		engine_down(&e);
	}

	TEST(escalation_catch_does_not_fold_and_comes_after) {
		struct kcsand_hw_access hit = {};
		struct kcsand_report *race = &q;

		engine_up(&e, ks, true);
		engine_process_report(&e, unknown_at(race, READER + 0x10, VAR));
		/*
		 * The escalation's write breakpoint traps the writer after the fact:
		 * the catch names the race's own side and the writer, as hwbp.c
		 * builds it.  Same bytes, same function: only the debug register
		 * keeps it from folding.
		 */
		hit.type = KCSAND_REC_HW_ACCESS;
		hit.value_valid = 1;
		hit.value[0] = 2;
		access_at(&hit.acc, WRITER + 0x20, VAR, 8, KCSAND_ACCESS_WRITE);
		hit.acc.flags = KCSAND_ACC_HWBP | KCSAND_ACC_DECODED;
		hwbp__later_write(race, &hit, &p);
		ASSERT_TRUE(engine_held_next_ms(&e) > 0, "held before the catch");
		engine_process_report(&e, &p);
		ASSERT_EQ(e.unknown_folded, 0, "unknown_folded");
		if (ASSERT_EQ(nr_seen, 2, "the race and its catch")) {
			ASSERT_STREQ(seen[0], "fix_reader+0x10/0x100", "the race first");
			ASSERT_STREQ(seen[1], "fix_reader+0x10/0x100 / fix_writer+0x20/0x100",
				     "then the catch");
		}
		ASSERT_EQ(engine_held_next_ms(&e), -1, "nothing held any more");
		engine_down(&e);
	}

	TEST(hold_is_bounded_and_loses_nothing) {
		char want[64];
		int found = 0;

		engine_up(&e, ks, true);
		for (int i = 0; i < HOLD_MAX + 1; i++)
			engine_process_report(&e, unknown_at(&u, READER + 0x10 + i, VAR));
		ASSERT_EQ(e.unknown_held, HOLD_MAX, "unknown_held");
		if (ASSERT_EQ(nr_seen, 1, "the one past the bound printed at once"))
			ASSERT_STREQ(seen[0], "fix_reader+0x20/0x100", "the 17th");
		engine_release_held(&e, true);
		ASSERT_EQ(nr_seen, HOLD_MAX + 1, "the held ones at the end of the run");
		for (int i = 0; i < HOLD_MAX + 1 && nr_seen == HOLD_MAX + 1; i++) {
			snprintf(want, sizeof(want), "fix_reader+0x%x/0x100", 0x10 + i);
			for (int j = 0; j < nr_seen; j++)
				found += !strcmp(seen[j], want);
		}
		ASSERT_EQ(found, HOLD_MAX + 1, "each report once");
		engine_down(&e);
	}

	ksyms__free(ks);
	return test_summary();
}
