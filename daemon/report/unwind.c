// SPDX-License-Identifier: GPL-2.0-only
/*
 * CFI unwinding of the stacks BPF copied (unwind.h, docs/stacks.md).
 *
 * One libdwfl session per process: its modules are the executable
 * mappings the mmap log saw it make (mmap_log.h), or, for a process
 * older than the log, what /proc/PID/maps shows (dwfl_linux_proc_report);
 * its thread state is ours
 * (dwfl_attach_state): the only thread is the copy being unwound, its
 * registers the copy's, its memory the copy's bytes.  libdwfl reads each
 * module's CFI once and keeps it, so a session serves every copy of its
 * process; where a function has no CFI, libdw's x86-64 backend falls back
 * to the frame pointer.
 *
 * The frames kept are a bounded FIFO: the oldest go first, and those of a
 * process that exited go with its session (unwinder__release).  A report
 * side whose frames are gone falls back to its frame-pointer walk.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbolize.h"
#include "mmap_log.h"
#include "sites/elf_symbols.h"
#include "unwind.h"
#include "util/clock.h"
#include "util/pid_table.h"

#define KEEP_BUCKETS	4096
/*
 * Copies whose frames are kept: a report's own are used within a poll,
 * the history's remembered ones as long as hb_stacks keeps them (16,384
 * entries in BPF) and their process lives; 8,192 sets of 5 frames take
 * about 0.6 MiB.
 */
#define KEEP_MAX	8192

struct uw_proc {
	struct pid_entry entry;	/* first: the table's entry is the struct */
	Dwfl *dwfl;
	bool refreshed;		/* reported again once already, for code mapped since */
	uint64_t log_gen;	/* the mmap log's generation of pid when the session began */
	bool gone;		/* exited: its session and frames are let go */
};
_Static_assert(offsetof(struct uw_proc, entry) == 0, "a uw_proc is its pid_table entry");

/* One copy's frames, allocated to their number. */
struct uw_kept {
	struct uw_kept *hnext;		/* in its bucket */
	struct uw_kept *older, *newer;	/* in the FIFO */
	pid_t pid;
	uint64_t id;
	int nr;
	uint64_t pcs[];
};

/* What the callbacks unwind, and into where. */
struct uw_cur {
	const struct kcsand_ustack *rec;
	uint64_t *pcs;
	int nr, max;
	bool cut;	/* a frame lay past a full copy: the stack went deeper */
};

struct unwinder {
	struct pid_table procs;		/* of struct uw_proc */
	struct uw_kept *buckets[KEEP_BUCKETS];
	struct uw_kept *oldest, *newest;
	size_t nr_kept;
	uint64_t pcs[KCSAND_MAX_STACK];	/* the copy being unwound */
	struct uw_cur cur;
	struct mmap_log *log;		/* NULL: /proc/PID/maps only */
	struct unwind_stats stats;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* The one thread of a session: the copy. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Stack reads come from the copy: what the stack held when BPF took it, not now. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct kcsand_ustack *rec = ((struct unwinder *)arg)->cur.rec;
	uint64_t off = addr - rec->base;

	if (addr < rec->base || off + sizeof(*result) > rec->size ||
	    rec->size > KCSAND_USTACK_SIZE) {
		/* A copy shorter than the whole reached the end of the stack's mapping. */
		if (addr >= rec->base && rec->size == KCSAND_USTACK_SIZE)
			((struct unwinder *)arg)->cur.cut = true;
		return false;
	}
	memcpy(result, rec->data + off, sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct kcsand_ustack *rec = ((struct unwinder *)arg)->cur.rec;
	Dwarf_Word regs[KCSAND_USTACK_REGS];

	for (int i = 0; i < KCSAND_USTACK_REGS; i++)
		regs[i] = rec->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, KCSAND_USTACK_REGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, rec->regs[KCSAND_USTACK_REGS - 1]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct unwinder *unwinder__new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->log = mmap_log__open();
	return u;
}

static void proc_free(struct uw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p);
}

/* pid_table__each() walks: every process let go, those marked gone, those that exited. */
static bool proc_drop(struct pid_entry *e, void *arg)
{
	proc_free((struct uw_proc *)e);
	return true;
}

