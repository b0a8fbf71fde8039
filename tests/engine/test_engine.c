// SPDX-License-Identifier: GPL-2.0-only
/*
 * The watchpoint protocol of bpf/engine.bpf.h, driven step by step with
 * BPF_PROG_TEST_RUN (tests/engine/engine_test.bpf.c): a watcher arms,
 * stalls and disarms in separate runs, a consumer claims and publishes in
 * separate runs, so each test below is one interleaving of two CPUs,
 * replayed exactly.  Needs root; fails (never skips) when BPF cannot run.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "test.h"
#include "kcsand.h"
#include "engine_test.h"
#include "../../bpf/watchpoint.h"
#include "engine_test.skel.h"

#define MAX_REPORTS 8
#define MAX_USTACKS 4

static struct engine_test_bpf *skel;
static struct ring_buffer *rb;
static struct kcsand_report reports[MAX_REPORTS];
static int nr_reports;
/* Stack copies (ustack.bpf.h), and where each record came in the ring. */
static struct kcsand_ustack ustacks[MAX_USTACKS];
static int nr_ustacks, nr_records, report_at[MAX_REPORTS], ustack_at[MAX_USTACKS];

/* The memory the accesses touch: the test process's own, as in user mode. */
static volatile uint64_t mem[32] __attribute__((aligned(64)));

static int on_record(void *ctx, void *data, size_t len)
{
	const __u32 type = *(const __u32 *)data;

	if (type == KCSAND_REC_REPORT && len >= sizeof(struct kcsand_report) &&
	    nr_reports < MAX_REPORTS) {
		report_at[nr_reports] = nr_records;
		memcpy(&reports[nr_reports++], data, sizeof(struct kcsand_report));
	}
	if (type == KCSAND_REC_USTACK && len >= sizeof(struct kcsand_ustack) &&
	    nr_ustacks < MAX_USTACKS) {
		ustack_at[nr_ustacks] = nr_records;
		memcpy(&ustacks[nr_ustacks++], data, sizeof(struct kcsand_ustack));
	}
	nr_records++;
	return 0;
}

static void drain(void)
{
	ring_buffer__consume(rb);
}

/* One step: prog plays the access (addr, size, type) as watcher w. */
static int step(struct bpf_program *prog, const volatile void *addr, uint32_t size, uint32_t type,
		uint32_t w)
{
	uint64_t args[1] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));
	int err;

	skel->bss->in.addr = (uintptr_t)addr;
	skel->bss->in.ip = 0x1000 + w * 0x10 + type;	/* tells the sides apart in a report */
	skel->bss->in.size = size;
	skel->bss->in.type = type;
	skel->bss->in.watcher = w;
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	if (err || opts.retval) {
		ASSERT__FAIL("BPF_PROG_TEST_RUN of %s: %s, retval %u", bpf_program__name(prog),
			     err ? strerror(-err) : "ok", opts.retval);
		return -1;
	}
	return skel->bss->out.ret;
}

#define ARM(a, sz, t, w)	step(skel->progs.watch_arm, a, sz, t, w)
#define STALL(a, sz, t, w)	step(skel->progs.watch_stall, a, sz, t, w)
#define DISARM(a, sz, t, w)	step(skel->progs.watch_disarm, a, sz, t, w)
#define ACCESS(a, sz, t)	step(skel->progs.access, a, sz, t, 0)
#define CLAIM(a, sz, t)		step(skel->progs.claim, a, sz, t, 0)
#define PUBLISH(a, sz, t)	step(skel->progs.publish, a, sz, t, 0)

#define W KCSAND_ACCESS_WRITE
#define R 0

static uint64_t counter(enum kcsand_counter c)
{
	return skel->bss->counters[c];
}

static uint64_t slot_of(const volatile void *addr)
{
	return skel->bss->watchpoints[wp_slot((uintptr_t)addr)];
}

/* Every test starts from free slots, zero counters, no stall, an empty ring. */
static void reset(void)
{
	drain();
	memset((void *)skel->bss->watchpoints, 0, sizeof(skel->bss->watchpoints));
	memset((void *)skel->bss->counters, 0, sizeof(skel->bss->counters));
	memset((void *)mem, 0, sizeof(mem));
	skel->bss->in.user = 1;
	skel->bss->in.pair = 0;
	skel->bss->in.sp = 0;
	skel->data->params.udelay_task = 0;
	skel->data->params.delay_randomize = 0;
	skel->data->params.consumer_wait_us = 0;
	nr_reports = nr_ustacks = nr_records = 0;
}

