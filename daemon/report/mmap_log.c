// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mmap log (mmap_log.h): a dummy software perf event per CPU, for every
 * process, that records nothing but the side-band records perf record
 * relies on: PERF_RECORD_MMAP2 for each executable mapping (the kernel
 * sends none for data without attr.mmap_data), COMM with the exec flag,
 * FORK and EXIT.  Each CPU's ring is read at every engine poll; a ring
 * that overflowed (PERF_RECORD_LOST) leaves every list in doubt.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "mmap_log.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/pid_table.h"
#include "util/print.h"

#define STR_BUCKETS	256
/*
 * 1 MiB a CPU: some 8,000 records, read at each poll and not before the
 * engine has started.  This machine, shared with compilers, made about 300
 * executable mmaps a second, in bursts; 256 KiB lost some at times.
 */
#define RING_PAGES	256
/* On a larger machine, less a CPU (each sees fewer), down to 64 KiB: 4 MiB in all. */
#define RING_PAGES_ALL	1024
#define RING_PAGES_MIN	16

struct ml_proc {
	struct pid_entry entry;	/* first: the table's entry is the struct */
	bool complete;		/* seen from its exec or fork on, nothing lost */
	bool execed;		/* its last record of the two was an EXEC */
	uint64_t gen;		/* the log's count of execs and forks at its last one */
	uint64_t exited_ns;	/* 0: alive */
	uint64_t exit_time;	/* the EXIT record's perf time */
	struct mmap_entry *maps;
	size_t nr, cap;
};
_Static_assert(offsetof(struct ml_proc, entry) == 0, "an ml_proc is its pid_table entry");

/*
 * A path, shared by the mappings that name it (every process maps the same
 * libc): counted, and freed with its last mapping, so that the paths of
 * programs long gone do not pile up in a daemon that runs for weeks.
 */
struct ml_str {
	struct ml_str *next;
	unsigned int refs;
	char s[];
};

struct ml_ring {
	int fd;
	void *base;		/* the metadata page, then the data pages */
};

struct mmap_log {
	struct ml_ring *rings;
	int nr_rings;
	size_t page_size;
	struct pid_table procs;		/* of struct ml_proc */
	struct ml_str *strs[STR_BUCKETS];
	uint64_t gen;		/* execs and forks seen */
	size_t ring_pages;	/* data pages a CPU, a power of two */
	char *scratch;		/* a record that wraps around the ring's end */
};

/* The records, with the fields the attributes below ask for (no sample_id_all). */
struct rec_mmap2 {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

struct rec_task {
	struct perf_event_header header;
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct rec_comm {
	struct perf_event_header header;
	__u32 pid, tid;
	char comm[];
};

static struct ml_str **str_bucket(struct mmap_log *log, const char *path)
{
	unsigned int h = 2166136261u;

