#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P15: whose real-time threads take the guest's CPUs (issue 21: "sched: RT
# throttling activated" in every long run at scale).  Runs p14's set-up
# (code-breakpoint sampling over src:fs/ src:mm/ src:kernel/, marking off, around
# stress-ng's stressors, in Debian's 6.1 under QEMU) for SECONDS, with the
# guest console at loglevel 5 and bench/kernel/p15-rt-share-steps.sh sampling, once a
# second, each CPU's rt_rq and every SCHED_FIFO/RR thread's run time.
# MODE kcsand (default) runs kcsand; absent runs the same workload with no
# kcsand at all (the probe command is env(1)): what QEMU and the guest's own
# RT threads do alone.  Both run rt-tick beside (bench/programs/rt-tick.c): a
# real-time thread that only wakes every 2 ms, the control for what the
# guest charges a real-time thread beyond its own work.
# Prints: the console's throttling and hrtimer lines, the seconds in which a
# CPU was throttled, each RT thread's CPU time (total, and its largest share
# of one second), the sampler's gaps, and the summary's heartbeat_missed.
#
# Usage: bench/kernel/p15-rt-share.sh [BUILD_DIR [SECONDS [kcsand|absent]]]
#   (root; defaults 180, kcsand; QEMU at nice 10, one-thread TCG; the guest
#   lock is kcsan-vm's, KCSAN_VM_LOCK another; files kept in build/vm/p15.*)
# bench/kernel/p15-rt-share.sh --report DIR prints the figures of a kept run.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
if [ "${1:-}" = --report ]; then
	out=$(realpath "$2")
	bench_init p15
else
	bench_init p15 "${1:-}" root
	SECS=${2:-180} MODE=${3:-kcsand}
	out=$(vm_out p15) || exit 2
	gcc -O2 -Wall bench/programs/rt-tick.c -o "$out/rt-tick" || exit 2
	probe=()
	if [ "$MODE" = kcsand ]; then
		DBG=$(kernel_debug) || exit 2
		cp "$B/kcsanctl" "$out/kcsanctl" || exit 2
		export KCSAN_VM_PROBE_CMD="$out/kcsanctl run --kernel --output - -v --sample \
breakpoints --kernel-debug $DBG --stats $out/stats --no-marking"
		probe=(--probe src:fs/ --probe src:mm/ --probe src:kernel/)
	else
		export KCSAN_VM_PROBE_CMD=/usr/bin/env
	fi
	start=$(date +%s)
	KCSAN_VM_LOGLEVEL=5 nice -n 10 tests/vm/kcsan-vm --out "$out" --keep --accel tcg-single \
		--timeout $(( SECS + 900 )) "${probe[@]}" -- "$REPO/bench/kernel/p15-rt-share-steps.sh" \
		"$out/rt.log" "$out/rt-tick" "$REPO/tests/vm/workload/stress.sh" stress "$SECS" \
		> "$out/reports.txt" 2> "$out/harness.err"
	rc=$?
	echo "p15: guest run $(( $(date +%s) - start )) s for $SECS s, $MODE," \
		"kcsan-vm exit $rc, files in $out"
fi
[ -s "$out/rt.log" ] || { tail -5 "$out/harness.err"; exit 1; }
echo "== console"
grep -E 'RT throttling|hrtimer: interrupt took' "$out/console.log" | sed 's/^/  /'
echo "== rt.log: throttled seconds, RT threads' CPU time, sampler gaps"
awk '
$1 == "T" { if (t && $2 - t > 2.5) gaps = gaps sprintf(" %.0f-%.0f", t, $2); pt = t; t = $2; next }
$1 == "R" && $3 == ".rt_throttled" && $4 > 0 { thr[$2] = thr[$2] sprintf(" %.0f", t) }
$1 == "F" {
	k = $3 " prio " $5 " tid " $2
	if (k in last && t > pt) {
		d = ($6 - last[k]) / 1e6; tot[k] += d; s = d / ((t - pt) * 10)
		if (s > top[k]) { top[k] = s; at[k] = t }
	}
	last[k] = $6
}
END {
	for (c in thr) print "  " c " throttled at uptime" thr[c]
	for (k in tot) if (tot[k] >= 1)
		printf "  %-40s %8.0f ms, at most %3.0f%% of a CPU (uptime %.0f)\n", k, tot[k], top[k], at[k]
	print "  sampling intervals over 2.5 s (the sampler\x27s own pace under TCG, or starvation):" (gaps == "" ? " none" : gaps)
}' "$out/rt.log" | sort
S=$(grep -hm1 '^kcsand: [0-9]* reports*, ' "$out/stats" "$out/probe.err" 2>/dev/null | head -1)
grep -oE '(heartbeat_missed|stall_rests|kernel_stall_us|breakpoint_moves|pair_[a-z_]+): [0-9]+' \
	<<< "$S" | tr '\n' ' ' | sed 's/^/  /'
echo
guest_log "$out"
