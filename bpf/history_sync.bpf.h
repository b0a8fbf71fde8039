/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The history detector's sync probes: libc's and libgomp's sync calls at
 * entry and return, the objects a file descriptor shares, memory's
 * lifetime, and the fork and exit tracepoints.  Included by history.bpf.h
 * after history_shadow.bpf.h.
 */
#ifndef KCSAND_HISTORY_SYNC_BPF_H
#define KCSAND_HISTORY_SYNC_BPF_H

/* Sync calls whose return is probed remember their arguments until then. */
static __always_inline void hb_push(struct hb_thread *t, __u32 op, __u64 a0, __u64 a1)
{
	__u32 d = t->depth++;

	if (d < HB_DEPTH) {
		t->op[d] = op;
		t->arg0[d] = a0;
		t->arg1[d] = a1;
	}
}

static __always_inline int hb_pop(struct hb_thread *t, __u32 op, __u64 *a0, __u64 *a1)
{
	__u32 d;

	if (!t->depth)
		return -1;
	d = --t->depth;
	if (d >= HB_DEPTH)
		return -1;
	if (t->op[d] != op) {
		/* A return went unseen (longjmp out of a lock call): start over. */
		t->depth = 0;
		return -1;
	}
	*a0 = t->arg0[d];
	*a1 = t->arg1[d];
	return 0;
}

static __always_inline void hb_mark_fn(struct hb_thread *t, __u64 fn, __u32 kind)
{
	struct hb_key k = { .tgid = t->tgid, .addr = fn };

	bpf_map_update_elem(&hb_fns, &k, &kind, BPF_ANY);
}

static __always_inline __u32 hb_fn_kind(struct hb_thread *t, __u64 fn)
{
	struct hb_key k = { .tgid = t->tgid, .addr = fn };
	__u32 *kind = bpf_map_lookup_elem(&hb_fns, &k);

	return kind ? *kind : 0;
}

static __always_inline struct hb_thread *hb_sync_thread(__u64 now)
{
	struct hb_thread *t;

	if (!hb_traced())
		return NULL;
	t = hb_self();
	if (!t)
		return NULL;
	hb_new_gen(t, now);
	hb_settle(t);
	hb_count(KCSAND_HB_CTR_SYNC_OPS);
	return t;
}

/* The object an OpenMP critical, atomic or ordered region syncs on (barriers: below). */
static __always_inline __u64 hb_omp_region(__u32 op)
{
	switch (op) {
	case KCSAND_HB_OMP_CRIT_START:
	case KCSAND_HB_OMP_CRIT_END:
		return HB_OBJ_OMP_CRITICAL;
	case KCSAND_HB_OMP_ATOMIC_START:
	case KCSAND_HB_OMP_ATOMIC_END:
		return HB_OBJ_OMP_ATOMIC;
	default:
		return HB_OBJ_OMP_ORDERED;
	}
}

/*
 * The object of a team's barrier.  With one object for every barrier, a
 * thread still returning from barrier k acquired what another thread
 * released entering barrier k + 1, after its own work between the two:
 * that work looked ordered before the late thread's (DataRaceBench's
 * DRB187, a write after the first barrier in each of two threads, was
 * missed every run).  No thread enters barrier k + 2 before every thread
 * has returned from barrier k, so two objects, by the parity of the
 * barriers the thread has passed in its team, keep each return to its own
 * barrier's entries, as libgomp's barrier generations do.  The count is
 * trusted from its team's outlined function's entry (hb_task_fn_entry),
 * in the generation that saw it: a thread that may have missed a barrier
 * (its probes paused or its process held since, a return lost, a team
 * begun unseen) uses both objects, which orders more, as one object did.
 * Returns 0 or 1, the object's parity, or -1 for both.
 */
static __always_inline int hb_omp_parity(const struct hb_thread *t)
{
	if (!t->bar_ok || t->bar_gen != t->gen || t->bar_pgen != t->pgen)
		return -1;
	return t->bar_count & 1;
}

