/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instruction sites: decoding of x86-64 functions with Zydis into the
 * memory-access descriptors the BPF engine evaluates, and the ELF layer
 * (libelf) that finds the functions and maps sites to file offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

#include "decode.h"

/* ------------------------------------------------------------------------ */
/* Site vector                                                              */
/* ------------------------------------------------------------------------ */

int site_vec__push(struct site_vec *vec, const struct site *s)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 64;
		struct site *v = realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
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
/* Registers                                                                */
/* ------------------------------------------------------------------------ */

static ZydisRegister reg64(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return r;
	return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/*
 * Only full 64-bit GPRs and RIP can be evaluated by the BPF side; anything
 * else (32-bit address registers, vector indices) is reported as -1.
 */
static int kcsand_reg_of(ZydisRegister r)
{
	static const ZydisRegister gpr[] = {
		ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
		ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
		ZYDIS_REGISTER_R8,  ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
		ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
	};

	if (r == ZYDIS_REGISTER_NONE)
		return KCSAND_REG_NONE;
	if (r == ZYDIS_REGISTER_RIP)
		return KCSAND_REG_RIP;
	for (size_t i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++)
		if (gpr[i] == r)
			return KCSAND_REG_RAX + (int)i;
	return -1;
}

static bool is_reg_op(const ZydisDecodedOperand *op, ZydisRegister r64)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && reg64(op->reg.value) == r64;
}

/*
 * The frame analysis recognizes only full-width forms: a 32-bit `sub esp`
 * zero-extends rsp, which is caught as an unknown write to rsp instead.
 */
static bool is_reg64(const ZydisDecodedOperand *op, ZydisRegister r64)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == r64;
}

/* dst, src of a register-to-register mov. */
static bool is_reg_pair(const ZydisDecodedOperand *ops, ZydisRegister dst, ZydisRegister src)
{
	return is_reg64(&ops[0], dst) && is_reg64(&ops[1], src);
}

#define ACTION_ACCESS	(ZYDIS_OPERAND_ACTION_MASK_READ | ZYDIS_OPERAND_ACTION_MASK_WRITE)

/* ------------------------------------------------------------------------ */
/* Frame analysis                                                           */
/* ------------------------------------------------------------------------ */

/*
 * What is known about the stack at an instruction: the distance from rsp to
 * the return address (delta), and whether rbp holds this function's frame,
 * in which case the frame-pointer walk already finds the caller.
 */
struct frame_state {
	int64_t delta;
	int64_t frame_delta;	/* delta when the frame was set up: rsp == rbp then */
	bool known;
	bool framed;
	bool frame_known;
};

struct frame {
	struct frame_state cur;
	struct frame_state prologue;
	bool in_prologue;
};

static void frame_init(struct frame *f)
{
	memset(f, 0, sizeof(*f));
	f->cur.known = true;
	f->in_prologue = true;
}

static int16_t frame_ra_off(const struct frame *f)
{
	const struct frame_state *s = &f->cur;

	if (s->framed || !s->known || s->delta < 0 || s->delta > INT16_MAX)
		return -1;
	return (int16_t)s->delta;
}

/* The stack adjustments of a prologue. */
static bool is_prologue_insn(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_ENDBR64:
		return true;
	case ZYDIS_MNEMONIC_PUSH:
		return ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER;
	case ZYDIS_MNEMONIC_MOV:
		return is_reg_pair(ops, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP);
	case ZYDIS_MNEMONIC_SUB:
		return is_reg64(&ops[0], ZYDIS_REGISTER_RSP) &&
		       ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	default:
		return false;
	}
}

static bool writes_reg(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		       ZydisRegister r64)
{
	for (int i = 0; i < in->operand_count; i++)
		if (is_reg_op(&ops[i], r64) && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return true;
	return false;
}

/*
 * Compilers schedule ordinary instructions into the prologue (GCC moves
 * arguments into callee-saved registers between the pushes), so it ends
 * only at the first branch, call or return, or at the first change of rsp
 * that is not a prologue one.
 */
static bool ends_prologue(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
		return true;
	default:
		break;
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_UD2)
		return true;
	return !is_prologue_insn(in, ops) && writes_reg(in, ops, ZYDIS_REGISTER_RSP);
}

static void frame_lost(struct frame_state *s)
{
	s->known = false;
}

