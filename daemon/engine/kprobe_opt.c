// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's kprobe jump optimization, off while kprobes attach and while
 * they detach.  Each kprobe registered or disarmed queues work for the
 * kprobe optimizer, which runs every few ticks and waits, holding
 * kprobe_mutex, for an RCU-tasks grace period (kprobe_optimizer());
 * register_kprobe() and unregister_kprobe() wait on that mutex.  In the 6.1
 * guest (bench/kernel/p17-kprobe-attach-detach.sh, builds in turn at host
 * load 10): 725 kprobes attached in 13-21 s with it off against 57-74 s;
 * detached from 8 threads in 47-57 s with it off, 54-175 s with it on
 * (three of six runs 74 s or more).  In
 * between it is back on, so that the probes run optimized.  Only a setting
 * of 1 is changed, and only back from the 0 set here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "engine_int.h"
#include "util/print.h"

#define KPROBE_OPT_PATH	"/proc/sys/debug/kprobes-optimization"
/*
 * Fewer probes than this are left to the optimizer: turning it off waits
 * for it once (unoptimize_all_kprobes()), which a few probes do not repay.
 */
#define KPROBE_OPT_MIN	32

/* Write v ('0' or '1') to the setting; 0 or -errno. */
static int kprobe_opt_write(char v)
{
	int fd = open(KPROBE_OPT_PATH, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, &v, 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

/* The setting's first character, or 0 when it cannot be read. */
static char kprobe_opt_read(void)
{
	int fd = open(KPROBE_OPT_PATH, O_RDONLY | O_CLOEXEC);
	char v = 0;

	/* No such file: a kernel without CONFIG_OPTPROBES, nothing to wait for. */
	if (fd < 0)
		return 0;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	return v;
}

bool engine_kprobe_opt_off(size_t nr_probes, const char *why)
{
	int err;

	if (nr_probes < KPROBE_OPT_MIN || kprobe_opt_read() != '1')
		return false;
	err = kprobe_opt_write('0');
	if (err) {
		pr_warn("cannot turn kprobe jump optimization off while %zu kprobes %s "
			"(%s): %s; each may wait for the kprobe optimizer\n",
			nr_probes, why, KPROBE_OPT_PATH, strerror(-err));
		return false;
	}
	pr_info("kprobe jump optimization off while %zu kprobes %s (%s)\n", nr_probes, why,
		KPROBE_OPT_PATH);
	return true;
}

void engine_kprobe_opt_on(bool was_on)
{
	int err;

	if (!was_on)
		return;
	err = kprobe_opt_write('1');
	if (err)
		pr_warn("cannot turn kprobe jump optimization back on (%s): %s; "
			"write 1 there by hand\n", KPROBE_OPT_PATH, strerror(-err));
}
