/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instruction sites: decoding of x86-64 functions with Zydis into the
 * memory-access descriptors the BPF engine evaluates.  The frame analysis
 * that gives each site its return-address offset is in frame.c, the ELF
 * layer that finds the functions and maps sites to file offsets in
 * target_obj.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "decode_int.h"
#include "uprobe_refusal.h"
#include "util/print.h"
#include "util/array.h"

/* ------------------------------------------------------------------------ */
/* Site vector                                                              */
/* ------------------------------------------------------------------------ */

int site_vec__push(struct site_vec *vec, const struct site *s)
{
	if (ARRAY_RESERVE(vec->v, vec->cap, vec->n, 64))
		return -ENOMEM;
	vec->v[vec->n++] = *s;
	return 0;
}

void site_vec__free(struct site_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

/* ------------------------------------------------------------------------ */
/* Memory operands                                                          */
/* ------------------------------------------------------------------------ */

#define ACTION_ACCESS	(ZYDIS_OPERAND_ACTION_MASK_READ | ZYDIS_OPERAND_ACTION_MASK_WRITE)

/* Instructions whose memory operand names a line or a bound, not data they access. */
static bool is_non_access(const ZydisDecodedInstruction *in)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_NOP:
	case ZYDIS_CATEGORY_WIDENOP:
	case ZYDIS_CATEGORY_PREFETCH:
	case ZYDIS_CATEGORY_PREFETCHWT1:
	case ZYDIS_CATEGORY_CLFLUSHOPT:
	case ZYDIS_CATEGORY_CLWB:
	case ZYDIS_CATEGORY_CLDEMOTE:
	case ZYDIS_CATEGORY_MPX:
		return true;
	default:
		break;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_CLFLUSH:
	case ZYDIS_MNEMONIC_CLFLUSHOPT:
	case ZYDIS_MNEMONIC_CLWB:
	case ZYDIS_MNEMONIC_PREFETCHW:
	case ZYDIS_MNEMONIC_PREFETCHWT1:
		return true;
	default:
		return false;
	}
}

/*
 * bt/bts/btr/btc with a register bit offset address memory far beyond the
 * operand (base + offset / 8), which the site descriptor cannot express.
 */
static bool is_bitstring_reg(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_BT:
	case ZYDIS_MNEMONIC_BTS:
	case ZYDIS_MNEMONIC_BTR:
	case ZYDIS_MNEMONIC_BTC:
		return ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER;
	default:
		return false;
	}
}

/*
 * Hidden memory operands other than the stack slots of push/pop/call/ret/
 * enter/leave are data accesses (string ops, xlat, maskmov*) we cannot probe.
 */
static bool has_implicit_data_access(const ZydisDecodedInstruction *in,
				     const ZydisDecodedOperand *ops)
{
	if (in->meta.category == ZYDIS_CATEGORY_STRINGOP ||
	    in->meta.category == ZYDIS_CATEGORY_IOSTRINGOP)
		return true;
	for (int i = 0; i < in->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		ZydisRegister base;

		if (op->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT ||
		    op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.type != ZYDIS_MEMOP_TYPE_MEM ||
		    !(op->actions & ACTION_ACCESS))
			continue;
		base = reg64(op->mem.base);
		if (base == ZYDIS_REGISTER_RSP || base == ZYDIS_REGISTER_RBP)
			continue;
		return true;
	}
	return false;
}

enum site_verdict {
	SITE_KEEP,
	SITE_IGNORE,		/* no data access: not counted */
	SITE_STACK,
	SITE_TLS,
	SITE_UNENCODABLE,
	SITE_LOCK_AT_TARGET,	/* deferred probe would land on a branch target */
	SITE_MISEMULATED,	/* the kernel would emulate the probed insn as something else */
	SITE_REFUSED,		/* the running kernel's uprobes refuse the probed insn */
};

/* What the passes before classify() learned about one instruction's place in the function. */
struct site_ctx {
	bool rbp_is_frame;	/* rbp points into this function's frame here */
	bool escaped_slot;	/* the operand is a stack slot whose address escapes */
	bool next_is_target;	/* the next instruction is a direct branch's target */
	bool is_last;		/* nothing of the function follows it */
	bool next_misemulated;	/* the next instruction cannot carry a probe */
};

