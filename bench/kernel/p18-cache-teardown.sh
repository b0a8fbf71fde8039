#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P18: issue 21's lockup in kernel-safety's cache step, looked for: boots the guest
# (tests/vm/kcsan-vm, KCSAN_VM_LOGLEVEL=7 so that a soft lockup's all-CPU backtrace reaches
# the console) BOOTS times, each running the cache step's kcsanctl run and its teardown
# again and again for SECS of uptime (bench/kernel/p18-cache-teardown-steps.sh).  Prints
# per boot how many runs ended and how, and in how many each CPU's events were closed on
# that CPU at teardown (none from another, an IPI each; P18_HOTPLUG=1: CPU 1 offline and back in the first,
# as in kernel-safety's hotplug step); a boot whose console holds a lockup, or whose
# kcsan-vm did not exit 0, is copied to P18_KEEP (default /work/kern12-runs).
# Usage: bench/kernel/p18-cache-teardown.sh [BUILD_DIR] [BOOTS] [SECS]   (root)
# Set KCSAN_VM_LOCK to a lock of your own to keep off the CI's guest queue.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p18 "${1:-}" root
boots=${2:-1} secs=${3:-300} keep=${P18_KEEP:-/work/kern12-runs}
kernel_debug > /dev/null || exit 2
mkdir -p build/vm "$keep"
if [ ! -x build/vm/kworkload ] || [ tests/vm/workload/kworkload.c -nt build/vm/kworkload ]; then
	gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o build/vm/kworkload ||
		bench_die "cannot build kworkload"
fi
for b in $(seq "$boots"); do
	out=$(vm_out p18) || exit 2
	echo "$secs" > "$out/p18-secs"
	[ -z "${P18_HOTPLUG:-}" ] || touch "$out/p18-hotplug"
	vm_monitor "$out" &
	said=$(KCSAN_VM_MONITOR=$out/monitor.sock KCSAN_VM_LOGLEVEL=${KCSAN_VM_LOGLEVEL:-7} guest_run "p18 boot $b" "$out" \
		$((secs + 420)) "$REPO/bench/kernel/p18-cache-teardown-steps.sh")
	touch "$out/.done"
	wait
	echo "$said"
	echo "  runs: $(grep -c . "$out/steps.rc" 2>/dev/null) ended ($(awk '{ print $2 }' \
		"$out/steps.rc" 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')by status);" \
		"seconds: $(awk '{ printf "%s ", $2 }' "$out/step-times" 2>/dev/null)"
	# Where each run's teardown closed the CPUs' events (-vv; none from another CPU is
	# the fix), and any CPU whose thread did not stop (a CPU deaf to its wake-up).
	td='teardown: [1-9][0-9]* CPUs. events closed on their own CPU, 0 from another'
	echo "  teardowns with every CPU's events closed on it:" \
		"$(grep -lE "^kcsand: breakpoints: $td" "$out"/run-*.log 2>/dev/null | wc -l)" \
		"(breakpoints), $(grep -lE "^kcsand: data breakpoints: $td" "$out"/run-*.log \
		2>/dev/null | wc -l) (data breakpoints); threads not stopped:" \
		"$(cat "$out"/run-*.log 2>/dev/null | grep -cE 'has not (stopped|closed)')"
	if grep -qE 'soft lockup|rcu: INFO|self-detected|Kernel panic|BUG:' "$out/console.log" ||
	   [[ $said != *"kcsan-vm exit 0,"* ]]; then
		cp -a "$out" "$keep/" && echo "  kept in $keep/$(basename "$out")"
		# CPU 0's debug registers and its APIC's vectors when the stall showed (vm_monitor).
		awk '/^CPU#0/ { c = 1 } /^CPU#1/ { c = 0 } c && /^(RIP|DR0|DR6)=/ { print "  cpu0: " $0 }
		     /^dumping local APIC state for CPU 0/ { a = 1 } /^dumping local APIC state for CPU 1/ { a = 0 }
		     a && /^(ISR|IRR|APR)/ { print "  apic0: " $0 }' "$out/monitor.txt" 2>/dev/null | sort -u
	fi
done
