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
# monitor OUT: once the console shows an RCU stall or a soft lockup (the panic comes 27 s
# after the stall), QEMU's monitor says what each CPU and local APIC holds, twice 10 s
# apart, into OUT/monitor.txt: CPU 0's RIP, EFLAGS (IF) and DR7, its APIC's ISR, IRR and
# PPR (an interrupt taken and never ended blocks every one below it).  Ends at OUT/.done.
monitor() {
	local n

	until [ -e "$1/.done" ]; do
		if grep -qE 'rcu: INFO|soft lockup' "$1/console.log" 2>/dev/null; then
			for n in 1 2; do
				python3 - "$1/monitor.sock" <<-'PY' >> "$1/monitor.txt" 2>&1
				import socket, sys, time
				s = socket.socket(socket.AF_UNIX)
				s.connect(sys.argv[1])
				for c in ("info registers -a", "info lapic 0", "info lapic 1"):
				    s.sendall((c + "\n").encode())
				    time.sleep(2)
				s.settimeout(2)
				out = b""
				try:
				    while True:
				        d = s.recv(65536)
				        if not d:
				            break
				        out += d
				except socket.timeout:
				    pass
				print(out.decode(errors="replace"))
				PY
				sleep 10
			done
			return
		fi
		sleep 1
	done
}
for b in $(seq "$boots"); do
	out=$(vm_out p18) || exit 2
	echo "$secs" > "$out/p18-secs"
	[ -z "${P18_HOTPLUG:-}" ] || touch "$out/p18-hotplug"
	monitor "$out" &
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
	fi
done
