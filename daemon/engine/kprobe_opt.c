// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel settings held while many kprobes attach or detach, one table.
 *
 * Jump optimization, off for both: each kprobe registered or disarmed
 * queues work for the kprobe optimizer, which runs every few ticks and
 * waits, holding kprobe_mutex, for an RCU-tasks grace period
 * (kprobe_optimizer()); register_kprobe() and unregister_kprobe() wait on
 * that mutex.  In the 6.1 guest (bench/kernel/p17-kprobe-attach-detach.sh,
 * builds in turn at host load 10): 725 kprobes attached in 13-21 s with it
 * off against 57-74 s; detached from 8 threads in 47-57 s with it off,
 * 54-175 s with it on.  In between it is back on, so that the probes run
 * optimized.
 *
 * Expedited RCU grace periods, on for a detach: closing a kprobe's perf
 * event waits for an RCU and an SRCU grace period inside the tracing
 * core's event_mutex (perf_trace_event_unreg()), so the closes queue one
 * grace period after another whatever the threads (util/link_close.c);
 * an expedited one asks each CPU at once instead of waiting for its
 * ticks.  Other users of synchronize_rcu() get the same for that while.
 *
 * Each setting is changed only from its usual value, and put back to it
 * only by the run that changed it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "engine_int.h"
#include "util/print.h"

/*
 * Fewer probes than this are left alone: turning the optimizer off waits
 * for it once (unoptimize_all_kprobes()), which a few probes do not repay.
 */
#define KPROBE_HOLD_MIN	32

static const struct kprobe_setting {
	const char *path;
	char usual, held;	/* changed from usual to held, and back */
	unsigned int batches;	/* (1 << enum kprobe_batch) it is held for */
	const char *held_what;	/* "... while N kprobes attach" */
	const char *unheld_cost;	/* what each kprobe pays when it cannot be held */
} settings[] = {
	{ "/proc/sys/debug/kprobes-optimization", '1', '0',
	  1 << KPROBE_BATCH_ATTACH | 1 << KPROBE_BATCH_DETACH,
	  "kprobe jump optimization off", "each may wait for the kprobe optimizer" },
	{ "/sys/kernel/rcu_expedited", '0', '1', 1 << KPROBE_BATCH_DETACH,
	  "expedited RCU grace periods", "each waits for a grace period of its own" },
};

static const char *const batch_name[] = {
	[KPROBE_BATCH_ATTACH] = "attach",
	[KPROBE_BATCH_DETACH] = "detach",
};

/* Write v to path; 0 or -errno. */
static int setting_write(const char *path, char v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, &v, 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

/* The setting's first character, or 0 when it cannot be read (no such setting here). */
static char setting_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char v = 0;

	if (fd < 0)
		return 0;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	return v;
}

unsigned int engine_kprobe_hold(size_t nr_probes, enum kprobe_batch b)
{
	unsigned int held = 0;

	if (nr_probes < KPROBE_HOLD_MIN)
		return 0;
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const struct kprobe_setting *s = &settings[i];
		int err;

		if (!(s->batches & 1u << b) || setting_read(s->path) != s->usual)
			continue;
		err = setting_write(s->path, s->held);
		if (err) {
			pr_warn("cannot hold %s while %zu kprobes %s (%s): %s; %s\n", s->held_what,
				nr_probes, batch_name[b], s->path, strerror(-err), s->unheld_cost);
			continue;
		}
		pr_info("%s while %zu kprobes %s (%s)\n", s->held_what, nr_probes, batch_name[b],
			s->path);
		held |= 1u << i;
	}
	return held;
}

void engine_kprobe_release(unsigned int held)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const struct kprobe_setting *s = &settings[i];
		int err;

		if (!(held & 1u << i))
			continue;
		err = setting_write(s->path, s->usual);
		if (err)
			pr_warn("cannot put %s back to %c: %s; write %c there by hand\n", s->path,
				s->usual, strerror(-err), s->usual);
	}
}
