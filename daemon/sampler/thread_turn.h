/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hot turns on one thread.  A uprobe is an int3 in the text every thread
 * shares, so arming a hot site slows down every thread that runs it,
 * including the one whose conflicting write the watcher waits for, so
 * that few watchpoints see the other thread change the value
 * (docs/PERFORMANCE.md, "Figures behind the code").  An execute
 * breakpoint (a debug register, through a perf breakpoint event on one
 * thread) traps that thread only; the others run natively and change the
 * value in the watcher's stall as often as the program really does.
 *
 * So the site sampler arms a hot turn's sites with execute breakpoints in
 * one thread of each target process (all of them in the same thread), a
 * different thread each turn, and
 * falls back to a uprobe link when that is not possible (no target pid
 * known, as with trace_all; or no debug register free).
 */
#ifndef KCSAND_THREAD_TURN_H
#define KCSAND_THREAD_TURN_H

#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct kcsand_bpf;
struct thread_turn;

int thread_turn__new(struct kcsand_bpf *skel, struct thread_turn **out);
/*
 * The execute-breakpoint program, once it is loaded (engine/late_load.h):
 * until then thread_turn__arm() fails with EAGAIN and turns take uprobes.
 */
void thread_turn__set_prog(struct thread_turn *x, struct bpf_program *prog);
/*
 * Arm the site with this cookie, at file offset off of the ELF file with
 * this device and inode (not a path: it may name a newer file), in one thread of every target process that maps it: the thread this
 * turn already uses in that process, else the next running one.  Returns how many
 * breakpoints were armed (0: no target process maps it), or a negative
 * errno, with what was armed by this call left armed for thread_turn__disarm().
 */
int thread_turn__arm(struct thread_turn *x, dev_t dev, ino_t ino, uint64_t off, uint32_t cookie);
/* Disarm every breakpoint armed since the last call. */
void thread_turn__disarm(struct thread_turn *x);
/*
 * The cost of one execute-breakpoint trap, in ns: calls of fn with a
 * breakpoint on it in this thread (not a target: the program returns at
 * once) against calls without.  0 when it cannot be measured.
 */
double thread_turn__trap_ns(struct bpf_program *prog, void (*fn)(void), int calls);
void thread_turn__free(struct thread_turn *x);

#endif
