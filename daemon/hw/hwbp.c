// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware watchpoints, the daemon half: which slot watches what, the perf
 * events that arm it (in every target thread, or on every online CPU in
 * kernel mode), and the pairing of an escalation's trap with the report
 * that caused it.  See hwbp.h.
 *
 * The slots are a scarce resource: x86 has four debug registers per thread
 * (per CPU for kernel addresses, shared with every other kernel user).
 * --watch slots are held for the run; an escalation holds its slot until it
 * paired (plus a moment for records in flight) or HW_ESCALATION_MS passed,
 * and an escalation that finds every slot busy evicts the oldest escalation
 * held for at least HW_MIN_HOLD_MS, or is counted in no_slot.
 *
 * What a watch spec's symbol names is found in watch_resolve.c, the access a
 * trap stands for is decoded in trap_decode.c; their shared types are in
 * hwbp_int.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hwbp.h"
#include "hwbp_int.h"
#include "watch_spec.h"
#include "sites/kcore.h"
#include "sites/ksyms.h"
#include "kcsand.skel.h"
#include "util/array.h"
#include "util/print.h"
#include "util/clock.h"
#include "util/thread.h"

#define HW_ESCALATION_MS	30000	/* an escalation that saw no writer gives up */
#define HW_MIN_HOLD_MS		1000	/* before another escalation may take the slot */
#define HW_LINGER_MS		200	/* after pairing: records still in the ring */
#define HW_CLOSE_MS		10000	/* for a CPU to run the thread that closes its event */

int hwbp__new(struct kcsand_bpf *skel, bool kernel, struct hwbp **out)
{
	struct hwbp *hw = calloc(1, sizeof(*hw));

	if (!hw)
		return -ENOMEM;
	hw->skel = skel;
	hw->kernel = kernel;
	hw->prog = kernel ? skel->progs.kcsand_hwbp_kernel : skel->progs.kcsand_hwbp;
	if (bpf_program__fd(hw->prog) < 0)
		hw->prog = NULL;	/* left for the first watchpoint: hwbp__set_loader() */
	hw->kc.fd = -1;
	hw->max_slots = KCSAND_HW_SLOTS;
	if (!kernel)
		hw->no_traps = hwbp__no_traps_why();
	*out = hw;
	return 0;
}

int hwbp__parse_cpus(const char *list, bool *online, int max)
{
	const char *p = list;
	int n = 0;

	memset(online, 0, max * sizeof(*online));
	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -EINVAL;
			p = end;
		}
		if (hi >= max)
			return -ERANGE;
		for (long c = lo; c <= hi; c++)
			if (!online[c]) {
				online[c] = true;
				n++;
			}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}

int hwbp__cover(uint64_t addr, unsigned int size, uint64_t *bp_addr, unsigned int *bp_len)
{
	for (unsigned int len = 1; len <= 8; len *= 2) {
		uint64_t a = addr & ~(uint64_t)(len - 1);

		if (len >= size && a + len >= addr + size) {
			*bp_addr = a;
			*bp_len = len;
			return 0;
		}
	}
	return -1;
}

static long perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void destroy_link(void *link)
{
	bpf_link__destroy(link);	/* closes its event too */
}

/*
 * Kernel mode: a CPU's event closed from a thread on that CPU, a local
 * call, where from here it would be an IPI and a wait in the kernel that
 * nothing bounds (docs/kernel-mode.md); a CPU that does not run the thread
 * in HW_CLOSE_MS is said, and the event left to it.
 */
static void close_event(struct hwbp *hw, struct hw_event *ev)
{
	int err;

	if (!hw->kernel) {
		bpf_link__destroy(ev->link);
		return;
	}
	err = thread__run_on(ev->owner, destroy_link, ev->link, HW_CLOSE_MS);
	if (err == -ETIMEDOUT)
		pr_warn("hardware watchpoints: CPU %d has not closed its breakpoint in %u ms: it "
			"may not be taking interrupts\n", ev->owner, HW_CLOSE_MS);
	else if (err)
		bpf_link__destroy(ev->link);	/* no thread: the IPI it is */
}

