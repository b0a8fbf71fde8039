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
 * it: `lea fn(%rip),%rdi` (PIE or PIC) or `mov $fn,%edi` (a non-PIE
 * executable) before `call GOMP_parallel@plt`, or a copy of a register
 * loaded so earlier (a loop of regions).  A linear sweep of the executable
 * sections follows the code addresses the registers hold (track()) and
 * takes rdi's at each call to one of those functions' PLT stubs.  An
 * address passed some other way (loaded from memory) is missed: its region
 * stays as unordered as before, never more.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "omp_spawn.h"
#include "plt.h"

/* The libgomp calls whose first argument is the function they run. */
static const char *const spawn_prefix[] = {
	"GOMP_parallel", "GOMP_task", "GOMP_taskloop", "GOMP_teams_reg",
};

static bool is_spawn(const char *name)
{
	if (!name || strstr(name, "_end") || strstr(name, "wait") || strstr(name, "group"))
		return false;	/* GOMP_parallel_end, GOMP_taskwait, GOMP_taskgroup_*: no function */
	for (size_t i = 0; i < sizeof(spawn_prefix) / sizeof(spawn_prefix[0]); i++)
		if (!strncmp(name, spawn_prefix[i], strlen(spawn_prefix[i])))
			return true;
	return false;
}

/* A GPR's number (rax 0 ... r15 15), of its 64-bit register; -1 for another register. */
static int gpr(ZydisRegister r)
{
	r = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	return r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15 ? (int)(r - ZYDIS_REGISTER_RAX) :
								   -1;
}

#define RDI	7
/* Registers a call clobbers (SysV): rax, rcx, rdx, rsi, rdi, r8-r11. */
#define CALL_CLOBBERS	0x0fc7u

/*
 * The code addresses the registers hold, as far as the straight-line
 * reading of the code can tell: set by `lea x(%rip),reg` or `mov $x,reg`,
 * copied by `mov reg,reg`, forgotten when anything else writes them.  gcc
 * hoists the address out of a loop of regions (`lea fn(%rip),%rbp` before
 * it, `mov %rbp,%rdi` before each call), so the values stay across
 * branches: a wrong one names a function that is not a region's, whose
 * probes add order, never a report.
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

struct sweep {
	const struct plt_map *plt;
	int (*fn)(void *ctx, uint64_t vaddr);
	void *ctx;
};

/* One executable section's code at vaddr: each spawn call's function, to sw->fn. */
static int sweep_code(const struct sweep *sw, const uint8_t *code, size_t len, uint64_t vaddr)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	uint64_t regs[16] = { 0 }, target;
	ZydisDecoder dec;
	int ret;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t off = 0; off < len; off += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &in, ops))) {
			in.length = 1;	/* padding or data: resynchronize */
			memset(regs, 0, sizeof(regs));
			continue;
		}
		if (in.meta.category == ZYDIS_CATEGORY_CALL && regs[RDI] &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], vaddr + off, &target)) &&
		    is_spawn(plt_map__name(sw->plt, target)) && (ret = sw->fn(sw->ctx, regs[RDI])))
			return ret;
		if (in.mnemonic == ZYDIS_MNEMONIC_RET) {
			memset(regs, 0, sizeof(regs));	/* a function ends */
			continue;
		}
		track(regs, &in, ops, vaddr + off);
		for (int r = 0; in.meta.category == ZYDIS_CATEGORY_CALL && r < 16; r++)
			if (CALL_CLOBBERS & (1u << r))
				regs[r] = 0;
	}
	return 0;
}

int omp_spawn__fns(Elf *elf, int (*fn)(void *ctx, uint64_t vaddr), void *ctx)
{
	struct plt_map plt;
	struct sweep sw = { &plt, fn, ctx };
	Elf_Scn *scn = NULL;
	bool any = false;
	int err = plt_map__load(elf, &plt);

	for (size_t i = 0; !err && i < plt.n; i++)
		any |= is_spawn(plt.v[i].name);
	/* No stub of a spawn call (most programs): no region to find, no sweep. */
	while (!err && any && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		err = sweep_code(&sw, d->d_buf, d->d_size, sh.sh_addr);
	}
	plt_map__free(&plt);
	return err;
}
