// SPDX-License-Identifier: GPL-2.0-only
/*
 * src:PATH site sets (sites/ksrc.h), on a scenario program built with -g
 * (build/tests/scenarios/plain_write_vs_read): the functions of the compile
 * units under a path from the source root (never a path's tail), and
 * none for a path no unit has; what one run found, the next reads from the
 * cache (KCSAND_CACHE_DIR, a directory of its own here) for the same file
 * and prefixes only.
 */
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "test.h"
#include "sites/ksrc.h"

/*
 * Renames "reader" to "READER" in the one cache file of dir: a name only a
 * run that reads the file can find.  False when there is no such file.
 */
static bool mark_cache_file(const char *dir)
{
	char path[PATH_MAX + 300], buf[65536];
	struct dirent *d;
	size_t n = 0;
	bool done = false;
	DIR *dp = opendir(dir);
	FILE *f;

	while (dp && (d = readdir(dp)))
		if (!strncmp(d->d_name, "ksrc-", 5))
			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name), n++;
	if (dp)
		closedir(dp);
	f = n == 1 ? fopen(path, "r+") : NULL;
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf), f);
	for (size_t i = 0; i + 7 <= n && !done; i++) {
		if (memcmp(buf + i, "reader", 7))
			continue;
		done = !fseek(f, i, SEEK_SET) && fwrite("READER", 1, 6, f) == 6;
	}
	fclose(f);
	return done;
}

static void cache_cases(const char *prog)
{
	char dir[] = "/tmp/kcsand-ksrc.XXXXXX", cmd[64];
	const char *const other[] = { "tests/scenarios/", "fs/" };
	struct ksrc_funcs f = {};

	if (!mkdtemp(dir))
		return;
	setenv("KCSAND_CACHE_DIR", dir, 1);
	TEST(site_sets_kept) {
		ASSERT_OK(ksrc__load(prog, "tests/scenarios/", &f), "load");
		ksrc__free(&f);
		ASSERT_TRUE(mark_cache_file(dir), "one cache file, with the functions");
		ASSERT_OK(ksrc__load(prog, "tests/scenarios/", &f), "load again");
		ASSERT_TRUE(ksrc__has(&f, "READER"), "the second run read the cache");
		ASSERT_EQ(f.units, 1, "and its count of units");
		ksrc__free(&f);
		ASSERT_OK(ksrc__load_any(prog, other, 2, &f), "other prefixes");
		ASSERT_TRUE(ksrc__has(&f, "reader") && !ksrc__has(&f, "READER"),
			    "other prefixes, another cache");
		ksrc__free(&f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], prog[PATH_MAX + 64];
	struct ksrc_funcs f = {};

	snprintf(exe, sizeof(exe), "%s", argv[0]);
	snprintf(prog, sizeof(prog), "%s/../scenarios/plain_write_vs_read", dirname(exe));
	/* No cache (a directory that cannot be made): each case reads the DWARF. */
	setenv("KCSAND_CACHE_DIR", "/proc/kcsand-no-cache", 1);
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
	cache_cases(prog);
	return test_summary();
}
