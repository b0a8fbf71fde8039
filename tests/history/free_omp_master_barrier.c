// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: the master thread writes shared state (master has no barrier
 * of its own); an explicit barrier orders it before the other threads'
 * reads, and another before the next write.  free_omp_single.c with
 * master and that barrier in place of single.
 *
 * Expected: race-free
 */
#define MASTER_THEN_BARRIER
#include "free_omp_single.c"
