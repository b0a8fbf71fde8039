/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Closing several uprobe links at once.  A uprobe_multi link's release
 * waits for the uprobes' grace periods (uprobe_unregister_sync), 30-70 ms
 * each on this kind of VM; a run that ends with a link per object and per
 * group of sync probes waited for each in turn, 0.18 s of a 0.5 s
 * `kcsanctl run` of a short program.  Closed from a thread each, the waits
 * overlap.
 */
#ifndef KCSAND_LINK_CLOSE_H
#define KCSAND_LINK_CLOSE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_link;

/* Up to this many fds in one batch; a full one is closed when one more is added. */
#define LINK_CLOSE_MAX	64

struct link_close {
	int fd[LINK_CLOSE_MAX];
	size_t n;
};

/* Take *fd into the batch (a full one closed first) and set it to -1; < 0: nothing. */
void link_close__add(struct link_close *b, int *fd);
/* Close every fd of the batch, in parallel, and return once all are closed. */
void link_close__all(struct link_close *b);

/*
 * Per-site perf links (kprobes; uprobes before Linux 6.6): each one's
 * release waits for grace periods, one of them inside the kernel's
 * event_mutex (perf_trace_event_unreg) and one outside it
 * (unregister_kprobe), about 105 ms a kprobe in the TCG guest.  From a
 * few threads at once the waits outside the mutex overlap the next
 * link's wait inside it.  Every link is destroyed, each by one thread
 * (one that cannot start leaves its share to this one), and set to NULL;
 * the function returns once all are.  NULL entries are skipped.
 */
void link_close__destroy(struct bpf_link **links, size_t n);

/*
 * One fd closed in the background: for a link on kcsand's own code whose
 * close need not hold up what comes next (the trap calibration's, 30 ms of
 * every start).  link_close__join() waits for it: until then the link is
 * still the process's.
 */
struct link_close_bg {
	pthread_t thread;
	bool running;
};

/* Close fd (< 0: nothing) from a thread of its own, or here if none starts. */
void link_close__start(struct link_close_bg *bg, int fd);
/* Wait for the close started, if any. */
void link_close__join(struct link_close_bg *bg);

#endif
