/* SPDX-License-Identifier: GPL-2.0-only */
/* OpenMP outlined functions found by the calls that run them (omp_spawn.c). */
#ifndef KCSAND_OMP_SPAWN_H
#define KCSAND_OMP_SPAWN_H

#include <gelf.h>
#include <stdint.h>

/*
 * Calls fn with the link-time address of every function that elf's code
 * passes as the function to run to libgomp (GOMP_parallel*, GOMP_task,
 * GOMP_taskloop*, GOMP_teams_reg) through its PLT, until fn returns
 * non-zero (returned); an address may come more than once.  0 when there
 * are none, -ENOMEM.
 */
int omp_spawn__fns(Elf *elf, int (*fn)(void *ctx, uint64_t vaddr), void *ctx);

#endif
