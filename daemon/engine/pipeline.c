// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's report pipeline: a record from the ring buffer is
 * symbolized (user frames from the ELF files, kernel frames from kallsyms
 * and the --kernel-debug files), checked against the value-change rule,
 * the filter hook and KCSAN's dedup, escalated to a hardware watchpoint
 * when its writer is unknown, and printed or handed to the sink.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "engine_int.h"
#include "report/dedup.h"
#include "history/history.h"
#include "hw/hwbp.h"
#include "sites/ksyms.h"
#include "report/report.h"
#include "report/symbolize.h"
#include "report/unwind.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/proc_maps.h"

/*
 * The debug file for a kernel symbol's module (NULL: vmlinux), given with
 * --kernel-debug (NAME.ko, or a vmlinux).  Only what the user names: a
 * Debian vmlinux-dbg is 5.6 GB of DWARF, which is slow to open in a small
 * guest, so it is not picked up behind the user's back.
 */
const char *engine_kernel_debug_file(const struct engine *e, const char *module)
{
	for (size_t i = 0; i < e->opts.nr_kernel_debug; i++) {
		const char *p = e->opts.kernel_debug[i], *base = strrchr(p, '/');
		size_t len;

		base = base ? base + 1 : p;
		len = strlen(base);
		if (!module && !strncmp(base, "vmlinux", 7))
			return p;
		if (!module || len < 4 || strcmp(base + len - 3, ".ko") || len - 3 != strlen(module))
			continue;
		/* Module names use '_' where the file may have '-'. */
		for (size_t j = 0; j < len - 3; j++)
			if (!(base[j] == module[j] || (base[j] == '-' && module[j] == '_')))
				goto next;
		return p;
next:;
	}
	return NULL;
}

/* Kernel frames as KCSAN prints them: "func+0xoff/0xsize [module]". */
static void symbolize_kernel_side(struct engine *e, const struct kcsand_access *a,
				  struct report_side *s)
{
	uint64_t addrs[REPORT_MAX_FRAMES];
	int n = 0;

	addrs[n++] = a->ip;
	/* stack[0] is where the probe trapped, the site itself: use the site's address. */
	for (int i = 1; i < a->nr_frames && i < KCSAND_MAX_STACK && n < REPORT_MAX_FRAMES; i++)
		addrs[n++] = a->stack[i];
	for (int i = 0; i < n; i++) {
		const struct ksym *k = e->ksyms ? ksyms__map_addr(e->ksyms, addrs[i]) : NULL;
		char *buf = s->frames[i];
		size_t len = sizeof(s->frames[i]);

		if (!k) {
			snprintf(buf, len, "0x%llx", (unsigned long long)addrs[i]);
		} else {
			const char *dbg = engine_kernel_debug_file(e, k->module);
			struct sym_info si = {};
			int w;

			w = snprintf(buf, len, "%s+0x%llx/0x%llx%s%s%s", k->name,
				     (unsigned long long)(addrs[i] - k->addr),
				     (unsigned long long)k->size, k->module ? " [" : "",
				     k->module ? k->module : "", k->module ? "]" : "");
			/* file:line after the frame, as decode_stacktrace.sh prints it. */
			if (dbg && w > 0 && (size_t)w < len &&
			    !symbolizer__lookup_func_line(e->sym, dbg, k->name, addrs[i] - k->addr,
							  i > 0, &si) &&
			    si.file && si.line > 0)
				snprintf(buf + w, len - w, " %s:%d", si.file, si.line);
			if (i == 0) {
				snprintf(s->func, sizeof(s->func), "%s", k->name);
				snprintf(s->top, sizeof(s->top), "%s+0x%llx/0x%llx", k->name,
					 (unsigned long long)(addrs[i] - k->addr),
					 (unsigned long long)k->size);
			}
		}
		s->nr_frames++;
	}
}

/*
 * The frames of a frame-pointer walk: the site first, the recovered
 * caller of a frameless site next, then the walk's return addresses as
 * far as they are code.
 */
