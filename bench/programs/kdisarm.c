// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/kdisarm: what it costs to take a kprobe out of the sampler's armed
 * set, in the kernel it runs on (bench/kernel/p7-kernel-disarm.sh runs it in the
 * test guest).  Puts a kprobe with a BPF program on the first instruction
 * after the ftrace call of NR cheap syscall handlers (kcsand probes inside
 * functions, so these are int3 kprobes, which the kernel may optimize to
 * jumps later), then measures, per getppid(2) call over CALLS calls, the
 * best of 5 rounds that alternate between the cases:
 *   - no kprobe; armed (the program runs to the end); unarmed by the armed
 *     bit (the program returns after one map lookup);
 *   - PERF_EVENT_IOC_DISABLE on the kprobe's perf event: what the ioctl
 *     takes, and whether the program still runs;
 * and what registering and unregistering one kprobe takes.
 *   kdisarm [CALLS]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kdisarm.skel.h"

static const char *const funcs[] = {
	"__x64_sys_getppid", "__x64_sys_getpid", "__x64_sys_getuid", "__x64_sys_geteuid",
	"__x64_sys_getgid", "__x64_sys_getegid", "__x64_sys_gettid", "__x64_sys_getpgrp",
};
#define NR (sizeof(funcs) / sizeof(funcs[0]))

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#define ROUNDS 5

/* Nanoseconds per getppid(2) over calls calls; *best keeps the lowest. */
static void per_call_ns(int calls, double *best)
{
	double t0 = now_us(), ns;

	for (int i = 0; i < calls; i++)
		syscall(SYS_getppid);
	ns = (now_us() - t0) * 1000 / calls;
	if (ns < *best)
		*best = ns;
}

static int kprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
	int t = -1;

	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

/* A kprobe perf event at func+off, or -errno. */
static int open_kprobe(int type, const char *func, unsigned long off)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = type,
		.config1 = (unsigned long)func,
		.config2 = off,
	};
	int fd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static bool optimized(const char *func)
{
	char line[512];
	bool opt = false;
	FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, func) && strstr(line, "[OPTIMIZED]"))
			opt = true;
	fclose(f);
	return opt;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 20000, type = kprobe_pmu_type(), fds[NR];
	struct bpf_link *links[NR] = {};
	double reg_us = 0, unreg_us = 0, dis_us = 0, en_us = 0;
	double base = 1e18, armed = 1e18, unarmed = 1e18, disabled = 1e18;
	struct kdisarm_bpf *skel;
	__u64 all = ~0ULL, none = 0, runs0;
	__u32 zero = 0;
	int bm;

	if (type < 0) {
		fprintf(stderr, "kdisarm: no kprobe PMU (CONFIG_KPROBE_EVENTS)\n");
		return 2;
	}
	skel = kdisarm_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "kdisarm: cannot load the BPF object: %s\n", strerror(errno));
		return 2;
	}
	bm = bpf_map__fd(skel->maps.armed_bitmap);
	for (int r = 0; r < ROUNDS; r++)
		per_call_ns(calls, &base);

	for (size_t i = 0; i < NR; i++) {
		double t0 = now_us();
		int fd = -EINVAL;

		/* After the 5-byte ftrace call; after endbr64 too on IBT kernels. */
		for (unsigned long off = 5; off <= 9 && fd < 0; off += 4)
			fd = open_kprobe(type, funcs[i], off);
		if (fd < 0) {
			fprintf(stderr, "kdisarm: cannot put a kprobe in %s: %s\n", funcs[i],
				strerror(-fd));
			return 2;
		}
		links[i] = bpf_program__attach_perf_event(skel->progs.kdisarm, fd);
		if (!links[i]) {
			fprintf(stderr, "kdisarm: cannot attach to %s: %s\n", funcs[i],
				strerror(errno));
			return 2;
		}
		fds[i] = fd;
		reg_us += now_us() - t0;
	}
	for (int r = 0; r < ROUNDS; r++) {
		bpf_map_update_elem(bm, &zero, &all, BPF_ANY);
		per_call_ns(calls, &armed);
		bpf_map_update_elem(bm, &zero, &none, BPF_ANY);
		per_call_ns(calls, &unarmed);
	}
	printf("kdisarm: the kprobe in %s was %s by then\n", funcs[0],
	       optimized(funcs[0]) ? "optimized (a jump)" : "not optimized (int3)");

	for (size_t i = 0; i < NR; i++) {
		double t0 = now_us();

		if (ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0))
			perror("kdisarm: PERF_EVENT_IOC_DISABLE");
		dis_us += now_us() - t0;
	}
	runs0 = skel->bss->runs;
	for (int r = 0; r < ROUNDS; r++)
		per_call_ns(calls, &disabled);
	printf("kdisarm: after PERF_EVENT_IOC_DISABLE the program ran %llu times in %d calls\n",
	       (unsigned long long)(skel->bss->runs - runs0), ROUNDS * calls);
	for (size_t i = 0; i < NR; i++) {
		double t0 = now_us();

		if (ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0))
			perror("kdisarm: PERF_EVENT_IOC_ENABLE");
		en_us += now_us() - t0;
	}
	for (size_t i = 0; i < NR; i++) {
		double t0 = now_us();

		bpf_link__destroy(links[i]);	/* closes the perf event: unregisters the kprobe */
		unreg_us += now_us() - t0;
	}
	printf("kdisarm: per getppid(2), ns: no kprobe %.0f; kprobe armed %.0f, unarmed by the "
	       "bit %.0f; perf event disabled %.0f\n", base, armed, unarmed, disabled);
	printf("kdisarm: per kprobe, ms: register and attach %.1f, unregister %.1f; "
	       "PERF_EVENT_IOC_ENABLE %.3f, PERF_EVENT_IOC_DISABLE %.3f\n", reg_us / NR / 1000,
	       unreg_us / NR / 1000, en_us / NR / 1000, dis_us / NR / 1000);
	kdisarm_bpf__destroy(skel);
	return 0;
}
