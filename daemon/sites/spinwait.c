/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Spin-wait loads.  A thread that waits for another polls a word: it loads
 * it, tests the value, and loops back to load it again, doing nothing in
 * between that writes memory (at most a pause, a sched_yield() or a futex
 * call).  `while (atomic_load_explicit(&head, memory_order_acquire) == t)
 * sched_yield();` is `mov head(%rip),%rax; cmp %rbx,%rax; je <the yield>`:
 * a plain mov, which without debug info nothing else says is an atomic, and
 * no lock-prefixed instruction may ever touch the word (a lock-free ring's
 * indices, a flag published by a release store).  The history then pairs
 * the data the flag publishes as a race.
 *
 * Such a load is taken as an acquire that teaches its address (marked, and
 * KCSAND_SITE_TEACHES, as a fenced store): the word's plain stores become
 * learned atomics, releases (bpf/atomics.bpf.h).  A loop whose address
 * moves (a search through an array, a list walk), that stores, or that
 * changes what the value is compared with (a delay loop counting up to a
 * bound it reads each time) is not a spin-wait.  With debug info that
 * names a plain object, the source wins (mark/mark.c): a polled plain flag
 * is a race, as TSan says.  Taking a plain polled word for an atomic only
 * adds order: races on the word itself can be missed, none is made up.
 *
 * A loop that calls functions on its way back to the load (`while (!stop)
 * work();`) runs them only when the load read a value that kept it
 * looping: what they do is not ordered by the release the loop waits for.
 * The load's acquire is taken at the thread's next event (the load has run
 * by then), which, in such a loop, is inside work(), after the flag's
 * setter may have released: a race of work() with the setter was ordered
 * away.  So the site says where those calls return (struct kcsand_site::
 * loop_ret) and the history keeps the acquire waiting while the thread is
 * inside one of them (bpf/history_clock.bpf.h, hb_in_loop_call()).
 */
#include "decode_int.h"

/* Instructions, at most, from the load to the conditional branch that tests its value. */
#define SPIN_TEST_WINDOW	6
/* Instructions, at most, on the way from that branch back to the load. */
#define SPIN_LOOP_MAX		16

/* A GPR's bit, as in insn_fx's gpr_writes; 0 for another register. */
static uint32_t gpr_bit(ZydisRegister r)
{
	int g = gpr_num(r);

	return g >= 0 ? 1u << g : 0;
}

static bool writes_memory(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	for (int i = 0; i < in->operand_count_visible; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.type == ZYDIS_MEMOP_TYPE_MEM &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return true;
	return false;
}

static bool decode_at(ZydisDecoder *dec, const uint8_t *code, size_t len,
		      const struct insn_fx *fx, size_t k, ZydisDecodedInstruction *in,
		      ZydisDecodedOperand *ops)
{
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k].off, len - fx[k].off, in,
						   ops));
}

/* The GPRs an instruction reads: its register operands', and its memory operands' address. */
static uint32_t gpr_reads(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	uint32_t r = 0;

	for (int i = 0; i < in->operand_count_visible; i++) {
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY)
			r |= gpr_bit(ops[i].mem.base) | gpr_bit(ops[i].mem.index);
		else if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			 (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_READ))
			r |= gpr_bit(ops[i].reg.value);
	}
	return r;
}

/* One instruction of the value's way to the flags: which registers hold it after. */
static void taint_step(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		       uint32_t *regs, bool *flags)
{
	bool reads = false;
	uint32_t written = 0;

	for (int i = 0; i < in->operand_count_visible; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER)
			continue;
		if ((ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_READ) &&
		    (gpr_bit(ops[i].reg.value) & *regs))
			reads = true;
		if (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
			written |= gpr_bit(ops[i].reg.value);
	}
	*regs = reads ? *regs | written : *regs & ~written;
	if (in->cpu_flags && in->cpu_flags->modified)
		*flags = reads;
}

