// SPDX-License-Identifier: GPL-2.0-only
/*
 * A control for bench/kernel/p15-rt-share.sh: a SCHED_FIFO thread (priority
 * 1, as kcsand's movers) that does nothing but wake every 2 ms, as the lead
 * mover's tick does, and sleep again.  Its own work is a few microseconds a
 * wake-up: whatever run time the guest charges it beyond that is time the
 * guest's CPU spent elsewhere while it was current (interrupts, or QEMU not
 * running the vCPU at all), which is charged to a real-time mover the same way.
 *   rt-tick   (runs until killed)
 */
#include <sched.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec tick = { 0, 2000000 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		perror("rt-tick: SCHED_FIFO");
	for (;;)
		nanosleep(&tick, NULL);
}