static __always_inline void hb_omp_barrier_entry(struct hb_thread *t)
{
	int p = hb_omp_parity(t);

	if (p != 1)
		hb_release(t, HB_OBJ_OMP_BARRIER, p == 0);
	if (p != 0)
		hb_release(t, HB_OBJ_OMP_BARRIER_ODD, 1);
}

/* passed: the thread waited in the barrier (not the `single` that copies out). */
static __always_inline void hb_omp_barrier_return(struct hb_thread *t, int passed)
{
	int p = hb_omp_parity(t);

	if (!passed)
		return;
	if (p != 1)
		hb_acquire(t, HB_OBJ_OMP_BARRIER);
	if (p != 0)
		hb_acquire(t, HB_OBJ_OMP_BARRIER_ODD);
	hb_acquire(t, HB_OBJ_OMP_TASKS);	/* tasks run to completion at barriers */
	t->bar_count++;
}

/*
 * GOMP_parallel() nested in a team: the thread's count in the outer team,
 * kept for the call's return (its arg1), with bit 32 set if it was trusted.
 */
static __always_inline __u64 hb_omp_team_save(const struct hb_thread *t)
{
	return t->bar_count | (hb_omp_parity(t) >= 0 ? 1ULL << 32 : 0);
}

/* The call returned, so no generation passed since it was entered (hb_new_gen). */
static __always_inline void hb_omp_team_restore(struct hb_thread *t, __u64 saved)
{
	t->bar_count = (__u32)saved;
	t->bar_ok = saved >> 32 & 1;
	t->bar_gen = t->gen;
	t->bar_pgen = t->pgen;
}

/* libgomp's calls that release at their entry; returns what the return needs of the call. */
static __always_inline __u64 hb_omp_entry(struct hb_thread *t, __u32 op, __u64 a0, __u64 a1)
{
	switch (op) {
	case KCSAND_HB_OMP_PARALLEL:
		hb_mark_fn(t, a0, HB_FN_PARALLEL);
		hb_release(t, a0, 1);
		return hb_omp_team_save(t);
	case KCSAND_HB_OMP_BARRIER:
	case KCSAND_HB_OMP_SINGLE_COPY:
		hb_omp_barrier_entry(t);
		break;
	default:
		hb_release(t, hb_omp_region(op), 1);
		break;
	}
	return a1;
}

/*
 * A heap block freed (free, or realloc's old block): its size is in
 * glibc's chunk header, the word before it, with flags in the low 3 bits.
 * The block's bytes run to the end of its chunk, and on into the next
 * chunk's first word, unless the chunk was mmapped (bit 1).
 */
static __always_inline void hb_forget_block(__u32 tgid, __u64 block)
{
	__u64 head, size;

	if (!block || bpf_probe_read_user(&head, sizeof(head), (void *)(block - 8)))
		return;
	size = head & ~7ULL;
	if (size < 32 || size > (1ULL << 40))
		return;		/* not a glibc chunk: another allocator's block */
	hb_forget(tgid, block, block + size - (head & 2 ? 16 : 8));
}

#define HB_MAP_FIXED	0x10

/*
 * Memory changing owner: see hb_forget().  Whether or not the thread has a
 * clock.  Returns whether op is one of these.
 */
static __always_inline int hb_lifetime(struct pt_regs *ctx, __u32 op, __u64 a0, __u64 a1)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (op != KCSAND_HB_FREE && op != KCSAND_HB_UNMAP && op != KCSAND_HB_MAP)
		return 0;
	if (!hb_traced())
		return 1;
	hb_count(KCSAND_HB_CTR_SYNC_OPS);
	if (op == KCSAND_HB_FREE)
		hb_forget_block(tgid, a0);
	else if (op == KCSAND_HB_UNMAP || (PT_REGS_PARM4(ctx) & HB_MAP_FIXED))
		hb_forget(tgid, a0, a0 + a1);
	return 1;
}