void hwbp_disarm(struct hwbp *hw, int i)
{
	struct hw_slot *s = &hw->s[i];
	struct kcsand_hw_slot off = { 0 };
	__u32 key = i;

	bpf_map_update_elem(bpf_map__fd(hw->skel->maps.hw_slots), &key, &off, BPF_ANY);
	for (size_t k = 0; k < s->n; k++)
		close_event(hw, &s->ev[k]);
	free(s->ev);
	memset(s, 0, sizeof(*s));
}

/*
 * The value now at addr in pid (or in the kernel), as the BPF side samples it
 * (len bytes, zero-filled).  A watch slot tells reads from writes by whether
 * the value changed since the last trap: this is the first "last".
 */
static uint64_t read_value(struct hwbp *hw, pid_t pid, uint64_t addr, unsigned int len)
{
	char path[64];
	uint64_t v = 0;
	int fd;

	if (hw->kernel) {
		if (hw->kc.fd < 0 && kcore__open(&hw->kc))
			return 0;
		return kcore__read(&hw->kc, addr, &v, len) ? 0 : v;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &v, len, addr) != (ssize_t)len)
			v = 0;
		close(fd);
	}
	return v;
}

static bool has_owner(const struct hw_slot *s, int owner)
{
	for (size_t k = 0; k < s->n; k++)
		if (s->ev[k].owner == owner)
			return true;
	return false;
}

/*
 * Slot i's breakpoint for thread pid (cpu -1) or, with pid -1, for every
 * task on cpu; the BPF program attached with the slot as its cookie.
 * 0, or a negative errno (nothing left open).
 */
static int add_event(struct hwbp *hw, int i, pid_t pid, int cpu)
{
	struct hw_slot *s = &hw->s[i];
	bool hist = s->mode == KCSAND_HW_HISTORY;
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = s->mode == KCSAND_HW_WATCH ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W,
		.bp_addr = s->addr,
		.bp_len = s->len,
		.sample_period = 1,
		.exclude_kernel = !hw->kernel,
		.exclude_user = hw->kernel,
		.exclude_hv = 1,
	};
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = i);
	struct bpf_link *l;
	long fd;
	int err;

	fd = perf_event_open(&a, pid, cpu);
	if (fd < 0)
		return -errno;
	l = bpf_program__attach_perf_event_opts(hist ? hw->hb_prog : hw->prog, fd, &po);
	if (!l) {
		err = -errno;
		close(fd);
		return err;
	}
	if (ARRAY_RESERVE(s->ev, s->cap, s->n, 4)) {
		bpf_link__destroy(l);	/* closes fd */
		return -ENOMEM;
	}
	s->ev[s->n++] = (struct hw_event){ .link = l, .owner = pid >= 0 ? pid : cpu };
	return 0;
}

/*
 * Kernel mode: one breakpoint per online CPU, all or nothing.  A CPU left
 * without one would let the writer's store through unseen, so a slot that
 * cannot have all of them (ENOSPC: the CPU's debug registers are taken, by
 * kcsand's other slots or another user) is given up.
 */
static int arm_cpus(struct hwbp *hw, int i)
{
	bool online[HWBP_MAX_CPUS];
	char buf[256] = "";
	int fd, n, err;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hwbp__parse_cpus(buf, online, HWBP_MAX_CPUS) < 0)
		return -EINVAL;
	for (int cpu = 0; cpu < HWBP_MAX_CPUS; cpu++) {
		if (!online[cpu])
			continue;
		err = add_event(hw, i, -1, cpu);
		if (err) {
			hw->st.open_failed++;
			return err;
		}
	}
	return 0;
}

/*
 * One breakpoint event per thread of the slot's process, for the threads
 * that have none yet; called when arming and from every tick, so a new
 * thread is watched within a poll period (100 ms).  Not inherit: inherited
 * events did run the program on the development kernel (6.18), but a
 * thread could then carry both an inherited and a swept event and see
 * every access twice, and which threads inherited cannot be told from
 * here.  A thread that lives less than a poll period can go unwatched.
 */