/* VEX, EVEX, XOP or MVEX: encodings whose opcode byte the kernel's probes read as legacy. */
static bool vex_like(const ZydisDecodedInstruction *in)
{
	return in->encoding == ZYDIS_INSTRUCTION_ENCODING_VEX ||
	       in->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX ||
	       in->encoding == ZYDIS_INSTRUCTION_ENCODING_XOP ||
	       in->encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX;
}

/*
 * x86 uprobes (and kprobes) do not run every probed instruction out of
 * line: jumps, calls, conditional jumps, push and nop are emulated, picked
 * by the opcode byte.  VEX, EVEX and XOP instructions reuse those bytes in
 * their own opcode maps, and the kernel evidently takes them for the legacy
 * ones: with a uprobe on `vmovdqu %xmm0,(%rdi)` (VEX 0f 7f, the byte of jg)
 * the store never happens (Linux 6.18 here, with or without kcsand's program;
 * a static glibc's AVX-512 memcpy then lost the TLS image and the program
 * crashed).  Such an instruction never carries a probe.
 */
static bool misemulated_by_probes(const ZydisDecodedInstruction *in)
{
	if (!vex_like(in))
		return false;
	return (in->opcode >= 0x50 && in->opcode <= 0x57) ||	/* push */
	       (in->opcode >= 0x70 && in->opcode <= 0x7f) ||	/* jcc rel8 */
	       in->opcode == 0x90 ||				/* nop */
	       in->opcode == 0xe8 || in->opcode == 0xe9 || in->opcode == 0xeb;	/* call, jmp */
}

/* An es/cs/ds/ss prefix byte, which 64-bit mode ignores and uprobes refuse. */
static bool has_ignored_segment(const ZydisDecodedInstruction *in)
{
	for (int i = 0; i < in->raw.prefix_count; i++) {
		ZyanU8 p = in->raw.prefixes[i].value;

		if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e)
			return true;
	}
	return false;
}

/*
 * Whether x86 uprobes refuse the instruction (uprobe_refusal.c).  Kernel
 * sites (probe_locked) go by the kernel's rules for kprobes and breakpoints.
 */
static bool refused_by_uprobes(const struct decode_opts *opts, const ZydisDecodedInstruction *in)
{
	enum uprobe_insn_kind kind = UPROBE_INSN_ONE_BYTE;

	if (opts->probe_locked)
		return false;
	if (vex_like(in))
		kind = UPROBE_INSN_VEX;
	else if (in->opcode_map == ZYDIS_OPCODE_MAP_0F)
		kind = UPROBE_INSN_TWO_BYTE;
	else if (in->opcode_map != ZYDIS_OPCODE_MAP_DEFAULT)
		kind = UPROBE_INSN_THREE_BYTE;
	return uprobe_refusal__refuses(kind, in->opcode);
}

/* A lock-prefixed access, which uprobes cannot take in place: where may it be probed? */
static enum site_verdict classify_locked(const ZydisDecodedInstruction *in,
					 const ZydisDecodedOperand *ops,
					 const ZydisDecodedOperand *mop,
					 const struct decode_opts *opts, const struct site_ctx *ctx,
					 struct site *site)
{
	site->reason = MARK_LOCK_PREFIX;
	if (opts->probe_locked)
		return SITE_KEEP;
	/*
	 * Probed at the next instruction: that needs its address registers
	 * to survive it (cmpxchg writes rax, xadd its source)...
	 */
	if ((mop->mem.base != ZYDIS_REGISTER_NONE && mop->mem.base != ZYDIS_REGISTER_RIP &&
	     writes_reg(in, ops, mop->mem.base)) ||
	    (mop->mem.index != ZYDIS_REGISTER_NONE && writes_reg(in, ops, mop->mem.index)) ||
	    ctx->is_last)
		return SITE_UNENCODABLE;
	/*
	 * ... and the next instruction to be reached only from this one: on
	 * the head of a rotated loop, the probe would also fire on entering
	 * the loop and report a locked access that never ran.
	 */
	if (ctx->next_is_target)
		return SITE_LOCK_AT_TARGET;
	if (ctx->next_misemulated)
		return SITE_MISEMULATED;
	site->desc.probe_delta = in->length;
	return SITE_KEEP;
}

