// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cache of kernel marking verdicts (mark/kcache.h), keyed by a debug
 * file's build-id: this test binary's own stands in for a vmlinux.  What
 * one run saves, the next reads, with its _text; another file, or a file
 * without a build-id, does not see it; a directory that cannot be written
 * is an error, not a crash.  With a source tree (--source-dir): a cache of
 * its own, warm on the next run, emptied when a source it read changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "test.h"
#include "mark/kcache.h"

static const struct kcache_verdict marked = { .set = 0x40, .clear = 0, .reason = 4 };
static const struct kcache_verdict plain = { .set = 0, .clear = 0x40, .reason = 0,
					     .no_source = 1 };

/* Write text to path; false on failure. */
static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && !fclose(f);
}

/* A verdict decided from dir's file src.c, as kmark saves it. */
static void save_with_source(const char *dir, const char *src)
{
	struct kcache *c = kcache__open("/proc/self/exe", dir);
	struct stat st;

	ASSERT_TRUE(c != NULL, "a cache for the source tree");
	if (!c)
		return;
	ASSERT_FALSE(kcache__get(c, 0x1000, &(struct kcache_verdict){}),
		     "the tree's cache does not see the other's verdicts");
	ASSERT_OK(stat(src, &st), "the source file");
	kcache__put(c, 0x1000, &marked);
	kcache__add_source(c, src, st.st_size,
			   (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	ASSERT_OK(kcache__save(c), "saved");
	ASSERT_TRUE(strstr(kcache__path(c), "-src-") != NULL, "a name of its own");
	kcache__free(c);
}

/* Whether the next run over dir finds the verdict. */
static bool warm(const char *dir)
{
	struct kcache *c = kcache__open("/proc/self/exe", dir);
	struct kcache_verdict v;
	bool found = c && kcache__get(c, 0x1000, &v) && !memcmp(&v, &marked, sizeof(v));

	kcache__free(c);
	return found;
}

static void source_tree_cases(const char *dir)
{
	char tree[256], other[256], src[300];

	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(src, sizeof(src), "%s/src.c", tree);
	TEST(source_tree_second_run_warm) {
		if (!ASSERT_TRUE(!mkdir(tree, 0755) && !mkdir(other, 0755) &&
				 write_file(src, "int x;\n"), "two trees, a source file"))
			break;
		save_with_source(tree, src);
		ASSERT_TRUE(warm(tree), "the verdict, on the next run over the same tree");
		ASSERT_FALSE(warm(other), "another tree, another cache");
		ASSERT_TRUE(kcache__open("/proc/self/exe", "/proc/kcsand-no-such-dir") == NULL,
			    "no tree, no cache");
	}
	TEST(source_tree_changed_source_empties_it) {
		ASSERT_TRUE(write_file(src, "int x, y;\n"), "the source rewritten");
		ASSERT_FALSE(warm(tree), "no verdict once a source it read changed");
		save_with_source(tree, src);
		ASSERT_TRUE(warm(tree), "warm again after a run over the new source");
		ASSERT_OK(unlink(src), "the source removed");
		ASSERT_FALSE(warm(tree), "no verdict once a source it read is gone");
	}
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/kcsand-kcache.XXXXXX";
	struct kcache_verdict v;
	struct kcache *c;
	uint64_t text;

	if (!mkdtemp(dir))
		return 1;
	setenv("KCSAND_CACHE_DIR", dir, 1);
	TEST(first_run_is_empty) {
		c = kcache__open("/proc/self/exe", NULL);
		ASSERT_TRUE(c != NULL, "a cache for a file with a build-id");
		if (!c)
			break;
		ASSERT_FALSE(kcache__text(c, &text), "no _text yet");
		ASSERT_FALSE(kcache__get(c, 0x1000, &v), "no verdict yet");
		kcache__set_text(c, 0xffffffff81000000ull);
		kcache__put(c, 0x2000, &plain);
		kcache__put(c, 0x1000, &marked);
		ASSERT_OK(kcache__save(c), "saved");
		ASSERT_OK(access(kcache__path(c), R_OK), "the file is there");
		ASSERT_TRUE(strstr(kcache__path(c), dir) == kcache__path(c), "under KCSAND_CACHE_DIR");
		kcache__free(c);
	}
	TEST(next_run_reads_it) {
		c = kcache__open("/proc/self/exe", NULL);
		ASSERT_TRUE(c && kcache__text(c, &text) && text == 0xffffffff81000000ull, "_text");
		if (!c)
			break;
		ASSERT_TRUE(kcache__get(c, 0x1000, &v) && !memcmp(&v, &marked, sizeof(v)),
			    "the marked site's verdict");
		ASSERT_TRUE(kcache__get(c, 0x2000, &v) && !memcmp(&v, &plain, sizeof(v)),
			    "the plain site's verdict");
		ASSERT_FALSE(kcache__get(c, 0x3000, &v), "no verdict for a site never seen");
		/* kmark's count of the sites left to the DWARF: asked, not counted as hits. */
		ASSERT_TRUE(kcache__has(c, 0x1000) && !kcache__has(c, 0x3000), "has");
		ASSERT_EQ(kcache__hits(c), 2, "hits");
		kcache__free(c);
	}
	TEST(other_file_does_not_see_it) {
		c = kcache__open(argc > 1 ? argv[1] : "/bin/sh", NULL);
		ASSERT_TRUE(c && !kcache__get(c, 0x1000, &v), "another build-id, another cache");
		kcache__free(c);
		ASSERT_TRUE(kcache__open("/etc/hostname", NULL) == NULL, "no build-id, no cache");
	}
	source_tree_cases(dir);
	TEST(unwritable_dir_is_an_error) {
		setenv("KCSAND_CACHE_DIR", "/proc/kcsand-no-such-dir", 1);
		c = kcache__open("/proc/self/exe", NULL);
		if (!c)
			break;
		kcache__put(c, 0x1000, &marked);
		ASSERT_TRUE(kcache__save(c) < 0, "an error");
		kcache__free(c);
	}
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	return test_summary();
}
