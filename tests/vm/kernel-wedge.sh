#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Issue 21's wedge, in Debian's stock kernel under QEMU (tests/vm/kcsan-vm); the
# guest side is tests/vm/wedge-steps.sh.  Its cause: a breakpoint on a site of
# arch_uninstall_hw_breakpoint() between its clearing of the register's slot and
# of DR7 traps for ever when its own register is moved off it (docs/kernel-mode.md).
# First that function asked for directly (it wedged the guest in seconds), then
# the issue's run at a size CI affords: code-breakpoint sampling over src:fs/
# src:mm/ src:kernel/ (the vmlinux's DWARF; no marking, whose cold read over 9p
# takes minutes) around the mixed workload (tests/vm/workload/kworkload.c).
# Checked: each run ends with its summary, the guest powers off in time, and its
# kernel log has no lockup, RCU stall, hung task or warning; the scale run's
# figures are printed (sites, traps, checks, stalls clamped, hits left alone).
#
#   tests/vm/kernel-wedge.sh [SECONDS]        (default 60, make check 30; the issue's size: 600)
#
# KCSAND_WEDGE_KCSANCTL names another kcsanctl (an older build, to compare).
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed");
# files removed when all passed, unless KCSAND_VM_KEEP is set.  --check DIR re-checks a kept run.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. "$REPO/tests/vm/suite-lib.sh"
secs=60
vm_check_arg "$@" || secs=${1:-$secs}

run_guest() {
	local kver dbg
	vm_suite_start kernel-wedge "${KCSAND_WEDGE_KCSANCTL:-build/kcsanctl}"
	kver=$(guest_kver)
	[ -n "$kver" ] || setup_fail "linux-image-amd64 is not installed (tests/vm/kcsan-vm installs it)"
	dbg=/usr/lib/debug/boot/vmlinux-$kver
	vm_prepare_lock		# apt-get: kernel-safety may install it from the other queue
	if [ ! -r "$dbg" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "linux-image-$kver-dbg" \
			> "$out/apt.log" 2>&1 || setup_fail "cannot install linux-image-$kver-dbg (see $out/apt.log)"
	fi
	vm_prepare_unlock
	cp "${KCSAND_WEDGE_KCSANCTL:-build/kcsanctl}" "$out/kcsanctl" || setup_fail "no kcsanctl (run make)"
	gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o "$out/kworkload" > "$out/build.log" 2>&1 ||
		setup_fail "cannot build kworkload (see $out/build.log)"
	KCSAN_VM_PROBE_CMD="$REPO/tests/vm/wedge-steps.sh $out/kcsanctl $secs $dbg" \
	tests/vm/kcsan-vm --out "$out" --keep --timeout $((secs + 600)) \
		--probe src:fs/ --probe src:mm/ --probe src:kernel/ -- "$out/kworkload" mixed "$secs" \
		> "$out/reports.txt" 2> "$out/harness.err"
	rc=$?
	guest_ran $rc
	[[ $rc =~ ^(0|66)$ ]] && ok guest_ran_to_the_end ||
		{ fail guest_ran_to_the_end "exit $rc: $(tail -3 "$out/harness.err" | tr '\n' ';')"; }
}
[ -n "${check_only:-}" ] || run_guest

M=$(grep -m1 '^kcsand: [0-9]* reports*, ' "$out/machinery.log" 2>/dev/null)
if [[ $(step_status machinery) =~ ^(0|66)$ ]] && [ -n "$M" ] &&
   grep -qE '^kcsand: breakpoints: [1-9][0-9]* sites in the code that moves breakpoints' "$out/machinery.log"; then
	ok breakpoint_machinery_never_sampled
	grep -m1 'code that moves breakpoints' "$out/machinery.log" | sed 's/^/     /'
else
	fail breakpoint_machinery_never_sampled "exit $(step_status machinery): $(grep -E 'breakpoints:|rror' "$out/machinery.log" 2>/dev/null | head -3 | tr '\n' ';')"
fi
S=$(grep -hm1 '^kcsand: [0-9]* reports*, ' "$out/scale.stats" "$out/scale.log" 2>/dev/null | head -1)
if [[ $(step_status scale) =~ ^(0|66)$ ]] && [ -n "$S" ]; then
	ok run_ended_with_summary
	echo "     $(grep -oE '[0-9]+ sites' <<< "$S")"
	grep -oE '(breakpoint_sites_sampled|breakpoint_traps|breakpoint_checks|setup_watchpoints|stalls_clamped|stall_budget_exhausted|heartbeat_missed|nmi_skipped|breakpoint_period_range_us|hw_watchpoints_armed|hw_traps): [0-9/%.x-]+' \
		<<< "$S" | tr '\n' ' ' | fold -w 96 -s | sed 's/^/     /'; echo
	grep -h 'uninstrumented\|^kcsand: src:\|^kcsand: breakpoints:' "$out/scale.log" | sed 's/^/     /'
	echo "     $(grep -c '^BUG: KCSAN:' "$out/scale.log") reports"
else
	fail run_ended_with_summary "exit $(step_status scale), no summary line: $(tail -3 "$out/scale.log" 2>/dev/null | tr '\n' ';')"
fi
grep -h '^kworkload:' "$out/scale.log" 2>/dev/null | sed 's/^/     /'
no_kernel_warning "$out"
finish_suite "$out"