static const ZydisDecodedOperand *explicit_memory_operand(const ZydisDecodedInstruction *in,
							  const ZydisDecodedOperand *ops)
{
	for (int i = 0; i < in->operand_count; i++) {
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
			return &ops[i];
	}
	return NULL;
}

/* Whether the memory operand is a data access a probe can take: SITE_KEEP if so. */
static enum site_verdict check_operand(const ZydisDecodedInstruction *in,
				       const ZydisDecodedOperand *ops,
				       const ZydisDecodedOperand *mop,
				       const struct decode_opts *opts)
{
	if (!mop)
		return has_implicit_data_access(in, ops) ? SITE_UNENCODABLE : SITE_IGNORE;

	if (mop->mem.type == ZYDIS_MEMOP_TYPE_VSIB)
		return SITE_UNENCODABLE;
	if (misemulated_by_probes(in))
		return SITE_MISEMULATED;
	if (mop->mem.type != ZYDIS_MEMOP_TYPE_MEM || is_non_access(in) ||
	    !(mop->actions & ACTION_ACCESS))
		return SITE_IGNORE;
	if (has_implicit_data_access(in, ops))
		return SITE_UNENCODABLE;

	/*
	 * In user space fs is the TLS block, thread-private by construction;
	 * gs is unused by Linux user space, and in the kernel it is per-CPU.
	 */
	if (mop->mem.segment == ZYDIS_REGISTER_FS && !opts->keep_tls)
		return SITE_TLS;
	if (mop->mem.segment == ZYDIS_REGISTER_GS && (opts->skip_gs || !opts->keep_tls))
		return SITE_TLS;

	if (in->address_width != 64)
		return SITE_UNENCODABLE;
	/*
	 * Uprobes also refuse the es/cs/ds/ss segment-override prefix bytes,
	 * which 64-bit mode ignores (so Zydis does not flag them): check the
	 * raw bytes.
	 */
	if (!opts->probe_locked && has_ignored_segment(in))
		return SITE_UNENCODABLE;
	return SITE_KEEP;
}

