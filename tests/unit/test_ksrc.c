// SPDX-License-Identifier: GPL-2.0-only
/*
 * src:PATH site sets (sites/ksrc.h), on a scenario program built with -g
 * (build/tests/scenarios/plain_write_vs_read): the functions of the compile
 * units under a path from the source root (never a path's tail), and
 * none for a path no unit has.
 */
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include "test.h"
#include "sites/ksrc.h"

int main(int argc, char **argv)
{
	char exe[PATH_MAX], prog[PATH_MAX + 64];
	struct ksrc_funcs f = {};

	snprintf(exe, sizeof(exe), "%s", argv[0]);
	snprintf(prog, sizeof(prog), "%s/../scenarios/plain_write_vs_read", dirname(exe));
	TEST(units_under_a_path) {
		ASSERT_OK(access(prog, R_OK), "the scenario next to the tests (make unit builds it)");
		ASSERT_OK(ksrc__load(prog, "tests/scenarios/", &f), "load");
		ASSERT_EQ(f.units, 1, "one compile unit");
		ASSERT_TRUE(ksrc__has(&f, "reader") && ksrc__has(&f, "writer"), "its functions");
		ASSERT_FALSE(ksrc__has(&f, "printf"), "not a declaration");
		ksrc__free(&f);
	}
	/* Issue 21: src:kernel/ took arch/x86/kernel/ through a "/kernel/" substring. */
	TEST(path_from_the_root_only) {
		ASSERT_OK(ksrc__load(prog, "scenarios/plain_write", &f), "load");
		ASSERT_EQ(f.units, 0, "a path inside the unit's path is not from the root");
		ksrc__free(&f);
		ASSERT_OK(ksrc__load(prog, "tests/scenarios/plain_write", &f), "load");
		ASSERT_TRUE(ksrc__has(&f, "reader"), "the same path from the root (control)");
		ksrc__free(&f);
	}
	TEST(several_prefixes_one_pass) {
		const char *const prefixes[] = { "fs/", "tests/scenarios/" };

		ASSERT_OK(ksrc__load_any(prog, prefixes, 2, &f), "load");
		ASSERT_EQ(f.units, 1, "the unit under the second prefix");
		ASSERT_TRUE(ksrc__has(&f, "writer"), "its functions");
		ksrc__free(&f);
	}
	TEST(no_unit) {
		ASSERT_OK(ksrc__load(prog, "fs/ext4/", &f), "load");
		ASSERT_EQ(f.units, 0, "no unit");
		ASSERT_EQ(f.n, 0, "no function");
		ksrc__free(&f);
	}
	TEST(not_dwarf) {
		ASSERT_TRUE(ksrc__load("/nonexistent", "fs/", &f) < 0, "missing file refused");
	}
	return test_summary();
}