/* rsp := rbp + off, as after `mov rsp, rbp`, `leave` or `lea rsp, [rbp+off]`. */
static void frame_from_rbp(struct frame_state *s, int64_t off)
{
	if (!s->framed) {
		frame_lost(s);
		return;
	}
	s->known = s->frame_known;
	s->delta = s->frame_delta - off;
}

/* Apply one instruction's effect on rsp/rbp; called after its site was recorded. */
static void frame_step(struct frame *f, const ZydisDecodedInstruction *in,
		       const ZydisDecodedOperand *ops)
{
	struct frame_state *s = &f->cur;
	int64_t width = in->operand_width / 8;

	if (f->in_prologue && ends_prologue(in, ops)) {
		f->in_prologue = false;
		f->prologue = *s;
	}

	switch (in->meta.category) {
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_UNCOND_BR:
		/*
		 * What follows is only reached by branches from the body, where
		 * compilers keep the post-prologue layout: epilogues precede rets.
		 */
		*s = f->prologue;
		return;
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
		/* rsp is back where it was once control returns here. */
		return;
	case ZYDIS_CATEGORY_PUSH:
		s->delta += width;
		return;
	case ZYDIS_CATEGORY_POP:
		if (is_reg_op(&ops[0], ZYDIS_REGISTER_RSP)) {
			frame_lost(s);
			return;
		}
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RBP))
			s->framed = false;
		s->delta -= width;
		return;
	default:
		break;
	}

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_UD2:
		*s = f->prologue;
		return;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP)) {
			if (ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
				frame_lost(s);
				return;
			}
			if (in->mnemonic == ZYDIS_MNEMONIC_SUB)
				s->delta += ops[1].imm.value.s;
			else
				s->delta -= ops[1].imm.value.s;
			return;
		}
		break;
	case ZYDIS_MNEMONIC_MOV:
		if (is_reg_pair(ops, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP)) {
			s->framed = true;
			s->frame_known = s->known;
			s->frame_delta = s->delta;
			return;
		}
		if (is_reg_pair(ops, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP)) {
			frame_from_rbp(s, 0);
			return;
		}
		break;
	case ZYDIS_MNEMONIC_LEA:
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP)) {
			const ZydisDecodedOperandMem *m = &ops[1].mem;

			if (m->index != ZYDIS_REGISTER_NONE || in->address_width != 64)
				frame_lost(s);
			else if (m->base == ZYDIS_REGISTER_RSP)
				s->delta -= m->disp.value;
			else if (m->base == ZYDIS_REGISTER_RBP)
				frame_from_rbp(s, m->disp.value);
			else
				frame_lost(s);
			return;
		}
		break;
	case ZYDIS_MNEMONIC_LEAVE:
		frame_from_rbp(s, 0);
		s->delta -= 8;
		s->framed = false;
		return;
	case ZYDIS_MNEMONIC_ENTER:
		if (ops[1].imm.value.u != 0) {
			/* Nested frames copy a variable number of frame pointers. */
			frame_lost(s);
			s->framed = false;
			return;
		}
		s->delta += 8;
		s->framed = true;
		s->frame_known = s->known;
		s->frame_delta = s->delta;
		s->delta += ops[0].imm.value.u;
		return;
	default:
		break;
	}

	if (writes_reg(in, ops, ZYDIS_REGISTER_RSP))
		frame_lost(s);
	/* Anything else that overwrites rbp means it no longer points to our frame. */
	if (s->framed && writes_reg(in, ops, ZYDIS_REGISTER_RBP))
		s->framed = false;
}

/* ------------------------------------------------------------------------ */
/* Memory operands                                                          */
/* ------------------------------------------------------------------------ */

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
};

