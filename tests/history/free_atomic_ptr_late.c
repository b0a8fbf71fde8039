// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: free_atomic_ptr's message passing through an _Atomic flag
 * reached through a pointer (a `mov; mfence` store, a plain-mov load), but
 * the consumer polls the flag alone for 1.5 s before the producer's first
 * store: a worker waiting for its first job.  Its polling site is hot and
 * backed off by the sampler before any fenced store has taught the flag's
 * address, so a hit of it never learns that the load is an atomic's: the
 * fenced store must, from the consumer's plain reads it finds at that
 * address, and the consumer must acquire the flag until that site is armed
 * again.  Reported as read_msg / write_msg every run before.
 *
 * Expected: race-free
 */
#define ROUNDS 2000
#define PRODUCER_LATE_US 1500000	/* the consumer's poll leaves the cold start */
#include "free_atomic_ptr.c"