/*
 * The sync object of a file descriptor: what the writing end and the
 * reading end share, found from the calling task's descriptor table.
 * - a socket: the connection.  A Unix socket pair's two socks point at
 *   each other, so the lower address of the two names it; a TCP or UDP
 *   socket is named by its two ends, address and port, in a fixed order,
 *   hashed into a range no address reaches (bit 63 set, bit 62 clear).
 * - an eventfd, a signalfd, ... (files of the anonymous inode, which they
 *   all share): the file's own object.
 * - a pipe, a FIFO, a regular file: the inode.
 * 0 when there is no such descriptor.
 */
#define HB_S_IFMT		00170000
#define HB_S_IFSOCK		0140000
#define HB_ANON_INODE_MAGIC	0x09041934
#define HB_AF_UNIX		1
#define HB_AF_INET		2
#define HB_AF_INET6		10

static __always_inline __u64 hb_sock_object(struct file *f)
{
	struct socket *sock = BPF_CORE_READ(f, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk), *peer;
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	__u64 a, b;

	if (family == HB_AF_UNIX) {
		peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
		a = (__u64)sk;
		b = peer ? (__u64)peer : a;
		return a < b ? a : b;
	}
	if (family != HB_AF_INET && family != HB_AF_INET6)
		return (__u64)sk;
	a = (__u64)BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr) << 16 |
	    BPF_CORE_READ(sk, __sk_common.skc_num);
	b = (__u64)BPF_CORE_READ(sk, __sk_common.skc_daddr) << 16 |
	    bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (a > b) {
		__u64 x = a;

		a = b;
		b = x;
	}
	return 1ULL << 63 | (((a * 0x9e3779b97f4a7c15ULL) ^ b ^ family) & ((1ULL << 62) - 1));
}

static __noinline __u64 hb_fd_object(__u64 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd), *f = NULL;
	struct inode *inode;

	if (fd >= BPF_CORE_READ(fdt, max_fds) ||
	    bpf_probe_read_kernel(&f, sizeof(f), fds + fd) || !f)
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(inode, i_mode) & HB_S_IFMT) == HB_S_IFSOCK)
		return hb_sock_object(f);
	if (BPF_CORE_READ(inode, i_sb, s_magic) == HB_ANON_INODE_MAGIC)
		return (__u64)BPF_CORE_READ(f, private_data);
	return (__u64)inode;
}

/*
 * write() and the like release into fd's object; read() and the like name
 * it now, for their return, as another thread may close fd meanwhile;
 * close() releases fd's number.
 */
static __always_inline __u64 hb_fd_entry(struct hb_thread *t, __u32 op, __u64 fd)
{
	__u64 obj;

	if (op == KCSAND_HB_FD_CLOSE) {
		/* The number, for whoever is handed it next (KCSAND_HB_FD_NEW). */
		if ((int)fd >= 0)
			hb_release(t, HB_OBJ_FD_NUMBER(fd), 1);
		return fd;
	}
	obj = hb_fd_object(fd);

	if (op == KCSAND_HB_FD_WRITE && obj)
		hb_release(t, obj, 1);
	return obj;
}

