/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A SIGTRAP that kills a test program under kcsand says which mechanism
 * sent it (issue 10, finding 4; docs/RELIABILITY.md): this handler prints
 * si_code, si_addr, the thread and the interrupted rip on stderr, then
 * exits 133, the status the default action gives (128 + SIGTRAP), so the
 * tests see the same status as before.  x86 Linux sends:
 *
 *   si_code 128 (SI_KERNEL)  an int3 no uprobe claims (do_int3_user, or
 *                            handle_swbp finding no uprobe at a trap byte)
 *   si_code 0   (SI_USER)    kill(), or uprobes' post-step send_sig()
 *                            (TF already set when the probe was hit)
 *   si_code 1   (TRAP_BRKPT) a #DB whose DR6 gives no cause (icebp, or DR6 lost)
 *   si_code 2   (TRAP_TRACE) a single-step #DB no uprobe claims
 *   si_code 4   (TRAP_HWBKPT) a debug-register hit no perf event claims
 *   si_code 6   (TRAP_PERF)  a perf event with attr.sigtrap
 *
 * Included once per program (a constructor); only async-signal-safe calls.
 */
#ifndef KCSAND_TRAP_REPORT_H
#define KCSAND_TRAP_REPORT_H

#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

/* gregs[] indices; <sys/ucontext.h> names them only under _GNU_SOURCE. */
#if defined(__x86_64__) && !defined(REG_RIP)
#define REG_RIP	16
#define REG_EFL	17
#endif

/* n in decimal or hex at p, backwards from the end; returns the start. */
static char *trap_report_num(char *end, unsigned long long n, int hex)
{
	do {
		*--end = "0123456789abcdef"[n % (hex ? 16 : 10)];
		n /= hex ? 16 : 10;
	} while (n);
	if (hex) {
		*--end = 'x';
		*--end = '0';
	}
	return end;
}

static void trap_report_put(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

static void trap_report_field(const char *name, unsigned long long v, int hex)
{
	char buf[32];

	buf[sizeof(buf) - 1] = 0;
	trap_report_put(name);
	trap_report_put(trap_report_num(buf + sizeof(buf) - 1, v, hex));
}

static void trap_report_handler(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = (const ucontext_t *)ctx;

	(void)sig;
	trap_report_put("\ntest program: SIGTRAP si_code=");
	if (si->si_code < 0) {
		trap_report_put("-");
		trap_report_field("", (unsigned long long)-si->si_code, 0);
	} else {
		trap_report_field("", (unsigned long long)si->si_code, 0);
	}
	trap_report_field(" si_addr=", (unsigned long long)(unsigned long)si->si_addr, 1);
	trap_report_field(" tid=", (unsigned long long)syscall(SYS_gettid), 0);
#if defined(__x86_64__)
	trap_report_field(" rip=", (unsigned long long)uc->uc_mcontext.gregs[REG_RIP], 1);
	trap_report_field(" eflags=", (unsigned long long)uc->uc_mcontext.gregs[REG_EFL], 1);
#else
	(void)uc;
#endif
	trap_report_put("\n");
	_exit(128 + SIGTRAP);
}

__attribute__((constructor)) static void trap_report_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trap_report_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
}

#endif /* KCSAND_TRAP_REPORT_H */