static bool proc_drop_marked(struct pid_entry *e, void *arg)
{
	return ((struct uw_proc *)e)->gone && proc_drop(e, arg);
}

static bool proc_drop_exited(struct pid_entry *e, void *arg)
{
	return pid__gone(e->pid) && proc_drop(e, arg);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	pid_table__each(&u->procs, proc_drop, NULL);
	while (u->oldest) {
		struct uw_kept *k = u->oldest;

		u->oldest = k->newer;
		free(k);
	}
	mmap_log__free(u->log);
	free(u);
}

/*
 * The load bias of the file at path mapped at start from file offset
 * pgoff: the segment that holds that offset says which vaddr it is.
 */
static int load_bias(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	struct elf_file ef;
	size_t n;
	int err = elf_file__open(path, ELF_C_READ_MMAP, &ef);

	if (err)
		return err;
	err = -ENOEXEC;
	for (size_t i = 0; !elf_getphdrnum(ef.elf, &n) && i < n; i++) {
		GElf_Phdr ph;

		/* The mapping of a segment starts at its offset rounded down to a page. */
		if (!gelf_getphdr(ef.elf, i, &ph) || ph.p_type != PT_LOAD || pgoff > ph.p_offset ||
		    ph.p_offset - pgoff >= (uint64_t)sysconf(_SC_PAGESIZE))
			continue;
		*bias = start - (ph.p_vaddr - (ph.p_offset - pgoff));
		err = 0;
		break;
	}
	elf_file__close(&ef);
	return err;
}

/* The modules of pid from the mmap log: -ENOENT when it does not know them all. */
static int report_from_log(struct unwinder *u, Dwfl *dwfl, pid_t pid)
{
	const struct mmap_entry *maps;
	size_t nr;

	if (mmap_log__maps(u->log, pid, &maps, &nr))
		return -ENOENT;
	for (size_t i = 0; i < nr; i++) {
		uint64_t bias = 0;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(maps[j].path, maps[i].path);
		if (seen || load_bias(maps[i].path, maps[i].start, maps[i].pgoff, &bias))
			continue;
		/* add_p_vaddr: base is the bias, the module's addresses are vaddr + bias. */
		dwfl_report_elf(dwfl, maps[i].path, maps[i].path, -1, bias, true);
	}
	return 0;
}

/* A session over pid's mappings as they are now, with our thread callbacks. */
static Dwfl *session_open(struct unwinder *u, pid_t pid)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	if ((report_from_log(u, dwfl, pid) && dwfl_linux_proc_report(dwfl, pid)) ||
	    dwfl_report_end(dwfl, NULL, NULL) ||
	    !dwfl_attach_state(dwfl, NULL, pid, &thread_callbacks, u)) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

static struct uw_proc *proc_find(struct unwinder *u, pid_t pid)
{
	return (struct uw_proc *)pid_table__find(&u->procs, pid);
}

static struct uw_proc *proc_get(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid);

	if (p)
		return p;
	p = (struct uw_proc *)pid_table__get(&u->procs, pid, sizeof(*p));
	if (!p)
		return NULL;
	p->log_gen = mmap_log__generation(u->log, pid);
	p->dwfl = session_open(u, pid);
	return p;
}

/*
 * The session of pid whose modules cover ip: a copy whose ip is in code
 * mapped since the session began (dlopen) has the session opened again,
 * once; a process that exec'd since, or another one under a pid used
 * again, has a new one.
 */
static Dwfl *proc_session(struct unwinder *u, pid_t pid, uint64_t ip)
{
	struct uw_proc *p = proc_get(u, pid);
	uint64_t gen = mmap_log__generation(u->log, pid);

	if (p && gen && gen != p->log_gen) {
		if (p->dwfl)
			dwfl_end(p->dwfl);
		p->log_gen = gen;
		p->refreshed = false;
		p->dwfl = session_open(u, pid);
	}
	if (!p || !p->dwfl)
		return NULL;
	if (!dwfl_addrmodule(p->dwfl, ip) && !p->refreshed) {
		dwfl_end(p->dwfl);
		p->refreshed = true;
		p->dwfl = session_open(u, pid);
	}
	return p->dwfl;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct uw_cur *cur = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL) || !pc)
		return DWARF_CB_ABORT;
	cur->pcs[cur->nr++] = pc;
	return cur->nr < cur->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static unsigned int keep_bucket(pid_t pid, uint64_t id)
{
	return (unsigned int)(((id ^ (uint64_t)pid << 32) * 0x9e3779b97f4a7c15ull) >> 52) &
	       (KEEP_BUCKETS - 1);
}