static void fill_desc(struct kcsand_site *d, const ZydisDecodedInstruction *in,
		      const ZydisDecodedOperand *mop, int base, int index, unsigned int size)
{
	d->base = (uint8_t)base;
	d->index = (uint8_t)index;
	d->scale = index ? mop->mem.scale : 1;
	d->disp = mop->mem.disp.has_displacement ? mop->mem.disp.value : 0;
	d->size = (uint8_t)size;
	d->insn_len = in->length;
	d->flags = 0;
	if (mop->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
		d->flags |= KCSAND_SITE_READ;
	if (mop->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
		d->flags |= KCSAND_SITE_WRITE;
}

static enum site_verdict classify(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
				  const struct decode_opts *opts, const struct site_ctx *ctx,
				  struct site *site)
{
	const ZydisDecodedOperand *mop = explicit_memory_operand(in, ops);
	enum site_verdict v = check_operand(in, ops, mop, opts);
	int base, index;
	unsigned int size;

	if (v != SITE_KEEP)
		return v;
	base = kcsand_reg_of(mop->mem.base);
	index = kcsand_reg_of(mop->mem.index);
	if (base < 0 || index < 0 || index == KCSAND_REG_RIP)
		return SITE_UNENCODABLE;
	/*
	 * rsp always points to the stack; rbp only where the frame analysis
	 * saw it set up as the frame pointer (or as a copy of rsp).  Code
	 * built without frame pointers (Debian's kernel, most distribution
	 * programs) uses rbp as an ordinary register, for shared data too.
	 */
	if ((base == KCSAND_REG_RSP || (base == KCSAND_REG_RBP && ctx->rbp_is_frame)) &&
	    !opts->keep_stack && !ctx->escaped_slot)
		return SITE_STACK;

	size = mop->size / 8;
	if (size == 0 || size > KCSAND_MAX_ACCESS || mop->size % 8 || is_bitstring_reg(in, ops))
		return SITE_UNENCODABLE;
	fill_desc(&site->desc, in, mop, base, index, size);

	site->reason = MARK_NONE;
	if (in->attributes & ZYDIS_ATTRIB_HAS_LOCK) {
		v = classify_locked(in, ops, mop, opts, ctx, site);
		if (v != SITE_KEEP)
			return v;
	} else if (in->mnemonic == ZYDIS_MNEMONIC_XCHG) {
		site->reason = MARK_XCHG;
	}
	if (site->reason != MARK_NONE)
		site->desc.flags |= KCSAND_SITE_MARKED | KCSAND_SITE_TEACHES;
	site->insn_reason = site->reason;	/* what mark__apply() starts from */
	return SITE_KEEP;
}

static int fx_push(struct insn_fx **v, size_t *n, size_t *cap, const struct insn_fx *fx)
{
	if (ARRAY_RESERVE(*v, *cap, *n, 256))
		return -ENOMEM;
	(*v)[(*n)++] = *fx;
	return 0;
}

/* int3, or "add [rax],al" (00 00), which compilers never emit: the fill between functions. */
static bool is_padding(const ZydisDecodedInstruction *in, const uint8_t *at)
{
	return in->mnemonic == ZYDIS_MNEMONIC_INT3 ||
	       (in->length == 2 && at[0] == 0x00 && at[1] == 0x00);
}

/*
 * First pass: every instruction's effect on the stack and its branch
 * target, up to the function's end.  Where the length is only an upper
 * bound (kernel functions, sized from kallsyms), padding ends the function
 * unless a branch already decoded targets code at or after it: Debian's
 * kernel patches each `jmp __x86_return_thunk` into `ret; int3...`, so a
 * function with several returns has int3s in its middle.
 */
static int scan_function(ZydisDecoder *dec, const uint8_t *code, size_t len,
			 const struct decode_opts *opts, struct decode_stats *stats,
			 struct insn_fx **fx, size_t *nfx)
{
	size_t off = 0, cap = 0, reach = 0;	/* reach: one past the furthest branch target */
	bool after_push_rbp = false;
	int err;

	while (off < len) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		struct insn_fx f = { .off = (uint32_t)off };

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + off, len - off, &in, ops))) {
			/* Resynchronizing would mean guessing instruction boundaries. */
			stats->decode_errors++;
			break;
		}
		if (opts->stop_at_padding && is_padding(&in, code + off) && reach <= off)
			break;
		stats->insns++;
		frame_effect(&f, &in, ops, len, after_push_rbp);
		if (f.has_target && f.target >= reach)
			reach = (size_t)f.target + 1;
		/* GCC may schedule unrelated instructions in between. */
		if (in.mnemonic == ZYDIS_MNEMONIC_PUSH && is_reg64(&ops[0], ZYDIS_REGISTER_RBP))
			after_push_rbp = true;
		else if (writes_reg(&in, ops, ZYDIS_REGISTER_RSP) ||
			 writes_reg(&in, ops, ZYDIS_REGISTER_RBP) || f.flow != FLOW_NEXT)
			after_push_rbp = false;
		err = fx_push(fx, nfx, &cap, &f);
		if (err)
			return err;
		off += in.length;
		stats->bytes += in.length;
	}
	return 0;
}

/* is_target[k]: instruction k is the target of a direct branch of the function. */
static bool *branch_targets(const struct insn_fx *fx, size_t n)
{
	bool *t = calloc(n ? n : 1, sizeof(*t));

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (fx[i].has_target) {
			size_t k = insn_at(fx, n, fx[i].target);

			if (k < n)
				t[k] = true;
		}
	}
	return t;
}

static void count_verdict(enum site_verdict v, struct decode_stats *stats)
{
	switch (v) {
	case SITE_STACK:
		stats->skipped_stack++;
		break;
	case SITE_TLS:
		stats->skipped_tls++;
		break;
	case SITE_UNENCODABLE:
		stats->unencodable++;
		break;
	case SITE_LOCK_AT_TARGET:
		stats->lock_at_target++;
		break;
	case SITE_MISEMULATED:
		stats->misemulated++;
		break;
	case SITE_REFUSED:
		stats->refused++;
		break;
	default:
		break;
	}
}

