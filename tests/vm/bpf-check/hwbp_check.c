// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwbp-check OBJ [SYMBOL]: arms a write breakpoint on the kernel variable
 * SYMBOL (default jiffies_64, written by the timer tick) on every online CPU
 * through perf (PERF_TYPE_BREAKPOINT, pid -1, exclude_user), attaches
 * hwbp_check.bpf.o's program to each event, waits a second, detaches, and
 * checks that the program ran with the trap's kernel registers and stack.
 * Run by tests/vm/guest.sh (kcsan-vm --check-bpf).  Exit status 0 when the
 * breakpoint trapped, 1 otherwise, with one line saying what was seen.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kallsyms.h"

#define MAX_CPUS 64

int main(int argc, char **argv)
{
	const char *name = argc > 2 ? argv[2] : "jiffies_64";
	struct bpf_link *links[MAX_CPUS] = {};
	int fds[MAX_CPUS], ncpu = sysconf(_SC_NPROCESSORS_ONLN), n = 0, ok;
	unsigned long long addr = kallsyms_addr(name);
	struct bpf_program *prog;
	struct bpf_object *obj;
	const char *why = "";
	__s64 v[3] = {}, stack;
	__u64 hits, ip;
	int res;

	if (argc < 2) {
		fprintf(stderr, "usage: hwbp-check OBJ [SYMBOL]\n");
		return 2;
	}
	if (!addr) {
		printf("bpf-hwbp-check: %s: not in /proc/kallsyms: FAILED\n", name);
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		printf("bpf-hwbp-check: cannot load %s: FAILED\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "hwbp_check");
	for (int cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_BREAKPOINT,
			.size = sizeof(a),
			.bp_type = HW_BREAKPOINT_W,
			.bp_addr = addr,
			.bp_len = HW_BREAKPOINT_LEN_8,
			.sample_period = 1,
			.exclude_user = 1,
			.exclude_hv = 1,
		};
		int fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			printf("bpf-hwbp-check: perf_event_open(breakpoint on %s, cpu %d): %s: FAILED\n",
			       name, cpu, strerror(errno));
			return 1;
		}
		fds[n] = fd;
		links[n] = bpf_program__attach_perf_event(prog, fd);
		if (!links[n]) {
			printf("bpf-hwbp-check: cannot attach the program to cpu %d's breakpoint: %s: FAILED\n",
			       cpu, strerror(errno));
			return 1;
		}
		n++;
	}
	sleep(1);
	for (int i = 0; i < n; i++) {
		bpf_link__destroy(links[i]);
		close(fds[i]);
	}
	res = bpf_map__fd(bpf_object__find_map_by_name(obj, "result"));
	for (__u32 k = 0; k < 3; k++)
		bpf_map_lookup_elem(res, &k, &v[k]);
	hits = v[0];
	ip = v[1];
	stack = v[2];
	bpf_object__close(obj);
	if (!hits)
		why = " (no trap)";
	else if (ip < 0xffff800000000000ULL)
		why = " (trap ip not in the kernel)";
	else if (stack < 16)
		why = " (no kernel stack from the trap)";
	ok = !*why;
	printf("bpf-hwbp-check: write breakpoint on %s (0x%llx) on %d CPUs: hits %llu, last ip 0x%llx, "
	       "stack %lld frames: %s%s\n", name, addr, n, (unsigned long long)hits,
	       (unsigned long long)ip, (long long)(stack > 0 ? stack / 8 : stack),
	       ok ? "ok" : "FAILED", why);
	return ok ? 0 : 1;
}
