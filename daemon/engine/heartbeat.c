// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel mode's heartbeat (include/kcsand.h, bpf/kcsand.bpf.c's
 * kernel_may_check): a thread writes CLOCK_MONOTONIC into the BPF object's
 * .bss every KCSAND_HEARTBEAT_PERIOD_MS, and the kernel programs check
 * nothing once it is older than KCSAND_HEARTBEAT_TIMEOUT_NS.  So probes and
 * breakpoints of a daemon that is stopped (SIGSTOP, a debugger), starved of
 * CPU, or gone while its links live on (pinned, or an fd passed on) stall
 * nothing.  A thread of its own, not the poll loop: a report that takes
 * seconds to symbolize is not a daemon that cannot run.  Real-time at the
 * lowest priority, the breakpoint movers' (sampler/kbp_mover.c): what it must show
 * is that the threads that take breakpoints off hot sites get to run.  At
 * normal priority it lost to the workload and to those very threads (one
 * ten-minute run left 265,879 kernel hits unchecked, docs/kernel-mode.md).
 * Its real-time share is a store every KCSAND_HEARTBEAT_PERIOD_MS.
 * Where real-time is refused (no CAP_SYS_NICE), it beats at normal priority.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine_int.h"
#include "kcsand.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"
#include "util/thread.h"

struct heartbeat {
	struct kcsand_bpf *skel;
	pthread_t thread;
	_Atomic bool stop;
};

static void beat(struct heartbeat *hb, uint64_t now)
{
	__atomic_store_n(&hb->skel->bss->heartbeat_ns, now, __ATOMIC_RELEASE);
}

static void *beat_loop(void *arg)
{
	struct heartbeat *hb = arg;
	struct timespec period = { 0, KCSAND_HEARTBEAT_PERIOD_MS * 1000000L };

	thread__fifo(1);
	while (!hb->stop) {
		beat(hb, clock__now_ns());
		nanosleep(&period, NULL);
	}
	return NULL;
}

int engine_heartbeat_start(struct kcsand_bpf *skel, struct heartbeat **out)
{
	struct heartbeat *hb = calloc(1, sizeof(*hb));
	int err;

	if (!hb)
		return -ENOMEM;
	hb->skel = skel;
	/* The first beat before any probe is attached: a program sees a live daemon. */
	beat(hb, clock__now_ns());
	err = pthread_create(&hb->thread, NULL, beat_loop, hb);
	if (err) {
		pr_warn("cannot start the heartbeat thread: %s\n", strerror(err));
		free(hb);
		return -err;
	}
	*out = hb;
	return 0;
}

void engine_heartbeat_stop(struct heartbeat *hb)
{
	if (!hb)
		return;
	hb->stop = true;
	pthread_join(hb->thread, NULL);
	/* Every kernel program is inert from here on, while links are being closed. */
	beat(hb, 0);
	free(hb);
}