/*
 * A full fence: mfence, or the locked no-op on the stack that gcc emits for
 * atomic_thread_fence(memory_order_seq_cst) (lock or $0,(%rsp)).
 */
static bool is_full_fence(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	if (in->mnemonic == ZYDIS_MNEMONIC_MFENCE)
		return true;
	return (in->attributes & ZYDIS_ATTRIB_HAS_LOCK) &&
	       (in->mnemonic == ZYDIS_MNEMONIC_OR || in->mnemonic == ZYDIS_MNEMONIC_ADD) &&
	       ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	       reg64(ops[0].mem.base) == ZYDIS_REGISTER_RSP &&
	       ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[1].imm.value.u == 0;
}

/*
 * A plain store that a full fence follows at once is a seq_cst store (gcc's
 * atomic_store() with -mtune=k8 and older compilers: mov; mfence, or a
 * store and atomic_thread_fence()): a release, and its address is an atomic
 * object that plain loads read with acquire (KCSAND_SITE_TEACHES).
 */
static void mark_fenced_store(ZydisDecoder *dec, const uint8_t *code, size_t len,
			      const struct insn_fx *fx, size_t nfx, size_t k, struct site *site)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (site->reason != MARK_NONE || site->desc.flags != KCSAND_SITE_WRITE || k + 1 >= nfx)
		return;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k + 1].off, len - fx[k + 1].off,
						 &in, ops)) ||
	    !is_full_fence(&in, ops))
		return;
	site->reason = site->insn_reason = MARK_FENCED_STORE;
	site->desc.flags |= KCSAND_SITE_MARKED | KCSAND_SITE_TEACHES;
}

/* rbp holds this function's frame, or a copy of rsp: what it addresses is the stack. */
static bool rbp_is_frame(const struct frame_state *s)
{
	return s->framed || s->alias_reg == KCSAND_REG_RBP - KCSAND_REG_RAX;
}

/*
 * Whether the instruction's stack operand is a slot whose address escapes
 * (escape.c).  The locked no-op fence on the stack stays a fence.
 */
static bool on_escaped_slot(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			    const struct frame_state *s, const struct stack_escapes *escapes)
{
	const ZydisDecodedOperand *mop = explicit_memory_operand(in, ops);
	int base;
	int64_t off;

	/* An indexed access (a local array's element) is placed by its displacement. */
	if (!escapes->n || !mop || mop->mem.type != ZYDIS_MEMOP_TYPE_MEM || is_full_fence(in, ops))
		return false;
	base = kcsand_reg_of(mop->mem.base);
	if (base != KCSAND_REG_RSP && base != KCSAND_REG_RBP)
		return false;
	return frame_stack_off(s, base, mop->mem.disp.has_displacement ? mop->mem.disp.value : 0,
			       &off) &&
	       escape_covers(escapes, off, mop->size / 8 ? mop->size / 8 : 1);
}

/* Whether instruction j, which runs or jumps into a locked site, can take its probe ahead. */
static bool ahead_source_ok(ZydisDecoder *dec, const uint8_t *code, size_t len,
			    const struct insn_fx *fx, size_t j, const struct decode_opts *opts,
			    uint32_t regs, bool falls)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[j].off, len - fx[j].off, &in, ops)))
		return false;
	if (falls && fx[j].off + in.length != fx[j + 1].off)
		return false;
	return !(in.attributes & ZYDIS_ATTRIB_HAS_LOCK) && !misemulated_by_probes(&in) &&
	       !refused_by_uprobes(opts, &in) && !has_ignored_segment(&in) &&
	       in.meta.category != ZYDIS_CATEGORY_SYSCALL &&
	       in.meta.category != ZYDIS_CATEGORY_INTERRUPT && !(fx[j].gpr_writes & regs);
}

/*
 * A locked read-modify-write is probed after it ran (classify_locked), when
 * other CPUs can already see what it wrote: one that read it and acquired
 * would find its release not yet published.  So the release is also
 * published by probes ahead of it (bpf/history_shadow.bpf.h,
 * history_release_ahead): on the instruction before it, when that one falls
 * into it (a call returns to it), and on each branch of the function to it,
 * where its address registers still hold its address.  A conditional branch
 * that goes the other way publishes for nothing: more order, never less.
 * Counted late when a path into it has none: it starts its function, a jump
 * table may reach it, or a probe cannot be placed.
 */
