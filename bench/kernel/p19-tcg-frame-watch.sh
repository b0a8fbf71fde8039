#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P19: does the test guest's emulator (QEMU TCG) lose an interrupt whose frame lands on a
# data breakpoint?  One boot per mode (bench/programs/frame-watch.c): "ret" watches the
# slot of CPU 0's idle stack that only ordinary instructions write (the control), "frame"
# the slot just below it, where an interrupt taken at CPU 0's hlt pushes its frame.  Each
# boot runs frame-watch for SECS, then closes the breakpoint from CPU 1 (an IPI to CPU 0).
# Prints per boot whether the program ended, the console's RCU stall and soft lockup lines,
# and what QEMU's monitor said of CPU 0 (vm_monitor): its DR7 and its APIC's ISR and IRR.
# On hardware (and under KVM) the frame's push is a #DB like any other: both modes end.
# Usage: bench/kernel/p19-tcg-frame-watch.sh [BUILD_DIR] [MODES] [SECS]   (root)
# Set KCSAN_VM_LOCK to a lock of your own to keep off the CI's guest queue.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p19 "${1:-}" root
modes=${2:-ret frame} secs=${3:-20}
for m in $modes; do
	out=$(vm_out p19) || exit 2
	gcc -O2 -Wall bench/programs/frame-watch.c -o "$out/frame-watch" ||
		bench_die "cannot build frame-watch"
	echo "$m $secs" > "$out/p19-args"
	vm_monitor "$out" &
	said=$(KCSAN_VM_MONITOR=$out/monitor.sock KCSAN_VM_LOGLEVEL=${KCSAN_VM_LOGLEVEL:-7} \
		guest_run "p19 $m" "$out" $((secs + 150)) "$REPO/bench/kernel/p19-tcg-frame-watch-steps.sh")
	touch "$out/.done"
	wait
	echo "$said"
	sed 's/^/  /' "$out/frame-watch.out" 2>/dev/null
	echo "  console: $(grep -cE 'rcu: INFO' "$out/console.log") RCU stall reports," \
		"$(grep -cE 'soft lockup' "$out/console.log") soft lockups"
	# CPU 0's state when the stall showed: its debug registers and its APIC's vectors.
	awk '/^CPU#0/ { c0 = 1 } /^CPU#1/ { c0 = 0 } c0 && /^(RIP|DR0|DR6)=/ { print "  cpu0: " $0 }
	     /^dumping local APIC state for CPU 0/ { a = 1 } /^dumping local APIC state for CPU 1/ { a = 0 }
	     a && /^(ISR|IRR|APR|LVTT|Timer)/ { print "  apic0: " $0 }' "$out/monitor.txt" 2>/dev/null |
		sort -u
done
