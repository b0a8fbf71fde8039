// SPDX-License-Identifier: GPL-2.0-only
/*
 * util/file.h's whole-file read: a text larger than one read, exactly the
 * limit and one byte past it, an empty file, a NUL byte, and a pipe (a
 * shell's <(...) as a marks or configuration file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "test.h"
#include "util/file.h"

/* A file holding n bytes of text (and a NUL at nul, when nul < n), read from its start. */
static int text_fd(size_t n, size_t nul)
{
	int fd = memfd_create("kcsand-test", MFD_CLOEXEC);
	char *b = malloc(n ? n : 1);

	for (size_t i = 0; i < n; i++)
		b[i] = i == nul ? '\0' : 'a' + i % 26;
	if (fd >= 0 && (write(fd, b, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET))) {
		close(fd);
		fd = -1;
	}
	free(b);
	return fd;
}

static int read_n(size_t n, size_t nul, size_t max, size_t *len)
{
	int fd = text_fd(n, nul), err;
	char *t = NULL;

	if (fd < 0)
		return -EBADF;
	err = file__read_text(fd, max, &t, len);
	close(fd);
	if (!err && (t[*len] != '\0' || (*len && t[*len - 1] != 'a' + (*len - 1) % 26)))
		err = -EILSEQ;	/* the text not as written, or not NUL-terminated */
	free(t);
	return err;
}

int main(void)
{
	size_t len = 0;

	TEST(text_over_several_reads) {
		ASSERT_EQ(read_n(100000, -1, 1 << 20, &len), 0, "100000 bytes");
		ASSERT_EQ(len, 100000, "the whole of it");
	}
	TEST(size_limit) {
		ASSERT_EQ(read_n(50000, -1, 50000, &len), 0, "exactly the limit");
		ASSERT_EQ(len, 50000, "all of it");
		ASSERT_EQ(read_n(50001, -1, 50000, &len), -EFBIG, "one byte past it");
	}
	TEST(empty_and_nul) {
		ASSERT_EQ(read_n(0, -1, 100, &len), 0, "an empty file");
		ASSERT_EQ(len, 0, "no text");
		ASSERT_EQ(read_n(10, 5, 100, &len), -EINVAL, "a NUL byte: no text");
	}
	TEST(pipe) {
		int p[2];
		char *t = NULL;

		ASSERT_EQ(pipe(p), 0, "pipe");
		ASSERT_EQ(write(p[1], "x 1\ny 2\n", 8), 8, "written");
		close(p[1]);
		ASSERT_EQ(file__read_text(p[0], 100, &t, &len), 0, "read to its end");
		ASSERT_TRUE(t && len == 8 && !strcmp(t, "x 1\ny 2\n"), "the text");
		free(t);
		close(p[0]);
	}
	return test_summary();
}
