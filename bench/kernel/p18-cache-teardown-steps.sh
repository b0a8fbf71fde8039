#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p18-cache-teardown.sh, run by tests/vm/kcsan-vm as its probe
# command: kernel-safety's cache step (tests/vm/noise-lib.sh's noise_rules, the same sites,
# workloads and teardown) again and again until P18_SECS of uptime, each run's log in
# $KCSAN_VM_OUT/run-N.log and its status and seconds in steps.rc and step-times.  With P18_HOTPLUG
# (a file p18-hotplug in the output directory), the first run is kernel-safety's hotplug step's
# CPU 1 taken offline and brought online once the run samples, as kern11's locked-up boot had before its
# cache step.  While each run goes, threads-N.txt takes, every 5 s, each kcsanctl thread's
# CPU, policy and CPU ticks, and each CPU's ksoftirqd state and softirq ticks: who held a CPU
# when a run went bad (main, 7 Dec 2026: one run of 19 took 202 s, a loopback connect timed
# out, the heartbeat missed 572 beats and RT throttling was activated).
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$OUT/kcsanctl
cd "$REPO" || exit 1
. tests/vm/steps-lib.sh
. tests/vm/noise-lib.sh
secs=$(cat "$OUT/p18-secs" 2>/dev/null || echo 300)
# threads OUT_FILE: until kcsanctl is gone, every 5 s (/proc/PID/task/T/stat: 14 utime,
# 15 stime, 39 processor, 41 policy; /proc/stat's per-CPU 7th field is softirq ticks).
threads() {
	local pid t

	for _ in $(seq 30); do
		pid=$(pidof kcsanctl | cut -d' ' -f1)
		[ -n "$pid" ] && break
		sleep 1
	done
	while [ -n "$pid" ] && [ -d /proc/$pid ]; do
		echo "== uptime $(cut -d' ' -f1 /proc/uptime)"
		for t in /proc/$pid/task/*; do
			echo "$(cat $t/comm 2>/dev/null) $(awk '{ print "cpu", $39, "policy", $41,
				"ticks", $14 + $15 }' $t/stat 2>/dev/null)"
		done
		grep '^cpu[0-9]' /proc/stat | awk '{ print $1, "softirq", $8 }'
		for t in /proc/[0-9]*; do
			case $(cat $t/comm 2>/dev/null) in
			ksoftirqd/*|rcu_preempt) echo "$(cat $t/comm) $(awk '{ print $3, "cpu", $39,
				"ticks", $14 + $15 }' $t/stat)" ;;
			esac
		done
		sleep 5
	done
}

n=0
C1=/sys/devices/system/cpu/cpu1/online
if [ -e "$OUT/p18-hotplug" ]; then
	echo 0 > $C1
	step hotplug noise_rules "$KCSANCTL" 8 --probe sched_clock_cpu --probe vfs_read \
		> "$OUT/hotplug.log" 2>&1 &
	# Online once the breakpoints are placed (the start marks for 15-60 s), as in the step.
	for _ in $(seq 120); do
		grep -q '^kcsand: breakpoints: ' "$OUT/hotplug.log" && break
		sleep 1
	done
	echo 1 > $C1; wait
fi
while awk -v s="$secs" '{ exit !($1 < s) }' /proc/uptime; do
	n=$((n + 1))
	threads > "$OUT/threads-$n.txt" 2>&1 &
	step "run-$n" noise_rules "$KCSANCTL" 8 --probe sched_clock_cpu --probe vfs_read \
		> "$OUT/run-$n.log" 2>&1
	wait
	dmesg | grep -E 'soft lockup|rcu: INFO|self-detected|WARNING:|BUG:' > "$OUT/dmesg-$n.txt"
done
exit 0