static struct uw_kept *keep_find(struct unwinder *u, pid_t pid, uint64_t id)
{
	for (struct uw_kept *k = u->buckets[keep_bucket(pid, id)]; k; k = k->hnext)
		if (k->pid == pid && k->id == id)
			return k;
	return NULL;
}

static void keep_remove(struct unwinder *u, struct uw_kept *k)
{
	struct uw_kept **link = &u->buckets[keep_bucket(k->pid, k->id)];

	while (*link && *link != k)
		link = &(*link)->hnext;
	if (*link)
		*link = k->hnext;
	if (k->older)
		k->older->newer = k->newer;
	else
		u->oldest = k->newer;
	if (k->newer)
		k->newer->older = k->older;
	else
		u->newest = k->older;
	u->nr_kept--;
	free(k);
}

/* Keep nr frames for (pid, id), in place of what was kept for it; the oldest go when full. */
static int keep_add(struct unwinder *u, pid_t pid, uint64_t id, const uint64_t *pcs, int nr)
{
	struct uw_kept *k = keep_find(u, pid, id);
	unsigned int b = keep_bucket(pid, id);

	if (k)
		keep_remove(u, k);
	if (u->nr_kept >= KEEP_MAX)
		keep_remove(u, u->oldest);
	k = malloc(sizeof(*k) + nr * sizeof(*pcs));
	if (!k)
		return -ENOMEM;
	k->pid = pid;
	k->id = id;
	k->nr = nr;
	memcpy(k->pcs, pcs, nr * sizeof(*pcs));
	k->hnext = u->buckets[b];
	u->buckets[b] = k;
	k->older = u->newest;
	k->newer = NULL;
	if (u->newest)
		u->newest->newer = k;
	else
		u->oldest = k;
	u->newest = k;
	u->nr_kept++;
	return 0;
}

/*
 * Tell the symbolizer where the frames' objects are loaded: the report
 * may come after the process exited, when /proc/PID/maps is gone (a short
 * program, or the history's earlier access), and libc has no site to
 * register it the way the probed objects are.
 */
static void register_modules(Dwfl *dwfl, pid_t pid, const uint64_t *pcs, int nr,
			     struct symbolizer *sym)
{
	Dwfl_Module *last = NULL;

	for (int i = 0; i < nr && sym; i++) {
		Dwfl_Module *mod = dwfl_addrmodule(dwfl, i ? pcs[i] - 1 : pcs[i]);
		const char *name;
		Dwarf_Addr bias;

		if (!mod || mod == last)
			continue;
		last = mod;
		name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		if (name && name[0] == '/' && dwfl_module_getelf(mod, &bias))
			symbolizer__proc_add_bias(sym, pid, name, bias);
	}
}

/* Has pc's module CFI for it (.eh_frame or .debug_frame)? */
static bool has_cfi(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Frame *frame;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	if (!mod)
		return false;
	/* .eh_frame first: .debug_frame may mean finding a separate debug file. */
	for (int i = 0; i < 2; i++) {
		cfi = i ? dwfl_module_dwarf_cfi(mod, &bias) : dwfl_module_eh_cfi(mod, &bias);
		if (cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
			free(frame);
			return true;
		}
	}
	return false;
}

/*
 * Where a function has no CFI (hand-written assembly), libdw steps to its
 * caller by the frame pointer, which such code may use for data: a frame
 * so found must be code that a call precedes, or the stack ends before it
 * (as the frame-pointer walk's do, engine/pipeline.c).
 */
