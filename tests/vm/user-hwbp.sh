#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# User-mode hardware watchpoints, end to end, where they work.  Some hypervisors
# never deliver a user-mode debug trap (earlier CI machines of this project among them):
# there tests/run-scenarios.sh runs the needs=nohwbp twin of each hardware case,
# which checks that kcsand says so and falls back, and lists the needs=hwbp cases
# as n/a.  This suite runs those needs=hwbp cases (escalation of a race of unknown
# origin, --watch, hot turns on one thread) in the QEMU guest of tests/vm/kcsan-vm,
# whose emulated debug registers trap, with tests/vm/user-hwbp-steps.sh.  Checks:
# the guest's debug registers trap (or nothing here could pass), every needs=hwbp
# case passed, no BPF link was left, and the guest's kernel log is clean.
# Where this machine's own debug registers trap (build/tests/tools/hw_traps), the host's
# tests/run-scenarios.sh runs the needs=hwbp cases itself (make check's host half), and the
# guest runs only the churn, listing the cases as n/a; KCSAND_VM_USER_CASES=1 runs them in
# the guest too.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed").
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
. "$REPO/tests/vm/suite-lib.sh"

vm_suite_start user-hwbp build/kcsanctl build/tests/tools/hw_traps
# The cases in the guest check on 6.1 what the host's run checks on its own kernel, at the
# price of 120-190 s of make check's critical path (ci-E..I's scenarios step; each user-mode
# start verifies kcsand_hwbp on 6.1: 12-18 s of each of the six, at load 12), against 1-3 s
# a case on the host.  The churn below still loads the user-mode programs on 6.1 and arms
# watchpoints there.
cases=1
[ -z "${KCSAND_VM_USER_CASES:-}" ] && build/tests/tools/hw_traps > /dev/null && cases=0
# Not the tcg=no cases: the guest's TCG emulator locks a CPU up on what they do (docs/stacks.md).
want=$(grep -h 'kcsand-test: name=[^ ]* needs=hwbp' tests/scenarios/*.c tests/scenarios/*.cc 2>/dev/null |
	grep -v ' tcg=no' | grep -o 'kcsand-test: name=[^ ]*' | sed 's/.*name=//' | sort)
# One host thread for both guest CPUs: under multi-threaded TCG, uprobed programs die
# of SIGSEGV with no kcsand at all (docs/RELIABILITY.md, finding 4), which would fail
# the churn runs below whatever kcsand does.  The guest's timeout bounds a hang: a quiet run
# takes 160-280 s, ci-B's at load 18-25 took 661 s with four cases cut at 180 s each.
KCSAN_VM_PROBE_CMD="$REPO/tests/vm/user-hwbp-steps.sh ${KCSAND_VM_CHURN_TURNS:-0} $cases" \
tests/vm/kcsan-vm --accel tcg-single --out "$out" --keep --timeout 1800 -- true > "$out/harness.out" 2> "$out/harness.err"
rc=$?
guest_ran $rc
[ $rc = 0 ] && ok harness_exit_0 || { fail harness_exit_0 "expected 0, got $rc"; sed 's/^/    /' "$out/harness.err" | tail -20; }

if grep -qx 'exit 0' "$out/hw_traps.txt" 2>/dev/null; then ok guest_debug_registers_trap
else fail guest_debug_registers_trap "hw_traps in the guest: $(tr '\n' ' ' < "$out/hw_traps.txt" 2>/dev/null)"; fi

# Each needs=hwbp case must have passed in the guest, by name.
guest_cases() {
	for name in $want; do
		if grep -q "^ok   $name " "$out/scenarios.txt" 2>/dev/null; then ok "guest_$name"
		else
			fail "guest_$name" "not passed in the guest:"
			sed -n "/^FAIL $name:/,/^\(ok\|FAIL\|n\/a\) /p" "$out/scenarios.txt" 2>/dev/null | head -40 | sed 's/^/    /'
		fi
	done
	[ "$(cat "$out/scenarios.rc" 2>/dev/null)" = 0 ] && ok guest_scenarios_exit_0 ||
		fail guest_scenarios_exit_0 "run-scenarios.sh exited $(cat "$out/scenarios.rc" 2>/dev/null || echo never) in the guest: $(tail -1 "$out/scenarios.txt" 2>/dev/null)"
}
if [ $cases = 1 ]; then guest_cases
else
	not_applicable "$(printf 'guest_%s ' $want)guest_scenarios_exit_0" \
		"debug registers trap on this host: tests/run-scenarios.sh runs these cases here (make host-tests)"
fi
# Threads exiting with debug registers armed on them: never a signal (SIGTRAP is
# 133), and the runs really armed watchpoints (and, with KCSAND_VM_CHURN_TURNS,
# took turns).
sig=$(awk '$2 != 0 && $2 != 66' "$out/churn.txt" 2>/dev/null)
armed=$(awk '$1 == "escalation" { n += $3 } END { print n + 0 }' "$out/churn.txt" 2>/dev/null)
turns=$(awk '$1 == "turns" { n += $3 } END { print n + 0 }' "$out/churn.txt" 2>/dev/null)
if [ -s "$out/churn.txt" ] && [ -z "$sig" ] && [ "${armed:-0}" -gt 0 ] &&
   { [ "${KCSAND_VM_CHURN_TURNS:-0}" = 0 ] || [ "${turns:-0}" -gt 0 ]; }; then
	ok guest_churn_no_signal
	echo "     $(grep -c . "$out/churn.txt") runs: $armed watchpoints armed, $turns hot turns"
else
	fail guest_churn_no_signal "status 0 or 66, watchpoints armed (and turns taken): $(tr '\n' ';' < "$out/churn.txt" 2>/dev/null)"
	grep -h 'segfault\|trap' "$out/dmesg.txt" 2>/dev/null | head -3 | sed 's/^/    /'
fi
if [ -f "$out/bpf-after.txt" ] && ! grep -qE 'uprobe|perf_event' "$out/bpf-after.txt"; then ok no_bpf_link_left
else fail no_bpf_link_left "$(head -3 "$out/bpf-after.txt" 2>/dev/null | tr '\n' ';')"; fi
no_kernel_warning "$out"

finish_suite "$out"
