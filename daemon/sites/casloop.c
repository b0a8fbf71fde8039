/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compare-and-swap loops.  An atomic read-modify-write that x86 has no
 * instruction for (gcc's OpenMP reduction(+:x) on a double, C11
 * atomic_fetch_add on a float) compiles into a plain load of x, then a
 * loop around `lock cmpxchg` on x whose expected value (rax) starts as
 * the loaded one.  The load is the atomic operation's first read: its
 * value is only used if the cmpxchg confirms it, so it cannot race with
 * another thread's cmpxchg, and reporting it would be a false report.
 */
#include <string.h>

#include "decode_int.h"

/* Instructions apart, at most, between the load and its cmpxchg. */
#define CAS_WINDOW	48
/* Stack slots a loaded value may pass through (gcc -O1 spills it). */
#define CAS_SLOTS	4

/* A stack slot: [rsp+disp], or [rbp+disp] in a frame. */
struct cas_slot {
	ZydisRegister base;
	int64_t disp;
};

/* Where the loaded value is: registers (by largest enclosing) and stack slots. */
struct cas_flow {
	bool reg[ZYDIS_REGISTER_MAX_VALUE + 1];
	struct cas_slot slot[CAS_SLOTS];
	int nslot;
	bool computed;	/* an operation took the value in to make another (the new value) */
};

static bool same_address(const struct site *a, const struct site *b)
{
	const struct kcsand_site *x = &a->desc, *y = &b->desc;

	if (x->base != y->base || x->index != y->index || x->size != y->size)
		return false;
	if (x->index != KCSAND_REG_NONE && x->scale != y->scale)
		return false;
	if (x->base == KCSAND_REG_RIP)
		return a->vaddr + x->insn_len + x->disp == b->vaddr + y->insn_len + y->disp;
	return x->disp == y->disp;
}

static bool is_move(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_MOV:
	case ZYDIS_MNEMONIC_MOVD:
	case ZYDIS_MNEMONIC_MOVQ:
	case ZYDIS_MNEMONIC_MOVSS:
	case ZYDIS_MNEMONIC_MOVSD:
	case ZYDIS_MNEMONIC_MOVAPS:
	case ZYDIS_MNEMONIC_MOVAPD:
	case ZYDIS_MNEMONIC_MOVUPS:
	case ZYDIS_MNEMONIC_MOVUPD:
	case ZYDIS_MNEMONIC_MOVDQA:
	case ZYDIS_MNEMONIC_MOVDQU:
	case ZYDIS_MNEMONIC_VMOVD:
	case ZYDIS_MNEMONIC_VMOVQ:
	case ZYDIS_MNEMONIC_VMOVSS:
	case ZYDIS_MNEMONIC_VMOVSD:
	case ZYDIS_MNEMONIC_VMOVAPS:
	case ZYDIS_MNEMONIC_VMOVAPD:
		return true;
	default:
		return false;
	}
}

/* The stack slot an operand names, if it names one. */
static bool stack_slot(const ZydisDecodedOperand *op, struct cas_slot *sl)
{
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.index != ZYDIS_REGISTER_NONE)
		return false;
	sl->base = reg64(op->mem.base);
	sl->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	return sl->base == ZYDIS_REGISTER_RSP || sl->base == ZYDIS_REGISTER_RBP;
}

static int slot_find(const struct cas_flow *f, const struct cas_slot *sl)
{
	for (int i = 0; i < f->nslot; i++)
		if (f->slot[i].base == sl->base && f->slot[i].disp == sl->disp)
			return i;
	return -1;
}

static bool holds(const struct cas_flow *f, const ZydisDecodedOperand *op)
{
	struct cas_slot sl;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return f->reg[reg64(op->reg.value)];
	return stack_slot(op, &sl) && slot_find(f, &sl) >= 0;
}

static void set(struct cas_flow *f, const ZydisDecodedOperand *op, bool on)
{
	struct cas_slot sl;
	int i;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		ZydisRegister r = reg64(op->reg.value);

		f->reg[r] = on;
		/* Slots addressed through a register that moved are other slots now. */
		for (i = f->nslot; i-- > 0;)
			if (f->slot[i].base == r)
				f->slot[i] = f->slot[--f->nslot];
		return;
	}
	if (!stack_slot(op, &sl))
		return;
	i = slot_find(f, &sl);
	if (on && i < 0 && f->nslot < CAS_SLOTS)
		f->slot[f->nslot++] = sl;
	else if (!on && i >= 0)
		f->slot[i] = f->slot[--f->nslot];
}

