// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel IP samples from a cpu-clock event's ring.  See kip.h.
 *
 * The ring is the kernel's: data_head is where it has written to, data_tail
 * where we have read to; a record may wrap around the data area's end.  A
 * full ring loses samples (a PERF_RECORD_LOST we skip): the evidence is a
 * hint, and its reader drains it at every tick, far more often than 8 pages
 * of 16-byte records fill at a few hundred samples a second.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "kip.h"

#define KIP_DATA_PAGES	8	/* a power of two, as the kernel wants */

int kip__open(struct kip_ring *r, int cpu, unsigned int hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
		.sample_type = PERF_SAMPLE_IP,
		.exclude_user = 1,
		.exclude_hv = 1,
	};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int err;

	r->fd = -1;
	r->base = NULL;
	r->len = page * (1 + KIP_DATA_PAGES);
	r->fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		r->fd = -1;
		return err;
	}
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		err = -errno;
		r->base = NULL;
		kip__close(r);
		return err;
	}
	return 0;
}

/* len bytes at ring offset off (mod size), across the data area's end if need be. */
static void ring_copy(const char *data, uint64_t size, uint64_t off, void *to, size_t len)
{
	size_t at = off & (size - 1);
	size_t first = len < size - at ? len : size - at;

	memcpy(to, data + at, first);
	memcpy((char *)to + first, data, len - first);
}

uint64_t kip__drain(struct kip_ring *r, void (*fn)(void *ctx, uint64_t ip), void *ctx)
{
	struct perf_event_mmap_page *m = r->base;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t size = r->len - page, head, tail, n = 0;
	const char *data;

	if (!m)
		return 0;
	data = (const char *)r->base + page;
	/* The records up to head are written once head is read (the kernel's barrier pairs). */
	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	tail = m->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t ip;

		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			break;		/* never written so: stop rather than spin */
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + sizeof(ip)) {
			ring_copy(data, size, tail + sizeof(h), &ip, sizeof(ip));
			fn(ctx, ip);
			n++;
		}
		tail += h.size;
	}
	/* Read before the space is given back. */
	__atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

void kip__close(struct kip_ring *r)
{
	if (r->base)
		munmap(r->base, r->len);
	if (r->fd >= 0)
		close(r->fd);
	r->base = NULL;
	r->fd = -1;
}
