/* SPDX-License-Identifier: GPL-2.0-only */
/* OpenMP outlined functions found by the calls that run them (omp_spawn.c). */
#ifndef KCSAND_OMP_SPAWN_H
#define KCSAND_OMP_SPAWN_H

#include <gelf.h>
#include <stdint.h>

/*
 * Calls fn once with the link-time address of every function that elf's
 * code passes as the function to run to libgomp (GOMP_parallel*,
 * GOMP_task, GOMP_taskloop*, GOMP_teams_reg) through its PLT, and where an
 * FDE of its .eh_frame starts, until fn returns non-zero (returned).  0
 * when there are none; -ENOMEM, or ehframe__fdes()'s error (path names the
 * file in its message).
 */
int omp_spawn__fns(const char *path, Elf *elf, int (*fn)(void *ctx, uint64_t vaddr), void *ctx);

#endif