SEC("uprobe")
int kcsand_hb_entry(struct pt_regs *ctx)
{
	__u32 op = (__u32)bpf_get_attach_cookie(ctx);
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), t0 = bpf_ktime_get_ns();
	struct hb_thread *t;

	if (hb_lifetime(ctx, op, a0, a1)) {
		hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
		return 0;
	}
	t = hb_sync_thread(t0);
	if (!t)
		return 0;
	switch (op) {
	case KCSAND_HB_UNLOCK:
	case KCSAND_HB_COND_SIGNAL:
	case KCSAND_HB_BARRIER:
		hb_release(t, a0, 1);
		break;
	case KCSAND_HB_COND_WAIT:
		hb_release(t, a1, 1);
		break;
	case KCSAND_HB_ONCE:
		/*
		 * The init routine may run in this thread, unseen: its accesses
		 * keep the epoch released here, so that whoever returns from
		 * pthread_once() later has acquired them.
		 */
		hb_release(t, a0, 0);
		t->once_depth++;
		break;
	case KCSAND_HB_OMP_PARALLEL:
	case KCSAND_HB_OMP_BARRIER:
	case KCSAND_HB_OMP_SINGLE_COPY:
	case KCSAND_HB_OMP_CRIT_END:
	case KCSAND_HB_OMP_ATOMIC_END:
	case KCSAND_HB_OMP_ORDERED_END:
		a1 = hb_omp_entry(t, op, a0, a1);
		break;
	case KCSAND_HB_OMP_TASK:
	case KCSAND_HB_OMP_TASKLOOP:
	case KCSAND_HB_OMP_TASKGROUP_START:
	case KCSAND_HB_OMP_TEAMS_REG:
	case KCSAND_HB_OMP_FULFILL:
		hb_task_entry(ctx, t, op);
		a1 = 0;		/* for GOMP_task's return: hb_task_wait_event() */
		break;
	case KCSAND_HB_FD_WRITE:
	case KCSAND_HB_FD_READ:
	case KCSAND_HB_FD_CLOSE:
		a0 = hb_fd_entry(t, op, a0);
		break;
	case KCSAND_HB_OMP_FN:
		/* At its entry, or after a locked first insn, its length in the cookie's top half. */
		a0 = PT_REGS_IP(ctx) - (bpf_get_attach_cookie(ctx) >> 32);
		a1 = hb_task_fn_entry(ctx, t, a0);
		break;
	}
	if (KCSAND_HB_HAS_RETURN(op))
		hb_push(t, op, a0, a1);
	hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
	return 0;
}

/* pthread_join(): the clock the thread ended with; it may not have passed the exit tracepoint. */
static __always_inline void hb_join_thread(struct hb_thread *t, __u64 pthread)
{
	struct hb_key k = { .tgid = t->tgid, .addr = pthread };
	struct hb_thread *o;
	__u32 *tid;

	tid = bpf_map_lookup_elem(&hb_pthreads, &k);
	if (!tid) {
		/*
		 * Created while the sync probes were off or its process was held
		 * (hb_hold): pthread_create()'s return went unseen.
		 */
		hb_acquire_all(t);
		return;
	}
	o = bpf_map_lookup_elem(&hb_exited, tid);
	if (!o)
		o = bpf_map_lookup_elem(&hb_threads, tid);
	if (o)
		hb_vc_join(t->vc, o->vc);
}

/* The OpenMP runtime's calls, as they return. */
static __always_inline void hb_return_omp(struct hb_thread *t, __u32 op, __u64 a0, __u64 a1)
{
	__u32 kind;

	switch (op) {
	case KCSAND_HB_OMP_PARALLEL:
		hb_acquire(t, HB_OBJ_OMP_END);
		hb_acquire(t, HB_OBJ_OMP_TASKS);
		hb_omp_team_restore(t, a1);
		break;
	case KCSAND_HB_OMP_TASKLOOP:
		hb_acquire(t, HB_OBJ_OMP_TASKS);
		hb_task_created(t, 0);
		break;
	case KCSAND_HB_OMP_TASK:
		hb_task_created(t, a1);
		break;
	case KCSAND_HB_OMP_TASKWAIT:
		hb_task_wait(t);
		break;
	case KCSAND_HB_OMP_TASKGROUP_END:
		hb_task_group_end(t);
		break;
	case KCSAND_HB_OMP_FN:
		kind = hb_fn_kind(t, a0);
		if (kind == HB_FN_TASK) {
			hb_task_end(t, a1, hb_task_undeferred(t, a0));
			break;
		}
		/* A host team ends when the next starts, or at GOMP_teams_reg's return. */
		if (kind == HB_FN_TEAM)
			break;
		hb_release(t, HB_OBJ_OMP_END, 1);
		if (kind == HB_FN_PARALLEL)
			t->bar_ok = 0;	/* the team ended: the next one's start counts */
		break;
	case KCSAND_HB_OMP_BARRIER:
		hb_omp_barrier_return(t, 1);
		break;
	case KCSAND_HB_OMP_CRIT_START:
	case KCSAND_HB_OMP_ATOMIC_START:
	case KCSAND_HB_OMP_ORDERED_START:
		hb_acquire(t, hb_omp_region(op));
		break;
	}
}