static int trim_guessed(Dwfl *dwfl, pid_t pid, const uint64_t *pcs, int nr,
			struct symbolizer *sym)
{
	for (int i = 1; i < nr && sym; i++) {
		/* A return address's call is the byte before it. */
		if (!has_cfi(dwfl, i > 1 ? pcs[i - 1] - 1 : pcs[i - 1]) &&
		    !symbolizer__proc_after_call(sym, pid, pcs[i]))
			return i;
	}
	return nr;
}

int unwinder__add(struct unwinder *u, const struct kcsand_ustack *rec, struct symbolizer *sym)
{
	uint64_t t0 = clock__now_ns(), ip = rec->regs[KCSAND_USTACK_REGS - 1];
	Dwfl *dwfl;
	int err;

	if (!rec->id || rec->size > KCSAND_USTACK_SIZE)
		return -EINVAL;
	u->cur = (struct uw_cur){ .rec = rec, .pcs = u->pcs, .max = KCSAND_MAX_STACK };
	dwfl = proc_session(u, rec->pid, ip);
	/* libdwfl's "end of the stack" and its errors end the frames alike: keep what came. */
	if (dwfl) {
		dwfl_getthread_frames(dwfl, rec->pid, on_frame, &u->cur);
		register_modules(dwfl, rec->pid, u->cur.pcs, u->cur.nr, sym);
		u->cur.nr = trim_guessed(dwfl, rec->pid, u->cur.pcs, u->cur.nr, sym);
	}
	u->cur.rec = NULL;
	/* One frame is the ip alone: the side's frame-pointer walk says more. */
	err = u->cur.nr > 1 ? keep_add(u, rec->pid, rec->id, u->pcs, u->cur.nr) : 0;
	u->stats.copies++;
	u->stats.bytes += rec->size;
	u->stats.frames += u->cur.nr;
	u->stats.failed += u->cur.nr <= 1;
	u->stats.cut += u->cur.cut;
	u->stats.ns += clock__now_ns() - t0;
	return err ? err : dwfl ? 0 : -ESRCH;
}

int unwinder__frames(struct unwinder *u, pid_t pid, uint64_t id, uint64_t *pcs, int max)
{
	const struct uw_kept *k = u && id ? keep_find(u, pid, id) : NULL;
	int n;

	if (!k || k->nr <= 1) {
		if (u && id)
			u->stats.missed++;
		return -ENOENT;
	}
	n = k->nr < max ? k->nr : max;
	memcpy(pcs, k->pcs, n * sizeof(*pcs));
	u->stats.found++;
	return n;
}

void unwinder__poll(struct unwinder *u)
{
	if (u)
		mmap_log__drain(u->log);
}

/* Which processes exited before before_ns, by the mmap log: marked gone. */
struct gone_walk {
	struct mmap_log *log;
	uint64_t before_ns;
	bool any;
};

static bool proc_mark_gone(struct pid_entry *e, void *arg)
{
	struct uw_proc *p = (struct uw_proc *)e;
	struct gone_walk *w = arg;

	p->gone = mmap_log__exited_before(w->log, e->pid, w->before_ns);
	w->any |= p->gone;
	return false;
}

void unwinder__release(struct unwinder *u, uint64_t before_ns)
{
	struct gone_walk w = { u ? u->log : NULL, before_ns, false };

	if (!u)
		return;
	pid_table__each(&u->procs, proc_mark_gone, &w);
	mmap_log__prune(u->log, before_ns);
	if (!w.any)
		return;
	/* Let go of the gone processes' frames, then of their sessions. */
	for (struct uw_kept *k = u->oldest, *next; k; k = next) {
		const struct uw_proc *p = proc_find(u, k->pid);

		next = k->newer;
		if (p && p->gone)
			keep_remove(u, k);
	}
	pid_table__each(&u->procs, proc_drop_marked, NULL);
}

size_t unwinder__forget_exited(struct unwinder *u)
{
	if (!u)
		return 0;
	mmap_log__sweep(u->log);
	return pid_table__each(&u->procs, proc_drop_exited, NULL);
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *out)
{
	if (u)
		*out = u->stats;
	else
		memset(out, 0, sizeof(*out));
}
