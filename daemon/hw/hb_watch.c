// SPDX-License-Identifier: GPL-2.0-only
/*
 * The history's watches (bpf/history_watch.bpf.h is the BPF half): a
 * sampled plain read of a granule the history had nothing of gets a write
 * breakpoint in the other threads of its process, so that a write there
 * from a site the sampler has backed off (a loop's last iteration, a
 * chunk's boundary) is still checked against the history.
 *
 * Which reads: the debug registers are four, shared with escalations,
 * watches and hot turns, so the history holds at most hw->hb_max of them,
 * each until a write traps it or HB_WATCH_MS passes.  BPF may offer
 * hb_max reads per HB_ROOM_MS (hb_watch_room), and a read is placed in a
 * free slot, else in place of a watch of the same thread's held for
 * HB_MIN_HOLD_MS (a thread's newer read: a program's first reads are of
 * data set up before its threads exist), else dropped (counted).  Offers
 * that come before the trap's program is loaded (kcsand_hb_watch,
 * loaded after the start) wait in hb_pend[] under the same rule, and are
 * armed when it is in: a parallel loop's boundary read comes in its first
 * milliseconds, its write at its end.
 *
 * What they cost: a thread with a user breakpoint armed pays at each of
 * its context switches, not at its system calls.  On this project's KVM
 * guests a sched_yield() ping-pong of two threads ran 2 to 2.5 times
 * longer with a write breakpoint on one of them (100 to 390 us more per
 * switch of that thread), while 2 million getppid() calls cost the same
 * (docs/history.md, "Watches of reads").  So they are paced by the
 * switches of the threads they are armed in: counted every HB_COUNT_MS
 * from /proc (voluntary and not, each thread once however many watches it
 * carries), priced history_switch_us each, and added to the sync probes' cost
 * against the history's share of the budget (engine.c, pace_watches()).  A
 * program whose watched threads switch often spends that share and its
 * watches close, the sync probes staying on (hwbp__hb_pause()); one whose
 * threads switch seldom, as a parallel loop's, keeps them.  A paused
 * history closes them too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hwbp_int.h"
#include "kcsand.skel.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/print.h"

#define HB_ROOM_MS	10	/* BPF may offer hb_max reads per this */
#define HB_COUNT_MS	50	/* the watched threads' switches are counted this often */
#define MS		1000000ull

void hwbp__hb_init(struct hwbp *hw, unsigned int max)
{
	if (!hw || hw->kernel || hw->no_traps)
		return;
	hw->hb_max = max < KCSAND_HW_SLOTS ? max : KCSAND_HW_SLOTS;
	hw->skel->bss->hb_watch_room = (int)hw->hb_max;
}

int hwbp__hb_place(const uint64_t *at, const pid_t *tid, int n, pid_t reader, uint64_t now)
{
	int same = -1, old = -1;

	for (int i = 0; i < n; i++) {
		if (!at[i])
			return i;
		if (tid[i] == reader && now - at[i] >= HB_MIN_HOLD_MS * MS &&
		    (same < 0 || at[i] < at[same]))
			same = i;
		if (now - at[i] >= HB_WATCH_MS * MS && (old < 0 || at[i] < at[old]))
			old = i;
	}
	return same >= 0 ? same : old;
}

/*
 * Slot i as the watch of rq's read: a write breakpoint on [addr, addr +
 * len) in every thread of its process but the reader's.
 */