/* Follow the value through one instruction: copied by a move, lost when overwritten. */
static void flow_step(struct cas_flow *f, const ZydisDecodedInstruction *in,
		      const ZydisDecodedOperand *ops)
{
	bool move = is_move(in->mnemonic), copy = move && in->operand_count_visible == 2 &&
					       holds(f, &ops[1]);
	bool reads = false, writes = false;

	for (int i = 0; i < in->operand_count_visible; i++) {
		if ((ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_READ) && holds(f, &ops[i]))
			reads = true;
		if ((ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER)
			writes = true;
	}
	/* addsd, not test or cmp: the value goes into the one to be stored. */
	if (!move && reads && writes)
		f->computed = true;
	for (int i = 0; i < in->operand_count; i++)
		if (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
			set(f, &ops[i], false);
	if (copy)
		set(f, &ops[0], true);
}

/*
 * Is the cmpxchg at kc inside a loop entered after instruction kl: can
 * control go from it back to an instruction in (kl, kc]?  Only direct
 * branches and fall-through are followed, a bounded number of steps.
 */
static bool loops_back(const struct insn_fx *fx, size_t nfx, size_t kl, size_t kc)
{
	size_t work[CAS_WINDOW], nwork = 0;
	bool seen[2 * CAS_WINDOW] = {};
	size_t lo = kl + 1, steps = 0;

	work[nwork++] = kc;
	while (nwork && steps++ < 4 * CAS_WINDOW) {
		size_t i = work[--nwork], next[2];
		int nn = insn_successors(fx, nfx, i, next);
		for (int j = 0; j < nn; j++) {
			size_t t = next[j];

			if (t >= lo && t <= kc)
				return true;
			/* Stay near the loop: the back edge is a few instructions away. */
			if (t >= nfx || t < lo || t - lo >= 2 * CAS_WINDOW || seen[t - lo] ||
			    nwork == CAS_WINDOW)
				continue;
			seen[t - lo] = true;
			work[nwork++] = t;
		}
	}
	return false;
}

/*
 * Does the value loaded at kl reach rax at the cmpxchg kc, on the straight
 * path, and go into the new value too?  A test-and-test-and-set lock's load
 * may also reach rax (the 0 it tested), but nothing is computed from it.
 */
static bool feeds_cmpxchg(ZydisDecoder *dec, const uint8_t *code, const struct insn_fx *fx,
			  size_t kl, size_t kc, const struct site *load)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct cas_flow f;
	uint32_t addr_regs = 0;
	int g;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[kl].off, fx[kl + 1].off - fx[kl].off,
						 &in, ops)) ||
	    !is_move(in.mnemonic) || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER)
		return false;
	memset(&f, 0, sizeof(f));
	set(&f, &ops[0], true);
	g = load->desc.base - KCSAND_REG_RAX;
	if (load->desc.base >= KCSAND_REG_RAX && load->desc.base <= KCSAND_REG_R15)
		addr_regs |= 1u << g;
	g = load->desc.index - KCSAND_REG_RAX;
	if (load->desc.index >= KCSAND_REG_RAX && load->desc.index <= KCSAND_REG_R15)
		addr_regs |= 1u << g;

	for (size_t k = kl + 1; k < kc; k++) {
		/* The address must be the same one, and no call may intervene. */
		if (fx[k].gpr_writes & addr_regs)
			return false;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k].off,
							 fx[k + 1].off - fx[k].off, &in, ops)) ||
		    in.meta.category == ZYDIS_CATEGORY_CALL)
			return false;
		flow_step(&f, &in, ops);
	}
	return f.reg[ZYDIS_REGISTER_RAX] && f.computed;
}

/*
 * Is instruction k a copy of base into a 64-bit register, `mov %base,%reg`
 * or `lea disp(%base),%reg`?  *delta is what it adds.
 */