/*
 * The conditional branch, after the load at kl, whose flags come from the
 * loaded value, on a straight way that stores nothing and keeps the
 * address registers; nfx when there is none.  *keep gets the registers
 * the test reads that it did not compute (the value waited for, a bound):
 * a loop that changes one (a delay loop's counter, `for (c = 0; c <
 * *loops; c++);`) is not waiting for the word to change.
 */
static size_t tested_by(ZydisDecoder *dec, const uint8_t *code, size_t len,
			const struct insn_fx *fx, size_t nfx, size_t kl, uint32_t addr_regs,
			uint32_t *keep)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t regs = fx[kl].gpr_writes, defined;
	bool flags;

	/* cmpl $0,flag(%rip) tests the value itself; mov flag(%rip),%eax passes it on. */
	if (!decode_at(dec, code, len, fx, kl, &in, ops))
		return nfx;
	flags = in.cpu_flags && in.cpu_flags->modified;
	if (!flags && !regs)
		return nfx;
	*keep = gpr_reads(&in, ops) & ~addr_regs;
	defined = regs;
	for (size_t k = kl + 1; k < nfx && k <= kl + SPIN_TEST_WINDOW; k++) {
		if (fx[k].flow == FLOW_COND)
			return flags ? k : nfx;
		if (fx[k].flow != FLOW_NEXT || !decode_at(dec, code, len, fx, k, &in, ops) ||
		    in.meta.category == ZYDIS_CATEGORY_CALL || writes_memory(&in, ops) ||
		    (fx[k].gpr_writes & addr_regs))
			return nfx;
		*keep |= gpr_reads(&in, ops) & ~defined;
		defined |= fx[k].gpr_writes;
		taint_step(&in, ops, &regs, &flags);
	}
	return nfx;
}

/*
 * The registers the polled address is made of, which the loop must keep,
 * and the one instruction allowed to write them: a reload of the pointer
 * right before the load (below, reload_of()).
 */
struct spin_addr {
	uint32_t regs;
	size_t reload;		/* its index, or SIZE_MAX */
};

/* Whether instruction k may be on the loop: it stores nothing and keeps the address. */
static bool quiet(ZydisDecoder *dec, const uint8_t *code, size_t len, const struct insn_fx *fx,
		  size_t k, const struct spin_addr *a)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	return (!(fx[k].gpr_writes & a->regs) || k == a->reload) && !fx[k].table_jmp &&
	       decode_at(dec, code, len, fx, k, &in, ops) && !writes_memory(&in, ops) &&
	       !(in.attributes & ZYDIS_ATTRIB_HAS_LOCK);
}

/* Whether control falls from t into kl, quietly. */
static bool falls_into(ZydisDecoder *dec, const uint8_t *code, size_t len,
		       const struct insn_fx *fx, size_t t, size_t kl, const struct spin_addr *a)
{
	for (size_t k = t; k < kl; k++)
		if (fx[k].flow != FLOW_NEXT || !quiet(dec, code, len, fx, k, a))
			return false;
	return true;
}

/*
 * The way found from the branch back to the load: the instructions the
 * search went through (each with the one it came from), and the straight
 * run that falls into the load.
 */
struct spin_way {
	size_t seen[SPIN_LOOP_MAX], from[SPIN_LOOP_MAX], nseen;
	size_t last;		/* the instruction whose successor falls into the load */
	size_t fall;		/* that successor */
};

