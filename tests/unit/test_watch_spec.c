// SPDX-License-Identifier: GPL-2.0-only
/*
 * The watch grammar (daemon/hw/watch_spec.h): SYMBOL[:LEN] | ADDRESS[:LEN]
 * and the words around it.  One parser serves `kcsanctl run --watch` (through
 * hwbp__watch), `kcsanctl watch add`, the socket and the configuration; before
 * it, the engine and the others each had one, and they disagreed on the specs
 * of disagreed_*: what the configuration refused, `kcsanctl run --watch`
 * armed, and the reverse.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "test.h"
#include "hw/hwbp.h"
#include "hw/watch_spec.h"

/* spec parses, to symbol (or "" and addr) and len. */
static void expect_spec(const char *spec, const char *symbol, uint64_t addr, unsigned int len)
{
	struct watch_spec ws;
	const char *why = watch_spec__parse(spec, &ws);

	if (!ASSERT_TRUE(!why, spec)) {
		printf("  why: %s\n", why);
		return;
	}
	ASSERT_STREQ(ws.symbol, symbol, spec);
	ASSERT_EQ(ws.addr, addr, spec);
	ASSERT_EQ(ws.len, len, spec);
}

/* spec is refused, and the reason starts with why. */
static void expect_bad(const char *spec, const char *why)
{
	struct watch_spec ws;
	const char *got = watch_spec__parse(spec, &ws);

	if (ASSERT_TRUE(got != NULL, spec) && !ASSERT_TRUE(!strncmp(got, why, strlen(why)), spec))
		printf("  expected a reason starting \"%s\", got \"%s\"\n", why, got);
}

static void test_specs(void)
{
	TEST(symbol_spec)
		expect_spec("level", "level", 0, 0);	/* no LEN: the symbol's size decides */

	TEST(symbol_with_length)
		expect_spec("stats.count:4", "stats.count", 0, 4);

	TEST(symbols_as_compilers_name_them) {
		expect_spec("_ZN2ns7counterE:8", "_ZN2ns7counterE", 0, 8);
		expect_spec("counter.0", "counter.0", 0, 0);
		expect_spec("$tmp_1", "$tmp_1", 0, 0);
	}

	TEST(address_spec) {
		expect_spec("0x7ffd1000:8", "", 0x7ffd1000, 8);
		expect_spec("4096:1", "", 4096, 1);
		expect_spec("010", "", 8, 0);	/* C's octal, as strtoull() reads it */
	}

	TEST(kernel_address_spec) {
		expect_spec("0xffffffffc02c9440", "", 0xffffffffc02c9440ULL, 0);
		ASSERT_TRUE(0xffffffffc02c9440ULL >= HWBP_KERNEL_START, "and is a kernel address");
	}

	TEST(bad_specs) {
		expect_bad("", "empty");
		expect_bad(":4", "empty");
		expect_bad("x:3", "LEN must be 1, 2, 4 or 8");
		expect_bad("x:", "LEN must be 1, 2, 4 or 8");
		expect_bad("x:16", "LEN must be 1, 2, 4 or 8");
		expect_bad("0x12zz", "not an ADDRESS");
		expect_bad("0", "not an ADDRESS");
		expect_bad("0x0:8", "not an ADDRESS");
		expect_bad("08", "not an ADDRESS");
		expect_bad("0x10000000000000000", "not an ADDRESS");	/* 65 bits */
	}
}

static void test_disagreements(void)
{
	char longest[WATCH_SPEC_MAX_LEN + 2], addr[40];

	/* LEN as strtoul() reads it: the engine took these as 4, the socket refused them. */
	TEST(disagreed_len_is_one_digit) {
		expect_bad("x:04", "LEN must be 1, 2, 4 or 8");
		expect_bad("x:0x4", "LEN must be 1, 2, 4 or 8");
		expect_bad("x:+4", "LEN must be 1, 2, 4 or 8");
		expect_bad("x: 4", "LEN must be 1, 2, 4 or 8");
	}

	/* Any text was a SYMBOL to the engine, and a colon inside one part of it. */
	TEST(disagreed_symbol_characters) {
		expect_bad("a-b", "not a SYMBOL");
		expect_bad("-x", "not a SYMBOL");
		expect_bad(" x", "not a SYMBOL");
		expect_bad("a:b:4", "not a SYMBOL");
		expect_bad("ns::var:4", "not a SYMBOL");
	}

	/* The engine copied an ADDRESS into 32 bytes: a longer one it refused, the socket took. */
	TEST(disagreed_long_address) {
		snprintf(addr, sizeof(addr), "0x%032x:8", 0x1000);
		expect_spec(addr, "", 0x1000, 8);
	}

	TEST(longest_spec) {
		memset(longest, 'v', WATCH_SPEC_MAX_LEN);
		longest[WATCH_SPEC_MAX_LEN] = '\0';
		expect_spec(longest, longest, 0, 0);
		longest[WATCH_SPEC_MAX_LEN] = 'v';
		longest[WATCH_SPEC_MAX_LEN + 1] = '\0';
		expect_bad(longest, "too long");
	}
}

/* The words around SPEC, as the socket and `kcsanctl watch add` give them. */
static void test_args(void)
{
	const char *user[] = { "level:4", "--pid", "12", "--duration", "30" };
	const char *kernel[] = { "jiffies", "--kernel" };
	const char *bad[] = { "level:04", "--pid", "12" };
	const char *both[] = { "level", "--pid", "12", "--kernel" };
	struct watch_args a;
	char why[160];

	TEST(args_user) {
		ASSERT_OK(watch_args__parse(user, 5, true, &a, why, sizeof(why)), "parse");
		ASSERT_STREQ(a.spec, "level:4", "spec");
		ASSERT_TRUE(a.pid == 12 && !a.kernel && a.duration_s == 30, "pid 12, 30 s");
		ASSERT_EQ(watch_args__parse(user, 5, false, &a, why, sizeof(why)), -EINVAL,
			  "no --duration in the configuration");
		ASSERT_STREQ(why, "unexpected '--duration' (--pid PID or --kernel, once)", "why");
	}
	TEST(args_kernel) {
		ASSERT_OK(watch_args__parse(kernel, 2, false, &a, why, sizeof(why)), "parse");
		ASSERT_TRUE(a.kernel && !a.pid && !a.duration_s, "kernel");
	}
	TEST(args_bad) {
		ASSERT_EQ(watch_args__parse(bad, 3, true, &a, why, sizeof(why)), -EINVAL, "bad LEN");
		ASSERT_STREQ(why, "bad 'level:04': LEN must be 1, 2, 4 or 8 (bytes a debug register "
			     "covers)", "why");
		ASSERT_EQ(watch_args__parse(both, 4, true, &a, why, sizeof(why)), -EINVAL,
			  "--pid and --kernel");
		ASSERT_EQ(watch_args__parse(both, 0, true, &a, why, sizeof(why)), -EINVAL, "none");
		ASSERT_STREQ(why, "expected SYMBOL[:LEN] or ADDRESS[:LEN]", "why");
	}
}

int main(void)
{
	test_specs();
	test_disagreements();
	test_args();
	return test_summary();
}