static void test_encoding(void)
{
	TEST(arm_encodes_the_access) {
		uint32_t gen = skel->bss->wp_generation;
		uint64_t wp;

		reset();
		ASSERT_EQ(ARM(&mem[1], 8, W, 0), 0, "arm");
		wp = slot_of(&mem[1]);
		ASSERT_EQ(wp, skel->bss->out.wp, "the slot of the line holds the watchpoint");
		ASSERT_EQ(wp_addr(wp), (uintptr_t)&mem[1], "address");
		ASSERT_EQ(wp_size(wp), 8, "size");
		ASSERT_TRUE(wp & WP_WRITE, "write bit");
		ASSERT_EQ(wp_gen(wp), gen & WP_GEN_MASK, "generation");
		ASSERT_EQ(counter(KCSAND_CTR_SETUP_WATCHPOINTS), 1, "setup_watchpoints");
		ASSERT_EQ(counter(KCSAND_CTR_USED_WATCHPOINTS), 1, "used_watchpoints");
		DISARM(&mem[1], 8, W, 0);
		ASSERT_EQ(slot_of(&mem[1]), 0, "free after disarm");
		ASSERT_EQ(counter(KCSAND_CTR_USED_WATCHPOINTS), 0, "used_watchpoints after");
	}
	TEST(one_watcher_a_line) {
		reset();
		ASSERT_EQ(ARM(&mem[0], 8, R, 0), 0, "first watcher");
		ASSERT_EQ(ARM(&mem[7], 8, R, 1), -1, "second watcher, same line");
		ASSERT_EQ(counter(KCSAND_CTR_NO_CAPACITY), 1, "no_capacity");
		DISARM(&mem[0], 8, R, 0);
	}
}

static void test_consume(void)
{
	TEST(read_never_consumes_a_read) {
		reset();
		ARM(&mem[0], 8, R, 0);
		ASSERT_EQ(ACCESS(&mem[0], 8, R), 0, "found");
		ASSERT_FALSE(slot_of(&mem[0]) & WP_CONSUMED, "still armed");
		DISARM(&mem[0], 8, R, 0);
		drain();
		ASSERT_EQ(nr_reports, 0, "reports");
	}
	TEST(overlapping_write_consumes_and_is_reported) {
		reset();
		ARM(&mem[0], 8, R, 0);
		ASSERT_EQ(ACCESS((char *)&mem[0] + 4, 4, W), 1, "found");
		ASSERT_TRUE(slot_of(&mem[0]) & WP_CONSUMED, "consumed");
		ASSERT_EQ(counter(KCSAND_CTR_DATA_RACES), 1, "data_races");
		DISARM(&mem[0], 8, R, 0);
		drain();
		if (ASSERT_EQ(nr_reports, 1, "reports")) {
			ASSERT_TRUE(reports[0].has_other, "known origin");
			ASSERT_EQ(reports[0].this.addr, (uintptr_t)&mem[0], "watcher's address");
			ASSERT_EQ(reports[0].other.addr, (uintptr_t)&mem[0] + 4, "consumer's address");
			ASSERT_EQ(reports[0].other.size, 4, "consumer's size");
			ASSERT_EQ(reports[0].other.type, W, "consumer writes");
			ASSERT_EQ(reports[0].other.pid, getpid(), "consumer's process");
		}
		ASSERT_EQ(slot_of(&mem[0]), 0, "free after the report");
	}
	TEST(access_from_the_line_before) {
		/* A watchpoint near a line's end reaches an access that starts in the next line. */
		reset();
		ARM(&mem[7], 8, R, 0);
		ASSERT_EQ(ACCESS((char *)&mem[7] + 4, 16, W), 1, "found across the line boundary");
		DISARM(&mem[7], 8, R, 0);
		drain();
		ASSERT_EQ(nr_reports, 1, "reports");
	}
	TEST(change_without_consumer_is_unknown_origin) {
		reset();
		ARM(&mem[0], 8, R, 0);
		mem[0] = 42;	/* an unprobed writer */
		STALL(&mem[0], 8, R, 0);
		DISARM(&mem[0], 8, R, 0);
		drain();
		if (ASSERT_EQ(nr_reports, 1, "reports")) {
			ASSERT_FALSE(reports[0].has_other, "unknown origin");
			ASSERT_EQ(reports[0].value_change, KCSAND_VALUE_CHANGE_TRUE, "value changed");
			ASSERT_EQ(reports[0].new_value[0], 42, "new value");
		}
		ASSERT_EQ(counter(KCSAND_CTR_RACES_UNKNOWN_ORIGIN), 1, "races_unknown_origin");
	}
}