static enum site_verdict classify(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
				  const struct decode_opts *opts, struct site *site)
{
	const ZydisDecodedOperand *mop = NULL;
	struct kcsand_site *d = &site->desc;
	int base, index;
	unsigned int size;

	for (int i = 0; i < in->operand_count; i++) {
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT) {
			mop = &ops[i];
			break;
		}
	}
	if (!mop)
		return has_implicit_data_access(in, ops) ? SITE_UNENCODABLE : SITE_IGNORE;

	if (mop->mem.type == ZYDIS_MEMOP_TYPE_VSIB)
		return SITE_UNENCODABLE;
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
	base = kcsand_reg_of(mop->mem.base);
	index = kcsand_reg_of(mop->mem.index);
	if (base < 0 || index < 0 || index == KCSAND_REG_RIP)
		return SITE_UNENCODABLE;
	if ((base == KCSAND_REG_RSP || base == KCSAND_REG_RBP) && !opts->keep_stack)
		return SITE_STACK;

	size = mop->size / 8;
	if (size == 0 || size > KCSAND_MAX_ACCESS || mop->size % 8 || is_bitstring_reg(in, ops))
		return SITE_UNENCODABLE;

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

	site->reason = MARK_NONE;
	if (in->attributes & ZYDIS_ATTRIB_HAS_LOCK)
		site->reason = MARK_LOCK_PREFIX;
	else if (in->mnemonic == ZYDIS_MNEMONIC_XCHG)
		site->reason = MARK_XCHG;
	if (site->reason != MARK_NONE)
		d->flags |= KCSAND_SITE_MARKED;
	return SITE_KEEP;
}

int decode_function(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t func_idx,
		    const struct decode_opts *opts, struct site_vec *out,
		    struct decode_stats *stats)
{
	static const struct decode_opts defaults;
	struct decode_stats dummy = {};
	ZydisDecoder dec;
	struct frame frame;
	size_t off = 0, n0 = out->n;
	int err;

	if (!code && len)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	if (!stats)
		stats = &dummy;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64))) {
		fprintf(stderr, "kcsand: decoder: cannot initialize Zydis\n");
		return -EINVAL;
	}
	frame_init(&frame);
	stats->funcs++;

	while (off < len) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		struct site site = {};

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &in, ops))) {
			/* Resynchronizing would mean guessing instruction boundaries. */
			stats->decode_errors++;
			break;
		}
		stats->insns++;

		switch (classify(&in, ops, opts, &site)) {
		case SITE_KEEP:
			site.vaddr = vaddr + off;
			site.file_off = site.vaddr;
			site.func = func_idx;
			site.desc.ra_off = frame_ra_off(&frame);
			err = site_vec__push(out, &site);
			if (err)
				return err;
			stats->sites++;
			if (site.desc.flags & KCSAND_SITE_MARKED)
				stats->marked++;
			break;
		case SITE_STACK:
			stats->skipped_stack++;
			break;
		case SITE_TLS:
			stats->skipped_tls++;
			break;
		case SITE_UNENCODABLE:
			stats->unencodable++;
			break;
		case SITE_IGNORE:
			break;
		}

		frame_step(&frame, &in, ops);
		off += in.length;
	}

	if (out->n == n0)
		stats->funcs_without_sites++;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* ELF objects                                                              */
/* ------------------------------------------------------------------------ */

struct load_seg {
	uint64_t vaddr, off, filesz;
	bool exec;
};

struct obj_priv {
	int fd;
	Elf *elf;
	struct load_seg *segs;
	size_t nr_segs;
	size_t *func_scn;	/* section index of each funcs[] entry */
};

/* A symbol candidate before aliases at the same address are merged. */
struct func_cand {
	const char *name;
	uint64_t vaddr, size;
	size_t scn;
	int rank;		/* binding preference: lower wins */
};

