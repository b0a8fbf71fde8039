// SPDX-License-Identifier: GPL-2.0-only
/* Hardware watchpoint helpers (daemon/hwbp.c): --watch specs and debug-register ranges. */
#include <stdint.h>
#include "test.h"
#include "hwbp.h"

int main(void)
{
	char name[64];
	uint64_t addr, bp;
	unsigned int len, bl;

	TEST(symbol_spec) {
		ASSERT_OK(hwbp_parse_spec("level", name, sizeof(name), &addr, &len), "parse");
		ASSERT_STREQ(name, "level", "name");
		ASSERT_EQ(len, 0, "no length: the symbol's size decides");
	}
	TEST(symbol_with_length) {
		ASSERT_OK(hwbp_parse_spec("stats.count:4", name, sizeof(name), &addr, &len), "parse");
		ASSERT_STREQ(name, "stats.count", "name");
		ASSERT_EQ(len, 4, "length");
	}
	TEST(address_spec) {
		ASSERT_OK(hwbp_parse_spec("0x7ffd1000:8", name, sizeof(name), &addr, &len), "parse");
		ASSERT_STREQ(name, "", "no name");
		ASSERT_EQ(addr, 0x7ffd1000, "address");
		ASSERT_EQ(len, 8, "length");
	}
	TEST(bad_specs) {
		ASSERT_TRUE(hwbp_parse_spec("x:3", name, sizeof(name), &addr, &len) < 0, "length 3");
		ASSERT_TRUE(hwbp_parse_spec(":4", name, sizeof(name), &addr, &len) < 0, "no name");
		ASSERT_TRUE(hwbp_parse_spec("0x12zz", name, sizeof(name), &addr, &len) < 0,
			    "bad address");
	}
	TEST(aligned_access_is_its_own_range) {
		ASSERT_OK(hwbp_cover(0x1004, 4, &bp, &bl), "cover");
		ASSERT_EQ(bp, 0x1004, "address");
		ASSERT_EQ(bl, 4, "length");
	}
	TEST(unaligned_access_widens) {
		ASSERT_OK(hwbp_cover(0x1002, 2, &bp, &bl), "2 bytes at 2");
		ASSERT_EQ(bl, 2, "still 2");
		ASSERT_OK(hwbp_cover(0x1003, 2, &bp, &bl), "2 bytes at 3");
		ASSERT_EQ(bp, 0x1000, "widened to the aligned word");
		ASSERT_EQ(bl, 8, "8 bytes cover [3, 5)");
	}
	TEST(too_wide_or_straddling_is_refused) {
		ASSERT_TRUE(hwbp_cover(0x1000, 16, &bp, &bl) < 0, "16 bytes");
		ASSERT_TRUE(hwbp_cover(0x1006, 4, &bp, &bl) < 0, "crosses an 8-byte boundary");
	}
	return test_summary();
}
