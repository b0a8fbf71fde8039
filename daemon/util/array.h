/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Arrays: room for one more element, or for several (bytes appended to a
 * buffer), doubling from a first capacity, as libbpf_ensure_mem() does for
 * libbpf; and a binary search in an array sorted by a uint64_t member (an
 * address).
 */
#ifndef KCSAND_ARRAY_H
#define KCSAND_ARRAY_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for total elements of *v (size bytes each, *cap of them): 0, or -ENOMEM, *v unchanged. */
static inline int array__reserve_total(void **v, size_t *cap, size_t total, size_t size,
				       size_t first)
{
	size_t c;
	void *nv;

	if (total <= *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	while (c < total)
		c *= 2;
	nv = realloc(*v, c * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* Room for element n (the n + 1 elements up to it). */
static inline int array__reserve(void **v, size_t *cap, size_t n, size_t size, size_t first)
{
	return array__reserve_total(v, cap, n + 1, size, first);
}

/* ARRAY_RESERVE(vec.v, vec.cap, vec.n, 64): the same, sized by the element type. */
#define ARRAY_RESERVE(v, cap, n, first) \
	array__reserve((void **)&(v), &(cap), (n), sizeof(*(v)), (first))
/* ARRAY_RESERVE_MORE(buf, cap, len, k, 4096): room for k more after the len there are. */
#define ARRAY_RESERVE_MORE(v, cap, len, k, first) \
	array__reserve_total((void **)&(v), &(cap), (len) + (k), sizeof(*(v)), (first))

/* How many of the n elements of base, sorted by the uint64_t at key_off, have a key <= key. */
static inline size_t array__count_le(const void *base, size_t n, size_t size, size_t key_off,
				     uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ARRAY_COUNT_LE(ks->syms, ks->n, addr, a): the same, by member name. */
#define ARRAY_COUNT_LE(v, n, member, key) \
	array__count_le((v), (n), sizeof(*(v)), offsetof(__typeof__(*(v)), member), (key))

#endif
