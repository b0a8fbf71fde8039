// SPDX-License-Identifier: GPL-2.0-only
/*
 * What each synchronization function does to happens-before, read from the
 * libraries' code (glibc 2.36, libgomp 12), not guessed from names:
 *
 * - lock-like calls acquire at their return, and only when they succeeded
 *   (0 from pthread_*, sem_* and mtx_*; non-zero from omp_test_lock);
 *   omp_set_lock, GOMP_critical_name_start and call_once return nothing;
 * - unlock-like calls release at their entry, before the lock is free;
 * - pthread_cond_*wait releases its mutex at entry and re-acquires it
 *   (through __pthread_mutex_cond_lock, which is not the exported
 *   pthread_mutex_lock) before it returns: both at the call's edges;
 * - pthread_barrier_wait releases at entry and acquires at return: nobody
 *   returns before every thread entered;
 * - gcc lowers `#pragma omp parallel` to GOMP_parallel(fn, ...), whose
 *   workers run fn from libgomp's thread pool: fn's entry acquires what
 *   the spawner released, its return releases, GOMP_parallel's return
 *   acquires every return (the team's final barrier is inside libgomp);
 * - the barrier at the end of a worksharing construct is a call: with a
 *   static schedule gcc emits GOMP_barrier(), otherwise GOMP_loop_end(),
 *   GOMP_sections_end() or GOMP_single_copy_*(); `nowait` emits none,
 *   and neither the *_nowait ends nor GOMP_loop_*_next synchronize;
 *   GOMP_single_copy_start() waits in the barrier only in the threads
 *   that did not run the `single` (it returns them the copied data; the
 *   one that ran it gets NULL and waits in GOMP_single_copy_end());
 * - a task runs on a clock of its own (bpf/tasks.bpf.h): GOMP_task's
 *   entry records the creator's clock, its depend list and its taskgroup,
 *   the task's fn starts from them; GOMP_taskwait's return acquires the
 *   current task's children, GOMP_taskgroup_end's the group's tasks and
 *   their descendants (GOMP_taskgroup_start opens it), barriers every
 *   finished task; GOMP_task's return is probed for if(0) tasks, which
 *   run inside it and are done when it returns; a detached task
 *   completes at omp_fulfill_event(), which releases into what waits for
 *   it;
 * - a host `teams` without a target is GOMP_teams_reg(fn, ...), which
 *   calls fn once per team on its thread: each call a team of its own;
 * - reductions are lock-prefixed instructions in the outlined function or
 *   GOMP_atomic_start/end: marked accesses and the atomic lock.
 */
#include <string.h>
#include "history.h"

/*
 * HOLDS_LOCK: the call returns holding a lock that protects what its
 * caller reads next, so a loop that calls it last on its way back to a
 * polled load reads a word that lock protects, not an atomic
 * (sites/spinwait.c asks, through decode_opts::returns_locked).
 *
 * - Trylocks count: their loop reaches the load after the call only on
 *   the path that tested success (the lock held); a loop that reads
 *   whatever the trylock returned polls unprotected, and leaving that
 *   read plain reports what is a race.
 * - Condition waits count: they return holding their mutex again.
 * - Semaphores do not: a sem_wait() returns holding a unit, which is a
 *   lock only when the program uses it as one.  `while (!done)
 *   sem_wait(&s);` is a signal's wait, and done may be an atomic (no
 *   debug info says); left plain, its first read would pair with the
 *   writer's release store, a report of a race-free program
 *   (tests/history/free_sem_signal_poll.c, reported 3 runs of 3 with
 *   sem_wait counted).  Taken as a spin-wait, the read adds order: it
 *   hides only a race of two binary semaphores used as two locks
 *   (DRB193's shape), the rarer use.
 * - __cxa_guard_acquire does not: it holds the guard only when it returns
 *   1, and the guard protects a static's construction, not what the
 *   caller polls.
 */
#define HOLDS_LOCK	true

struct hb_func {
	const char *name;
	enum kcsand_hb_op op;
	bool holds_lock;
};

