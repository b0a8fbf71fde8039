// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenMP outlined functions without their symbols.  gcc compiles a
 * `#pragma omp parallel` (or task, taskloop, teams) body into a function of
 * its own, `main._omp_fn.0`, a local symbol: a stripped program or library,
 * as a distribution ships it, has no name for it.  The history needs its
 * entry and return (the spawn's acquire, the body's release), or the data
 * the master writes before a region and its threads read inside look
 * unordered, in every OpenMP program Debian ships.
 *
 * The body's address is the first argument of the libgomp call that runs
 * it (the second of GOMP_target_ext's, a target region's host fallback):
 * `lea fn(%rip),%rdi` (PIE or PIC) or `mov $fn,%edi` (a non-PIE
 * executable) before `call GOMP_parallel@plt`, or a copy of a register
 * loaded so earlier (a loop of regions).  A linear sweep of the executable
 * sections follows the code addresses the registers hold (track()) and
 * takes rdi's at each call to one of those functions' PLT stubs, if an
 * FDE of .eh_frame starts there (omp_spawn__fns()).  An address passed
 * some other way (loaded from memory) is missed: its region stays as
 * unordered as before, never more.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "ehframe.h"
#include "omp_spawn.h"
#include "plt.h"
#include "util/array.h"

#define RSI	6
#define RDI	7

/*
 * The libgomp calls that take the function they run, and the argument
 * register it is in: the first, but for a target region's, whose first
 * argument is the device (its host fallback runs the function).
 */
static const struct {
	const char *prefix;
	int reg;
} spawns[] = {
	{ "GOMP_parallel", RDI },
	{ "GOMP_task", RDI },
	{ "GOMP_taskloop", RDI },
	{ "GOMP_teams_reg", RDI },
	{ "GOMP_target", RSI },
};

/* The register holding the function a call to name runs; -1 if it runs none. */
static int spawn_reg(const char *name)
{
	/* GOMP_parallel_end, GOMP_taskwait, GOMP_taskgroup_*, GOMP_target_*_data: no function. */
	if (!name || strstr(name, "_end") || strstr(name, "wait") || strstr(name, "group") ||
	    strstr(name, "data") || strstr(name, "update") || strstr(name, "enter_exit"))
		return -1;
	for (size_t i = 0; i < sizeof(spawns) / sizeof(spawns[0]); i++)
		if (!strncmp(name, spawns[i].prefix, strlen(spawns[i].prefix)))
			return spawns[i].reg;
	return -1;
}

/* A GPR's number (rax 0 ... r15 15), of its 64-bit register; -1 for another register. */
static int gpr(ZydisRegister r)
{
	r = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	return r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15 ? (int)(r - ZYDIS_REGISTER_RAX) :
								   -1;
}

/* Registers a call clobbers (SysV): rax, rcx, rdx, rsi, rdi, r8-r11. */
#define CALL_CLOBBERS	0x0fc7u

/*
 * The code addresses the registers hold, as far as the straight-line
 * reading of the code can tell: set by `lea x(%rip),reg` or `mov $x,reg`,
 * copied by `mov reg,reg`, forgotten when anything else writes them.  gcc
 * hoists the address out of a loop of regions (`lea fn(%rip),%rbp` before
 * it, `mov %rbp,%rdi` before each call), so the values stay across
 * branches: a wrong one that is still a function's start names a function
 * that is not a region's, whose probes add order, never a report; one that
 * is no function's start is dropped (omp_spawn__fns()).
 */
static void track(uint64_t *regs, const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *ops, uint64_t at)
{
	int d = in->operand_count_visible == 2 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER ?
			gpr(ops[0].reg.value) :
			-1;
	uint64_t a = 0;

	for (int i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) && gpr(ops[i].reg.value) >= 0)
			regs[gpr(ops[i].reg.value)] = 0;
	if (d < 0)
		return;
	if (in->mnemonic == ZYDIS_MNEMONIC_LEA && ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	    ops[1].mem.base == ZYDIS_REGISTER_RIP &&
	    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, &ops[1], at, &a)))
		regs[d] = a;
	else if (in->mnemonic == ZYDIS_MNEMONIC_MOV && ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
		regs[d] = ops[1].imm.value.u;
	else if (in->mnemonic == ZYDIS_MNEMONIC_MOV && ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		 gpr(ops[1].reg.value) >= 0 && ops[0].size >= 32)
		/* 32 bits: a non-PIE address, which the copy zero-extends whole. */
		regs[d] = ops[0].size == 64 ? regs[gpr(ops[1].reg.value)] :
					      (uint32_t)regs[gpr(ops[1].reg.value)];
}

