// SPDX-License-Identifier: GPL-2.0-only
/*
 * util/array.h's growth: one element at a time from the first capacity,
 * doubling; room for many at once (bytes appended to a buffer), doubled as
 * often as it takes; nothing moved when there is room.
 */
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "util/array.h"

int main(void)
{
	TEST(one_more_element) {
		int *v = NULL;
		size_t cap = 0, n = 0;

		for (; n < 9; n++) {
			if (!ASSERT_EQ(ARRAY_RESERVE(v, cap, n, 4), 0, "room"))
				break;
			v[n] = (int)n;
		}
		ASSERT_EQ(cap, 16, "4, 8, then 16 for the ninth");
		ASSERT_EQ(v[8] + v[3], 11, "the elements kept");
		free(v);
	}
	TEST(many_more_bytes) {
		char *b = NULL, *before;
		size_t cap = 0, len = 0;

		ASSERT_EQ(ARRAY_RESERVE_MORE(b, cap, len, 100, 16), 0, "100 bytes");
		ASSERT_EQ(cap, 128, "16 doubled until 100 fit");
		memset(b, 'x', 100);
		len = 100;
		before = b;
		ASSERT_EQ(ARRAY_RESERVE_MORE(b, cap, len, 28, 16), 0, "28 more: exactly full");
		ASSERT_TRUE(b == before && cap == 128, "no move when there is room");
		ASSERT_EQ(ARRAY_RESERVE_MORE(b, cap, len, 1000, 16), 0, "1000 more");
		ASSERT_EQ(cap, 2048, "doubled until 1100 fit");
		ASSERT_EQ(b[99], 'x', "the bytes kept");
		ASSERT_EQ(ARRAY_RESERVE_MORE(b, cap, len, 0, 16), 0, "none more");
		ASSERT_EQ(cap, 2048, "unchanged");
		free(b);
	}
	return test_summary();
}