	for (const char *c = path; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	return &log->strs[h % STR_BUCKETS];
}

static const char *str_get(struct mmap_log *log, const char *path)
{
	struct ml_str **head = str_bucket(log, path), *str;
	size_t n = strlen(path);

	for (str = *head; str; str = str->next)
		if (!strcmp(str->s, path))
			break;
	if (!str) {
		str = malloc(sizeof(*str) + n + 1);
		if (!str)
			return NULL;
		memcpy(str->s, path, n + 1);
		str->refs = 0;
		str->next = *head;
		*head = str;
	}
	str->refs++;
	return str->s;
}

static void str_put(struct mmap_log *log, const char *path)
{
	struct ml_str **link = str_bucket(log, path);

	while (*link && (*link)->s != path)
		link = &(*link)->next;
	if (*link && !--(*link)->refs) {
		struct ml_str *str = *link;

		*link = str->next;
		free(str);
	}
}

static void proc_clear(struct mmap_log *log, struct ml_proc *p)
{
	for (size_t i = 0; i < p->nr; i++)
		str_put(log, p->maps[i].path);
	p->nr = 0;
}

static struct ml_proc *proc_find(struct mmap_log *log, pid_t pid, bool create)
{
	if (!create)
		return (struct ml_proc *)pid_table__find(&log->procs, pid);
	return (struct ml_proc *)pid_table__get(&log->procs, pid, sizeof(struct ml_proc));
}

/* pid_table__each() walks: every process let go (arg: the log), or marked incomplete. */
static bool proc_drop(struct pid_entry *e, void *log)
{
	struct ml_proc *p = (struct ml_proc *)e;

	proc_clear(log, p);
	free(p->maps);
	free(p);
	return true;
}

static bool proc_lost(struct pid_entry *e, void *arg)
{
	((struct ml_proc *)e)->complete = false;
	return false;
}

/* Add a mapping; those it covers any part of are gone (munmap sends no record). */
static void proc_map(struct mmap_log *log, struct ml_proc *p, uint64_t start, uint64_t end,
		     uint64_t pgoff, const char *path)
{
	const char *shared;
	size_t j = 0;

	for (size_t i = 0; i < p->nr; i++) {
		if (p->maps[i].start < end && start < p->maps[i].end)
			str_put(log, p->maps[i].path);
		else
			p->maps[j++] = p->maps[i];
	}
	p->nr = j;
	/* A program and its ld.so and libc: 4 to start with. */
	if (ARRAY_RESERVE(p->maps, p->cap, p->nr, 4) || !(shared = str_get(log, path))) {
		p->complete = false;
		return;
	}
	p->maps[p->nr++] = (struct mmap_entry){ start, end, pgoff, shared };
}

static void on_mmap2(struct mmap_log *log, const struct rec_mmap2 *r)
{
	struct ml_proc *p;

	/* [vdso] and the like have no file for libdwfl to read. */
	if (r->filename[0] != '/')
		return;
	p = proc_find(log, r->pid, true);
	if (p)
		proc_map(log, p, r->addr, r->addr + r->len, r->pgoff, r->filename);
}

/*
 * The child's own mappings read before its FORK (below) laid over the parent's it inherits:
 * they are newer, and a later mapping over the same addresses replaces an earlier one.
 */
static void proc_inherit(struct mmap_log *log, struct ml_proc *child, const struct ml_proc *parent)
{
	struct mmap_entry *own = child->maps;
	size_t nr_own = child->nr;

	child->maps = NULL;
	child->nr = child->cap = 0;
	child->complete = parent && parent->complete;
	for (size_t i = 0; child->complete && i < parent->nr; i++)
		proc_map(log, child, parent->maps[i].start, parent->maps[i].end, parent->maps[i].pgoff,
			 parent->maps[i].path);
	for (size_t i = 0; i < nr_own; i++) {
		proc_map(log, child, own[i].start, own[i].end, own[i].pgoff, own[i].path);
		str_put(log, own[i].path);
	}
	free(own);
}

/* A new process has its parent's mappings; a thread (pid == ppid) is nothing new. */
static void on_fork(struct mmap_log *log, const struct rec_task *r)
{
	struct ml_proc *child;

	if (r->pid == r->ppid)
		return;
	child = proc_find(log, r->pid, true);
	if (!child)
		return;
	/*
	 * Its EXEC, and even its EXIT, may have been read first as well, and a FORK
	 * cleared what the exec began: the program's mappings were lost with it, and
	 * the CFI unwind of a short program read after its exit gave no frames, 1 run
	 * in 10 of racy_omp_shared_local beside other work.  A process comes before
	 * its exec: one that exec'd, alive or gone after this FORK, keeps them.
	 */
	if (child->execed && (!child->exited_ns || r->time < child->exit_time))
		return;
	child->execed = false;
	/*
	 * The child's EXIT, from its own CPU's ring, may have been read first: the FORK is
	 * then older than it, and the child stays exited (else nothing would let go of it).
	 * A FORK newer than the EXIT is another process under the pid used again: what the
	 * entry held was the old one's.
	 */
	if (child->exited_ns && r->time > child->exit_time) {
		proc_clear(log, child);
		child->exited_ns = 0;
	}
	/*
	 * Else what the entry holds came from the child's own ring before this FORK, as its
	 * EXEC can: a dlopen on another CPU than its parent's.  Copied over, the library was
	 * lost, and its stacks stopped at their first frame (racy_fork_plugin, 3 runs of 5).
	 */
	child->gen = ++log->gen;
	proc_inherit(log, child, proc_find(log, r->ppid, false));
}

static void on_exec(struct mmap_log *log, const struct rec_comm *r)
{
	struct ml_proc *p = proc_find(log, r->pid, true);

	if (!p)
		return;
	proc_clear(log, p);
	p->complete = true;
	p->execed = true;
	p->exited_ns = 0;
	p->gen = ++log->gen;
}

/* A process's end (not a thread's), kept even before its FORK is read: see on_fork(). */
static void on_exit_rec(struct mmap_log *log, const struct rec_task *r)
{
	struct ml_proc *p = r->pid == r->tid ? proc_find(log, r->pid, true) : NULL;

	if (p) {
		p->exited_ns = clock__now_ns();
		p->exit_time = r->time;
	}
}

static void on_lost(struct mmap_log *log)
{
	pid_table__each(&log->procs, proc_lost, NULL);
}

static void on_record(struct mmap_log *log, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (h->size > sizeof(struct rec_mmap2))
			on_mmap2(log, (const struct rec_mmap2 *)h);
		break;
	case PERF_RECORD_FORK:
		on_fork(log, (const struct rec_task *)h);
		break;
	case PERF_RECORD_EXIT:
		on_exit_rec(log, (const struct rec_task *)h);
		break;
	case PERF_RECORD_COMM:
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			on_exec(log, (const struct rec_comm *)h);
		break;
	case PERF_RECORD_LOST:
		on_lost(log);
		break;
	}
}

static void ring_drain(struct mmap_log *log, struct ml_ring *ring)
{
	struct perf_event_mmap_page *meta = ring->base;
	const char *data = (const char *)ring->base + log->page_size;
	uint64_t size = log->ring_pages * log->page_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		const struct perf_event_header *h = (const void *)(data + tail % size);
		uint64_t off = tail % size;

		if (h->size < sizeof(*h) || h->size > size)
			break;
		if (off + h->size > size) {
			/* The record wraps around the ring's end: make it whole. */
			memcpy(log->scratch, data + off, size - off);
			memcpy(log->scratch + (size - off), data, h->size - (size - off));
			h = (const void *)log->scratch;
		}
		on_record(log, h);
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void mmap_log__drain(struct mmap_log *log)
{
	for (int i = 0; log && i < log->nr_rings; i++)
		ring_drain(log, &log->rings[i]);
}

static int ring_open(struct mmap_log *log, struct ml_ring *ring, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.exclude_kernel = 1,
		.watermark = 1,
		.wakeup_watermark = 1 << 30,	/* read at each poll: no wakeups */
	};

	ring->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (ring->fd < 0)
		return -errno;
	/* Resident from the start, as the kernel's pages are: no growth as they wrap. */
	ring->base = mmap(NULL, (log->ring_pages + 1) * log->page_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_POPULATE, ring->fd, 0);
	if (ring->base == MAP_FAILED) {
		ring->base = NULL;
		return -errno;
	}
	return 0;
}

struct mmap_log *mmap_log__open(void)
{
	struct mmap_log *log = calloc(1, sizeof(*log));
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int err = -ENOMEM;

