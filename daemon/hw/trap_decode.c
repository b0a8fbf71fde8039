// SPDX-License-Identifier: GPL-2.0-only
/*
 * A trap's access: a debug register traps after the instruction, so the
 * BPF side asks once per ip (bpf/hwbp.bpf.h) for the instruction before it,
 * which insn.c decodes; a report's hardware side gets its type and ip here.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hwbp.h"
#include "hwbp_int.h"
#include "sites/kcore.h"
#include "sites/ksyms.h"
#include "report/symbolize.h"
#include "kcsand.skel.h"
#include "util/print.h"

/* The access before a kernel trap's ip: kcore and kallsyms are opened on the first. */
static int decode_kernel(struct hwbp *hw, uint64_t next, struct kcsand_site *site)
{
	if (hw->kc.fd < 0 && kcore__open(&hw->kc))
		return -ENOENT;
	if (!hw->ks && !(hw->ks = ksyms__load()))
		return -errno;
	return hwbp__kinsn_before(&hw->kc, hw->ks, next, site);
}

/* The instruction before next, in pid's process or the kernel. */
static int decode_before(struct hwbp *hw, struct symbolizer *sym, uint32_t pid, uint64_t next,
			 struct kcsand_site *site)
{
	struct sym_info si;
	int err;

	if (hw->kernel)
		return decode_kernel(hw, next, site);
	if (symbolizer__proc_lookup(sym, pid, next, false, &si) || !si.module)
		return -ENOENT;
	err = hwbp__insn_before(si.module, si.mod_vaddr, site);
	/* Marked as its probe is: the bytes show a lock prefix, not an _Atomic's plain mov. */
	if (!err && hw->site_flags)
		site->flags |= hw->site_flags(hw->site_ctx, si.module,
					      si.mod_vaddr - site->insn_len) &
			       (KCSAND_SITE_MARKED | KCSAND_SITE_DATA_RACE);
	return err;
}

void hwbp__fix_access(struct hwbp *hw, struct symbolizer *sym, struct kcsand_access *a)
{
	struct kcsand_site site;
	uint32_t type;

	if (!hw || (a->flags & (KCSAND_ACC_HWBP | KCSAND_ACC_DECODED)) != KCSAND_ACC_HWBP ||
	    decode_before(hw, sym, a->pid, a->ip, &site) || !site.size)
		return;
	type = 0;
	if (site.flags & KCSAND_SITE_WRITE)
		type = KCSAND_ACCESS_WRITE |
		       (site.flags & KCSAND_SITE_READ ? KCSAND_ACCESS_COMPOUND : 0);
	if (site.flags & KCSAND_SITE_MARKED)
		type |= KCSAND_ACCESS_ATOMIC;
	a->ip -= site.insn_len;
	a->type = type;
	a->flags |= KCSAND_ACC_DECODED;
}

void hwbp__decode(struct hwbp *hw, struct symbolizer *sym, const struct kcsand_hw_decode *rq)
{
	struct kcsand_hw_insn_key key = { .pid = rq->pid, .next_ip = rq->next_ip };
	struct kcsand_site site = {};
	int err;

	if (!hw)
		return;
	/* Traps ask until the answer is in: requests already queued ask again. */
	if (!bpf_map_lookup_elem(bpf_map__fd(hw->skel->maps.hw_insns), &key, &site))
		return;
	err = decode_before(hw, sym, rq->pid, rq->next_ip, &site);
	if (err)
		pr_info("hardware watchpoint: the access before 0x%llx in %u: not decoded (%s), "
			"the debug register's range stands in\n",
			(unsigned long long)rq->next_ip, rq->pid, strerror(-err));
	else
		pr_info("hardware watchpoint: the access before 0x%llx in %u: %s of %u bytes%s\n",
			(unsigned long long)rq->next_ip, rq->pid,
			site.flags & KCSAND_SITE_WRITE ? "write" : "read", site.size,
			site.flags & KCSAND_SITE_ADDR_LOST ? " (its address registers overwritten: "
							     "the debug register's range stands in)" : "");
	bpf_map_update_elem(bpf_map__fd(hw->skel->maps.hw_insns), &key, &site, BPF_ANY);
	hw->st.decoded++;
}
