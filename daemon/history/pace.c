// SPDX-License-Identifier: GPL-2.0-only
/*
 * How long the sync probes stay on.  See history.h.
 *
 * A sync probe costs a trap per call (28-60 us on this kind of VM, 1-2 us
 * on bare metal), and a program that takes a lock per operation calls one
 * millions of times a second: traced in full, a 2 s hash-table run took
 * nine minutes.  The probes cannot be sampled one call at a time (a missed
 * release or acquire makes a false report), so they are sampled in windows
 * instead, as LiteRace samples code: on while their cost fits the budget,
 * off while the program's own work earns the credit for the next window.
 * The history is forgotten across a pause (bpf/history.bpf.h, hb_gen), so
 * a window finds races whose two accesses both fall inside it.
 *
 * The credit is in CPU-ns of the targets: their own work earns budget
 * times itself, the probes' traps and BPF time spend it.  A program that
 * synchronizes rarely (most test programs) never runs out and is traced
 * from its first call to its last.  The start's credit is an advance on
 * what the work will earn, not a gift on top of it: until the earnings
 * pass it, they pay it back, so a short run's probes cost the larger of
 * the two, not their sum (P2 at 2 s: 100 CPU-ms less).
 */
#include "history.h"

/* An advance at the start: a program's start is traced whatever its sync rate. */
#define HB_PACE_START_NS	(100 * 1e6)
/* At most this much credit is kept: a quiet phase does not buy a long window. */
#define HB_PACE_MAX_NS		(100 * 1e6)
/* A window is worth its re-attach only if the credit buys this much of it. */
#define HB_PACE_RESUME_NS	(20 * 1e6)

/* A new process gets a start's advance again at most this often (wall time). */
#define HB_PACE_NEW_RUN_NS	(1000 * 1e6)

void hb_pace__init(struct hb_pace *p)
{
	*p = (struct hb_pace){ .credit_ns = HB_PACE_START_NS };	/* the advance, nothing spent */
}

/*
 * A new process of the targets (a service target's next run, a forked
 * child): its start is traced like a run's, whatever the processes before
 * it spent, or a target's later runs would all go untraced.  At most once
 * a second, so that a program forking all along pays for its probes.
 */
bool hb_pace__new_run(struct hb_pace *p, double now_ns)
{
	if (p->advance_ns && now_ns - p->advance_ns < HB_PACE_NEW_RUN_NS)
		return false;
	p->advance_ns = now_ns;
	if (p->credit_ns < HB_PACE_START_NS) {
		p->spent_ns -= HB_PACE_START_NS - p->credit_ns;
		p->credit_ns = HB_PACE_START_NS;
	}
	return true;
}

enum hb_pace_action hb_pace__step(struct hb_pace *p, double native_ns, double cost_ns,
				  double budget)
{
	double dn = native_ns - p->native_ns, dc = cost_ns - p->cost_ns, allowed;

	p->native_ns = native_ns;
	p->cost_ns = cost_ns;
	if (budget >= 1) {
		/* A budget of 100% traces everything: back on at once if it was off. */
		p->credit_ns = HB_PACE_MAX_NS;
		if (!p->off)
			return HB_PACE_KEEP;
		p->off = false;
		return HB_PACE_RESUME;
	}
	p->earned_ns += budget * (dn > 0 ? dn : 0);
	p->spent_ns += dc > 0 ? dc : 0;
	allowed = p->earned_ns > HB_PACE_START_NS ? p->earned_ns : HB_PACE_START_NS;
	p->credit_ns = allowed - p->spent_ns;
	if (p->credit_ns > HB_PACE_MAX_NS) {
		/* What a quiet stretch earned beyond the cap is not kept. */
		p->spent_ns = allowed - HB_PACE_MAX_NS;
		p->credit_ns = HB_PACE_MAX_NS;
	}
	if (!p->off && p->credit_ns < 0) {
		p->off = true;
		return HB_PACE_PAUSE;
	}
	if (p->off && p->credit_ns >= HB_PACE_RESUME_NS) {
		p->off = false;
		return HB_PACE_RESUME;
	}
	return HB_PACE_KEEP;
}
