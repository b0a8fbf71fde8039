/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine's internals, shared by engine.c (open, load, start, poll,
 * close, parameters), engine_objects.c (objects, attach, marking, kernel
 * site sets), engine_summary.c (counters, the summary), pipeline.c (the
 * report pipeline), arm.c (the site sampler's arming) and release_probes.c
 * (the history's map of the probes after locked releases).  Nothing outside
 * the engine includes it.
 */
#ifndef KCSAND_ENGINE_INT_H
#define KCSAND_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "util/link_close.h"
#include "sites/decode.h"
#include "engine.h"
#include "history/history.h"

struct bpf_link;
struct ring_buffer;

/*
 * A probed object.  Its sites own the contiguous cookie range
 * [first, first + nr) of the BPF site table; cookies are never reused, so
 * a report still in the ring buffer after a removal names the right site.
 */
struct engine_object {
	struct target_obj *obj;
	uint32_t first;
	/*
	 * The sites' uprobe_multi links, one per chunk of chunk_sites
	 * consecutive sites (-1: none armed there), and which sites they hold
	 * now: a re-arm makes again only the chunks whose armed sites changed
	 * (arm.c, engine_link_chunks).
	 */
	int *chunk_fd;
	size_t nr_chunks, chunk_sites;
	uint8_t *linked;
	int turn_fd;			/* the sampler's hot turn: a link of its own, or -1 */
	struct bpf_link **links;	/* per-site links (fallback) */
	size_t nr_links;
	bool attached;
	bool removed;
	bool kernel;			/* kprobes on kernel code */
	size_t refused;			/* kernel sites the kernel would not probe */
	bool relink_failed;		/* a re-attach failed and was said: say no more */
	uint8_t *probe_refused;		/* per site: the kernel refused its uprobe, left out */
	unsigned int refusal_searches;	/* searches for such sites, bounded */
	uint8_t *orig_flags;		/* site flags before engine__set_nowatch(), or NULL */
	uint64_t release_ino;		/* its file, with probes in hb_release_probes; 0: none */
};

struct kcsand_bpf;

/* kcsand_kprobe, kcsand_kxbp, the trap's program: what a start may leave for later. */
#define ENGINE_LATE_SKELS	4

struct engine {
	struct engine_opts opts;
	struct kcsand_bpf *skel;
	bool multi;			/* uprobe_multi links, else per-site perf links */

	struct engine_object *objs;
	size_t nr_objs, cap_objs;
	uint32_t *site_obj;		/* cookie -> index into objs */
	size_t nr_cookies;		/* cookies handed out: site_obj's entries */
	size_t cap_site_obj;
	size_t capacity;		/* entries of the BPF site table */

	struct bpf_link *tp_links[2];	/* fork, exit */
	struct ring_buffer *rb;
	struct kcsand_report *queue;	/* the ring-buffer callback only queues */
	size_t nr_queued, cap_queued;	/* ENGINE_BATCH a poll; more while a link is made */

	struct symbolizer *sym;
	/* CFI unwinding of the user stacks BPF copied: taken from the ring, unwound before reports. */
	struct unwinder *unwind;
	struct kcsand_ustack *ustacks;
	size_t nr_ustacks, cap_ustacks;
	struct ksyms *ksyms;		/* kernel mode */
	struct mark_rules *marks;	/* --marks, or NULL */
	struct dedup *dedup;
	struct sampler *sampler;	/* after attach */
	struct thread_turn *tt;		/* the sampler's hot turns on one thread */
	struct late_load *late;		/* their program, loading (late_load.h) */
	/* Programs a start left unloaded, loaded once a run needed them (engine_late_skel). */
	struct kcsand_bpf *late_skels[ENGINE_LATE_SKELS];
	size_t nr_late_skels;
	struct link_close_bg calib_close;	/* the trap calibration's link (engine__settle) */
	struct hwbp *hw;		/* after load */
	struct history *hist;		/* after load, when opts.history */
	struct hb_pace hb_pace;		/* how long its sync probes stay on */
	struct hb_pace hb_watch_pace;	/* and its watches, charged both costs */
	uint8_t *sampled;		/* the sampler's last armed set (arm.c), or NULL: all */
	bool sync_sites_off;		/* the history's sync sites left to the sampler (paused) */
	bool hb_watches_shed;		/* the history's watches closed for their own cost */
	/* Their switches priced so far (history_switch_us when counted), and how many. */
	double hb_switch_ns;
	unsigned long long hb_switches;
	bool sampled_lost;		/* no memory to keep it: the history stays paused */
	struct kbp *kbp;		/* kernel mode, code-breakpoint sampling: after attach */
	struct pairs *pairs;		/* its stalls' data breakpoints on the other CPUs (hw/pair.h) */
	struct heartbeat *heartbeat;	/* kernel mode: the BPF side checks only while it beats */
	bool kbp_mode;			/* no kprobes: sites are sampled by code breakpoints */
	char system[160];

	/* Breakpoint sampling: races of unknown origin held a moment for their pair (pipeline.c). */
	struct held_report *held;
	size_t nr_held;
	unsigned long unknown_held, unknown_folded;
	/* Pairs of plain movs held until their address may be learned atomic (pipeline.c). */
	struct learn_held *learn_held;
	size_t nr_learn_held;
	unsigned long learned_late;	/* of them, dropped: the address was an atomic's */
	unsigned long learned_late_wp;	/* of those, watchpoints' (data_races counted them) */
	size_t teach_scanned;		/* objects scanned for a teaching site */
	bool teaching;			/* one was found: addresses may be learned */

	uint64_t swept_ns;		/* the symbolizer last forgot exited processes */
	double decode_ms;		/* for -v and the bench */
	unsigned long nr_reports;
	unsigned long nr_reports_history;	/* of nr_reports, found by the history detector */
	unsigned long history_unsound;	/* its reports dropped: a thread had no clock */
	unsigned long history_watch_marked; /* watch reports dropped: the write was marked */
	unsigned long history_watch_undecoded; /* dropped: the write is no access a site describes */
	unsigned long suppressed_dedup;
	unsigned long suppressed_no_change;
	unsigned long suppressed_filter;
};

/* How often the symbolizer forgets the processes that exited. */
#define SYM_SWEEP_NS	(10 * 1000000000ull)

/* The site sampler's view of the engine (arm.c). */
extern const struct sampler_ops engine_sampler_ops;
/*
 * The sampler's armed set again, with the history's sync sites always
 * armed (on) or not; -ENOMEM when the set could not be kept (arm.c).
 */
int engine_rearm_sync(struct engine *e, bool on);
/* The sites learned atomic since the last re-arm armed now, if any (arm.c). */
void engine_arm_learned(struct engine *e);
/* CPU-ns the history detector's sync probes took so far; 0 without one. */
double engine_sync_cost_ns(const struct engine *e);
/* The flags of the site at vaddr of the object at path, or 0 (hwbp__set_site_flags). */
uint32_t engine_site_flags_at(void *ctx, const char *path, uint64_t vaddr);
/* The site a cookie names, and its object; NULL for a cookie not handed out. */
const struct site *engine_site_of(const struct engine *e, uint32_t cookie,
				  const struct target_obj **o);

/* Where the probe goes: the instruction, or past it for a locked one. */
static inline uint64_t probe_off(const struct site *s)
{
	return s->file_off + s->desc.probe_delta;
}

/*
 * Remove the probes of every user object whose file changed on disk since
 * it was decoded (target_obj__changed), before anything attaches again.
 */
void engine_drop_changed(struct engine *e);

/* engine_objects.c */
/* Every probe of eo off; its links freed. */
void engine_detach_object(struct engine_object *eo);
/* Probe every object added before load (engine__start), then the sampler or code breakpoints. */
int engine_attach_added(struct engine *e);
/* Kernel sites sampled by code breakpoints rather than kprobes (opts.sample, the site count). */
bool engine_use_breakpoints(const struct engine *e);

/* engine_kbp.c */
/* Every kernel site, addresses and cookies, into the code-breakpoint sampler's cycle. */
int engine_start_kbp(struct engine *e);

/* release_probes.c */
/* Each user site's object number and probe offset (struct kcsand_site), before the table is filled. */
void engine_place_sites(struct engine *e, struct engine_object *eo);
/* The probes after eo's locked releases into the history's map, before they attach. */
void engine_note_release_probes(struct engine *e, struct engine_object *eo);
/* ... and out of it, when eo is removed: its file's inode may be another's next. */
void engine_forget_release_probes(struct engine *e, struct engine_object *eo);

/* kprobe_opt.c */
enum kprobe_batch { KPROBE_BATCH_ATTACH, KPROBE_BATCH_DETACH };
/*
 * The kernel settings that make nr_probes kprobes attach or detach (b)
 * faster, held until engine_kprobe_release(): jump optimization off, and
 * for a detach expedited RCU grace periods.  Returns which were changed;
 * a setting the kernel lacks, or one not at its usual value, is left alone.
 */
unsigned int engine_kprobe_hold(size_t nr_probes, enum kprobe_batch b);
/* Put back what engine_kprobe_hold() changed. */
void engine_kprobe_release(unsigned int held);

/* late_load.c */
/*
 * The instance of the object in which the program named name is loaded:
 * e->skel, or, for a program the start left unloaded, a second instance
 * against e->skel's maps with that program loaded now (what it is for is
 * named in the warning if that fails).  0, or -errno with the reason printed.
 */
int engine_late_skel(struct engine *e, const char *name, const char *what,
		     struct kcsand_bpf **out);
/* Unload what engine_late_skel() loaded: after every link to its programs is gone. */
void engine_late_free(struct engine *e);

/* engine.c */
/* libbpf's warnings as debug messages while on: kprobe refusals say why themselves. */
void engine_libbpf_quiet(bool on);

/* arm.c */
/* What the sampled sites, and the history's sync probes, may each spend: % of native time. */
double engine_share_pct(const struct engine *e);
/*
 * Replace the uprobe_multi link in *slot with one on the sites of eo set
 * in set[] (cookie-indexed; NULL: every site), the new one in place before
 * the old one goes.  No site set: no link.
 */
int engine_link_multi(struct engine *e, struct engine_object *eo, const uint8_t *set, int *slot);
/*
 * Link the sites of eo set in set[] (cookie-indexed; NULL: every site),
 * remaking only the chunks (eo->chunk_fd) whose armed sites changed, each
 * new link in place before its old one goes.  A chunk that could not be
 * linked stays as it was: the first error.
 */
int engine_link_chunks(struct engine *e, struct engine_object *eo, const uint8_t *set);
/* Per-site links (kernels before 6.6): attach the sites set (NULL: all), detach the others. */
int engine_link_per_site(struct engine *e, struct engine_object *eo, const uint8_t *set);

/* pipeline.c */
const char *engine_kernel_debug_file(const struct engine *e, const char *module);
void engine_process_report(struct engine *e, const struct kcsand_report *r);
/* Unwind the stack copies taken from the ring so far (before the reports that name them). */
void engine_process_ustacks(struct engine *e);
/* Print the held reports whose time is up (all of them with all). */
void engine_release_held(struct engine *e, bool all);
/* Milliseconds until the next held report is due; -1: none held. */
int engine_held_next_ms(const struct engine *e);
struct report_view;
/* The value-change-only rule: true when the pair v is not to be reported. */
bool engine_skip_unchanged(const struct report_view *v, bool value_change_only);

/* Kernel mode's heartbeat (heartbeat.c): started before any kernel probe, stopped after. */
struct heartbeat;
struct kcsand_bpf;
int engine_heartbeat_start(struct kcsand_bpf *skel, struct heartbeat **out);
void engine_heartbeat_stop(struct heartbeat *hb);

#endif