static int fp_frames(struct engine *e, const struct kcsand_access *a, uint64_t *addrs)
{
	int n = 0;

	addrs[n++] = a->ip;
	if (a->ra)
		addrs[n++] = a->ra;
	for (int i = 1; i < a->nr_frames && i < KCSAND_MAX_STACK && n < REPORT_MAX_FRAMES; i++) {
		/*
		 * Without frame pointers the walk reads whatever rbp holds: no
		 * code lives in the first pages or above the user half, so the
		 * stack ends at such an address.
		 */
		if (a->stack[i] < 0x10000 || a->stack[i] >= 0x800000000000ULL)
			break;
		addrs[n++] = a->stack[i];
	}
	/*
	 * Through code without frame pointers (libgomp, most distribution
	 * libraries), the walk reads data as return addresses: the stack
	 * ends before the first one that no call instruction precedes.
	 */
	for (int i = 1; i < n; i++) {
		if (!symbolizer__proc_after_call(e->sym, a->pid, addrs[i])) {
			n = i;
			break;
		}
	}
	return n;
}

/*
 * The frames the CFI unwind of the side's stack copy gave, or 0 without
 * one.  The first is the access itself: a copy's ip is the probe's (after
 * a locked instruction, or a debug register's trap), in the same function.
 */
static int cfi_frames(struct engine *e, const struct kcsand_access *a, uint64_t *addrs)
{
	int n = a->ustack ? unwinder__frames(e->unwind, a->pid, a->ustack, addrs,
					     REPORT_MAX_FRAMES) : -ENOENT;

	if (n <= 0)
		return 0;
	addrs[0] = a->ip;
	return n;
}

/* Build one side's frames: by CFI where BPF copied the stack, else by frame pointer. */
static void symbolize_side(struct engine *e, const struct kcsand_access *a, struct report_side *s)
{
	const struct target_obj *o = NULL;
	const struct site *site = engine_site_of(e, a->site, &o);
	uint64_t addrs[REPORT_MAX_FRAMES];
	int n;

	s->acc = a;
	s->nr_frames = 0;
	snprintf(s->func, sizeof(s->func), "0x%llx", (unsigned long long)a->ip);
	snprintf(s->top, sizeof(s->top), "0x%llx", (unsigned long long)a->ip);

	if (e->opts.kernel) {
		symbolize_kernel_side(e, a, s);
		return;
	}
	/* The site tells where its object is loaded: no /proc needed for it. */
	if (site)
		symbolizer__proc_add_bias(e->sym, a->pid, o->path, a->ip - site->vaddr);

	n = cfi_frames(e, a, addrs);
	if (!n)
		n = fp_frames(e, a, addrs);
	for (int i = 0; i < n; i++) {
		struct sym_info si;

		if (symbolizer__proc_lookup(e->sym, a->pid, addrs[i], i > 0, &si))
			memset(&si, 0, sizeof(si));
		sym_info__format(&si, addrs[i], true, s->frames[i], sizeof(s->frames[i]));
		if (i == 0 && si.func) {
			snprintf(s->func, sizeof(s->func), "%s", si.func);
			sym_info__format(&si, addrs[i], false, s->top, sizeof(s->top));
		}
		s->nr_frames++;
	}
}

void engine_process_ustacks(struct engine *e)
{
	unwinder__poll(e->unwind);
	for (size_t i = 0; i < e->nr_ustacks; i++)
		unwinder__add(e->unwind, &e->ustacks[i], e->sym);
	e->nr_ustacks = 0;
}

/* KCSAN exempts RCU from the value-change-only filter at its maintainers' request. */
static bool rcu_exempt(const char *func)
{
	return strstr(func, "rcu_") || strstr(func, "_rcu") || strstr(func, "_srcu");
}

/*
 * Code-breakpoint sampling (kernel mode), with a few sites sampled at a
 * time: the writer of a race usually hits no probe, so the race is first
 * seen as one of unknown origin, and a later sampled pair then shows both
 * sides.  KCSAN
 * would print only the pair.  So a race of unknown origin is held back
 * UNKNOWN_HOLD_MS: a pair on the same bytes with the same function on one
 * side, seen meanwhile, folds it away (counted); otherwise it is printed.
 */
#define UNKNOWN_HOLD_MS		1000
#define UNKNOWN_HOLD_MAX	16

struct held_report {
	struct kcsand_report r;
	uint64_t until_ms;
};

static bool overlaps(const struct kcsand_access *a, const struct kcsand_access *b)
{
	return a->addr < b->addr + b->size && b->addr < a->addr + a->size;
}