/* Finding 7 of issue 10: the slot is the watcher's until its report holds the record. */
static void test_slot_reuse(void)
{
	TEST(consumed_slot_is_held_until_reported) {
		reset();
		ARM(&mem[0], 8, R, 0);
		ASSERT_EQ(CLAIM(&mem[0], 8, W), 1, "claimed");
		ASSERT_EQ(ARM(&mem[1], 8, R, 1), -1, "another watcher cannot take the slot");
		PUBLISH(&mem[0], 8, W);
		ASSERT_EQ(ARM(&mem[1], 8, R, 1), -1, "nor after the record, before the report");
		DISARM(&mem[0], 8, R, 0);
		drain();
		if (ASSERT_EQ(nr_reports, 1, "reports"))
			ASSERT_EQ(reports[0].other.addr, (uintptr_t)&mem[0], "the claimant's record");
		ASSERT_EQ(ARM(&mem[1], 8, R, 1), 0, "free after the report");
		DISARM(&mem[1], 8, R, 1);
	}
	TEST(preempted_consumer_keeps_the_slot) {
		/* The consumer claims, then is preempted past the watcher's patience. */
		reset();
		ARM(&mem[0], 8, R, 0);
		ASSERT_EQ(CLAIM(&mem[0], 8, W), 1, "claimed");
		DISARM(&mem[0], 8, R, 0);
		ASSERT_EQ(counter(KCSAND_CTR_LOST_OTHER), 1, "lost_other counts the abandoned report");
		ASSERT_TRUE(slot_of(&mem[0]) != 0, "the slot stays taken while the record is due");
		ASSERT_EQ(ARM(&mem[2], 8, R, 1), -1, "a new watcher cannot take it");
		PUBLISH(&mem[0], 8, W);
		ASSERT_EQ(slot_of(&mem[0]), 0, "the late consumer freed it");
		/* The next watcher of the slot reports its own consumer, whole. */
		ASSERT_EQ(ARM(&mem[2], 8, R, 1), 0, "a new watcher");
		ASSERT_EQ(ACCESS(&mem[2], 4, W), 1, "its consumer");
		DISARM(&mem[2], 8, R, 1);
		drain();
		if (ASSERT_EQ(nr_reports, 1, "reports")) {
			ASSERT_EQ(reports[0].this.addr, (uintptr_t)&mem[2], "watcher");
			ASSERT_EQ(reports[0].other.addr, (uintptr_t)&mem[2], "its own consumer");
			ASSERT_EQ(reports[0].other.size, 4, "its own consumer's size");
		}
	}
	TEST(stale_record_of_an_older_generation) {
		/* Two watchers of a slot, 128 generations apart: the same bits in an encoding. */
		uint32_t g;

		reset();
		ARM(&mem[0], 8, R, 0);
		g = skel->bss->out.gen;
		ACCESS(&mem[0], 8, W);
		DISARM(&mem[0], 8, R, 0);
		skel->bss->wp_generation = g + (WP_GEN_MASK + 1);
		ARM(&mem[0], 8, R, 0);
		ASSERT_EQ(wp_gen(skel->bss->out.wp), g & WP_GEN_MASK, "same generation bits");
		ASSERT_EQ(CLAIM(&mem[0], 8, W), 1, "claimed, record not yet written");
		DISARM(&mem[0], 8, R, 0);
		drain();
		ASSERT_EQ(nr_reports, 1, "only the first watcher's report");
		ASSERT_EQ(counter(KCSAND_CTR_LOST_OTHER), 1, "the second waits for its own record");
		PUBLISH(&mem[0], 8, W);
		ASSERT_EQ(slot_of(&mem[0]), 0, "free");
	}
}

