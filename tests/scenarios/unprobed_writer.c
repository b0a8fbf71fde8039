// SPDX-License-Identifier: GPL-2.0-only
/*
 * Only the reader is probed (--functions reader*,pace): the writer's
 * stores are invisible to kcsand, so nothing consumes the reader's
 * watchpoint, but the value under it changes.  KCSAN infers a race of
 * unknown origin.  kcsand then arms a write watchpoint on x (escalation):
 * the next write it traps ran after the race's watch window, so it is
 * reported as a later write by that stack, with the delay, and never as
 * the other side of a data race.
 *
 * pace() is probed only to slow the unprobed writer down to the reader's
 * speed under kcsand, so that it keeps writing for as long as the reader
 * reads; it touches data of the writer's own and never races.
 *
 * gcc 12 -O1:  reader: mov x(%rip),%eax           (plain 4-byte load)
 *              writer: mov %edi,x(%rip)           (plain 4-byte store, not probed)
 *              pace:   addq $0x1,ticks(%rip)      (plain 8-byte RMW, writer thread only)
 */
#include "scenario.h"

/*
 * Racy: both threads run until the case has its report (--halt-on-error, or
 * stop=report for the escalation's), at most SECONDS: the escalated report
 * comes a while after the first one, later on a loaded machine.
 */
#define SECONDS 40

int x;
long ticks;	/* Only the writer thread touches it. */

RACY int reader(void)
{
	return x;
}

RACY void writer(int v)
{
	x = v;
}

RACY void pace(void)
{
	ticks++;
}

SCENARIO_TIMED(reader_thread, SECONDS, reader());
SCENARIO_TIMED(writer_thread, SECONDS, writer(i + 1); pace());

int main(void)
{
	void *(*const fn[])(void *) = { reader_thread, writer_thread };

	run_threads(2, fn, NULL);
	return 0;
}

/*
 * Both cases keep every site armed (budget 100): they are about what a changed
 * value leads to, and pace() paces the writer only while it is probed.  At the
 * default budget the sampler may leave pace() cold after the start, and the
 * unpaced writer then finishes before the reader watches again (seen once in
 * the guest: 156 watchpoints, no change under any).
 */
/* kcsand-test: name=unprobed_writer args="--halt-on-error --functions reader*,pace --param overhead_budget=100" expect=report title_re="^data-race in reader\+0x[0-9a-f]+/0x[0-9a-f]+$" funcs="reader" access="^race at unknown origin, with read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */

/*
 * Escalation: without --halt-on-error the run goes on after the report of
 * unknown origin, kcsand arms a hardware watchpoint on x, and the writer's
 * next store is reported with both stacks: as a later write (with how much
 * later) when it ran outside any watch window of the reader, which is the
 * usual case (about 100 ms after the race here), and as the reader's pair
 * when it fell inside a later window of the reader's (seen once in CI on a
 * machine whose debug registers trap).  Never a pair outside a window: the
 * unit tests later_write_is_not_a_pair and escalation_reports_a_later_write
 * hold that.
 */
/* kcsand-test: name=unprobed_writer_escalation needs=hwbp args="--functions reader*,pace --param overhead_budget=100" expect=report stop=report title_re="^(later write in writer after data-race in reader|data-race in reader / writer)$" funcs="reader writer" access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+(, [0-9]+\.[0-9]{3} ms after the race below)?:$" access="^(race at unknown origin, with )?read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^hardware watchpoint: the write by task [0-9]+ was seen by a debug register, after it executed$" value_changed=yes */
/* Where debug registers do not trap, kcsand says that it cannot escalate. */
/* kcsand-test: name=unprobed_writer_no_escalation needs=nohwbp args="--functions reader*,pace --param overhead_budget=100" expect=report stop=report title_re="^data-race in reader\+0x[0-9a-f]+/0x[0-9a-f]+$" funcs="reader" value_changed=yes log_re="^kcsand: races of unknown origin are not escalated: this machine's debug registers do not trap" */

/*
 * The writer probed and its store watched (--watch x): a uprobe runs the
 * store as a copy in the [uprobes] page, with a single step, and the debug
 * register traps the copy.  The trapped write's frame is the writer's, not
 * the copy's address (before: "data-race in 0x7fffffffe086 / reader", its
 * stack cut to start_thread): the BPF side takes the program's ip from the
 * thread's uprobe_task while it steps (bpf/ustack.bpf.h).  stop= waits for
 * a report whose write a debug register saw; reports of the probe's own
 * check of the same store come too, under the same title, so dedup is off.
 *
 * tcg=no: not in the QEMU guest (tests/vm/user-hwbp.sh).  There the stepped
 * copy's hit raised a second #DB at the first instruction of the kernel's
 * #DB handler, on the same IST stack, and the CPU looped in it with
 * interrupts off (RCU stall; every boot with it: sync10's two, hwlock's on main and
 * on 192344c, before the utask read).  QEMU's TCG reports the step and the watchpoint
 * apart; real hardware reports both in one #DB (DR6 BS and B0), which the
 * kernel handles, as on this host: docs/stacks.md.
 */
/* kcsand-test: name=watched_probed_writer needs=hwbp tcg=no args="--functions writer --watch x --param overhead_budget=100 --param report_once_in_ms=0" expect=report stop=report title_re="^data-race in (reader / writer|writer / reader)$" funcs="reader writer" frames_re="^ [a-z_0-9]+\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^hardware watchpoint: the write by task [0-9]+ was seen by a debug register, after it executed$" */
