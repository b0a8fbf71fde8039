/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Growing arrays: room for one more element, doubling from a first
 * capacity, as libbpf_ensure_mem() does for libbpf.
 */
#ifndef KCSAND_ARRAY_H
#define KCSAND_ARRAY_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* Room for element n of *v (size bytes each, *cap of them): 0, or -ENOMEM, *v unchanged. */
static inline int array__reserve(void **v, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	nv = realloc(*v, c * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* ARRAY_RESERVE(vec.v, vec.cap, vec.n, 64): the same, sized by the element type. */
#define ARRAY_RESERVE(v, cap, n, first) \
	array__reserve((void **)&(v), &(cap), (n), sizeof(*(v)), (first))

#endif