/* pthread's calls, as they return (a0, a1: their arguments, saved at entry). */
static __always_inline void hb_return_pthread(struct hb_thread *t, __u32 op, int rc, __u64 a0,
					      __u64 a1)
{
	__u64 pthread = 0;

	switch (op) {
	case KCSAND_HB_LOCK:
		if (rc == 0)
			hb_acquire(t, a0);
		break;
	case KCSAND_HB_LOCK_NZ:
		if (rc != 0)
			hb_acquire(t, a0);
		break;
	case KCSAND_HB_LOCK_VOID:
	case KCSAND_HB_BARRIER:
		hb_acquire(t, a0);
		break;
	case KCSAND_HB_COND_WAIT:
		hb_acquire(t, a0);
		hb_acquire(t, a1);
		break;
	case KCSAND_HB_ONCE:
		hb_acquire(t, a0);
		if (t->once_depth && !--t->once_depth)
			hb_tick(t);
		break;
	case KCSAND_HB_CREATE:
		if (rc == 0 && !bpf_probe_read_user(&pthread, sizeof(pthread), (void *)a0)) {
			struct hb_key k = { .tgid = t->tgid, .addr = pthread };
			__u32 child = t->last_child;

			bpf_map_update_elem(&hb_pthreads, &k, &child, BPF_ANY);
		}
		break;
	case KCSAND_HB_JOIN:
		if (rc == 0)
			hb_join_thread(t, a0);
		break;
	default:
		hb_return_omp(t, op, a0, a1);
		break;
	}
}

/*
 * A return whose call was not remembered (nested deeper than HB_DEPTH,
 * entered during a pause, a longjmp in between): whatever it acquired is
 * unknown, so it acquires every epoch so far.  Which tasks ended is
 * unknown too: the thread's own clock.  And it may be a barrier's, or a
 * team's end: the thread's barriers are no longer counted.
 */
static __always_inline void hb_return_lost(struct hb_thread *t)
{
	hb_count(KCSAND_HB_CTR_RETURN_LOST);
	hb_task_unwind(t);
	hb_acquire_all(t);
	t->bar_ok = 0;
}

/* The returns that end a section or a host team, and may start the next: 1 if op is one. */
static __always_inline int hb_return_section(struct pt_regs *ctx, struct hb_thread *t, __u32 op)
{
	switch (op) {
	case KCSAND_HB_OMP_SECTION:
		hb_task_section(t, (__u32)PT_REGS_RC(ctx), PT_REGS_SP(ctx), HB_TASK_SECTION);
		return 1;
	case KCSAND_HB_OMP_TEAMS:
		/* A bool: only %al is the result. */
		hb_task_section(t, PT_REGS_RC(ctx) & 0xff, hb_teams_frame(t, PT_REGS_SP(ctx)),
				HB_TASK_TEAM);
		return 1;
	case KCSAND_HB_OMP_TEAMS_REG:
		/* Its last team's end (each started at an entry of fn), and the construct's. */
		hb_task_section(t, 0, PT_REGS_SP(ctx), HB_TASK_TEAM);
		return 1;
	}
	return 0;
}