/* Can control go from the branch at kb back into the load at kl, quietly, in a few steps? */
static bool loops_to(ZydisDecoder *dec, const uint8_t *code, size_t len,
		     const struct insn_fx *fx, size_t nfx, size_t kb, size_t kl,
		     const struct spin_addr *a, struct spin_way *w)
{
	size_t work[SPIN_LOOP_MAX], nwork = 0;

	w->nseen = 0;
	work[nwork++] = kb;
	while (nwork) {
		size_t i = work[--nwork], next[2];
		int nn = insn_successors(fx, nfx, i, next);
		for (int j = 0; j < nn; j++) {
			size_t t = next[j];
			bool known = false;

			if (t <= kl && kl - t < SPIN_LOOP_MAX &&
			    falls_into(dec, code, len, fx, t, kl, a)) {
				w->last = i;
				w->fall = t;
				return true;
			}
			for (size_t s = 0; s < w->nseen; s++)
				known |= w->seen[s] == t;
			if (known || t >= nfx || w->nseen == SPIN_LOOP_MAX ||
			    !quiet(dec, code, len, fx, t, a))
				continue;
			w->from[w->nseen] = i;
			w->seen[w->nseen++] = t;
			work[nwork++] = t;
		}
	}
	return false;
}

/*
 * A call at k on the loop's way: its return address into the site, as an
 * offset from the load's end, and the slot it is pushed to, below the
 * load's rsp.  False when there is no room left or the slot differs.
 */
static bool note_call(const struct insn_fx *fx, const struct frame_slot *slot, size_t k,
		      size_t kl, size_t ret_off, struct kcsand_site *d, int *ncalls)
{
	int64_t rel = (int64_t)ret_off - (int64_t)(fx[kl].off + d->insn_len);
	int64_t below;

	if (!slot[k].seen || !slot[k].s.known || !slot[kl].s.known || *ncalls == 2 || !rel ||
	    rel < INT16_MIN || rel > INT16_MAX)
		return false;
	below = slot[k].s.delta - slot[kl].s.delta + 8;
	if (below <= 0 || below > INT16_MAX || (*ncalls && below != d->loop_ra_slot))
		return false;
	d->loop_ra_slot = (int16_t)below;
	d->loop_ret[(*ncalls)++] = (int16_t)rel;
	return true;
}

/* GPRs (encoding order) that carry a call's arguments, and those a call keeps. */
#define ARG_GPRS	((1u << 7) | (1u << 6) | (1u << 2) | (1u << 1) | (1u << 8) | (1u << 9))
#define KEPT_GPRS	((1u << 3) | (1u << 4) | (1u << 5) | (0xfu << 12))

/*
 * What the loop's way knows of the value the load read: the registers
 * holding it, and whether the flags are still its test's.
 */
struct spin_value {
	uint32_t regs;
	bool flags;
};

/*
 * Instruction k on the way: a call is noted; false when it cannot be, or
 * when the instruction uses the value the load read (a register holding
 * it, a call's argument, the test's flags): the loop then works on what it
 * read, and its calls may need the acquire (`while ((c = load(&n)) < end)
 * process(c);`).
 */
static bool way_step(ZydisDecoder *dec, const uint8_t *code, size_t len,
		     const struct insn_fx *fx, const struct frame_slot *slot, size_t k, size_t kl,
		     struct kcsand_site *d, int *ncalls, struct spin_value *v)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	bool call;

	if (!decode_at(dec, code, len, fx, k, &in, ops) || (gpr_reads(&in, ops) & v->regs) ||
	    (v->flags && in.cpu_flags && in.cpu_flags->tested))
		return false;
	if (in.cpu_flags && in.cpu_flags->modified)
		v->flags = false;
	call = in.meta.category == ZYDIS_CATEGORY_CALL;
	if (call && (v->regs & ARG_GPRS))
		return false;
	v->regs &= (call ? KEPT_GPRS : ~0u) & ~(uint32_t)fx[k].gpr_writes;
	return !call || note_call(fx, slot, k, kl, fx[k].off + in.length, d, ncalls);
}