/* Addresses: the candidates the sweep found, then the FDE starts to check them against. */
struct addrs {
	uint64_t *v;
	size_t n, cap;
};

static int addrs_add(struct addrs *a, uint64_t v)
{
	if (ARRAY_RESERVE(a->v, a->cap, a->n, 64))
		return -ENOMEM;
	a->v[a->n++] = v;
	return 0;
}

static int fde_start(void *ctx, uint64_t start, uint64_t size)
{
	return addrs_add(ctx, start);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One executable section's code at vaddr: each spawn call's function, into found. */
static int sweep_code(const struct plt_map *plt, const uint8_t *code, size_t len, uint64_t vaddr,
		      struct addrs *found)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	uint64_t regs[16] = { 0 }, target;
	ZydisDecoder dec;
	int r;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t off = 0; off < len; off += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &in, ops))) {
			in.length = 1;	/* padding or data: resynchronize */
			memset(regs, 0, sizeof(regs));
			continue;
		}
		if (in.meta.category == ZYDIS_CATEGORY_CALL &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], vaddr + off, &target)) &&
		    (r = spawn_reg(plt_map__name(plt, target))) >= 0 && regs[r] &&
		    addrs_add(found, regs[r]))
			return -ENOMEM;
		if (in.mnemonic == ZYDIS_MNEMONIC_RET) {
			memset(regs, 0, sizeof(regs));	/* a function ends */
			continue;
		}
		track(regs, &in, ops, vaddr + off);
		for (int c = 0; in.meta.category == ZYDIS_CATEGORY_CALL && c < 16; c++)
			if (CALL_CLOBBERS & (1u << c))
				regs[c] = 0;
	}
	return 0;
}

/* Every spawn call's function in elf's executable sections, into found. */
static int sweep(Elf *elf, const struct plt_map *plt, struct addrs *found)
{
	Elf_Scn *scn = NULL;
	int err = 0;

	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		err = sweep_code(plt, d->d_buf, d->d_size, sh.sh_addr, found);
	}
	return err;
}

/*
 * Only an address where an FDE starts is taken, once: the probes go on a
 * function's entry and its return, and a uretprobe on an address that is
 * no function's entry would replace whatever the stack's top holds there.
 * An object without .eh_frame gives none.
 */
int omp_spawn__fns(const char *path, Elf *elf, int (*fn)(void *ctx, uint64_t vaddr), void *ctx)
{
	struct addrs found = { 0 }, fdes = { 0 };
	struct plt_map plt;
	bool any = false;
	int err = plt_map__load(elf, &plt);

	for (size_t i = 0; !err && i < plt.n; i++)
		any |= spawn_reg(plt.v[i].name) >= 0;
	/* No stub of a spawn call (most programs): no region to find, no sweep. */
	if (!err && any)
		err = sweep(elf, &plt, &found);
	if (!err && found.n)
		err = ehframe__fdes(path, elf, fde_start, &fdes);
	if (!err && fdes.n) {
		qsort(found.v, found.n, sizeof(*found.v), by_value);
		qsort(fdes.v, fdes.n, sizeof(*fdes.v), by_value);
	}
	for (size_t i = 0; !err && fdes.n && i < found.n; i++)
		if ((!i || found.v[i] != found.v[i - 1]) &&
		    bsearch(&found.v[i], fdes.v, fdes.n, sizeof(*fdes.v), by_value))
			err = fn(ctx, found.v[i]);
	free(found.v);
	free(fdes.v);
	plt_map__free(&plt);
	return err;
}
