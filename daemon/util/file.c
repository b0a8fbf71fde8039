// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "file.h"

/* Room for one read of at least this much, and the NUL after the text. */
#define READ_CHUNK	4096

const char *file__cache_dir(void)
{
	const char *d = getenv("KCSAND_CACHE_DIR");

	return d && *d ? d : "/var/cache/kcsand";
}

int file__read_text(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int err = 0;

	while (n <= max) {
		ssize_t r;

		if (ARRAY_RESERVE_MORE(buf, cap, n, READ_CHUNK + 1, 2 * READ_CHUNK)) {
			err = -ENOMEM;
			break;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		n += r;
	}
	if (!err && n > max)
		err = -EFBIG;
	if (!err && memchr(buf, '\0', n))
		err = -EINVAL;
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}