/* The way from the branch kb back to the load kl, in the order it runs; its length, 0 if lost. */
static size_t way_order(const struct spin_way *w, size_t kb, size_t kl,
			size_t order[2 * SPIN_LOOP_MAX])
{
	size_t n = 0, k = w->last;

	while (k != kb) {
		size_t s = 0;

		while (s < w->nseen && w->seen[s] != k)
			s++;
		if (s == w->nseen || n == SPIN_LOOP_MAX)
			return 0;
		order[n++] = k;
		k = w->from[s];
	}
	for (size_t i = 0; i < n / 2; i++) {
		size_t t = order[i];

		order[i] = order[n - 1 - i];
		order[n - 1 - i] = t;
	}
	for (size_t f = w->fall; f < kl && n < 2 * SPIN_LOOP_MAX; f++)
		order[n++] = f;
	return n;
}

/*
 * The calls on the way back from the branch to the load, into
 * d->loop_ret; none noted when there are more than 2, the frame is not
 * known, or the way uses the value read: the load's acquire is then taken
 * at the next event, as for a loop that calls nothing (more order, never
 * less).
 */
static void note_loop_calls(ZydisDecoder *dec, const uint8_t *code, size_t len,
			    const struct insn_fx *fx, const struct frame_slot *slot, size_t kl,
			    size_t kb, const struct spin_way *w, struct kcsand_site *d)
{
	size_t order[2 * SPIN_LOOP_MAX], n = way_order(w, kb, kl, order);
	struct spin_value v = { .flags = true };
	int ncalls = 0;
	bool ok = n > 0;

	/* Every register the load and its test wrote may hold the value. */
	for (size_t k = kl; k < kb; k++)
		v.regs |= fx[k].gpr_writes;
	for (size_t i = 0; i < n && ok; i++)
		ok = way_step(dec, code, len, fx, slot, order[i], kl, d, &ncalls, &v);
	if (ok && ncalls && slot[kl].s.known && slot[kl].s.delta >= 0 &&
	    slot[kl].s.delta <= INT16_MAX) {
		d->frame_ra = (int16_t)slot[kl].s.delta;
		if (ncalls == 1)
			d->loop_ret[1] = d->loop_ret[0];
		return;
	}
	d->loop_ret[0] = d->loop_ret[1] = 0;
	d->loop_ra_slot = 0;
}

/*
 * Whether a call to name returns holding a lock: a lock's acquire, or a
 * wait that takes its mutex back (opts->returns_locked, the history's
 * table).  A loop whose way back to its load calls one of these last
 * polls the word under that lock each time round (`while (1) {
 * lock(&m); if (ready) break; unlock(&m); }`, DataRaceBench's DRB193
 * under two `critical` names): the lock is what orders the loop with the
 * word's writer, and the word is a plain one it protects, not an atomic.
 * Taken for an atomic, the load's acquire ordered the writer's work before
 * everything after the loop, whatever lock the writer held.
 */
static bool is_lock_call(const struct decode_opts *opts, const char *name)
{
	if (!name)
		return false;
	while (*name == '_' && name[1] == '_')
		name += 2;	/* a static libc's own names: __pthread_mutex_lock */
	return opts->returns_locked(name);
}

/* Whether the last call on the way from the branch kb back to the load kl takes a lock. */
static bool polled_under_lock(ZydisDecoder *dec, const uint8_t *code, size_t len, uint64_t vaddr,
			      const struct decode_opts *opts, const struct insn_fx *fx, size_t kl,
			      size_t kb, const struct spin_way *w)
{
	size_t order[2 * SPIN_LOOP_MAX], n = way_order(w, kb, kl, order);
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (!opts || !opts->call_name || !opts->returns_locked)
		return false;
	for (size_t i = n; i-- > 0;) {
		size_t k = order[i];

		if (!decode_at(dec, code, len, fx, k, &in, ops) ||
		    in.meta.category != ZYDIS_CATEGORY_CALL)
			continue;
		return ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[0].imm.is_relative &&
		       is_lock_call(opts, opts->call_name(opts->call_ctx,
							  vaddr + fx[k].off + in.length +
								  (uint64_t)ops[0].imm.value.s));
	}
	return false;
}

