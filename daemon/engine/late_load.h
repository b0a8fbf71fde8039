/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The execute-breakpoint program (kcsand_xbp), loaded once the target has
 * run a while rather than before it starts.  Verifying it takes as long as
 * verifying the uprobe program (0.1 s on this kind of VM, 70,000
 * instructions processed), and a `kcsanctl run` paid both before the
 * program started; it is needed only for hot turns on one thread, which
 * come after the cold start.  Until it is ready, turns use uprobe links
 * (engine__turn).
 *
 * A second instance of the BPF object, every map that of the first
 * (bpf_map__reuse_fd), with only that program to load, on a thread of its
 * own; the execute breakpoint's trap is calibrated there too.
 *
 * The same second instance serves every program a start leaves for later
 * (engine_late_skel(), engine_int.h): kernel mode's kcsand_kprobe or
 * kcsand_kxbp for sites added after the start, and the hardware watchpoints'
 * trap program at the first watch or escalation.  Verifying them is most of
 * a start on an older kernel (6.1: kcsand_kxbp 11 s, kcsand_hwbp 14 s in the
 * test guest, docs/test-kernel.md), paid now only by a run that uses them.
 */
#ifndef KCSAND_LATE_LOAD_H
#define KCSAND_LATE_LOAD_H

#include <stdbool.h>

struct bpf_program;
struct kcsand_bpf;
struct late_load;

/* Programs to load later against skel's maps (skel is loaded); none started yet. */
int late_load__new(struct kcsand_bpf *skel, struct late_load **out);
/*
 * Start loading kcsand_xbp; once (later calls do nothing).  Called once
 * the targets have run a while (engine.c, XBP_LOAD_AFTER_CPU_MS) or at the
 * first hot turn, whichever comes first, not at the start: a short run
 * takes no turn, and verifying the program (with its own copy of the
 * kernel's BTF) cost it 0.1 CPU seconds beside the target.  Loaded at the
 * first turn alone, a run long enough for turns took its first ones on
 * uprobes on every thread while it loaded (docs/test-kernel.md, "Tried and
 * not kept"); turns use uprobe links until it is loaded.
 */
void late_load__start_xbp(struct late_load *l);
/* Started already (or nothing to start: no late load). */
bool late_load__xbp_started(const struct late_load *l);
/*
 * Start loading the history's watches' program (kcsand_hb_watch) on a
 * second thread at a lower priority, so that hot turns do not wait for it;
 * once (later calls do nothing).  Called at the first read offered to be
 * watched, not at the start: a run that offers none (a short program, one
 * whose reads all find their writes) neither verifies it nor waits for its
 * thread at its end (kcsanctl run -- true: 0.72-0.87 s without the
 * watches, 0.91-1.33 s with the load started at the start).
 */
void late_load__start_watch(struct late_load *l);
/*
 * Once, when the load is over: true, with *prog the program (NULL if it
 * failed) and *trap_ns the cost of its trap (0: not measured).  Later
 * calls and calls before then return false.
 */
bool late_load__take(struct late_load *l, struct bpf_program **prog, double *trap_ns);
/* The same for kcsand_hb_watch: true once, when its load is over. */
bool late_load__take_watch(struct late_load *l, struct bpf_program **prog);
/*
 * Unload; the program taken goes with it.  A load still in the verifier is
 * not waited for: its thread unloads and frees it when it is over, so that
 * a short run's end does not wait for a program it never used.
 */
void late_load__free(struct late_load *l);

#endif
