// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kmsg.h"
#include "util/print.h"

struct kmsg_sink {
	char path[256];
	bool kernel_limits;	/* printk_devkmsg=ratelimit: the kernel's per-opener limit applies */
	uint64_t window_start_ms;
	unsigned int in_window;
	struct kmsg_stats st;
};

static const char *kmsg_path(void)
{
	/* The tests may stand in a file or FIFO for the kernel log. */
	const char *p = getenv("KCSAND_KMSG");

	return p && *p ? p : "/dev/kmsg";
}

static int kmsg_openfd(const struct kmsg_sink *k)
{
	return open(k->path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

/*
 * With printk_devkmsg=ratelimit (the default), the kernel lets each
 * opener of /dev/kmsg write 10 lines per 5 s and drops the rest; a
 * report is 15-40 lines.  kcsand's own limit (KMSG_BURST reports per
 * KMSG_INTERVAL_MS) stands in for it, so a report is written through a
 * fresh descriptor every KMSG_KERNEL_BURST lines.
 */
static bool devkmsg_ratelimited(void)
{
	char buf[32] = "";
	FILE *f = fopen("/proc/sys/kernel/printk_devkmsg", "re");

	if (!f)
		return true;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strncmp(buf, "on", 2) != 0;
}

int kmsg_sink__open(struct kmsg_sink **out)
{
	struct kmsg_sink *k = calloc(1, sizeof(*k));
	int fd, err;

	if (!k)
		return -ENOMEM;
	snprintf(k->path, sizeof(k->path), "%s", kmsg_path());
	fd = kmsg_openfd(k);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot write to the kernel log %s: %s%s\n",
			k->path, strerror(-err), err == -EPERM ? " (printk_devkmsg=off?)" : "");
		free(k);
		return err;
	}
	close(fd);
	k->kernel_limits = devkmsg_ratelimited();
	*out = k;
	return 0;
}

static bool kmsg_allow(struct kmsg_sink *k, uint64_t now_ms)
{
	if (!k->in_window || now_ms - k->window_start_ms >= KMSG_INTERVAL_MS) {
		k->window_start_ms = now_ms;
		k->in_window = 0;
	}
	if (k->in_window >= KMSG_BURST)
		return false;
	k->in_window++;
	return true;
}

/* One record: "<3>" (KCSAN's pr_err) and the line, cut to what /dev/kmsg takes. */
static bool kmsg_line(int fd, const char *line, size_t len)
{
	char buf[KMSG_LINE_MAX + 8];
	int n;

	if (len > KMSG_LINE_MAX)
		len = KMSG_LINE_MAX;
	n = snprintf(buf, sizeof(buf), "<3>%.*s\n", (int)len, line);
	return write(fd, buf, n) == n;
}

void kmsg_sink__write(struct kmsg_sink *k, const char *text, uint64_t now_ms)
{
	unsigned int in_fd = 0;
	const char *p = text;
	int fd = -1;

	if (!kmsg_allow(k, now_ms)) {
		k->st.dropped++;
		return;
	}
	while (*p) {
		const char *nl = strchrnul(p, '\n');

		if (fd < 0 || (k->kernel_limits && in_fd == KMSG_KERNEL_BURST)) {
			if (fd >= 0)
				close(fd);
			fd = kmsg_openfd(k);
			in_fd = 0;
		}
		if (fd < 0 || !kmsg_line(fd, p, nl - p))
			k->st.lines_lost++;
		in_fd++;
		p = *nl ? nl + 1 : nl;
	}
	if (fd >= 0)
		close(fd);
	k->st.reports++;
}

void kmsg_sink__stats(const struct kmsg_sink *k, struct kmsg_stats *st)
{
	*st = k->st;
}

void kmsg_sink__free(struct kmsg_sink *k)
{
	free(k);
}