/*
 * The instruction right before the load at kl when it reloads the
 * pointer the load goes through: `mov (%rbx),%rax; mov (%rax),%eax; test;
 * je` back to the reload, gcc -O1's poll of an OpenMP shared variable
 * (`#pragma omp atomic read` of a variable of the enclosing function,
 * reached through the region's data block) or of `s->p->flag`.  The
 * pointer is read from memory the loop does not store to, through
 * registers it keeps (added to *regs): the address does not move, unlike
 * a list walk's (`mov 8(%rax),%rax`), whose next address comes from the
 * one before.  SIZE_MAX when there is none.
 */
static size_t reload_of(ZydisDecoder *dec, const uint8_t *code, size_t len,
			const struct insn_fx *fx, size_t kl, uint32_t *regs)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t from;

	if (!kl || fx[kl - 1].flow != FLOW_NEXT || fx[kl - 1].gpr_writes != *regs ||
	    !decode_at(dec, code, len, fx, kl - 1, &in, ops) || in.mnemonic != ZYDIS_MNEMONIC_MOV ||
	    in.operand_count_visible != 2 || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ops[0].size != 64 || ops[1].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    ops[1].mem.segment != ZYDIS_REGISTER_DS)
		return SIZE_MAX;
	from = gpr_bit(ops[1].mem.base) | gpr_bit(ops[1].mem.index);
	if (from & *regs)
		return SIZE_MAX;
	*regs |= from;
	return kl - 1;
}

void spin_wait_mark(ZydisDecoder *dec, const uint8_t *code, size_t len, uint64_t vaddr,
		    const struct decode_opts *opts, const struct insn_fx *fx,
		    const struct frame_slot *slot, size_t nfx, size_t kl, struct site *site,
		    struct decode_stats *stats)
{
	const struct kcsand_site *d = &site->desc;
	uint32_t addr_regs = 0, keep = 0;
	struct spin_addr a;
	struct spin_way way;
	size_t kb;

	if (site->reason != MARK_NONE || d->flags != KCSAND_SITE_READ || d->size > 8 ||
	    d->base == KCSAND_REG_RSP || d->base == KCSAND_REG_RBP)
		return;
	if (d->base >= KCSAND_REG_RAX && d->base <= KCSAND_REG_R15)
		addr_regs |= 1u << (d->base - KCSAND_REG_RAX);
	if (d->index >= KCSAND_REG_RAX && d->index <= KCSAND_REG_R15)
		addr_regs |= 1u << (d->index - KCSAND_REG_RAX);
	a.regs = addr_regs;
	a.reload = reload_of(dec, code, len, fx, kl, &a.regs);
	/*
	 * mov (%rax),%rax: a list walk, whose next load is of another address;
	 * unless the loop reloads the pointer before each load (below).
	 */
	if ((fx[kl].gpr_writes & addr_regs) && a.reload == SIZE_MAX)
		return;
	kb = tested_by(dec, code, len, fx, nfx, kl, addr_regs, &keep);
	a.regs |= keep;
	/* The loop keeps the address, and what the test compares the value with. */
	if (kb == nfx || !loops_to(dec, code, len, fx, nfx, kb, kl, &a, &way))
		return;
	/* A load that overwrites its pointer polls one address only if the loop reloads it. */
	if ((fx[kl].gpr_writes & addr_regs) && way.fall > a.reload)
		return;
	if (polled_under_lock(dec, code, len, vaddr, opts, fx, kl, kb, &way)) {
		stats->spin_wait_locked++;
		return;
	}
	site->reason = site->insn_reason = MARK_SPIN_WAIT;
	site->desc.flags |= KCSAND_SITE_MARKED | KCSAND_SITE_TEACHES;
	stats->spin_wait_reads++;
	note_loop_calls(dec, code, len, fx, slot, kl, kb, &way, &site->desc);
	if (site->desc.loop_ret[0])
		stats->spin_wait_calls++;
}