int hwbp_sweep_threads(struct hwbp *hw, int i)
{
	struct hw_slot *s = &hw->s[i];
	char dir[64];
	struct dirent *d;
	DIR *dp;
	int err = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", s->pid);
	dp = opendir(dir);
	if (!dp)
		return -errno;
	while ((d = readdir(dp))) {
		pid_t tid = atoi(d->d_name);
		int e;

		if (tid <= 0 || tid == s->skip_tid || has_owner(s, tid))
			continue;
		e = add_event(hw, i, tid, -1);
		if (e == -ENOMEM) {
			err = e;
			break;
		}
		if (e) {
			err = e;
			if (e != -ESRCH)	/* a thread that just exited is no failure */
				hw->st.open_failed++;
		}
	}
	closedir(dp);
	return s->n ? 0 : (err ? err : -ESRCH);
}

/*
 * The trap's program, loaded by the engine at the first watchpoint armed
 * when the start left it out; tried once: a load that failed said why.
 */
static int trap_program(struct hwbp *hw)
{
	int err;

	if (hw->prog)
		return 0;
	if (!hw->load)
		return -ENOENT;
	err = hw->load(hw->load_ctx, &hw->prog);
	if (err)
		hw->load = NULL;
	return err;
}

/* The slot's BPF entry first, so that the first trap finds it; then the threads. */
/* Arm slot i: the debug register on [addr, addr + len), for the variable [var, var + var_len). */
static int arm(struct hwbp *hw, int i, pid_t pid, uint64_t addr, unsigned int len, uint64_t var,
	       unsigned int var_len, enum kcsand_hw_mode mode)
{
	struct hw_slot *s = &hw->s[i];
	struct kcsand_hw_slot bs = { .addr = addr, .len = len, .mode = mode, .gen = ++hw->gen,
				     .var_addr = var, .var_len = var_len };
	__u32 key = i;
	int err = mode == KCSAND_HW_HISTORY ? 0 : trap_program(hw);

	if (err)
		return err;
	*s = (struct hw_slot){ .mode = mode, .pid = pid, .addr = addr, .len = len, .gen = bs.gen,
			       .armed_ns = clock__now_ns() };
	hw->skel->bss->hw_last_value[i] = read_value(hw, pid, addr, len);
	bpf_map_update_elem(bpf_map__fd(hw->skel->maps.hw_slots), &key, &bs, BPF_ANY);
	err = hw->kernel ? arm_cpus(hw, i) : hwbp_sweep_threads(hw, i);
	if (err) {
		hwbp_disarm(hw, i);
		if (hw->kernel)
			pr_warn("cannot arm a hardware watchpoint on 0x%" PRIx64
					" on every CPU: %s\n", addr,
				err == -ENOSPC ? "no debug register free" : strerror(-err));
		else
			pr_warn("cannot arm a hardware watchpoint on 0x%" PRIx64
					" in %d: %s\n", addr, pid, strerror(-err));
		return err;
	}
	hw->st.armed++;
	return 0;
}

/*
 * A free slot, or the oldest of the history's watches (a guess, where an
 * escalation follows a race), or the oldest escalation held long enough;
 * -1 if none.
 */
static int take_slot(struct hwbp *hw)
{
	uint64_t now = clock__now_ns(), oldest = UINT64_MAX;
	int victim = -1;

	for (int i = 0; i < (int)hw->max_slots; i++)
		if (hw->s[i].mode == KCSAND_HW_OFF)
			return i;
	for (int i = 0; i < (int)hw->max_slots; i++) {
		if (hw->s[i].mode == KCSAND_HW_HISTORY && hw->s[i].armed_ns < oldest) {
			oldest = hw->s[i].armed_ns;
			victim = i;
		}
	}
	for (int i = 0; i < (int)hw->max_slots && victim < 0; i++) {
		if (hw->s[i].mode == KCSAND_HW_ESCALATION && hw->s[i].armed_ns < oldest &&
		    now - hw->s[i].armed_ns >= HW_MIN_HOLD_MS * 1000000ull) {
			oldest = hw->s[i].armed_ns;
			victim = i;
		}
	}
	if (victim >= 0)
		hwbp_disarm(hw, victim);
	return victim;
}