/* Finding 5 of issue 10: another process's access at the same address is no conflict. */
static void test_address_space(void)
{
	TEST(other_process_does_not_consume) {
		pid_t pid;
		int st = -1;

		reset();
		ARM(&mem[0], 8, W, 0);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(ACCESS(&mem[0], 8, W) == 0 ? 0 : 1);
		waitpid(pid, &st, 0);
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			    "a forked child's access at the same address finds no watchpoint");
		ASSERT_EQ(counter(KCSAND_CTR_DATA_RACES), 0, "data_races after the child");
		ASSERT_EQ(ACCESS(&mem[0], 8, W), 1, "this process's own access does (control)");
		DISARM(&mem[0], 8, W, 0);
		drain();
		ASSERT_EQ(nr_reports, 1, "reports");
	}
	TEST(kernel_mode_has_one_space) {
		pid_t pid;
		int st = -1;

		reset();
		skel->bss->in.user = 0;
		ARM(&mem[0], 8, W, 0);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(ACCESS(&mem[0], 8, R) == 1 ? 0 : 1);
		waitpid(pid, &st, 0);
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			    "in kernel mode any task's access conflicts");
		DISARM(&mem[0], 8, W, 0);
	}
}

/* A stack for the copies: 512-aligned, so that the copy's base is known. */
static uint8_t user_stack[2 * KCSAND_USTACK_SIZE] __attribute__((aligned(512)));

/* A report's sides send their registers and stack before the report, which names them. */
static void test_stacks(void)
{
	TEST(report_sides_send_their_stacks_first) {
		uint64_t sp = (uintptr_t)user_stack + 40;

		reset();
		for (size_t i = 0; i < sizeof(user_stack); i++)
			user_stack[i] = (uint8_t)(i * 7 + 1);
		skel->bss->in.sp = sp;
		ARM(&mem[0], 8, R, 0);
		ACCESS(&mem[0], 8, W);
		DISARM(&mem[0], 8, R, 0);
		drain();
		if (!ASSERT_EQ(nr_reports, 1, "reports") || !ASSERT_EQ(nr_ustacks, 2, "stack copies"))
			continue;
		ASSERT_TRUE(ustack_at[0] < report_at[0] && ustack_at[1] < report_at[0],
			    "both copies come before the report");
		ASSERT_EQ(reports[0].other.ustack, ustacks[0].id, "the consumer names its copy");
		ASSERT_EQ(reports[0].this.ustack, ustacks[1].id, "the watcher names its copy");
		ASSERT_TRUE(ustacks[0].id != ustacks[1].id, "two copies, two ids");
		ASSERT_TRUE(ustacks[1].id & KCSAND_USTACK_SEQ, "a report's copy is numbered");
		ASSERT_EQ(ustacks[1].pid, getpid(), "the copy's process");
		ASSERT_EQ(ustacks[1].regs[7], sp, "rsp, DWARF register 7");
		ASSERT_EQ(ustacks[1].regs[16], reports[0].this.ip, "the ip, DWARF register 16");
		ASSERT_EQ(ustacks[1].base, (uintptr_t)user_stack, "from sp rounded down to a chunk");
		ASSERT_EQ(ustacks[1].size, KCSAND_USTACK_SIZE, "all of it");
		ASSERT_TRUE(!memcmp(ustacks[1].data, user_stack, KCSAND_USTACK_SIZE),
			    "the stack's bytes");
	}
	TEST(stack_copy_ends_with_the_mapping) {
		long page = sysconf(_SC_PAGESIZE);
		uint8_t *m = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		reset();
		if (!ASSERT_TRUE(m != MAP_FAILED, "mmap"))
			continue;
		/* Touched, as a stack's used part is; the third page unreadable: the end. */
		memset(m, 1, 2 * page);
		mprotect(m + 2 * page, page, PROT_NONE);
		skel->bss->in.sp = (uintptr_t)m + 2 * page - 1000;
		ARM(&mem[0], 8, R, 0);
		mem[0] = 7;	/* an unprobed writer: a report of unknown origin, one side */
		STALL(&mem[0], 8, R, 0);
		DISARM(&mem[0], 8, R, 0);
		drain();
		if (ASSERT_EQ(nr_ustacks, 1, "stack copies")) {
			ASSERT_EQ(ustacks[0].base, (uintptr_t)m + 2 * page - 1024, "base");
			ASSERT_EQ(ustacks[0].size, 1024, "the two chunks before the end");
		}
		munmap(m, 3 * page);
	}
}

