// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel-log sink with a regular file standing in for /dev/kmsg
 * ($KCSAND_KMSG): one record per line with KCSAN's level, long lines cut to
 * what /dev/kmsg takes, and the rate limit counted, not blocking.
 */
#include <stdlib.h>
#include <unistd.h>
#include "test.h"
#include "service/kmsg.h"

static const char report[] =
	"==================================================================\n"
	"BUG: KCSAN: data-race in reader / writer\n"
	"\n"
	"write to 0x000055f1c4a4c018 of 4 bytes by task 7 on cpu 1:\n"
	" writer+0x4/0x10 t.c:3\n"
	"\n";

static int count_lines(const char *path, int *longest, int *unprefixed)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int n = 0;

	*longest = *unprefixed = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int len = strlen(line);

		if (len > *longest)
			*longest = len;
		if (strncmp(line, "<3>", 3))
			(*unprefixed)++;
		n++;
	}
	fclose(f);
	return n;
}

int main(void)
{
	char path[] = "/tmp/kcsand-kmsg-XXXXXX";
	struct kmsg_sink *k = NULL;
	struct kmsg_stats st;
	int fd = mkstemp(path), longest, unprefixed;
	char *big;

	setenv("KCSAND_KMSG", path, 1);
	TEST(kmsg_line_per_record) {
		ASSERT_OK(kmsg_sink__open(&k), "open");
		kmsg_sink__write(k, report, 1000);
		ASSERT_EQ(count_lines(path, &longest, &unprefixed), 6, "one record per line");
		ASSERT_EQ(unprefixed, 0, "every record at KCSAN's level (<3>)");
		kmsg_sink__stats(k, &st);
		ASSERT_EQ(st.reports, 1, "reports");
		ASSERT_EQ(st.lines_lost, 0, "lines lost");
	}
	TEST(kmsg_report_longer_than_kernel_burst) {
		char text[sizeof(report) * 5] = "";

		for (int i = 0; i < 5; i++)
			strcat(text, report);
		ASSERT_OK(ftruncate(fd, 0), "truncate");
		kmsg_sink__write(k, text, 1000);
		/* Past KMSG_KERNEL_BURST lines a new descriptor goes on where the last one ended. */
		ASSERT_EQ(count_lines(path, &longest, &unprefixed), 30, "every line, in order");
	}
	TEST(kmsg_long_line_cut) {
		big = malloc(3000);
		memset(big, 'x', 2999);
		big[2999] = 0;
		ASSERT_OK(ftruncate(fd, 0), "truncate");
		kmsg_sink__write(k, big, 1001);
		ASSERT_EQ(count_lines(path, &longest, &unprefixed), 1, "one record");
		ASSERT_EQ(longest, KMSG_LINE_MAX + 4, "cut to what /dev/kmsg takes");
		free(big);
	}
	TEST(kmsg_rate_limit) {
		for (unsigned int i = 0; i < 2 * KMSG_BURST; i++)
			kmsg_sink__write(k, report, 2000 + i);
		kmsg_sink__stats(k, &st);
		/* Three were written before: the window holds KMSG_BURST in all. */
		ASSERT_EQ(st.reports, KMSG_BURST, "written within the burst");
		ASSERT_EQ(st.dropped, KMSG_BURST + 3, "the rest counted as dropped");
		kmsg_sink__write(k, report, 1000 + KMSG_INTERVAL_MS);
		kmsg_sink__stats(k, &st);
		ASSERT_EQ(st.reports, KMSG_BURST + 1, "a new window writes again");
	}
	TEST(kmsg_missing_device) {
		struct kmsg_sink *k2 = NULL;

		setenv("KCSAND_KMSG", "/nonexistent/kmsg", 1);
		ASSERT_TRUE(kmsg_sink__open(&k2) < 0, "open fails with a message");
		ASSERT_TRUE(k2 == NULL, "no sink");
	}
	kmsg_sink__free(k);
	close(fd);
	unlink(path);
	return test_summary();
}