int hwbp__escalate(struct hwbp *hw, const struct kcsand_report *r)
{
	const struct kcsand_access *a = &r->this;
	uint64_t addr;
	unsigned int len;
	int i;

	if (!hw || r->has_other || (a->flags & KCSAND_ACC_HWBP))
		return 0;
	if (hw->no_traps) {
		if (!hw->told)
			pr_warn("races of unknown origin are not escalated: %s\n",
				hw->no_traps);
		hw->told = true;
		return -EOPNOTSUPP;
	}
	for (i = 0; i < KCSAND_HW_SLOTS; i++) {
		const struct hw_slot *s = &hw->s[i];

		if (s->mode != KCSAND_HW_OFF && s->mode != KCSAND_HW_HISTORY &&
		    (hw->kernel || s->pid == (pid_t)a->pid) &&
		    a->addr >= s->addr && a->addr < s->addr + s->len)
			return 0;	/* watched already */
	}
	/*
	 * Not on the watcher's own kernel stack: the frame is gone long before
	 * the 30 s are, and the slot's next users are other frames (and under
	 * QEMU's TCG, an interrupt's frame pushed there is lost with its
	 * vector left in service: docs/kernel-mode.md).
	 */
	if (hwbp__cover(a->addr, a->size, &addr, &len) ||
	    (hw->kernel && (a->flags & KCSAND_ACC_STACK))) {
		hw->st.unarmable++;
		return -EINVAL;
	}
	i = take_slot(hw);
	if (i < 0) {
		hw->st.no_slot++;
		return -ENOSPC;
	}
	if (arm(hw, i, hw->kernel ? -1 : (pid_t)a->pid, addr, len, a->addr, a->size,
		KCSAND_HW_ESCALATION))
		return -EIO;
	hw->s[i].until_ns = clock__now_ns() + HW_ESCALATION_MS * 1000000ull;
	hw->s[i].watcher = *r;
	pr_info("escalation: write watchpoint %d on 0x%" PRIx64 " (%u bytes), "
		"%zu %s, armed in %.1f ms\n", i, addr, len, hw->s[i].n,
		hw->kernel ? "CPUs" : "threads", (clock__now_ns() - hw->s[i].armed_ns) / 1e6);
	return 0;
}

/*
 * The debug register saw the next write, after the race's watch window
 * closed: it did not run concurrently with the watcher, so it is told as
 * what it is, a later write by that stack and how much later
 * (KCSAND_ACC_LATER), never as the other side of a data race.
 */
void hwbp__later_write(const struct kcsand_report *race, const struct kcsand_hw_access *a,
		       struct kcsand_report *out)
{
	memset(out, 0, sizeof(*out));
	out->type = KCSAND_REC_REPORT;
	out->value_change = a->value[0] != a->value[1] ? KCSAND_VALUE_CHANGE_TRUE
						       : KCSAND_VALUE_CHANGE_MAYBE;
	out->has_other = 1;
	out->value_valid = a->value_valid;
	out->old_value[0] = a->value[1];
	out->new_value[0] = a->value[0];
	out->this = race->this;
	out->other = a->acc;
	out->other.flags |= KCSAND_ACC_LATER;
	out->other.after_us = a->time_ns > race->time_ns ? (a->time_ns - race->time_ns) / 1000 : 0;
	out->time_ns = a->time_ns;
}