static __always_inline void hb_return(struct pt_regs *ctx, struct hb_thread *t, __u32 op)
{
	int rc = (int)PT_REGS_RC(ctx);
	__u64 a0, a1;

	if (op == KCSAND_HB_LOCK_RDI) {
		if (rc == 0)
			hb_acquire(t, PT_REGS_PARM1(ctx));
		return;
	}
	if (op == KCSAND_HB_MAPPED) {
		hb_pop(t, op, &a0, &a1);
		/*
		 * A dlopen that failed mapped nothing that stays (libgomp's
		 * first target construct looks for offload plugins a machine
		 * rarely has): holding then would make the process settle,
		 * ordering all it does for HB_SETTLE_NS, for nothing.
		 */
		if (PT_REGS_RC(ctx))
			hb_hold(t->tgid, 1, 0);
		return;
	}
	if (hb_pop(t, op, &a0, &a1)) {
		hb_return_lost(t);
		return;
	}
	if (op == KCSAND_HB_OMP_SINGLE_COPY) {
		/* NULL: this thread runs the `single`, and waits in GOMP_single_copy_end(). */
		hb_omp_barrier_return(t, PT_REGS_RC(ctx) != 0);
		return;
	}
	if (hb_return_section(ctx, t, op))
		return;
	if (op == KCSAND_HB_FD_READ) {
		/* A count of bytes, not an int: a large read must not look like an error. */
		if ((long)PT_REGS_RC(ctx) > 0 && a0)
			hb_acquire(t, a0);
		return;
	}
	if (op == KCSAND_HB_FD_NEW) {
		if (rc >= 0)
			hb_acquire(t, HB_OBJ_FD_NUMBER(rc));
		return;
	}
	if (op == KCSAND_HB_FD_NEW_PAIR) {
		int fds[2];

		if (rc == 0 && !bpf_probe_read_user(fds, sizeof(fds), (void *)a0)) {
			hb_acquire(t, HB_OBJ_FD_NUMBER(fds[0]));
			hb_acquire(t, HB_OBJ_FD_NUMBER(fds[1]));
		}
		return;
	}
	hb_return_pthread(t, op, rc, a0, a1);
}

SEC("uretprobe")
int kcsand_hb_return(struct pt_regs *ctx)
{
	__u32 op = (__u32)bpf_get_attach_cookie(ctx);
	__u64 t0 = bpf_ktime_get_ns();
	struct hb_thread *t = hb_sync_thread(t0);

	if (t) {
		hb_return(ctx, t, op);
		hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
	}
	return 0;
}

/*
 * A new thread's stack, and its static TLS and descriptor, which glibc
 * puts at the top of the same mapping: another thread that ended may have
 * used them (glibc caches stacks), so they are forgotten.  The mapping is
 * the one its stack pointer starts in; a stack the program gave (in its
 * heap, say) is bounded to HB_STACK_MAX around it.
 */
#define HB_STACK_MAX	(64ULL << 20)

static __always_inline void hb_forget_stack(struct task_struct *child, __u32 tgid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(child);
	struct hb_vma v = {};
	__u64 sp;

	if (!regs)
		return;
	sp = BPF_CORE_READ(regs, sp);
	if (!sp || hb_vma_find(child, sp - 1, &v) || v.end <= v.start)
		return;
	if (sp - v.start > HB_STACK_MAX)
		v.start = sp - HB_STACK_MAX;
	if (v.end - sp > HB_STACK_MAX)
		v.end = sp + HB_STACK_MAX;
	hb_forget(tgid, v.start, v.end);
}

/* A new thread of a traced process starts with what its creator knew (pthread_create). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(kcsand_hb_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u32 cpid = BPF_CORE_READ(child, pid);
	struct hb_thread *p;

	if (!hb_traced())
		return 0;
	/*
	 * A new process starts its own history, empty, held until the
	 * daemon probed its sync functions: the parent's probes are for the
	 * parent only.
	 */
	if (ptgid != ctgid) {
		hb_hold(ctgid, 0, 0);
		return 0;
	}
	p = hb_self();
	if (!p)
		return 0;
	/* Its creator may return from a call entered unseen: the child gets what it acquired. */
	hb_new_gen(p, bpf_ktime_get_ns());
	hb_settle(p);
	hb_count(KCSAND_HB_CTR_SYNC_OPS);
	hb_forget_stack(child, ctgid);
	hb_new_thread(cpid, ctgid, p);
	p->last_child = cpid;
	hb_tick(p);
	return 0;
}

