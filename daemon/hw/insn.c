// SPDX-License-Identifier: GPL-2.0-only
/*
 * The access a debug register trapped: x86 traps after the instruction, so
 * the access is the instruction that ends at the trap's ip.  Instructions
 * have no fixed length and cannot be decoded backwards: the function that
 * holds it is decoded from its start, with the site decoder, and the site
 * that ends at the ip is the access (bpf/hwbp.bpf.h asks for it once per ip).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "hwbp.h"
#include "sites/decode_int.h"

/* Does the instruction at off in path write a register its address is computed from? */
static bool clobbers_address(const char *path, const struct site *s)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	uint8_t code[16];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = pread(fd, code, sizeof(code), (off_t)s->file_off);
		close(fd);
	}
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (n <= 0 || ZYAN_FAILED(ZydisDecoderDecodeFull(&dec, code, (size_t)n, &in, ops)))
		return true;	/* unreadable now: do not trust a recomputed address */
	for (unsigned int i = 0; i < in.operand_count; i++) {
		int g = ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
				(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
			? gpr_num(ops[i].reg.value) : -1;

		if (g >= 0 && (g + 1 == s->desc.base || g + 1 == s->desc.index))
			return true;
	}
	return false;
}

int hwbp__insn_before(const char *path, uint64_t next, struct kcsand_site *out)
{
	const struct decode_opts opts = { .keep_stack = true, .keep_tls = true,
					  .probe_locked = true };
	const struct elf_func *f;
	struct target_obj *obj;
	int err;

	memset(out, 0, sizeof(*out));
	err = target_obj__open(path, &obj);
	if (err)
		return err;
	f = target_obj__func_at(obj, next - 1);
	err = f ? target_obj__decode(obj, f->name, &opts) : -ENOENT;
	if (err > 0)
		err = -ENOENT;
	for (size_t i = 0; err == -ENOENT && i < obj->sites.n; i++) {
		const struct site *s = &obj->sites.v[i];

		if (s->vaddr + s->desc.insn_len != next || s->desc.probe_delta)
			continue;
		*out = s->desc;
		if (clobbers_address(path, s))
			out->flags |= KCSAND_SITE_ADDR_LOST;
		err = 0;
	}
	target_obj__free(obj);
	return err;
}