/* Finding 14 of issue 10: the longest delay params.c accepts is spun in full. */
static void test_spin(void)
{
	TEST(spin_honours_the_longest_delay) {
		reset();
		skel->bss->in.spin_us = 100000;
		ASSERT_EQ(step(skel->progs.spin, NULL, 0, 0, 0), 0, "spin_us(100000) reached its deadline");
		printf("  spin_us(100000) took %.1f ms\n", skel->bss->out.wp / 1e6);
	}
}

/* Set every CPU's stall window to "now, stalled_ns spent already". */
static void set_stalled(uint64_t stalled_ns)
{
	int n = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.cpu_state);
	struct kcsand_cpu_state st[n > 0 ? n : 1];
	struct timespec ts;
	__u32 zero = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int i = 0; i < n; i++)
		st[i] = (struct kcsand_cpu_state){
			.window_start_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec,
			.stalled_ns = stalled_ns };
	bpf_map_update_elem(fd, &zero, st, BPF_ANY);
}

/*
 * Issue 21: a kernel watcher stalls with interrupts off, so its waits and
 * its CPU's budget have ceilings no parameter lifts; user mode keeps what
 * the parameters say (the controls).
 */
static void test_kernel_ceilings(void)
{
	TEST(kernel_delay_is_clamped) {
		reset();
		skel->data->params.udelay_task = 100000;
		skel->bss->in.user = 0;
		ARM(&mem[0], 8, W, 0);
		STALL(&mem[0], 8, W, 0);
		DISARM(&mem[0], 8, W, 0);
		ASSERT_EQ(counter(KCSAND_CTR_STALLS_CLAMPED), 1, "kernel stalls clamped");
		reset();
		skel->data->params.udelay_task = KCSAND_KERNEL_WAIT_MAX_US + 1000;
		ARM(&mem[0], 8, W, 0);
		STALL(&mem[0], 8, W, 0);
		DISARM(&mem[0], 8, W, 0);
		ASSERT_EQ(counter(KCSAND_CTR_SETUP_WATCHPOINTS), 1, "user watchpoint set (control)");
		ASSERT_EQ(counter(KCSAND_CTR_STALLS_CLAMPED), 0, "user stalls clamped");
	}
	TEST(kernel_unlimited_budget_is_capped) {
		reset();
		skel->data->params.stall_budget_us = 0;
		set_stalled(KCSAND_KERNEL_STALL_BUDGET_MAX_US * 1000ull + 1000000);
		skel->bss->in.user = 0;
		ASSERT_EQ(ARM(&mem[0], 8, W, 0), -1, "kernel watcher past the ceiling arms");
		ASSERT_EQ(counter(KCSAND_CTR_STALL_BUDGET), 1, "stall_budget_exhausted");
		skel->bss->in.user = 1;
		ASSERT_EQ(ARM(&mem[0], 8, W, 0), 0, "user watcher with budget 0 arms (control)");
		DISARM(&mem[0], 8, W, 0);
		set_stalled(0);
		skel->data->params.stall_budget_us = 500000;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The latest end of a rest over every CPU's state (include/kcsand.h, KCSAND_KERNEL_STALL_REST). */
static uint64_t rest_until(void)
{
	int n = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.cpu_state);
	struct kcsand_cpu_state st[n > 0 ? n : 1];
	uint64_t until = 0;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, st))
		return 0;
	for (int i = 0; i < n; i++)
		until = st[i].rest_until_ns > until ? st[i].rest_until_ns : until;
	return until;
}

static void set_rest_until(uint64_t until_ns)
{
	int n = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.cpu_state);
	struct kcsand_cpu_state st[n > 0 ? n : 1];
	__u32 zero = 0;

	for (int i = 0; i < n; i++)
		st[i] = (struct kcsand_cpu_state){ .rest_until_ns = until_ns };
	bpf_map_update_elem(fd, &zero, st, BPF_ANY);
}

/*
 * Breakpoint mode: after a stall of d the CPU sets no watchpoint for 3d.
 * The rest's end is read rather than timed: a second check within 3 ms
 * would depend on the host's load.  A kprobe's check (no pair) is not
 * held by it.
 */