static bool same_func(const struct engine *e, uint64_t ip1, uint64_t ip2)
{
	const struct ksym *a = e->ksyms ? ksyms__map_addr(e->ksyms, ip1) : NULL;
	const struct ksym *b = e->ksyms ? ksyms__map_addr(e->ksyms, ip2) : NULL;

	return a && b && a->addr == b->addr;
}

/*
 * A pair was seen: fold the held races of unknown origin it explains.  Not
 * a pair a debug register saw after the fact (an escalation's): that one
 * says what it saw, and the race it came from is still printed.
 */
static void fold_held(struct engine *e, const struct kcsand_report *pair)
{
	if ((pair->this.flags | pair->other.flags) & KCSAND_ACC_HWBP)
		return;
	for (size_t i = 0; i < e->nr_held;) {
		const struct kcsand_access *u = &e->held[i].r.this;
		bool mine = (overlaps(u, &pair->this) && same_func(e, u->ip, pair->this.ip)) ||
			    (overlaps(u, &pair->other) && same_func(e, u->ip, pair->other.ip));

		if (!mine) {
			i++;
			continue;
		}
		e->unknown_folded++;
		e->held[i] = e->held[--e->nr_held];
	}
}

static bool hold(struct engine *e, const struct kcsand_report *r)
{
	if (!e->held)
		e->held = calloc(UNKNOWN_HOLD_MAX, sizeof(*e->held));
	if (!e->held || e->nr_held == UNKNOWN_HOLD_MAX)
		return false;
	e->held[e->nr_held].r = *r;
	e->held[e->nr_held++].until_ms = clock__now_ns() / 1000000 + UNKNOWN_HOLD_MS;
	e->unknown_held++;
	return true;
}

static void emit(struct engine *e, const struct report_view *v)
{
	e->nr_reports++;
	if (v->raw->origin == KCSAND_ORIGIN_HISTORY)
		e->nr_reports_history++;
	if (e->opts.sink) {
		e->opts.sink(e->opts.hook_ctx, v);
		return;
	}
	if (e->opts.json)
		report__print_json(v, e->opts.out);
	else
		report__print_text(v, e->opts.out);
	fflush(e->opts.out);
}

static int learn_held_next_ms(const struct engine *e, uint64_t now);

int engine_held_next_ms(const struct engine *e)
{
	uint64_t now = clock__now_ns() / 1000000;
	int next = learn_held_next_ms(e, now);

	for (size_t i = 0; i < e->nr_held; i++) {
		int t = e->held[i].until_ms > now ? (int)(e->held[i].until_ms - now) : 0;

		if (next < 0 || t < next)
			next = t;
	}
	return next;
}

/*
 * Print the held races of unknown origin that are due: all, those whose
 * time is up, or (pair) those an escalation's catch is about, which must
 * come before it.
 */
static void release_held(struct engine *e, bool all, const struct kcsand_report *pair)
{
	static struct report_view v;	/* large: keep it off the stack */
	uint64_t now = clock__now_ns() / 1000000;

	for (size_t i = 0; i < e->nr_held;) {
		struct held_report *h = &e->held[i];
		bool due = pair ? overlaps(&h->r.this, &pair->this) || overlaps(&h->r.this, &pair->other)
				: all || h->until_ms <= now;

		if (!due) {
			i++;
			continue;
		}
		if (!e->opts.max_reports || e->nr_reports < e->opts.max_reports) {
			memset(&v, 0, sizeof(v));
			v.raw = &h->r;
			v.system = e->system;
			v.footer_tid = e->opts.kernel;
			symbolize_side(e, &h->r.this, &v.this);
			emit(e, &v);
		}
		/* v.raw points into held[]: move the last one in only after the print. */
		e->held[i] = e->held[--e->nr_held];
	}
}

static void release_learn_held(struct engine *e, bool all);

void engine_release_held(struct engine *e, bool all)
{
	release_held(e, all, NULL);
	release_learn_held(e, all);
}

/*
 * KCSAN's skip_report(): with report_value_change_only, a known-origin pair
 * whose value did not change is dropped, unless the other thread (the one
 * that consumed the watchpoint, whose access the value change is about) is
 * in RCU code.  The exemption looks at the consumer's top frame, not the
 * watcher's.
 */