	if (!log)
		return NULL;
	log->page_size = sysconf(_SC_PAGESIZE);
	/* A share of RING_PAGES_ALL a CPU, a power of two as perf wants. */
	log->ring_pages = RING_PAGES;
	while (cpus > 0 && log->ring_pages > RING_PAGES_MIN &&
	       log->ring_pages * cpus > RING_PAGES_ALL)
		log->ring_pages /= 2;
	log->rings = calloc(cpus > 0 ? cpus : 1, sizeof(*log->rings));
	log->scratch = malloc(log->ring_pages * log->page_size);
	if (!log->rings || !log->scratch)
		goto fail;
	for (int cpu = 0; cpu < cpus; cpu++) {
		log->rings[log->nr_rings].fd = -1;
		err = ring_open(log, &log->rings[log->nr_rings++], cpu);
		/* A CPU that is offline has no ring, and no process runs there. */
		if (err == -ENODEV)
			log->nr_rings--;
		else if (err)
			goto fail;
	}
	return log;
fail:
	pr_warn("cannot open the mmap log (perf dummy events): %s; stacks of processes that "
		"exited before their reports are read are not unwound by CFI\n", strerror(-err));
	mmap_log__free(log);
	return NULL;
}

void mmap_log__free(struct mmap_log *log)
{
	if (!log)
		return;
	for (int i = 0; log->rings && i < log->nr_rings; i++) {
		if (log->rings[i].base)
			munmap(log->rings[i].base, (log->ring_pages + 1) * log->page_size);
		if (log->rings[i].fd >= 0)
			close(log->rings[i].fd);
	}
	pid_table__each(&log->procs, proc_drop, log);
	free(log->rings);
	free(log->scratch);
	free(log);
}

int mmap_log__maps(struct mmap_log *log, pid_t pid, const struct mmap_entry **maps, size_t *nr)
{
	struct ml_proc *p = log ? proc_find(log, pid, false) : NULL;

	if (!p || !p->complete)
		return -ENOENT;
	*maps = p->maps;
	*nr = p->nr;
	return 0;
}

uint64_t mmap_log__generation(struct mmap_log *log, pid_t pid)
{
	struct ml_proc *p = log ? proc_find(log, pid, false) : NULL;

	return p ? p->gen : 0;
}

bool mmap_log__exited_before(struct mmap_log *log, pid_t pid, uint64_t ns)
{
	struct ml_proc *p = log ? proc_find(log, pid, false) : NULL;

	return p && p->exited_ns && p->exited_ns < ns;
}

/* What mmap_log__prune() lets go of: the processes that exited before before_ns. */
struct prune_walk {
	struct mmap_log *log;
	uint64_t before_ns;
};

static bool proc_drop_exited(struct pid_entry *e, void *arg)
{
	const struct ml_proc *p = (const struct ml_proc *)e;
	const struct prune_walk *w = arg;

	return p->exited_ns && p->exited_ns < w->before_ns && proc_drop(e, w->log);
}

void mmap_log__prune(struct mmap_log *log, uint64_t before_ns)
{
	struct prune_walk w = { log, before_ns };

	if (log)
		pid_table__each(&log->procs, proc_drop_exited, &w);
}

static bool proc_mark_reaped(struct pid_entry *e, void *arg)
{
	struct ml_proc *p = (struct ml_proc *)e;

	if (!p->exited_ns && pid__gone(e->pid))
		p->exited_ns = *(const uint64_t *)arg;
	return false;
}

void mmap_log__sweep(struct mmap_log *log)
{
	uint64_t now = clock__now_ns();

	if (log)
		pid_table__each(&log->procs, proc_mark_reaped, &now);
}