static void test_stall_rest(void)
{
	TEST(kernel_stall_is_followed_by_a_rest) {
		uint64_t before;

		reset();
		set_stalled(0);
		skel->bss->in.user = 0;
		skel->bss->in.pair = 1;
		skel->data->params.udelay_task = 1000;
		ASSERT_EQ(ARM(&mem[0], 8, W, 0), 0, "kernel watcher arms");
		STALL(&mem[0], 8, W, 0);
		before = now_ns();
		DISARM(&mem[0], 8, W, 0);
		if (rest_until() < before + 3 * 1000000ull)
			ASSERT__FAIL("a stall of 1 ms or more rests 3 ms or more: the rest ends "
				     "%lld ns after the disarm began",
				     (long long)(rest_until() - before));
		if (counter(KCSAND_CTR_KERNEL_STALL_US) < 1000)
			ASSERT__FAIL("kernel_stall_us %llu for a stall of 1 ms or more",
				     (unsigned long long)counter(KCSAND_CTR_KERNEL_STALL_US));
		set_rest_until(now_ns() + 10000000000ull);
		ASSERT_EQ(ARM(&mem[0], 8, W, 0), -1, "kernel watcher arms while its CPU rests");
		ASSERT_EQ(counter(KCSAND_CTR_STALL_RESTS), 1, "stall_rests");
		skel->bss->in.pair = 0;
		ASSERT_EQ(ARM(&mem[0], 8, W, 0), 0, "kprobe watcher arms meanwhile (control)");
		DISARM(&mem[0], 8, W, 0);
		skel->bss->in.user = 1;
		ASSERT_EQ(ARM(&mem[0], 8, W, 0), 0, "user watcher arms meanwhile (control)");
		DISARM(&mem[0], 8, W, 0);
		set_stalled(0);
	}
}

/* step(), on CPU 0: the data breakpoints' other CPU is then CPU 1. */
static int step_on_cpu0(struct bpf_program *prog, const volatile void *addr, uint32_t size,
			uint32_t type)
{
	uint64_t args[1] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .cpu = 0, .flags = BPF_F_TEST_RUN_ON_CPU);
	int err;

	skel->bss->in.addr = (uintptr_t)addr;
	skel->bss->in.size = size;
	skel->bss->in.type = type;
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	if (err || opts.retval) {
		ASSERT__FAIL("BPF_PROG_TEST_RUN of %s on CPU 0: %s, retval %u",
			     bpf_program__name(prog), err ? strerror(-err) : "ok", opts.retval);
		return -1;
	}
	return skel->bss->out.ret;
}

static uint64_t pair_counter(enum kcsand_pair_counter c)
{
	return skel->bss->pair_counters[c];
}

/* The request a write watcher of 8 aligned bytes at addr on CPU 0 asks with (kcsand.h). */
static uint64_t pair_word_of(const volatile void *addr, uint32_t seq)
{
	return ((uintptr_t)addr & KCSAND_PAIR_ADDR_MASK) | 3ULL << KCSAND_PAIR_LEN_SHIFT |
	       KCSAND_PAIR_RW | (uint64_t)(seq & 0x1f) << KCSAND_PAIR_SEQ_SHIFT;
}

static void pair_reset(unsigned int cpus)
{
	reset();
	memset((void *)skel->bss->pair_counters, 0, sizeof(skel->bss->pair_counters));
	memset((void *)skel->bss->pair_ack, 0, sizeof(skel->bss->pair_ack));
	skel->bss->pair_cpus = cpus;
	skel->bss->pair_live[0] = skel->bss->pair_live[1] = 1;
	skel->bss->pair_owner = 0;
	skel->data->params.pair_wait_us = 200;
	skel->bss->in.user = 0;
	skel->bss->in.pair = 1;
}

/*
 * Issue 21, item 1: a sampled kernel write watches (so that its data
 * breakpoint finds readers), and a sampled watcher's request waits for the
 * other CPU's acknowledgement, bounded, and lets the registers go after.
 */
