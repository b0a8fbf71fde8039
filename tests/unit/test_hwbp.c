// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware watchpoint helpers (daemon/hw/hwbp.c, insn.c): debug-register ranges,
 * the online-CPU list kernel mode arms one breakpoint on each of, and the
 * instruction before a trap's ip.
 * The --watch grammar has its own test (test_watch_spec.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "test.h"
#include "hw/hwbp.h"
#include "sites/decode.h"

/* Accessors whose instructions the trap decoder must find (issue 10, finding 9). */
int hw_test_var;

__attribute__((noipa)) void hw_test_poke(int v)
{
	hw_test_var = v;
}

/* A load that overwrites its own base register: its address is gone after it ran. */
__attribute__((noipa)) long hw_test_clobber(long *p)
{
	long r;

	asm volatile("movq (%%rax), %%rax" : "=a"(r) : "a"(p) : "memory");
	return r;
}

/* Every site of func in the running test: hwbp__insn_before() at its end must give it back. */
static int check_func_sites(const char *func, int want_lost)
{
	const struct decode_opts opts = { .keep_stack = true, .probe_locked = true };
	struct target_obj *obj;
	int n = 0;

	if (!ASSERT_OK(target_obj__open("/proc/self/exe", &obj), "open the test binary"))
		return 0;
	ASSERT_EQ(target_obj__decode(obj, func, &opts), 1, func);
	for (size_t i = 0; i < obj->sites.n; i++) {
		const struct site *s = &obj->sites.v[i];
		struct kcsand_site got;

		if (!ASSERT_OK(hwbp__insn_before("/proc/self/exe", s->vaddr + s->desc.insn_len, &got),
			       "the instruction that ends at the trap's ip"))
			continue;
		ASSERT_EQ(got.size, s->desc.size, "size");
		ASSERT_EQ(got.base, s->desc.base, "base register");
		ASSERT_EQ(got.disp, s->desc.disp, "displacement");
		ASSERT_EQ(got.flags & (KCSAND_SITE_READ | KCSAND_SITE_WRITE),
			  s->desc.flags & (KCSAND_SITE_READ | KCSAND_SITE_WRITE), "direction");
		ASSERT_EQ(!!(got.flags & KCSAND_SITE_ADDR_LOST), want_lost, "address registers kept");
		n++;
	}
	target_obj__free(obj);
	return n;
}

int main(void)
{
	uint64_t bp;
	unsigned int bl;
	bool on[8];

	TEST(aligned_access_is_its_own_range) {
		ASSERT_OK(hwbp__cover(0x1004, 4, &bp, &bl), "cover");
		ASSERT_EQ(bp, 0x1004, "address");
		ASSERT_EQ(bl, 4, "length");
	}
	TEST(unaligned_access_widens) {
		ASSERT_OK(hwbp__cover(0x1002, 2, &bp, &bl), "2 bytes at 2");
		ASSERT_EQ(bl, 2, "still 2");
		ASSERT_OK(hwbp__cover(0x1003, 2, &bp, &bl), "2 bytes at 3");
		ASSERT_EQ(bp, 0x1000, "widened to the aligned word");
		ASSERT_EQ(bl, 8, "8 bytes cover [3, 5)");
	}
	TEST(too_wide_or_straddling_is_refused) {
		ASSERT_TRUE(hwbp__cover(0x1000, 16, &bp, &bl) < 0, "16 bytes");
		ASSERT_TRUE(hwbp__cover(0x1006, 4, &bp, &bl) < 0, "crosses an 8-byte boundary");
	}
	TEST(cpu_list_ranges_and_singles) {
		ASSERT_EQ(hwbp__parse_cpus("0-2,5\n", on, 8), 4, "four CPUs");
		ASSERT_TRUE(on[0] && on[1] && on[2] && !on[3] && !on[4] && on[5] && !on[6],
			    "0, 1, 2 and 5");
		ASSERT_EQ(hwbp__parse_cpus("3", on, 8), 1, "one CPU");
		ASSERT_TRUE(on[3] && !on[0], "only 3, the previous list cleared");
	}
	TEST(cpu_list_bad) {
		ASSERT_EQ(hwbp__parse_cpus("", on, 8), -EINVAL, "empty");
		ASSERT_EQ(hwbp__parse_cpus("2-1", on, 8), -EINVAL, "backwards range");
		ASSERT_EQ(hwbp__parse_cpus("0,x", on, 8), -EINVAL, "not a number");
		ASSERT_EQ(hwbp__parse_cpus("0-8", on, 8), -ERANGE, "beyond max");
	}
	/* Issue 10, finding 9: the access a debug register trapped, from its instruction. */
	TEST(trapped_instruction_is_decoded) {
		ASSERT_EQ(check_func_sites("hw_test_poke", 0), 1, "hw_test_poke's one store");
		ASSERT_EQ(check_func_sites("hw_test_clobber", 1), 1, "hw_test_clobber's one load");
		hw_test_poke(hw_test_clobber((long *)&hw_test_var) != 0);
	}
	/* Issue 10, finding 8: an escalation's trap is a later write, with its delay. */
	TEST(escalation_reports_a_later_write) {
		static struct kcsand_report race, out;
		static struct kcsand_hw_access w;

		race.this = (struct kcsand_access){ .addr = 0x4010, .size = 4, .tid = 7 };
		race.time_ns = 5000000000ULL;
		w.acc = (struct kcsand_access){ .addr = 0x4010, .size = 4, .tid = 8,
						.type = KCSAND_ACCESS_WRITE, .flags = KCSAND_ACC_HWBP };
		w.time_ns = race.time_ns + 2500000;	/* 2.5 ms later */
		w.value_valid = 1;
		w.value[1] = 3;		/* before the write */
		w.value[0] = 4;		/* after it */
		hwbp__later_write(&race, &w, &out);
		ASSERT_TRUE(out.has_other, "both stacks");
		ASSERT_TRUE(out.other.flags & KCSAND_ACC_LATER, "marked a later write, not a partner");
		ASSERT_EQ(out.other.after_us, 2500, "µs between the race and the write");
		ASSERT_EQ(out.other.tid, 8, "the writer");
		ASSERT_EQ(out.this.tid, 7, "the race's watcher");
		ASSERT_EQ(out.value_change, KCSAND_VALUE_CHANGE_TRUE, "the write changed the value");
		w.value[0] = 3;
		hwbp__later_write(&race, &w, &out);
		ASSERT_EQ(out.value_change, KCSAND_VALUE_CHANGE_MAYBE, "a same-value write: no change");
	}
	/* The history's watches: which one a new read takes (daemon/hw/hb_watch.c). */
	TEST(history_watch_placement) {
		const uint64_t ms = 1000000, now = 100000 * ms;
		uint64_t at[2] = { 0, now - 5 * ms };
		pid_t tid[2] = { 0, 7 };

		ASSERT_EQ(hwbp__hb_place(at, tid, 2, 8, now), 0, "a free slot first");
		at[0] = now - 1 * ms;
		tid[0] = 8;
		ASSERT_EQ(hwbp__hb_place(at, tid, 2, 7, now), -1,
			  "the reader's own watch, held less than the hold: kept");
		at[1] = now - HB_MIN_HOLD_MS * ms;
		ASSERT_EQ(hwbp__hb_place(at, tid, 2, 7, now), 1, "its own, held long enough");
		ASSERT_EQ(hwbp__hb_place(at, tid, 2, 9, now), -1,
			  "another thread's watches, young: kept");
		at[0] = now - HB_WATCH_MS * ms;
		ASSERT_EQ(hwbp__hb_place(at, tid, 2, 9, now), 0, "one past its time gives way");
	}
	return test_summary();
}