bool engine_skip_unchanged(const struct report_view *v, bool value_change_only)
{
	const struct kcsand_report *r = v->raw;

	/*
	 * A partner caught by a sampled watcher's data breakpoint ran inside the
	 * watch window: DataCollider reports it whatever it wrote, and so does
	 * breakpoint mode (a read for a watched write, a write of the same value).
	 */
	if (r->has_other && (r->other.flags & KCSAND_ACC_PAIR))
		return false;
	return r->has_other && r->value_change == KCSAND_VALUE_CHANGE_MAYBE && value_change_only &&
	       !rcu_exempt(v->other.func);
}

/* r, or a copy in fixed whose debug-register sides were not decoded in BPF and are now. */
static const struct kcsand_report *decode_hw_sides(struct engine *e, const struct kcsand_report *r,
						   struct kcsand_report *fixed)
{
	const unsigned int both = KCSAND_ACC_HWBP | KCSAND_ACC_DECODED;

	if ((r->this.flags & both) != KCSAND_ACC_HWBP &&
	    (!r->has_other || (r->other.flags & both) != KCSAND_ACC_HWBP))
		return r;
	*fixed = *r;
	hwbp__fix_access(e->hw, e->sym, &fixed->this);
	if (fixed->has_other)
		hwbp__fix_access(e->hw, e->sym, &fixed->other);
	return fixed;
}

/*
 * Without debug info a plain mov is an atomic's only once a lock-prefixed
 * access has taught its address (bpf/atomics.bpf.h), and a flag published
 * with a release store and taken with acquire loads sees two threads' first
 * movs before any: the history pairs them, or a watcher and its consumer
 * do.  Such a pair (both sides plain loads or stores, at one address) is
 * held LEARN_HOLD_MS, the time for the read-modify-write that usually comes
 * next, and dropped if its address is learned by then; so is one such mov
 * whose watchpoint saw the value change, the other side unseen.  A report
 * whose address no lock ever touches is printed, that much later.
 */
#define LEARN_HOLD_MS		1000
#define LEARN_HOLD_MAX		32

struct learn_held {
	struct kcsand_report r;
	/* Symbolized when held: the process may have exited, its maps forgotten, by the end. */
	struct report_view v;
	uint64_t until_ms;
};

/* A plain load or store that atomic_learned() may take for an atomic's. */
static bool learnable_site(const struct engine *e, uint32_t cookie)
{
	const uint32_t rw = KCSAND_SITE_READ | KCSAND_SITE_WRITE;
	const struct target_obj *o;
	const struct site *s = engine_site_of(e, cookie, &o);

	return s && !(s->desc.flags & (KCSAND_SITE_MARKED | KCSAND_SITE_DATA_RACE |
				       KCSAND_SITE_SRC_PLAIN | KCSAND_SITE_TEACHES)) &&
	       (s->desc.flags & rw) != rw;
}

/*
 * Whether any probed site teaches (a lock, an xchg, a fenced store): with
 * none, no address is ever learned, and a pair is not held for nothing
 * (most racy programs of the tests have none of their own).
 */
static bool teaching_probed(struct engine *e)
{
	if (e->teach_scanned == e->nr_objs)
		return e->teaching;
	e->teaching = false;
	for (size_t i = 0; i < e->nr_objs && !e->teaching; i++) {
		const struct target_obj *o = e->objs[i].obj;

		for (size_t j = 0; j < o->sites.n && !e->teaching; j++)
			e->teaching = o->sites.v[j].desc.flags & KCSAND_SITE_TEACHES;
	}
	e->teach_scanned = e->nr_objs;
	return e->teaching;
}

/*
 * A pair of such movs at one address, or one such mov whose watchpoint saw
 * the value change with the writer unseen: the writer of a flag published
 * so is the publisher's plain store, which a consumer may miss (no free
 * watchpoint, not armed), and its report is the same race of two movs.
 * Or such a mov whose writer a debug register caught in its stall: that
 * writer may be the very RMW that teaches the address (ci-Q: the taker's
 * lock add, seen after it executed), so whether the address was learned
 * decides, not the writer's site, which the trap may not have decoded.
 */
