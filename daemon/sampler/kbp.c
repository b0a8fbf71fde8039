// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling in kernel mode.  See kbp.h.
 *
 * One register's move re-targets its event on every CPU with
 * PERF_EVENT_IOC_MODIFY_ATTRIBUTES: the kernel disables the event on its
 * CPU, changes the address and enables it again, an IPI per CPU.  The
 * BPF side learns the new site first (kxbp_slots[r]); a trap still at the
 * old address in between no longer matches the slot's ip and is dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kbp.h"
#include "kcsand.h"
#include "kcsand.skel.h"
#include "util/clock.h"

#define KBP_MAX_CPUS	256
/* Sites tried in a row when the kernel refuses addresses, before a register waits a period. */
#define KBP_MAX_TRIES	16

struct kbp_reg {
	struct perf_event_attr attr;	/* as opened: MODIFY_ATTRIBUTES wants it unchanged but bp_addr */
	int fd[KBP_MAX_CPUS];
	struct bpf_link *link[KBP_MAX_CPUS];
};

struct kbp {
	struct kcsand_bpf *skel;
	struct kbp_opts o;
	uint64_t *addr;
	uint32_t *site;
	uint32_t *order;		/* the shuffled cycle */
	uint8_t *seen;			/* bit 0: sampled, bit 1: refused */
	size_t n, pos;
	int cpus[KBP_MAX_CPUS];
	unsigned int ncpus, nregs;
	struct kbp_reg reg[KCSAND_KXBP_SLOTS];
	uint64_t next_ns;
	struct kbp_stats st;
};

static void shuffle(struct kbp *k)
{
	unsigned int seed = k->o.seed;

	for (size_t i = 0; i < k->n; i++)
		k->order[i] = i;
	for (size_t i = k->n - 1; i > 0; i--) {
		size_t j = ((size_t)rand_r(&seed) << 16 ^ rand_r(&seed)) % (i + 1);
		uint32_t t = k->order[i];

		k->order[i] = k->order[j];
		k->order[j] = t;
	}
}

/* The next site of the cycle that the kernel has not refused; -1 when all were. */
static long next_site(struct kbp *k)
{
	for (size_t tries = 0; tries < k->n; tries++) {
		uint32_t i = k->order[k->pos++];

		if (k->pos == k->n) {
			k->pos = 0;
			k->st.cycles++;
		}
		if (!(k->seen[i] & 2))
			return i;
	}
	return -1;
}

static int online_cpus(struct kbp *k)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	for (long c = 0; c < n && k->ncpus < KBP_MAX_CPUS; c++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/online", c);
		if (c && !access(path, R_OK)) {
			FILE *f = fopen(path, "re");
			int on = 1;

			if (f) {
				if (fscanf(f, "%d", &on) != 1)
					on = 1;
				fclose(f);
			}
			if (!on)
				continue;
		}
		k->cpus[k->ncpus++] = c;
	}
	return k->ncpus ? 0 : -ENODEV;
}

static int set_slot(struct kbp *k, unsigned int r, uint64_t ip, uint32_t site)
{
	struct kcsand_kxbp_slot s = { .ip = ip, .site = site };
	__u32 key = r;
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);

	if (!bpf_map_lookup_elem(fd, &key, &s) && s.hits)
		k->st.hits += s.hits;
	s = (struct kcsand_kxbp_slot){ .ip = ip, .site = site };
	return bpf_map_update_elem(fd, &key, &s, BPF_ANY) ? -errno : 0;
}

/* Open register r's event on every CPU at site i; -errno (-EINVAL: address refused). */
static int open_reg(struct kbp *k, unsigned int r, size_t i)
{
	struct kbp_reg *g = &k->reg[r];
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = r);

	g->attr = (struct perf_event_attr){
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(g->attr),
		.bp_type = HW_BREAKPOINT_X,
		.bp_addr = k->addr[i],
		.bp_len = sizeof(long),	/* what x86 wants for an execute breakpoint */
		.sample_period = 1,
		.exclude_user = 1,
		.exclude_hv = 1,
	};
	set_slot(k, r, k->addr[i], k->site[i]);
	for (unsigned int c = 0; c < k->ncpus; c++) {
		int fd = syscall(__NR_perf_event_open, &g->attr, -1, k->cpus[c], -1,
				 PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			return -errno;
		g->fd[c] = fd;
		g->link[c] = bpf_program__attach_perf_event_opts(k->skel->progs.kcsand_kxbp, fd,
								 &po);
		if (!g->link[c])
			return -errno;
	}
	return 0;
}