static void locked_ahead(ZydisDecoder *dec, const uint8_t *code, size_t len,
			 const struct insn_fx *fx, size_t nfx, size_t k,
			 const struct decode_opts *opts, struct site *site,
			 struct decode_stats *stats)
{
	uint32_t regs = 0, off = fx[k].off;
	bool late = k == 0;

	if (site->desc.base >= KCSAND_REG_RAX && site->desc.base <= KCSAND_REG_R15)
		regs |= 1u << (site->desc.base - KCSAND_REG_RAX);
	if (site->desc.index >= KCSAND_REG_RAX && site->desc.index <= KCSAND_REG_R15)
		regs |= 1u << (site->desc.index - KCSAND_REG_RAX);
	for (size_t j = 0; j < nfx; j++) {
		bool falls = j + 1 == k && (fx[j].flow == FLOW_NEXT || fx[j].flow == FLOW_COND);
		bool jumps = (fx[j].flow == FLOW_COND || fx[j].flow == FLOW_JUMP) &&
			     fx[j].has_target && fx[j].target == off;

		late |= fx[j].table_jmp;
		if (!falls && !jumps)
			continue;
		if (site->nr_ahead == SITE_AHEAD_MAX ||
		    !ahead_source_ok(dec, code, len, fx, j, opts, regs, falls)) {
			late = true;
			continue;
		}
		site->ahead[site->nr_ahead++] = (int32_t)(off - fx[j].off);
	}
	stats->locked_late += late;
}

/* Second pass: classify each instruction, knowing its frame state and the branch targets. */
static int collect_sites(ZydisDecoder *dec, const uint8_t *code, size_t len, uint64_t vaddr,
			 uint32_t func_idx, const struct decode_opts *opts,
			 const struct insn_fx *fx, size_t nfx, const struct frame_slot *slot,
			 const bool *is_target, const struct stack_escapes *escapes,
			 struct site_vec *out, struct decode_stats *stats)
{
	for (size_t k = 0; k < nfx; k++) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		struct site_ctx ctx = {
			.rbp_is_frame = rbp_is_frame(&slot[k].s),
			.next_is_target = k + 1 < nfx && is_target[k + 1],
			.is_last = k + 1 == nfx,
		};
		struct site site = {};
		enum site_verdict v;
		int err;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k].off, len - fx[k].off,
							 &in, ops)))
			return -EINVAL;	/* the first pass decoded it */
		/* A locked access is probed at the next instruction: can that one take it? */
		if ((in.attributes & ZYDIS_ATTRIB_HAS_LOCK) && k + 1 < nfx) {
			ZydisDecodedInstruction next;
			ZydisDecodedOperand next_ops[ZYDIS_MAX_OPERAND_COUNT];

			if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k + 1].off,
								 len - fx[k + 1].off, &next,
								 next_ops)))
				return -EINVAL;
			/* A locked one cannot: uprobes refuse the lock prefix. */
			ctx.next_misemulated = misemulated_by_probes(&next) ||
					       refused_by_uprobes(opts, &next) ||
					       (!opts->probe_locked &&
						(next.attributes & ZYDIS_ATTRIB_HAS_LOCK));
		}
		ctx.escaped_slot = on_escaped_slot(&in, ops, &slot[k].s, escapes);
		v = classify(&in, ops, opts, &ctx, &site);
		if (v == SITE_KEEP && !site.desc.probe_delta && refused_by_uprobes(opts, &in))
			v = SITE_REFUSED;
		if (v != SITE_KEEP) {
			count_verdict(v, stats);
			continue;
		}
		site.vaddr = vaddr + fx[k].off;
		site.file_off = site.vaddr;
		site.func = func_idx;
		site.desc.ra_off = frame_ra_off(&slot[k].s);
		if (site.desc.probe_delta)
			locked_ahead(dec, code, len, fx, nfx, k, opts, &site, stats);
		if (in.mnemonic == ZYDIS_MNEMONIC_CMPXCHG && site.reason == MARK_LOCK_PREFIX)
			cas_loop_mark(dec, code, vaddr, fx, nfx, k, &site, out, stats);
		mark_fenced_store(dec, code, len, fx, nfx, k, &site);
		spin_wait_mark(dec, code, len, vaddr, opts, fx, slot, nfx, k, &site, stats);
		err = site_vec__push(out, &site);
		if (err)
			return err;
		stats->sites++;
		stats->stack_sites += ctx.escaped_slot && !opts->keep_stack;
		if (site.desc.flags & KCSAND_SITE_MARKED)
			stats->marked++;
	}
	return 0;
}

