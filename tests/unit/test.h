/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal test harness in the style of selftests/bpf: named subtests and
 * ASSERT_* macros that print what was expected and what came.
 * Each test binary ends with test_summary(), which prints
 * "N passed, N failed" and returns the exit status.
 */
#ifndef KCSAND_TEST_H
#define KCSAND_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test__passed, test__failed, test__cur_failed;
static const char *test__name;

#define TEST(name) \
	for (int _once = (test__begin(#name), 1); _once; _once = 0, test__end())

static inline void test__begin(const char *name)
{
	test__name = name;
	test__cur_failed = 0;
}

static inline void test__end(void)
{
	if (test__cur_failed) {
		test__failed++;
		printf("FAIL %s\n", test__name);
	} else {
		test__passed++;
		printf("ok   %s\n", test__name);
	}
}

#define ASSERT__FAIL(fmt, ...)                                                             \
	do {                                                                               \
		test__cur_failed = 1;                                                      \
		printf("  %s:%d: %s: " fmt "\n", __FILE__, __LINE__, test__name, ##__VA_ARGS__); \
	} while (0)

#define ASSERT_TRUE(c, what)                                                               \
	({ int _ok = !!(c); if (!_ok) { ASSERT__FAIL("%s: expected true", what); } _ok; })
#define ASSERT_FALSE(c, what)                                                              \
	({ int _ok = !(c); if (!_ok) { ASSERT__FAIL("%s: expected false", what); } _ok; })
#define ASSERT_EQ(a, b, what)                                                              \
	({ long long _a = (long long)(a), _b = (long long)(b); int _ok = _a == _b;          \
	   if (!_ok) { ASSERT__FAIL("%s: expected %lld (0x%llx), got %lld (0x%llx)", what,     \
				  _b, (unsigned long long)_b, _a, (unsigned long long)_a); } _ok; })
#define ASSERT_STREQ(a, b, what)                                                           \
	({ const char *_a = (a), *_b = (b); int _ok = _a && _b && !strcmp(_a, _b);         \
	   if (!_ok) { ASSERT__FAIL("%s: expected \"%s\", got \"%s\"", what, _b ? _b : "(null)", \
				  _a ? _a : "(null)"); } _ok; })
#define ASSERT_OK(err, what)                                                               \
	({ long long _e = (long long)(err); int _ok = _e == 0;                              \
	   if (!_ok) { ASSERT__FAIL("%s: expected 0, got %lld", what, _e); } _ok; })

static inline int test_summary(void)
{
	printf("%d passed, %d failed\n", test__passed, test__failed);
	return test__failed ? 1 : 0;
}

#endif
