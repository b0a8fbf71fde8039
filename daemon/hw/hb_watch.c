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
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hwbp_int.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"

#define HB_ROOM_MS	10	/* BPF may offer hb_max reads per this */

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

void hwbp_hb_tick(struct hwbp *hw)
{
	uint64_t now = clock__now_ns();

	if (!hw->hb_max || now - hw->hb_room_ns < HB_ROOM_MS * MS)
		return;
	hw->hb_room_ns = now;
	__atomic_store_n(&hw->skel->bss->hb_watch_room, (int)hw->hb_max, __ATOMIC_RELAXED);
}
