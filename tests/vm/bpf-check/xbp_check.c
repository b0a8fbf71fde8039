// SPDX-License-Identifier: GPL-2.0-only
/*
 * xbp-check OBJ SYMBOL...: what code-breakpoint sampling (daemon/sampler/kbp.c)
 * relies on, checked in a guest kernel:
 *   1. an execute breakpoint (HW_BREAKPOINT_X, exclude_user) per CPU on
 *      __x64_sys_getppid with hwbp_check.bpf.o's program attached runs the
 *      program once per getppid() call;
 *   2. PERF_EVENT_IOC_MODIFY_ATTRIBUTES moves those events, program still
 *      attached, to __x64_sys_getpid, which then counts its calls, and how
 *      long one move of every CPU's event takes (mean of 2000);
 *   3. for each SYMBOL, whether the kernel opens an execute breakpoint on it
 *      (the kernel refuses some addresses; kcsand refuses more itself).
 * One line per finding; exit status 0 when 1 and 2 held.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "kallsyms.h"

#define MAX_CPUS 64
#define CALLS 1000

static struct perf_event_attr xattr(unsigned long long addr)
{
	return (struct perf_event_attr){
		.type = PERF_TYPE_BREAKPOINT, .size = sizeof(struct perf_event_attr),
		.bp_type = HW_BREAKPOINT_X, .bp_addr = addr, .bp_len = sizeof(long),
		.sample_period = 1, .exclude_user = 1, .exclude_hv = 1,
	};
}

static __s64 hits(int map)
{
	__u32 k = 0;
	__s64 v = 0;

	bpf_map_lookup_elem(map, &k, &v);
	return v;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), fds[MAX_CPUS], map, ok = 1;
	unsigned long long a1 = kallsyms_addr("__x64_sys_getppid");
	unsigned long long a2 = kallsyms_addr("__x64_sys_getpid");
	struct perf_event_attr at = xattr(a1);
	struct bpf_link *links[MAX_CPUS];
	struct bpf_program *prog;
	struct bpf_object *obj;
	__s64 h0, h1, h2;
	double t0;

	if (argc < 2 || !a1 || !a2)
		return fprintf(stderr, "usage: xbp-check OBJ [SYMBOL...]\n"), 2;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj))
		return printf("xbp-check: cannot load %s: FAILED\n", argv[1]), 1;
	prog = bpf_object__find_program_by_name(obj, "hwbp_check");
	map = bpf_map__fd(bpf_object__find_map_by_name(obj, "result"));
	t0 = now_us();
	for (int c = 0; c < ncpu && c < MAX_CPUS; c++) {
		fds[c] = syscall(__NR_perf_event_open, &at, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[c] < 0)
			return printf("xbp-check: open cpu %d: %s: FAILED\n", c, strerror(errno)), 1;
		links[c] = bpf_program__attach_perf_event(prog, fds[c]);
		if (!links[c])
			return printf("xbp-check: attach cpu %d: %s: FAILED\n", c, strerror(errno)), 1;
	}
	printf("xbp-check: opened and attached %d CPUs' execute breakpoints in %.0f us\n", ncpu,
	       now_us() - t0);
	h0 = hits(map);
	for (int i = 0; i < CALLS; i++)
		syscall(__NR_getppid);
	h1 = hits(map);
	at.bp_addr = a2;
	for (int c = 0; c < ncpu; c++)
		if (ioctl(fds[c], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &at))
			return printf("xbp-check: modify cpu %d: %s: FAILED\n", c, strerror(errno)), 1;
	for (int i = 0; i < CALLS; i++)
		syscall(__NR_getpid);
	h2 = hits(map);
	ok = h1 - h0 >= CALLS && h2 - h1 >= CALLS;
	printf("xbp-check: with a BPF program: getppid %lld traps for %d calls, after the move "
	       "getpid %lld for %d: %s\n", (long long)(h1 - h0), CALLS, (long long)(h2 - h1), CALLS,
	       ok ? "ok" : "FAILED");
	t0 = now_us();
	for (int i = 0; i < 2000; i++) {
		at.bp_addr = i & 1 ? a1 : a2;
		for (int c = 0; c < ncpu; c++)
			ioctl(fds[c], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &at);
	}
	printf("xbp-check: one move of %d CPUs' events: %.0f us (mean of 2000)\n", ncpu,
	       (now_us() - t0) / 2000);
	for (int c = 0; c < ncpu; c++)
		bpf_link__destroy(links[c]);
	for (int i = 2; i < argc; i++) {
		unsigned long long a = strncmp(argv[i], "0x", 2) ? kallsyms_addr(argv[i]) :
				       strtoull(argv[i], NULL, 0);
		struct perf_event_attr x = xattr(a);
		int fd = a ? syscall(__NR_perf_event_open, &x, -1, 0, -1, PERF_FLAG_FD_CLOEXEC) : -1;

		printf("xbp-check: %s (0x%llx): %s\n", argv[i], a,
		       !a ? "not in kallsyms" : fd >= 0 ? "accepted" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	bpf_object__close(obj);
	return ok ? 0 : 1;
}