int hwbp__pair(struct hwbp *hw, const struct kcsand_hw_access *a, struct kcsand_report *out)
{
	struct hw_slot *s;

	if (!hw || a->slot >= KCSAND_HW_SLOTS)
		return 0;
	s = &hw->s[a->slot];
	if (s->mode != KCSAND_HW_ESCALATION || s->gen != a->gen)
		return 0;	/* re-armed since, or a watch slot */
	if (a->acc.tid == s->watcher.this.tid && a->acc.ctx == s->watcher.this.ctx)
		return 0;	/* the watcher's own thread: no race */
	hwbp__later_write(&s->watcher, a, out);
	if (!s->paired_ns)
		s->paired_ns = clock__now_ns();
	hw->st.pairs++;
	return 1;
}

void hwbp__limit(struct hwbp *hw, unsigned int slots)
{
	if (hw)
		hw->max_slots = slots < KCSAND_HW_SLOTS ? slots : KCSAND_HW_SLOTS;
}

void hwbp__tick(struct hwbp *hw)
{
	uint64_t now = clock__now_ns();

	if (!hw)
		return;
	for (int i = 0; i < KCSAND_HW_SLOTS; i++) {
		struct hw_slot *s = &hw->s[i];

		if (s->mode == KCSAND_HW_OFF)
			continue;
		if ((s->mode == KCSAND_HW_ESCALATION || s->mode == KCSAND_HW_HISTORY) &&
		    ((s->paired_ns && now - s->paired_ns > HW_LINGER_MS * 1000000ull) ||
		     now > s->until_ns)) {
			hwbp_disarm(hw, i);
			continue;
		}
		if (!hw->kernel)
			hwbp_sweep_threads(hw, i);
	}
	hwbp_hb_tick(hw);
}

/* spec as SYMBOL[:LEN] / ADDRESS[:LEN]: 0, or -EINVAL with the reason printed. */
static int parse_watch(const char *spec, struct watch_spec *ws)
{
	const char *bad = watch_spec__parse(spec, ws);

	if (!bad)
		return 0;
	pr_warn("watch: bad '%s': want SYMBOL[:LEN] or ADDRESS[:LEN]; %s\n", spec, bad);
	return -EINVAL;
}

/*
 * ws's variable, [*addr, *addr + *len): a kernel one (kallsyms), or one of
 * path in pid (-EAGAIN: not mapped yet).  0, or -errno with the reason printed.
 */
static int resolve_watch(bool kernel, pid_t pid, const char *path, const struct watch_spec *ws,
			 uint64_t *addr, unsigned int *len)
{
	const char *name = ws->symbol;
	uint64_t size = 8;
	int err;

	*addr = ws->addr;
	if (kernel && name[0]) {
		err = hwbp_resolve_ksym(name, addr, &size);
		if (err)
			return err;
	} else if (kernel && *addr < HWBP_KERNEL_START) {
		pr_warn("watch: 0x%" PRIx64 " is not a kernel address\n", *addr);
		return -EINVAL;
	} else if (name[0]) {
		err = hwbp__resolve_symbol(pid, path, false, name, addr, &size);
		if (err == -EAGAIN)
			return err;	/* the program is not exec'd yet: ask again */
		if (err) {
			pr_warn("watch: %s: no variable '%s': %s\n", path, name, strerror(-err));
			return err;
		}
	}
	*len = ws->len ? ws->len : size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
	return 0;
}

/* The debug register's range for [addr, addr + len): 0, or -EINVAL with the reason printed. */
static int cover_watch(uint64_t addr, unsigned int len, uint64_t *bp_addr, unsigned int *bp_len)
{
	if (!hwbp__cover(addr, len, bp_addr, bp_len))
		return 0;
	pr_warn("watch: 0x%" PRIx64 " of %u bytes: no debug register covers it\n", addr, len);
	return -EINVAL;
}

int hwbp__check_watch(bool kernel, const char *spec)
{
	struct watch_spec ws;
	uint64_t addr, bp_addr;
	unsigned int len, bp_len;
	int err = parse_watch(spec, &ws);

	if (err || !kernel)
		return err;
	err = resolve_watch(true, -1, NULL, &ws, &addr, &len);
	return err ? err : cover_watch(addr, len, &bp_addr, &bp_len);
}

