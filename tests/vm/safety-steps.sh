#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-safety.sh (issue 21's safety and scope), run by
# tests/vm/kcsan-vm as its probe command, in the guest:
#
#   safety-steps.sh --probe SPEC... -- COMMAND...     (the specs and command are unused)
#
# Each step writes its output to $KCSAN_VM_OUT/STEP.log, its exit status to steps.rc and its
# seconds to step-times (tests/vm/steps-lib.sh):
#   ceiling    breakpoints over the racy pair with --udelay-task 100000 and
#              stall_budget_us=0, until the first report: the BPF side clamps every
#              stall (stalls_clamped) and makes the CPU rest three times as long
#              after it (stall_rests, kernel_stall_us);
#   heartbeat  kprobes over the module, kcsanctl stopped (SIGSTOP) for 4 s in the
#              middle of a round: its probes check nothing meanwhile (heartbeat_missed);
#   hotplug    CPU 1 offline at the start, brought online during a breakpoint run:
#              sampled from then on (said, and breakpoint_regs ends as 2x2: the
#              third register is the stalls' data breakpoints');
#   freeregs   --free-debug-regs 1: sampling takes 1 register (and the stalls'
#              data breakpoints 1), and another program
#              gets a breakpoint on every CPU meanwhile (hwbp-check.txt);
#   cache, cached, cachero
#              marking '--probe sched_clock_cpu --probe vfs_read' from the vmlinux's
#              DWARF twice: sched_clock_cpu (kernel/sched/) is left out, and the
#              verdicts go to the harness's cache share (KCSAND_CACHE_DIR) and come
#              back from it; then with a cache directory on the read-only root: said,
#              not silent.  cache and cached are the noise rules' run and its cached
#              start too (tests/vm/noise-lib.sh: the rules' code pinned, with their
#              workloads for 8 s; also jiffies.sym);
#   srcroot    src:kernel/time takes kernel/time/ and not arch/x86/kernel/time.c with
#              --kcsan-exempt (which would leave arch/x86/kernel/ out anyway), and
#              sched_clock_cpu with it; with vfs_read too, as cache has it.  A listing
#              (`-- true`): src:kernel/'s 86,195 sites, decoded, attached and run for a
#              second, cost 40 s more of a cold start under load to say the same;
# (each kcsanctl start reads the vmlinux's DWARF, 11 s at load 2: the steps that can
# share a run do);
#   kill       a breakpoint run killed with SIGKILL leaves nothing behind;
# then what BPF still holds (bpf-after.txt).
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$OUT/kcsanctl
[ -x "$KCSANCTL" ] || KCSANCTL=$REPO/build/kcsanctl
cd "$REPO" || exit 1
KO=$(ls "$REPO"/build/vm/kmod-*/kcsan_race/kcsan_race.ko 2>/dev/null | head -1)
VMLINUX=/usr/lib/debug/boot/vmlinux-$(uname -r)
W=tests/kmod/kcsan_race/workload.sh
mod=(--probe module:kcsan_race --probe '!kcsan_race_hidden_writer' --probe '!race_thread_fn')
# -v: every counter in the summary line (and the module's 45 sites listed).
common=(--kernel --output - -v --skip-watch 10 --overhead-budget 100 ${KO:+--kernel-debug "$KO"})
. tests/vm/steps-lib.sh
. tests/vm/noise-lib.sh

# Only the racing pair's functions: code breakpoints now stay on a site until it
# fires or times out, and over the module's 45 sites, most of them idle, the run
# ended with 2 hits and no watchpoint to clamp.  A report comes from a watchpoint, whose
# stall was clamped: the run ends there (--halt-on-error; the whole round took 88 s of
# the suite's 212), and its round is stopped.
step ceiling "$KCSANCTL" run "${common[@]}" --udelay-task 100000 --param stall_budget_us=0 \
	--sample breakpoints --sample-period 2000 --halt-on-error --probe kcsan_race_reader \
	--probe kcsan_race_writer -- $W 300000 200 1 > "$OUT/ceiling.log" 2>&1
step "round stop" round_stop

# sh's parent is kcsanctl: stopped for 4 s while rounds go on.  Rounds run until
# the stop is over: one fixed round could end before it on a quiet host, and the
# stopped daemon then had no hit to miss.
step heartbeat "$KCSANCTL" run "${common[@]}" --udelay-task 300 --sample kprobes --probe kcsan_race_reader \
	--probe kcsan_race_writer -- sh -c "rm -f $OUT/resumed
		(until [ -e $OUT/resumed ]; do $W 20000 120 1 || exit; done) & sleep 3
		kill -STOP \$PPID; sleep 4; kill -CONT \$PPID; touch $OUT/resumed; wait" \
	> "$OUT/heartbeat.log" 2>&1

C1=/sys/devices/system/cpu/cpu1/online
echo 0 > $C1; cat $C1 > "$OUT/cpu1-before.txt"
step hotplug "$KCSANCTL" run "${common[@]}" --udelay-task 300 --sample breakpoints --sample-period 2000 \
	"${mod[@]}" -- sh -c "sleep 3; echo 1 > $C1; sleep 2; $W 200000 120 1" > "$OUT/hotplug.log" 2>&1
echo 1 > $C1

X=$REPO/build/vm/xbp
step freeregs "$KCSANCTL" run "${common[@]}" --udelay-task 300 --sample breakpoints --sample-period 2000 \
	--free-debug-regs 1 "${mod[@]}" -- sh -c "sleep 2; $X/hwbp-check $X/hwbp_check.bpf.o \
	> $OUT/hwbp-check.txt 2>&1; echo \$? >> $OUT/hwbp-check.txt" > "$OUT/freeregs.log" 2>&1

step srcroot "$KCSANCTL" run --kernel --output - -v --no-marking --kernel-debug "$VMLINUX" \
	--kcsan-exempt --sample breakpoints --probe src:kernel/time --probe sched_clock_cpu \
	--probe vfs_read -- true > "$OUT/srcroot.log" 2>&1
# The cache steps are also the noise rules' run (tests/vm/noise-lib.sh): it marks from
# the vmlinux's DWARF too, and one start costs less than another boot's.
grep -E ' (jiffies|jiffies_64)$' /proc/kallsyms > "$OUT/jiffies.sym"
step cache noise_rules "$KCSANCTL" 8 --probe sched_clock_cpu --probe vfs_read > "$OUT/cache.log" 2>&1
step cached noise_cached "$KCSANCTL" --probe sched_clock_cpu --probe vfs_read \
	> "$OUT/cached.log" 2>&1
echo "${KCSAND_CACHE_DIR:-}" > "$OUT/cache-dir.txt"
step cachero env KCSAND_CACHE_DIR=/usr/share/kcsand-cache-ro "$KCSANCTL" run --kernel --output - \
	--kernel-debug "$VMLINUX" --probe vfs_read -- true > "$OUT/cachero.log" 2>&1

step kill "$KCSANCTL" run "${common[@]}" --sample breakpoints --sample-period 2000 "${mod[@]}" \
	-- sh -c "$W 400000 120 1 & sleep 3; kill -KILL \$PPID; wait" > "$OUT/kill.log" 2>&1
# The killed run's round goes on without it: let it end before the module goes.
round_ended
bpftool link list > "$OUT/bpf-after.txt" 2>&1
exit 0