static void test_pairs(void)
{
	TEST(sampled_kernel_plain_write_watches) {
		pair_reset(0);
		ASSERT_EQ(step(skel->progs.watches, &mem[0], 8, W, 0), 1, "sampled write watches");
		skel->bss->in.pair = 0;
		ASSERT_EQ(step(skel->progs.watches, &mem[0], 8, W, 0), 0,
			  "kprobe's aligned write watches (control: KCSAN's rule)");
		ASSERT_EQ(step(skel->progs.watches, &mem[0], 8, R, 0), 1, "a read watches (control)");
	}
	TEST(pair_request_waits_for_the_other_cpu) {
		pair_reset(2);
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 1, "held");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_TIMEOUTS), 1, "no ack: timed out");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_ARMED), 0, "no ack: not armed");
		ASSERT_EQ(skel->bss->pair_owner, 0, "let go");
		ASSERT_EQ(skel->bss->pair_request & KCSAND_PAIR_ADDR_MASK, 0, "breakpoint off after");
		skel->bss->pair_ack[1] = pair_word_of(&mem[0], skel->bss->pair_seq + 1);
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 1, "held");
		ASSERT_EQ(skel->bss->out.wp, skel->bss->pair_ack[1], "asked for the word acked");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_ARMED), 1, "acked: armed");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_TIMEOUTS), 1, "acked: no new timeout");
	}
	TEST(pair_request_only_when_free_and_set_up) {
		pair_reset(2);
		skel->bss->pair_owner = 2;
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 0, "busy");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_BUSY), 1, "pair_busy");
		pair_reset(0);
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 0,
			  "no armers: no request");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_REQUESTS), 0, "pair_requests");
		skel->bss->pair_cpus = 0;
		skel->bss->in.pair = 0;
	}
	/*
	 * No data breakpoint on the watcher's own stack (docs/kernel-mode.md):
	 * the address within a kernel stack's span of the stack pointer it
	 * ran with, above or below.
	 */
	TEST(pair_never_on_the_watchers_stack) {
		pair_reset(2);
		skel->bss->in.sp = (uintptr_t)&mem[0] + 512;
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 0,
			  "an escaped local: no request");
		skel->bss->in.sp = (uintptr_t)&mem[0] - 512;
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 0,
			  "below the stack pointer: no request");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_STACK), 2, "pair_on_stack");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_REQUESTS), 0, "pair_requests");
		skel->bss->in.sp = (uintptr_t)&mem[0] + 2 * KCSAND_KERNEL_STACK_SPAN;
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, &mem[0], 8, W), 1,
			  "off the stack: asked (control)");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_STACK), 2, "pair_on_stack (control)");
		skel->bss->pair_cpus = 0;
		skel->bss->in.pair = 0;
	}
	/* Nor on another task's: its aligned base holds the kernel's STACK_END_MAGIC. */
	TEST(pair_never_on_another_tasks_stack) {
		uint64_t k, base;
		size_t off;

		pair_reset(2);
		ASSERT_EQ(step(skel->progs.fake_stack_addr, NULL, 0, R, 0), 0, "fake stack's address");
		k = skel->bss->out.wp;
		base = (k + KCSAND_KERNEL_STACK_SPAN - 1) & ~(KCSAND_KERNEL_STACK_SPAN - 1);
		off = base - k;
		*(volatile uint64_t *)&skel->bss->fake_stack[off] = 0x57AC6E9D;
		skel->bss->in.sp = 0;
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, (void *)(uintptr_t)(base + 256),
				       8, W), 0, "on a task's stack: no request");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_STACK), 1, "pair_on_stack");
		*(volatile uint64_t *)&skel->bss->fake_stack[off] = 0;
		ASSERT_EQ(step_on_cpu0(skel->progs.pair_request_run, (void *)(uintptr_t)(base + 256),
				       8, W), 1, "no magic: asked (control)");
		ASSERT_EQ(pair_counter(KCSAND_PAIR_CTR_STACK), 1, "pair_on_stack (control)");
		skel->bss->pair_cpus = 0;
		skel->bss->in.pair = 0;
	}
}

int main(void)
{
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	skel = engine_test_bpf__open_and_load();
	if (!skel) {
		err = -errno;
		printf("FAIL engine_protocol: cannot load tests/engine/engine_test.bpf.c: %s"
		       " (needs root and BPF)\n", strerror(-err));
		return 1;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL, NULL);
	if (!rb) {
		printf("FAIL engine_protocol: ring buffer: %s\n", strerror(errno));
		return 1;
	}
	test_encoding();
	test_consume();
	test_slot_reuse();
	test_address_space();
	test_stacks();
	test_spin();
	test_kernel_ceilings();
	test_stall_rest();
	test_pairs();
	ring_buffer__free(rb);
	engine_test_bpf__destroy(skel);
	return test_summary();
}
