#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P14: the long run of issue 21 (item 7), and the sampler's coverage a minute.
# In Debian's stock 6.1 kernel under QEMU (tests/vm/kcsan-vm): kcsanctl run
# --kernel -v with code-breakpoint sampling over src:fs/ src:mm/ src:kernel/
# (the vmlinux's DWARF, linux-image-<ver>-dbg), around stress-ng's stressors
# (--workload stress) for SECONDS.  Marking on by default: its cold time is
# what the run prints first (the cache is build/vm/kcsand-cache).
# Prints: the start-up steps' times, the summary's sampling and pair figures,
# the coverage lines (a minute), the reports by kind (pairs with both stacks,
# one stack at unknown origin, later writes), the titles, and the guest's
# kernel log (lockups, stalls, warnings).
#
# Usage: bench/kernel/p14-kernel-long.sh [BUILD_DIR [SECONDS [on|off [WORKLOAD]]]]
#   (root; defaults 1800, on, stress; files kept in build/vm/p14.*)
# P14_KCSANCTL names another kcsanctl (an older build, to compare); P14_ACCEL
# the accelerator (tcg-single leaves a host core to the others); the guest
# lock is kcsan-vm's, KCSAN_VM_LOCK another.
# bench/kernel/p14-kernel-long.sh --report DIR prints the figures of a kept run.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
if [ "${1:-}" = --report ]; then
	out=$(realpath "$2")
	bench_init p14
else
	bench_init p14 "${1:-}" root
	SECS=${2:-1800} MARK=${3:-on} WL=${4:-stress}
	DBG=$(kernel_debug) || exit 2
	out=$(vm_out p14) || exit 2
	cp "${P14_KCSANCTL:-$B/kcsanctl}" "$out/kcsanctl" || exit 2
	opts="--kernel --output - -v --sample breakpoints --kernel-debug $DBG --stats $out/stats"
	[ "$MARK" = on ] || opts+=" --no-marking"
	start=$(date +%s)
	KCSAN_VM_PROBE_CMD="$out/kcsanctl run $opts" \
	tests/vm/kcsan-vm --out "$out" --keep --accel "${P14_ACCEL:-tcg}" --workload "$WL" \
		--duration "$SECS" --timeout $(( SECS + 2400 )) \
		--probe src:fs/ --probe src:mm/ --probe src:kernel/ \
		> "$out/reports.txt" 2> "$out/harness.err"
	rc=$?
	echo "p14: guest run $(( $(date +%s) - start )) s for $SECS s, marking $MARK," \
		"kcsan-vm exit $rc, files in $out"
fi
[ -s "$out/probe.err" ] || { tail -5 "$out/harness.err"; exit 1; }
E=$out/probe.err
echo "== start-up (guest)"
grep -vE '^kcsand: (func|site|mark:) ' "$E" |
	grep -E 'sites? (read|decoded|marked)|from the cache|src:|left out|uninstrumented|trap costs' |
	head -12 | sed 's/^/  /'
echo "== summary"
S=$(grep -hm1 '^kcsand: [0-9]* reports*, ' "$out/stats" "$E" 2>/dev/null | head -1)
[ -n "$S" ] && echo "  the run ended with its summary" || echo "  NO SUMMARY LINE"
grep -oE '(breakpoint_[a-z_]+|pair_[a-z_]+|setup_watchpoints|stalls_clamped|stall_budget_exhausted|heartbeat_missed|nmi_skipped|hw_watchpoints_armed|hw_traps): [0-9/%.x-]+' \
	<<< "$S" | tr '\n' ' ' | fold -w 96 -s | sed 's/^/  /'
echo
echo "== coverage"
grep -E 'breakpoints: (coverage|evidence|register time)' "$E" |
	sed -E 's/^kcsand: breakpoints: coverage, /  /; s/^kcsand: breakpoints: (evidence, |register time, )/  \1/'
echo "== reports by kind"
R=$(grep -h '^BUG: KCSAN:' "$out/probe.out" 2>/dev/null)
all=$(grep -c . <<< "$R") later=$(grep -c 'later write in' <<< "$R")
pairs=$(grep -E 'data-race in [^ ]+ / ' <<< "$R" | grep -vc 'later write in')
echo "  $all reports: $pairs pairs (both stacks), $(( all - pairs - later )) one stack" \
	"(unknown origin), $later later writes (escalation)"
echo "== titles"
grep -h '^BUG: KCSAN:' "$out/probe.out" 2>/dev/null | sort | uniq -c | sort -rn | sed 's/^/ /'
grep -h '^stress-ng:.*\(skipped\|failed\|passed\)' "$out/probe.err" "$out/reports.txt" \
	2>/dev/null | head -4 | sed 's/^/  /'
guest_log "$out"
