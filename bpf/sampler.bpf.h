/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF half of the site sampler (daemon/sampler/sampler.c): per-site hit counts
 * and time, and an armed bitmap for probes that stay attached.
 *
 * In user mode a site that is not armed is not attached at all: the trap
 * is the cost (the BPF program is a small part of it), so only detaching
 * makes a site free, and re-creating a uprobe_multi link is cheap enough
 * to do every sampler period.  Kernel mode keeps its kprobes attached and
 * tests a bitmap instead: unregistering a kprobe waits for an RCU grace
 * period, and disabling its perf event leaves the program running
 * (daemon/sampler/ksampler.c; docs/PERFORMANCE.md, "Figures behind the
 * code", has the numbers).  sampler_use_bitmap selects that at load time,
 * so user mode does not pay for the test.
 */
#ifndef KCSAND_SAMPLER_BPF_H
#define KCSAND_SAMPLER_BPF_H

/* Set before load: the stats array is cpu-major, sampler_capacity sites a CPU. */
const volatile __u32 sampler_capacity = 1;
const volatile __u32 sampler_use_bitmap = 0;

/*
 * One entry per (CPU, site), cpu-major so that two CPUs hitting the same
 * site never share a cache line.  Atomic adds all the same: a CPU only
 * writes its own entries, but a uprobe program runs preemptibly where the
 * kernel preempts (preempt=full or lazy), so two tasks on one CPU can
 * interleave their updates of an entry.  Kprobe and perf_event programs do
 * not nest on a CPU (bpf_prog_active).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* nr_cpus * capacity, set before load */
	__type(key, __u32);
	__type(value, struct kcsand_site_stat);
} site_stats SEC(".maps");

/*
 * Bit i set: site i is disarmed.  Only read when sampler_use_bitmap (kernel
 * mode).  Inverted so that the zeroed map a load creates arms every site:
 * sites are armed from their first hit, whatever happens to the sampler,
 * and an object added later starts armed, as the sampler expects.  The
 * daemon writes the words through an mmap; a site's bit is read once per
 * hit, so a flip takes effect at the next hit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* capacity / 64, set before load */
	__type(key, __u32);
	__type(value, __u64);
} disarmed_bitmap SEC(".maps");

/* A site beyond the bitmap (the trap calibration's cookie) counts as disarmed. */
static __always_inline int sampler_site_armed(__u32 site)
{
	__u32 word = site / 64;
	__u64 *w;

	if (!sampler_use_bitmap)
		return 1;
	w = bpf_map_lookup_elem(&disarmed_bitmap, &word);
	return w && !(*w & (1ULL << (site & 63)));
}

/* This CPU's statistics of site, or NULL. */
static __always_inline struct kcsand_site_stat *site_stat(__u32 site)
{
	__u32 idx;

	if (site >= sampler_capacity)
		return NULL;
	idx = bpf_get_smp_processor_id() * sampler_capacity + site;
	return bpf_map_lookup_elem(&site_stats, &idx);
}

/* A hit of a disarmed site (kernel mode): counted, so that its rate stays known. */
static __always_inline void sampler_count_hit(__u32 site)
{
	struct kcsand_site_stat *st = site_stat(site);

	if (st)
		__sync_fetch_and_add(&st->hits, 1);
}

static __always_inline void sampler_account(__u32 site, __u64 t0)
{
	struct kcsand_site_stat *st = site_stat(site);

	if (!st)
		return;
	__sync_fetch_and_add(&st->hits, 1);
	__sync_fetch_and_add(&st->ns, bpf_ktime_get_ns() - t0);
}

#endif