static int hb_arm(struct hwbp *hw, int i, const struct kcsand_hb_watch *rq, uint64_t since)
{
	struct hw_slot *s = &hw->s[i];
	uint64_t addr;
	unsigned int len;
	struct kcsand_hw_slot bs = { .mode = KCSAND_HW_HISTORY, .var_addr = rq->addr,
				     .var_len = rq->size };
	__u32 key = i;
	int err;

	if (hwbp__cover(rq->addr, rq->size, &addr, &len))
		return -EINVAL;
	bs.addr = addr;
	bs.len = len;
	bs.gen = ++hw->gen;
	*s = (struct hw_slot){ .mode = KCSAND_HW_HISTORY, .pid = (pid_t)rq->tgid, .addr = addr,
			       .len = len, .gen = bs.gen, .armed_ns = clock__now_ns(),
			       .skip_tid = (pid_t)rq->tid };
	s->until_ns = since + HB_WATCH_MS * MS;
	bpf_map_update_elem(bpf_map__fd(hw->skel->maps.hw_slots), &key, &bs, BPF_ANY);
	err = hwbp_sweep_threads(hw, i);
	if (err) {
		hwbp_disarm(hw, i);
		return err;
	}
	hw->st.hb_watches++;
	pr_debug("history: write watchpoint %d on 0x%" PRIx64 " (%u bytes), read by %u, in "
		 "%zu other threads, armed in %.1f ms\n", i, addr, len, rq->tid, s->n,
		 (clock__now_ns() - s->armed_ns) / 1e6);
	return 0;
}

/* Among the slots, where rq goes (a watch it replaces is closed): -1 for none. */
static int hb_slot_for(struct hwbp *hw, const struct kcsand_hb_watch *rq, uint64_t now)
{
	uint64_t at[KCSAND_HW_SLOTS] = { 0 };
	pid_t tid[KCSAND_HW_SLOTS] = { 0 };
	int map[KCSAND_HW_SLOTS], n = 0, held = 0, i;

	for (i = 0; i < (int)hw->max_slots; i++)
		held += hw->s[i].mode == KCSAND_HW_HISTORY;
	for (i = 0; i < (int)hw->max_slots; i++) {
		const struct hw_slot *s = &hw->s[i];

		if (s->mode == KCSAND_HW_HISTORY) {
			at[n] = s->armed_ns;
			tid[n] = s->skip_tid;
		} else if (s->mode != KCSAND_HW_OFF || held >= (int)hw->hb_max) {
			continue;
		}
		map[n++] = i;
	}
	i = hwbp__hb_place(at, tid, n, (pid_t)rq->tid, now);
	if (i < 0)
		return -1;
	if (at[i])
		hwbp_disarm(hw, map[i]);
	return map[i];
}

/* Before the program is in: keep rq in hb_pend[] if it has a place there. */
static void hb_keep(struct hwbp *hw, const struct kcsand_hb_watch *rq, uint64_t now)
{
	uint64_t at[KCSAND_HW_SLOTS];
	pid_t tid[KCSAND_HW_SLOTS];
	int n = (int)hw->hb_max, i;

	for (i = 0; i < n; i++) {
		at[i] = hw->hb_pend[i].at_ns;
		tid[i] = (pid_t)hw->hb_pend[i].rq.tid;
	}
	i = hwbp__hb_place(at, tid, n, (pid_t)rq->tid, now);
	if (i < 0) {
		hw->st.hb_no_slot++;
		return;
	}
	hw->hb_pend[i].rq = *rq;
	hw->hb_pend[i].at_ns = now;
}

void hwbp__hb_watch(struct hwbp *hw, const struct kcsand_hb_watch *rq)
{
	uint64_t now = clock__now_ns();
	int i;

	if (!hw || !hw->hb_max)
		return;
	if (rq->spent) {
		if (rq->slot < KCSAND_HW_SLOTS && hw->s[rq->slot].mode == KCSAND_HW_HISTORY &&
		    hw->s[rq->slot].gen == rq->gen) {
			hwbp_disarm(hw, (int)rq->slot);
			hw->st.hb_spent++;
		}
		return;
	}
	if (hw->hb_paused)
		return;		/* offered before the room was emptied */
	if (!hw->hb_prog) {
		hb_keep(hw, rq, now);
		return;
	}
	i = hb_slot_for(hw, rq, now);
	if (i < 0)
		hw->st.hb_no_slot++;
	else
		hb_arm(hw, i, rq, now);
}