int decode__function(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t func_idx,
		     const struct decode_opts *opts, struct site_vec *out,
		    struct decode_stats *stats)
{
	static const struct decode_opts defaults;
	struct decode_stats dummy = {};
	struct insn_fx *fx = NULL;
	struct frame_slot *slot = NULL;
	struct stack_escapes escapes = {};
	bool *is_target = NULL;
	size_t nfx = 0, n0 = out->n;
	ZydisDecoder dec;
	int err;

	if (!code && len)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -E2BIG;
	if (!opts)
		opts = &defaults;
	if (!stats)
		stats = &dummy;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64))) {
		pr_warn("decoder: cannot initialize Zydis\n");
		return -EINVAL;
	}
	stats->funcs++;

	err = scan_function(&dec, code, len, opts, stats, &fx, &nfx);
	if (!err)
		err = frame_analyze(fx, nfx, &slot);
	if (!err && !(is_target = branch_targets(fx, nfx)))
		err = -ENOMEM;
	if (!err && !opts->keep_stack)
		err = escape_scan(&dec, code, len, fx, nfx, slot, &escapes);
	if (!err)
		err = collect_sites(&dec, code, len, vaddr, func_idx, opts, fx, nfx, slot, is_target,
				    &escapes, out, stats);
	if (!err && out->n == n0)
		stats->funcs_without_sites++;
	escape_free(&escapes);
	free(is_target);
	free(slot);
	free(fx);
	return err;
}

int decode__direct_branches(const uint8_t *code, size_t len, uint64_t vaddr,
			    void (*found)(void *arg, uint64_t from, uint64_t to), void *arg)
{
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	size_t off = 0;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	while (off < len) {
		ZydisInstructionCategory c;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code + off, len - off,
								 &in))) {
			off++;
			continue;
		}
		c = in.meta.category;
		if ((c == ZYDIS_CATEGORY_CALL || c == ZYDIS_CATEGORY_UNCOND_BR ||
		     c == ZYDIS_CATEGORY_COND_BR) && in.raw.imm[0].is_relative &&
		    !vex_like(&in) && !has_ignored_segment(&in))
			found(arg, vaddr + off, vaddr + off + in.length + in.raw.imm[0].value.s);
		off += in.length;
	}
	return 0;
}

int decode__gpr_writes(const uint8_t *code, size_t len)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	int writes = 0;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (!len || ZYAN_FAILED(ZydisDecoderDecodeFull(&dec, code, len, &in, ops)))
		return -EINVAL;
	for (unsigned int i = 0; i < in.operand_count; i++) {
		int g = ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
				(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
			? gpr_num(ops[i].reg.value) : -1;

		if (g >= 0)
			writes |= 1 << g;
	}
	return writes;
}

int decode__insn(const uint8_t *code, size_t len, struct insn_info *out)
{
	ZydisDecodedInstruction in;
	ZydisDecoder dec;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (!len || ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, NULL, code, len, &in)))
		return -EINVAL;
	out->length = in.length;
	out->locked = in.attributes & ZYDIS_ATTRIB_HAS_LOCK;
	out->call = in.meta.category == ZYDIS_CATEGORY_CALL;
	out->ret = in.mnemonic == ZYDIS_MNEMONIC_RET;
	return 0;
}

bool decode__call_before(const uint8_t *end, size_t avail)
{
	struct insn_info in;

	/* Calls are 2 (call reg) to 7 (call [rip+disp32] with a prefix) bytes long. */
	for (size_t k = 2; k <= 7 && k <= avail; k++)
		if (!decode__insn(end - k, k, &in) && in.length == k && in.call)
			return true;
	return false;
}
