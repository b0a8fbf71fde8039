// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/maps as util/proc_maps.h reads it: each field of a line, the
 * paths the kernel writes (spaces, " (deleted)", [heap], none), and this
 * process's own maps, where the code of this test must be found.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "test.h"
#include "util/proc_maps.h"

struct find_code {
	uint64_t addr;
	char path[PATH_MAX];
	int seen;
};

static int find_code(const struct proc_map *m, void *arg)
{
	struct find_code *fc = arg;

	fc->seen++;
	if (fc->addr < m->start || fc->addr >= m->end || !proc_map__exec(m) || !proc_map__file(m))
		return 0;
	snprintf(fc->path, sizeof(fc->path), "%s", m->path);
	return 7;	/* what proc_maps__for_each must give back */
}

int main(void)
{
	struct proc_map m;

	TEST(parse_file_mapping) {
		char line[] = "55f1c4a4b000-55f1c4a4d000 r-xp 00001000 fd:01 1234567"
			      "                    /usr/bin/my prog (deleted)\n";

		ASSERT_OK(proc_map__parse(line, &m), "parse");
		ASSERT_EQ(m.start, 0x55f1c4a4b000ull, "start");
		ASSERT_EQ(m.end, 0x55f1c4a4d000ull, "end");
		ASSERT_STREQ(m.perms, "r-xp", "perms");
		ASSERT_EQ(m.pgoff, 0x1000, "pgoff");
		ASSERT_EQ(major(m.dev), 0xfd, "major");
		ASSERT_EQ(minor(m.dev), 1, "minor");
		ASSERT_EQ(m.inode, 1234567, "inode");
		ASSERT_STREQ(m.path, "/usr/bin/my prog (deleted)", "the path, spaces and all");
		ASSERT_TRUE(proc_map__exec(&m) && proc_map__file(&m), "an executable file mapping");
	}
	TEST(parse_anonymous_and_special) {
		char anon[] = "7f0000001000-7f0000003000 rw-p 00000000 00:00 0 \n";
		char heap[] = "5600000a0000-5600000c1000 rw-p 00000000 00:00 0          [heap]\n";

		ASSERT_OK(proc_map__parse(anon, &m), "parse anonymous");
		ASSERT_STREQ(m.path, "", "anonymous memory has no path");
		ASSERT_EQ(m.inode, 0, "no inode");
		ASSERT_FALSE(proc_map__exec(&m) || proc_map__file(&m), "neither code nor a file");
		ASSERT_OK(proc_map__parse(heap, &m), "parse [heap]");
		ASSERT_STREQ(m.path, "[heap]", "[heap]");
		ASSERT_FALSE(proc_map__file(&m), "[heap] is no file");
	}
	TEST(parse_refuses_what_is_no_mapping) {
		char empty[] = "\n", words[] = "not a mapping at all\n", cut[] = "1000-2000 r-xp 0\n";

		ASSERT_EQ(proc_map__parse(empty, &m), -EINVAL, "an empty line");
		ASSERT_EQ(proc_map__parse(words, &m), -EINVAL, "words");
		ASSERT_EQ(proc_map__parse(cut, &m), -EINVAL, "a line cut short");
	}
	TEST(own_maps_hold_own_code) {
		struct find_code fc = { .addr = (uint64_t)(uintptr_t)find_code };
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		ASSERT_EQ(proc_maps__for_each(0, find_code, &fc), 7, "the callback's value back");
		ASSERT_STREQ(fc.path, exe, "this test's code is mapped from /proc/self/exe");
		fc.seen = 0;
		fc.path[0] = '\0';
		ASSERT_EQ(proc_maps__for_each(getpid(), find_code, &fc), 7, "by pid, the same");
		ASSERT_STREQ(fc.path, exe, "by pid, the same file");
	}
	TEST(gone_process_is_an_error) {
		struct find_code fc = { 0 };

		/* Above the largest pid_max Linux allows (4194304): no such process. */
		ASSERT_EQ(proc_maps__for_each(99999999, find_code, &fc), -ENOENT, "no such process");
		ASSERT_EQ(fc.seen, 0, "no callback");
	}
	return test_summary();
}