void hwbp__hb_enable(struct hwbp *hw, struct bpf_program *prog)
{
	uint64_t now = clock__now_ns();

	if (!hw || !hw->hb_max || !prog)
		return;
	hw->hb_prog = prog;
	pr_debug("history: watches from now on\n");
	for (int k = 0; k < KCSAND_HW_SLOTS; k++) {
		struct hb_pending *p = &hw->hb_pend[k];
		int i;

		if (p->at_ns && now - p->at_ns < HB_WATCH_MS * MS &&
		    (i = hb_slot_for(hw, &p->rq, now)) >= 0)
			hb_arm(hw, i, &p->rq, p->at_ns);
		p->at_ns = 0;
	}
}

/* Thread tid's context switches so far, voluntary and not: 0, or -errno when it is gone. */
static int thread_switches(pid_t pid, pid_t tid, unsigned long long *out)
{
	char path[64], line[128];
	unsigned long long v;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*out = 0;
	while (found < 2 && fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			*out += v;
			found++;
		}
	fclose(f);
	return found == 2 ? 0 : -ENOENT;
}

/* Index of (pid, tid) in t[0..n), or n. */
static size_t thread_at(const struct hb_thread *t, size_t n, pid_t pid, pid_t tid)
{
	size_t k = 0;

	while (k < n && (t[k].pid != pid || t[k].tid != tid))
		k++;
	return k;
}

/*
 * The threads a watch is armed in now, each once, with their switches:
 * those of a thread that had one at the last count too are added to the
 * watches' (a watch that takes another's place keeps its threads counted).
 */
static void hb_count_switches(struct hwbp *hw)
{
	struct hb_thread *now = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < KCSAND_HW_SLOTS; i++) {
		const struct hw_slot *s = &hw->s[i];

		for (size_t k = 0; s->mode == KCSAND_HW_HISTORY && k < s->n; k++) {
			pid_t tid = s->ev[k].owner;
			unsigned long long sw = 0;
			size_t was;

			if (thread_at(now, n, s->pid, tid) < n || thread_switches(s->pid, tid, &sw) ||
			    ARRAY_RESERVE(now, cap, n, 8))
				continue;
			was = thread_at(hw->hb_thr, hw->hb_nthr, s->pid, tid);
			if (was < hw->hb_nthr && sw > hw->hb_thr[was].switches)
				hw->st.hb_switches += sw - hw->hb_thr[was].switches;
			now[n++] = (struct hb_thread){ .pid = s->pid, .tid = tid, .switches = sw };
		}
	}
	free(hw->hb_thr);
	hw->hb_thr = now;
	hw->hb_nthr = n;
}

unsigned long long hwbp__hb_switches(const struct hwbp *hw)
{
	return hw ? hw->st.hb_switches : 0;
}

void hwbp__hb_pause(struct hwbp *hw, bool pause)
{
	if (!hw || !hw->hb_max || hw->hb_paused == pause)
		return;
	hw->hb_paused = pause;
	if (!pause)
		return;
	hw->st.hb_paused++;
	__atomic_store_n(&hw->skel->bss->hb_watch_room, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < KCSAND_HW_SLOTS; i++)
		if (hw->s[i].mode == KCSAND_HW_HISTORY)
			hwbp_disarm(hw, i);
	memset(hw->hb_pend, 0, sizeof(hw->hb_pend));
	hb_count_switches(hw);	/* none armed: forget the threads */
}

void hwbp_hb_tick(struct hwbp *hw)
{
	uint64_t now = clock__now_ns();

	if (!hw->hb_max)
		return;
	if (now - hw->hb_count_ns >= HB_COUNT_MS * MS) {
		hw->hb_count_ns = now;
		hb_count_switches(hw);
	}
	if (hw->hb_paused || now - hw->hb_room_ns < HB_ROOM_MS * MS)
		return;
	hw->hb_room_ns = now;
	__atomic_store_n(&hw->skel->bss->hb_watch_room, (int)hw->hb_max, __ATOMIC_RELAXED);
}