static const struct hb_func hb_funcs[] = {
	/* libc: mutexes, rwlocks, spinlocks, semaphores, C11 mutexes */
	{ "pthread_mutex_lock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_mutex_trylock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_mutex_timedlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_mutex_clocklock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_mutex_unlock", KCSAND_HB_UNLOCK },
	{ "pthread_rwlock_rdlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_wrlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_tryrdlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_trywrlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_timedrdlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_timedwrlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_clockrdlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_clockwrlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_rwlock_unlock", KCSAND_HB_UNLOCK },
	{ "pthread_spin_lock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_spin_trylock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "pthread_spin_unlock", KCSAND_HB_UNLOCK },
	{ "sem_wait", KCSAND_HB_LOCK },
	{ "sem_trywait", KCSAND_HB_LOCK },
	{ "sem_timedwait", KCSAND_HB_LOCK },
	{ "sem_clockwait", KCSAND_HB_LOCK },
	{ "sem_post", KCSAND_HB_UNLOCK },
	{ "mtx_lock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "mtx_trylock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "mtx_timedlock", KCSAND_HB_LOCK, HOLDS_LOCK },
	{ "mtx_unlock", KCSAND_HB_UNLOCK },
	/* condition variables */
	{ "pthread_cond_wait", KCSAND_HB_COND_WAIT, HOLDS_LOCK },
	{ "pthread_cond_timedwait", KCSAND_HB_COND_WAIT, HOLDS_LOCK },
	{ "pthread_cond_clockwait", KCSAND_HB_COND_WAIT, HOLDS_LOCK },
	{ "cnd_wait", KCSAND_HB_COND_WAIT, HOLDS_LOCK },
	{ "cnd_timedwait", KCSAND_HB_COND_WAIT, HOLDS_LOCK },
	{ "pthread_cond_signal", KCSAND_HB_COND_SIGNAL },
	{ "pthread_cond_broadcast", KCSAND_HB_COND_SIGNAL },
	{ "cnd_signal", KCSAND_HB_COND_SIGNAL },
	{ "cnd_broadcast", KCSAND_HB_COND_SIGNAL },
	/* barriers, once, threads */
	{ "pthread_barrier_wait", KCSAND_HB_BARRIER },
	{ "pthread_once", KCSAND_HB_ONCE },
	{ "call_once", KCSAND_HB_ONCE },
	{ "pthread_create", KCSAND_HB_CREATE },
	{ "thrd_create", KCSAND_HB_CREATE },
	{ "pthread_join", KCSAND_HB_JOIN },
	{ "pthread_timedjoin_np", KCSAND_HB_JOIN },
	{ "pthread_clockjoin_np", KCSAND_HB_JOIN },
	{ "pthread_tryjoin_np", KCSAND_HB_JOIN },
	{ "thrd_join", KCSAND_HB_JOIN },
	/* libgomp: teams and tasks */
	{ "GOMP_parallel", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_static", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_dynamic", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_guided", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_runtime", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_nonmonotonic_dynamic", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_nonmonotonic_guided", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_nonmonotonic_runtime", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_loop_maybe_nonmonotonic_runtime", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_sections", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_parallel_reductions", KCSAND_HB_OMP_PARALLEL },
	{ "GOMP_task", KCSAND_HB_OMP_TASK },
	{ "GOMP_taskloop", KCSAND_HB_OMP_TASKLOOP },
	{ "GOMP_taskloop_ull", KCSAND_HB_OMP_TASKLOOP },
	{ "GOMP_taskwait", KCSAND_HB_OMP_TASKWAIT },
	{ "GOMP_taskwait_depend", KCSAND_HB_OMP_TASKWAIT },
	{ "GOMP_taskgroup_start", KCSAND_HB_OMP_TASKGROUP_START },
	{ "GOMP_taskgroup_end", KCSAND_HB_OMP_TASKGROUP_END },
	{ "GOMP_sections_start", KCSAND_HB_OMP_SECTION },
	{ "GOMP_sections2_start", KCSAND_HB_OMP_SECTION },
	{ "GOMP_sections_next", KCSAND_HB_OMP_SECTION },
	{ "GOMP_teams4", KCSAND_HB_OMP_TEAMS },
	{ "GOMP_teams_reg", KCSAND_HB_OMP_TEAMS_REG },
	{ "omp_fulfill_event", KCSAND_HB_OMP_FULFILL },
	/* libgomp: barriers, explicit and at the end of worksharing constructs */
	{ "GOMP_barrier", KCSAND_HB_OMP_BARRIER },
	{ "GOMP_barrier_cancel", KCSAND_HB_OMP_BARRIER },
	{ "GOMP_loop_end", KCSAND_HB_OMP_BARRIER },
	{ "GOMP_loop_end_cancel", KCSAND_HB_OMP_BARRIER },
	{ "GOMP_sections_end", KCSAND_HB_OMP_BARRIER },
	{ "GOMP_sections_end_cancel", KCSAND_HB_OMP_BARRIER },
	{ "GOMP_single_copy_start", KCSAND_HB_OMP_SINGLE_COPY },
	{ "GOMP_single_copy_end", KCSAND_HB_OMP_BARRIER },
	/* libgomp: mutual exclusion */
	{ "GOMP_critical_start", KCSAND_HB_OMP_CRIT_START, HOLDS_LOCK },
	{ "GOMP_critical_end", KCSAND_HB_OMP_CRIT_END },
	{ "GOMP_critical_name_start", KCSAND_HB_LOCK_VOID, HOLDS_LOCK },
	{ "GOMP_critical_name_end", KCSAND_HB_UNLOCK },
	{ "GOMP_atomic_start", KCSAND_HB_OMP_ATOMIC_START, HOLDS_LOCK },
	{ "GOMP_atomic_end", KCSAND_HB_OMP_ATOMIC_END },
	{ "GOMP_ordered_start", KCSAND_HB_OMP_ORDERED_START },
	{ "GOMP_ordered_end", KCSAND_HB_OMP_ORDERED_END },
	{ "omp_set_lock", KCSAND_HB_LOCK_VOID, HOLDS_LOCK },
	{ "omp_set_nest_lock", KCSAND_HB_LOCK_VOID, HOLDS_LOCK },
	{ "omp_test_lock", KCSAND_HB_LOCK_NZ, HOLDS_LOCK },
	{ "omp_test_nest_lock", KCSAND_HB_LOCK_NZ, HOLDS_LOCK },
	{ "omp_unset_lock", KCSAND_HB_UNLOCK },
	{ "omp_unset_nest_lock", KCSAND_HB_UNLOCK },
	/*
	 * Memory changing owner: forgotten when freed or unmapped, so that
	 * whatever malloc, calloc, realloc, posix_memalign, aligned_alloc,
	 * memalign or mmap hand out next starts with no earlier access.
	 * Their own returns need no probe: every byte they give was never
	 * used, or forgotten when it was last freed.  realloc's old block is
	 * freed inside libc, not through free().  mmap only when MAP_FIXED
	 * replaces a mapping.  C++'s delete reaches free().
	 */
	{ "free", KCSAND_HB_FREE },
	{ "cfree", KCSAND_HB_FREE },
	{ "realloc", KCSAND_HB_FREE },
	{ "reallocarray", KCSAND_HB_FREE },
	{ "munmap", KCSAND_HB_UNMAP },
	{ "mremap", KCSAND_HB_UNMAP },
	{ "mmap", KCSAND_HB_MAP },
	{ "mmap64", KCSAND_HB_MAP },
	/*
	 * libstdc++: a function-local static's guard.  release publishes the
	 * built object, abort hands the guard to the next thread that tries;
	 * acquire returns after either (or after nothing, the first time).
	 * The inline fast path's load of the guard is a marked site
	 * (mark/mark.c, MARK_CXA_GUARD): a marked load acquires its granule,
	 * the guard's address, which these release.
	 */
	{ "__cxa_guard_acquire", KCSAND_HB_LOCK_VOID },
	{ "__cxa_guard_release", KCSAND_HB_UNLOCK },
	{ "__cxa_guard_abort", KCSAND_HB_UNLOCK },
	/*
	 * Data through a descriptor: a write releases into what both ends
	 * share, the read that returns bytes acquires it.  A program that
	 * waits in poll() or epoll_wait() then reads: the read acquires.
	 * eventfd_read() and eventfd_write() call read() and write().
	 */
	{ "write", KCSAND_HB_FD_WRITE },
	{ "writev", KCSAND_HB_FD_WRITE },
	{ "pwrite", KCSAND_HB_FD_WRITE },
	{ "pwrite64", KCSAND_HB_FD_WRITE },
	{ "pwritev", KCSAND_HB_FD_WRITE },
	{ "pwritev2", KCSAND_HB_FD_WRITE },
	{ "send", KCSAND_HB_FD_WRITE },
	{ "sendto", KCSAND_HB_FD_WRITE },
	{ "sendmsg", KCSAND_HB_FD_WRITE },
	{ "sendmmsg", KCSAND_HB_FD_WRITE },
	{ "read", KCSAND_HB_FD_READ },
	{ "readv", KCSAND_HB_FD_READ },
	{ "pread", KCSAND_HB_FD_READ },
	{ "pread64", KCSAND_HB_FD_READ },
	{ "preadv", KCSAND_HB_FD_READ },
	{ "preadv2", KCSAND_HB_FD_READ },
	{ "recv", KCSAND_HB_FD_READ },
	{ "recvfrom", KCSAND_HB_FD_READ },
	{ "recvmsg", KCSAND_HB_FD_READ },
	{ "recvmmsg", KCSAND_HB_FD_READ },
	/*
	 * A descriptor's number, closed by one thread and handed to another
	 * by the next call that makes one: a server's table of connections
	 * indexed by it.  The file is gone at close, so the object is the
	 * number (bpf/history_sync.bpf.h, HB_OBJ_FD_NUMBER).
	 */
	{ "close", KCSAND_HB_FD_CLOSE },
	{ "accept", KCSAND_HB_FD_NEW },
	{ "accept4", KCSAND_HB_FD_NEW },
	{ "open", KCSAND_HB_FD_NEW },
	{ "open64", KCSAND_HB_FD_NEW },
	{ "openat", KCSAND_HB_FD_NEW },
	{ "openat64", KCSAND_HB_FD_NEW },
	{ "creat", KCSAND_HB_FD_NEW },
	{ "socket", KCSAND_HB_FD_NEW },
	{ "dup", KCSAND_HB_FD_NEW },
	{ "dup2", KCSAND_HB_FD_NEW },
	{ "dup3", KCSAND_HB_FD_NEW },
	{ "eventfd", KCSAND_HB_FD_NEW },
	{ "epoll_create", KCSAND_HB_FD_NEW },
	{ "epoll_create1", KCSAND_HB_FD_NEW },
	{ "timerfd_create", KCSAND_HB_FD_NEW },
	{ "signalfd", KCSAND_HB_FD_NEW },
	{ "memfd_create", KCSAND_HB_FD_NEW },
	{ "pipe", KCSAND_HB_FD_NEW_PAIR },
	{ "pipe2", KCSAND_HB_FD_NEW_PAIR },
	/*
	 * A library loaded while the program runs may bring sync functions
	 * (a plugin built with OpenMP maps libgomp): at dlopen's return the
	 * process is held, remembering nothing, until the daemon probed what
	 * is mapped now (history__poll).
	 */
	{ "dlopen", KCSAND_HB_MAPPED },
	{ "dlmopen", KCSAND_HB_MAPPED },
};

enum kcsand_hb_op history__op_of(const char *func)
{
	for (size_t i = 0; i < sizeof(hb_funcs) / sizeof(hb_funcs[0]); i++)
		if (!strcmp(hb_funcs[i].name, func))
			return hb_funcs[i].op;
	return KCSAND_HB_NONE;
}

bool history__returns_locked(const char *func)
{
	for (size_t i = 0; i < sizeof(hb_funcs) / sizeof(hb_funcs[0]); i++)
		if (!strcmp(hb_funcs[i].name, func))
			return hb_funcs[i].holds_lock;
	return false;
}

/*
 * Only the function's own name, `main._omp_fn.0`: at -O2 gcc may split a
 * cold part off it, `main._omp_fn.3.cold`, a block the hot part jumps to,
 * where the stack's top is no return address (a uretprobe there would
 * replace a saved register).
 */
bool history__is_outlined(const char *name)
{
	const char *p = strstr(name, "._omp_fn.");

	if (!p)
		return false;
	p += strlen("._omp_fn.");
	return *p && strspn(p, "0123456789") == strlen(p);
}