static bool copies_base(ZydisDecoder *dec, const uint8_t *code, const struct insn_fx *fx,
			size_t k, int base, int64_t *delta)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k].off, fx[k + 1].off - fx[k].off,
						 &in, ops)) ||
	    ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER || ops[0].size != 64)
		return false;
	if (in.mnemonic == ZYDIS_MNEMONIC_MOV && ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    kcsand_reg_of(ops[1].reg.value) == base) {
		*delta = 0;
		return true;
	}
	if (in.mnemonic == ZYDIS_MNEMONIC_LEA && kcsand_reg_of(ops[1].mem.base) == base &&
	    ops[1].mem.index == ZYDIS_REGISTER_NONE) {
		*delta = ops[1].mem.disp.has_displacement ? ops[1].mem.disp.value : 0;
		return true;
	}
	return false;
}

/*
 * The address register of the cmpxchg at kc set from the load's own base
 * register: `mov %r12,%rcx` or `lea 0x8(%rbp),%rcx` (gcc's reduction on a
 * double at -O2), after the load at kl, or before it (`lea 0x8(%rbx),%rcx;
 * mov 0x8(%rbx),%rdx`: gcc -O1's float and double reductions), where the
 * straight path back from the load reaches the copy with the base
 * unchanged since.  Then the two name the same address when the load's
 * displacement is the copy's plus the cmpxchg's.  The load's base must not
 * change between the load and the cmpxchg (feeds_cmpxchg() checks).
 */
static bool same_address_via_copy(ZydisDecoder *dec, const uint8_t *code,
				  const struct insn_fx *fx, size_t kl, size_t kc,
				  const struct site *load, const struct site *cas)
{
	const struct kcsand_site *x = &load->desc, *y = &cas->desc;
	uint32_t xbit, ybit;
	int64_t delta = 0;
	bool copied = false;

	if (x->size != y->size || x->index != KCSAND_REG_NONE || y->index != KCSAND_REG_NONE ||
	    x->base < KCSAND_REG_RAX || x->base > KCSAND_REG_R15 ||
	    y->base < KCSAND_REG_RAX || y->base > KCSAND_REG_R15 || x->base == y->base)
		return false;
	xbit = 1u << (x->base - KCSAND_REG_RAX);
	ybit = 1u << (y->base - KCSAND_REG_RAX);
	if (fx[kl].gpr_writes & ybit)
		return false;	/* the load overwrote the cmpxchg's address register */
	for (size_t k = kl; k-- > 0 && kl - k <= CAS_WINDOW;) {
		if (fx[k].flow != FLOW_NEXT)
			break;
		if (fx[k].gpr_writes & ybit) {
			copied = !(fx[k].gpr_writes & xbit) &&
				 copies_base(dec, code, fx, k, x->base, &delta);
			break;
		}
		if (fx[k].gpr_writes & xbit)
			break;
	}
	for (size_t k = kl + 1; k < kc; k++) {
		if (fx[k].gpr_writes & ybit)
			copied = copies_base(dec, code, fx, k, x->base, &delta);
	}
	return copied && x->disp == delta + y->disp;
}

void cas_loop_mark(ZydisDecoder *dec, const uint8_t *code, uint64_t vaddr,
		   const struct insn_fx *fx, size_t nfx, size_t kc, const struct site *cas,
		   struct site_vec *out, struct decode_stats *stats)
{
	for (size_t i = out->n; i-- > 0;) {
		struct site *s = &out->v[i];
		size_t kl;

		if (s->func != cas->func || s->vaddr < vaddr)
			break;
		kl = insn_at(fx, nfx, (uint32_t)(s->vaddr - vaddr));
		if (kl >= kc || kc - kl > CAS_WINDOW)
			break;
		if (s->insn_reason != MARK_NONE || s->desc.flags != KCSAND_SITE_READ ||
		    (!same_address(s, cas) &&
		     !same_address_via_copy(dec, code, fx, kl, kc, s, cas)))
			continue;
		if (!loops_back(fx, nfx, kl, kc) || !feeds_cmpxchg(dec, code, fx, kl, kc, s))
			return;
		s->reason = s->insn_reason = MARK_CAS_LOOP;
		s->desc.flags |= KCSAND_SITE_MARKED;
		stats->marked++;
		stats->cas_loop_reads++;
		return;
	}
}