static int bind_rank(int bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cand_cmp(const void *pa, const void *pb)
{
	const struct func_cand *a = pa, *b = pb;
	int c;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return 0;
}

static int load_segments(struct target_obj *obj, struct obj_priv *p)
{
	size_t phnum;

	if (elf_getphdrnum(p->elf, &phnum)) {
		fprintf(stderr, "kcsand: %s: cannot read program headers: %s\n", obj->path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	p->segs = calloc(phnum ? phnum : 1, sizeof(*p->segs));
	if (!p->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(p->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		p->segs[p->nr_segs++] = (struct load_seg){
			.vaddr = ph.p_vaddr, .off = ph.p_offset, .filesz = ph.p_filesz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

static bool scn_is_code(Elf *elf, size_t idx, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_getscn(elf, idx);

	return scn && gelf_getshdr(scn, sh) && sh->sh_type == SHT_PROGBITS &&
	       (sh->sh_flags & SHF_EXECINSTR);
}

static Elf_Scn *find_symtab(Elf *elf, Elf32_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

static int load_funcs(struct target_obj *obj, struct obj_priv *p)
{
	Elf_Scn *symscn, *xscn = NULL;
	Elf_Data *data, *xdata = NULL;
	struct func_cand *cand = NULL;
	size_t nsyms, ncand = 0, nout = 0, symidx;
	GElf_Shdr symsh, sh;
	int err = 0;

	symscn = find_symtab(p->elf, SHT_SYMTAB);
	if (!symscn)
		symscn = find_symtab(p->elf, SHT_DYNSYM);
	if (!symscn)
		return 0;	/* no symbols: nothing to select, not an error */

	symidx = elf_ndxscn(symscn);
	while ((xscn = elf_nextscn(p->elf, xscn))) {
		if (gelf_getshdr(xscn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == symidx) {
			xdata = elf_getdata(xscn, NULL);
			break;
		}
	}

	if (!gelf_getshdr(symscn, &symsh) || !(data = elf_getdata(symscn, NULL)) ||
	    !symsh.sh_entsize) {
		fprintf(stderr, "kcsand: %s: cannot read symbol table: %s\n", obj->path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	nsyms = symsh.sh_size / symsh.sh_entsize;
	cand = calloc(nsyms ? nsyms : 1, sizeof(*cand));
	if (!cand)
		return -ENOMEM;

	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		Elf32_Word xndx = 0;
		size_t shndx;
		const char *name;

		if (!gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		if (shndx == SHN_UNDEF || (shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		if (!scn_is_code(p->elf, shndx, &sh))
			continue;
		/* The bytes are read from the section: the whole function must lie in it. */
		if (sym.st_value < sh.sh_addr || sym.st_size > sh.sh_size ||
		    sym.st_value - sh.sh_addr > sh.sh_size - sym.st_size)
			continue;
		name = elf_strptr(p->elf, symsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		cand[ncand++] = (struct func_cand){
			.name = name, .vaddr = sym.st_value, .size = sym.st_size, .scn = shndx,
			.rank = bind_rank(GELF_ST_BIND(sym.st_info)),
		};
	}

	qsort(cand, ncand, sizeof(*cand), cand_cmp);

	obj->funcs = calloc(ncand ? ncand : 1, sizeof(*obj->funcs));
	p->func_scn = calloc(ncand ? ncand : 1, sizeof(*p->func_scn));
	if (!obj->funcs || !p->func_scn) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ncand; i++) {
		/* Sorted best alias first: keep one entry per address. */
		if (nout && obj->funcs[nout - 1].vaddr == cand[i].vaddr)
			continue;
		obj->funcs[nout].name = strdup(cand[i].name);
		if (!obj->funcs[nout].name) {
			err = -ENOMEM;
			goto out;
		}
		obj->funcs[nout].vaddr = cand[i].vaddr;
		obj->funcs[nout].size = cand[i].size;
		p->func_scn[nout] = cand[i].scn;
		nout++;
	}
out:
	obj->nr_funcs = nout;
	free(cand);
	return err;
}

int target_obj__open(const char *path, struct target_obj **out)
{
	struct target_obj *obj;
	struct obj_priv *p;
	GElf_Ehdr eh;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "kcsand: libelf: %s\n", elf_errmsg(-1));
		return -EINVAL;
	}

	obj = calloc(1, sizeof(*obj));
	p = calloc(1, sizeof(*p));
	if (!obj || !p || !(obj->path = strdup(path))) {
		free(p);
		free(obj);
		return -ENOMEM;
	}
	p->fd = -1;
	obj->priv = p;

	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		err = -errno;
		fprintf(stderr, "kcsand: cannot open %s: %s\n", path, strerror(errno));
		goto err;
	}
	p->elf = elf_begin(p->fd, ELF_C_READ_MMAP, NULL);
	if (!p->elf || elf_kind(p->elf) != ELF_K_ELF) {
		fprintf(stderr, "kcsand: %s: not an ELF file\n", path);
		err = -ENOEXEC;
		goto err;
	}
	if (gelf_getclass(p->elf) != ELFCLASS64 || !gelf_getehdr(p->elf, &eh) ||
	    eh.e_machine != EM_X86_64) {
		fprintf(stderr, "kcsand: %s: not an x86-64 ELF object\n", path);
		err = -ENOEXEC;
		goto err;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		fprintf(stderr, "kcsand: %s: not an x86-64 ELF object (%s)\n", path,
			"neither executable nor shared object");
		err = -ENOEXEC;
		goto err;
	}
	obj->pie = eh.e_type == ET_DYN;

	err = load_segments(obj, p);
	if (err)
		goto err;
	err = load_funcs(obj, p);
	if (err)
		goto err;

	*out = obj;
	return 0;
err:
	target_obj__free(obj);
	return err;
}

int target_obj__vaddr_to_off(const struct target_obj *obj, uint64_t vaddr, uint64_t *off)
{
	const struct obj_priv *p = obj->priv;
	const struct load_seg *hit = NULL;

	/* Segments do not overlap in practice; if they do, code wants the executable one. */
	for (size_t i = 0; i < p->nr_segs; i++) {
		const struct load_seg *s = &p->segs[i];

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (!hit || (s->exec && !hit->exec))
			hit = s;
	}
	if (!hit)
		return -ERANGE;
	*off = vaddr - hit->vaddr + hit->off;
	return 0;
}

static bool name_matches(const char *name, const char *globs)
{
	const char *g = globs;
	bool any = false;

	while (*g) {
		const char *end = strchr(g, ',');
		size_t n = end ? (size_t)(end - g) : strlen(g);
		char pat[512];

		while (n && (*g == ' ' || *g == '\t')) {
			g++;
			n--;
		}
		while (n && (g[n - 1] == ' ' || g[n - 1] == '\t'))
			n--;
		if (n && n < sizeof(pat)) {
			memcpy(pat, g, n);
			pat[n] = '\0';
			any = true;
			if (!fnmatch(pat, name, 0))
				return true;
		}
		if (!end)
			break;
		g = end + 1;
	}
	/* A list of nothing but separators selects everything, like "". */
	return !any;
}

int target_obj__decode(struct target_obj *obj, const char *globs, const struct decode_opts *opts)
{
	struct obj_priv *p = obj->priv;
	int matched = 0, err;

	obj->sites.n = 0;
	memset(&obj->stats, 0, sizeof(obj->stats));
	if (!globs)
		globs = "";

	for (size_t i = 0; i < obj->nr_funcs; i++) {
		const struct elf_func *f = &obj->funcs[i];
		GElf_Shdr sh;
		Elf_Scn *scn;
		Elf_Data *data;
		size_t start = obj->sites.n;

		if (!name_matches(f->name, globs))
			continue;
		matched++;

		scn = elf_getscn(p->elf, p->func_scn[i]);
		data = scn ? elf_getdata(scn, NULL) : NULL;
		if (!data || !gelf_getshdr(scn, &sh) || !data->d_buf ||
		    f->vaddr - sh.sh_addr + f->size > data->d_size) {
			fprintf(stderr, "kcsand: %s: %s: cannot read code: %s\n", obj->path,
				f->name, elf_errmsg(-1));
			return -EIO;
		}
		err = decode_function((const uint8_t *)data->d_buf + (f->vaddr - sh.sh_addr),
				      f->size, f->vaddr, (uint32_t)i, opts, &obj->sites,
				      &obj->stats);
		if (err)
			return err;

		for (size_t j = start; j < obj->sites.n; j++) {
			struct site *s = &obj->sites.v[j];

			if (target_obj__vaddr_to_off(obj, s->vaddr, &s->file_off)) {
				fprintf(stderr, "kcsand: %s: %s: 0x%" PRIx64 ": %s\n", obj->path,
					f->name, s->vaddr, "in no loadable segment");
				return -ERANGE;
			}
		}
	}
	return matched;
}

const struct elf_func *target_obj__func_at(const struct target_obj *obj, uint64_t vaddr)
{
	size_t lo = 0, hi = obj->nr_funcs;

	/* Find the last function starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (obj->funcs[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (vaddr - obj->funcs[lo - 1].vaddr < obj->funcs[lo - 1].size)
		return &obj->funcs[lo - 1];
	return NULL;
}

void target_obj__free(struct target_obj *obj)
{
	struct obj_priv *p;

	if (!obj)
		return;
	p = obj->priv;
	if (p) {
		if (p->elf)
			elf_end(p->elf);
		if (p->fd >= 0)
			close(p->fd);
		free(p->segs);
		free(p->func_scn);
		free(p);
	}
	for (size_t i = 0; i < obj->nr_funcs; i++)
		free(obj->funcs[i].name);
	free(obj->funcs);
	site_vec__free(&obj->sites);
	free(obj->path);
	free(obj);
}
