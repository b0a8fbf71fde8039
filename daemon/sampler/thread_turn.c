// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hot turns on one thread, with execute breakpoints.  See thread_turn.h.
 *
 * A turn lasts tens of milliseconds and arms a few sites, so each call
 * reads the process's maps and task list afresh rather than caching them:
 * a few system calls and two small /proc reads a turn, against a 20 ms
 * turn.  An execute breakpoint trap costs about as much as a uprobe trap
 * on a VM, because both leave the guest (docs/PERFORMANCE.md, "Figures
 * behind the code"); what changes is that only one thread pays it.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "thread_turn.h"
#include "hw/hwbp.h"
#include "kcsand.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/clock.h"
#include "util/proc_maps.h"
#include "util/proc_stat.h"


/* Breakpoints of one turn: a few sites times the target processes. */
#define THREAD_TURN_MAX	64
/* Batches of the execute breakpoints' trap calibration (clock__least_cpu_ns()). */
#define TURN_TRAP_BATCHES	10

struct thread_turn {
	struct kcsand_bpf *skel;
	struct bpf_program *prog;	/* kcsand_xbp, once loaded (engine/late_load.h) */
	struct bpf_link *links[THREAD_TURN_MAX];	/* each owns its perf event fd */
	size_t n;
	unsigned long rr;		/* which thread takes the next turn */
	/*
	 * The thread each process's turn is on: every site of a turn goes on
	 * the same one.  Two sites on two threads would have both threads
	 * trap and stall, and neither would run natively to change the
	 * value the other watches.
	 */
	struct {
		pid_t pid, tid;
	} chosen[THREAD_TURN_MAX];
	size_t nr_chosen;
};

int thread_turn__new(struct kcsand_bpf *skel, struct thread_turn **out)
{
	const char *why = hwbp__no_traps_why();
	struct thread_turn *x;

	if (why) {
		pr_info("hot turns use uprobes on every thread: %s\n", why);
		return -EOPNOTSUPP;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->skel = skel;
	*out = x;
	return 0;
}

struct vaddr_query {
	const struct stat *st;
	uint64_t off;
	uint64_t *va;
};

static int vaddr_in(const struct proc_map *m, void *arg)
{
	const struct vaddr_query *q = arg;

	if (!proc_map__exec(m) || m->inode != q->st->st_ino || m->dev != q->st->st_dev)
		return 0;
	if (q->off < m->pgoff || q->off - m->pgoff >= m->end - m->start)
		return 0;
	*q->va = m->start + (q->off - m->pgoff);
	return 1;
}

/* The address of file offset off of path in pid, from an executable mapping of it. */
static int vaddr_of(pid_t pid, const struct stat *st, uint64_t off, uint64_t *va)
{
	struct vaddr_query q = { st, off, va };
	int ret = proc_maps__for_each(pid, vaddr_in, &q);

	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}

static bool running(pid_t pid, pid_t tid)
{
	struct proc_stat st;

	return !proc_stat__read(pid, tid, &st) && st.state == 'R';
}

/*
 * One thread of pid, a different one each call while there are several;
 * a thread that is running if there is one, since a thread asleep (a main
 * thread in pthread_join) would spend the turn hitting nothing.
 */
static pid_t pick_thread(struct thread_turn *x, pid_t pid)
{
	pid_t tids[256], run[256];
	size_t n = 0, nr = 0;
	char name[64];
	struct dirent *d;
	DIR *dir;

	snprintf(name, sizeof(name), "/proc/%d/task", pid);
	dir = opendir(name);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < sizeof(tids) / sizeof(tids[0])) {
		if (d->d_name[0] == '.')
			continue;
		tids[n] = atoi(d->d_name);
		if (running(pid, tids[n]))
			run[nr++] = tids[n];
		n++;
	}
	closedir(dir);
	if (nr)
		return run[x->rr++ % nr];
	return n ? tids[x->rr++ % n] : -1;
}

static int open_xbp(pid_t tid, uint64_t va)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_X,
		.bp_addr = va,
		.bp_len = sizeof(long),	/* what x86 wants for an execute breakpoint */
		.sample_period = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = syscall(__NR_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int add(struct thread_turn *x, pid_t tid, uint64_t va, uint32_t cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = cookie);
	struct bpf_link *l;
	int fd;

	if (!x->prog)
		return -EAGAIN;	/* still loading: the turn takes uprobes */
	if (x->n == THREAD_TURN_MAX)
		return -ENOSPC;
	fd = open_xbp(tid, va);
	if (fd < 0)
		return fd;
	l = bpf_program__attach_perf_event_opts(x->prog, fd, &po);
	if (!l) {
		int err = -errno;

		close(fd);
		return err;
	}
	x->links[x->n++] = l;
	return 0;
}

int thread_turn__arm(struct thread_turn *x, dev_t dev, ino_t ino, uint64_t off, uint32_t cookie)
{
	int map = bpf_map__fd(x->skel->maps.targets), armed = 0, err;
	__u32 key, next, *prev = NULL;
	struct stat st = { .st_dev = dev, .st_ino = ino };

	while (!bpf_map_get_next_key(map, prev, &next)) {
		uint64_t va;
		pid_t tid;

		key = next;
		prev = &key;
		if (vaddr_of(key, &st, off, &va))
			continue;	/* exited, or does not map this object */
		tid = -1;
		for (size_t i = 0; i < x->nr_chosen; i++)
			if (x->chosen[i].pid == (pid_t)key)
				tid = x->chosen[i].tid;
		if (tid < 0) {
			tid = pick_thread(x, key);
			if (tid < 0)
				continue;
			if (x->nr_chosen < THREAD_TURN_MAX)
				x->chosen[x->nr_chosen++] = (typeof(x->chosen[0])){ key, tid };
		}
		err = add(x, tid, va, cookie);
		if (err) {
			pr_debug("sampler: no execute breakpoint at 0x%" PRIx64
				 " in thread %d: %s\n", va, tid, strerror(-err));
			return err;
		}
		armed++;
	}
	return armed;
}

void thread_turn__disarm(struct thread_turn *x)
{
	/* libbpf closes the perf event's fd with its link. */
	for (size_t i = 0; i < x->n; i++)
		bpf_link__destroy(x->links[i]);
	x->n = 0;
	x->nr_chosen = 0;
}

void thread_turn__set_prog(struct thread_turn *x, struct bpf_program *prog)
{
	x->prog = prog;
}

double thread_turn__trap_ns(struct bpf_program *prog, void (*fn)(void), int calls)
{
	struct thread_turn x = { .prog = prog };
	double probed, unprobed;

	/* Where they do not trap, turns never use them (and their program is not loaded). */
	if (hwbp__no_traps_why())
		return 0;
	/* This thread, which is no target: the program returns at its first test. */
	if (add(&x, 0, (uint64_t)(uintptr_t)fn, ~0u))
		return 0;
	probed = clock__least_cpu_ns(fn, calls, TURN_TRAP_BATCHES);
	thread_turn__disarm(&x);
	unprobed = clock__least_cpu_ns(fn, calls, TURN_TRAP_BATCHES);
	return probed - unprobed;
}

void thread_turn__free(struct thread_turn *x)
{
	if (!x)
		return;
	thread_turn__disarm(x);
	free(x);
}