static bool learnable_report(struct engine *e, const struct kcsand_report *r)
{
	if (e->opts.kernel || (r->this.flags & KCSAND_ACC_HWBP) ||
	    !learnable_site(e, r->this.site))
		return false;
	if (r->has_other && (r->this.addr != r->other.addr || r->this.pid != r->other.pid ||
			     (!(r->other.flags & KCSAND_ACC_HWBP) &&
			      !learnable_site(e, r->other.site))))
		return false;
	return teaching_probed(e);
}

/* proc_maps__for_each(): 1 when *arg is in a shared mapping, 2 in a private one. */
static int mapping_shared(const struct proc_map *m, void *arg)
{
	uint64_t addr = *(const uint64_t *)arg;

	if (addr < m->start || addr >= m->end)
		return 0;
	return m->perms[3] == 's' ? 1 : 2;
}

/* Whether r's address was taught: by its process, or by any in a mapping it shares. */
static bool learned_since(const struct engine *e, const struct kcsand_report *r)
{
	struct kcsand_atomic_key k = { .tgid = r->this.pid, .addr = r->this.addr };
	const struct bpf_map *map = e->skel ? e->skel->maps.learned_atomics : NULL;
	uint32_t kind;

	if (!map)
		return false;
	if (!bpf_map__lookup_elem(map, &k, sizeof(k), &kind, sizeof(kind), 0))
		return true;
	k.tgid = 0;
	return !bpf_map__lookup_elem(map, &k, sizeof(k), &kind, sizeof(kind), 0) &&
	       proc_maps__for_each(r->this.pid, mapping_shared, &k.addr) == 1;
}

static void learned_drop(struct engine *e, const struct kcsand_report *r)
{
	e->learned_late++;
	if (r->origin == KCSAND_ORIGIN_WATCHPOINT)
		e->learned_late_wp++;
}

/* Hold r, symbolized in v; false when every hold is taken (then it goes on now). */
static bool learn_hold(struct engine *e, const struct kcsand_report *r,
		       const struct report_view *v)
{
	struct learn_held *h;

	if (!e->learn_held)
		e->learn_held = calloc(LEARN_HOLD_MAX, sizeof(*e->learn_held));
	if (!e->learn_held || e->nr_learn_held == LEARN_HOLD_MAX)
		return false;
	h = &e->learn_held[e->nr_learn_held++];
	h->r = *r;
	h->v = *v;
	h->until_ms = clock__now_ns() / 1000000 + LEARN_HOLD_MS;
	return true;
}

static int learn_held_next_ms(const struct engine *e, uint64_t now)
{
	int next = -1;

	for (size_t i = 0; i < e->nr_learn_held; i++) {
		uint64_t until = e->learn_held[i].until_ms;
		int t = until > now ? (int)(until - now) : 0;

		if (next < 0 || t < next)
			next = t;
	}
	return next;
}

static void process_view(struct engine *e, struct report_view *v);

/* The held pairs that are due (all with all): dropped if their address was learned, else on. */
static void release_learn_held(struct engine *e, bool all)
{
	uint64_t now = clock__now_ns() / 1000000;

	for (size_t i = 0; i < e->nr_learn_held;) {
		struct learn_held *h = &e->learn_held[i];

		if (!all && h->until_ms > now) {
			i++;
			continue;
		}
		if (learned_since(e, &h->r)) {
			learned_drop(e, &h->r);
		} else if (!e->opts.max_reports || e->nr_reports < e->opts.max_reports) {
			/* Its pointers into the entry, which may have moved since it was held. */
			h->v.raw = &h->r;
			h->v.this.acc = &h->r.this;
			h->v.other.acc = &h->r.other;
			process_view(e, &h->v);
		}
		e->learn_held[i] = e->learn_held[--e->nr_learn_held];
	}
}