static void close_reg(struct kbp *k, unsigned int r)
{
	struct kbp_reg *g = &k->reg[r];

	for (unsigned int c = 0; c < k->ncpus; c++) {
		if (g->link[c])
			bpf_link__destroy(g->link[c]);	/* closes the event too */
		else if (g->fd[c] >= 0)
			close(g->fd[c]);
		g->link[c] = NULL;
		g->fd[c] = -1;
	}
}

static void refuse(struct kbp *k, size_t i, int err)
{
	k->seen[i] |= 2;
	k->st.refused++;
	if (k->o.verbose)
		fprintf(stderr, "kcsand: breakpoints: the kernel refuses an execute breakpoint at "
				"0x%llx: %s\n", (unsigned long long)k->addr[i], strerror(-err));
}

/* Move register r to the next site on every CPU. */
static void retarget(struct kbp *k, unsigned int r)
{
	struct kbp_reg *g = &k->reg[r];

	for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
		long i = next_site(k);
		int err = 0;

		if (i < 0)
			return;
		set_slot(k, r, k->addr[i], k->site[i]);
		g->attr.bp_addr = k->addr[i];
		for (unsigned int c = 0; c < k->ncpus && !err; c++)
			if (ioctl(g->fd[c], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &g->attr))
				err = -errno;
		if (!err) {
			if (!(k->seen[i] & 1))
				k->st.sampled++;
			k->seen[i] |= 1;
			k->st.retargets++;
			return;
		}
		refuse(k, i, err);
	}
}

static int open_regs(struct kbp *k)
{
	int err = 0;

	for (unsigned int r = 0; r < k->o.nregs && r < KCSAND_KXBP_SLOTS; r++) {
		for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
			long i = next_site(k);

			if (i < 0)
				return k->nregs ? 0 : -ENOENT;
			err = open_reg(k, r, i);
			if (!err) {
				k->seen[i] |= 1;
				k->st.sampled++;
				break;
			}
			close_reg(k, r);
			if (err != -EINVAL)
				break;
			refuse(k, i, err);
		}
		if (err == -ENOSPC || err == -EBUSY)
			break;		/* no free debug register: sample with fewer */
		if (err)
			return err;
		k->nregs++;
	}
	return k->nregs ? 0 : err;
}

int kbp__new(struct kcsand_bpf *skel, const uint64_t *addr, const uint32_t *site, size_t n,
	     const struct kbp_opts *o, struct kbp **out)
{
	struct kbp *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	k->skel = skel;
	k->o = *o;
	k->n = n;
	k->addr = malloc(n * sizeof(*k->addr));
	k->site = malloc(n * sizeof(*k->site));
	k->order = malloc(n * sizeof(*k->order));
	k->seen = calloc(n, 1);
	for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
		memset(k->reg[r].fd, -1, sizeof(k->reg[r].fd));
	if (!n || !k->addr || !k->site || !k->order || !k->seen) {
		kbp__free(k);
		return n ? -ENOMEM : -ENOENT;
	}
	memcpy(k->addr, addr, n * sizeof(*addr));
	memcpy(k->site, site, n * sizeof(*site));
	shuffle(k);
	err = online_cpus(k);
	if (!err)
		err = open_regs(k);
	if (err) {
		fprintf(stderr, "kcsand: breakpoints: cannot open an execute breakpoint on each "
				"CPU: %s%s\n", strerror(-err),
			err == -ENOSPC ? " (no free debug register)" : "");
		kbp__free(k);
		return err;
	}
	k->st.sites = n;
	k->st.nregs = k->nregs;
	k->st.ncpus = k->ncpus;
	k->next_ns = clock__now_ns() + k->o.period_us * 1000ull;
	*out = k;
	return 0;
}

void kbp__tick(struct kbp *k)
{
	uint64_t t = clock__now_ns();

	if (!k || t < k->next_ns)
		return;
	for (unsigned int r = 0; r < k->nregs; r++)
		retarget(k, r);
	k->st.retarget_ns += clock__now_ns() - t;
	k->next_ns = t + k->o.period_us * 1000ull;
}

int kbp__timeout_ms(const struct kbp *k)
{
	uint64_t t = clock__now_ns();

	if (!k)
		return -1;
	return t >= k->next_ns ? 0 : (int)((k->next_ns - t + 999999) / 1000000);
}

void kbp__stats(const struct kbp *k, struct kbp_stats *st)
{
	struct kcsand_kxbp_slot s;

	*st = k->st;
	for (__u32 r = 0; r < k->nregs; r++)
		if (!bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.kxbp_slots), &r, &s))
			st->hits += s.hits;
}

void kbp__free(struct kbp *k)
{
	if (!k)
		return;
	for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
		close_reg(k, r);
	free(k->addr);
	free(k->site);
	free(k->order);
	free(k->seen);
	free(k);
}
