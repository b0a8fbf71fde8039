// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether this machine's debug registers trap in user mode.
 *
 * perf_event_open() of a breakpoint event succeeds wherever the kernel has
 * CONFIG_HAVE_HW_BREAKPOINT, but some hypervisors never deliver the debug
 * exception it relies on: the event opens, the debug register is written,
 * and no access ever traps.  Every hardware feature of kcsand (--watch,
 * escalation of races of unknown origin, hot turns on one thread) would
 * then run and see nothing, silently.  One write to a variable of our own
 * under a write breakpoint tells the two apart, once per process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "hwbp.h"

static volatile uint32_t probe_var;
static int traps_result;
static pthread_once_t traps_once = PTHREAD_ONCE_INIT;

static void check_traps(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (uintptr_t)&probe_var,
		.bp_len = HW_BREAKPOINT_LEN_4,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	uint64_t count = 0;
	int fd;

	fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		traps_result = -errno;
		return;
	}
	for (int i = 0; i < 4; i++)
		probe_var = i;
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		traps_result = -EIO;
	else
		traps_result = count > 0;
	close(fd);
}

int hwbp__user_traps(void)
{
	pthread_once(&traps_once, check_traps);
	return traps_result;
}

static void *check_thread(void *arg)
{
	(void)arg;
	hwbp__user_traps();
	return NULL;
}

void hwbp__user_traps_start(void)
{
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr))
		return;	/* the first caller checks, as before */
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_create(&t, &attr, check_thread, NULL);
	pthread_attr_destroy(&attr);
}

const char *hwbp__no_traps_why(void)
{
	int r = hwbp__user_traps();

	if (r > 0)
		return NULL;
	if (r == 0)
		return "this machine's debug registers do not trap (a write breakpoint on a test "
		       "variable counted 0 of 4 writes: a hypervisor that does not pass them through?)";
	return strerror(-r);
}