/* The filters, KCSAN's dedup and the print, for a symbolized report. */
static void process_view(struct engine *e, struct report_view *v)
{
	const struct kcsand_report *r = v->raw;

	if (r->has_other && e->nr_held)
		fold_held(e, r);
	if (engine_skip_unchanged(v, e->opts.params.v[PARAM_REPORT_VALUE_CHANGE_ONLY])) {
		e->suppressed_no_change++;
		return;
	}
	if (e->opts.filter && e->opts.filter(e->opts.hook_ctx, v)) {
		e->suppressed_filter++;
		return;
	}
	if (dedup__seen(e->dedup, v->this.top, r->has_other ? v->other.top : NULL,
			clock__now_ns() / 1000000, e->opts.params.v[PARAM_REPORT_ONCE_IN_MS])) {
		e->suppressed_dedup++;
		return;
	}
	/*
	 * Catch the unknown writer next time: a write breakpoint on the
	 * address, in every thread of the process or on every CPU.  Only for
	 * a report that is printed: a repeat within report_once_in_ms (also
	 * one whose pair was printed) would arm traps on every access to the
	 * variable for a pair that dedup drops anyway, for as long as the
	 * program runs.
	 */
	if (!r->has_other)
		hwbp__escalate(e->hw, r);
	if (!r->has_other && e->kbp_mode && hold(e, r))
		return;
	emit(e, v);
}

/*
 * A report of a history watch's trap that is dropped, counted.  The trap is
 * checked in BPF before its instruction is decoded, as a plain write:
 * - one that decodes as a marked write (a lock RMW, an xchg) may be the
 *   atomic that makes the read's address an atomic's, which a sampled
 *   site's marking would have excused;
 * - one that decodes as no access a site could describe (a string copy,
 *   libc's rep movsb or wide vector memmove): BPF spends a later trap at
 *   that ip unchecked once the daemon found it undecodable (hw_insns, size
 *   0: bpf/history_watch.bpf.h); the first, checked before that answer was
 *   in, goes the same way.  With the watches on by default, libgomp's
 *   GOMP_task copying a new task's data into a block freed by an older task
 *   that had read it was reported so (free_omp_task_recursive, race-free,
 *   in 1 of 2 whole runs of the history suite).
 */
static bool trapped_marked(const struct kcsand_access *a)
{
	return (a->flags & KCSAND_ACC_HWBP) && (a->type & KCSAND_ACCESS_ATOMIC);
}

static bool watch_report_dropped(struct engine *e, const struct kcsand_report *r)
{
	if (r->origin != KCSAND_ORIGIN_HISTORY)
		return false;
	/* The earlier side too: a write trapped before its decode was in. */
	if (trapped_marked(&r->this) || (r->has_other && trapped_marked(&r->other))) {
		e->history_watch_marked++;
		return true;
	}
	if (!(r->this.flags & KCSAND_ACC_HWBP))
		return false;
	if (!(r->this.flags & KCSAND_ACC_DECODED)) {
		e->history_watch_undecoded++;
		return true;
	}
	return false;
}

void engine_process_report(struct engine *e, const struct kcsand_report *r)
{
	static struct report_view v;	/* large: keep it off the stack */
	static struct kcsand_report fixed;

	/* halt_on_error: the first report ends the run, later records are dropped. */
	if (e->opts.max_reports && e->nr_reports >= e->opts.max_reports)
		return;

	/*
	 * A thread without a clock (more alive at once than the history has
	 * slots) may have ordered the two accesses through sync the history
	 * never traced: from the first such thread on, what the history finds
	 * may be no race.  Its reports are dropped, counted and said at the end.
	 * The same once a release lost an edge (history__lost_edges).
	 */
	if (r->origin == KCSAND_ORIGIN_HISTORY && e->hist &&
	    (history__unclocked_hits(e->hist) || history__lost_edges(e->hist))) {
		e->history_unsound++;
		return;
	}
	r = decode_hw_sides(e, r, &fixed);
	if (watch_report_dropped(e, r))
		return;
	/* An escalation's catch follows the race it escalated: print that race first. */
	if (r->has_other && e->nr_held && ((r->this.flags | r->other.flags) & KCSAND_ACC_HWBP))
		release_held(e, false, r);
	memset(&v, 0, sizeof(v));
	v.raw = r;
	v.system = e->system;
	v.footer_tid = e->opts.kernel;
	symbolize_side(e, &r->this, &v.this);
	if (r->has_other)
		symbolize_side(e, &r->other, &v.other);
	if (learnable_report(e, r)) {
		if (learned_since(e, r)) {
			learned_drop(e, r);
			return;
		}
		if (learn_hold(e, r, &v))
			return;
	}
	process_view(e, &v);
}
