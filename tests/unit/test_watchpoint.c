// SPDX-License-Identifier: GPL-2.0-only
/* The watchpoint encoding (bpf/watchpoint.h), as the BPF engine uses it. */
#include <linux/types.h>
#include "test.h"
#include "../../bpf/watchpoint.h"

int main(void)
{
	TEST(encode_roundtrip) {
		__u64 wp = wp_encode(0x7ffd12345678ULL, 8, 1, 0x15);

		ASSERT_EQ(wp_addr(wp), 0x7ffd12345678ULL, "address");
		ASSERT_EQ(wp_size(wp), 8, "size");
		ASSERT_TRUE(wp & WP_WRITE, "write bit");
		ASSERT_EQ(wp_gen(wp), 0x15, "generation");
		ASSERT_TRUE(wp & WP_ON, "armed");
		ASSERT_FALSE(wp & WP_CONSUMED, "not consumed");
	}
	TEST(never_zero) {
		ASSERT_TRUE(wp_encode(0, 0, 0, 0) != 0, "an armed watchpoint is never the free value");
	}
	TEST(generation_wraps_within_field) {
		ASSERT_EQ(wp_gen(wp_encode(0x1000, 4, 0, 0x80 + 3)), 3, "gen modulo 128");
		ASSERT_EQ(wp_addr(wp_encode(0x1000, 4, 0, 0xffffffff)), 0x1000, "gen cannot spill into addr");
	}
	TEST(kernel_address_truncation_keeps_identity) {
		__u64 k = 0xffff888012345678ULL;

		ASSERT_TRUE(wp_matches(wp_encode(k, 8, 1, 0), k, 8, 0), "kernel address matches itself");
	}
	TEST(overlap_rules) {
		__u64 w = wp_encode(0x1000, 4, 0, 0);	/* a read watchpoint on [0x1000, 0x1004) */

		ASSERT_TRUE(wp_matches(w, 0x1000, 4, 1), "same bytes, write");
		ASSERT_TRUE(wp_matches(w, 0x1003, 1, 1), "last byte, write");
		ASSERT_FALSE(wp_matches(w, 0x1004, 4, 1), "adjacent, no overlap");
		ASSERT_FALSE(wp_matches(w, 0x0ffc, 4, 1), "adjacent below");
		ASSERT_TRUE(wp_matches(w, 0x0ff8, 16, 1), "wide write covering it");
		ASSERT_FALSE(wp_matches(w, 0x1000, 4, 0), "read vs read never conflicts");
	}
	TEST(write_watchpoint_conflicts_with_reads) {
		__u64 w = wp_encode(0x2000, 8, 1, 0);

		ASSERT_TRUE(wp_matches(w, 0x2004, 4, 0), "read inside a write watchpoint");
	}
	TEST(consumed_does_not_match) {
		__u64 w = wp_encode(0x2000, 8, 1, 0) | WP_CONSUMED;

		ASSERT_FALSE(wp_matches(w, 0x2000, 8, 1), "a consumed watchpoint has had its consumer");
	}
	TEST(line_slots) {
		ASSERT_EQ(wp_slot(0x1000), wp_slot(0x103f), "one cache line, one slot");
		ASSERT_EQ(wp_slot(0x1040), (wp_slot(0x1000) + 1) % WP_NUM_SLOTS, "next line, next slot");
		ASSERT_TRUE(wp_slot(0x555555558010ULL) != wp_slot(0x555555558050ULL),
			    "globals a line apart do not share a slot (KCSAN's pages would)");
	}
	return test_summary();
}