int hwbp__watch(struct hwbp *hw, pid_t pid, const char *path, const char *spec)
{
	struct watch_spec ws;
	uint64_t addr, bp_addr;
	unsigned int len, bp_len;
	int i, err = parse_watch(spec, &ws);

	if (err)
		return err;
	if (hw->no_traps) {
		pr_warn("watch: %s: %s\n", spec, hw->no_traps);
		return -EOPNOTSUPP;
	}
	err = resolve_watch(hw->kernel, pid, path, &ws, &addr, &len);
	if (err)
		return err;
	if (cover_watch(addr, len, &bp_addr, &bp_len)) {
		hw->st.unarmable++;
		return -EINVAL;
	}
	i = take_slot(hw);
	if (i < 0) {
		pr_warn("watch: %s: every hardware watchpoint is taken\n", spec);
		hw->st.no_slot++;
		return -ENOSPC;
	}
	err = arm(hw, i, hw->kernel ? -1 : pid, bp_addr, bp_len, addr, len, KCSAND_HW_WATCH);
	if (!err && hw->kernel)
		pr_info("watching %s at 0x%" PRIx64 " (%u bytes) on %zu CPUs\n",
			spec, bp_addr, bp_len, hw->s[i].n);
	else if (!err)
		pr_info("watching %s at 0x%" PRIx64 " (%u bytes) in %d\n", spec,
			bp_addr, bp_len, pid);
	return err ? err : i;
}

int hwbp__unwatch(struct hwbp *hw, int slot)
{
	if (!hw || slot < 0 || slot >= KCSAND_HW_SLOTS || hw->s[slot].mode != KCSAND_HW_WATCH)
		return -ENOENT;
	hwbp_disarm(hw, slot);
	return 0;
}

int hwbp__slot_info(const struct hwbp *hw, int slot, struct hwbp_slot_info *out)
{
	const struct hw_slot *s;

	if (!hw || slot < 0 || slot >= KCSAND_HW_SLOTS || hw->s[slot].mode == KCSAND_HW_OFF)
		return -ENOENT;
	s = &hw->s[slot];
	*out = (struct hwbp_slot_info){ .mode = s->mode, .pid = s->pid, .addr = s->addr,
					.len = s->len, .events = s->n };
	return 0;
}

int hwbp__slots_in_use(const struct hwbp *hw)
{
	int n = 0;

	for (int i = 0; hw && i < KCSAND_HW_SLOTS; i++)
		n += hw->s[i].mode != KCSAND_HW_OFF;
	return n;
}

void hwbp__get_stats(const struct hwbp *hw, struct hwbp_stats *out)
{
	*out = hw->st;
	out->traps = hw->skel->bss->hw_counters[0];
	out->consumed = hw->skel->bss->hw_counters[1];
	out->watchers = hw->skel->bss->hw_counters[3];
	out->probed = hw->skel->bss->hw_counters[4];
	out->outside = hw->skel->bss->hw_counters[5];
	out->undecoded = hw->skel->bss->hw_counters[6];
}

void hwbp__set_site_flags(struct hwbp *hw, hwbp_site_flags_fn *fn, void *ctx)
{
	hw->site_flags = fn;
	hw->site_ctx = ctx;
}

void hwbp__set_loader(struct hwbp *hw, hwbp_load_fn *load, void *ctx)
{
	hw->load = load;
	hw->load_ctx = ctx;
}

int hwbp__load_trap(struct hwbp *hw)
{
	return hw->no_traps ? 0 : trap_program(hw);
}

void hwbp__free(struct hwbp *hw)
{
	if (!hw)
		return;
	for (int i = 0; i < KCSAND_HW_SLOTS; i++)
		if (hw->s[i].mode != KCSAND_HW_OFF)
			hwbp_disarm(hw, i);
	kcore__close(&hw->kc);
	ksyms__free(hw->ks);
	free(hw->hb_thr);
	free(hw);
}