/*
 * An exec: the process's memory is a new image's, and what was remembered
 * of the old one is forgotten.  Held until the daemon probed the new
 * image's sync functions (its outlined functions, a static libc).
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(kcsand_hb_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct hb_proc *p;
	__u32 *v;

	if (!hb_enabled || !(v = bpf_map_lookup_elem(&hb_tgids, &tgid)))
		return 0;
	/* The exec of the program the daemon probed before it ran. */
	if (__sync_fetch_and_and(v, ~KCSAND_HB_TGID_FRESH) & KCSAND_HB_TGID_FRESH)
		return 0;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (p)
		hb_max_ns_g(&p->forgot_ns, bpf_ktime_get_ns());
	hb_hold(tgid, 1, 0);
	return 0;
}

/*
 * A signal one thread sends another of its process (kill, tgkill, raise,
 * sigqueue): what the sender did before is ordered before the handler, as
 * TSan orders it.  Only a sender in its own system call: a timer's or the
 * kernel's signal (alarm, a fault, SIGCHLD) comes from whatever code it
 * interrupted, and its release would order that code's accesses.  Its
 * siginfo says which: a user's si_code is SI_USER or below (docs/history.md).
 */
SEC("tp_btf/signal_generate")
int BPF_PROG(kcsand_hb_signal_send, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct hb_thread *t;

	if ((unsigned long)info <= 1 || BPF_CORE_READ(info, si_code) > 0 ||
	    BPF_CORE_READ(task, tgid) != tgid)
		return 0;
	t = hb_sync_thread(bpf_ktime_get_ns());
	if (t)
		hb_release(t, HB_OBJ_SIGNAL(sig), 1);
	return 0;
}

/* The receiving thread, before its handler runs (or the signal's default action). */
SEC("tp_btf/signal_deliver")
int BPF_PROG(kcsand_hb_signal_take, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	struct hb_thread *t = hb_sync_thread(bpf_ktime_get_ns());

	if (t)
		hb_acquire(t, HB_OBJ_SIGNAL(sig));
	return 0;
}

/* hb_stack_purge()'s callback: an entry of the process that ended goes. */
static long hb_stack_purge_cb(struct bpf_map *map, __u64 *key, struct hb_stack *st, __u32 *tgid)
{
	if (st->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

/*
 * The stacks a process remembered, when it ends: keyed by process, they
 * would fill hb_stacks in a service that runs many (its short runs, a
 * fork per request), and every later access would be remembered with no
 * stack.  One pass over the map, at the end of a traced process only.
 */
static __always_inline void hb_stack_purge(__u32 tgid)
{
	bpf_for_each_map_elem(&hb_stacks, hb_stack_purge_cb, &tgid, 0);
}

/* A thread's end: its clock kept for pthread_join(), its slot given back. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(kcsand_hb_exit, struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
	struct hb_thread *t;
	struct hb_proc *p;
	__u32 slot, last;

	if (!hb_enabled)
		return 0;
	t = bpf_map_lookup_elem(&hb_threads, &tid);
	if (!t)
		goto out;
	bpf_map_update_elem(&hb_exited, &tid, t, BPF_ANY);
	slot = t->slot & (HB_SLOTS - 1);
	last = t->vc[slot];
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (p)
		hb_slot_leave(p, slot, last);
	bpf_map_delete_elem(&hb_threads, &tid);
	hb_task_exit(tid);
out:
	if (BPF_CORE_READ(task, signal, live.counter) == 0) {
		if (bpf_map_lookup_elem(&hb_tgids, &tgid))
			hb_stack_purge(tgid);
		bpf_map_delete_elem(&hb_procs, &tgid);
		bpf_map_delete_elem(&hb_tgids, &tgid);
		/* Ended while held: the daemon never lets it go, and a reused pid must not find it. */
		bpf_map_delete_elem(&hb_held_ns, &tgid);
	}
	return 0;
}

#endif
